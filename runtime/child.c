/* The container process's own setup, in the order of docs/child-setup.md:
 *
 *   ids -> [time ns] -> [cgroup ns] -> mounts -> /dev -> (prestart and
 *   createRuntime hooks in the parent) -> createContainer hooks ->
 *   pivot_root -> hostname, sysctl -> read-only and masked paths ->
 *   read-only root -> console -> created; wait for start -> startContainer
 *   hooks -> close fds -> the process steps of runtime/process.h (cwd,
 *   rlimits, user, capabilities, no_new_privs, seccomp) -> execve
 *
 * Every failure is sent to the parent as a typed message naming the step;
 * nothing is printed here. */
#include "config.h"

#include <fcntl.h>
#include <linux/keyctl.h>
#include <linux/netlink.h>
#include <sched.h>
#include <signal.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>

#include "hooks/hooks.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/child.h"
#include "runtime/console.h"
#include "runtime/dev.h"
#include "runtime/idmap.h"
#include "runtime/mount.h"
#include "runtime/paths.h"
#include "runtime/process.h"
#include "runtime/sync.h"
#include "base/util.h"
#include "base/gen.h"

static bool
needs_cgroupns_before_mounts (const struct ab_plan *p)
{
  size_t i;

  for (i = 0; i < p->n_mounts; i++)
    if (p->mounts[i].type
        && (strcmp (p->mounts[i].type, "cgroup") == 0 || strcmp (p->mounts[i].type, "cgroup2") == 0))
      return true;
  return false;
}

static bool
root_is_mapped (const struct ab_idmaps *m)
{
  size_t i;

  for (i = 0; i < m->n; i++)
    if (m->v[i].container_id == 0)
      return true;
  return false;
}

/* The state for hooks run in the container namespace: pid as seen there;
   status "creating" for createContainer, "created" for startContainer (start
   was called, the program not yet executed), as runc passes them. */
static char *
container_state_json (struct ab_child_ctx *c, const char *status, size_t *len)
{
  _cleanup_gen_ struct ab_gen *g = ab_gen_new (false);
  size_t i;

  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "ociVersion", AB_OCI_VERSION);
  ab_gen_kv_str (g, "id", c->id);
  ab_gen_kv_str (g, "status", status);
  ab_gen_kv_i64 (g, "pid", getpid ());
  ab_gen_kv_str (g, "bundle", c->bundle->dir);
  ab_gen_key (g, "annotations");
  ab_gen_obj_open (g);
  for (i = 0; i < c->plan->spec->annotations.n; i++)
    ab_gen_kv_str (g, c->plan->spec->annotations.v[i].key, c->plan->spec->annotations.v[i].value);
  ab_gen_obj_close (g);
  ab_gen_obj_close (g);
  return ab_gen_steal (g, false, len);
}

static int
apply_memory_policy (const struct ab_memory_policy *mp, ab_error_t *err)
{
  unsigned long mask[16] = { 0 };
  unsigned long maxnode = 0;

  if (mp->nodes && *mp->nodes)
    {
      int top = ab_parse_id_list (mp->nodes, mask, sizeof mask * 8);
      if (top < 0)
        return ab_error_setc (err, AB_EC_CONFIG, EINVAL, "linux.memoryPolicy.nodes: `%s`", mp->nodes);
      /* set_mempolicy's maxnode counts one past the highest node */
      maxnode = (unsigned long)top + 1;
    }
  if (syscall (SYS_set_mempolicy, mp->mode | (int)mp->flags, maxnode ? mask : NULL, maxnode) < 0)
    return ab_error_set (err, errno, "linux.memoryPolicy: set_mempolicy");
  return 0;
}

/* The start socket can take a connection: checked before `created` is
   confirmed, so that a socket that never could fails the create itself,
   with its error, rather than a container that dies unseen later. */
static int
start_socket_check (int fd, ab_error_t *err)
{
  int v = 0;
  socklen_t len = sizeof v;

  if (getsockopt (fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) < 0)
    return ab_error_set (err, errno, "start socket: getsockopt(SO_ACCEPTCONN)");
  if (!v)
    return ab_error_setc (err, AB_EC_INTERNAL, EINVAL, "start socket: not listening");
  return 0;
}

