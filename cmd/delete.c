/* agentbox delete [--force] ID */
#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "cmd/cmd.h"
#include "runtime/lifecycle/container.h"

int
ab_cmd_delete (struct ab_global *g, int argc, char **argv)
{
  static const struct option opts[] = {
    { "force", no_argument, NULL, 'f' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  ab_error_t err = { 0 };
  bool force = false;
  int c;

  while ((c = getopt_long (argc, argv, "fh", opts, NULL)) != -1)
    switch (c)
      {
      case 'f':
        force = true;
        break;
      case 'h':
        printf ("Usage: agentbox delete [--force] ID\n\n"
                "Remove a stopped container and everything create made; with --force kill it first\n"
                "(every process of it, also those that left its process group).\n");
        return AB_EXIT_OK;
      default:
        return ab_cmd_usage_error ("delete", "unknown option `%s`", argv[optind - 1]);
      }
  if ((c = ab_cmd_positionals ("delete", argc, argv, 1, 1, "container ID")) != 0)
    return c;
  if (ab_container_delete (g->root, argv[optind], force, &err) < 0)
    return ab_cmd_fail (&err);
  return AB_EXIT_OK;
}
