/* agentbox kill [--all] ID [SIGNAL] */
#include "config.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>

#include "cmd/cmd.h"
#include "runtime/lifecycle/container.h"

int
ab_cmd_kill (struct ab_global *g, int argc, char **argv)
{
  static const struct option opts[] = {
    { "all", no_argument, NULL, 'a' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  ab_error_t err = { 0 };
  bool all = false;
  int c, sig = SIGTERM;

  while ((c = getopt_long (argc, argv, "ah", opts, NULL)) != -1)
    switch (c)
      {
      case 'a':
        all = true;
        break;
      case 'h':
        printf ("Usage: agentbox kill [--all] ID [SIGNAL]\n\n"
                "Send SIGNAL (a name like TERM or SIGKILL, or a number; default TERM) to the container\n"
                "process; with --all to every process of the container.\n");
        return AB_EXIT_OK;
      default:
        return ab_cmd_usage_error ("kill", "unknown option `%s`", argv[optind - 1]);
      }
  if ((c = ab_cmd_positionals ("kill", argc, argv, 1, 2, "container ID")) != 0)
    return c;
  if (optind + 1 < argc && (sig = ab_parse_signal (argv[optind + 1])) < 0)
    return ab_cmd_usage_error ("kill", "unknown signal `%s`", argv[optind + 1]);
  if (ab_container_kill (g->root, argv[optind], sig, all, &err) < 0)
    return ab_cmd_fail (&err);
  return AB_EXIT_OK;
}