/* One connection on the listening start socket.  Once start_socket_check
   passed, every failure of accept4 is one that passes (EINTR, an aborted
   connection, no memory or fds or buffers for the moment): tried again,
   after a pause that grows to a second when it repeats.  Nobody would hear
   of a container that gave up here (its creator is gone): it would just be
   "stopped" when `start` came. */
static int
accept_start (int fd)
{
  long nap_ms = 0;

  for (;;)
    {
      int conn = accept4 (fd, NULL, NULL, SOCK_CLOEXEC);

      if (conn >= 0)
        return conn;
      if (errno == EINTR || errno == ECONNABORTED)
        continue;
      nap_ms = nap_ms == 0 ? 10 : nap_ms * 2 > 1000 ? 1000 : nap_ms * 2;
      nanosleep (&(struct timespec){ nap_ms / 1000, (nap_ms % 1000) * 1000000 }, NULL);
    }
}

/* Wait for `start`: in the foreground on the setup socket, detached on the
   start socket (one connection, from `agentbox start`).  Returns the fd the
   starter listens on for the outcome of exec. */
static int
wait_for_start (struct ab_child_ctx *c, ab_error_t *err)
{
  int conn;

  ab_set_step ("wait-start");
  /* In the foreground the creator starts us itself: START is the answer
     to CREATED, no CREATED_ACK before it. */
  if (c->foreground)
    {
      if (ab_sync_expect (c->sync_fd, AB_SYNC_START, NULL, err) < 0)
        return -1;
      return c->sync_fd;
    }
  if (ab_sync_expect (c->sync_fd, AB_SYNC_CREATED_ACK, NULL, err) < 0
      || start_socket_check (c->start_listen_fd, err) < 0)
    return -1;
  /* Detached: the creator exits now and we must outlive it.  It waits for
     this answer, sent only once the parent-death signal is off. */
  if (prctl (PR_SET_PDEATHSIG, 0) < 0)
    return ab_error_set (err, errno, "prctl(PR_SET_PDEATHSIG, 0)");
  if (ab_sync_send (c->sync_fd, AB_SYNC_CREATED_ACK, 0, err) < 0)
    return -1;
  close (c->sync_fd);
  c->sync_fd = -1;
  for (;;)
    {
      struct ab_sync_msg m;
      conn = accept_start (c->start_listen_fd);
      if (ab_sync_recv (conn, &m, NULL) == 0 && m.type == AB_SYNC_START)
        break;
      close (conn);
    }
  close (c->start_listen_fd);
  c->start_listen_fd = -1;
  return conn;
}

/* Close every inherited fd above the preserved ones except those the setup
   needs.  The parent's fds are close-on-exec anyway, but we do not keep the
   state directory (and its lock), the cgroup directories or anything else
   of the host while hooks run and until exec. */
static void
close_inherited_fds (struct ab_child_ctx *c, bool keep_rootfs)
{
  int keep[16], n = 0, first = 3 + c->preserve_fds, i;

  keep[n++] = c->sync_fd;
  if (keep_rootfs && c->bundle->rootfs_fd >= 0)
    keep[n++] = c->bundle->rootfs_fd;
  if (c->start_listen_fd >= 0)
    keep[n++] = c->start_listen_fd;
  if (c->console_fd >= 0)
    keep[n++] = c->console_fd;
  for (i = 0; i < 3; i++)
    if (c->stdio[i] >= first)
      keep[n++] = c->stdio[i];
  qsort (keep, (size_t)n, sizeof *keep, ab_cmp_int);
  for (i = 0; i < n; i++)
    {
      if (keep[i] > first)
        syscall (SYS_close_range, (unsigned)first, (unsigned)keep[i] - 1, 0);
      if (keep[i] + 1 > first)
        first = keep[i] + 1;
    }
  syscall (SYS_close_range, (unsigned)first, ~0U, 0);
}

