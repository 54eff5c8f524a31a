/* agentbox create [--bundle DIR] [--pid-file F] [--console-socket S]
                   [--preserve-fds N] [--no-new-keyring] ID */
#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "cmd/cmd.h"
#include "cmd/create-opts.h"
#include "runtime/container.h"
#include "runtime/util.h"

int
ab_cmd_create (struct ab_global *g, int argc, char **argv)
{
  struct ab_create_opts o;
  struct ab_container *c = NULL;
  ab_error_t err = { 0 };
  int r;

  ab_create_opts_init (&o);
  r = ab_parse_create_opts ("create", g, argc, argv, &o);
  if (r != 0)
    return r < 0 ? AB_EXIT_OK : r;
  if (ab_container_create (&o, &c, &err) < 0)
    return ab_cmd_fail (&err);
  ab_container_free (c);
  return AB_EXIT_OK;
}
