/* MCP server: jobs, the pool that runs them, sandbox handles, responses
 * and the cleanup at exit.
 *
 * A tool call becomes a job in a FIFO queue; max_concurrency threads take
 * jobs and run each in a worker (runtime/mcp/mcp-worker.c).  Cancelling a
 * queued job drops it; cancelling a running one sends SIGUSR1 to its
 * worker, which kills what it started and exits without a record; the
 * server then deletes the container (run, create) and sends no response. */
#include "config.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <yajl/yajl_parse.h>

#include "base/log.h"
#include "runtime/mcp/mcp-internal.h"
#include "runtime/supervise/record.h"
#include "base/util.h"

void
ab_mcp_job_free (struct ab_mcp_job *j)
{
  if (j == NULL)
    return;
  free (j->id_json);
  free (j->progress_json);
  free (j->container_id);
  free (j->handle);
  ab_strv_free (&j->args);
  ab_strv_free (&j->prog);
  free (j->stdin_data);
  free (j);
}

uint64_t
ab_mcp_next_container (struct ab_mcp_server *s)
{
  uint64_t n;

  pthread_mutex_lock (&s->lock);
  n = ++s->next_container;
  pthread_mutex_unlock (&s->lock);
  return n;
}

/* ------------------------------------------------------------------ */
/* Handles */

/* A handle is 128 bits from getrandom: it cannot be guessed, and it means
   something only in the table of the server that minted it, so the handle
   of another server (or of a destroyed sandbox) names nothing here. */
static int
mint_handle (char out[48], ab_error_t *err)
{
  unsigned char r[16];
  size_t i;

  if (getrandom (r, sizeof r, 0) != (ssize_t)sizeof r)
    return ab_error_setc (err, AB_EC_INTERNAL, errno, "getrandom");
  memcpy (out, "sbx_", 4);
  for (i = 0; i < sizeof r; i++)
    snprintf (out + 4 + 2 * i, 3, "%02x", r[i]);
  return 0;
}

/* Compare without an early exit, so that timing says nothing about how
   much of a guess was right. */
static bool
handle_equal (const char *a, const char *b)
{
  size_t la = strlen (a), lb = strlen (b), i;
  unsigned char d = la != lb;

  for (i = 0; i < la && i < lb; i++)
    d |= (unsigned char)(a[i] ^ b[i]);
  return d == 0;
}

/* Under s->lock.  Returns the index, or -1. */
static ssize_t
handle_find (struct ab_mcp_server *s, const char *h)
{
  size_t i;

  for (i = 0; i < s->nhandles; i++)
    if (handle_equal (s->handles[i].handle, h))
      return (ssize_t)i;
  return -1;
}

static void
handle_remove (struct ab_mcp_server *s, size_t i)
{
  free (s->handles[i].container_id);
  s->handles[i] = s->handles[--s->nhandles];
}

/* ------------------------------------------------------------------ */
/* Responses */

/* The worker could not give a record: a setup failure at step "worker". */
static void
send_worker_error (struct ab_mcp_server *s, struct ab_mcp_job *j, const struct ab_mcp_outcome *out,
                   const char *why)
{
  ab_error_t e = { .cls = AB_EC_INTERNAL };
  size_t len;
  _cleanup_free_ char *frame = NULL;

  snprintf (e.step, sizeof e.step, "worker");
  snprintf (e.msg, sizeof e.msg, "%s (worker exit status %d)%s%s", why, ab_mcp_exit_status (&out->info),
            out->log.last_error[0] ? ": " : "", out->log.last_error);
  frame = ab_record_error_frame (j->id_json, &e, &len);
  ab_mcp_send (s, frame, len);
}

static bool
json_valid (const char *buf, size_t len)
{
  yajl_handle h = yajl_alloc (NULL, NULL, NULL);
  bool ok;

  if (h == NULL)
    abort ();
  ok = yajl_parse (h, (const unsigned char *)buf, len) == yajl_status_ok
       && yajl_complete_parse (h) == yajl_status_ok;
  yajl_free (h);
  return ok;
}

