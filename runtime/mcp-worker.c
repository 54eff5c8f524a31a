/* MCP server: jobs, the pool that runs them, the workers, sandbox handles
 * and the cleanup at exit.
 *
 * A tool call becomes a job in a FIFO queue; max_concurrency threads take
 * jobs and run each in a worker, `agentbox run|exec|delete` spawned from
 * the server's own (sealed) binary.  The worker's stdin is a pipe holding
 * the call's `stdin` (or /dev/null), its stdout and stderr are one pipe
 * that is forwarded line by line to our stderr, and fd 3 is the pipe of
 * its result record.  Nothing else crosses: in particular not the server's
 * stdout, which carries the protocol.
 *
 * Cancelling a job sends SIGUSR1 to its worker, which kills what it started
 * and exits without a record; the server then deletes the container (run,
 * create) and sends no response. */
#include "config.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <yajl/yajl_parse.h>

#include "runtime/log.h"
#include "runtime/mcp-internal.h"
#include "runtime/record.h"
#include "runtime/util.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

extern char **environ;

/* How long a canceled worker may take before it is killed outright. */
#define CANCEL_GRACE_NS (10ull * 1000000000ull)
#define PROGRESS_INTERVAL_MS 1000

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
/* Workers */

struct worker
{
  pid_t pid;
  int pidfd;
  int in_w, log_r, rec_r;
};

/* pipe2 with both ends above fd 3, so that the dup2s of the spawn never
   find an fd already in place (dup2 onto itself keeps O_CLOEXEC). */
static int
pipe_high (int p[2])
{
  int i;

  if (pipe2 (p, O_CLOEXEC) < 0)
    return -1;
  for (i = 0; i < 2; i++)
    if (p[i] <= 3)
      {
        int n = fcntl (p[i], F_DUPFD_CLOEXEC, 4);
        close (p[i]);
        p[i] = n;
        if (n < 0)
          return -1;
      }
  return 0;
}

static void
close_pair (int p[2])
{
  ab_closep (&p[0]);
  ab_closep (&p[1]);
}

