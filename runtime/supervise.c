#include "config.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "runtime/cgroup.h"
#include "runtime/log.h"
#include "runtime/supervise.h"
#include "runtime/util.h"

void
ab_supervise_opts_init (struct ab_supervise_opts *o)
{
  memset (o, 0, sizeof *o);
  o->passthrough = true;
}

const char *
ab_reason_name (int reason)
{
  switch (reason)
    {
    case AB_REASON_EXITED:
      return "exited";
    case AB_REASON_SIGNALED:
      return "signaled";
    case AB_REASON_TIMEOUT:
      return "timeout";
    case AB_REASON_OOM:
      return "oom_killed";
    default:
      return "setup_failed";
    }
}

void
ab_outcome_free (struct ab_outcome *o)
{
  free (o->out.data);
  free (o->err.data);
  ab_strv_free (&o->degraded);
  free (o->violations_json);
  free (o->id);
  memset (o, 0, sizeof *o);
}

static void
stream_add (struct ab_stream *s, const char *buf, size_t n, uint64_t max, int passthrough_fd, unsigned *limits)
{
  s->total += n;
  if (passthrough_fd >= 0)
    ab_write_all (passthrough_fd, buf, n);
  if (max == 0 || s->len < max)
    {
      size_t take = max == 0 ? n : (size_t) (max - s->len < n ? max - s->len : n);
      s->data = xrealloc (s->data, s->len + take + 1);
      memcpy (s->data + s->len, buf, take);
      s->len += take;
      s->data[s->len] = '\0';
      if (take < n)
        {
          s->truncated = true;
          *limits |= AB_LIMIT_OUTPUT;
        }
    }
  else
    {
      s->truncated = true;
      *limits |= AB_LIMIT_OUTPUT;
    }
}

/* Drain a pipe without blocking; returns false at EOF. */
static bool
drain (int fd, struct ab_stream *s, uint64_t max, int passthrough_fd, unsigned *limits)
{
  char buf[65536];

  for (;;)
    {
      ssize_t n = read (fd, buf, sizeof buf);
      if (n > 0)
        {
          stream_add (s, buf, (size_t) n, max, passthrough_fd, limits);
          continue;
        }
      if (n == 0)
        return false;
      if (errno == EINTR)
        continue;
      return errno == EAGAIN;
    }
}

static void
kill_all (struct ab_container *c)
{
  ab_error_t ignored = { 0 };

  /* The whole container: a setsid'd, double-forked grandchild is still in
     the cgroup even though it left every process group. */
  if (c->cg)
    ab_cgroup_kill (c->cg, SIGKILL, &ignored);
  syscall (SYS_pidfd_send_signal, c->pidfd, SIGKILL, NULL, 0);
}

static void
reap_orphans (pid_t container_pid)
{
  /* As subreaper we inherit the container's orphans when it has no pid
     namespace of its own; never reap the container process here. */
  for (;;)
    {
      siginfo_t info;
      memset (&info, 0, sizeof info);
      if (waitid (P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) < 0 || info.si_pid == 0)
        return;
      if (info.si_pid == container_pid)
        return;
      waitpid (info.si_pid, NULL, WNOHANG);
    }
}

