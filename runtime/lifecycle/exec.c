#include "config.h"

#include <fcntl.h>
#include <linux/keyctl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <dirent.h>
#include <sys/file.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/random.h>
#include <sys/wait.h>

#include "runtime/cgroup/cgroup.h"
#include "runtime/console.h"
#include "runtime/fallback.h"
#include "runtime/lifecycle/exec.h"
#include "runtime/lifecycle/lifecycle-internal.h"
#include "runtime/landlock.h"
#include "runtime/lsm.h"
#include "runtime/ns.h"
#include "runtime/plan/plan.h"
#include "base/log.h"
#include "base/nsenter.h"
#include "runtime/process.h"
#include "runtime/seccomp.h"
#include "runtime/sync.h"
#include "base/util.h"
#include "spec/spec.h"
#include "spec/tables.h"

void
ab_exec_opts_init (struct ab_exec_opts *o)
{
  memset (o, 0, sizeof *o);
  o->stdio[0] = o->stdio[1] = o->stdio[2] = -1;
}

void
ab_exec_opts_clear (struct ab_exec_opts *o)
{
  ab_strv_free (&o->args);
  ab_strv_free (&o->env);
  ab_strv_free (&o->add_caps);
  ab_strv_free (&o->cgroups);
  free (o->add_gids);
  o->add_gids = NULL;
  o->n_add_gids = 0;
}

struct exec_child
{
  const struct ab_process *p;
  const struct ab_spec *spec;
  const struct ab_seccomp_prog *seccomp;
  const struct ab_ll_ruleset *landlock; /* fitted to the kernel; NULL: none */
  int sync_fd;
  int console_fd;
  int pidfd; /* the container's init, to join its namespaces */
  int ns_flags;
  int stdio[3];
  int preserve_fds;
  bool detach;
  bool allow_setgroups;
  bool own_pgrp;                      /* no sub-cgroup to kill it by: its own process group instead */
  bool join_pid;                      /* rootless: this child joins the pid namespace and forks the process */
  struct ab_cgroup_selfjoin *cg_join; /* v1 `tasks` fds, joined first (cgroup-state.c) */
  size_t n_cg_join;
};

static void
close_all_but (int first, int *keep, int n)
{
  int i;

  qsort (keep, (size_t)n, sizeof *keep, ab_cmp_int);
  for (i = 0; i < n; i++)
    {
      if (keep[i] < first)
        continue;
      if (keep[i] > first)
        syscall (SYS_close_range, (unsigned)first, (unsigned)keep[i] - 1, 0);
      first = keep[i] + 1;
    }
  syscall (SYS_close_range, (unsigned)first, ~0U, 0);
}

/* Rootless: the parent cannot enter the container's pid namespace for its
   children (setns CLONE_NEWPID needs CAP_SYS_ADMIN in its own user
   namespace too).  This child, now in the container's user namespace
   where it holds every capability, can: it enters it and forks the exec's
   process there as the parent's own child (CLONE_PARENT), tells the
   parent its pid and leaves.  The process goes on from here. */
static int
join_pidns (struct exec_child *x, ab_error_t *err)
{
  struct clone_args args = { .flags = CLONE_PARENT };
  pid_t pid;

  if (setns (x->pidfd, CLONE_NEWPID) < 0)
    return ab_error_set (err, errno, "join the container's pid namespace");
  pid = (pid_t)syscall (SYS_clone3, &args, sizeof args);
  if (pid < 0)
    return ab_error_set (err, errno, "fork into the container's pid namespace");
  if (pid > 0)
    {
      ab_sync_send (x->sync_fd, AB_SYNC_PID, pid, NULL);
      _exit (0);
    }
  /* its own group, as the parent expects of a process without a cgroup */
  if (x->own_pgrp && !x->p->terminal)
    setpgid (0, 0);
  prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);
  if (!x->detach)
    prctl (PR_SET_PDEATHSIG, SIGKILL);
  return 0;
}

