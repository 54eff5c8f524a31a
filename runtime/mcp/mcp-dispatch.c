/* MCP server: the JSON-RPC envelope of frames in, and dispatch to the
 * protocol (mcp-lifecycle.c), the tools (mcp-tools.c) and the jobs
 * (mcp-jobs.c).
 *
 * Every line from the client is hostile input: it is parsed by the bounded
 * reader of base/json.h, and whatever it holds -- garbage, batches, wrong
 * types, notifications with ids, duplicate ids -- gets the JSON-RPC error
 * the specification names for it, or (for notifications) nothing. */
#include "config.h"

#include <stdio.h>

#include "base/log.h"
#include "base/util.h"
#include "runtime/mcp/mcp-internal.h"

static const struct ab_json_limits frame_limits = {
  .max_bytes = AB_MCP_MAX_LINE,
  .max_depth = 32,
  .max_string = AB_MCP_MAX_LINE,
  .max_items = 1u << 16,
  .max_nodes = 1u << 18,
};

/* MCP ids are strings or integers, never null (JSON-RPC allows more). */
static bool
valid_id (const struct ab_json *id)
{
  return id->type == AB_J_STRING || (id->type == AB_J_NUMBER && strpbrk (id->u.num, ".eE") == NULL);
}

static void
handle_notification (struct ab_mcp_server *s, const char *method, struct ab_json *params)
{
  if (strcmp (method, "notifications/cancelled") == 0)
    {
      struct ab_json *rid = params ? ab_json_member (params, "requestId") : NULL;
      _cleanup_free_ char *rid_json = NULL;
      if (rid == NULL || !valid_id (rid))
        return; /* nothing to answer a notification with */
      rid_json = ab_mcp_json_text (rid);
      ab_mcp_cancel (s, rid_json);
      return;
    }
  /* notifications/initialized ends the legacy handshake; the server has
     nothing to wait for, so it and every other notification need no action. */
  if (ab_log_debug_enabled ())
    ab_debug ("mcp: notification %s", method);
}

static bool
known_method (const char *m)
{
  static const char *const methods[] = {
    "initialize", "ping", "server/discover", "tools/list", "tools/call",
  };
  for (size_t i = 0; i < AB_ARRAY_SIZE (methods); i++)
    if (strcmp (m, methods[i]) == 0)
      return true;
  return false;
}

static void
dispatch (struct ab_mcp_server *s, struct ab_mcp_request *r)
{
  struct ab_mcp_job *j;

  if (strcmp (r->method, "initialize") == 0)
    {
      ab_mcp_initialize (s, r);
      return;
    }
  if (ab_mcp_check_era (s, r) < 0)
    return;
  if (strcmp (r->method, "ping") == 0)
    ab_mcp_ping (s, r);
  else if (strcmp (r->method, "server/discover") == 0)
    ab_mcp_discover (s, r);
  else if (strcmp (r->method, "tools/list") == 0)
    ab_mcp_tools_list (s, r);
  else if ((j = ab_mcp_tools_call (s, r)) != NULL)
    ab_mcp_submit (s, j);
}

/* A well-formed message with a method: a notification (no id) or a
   request. */
static void
handle_request (struct ab_mcp_server *s, const char *id_json, const char *method, struct ab_json *params)
{
  struct ab_mcp_request r = { 0 };
  char buf[1200];

  if (id_json == NULL)
    {
      handle_notification (s, method, params && params->type == AB_J_OBJECT ? params : NULL);
      return;
    }
  if (ab_str_has_prefix (method, "notifications/"))
    {
      snprintf (buf, sizeof buf, "Invalid Request: %.200s is a notification and must not carry an id",
                method);
      ab_mcp_send_error (s, id_json, AB_RPC_INVALID_REQUEST, buf, NULL);
      return;
    }
  if (ab_mcp_id_active (s, id_json))
    {
      /* JSON-RPC: an id must not be reused while its request is in flight;
         answering the duplicate must not touch the original. */
      ab_mcp_send_error (s, id_json, AB_RPC_INVALID_REQUEST,
                         "Invalid Request: a request with this id is still in flight", NULL);
      return;
    }
  if (!known_method (method))
    {
      snprintf (buf, sizeof buf, "Method not found: %.200s", method);
      ab_mcp_send_error (s, id_json, AB_RPC_METHOD_NOT_FOUND, buf, NULL);
      return;
    }
  if (params && params->type != AB_J_OBJECT)
    {
      ab_mcp_send_error (s, id_json, AB_RPC_INVALID_PARAMS, "Invalid params: params must be an object", NULL);
      return;
    }
  r.method = method;
  r.id_json = id_json;
  r.params = params;
  dispatch (s, &r);
}

void
ab_mcp_handle_line (struct ab_mcp_server *s, const char *line, size_t len)
{
  ab_error_t err = { 0 };
  _cleanup_json_ struct ab_json *msg = NULL;
  _cleanup_free_ char *id_json = NULL;
  struct ab_json *id, *jsonrpc, *method;
  char buf[1200];

  msg = ab_json_parse (line, len, &frame_limits, "message", &err);
  if (msg == NULL)
    {
      snprintf (buf, sizeof buf, "Parse error: %s", err.msg);
      ab_mcp_send_error (s, NULL, AB_RPC_PARSE_ERROR, buf, NULL);
      return;
    }
  if (msg->type == AB_J_ARRAY)
    {
      /* Batches were removed from MCP in 2025-06-18. */
      ab_mcp_send_error (s, NULL, AB_RPC_INVALID_REQUEST,
                         "Invalid Request: JSON-RPC batches are not supported", NULL);
      return;
    }
  if (msg->type != AB_J_OBJECT)
    {
      ab_mcp_send_error (s, NULL, AB_RPC_INVALID_REQUEST, "Invalid Request: a message must be a JSON object",
                         NULL);
      return;
    }
  id = ab_json_member (msg, "id");
  if (id && !valid_id (id))
    {
      ab_mcp_send_error (s, NULL, AB_RPC_INVALID_REQUEST,
                         "Invalid Request: id must be a string or an integer", NULL);
      return;
    }
  if (id)
    id_json = ab_mcp_json_text (id);
  jsonrpc = ab_json_member (msg, "jsonrpc");
  method = ab_json_member (msg, "method");
  if (jsonrpc == NULL || jsonrpc->type != AB_J_STRING || strcmp (jsonrpc->u.str.s, "2.0") != 0)
    {
      if (id || method)
        ab_mcp_send_error (s, id_json, AB_RPC_INVALID_REQUEST, "Invalid Request: jsonrpc must be \"2.0\"",
                           NULL);
      return;
    }
  if (method == NULL)
    {
      /* A response: the server sends no requests, so there is nothing to
         match it with. */
      if (ab_json_member (msg, "result") || ab_json_member (msg, "error"))
        ab_debug ("mcp: ignoring a response from the client");
      else
        ab_mcp_send_error (s, id_json, AB_RPC_INVALID_REQUEST, "Invalid Request: method is missing", NULL);
      return;
    }
  if (method->type != AB_J_STRING)
    {
      if (id)
        ab_mcp_send_error (s, id_json, AB_RPC_INVALID_REQUEST, "Invalid Request: method must be a string",
                           NULL);
      return;
    }
  handle_request (s, id_json, method->u.str.s, ab_json_member (msg, "params"));
}
