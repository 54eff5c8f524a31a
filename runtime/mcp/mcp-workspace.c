/* MCP server: workspace_apply and workspace_discard, the change sets that
 * sandbox_run and sandbox_create keep with workspace_mode "overlay"
 * (runtime/lifecycle/workspace.h).
 *
 * They run in the pool thread, not in a worker: no container is involved,
 * only the server's own state root, and an apply is crash-safe by its
 * journal.  The id is one this server gave a sandbox (mcp-<pid>-<n>): the
 * change sets live in the server's private state root, so another
 * server's, or a made-up one, names nothing here. */
#include "config.h"

#include <stdio.h>

#include "base/log.h"
#include "runtime/mcp/mcp-internal.h"
#include "base/util.h"
#include "runtime/lifecycle/workspace.h"

#define ID_PATTERN "^mcp-[0-9]+-[0-9]+$"

/* One tools/list entry each, written out: nothing in them depends on the
   server's state. */
static const char apply_tool[]
    = "{\"name\":\"workspace_apply\",\"title\":\"Apply a sandbox's workspace changes\","
      "\"description\":\"Apply the change set of a sandbox that ran with workspace_mode overlay to its host "
      "workspace directory: the directory becomes what the sandbox saw (symlinks as symlinks; no set-uid, "
      "set-gid or file capabilities; device nodes, fifos and sockets refused). A path changed on the host since "
      "the sandbox started is a conflict: nothing is applied unless overwrite or partial is set. The sandbox must "
      "be gone (sandbox_run's, or destroyed).\","
      "\"inputSchema\":{\"type\":\"object\",\"properties\":{"
      "\"id\":{\"type\":\"string\",\"pattern\":\"" ID_PATTERN "\",\"description\":\"workspaceChanges.id of the "
      "result\"},"
      "\"overwrite\":{\"type\":\"boolean\",\"description\":\"apply over paths changed on the host (default false)\"},"
      "\"partial\":{\"type\":\"boolean\",\"description\":\"apply the rest, leaving conflicting and refused paths "
      "out (default false)\"}},\"required\":[\"id\"],\"additionalProperties\":false},"
      "\"outputSchema\":{\"type\":\"object\",\"properties\":{"
      "\"id\":{\"type\":\"string\"},\"workspace\":{\"type\":\"string\"},"
      "\"result\":{\"enum\":[\"applied\",\"refused\"]},"
      "\"applied\":{\"type\":\"integer\",\"minimum\":0},\"skipped\":{\"type\":\"integer\",\"minimum\":0},"
      "\"resumed\":{\"type\":\"boolean\"},"
      "\"problems\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
      "\"path\":{\"type\":\"string\"},\"problem\":{\"enum\":[\"conflict\",\"refused\",\"unreachable\"]},"
      "\"reason\":{\"type\":\"string\"}},\"required\":[\"path\",\"problem\",\"reason\"],"
      "\"additionalProperties\":false}}},"
      "\"required\":[\"id\",\"workspace\",\"result\",\"applied\",\"skipped\",\"resumed\",\"problems\"],"
      "\"additionalProperties\":false},"
      "\"annotations\":{\"title\":\"Apply a sandbox's workspace changes\",\"readOnlyHint\":false,"
      "\"destructiveHint\":true,\"idempotentHint\":false,\"openWorldHint\":false}}";

static const char discard_tool[]
    = "{\"name\":\"workspace_discard\",\"title\":\"Discard a sandbox's workspace changes\","
      "\"description\":\"Throw away the change set of a sandbox that ran with workspace_mode overlay; its host "
      "workspace stays as it was. The sandbox must be gone.\","
      "\"inputSchema\":{\"type\":\"object\",\"properties\":{"
      "\"id\":{\"type\":\"string\",\"pattern\":\"" ID_PATTERN "\",\"description\":\"workspaceChanges.id of the "
      "result\"}},\"required\":[\"id\"],\"additionalProperties\":false},"
      "\"outputSchema\":{\"type\":\"object\",\"properties\":{"
      "\"id\":{\"type\":\"string\"},\"workspace\":{\"type\":\"string\"},"
      "\"result\":{\"enum\":[\"discarded\",\"applied\"]},\"rolledBack\":{\"type\":\"boolean\"}},"
      "\"required\":[\"id\",\"workspace\",\"result\",\"rolledBack\"],\"additionalProperties\":false},"
      "\"annotations\":{\"title\":\"Discard a sandbox's workspace changes\",\"readOnlyHint\":false,"
      "\"destructiveHint\":true,\"idempotentHint\":false,\"openWorldHint\":false}}";