int
ab_supervise_run (const struct ab_create_opts *co_in, const struct ab_supervise_opts *so, struct ab_outcome *out,
                  ab_error_t *err)
{
  struct ab_create_opts co = *co_in;
  struct ab_container *c = NULL;
  int outp[2] = { -1, -1 }, errp[2] = { -1, -1 }, inp[2] = { -1, -1 };
  int devnull = -1, sfd = -1;
  sigset_t mask, oldmask;
  uint64_t t0 = ab_now_monotonic_ns (), deadline = 0;
  size_t stdin_off = 0;
  bool exited = false, out_open = false, err_open = false;
  siginfo_t info;
  int r = -1;

  memset (out, 0, sizeof *out);
  out->id = xstrdup (co.id);
  if (so->capture)
    {
      if (pipe2 (outp, O_CLOEXEC) < 0 || pipe2 (errp, O_CLOEXEC) < 0)
        {
          ab_error_set (err, errno, "pipe");
          goto setup_failed;
        }
      co.stdio[1] = outp[1];
      co.stdio[2] = errp[1];
      out_open = err_open = true;
      if (so->stdin_data)
        {
          if (pipe2 (inp, O_CLOEXEC) < 0)
            {
              ab_error_set (err, errno, "pipe");
              goto setup_failed;
            }
          co.stdio[0] = inp[0];
        }

    }
  prctl (PR_SET_CHILD_SUBREAPER, 1);

  if (ab_container_create (&co, &c, err) < 0)
    goto setup_failed;
  if (outp[1] >= 0)
    close (outp[1]), outp[1] = -1;
  if (errp[1] >= 0)
    close (errp[1]), errp[1] = -1;
  if (inp[0] >= 0)
    close (inp[0]), inp[0] = -1;
  if (devnull >= 0)
    close (devnull), devnull = -1;

  /* Signals for the container, taken synchronously from now on (the
     container process was cloned with our original mask). */
  sigemptyset (&mask);
  sigaddset (&mask, SIGINT);
  sigaddset (&mask, SIGTERM);
  sigaddset (&mask, SIGHUP);
  sigaddset (&mask, SIGQUIT);
  sigaddset (&mask, SIGUSR1);
  sigaddset (&mask, SIGCHLD);
  sigprocmask (SIG_BLOCK, &mask, &oldmask);
  sfd = signalfd (-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);

  ab_trace ("created");
  if (ab_container_start_local (c, err) < 0)
    {
      if (err->cls == AB_EC_EXEC)
        {
          /* The program could not be executed: a result the caller can act
             on (like a shell's 127), not a broken sandbox. */
          out->reason = AB_REASON_EXITED;
          out->exited = true;
          out->exit_code = out->exit_status
              = (err->errnum == ENOENT || err->errnum == ENOTDIR) ? 127 : 126;
          {
            char *line = xasprintf ("agentbox: %s\n", err->msg);
            stream_add (&out->err, line, strlen (line), so->max_output, so->capture && so->passthrough ? 2 : -1,
                        &out->limits_hit);
            if (!so->capture)
              ab_write_all (2, line, strlen (line));
            free (line);
          }
          ab_container_wait (c, &info, NULL);
          ab_error_clear (err);
          goto finish;
        }
      goto setup_failed_container;
    }
  ab_trace ("started (exec observed)");
  if (so->timeout_ms)
    deadline = ab_now_monotonic_ns () + so->timeout_ms * 1000000ull;
  if (outp[0] >= 0)
    ab_set_nonblock (outp[0], true), ab_set_nonblock (errp[0], true);
  if (inp[1] >= 0)
    ab_set_nonblock (inp[1], true);

  while (!exited || out_open || err_open)
    {
      struct pollfd p[5];
      int n = 0, ipid = -1, isig = -1, iout = -1, ierr = -1, iin = -1, timeout = -1;
      if (!exited)
        {
          ipid = n;
          p[n++] = (struct pollfd){ .fd = c->pidfd, .events = POLLIN };
        }
      if (sfd >= 0)
        {
          isig = n;
          p[n++] = (struct pollfd){ .fd = sfd, .events = POLLIN };
        }
      if (out_open)
        {
          iout = n;
          p[n++] = (struct pollfd){ .fd = outp[0], .events = POLLIN };
        }
      if (err_open)
        {
          ierr = n;
          p[n++] = (struct pollfd){ .fd = errp[0], .events = POLLIN };
        }
      if (inp[1] >= 0)
        {
          iin = n;
          p[n++] = (struct pollfd){ .fd = inp[1], .events = POLLOUT };
        }
      if (deadline && !exited)
        {
          uint64_t now = ab_now_monotonic_ns ();
          if (now >= deadline)
            {
              out->limits_hit |= AB_LIMIT_TIMEOUT;
              out->reason = AB_REASON_TIMEOUT;
              kill_all (c);
              deadline = 0;
              continue;
            }
          timeout = (int) ((deadline - now) / 1000000ull) + 1;
        }
      if (poll (p, (nfds_t) n, timeout) < 0)
        {
          if (errno == EINTR)
            continue;
          ab_error_set (err, errno, "poll");
          kill_all (c);
          break;
        }
      if (isig >= 0 && (p[isig].revents & POLLIN))
        {
          struct signalfd_siginfo si;
          while (read (sfd, &si, sizeof si) == (ssize_t) sizeof si)
            {
              if (si.ssi_signo == SIGCHLD)
                reap_orphans (c->pid);
              else if (si.ssi_signo == SIGUSR1)
                {
                  out->canceled = true;
                  kill_all (c);
                }
              else if (!exited)
                syscall (SYS_pidfd_send_signal, c->pidfd, (int) si.ssi_signo, NULL, 0);
            }
        }
      if (iin >= 0 && p[iin].revents)
        {
          ssize_t w = write (inp[1], so->stdin_data + stdin_off, so->stdin_len - stdin_off);
          if (w > 0)
            stdin_off += (size_t) w;
          if ((w < 0 && errno != EAGAIN) || stdin_off >= so->stdin_len)
            close (inp[1]), inp[1] = -1;
        }
      if (iout >= 0 && p[iout].revents)
        out_open = drain (outp[0], &out->out, so->max_output, so->passthrough ? 1 : -1, &out->limits_hit);
      if (ierr >= 0 && p[ierr].revents)
        err_open = drain (errp[0], &out->err, so->max_output, so->passthrough ? 2 : -1, &out->limits_hit);
      if (ipid >= 0 && (p[ipid].revents & POLLIN))
        {
          if (ab_container_wait (c, &info, err) < 0)
            break;
          exited = true;
          /* Whatever is left in the container (without a pid namespace, its
             orphans) goes with its init; they would also hold our pipes. */
          kill_all (c);
        }
    }
  if (!exited)
    goto setup_failed_container;

  out->exited = info.si_code == CLD_EXITED;
  if (out->exited)
    out->exit_code = info.si_status;
  else
    {
      out->signal = info.si_status;
      out->core_dumped = info.si_code == CLD_DUMPED;
      if (out->reason != AB_REASON_TIMEOUT)
        out->reason = AB_REASON_SIGNALED;
    }
  out->exit_status = ab_exit_status_from_siginfo (&info);
  if (out->exited && out->reason != AB_REASON_TIMEOUT)
    out->reason = AB_REASON_EXITED;
  if (!out->exited && out->signal == SIGXCPU)
    out->limits_hit |= AB_LIMIT_CPU;

finish:
  ab_trace ("exited");
  out->duration_ns = ab_now_monotonic_ns () - t0;
  if (c->cg)
    {
      struct ab_cgroup_stats st;
      ab_error_t e = { 0 };
      if (ab_cgroup_stats (c->cg, &st, &e) == 0)
        {
          out->stats_known = true;
          out->memory_peak = st.memory_peak;
          out->cpu_user_usec = st.cpu_user_usec;
          out->cpu_system_usec = st.cpu_system_usec;
          if (st.oom_killed)
            {
              out->limits_hit |= AB_LIMIT_MEMORY;
              /* Killed by the OOM killer: report it as such, not as a bare SIGKILL. */
              if (!out->exited && out->signal == SIGKILL && out->reason != AB_REASON_TIMEOUT)
                out->reason = AB_REASON_OOM;
            }
          if (st.pids_max_hit)
            out->limits_hit |= AB_LIMIT_PIDS;
        }
    }
  if (!so->keep)
    {
      ab_error_t e = { 0 };
      if (ab_container_destroy (c, &e) < 0)
        ab_warn ("container `%s`: %s", co.id, e.msg);
    }
  ab_trace ("destroyed");
  r = 0;
  goto cleanup;

setup_failed_container:
  {
    ab_error_t e = { 0 };
    kill_all (c);
    ab_container_wait (c, &info, NULL);
    ab_container_destroy (c, &e);
  }
setup_failed:
  out->reason = AB_REASON_SETUP_FAILED;
  out->exit_status = 125;
  out->setup_error = *err;
  out->duration_ns = ab_now_monotonic_ns () - t0;
  r = -1;

cleanup:
  if (sfd >= 0)
    {
      close (sfd);
      sigprocmask (SIG_SETMASK, &oldmask, NULL);
    }
  ab_container_free (c);
  for (int i = 0; i < 2; i++)
    {
      if (outp[i] >= 0)
        close (outp[i]);
      if (errp[i] >= 0)
        close (errp[i]);
      if (inp[i] >= 0)
        close (inp[i]);
    }
  if (devnull >= 0)
    close (devnull);
  return r;
}
