/* agentbox state ID: the OCI state JSON (runtime.md). */
#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "cmd/cmd.h"
#include "runtime/lifecycle/container.h"
#include "base/util.h"

int
ab_cmd_state (struct ab_global *g, int argc, char **argv)
{
  static const struct option opts[] = { { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
  _cleanup_state_ struct ab_state *s = NULL;
  _cleanup_free_ char *json = NULL;
  ab_error_t err = { 0 };
  size_t len;
  int c, status;

  while ((c = getopt_long (argc, argv, "h", opts, NULL)) != -1)
    {
      if (c == 'h')
        {
          printf ("Usage: agentbox state ID\n\nPrint the OCI state of the container as JSON.\n");
          return AB_EXIT_OK;
        }
      return ab_cmd_usage_error ("state", "unknown option `%s`", argv[optind - 1]);
    }
  if ((c = ab_cmd_positionals ("state", argc, argv, 1, 1, "container ID")) != 0)
    return c;
  if (ab_container_state (g->root, argv[optind], &s, &status, &err) < 0)
    return ab_cmd_fail (&err);
  json = ab_state_oci_json (s, status, true, &len);
  if (ab_write_all (1, json, len) < 0)
    return AB_EXIT_FAILURE;
  return AB_EXIT_OK;
}
