#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "runtime/caps.h"
#include "runtime/fallback.h"
#include "runtime/process.h"

/* ---- can we have a user namespace? ------------------------------------------ */

/* A sysctl's value, or -1 when it is absent (the kernel has no such knob). */
static long
sysctl_value (const char *path)
{
  char buf[32];
  ssize_t n;
  int fd = open (path, O_RDONLY | O_CLOEXEC);

  if (fd < 0)
    return -1;
  n = read (fd, buf, sizeof buf - 1);
  close (fd);
  if (n <= 0)
    return -1;
  buf[n] = '\0';
  return strtol (buf, NULL, 10);
}

int
ab_userns_probe (char *why, size_t n)
{
  int status, e;
  pid_t pid;

  why[0] = '\0';
  /* A user namespace and a mount namespace in it, as the sandbox needs:
     AppArmor's restrict_unprivileged_userns lets the first succeed and
     refuses the capability the second checks in it. */
  pid = fork ();
  if (pid == 0)
    _exit (unshare (CLONE_NEWUSER | CLONE_NEWNS) == 0 ? 0 : (errno & 0x7f) + 1);
  if (pid < 0)
    return snprintf (why, n, "fork: %s", strerror (errno)), -1;
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      return snprintf (why, n, "waitpid: %s", strerror (errno)), -1;
  if (WIFEXITED (status) && WEXITSTATUS (status) == 0)
    return 0;
  e = WIFEXITED (status) ? WEXITSTATUS (status) - 1 : EPERM;
  /* The knobs that refuse it, most specific first. */
  if (sysctl_value ("/proc/sys/user/max_user_namespaces") == 0)
    snprintf (why, n,
              "user.max_user_namespaces=0 (unshare(CLONE_NEWUSER): %s): raise it (sysctl "
              "user.max_user_namespaces=15000, on the host or by the outer container's root)",
              strerror (e));
  else if (e == ENOSPC)
    snprintf (why, n, "the user namespace limit user.max_user_namespaces is reached (unshare: %s): raise it",
              strerror (e));
  else if (sysctl_value ("/proc/sys/kernel/unprivileged_userns_clone") == 0)
    snprintf (why, n,
              "kernel.unprivileged_userns_clone=0 (unshare(CLONE_NEWUSER): %s): set it to 1 on the host, or run "
              "agentbox as root",
              strerror (e));
  else if (sysctl_value ("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == 1)
    snprintf (
        why, n,
        "AppArmor's restrict_unprivileged_userns (kernel.apparmor_restrict_unprivileged_userns=1) denies "
        "capabilities in a new user namespace (unshare: %s): set it to 0, or give agentbox an AppArmor profile "
        "that allows `userns,`",
        strerror (e));
  else if (ab_seccomp_filtered () && (e == EPERM || e == ENOSYS || e == EACCES))
    snprintf (why, n,
              "a seccomp filter on this process refuses unshare(CLONE_NEWUSER) (%s; Seccomp: 2 in "
              "/proc/self/status, "
              "as a container runtime's default profile does): run the outer container with a profile that "
              "allows clone3, unshare, setns and mount (podman: --security-opt seccomp=unconfined; "
              "docs/rootless.md)",
              strerror (e));
  else if (e == EINVAL)
    snprintf (why, n, "this kernel has no user namespaces (unshare(CLONE_NEWUSER): %s)", strerror (e));
  else
    snprintf (why, n, "unshare(CLONE_NEWUSER|CLONE_NEWNS): %s", strerror (e));
  return -1;
}

/* ---- the confined program ---------------------------------------------------- */

/* No capability survives into the program: none in the permitted,
   effective, inheritable and ambient sets, the bounding set emptied where
   we may (CAP_SETPCAP).  With no_new_privs set after this, an execve by
   uid 0 cannot raise them again (the kernel clamps the new permitted set
   to the old one). */
static int
drop_capabilities (ab_error_t *err)
{
  const struct ab_capabilities none = { 0 };
  cap_flag_value_t setpcap = CAP_CLEAR;
  cap_t cur = cap_get_proc ();

  if (cur != NULL)
    {
      cap_get_flag (cur, CAP_SETPCAP, CAP_EFFECTIVE, &setpcap);
      cap_free (cur);
    }
  if (setpcap == CAP_SET && ab_caps_drop_bounding (&none, err) < 0)
    return -1;
  prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  return ab_caps_apply (&none, err);
}

static int
nproc_limit (const struct ab_fallback *f, ab_error_t *err)
{
  struct rlimit rl = { .rlim_cur = f->nproc, .rlim_max = f->nproc };

  for (size_t i = 0; i < f->process->n_rlimits; i++)
    if (f->process->rlimits[i].resource == RLIMIT_NPROC)
      return 0;
  if (f->nproc && setrlimit (RLIMIT_NPROC, &rl) < 0)
    return ab_error_setc (err, AB_EC_RESOURCE, errno, "setrlimit RLIMIT_NPROC %llu",
                          (unsigned long long)f->nproc);
  return 0;
}

/* The child, between fork and execve, in the order of the namespaced
   sandbox's last steps: session, fds, cwd, rlimits, landlock's ruleset
   (its paths opened while nothing is restricted yet), capabilities,
   no_new_privs, landlock, signals (default dispositions, none blocked),
   seccomp last. */
static int
child_setup (const struct ab_fallback *f, int report, ab_error_t *err)
{
  int ruleset;

  ab_set_step ("fallback");
  /* A session of its own: no controlling terminal (TIOCSTI cannot push
     input into the caller's), and one group to kill. */
  if (setsid () < 0)
    return ab_error_set (err, errno, "setsid");
  for (int i = 0; i < 3; i++)
    if (f->stdio[i] >= 0 && f->stdio[i] != i && dup2 (f->stdio[i], i) < 0)
      return ab_error_set (err, errno, "stdio: dup2 fd %d", f->stdio[i]);
  /* Nothing of ours but the report pipe (close-on-exec) reaches the program. */
  if (report > 3)
    syscall (SYS_close_range, 3u, (unsigned)report - 1, 0);
  syscall (SYS_close_range, (unsigned)report + 1, ~0u, 0);
  if (chdir (f->cwd) < 0)
    return ab_error_set (err, errno, "chdir `%s`", f->cwd);
  if (ab_rlimits_apply (f->process, err) < 0 || nproc_limit (f, err) < 0)
    return -1;
  ruleset = ab_landlock_build (f->landlock, f->landlock->abi, -1, 3, err);
  if (ruleset < 0)
    return -1;
  ab_set_step ("capabilities");
  if (drop_capabilities (err) < 0)
    return -1;
  ab_set_step ("no_new_privs");
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return ab_error_set (err, errno, "prctl PR_SET_NO_NEW_PRIVS");
  if (ab_landlock_restrict (ruleset, err) < 0)
    return -1;
  /* Default dispositions and nothing blocked, as in the namespaced
     sandbox: not the supervisor's blocked mask (its signalfd's) nor its
     ignored SIGPIPE. */
  ab_set_step ("signals");
  ab_signals_reset ();
  if (f->seccomp)
    {
      ab_set_step ("seccomp");
      if (ab_seccomp_install (f->seccomp, err) < 0)
        return -1;
    }
  ab_set_step ("exec");
  ab_execvpe_container (f->argv, f->envp);
  return ab_error_setc (err, AB_EC_EXEC, errno, "exec `%s`", f->argv[0]);
}

pid_t
ab_fallback_spawn (const struct ab_fallback *f, int *pidfd, ab_error_t *err)
{
  struct clone_args args = { .flags = CLONE_PIDFD, .exit_signal = SIGCHLD };
  ab_error_t child_err;
  int p[2];
  ssize_t n;
  pid_t pid;

  if (pipe2 (p, O_CLOEXEC) < 0)
    return ab_error_set (err, errno, "pipe");
  *pidfd = -1;
  args.pidfd = (uint64_t)(uintptr_t)pidfd;
  ab_signals_snapshot (); /* what the child inherits: see process.c */
  pid = (pid_t)syscall (SYS_clone3, &args, sizeof args);
  if (pid < 0 && (errno == ENOSYS || errno == EPERM))
    {
      /* clone3 refused (a container runtime's seccomp profile answers
         ENOSYS): fork, then a pidfd of the child. */
      pid = fork ();
      if (pid > 0)
        *pidfd = (int)syscall (SYS_pidfd_open, pid, 0);
    }
  if (pid == 0)
    {
      ab_error_t e = { 0 };
      close (p[0]);
      /* With us, it dies (the kill of the session and the tree is ours). */
      prctl (PR_SET_PDEATHSIG, SIGKILL);
      child_setup (f, p[1], &e);
      if (write (p[1], &e, sizeof e) < 0)
        _exit (125);
      _exit (e.cls == AB_EC_EXEC ? (e.errnum == ENOENT || e.errnum == ENOTDIR ? 127 : 126) : 125);
    }
  close (p[1]);
  if (pid < 0)
    {
      close (p[0]);
      return ab_error_set (err, errno, "clone the fallback's process");
    }
  /* EOF: the program runs (the pipe closed at execve); else the child's
     error, whole. */
  do
    n = read (p[0], &child_err, sizeof child_err);
  while (n < 0 && errno == EINTR);
  close (p[0]);
  if (n == (ssize_t)sizeof child_err)
    {
      child_err.msg[sizeof child_err.msg - 1] = '\0';
      *err = child_err;
      waitpid (pid, NULL, 0);
      if (*pidfd >= 0)
        close (*pidfd);
      *pidfd = -1;
      return -1;
    }
  if (*pidfd < 0)
    {
      ab_fallback_kill_all (pid, -1);
      return ab_error_set (err, errno, "pidfd_open the fallback's process");
    }
  return pid;
}

/* ---- killing everything it started ------------------------------------------------ */

struct proc
{
  pid_t pid;
  struct ab_proc_stat st;
};

/* Every process /proc shows, with its parent. */
static size_t
list_procs (struct proc **out)
{
  DIR *d = opendir ("/proc");
  struct dirent *e;
  size_t n = 0, cap = 0;

  *out = NULL;
  if (d == NULL)
    return 0;
  while ((e = readdir (d)) != NULL)
    {
      struct proc p = { .pid = (pid_t)atoi (e->d_name) };

      if (e->d_name[0] < '1' || e->d_name[0] > '9' || !ab_proc_stat_read (p.pid, &p.st))
        continue;
      if (n == cap)
        *out = xreallocarray (*out, cap = cap ? cap * 2 : 256, sizeof **out);
      (*out)[n++] = p;
    }
  closedir (d);
  return n;
}

/* Mark the descendants of `root` in v (in[] true); returns how many. */
static size_t
mark_descendants (const struct proc *v, size_t n, pid_t root, bool *in)
{
  size_t count = 0;
  bool grew = true;

  while (grew)
    {
      grew = false;
      for (size_t i = 0; i < n; i++)
        {
          if (in[i])
            continue;
          if (v[i].st.ppid == root)
            in[i] = true;
          else
            for (size_t k = 0; k < n; k++)
              if (in[k] && v[k].pid == v[i].st.ppid)
                {
                  in[i] = true;
                  break;
                }
          if (in[i])
            {
              grew = true;
              count++;
            }
        }
    }
  return count;
}

/* Reap our exited children but `keep` (the supervisor reaps that one
   through its pidfd). */
static void
reap_but (pid_t keep)
{
  for (;;)
    {
      siginfo_t info;
      memset (&info, 0, sizeof info);
      if (waitid (P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) < 0 || info.si_pid == 0)
        return;
      if (info.si_pid == keep)
        {
          /* reap the others around it */
          bool other = false;
          struct proc *v = NULL;
          size_t n = list_procs (&v);
          for (size_t i = 0; i < n; i++)
            if (v[i].st.ppid == getpid () && v[i].st.state == 'Z' && v[i].pid != keep)
              other = waitpid (v[i].pid, NULL, WNOHANG) > 0 || other;
          free (v);
          if (!other)
            return;
          continue;
        }
      waitpid (info.si_pid, NULL, WNOHANG);
    }
}

/* sig to the process /proc showed as `p`: its pidfd is taken first, and
   the signal sent only if that pid still started when p did (not reused
   since; its parent may have changed, an orphan's does).  Whether it was
   sent. */
static bool
signal_pinned (const struct proc *p, int sig)
{
  struct ab_proc_stat now;
  bool sent = false;
  int fd = (int)syscall (SYS_pidfd_open, p->pid, 0);

  if (fd < 0)
    return false;
  if (ab_proc_stat_read (p->pid, &now) && now.start == p->st.start)
    sent = syscall (SYS_pidfd_send_signal, fd, sig, NULL, 0) == 0;
  close (fd);
  return sent;
}

size_t
ab_signal_descendants (pid_t root, int sig)
{
  pid_t *sent = NULL;
  size_t n_sent = 0, live = 0;

  /* Until a walk finds no one new: a process forked while the last walk
     ran (it was not in /proc yet) is signalled by the next.  A fork bomb
     can outrun that; the rounds are bounded, and what is left is killed
     with the whole unit. */
  for (int round = 0; round < 64; round++)
    {
      struct proc *v = NULL;
      size_t n = list_procs (&v), fresh = 0;
      bool *in = xcalloc (n ? n : 1, sizeof *in);

      mark_descendants (v, n, root, in);
      live = 0;
      for (size_t i = 0; i < n; i++)
        {
          bool known = false;
          if (!in[i] || v[i].st.state == 'Z')
            continue;
          live++;
          for (size_t k = 0; k < n_sent && !known; k++)
            known = sent[k] == v[i].pid;
          if (known || sig == 0 || !signal_pinned (&v[i], sig))
            continue;
          sent = xreallocarray (sent, n_sent + 1, sizeof *sent);
          sent[n_sent++] = v[i].pid;
          fresh++;
        }
      free (in);
      free (v);
      if (fresh == 0)
        break;
    }
  free (sent);
  return live;
}

void
ab_fallback_kill_all (pid_t sid, pid_t keep)
{
  uint64_t deadline = ab_now_monotonic_ns () + 10ull * 1000000000ull;

  /* The session first, in one call: most of what the program started. */
  if (sid > 0)
    kill (-sid, SIGKILL);
  while (ab_now_monotonic_ns () < deadline)
    {
      size_t live = ab_signal_descendants (getpid (), SIGKILL);

      reap_but (keep);
      if (live == 0)
        return;
      /* Let the kernel finish the kills (and reparent what they orphan). */
      nanosleep (&(struct timespec){ .tv_nsec = 1000000 }, NULL);
    }
}