/* Send the worker's record as the response: checked to be one line of
   valid JSON in the shape runtime/supervise/record.c writes, with the client's id in
   place of our sequence number and, for a 2026-07-28 request, the server's
   identity added to result._meta. */
static void
forward_record (struct ab_mcp_server *s, struct ab_mcp_job *j, const struct ab_mcp_outcome *out)
{
  _cleanup_free_ char *prefix = xasprintf ("{\"jsonrpc\":\"2.0\",\"id\":%llu,", (unsigned long long)j->seq);
  static const char tail[] = "}}}\n";
  const char *rec = out->rec, *rest;
  size_t plen = strlen (prefix), tlen = sizeof tail - 1, rest_len;
  _cleanup_free_ char *frame = NULL;
  bool result;

  if (out->overflow)
    {
      send_worker_error (s, j, out, "the result record is larger than this call may return");
      return;
    }
  if (rec == NULL || out->rec_len < plen + tlen || memcmp (rec, prefix, plen) != 0
      || memcmp (rec + out->rec_len - tlen, tail, tlen) != 0 || memchr (rec, '\n', out->rec_len - 1) != NULL
      || !json_valid (rec, out->rec_len - 1))
    {
      send_worker_error (s, j, out,
                         rec ? "the worker wrote a malformed result record"
                             : "the worker wrote no result record");
      return;
    }
  rest = rec + plen;
  rest_len = out->rec_len - plen - tlen;
  result = ab_str_has_prefix (rest, "\"result\":{");
  if (result && j->modern)
    {
      /* The record ends with result._meta: add the server's identity there. */
      _cleanup_gen_ struct ab_gen *info = ab_gen_new (false);
      ab_mcp_gen_server_info (info);
      frame = xasprintf ("{\"jsonrpc\":\"2.0\",\"id\":%s,%.*s,\"" AB_MCP_META_SERVER "\":%s%s", j->id_json,
                         (int)rest_len, rest, ab_gen_buf (info, NULL), tail);
    }
  else
    frame = xasprintf ("{\"jsonrpc\":\"2.0\",\"id\":%s,%.*s%s", j->id_json, (int)rest_len, rest, tail);
  ab_mcp_send (s, frame, strlen (frame));
}

static void
send_structured (struct ab_mcp_server *s, struct ab_mcp_job *j, const char *key, const char *str, bool b)
{
  _cleanup_gen_ struct ab_gen *sc = ab_gen_new (false);
  _cleanup_free_ char *text = NULL;

  ab_gen_obj_open (sc);
  if (str)
    ab_gen_kv_str (sc, key, str);
  else
    ab_gen_kv_bool (sc, key, b);
  ab_gen_obj_close (sc);
  text = ab_gen_steal (sc, false, NULL);
  ab_mcp_send_text_result (s, j->id_json, j->modern, text, true, false);
}

static void
unknown_handle (struct ab_mcp_server *s, struct ab_mcp_job *j)
{
  ab_mcp_send_tool_error (s, j->id_json, j->modern, "unknown_handle", "handle",
                          "no sandbox has this handle on this server: handles are bound to the server that "
                          "created them and end with sandbox_destroy",
                          false, "create_new_sandbox");
}

/* ------------------------------------------------------------------ */
/* Jobs */

static void
run_destroy (struct ab_mcp_server *s, struct ab_mcp_job *j)
{
  _cleanup_free_ char *id = NULL;
  struct ab_mcp_outcome out;
  ssize_t i;
  int status;

  pthread_mutex_lock (&s->lock);
  i = handle_find (s, j->handle);
  if (i >= 0)
    {
      /* Out of the table first: no exec can start in a sandbox being destroyed. */
      id = ab_steal_ptr (&s->handles[i].container_id);
      handle_remove (s, (size_t)i);
      pthread_cond_broadcast (&s->session_cond); /* a call waiting for its session finds it gone */
    }
  pthread_mutex_unlock (&s->lock);
  if (id == NULL)
    {
      if (ab_mcp_claim_response (s, j))
        unknown_handle (s, j);
      return;
    }
  status = ab_mcp_run_helper (s, "delete", id, "--force", &out);
  if (!ab_mcp_claim_response (s, j))
    ;
  else if (status == 0)
    send_structured (s, j, "destroyed", NULL, true);
  else
    send_worker_error (s, j, &out, "the sandbox could not be destroyed");
  free (out.rec);
}

