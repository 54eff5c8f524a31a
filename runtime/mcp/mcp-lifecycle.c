/* MCP server: the two protocol eras and their version negotiation.
 *
 * 2026-07-28 (modern) is stateless: every request names its protocol
 * version and the client's capabilities in params._meta, and each request
 * is accepted or refused on its own (-32022 with the supported versions for
 * an unknown version, -32602 for missing metadata).  Nothing a previous
 * request said is used: the era of a request is decided by the request.
 *
 * 2025-11-25 (legacy) negotiates once: initialize names the client's
 * version, the server answers with that version when it speaks it and with
 * its latest legacy version otherwise (the client then decides whether to
 * go on), and requests without _meta are served in that session.  Before
 * initialize, only ping is answered without _meta. */
#include "config.h"

#include <stdio.h>

#include "runtime/mcp/mcp-internal.h"
#include "base/util.h"

static const char *const legacy_versions[] = { "2025-11-25", "2025-06-18" };

static const char instructions[]
    = "Runs commands in agentbox sandboxes: containers with no network (unless allow_domains names "
      "hosts), no capabilities, a read-only view of the host's /usr and /etc, and a writable /workspace. "
      "sandbox_run runs one command in a fresh sandbox and returns its exit code, signal, output and the "
      "limits it hit; sandbox_create returns a handle for a sandbox that persists between sandbox_exec "
      "calls until sandbox_destroy. In it, sandbox_shell runs bash command lines in one shell session (cwd, "
      "variables and functions carry over between calls), and background: true starts a process that keeps "
      "running (a dev server) until it ends or sandbox_destroy; otherwise what a call starts ends with it. "
      "With workspace_mode \"overlay\" the host workspace is left untouched: the "
      "result's workspaceChanges lists what the command changed, and workspace_apply or workspace_discard "
      "decides.";

static void
gen_capabilities (struct ab_gen *g)
{
  ab_gen_key (g, "capabilities");
  ab_gen_obj_open (g);
  ab_gen_key (g, "tools");
  ab_gen_obj_open (g);
  ab_gen_kv_bool (g, "listChanged", false);
  ab_gen_obj_close (g);
  ab_gen_obj_close (g);
}

static void
unsupported_version (struct ab_mcp_server *s, struct ab_mcp_request *r, const struct ab_json *ver)
{
  _cleanup_gen_ struct ab_gen *g = ab_gen_new (false);
  _cleanup_free_ char *data = NULL;
  char msg[256];
  /* Echo at most a bounded part of what the client claimed. */
  size_t n = ver->u.str.len < 64 ? ver->u.str.len : 64;

  ab_gen_obj_open (g);
  ab_gen_key (g, "supported");
  ab_gen_arr_open (g);
  ab_gen_str (g, AB_MCP_MODERN_VERSION);
  ab_gen_arr_close (g);
  ab_gen_key (g, "requested");
  ab_gen_bytes (g, ver->u.str.s, n);
  ab_gen_obj_close (g);
  data = ab_gen_steal (g, false, NULL);
  snprintf (msg, sizeof msg, "Unsupported protocol version: %.64s (supported: " AB_MCP_MODERN_VERSION ")",
            ver->u.str.s);
  ab_mcp_send_error (s, r->id_json, AB_MCP_UNSUPPORTED_VERSION, msg, data);
}

int
ab_mcp_check_era (struct ab_mcp_server *s, struct ab_mcp_request *r)
{
  struct ab_json *meta = r->params ? ab_json_member (r->params, "_meta") : NULL;
  struct ab_json *ver, *caps, *info;
  bool legacy;

  if (meta && meta->type != AB_J_OBJECT)
    {
      ab_mcp_send_error (s, r->id_json, AB_RPC_INVALID_PARAMS, "Invalid params: _meta must be an object",
                         NULL);
      return -1;
    }
  ver = meta ? ab_json_member (meta, AB_MCP_META_VERSION) : NULL;
  if (ver == NULL)
    {
      pthread_mutex_lock (&s->lock);
      legacy = s->legacy_session;
      pthread_mutex_unlock (&s->lock);
      if (legacy || strcmp (r->method, "ping") == 0)
        {
          r->modern = false;
          return 0;
        }
      ab_mcp_send_error (s, r->id_json, AB_RPC_INVALID_PARAMS,
                         "Invalid params: missing _meta " AB_MCP_META_VERSION " (MCP " AB_MCP_MODERN_VERSION
                         " needs it on every request; "
                         "a " AB_MCP_LEGACY_VERSION " client must send initialize first)",
                         NULL);
      return -1;
    }
  if (ver->type != AB_J_STRING)
    {
      ab_mcp_send_error (s, r->id_json, AB_RPC_INVALID_PARAMS,
                         "Invalid params: _meta " AB_MCP_META_VERSION " must be a string", NULL);
      return -1;
    }
  if (strcmp (ver->u.str.s, AB_MCP_MODERN_VERSION) != 0)
    {
      unsupported_version (s, r, ver);
      return -1;
    }
  caps = ab_json_member (meta, AB_MCP_META_CAPS);
  if (caps == NULL || caps->type != AB_J_OBJECT)
    {
      ab_mcp_send_error (s, r->id_json, AB_RPC_INVALID_PARAMS,
                         caps ? "Invalid params: _meta " AB_MCP_META_CAPS " must be an object"
                              : "Invalid params: missing _meta " AB_MCP_META_CAPS,
                         NULL);
      return -1;
    }
  info = ab_json_member (meta, AB_MCP_META_CLIENT);
  if (info && info->type != AB_J_OBJECT)
    {
      ab_mcp_send_error (s, r->id_json, AB_RPC_INVALID_PARAMS,
                         "Invalid params: _meta " AB_MCP_META_CLIENT " must be an object", NULL);
      return -1;
    }
  r->modern = true;
  return 0;
}

