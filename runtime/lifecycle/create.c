/* create: from a bundle to a container process blocked before exec.
 *
 * Parent                                   Child (clone3 into namespaces + cgroup)
 *   state dir, config snapshot, cgroups
 *   clone3 ------------------------------>  (blocked)
 *   uid/gid maps   --- IDS_DONE ------->     become root of the user ns
 *   v1 cgroups, net, oom/sched/ioprio        mounts, /dev (in parallel)
 *                  --- CGROUPS_DONE --->
 *                  <-- MOUNTS_DONE -----
 *   prestart, createRuntime hooks
 *                  --- HOOKS_DONE ----->     createContainer hooks, pivot_root, ...
 *                  <-- CREATED ---------
 *   state "created", pid file
 *                  --- CREATED_ACK ---->     wait for start
 *
 * Any failure on either side kills the child and removes everything made so
 * far: no process, cgroup, mount or state directory is left behind. */
#include "config.h"

#include <fcntl.h>
#include <linux/ioprio.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "hooks/hooks.h"
#include "runtime/cache.h"
#include "runtime/caps.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/child.h"
#include "runtime/console.h"
#include "runtime/lifecycle/container.h"
#include "runtime/lifecycle/lifecycle-internal.h"
#include "base/log.h"
#include "base/nsenter.h"
#include "runtime/fallback.h"
#include "runtime/idmap.h"
#include "runtime/landlock.h"
#include "runtime/lsm.h"
#include "runtime/lifecycle/network.h"
#include "runtime/lifecycle/wsstore.h"
#include "runtime/process.h"
#include "base/resolve.h"
#include "runtime/ns.h"
#include "runtime/plan/host-ids.h"
#include "runtime/plan/plan.h"
#include "spec/annotations.h"
#include "runtime/seccomp.h"
#include "runtime/sync.h"
#include "runtime/warm.h"
#include "base/util.h"
#include "spec/bundle-links.h"
#include "base/gen.h"
#include "spec/tables.h"

void
ab_create_opts_init (struct ab_create_opts *o)
{
  memset (o, 0, sizeof *o);
  o->stdio[0] = o->stdio[1] = o->stdio[2] = -1;
  o->rootless = -1;
}

int
ab_container_check (const struct ab_bundle *b, bool foreground, struct ab_ns_setup *ns, ab_error_t *err)
{
  const struct ab_spec *s = b->spec;
  struct ab_ns_setup only_checked;

  if (ab_spec_check_supported (s, err) < 0)
    return -1;
  if (ab_lsm_check (s->process, err) < 0)
    return ab_error_prefix (err, "config.json");
  /* create refuses a hard limit above ours now, as runc does (orchestrators
     report create's error); a foreground run gets the same error from
     the child's setrlimit, and no prlimit per limit for the common case
     where all fit. */
  if (!foreground && ab_rlimits_check (s->process, s->linux_->ns[AB_NS_USER].present, err) < 0)
    return -1;
  /* Namespace paths are the host's files: what each is, and whether it is
     the runtime's own (runtime/ns.c), is known only by opening it. */
  if (ab_ns_setup_init (s, b, ns ? ns : &only_checked, err) < 0)
    return -1;
  if (ns == NULL)
    ab_ns_setup_close (&only_checked);
  return 0;
}

int
ab_container_plan (const struct ab_spec *s, const struct ab_plan_opts *po_in, const char *cgroup_parent,
                   struct ab_plan **out, ab_error_t *err)
{
  struct ab_plan_opts po = *po_in;
  struct ab_cgroup_deleg d = { 0 };
  _cleanup_strv_ struct ab_strv unenforced = { 0 };
  struct ab_plan_cgroups pc = { 0 };
  struct ab_host_ids h;
  int r;

  ab_host_ids_read (&h);
  /* Decided here, once: the plan must not read the host again and come to
     another answer (a rootless plan with a rootful cgroup, or the reverse). */
  po.rootless = ab_host_rootless (&h, po.rootless) ? 1 : 0;
  ab_host_ids_free (&h);
  if (po.exec || !po.rootless)
    return ab_plan_build (s, &po, out, err);
  /* Rootless: a cgroup only where one is delegated to us. */
  if (ab_cgroup_delegation (cgroup_parent, &d, err) < 0)
    return -1;
  ab_cgroup_unenforced (&d, s->linux_ ? s->linux_->resources : NULL, &unenforced);
  pc = (struct ab_plan_cgroups){ .usable = d.usable, .parent = d.parent, .unenforced = &unenforced, .fix = d.fix };
  po.cgroups = &pc;
  r = ab_plan_build (s, &po, out, err);
  ab_cgroup_deleg_free (&d);
  return r;
}

/* What the command line must give for this config. */
static int
check_usage (const struct ab_create_opts *o, const struct ab_spec *s, ab_error_t *err)
{
  /* runc: "cannot allocate tty if runc will detach without setting console
     socket".  Only a foreground run stays to relay the terminal. */
  if (s->process->terminal && o->console_socket == NULL && !o->relay_tty)
    return ab_error_setc (err, AB_EC_USAGE, 0,
                          "process.terminal is true: --console-socket is required when detached (create, run "
                          "--detach); a foreground run relays the terminal itself");
  if (!s->process->terminal && o->console_socket != NULL)
    return ab_error_setc (err, AB_EC_USAGE, 0, "--console-socket given but process.terminal is false");
  return 0;
}

/* config.md: a capability that cannot be mapped to a kernel interface is
   logged as a warning and the runtime should not fail.  The parser refused
   every name capabilities(7) does not define; what is left here is a real
   capability this kernel is too old for (above cap_last_cap): it cannot be
   granted, so it is dropped, and the result record says so. */