/* Spawn j's worker with args and run it to its end.  False when it could
   not be spawned (then j was answered, if it still may be). */
static bool
run_worker (struct ab_mcp_server *s, struct ab_mcp_job *j, char *const *args, bool with_record,
            bool with_status, struct ab_mcp_worker *w, struct ab_mcp_outcome *out)
{
  ab_error_t err = { 0 };
  bool canceled;

  memset (out, 0, sizeof *out);
  if (ab_mcp_spawn (s, args, j->stdin_data != NULL, with_record, with_status, w, &err) < 0)
    {
      if (ab_mcp_claim_response (s, j))
        {
          size_t len;
          _cleanup_free_ char *frame = NULL;
          snprintf (err.step, sizeof err.step, "worker");
          frame = ab_record_error_frame (j->id_json, &err, &len);
          ab_mcp_send (s, frame, len);
        }
      return false;
    }
  pthread_mutex_lock (&s->lock);
  j->pid = w->pid;
  j->pidfd = w->pidfd;
  canceled = j->canceled;
  pthread_mutex_unlock (&s->lock);
  if (canceled)
    syscall (SYS_pidfd_send_signal, w->pidfd, SIGUSR1, NULL, 0);

  ab_mcp_supervise (s, j, w, j->container_id, out);
  pthread_mutex_lock (&s->lock);
  j->pidfd = -1;
  pthread_mutex_unlock (&s->lock);
  return true;
}

/* The container of j's handle (a copy), or NULL after answering
   unknown_handle. */
static char *
handle_container (struct ab_mcp_server *s, struct ab_mcp_job *j)
{
  char *id = NULL;
  ssize_t i;

  pthread_mutex_lock (&s->lock);
  i = handle_find (s, j->handle);
  if (i >= 0)
    id = xstrdup (s->handles[i].container_id);
  pthread_mutex_unlock (&s->lock);
  if (id == NULL && ab_mcp_claim_response (s, j))
    unknown_handle (s, j);
  return id;
}

/* The shell session of j's sandbox, for j alone: one call of a session
   runs at a time, the others wait (a later call must see what an earlier
   one left).  Its container and state slot, or NULL after answering
   unknown_handle (or nothing, if j was canceled while it waited). */
static char *
session_take (struct ab_mcp_server *s, struct ab_mcp_job *j, int *slot)
{
  char *id = NULL;
  bool canceled = false;
  ssize_t i;

  pthread_mutex_lock (&s->lock);
  for (;;)
    {
      i = handle_find (s, j->handle);
      if (i < 0 || (canceled = j->canceled))
        break;
      if (!s->handles[i].shell_busy)
        {
          s->handles[i].shell_busy = true;
          *slot = s->handles[i].shell_slot;
          id = xstrdup (s->handles[i].container_id);
          break;
        }
      pthread_cond_wait (&s->session_cond, &s->lock);
    }
  pthread_mutex_unlock (&s->lock);
  if (id == NULL && !canceled && ab_mcp_claim_response (s, j))
    unknown_handle (s, j);
  return id;
}

/* Let the next call of the session in; saved >= 0: the slot it wrote. */
static void
session_give (struct ab_mcp_server *s, const char *handle, int saved)
{
  ssize_t i;

  pthread_mutex_lock (&s->lock);
  i = handle_find (s, handle);
  if (i >= 0)
    {
      s->handles[i].shell_busy = false;
      if (saved >= 0)
        s->handles[i].shell_slot = saved;
    }
  pthread_cond_broadcast (&s->session_cond);
  pthread_mutex_unlock (&s->lock);
}

