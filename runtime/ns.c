#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/nsfs.h>
#include <linux/sched.h>
#include <sched.h>
#include <spawn.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "runtime/ns.h"
#include "runtime/plan/plan.h"
#include "runtime/process.h"
#include "runtime/sync.h"
#include "base/util.h"
#include "spec/bundle-links.h"
#include "spec/tables.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

static int
no_such_ns (int type, ab_error_t *err)
{
  return ab_error_setc (err, AB_EC_CONFIG, ENOSYS, "linux.namespaces: this kernel has no %s namespaces",
                        ab_ns_name (type));
}

/* Whether /proc/self/ns/<name> exists (the kernel supports it). */
static bool
ab_ns_supported (int type)
{
  static int cache[AB_NS__COUNT];
  char path[64];

  if (type < 0 || type >= AB_NS__COUNT)
    return false;
  if (cache[type] == 0)
    {
      snprintf (path, sizeof path, "/proc/self/ns/%s", ab_ns_proc_name (type));
      cache[type] = access (path, F_OK) == 0 ? 1 : -1;
    }
  return cache[type] > 0;
}

/* Which namespace of the runtime's own, ours or pid 1's (the host's), the
   one of `type` behind st is: its /proc path in buf, or NULL for neither. */
static const char *
own_ns (const struct stat *st, int type, char buf[static 32])
{
  static const char *const who[] = { "self", "1" };
  struct stat own;

  for (size_t i = 0; i < AB_ARRAY_SIZE (who); i++)
    {
      snprintf (buf, 32, "/proc/%s/ns/%s", who[i], ab_ns_proc_name (type));
      if (stat (buf, &own) == 0 && own.st_dev == st->st_dev && own.st_ino == st->st_ino)
        return buf;
    }
  return NULL;
}

/* A mount namespace joined by path is left as it is (runtime/child.c), so
   joining the runtime's own, or pid 1's, would run the container on the
   host's mount table: refused.  Its root is compared with the host's root
   directory once inside (a copy of the host's table has that root too). */
static int
joined_mount_ns_check (const char *own, const char *what, const char *path, struct ab_ns_setup *plan,
                       ab_error_t *err)
{
  struct stat root;

  if (own != NULL)
    return ab_error_setc (err, AB_EC_CONFIG, EPERM,
                          "%s `%s` is the host's (%s): a container never runs on the host's mount table",
                          what, path, own);
  if (stat ("/", &root) < 0)
    return ab_error_set (err, errno, "stat /");
  plan->host_root_dev = root.st_dev;
  plan->host_root_ino = root.st_ino;
  return 0;
}

/* A namespace joined by path that is the runtime's own is the host's: a
   sysctl it owns, or the hostname of a UTS one, set there would change the
   host's (runc refuses a network sysctl "in host network namespace").
   Refused, naming the setting. */
static int
joined_own_ns_check (const struct ab_spec *s, int type, const char *own, ab_error_t *err)
{
  const struct ab_namespace *ns = &s->linux_->ns[type];
  char buf[160];
  const char *setting = own ? ab_spec_ns_setting (s, type, buf, sizeof buf) : NULL;

  if (setting == NULL)
    return 0;
  return ab_error_setc (err, AB_EC_CONFIG, 0,
                        "config.json: %s: would change the host's: linux.namespaces[%u].path `%s` is the runtime's "
                        "own %s namespace (%s)",
                        setting, ns->index, ns->path, ab_ns_name (type), own);
}

/* The name of the namespace type NS_GET_NSTYPE gave. */
static const char *
nstype_name (int nstype)
{
  for (int t = 0; t < AB_NS__COUNT; t++)
    if (ab_ns_clone_flag (t) == (unsigned long) nstype)
      return ab_ns_name (t);
  return "unknown";
}

/* linux.namespaces[i].path (`what` in messages), opened for setns: a
   namespace file of `type`, or a config error.  Opened O_PATH first, which
   neither blocks nor has an effect: a FIFO opened for reading waits for a
   writer, a device node opened runs its driver (a tape rewinds, a watchdog
   arms).  Only an nsfs file is then opened for reading, through our own
   fd (that inode, not the path again), and its type asked. */
