/* agentbox validate [--bundle DIR]: the checks of create, nothing else:
 * the validator (every check that depends on the config alone), the host
 * checks create makes, and the plan.
 * Prints nothing and exits 0 when valid; else one line and exit 1. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "cmd/cmd.h"
#include "base/log.h"
#include "runtime/cache.h"
#include "runtime/lifecycle/container.h"
#include "runtime/plan/plan.h"
#include "spec/spec.h"

int
ab_cmd_validate (struct ab_global *g, int argc, char **argv)
{
  static const struct option opts[] = {
    { "bundle", required_argument, NULL, 'b' },
    { "accept-degraded", no_argument, NULL, 'a' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  struct ab_plan_opts po = { .root = g->root, .id = "validate", .rootless = g->rootless };
  struct ab_bundle *b = NULL;
  struct ab_plan *plan = NULL;
  struct ab_bundle_guard guard;
  const char *bundle = ".";
  ab_error_t err = { 0 };
  bool accept = false;
  int c;

  while ((c = getopt_long (argc, argv, "b:h", opts, NULL)) != -1)
    switch (c)
      {
      case 'b':
        bundle = optarg;
        break;
      case 'a':
        accept = true;
        break;
      case 'h':
        printf ("Usage: agentbox validate [--bundle DIR] [--accept-degraded]\n\n"
                "Parse and validate DIR/config.json exactly as create does.  Prints nothing and\n"
                "exits 0 when it is valid; otherwise one line naming the JSON path, and exit 1.\n"
                "--accept-degraded: as create's (rootless limits this host cannot enforce).\n");
        return AB_EXIT_OK;
      default:
        return ab_cmd_usage_error ("validate", "unknown option `%s`", argv[optind - 1]);
      }
  if ((c = ab_cmd_positionals ("validate", argc, argv, 0, 0, "")) != 0)
    return c;
  /* The same three steps as create's first phase (runtime/lifecycle/create.c
     phase_plan), with create's default options: the config's own checks,
     the host's, the plan. */
  po.accept_degraded = accept;
  guard = ab_bundle_guard (g->root);
  if (ab_bundle_load (bundle, &guard, &b, &err) < 0 || ab_container_check (b, false, NULL, &err) < 0
      || ab_container_plan (b->spec, &po, g->cgroup_parent, &plan, &err) < 0)
    {
      ab_bundle_free (b);
      ab_log_error (&err);
      return AB_EXIT_FAILURE;
    }
  ab_plan_free (plan);
  ab_bundle_free (b);
  return AB_EXIT_OK;
}