/* A background process's record: started, its pid in the sandbox. */
static void
send_background (struct ab_mcp_server *s, struct ab_mcp_job *j, struct ab_mcp_outcome *out, uint64_t t0,
                 const char *log)
{
  _cleanup_free_ char *pid_file = ab_mcp_background_pid_file (s, j->seq), *text = NULL;
  uint64_t host_pid = 0;
  pid_t pid = -1;

  if (ab_read_file_at (AT_FDCWD, pid_file, 64, &text, NULL, NULL) == 0 && ab_parse_u64 (text, &host_pid) == 0
      && host_pid > 0 && host_pid < INT32_MAX)
    pid = ab_mcp_sandbox_pid ((pid_t)host_pid);
  unlink (pid_file);
  if (out->info.si_code != CLD_EXITED || out->info.si_status != 0)
    {
      send_worker_error (s, j, out, "the background process could not be started");
      return;
    }
  free (out->rec);
  out->rec = ab_mcp_background_frame (j->seq, j->container_id, ab_now_monotonic_ns () - t0, pid, log,
                                      &out->rec_len);
  forward_record (s, j, out);
}

/* A session call's record, with what the session did. */
static void
amend_session (struct ab_mcp_outcome *out, const struct ab_mcp_shell_status *st)
{
  _cleanup_free_ char *session = ab_mcp_session_json (st);
  struct ab_mcp_amend a = { .add_key = "session", .add_json = session };
  char *amended;
  size_t len;

  if (out->rec == NULL || out->overflow)
    return; /* answered as a worker error */
  amended = ab_mcp_record_amend (out->rec, out->rec_len, &a, &len);
  if (amended == NULL)
    {
      ab_warn ("mcp: the record of a sandbox_shell call could not be amended; sent without its session");
      return;
    }
  free (out->rec);
  out->rec = amended;
  out->rec_len = len;
}

/* sandbox_exec and sandbox_shell, in the foreground or the background. */
static void
run_in_sandbox (struct ab_mcp_server *s, struct ab_mcp_job *j)
{
  bool shell = j->tool == AB_TOOL_SHELL;
  _cleanup_free_ char *log = j->background ? ab_mcp_background_log (j->seq) : NULL;
  struct ab_mcp_shell_status st = { 0 };
  struct ab_strv args = { 0 };
  struct ab_mcp_outcome out;
  struct ab_mcp_worker w;
  uint64_t t0 = ab_now_monotonic_ns ();
  int slot = -1, write = -1;
  size_t k;

  j->container_id = shell ? session_take (s, j, &slot) : handle_container (s, j);
  if (j->container_id == NULL)
    return;
  for (k = 0; k < j->args.n; k++)
    ab_strv_push (&args, j->args.v[k]);
  ab_strv_push (&args, j->container_id);
  ab_strv_push (&args, "--");
  if (shell && !j->background)
    ab_mcp_shell_program (&args, j->prog.v[0], slot, write = slot == 0 ? 1 : 0);
  else if (shell)
    ab_mcp_shell_background_program (&args, j->prog.v[0], slot, log);
  else if (j->background)
    ab_mcp_background_program (&args, log, j->prog.v, j->prog.n);
  else
    for (k = 0; k < j->prog.n; k++)
      ab_strv_push (&args, j->prog.v[k]);

  if (!run_worker (s, j, args.v, !j->background, shell, &w, &out))
    {
      ab_strv_free (&args);
      if (shell)
        session_give (s, j->handle, -1);
      return;
    }
  ab_strv_free (&args);
  if (shell)
    {
      /* Until every writer is gone: a background shell closes it once it
         has read the state, and then the slot may be written again. */
      ab_mcp_status_wait (&w, &out);
      ab_mcp_shell_status_parse (out.status, out.status_len, &st);
      session_give (s, j->handle, st.saved && !j->background ? write : -1);
    }
  if (!ab_mcp_claim_response (s, j))
    ;
  else if (j->background)
    send_background (s, j, &out, t0, log);
  else
    {
      if (shell)
        amend_session (&out, &st);
      forward_record (s, j, &out);
    }
  free (out.rec);
}