static int
open_joined_ns (const struct ab_namespace *ns, int type, const struct ab_bundle *b, const char *what,
                ab_error_t *err)
{
  _cleanup_close_ int pfd = -1, fd = -1;
  char self[32];
  struct statfs sfs;
  int nstype;

  /* A path inside the bundle (a namespace bound there) is resolved beneath
     it: a symlink of the image must not hand us the host's /proc/1/ns/net,
     which passes every check below. */
  pfd = ab_bundle_open_file (b ? b->dir : NULL, b ? b->rootfs : NULL, ns->path, O_PATH, what, err);
  if (pfd < 0)
    {
      if (err)
        err->cls = AB_EC_CONFIG; /* a path of the config's that cannot be opened */
      return -1;
    }
  if (fstatfs (pfd, &sfs) < 0)
    return ab_error_setc (err, AB_EC_CONFIG, errno, "%s `%s`: fstatfs", what, ns->path);
  if (sfs.f_type != NSFS_MAGIC)
    return ab_error_setc (err, AB_EC_CONFIG, 0,
                          "%s `%s` is not a namespace file (/proc/PID/ns/%s, or a bind mount of one)", what,
                          ns->path, ab_ns_proc_name (type));
  snprintf (self, sizeof self, "/proc/self/fd/%d", pfd);
  fd = open (self, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return ab_error_setc (err, AB_EC_CONFIG, errno, "%s `%s`: open", what, ns->path);
  /* The spec: an error if path is not a namespace of that type. */
  nstype = ioctl (fd, NS_GET_NSTYPE);
  if (nstype < 0)
    return ab_error_setc (err, AB_EC_CONFIG, errno, "%s `%s`: ioctl NS_GET_NSTYPE", what, ns->path);
  if ((unsigned long) nstype != ab_ns_clone_flag (type))
    return ab_error_setc (err, AB_EC_CONFIG, 0, "%s `%s` is a namespace of another type (%s)", what, ns->path,
                          nstype_name (nstype));
  return ab_steal_fd (&fd);
}

/* linux.namespaces[i].path of `type`: opened into plan->join_fd[type] and
   checked against the runtime's own namespaces. */
static int
join_by_path (const struct ab_spec *s, const struct ab_bundle *b, int type, struct ab_ns_setup *plan,
              ab_error_t *err)
{
  const struct ab_namespace *ns = &s->linux_->ns[type];
  char what[96], buf[32];
  const char *own;
  struct stat st;

  snprintf (what, sizeof what, "config.json: linux.namespaces[%u].path: %s namespace", ns->index,
            ab_ns_name (type));
  plan->join_fd[type] = open_joined_ns (ns, type, b, what, err);
  if (plan->join_fd[type] < 0)
    return -1;
  plan->any_join = true;
  if (fstat (plan->join_fd[type], &st) < 0)
    return ab_error_setc (err, AB_EC_CONFIG, errno, "%s `%s`: fstat", what, ns->path);
  own = own_ns (&st, type, buf);
  if (type == AB_NS_MOUNT)
    return joined_mount_ns_check (own, what, ns->path, plan, err);
  return joined_own_ns_check (s, type, own, err);
}

/* linux.namespaces' entry of `type` into the plan: joined by path, or
   made (a clone flag, or unshared later by the child). */
static int
plan_ns (const struct ab_spec *s, const struct ab_bundle *b, int type, struct ab_ns_setup *plan, ab_error_t *err)
{
  if (s->linux_->ns[type].path != NULL)
    return join_by_path (s, b, type, plan, err);
  /* A kind the kernel was built without makes clone3 fail with EINVAL, and
     clone_failed names it then; only the time namespace, made later by
     unshare in the child, is looked for here (CONFIG_TIME_NS).  The cgroup
     namespace, unshared there too, has no option of its own: every kernel
     with cgroups and the mount API agentbox needs (5.2) has it. */
  if (type == AB_NS_TIME && !ab_ns_supported (type))
    return no_such_ns (type, err);
  if (type == AB_NS_USER)
    plan->new_user = true;
  if (type == AB_NS_CGROUP)
    plan->new_cgroup = true;
  else if (type == AB_NS_TIME)
    plan->new_time = true;
  else
    plan->clone_flags |= ab_ns_clone_flag (type);
  return 0;
}

int
ab_ns_setup_init (const struct ab_spec *s, const struct ab_bundle *b, struct ab_ns_setup *plan, ab_error_t *err)
{
  memset (plan, 0, sizeof *plan);
  plan->userns_parent_fd = -1;
  for (int t = 0; t < AB_NS__COUNT; t++)
    plan->join_fd[t] = -1;
  for (int t = 0; s->linux_ != NULL && t < AB_NS__COUNT; t++)
    if (s->linux_->ns[t].present && plan_ns (s, b, t, plan, err) < 0)
      {
        ab_ns_setup_close (plan);
        return -1;
      }
  return 0;
}

void
ab_ns_setup_close (struct ab_ns_setup *plan)
{
  int t;

  for (t = 0; t < AB_NS__COUNT; t++)
    if (plan->join_fd[t] >= 0)
      {
        close (plan->join_fd[t]);
        plan->join_fd[t] = -1;
      }
}

/* clone3 failed: a namespace kind this kernel lacks (EINVAL; its
   /proc/self/ns entry is missing) is a config error naming it, anything
   else a setup error (a refused user namespace is explained by create:
   explain_userns_refusal). */
static int
clone_failed (const struct ab_ns_setup *plan, unsigned long long flags, int e, ab_error_t *err)
{
  if (e == EINVAL)
    for (int t = 0; t < AB_NS__COUNT; t++)
      if ((flags & ab_ns_clone_flag (t)) && plan->join_fd[t] < 0 && !ab_ns_supported (t))
        return no_such_ns (t, err);
  return ab_error_setc (err, AB_EC_SETUP, e, "clone3 the container process (namespaces 0x%llx)", flags);
}

static pid_t
do_clone3 (unsigned long long flags, int cgroup_fd, int *pidfd)
{
  struct clone_args args;

  memset (&args, 0, sizeof args);
  args.flags = flags;
  /* With CLONE_PARENT the kernel takes the exit signal from the caller (the
     joiner, itself created with SIGCHLD) and refuses one here. */
  args.exit_signal = (flags & CLONE_PARENT) ? 0 : SIGCHLD;
  if (pidfd)
    args.pidfd = (uint64_t) (uintptr_t) pidfd;
  if (cgroup_fd >= 0)
    {
      args.flags |= CLONE_INTO_CGROUP;
      args.cgroup = (uint64_t) cgroup_fd;
    }
  return (pid_t) syscall (SYS_clone3, &args, sizeof args);
}

/* /proc/<pid>/<file> (uid_map, gid_map) from m, in one write (the kernel
   takes the whole map at once); onto_same: each range onto the same ids of
   the parent namespace (one made inside a warm namespace that maps them
   already), else onto its host ids. */
static int
write_map (pid_t pid, const char *file, const struct ab_idmaps *m, bool onto_same, ab_error_t *err)
{
  char path[64];
  char buf[340 * 36];
  size_t off = 0, i;

  snprintf (path, sizeof path, "/proc/%d/%s", (int) pid, file);
  for (i = 0; i < m->n && off < sizeof buf; i++)
    off += (size_t) snprintf (buf + off, sizeof buf - off, "%u %u %u\n", m->v[i].container_id,
                              onto_same ? m->v[i].container_id : m->v[i].host_id, m->v[i].size);
  if (ab_write_file_at (AT_FDCWD, path, buf, off, err) < 0)
    return ab_error_prefix (err, "linux.%s", strcmp (file, "uid_map") == 0 ? "uidMappings" : "gidMappings");
  return 0;
}

/* "deny" into /proc/<pid>/setgroups, which a gid_map written without
   CAP_SETGID (or a config without setgroups) needs first. */
static int
deny_setgroups (pid_t pid, ab_error_t *err)
{
  char path[64];

  snprintf (path, sizeof path, "/proc/%d/setgroups", (int) pid);
  return ab_write_file_at (AT_FDCWD, path, "deny", 4, err);
}

/* The maps of `pid`'s user namespace, made inside plan->userns_parent_fd:
   each range of the config onto the same ids there. */
static int
write_nested_maps (pid_t pid, const struct ab_ns_setup *plan, ab_error_t *err)
{
  const struct ab_linux *l = plan->nested_maps;

  if (!plan->nested_setgroups && deny_setgroups (pid, err) < 0)
    return -1;
  return write_map (pid, "uid_map", &l->uid_mappings, true, err) < 0
                 || write_map (pid, "gid_map", &l->gid_mappings, true, err) < 0
             ? -1
             : 0;
}

/* Made inside plan->userns_parent_fd: the maps of `pid`'s user namespace,
   and (plan->nested_ids_done) the child told through sync_fd that they are
   written. */
static int
map_nested (pid_t pid, const struct ab_ns_setup *plan, int sync_fd, ab_error_t *err)
{
  if (write_nested_maps (pid, plan, err) < 0)
    return -1;
  return plan->nested_ids_done ? ab_sync_send (sync_fd, AB_SYNC_IDS_DONE, 0, err) : 0;
}

/* plan->enter_parent_userns: enter the warm user namespace ourselves, to
   clone the container's inside it and write its maps there as the
   intermediate process would (below).  1 done, 0 refused because we have
   threads (then that process after all), -1 error. */
static int
enter_parent_userns (const struct ab_ns_setup *plan, ab_error_t *err)
{
  if (setns (plan->userns_parent_fd, CLONE_NEWUSER) < 0)
    return errno == EINVAL ? 0
                           : ab_error_setc (err, AB_EC_SETUP, errno, "linux.uidMappings: enter the warm user namespace");
  /* Gaining capabilities (there) made us non-dumpable: /proc/self would
     be root's, and /proc/<child>/uid_map with it, which we must write.
     Processes of our own user could reach us before, and still can. */
  prctl (PR_SET_DUMPABLE, 1);
  return 1;
}

/* The container cloned by us, in our namespaces: the child returns 0.
   nested_sync_fd >= 0: we entered the warm user namespace
   (enter_parent_userns), so its maps are ours to write, and the child told
   through that fd when they are. */
static pid_t
clone_here (const struct ab_ns_setup *plan, unsigned long long flags, int cgroup_fd, int nested_sync_fd,
            int *pidfd, ab_error_t *err)
{
  pid_t pid = do_clone3 (flags | CLONE_PIDFD, cgroup_fd, pidfd);

  if (pid < 0 && errno == EBUSY && cgroup_fd >= 0)
    {
      /* the v2 cgroup refuses tasks (e.g. it enables controllers): let the
         cgroup driver place the process instead */
      pid = do_clone3 (flags | CLONE_PIDFD, -1, pidfd);
    }
  if (pid < 0)
    return clone_failed (plan, flags, errno, err);
  if (pid > 0 && nested_sync_fd >= 0 && map_nested (pid, plan, nested_sync_fd, err) < 0)
    {
      syscall (SYS_pidfd_send_signal, *pidfd, SIGKILL, NULL, 0);
      return -1;
    }
  return pid;
}

pid_t
ab_ns_spawn (const struct ab_ns_setup *plan, int cgroup_fd, int child_sync_fd, int parent_sync_fd, int *pidfd,
             ab_error_t *err)
{
  unsigned long long flags = plan->clone_flags | (plan->new_user ? CLONE_NEWUSER : 0);
  pid_t pid, joiner;
  int t, status;
  bool entered = false;
  struct ab_sync_msg m;

  *pidfd = -1;
  ab_signals_snapshot (); /* what the child inherits: see process.c */
  if (!plan->any_join && plan->enter_parent_userns && (t = enter_parent_userns (plan, err)) != 0)
    {
      if (t < 0)
        return -1;
      entered = true;
    }
  if (!plan->any_join && (plan->userns_parent_fd < 0 || entered))
    return clone_here (plan, flags, cgroup_fd, entered ? parent_sync_fd : -1, pidfd, err);

  /* Joining namespaces by path: setns() would change our own namespaces, so
     an intermediate process joins them (the user namespace first: it owns
     the others) and clones the container process with CLONE_PARENT, making
     it our child.  Namespaces to create are then owned by the joined user
     namespace, as the spec's semantics require.  The intermediate is a
     vfork child: no copy of our address space of its own (the container
     process, cloned from it, gets one); we are suspended until it exits,
     and it never returns from here (its locals are ours: only `pid` and
     `e` change, which we do not read after). */
  joiner = vfork ();
  if (joiner < 0)
    return ab_error_set (err, errno, "fork to join namespaces");
  if (joiner == 0)
    {
      ab_error_t e = { 0 };
      prctl (PR_SET_PDEATHSIG, SIGKILL);
      /* A user namespace to make ours inside: entered first (we own it:
         every capability there), then the new one is its child. */
      if (plan->userns_parent_fd >= 0 && setns (plan->userns_parent_fd, CLONE_NEWUSER) < 0)
        {
          ab_error_setc (&e, AB_EC_SETUP, errno, "linux.uidMappings: enter the warm user namespace");
          ab_sync_send_error (child_sync_fd, &e);
          _exit (1);
        }
      for (t = 0; t < AB_NS__COUNT; t++)
        if (plan->join_fd[t] >= 0 && setns (plan->join_fd[t], (int) ab_ns_clone_flag (t)) < 0)
          {
            ab_error_setc (&e, AB_EC_SETUP, errno, "linux.namespaces: join the %s namespace", ab_ns_name (t));
            ab_sync_send_error (child_sync_fd, &e);
            _exit (1);
          }
      pid = do_clone3 (flags | CLONE_PARENT, cgroup_fd, NULL);
      if (pid < 0 && errno == EBUSY && cgroup_fd >= 0)
        pid = do_clone3 (flags | CLONE_PARENT, -1, NULL);
      if (pid < 0)
        {
          clone_failed (plan, flags, errno, &e);
          ab_sync_send_error (child_sync_fd, &e);
          _exit (1);
        }
      if (pid == 0)
        return 0; /* the container process */
      /* In the warm namespace we hold CAP_SETUID and CAP_SETGID over the
         new one's parent: its maps, written here, map each range onto the
         same ids of the warm namespace, which maps those to the host's. */
      if (plan->userns_parent_fd >= 0 && map_nested (pid, plan, parent_sync_fd, &e) < 0)
        {
          kill (pid, SIGKILL);
          ab_sync_send_error (child_sync_fd, &e);
          _exit (1);
        }
      ab_sync_send (child_sync_fd, AB_SYNC_PID, pid, NULL);
      _exit (0);
    }
  /* Parent: the joiner reports the pid (host view: the joiner's own pid
     namespace is still ours) and exits. */
  if (ab_sync_expect (parent_sync_fd, AB_SYNC_PID, &m, err) < 0)
    {
      waitpid (joiner, &status, 0);
      return -1;
    }
  waitpid (joiner, &status, 0);
  pid = m.value;
  *pidfd = (int) syscall (SYS_pidfd_open, pid, 0);
  if (*pidfd < 0)
    return ab_error_set (err, errno, "pidfd_open the container process %d", (int) pid);
  return pid;
}

/* newuidmap PID C H S [C H S...] (or newgidmap), spawned with an empty
   environment and its stderr in a pipe for the message.  The helper is
   set-uid root and checks every range against /etc/subuid itself. */
struct map_helper
{
  pid_t pid;
  int err_fd;
  const char *path;
};

static int
map_helper_spawn (struct map_helper *mh, const char *path, pid_t pid, const struct ab_idmaps *m, ab_error_t *err)
{
  char *envp[] = { NULL };
  _cleanup_strv_ struct ab_strv argv = { 0 };
  posix_spawn_file_actions_t fa;
  int p[2], r;

  mh->path = path;
  ab_strv_push (&argv, strrchr (path, '/') + 1);
  ab_strv_push_owned (&argv, xasprintf ("%d", (int) pid));
  for (size_t i = 0; i < m->n; i++)
    {
      ab_strv_push_owned (&argv, xasprintf ("%u", m->v[i].container_id));
      ab_strv_push_owned (&argv, xasprintf ("%u", m->v[i].host_id));
      ab_strv_push_owned (&argv, xasprintf ("%u", m->v[i].size));
    }
  if (pipe2 (p, O_CLOEXEC) < 0)
    return ab_error_set (err, errno, "pipe for %s", path);
  posix_spawn_file_actions_init (&fa);
  posix_spawn_file_actions_addopen (&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2 (&fa, p[1], 1);
  posix_spawn_file_actions_adddup2 (&fa, p[1], 2);
  r = posix_spawn (&mh->pid, path, &fa, NULL, argv.v, envp);
  posix_spawn_file_actions_destroy (&fa);
  close (p[1]);
  if (r != 0)
    {
      close (p[0]);
      return ab_error_set (err, r, "run %s", path);
    }
  mh->err_fd = p[0];
  return 0;
}

static int
map_helper_wait (struct map_helper *mh, const char *field, ab_error_t *err)
{
  char out[512] = "";
  ssize_t n = ab_read_all (mh->err_fd, out, sizeof out - 1);
  int st = 0;

  close (mh->err_fd);
  while (waitpid (mh->pid, &st, 0) < 0 && errno == EINTR)
    ;
  if (WIFEXITED (st) && WEXITSTATUS (st) == 0)
    return 0;
  char how[64];

  out[n > 0 ? n : 0] = '\0';
  out[strcspn (out, "\n")] = '\0';
  if (WIFEXITED (st))
    snprintf (how, sizeof how, "exit status %d", WEXITSTATUS (st));
  else
    snprintf (how, sizeof how, "killed by SIG%s", sigabbrev_np (WTERMSIG (st)) ? sigabbrev_np (WTERMSIG (st)) : "?");
  return ab_error_setc (err, AB_EC_SETUP, 0, "linux.%s: %s failed (%s): %s", field, mh->path, how,
                        out[0] ? out : "no message");
}

static int
write_idmaps_helper (pid_t pid, const struct ab_linux *l, const struct ab_plan_ids *ids, ab_error_t *err)
{
  struct map_helper u = { .pid = -1, .err_fd = -1 }, g = { .pid = -1, .err_fd = -1 };
  int r = 0;

  /* Both at once: each is a set-uid exec, the bulk of the cost. */
  if (map_helper_spawn (&u, ids->newuidmap, pid, &l->uid_mappings, err) < 0)
    return -1;
  if (map_helper_spawn (&g, ids->newgidmap, pid, &l->gid_mappings, err) < 0)
    r = -1;
  if (map_helper_wait (&u, "uidMappings", err) < 0)
    r = -1;
  if (g.pid > 0 && map_helper_wait (&g, "gidMappings", r == 0 ? err : NULL) < 0)
    r = -1;
  return r;
}

int
ab_ns_write_idmaps (pid_t pid, const struct ab_linux *l, const struct ab_plan_ids *ids, ab_error_t *err)
{
  ab_set_step ("idmaps");
  if (ids->how == AB_IDMAP_HELPER)
    return write_idmaps_helper (pid, l, ids, err);
  if (ids->how == AB_IDMAP_SINGLE && deny_setgroups (pid, err) < 0)
    return -1;
  if (write_map (pid, "uid_map", &l->uid_mappings, false, err) < 0
      || write_map (pid, "gid_map", &l->gid_mappings, false, err) < 0)
    return -1;
  return 0;
}

/* Whether the pid namespace behind fd is `want` or below it (NS_GET_PARENT
   up to the top we can see). */
static bool
pidns_within (int fd, const struct stat *want)
{
  int cur = fd;

  for (int depth = 0; depth < 33; depth++)
    {
      struct stat st;
      int parent;
      if (fstat (cur, &st) < 0)
        break;
      if (st.st_dev == want->st_dev && st.st_ino == want->st_ino)
        {
          if (cur != fd)
            close (cur);
          return true;
        }
      parent = ioctl (cur, NS_GET_PARENT);
      if (cur != fd)
        close (cur);
      if (parent < 0)
        return false;
      cur = parent;
    }
  if (cur != fd)
    close (cur);
  return false;
}

/* Whether host process pid is in the pid namespace `want` or below it. */
static bool
pid_within (pid_t pid, const struct stat *want)
{
  char path[64];
  int fd;
  bool in;

  snprintf (path, sizeof path, "/proc/%d/ns/pid", (int) pid);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false; /* gone, or not ours to look at */
  in = pidns_within (fd, want);
  close (fd);
  return in;
}

/* Whether one of pid's fds is a pipe of `pipes` (inodes of pipefs). */
static bool
holds_pipe (pid_t pid, const ino_t *pipes, size_t n_pipes)
{
  char path[64], link[64];
  struct dirent *e;
  bool found = false;
  DIR *d;

  snprintf (path, sizeof path, "/proc/%d/fd", (int) pid);
  d = opendir (path);
  if (d == NULL)
    return false;
  while (!found && (e = readdir (d)) != NULL)
    {
      unsigned long long ino;
      ssize_t len = readlinkat (dirfd (d), e->d_name, link, sizeof link - 1);
      if (len <= 0)
        continue;
      link[len] = '\0';
      if (sscanf (link, "pipe:[%llu]", &ino) != 1)
        continue;
      for (size_t i = 0; i < n_pipes && !found; i++)
        found = pipes[i] == (ino_t) ino;
    }
  closedir (d);
  return found;
}

int
ab_pidns_kill_pipe_holders (pid_t init, const ino_t *pipes, size_t n_pipes, ab_error_t *err)
{
  _cleanup_free_ pid_t *pids = NULL;
  char path[64];
  struct stat want;
  size_t n = 0;
  int killed = 0;

  snprintf (path, sizeof path, "/proc/%d/ns/pid", (int) init);
  if (stat (path, &want) < 0)
    return ab_error_set (err, errno, "stat %s", path);
  if (ab_pidns_pids (init, &pids, &n, err) < 0)
    return -1;
  for (size_t i = 0; i < n; i++)
    {
      int fd;
      if (pids[i] == init || !holds_pipe (pids[i], pipes, n_pipes))
        continue;
      fd = (int) syscall (SYS_pidfd_open, pids[i], 0);
      if (fd < 0)
        continue;
      if (pid_within (pids[i], &want) && holds_pipe (pids[i], pipes, n_pipes)
          && syscall (SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0) == 0)
        killed++;
      close (fd);
    }
  return killed;
}

int
ab_pidns_pids (pid_t init, pid_t **out, size_t *n, ab_error_t *err)
{
  char path[64];
  struct stat want;
  DIR *d;
  struct dirent *e;
  size_t cap = 0;

  *out = NULL;
  *n = 0;
  snprintf (path, sizeof path, "/proc/%d/ns/pid", (int) init);
  if (stat (path, &want) < 0)
    return ab_error_set (err, errno, "stat %s", path);
  {
    /* No pid namespace of its own: the init alone, never the host's list. */
    struct stat self;
    if (stat ("/proc/self/ns/pid", &self) == 0 && self.st_ino == want.st_ino && self.st_dev == want.st_dev)
      {
        *out = xmalloc (sizeof **out);
        (*out)[0] = init;
        *n = 1;
        return 0;
      }
  }
  d = opendir ("/proc");
  if (d == NULL)
    return ab_error_set (err, errno, "open /proc");
  while ((e = readdir (d)) != NULL)
    {
      int pid;
      if (ab_parse_int (e->d_name, &pid) < 0 || pid <= 0 || !pid_within (pid, &want))
        continue;
      if (*n == cap)
        *out = xreallocarray (*out, cap = cap ? cap * 2 : 16, sizeof **out);
      (*out)[(*n)++] = pid;
    }
  closedir (d);
  return 0;
}

struct pinned
{
  pid_t pid;
  uint64_t start;
};

static bool
pinned_has (const struct pinned *v, size_t n, pid_t pid, uint64_t start)
{
  for (size_t i = 0; i < n; i++)
    if (v[i].pid == pid && v[i].start == start)
      return true;
  return false;
}

int
ab_pidns_signal (pid_t init, int sig, ab_error_t *err)
{
  struct pinned *sent = NULL;
  size_t n_sent = 0;
  char path[64];
  struct stat want;
  int live = 0;

  snprintf (path, sizeof path, "/proc/%d/ns/pid", (int) init);
  if (stat (path, &want) < 0)
    return ab_error_set (err, errno, "stat %s", path);
  /* Until a walk finds no one new: a process forked while the last walk
     ran (not in /proc yet) is signalled by the next.  A fork bomb can
     outrun that; the rounds are bounded, and what is left goes with the
     init's end. */
  for (int round = 0; round < 64; round++)
    {
      _cleanup_free_ pid_t *pids = NULL;
      size_t n = 0, fresh = 0;

      if (ab_pidns_pids (init, &pids, &n, err) < 0)
        {
          free (sent);
          return -1;
        }
      live = 0;
      for (size_t i = 0; i < n; i++)
        {
          struct ab_proc_stat st;
          int fd;
          if (pids[i] == init || !ab_proc_stat_read (pids[i], &st) || st.state == 'Z')
            continue;
          live++;
          if (sig == 0 || pinned_has (sent, n_sent, pids[i], st.start))
            continue;
          /* Pinned by the pidfd, the pid cannot be reused: signalled only
             if it is still in the namespace then. */
          fd = (int) syscall (SYS_pidfd_open, pids[i], 0);
          if (fd < 0)
            continue;
          if (pid_within (pids[i], &want) && syscall (SYS_pidfd_send_signal, fd, sig, NULL, 0) == 0)
            {
              sent = xreallocarray (sent, n_sent + 1, sizeof *sent);
              sent[n_sent++] = (struct pinned){ pids[i], st.start };
              fresh++;
            }
          close (fd);
        }
      if (fresh == 0)
        break;
    }
  free (sent);
  return live;
}

int
ab_ns_enter_new_time (const struct ab_linux *l, ab_error_t *err)
{
  _cleanup_close_ int fd = -1;
  char buf[128];
  size_t off = 0;

  ab_set_step ("timens");
  if (unshare (CLONE_NEWTIME) < 0)
    return ab_error_set (err, errno, "unshare the time namespace");
  if (l->time_monotonic.set)
    off += (size_t) snprintf (buf + off, sizeof buf - off, "monotonic %lld %u\n",
                              (long long) l->time_monotonic.secs, l->time_monotonic.nanosecs);
  if (l->time_boottime.set)
    off += (size_t) snprintf (buf + off, sizeof buf - off, "boottime %lld %u\n", (long long) l->time_boottime.secs,
                              l->time_boottime.nanosecs);
  /* Offsets can only be written before any process enters the namespace. */
  if (off && ab_write_file_at (AT_FDCWD, "/proc/self/timens_offsets", buf, off, err) < 0)
    return ab_error_prefix (err, "linux.timeOffsets");
  fd = open ("/proc/self/ns/time_for_children", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return ab_error_set (err, errno, "open /proc/self/ns/time_for_children");
  if (setns (fd, CLONE_NEWTIME) < 0)
    return ab_error_set (err, errno, "enter the new time namespace");
  return 0;
}