/* Wait until the parent has put us in every cgroup and configured the
   network (and run the runtime-namespace hooks, if there are any: then we
   told it MOUNTS_DONE and wait for HOOKS_DONE); then root the cgroup
   namespace at our own cgroup. */
static int
join_after_parent (struct ab_child_ctx *c, bool cgroupns_early, ab_error_t *err)
{
  if (!cgroupns_early)
    {
      ab_set_step ("cgroups");
      if (ab_sync_expect (c->sync_fd, AB_SYNC_CGROUPS_DONE, NULL, err) < 0)
        return -1;
      if (c->ns->new_cgroup && unshare (CLONE_NEWCGROUP) < 0)
        return ab_error_set (err, errno, "unshare the cgroup namespace");
    }
  if (!ab_hooks_at_creation (c->plan->spec))
    return 0;
  ab_set_step ("hooks");
  return ab_sync_expect (c->sync_fd, AB_SYNC_HOOKS_DONE, NULL, err);
}

/* A mount namespace joined by path (linux.namespaces[].path of type
   mount) is left as it is: no propagation change, no bind of root.path,
   no mounts, no /dev, no pivot_root, no masks (spec/validate.c refuses
   the config fields that would ask for them), because every one of them
   would change the namespace for the processes already in it and outlive
   the container; pivot_root would even move the root of every process
   there.  The process runs at the namespace's root, where setns put us,
   and that root must be root.path, as the config says: the directory the
   parent resolved (its tree, in mc->root_tree).  Never the host's own
   root (a copy of the host's mount table, such as `unshare --mount`
   makes, has that root). */
static int
joined_root_check (const struct ab_child_ctx *c, const struct ab_mount_ctx *mc, ab_error_t *err)
{
  struct stat ns_root, want;

  ab_set_step ("rootfs");
  if (stat ("/", &ns_root) < 0 || fstat (mc->root_tree, &want) < 0)
    return ab_error_set (err, errno, "stat the root of the joined mount namespace");
  if (ns_root.st_dev == c->ns->host_root_dev && ns_root.st_ino == c->ns->host_root_ino)
    return ab_error_setc (err, AB_EC_CONFIG, EPERM,
                          "linux.namespaces: the mount namespace `%s` has the host's root directory as its root",
                          c->plan->spec->linux_->ns[AB_NS_MOUNT].path);
  if (ns_root.st_dev != want.st_dev || ns_root.st_ino != want.st_ino)
    return ab_error_setc (err, AB_EC_CONFIG, EXDEV,
                          "root.path: `%s` is not the root of the mount namespace `%s` joined by path (agentbox "
                          "makes no pivot_root there)",
                          c->bundle->rootfs, c->plan->spec->linux_->ns[AB_NS_MOUNT].path);
  return 0;
}

/* pivot_root and everything done in the final root before `created`. */
static int
finish_rootfs (struct ab_child_ctx *c, struct ab_mount_ctx *mc, ab_error_t *err)
{
  const struct ab_spec *s = c->plan->spec;
  const struct ab_linux *l = s->linux_;
  bool joined_mnt = c->ns->join_fd[AB_NS_MOUNT] >= 0;

  ab_closes_deferred = true;
  if (!joined_mnt && ab_pivot_root (mc, err) < 0)
    return -1;
  mc->rootfd = -1; /* closed by execve (util.h) */
  if (ab_cwd_make (c->plan->process->cwd, err) < 0)
    return -1;
  if (ab_uts_apply (s, err) < 0 || (l && ab_sysctl_apply (&l->sysctl, err) < 0)
      || (l && ab_paths_protect (&l->readonly_paths, &l->masked_paths, err) < 0)
      || ab_root_finalize (mc, err) < 0)
    return -1;
  ab_closes_deferred = false;
  /* The closes deferred while the mount tree was built happen now, in one
     close_range or two, not at execve: some of those fds are of the host
     (the rootfs's mount point as the host sees it, whose ".." leads to the
     host's /), and execve resolves process.args[0] while close-on-exec fds
     are still open -- "/proc/self/fd/N/../.." would run a host binary
     (CVE-2024-21626, attack 3a).  Nor may a created init that waits for
     `start` hold them where /proc/1/fd shows them. */
  close_inherited_fds (c, false);
  if (c->plan->process->terminal && c->console_fd >= 0)
    {
      if (ab_console_setup (c->console_fd, c->plan->process, !joined_mnt, err) < 0)
        return -1;
      close (c->console_fd);
      c->console_fd = -1;
    }
  if (l && l->personality_set)
    {
      ab_set_step ("personality");
      if (personality (l->personality_domain == AB_PERSONA_LINUX32 ? PER_LINUX32 : PER_LINUX) < 0)
        return ab_error_set (err, errno, "linux.personality");
    }
  if (l && l->memory_policy && apply_memory_policy (l->memory_policy, err) < 0)
    return -1;
  if (!c->no_new_keyring)
    {
      ab_set_step ("keyring");
      if (ab_keyring_join_new (c->id, err) < 0)
        return -1;
    }
  return 0;
}