static void
warn_unsupported (const struct ab_plan *p, struct ab_strv *degraded)
{
  const struct ab_spec *s = p->spec;
  const struct ab_capabilities *caps = &p->process->caps;
  uint64_t lost
      = caps->mask[AB_CAP_AMBIENT] & ~(caps->mask[AB_CAP_PERMITTED] & caps->mask[AB_CAP_INHERITABLE]);
  uint64_t any = 0;
  int last;
  size_t i;

  for (int k = 0; k < AB_CAP__SETS; k++)
    any |= caps->mask[k];
  /* No capability asked for (the hardened profile): none to find too new,
     and no need to ask the kernel here (the child's drop of the bounding
     set finds the last capability itself). */
  last = any ? ab_caps_last_cap () : -1;

  for (i = 0; i < s->warnings.n; i++)
    ab_warn ("%s", s->warnings.v[i]);
  /* (last < 0 with capabilities: the kernel could not be asked; the
     child asks again, and fails the create if it cannot either.) */
  for (int k = 0; k < AB_CAP__SETS && last >= 0; k++)
    {
      char **v = NULL;
      size_t n = ab_caps_beyond_kernel (caps->mask[k], last, &v);
      for (i = 0; i < n; i++)
        {
          char *msg
              = xasprintf ("process.capabilities.%s: %s is newer than this kernel (cap_last_cap %d): dropped",
                           ab_capset_name (k), v[i], last);
          ab_warn ("%s", msg);
          ab_strv_push_owned (degraded, msg);
          free (v[i]);
        }
      free (v);
    }
  for (i = 0; i <= AB_CAP_LAST; i++)
    if (lost & (1ull << i))
      ab_log (
          AB_LOG_INFO,
          "process.capabilities.ambient: %s is not both permitted and inheritable; the kernel cannot raise "
          "it",
          ab_cap_name ((int)i) ? ab_cap_name ((int)i) : "?");
}