void
ab_mcp_workspace_tools (struct ab_gen *g)
{
  ab_gen_raw_number (g, apply_tool);
  ab_gen_raw_number (g, discard_tool);
}

/* mcp-<our pid>-<n>: a change set this server's sandboxes made. */
static bool
ours (const char *id)
{
  char prefix[32];
  size_t n = (size_t)snprintf (prefix, sizeof prefix, "mcp-%ld-", (long)getpid ());

  return strncmp (id, prefix, n) == 0 && id[n] && strspn (id + n, "0123456789") == strlen (id + n);
}

int
ab_mcp_workspace_args (struct ab_jctx *c, struct ab_json *args, struct ab_mcp_job *j)
{
  struct ab_strv unused = { 0 };

  if (ab_jget_str (c, args, "id", AB_REQUIRED, &j->container_id) < 0)
    return -1;
  if (j->tool == AB_TOOL_WS_APPLY
      && (ab_jget_bool (c, args, "overwrite", AB_OPTIONAL, &j->overwrite) < 0
          || ab_jget_bool (c, args, "partial", AB_OPTIONAL, &j->partial) < 0))
    return -1;
  ab_json_collect_unused (args, "", &unused);
  if (unused.n)
    {
      ab_jpush_key (c, unused.v[0]);
      ab_jerr (c, "unknown argument (see the tool's inputSchema)");
      ab_strv_free (&unused);
      return -1;
    }
  return 0;
}


void
ab_mcp_workspace_run (struct ab_mcp_server *s, struct ab_mcp_job *j)
{
  _cleanup_gen_ struct ab_gen *g = ab_gen_new (false);
  _cleanup_free_ char *text = NULL;
  struct ab_workspace_result res = { 0 };
  bool apply = j->tool == AB_TOOL_WS_APPLY;
  ab_error_t err = { 0 };
  int rc;

  if (!ours (j->container_id))
    {
      if (ab_mcp_claim_response (s, j))
        ab_mcp_send_tool_error (s, j->id_json, j->modern, "unknown_change_set", "id",
                                "no change set has this id on this server (ids come from workspaceChanges.id of a "
                                "sandbox_run or sandbox_exec result)",
                                false, "fix_arguments");
      return;
    }
  rc = apply ? ab_workspace_apply (s->o->state_root, j->container_id, j->overwrite, j->partial, &res, &err)
             : ab_workspace_discard (s->o->state_root, j->container_id, &res, &err);
  if (!ab_mcp_claim_response (s, j))
    ;
  else if (rc < 0)
    ab_mcp_send_tool_error (s, j->id_json, j->modern,
                            err.cls == AB_EC_NOTFOUND ? "unknown_change_set" : "workspace_error", "id", err.msg,
                            err.cls == AB_EC_STATE, err.cls == AB_EC_STATE ? "destroy_sandbox_first" : "stop_and_request_human");
  else
    {
      ab_gen_obj_open (g);
      ab_workspace_result_gen (g, j->container_id, &res, apply, rc);
      ab_gen_obj_close (g);
      text = ab_gen_steal (g, false, NULL);
      ab_mcp_send_text_result (s, j->id_json, j->modern, text, true, rc == 1);
    }
  ab_workspace_result_free (&res);
}

void
ab_mcp_workspace_discard_all (const char *root)
{
  _cleanup_strv_ struct ab_strv ids = { 0 };
  ab_error_t err = { 0 };
  size_t i;

  if (ab_changeset_list (root, &ids, &err) < 0)
    return;
  for (i = 0; i < ids.n; i++)
    {
      struct ab_workspace_result res = { 0 };
      if (ab_workspace_discard (root, ids.v[i], &res, &err) < 0)
        ab_warn ("mcp: change set `%s`: %s", ids.v[i], err.msg);
      ab_workspace_result_free (&res);
    }
}