static int
spawn_worker (struct ab_mcp_server *s, char *const *args, bool with_stdin, bool with_record, struct worker *w,
              ab_error_t *err)
{
  int inp[2] = { -1, -1 }, logp[2] = { -1, -1 }, recp[2] = { -1, -1 };
  _cleanup_close_ int devnull = -1;
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  struct ab_strv argv = { 0 };
  sigset_t none, all;
  int r;

  w->pid = -1;
  w->pidfd = w->in_w = w->log_r = w->rec_r = -1;
  if ((with_stdin ? pipe_high (inp) : 0) < 0 || pipe_high (logp) < 0
      || (with_record ? pipe_high (recp) : 0) < 0)
    {
      r = errno;
      close_pair (inp), close_pair (logp), close_pair (recp);
      return ab_error_setc (err, AB_EC_INTERNAL, r, "pipe for a worker");
    }
  if (!with_stdin && (devnull = open ("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
    {
      r = errno;
      close_pair (logp), close_pair (recp);
      return ab_error_setc (err, AB_EC_INTERNAL, r, "open /dev/null");
    }

  posix_spawn_file_actions_init (&fa);
  posix_spawn_file_actions_adddup2 (&fa, with_stdin ? inp[0] : devnull, 0);
  /* The worker's stdout is a log pipe, never our stdout: a stray line from
     it must not land in the protocol stream. */
  posix_spawn_file_actions_adddup2 (&fa, logp[1], 1);
  posix_spawn_file_actions_adddup2 (&fa, logp[1], 2);
  if (with_record)
    posix_spawn_file_actions_adddup2 (&fa, recp[1], 3);
  /* Everything else is O_CLOEXEC already; this also covers fds a library
     may have opened without it. */
  posix_spawn_file_actions_addclosefrom_np (&fa, with_record ? 4 : 3);
  posix_spawnattr_init (&attr);
  sigemptyset (&none);
  sigfillset (&all);
  posix_spawnattr_setsigmask (&attr, &none);
  /* SIGPIPE is ignored in the server; the worker gets default dispositions. */
  posix_spawnattr_setsigdefault (&attr, &all);
  /* Its own process group: a terminal's ^C reaches the server, which
     cancels workers itself, not the workers directly. */
  posix_spawnattr_setpgroup (&attr, 0);
  posix_spawnattr_setflags (&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);

  ab_strv_push (&argv, "agentbox");
  for (size_t i = 0; args[i]; i++)
    ab_strv_push (&argv, args[i]);
  r = posix_spawn (&w->pid, s->o->exe, &fa, &attr, argv.v, environ);
  posix_spawn_file_actions_destroy (&fa);
  posix_spawnattr_destroy (&attr);
  ab_strv_free (&argv);
  ab_closep (&inp[0]);
  ab_closep (&logp[1]);
  ab_closep (&recp[1]);
  if (r != 0)
    {
      close_pair (inp), close_pair (logp), close_pair (recp);
      return ab_error_setc (err, AB_EC_INTERNAL, r, "spawn the worker `%s`", s->o->exe);
    }
  /* Our own unreaped child: its pid cannot have been reused yet. */
  w->pidfd = (int)syscall (SYS_pidfd_open, w->pid, 0);
  if (w->pidfd < 0)
    {
      r = errno;
      kill (w->pid, SIGKILL);
      waitpid (w->pid, NULL, 0);
      close_pair (inp), close_pair (logp), close_pair (recp);
      return ab_error_setc (err, AB_EC_INTERNAL, r, "pidfd_open of a worker");
    }
  w->in_w = inp[1];
  w->log_r = logp[0];
  w->rec_r = recp[0];
  if (w->in_w >= 0)
    ab_set_nonblock (w->in_w, true);
  ab_set_nonblock (w->log_r, true);
  if (w->rec_r >= 0)
    ab_set_nonblock (w->rec_r, true);
  return 0;
}

/* Forward complete lines of a worker's output to our stderr, one write per
   line with a tag (concurrent workers' lines never mix); remember the last
   error line for the response. */
struct logbuf
{
  char buf[4096];
  size_t len;
  char last_error[AB_ERR_MSG_MAX];
};

static void
log_line (const char *tag, struct logbuf *lb, const char *line, size_t n)
{
  _cleanup_free_ char *out = xasprintf ("agentbox mcp: [%s] %.*s\n", tag, (int)n, line);

  if (n > strlen ("agentbox: ") && memcmp (line, "agentbox: ", 10) == 0)
    snprintf (lb->last_error, sizeof lb->last_error, "%.*s", (int)(n - 10), line + 10);
  ab_write_all (2, out, strlen (out));
}

static void
log_feed (const char *tag, struct logbuf *lb, const char *data, size_t n)
{
  size_t i;

  for (i = 0; i < n; i++)
    {
      if (data[i] == '\n' || lb->len == sizeof lb->buf)
        {
          log_line (tag, lb, lb->buf, lb->len);
          lb->len = 0;
          if (data[i] == '\n')
            continue;
        }
      lb->buf[lb->len++] = data[i];
    }
}

/* Read what is there; false at EOF or error. */
static bool
drain (int fd, const char *tag, struct logbuf *lb, char **rec, size_t *rec_len, uint64_t rec_max,
       bool *overflow)
{
  char buf[65536];

  for (;;)
    {
      ssize_t n = read (fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return errno == EAGAIN;
      if (n == 0)
        return false;
      if (lb)
        log_feed (tag, lb, buf, (size_t)n);
      else if (*rec_len + (size_t)n > rec_max)
        *overflow = true; /* keep draining, so that the worker is not stuck on a full pipe */
      else
        {
          *rec = xrealloc (*rec, *rec_len + (size_t)n + 1);
          memcpy (*rec + *rec_len, buf, (size_t)n);
          *rec_len += (size_t)n;
          (*rec)[*rec_len] = '\0';
        }
    }
}

static void
send_progress (struct ab_mcp_server *s, struct ab_mcp_job *j, uint64_t ms)
{
  _cleanup_gen_ struct ab_gen *g = ab_gen_new (false);
  char msg[64];

  snprintf (msg, sizeof msg, "running for %llu s", (unsigned long long)(ms / 1000));
  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "jsonrpc", "2.0");
  ab_gen_kv_str (g, "method", "notifications/progress");
  ab_gen_key (g, "params");
  ab_gen_obj_open (g);
  ab_gen_key (g, "progressToken");
  ab_gen_raw_number (g, j->progress_json);
  ab_gen_kv_u64 (g, "progress", ms);
  ab_gen_kv_str (g, "message", msg);
  ab_gen_obj_close (g);
  ab_gen_obj_close (g);
  ab_mcp_send_gen (s, g);
}

struct outcome
{
  siginfo_t info;
  char *rec;
  size_t rec_len;
  bool overflow;
  struct logbuf log;
};

/* Run a spawned worker to its end: feed stdin, forward logs, collect the
   record, send progress, honour cancellation.  j may be NULL (helpers). */
static void
supervise (struct ab_mcp_server *s, struct ab_mcp_job *j, struct worker *w, const char *tag,
           struct outcome *out)
{
  uint64_t t0 = ab_now_monotonic_ns (), last_progress = 0, canceled_at = 0;
  size_t in_off = 0;
  bool exited = false;

  memset (out, 0, sizeof *out);
  if (j && j->stdin_data == NULL)
    ab_closep (&w->in_w);
  while (!exited)
    {
      struct pollfd p[4];
      int n = 0, ipid, ilog = -1, irec = -1, iin = -1, timeout = -1;
      bool canceled = false, progress = false;
      uint64_t now = ab_now_monotonic_ns ();

      if (j)
        {
          pthread_mutex_lock (&s->lock);
          canceled = j->canceled;
          progress = j->progress_json && !j->canceled;
          pthread_mutex_unlock (&s->lock);
        }
      if (canceled && canceled_at == 0)
        canceled_at = now;
      if (canceled_at && now - canceled_at > CANCEL_GRACE_NS)
        {
          ab_warn ("mcp: [%s] the worker ignored the cancellation; killing it", tag);
          syscall (SYS_pidfd_send_signal, w->pidfd, SIGKILL, NULL, 0);
          canceled_at = now;
        }
      if (progress)
        {
          uint64_t ms = (now - t0) / 1000000u;
          if (ms >= last_progress + PROGRESS_INTERVAL_MS)
            {
              /* strictly increasing: elapsed milliseconds, sent at most once a millisecond */
              send_progress (s, j, ms);
              last_progress = ms;
            }
          timeout = (int)(last_progress + PROGRESS_INTERVAL_MS - ms);
        }
      if (canceled_at)
        timeout = timeout < 0 || timeout > 1000 ? 1000 : timeout;
      else if (j && timeout < 0)
        timeout = 1000; /* notice a cancellation that raced with the spawn */

      ipid = n;
      p[n++] = (struct pollfd){ .fd = w->pidfd, .events = POLLIN };
      if (w->log_r >= 0)
        ilog = n, p[n++] = (struct pollfd){ .fd = w->log_r, .events = POLLIN };
      if (w->rec_r >= 0)
        irec = n, p[n++] = (struct pollfd){ .fd = w->rec_r, .events = POLLIN };
      if (w->in_w >= 0)
        iin = n, p[n++] = (struct pollfd){ .fd = w->in_w, .events = POLLOUT };
      if (poll (p, (nfds_t)n, timeout) < 0)
        {
          if (errno == EINTR)
            continue;
          ab_warn ("mcp: poll: %s", strerror (errno));
          syscall (SYS_pidfd_send_signal, w->pidfd, SIGKILL, NULL, 0);
        }
      if (iin >= 0 && p[iin].revents)
        {
          ssize_t wr = write (w->in_w, j->stdin_data + in_off, j->stdin_len - in_off);
          if (wr > 0)
            in_off += (size_t)wr;
          if ((wr < 0 && errno != EAGAIN && errno != EINTR) || in_off >= j->stdin_len)
            ab_closep (&w->in_w); /* EOF for the program, or it stopped reading */
        }
      if (ilog >= 0 && p[ilog].revents && !drain (w->log_r, tag, &out->log, NULL, NULL, 0, NULL))
        ab_closep (&w->log_r);
      if (irec >= 0 && p[irec].revents
          && !drain (w->rec_r, tag, NULL, &out->rec, &out->rec_len, j ? j->max_record : 0, &out->overflow))
        ab_closep (&w->rec_r);
      if (p[ipid].revents & POLLIN)
        exited = true;
    }
  /* What the worker wrote before it exited is in the pipes; a descendant
     that kept them open (a detached container) must not keep us here. */
  if (w->log_r >= 0)
    drain (w->log_r, tag, &out->log, NULL, NULL, 0, NULL);
  if (w->rec_r >= 0)
    drain (w->rec_r, tag, NULL, &out->rec, &out->rec_len, j ? j->max_record : 0, &out->overflow);
  if (out->log.len)
    log_line (tag, &out->log, out->log.buf, out->log.len);
  memset (&out->info, 0, sizeof out->info);
  if (waitid ((idtype_t)P_PIDFD, (id_t)w->pidfd, &out->info, WEXITED) < 0)
    ab_warn ("mcp: [%s] waitid: %s", tag, strerror (errno));
  ab_closep (&w->pidfd);
  ab_closep (&w->in_w);
  ab_closep (&w->log_r);
  ab_closep (&w->rec_r);
}

static int
exit_status (const siginfo_t *info)
{
  return info->si_code == CLD_EXITED ? info->si_status : 128 + info->si_status;
}

/* Spawn and wait for a helper (delete --force); returns its exit status. */
static int
run_helper (struct ab_mcp_server *s, const char *cmd, const char *id, const char *extra, struct outcome *out)
{
  struct ab_strv args = { 0 };
  struct worker w;
  ab_error_t err = { 0 };
  int status = -1;

  ab_strv_push (&args, "--root");
  ab_strv_push (&args, s->o->state_root);
  ab_strv_push (&args, cmd);
  if (extra)
    ab_strv_push (&args, extra);
  ab_strv_push (&args, id);
  if (spawn_worker (s, args.v, false, false, &w, &err) < 0)
    ab_warn ("mcp: %s", err.msg);
  else
    {
      supervise (s, NULL, &w, id, out);
      status = exit_status (&out->info);
    }
  ab_strv_free (&args);
  return status;
}

static void
delete_container (struct ab_mcp_server *s, const char *id)
{
  struct outcome out;

  run_helper (s, "delete", id, "--force", &out);
  free (out.rec);
}

/* ------------------------------------------------------------------ */
/* Responses */

/* The worker could not give a record: a setup failure at step "worker". */
static void
send_worker_error (struct ab_mcp_server *s, struct ab_mcp_job *j, const struct outcome *out, const char *why)
{
  ab_error_t e = { .cls = AB_EC_INTERNAL };
  size_t len;
  _cleanup_free_ char *frame = NULL;

  snprintf (e.step, sizeof e.step, "worker");
  snprintf (e.msg, sizeof e.msg, "%s (worker exit status %d)%s%s", why, exit_status (&out->info),
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
   valid JSON in the shape runtime/record.c writes, with the client's id in
   place of our sequence number and, for a 2026-07-28 request, the server's
   identity added to result._meta. */
static void
forward_record (struct ab_mcp_server *s, struct ab_mcp_job *j, const struct outcome *out)
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
  _cleanup_gen_ struct ab_gen *sc = ab_gen_new (false), *g = NULL;
  _cleanup_free_ char *text = NULL;

  ab_gen_obj_open (sc);
  if (str)
    ab_gen_kv_str (sc, key, str);
  else
    ab_gen_kv_bool (sc, key, b);
  ab_gen_obj_close (sc);
  text = ab_gen_steal (sc, false, NULL);
  g = ab_mcp_result_begin (j->id_json, j->modern);
  ab_gen_key (g, "content");
  ab_gen_arr_open (g);
  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "type", "text");
  ab_gen_kv_str (g, "text", text);
  ab_gen_obj_close (g);
  ab_gen_arr_close (g);
  ab_gen_key (g, "structuredContent");
  ab_gen_raw_number (g, text);
  ab_gen_kv_bool (g, "isError", false);
  ab_mcp_result_end (g, j->modern);
  ab_mcp_send_gen (s, g);
}

static void
unknown_handle (struct ab_mcp_server *s, struct ab_mcp_job *j)
{
  ab_mcp_send_tool_error (s, j->id_json, j->modern, "unknown_handle", "handle",
                          "no sandbox has this handle on this server: handles are bound to the server that "
                          "created them and end with sandbox_destroy",
                          false, "create_new_sandbox");
}

/* Claim the right to respond: false when the job was canceled (then no
   response may be sent, ever). */
static bool
claim_response (struct ab_mcp_server *s, struct ab_mcp_job *j)
{
  bool ok;

  pthread_mutex_lock (&s->lock);
  ok = !j->canceled;
  if (ok)
    j->responding = true;
  pthread_mutex_unlock (&s->lock);
  return ok;
}

/* ------------------------------------------------------------------ */
/* Jobs */

static void
run_destroy (struct ab_mcp_server *s, struct ab_mcp_job *j)
{
  _cleanup_free_ char *id = NULL;
  struct outcome out;
  ssize_t i;
  int status;

  pthread_mutex_lock (&s->lock);
  i = handle_find (s, j->handle);
  if (i >= 0)
    {
      /* Out of the table first: no exec can start in a sandbox being destroyed. */
      id = ab_steal_ptr (&s->handles[i].container_id);
      handle_remove (s, (size_t)i);
    }
  pthread_mutex_unlock (&s->lock);
  if (id == NULL)
    {
      if (claim_response (s, j))
        unknown_handle (s, j);
      return;
    }
  status = run_helper (s, "delete", id, "--force", &out);
  if (!claim_response (s, j))
    ;
  else if (status == 0)
    send_structured (s, j, "destroyed", NULL, true);
  else
    send_worker_error (s, j, &out, "the sandbox could not be destroyed");
  free (out.rec);
}

static void
run_job (struct ab_mcp_server *s, struct ab_mcp_job *j)
{
  struct ab_strv args = { 0 };
  struct worker w;
  struct outcome out = { 0 };
  ab_error_t err = { 0 };
  const char *tag;
  bool canceled;
  size_t k;

  if (j->tool == AB_TOOL_DESTROY)
    {
      run_destroy (s, j);
      return;
    }
  if (j->tool == AB_TOOL_EXEC)
    {
      ssize_t i;
      pthread_mutex_lock (&s->lock);
      i = handle_find (s, j->handle);
      if (i >= 0)
        j->container_id = xstrdup (s->handles[i].container_id);
      pthread_mutex_unlock (&s->lock);
      if (j->container_id == NULL)
        {
          if (claim_response (s, j))
            unknown_handle (s, j);
          return;
        }
    }
  for (k = 0; k < j->args.n; k++)
    ab_strv_push (&args, j->args.v[k]);
  if (j->tool == AB_TOOL_EXEC)
    {
      ab_strv_push (&args, j->container_id);
      ab_strv_push (&args, "--");
      for (k = 0; k < j->prog.n; k++)
        ab_strv_push (&args, j->prog.v[k]);
    }
  tag = j->container_id;
  if (spawn_worker (s, args.v, j->stdin_data != NULL, j->tool != AB_TOOL_CREATE, &w, &err) < 0)
    {
      ab_strv_free (&args);
      if (claim_response (s, j))
        {
          size_t len;
          _cleanup_free_ char *frame = NULL;
          snprintf (err.step, sizeof err.step, "worker");
          frame = ab_record_error_frame (j->id_json, &err, &len);
          ab_mcp_send (s, frame, len);
        }
      return;
    }
  ab_strv_free (&args);
  pthread_mutex_lock (&s->lock);
  j->pid = w.pid;
  j->pidfd = w.pidfd;
  canceled = j->canceled;
  pthread_mutex_unlock (&s->lock);
  if (canceled)
    syscall (SYS_pidfd_send_signal, w.pidfd, SIGUSR1, NULL, 0);

  supervise (s, j, &w, tag, &out);
  pthread_mutex_lock (&s->lock);
  j->pidfd = -1;
  pthread_mutex_unlock (&s->lock);

  if (!claim_response (s, j))
    {
      /* Canceled: whatever the worker managed to leave goes too. */
      if (j->tool != AB_TOOL_EXEC)
        delete_container (s, j->container_id);
      free (out.rec);
      return;
    }
  if (j->tool == AB_TOOL_CREATE)
    {
      char handle[48];
      if (out.info.si_code != CLD_EXITED || out.info.si_status != 0)
        {
          delete_container (s, j->container_id);
          send_worker_error (s, j, &out, "the sandbox could not be created");
        }
      else if (mint_handle (handle, &err) < 0)
        {
          delete_container (s, j->container_id);
          send_worker_error (s, j, &out, err.msg);
        }
      else
        {
          pthread_mutex_lock (&s->lock);
          s->handles = xreallocarray (s->handles, s->nhandles + 1, sizeof *s->handles);
          memset (&s->handles[s->nhandles], 0, sizeof *s->handles);
          memcpy (s->handles[s->nhandles].handle, handle, sizeof handle);
          s->handles[s->nhandles].container_id = xstrdup (j->container_id);
          s->nhandles++;
          pthread_mutex_unlock (&s->lock);
          send_structured (s, j, "handle", handle, false);
        }
      return;
    }
  if (out.rec == NULL && j->tool == AB_TOOL_RUN)
    delete_container (s, j->container_id); /* the worker died: it cleaned nothing up */
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
  full = s->stopping || s->queued >= AB_MCP_MAX_QUEUED;
  if (!full)
    {
      if (s->queue_tail)
        s->queue_tail->next = j;
      else
        s->queue = j;
      s->queue_tail = j;
      s->queued++;
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
      active_remove (s, j);
      drop = j;
    }
  else if (j && !j->responding && !j->canceled)
    {
      j->canceled = true;
      if (j->pidfd >= 0)
        syscall (SYS_pidfd_send_signal, j->pidfd, SIGUSR1, NULL, 0);
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
  s->queued = 0;
  for (j = s->active; j; j = j->next_active)
    if (!j->responding && !j->canceled)
      {
        j->canceled = true;
        if (j->pidfd >= 0)
          syscall (SYS_pidfd_send_signal, j->pidfd, SIGUSR1, NULL, 0);
      }
  pthread_cond_broadcast (&s->cond);
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
      delete_container (s, id);
    }
  free (s->handles);
  s->handles = NULL;
}