static int
exec_child_setup (struct exec_child *x, ab_error_t *err)
{
  int keep[8], n = 0, i, landlock_fd = -1;

  ab_set_step ("exec-cgroups");
  /* First, before we can fork or exec: see ab_cgroup_selfjoin. */
  if (ab_cgroup_selfjoin (x->cg_join, x->n_cg_join, err) < 0)
    return -1;
  ab_set_step ("exec-join");
  /* Not dumpable until execve: a process of the container cannot ptrace us
     or open our /proc files (/proc/<pid>/exe, fd/, cwd) while we still
     hold anything of the host. */
  if (prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
    return ab_error_set (err, errno, "prctl(PR_SET_DUMPABLE, 0)");
  if (!x->detach && prctl (PR_SET_PDEATHSIG, SIGKILL) < 0)
    return ab_error_set (err, errno, "prctl(PR_SET_PDEATHSIG, SIGKILL)");
  keep[n++] = x->sync_fd;
  keep[n++] = x->pidfd;
  if (x->console_fd >= 0)
    keep[n++] = x->console_fd;
  for (i = 0; i < 3; i++)
    if (x->stdio[i] >= 0)
      keep[n++] = x->stdio[i];
  close_all_but (3 + x->preserve_fds, keep, n);
  for (i = 0; i < 3; i++)
    if (x->stdio[i] >= 0 && x->stdio[i] != i && dup2 (x->stdio[i], i) < 0)
      return ab_error_set (err, errno, "stdio: dup2");

  /* Every namespace of the container at once (the user namespace first, the
     kernel orders it); the pid namespace was set for us by the parent. */
  if (x->own_pgrp && !x->p->terminal)
    setpgid (0, 0);
  if (x->ns_flags && setns (x->pidfd, x->ns_flags) < 0)
    return ab_error_set (err, errno, "join the container's namespaces (0x%x)", x->ns_flags);
  if (x->join_pid && join_pidns (x, err) < 0)
    return -1;
  close (x->pidfd);
  x->pidfd = -1;
  /* In a joined user namespace, become its root where it maps one, as
     runc's nsexec does: our host ids are unmapped in there, so nothing
     could be chowned to the process's user (the pty of --tty: EPERM).
     A change of ids resets dumpable to fs.suid_dumpable: set it again
     (and clears the parent-death signal: ab_process_exec sets that again
     after the last change). */
  if ((x->ns_flags & CLONE_NEWUSER) && setresgid (0, 0, 0) == 0 && setresuid (0, 0, 0) == 0)
    {
      ab_process_ids_root ();
      if (prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
        return ab_error_set (err, errno, "prctl(PR_SET_DUMPABLE, 0)");
    }

  /* Never the caller's session keyring (ab_keyring_join_new). */
  if (ab_keyring_join_new (NULL, err) < 0)
    return -1;
  if (x->p->terminal && x->console_fd >= 0)
    {
      if (ab_console_setup (x->console_fd, x->p, false, err) < 0)
        return -1;
      close (x->console_fd);
      x->console_fd = -1;
    }
  if (x->spec->linux_ && x->spec->linux_->personality_set
      && personality (x->spec->linux_->personality_domain == AB_PERSONA_LINUX32 ? PER_LINUX32 : PER_LINUX)
             < 0)
    return ab_error_set (err, errno, "linux.personality");

  ab_set_step ("exec-cgroups");
  if (ab_sync_expect (x->sync_fd, AB_SYNC_CGROUPS_DONE, NULL, err) < 0)
    return -1;
  if (x->p->exec_cpu_affinity_final && *x->p->exec_cpu_affinity_final)
    {
      cpu_set_t set;
      if (ab_parse_id_list (x->p->exec_cpu_affinity_final, set.__bits, CPU_SETSIZE) < 0)
        return ab_error_setc (err, AB_EC_CONFIG, EINVAL, "process.execCPUAffinity.final: `%s`",
                              x->p->exec_cpu_affinity_final);
      if (sched_setaffinity (0, sizeof set, &set) < 0)
        return ab_error_set (err, errno, "process.execCPUAffinity.final");
    }
  /* The container's landlock rules, resolved in its root (we are in its
     mount namespace): the exec'd process gets a domain of its own. */
  if (x->landlock
      && (landlock_fd = ab_landlock_build (x->landlock, x->landlock->abi, -1, 3 + x->preserve_fds, err)) < 0)
    return -1;
  if (ab_sync_send (x->sync_fd, AB_SYNC_STARTED, 0, err) < 0)
    return -1;
  if (ab_fds_prepare (3 + x->preserve_fds, err) < 0)
    return -1;
  return ab_process_exec (x->p, x->seccomp, x->allow_setgroups, x->sync_fd, landlock_fd, !x->detach, err);
}

static void __attribute__ ((noreturn)) exec_child_main (struct exec_child *x)
{
  ab_error_t err = { 0 };

  exec_child_setup (x, &err);
  ab_sync_send_error (x->sync_fd, &err);
  _exit (255);
}

/* Namespaces of pid that differ from ours, as CLONE_NEW* flags. */
static int
differing_namespaces (pid_t pid, bool *pid_differs)
{
  int flags = 0, t;

  *pid_differs = false;
  for (t = 0; t < AB_NS__COUNT; t++)
    {
      char a[64], b[64];
      struct stat sa, sb;
      snprintf (a, sizeof a, "/proc/self/ns/%s", ab_ns_proc_name (t));
      snprintf (b, sizeof b, "/proc/%d/ns/%s", (int)pid, ab_ns_proc_name (t));
      if (stat (a, &sa) < 0 || stat (b, &sb) < 0)
        continue;
      if (sa.st_ino == sb.st_ino && sa.st_dev == sb.st_dev)
        continue;
      if (t == AB_NS_PID)
        *pid_differs = true;
      else
        flags |= (int)ab_ns_clone_flag (t);
    }
  return flags;
}

static bool
setgroups_allowed (pid_t pid)
{
  char path[64], buf[16] = { 0 };
  int fd;
  ssize_t n;

  snprintf (path, sizeof path, "/proc/%d/setgroups", (int)pid);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return true;
  n = read (fd, buf, sizeof buf - 1);
  close (fd);
  return !(n > 0 && strncmp (buf, "deny", 4) == 0);
}

/* The exec cgroups that earlier foreground execs, killed (SIGKILL), could
   not remove.  Each exec holds a lock on its own directory from a moment
   after making it to its end: a lock that can be taken on a directory
   made more than a second ago is an exec gone.  rmdir removes only an empty
   cgroup.  (Not the pid in the name: an exec of another pid namespace
   may have the pid of one of ours, or none.) */
static void
sweep_subcgroups (int cg_dirfd)
{
  DIR *d = NULL;
  int fd = openat (cg_dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  uint64_t now = ab_now_realtime_ns ();
  struct dirent *e;

  if (fd < 0 || (d = fdopendir (fd)) == NULL)
    {
      if (fd >= 0)
        close (fd);
      return;
    }
  while ((e = readdir (d)) != NULL)
    {
      _cleanup_close_ int sub = -1;
      struct stat st;
      if (e->d_type != DT_DIR || strncmp (e->d_name, "exec-", 5) != 0)
        continue;
      sub = openat (dirfd (d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub < 0 || fstat (sub, &st) < 0
          || (uint64_t)st.st_ctim.tv_sec * 1000000000u + (uint64_t)st.st_ctim.tv_nsec + 1000000000u > now)
        continue;
      if (flock (sub, LOCK_EX | LOCK_NB) == 0)
        unlinkat (dirfd (d), e->d_name, AT_REMOVEDIR);
    }
  closedir (d);
}

/* The exec's own cgroup below the container's v2 cgroup: tracking and
   cgroup.kill for just this command, while the container's limits (its
   ancestors) still apply. */
static int
make_subcgroup (struct ab_exec *x)
{
  uint32_t rnd = 0;

  if (x->cg_dirfd < 0)
    return -1;
  sweep_subcgroups (x->cg_dirfd);
  if (getrandom (&rnd, sizeof rnd, 0) < 0)
    rnd = (uint32_t)ab_now_monotonic_ns ();
  snprintf (x->subcg, sizeof x->subcg, "exec-%d-%08x", (int)getpid (), rnd);
  if (mkdirat (x->cg_dirfd, x->subcg, 0755) < 0)
    {
      x->subcg[0] = '\0';
      return -1;
    }
  x->subcg_fd = openat (x->cg_dirfd, x->subcg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (x->subcg_fd < 0 || flock (x->subcg_fd, LOCK_EX | LOCK_NB) < 0)
    {
      ab_closep_now (&x->subcg_fd);
      unlinkat (x->cg_dirfd, x->subcg, AT_REMOVEDIR);
      x->subcg[0] = '\0';
      return -1;
    }
  return 0;
}

static int
read_map (pid_t pid, const char *file, struct ab_idmaps *m)
{
  char path[64];
  _cleanup_fclose_ FILE *f = NULL;
  unsigned long a, b, n;

  snprintf (path, sizeof path, "/proc/%d/%s", (int)pid, file);
  f = fopen (path, "re");
  if (f == NULL)
    return -1;
  while (fscanf (f, "%lu %lu %lu", &a, &b, &n) == 3)
    {
      m->v = xreallocarray (m->v, m->n + 1, sizeof *m->v);
      m->v[m->n].container_id = (uint32_t)a;
      m->v[m->n].host_id = (uint32_t)b;
      m->v[m->n].size = (uint32_t)n;
      m->n++;
    }
  return 0;
}

int
ab_exec_container_maps (const char *root, const char *id, struct ab_idmaps *uids, struct ab_idmaps *gids)
{
  _cleanup_container_ struct ab_container *c = NULL;
  ab_error_t ignored = { 0 };
  char a[64];
  struct stat sa, sb;

  if (ab_container_peek (root, id, &c, &ignored) < 0 || c->pid <= 0)
    {
      ab_error_clear (&ignored);
      return -1;
    }
  snprintf (a, sizeof a, "/proc/%d/ns/user", (int)c->pid);
  if (stat (a, &sa) < 0 || stat ("/proc/self/ns/user", &sb) < 0 || sa.st_ino == sb.st_ino)
    return -1; /* the host's user namespace: no argument for skipping the seal */
  if (read_map (c->pid, "uid_map", uids) < 0 || read_map (c->pid, "gid_map", gids) < 0)
    return -1;
  return 0;
}

/* Without a sub-cgroup, the exec's process group is what groups its
   processes, and a child that called setsid left it: while the exec's
   process is not reaped (its pid is still its own), its descendants are
   found through /proc as well.  One whose parent already ended (a double
   fork) is the container init's child, found by neither.  Whether it
   was still there. */
static bool
signal_descendants (struct ab_exec *x, int sig)
{
  if (x->subcg_fd >= 0 || x->pidfd < 0 || syscall (SYS_pidfd_send_signal, x->pidfd, 0, NULL, 0) < 0)
    return false;
  ab_signal_descendants (x->pid, sig);
  return true;
}

void
ab_exec_kill_pipe_holders (struct ab_exec *x, const ino_t *pipes, size_t n)
{
  ab_error_t ignored = { 0 };
  char path[64];
  struct stat st;

  if (x->subcg_fd >= 0 || x->init_pid <= 0 || n == 0)
    return;
  /* the same init still (its pid not reused since) */
  snprintf (path, sizeof path, "/proc/%d/ns/pid", (int) x->init_pid);
  if (stat (path, &st) < 0 || st.st_ino != x->init_pidns)
    return;
  ab_pidns_kill_pipe_holders (x->init_pid, pipes, n, &ignored);
}

void
ab_exec_kill_all (struct ab_exec *x)
{
  if (x->subcg_fd >= 0)
    {
      int fd = openat (x->subcg_fd, "cgroup.kill", O_WRONLY | O_CLOEXEC);
      if (fd >= 0)
        {
          ab_write_all (fd, "1", 1);
          close (fd);
        }
    }
  signal_descendants (x, SIGKILL);
  if (x->pgid > 0)
    kill (-x->pgid, SIGKILL);
  if (x->pidfd >= 0)
    syscall (SYS_pidfd_send_signal, x->pidfd, SIGKILL, NULL, 0);
}

static void
subcg_write (int dirfd, const char *file, const char *v)
{
  int fd = openat (dirfd, file, O_WRONLY | O_CLOEXEC);

  if (fd >= 0)
    {
      ab_write_all (fd, v, strlen (v));
      close (fd);
    }
}

void
ab_exec_signal_all (struct ab_exec *x, int sig)
{
  _cleanup_free_ char *procs = NULL;
  ab_error_t ignored = { 0 };
  char *save = NULL;
  bool stopped;

  if (x->subcg_fd >= 0)
    {
      /* Frozen, no process of it can exit: a pid read here is still its
         own when the signal goes. */
      subcg_write (x->subcg_fd, "cgroup.freeze", "1");
      if (ab_read_file_at (x->subcg_fd, "cgroup.procs", 1u << 22, &procs, NULL, &ignored) == 0)
        for (char *t = strtok_r (procs, "\n", &save); t; t = strtok_r (NULL, "\n", &save))
          {
            int pid;
            if (ab_parse_int (t, &pid) == 0 && pid > 0)
              kill (pid, sig);
          }
      subcg_write (x->subcg_fd, "cgroup.freeze", "0");
    }
  /* Stopped while the others get theirs, the process cannot end first
     (a shell whose child the signal ended, before its own came) and
     take its children's descent with it. */
  if (x->subcg_fd < 0 && x->pidfd >= 0)
    syscall (SYS_pidfd_send_signal, x->pidfd, SIGSTOP, NULL, 0);
  stopped = signal_descendants (x, sig);
  if (x->pgid > 0)
    kill (-x->pgid, sig);
  if (x->pidfd >= 0)
    syscall (SYS_pidfd_send_signal, x->pidfd, sig, NULL, 0);
  if (stopped)
    syscall (SYS_pidfd_send_signal, x->pidfd, SIGCONT, NULL, 0);
}

void
ab_exec_free (struct ab_exec *x)
{
  if (x == NULL)
    return;
  if (x->subcg[0])
    {
      /* empty it, then remove it */
      int i;
      for (i = 0; i < 100; i++)
        {
          if (unlinkat (x->cg_dirfd, x->subcg, AT_REMOVEDIR) == 0 || errno != EBUSY)
            break;
          ab_exec_kill_all (x);
          usleep (2000);
        }
    }
  ab_closep_now (&x->subcg_fd);
  ab_closep_now (&x->pidfd);
  ab_closep_now (&x->sync_fd);
  ab_closep_now (&x->pty_master);
  ab_cgroup_free (x->cg);
  ab_strv_free (&x->degraded);
  free (x->before);
  free (x);
}

/* An exec in progress: what its phases share, and what exec_close frees
   once whichever phase failed (the ab_exec itself is handed out on
   success, freed with everything else on failure). */
struct exec_tx
{
  const struct ab_exec_opts *o;
  struct ab_container *c;
  struct ab_spec *spec;
  struct ab_plan *plan;
  struct ab_process_change change;
  struct ab_seccomp_prog prog;
  bool have_prog;
  struct ab_ll_ruleset landlock; /* the plan's, fitted to this kernel */
  int status; /* the container's, when the exec started */
  struct ab_exec *x;
  struct exec_child xc;
  int sp[2];
  int console_fd, init_pidfd, own_pidns, relay;
  int pidfd_sock; /* --pidfd-socket, connected before the process is made */
  cpu_set_t saved;
  bool affinity_changed;
  bool into_cgroup; /* clone3 put the child in its cgroup */
  bool spawned;     /* a child exists: on failure it is killed and reaped */
};

/* Load the container, check it can take a process, and plan the process:
   the saved config with the exec's changes (runtime/plan). */
static int
exec_plan (struct exec_tx *tx, ab_error_t *err)
{
  const struct ab_exec_opts *o = tx->o;
  struct ab_plan_opts po = { .root = o->root, .id = o->id, .rootless = -1, .exec = &tx->change };

  if (ab_container_load (o->root, o->id, false, &tx->c, err) < 0)
    return -1;
  tx->status = ab_state_status (tx->c->dirfd, tx->c->state);
  if (tx->status == AB_STATUS_PAUSED && !o->ignore_paused)
    return ab_error_setc (err, AB_EC_STATE, 0,
                          "cannot exec in container `%s`: it is paused (--ignore-paused: the process waits for "
                          "resume)",
                          o->id);
  if (tx->status != AB_STATUS_RUNNING && tx->status != AB_STATUS_CREATED && tx->status != AB_STATUS_PAUSED)
    return ab_error_setc (err, AB_EC_STATE, 0, "cannot exec in container `%s`: container not running", o->id);
  tx->init_pidfd = ab_state_pidfd (tx->c->state);
  if (tx->init_pidfd < 0)
    return ab_error_setc (err, AB_EC_STATE, ESRCH, "cannot exec in container `%s`: container not running", o->id);
  tx->spec = ab_container_load_spec (tx->c, err);
  if (tx->spec == NULL || ab_plan_build (tx->spec, &po, &tx->plan, err) < 0)
    return -1;
  if (ab_lsm_check (tx->plan->process, err) < 0)
    return ab_error_prefix (err, "exec");
  if (tx->plan->process->terminal && o->console_socket == NULL && !o->relay_tty)
    /* runc: "cannot allocate tty if runc will detach without setting
       console socket" */
    return ab_error_setc (err, AB_EC_USAGE, 0,
                          "exec --tty --detach needs --console-socket (in the foreground agentbox relays the terminal)");
  if (tx->spec->linux_ && tx->spec->linux_->seccomp)
    {
      if (ab_seccomp_compile_cached (tx->spec->linux_->seccomp, &tx->prog, err) < 0)
        return -1;
      tx->have_prog = true;
    }
  return ab_landlock_fit_kernel (&tx->plan->landlock, &tx->landlock, &tx->x->degraded, err);
}

/* --cgroup [CONTROLLERS:]PATH (runc): the process goes into existing
   cgroups below the container's instead of an exec cgroup of its own.
   The entries with controllers go first: one without is for the
   hierarchies they left. */
static int
exec_sub_cgroups (struct ab_cgroup *cg, const struct ab_strv *v, ab_error_t *err)
{
  if (cg == NULL)
    return ab_error_setc (err, AB_EC_USAGE, 0, "--cgroup: the container has no cgroup");
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < v->n; i++)
      {
        const char *colon = strchr (v->v[i], ':');
        _cleanup_free_ char *ctl
            = colon && colon > v->v[i] ? xstrndup (v->v[i], (size_t)(colon - v->v[i])) : NULL;
        if ((ctl != NULL) != (pass == 0))
          continue;
        if (ab_cgroup_descend (cg, ctl, colon ? colon + 1 : v->v[i], err) < 0)
          return -1;
      }
  return 0;
}

/* The terminal, the cgroups (the container's, and the exec's own below it)
   and what the child is told. */
static int
exec_realize (struct exec_tx *tx, ab_error_t *err)
{
  const struct ab_exec_opts *o = tx->o;
  struct ab_exec *x = tx->x;
  struct exec_child *xc = &tx->xc;
  bool pid_differs;

  if (o->console_socket
      && (tx->console_fd = ab_fd_socket_connect (o->console_socket, "--console-socket", err)) < 0)
    return -1;
  if (o->pidfd_socket && (tx->pidfd_sock = ab_fd_socket_connect (o->pidfd_socket, "--pidfd-socket", err)) < 0)
    return -1;
  if (!o->console_socket && tx->plan->process->terminal
      && (tx->console_fd = ab_console_relay_pair (&tx->relay, err)) < 0)
    return -1;
  x->cg = ab_steal_ptr (&tx->c->cg);
  if (o->cgroups.n && exec_sub_cgroups (x->cg, &o->cgroups, err) < 0)
    return -1;
  if (x->cg)
    {
      int fd = ab_cgroup_clone_fd (x->cg);
      if (fd >= 0)
        x->cg_dirfd = fcntl (fd, F_DUPFD_CLOEXEC, 3);
      x->before = xzalloc (sizeof *x->before);
      ab_cgroup_stats (x->cg, x->before, NULL);
    }
  /* A detached exec outlives us: it stays in the container's cgroup (or
     the --cgroup ones). */
  if (!o->detach && o->cgroups.n == 0)
    make_subcgroup (x);

  memset (xc, 0, sizeof *xc);
  xc->p = tx->plan->process;
  xc->spec = tx->spec;
  xc->seccomp = tx->have_prog ? &tx->prog : NULL;
  xc->landlock = ab_landlock_enforces (&tx->landlock) ? &tx->landlock : NULL;
  xc->console_fd = tx->console_fd;
  xc->pidfd = tx->init_pidfd;
  xc->sync_fd = -1;
  xc->ns_flags = differing_namespaces (tx->c->pid, &pid_differs);
  memcpy (xc->stdio, o->stdio, sizeof xc->stdio);
  xc->preserve_fds = o->preserve_fds;
  xc->detach = o->detach;
  xc->allow_setgroups = setgroups_allowed (tx->c->pid);
  xc->own_pgrp = x->subcg_fd < 0 && !o->detach;

  /* Children of ours are born in the container's pid namespace: only this
     one.  Keep our own to switch back right after the clone (anything we
     fork later, or a sanitizer's tracer thread, must stay in ours).
     Rootless, the child does it (join_pidns). */
  xc->join_pid = pid_differs && !ab_have_cap_sys_admin ();
  if (pid_differs && !xc->join_pid)
    {
      tx->own_pidns = open ("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
      if (tx->own_pidns < 0 || setns (tx->init_pidfd, CLONE_NEWPID) < 0)
        return ab_error_set (err, errno, "join the container's pid namespace");
    }
  return 0;
}

/* Back in our own pid namespace and on our own CPUs: what only the child
   was to inherit. */
static void
exec_restore (struct exec_tx *tx)
{
  if (tx->affinity_changed)
    sched_setaffinity (0, sizeof tx->saved, &tx->saved);
  tx->affinity_changed = false;
  if (tx->own_pidns >= 0)
    {
      setns (tx->own_pidns, CLONE_NEWPID);
      close (tx->own_pidns);
      tx->own_pidns = -1;
    }
}

/* Rootless (join_pidns): the child we cloned forked the exec's process in
   the container's pid namespace as our child and exits; from now on that
   process is the exec's. */
static int
take_grandchild (struct ab_exec *x, ab_error_t *err)
{
  struct ab_sync_msg m;
  int st, fd;

  if (ab_sync_expect (x->sync_fd, AB_SYNC_PID, &m, err) < 0)
    {
      waitpid (x->pid, &st, 0);
      return -1;
    }
  waitpid (x->pid, &st, 0);
  fd = (int)syscall (SYS_pidfd_open, (pid_t)m.value, 0);
  if (fd < 0)
    return ab_error_set (err, errno, "pidfd_open the exec process %d", (int)m.value);
  close (x->pidfd);
  x->pidfd = fd;
  x->pid = (pid_t)m.value;
  return 0;
}

/* clone3 the child into the exec's cgroup, on the CPUs of
   execCPUAffinity.initial. */
static int
exec_spawn (struct exec_tx *tx, ab_error_t *err)
{
  const struct ab_process *p = tx->plan->process;
  struct ab_exec *x = tx->x;
  struct clone_args args = { .flags = CLONE_PIDFD, .pidfd = (uint64_t)(uintptr_t)&x->pidfd, .exit_signal = SIGCHLD };
  int into = x->subcg_fd >= 0 ? x->subcg_fd : x->cg_dirfd;
  pid_t pid;

  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, tx->sp) < 0)
    return ab_error_set (err, errno, "socketpair");
  tx->xc.sync_fd = tx->sp[1];
  if (p->exec_cpu_affinity_initial && *p->exec_cpu_affinity_initial)
    {
      cpu_set_t set;
      sched_getaffinity (0, sizeof tx->saved, &tx->saved);
      if (ab_parse_id_list (p->exec_cpu_affinity_initial, set.__bits, CPU_SETSIZE) < 0)
        return ab_error_setc (err, AB_EC_CONFIG, EINVAL, "process.execCPUAffinity.initial: `%s`",
                              p->exec_cpu_affinity_initial);
      if (sched_setaffinity (0, sizeof set, &set) < 0)
        return ab_error_set (err, errno, "process.execCPUAffinity.initial");
      tx->affinity_changed = true;
    }
  if (x->cg && ab_cgroup_selfjoin_open (x->cg, &tx->xc.cg_join, &tx->xc.n_cg_join, err) < 0)
    return -1;
  ab_signals_snapshot (); /* what the child inherits: see process.c */
  if (into >= 0)
    {
      args.flags |= CLONE_INTO_CGROUP;
      args.cgroup = (uint64_t)into;
    }
  pid = (pid_t)syscall (SYS_clone3, &args, sizeof args);
  if (pid < 0 && errno == EBUSY && (args.flags & CLONE_INTO_CGROUP))
    {
      args.flags &= ~(uint64_t)CLONE_INTO_CGROUP;
      pid = (pid_t)syscall (SYS_clone3, &args, sizeof args);
    }
  if (pid == 0)
    {
      close (tx->sp[0]);
      exec_child_main (&tx->xc);
    }
  ab_cgroup_selfjoin_free (&tx->xc.cg_join, &tx->xc.n_cg_join);
  exec_restore (tx);
  close (tx->sp[1]);
  tx->sp[1] = -1;
  x->sync_fd = tx->sp[0];
  tx->sp[0] = -1;
  if (pid < 0)
    return ab_error_set (err, errno, "clone3 the exec process");
  tx->spawned = true;
  tx->into_cgroup = (args.flags & CLONE_INTO_CGROUP) != 0;
  x->pid = pid;
  if (tx->xc.join_pid && take_grandchild (x, err) < 0)
    return -1;
  x->pgid = tx->xc.own_pgrp && !p->terminal ? x->pid : 0;
  {
    char path[64];
    struct stat st;
    snprintf (path, sizeof path, "/proc/%d/ns/pid", (int) tx->c->pid);
    if (stat (path, &st) == 0)
      {
        x->init_pid = tx->c->pid;
        x->init_pidns = st.st_ino;
      }
  }
  return 0;
}

/* The child in its cgroup, told so, and waited for until it executed the
   program (a seccomp listener is passed on the way). */
static int
exec_sync (struct exec_tx *tx, ab_error_t *err)
{
  struct ab_exec *x = tx->x;
  struct ab_listener_target t = {
    .c = tx->c, .sc = tx->spec->linux_ ? tx->spec->linux_->seccomp : NULL, .status = tx->status,
    .pid = x->pid, .pidfd = x->pidfd,
  };

  /* --ignore-paused: the child is frozen with the container until a
     resume, which takes the container's lock; ours goes now, not when the
     process has started.  A delete meanwhile kills the child, and the
     wait below fails. */
  if (tx->status == AB_STATUS_PAUSED && ab_container_unlock (tx->c, err) < 0)
    return -1;
  if (x->cg && ab_cgroup_enter (x->cg, x->pid, tx->into_cgroup, true, err) < 0)
    return -1;
  if (ab_sync_send (x->sync_fd, AB_SYNC_CGROUPS_DONE, 0, err) < 0 || ab_await_exec (x->sync_fd, true, &t, err) < 0)
    {
      if (tx->status == AB_STATUS_PAUSED)
        ab_error_prefix (err, "container `%s` was killed while the exec waited for its resume", tx->o->id);
      return -1;
    }
  /* The child sent the master before STARTED. */
  if (tx->relay >= 0 && (x->pty_master = ab_console_relay_take (&tx->relay, err)) < 0)
    return -1;
  return 0;
}

static int
exec_commit (struct exec_tx *tx, ab_error_t *err)
{
  if (tx->o->pid_file && ab_write_pid_file (tx->o->pid_file, NULL, tx->x->pid, err) < 0)
    return -1;
  if (tx->pidfd_sock >= 0 && ab_send_fds (tx->pidfd_sock, &tx->x->pidfd, 1, err) < 0)
    return ab_error_prefix (err, "--pidfd-socket `%s`", tx->o->pidfd_socket);
  return 0;
}

/* Everything the phases held, once; on failure the child too (killed and
   reaped) and the ab_exec. */
static void
exec_close (struct exec_tx *tx, bool failed)
{
  if (failed && tx->spawned)
    {
      siginfo_t info;
      ab_exec_kill_all (tx->x);
      while (waitid (P_PIDFD, (id_t)tx->x->pidfd, &info, WEXITED) < 0 && errno == EINTR)
        ;
    }
  exec_restore (tx);
  ab_closep_now (&tx->sp[0]);
  ab_closep_now (&tx->sp[1]);
  ab_closep_now (&tx->console_fd);
  ab_closep_now (&tx->pidfd_sock);
  ab_closep_now (&tx->relay);
  ab_closep_now (&tx->init_pidfd);
  if (tx->have_prog)
    ab_seccomp_prog_free (&tx->prog);
  ab_ll_ruleset_free (&tx->landlock);
  ab_plan_free (tx->plan);
  ab_spec_free (tx->spec);
  ab_container_free (tx->c);
  if (failed)
    ab_exec_free (tx->x);
}

int
ab_exec_start (const struct ab_exec_opts *o, struct ab_exec **out, ab_error_t *err)
{
  static int (*const phases[]) (struct exec_tx *, ab_error_t *)
      = { exec_plan, exec_realize, exec_spawn, exec_sync, exec_commit };
  struct exec_tx tx = {
    .o = o,
    .change = { .process_file = o->process_file, .args = &o->args, .cwd = o->cwd, .env = &o->env,
                .user_set = o->user_set, .uid = o->uid, .gid = o->gid, .gid_set = o->gid_set,
                .add_gids = o->add_gids, .n_add_gids = o->n_add_gids,
                .add_caps = &o->add_caps, .tty = o->tty, .no_new_privs = o->no_new_privs,
                .tty_rows = o->tty_rows, .tty_cols = o->tty_cols,
                .apparmor_profile = o->apparmor_profile, .selinux_label = o->selinux_label },
    .sp = { -1, -1 }, .console_fd = -1, .init_pidfd = -1, .own_pidns = -1, .relay = -1,
    .pidfd_sock = -1,
  };
  struct ab_exec *x = tx.x = xzalloc (sizeof *x);
  int r = 0;

  x->pidfd = x->sync_fd = x->cg_dirfd = x->subcg_fd = x->pty_master = -1;
  ab_set_step ("exec");
  for (size_t i = 0; r == 0 && i < AB_ARRAY_SIZE (phases); i++)
    r = phases[i](&tx, err);
  exec_close (&tx, r < 0);
  if (r == 0)
    *out = x;
  return r;
}
