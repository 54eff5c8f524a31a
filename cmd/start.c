/* agentbox start ID */
#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "cmd/cmd.h"
#include "runtime/container.h"

int
ab_cmd_start (struct ab_global *g, int argc, char **argv)
{
  static const struct option opts[] = { { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
  ab_error_t err = { 0 };
  int c;

  while ((c = getopt_long (argc, argv, "h", opts, NULL)) != -1)
    {
      if (c == 'h')
        {
          printf ("Usage: agentbox start ID\n\nRun the user program of a created container.\n");
          return AB_EXIT_OK;
        }
      return ab_cmd_usage_error ("start", "unknown option `%s`", argv[optind - 1]);
    }
  if ((c = ab_cmd_positionals ("start", argc, argv, 1, 1, "container ID")) != 0)
    return c;
  if (ab_container_start (g->root, argv[optind], &err) < 0)
    return ab_cmd_fail (&err);
  return AB_EXIT_OK;
}
