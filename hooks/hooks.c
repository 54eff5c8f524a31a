#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "hooks/hooks.h"
#include "base/log.h"
#include "base/util.h"
#include "spec/tables.h"

/* Keep the tail of what the hook writes to stderr, for the error message. */
struct tail
{
  char buf[512];
  size_t len;
};

static void
tail_add (struct tail *t, const char *p, size_t n)
{
  if (n >= sizeof t->buf)
    {
      memcpy (t->buf, p + n - sizeof t->buf, sizeof t->buf);
      t->len = sizeof t->buf;
      return;
    }
  if (t->len + n > sizeof t->buf)
    {
      size_t drop = t->len + n - sizeof t->buf;
      memmove (t->buf, t->buf + drop, t->len - drop);
      t->len -= drop;
    }
  memcpy (t->buf + t->len, p, n);
  t->len += n;
}

static void
tail_last_line (struct tail *t, char *out, size_t len)
{
  size_t end = t->len, start;

  while (end > 0 && (t->buf[end - 1] == '\n' || t->buf[end - 1] == '\r'))
    end--;
  start = end;
  while (start > 0 && t->buf[start - 1] != '\n')
    start--;
  snprintf (out, len, "%.*s", (int)(end - start), t->buf + start);
}

/* Start a hook: stdin and stderr on the given pipe ends, its own process
   group (a timeout kills what it forked too), default signal dispositions
   and an empty mask whatever ours are, and SIGKILL when the runtime dies --
   a create or delete killed with -9 must not leave its hook running.
   Returns 0 or the errno of the failed fork or execve. */
