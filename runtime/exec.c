#include "config.h"

#include <fcntl.h>
#include <linux/keyctl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/random.h>
#include <sys/wait.h>

#include "runtime/cgroup.h"
#include "runtime/console.h"
#include "runtime/exec.h"
#include "runtime/landlock-rules.h"
#include "runtime/lifecycle-internal.h"
#include "runtime/network.h"
#include "runtime/log.h"
#include "runtime/process.h"
#include "runtime/seccomp.h"
#include "runtime/sync.h"
#include "runtime/util.h"
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
}

struct exec_child
{
  const struct ab_process *p;
  const struct ab_spec *spec;
  const struct ab_seccomp_prog *seccomp;
  const struct ab_ll_ruleset *landlock; /* NULL: none */
  int sync_fd;
  int console_fd;
  int pidfd; /* the container's init, to join its namespaces */
  int ns_flags;
  int stdio[3];
  int preserve_fds;
  bool detach;
  bool allow_setgroups;
  bool own_pgrp;                      /* no sub-cgroup to kill it by: its own process group instead */
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
  prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);
  if (!x->detach)
    prctl (PR_SET_PDEATHSIG, SIGKILL);
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
  close (x->pidfd);
  x->pidfd = -1;
  /* In a joined user namespace, become its root where it maps one, as
     runc's nsexec does: our host ids are unmapped in there, so nothing
     could be chowned to the process's user (the pty of --tty: EPERM).
     A change of ids resets dumpable to fs.suid_dumpable: set it again. */
  if ((x->ns_flags & CLONE_NEWUSER) && setresgid (0, 0, 0) == 0 && setresuid (0, 0, 0) == 0)
    {
      ab_process_ids_root ();
      prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);
    }

  /* Never the caller's session keyring. */
  syscall (SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL);
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
  return ab_process_exec (x->p, x->seccomp, x->allow_setgroups, x->sync_fd, landlock_fd, err);
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

static int
process_from_file (const char *path, struct ab_spec *s, ab_error_t *err)
{
  _cleanup_free_ char *buf = NULL;
  _cleanup_free_ char *doc = NULL;
  struct ab_spec *tmp;
  size_t len;

  if (ab_read_file_at (AT_FDCWD, path, AB_CONFIG_MAX_BYTES, &buf, &len, err) < 0)
    return ab_error_prefix (err, "--process");
  /* The process object goes through the config parser, with all its checks. */
  doc = xasprintf ("{\"ociVersion\":\"%s\",\"root\":{\"path\":\"/\"},\"process\":%s\n}", AB_OCI_VERSION, buf);
  tmp = ab_spec_parse (doc, strlen (doc), err);
  if (tmp == NULL)
    return ab_error_prefix (err, "--process `%s`", path);
  if (tmp->process == NULL)
    {
      ab_spec_free (tmp);
      return ab_error_setc (err, AB_EC_CONFIG, 0, "--process `%s`: not a process object", path);
    }
  /* swap the process in */
  {
    struct ab_process *p = s->process;
    s->process = tmp->process;
    tmp->process = p;
  }
  ab_spec_free (tmp);
  return 0;
}

