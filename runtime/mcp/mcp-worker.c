/* MCP server: workers, the processes that run tool calls.
 *
 * A worker is `agentbox run|exec|delete` spawned from the server's own
 * (sealed) binary.  Its stdin is a pipe holding the call's `stdin` (or
 * /dev/null), its stdout and stderr are one pipe that is forwarded line by
 * line to our stderr, and fd 3 is the pipe of its result record -- or, for
 * a shell session's call, fd 3 is the session's status pipe (passed on to
 * the shell with --preserve-fds 1, runtime/mcp-shell.c) and the record is
 * on fd 4.  Nothing else crosses: in particular not the server's stdout,
 * which carries the protocol.  While it runs, its supervisor sends progress
 * notifications and turns a cancellation into SIGUSR1 (then SIGKILL, if it
 * is ignored). */
#include "config.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "base/log.h"
#include "runtime/mcp/mcp-internal.h"
#include "base/util.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

extern char **environ;

/* How long a canceled worker may take before it is killed outright. */
#define CANCEL_GRACE_NS (10ull * 1000000000ull)
#define PROGRESS_INTERVAL_MS 1000

/* pipe2 with both ends above fd 4, so that the dup2s of the spawn (onto
   0 to 4) never find an fd already in place (dup2 onto itself keeps
   O_CLOEXEC). */
