/* agentbox mcp [--max-concurrency N] [--workspace-root DIR]...
 *
 * Serve the Model Context Protocol on stdin/stdout (runtime/mcp/mcp.h): tool
 * calls run in sandboxes whose state lives in <--root>/mcp-<pid>, removed
 * when the client closes stdin.  stdout carries protocol frames only; logs
 * go to stderr. */
#include "config.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "cmd/cmd.h"
#include "base/log.h"
#include "runtime/mcp/mcp.h"
#include "base/util.h"

enum
{
  OPT_MAX_CONCURRENCY = 256,
  OPT_WORKSPACE_ROOT,
  OPT_HELP,
};

static void
help (void)
{
  printf ("Usage: agentbox [--root DIR] mcp [OPTIONS]\n\n"
          "Serve MCP (2026-07-28, and the 2025-11-25 lifecycle) on stdin/stdout.\n\n"
          "  --max-concurrency N   tool calls running at once; more wait in a queue (default 4)\n"
          "  --workspace-root DIR  let the `workspace` argument name directories inside DIR (repeatable;\n"
          "                        without it, sandboxes get an empty tmpfs /workspace)\n");
}

int
ab_cmd_mcp (struct ab_global *g, int argc, char **argv)
{
  static const struct option opts[] = {
    { "max-concurrency", required_argument, NULL, OPT_MAX_CONCURRENCY },
    { "workspace-root", required_argument, NULL, OPT_WORKSPACE_ROOT },
    { "help", no_argument, NULL, OPT_HELP },
    { NULL, 0, NULL, 0 },
  };
  struct ab_mcp_opts o = { .exe = "/proc/self/exe", .max_concurrency = 4, .debug = g->debug };
  _cleanup_free_ char *state_root = NULL;
  ab_error_t err = { 0 };
  int c, n, r;

  while ((c = getopt_long (argc, argv, "h", opts, NULL)) != -1)
    switch (c)
      {
      case OPT_MAX_CONCURRENCY:
        if (ab_parse_int (optarg, &n) < 0 || n < 1 || n > 64)
          {
            ab_strv_free (&o.workspace_roots);
            return ab_cmd_usage_error ("mcp", "--max-concurrency: expected 1 to 64, got `%s`", optarg);
          }
        o.max_concurrency = (unsigned)n;
        break;
      case OPT_WORKSPACE_ROOT:
        {
          char *real = realpath (optarg, NULL);
          struct stat st;
          if (real == NULL || stat (real, &st) < 0 || !S_ISDIR (st.st_mode))
            {
              free (real);
              ab_strv_free (&o.workspace_roots);
              return ab_cmd_usage_error ("mcp", "--workspace-root: `%s` is not a directory", optarg);
            }
          ab_strv_push_owned (&o.workspace_roots, real);
          break;
        }
      case 'h':
      case OPT_HELP:
        help ();
        ab_strv_free (&o.workspace_roots);
        return AB_EXIT_OK;
      default:
        ab_strv_free (&o.workspace_roots);
        return ab_cmd_usage_error ("mcp", "unknown option `%s`", argv[optind - 1]);
      }
  if ((r = ab_cmd_positionals ("mcp", argc, argv, 0, 0, "")) != 0)
    {
      ab_strv_free (&o.workspace_roots);
      return r;
    }
  if (g->root[0] != '/')
    {
      ab_strv_free (&o.workspace_roots);
      return ab_cmd_usage_error ("mcp", "--root must be an absolute path, not `%s`", g->root);
    }
  state_root = xasprintf ("%s/mcp-%ld", g->root, (long)getpid ());
  o.state_root = state_root;
  o.rootless = g->rootless < 0 ? NULL : g->rootless ? "true" : "false";
  o.cgroup_parent = g->cgroup_parent;
  r = ab_mcp_serve (&o, 0, 1, &err);
  ab_strv_free (&o.workspace_roots);
  if (r < 0)
    return ab_cmd_fail (&err);
  return AB_EXIT_OK;
}
