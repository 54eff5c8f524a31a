#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <linux/close_range.h>
#include <linux/keyctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "runtime/caps.h"
#include "runtime/landlock.h"
#include "runtime/child.h"
#include "runtime/lsm.h"
#include "runtime/process.h"
#include "runtime/sync.h"
#include "base/resolve.h"
#include "base/util.h"

static int
rlimit_too_high (size_t i, const struct ab_rlimit *r, rlim_t host_hard, ab_error_t *err)
{
  return ab_error_setc (err, AB_EC_RESOURCE, EPERM,
                        "process.rlimits[%zu]: %s hard limit %llu exceeds the host's hard limit %llu "
                        "(raising it needs CAP_SYS_RESOURCE on the host)",
                        i, r->type, (unsigned long long) r->hard, (unsigned long long) host_hard);
}

static bool
have_cap_sys_resource (void)
{
  cap_flag_value_t v = CAP_CLEAR;
  cap_t c = cap_get_proc ();

  if (c != NULL)
    {
      cap_get_flag (c, CAP_SYS_RESOURCE, CAP_EFFECTIVE, &v);
      cap_free (c);
    }
  return v == CAP_SET;
}

int
ab_rlimits_check (const struct ab_process *p, bool userns, ab_error_t *err)
{
  const char *step = ab_current_step;
  bool privileged = !userns && have_cap_sys_resource ();
  size_t i;
  int r = 0;

  ab_set_step ("rlimits");
  for (i = 0; i < p->n_rlimits && !privileged && r == 0; i++)
    {
      const struct ab_rlimit *rl = &p->rlimits[i];
      struct rlimit cur;

      if (getrlimit ((__rlimit_resource_t) rl->resource, &cur) == 0 && cur.rlim_max != RLIM_INFINITY
          && (rlim_t) rl->hard > cur.rlim_max)
        r = rlimit_too_high (i, rl, cur.rlim_max, err);
    }
  ab_set_step (step);
  return r;
}

int
ab_rlimits_apply (const struct ab_process *p, ab_error_t *err)
{
  size_t i;

  ab_set_step ("rlimits");
  for (i = 0; i < p->n_rlimits; i++)
    {
      const struct ab_rlimit *r = &p->rlimits[i];
      struct rlimit rl = { .rlim_cur = (rlim_t) r->soft, .rlim_max = (rlim_t) r->hard };
      if (setrlimit ((__rlimit_resource_t) r->resource, &rl) < 0)
        {
          int e = errno;
          struct rlimit cur;
          if (e == EPERM && getrlimit ((__rlimit_resource_t) r->resource, &cur) == 0 && rl.rlim_max > cur.rlim_max)
            return rlimit_too_high (i, r, cur.rlim_max, err);
          return ab_error_setc (err, AB_EC_RESOURCE, e, "process.rlimits[%zu]: setrlimit %s", i, r->type);
        }
    }
  return 0;
}

static bool ids_are_root;

static bool
setgroups_denied (void)
{
  char buf[8] = "";
  int fd = open ("/proc/self/setgroups", O_RDONLY | O_CLOEXEC);

  if (fd < 0)
    return false;
  (void) !read (fd, buf, sizeof buf - 1);
  close (fd);
  return strncmp (buf, "deny", 4) == 0;
}

void
ab_process_ids_root (void)
{
  ids_are_root = true;
}

static int
ab_user_apply (const struct ab_process *p, bool allow_setgroups, ab_error_t *err)
{
  const struct ab_user *u = &p->user;

  ab_set_step ("user");
  /* Leaving uid 0 clears the permitted set unless KEEPCAPS is on; staying
     root changes no capability (execve clears the flag again). */
  if ((u->uid != 0 || !ids_are_root) && ab_caps_keep_across_setuid () < 0)
    return ab_error_set (err, errno, "prctl PR_SET_KEEPCAPS");
  if (allow_setgroups)
    {
      _cleanup_free_ gid_t *gids = xcalloc (u->n_additional_gids + 1, sizeof *gids);
      size_t i;
      for (i = 0; i < u->n_additional_gids; i++)
        gids[i] = u->additional_gids[i];
      /* newgidmap may deny setgroups itself (a map of the caller's own gid
         alone): then only a list that asks for groups fails. */
      if (setgroups (u->n_additional_gids, gids) < 0
          && !(errno == EPERM && u->n_additional_gids == 0 && setgroups_denied ()))
        return ab_error_set (err, errno, "process.user.additionalGids: setgroups");
    }
  else if (u->n_additional_gids > 0)
    return ab_error_setc (err, AB_EC_CONFIG, EPERM,
                          "process.user.additionalGids: setgroups is denied in this user namespace (rootless)");
  /* Already all 0 (ab_process_ids_root): nothing to change. */
  if ((u->gid != 0 || !ids_are_root) && setresgid (u->gid, u->gid, u->gid) < 0)
    return ab_error_set (err, errno, "process.user.gid: setresgid %u", u->gid);
  if ((u->uid != 0 || !ids_are_root) && setresuid (u->uid, u->uid, u->uid) < 0)
    return ab_error_set (err, errno, "process.user.uid: setresuid %u", u->uid);
  if (u->umask_set)
    umask ((mode_t) u->umask);
  return 0;
}

