/* agentbox _userns-holder NEWUIDMAP NEWGIDMAP UIDMAPS GIDMAPS: internal,
 * not listed.  The holder of a warm user namespace (runtime/warm.h), which
 * a rootless run with subordinate ids starts in the background: it has the
 * helpers map a user namespace as UIDMAPS and GIDMAPS ("C:H:N,...") say,
 * then hands it to the user's later runs until it sits idle. */
#include "config.h"

#include <stdio.h>

#include "cmd/cmd.h"
#include "runtime/warm.h"

int
ab_cmd_userns_holder (struct ab_global *g, int argc, char **argv)
{
  (void) g;
  if (argc != 5)
    {
      fprintf (stderr, "agentbox: _userns-holder is internal (see runtime/warm.h)\n");
      return 2;
    }
  return ab_warm_userns_serve (argv[1], argv[2], argv[3], argv[4]);
}
