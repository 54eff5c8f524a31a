/* `agentbox mcp`: a Model Context Protocol server on stdio that runs tool
 * calls in agentbox sandboxes (docs/result-record.md).
 *
 * It speaks MCP 2026-07-28 (stateless: every request carries its protocol
 * version and client capabilities in _meta) and, for clients that still
 * use it, the 2025-11-25 lifecycle (initialize, notifications/initialized,
 * ping).  The tools are sandbox_run (a fresh container per call) and the
 * persistent sandbox_create / sandbox_exec / sandbox_shell (a shell
 * session) / sandbox_destroy.
 *
 * The server never clones containers itself: each tool call runs in a
 * worker, an `agentbox run|exec|delete` child spawned from the (sealed)
 * binary, whose result record comes back on a pipe. */
#ifndef AB_RUNTIME_MCP_H
#define AB_RUNTIME_MCP_H

#include <stdbool.h>

#include "base/error.h"
#include "base/util.h"

struct ab_mcp_opts
{
  const char *exe;                /* the agentbox binary for workers, e.g. /proc/self/exe */
  const char *state_root;         /* --root of the workers: created, and removed at exit */
  unsigned max_concurrency;       /* tool calls running at once; more wait in a queue */
  struct ab_strv workspace_roots; /* host directories a `workspace` argument may be in */
  bool debug;                     /* pass --debug to workers */
  const char *rootless;           /* --rootless VALUE to pass to workers, or NULL */
  const char *cgroup_parent;      /* --cgroup-parent to pass to workers, or NULL */
};

/* Serve MCP on in_fd/out_fd until in_fd reaches EOF (or SIGINT, SIGTERM,
   SIGHUP): then kill every worker and container, remove the state root
   and return 0.  Returns -1 with *err when the server cannot start. */
int ab_mcp_serve (const struct ab_mcp_opts *o, int in_fd, int out_fd, ab_error_t *err);

#endif