int
ab_keyring_join_new (const char *name, ab_error_t *err)
{
  if (syscall (SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, name) >= 0)
    return 0;
  /* Keyrings unavailable (ENOSYS), or keyctl refused to the runtime by a
     seccomp filter or an LSM, which refuses it to the container as well
     (EPERM; runc's profiles do): there is no keyring to read either way.
     Anything else once meant a container left in the caller's session
     keyring, whose keys a process possesses and may read: a named keyring
     that is not ours to join (EACCES), the key quota of the container's
     uid, which every container of the same mapping shares, used up by one
     of them (EDQUOT).  An anonymous keyring then, and if that cannot be
     had either, no container. */
  if (errno == ENOSYS || errno == EPERM)
    return 0;
  if (name != NULL && syscall (SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) >= 0)
    return 0;
  return ab_error_set (err, errno, "join a new session keyring: keyctl(KEYCTL_JOIN_SESSION_KEYRING)");
}

int
ab_fds_prepare (int first, ab_error_t *err)
{
  int fd;

  ab_set_step ("fds");
  /* Preserved fds (--preserve-fds) are passed on purpose. */
  for (fd = 3; fd < first; fd++)
    if (ab_set_cloexec (fd, false) < 0 && errno != EBADF)
      return ab_error_set (err, errno, "clear close-on-exec on preserved fd %d", fd);
  /* Everything else is closed by the execve itself: our own sync socket
     stays usable until the very last moment, and nothing else leaks. */
  if (syscall (SYS_close_range, (unsigned) first, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
    return 0;
  if (errno != ENOSYS && errno != EINVAL)
    return ab_error_set (err, errno, "close_range");
  {
    DIR *d = opendir ("/proc/self/fd");
    struct dirent *e;
    if (d == NULL)
      return ab_error_set (err, errno, "close_range fallback: open /proc/self/fd");
    while ((e = readdir (d)) != NULL)
      {
        int n;
        if (ab_parse_int (e->d_name, &n) == 0 && n >= first && n != dirfd (d))
          ab_set_cloexec (n, true);
      }
    closedir (d);
  }
  return 0;
}

/* Resolve process.cwd inside the container: an O_PATH fd of it, for
   fchdir.  openat2 with RESOLVE_NO_MAGICLINKS: a /proc/self/fd/N cwd can
   never land on a leaked host directory. */
static int
ab_cwd_open (const char *cwd, ab_error_t *err)
{
  _cleanup_close_ int rootfd = -1;
  int fd;

  ab_set_step ("cwd");
  rootfd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    return ab_error_set (err, errno, "open /");
  if (cwd[strspn (cwd, "/")] == '\0')
    return ab_steal_fd (&rootfd);
  fd = ab_open_in_root (rootfd, cwd, O_PATH | O_DIRECTORY, 0, err);
  if (fd < 0)
    return ab_error_prefix (err, "process.cwd");
  return fd;
}

int
ab_cwd_make (const char *cwd, ab_error_t *err)
{
  _cleanup_close_ int rootfd = -1, fd = -1;

  if (cwd[strspn (cwd, "/")] == '\0')
    return 0;
  ab_set_step ("cwd");
  rootfd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    return ab_error_set (err, errno, "open /");
  /* Made as runc makes it (os.MkdirAll in its jail): by the container's
     root, 0755 less the umask, every missing level; a link on the way,
     dangling or not, is followed inside the root, never to the host. */
  fd = ab_mkpath_in_root (rootfd, cwd, AB_LAST_DIR, err);
  if (fd < 0)
    {
      /* Not a mount point: the advice on unmapped owners of mount points
         (create.c) does not apply; say first that the cwd is missing. */
      if (err)
        err->where[0] = '\0';
      return ab_error_prefix (err, "process.cwd: `%s` is missing and cannot be made", cwd);
    }
  return 0;
}

/* runc's default: with no HOME in process.env (or an empty one), HOME is the
   home directory of process.user.uid in the container's /etc/passwd, else
   "/".  The file is the image's: resolved inside the container's root
   (RESOLVE_IN_ROOT, no magic links: a link cannot reach the host's
   passwd), opened without blocking on a FIFO, only a regular file, read
   bounded.  Anything wrong with it means no entry.  Returns the
   environment to exec with (malloc'ed array; its strings are env's, but
   the HOME entry), or NULL to use env as it is. */
#define AB_PASSWD_MAX (4u << 20)
static char **
env_with_home (char *const *env, uid_t uid, char **home_entry)
{
  _cleanup_close_ int rootfd = -1, fd = -1;
  _cleanup_free_ char *buf = NULL, *home = NULL;
  size_t n = 0, k = 0, len = 0;
  struct stat st;
  char **v;

  for (size_t i = 0; env && env[i]; i++)
    if (strncmp (env[i], "HOME=", 5) == 0 && env[i][5] != '\0')
      return NULL;
  rootfd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd >= 0)
    fd = ab_open_in_root (rootfd, "/etc/passwd", O_RDONLY | O_NONBLOCK | O_NOCTTY, 0, NULL);
  if (fd >= 0 && fstat (fd, &st) == 0 && S_ISREG (st.st_mode)
      && ab_read_fd_sized (fd, AB_PASSWD_MAX, (size_t)st.st_size, &buf, &len, NULL) == 0)
    home = ab_passwd_home (buf, len, uid);
  *home_entry = xasprintf ("HOME=%s", home ? home : "/");
  while (env && env[n])
    n++;
  v = xcalloc (n + 2, sizeof *v);
  for (size_t i = 0; i < n; i++)
    if (strncmp (env[i], "HOME=", 5) != 0) /* an empty HOME is replaced */
      v[k++] = env[i];
  v[k] = *home_entry;
  return v;
}

static const char *
env_path (char *const envp[])
{
  size_t i;

  for (i = 0; envp && envp[i]; i++)
    if (strncmp (envp[i], "PATH=", 5) == 0)
      return envp[i] + 5;
  return "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
}

void
ab_execvpe_container (char *const argv[], char *const envp[])
{
  const char *path, *p;
  char buf[4096];
  int saved = ENOENT;
  static char *const empty_env[] = { NULL };

  if (envp == NULL)
    envp = empty_env;
  if (strchr (argv[0], '/'))
    {
      execve (argv[0], argv, envp);
      return;
    }
  path = env_path (envp);
  for (p = path;; p++)
    {
      const char *end = strchrnul (p, ':');
      size_t dl = (size_t) (end - p);
      int n;
      if (dl == 0)
        n = snprintf (buf, sizeof buf, "%s", argv[0]); /* empty entry: current directory */
      else
        n = snprintf (buf, sizeof buf, "%.*s/%s", (int) dl, p, argv[0]);
      if (n > 0 && (size_t) n < sizeof buf)
        {
          execve (buf, argv, envp);
          /* Keep the most telling error: permission beats not-found. */
          if (errno == EACCES || errno == ENOEXEC || errno == EPERM)
            saved = errno;
          else if (errno != ENOENT && errno != ENOTDIR && saved == ENOENT)
            saved = errno;
        }
      if (*end == '\0')
        break;
      p = end;
    }
  errno = saved;
}

/* The dispositions the container process inherits, taken by the parent
   right before clone (the child is a copy of it at that instant).  Only an
   ignored signal survives execve: execve resets every caught signal to
   SIG_DFL itself (signal(7), "Signal disposition is inherited ... during an
   execve(2), the dispositions of handled signals are reset to the default;
   the dispositions of ignored signals are left unchanged").  So the child
   need only reset the signals ignored here, one rt_sigaction each, instead
   of all 62.  valid is false when /proc/self/status could not be read (or
   was not asked): then the child resets every signal as before. */
static struct
{
  bool valid;
  uint64_t ignored; /* bit sig-1 */
} inherited_sigs;

void
ab_signals_snapshot (void)
{
  char buf[4096], *p;
  ssize_t n;
  int fd;

  inherited_sigs.valid = false;
  fd = open ("/proc/self/status", O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
  if (fd < 0)
    return;
  n = read (fd, buf, sizeof buf - 1);
  close (fd);
  /* A full buffer may have cut the file: then take nothing from it. */
  if (n <= 0 || (size_t)n >= sizeof buf - 1)
    return;
  buf[n] = '\0';
  p = strstr (buf, "\nSigIgn:");
  if (p == NULL)
    return;
  p += strlen ("\nSigIgn:");
  while (*p == ' ' || *p == '\t')
    p++;
  {
    char *end;
    unsigned long long v;

    errno = 0;
    v = strtoull (p, &end, 16);
    if (errno != 0 || end == p || *end != '\n')
      return;
    inherited_sigs.ignored = v;
    inherited_sigs.valid = true;
  }
}

void
ab_signals_reset (void)
{
  sigset_t none;
  int sig;

  for (sig = 1; sig < NSIG; sig++)
    {
      if (sig == SIGKILL || sig == SIGSTOP)
        continue;
      if (inherited_sigs.valid && (sig > 64 || !(inherited_sigs.ignored & (UINT64_C (1) << (sig - 1)))))
        continue; /* caught or default: execve leaves it at SIG_DFL */
      /* The system call: the C library refuses the signals it keeps for
         itself (32 and 33 in glibc), which GNU make, for one, leaves
         ignored.  All zero is SIG_DFL, no flags, an empty mask. */
      syscall (SYS_rt_sigaction, sig, &(struct { unsigned long w[4]; }){ { 0 } }, NULL, (size_t)8);
    }
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
}

/* Load the filter; one with a listener (SCMP_ACT_NOTIFY) hands its fd to
   the starter, which passes it to the agent at listenerPath, and waits
   until the agent has it (runtime/seccomp-notify.h).  The listener is
   close-on-exec: the program never holds it. */
static int
seccomp_load (const struct ab_seccomp_prog *seccomp, int report_fd, ab_error_t *err)
{
  int listener;

  ab_set_step ("seccomp");
  listener = ab_seccomp_install (seccomp, err);
  if (listener < 0 || !ab_seccomp_prog_listens (seccomp))
    return listener < 0 ? -1 : 0;
  /* From here every syscall may be one the agent decides, except this
     sendmsg (validate refuses NOTIFY for it); the answer is read once the
     agent has the fd, so it may decide that recv too. */
  if (ab_sync_send_fd (report_fd, AB_SYNC_SECCOMP, listener, err) < 0
      || ab_sync_expect (report_fd, AB_SYNC_SECCOMP_DONE, NULL, err) < 0)
    return ab_error_prefix (err, "linux.seccomp.listenerPath: hand the listener over");
  return 0;
}

/* Die with the parent from here on.  The parent-death signal is tied to
   credentials: the kernel clears it at every change of the effective or
   filesystem uid or gid (commit_creds), so the setresuid above took away
   the one set at clone (child.c).  Set again, it holds up to execve and
   after it (only a set-uid or file-capability execve clears it, and
   no_new_privs rules that out).  The classic race, a parent that died
   before the prctl and so sends no signal, is closed by announce_exec,
   which comes after it: its write to the parent's socket fails then
   (getppid() could not tell, being 0 in a new pid namespace).  The parent is the
   thread that cloned us, the main thread of `run` or `exec`, which lives
   as long as the process. */
static int
die_with_parent (ab_error_t *err)
{
  ab_set_step ("parent-death");
  if (prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
    return ab_error_set (err, errno, "prctl(PR_SET_PDEATHSIG, SIGKILL)");
  return 0;
}

/* AB_SYNC_EXEC: every step but the execve is done.  The starter that then
   sees the socket end knows the program was executed; an end without it
   is a process that died during its setup (killed, or by the seccomp
   filter), never a program that "started".  After the filter, as runc
   writes its exec fifo: the profile must allow write, which any program
   needs.  A starter that is gone makes the write fail with SIGPIPE, the
   default disposition again here, which ends us as the parent-death
   signal would.  Under a filter with a listener, the handover's sendmsg
   instead: validate refuses NOTIFY on it, where a NOTIFY rule on write
   would show the agent a syscall of the runtime, not of the program. */
static int
announce_exec (int fd, const struct ab_seccomp_prog *seccomp, ab_error_t *err)
{
  struct ab_sync_msg m;
  ssize_t w;

  memset (&m, 0, sizeof m);
  m.type = AB_SYNC_EXEC;
  if (seccomp && ab_seccomp_prog_listens (seccomp))
    w = ab_sendmsg_fds (fd, &m, sizeof m, NULL, 0);
  else
    do
      w = write (fd, &m, sizeof m);
    while (w < 0 && errno == EINTR);
  if (w == (ssize_t)sizeof m)
    return 0;
  if (w < 0 && (errno == EPIPE || errno == ECONNRESET))
    _exit (AB_CHILD_EXIT_SETUP); /* no one is left to tell */
  return ab_error_set (err, w < 0 ? errno : EPROTO, "tell the runtime that the program is executed next");
}

int
ab_process_exec (const struct ab_process *p, const struct ab_seccomp_prog *seccomp, bool allow_setgroups,
                 int report_fd, int landlock_fd, bool with_parent, ab_error_t *err)
{
  bool early_seccomp = seccomp && !p->no_new_privileges;
  _cleanup_close_ int cwdfd = -1;
  _cleanup_free_ char **env = NULL;
  _cleanup_free_ char *home = NULL;
  bool in_cwd;

  /* The cwd is resolved first, while every syscall is still ours to make:
     a config's seccomp profile installed before the privilege drop (no
     no_new_privs) governs all that follows, and it need not allow openat2
     (Docker's and runtime-tools' profiles do not), and rlimits may forbid
     a new fd.  From here to execve only capset, prctl, fchdir, write (for
     an error report) and execve are used, as in runc. */
  cwdfd = ab_cwd_open (p->cwd, err);
  if (cwdfd < 0)
    return -1;
  /* Read while we are still root in the container, before the rlimits. */
  env = env_with_home (p->env.v, (uid_t)p->user.uid, &home);
  /* Entered as root too, like runc, for a cwd only root can search (root
     squashing filesystems aside, where the retry after setuid works). */
  in_cwd = fchdir (cwdfd) == 0;

  /* The program starts with default dispositions and nothing blocked,
     whatever agentbox inherited (an ignored SIGPIPE, a blocked SIGCHLD). */
  ab_set_step ("signals");
  ab_signals_reset ();

  if (ab_rlimits_apply (p, err) < 0)
    return -1;
  ab_set_step ("lsm");
  if (ab_lsm_apply_exec (p, err) < 0)
    return -1;
  /* Landlock after the last file this setup opens or writes (the cwd, the
     LSM's /proc/thread-self/attr), before seccomp (whose profile need not
     allow the landlock calls) and while we still hold CAP_SYS_ADMIN in our
     user namespace, which landlock_restrict_self wants when no_new_privs
     is off.  What follows opens nothing: the ids, capabilities, fchdir on
     the fd above, and execve, which the ruleset lets run the program
     where its mount allows execution. */
  if (landlock_fd >= 0 && ab_landlock_restrict (landlock_fd, err) < 0)
    return -1;
  ab_set_step ("capabilities");
  /* Without no_new_privs, installing a filter needs CAP_SYS_ADMIN in the
     effective set: do it while we still hold it, before the bounding set
     shrinks and before setresuid to a non-root uid clears the effective
     set.  The filter then governs the remaining steps, as with runc: the
     profile must allow prctl, setgroups, setresgid, setresuid, capset,
     fchdir and execve. */
  if (early_seccomp && seccomp_load (seccomp, report_fd, err) < 0)
    return -1;
  if (ab_caps_drop_bounding (&p->caps, err) < 0)
    return -1;
  if (ab_user_apply (p, allow_setgroups, err) < 0)
    return -1;
  ab_set_step ("capabilities");
  if (ab_caps_apply (&p->caps, err) < 0)
    return -1;
  if (with_parent && die_with_parent (err) < 0)
    return -1;
  if (p->no_new_privileges)
    {
      ab_set_step ("no_new_privs");
      if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return ab_error_set (err, errno, "prctl PR_SET_NO_NEW_PRIVS");
    }
  ab_set_step ("cwd");
  if (!in_cwd && fchdir (cwdfd) < 0)
    return ab_error_set (err, errno, "process.cwd: chdir `%s`", p->cwd);
  cwdfd = -1; /* close-on-exec: the execve closes it */
  if (seccomp && !early_seccomp && seccomp_load (seccomp, report_fd, err) < 0)
    return -1;
  if (report_fd >= 0 && announce_exec (report_fd, seccomp, err) < 0)
    return -1;
  ab_set_step ("exec");
  ab_execvpe_container (p->args.v, env ? env : p->env.v);
  {
    int e = errno;
    return ab_error_setc (err, AB_EC_EXEC, e, "exec `%s`", p->args.v[0]);
  }
}