static void
run_job (struct ab_mcp_server *s, struct ab_mcp_job *j)
{
  struct ab_mcp_worker w;
  struct ab_mcp_outcome out;
  ab_error_t err = { 0 };

  switch (j->tool)
    {
    case AB_TOOL_DESTROY:
      run_destroy (s, j);
      return;
    case AB_TOOL_WS_APPLY:
    case AB_TOOL_WS_DISCARD:
      ab_mcp_workspace_run (s, j);
      return;
    case AB_TOOL_EXEC:
    case AB_TOOL_SHELL:
      run_in_sandbox (s, j);
      return;
    case AB_TOOL_RUN:
    case AB_TOOL_CREATE:
      break;
    }
  if (!run_worker (s, j, j->args.v, true, false, &w, &out))
    return;
  if (!ab_mcp_claim_response (s, j))
    {
      /* Canceled: whatever the worker managed to leave goes too. */
      ab_mcp_delete_container (s, j->container_id);
      free (out.rec);
      return;
    }
  if (j->tool == AB_TOOL_CREATE)
    {
      char handle[48];
      if (out.info.si_code != CLD_EXITED || out.info.si_status != 0)
        {
          ab_mcp_delete_container (s, j->container_id);
          if (out.rec != NULL)
            forward_record (s, j, &out); /* the setup error, as the worker saw it */
          else
            send_worker_error (s, j, &out, "the sandbox could not be created");
          free (out.rec);
        }
      else if (mint_handle (handle, &err) < 0)
        {
          ab_mcp_delete_container (s, j->container_id);
          send_worker_error (s, j, &out, err.msg);
        }
      else
        {
          pthread_mutex_lock (&s->lock);
          s->handles = xreallocarray (s->handles, s->nhandles + 1, sizeof *s->handles);
          memset (&s->handles[s->nhandles], 0, sizeof *s->handles);
          memcpy (s->handles[s->nhandles].handle, handle, sizeof handle);
          s->handles[s->nhandles].container_id = xstrdup (j->container_id);
          s->handles[s->nhandles].shell_slot = -1;
          s->nhandles++;
          pthread_mutex_unlock (&s->lock);
          send_structured (s, j, "handle", handle, false);
        }
      return;
    }
  if (out.rec == NULL)
    ab_mcp_delete_container (s, j->container_id); /* the worker died: it cleaned nothing up */
  forward_record (s, j, &out);
  free (out.rec);
}

/* Unlink j from the table of requests in flight (under s->lock). */
static void
active_remove (struct ab_mcp_server *s, struct ab_mcp_job *j)
{
  struct ab_mcp_job **pp;

  for (pp = &s->active; *pp; pp = &(*pp)->next_active)
    if (*pp == j)
      {
        *pp = j->next_active;
        return;
      }
}

static void *
pool_thread (void *arg)
{
  struct ab_mcp_server *s = arg;

  for (;;)
    {
      struct ab_mcp_job *j;
      pthread_mutex_lock (&s->lock);
      while (s->queue == NULL && !s->stopping)
        pthread_cond_wait (&s->cond, &s->lock);
      if (s->queue == NULL)
        {
          pthread_mutex_unlock (&s->lock);
          return NULL;
        }
      j = s->queue;
      s->queue = j->next;
      if (s->queue == NULL)
        s->queue_tail = NULL;
      s->queued--;
      s->queued_bytes -= j->stdin_len;
      j->running = true;
      pthread_mutex_unlock (&s->lock);

      run_job (s, j);

      pthread_mutex_lock (&s->lock);
      active_remove (s, j);
      pthread_mutex_unlock (&s->lock);
      ab_mcp_job_free (j);
    }
}

int
ab_mcp_workers_start (struct ab_mcp_server *s, ab_error_t *err)
{
  unsigned i;
  int r;

  s->threads = xcalloc (s->o->max_concurrency, sizeof *s->threads);
  for (i = 0; i < s->o->max_concurrency; i++)
    {
      if ((r = pthread_create (&s->threads[i], NULL, pool_thread, s)) != 0)
        {
          ab_mcp_workers_stop (s);
          return ab_error_setc (err, AB_EC_INTERNAL, r, "start a worker thread");
        }
      s->nthreads++;
    }
  return 0;
}