void
ab_mcp_initialize (struct ab_mcp_server *s, struct ab_mcp_request *r)
{
  struct ab_json *pv = r->params ? ab_json_member (r->params, "protocolVersion") : NULL;
  struct ab_json *caps = r->params ? ab_json_member (r->params, "capabilities") : NULL;
  _cleanup_gen_ struct ab_gen *g = NULL;
  const char *version = AB_MCP_LEGACY_VERSION;
  bool again;
  size_t i;

  if (pv == NULL || pv->type != AB_J_STRING)
    {
      ab_mcp_send_error (s, r->id_json, AB_RPC_INVALID_PARAMS,
                         pv ? "Invalid params: protocolVersion must be a string"
                            : "Invalid params: initialize needs protocolVersion",
                         NULL);
      return;
    }
  if (caps && caps->type != AB_J_OBJECT)
    {
      ab_mcp_send_error (s, r->id_json, AB_RPC_INVALID_PARAMS,
                         "Invalid params: capabilities must be an object", NULL);
      return;
    }
  /* Legacy negotiation: the client's version when we speak it, else our
     latest legacy one.  A modern version is never the answer: 2026-07-28
     has no initialize, and a session it opened would be neither era. */
  for (i = 0; i < AB_ARRAY_SIZE (legacy_versions); i++)
    if (strcmp (pv->u.str.s, legacy_versions[i]) == 0)
      version = legacy_versions[i];

  pthread_mutex_lock (&s->lock);
  again = s->legacy_session;
  if (!again)
    {
      s->legacy_session = true;
      snprintf (s->legacy_version, sizeof s->legacy_version, "%s", version);
    }
  pthread_mutex_unlock (&s->lock);
  if (again)
    {
      ab_mcp_send_error (s, r->id_json, AB_RPC_INVALID_REQUEST,
                         "Invalid Request: initialize was already answered on this connection", NULL);
      return;
    }

  g = ab_mcp_result_begin (r->id_json, false);
  ab_gen_kv_str (g, "protocolVersion", version);
  gen_capabilities (g);
  ab_gen_key (g, "serverInfo");
  ab_mcp_gen_server_info (g);
  ab_gen_kv_str (g, "instructions", instructions);
  ab_mcp_result_end (g, false);
  ab_mcp_send_gen (s, g);
}

void
ab_mcp_discover (struct ab_mcp_server *s, struct ab_mcp_request *r)
{
  _cleanup_gen_ struct ab_gen *g = NULL;

  if (!r->modern)
    {
      /* server/discover exists only in the modern era. */
      ab_mcp_send_error (s, r->id_json, AB_RPC_METHOD_NOT_FOUND,
                         "Method not found: server/discover is a " AB_MCP_MODERN_VERSION
                         " method (send it with _meta " AB_MCP_META_VERSION ")",
                         NULL);
      return;
    }
  g = ab_mcp_result_begin (r->id_json, true);
  ab_gen_key (g, "supportedVersions");
  ab_gen_arr_open (g);
  ab_gen_str (g, AB_MCP_MODERN_VERSION);
  ab_gen_arr_close (g);
  gen_capabilities (g);
  ab_gen_kv_str (g, "instructions", instructions);
  ab_gen_kv_u64 (g, "ttlMs", 3600000);
  ab_gen_kv_str (g, "cacheScope", "public");
  ab_mcp_result_end (g, true);
  ab_mcp_send_gen (s, g);
}

void
ab_mcp_ping (struct ab_mcp_server *s, struct ab_mcp_request *r)
{
  _cleanup_gen_ struct ab_gen *g = ab_mcp_result_begin (r->id_json, r->modern);

  ab_mcp_result_end (g, r->modern);
  ab_mcp_send_gen (s, g);
}
