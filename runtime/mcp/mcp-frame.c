/* MCP server: frames out, one write per frame (stdout is the protocol
 * only), and the envelopes every part answers in.  The lowest file of the
 * room: it calls no other (runtime/mcp/mcp-internal.h). */
#include "config.h"

#include <stdio.h>

#include "base/log.h"
#include "runtime/mcp/mcp-internal.h"
#include "base/util.h"

/* The server, as serverInfo and _meta name it. */
void
ab_mcp_gen_server_info (struct ab_gen *g)
{
  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "name", "agentbox");
  ab_gen_kv_str (g, "title", "agentbox sandbox runtime");
  ab_gen_kv_str (g, "version", PACKAGE_VERSION);
  ab_gen_obj_close (g);
}

void
ab_mcp_send (struct ab_mcp_server *s, const char *frame, size_t len)
{
  pthread_mutex_lock (&s->out_lock);
  /* One frame, one write (retried only on a short write), under the lock:
     frames of concurrent requests never interleave. */
  if (!s->out_broken && ab_write_all (s->out_fd, frame, len) < 0)
    {
      /* The client closed our stdout; stdin's EOF will follow. */
      s->out_broken = true;
      ab_warn ("mcp: cannot write to the client: %s", strerror (errno));
    }
  pthread_mutex_unlock (&s->out_lock);
}

void
ab_mcp_send_gen (struct ab_mcp_server *s, struct ab_gen *g)
{
  size_t len;
  _cleanup_free_ char *frame = ab_gen_steal (g, true, &len);

  ab_mcp_send (s, frame, len);
}

/* Open {"jsonrpc": "2.0", "id": <id>, "<member>": {: the caller writes
   the member's properties and closes both objects. */
static void
envelope_open (struct ab_gen *g, const char *id_json, const char *member)
{
  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "jsonrpc", "2.0");
  ab_gen_key (g, "id");
  ab_gen_raw_number (g, id_json);
  ab_gen_key (g, member);
  ab_gen_obj_open (g);
}

void
ab_mcp_send_error (struct ab_mcp_server *s, const char *id_json, int code, const char *message,
                   const char *data_json)
{
  _cleanup_gen_ struct ab_gen *g = ab_gen_new (false);

  envelope_open (g, id_json ? id_json : "null", "error");
  ab_gen_kv_i64 (g, "code", code);
  ab_gen_key (g, "message");
  ab_gen_bytes (g, message, strlen (message));
  if (data_json)
    {
      ab_gen_key (g, "data");
      ab_gen_raw_number (g, data_json);
    }
  ab_gen_obj_close (g);
  ab_gen_obj_close (g);
  ab_mcp_send_gen (s, g);
}

struct ab_gen *
ab_mcp_result_begin (const char *id_json, bool modern)
{
  struct ab_gen *g = ab_gen_new (false);

  envelope_open (g, id_json, "result");
  if (modern)
    ab_gen_kv_str (g, "resultType", "complete");
  return g;
}

void
ab_mcp_result_end (struct ab_gen *g, bool modern)
{
  if (modern)
    {
      ab_gen_key (g, "_meta");
      ab_gen_obj_open (g);
      ab_gen_key (g, AB_MCP_META_SERVER);
      ab_mcp_gen_server_info (g);
      ab_gen_obj_close (g);
    }
  ab_gen_obj_close (g);
  ab_gen_obj_close (g);
}

char *
ab_mcp_json_text (const struct ab_json *v)
{
  _cleanup_gen_ struct ab_gen *g = ab_gen_new (false);

  ab_gen_json (g, v);
  return ab_gen_steal (g, false, NULL);
}

/* A tool result the model can act on (isError, a text block). */
void
ab_mcp_send_tool_error (struct ab_mcp_server *s, const char *id_json, bool modern, const char *code,
                        const char *path, const char *message, bool retryable, const char *action)
{
  _cleanup_gen_ struct ab_gen *e = ab_gen_new (false);
  _cleanup_free_ char *text = NULL;

  ab_gen_obj_open (e);
  ab_gen_key (e, "error");
  ab_gen_obj_open (e);
  ab_gen_kv_str (e, "code", code);
  ab_gen_key (e, "message");
  ab_gen_bytes (e, message, strlen (message));
  if (path)
    {
      ab_gen_key (e, "path");
      ab_gen_bytes (e, path, strlen (path));
    }
  ab_gen_kv_bool (e, "retryable", retryable);
  ab_gen_kv_str (e, "suggested_action", action);
  ab_gen_obj_close (e);
  ab_gen_obj_close (e);
  text = ab_gen_steal (e, false, NULL);
  ab_mcp_send_text_result (s, id_json, modern, text, false, true);
}

void
ab_mcp_send_text_result (struct ab_mcp_server *s, const char *id_json, bool modern, const char *text,
                         bool structured, bool is_error)
{
  _cleanup_gen_ struct ab_gen *g = ab_mcp_result_begin (id_json, modern);

  ab_gen_key (g, "content");
  ab_gen_arr_open (g);
  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "type", "text");
  ab_gen_kv_str (g, "text", text);
  ab_gen_obj_close (g);
  ab_gen_arr_close (g);
  if (structured)
    {
      ab_gen_key (g, "structuredContent");
      ab_gen_raw_number (g, text);
    }
  ab_gen_kv_bool (g, "isError", is_error);
  ab_mcp_result_end (g, modern);
  ab_mcp_send_gen (s, g);
}

/* A job is answered once: claimed (under the server lock) by whoever sends
   its response, unless it was canceled. */
bool
ab_mcp_claim_response (struct ab_mcp_server *s, struct ab_mcp_job *j)
{
  bool ok;

  pthread_mutex_lock (&s->lock);
  ok = !j->canceled;
  if (ok)
    j->responding = true;
  pthread_mutex_unlock (&s->lock);
  return ok;
}