static int
spawn_hook (const char *path, char *const *argv, char *const *envp, int in_fd, int err_fd, pid_t *out)
{
  pid_t parent = getpid (), pid;
  int ep[2], e = 0;

  if (pipe2 (ep, O_CLOEXEC) < 0)
    return errno;
  pid = fork ();
  if (pid < 0)
    {
      e = errno;
      close (ep[0]);
      close (ep[1]);
      return e;
    }
  if (pid == 0)
    {
      /* Only async-signal-safe calls: other threads may hold locks. */
      struct sigaction dfl = { .sa_handler = SIG_DFL };
      sigset_t none;

      if (prctl (PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid () != parent)
        _exit (127);
      for (int sig = 1; sig < NSIG; sig++)
        sigaction (sig, &dfl, NULL); /* EINVAL for KILL, STOP and glibc's own: fine */
      sigemptyset (&none);
      /* Above 2 first, so that dup2 cannot clobber one with the other. */
      in_fd = fcntl (in_fd, F_DUPFD_CLOEXEC, 3);
      err_fd = fcntl (err_fd, F_DUPFD_CLOEXEC, 3);
      if (in_fd >= 0 && err_fd >= 0 && setpgid (0, 0) == 0 && dup2 (in_fd, 0) == 0 && dup2 (err_fd, 2) == 2
          && sigprocmask (SIG_SETMASK, &none, NULL) == 0)
        execve (path, argv, envp);
      e = errno;
      if (write (ep[1], &e, sizeof e) < 0)
        _exit (126);
      _exit (127);
    }
  close (ep[1]);
  /* EOF: execve succeeded (the pipe is close-on-exec); else its errno. */
  while (read (ep[0], &e, sizeof e) < 0 && errno == EINTR)
    ;
  close (ep[0]);
  if (e != 0)
    {
      while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
        ;
      return e;
    }
  *out = pid;
  return 0;
}

/* The environment of a hook without "env" (config.md leaves it to the
   runtime), as runc gives it.  The hooks on the host (prestart,
   createRuntime, poststart, poststop) get the runtime's own, less what
   agentbox set for itself.  The hooks in the container's namespaces
   (createContainer, startContainer: the latter a program of the
   container's filesystem) get the container process's environment, which
   runc's init has taken on by then: the caller's environment (an agent's
   API keys) never enters the container that way.  The strings are not
   copied; free only the array. */
static char **
hook_env (int kind, const struct ab_spec *s)
{
  extern char **environ;
  char *const *from = environ;
  bool container = kind == AB_HOOK_CREATE_CONTAINER || kind == AB_HOOK_START_CONTAINER;
  size_t n = 0, k = 0;
  char **v;

  if (container)
    from = s->process ? s->process->env.v : NULL;
  while (from && from[n])
    n++;
  v = xcalloc (n + 1, sizeof *v);
  for (size_t i = 0; i < n; i++)
    if (container || !ab_str_has_prefix (from[i], AB_EXE_PATH_ENV "="))
      v[k++] = from[i];
  return v;
}

/* The pipes of a running hook: the state on its stdin, the tail of its
   stderr. */
struct hook_io
{
  int in;  /* write end of stdin, -1 once written or refused */
  int err; /* read end of stderr, -1 once closed */
  int pidfd;
  const char *state;
  size_t state_len, written;
  struct tail tail;
};

static void
hook_write_state (struct hook_io *io)
{
  ssize_t w = write (io->in, io->state + io->written, io->state_len - io->written);

  if (w > 0)
    io->written += (size_t)w;
  /* A hook that does not read its stdin is fine: stop at EPIPE. */
  if ((w < 0 && errno != EAGAIN) || io->written >= io->state_len)
    {
      close (io->in);
      io->in = -1;
    }
}

enum hook_end
{
  HOOK_EXITED,
  HOOK_TIMED_OUT,
  HOOK_CANCELED, /* the caller gave up (ab_cancel_fd) */
};

/* Feed stdin and collect stderr until the hook exits, the deadline or the
   caller's cancel. */
static enum hook_end
hook_wait (struct hook_io *io, uint64_t deadline)
{
  for (;;)
    {
      struct pollfd p[4];
      int n = 0, ip = -1, ic = -1;
      uint64_t now = ab_now_monotonic_ns ();
      if (now >= deadline)
        return HOOK_TIMED_OUT;
      p[n++] = (struct pollfd){ .fd = io->pidfd, .events = POLLIN };
      p[n++] = (struct pollfd){ .fd = io->err, .events = POLLIN };
      if (io->in >= 0)
        {
          ip = n;
          p[n++] = (struct pollfd){ .fd = io->in, .events = POLLOUT };
        }
      if (ab_cancel_fd () >= 0)
        {
          ic = n;
          p[n++] = (struct pollfd){ .fd = ab_cancel_fd (), .events = POLLIN };
        }
      if (poll (p, (nfds_t)n, (int)((deadline - now) / 1000000ull) + 1) < 0)
        {
          if (errno == EINTR)
            continue;
          return HOOK_EXITED;
        }
      if (ic >= 0 && (p[ic].revents & POLLIN))
        return HOOK_CANCELED;
      if (ip >= 0 && p[ip].revents)
        hook_write_state (io);
      if (p[1].revents)
        {
          char buf[4096];
          ssize_t rd = read (io->err, buf, sizeof buf);
          if (rd > 0)
            tail_add (&io->tail, buf, (size_t)rd);
          else if (rd == 0)
            {
              /* stderr closed: keep polling only the exit (poll skips fd -1) */
              close (io->err);
              io->err = -1;
            }
        }
      if (p[0].revents & POLLIN)
        return HOOK_EXITED;
    }
}

/* What is already in the stderr pipe; a background child of the hook may
   keep it open, so never block here. */
static void
hook_drain (struct hook_io *io)
{
  for (;;)
    {
      char buf[4096];
      ssize_t rd = io->err >= 0 ? read (io->err, buf, sizeof buf) : 0;
      if (rd <= 0)
        break;
      tail_add (&io->tail, buf, (size_t)rd);
    }
  if (io->err >= 0)
    close (io->err);
  io->err = -1;
}

/* How the hook ended, as the error of `what` with its last stderr line. */
static int
hook_verdict (const char *what, const struct ab_hook *h, const siginfo_t *info, struct tail *tail, ab_error_t *err)
{
  char last[256];

  if (info->si_code == CLD_EXITED && info->si_status == 0)
    return 0;
  tail_last_line (tail, last, sizeof last);
  if (info->si_code == CLD_EXITED)
    return ab_error_setc (err, AB_EC_HOOK, 0, "%s (%s): exited with status %d%s%s", what, h->path, info->si_status,
                          last[0] ? ": " : "", last);
  return ab_error_setc (err, AB_EC_HOOK, 0, "%s (%s): killed by signal %d%s%s", what, h->path, info->si_status,
                        last[0] ? ": " : "", last);
}

/* Our children now (every thread's: an orphan is handed to any thread of a
   subreaper), into *v; their number. */
static size_t
own_children (pid_t **v)
{
  DIR *d = opendir ("/proc/self/task");
  size_t n = 0, cap = 0;
  struct dirent *e;

  *v = NULL;
  while (d && (e = readdir (d)) != NULL)
    {
      _cleanup_free_ char *buf = NULL, *path = NULL;
      size_t len;
      char *p, *end;

      if (e->d_name[0] == '.')
        continue;
      path = xasprintf ("/proc/self/task/%s/children", e->d_name);
      if (ab_read_file_at (AT_FDCWD, path, 1 << 20, &buf, &len, NULL) < 0)
        continue;
      for (p = buf;; p = end)
        {
          long pid = strtol (p, &end, 10);
          if (end == p)
            break;
          if (n == cap)
            *v = xrealloc (*v, (cap = cap ? 2 * cap : 16) * sizeof **v);
          (*v)[n++] = (pid_t)pid;
        }
    }
  if (d)
    closedir (d);
  return n;
}

/* A hook that failed or timed out leaves nothing: the runtime is a
   subreaper while a hook runs, so whatever the hook started and left
   (a `setsid cmd &` is out of its process group, which the timeout kills)
   is handed to us when its parent dies; each child we did not have before
   the hook is killed and reaped, then what its death hands us in turn.
   Not for poststart hooks: the container's program runs by then, and the
   orphans of one without a pid namespace of its own are handed to the
   supervisor too.  (No two containers are made by one process at once
   with hooks: the MCP server's sandboxes have none.) */
static void
kill_hook_leftovers (const pid_t *before, size_t n_before)
{
  for (int round = 0; round < 64; round++)
    {
      _cleanup_free_ pid_t *now = NULL;
      size_t n = own_children (&now);
      bool killed = false;

      for (size_t i = 0; i < n; i++)
        {
          bool old = false;
          for (size_t j = 0; j < n_before && !old; j++)
            old = now[i] == before[j];
          if (old)
            continue;
          kill (now[i], SIGKILL);
          while (waitpid (now[i], NULL, 0) < 0 && errno == EINTR)
            ;
          killed = true;
        }
      if (!killed)
        return;
    }
}

static int
run_hook (const struct ab_spec *s, const struct ab_hook *h, int kind, size_t idx, const char *state, size_t state_len,
          ab_error_t *err)
{
  static char *const empty_env[] = { NULL };
  _cleanup_free_ char **inherited = h->env_set ? NULL : hook_env (kind, s);
  char *default_argv[] = { h->path, NULL };
  int in[2] = { -1, -1 }, errp[2] = { -1, -1 };
  int timeout_ms = (h->timeout_set ? h->timeout : AB_HOOK_DEFAULT_TIMEOUT) * 1000;
  struct hook_io io = { .state = state, .state_len = state_len };
  pid_t pid = -1;
  int r;
  siginfo_t info;
  char what[96];
  enum hook_end end;
  sigset_t pipe_set, saved_mask;

  snprintf (what, sizeof what, "hooks.%s[%zu]", ab_hook_kind_name (kind), idx);
  if (pipe2 (in, O_CLOEXEC) < 0 || pipe2 (errp, O_CLOEXEC) < 0)
    return ab_error_setc (err, AB_EC_HOOK, errno, "%s: pipe", what);
  r = spawn_hook (h->path, h->args.n ? h->args.v : default_argv,
                  inherited ? inherited : h->env.n ? h->env.v : empty_env, in[0], errp[1], &pid);
  close (in[0]);
  close (errp[1]);
  if (r != 0)
    {
      close (in[1]);
      close (errp[0]);
      return ab_error_setc (err, AB_EC_HOOK, r, "%s: run `%s`", what, h->path);
    }
  io.in = in[1];
  io.err = errp[0];
  io.pidfd = (int)syscall (SYS_pidfd_open, pid, 0);
  ab_set_nonblock (io.in, true);
  ab_set_nonblock (io.err, true);
  /* A hook that exits without reading its stdin makes our write fail with
     EPIPE, and the SIGPIPE that comes with it would kill the runtime halfway
     through create or delete: blocked while we write, discarded after. */
  sigemptyset (&pipe_set);
  sigaddset (&pipe_set, SIGPIPE);
  sigprocmask (SIG_BLOCK, &pipe_set, &saved_mask);
  end = hook_wait (&io, ab_now_monotonic_ns () + (uint64_t)timeout_ms * 1000000ull);
  if (io.in >= 0)
    close (io.in);
  if (!sigismember (&saved_mask, SIGPIPE))
    {
      static const struct timespec zero = { 0, 0 };
      while (sigtimedwait (&pipe_set, NULL, &zero) == SIGPIPE)
        ;
    }
  sigprocmask (SIG_SETMASK, &saved_mask, NULL);
  if (end != HOOK_EXITED)
    {
      kill (-pid, SIGKILL);
      kill (pid, SIGKILL);
    }
  memset (&info, 0, sizeof info);
  while (waitid (P_PID, (id_t)pid, &info, WEXITED) < 0 && errno == EINTR)
    ;
  hook_drain (&io);
  if (io.pidfd >= 0)
    close (io.pidfd);
  if (end != HOOK_EXITED)
    {
      /* the hook's children too */
      kill (-pid, SIGKILL);
      if (end == HOOK_CANCELED)
        return ab_error_setc (err, AB_EC_HOOK, ECANCELED, "%s (%s): canceled by the caller", what, h->path);
      return ab_error_setc (err, AB_EC_HOOK, 0, "%s (%s): timed out after %d s", what, h->path, timeout_ms / 1000);
    }
  return hook_verdict (what, h, &info, &io.tail, err);
}

static int
run_one (const struct ab_spec *s, const struct ab_hook *h, int kind, size_t idx, const char *state, size_t state_len,
         ab_error_t *err)
{
  _cleanup_free_ pid_t *before = NULL;
  size_t n_before;
  int reaper = 0, r;

  if (prctl (PR_GET_CHILD_SUBREAPER, &reaper) < 0)
    reaper = 1; /* unknown: leave it as it is */
  if (!reaper)
    prctl (PR_SET_CHILD_SUBREAPER, 1);
  n_before = own_children (&before);
  r = run_hook (s, h, kind, idx, state, state_len, err);
  if (r < 0 && kind != AB_HOOK_POSTSTART)
    kill_hook_leftovers (before, n_before);
  if (!reaper)
    prctl (PR_SET_CHILD_SUBREAPER, 0);
  return r;
}

int
ab_hooks_run (const struct ab_spec *s, int kind, const char *state_json, size_t state_len, ab_error_t *err)
{
  const struct ab_hook_list *l = &s->hooks[kind];
  size_t i;

  for (i = 0; i < l->n; i++)
    if (run_one (s, &l->v[i], kind, i, state_json, state_len, err) < 0)
      {
        /* runtime.md, step 13: a failing poststop hook is a warning, and
           "the remaining hooks and lifecycle continue as if the hook had
           succeeded". */
        if (kind != AB_HOOK_POSTSTOP)
          return -1;
        ab_warn ("%s", err->msg);
        ab_error_clear (err);
      }
  return 0;
}