static int
apply_overrides (const struct ab_exec_opts *o, struct ab_spec *s, ab_error_t *err)
{
  struct ab_process *p = s->process;
  size_t i;

  if (o->process_file)
    return process_from_file (o->process_file, s, err);
  if (p == NULL)
    return ab_error_setc (err, AB_EC_CONFIG, 0,
                          "the container's config has no process to take defaults from");
  if (o->args.n == 0)
    return ab_error_setc (err, AB_EC_USAGE, 0, "exec: missing the program to run");
  ab_strv_free (&p->args);
  for (i = 0; i < o->args.n; i++)
    ab_strv_push (&p->args, o->args.v[i]);
  if (o->cwd)
    {
      free (p->cwd);
      p->cwd = xstrdup (o->cwd);
    }
  for (i = 0; i < o->env.n; i++)
    {
      const char *eq = strchr (o->env.v[i], '=');
      size_t nl = (size_t)(eq - o->env.v[i]), k;
      for (k = 0; k < p->env.n; k++)
        if (strncmp (p->env.v[k], o->env.v[i], nl) == 0 && p->env.v[k][nl] == '=')
          {
            free (p->env.v[k]);
            p->env.v[k] = xstrdup (o->env.v[i]);
            break;
          }
      if (k == p->env.n)
        ab_strv_push (&p->env, o->env.v[i]);
    }
  if (o->user_set)
    {
      p->user.uid = o->uid;
      p->user.gid = o->gid_set ? o->gid : o->uid;
      free (p->user.additional_gids);
      p->user.additional_gids = NULL;
      p->user.n_additional_gids = 0;
    }
  for (i = 0; i < o->add_caps.n; i++)
    {
      /* Bounding, effective and permitted, as runc and crun: never
         inheritable or ambient, which would carry the capability across
         execve into programs that were never meant to hold it. */
      static const int sets[] = { AB_CAP_BOUNDING, AB_CAP_EFFECTIVE, AB_CAP_PERMITTED };
      int cap = ab_cap_from_name (o->add_caps.v[i]);
      if (cap < 0)
        return ab_error_setc (err, AB_EC_USAGE, 0, "exec: --cap: unknown capability `%s`", o->add_caps.v[i]);
      for (size_t k = 0; k < AB_ARRAY_SIZE (sets); k++)
        {
          p->caps.set[sets[k]] = true;
          p->caps.mask[sets[k]] |= 1ull << cap;
        }
    }
  if (o->no_new_privs)
    p->no_new_privileges = true;
  p->terminal = o->tty;
  return 0;
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

/* The exec's own cgroup below the container's v2 cgroup: tracking and
   cgroup.kill for just this command, while the container's limits (its
   ancestors) still apply. */
static int
make_subcgroup (struct ab_exec *x)
{
  uint32_t rnd = 0;

  if (x->cg_dirfd < 0)
    return -1;
  if (getrandom (&rnd, sizeof rnd, 0) < 0)
    rnd = (uint32_t)ab_now_monotonic_ns ();
  snprintf (x->subcg, sizeof x->subcg, "exec-%d-%08x", (int)getpid (), rnd);
  if (mkdirat (x->cg_dirfd, x->subcg, 0755) < 0)
    {
      x->subcg[0] = '\0';
      return -1;
    }
  x->subcg_fd = openat (x->cg_dirfd, x->subcg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (x->subcg_fd < 0)
    {
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
  if (x->pgid > 0)
    kill (-x->pgid, SIGKILL);
  if (x->pidfd >= 0)
    syscall (SYS_pidfd_send_signal, x->pidfd, SIGKILL, NULL, 0);
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
  if (x->subcg_fd >= 0)
    close (x->subcg_fd);
  if (x->pidfd >= 0)
    close (x->pidfd);
  if (x->sync_fd >= 0)
    close (x->sync_fd);
  if (x->pty_master >= 0)
    close (x->pty_master);
  ab_cgroup_free (x->cg);
  ab_strv_free (&x->degraded);
  free (x->before);
  free (x);
}

/* The container's landlock rules, as create derived them (the config's
   mounts and network annotations: exec does not know create's
   --egress-policy baseline, which can only narrow what the wall passes). */
static int
exec_landlock (const struct ab_spec *spec, struct ab_ll_ruleset *fit, struct ab_strv *degraded, ab_error_t *err)
{
  struct ab_ll_net net;

  if (spec->landlock.mode != AB_LL_MODE_AUTO && spec->landlock.mode != AB_LL_MODE_POLICY)
    return 0;
  if (ab_net_landlock_spec (spec, &net, err) < 0)
    return -1;
  return ab_landlock_plan (spec, spec->mounts, spec->n_mounts, &net, fit, degraded, err);
}

int
ab_exec_start (const struct ab_exec_opts *o, struct ab_exec **out, ab_error_t *err)
{
  _cleanup_container_ struct ab_container *c = NULL;
  struct ab_spec *spec = NULL;
  struct ab_seccomp_prog prog = { 0 };
  struct ab_ll_ruleset landlock = { 0 };
  bool have_prog = false, pid_differs;
  struct ab_exec *x = xzalloc (sizeof *x);
  struct exec_child xc;
  struct clone_args args;
  int sp[2] = { -1, -1 }, console_fd = -1, init_pidfd = -1, own_pidns = -1, relay = -1, status;
  cpu_set_t saved;
  bool affinity_changed = false;
  pid_t pid;

  x->pidfd = x->sync_fd = x->cg_dirfd = x->subcg_fd = x->pty_master = -1;
  ab_set_step ("exec");
  if (ab_container_load (o->root, o->id, false, &c, err) < 0)
    goto fail;
  status = ab_state_status (c->dirfd, c->state);
  if (status == AB_STATUS_PAUSED)
    {
      ab_error_setc (err, AB_EC_STATE, 0, "cannot exec in container `%s`: it is paused", o->id);
      goto fail;
    }
  if (status != AB_STATUS_RUNNING && status != AB_STATUS_CREATED)
    {
      ab_error_setc (err, AB_EC_STATE, 0, "cannot exec in container `%s`: container not running", o->id);
      goto fail;
    }
  init_pidfd = ab_state_pidfd (c->state);
  if (init_pidfd < 0)
    {
      ab_error_setc (err, AB_EC_STATE, ESRCH, "cannot exec in container `%s`: container not running", o->id);
      goto fail;
    }
  spec = ab_container_load_spec (c, err);
  if (spec == NULL || apply_overrides (o, spec, err) < 0)
    goto fail;
  if (spec->process->terminal && o->console_socket == NULL && !o->relay_tty)
    {
      /* runc: "cannot allocate tty if runc will detach without setting
         console socket" */
      ab_error_setc (err, AB_EC_USAGE, 0,
                     "exec --tty --detach needs --console-socket (in the foreground agentbox relays the terminal)");
      goto fail;
    }
  if (spec->process->terminal && o->tty_rows && o->tty_cols)
    {
      /* The caller's size, set by the child before the program runs. */
      spec->process->console_size_set = true;
      spec->process->console_height = o->tty_rows;
      spec->process->console_width = o->tty_cols;
    }
  if (spec->linux_ && spec->linux_->seccomp)
    {
      if (ab_seccomp_compile_cached (spec->linux_->seccomp, &prog, err) < 0)
        goto fail;
      have_prog = true;
    }
  if (exec_landlock (spec, &landlock, &x->degraded, err) < 0)
    goto fail;
  if (o->console_socket && (console_fd = ab_console_socket_connect (o->console_socket, err)) < 0)
    goto fail;
  if (!o->console_socket && spec->process->terminal && (console_fd = ab_console_relay_pair (&relay, err)) < 0)
    goto fail;

  x->cg = ab_steal_ptr (&c->cg);
  if (x->cg)
    {
      int fd = ab_cgroup_clone_fd (x->cg);
      if (fd >= 0)
        x->cg_dirfd = fcntl (fd, F_DUPFD_CLOEXEC, 3);
      x->before = xzalloc (sizeof *x->before);
      ab_cgroup_stats (x->cg, x->before, NULL);
    }
  /* A detached exec outlives us: it stays in the container's cgroup. */
  if (!o->detach)
    make_subcgroup (x);

  memset (&xc, 0, sizeof xc);
  xc.p = spec->process;
  xc.spec = spec;
  xc.seccomp = have_prog ? &prog : NULL;
  xc.landlock = ab_landlock_enforces (&landlock) ? &landlock : NULL;
  xc.console_fd = console_fd;
  xc.pidfd = init_pidfd;
  xc.ns_flags = differing_namespaces (c->pid, &pid_differs);
  memcpy (xc.stdio, o->stdio, sizeof xc.stdio);
  xc.preserve_fds = o->preserve_fds;
  xc.detach = o->detach;
  xc.allow_setgroups = setgroups_allowed (c->pid);
  xc.own_pgrp = x->subcg_fd < 0 && !o->detach;

  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
    {
      ab_error_set (err, errno, "socketpair");
      goto fail;
    }
  xc.sync_fd = sp[1];
  /* Children of ours are born in the container's pid namespace: only this
     one.  Keep our own to switch back right after the clone (anything we
     fork later, or a sanitizer's tracer thread, must stay in ours). */
  if (pid_differs)
    {
      own_pidns = open ("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
      if (own_pidns < 0 || setns (init_pidfd, CLONE_NEWPID) < 0)
        {
          ab_error_set (err, errno, "join the container's pid namespace");
          goto fail;
        }
    }
  if (spec->process->exec_cpu_affinity_initial && *spec->process->exec_cpu_affinity_initial)
    {
      cpu_set_t set;
      sched_getaffinity (0, sizeof saved, &saved);
      if (ab_parse_id_list (spec->process->exec_cpu_affinity_initial, set.__bits, CPU_SETSIZE) < 0)
        {
          ab_error_setc (err, AB_EC_CONFIG, EINVAL, "process.execCPUAffinity.initial: `%s`",
                         spec->process->exec_cpu_affinity_initial);
          goto fail;
        }
      if (sched_setaffinity (0, sizeof set, &set) < 0)
        {
          ab_error_set (err, errno, "process.execCPUAffinity.initial");
          goto fail;
        }
      affinity_changed = true;
    }

  if (x->cg && ab_cgroup_selfjoin_open (x->cg, &xc.cg_join, &xc.n_cg_join, err) < 0)
    goto fail;
  ab_signals_snapshot (); /* what the child inherits: see process.c */
  memset (&args, 0, sizeof args);
  args.flags = CLONE_PIDFD;
  args.pidfd = (uint64_t)(uintptr_t)&x->pidfd;
  args.exit_signal = SIGCHLD;
  {
    int into = x->subcg_fd >= 0 ? x->subcg_fd : x->cg_dirfd;
    if (into >= 0)
      {
        args.flags |= CLONE_INTO_CGROUP;
        args.cgroup = (uint64_t)into;
      }
  }
  pid = (pid_t)syscall (SYS_clone3, &args, sizeof args);
  if (pid < 0 && errno == EBUSY && (args.flags & CLONE_INTO_CGROUP))
    {
      args.flags &= ~(uint64_t)CLONE_INTO_CGROUP;
      pid = (pid_t)syscall (SYS_clone3, &args, sizeof args);
    }
  if (pid == 0)
    {
      close (sp[0]);
      exec_child_main (&xc);
    }
  ab_cgroup_selfjoin_free (&xc.cg_join, &xc.n_cg_join);
  if (affinity_changed)
    sched_setaffinity (0, sizeof saved, &saved);
  if (own_pidns >= 0)
    {
      setns (own_pidns, CLONE_NEWPID);
      close (own_pidns);
      own_pidns = -1;
    }
  close (sp[1]);
  sp[1] = -1;
  x->sync_fd = sp[0];
  sp[0] = -1;
  if (pid < 0)
    {
      ab_error_set (err, errno, "clone3 the exec process");
      goto fail;
    }
  x->pid = pid;
  x->pgid = xc.own_pgrp && !spec->process->terminal ? pid : 0;
  if (x->cg && ab_cgroup_enter (x->cg, pid, (args.flags & CLONE_INTO_CGROUP) != 0, true, err) < 0)
    goto fail_child;
  {
    struct ab_listener_target t = {
      .c = c, .sc = spec->linux_ ? spec->linux_->seccomp : NULL, .status = status, .pid = pid, .pidfd = x->pidfd,
    };
    if (ab_sync_send (x->sync_fd, AB_SYNC_CGROUPS_DONE, 0, err) < 0
        || ab_await_exec (x->sync_fd, true, &t, err) < 0)
      goto fail_child;
  }
  /* The child sent the master before STARTED. */
  if (relay >= 0 && (x->pty_master = ab_console_relay_take (&relay, err)) < 0)
    goto fail_child;
  if (o->pid_file && ab_write_pid_file (o->pid_file, NULL, pid, err) < 0)
    goto fail_child;
  if (have_prog)
    ab_seccomp_prog_free (&prog);
  ab_ll_ruleset_free (&landlock);
  if (console_fd >= 0)
    close (console_fd);
  close (init_pidfd);
  ab_spec_free (spec);
  *out = x;
  return 0;

fail_child:
  {
    siginfo_t info;
    ab_exec_kill_all (x);
    while (waitid (P_PIDFD, (id_t)x->pidfd, &info, WEXITED) < 0 && errno == EINTR)
      ;
  }
fail:
  if (own_pidns >= 0)
    {
      setns (own_pidns, CLONE_NEWPID);
      close (own_pidns);
    }
  if (sp[0] >= 0)
    close (sp[0]);
  if (sp[1] >= 0)
    close (sp[1]);
  if (console_fd >= 0)
    close (console_fd);
  if (relay >= 0)
    close (relay);
  if (init_pidfd >= 0)
    close (init_pidfd);
  if (have_prog)
    ab_seccomp_prog_free (&prog);
  ab_ll_ruleset_free (&landlock);
  ab_spec_free (spec);
  ab_exec_free (x);
  return -1;
}