/* First, before anything can fork, exec or unshare: the cgroups (the
   self-join is only safe then, cgroup-state.c), the umask, the fds. */
static int
child_init (struct ab_child_ctx *c, ab_error_t *err)
{
  ab_set_step ("cgroups");
  if (ab_cgroup_selfjoin (c->cg_join, c->n_cg_join, err) < 0)
    return -1;
  ab_set_step ("init");
  /* runc's default: the container starts with umask 022 unless
     process.user.umask says otherwise (ab_user_apply), never with the
     caller's (a 000 would make what the container writes writable by
     all).  Set before the mount points and device nodes are made. */
  umask (022);
  /* The network namespace is ours from birth: the wall's netlink sockets,
     made here at once and handed over, spare the parent an entry into it
     (a helper process, rootless).  On failure none go: the parent's setup
     fails, naming them. */
  if (c->wall_sock_fd >= 0)
    {
      int s[2] = { socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER),
                   socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE) };
      if (s[0] >= 0 && s[1] >= 0)
        ab_send_fds (c->wall_sock_fd, s, 2, NULL);
      for (int i = 0; i < 2; i++)
        if (s[i] >= 0)
          close (s[i]);
      close (c->wall_sock_fd);
      c->wall_sock_fd = -1;
    }
  /* (The checked root directory stays while the child clones its tree.) */
  close_inherited_fds (c, c->plan->trees_by_child);
  for (int i = 0; i < 3; i++)
    if (c->stdio[i] >= 0 && c->stdio[i] != i && dup2 (c->stdio[i], i) < 0)
      return ab_error_set (err, errno, "stdio: dup2 fd %d", c->stdio[i]);
  return 0;
}

/* The root filesystem's tree, then every mount the parent opens, in
   mounts[] order: received once the parent wrote the id maps, or (rootless)
   made here while it writes them; then become the user namespace's root
   and enter the new time namespace. */