int
ab_write_pid_file (const char *path, const struct ab_bundle *b, pid_t pid, ab_error_t *err)
{
  _cleanup_free_ char *dir = xstrdup (path);
  _cleanup_close_ int dfd = -1;
  char *slash = strrchr (dir, '/');
  const char *name = path;
  char buf[32];
  int n;

  if (slash)
    {
      *slash = '\0';
      name = slash + 1;
      /* containerd and podman keep the pid file in the bundle directory:
         there, its directory resolves beneath the bundle, so a symlink of
         the image cannot make us create a file in a host directory. */
      if (b && dir[0] == '/')
        dfd = ab_bundle_open_file (b->dir, b->rootfs, dir, O_PATH | O_DIRECTORY, "--pid-file: directory",
                                   err);
      else
        dfd = open (*dir ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    }
  else
    dfd = open (".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    return b && slash && dir[0] == '/' ? -1
                                       : ab_error_set (err, errno, "--pid-file `%s`: open directory", path);
  /* Bare digits, no newline: what containerd and podman parse. */
  n = snprintf (buf, sizeof buf, "%d", (int)pid);
  if (ab_write_file_atomic (dfd, name, buf, (size_t)n, 0644, err) < 0)
    return ab_error_prefix (err, "--pid-file `%s`", path);
  return 0;
}

/* The start socket lives in the state directory; bind through
   /proc/self/fd/N so that a long --root cannot overflow sun_path. */
static int
start_socket_listen (int dirfd, ab_error_t *err)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  int fd = socket (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

  if (fd < 0)
    return ab_error_set (err, errno, "start socket");
  snprintf (sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d/" AB_START_SOCK, dirfd);
  if (bind (fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen (fd, 4) < 0)
    {
      int e = errno;
      close (fd);
      return ab_error_set (err, e, "bind the start socket");
    }
  return fd;
}

static int
apply_process_attrs (pid_t pid, const struct ab_process *p, ab_error_t *err)
{
  ab_set_step ("process");
  /* From the parent, which holds the host privileges these need (lowering
     oom_score_adj, real-time policies and the RT I/O class check the
     initial user namespace). */
  if (p->oom_score_adj_set)
    {
      char path[64], buf[16];
      int n = snprintf (buf, sizeof buf, "%d", p->oom_score_adj);
      snprintf (path, sizeof path, "/proc/%d/oom_score_adj", (int)pid);
      if (ab_write_file_at (AT_FDCWD, path, buf, (size_t)n, err) < 0)
        return ab_error_prefix (err, "process.oomScoreAdj");
    }
  if (p->scheduler)
    {
      struct
      {
        uint32_t size;
        uint32_t policy;
        uint64_t flags;
        int32_t nice;
        uint32_t priority;
        uint64_t runtime, deadline, period;
      } a = { .size = 48 };
      static const int policies[]
          = { [AB_SCHED_OTHER] = 0, [AB_SCHED_FIFO] = 1, [AB_SCHED_RR] = 2,      [AB_SCHED_BATCH] = 3,
              [AB_SCHED_ISO] = 4,   [AB_SCHED_IDLE] = 5, [AB_SCHED_DEADLINE] = 6 };
      a.policy = (uint32_t)policies[p->scheduler->policy];
      a.flags = p->scheduler->flags;
      a.nice = p->scheduler->nice;
      a.priority = (uint32_t)p->scheduler->priority;
      a.runtime = p->scheduler->runtime;
      a.deadline = p->scheduler->deadline;
      a.period = p->scheduler->period;
      if (syscall (SYS_sched_setattr, pid, &a, 0) < 0)
        return ab_error_setc (err, AB_EC_CONFIG, errno, "process.scheduler: sched_setattr");
    }
  if (p->io_priority)
    {
      int v = IOPRIO_PRIO_VALUE (p->io_priority->klass, p->io_priority->priority);
      if (syscall (SYS_ioprio_set, IOPRIO_WHO_PROCESS, pid, v) < 0)
        return ab_error_setc (err, AB_EC_CONFIG, errno, "process.ioPriority: ioprio_set");
    }
  return 0;
}

/* A step of ours failed because the child had already failed: what the
   child said is the real error. */
static void
prefer_child_error (struct ab_container *c, ab_error_t *err)
{
  struct ab_sync_msg m;
  struct pollfd p = { .fd = c->sync_fd, .events = POLLIN };

  if (c->sync_fd < 0 || err == NULL || err->cls == AB_EC_CONFIG || err->cls == AB_EC_USAGE)
    return;
  /* give a dying child a moment to have its message queued */
  if (poll (&p, 1, 100) > 0 && recv (c->sync_fd, &m, sizeof m, MSG_DONTWAIT) == (ssize_t)sizeof m
      && m.type == AB_SYNC_ERROR)
    {
      m.err.msg[sizeof m.err.msg - 1] = '\0';
      *err = m.err;
      return;
    }
  ab_explain_dead_child (c->pidfd, err);
}

/* The detached mount trees the child gets: the root filesystem's, then
   one for every mount the parent opens (fds[i], -1 for the others). */
struct trees
{
  struct ab_container *c;
  pid_t pid;
  bool userns;
  bool elsewhere; /* made in a mount namespace of the helper's, not the one the bundle was loaded in */
  int root;
  int *fds;
  ab_error_t err;
};

static int
make_trees (void *arg)
{
  struct trees *t = arg;
  const struct ab_plan *p = t->c->plan;

  ab_set_step ("rootfs");
  t->root = ab_rootfs_tree (t->c->bundle, t->pid, p->rootfs_idmap, t->elsewhere, &t->err);
  if (t->root < 0)
    return -1;
  ab_set_step ("idmap");
  if (ab_idmap_prepare (t->c->bundle, p->mounts, p->n_mounts, t->pid, t->userns, t->fds, &t->err) < 0)
    return -1;
  /* An overlay workspace: its overlay in place of the bind's tree. */
  if (t->c->ws && ab_changeset_overlay (t->c->ws, &t->fds[p->spec->workspace.mount], "workspace", &t->err) < 0)
    return -1;
  return 0;
}

/* Rootless: cloning a tree of a mount (open_tree) needs CAP_SYS_ADMIN over
   the mount namespace the caller is in, which is the host's, root's.  So
   the trees are made by a helper in the container's user namespace and in
   the child's mount namespace (a copy of ours, owned by that namespace,
   which the child leaves untouched until it has the trees), where it holds
   that capability, with the same resolution of every path as below (the
   helper shares our memory and fd table: base/nsenter.h).  Only detached
   trees are made there: nothing is attached to the child's mounts.  (A
   mount namespace of the helper's own would be a second copy of the host's
   mount table to make and tear down on every start.) */
static int
make_trees_rootless (struct trees *t, ab_error_t *err)
{
  char path[64];
  _cleanup_close_ int userns = -1, mntns = -1;
  struct ab_nsenter ns = { .netns_fd = -1 };

  snprintf (path, sizeof path, "/proc/%d/ns/user", (int) t->pid);
  userns = open (path, O_RDONLY | O_CLOEXEC);
  if (userns < 0)
    return ab_error_set (err, errno, "open %s", path);
  snprintf (path, sizeof path, "/proc/%d/ns/mnt", (int) t->pid);
  mntns = open (path, O_RDONLY | O_CLOEXEC);
  if (mntns < 0)
    return ab_error_set (err, errno, "open %s", path);
  ns.userns_fd = userns;
  ns.mntns_fd = mntns;
  t->elsewhere = true;
  if (ab_nsenter_run (&ns, make_trees, t, err) < 0)
    {
      if (t->err.msg[0])
        *err = t->err;
      return -1;
    }
  return 0;
}

/* IDS_DONE carries the number of detached mount trees that follow, one
   SCM_RIGHTS message each: the root filesystem first, then every mount the
   parent opens (ab_mount_from_parent), in mounts[] order; none when the
   child clones them itself (rootless, plan->trees_by_child: from the
   bundle's checked fds, as the parent would). */
static int
send_mount_trees (struct ab_container *c, pid_t pid, bool userns, ab_error_t *err)
{
  const struct ab_plan *p = c->plan;
  _cleanup_free_ int *fds = xcalloc (p->n_mounts + 1, sizeof *fds);
  struct trees t = { .c = c, .pid = pid, .userns = userns, .root = -1, .fds = fds };
  int n = 1, r;
  size_t i;

  for (i = 0; i < p->n_mounts; i++)
    {
      fds[i] = -1;
      n += ab_mount_from_parent (&p->mounts[i]);
    }
  /* The child made them (plan->trees_by_child): none follow. */
  if (p->trees_by_child)
    return ab_sync_send (c->sync_fd, AB_SYNC_IDS_DONE, 0, err);
  r = p->rootless && userns ? make_trees_rootless (&t, err) : make_trees (&t);
  if (r < 0 && !(p->rootless && userns))
    *err = t.err;
  if (r == 0 && (ab_sync_send (c->sync_fd, AB_SYNC_IDS_DONE, n, err) < 0 || ab_send_fds (c->sync_fd, &t.root, 1, err) < 0))
    r = -1;
  for (i = 0; r == 0 && i < p->n_mounts; i++)
    if (fds[i] >= 0 && ab_send_fds (c->sync_fd, &fds[i], 1, err) < 0)
      r = -1;
  for (i = 0; i < p->n_mounts; i++)
    if (fds[i] >= 0)
      close (fds[i]);
  if (t.root >= 0)
    close (t.root);
  return r;
}

/* The parent's share of the move into the cgroups, in a thread started
   right after clone: the unified hierarchy when clone3 could not place the
   child there (CLONE_INTO_CGROUP refused), whose cgroup.procs write can wait
   for an RCU grace period, which then runs alongside the state write, the
   id maps and the mount trees.  (The v1 hierarchies the child joins by
   itself: ab_cgroup_selfjoin.)  The thread only writes the pid to the
   cgroup.procs files of c->cg, which nothing else changes until it is
   joined (every path out of create after the clone joins it first); the
   child cannot exec before CGROUPS_DONE, which is sent after the join. */
struct cg_job
{
  struct ab_cgroup *cg;
  pid_t pid;
  bool v2_done;
  bool started, joined;
  pthread_t t;
  ab_error_t err;
  int r;
};

static void *
cg_job_run (void *p)
{
  struct cg_job *j = p;
  /* v1: the child's own first step (ab_cgroup_selfjoin) */
  j->r = ab_cgroup_enter (j->cg, j->pid, j->v2_done, true, &j->err);
  return NULL;
}

static void
cg_job_start (struct cg_job *j)
{
  if (j->v2_done || ab_cgroup_v2_path (j->cg) == NULL)
    return; /* nothing left for the parent (j->r is 0) */
  j->started = pthread_create (&j->t, NULL, cg_job_run, j) == 0;
  if (!j->started)
    cg_job_run (j); /* no thread: the move in line, as before */
}

/* 0, or -1 with *err set from the job. */
static int
cg_job_join (struct cg_job *j, ab_error_t *err)
{
  if (j->started && !j->joined)
    pthread_join (j->t, NULL);
  j->joined = true;
  if (j->r < 0 && err)
    *err = j->err;
  return j->r;
}

/* The network (wall, egress proxy, devices) in a thread of its own, from
   right after the first state write to just before CGROUPS_DONE: it runs
   alongside the id maps, the mount trees and the child's mounts.  The
   thread writes c->state (and state.json) and c->netns_fd; the main thread
   touches neither until it has joined it, and every path out of create
   after the start joins it first. */
struct net_job
{
  struct ab_container *c;
  const struct ab_ns_setup *ns;
  int wall_sock_fd; /* where the child hands over the wall's sockets; -1 */
  ab_error_t err;
  int r;
  pthread_t t;
  bool started, joined;
};

static void *
net_job_run (void *p)
{
  struct net_job *j = p;
  j->r = ab_net_setup (j->c, j->ns, j->wall_sock_fd, &j->err);
  if (j->r > 0)
    j->r = ab_container_write_state (j->c, &j->err);
  ab_trace ("network set up");
  return NULL;
}

static void
net_job_start (struct net_job *j, struct ab_container *c, const struct ab_ns_setup *ns, int wall_sock_fd,
               bool inline_)
{
  j->c = c;
  j->ns = ns;
  j->wall_sock_fd = wall_sock_fd;
  j->r = -1;
  /* (`started` is assigned after pthread_create returns, possibly after
     the thread has begun: the thread never reads it.) */
  j->started = !inline_ && pthread_create (&j->t, NULL, net_job_run, j) == 0;
  if (!j->started)
    net_job_run (j); /* no thread: in line */
}

/* 0, or -1 with *err set from the job (err NULL: only wait). */
static int
net_job_join (struct net_job *j, ab_error_t *err)
{
  if (j->c == NULL)
    return 0; /* never started */
  if (j->started && !j->joined)
    pthread_join (j->t, NULL);
  j->joined = true;
  if (j->r < 0 && err)
    *err = j->err;
  return j->r;
}

/* The container's root could not create a mount point in a directory of
   the rootfs: when that directory belongs, on the host, to an id outside
   the user namespace's mapping (a rootfs extracted as host root under
   `agentbox spec`'s mapping), say so, and what to do, on the same line. */
static void
explain_unmapped_owner (const struct ab_container *c, ab_error_t *err)
{
  const struct ab_linux *l = c->plan ? c->plan->spec->linux_ : NULL;
  _cleanup_close_ int root = -1, dir = -1;
  char map[160] = "", host[AB_ERR_WHERE_MAX + 1024];
  size_t len, i, off = 0;
  struct stat st;

  if (err == NULL || err->where[0] == '\0' || (err->errnum != EACCES && err->errnum != EPERM) || l == NULL
      || !l->ns[AB_NS_USER].present || c->plan->rootfs_idmap)
    return;
  root = open (c->bundle->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0 || (dir = ab_open_in_root (root, err->where, O_PATH, 0, NULL)) < 0 || fstat (dir, &st) < 0)
    return;
  for (i = 0; i < l->uid_mappings.n; i++)
    {
      const struct ab_idmap *m = &l->uid_mappings.v[i];
      if (st.st_uid >= m->host_id && st.st_uid - m->host_id < m->size)
        return; /* a mapped owner: the mode is to blame, not the mapping */
      if (off < sizeof map)
        off += (size_t)snprintf (map + off, sizeof map - off, "%scontainer %u-%u = host %u-%u", i ? ", " : "",
                                 m->container_id, m->container_id + m->size - 1, m->host_id,
                                 m->host_id + m->size - 1);
    }
  snprintf (host, sizeof host, "%s%s", c->bundle->rootfs, strcmp (err->where, "/") ? err->where : "");
  if ((len = strlen (host)) > 1 && host[len - 1] == '/')
    host[len - 1] = '\0';
  len = strlen (err->msg);
  snprintf (
      err->msg + len, sizeof err->msg - len,
      "; `%s` belongs to host uid %u, outside the user namespace's uid mapping (%s), so the container's "
      "root may not write there: chown the rootfs into the mapped range, create the mount points in the "
      "image, or mount the rootfs id-mapped (annotation " AB_ANNOT_ROOTFS_IDMAP "=true, `agentbox spec "
      "--idmap-rootfs`)",
      host, (unsigned)st.st_uid, map[0] ? map : "none");
}

/* Create failed, for a config with a new user namespace: where no user
   namespace can be made at all (a container runtime's seccomp profile, a
   sysctl, AppArmor), that is the cause, whatever step noticed first (the
   cgroups of a nested runtime are often read-only too); say it on one line,
   with the way out.  Never a fallback without being asked for. */
static void
explain_userns_refusal (const struct ab_container *c, ab_error_t *err)
{
  const struct ab_linux *l = c->bundle && c->bundle->spec ? c->bundle->spec->linux_ : NULL;
  char why[512];

  if (err == NULL || err->cls == AB_EC_CONFIG || err->cls == AB_EC_USAGE || l == NULL
      || !l->ns[AB_NS_USER].present || l->ns[AB_NS_USER].path != NULL || ab_userns_probe (why, sizeof why) == 0)
    return;
  ab_debug ("create `%s` failed: %s", c->id, err->msg);
  ab_error_setc (err, AB_EC_SETUP, 0,
                 "no user namespace can be made here: %s; `agentbox run --default --fallback landlock` (or a "
                 "config with annotations " AB_ANNOT_FALLBACK "=landlock) runs without namespaces, under landlock "
                 "(docs/landlock.md)",
                 why);
}

/* Kill and reap the child, undo cgroups and state: the create never
   happened.  err is the create's error, told when something is kept. */
static void
create_abort (struct ab_container *c, ab_error_t *err)
{
  ab_error_t ignored = { 0 };
  int released;

  if (c->pidfd >= 0)
    {
      siginfo_t info;
      syscall (SYS_pidfd_send_signal, c->pidfd, SIGKILL, NULL, 0);
      while (waitid (P_PIDFD, (id_t)c->pidfd, &info, WEXITED) < 0 && errno == EINTR)
        ;
    }
  released = ab_container_release_resources (c, &ignored);
  ab_changeset_abort (c->ws); /* a change set of a run that never was */
  c->ws = NULL;
  if (released < 0)
    {
      /* Not everything could be undone: the state stays, recording what
         is left, and the caller's error says so. */
      if (c->state)
        c->state->status = AB_STATUS_STOPPED;
      ab_container_keep_for_delete (c, err);
      return;
    }
  if (c->dirfd >= 0)
    {
      int fd = c->dirfd;

      c->dirfd = -1;
      ab_state_file_close (&c->state_file);
      /* What a failure here leaves is a directory without state.json,
         which `delete --force` removes (ab_state_dir_remove_orphan). */
      ab_state_dir_remove_fd (c->rootfd, c->id, fd, &ignored);
    }
}

/* ---- the phases of create -------------------------------------------------

   plan     load and check the bundle, build the plan (nothing made yet)
   realize  state directory, config snapshot, cgroups, seccomp program,
            namespaces to join, console and start sockets
   spawn    clone3 the container process; the cgroup and network jobs
   sync     id maps, mount trees, process attributes; CGROUPS_DONE
   hooks    prestart and createRuntime, between the child's mounts and its
            pivot_root
   commit   pid file, status "created", the child released to wait for start

   Every phase works on one transaction; create_abort undoes all of it once,
   whichever phase failed, and create_close releases what only create
   itself needed, on both ways out. */
struct create_tx
{
  const struct ab_create_opts *o;
  struct ab_container *c;
  struct ab_cgroup *cg; /* planned, until realized (then c->cg) */
  struct ab_seccomp_prog prog;
  bool have_prog;
  struct ab_ll_ruleset landlock; /* the plan's, fitted to this kernel */
  struct ab_ns_setup ns;
  struct cg_job cgj;
  struct net_job netj;
  int sp[2];
  int console_fd, listen_fd;
  int pidfd_sock; /* --pidfd-socket, connected before anything is made */
  int relay; /* the other end of the console pair, for a relayed terminal; -1 */
  struct ab_warm_ask warm_ask; /* put to the user's warm holder, its answer not read yet; sock -1 */
  int warm_fd; /* the warm user namespace the container's is made in (runtime/warm.h); -1 */
  int wall_sp[2]; /* the child hands the wall's netlink sockets over [1] to the network job's [0]; -1 */
  bool net_inline; /* the network set up by this thread after the maps, not a thread of its own */
  bool state_later; /* the first state.json written after the clone (realize_state) */
  uint64_t began_ns; /* the wall clock when create began (an overlay workspace's run start is past it) */
};

static int
phase_plan (struct create_tx *tx, ab_error_t *err)
{
  const struct ab_create_opts *o = tx->o;
  struct ab_container *c = tx->c;
  struct ab_plan_opts po = { .root = o->root, .id = o->id, .egress_baseline = o->egress_policy,
                             .foreground = o->foreground, .rootless = o->rootless, .timeout_ms = o->timeout_ms,
                             .accept_degraded = o->accept_degraded, .grace_set = o->grace_set,
                             .grace_ms = o->grace_ms, .listen_fds = o->listen_fds };

  c->bundle = o->prebuilt; /* taken over, whatever happens */
  if (ab_id_validate (o->id, err) < 0)
    return -1;
  c->id = xstrdup (o->id);
  c->root = xstrdup (o->root);
  c->created_here = true;
  if (c->bundle == NULL)
    {
      struct ab_bundle_guard guard = ab_bundle_guard (o->root);
      if (ab_bundle_load (o->bundle, &guard, &c->bundle, err) < 0)
        return -1;
    }
  ab_trace ("bundle loaded");
  if (ab_container_check (c->bundle, o->foreground, &tx->ns, err) < 0
      || check_usage (o, c->bundle->spec, err) < 0
      || ab_container_plan (c->bundle->spec, &po, o->cgroup_parent, &c->plan, err) < 0)
    return -1;
  warn_unsupported (c->plan, &c->degraded);
  for (size_t i = 0; i < c->plan->degraded.n; i++)
    {
      /* The record's `degraded` says it; a person sees it with --debug. */
      ab_log (AB_LOG_INFO, "%s", c->plan->degraded.v[i]);
      ab_strv_push (&c->degraded, c->plan->degraded.v[i]);
    }
  return 0;
}

/* config.json, then the first state.json.  config.json straight into
   place, no temporary and rename: it is written before the first
   state.json, and a directory without state.json is nobody's container
   (ab_state_dir_remove_orphan), so no reader ever takes a half-written one
   for a config. */
static int
write_first_state (struct ab_container *c, ab_error_t *err)
{
  if (ab_write_file_create (c->dirfd, AB_CONFIG_FILE, c->bundle->config, c->bundle->config_len, 0600, err) < 0)
    return ab_state_dir_failed (err, c->root, c->id);
  return ab_container_write_state (c, err);
}

/* The state directory, and in the first state written the cgroups as
   planned: a create killed at any point leaves what delete --force needs
   to remove them. */
static int
realize_state (struct create_tx *tx, ab_error_t *err)
{
  struct ab_container *c = tx->c;
  const struct ab_spec *s = c->plan->spec;

  c->rootfd = ab_state_root_open (tx->o->root, true, err);
  if (c->rootfd < 0)
    return -1;
  c->dirfd = ab_state_dir_create (c->rootfd, c->id, err);
  if (c->dirfd < 0)
    return err->cls == AB_EC_SETUP ? ab_state_dir_failed (err, c->root, NULL) : -1;
  c->lock = LOCK_EX; /* ab_state_dir_create's */
  c->state_file.absent = true; /* a new directory */
  c->state = xzalloc (sizeof *c->state);
  c->state->id = xstrdup (c->id);
  c->state->bundle = xstrdup (c->bundle->dir);
  c->state->rootfs = xstrdup (c->bundle->rootfs);
  c->state->created_ns = ab_now_realtime_ns ();
  c->state->status = AB_STATUS_CREATING;
  c->state->rootless = c->plan->rootless;
  c->state->own_netns = c->plan->net.own_ns;
  if (c->plan->ids.how != AB_IDMAP_NONE)
    c->state->id_mapping = xstrdup (ab_idmap_how_name (c->plan->ids.how));
  for (size_t i = 0; i < c->degraded.n; i++)
    ab_strv_push (&c->state->degraded, c->degraded.v[i]);
  for (size_t i = 0; i < s->annotations.n; i++)
    {
      c->state->annotations.v
          = xreallocarray (c->state->annotations.v, i + 1, sizeof *c->state->annotations.v);
      c->state->annotations.v[i].key = xstrdup (s->annotations.v[i].key);
      c->state->annotations.v[i].value = xstrdup (s->annotations.v[i].value);
      c->state->annotations.n = i + 1;
    }
  ab_set_step ("cgroups");
  /* Rootless: below the delegated cgroup, or none at all (the plan
     listed what that leaves unenforced). */
  if (c->plan->cgroup
      && ((c->plan->rootless ? ab_cgroup_plan_delegated (c->plan->cgroup_parent, s->linux_->cgroups_path, c->id,
                                                          &tx->cg, err)
                             : ab_cgroup_plan (s->linux_->cgroups_path, c->id, c->plan->resources, &tx->cg, err))
              < 0
          || ab_container_set_cgroup (c, tx->cg, err) < 0))
    return -1;
  /* Without a cgroup or a private rootfs skeleton nothing of the container
     outlives its processes, which die with us until it is recorded (the
     child's PR_SET_PDEATHSIG): what a crash leaves before the first
     state.json is a directory that `delete --force` removes (an orphan).
     So the state is written once, after the clone, with the pid, off the
     path to the clone (phase_spawn). */
  tx->state_later = tx->cg == NULL && !ab_container_private_rootfs (c);
  return tx->state_later ? 0 : write_first_state (c, err);
}

/* Whether the runtime itself starts processes of the config's after the
   clone: the hooks it runs (not those run in the container), or the
   sandbox without namespaces as a fallback.  A supervisor in the warm user
   namespace (ab_ns_setup.enter_parent_userns) would start them there. */
static bool
runs_processes (const struct ab_spec *s)
{
  static const int kinds[] = { AB_HOOK_PRESTART, AB_HOOK_CREATE_RUNTIME, AB_HOOK_POSTSTART, AB_HOOK_POSTSTOP };

  for (size_t i = 0; i < AB_ARRAY_SIZE (kinds); i++)
    if (s->hooks[kinds[i]].n)
      return true;
  return s->agentbox.fallback != AB_FALLBACK_NONE;
}

static int
phase_realize (struct create_tx *tx, ab_error_t *err)
{
  struct ab_container *c = tx->c;
  const struct ab_spec *s = c->plan->spec;

  /* (tx->ns, the namespaces to join or make, is ab_container_check's.)
     Subordinate ids: the container's user namespace made inside a warm one
     that maps them already, when the user has one (runtime/warm.h); else
     the helpers map it, and a run leaves a holder for the next.  Asked for
     first: the holder answers while the state and the seccomp program are
     written. */
  if (c->plan->ids.how == AB_IDMAP_HELPER && tx->ns.new_user && !tx->ns.any_join)
    ab_warm_userns_connect (s->linux_, &tx->warm_ask);
  if (realize_state (tx, err) < 0)
    return -1;
  ab_set_step ("network");
  if (ab_net_prepare (c, c->plan, err) < 0)
    return -1;
  /* What the kernel's landlock ABI gives up of the plan's rules goes to
     the record's `degraded`. */
  ab_set_step ("landlock");
  if (ab_landlock_fit_kernel (&c->plan->landlock, &tx->landlock, &c->degraded, err) < 0)
    return -1;
  if (s->linux_->seccomp)
    {
      ab_set_step ("seccomp");
      if (ab_seccomp_compile_cached (s->linux_->seccomp, &tx->prog, err) < 0)
        return -1;
      tx->have_prog = true;
      for (size_t i = 0; i < tx->prog.skipped.n; i++)
        ab_debug ("seccomp: syscall `%s` unknown to libseccomp, skipped", tx->prog.skipped.v[i]);
    }
  ab_trace ("state written, seccomp compiled");
  if (c->plan->ids.how == AB_IDMAP_HELPER && tx->ns.new_user && !tx->ns.any_join)
    {
      tx->warm_fd = ab_warm_userns_receive (&tx->warm_ask);
      c->warm_wanted = tx->warm_fd < 0;
      tx->ns.userns_parent_fd = tx->warm_fd;
      tx->ns.nested_maps = s->linux_;
      tx->ns.nested_setgroups = c->plan->ids.setgroups;
      tx->ns.nested_ids_done = tx->warm_fd >= 0 && c->plan->trees_by_child;
      /* (Not with a private rootfs skeleton: a run that fails removes it by
         the state root's path, checked again, which the warm namespace
         shows otherwise.) */
      tx->ns.enter_parent_userns = tx->ns.nested_ids_done && tx->o->may_enter_warm_userns && !runs_processes (s)
                                   && !ab_container_private_rootfs (c);
    }
  if (tx->o->console_socket
      && (tx->console_fd = ab_fd_socket_connect (tx->o->console_socket, "--console-socket", err)) < 0)
    return -1;
  if (tx->o->pidfd_socket
      && (tx->pidfd_sock = ab_fd_socket_connect (tx->o->pidfd_socket, "--pidfd-socket", err)) < 0)
    return -1;
  /* No console socket (a foreground run): the pty comes back to us to relay. */
  if (!tx->o->console_socket && c->plan->process->terminal
      && (tx->console_fd = ab_console_relay_pair (&tx->relay, err)) < 0)
    return -1;
  if (!tx->o->foreground && (tx->listen_fd = start_socket_listen (c->dirfd, err)) < 0)
    return -1;
  ab_set_step ("cgroups");
  if (tx->cg == NULL)
    return 0; /* rootless without a delegated cgroup */
  /* A failed realize removed what it made, but for what it could not:
     counted in cg, which create_abort tries again and records. */
  c->cg = ab_steal_ptr (&tx->cg);
  if (ab_cgroup_realize (c->cg, c->plan->resources, err) < 0)
    return -1;
  if (ab_container_save_cgroup (c, err) < 0)
    return -1;
  ab_trace ("cgroups created");
  return 0;
}

static int
phase_spawn (struct create_tx *tx, ab_error_t *err)
{
  struct ab_container *c = tx->c;
  struct ab_child_ctx ctx = {
    .id = c->id,
    .bundle = c->bundle,
    .plan = c->plan,
    .ns = &tx->ns,
    .seccomp = tx->have_prog ? &tx->prog : NULL,
    .landlock = ab_landlock_enforces (&tx->landlock) ? &tx->landlock : NULL,
    .parent_pid = getpid (),
    .start_listen_fd = tx->listen_fd,
    .console_fd = tx->console_fd,
    .preserve_fds = tx->o->listen_fds + tx->o->preserve_fds,
    .no_new_keyring = tx->o->no_new_keyring,
    .foreground = tx->o->foreground,
    .allow_setgroups = c->plan->ids.how == AB_IDMAP_NONE ? !c->plan->rootless : c->plan->ids.setgroups,
    .cg = c->cg,
  };
  pid_t pid;

  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, tx->sp) < 0)
    return ab_error_set (err, errno, "socketpair");
  ctx.sync_fd = tx->sp[1];
  /* A network namespace of its own with the wall: the child makes the
     wall's sockets (ab_net_setup). */
  if (c->plan->net.own_ns && c->plan->net.wall && (tx->ns.clone_flags & CLONE_NEWNET)
      && socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, tx->wall_sp) < 0)
    return ab_error_set (err, errno, "socketpair");
  ctx.wall_sock_fd = tx->wall_sp[1];
  memcpy (ctx.stdio, tx->o->stdio, sizeof ctx.stdio);
  if (c->cg && ab_cgroup_selfjoin_open (c->cg, &ctx.cg_join, &ctx.n_cg_join, err) < 0)
    return -1;

  ab_set_step ("clone");
  pid = ab_ns_spawn (&tx->ns, c->cg ? ab_cgroup_clone_fd (c->cg) : -1, tx->sp[1], tx->sp[0], &c->pidfd, err);
  if (pid == 0)
    {
      close (tx->sp[0]);
      ab_child_main (&ctx);
    }
  close (tx->sp[1]);
  tx->sp[1] = -1;
  ab_closep_now (&tx->wall_sp[1]);
  c->sync_fd = ab_steal_fd (&tx->sp[0]);
  ab_cgroup_selfjoin_free (&ctx.cg_join, &ctx.n_cg_join);
  if (pid < 0)
    return -1;
  ab_trace ("cloned");
  ab_set_step ("cgroups");
  tx->cgj.cg = c->cg;
  tx->cgj.pid = pid;
  tx->cgj.v2_done = c->cg == NULL || ab_cgroup_clone_fd (c->cg) >= 0;
  cg_job_start (&tx->cgj);
  c->pid = pid;
  c->state->pid = pid;
  c->state->pid_start = ab_proc_start_time (pid, NULL);
  if ((tx->state_later ? write_first_state (c, err) : ab_container_write_state (c, err)) < 0)
    return -1;
  /* The network in a thread of its own while this one waits for the id
     map helpers or makes the mount trees; else, with nothing to wait for
     here, in line after the maps (phase_sync): a third runnable task on
     few CPUs only slows the child's mounts and the wall alike. */
  tx->net_inline = c->plan->trees_by_child
                   && (tx->ns.userns_parent_fd >= 0 || c->plan->ids.how != AB_IDMAP_HELPER);
  if (!tx->net_inline)
    net_job_start (&tx->netj, c, &tx->ns, tx->wall_sp[0], false);
  /* An overlay workspace's change set, in a thread of its own until the
     mount trees are sent (after the clone: the child must not inherit a
     lock another thread holds). */
  if (c->plan->spec->workspace.mode == AB_WS_MODE_OVERLAY
      && ab_changeset_create (tx->o->root, c->rootfd, c->id, c->bundle, tx->began_ns, &c->ws, err) < 0)
    return -1;
  return 0;
}

static int
phase_sync (struct create_tx *tx, ab_error_t *err)
{
  struct ab_container *c = tx->c;
  int r = 0;

  /* (Made in a warm user namespace, it was mapped by the clone's
     intermediate process, which told the child so when it makes its own
     mount trees.) */
  if (tx->ns.new_user && tx->ns.userns_parent_fd < 0
      && ab_ns_write_idmaps (c->pid, c->plan->spec->linux_, &c->plan->ids, err) < 0)
    return -1;
  if (!tx->ns.nested_ids_done && send_mount_trees (c, c->pid, tx->ns.new_user, err) < 0)
    return -1;
  ab_trace ("id maps written");
  if (tx->net_inline)
    net_job_start (&tx->netj, c, &tx->ns, tx->wall_sp[0], true);

  /* While the child mounts its root filesystem (and the network thread
     works): the process attributes, then the cgroup thread's end. */
  if (apply_process_attrs (c->pid, c->plan->process, err) < 0)
    r = -1;
  ab_set_step ("cgroups");
  if (cg_job_join (&tx->cgj, r == 0 ? err : NULL) < 0)
    r = -1;
  ab_trace ("cgroups joined");
  if (net_job_join (&tx->netj, r == 0 ? err : NULL) < 0)
    r = -1;
  if (r < 0)
    return -1;
  if (ab_sync_send (c->sync_fd, AB_SYNC_CGROUPS_DONE, 0, err) < 0)
    return -1;
  ab_trace ("cgroups joined and network set up");
  return 0;
}

static int
phase_hooks (struct create_tx *tx, ab_error_t *err)
{
  struct ab_container *c = tx->c;
  const struct ab_spec *s = c->plan->spec;

  /* Only with creation hooks does the child stop between its mounts and
     pivot_root for them (MOUNTS_DONE, HOOKS_DONE). */
  if (ab_hooks_at_creation (s) && ab_sync_expect (c->sync_fd, AB_SYNC_MOUNTS_DONE, NULL, err) < 0)
    return -1;
  ab_trace ("child: mounts done");
  if (s->hooks[AB_HOOK_PRESTART].n || s->hooks[AB_HOOK_CREATE_RUNTIME].n)
    {
      /* runtime.md: "creating" is step 2 of the lifecycle, the environment
         being built; these hooks are steps 3 and 4, after it: "created"
         (the status runtime-tools' hooks_stdin test expects). */
      size_t len;
      _cleanup_free_ char *st = ab_runtime_state_json (c, AB_STATUS_CREATED, &len);
      ab_set_step ("hooks");
      if (ab_hooks_run (s, AB_HOOK_PRESTART, st, len, err) < 0
          || ab_hooks_run (s, AB_HOOK_CREATE_RUNTIME, st, len, err) < 0)
        return -1;
    }
  if (ab_hooks_at_creation (s) && ab_sync_send (c->sync_fd, AB_SYNC_HOOKS_DONE, 0, err) < 0)
    return -1;
  if (ab_sync_expect (c->sync_fd, AB_SYNC_CREATED, NULL, err) < 0)
    return -1;
  ab_trace ("child: created");
  /* The child sent the master before CREATED. */
  if (tx->relay >= 0 && (c->pty_master = ab_console_relay_take (&tx->relay, err)) < 0)
    return -1;
  return 0;
}

/* --pidfd-socket: the init's pidfd, once the container is there to act
   on (its receiver may signal it at once). */
static int
send_pidfd (struct create_tx *tx, ab_error_t *err)
{
  if (tx->pidfd_sock >= 0 && ab_send_fds (tx->pidfd_sock, &tx->c->pidfd, 1, err) < 0)
    return ab_error_prefix (err, "--pidfd-socket `%s`", tx->o->pidfd_socket);
  return 0;
}

static int
phase_commit (struct create_tx *tx, ab_error_t *err)
{
  const struct ab_create_opts *o = tx->o;
  struct ab_container *c = tx->c;

  ab_set_step ("create");
  if (o->pid_file && ab_write_pid_file (o->pid_file, c->bundle, c->pid, err) < 0)
    return -1;
  c->state->status = AB_STATUS_CREATED;
  /* A foreground run keeps the lock until it has written "running"
     (ab_container_start_local): one state write and one lock fewer, and
     no command ever acts on a container between its create and start
     that no one but this run can start.  In the foreground START, sent
     by ab_container_start_local, is the child's answer. */
  if (o->foreground)
    return send_pidfd (tx, err); /* (an overlay workspace's start: ab_container_start_local) */
  if (c->ws)
    {
      ab_changeset_settle (c->ws);
      if (ab_changeset_save (c->ws, err) < 0)
        return -1;
    }
  /* Detached: the child answers once it no longer dies with us. */
  ab_net_rules_record (c);
  if (ab_container_write_state (c, err) < 0 || ab_sync_send (c->sync_fd, AB_SYNC_CREATED_ACK, 0, err) < 0
      || ab_sync_expect (c->sync_fd, AB_SYNC_CREATED_ACK, NULL, err) < 0)
    return -1;
  close (c->sync_fd);
  c->sync_fd = -1;
  if (send_pidfd (tx, err) < 0)
    return -1;
  /* Created: other commands (state, kill, exec) may look at it now. */
  return ab_container_unlock (c, err);
}

/* What create held for itself alone: released on both ways out, once. */
static void
create_close (struct create_tx *tx)
{
  for (int i = 0; i < 2; i++)
    {
      ab_closep_now (&tx->sp[i]);
      ab_closep_now (&tx->wall_sp[i]);
    }
  ab_closep_now (&tx->listen_fd);
  ab_closep_now (&tx->console_fd);
  ab_closep_now (&tx->pidfd_sock);
  ab_closep_now (&tx->relay);
  ab_closep_now (&tx->warm_ask.sock);
  ab_closep_now (&tx->warm_fd);
  ab_ns_setup_close (&tx->ns);
  if (tx->have_prog)
    ab_seccomp_prog_free (&tx->prog);
  tx->have_prog = false;
  ab_ll_ruleset_free (&tx->landlock);
  ab_cgroup_free (tx->cg);
  tx->cg = NULL;
}

int
ab_container_create (const struct ab_create_opts *o, struct ab_container **out, ab_error_t *err)
{
  static int (*const phases[]) (struct create_tx *, ab_error_t *)
      = { phase_plan, phase_realize, phase_spawn, phase_sync, phase_hooks, phase_commit };
  struct create_tx tx = { .o = o, .sp = { -1, -1 }, .console_fd = -1, .listen_fd = -1, .pidfd_sock = -1,
                          .relay = -1, .warm_ask = { .sock = -1 }, .warm_fd = -1, .wall_sp = { -1, -1 },
                          .began_ns = ab_now_realtime_ns () };
  struct ab_container *c = tx.c = xzalloc (sizeof *c);
  int r = 0;

  c->rootfd = c->dirfd = c->pidfd = c->sync_fd = c->netns_fd = c->pty_master = -1;
  c->state_file = (struct ab_state_file)AB_STATE_FILE_INIT;
  for (int t = 0; t < AB_NS__COUNT; t++)
    tx.ns.join_fd[t] = -1;
  ab_set_step ("create");
  for (size_t i = 0; r == 0 && i < AB_ARRAY_SIZE (phases); i++)
    r = phases[i](&tx, err);
  if (r < 0)
    {
      /* the threads use c->cg and c, which create_abort frees */
      cg_job_join (&tx.cgj, NULL);
      net_job_join (&tx.netj, NULL);
      prefer_child_error (c, err);
      explain_unmapped_owner (c, err);
      explain_userns_refusal (c, err);
    }
  create_close (&tx);
  if (r < 0)
    {
      create_abort (c, err);
      ab_container_free (c);
    }
  else
    *out = c;
  ab_set_step (NULL);
  return r;
}