bool
ab_mcp_id_active (struct ab_mcp_server *s, const char *id_json)
{
  struct ab_mcp_job *j;
  bool found = false;

  pthread_mutex_lock (&s->lock);
  for (j = s->active; j && !found; j = j->next_active)
    found = strcmp (j->id_json, id_json) == 0;
  pthread_mutex_unlock (&s->lock);
  return found;
}

void
ab_mcp_submit (struct ab_mcp_server *s, struct ab_mcp_job *j)
{
  bool full;

  pthread_mutex_lock (&s->lock);
  full = s->stopping || s->queued >= AB_MCP_MAX_QUEUED
         || s->queued_bytes + j->stdin_len > AB_MCP_MAX_QUEUED_BYTES;
  if (!full)
    {
      if (s->queue_tail)
        s->queue_tail->next = j;
      else
        s->queue = j;
      s->queue_tail = j;
      s->queued++;
      s->queued_bytes += j->stdin_len;
      j->next_active = s->active;
      s->active = j;
      pthread_cond_signal (&s->cond);
    }
  pthread_mutex_unlock (&s->lock);
  if (full)
    {
      ab_mcp_send_error (s, j->id_json, AB_MCP_BUSY,
                         "Server busy: too many tool calls are waiting; retry when some have finished",
                         "{\"retryable\":true,\"suggested_action\":\"retry_later\"}");
      ab_mcp_job_free (j);
    }
}

void
ab_mcp_cancel (struct ab_mcp_server *s, const char *id_json)
{
  struct ab_mcp_job *j, **pp, *drop = NULL;

  pthread_mutex_lock (&s->lock);
  for (j = s->active; j; j = j->next_active)
    if (strcmp (j->id_json, id_json) == 0)
      break;
  if (j && !j->running)
    {
      /* Still queued: it never started, so it just goes. */
      for (pp = &s->queue, s->queue_tail = NULL; *pp;)
        {
          if (*pp == j)
            *pp = j->next;
          else
            {
              s->queue_tail = *pp;
              pp = &(*pp)->next;
            }
        }
      s->queued--;
      s->queued_bytes -= j->stdin_len;
      active_remove (s, j);
      drop = j;
    }
  else if (j && !j->responding && !j->canceled)
    {
      j->canceled = true;
      if (j->pidfd >= 0)
        syscall (SYS_pidfd_send_signal, j->pidfd, SIGUSR1, NULL, 0);
      pthread_cond_broadcast (&s->session_cond); /* it may wait for its session */
    }
  pthread_mutex_unlock (&s->lock);
  if (drop)
    ab_mcp_job_free (drop);
}

void
ab_mcp_workers_stop (struct ab_mcp_server *s)
{
  struct ab_mcp_job *j, *next;
  unsigned i;

  pthread_mutex_lock (&s->lock);
  s->stopping = true;
  for (j = s->queue; j; j = next)
    {
      next = j->next;
      active_remove (s, j);
      ab_mcp_job_free (j);
    }
  s->queue = s->queue_tail = NULL;
  s->queued = s->queued_bytes = 0;
  for (j = s->active; j; j = j->next_active)
    if (!j->responding && !j->canceled)
      {
        j->canceled = true;
        if (j->pidfd >= 0)
          syscall (SYS_pidfd_send_signal, j->pidfd, SIGUSR1, NULL, 0);
      }
  pthread_cond_broadcast (&s->cond);
  pthread_cond_broadcast (&s->session_cond);
  pthread_mutex_unlock (&s->lock);

  for (i = 0; i < s->nthreads; i++)
    pthread_join (s->threads[i], NULL);
  free (s->threads);
  s->threads = NULL;
  s->nthreads = 0;

  /* Persistent sandboxes live as long as the server, no longer. */
  while (s->nhandles)
    {
      _cleanup_free_ char *id = ab_steal_ptr (&s->handles[0].container_id);
      handle_remove (s, 0);
      ab_mcp_delete_container (s, id);
    }
  free (s->handles);
  s->handles = NULL;
}