static int
child_identity (struct ab_child_ctx *c, struct ab_mount_ctx *mc, ab_error_t *err)
{
  const struct ab_linux *l = c->plan->spec->linux_;
  struct ab_sync_msg m;
  int *fds;

  fds = xcalloc (c->plan->n_mounts + 1, sizeof *fds);
  mc->idmap_fds = fds;
  for (size_t k = 0; k < c->plan->n_mounts; k++)
    fds[k] = -1;
  if (c->plan->trees_by_child)
    {
      /* Rootless: the trees a helper of the parent's would make in our
         namespaces, made here while the parent writes the maps (cloning
         needs none): the root from the directory the bundle's load checked
         (opened again here and compared), the bind sources resolved as the
         parent resolves them. */
      ab_set_step ("rootfs");
      if ((mc->root_tree = ab_rootfs_tree_at (c->bundle->rootfs_fd, c->bundle->rootfs, 0, false, true, err)) < 0)
        return -1;
      ab_set_step ("idmap");
      if (ab_idmap_prepare (c->bundle, c->plan->mounts, c->plan->n_mounts, 0, true, fds, err) < 0)
        return -1;
    }
  ab_set_step ("idmaps");
  if (ab_sync_expect (c->sync_fd, AB_SYNC_IDS_DONE, &m, err) < 0)
    return -1;
  if (c->plan->trees_by_child ? m.value != 0 : m.value < 1)
    return ab_error_setc (err, AB_EC_INTERNAL, EPROTO, "%s", c->plan->trees_by_child
                                                                 ? "mount trees from the parent, which the child makes"
                                                                 : "no root filesystem tree from the parent");
  if (!c->plan->trees_by_child && ab_recv_fds (c->sync_fd, &mc->root_tree, 1, err) < 0)
    return -1;
  for (size_t k = 0; !c->plan->trees_by_child && k < c->plan->n_mounts; k++)
    if (ab_mount_from_parent (&c->plan->mounts[k]) && ab_recv_fds (c->sync_fd, &fds[k], 1, err) < 0)
      return -1;
  if (c->ns->new_user && l && root_is_mapped (&l->uid_mappings) && root_is_mapped (&l->gid_mappings))
    {
      /* Become the namespace's root (we already hold its capabilities). */
      if (setresgid (0, 0, 0) < 0 || setresuid (0, 0, 0) < 0)
        return ab_error_set (err, errno, "become root in the user namespace");
      ab_process_ids_root ();
    }
  if (c->ns->new_time && ab_ns_enter_new_time (l, err) < 0)
    return -1;
  return 0;
}

/* The container's filesystem, the cgroups joined after the parent's, and
   the createContainer hooks between the two where there are any. */
static int
child_rootfs (struct ab_child_ctx *c, struct ab_mount_ctx *mc, bool cgroupns_early, ab_error_t *err)
{
  const struct ab_spec *s = c->plan->spec;

  if (cgroupns_early)
    {
      ab_set_step ("cgroupns");
      if (ab_sync_expect (c->sync_fd, AB_SYNC_CGROUPS_DONE, NULL, err) < 0)
        return -1;
      if (unshare (CLONE_NEWCGROUP) < 0)
        return ab_error_set (err, errno, "unshare the cgroup namespace");
    }

  /* The mount tree's fds are left for execve to close (util.h). */
  ab_closes_deferred = true;
  if (c->ns->join_fd[AB_NS_MOUNT] >= 0 ? joined_root_check (c, mc, err) < 0
                                         : (ab_rootfs_prepare (mc, err) < 0 || ab_mounts_apply (mc, err) < 0
                                            || ab_dev_setup (s, mc->rootfd, c->ns->new_user, err) < 0))
    return -1;
  ab_closes_deferred = false;

  if (!ab_hooks_at_creation (s))
    /* No hook to wait for: finish the root filesystem while the parent
       joins the v1 cgroups (an RCU grace period) and sets up the network;
       nothing of the user's runs before both are done. */
    return finish_rootfs (c, mc, err) < 0 || join_after_parent (c, cgroupns_early, err) < 0 ? -1 : 0;
  ab_set_step ("hooks");
  if (ab_sync_send (c->sync_fd, AB_SYNC_MOUNTS_DONE, 0, err) < 0)
    return -1;
  /* The hooks see the environment complete: cgroups joined, and the
     createContainer hooks run before pivot_root (config.md). */
  if (join_after_parent (c, cgroupns_early, err) < 0)
    return -1;
  if (s->hooks[AB_HOOK_CREATE_CONTAINER].n)
    {
      size_t len;
      /* Step 5 of the lifecycle, after step 2 ("creating"): created. */
      _cleanup_free_ char *st = container_state_json (c, "created", &len);
      if (ab_hooks_run (s, AB_HOOK_CREATE_CONTAINER, st, len, err) < 0)
        return -1;
    }
  return finish_rootfs (c, mc, err);
}

/* Created: wait for start, run the startContainer hooks, exec the
   program. */