static int
pipe_high (int p[2])
{
  int i;

  if (pipe2 (p, O_CLOEXEC) < 0)
    return -1;
  for (i = 0; i < 2; i++)
    if (p[i] <= 4)
      {
        int n = fcntl (p[i], F_DUPFD_CLOEXEC, 5);
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

int
ab_mcp_spawn (struct ab_mcp_server *s, char *const *args, bool with_stdin, bool with_record,
              bool with_status, struct ab_mcp_worker *w, ab_error_t *err)
{
  int inp[2] = { -1, -1 }, logp[2] = { -1, -1 }, recp[2] = { -1, -1 }, stp[2] = { -1, -1 };
  int rec_fd = with_status ? 4 : 3;
  _cleanup_close_ int devnull = -1;
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  struct ab_strv argv = { 0 };
  sigset_t none, all;
  int r;

  w->pid = -1;
  w->pidfd = w->in_w = w->log_r = w->rec_r = w->status_r = -1;
  if ((with_stdin ? pipe_high (inp) : 0) < 0 || pipe_high (logp) < 0
      || (with_record ? pipe_high (recp) : 0) < 0 || (with_status ? pipe_high (stp) : 0) < 0)
    {
      r = errno;
      close_pair (inp), close_pair (logp), close_pair (recp), close_pair (stp);
      return ab_error_setc (err, AB_EC_INTERNAL, r, "pipe for a worker");
    }
  if (!with_stdin && (devnull = open ("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
    {
      r = errno;
      close_pair (logp), close_pair (recp), close_pair (stp);
      return ab_error_setc (err, AB_EC_INTERNAL, r, "open /dev/null");
    }

  posix_spawn_file_actions_init (&fa);
  posix_spawn_file_actions_adddup2 (&fa, with_stdin ? inp[0] : devnull, 0);
  /* The worker's stdout is a log pipe, never our stdout: a stray line from
     it must not land in the protocol stream. */
  posix_spawn_file_actions_adddup2 (&fa, logp[1], 1);
  posix_spawn_file_actions_adddup2 (&fa, logp[1], 2);
  if (with_status)
    posix_spawn_file_actions_adddup2 (&fa, stp[1], 3);
  if (with_record)
    posix_spawn_file_actions_adddup2 (&fa, recp[1], rec_fd);
  /* Everything else is O_CLOEXEC already; this also covers fds a library
     may have opened without it. */
  posix_spawn_file_actions_addclosefrom_np (&fa, with_record ? rec_fd + 1 : with_status ? 4 : 3);
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
  ab_closep (&stp[1]);
  if (r != 0)
    {
      close_pair (inp), close_pair (logp), close_pair (recp), close_pair (stp);
      return ab_error_setc (err, AB_EC_INTERNAL, r, "spawn the worker `%s`", s->o->exe);
    }
  /* Our own unreaped child: its pid cannot have been reused yet. */
  w->pidfd = (int)syscall (SYS_pidfd_open, w->pid, 0);
  if (w->pidfd < 0)
    {
      r = errno;
      kill (w->pid, SIGKILL);
      waitpid (w->pid, NULL, 0);
      close_pair (inp), close_pair (logp), close_pair (recp), close_pair (stp);
      return ab_error_setc (err, AB_EC_INTERNAL, r, "pidfd_open of a worker");
    }
  w->in_w = inp[1];
  w->log_r = logp[0];
  w->rec_r = recp[0];
  w->status_r = stp[0];
  if (w->in_w >= 0)
    ab_set_nonblock (w->in_w, true);
  ab_set_nonblock (w->log_r, true);
  if (w->rec_r >= 0)
    ab_set_nonblock (w->rec_r, true);
  if (w->status_r >= 0)
    ab_set_nonblock (w->status_r, true);
  return 0;
}

/* Forward complete lines of a worker's output to our stderr, one write per
   line with a tag (concurrent workers' lines never mix); remember the last
   error line for the response. */

static void
log_line (const char *tag, struct ab_mcp_logbuf *lb, const char *line, size_t n)
{
  _cleanup_free_ char *out = xasprintf ("agentbox mcp: [%s] %.*s\n", tag, (int)n, line);

  if (n > strlen ("agentbox: ") && memcmp (line, "agentbox: ", 10) == 0)
    snprintf (lb->last_error, sizeof lb->last_error, "%.*s", (int)(n - 10), line + 10);
  ab_write_all (2, out, strlen (out));
}

static void
log_feed (const char *tag, struct ab_mcp_logbuf *lb, const char *data, size_t n)
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
drain (int fd, const char *tag, struct ab_mcp_logbuf *lb, char **rec, size_t *rec_len, uint64_t rec_max,
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

/* Read the status pipe: at most sizeof out->status bytes are kept, the
   rest is read and dropped (a writer must never block on it).  False at
   EOF or error. */
static bool
status_drain (int fd, struct ab_mcp_outcome *out)
{
  char buf[4096];

  for (;;)
    {
      ssize_t n = read (fd, buf, sizeof buf);
      size_t take;
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return n < 0 && errno == EAGAIN;
      take = sizeof out->status - out->status_len;
      if (take > (size_t)n)
        take = (size_t)n;
      memcpy (out->status + out->status_len, buf, take);
      out->status_len += take;
    }
}

/* How long a session's shell may keep its status pipe once its worker is
   gone: a call's shell is dead by then (its worker killed what it left), a
   background one closes it once it has read the session's state, which
   takes milliseconds.  Only a state file the sandbox rewrote to run
   something else could make it wait that long; the session then goes on. */
#define STATUS_WAIT_MS 10000

void
ab_mcp_status_wait (struct ab_mcp_worker *w, struct ab_mcp_outcome *out)
{
  uint64_t end = ab_now_monotonic_ns () + STATUS_WAIT_MS * 1000000ull;

  while (w->status_r >= 0)
    {
      struct pollfd p = { .fd = w->status_r, .events = POLLIN };
      uint64_t now = ab_now_monotonic_ns ();
      int r;
      if (now >= end)
        {
          ab_warn ("mcp: a shell kept its status pipe open; not waiting for it");
          break;
        }
      r = poll (&p, 1, (int)((end - now) / 1000000u) + 1);
      if (r < 0 && errno != EINTR)
        break;
      if (r > 0 && !status_drain (w->status_r, out))
        break;
    }
  ab_closep (&w->status_r);
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

/* One turn of the job's clock: a cancellation seen (and, past its grace,
   enforced with SIGKILL), progress sent; returns how long poll may wait
   (ms, -1: for ever). */
static int
job_tick (struct ab_mcp_server *s, struct ab_mcp_job *j, struct ab_mcp_worker *w, const char *tag, uint64_t t0,
          uint64_t *last_progress, uint64_t *canceled_at)
{
  bool canceled = false, progress = false;
  uint64_t now = ab_now_monotonic_ns ();
  int timeout = -1;

  if (j)
    {
      pthread_mutex_lock (&s->lock);
      canceled = j->canceled;
      progress = j->progress_json && !j->canceled;
      pthread_mutex_unlock (&s->lock);
    }
  if (canceled && *canceled_at == 0)
    *canceled_at = now;
  if (*canceled_at && now - *canceled_at > CANCEL_GRACE_NS)
    {
      ab_warn ("mcp: [%s] the worker ignored the cancellation; killing it", tag);
      syscall (SYS_pidfd_send_signal, w->pidfd, SIGKILL, NULL, 0);
      *canceled_at = now;
    }
  if (progress)
    {
      uint64_t ms = (now - t0) / 1000000u;
      if (ms >= *last_progress + PROGRESS_INTERVAL_MS)
        {
          /* strictly increasing: elapsed milliseconds, sent at most once a millisecond */
          send_progress (s, j, ms);
          *last_progress = ms;
        }
      timeout = (int)(*last_progress + PROGRESS_INTERVAL_MS - ms);
    }
  if (*canceled_at)
    timeout = timeout < 0 || timeout > 1000 ? 1000 : timeout;
  else if (j && timeout < 0)
    timeout = 1000; /* notice a cancellation that raced with the spawn */
  return timeout;
}

/* Run a spawned worker to its end: feed stdin, forward logs, collect the
   record, send progress, honour cancellation.  j may be NULL (helpers). */
void
ab_mcp_supervise (struct ab_mcp_server *s, struct ab_mcp_job *j, struct ab_mcp_worker *w, const char *tag,
                  struct ab_mcp_outcome *out)
{
  uint64_t t0 = ab_now_monotonic_ns (), last_progress = 0, canceled_at = 0;
  size_t in_off = 0;
  bool exited = false;

  memset (out, 0, sizeof *out);
  if (j && j->stdin_data == NULL)
    ab_closep (&w->in_w);
  while (!exited)
    {
      struct pollfd p[5];
      int n = 0, ipid, ilog = -1, irec = -1, iin = -1, ist = -1, timeout;

      timeout = job_tick (s, j, w, tag, t0, &last_progress, &canceled_at);

      ipid = n;
      p[n++] = (struct pollfd){ .fd = w->pidfd, .events = POLLIN };
      if (w->log_r >= 0)
        ilog = n, p[n++] = (struct pollfd){ .fd = w->log_r, .events = POLLIN };
      if (w->rec_r >= 0)
        irec = n, p[n++] = (struct pollfd){ .fd = w->rec_r, .events = POLLIN };
      if (w->in_w >= 0)
        iin = n, p[n++] = (struct pollfd){ .fd = w->in_w, .events = POLLOUT };
      if (w->status_r >= 0)
        ist = n, p[n++] = (struct pollfd){ .fd = w->status_r, .events = POLLIN };
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
      if (ist >= 0 && p[ist].revents && !status_drain (w->status_r, out))
        ab_closep (&w->status_r);
      if (p[ipid].revents & POLLIN)
        exited = true;
    }
  /* What the worker wrote before it exited is in the pipes; a descendant
     that kept them open (a detached container) must not keep us here. */
  if (w->log_r >= 0)
    drain (w->log_r, tag, &out->log, NULL, NULL, 0, NULL);
  if (w->rec_r >= 0)
    drain (w->rec_r, tag, NULL, &out->rec, &out->rec_len, j ? j->max_record : 0, &out->overflow);
  /* The status pipe stays open: a background shell may still be writing
     it (the caller waits for its end, runtime/mcp-shell.c). */
  if (w->status_r >= 0)
    status_drain (w->status_r, out);
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

int
ab_mcp_exit_status (const siginfo_t *info)
{
  return info->si_code == CLD_EXITED ? info->si_status : 128 + info->si_status;
}

/* Spawn and wait for a helper (delete --force); returns its exit status. */
int
ab_mcp_run_helper (struct ab_mcp_server *s, const char *cmd, const char *id, const char *extra,
                   struct ab_mcp_outcome *out)
{
  struct ab_strv args = { 0 };
  struct ab_mcp_worker w;
  ab_error_t err = { 0 };
  int status = -1;

  ab_strv_push (&args, "--root");
  ab_strv_push (&args, s->o->state_root);
  ab_strv_push (&args, cmd);
  if (extra)
    ab_strv_push (&args, extra);
  ab_strv_push (&args, id);
  if (ab_mcp_spawn (s, args.v, false, false, false, &w, &err) < 0)
    ab_warn ("mcp: %s", err.msg);
  else
    {
      ab_mcp_supervise (s, NULL, &w, id, out);
      status = ab_mcp_exit_status (&out->info);
    }
  ab_strv_free (&args);
  return status;
}

void
ab_mcp_delete_container (struct ab_mcp_server *s, const char *id)
{
  struct ab_mcp_outcome out;

  ab_mcp_run_helper (s, "delete", id, "--force", &out);
  free (out.rec);
}
