/* agentbox create [--bundle DIR] [--pid-file F] [--console-socket S]
                   [--preserve-fds N] [--no-new-keyring] ID */
#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "cmd/cmd.h"
#include "cmd/create-opts.h"
#include "runtime/cache.h"
#include "runtime/lifecycle/container.h"
#include "runtime/exe.h"
#include "base/util.h"

int
ab_cmd_create (struct ab_global *g, int argc, char **argv)
{
  struct ab_create_opts o;
  const struct ab_idmaps *uids, *gids;
  struct ab_bundle_guard guard;
  ab_error_t err = { 0 };
  int r;

  ab_create_opts_init (&o);
  r = ab_parse_create_opts ("create", g, argc, argv, &o);
  if (r != 0)
    return r < 0 ? AB_EXIT_OK : r;
  guard = ab_bundle_guard (g->root);
  if (ab_bundle_load (o.bundle, &guard, &o.prebuilt, &err) < 0)
    return ab_cmd_fail (&err);
  /* Before anything is made: from a sealed copy of ourselves unless the
     container's user namespace cannot write our binary anyway. */
  ab_new_userns_maps (o.prebuilt->spec, &uids, &gids);
  if (ab_exe_seal_unless_safe (g->argv_all, uids, gids, &err) < 0)
    {
      ab_bundle_free (o.prebuilt);
      return ab_cmd_fail (&err);
    }
  r = ab_cmd_create_held (g->root, "create", &o, &err);
  if (r > 0)
    return r;
  return r < 0 ? ab_cmd_fail (&err) : AB_EXIT_OK;
}