static int
child_start (struct ab_child_ctx *c, int *report_fd, ab_error_t *err)
{
  const struct ab_spec *s = c->plan->spec;
  int starter, landlock_fd = -1;

  /* The landlock ruleset of the final tree, built now so that a rule that
     cannot be made fails `create`; enforced by ab_process_exec, after the
     startContainer hooks, which run in the container unrestricted by it. */
  if (c->landlock
      && (landlock_fd = ab_landlock_build (c->landlock, c->landlock->abi, -1, 3 + c->preserve_fds, err)) < 0)
    return -1;
  ab_set_step ("created");
  if (ab_sync_send (c->sync_fd, AB_SYNC_CREATED, 0, err) < 0)
    return -1;
  starter = wait_for_start (c, err);
  if (starter < 0)
    return -1;
  *report_fd = starter;

  if (s->hooks[AB_HOOK_START_CONTAINER].n)
    {
      size_t len;
      _cleanup_free_ char *st = container_state_json (c, "created", &len);
      ab_set_step ("hooks");
      if (ab_hooks_run (s, AB_HOOK_START_CONTAINER, st, len, err) < 0)
        return -1;
    }
  /* STARTED tells the starter the startContainer hooks ran; a foreground
     creator without any (ab_await_exec) waits for the exec alone. */
  if ((!c->foreground || s->hooks[AB_HOOK_START_CONTAINER].n)
      && ab_sync_send (starter, AB_SYNC_STARTED, 0, err) < 0)
    return -1;
  if (ab_fds_prepare (3 + c->preserve_fds, err) < 0)
    return -1;
  return ab_process_exec (c->plan->process, c->seccomp, c->allow_setgroups, starter, landlock_fd, c->foreground, err);
}

static int
child_setup (struct ab_child_ctx *c, int *report_fd, ab_error_t *err)
{
  struct ab_mount_ctx mc = {
    .spec = c->plan->spec,
    .mounts = c->plan->mounts,
    .n_mounts = c->plan->n_mounts,
    .bundle = c->bundle->dir,
    .rootfs = c->bundle->rootfs,
    .rootfd = -1,
    .root_tree = -1,
    .userns = c->ns->new_user,
    .cgroupns = c->ns->new_cgroup || c->ns->join_fd[AB_NS_CGROUP] >= 0,
    .cg = c->cg,
    .idmap_fds = NULL,
    .fresh = NULL,
    .fresh_fd = -1,
  };
  bool cgroupns_early = c->ns->new_cgroup && needs_cgroupns_before_mounts (c->plan);

  if (child_init (c, err) < 0 || child_identity (c, &mc, err) < 0 || child_rootfs (c, &mc, cgroupns_early, err) < 0)
    return -1;
  return child_start (c, report_fd, err);
}

void
ab_child_main (struct ab_child_ctx *c)
{
  ab_error_t err = { 0 };
  int report = c->sync_fd;
  int code = AB_CHILD_EXIT_SETUP;

  /* The creator's cancel is its own (a signalfd reads the caller's
     signals, and ours are closed): our hooks end by their timeout. */
  ab_cancel_watch (-1);

  /* Die with the creator until it has recorded us (detached) or for good
     (foreground: set again after the last change of ids, which clears it,
     ab_process_exec).  If it died before the prctl, our first read of the
     setup socket sees EOF and we stop there (getppid is 0 in a new or
     joined pid namespace, so it cannot tell).  A prctl that fails is a
     setup that fails: no container process may outlive a dead creator
     unnoticed. */
  if (prctl (PR_SET_PDEATHSIG, SIGKILL) < 0)
    ab_error_set (&err, errno, "prctl(PR_SET_PDEATHSIG, SIGKILL)");
  else if (!(c->ns->clone_flags & CLONE_NEWPID) && c->ns->join_fd[AB_NS_PID] < 0
           && getppid () != c->parent_pid)
    _exit (AB_CHILD_EXIT_SETUP);
  else
    child_setup (c, &report, &err);
  if (err.cls == AB_EC_EXEC)
    code = (err.errnum == ENOENT || err.errnum == ENOTDIR) ? AB_CHILD_EXIT_NOENT : AB_CHILD_EXIT_NOEXEC;
  if (report >= 0)
    ab_sync_send_error (report, &err);
  _exit (code);
}
