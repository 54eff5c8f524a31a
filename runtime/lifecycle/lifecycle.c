/* start, kill, delete, state; and the foreground variants used by `run`. */
#include "config.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "hooks/hooks.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/lifecycle/container.h"
#include "runtime/lifecycle/lifecycle-internal.h"
#include "base/log.h"
#include "runtime/lifecycle/network.h"
#include "runtime/ns.h"
#include "runtime/plan/plan.h"
#include "runtime/seccomp-notify.h"
#include "runtime/lifecycle/wsstore.h"
#include "spec/annotations.h"
#include "runtime/sync.h"
#include "base/util.h"
#include "base/gen.h"

void
ab_container_free (struct ab_container *c)
{
  if (c == NULL)
    return;
  if (c->sync_fd >= 0)
    close (c->sync_fd);
  if (c->pidfd >= 0)
    close (c->pidfd);
  if (c->netns_fd >= 0)
    close (c->netns_fd);
  if (c->pty_master >= 0)
    close (c->pty_master);
  ab_state_file_close (&c->state_file);
  if (c->dirfd >= 0)
    close (c->dirfd);
  if (c->rootfd >= 0)
    close (c->rootfd);
  ab_cgroup_free (c->cg);
  ab_net_free (c->net);
  ab_plan_free (c->plan);
  ab_bundle_free (c->bundle);
  ab_state_free (c->state);
  ab_strv_free (&c->degraded);
  ab_changeset_free (c->ws);
  free (c->id);
  free (c->root);
  free (c);
}

int
ab_container_unlock (struct ab_container *c, ab_error_t *err)
{
  int fd;

  if (flock (c->dirfd, LOCK_UN) == 0)
    {
      c->lock = 0;
      return 0;
    }
  /* A lock kept by mistake would hold up every other command on the
     container (delete --force included) for as long as we run: for a
     foreground run, the program's whole life.  The lock belongs to the
     open file: the directory is opened anew and the old one closed. */
  fd = openat (c->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return ab_error_set (err, errno, "unlock the state of `%s`", c->id);
  close (c->dirfd);
  c->dirfd = fd;
  c->lock = 0;
  return 0;
}

int
ab_container_write_state (struct ab_container *c, ab_error_t *err)
{
  bool took = false;
  int r;

  /* Without the lock, readers may be reading: take it only if that needs
     no waiting (a reader holds it for no longer than a command), else the
     rename, which readers never see half done.  Holding LOCK_SH: the
     rename too (converting a flock lock drops it first, and a refused
     LOCK_NB conversion would leave us with none). */
  if (c->lock == LOCK_EX)
    r = ab_state_write_locked (c->dirfd, &c->state_file, c->state, err);
  else if (c->lock != 0 || flock (c->dirfd, LOCK_EX | LOCK_NB) < 0)
    {
      ab_state_file_close (&c->state_file);
      r = ab_state_write (c->dirfd, c->state, err);
    }
  else
    {
      c->lock = LOCK_EX;
      took = true;
      r = ab_state_write_locked (c->dirfd, &c->state_file, c->state, err);
    }
  if (r < 0)
    ab_state_dir_failed (err, c->root, c->id);
  if (took && ab_container_unlock (c, r < 0 ? NULL : err) < 0)
    r = -1;
  return r;
}

int
ab_exit_status_from_siginfo (const siginfo_t *info)
{
  if (info->si_code == CLD_EXITED)
    return info->si_status & 0xff;
  return 128 + info->si_status;
}

int
ab_container_set_cgroup (struct ab_container *c, struct ab_cgroup *cg, ab_error_t *err)
{
  _cleanup_gen_ struct ab_gen *g = ab_gen_new (false);
  const char *buf;
  size_t len;

  ab_cgroup_gen (cg, g);
  buf = ab_gen_buf (g, &len);
  ab_json_free (c->state->cgroup);
  c->state->cgroup = ab_json_parse (buf, len, &ab_json_config_limits, "cgroup state", err);
  return c->state->cgroup == NULL ? -1 : 0;
}

int
ab_container_save_cgroup (struct ab_container *c, ab_error_t *err)
{
  if (c->cg == NULL)
    return 0;
  if (ab_container_set_cgroup (c, c->cg, err) < 0)
    return -1;
  return ab_container_write_state (c, err);
}

/* rootfs is <root>/.rootfs@<id> */
bool
ab_container_private_rootfs (const struct ab_container *c)
{
  const char *base;

  if (c->state == NULL || c->state->rootfs == NULL)
    return false;
  base = strrchr (c->state->rootfs, '/');
  base = base ? base + 1 : c->state->rootfs;
  return ab_str_has_prefix (base, AB_PRIVATE_ROOTFS_PREFIX)
         && strcmp (base + strlen (AB_PRIVATE_ROOTFS_PREFIX), c->id) == 0;
}

int
ab_container_release_resources (struct ab_container *c, ab_error_t *err)
{
  int r = 0;

  /* The per-container egress daemon exits by itself when the cgroup
     empties; if it is still there (a delete racing it), end it. */
  if (c->state && c->state->helper_pid > 0)
    {
      struct ab_state h = { .pid = c->state->helper_pid, .pid_start = c->state->helper_start };
      int fd = ab_state_pidfd (&h);
      if (fd >= 0)
        {
          /* Let it write its record and go before the state directory
             does; a helper that does not, within a second, is killed. */
          struct pollfd p = { .fd = fd, .events = POLLIN };
          syscall (SYS_pidfd_send_signal, fd, SIGTERM, NULL, 0);
          if (poll (&p, 1, 1000) <= 0)
            {
              syscall (SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0);
              poll (&p, 1, 1000);
            }
          close (fd);
        }
      c->state->helper_pid = 0;
    }

  if (c->cg)
    {
      ab_error_t e = { 0 };
      /* The common case (the container's last process has exited: run,
         delete of a stopped container) costs the rmdirs alone: an empty
         cgroup has no one to kill or wait for, and the rmdir of the leaf
         that tracks processes is the kernel's answer to "empty?".  A
         process can enter the others after that only by a write to
         cgroup.procs by the host's root, and then their rmdir fails with
         EBUSY and says so, as a failed kill would have.  That rmdir
         failing for another reason is no answer: the long way then. */
      int gone = ab_cgroup_remove_if_empty (c->cg, &e);
      if (gone <= 0)
        {
          int busy = ab_cgroup_populated (c->cg, &e);
          if (busy != 0)
            {
              if (ab_cgroup_kill (c->cg, SIGKILL, &e) < 0 && e.errnum != ESRCH)
                ab_debug ("release: %s", e.msg);
              busy = ab_cgroup_wait_empty (c->cg, 5000, &e);
              if (busy < 0)
                ab_warn ("container `%s`: %s", c->id, e.msg);
            }
          if ((busy == 0 ? ab_cgroup_remove (c->cg, err) : ab_cgroup_destroy (c->cg, err)) < 0)
            r = -1;
        }
    }
  /* Whether or not the state got to record it: a create killed right after
     the bind mount leaves one all the same, and it is ours to remove.  A
     container this process made holds one only if it recorded it. */
  if (c->dirfd >= 0 && !(c->created_here && c->state && !c->state->netns_held))
    {
      char path[64];
      snprintf (path, sizeof path, "/proc/self/fd/%d/" AB_NETNS_FILE, c->dirfd);
      if (umount2 (path, MNT_DETACH) < 0 && errno != EINVAL && errno != ENOENT)
        {
          if (r == 0)
            ab_error_set (err, errno, "unmount the network namespace of `%s`", c->id);
          r = -1;
        }
      else if (c->state)
        c->state->netns_held = false;
    }
  /* The private rootfs skeleton of a `run --default` whose cache could not
     hold it (runtime/sandbox/sandbox.c) goes with the container, once nothing of
     the container is left to use it. */
  if (r == 0 && c->rootfd >= 0 && ab_container_private_rootfs (c)
      && ab_state_private_rootfs_remove (c->rootfd, c->id, false) < 0)
    r = ab_error_set (err, errno, "remove the private rootfs skeleton of `%s`", c->id);
  return r;
}

void
ab_container_keep_for_delete (struct ab_container *c, ab_error_t *err)
{
  ab_error_t e = { 0 };
  size_t len;

  /* What could not be released stays recorded: state.json with the
     cgroups that are left (`created` counts what remains of each), and
     the directory around it, so that `list` shows the container and
     `delete --force` finds everything again.  A state write that fails
     leaves the previous state.json, whose record is a superset. */
  if (c->dirfd < 0 || c->state == NULL)
    return;
  if (c->cg)
    ab_container_set_cgroup (c, c->cg, &e);
  if (ab_container_write_state (c, &e) < 0)
    ab_debug ("container `%s`: %s", c->id, e.msg);
  if (err == NULL || err->cls == AB_EC_NONE)
    return;
  len = strlen (err->msg);
  snprintf (err->msg + len, sizeof err->msg - len,
            " (container `%s` kept: `agentbox delete --force %s` removes the rest)", c->id, c->id);
}

/* The listener the process sent: to the agent, then SECCOMP_DONE.  Failing
   that, the process dies here: it must never run its program under a
   filter whose listener no agent holds (it waits for our answer, and may
   be waiting inside a syscall the filter handed to the absent agent). */
static int
pass_listener (int fd, const struct ab_listener_target *t, int listener, ab_error_t *err)
{
  struct ab_spec *spec = NULL;
  const struct ab_seccomp *sc = t ? t->sc : NULL;
  int r = -1;

  if (t && sc == NULL)
    {
      spec = ab_container_load_spec (t->c, err);
      sc = spec && spec->linux_ ? spec->linux_->seccomp : NULL;
    }
  if (sc && sc->listener_path)
    {
      size_t len;
      _cleanup_free_ char *json
          = ab_state_process_json (t->c->state, t->status, t->pid, sc->listener_metadata, &len);
      r = ab_seccomp_agent_send (sc, json, len, listener, err);
    }
  else if (t == NULL || t->sc || spec)
    ab_error_setc (err, AB_EC_INTERNAL, EPROTO, "a seccomp listener came, but the config has no listenerPath");
  close (listener);
  ab_spec_free (spec);
  if (r == 0)
    return ab_sync_send (fd, AB_SYNC_SECCOMP_DONE, 0, err);
  if (t && t->pidfd >= 0)
    syscall (SYS_pidfd_send_signal, t->pidfd, SIGKILL, NULL, 0);
  return AB_AWAIT_NO_AGENT;
}

/* After `start`: the child reports STARTED (startContainer hooks ran; only
   when `started` says it sends it), maybe a seccomp listener (SECCOMP with
   its fd, answered SECCOMP_DONE once the agent has it), then EXEC (its
   setup is done, execve follows), then either an error (execve failed) or
   EOF (execve succeeded: the socket was close-on-exec).  EOF before EXEC
   is a child that died during its setup: never reported as a program that
   runs.  Every message is received with room for an fd, so a listener is
   never lost or left open here. */
int
ab_await_exec (int fd, bool started, const struct ab_listener_target *t, ab_error_t *err)
{
  struct ab_sync_msg m;
  bool execing = false;
  int tries = 0;
  int passed;

  if (started && ab_sync_expect (fd, AB_SYNC_STARTED, &m, err) < 0)
    return -1;
  for (;;)
    {
      ab_error_t e = { 0 };

      if (ab_sync_recv_fd (fd, &m, &passed, &e) < 0)
        {
          if (e.errnum != EPIPE && ++tries < 3)
            continue; /* a receive that failed is no answer: again */
          if (e.errnum != EPIPE)
            {
              *err = e;
              return -1;
            }
          if (execing)
            return 0; /* EOF: the program runs */
          return ab_error_setc (err, AB_EC_SETUP, EPIPE, "the container process died before its program ran");
        }
      if (m.type == AB_SYNC_SECCOMP && passed >= 0 && !execing)
        {
          int r = pass_listener (fd, t, passed, err);
          if (r < 0)
            return r;
          continue;
        }
      if (passed >= 0)
        close (passed);
      if (m.type == AB_SYNC_EXEC && !execing)
        {
          execing = true;
          continue;
        }
      if (m.type == AB_SYNC_ERROR)
        {
          *err = m.err;
          return -1;
        }
      return ab_error_setc (err, AB_EC_INTERNAL, EPROTO, "start: unexpected message %u", m.type);
    }
}

static int
run_poststart (struct ab_container *c, const struct ab_spec *s, ab_error_t *err)
{
  size_t len;
  _cleanup_free_ char *st = NULL;

  if (s->hooks[AB_HOOK_POSTSTART].n == 0)
    return 0;
  st = ab_runtime_state_json (c, AB_STATUS_RUNNING, &len);
  ab_set_step ("hooks");
  if (ab_hooks_run (s, AB_HOOK_POSTSTART, st, len, err) < 0)
    {
      /* runtime.md: a failing poststart hook stops the container. */
      ab_error_t ignored = { 0 };
      if (c->pidfd >= 0)
        syscall (SYS_pidfd_send_signal, c->pidfd, SIGKILL, NULL, 0);
      if (c->cg)
        ab_cgroup_kill (c->cg, SIGKILL, &ignored);
      return -1;
    }
  return 0;
}

void
ab_explain_dead_child (int pidfd, ab_error_t *err)
{
  struct pollfd p = { .fd = pidfd, .events = POLLIN };
  siginfo_t info = { 0 };

  if (pidfd < 0 || err == NULL || err->cls == AB_EC_CONFIG || err->cls == AB_EC_USAGE)
    return;
  /* A broken sync socket: give the process a moment to be seen dead, and
     leave it to be reaped by whoever waits for it (WNOWAIT). */
  if (poll (&p, 1, 100) <= 0 || waitid (P_PIDFD, (id_t) pidfd, &info, WEXITED | WNOHANG | WNOWAIT) < 0)
    return;
  if (info.si_code == CLD_KILLED || info.si_code == CLD_DUMPED)
    ab_error_setc (err, AB_EC_SETUP, 0, "the container process was killed by SIG%s before the program ran",
                   sigabbrev_np (info.si_status) ? sigabbrev_np (info.si_status) : "?");
}

int
ab_container_start_local (struct ab_container *c, ab_error_t *err)
{
  ab_set_step ("start");
  /* the foreground child (runtime/child.c) sends STARTED only after
     startContainer hooks */
  bool started = c->bundle && c->bundle->spec->hooks[AB_HOOK_START_CONTAINER].n;
  const struct ab_linux *l = c->bundle ? c->bundle->spec->linux_ : NULL;
  struct ab_listener_target t = {
    .c = c, .sc = l ? l->seccomp : NULL, .status = AB_STATUS_CREATED, .pid = c->pid, .pidfd = c->pidfd,
  };

  int r;

  /* An overlay workspace's run start: settled before the program may run,
     saved while it does (a failed save leaves create's start in
     meta.json, which only finds more conflicts). */
  if (c->ws)
    ab_changeset_settle (c->ws);
  r = ab_sync_send (c->sync_fd, AB_SYNC_START, 0, err);
  if (r == 0)
    r = ab_await_exec (c->sync_fd, started, &t, err);
  if (r < 0)
    {
      /* (Killed by us for want of its seccomp agent: err says why.) */
      if (err->cls != AB_EC_EXEC && r != AB_AWAIT_NO_AGENT)
        ab_explain_dead_child (c->pidfd, err);
      return -1;
    }
  close (c->sync_fd);
  c->sync_fd = -1;
  c->started = true;
  c->state->status = AB_STATUS_RUNNING;
  ab_net_rules_record (c);
  if (ab_container_write_state (c, err) < 0)
    return -1;
  if (c->ws && ab_changeset_save (c->ws, &(ab_error_t){ 0 }) < 0)
    ab_debug ("workspace: the run's start not saved; meta.json keeps create's");
  /* a foreground create's (create.c) */
  if (c->lock == LOCK_EX && ab_container_unlock (c, err) < 0)
    return -1;
  return run_poststart (c, c->bundle->spec, err);
}

int
ab_container_wait (struct ab_container *c, siginfo_t *info, ab_error_t *err)
{
  memset (info, 0, sizeof *info);
  while (waitid (P_PIDFD, (id_t) c->pidfd, info, WEXITED) < 0)
    if (errno != EINTR)
      return ab_error_set (err, errno, "wait for the container process");
  return 0;
}

static void
run_poststop (struct ab_container *c, const struct ab_spec *s)
{
  size_t len;
  _cleanup_free_ char *st = NULL;
  ab_error_t e = { 0 };

  if (s == NULL || s->hooks[AB_HOOK_POSTSTOP].n == 0)
    return;
  st = ab_runtime_state_json (c, AB_STATUS_STOPPED, &len);
  /* runtime.md: a failing poststop hook is a warning; the delete goes on. */
  if (ab_hooks_run (s, AB_HOOK_POSTSTOP, st, len, &e) < 0)
    ab_warn ("container `%s`: %s", c->id, e.msg);
}

int
ab_container_destroy (struct ab_container *c, ab_error_t *err)
{
  int r;

  ab_set_step ("delete");
  if (c->dirfd >= 0)
    {
      flock (c->dirfd, LOCK_EX);
      c->lock = LOCK_EX;
    }
  r = ab_container_release_resources (c, err);
  run_poststop (c, c->bundle ? c->bundle->spec : NULL);
  if (r < 0)
    {
      c->state->status = AB_STATUS_STOPPED; /* waited for (supervise.c) */
      ab_container_keep_for_delete (c, err);
      return -1;
    }
  ab_state_file_close (&c->state_file);
  if (c->dirfd >= 0)
    {
      /* removed while still locked: no one takes the lock of a state
         directory that is going away */
      int fd = c->dirfd;
      c->dirfd = -1;
      if (ab_state_dir_remove_fd (c->rootfd, c->id, fd, err) < 0)
        r = -1;
    }
  return r;
}

/* Load a container by id: state, snapshot of config.json, cgroup. */
static int
load (const char *root, const char *id, bool exclusive, bool cgroups, struct ab_container **out,
      ab_error_t *err)
{
  _cleanup_container_ struct ab_container *c = xzalloc (sizeof *c);

  c->rootfd = c->dirfd = c->pidfd = c->sync_fd = c->netns_fd = c->pty_master = -1;
  c->state_file = (struct ab_state_file)AB_STATE_FILE_INIT;
  if (ab_id_validate (id, err) < 0)
    return -1;
  c->id = xstrdup (id);
  c->root = xstrdup (root);
  c->rootfd = ab_state_root_open (root, false, err);
  if (c->rootfd < 0)
    {
      if (err->cls == AB_EC_NOTFOUND)
        ab_error_setc (err, AB_EC_NOTFOUND, 0, "container `%s` does not exist", id);
      return -1;
    }
  c->dirfd = ab_state_dir_open (c->rootfd, id, exclusive, err);
  if (c->dirfd < 0)
    return -1;
  c->lock = exclusive ? LOCK_EX : LOCK_SH;
  if (ab_state_read (c->dirfd, id, &c->state, err) < 0)
    return -1;
  c->pid = c->state->pid;
  if (cgroups && c->state->cgroup && ab_cgroup_load (c->state->cgroup, &c->cg, err) < 0)
    return ab_error_prefix (err, "container `%s`: corrupt state", id);
  *out = ab_steal_ptr (&c);
  return 0;
}

int
ab_container_load (const char *root, const char *id, bool exclusive, struct ab_container **out,
                   ab_error_t *err)
{
  return load (root, id, exclusive, true, out, err);
}

int
ab_container_peek (const char *root, const char *id, struct ab_container **out, ab_error_t *err)
{
  return load (root, id, false, false, out, err);
}

/* The config snapshot, parsed without checking the bundle (which may be
   gone by the time of delete). */
struct ab_spec *
ab_container_load_spec (struct ab_container *c, ab_error_t *err)
{
  _cleanup_free_ char *buf = NULL;
  size_t len;

  if (ab_read_file_at (c->dirfd, AB_CONFIG_FILE, AB_CONFIG_MAX_BYTES, &buf, &len, err) < 0)
    return NULL;
  return ab_spec_parse (buf, len, err);
}

int
ab_container_state (const char *root, const char *id, struct ab_state **out, int *status, ab_error_t *err)
{
  _cleanup_container_ struct ab_container *c = NULL;

  if (ab_container_load (root, id, false, &c, err) < 0)
    return -1;
  *status = ab_state_status (c->dirfd, c->state);
  *out = ab_steal_ptr (&c->state);
  return 0;
}

int
ab_container_start (const char *root, const char *id, ab_error_t *err)
{
  _cleanup_container_ struct ab_container *c = NULL;
  _cleanup_close_ int fd = -1;
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  struct ab_spec *spec;
  int status, r;

  ab_set_step ("start");
  if (ab_container_load (root, id, true, &c, err) < 0)
    return -1;
  status = ab_state_status (c->dirfd, c->state);
  if (status != AB_STATUS_CREATED)
    {
      if (status == AB_STATUS_STOPPED)
        return ab_error_setc (err, AB_EC_STATE, 0, "cannot start container `%s`: container not running (stopped)",
                              id);
      return ab_error_setc (err, AB_EC_STATE, 0, "cannot start container `%s`: it is %s, not created", id,
                            ab_status_name (status));
    }
  c->pidfd = ab_state_pidfd (c->state);
  fd = socket (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return ab_error_set (err, errno, "start socket");
  snprintf (sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d/" AB_START_SOCK, c->dirfd);
  if (connect (fd, (struct sockaddr *) &sa, sizeof sa) < 0)
    return ab_error_set (err, errno, "connect to container `%s`", id);
  /* Only one start: the socket goes before the container may run. */
  unlinkat (c->dirfd, AB_START_SOCK, 0);
  if (ab_sync_send (fd, AB_SYNC_START, 0, err) < 0)
    return -1;
  {
    /* The config snapshot is read only if a listener comes. */
    struct ab_listener_target t = {
      .c = c, .sc = NULL, .status = AB_STATUS_CREATED, .pid = c->pid, .pidfd = c->pidfd,
    };
    r = ab_await_exec (fd, true, &t, err);
  }
  if (r < 0 && err->cls != AB_EC_EXEC && r != AB_AWAIT_NO_AGENT)
    ab_explain_dead_child (c->pidfd, err);
  c->state->status = r < 0 ? AB_STATUS_STOPPED : AB_STATUS_RUNNING;
  if (ab_container_write_state (c, r < 0 ? NULL : err) < 0 && r == 0)
    return -1;
  if (r < 0)
    return -1;
  spec = ab_container_load_spec (c, err);
  if (spec == NULL)
    return -1;
  r = run_poststart (c, spec, err);
  ab_spec_free (spec);
  return r;
}

/* --all without a cgroup (rootless, none delegated), or SIGKILL to a
   paused container: every process of the container's pid namespace
   (ab_pidns_signal: pinned, once each, until no one new is found), the
   init through the pidfd of its state.  The init alone where the
   container shares our pid namespace. */
static int
kill_pidns (struct ab_container *c, int sig, ab_error_t *err)
{
  _cleanup_close_ int init = ab_state_pidfd (c->state);

  if (init < 0)
    return ab_error_setc (err, AB_EC_STATE, ESRCH, "cannot kill container `%s`: container not running", c->id);
  /* the others first: the init's end would take the namespace with it */
  if (ab_pidns_signal (c->pid, sig, err) < 0)
    return ab_error_prefix (err, "cannot kill container `%s`: its pid namespace", c->id);
  syscall (SYS_pidfd_send_signal, init, sig, NULL, 0);
  return 0;
}

int
ab_container_kill (const char *root, const char *id, int sig, bool all, ab_error_t *err)
{
  _cleanup_container_ struct ab_container *c = NULL;
  _cleanup_close_ int pidfd = -1;
  int status;

  ab_set_step ("kill");
  if (ab_container_load (root, id, false, &c, err) < 0)
    return -1;
  status = ab_state_status (c->dirfd, c->state);
  if (status != AB_STATUS_CREATED && status != AB_STATUS_RUNNING && status != AB_STATUS_PAUSED)
    {
      /* As runc: a stopped container is no error for --all, which
         containerd's shim sends after every task exit.  What is left in its
         cgroups (a daemon of a container in the host's pid namespace) still
         gets the signal; a cgroup already gone has nobody to signal.  The
         init itself is never signalled by pid once stopped: the pid may
         have been recycled. */
      if (!all)
        return ab_error_setc (err, AB_EC_STATE, 0, "cannot kill container `%s`: container not running", id);
      if (c->cg && ab_cgroup_kill (c->cg, sig, err) < 0 && err->errnum != ENOENT)
        return -1;
      ab_error_clear (err);
      return 0;
    }
  if (all && c->cg)
    return ab_cgroup_kill (c->cg, sig, err);
  if (all && c->cg == NULL)
    return kill_pidns (c, sig, err);
  /* A task held by the v1 freezer does not die until it is thawed (the
     v2 freezer lets SIGKILL through): SIGKILL to a paused container thaws
     it, as runc's does.  Every process of its pid namespace is sent the
     signal first, while frozen: the init's end alone kills the others only
     once it happens, and a thawed `exec --ignore-paused` child could reach
     its program before that.  Any other signal waits for `resume`. */
  if (sig == SIGKILL && status == AB_STATUS_PAUSED && c->cg)
    return kill_pidns (c, sig, err) < 0 ? -1 : ab_cgroup_freeze (c->cg, false, err);
  /* The pidfd pins the process we checked: a recycled pid is never signalled. */
  pidfd = ab_state_pidfd (c->state);
  if (pidfd < 0)
    return ab_error_setc (err, AB_EC_STATE, ESRCH, "cannot kill container `%s`: container not running", id);
  if (syscall (SYS_pidfd_send_signal, pidfd, sig, NULL, 0) < 0)
    return ab_error_set (err, errno, "kill container `%s` with signal %d", id, sig);
  return 0;
}

/* The change set of an overlay workspace whose create never finished (a
   run killed while it was made): the container's, removed with it (it
   holds no change, and its tmpfs must not outlive `delete --force`,
   docs/crash-safety.md).  A pending one outlives the container. */
static int
remove_unfinished_changes (const char *root, const char *id, ab_error_t *err)
{
  int n = ab_changeset_remove_unfinished (root, id, err);

  if (n > 0)
    ab_debug ("delete: removed the change set of an interrupted create of `%s`", id);
  return n < 0 ? -1 : 0;
}

int
ab_container_delete (const char *root, const char *id, bool force, ab_error_t *err)
{
  _cleanup_container_ struct ab_container *c = NULL;
  struct ab_spec *spec;
  int status, r;

  ab_set_step ("delete");
  if (ab_container_load (root, id, true, &c, err) < 0)
    {
      /* delete --force of a container that does not exist succeeds; what a
         create killed before writing any state left goes with it. */
      if (force && err->cls == AB_EC_NOTFOUND)
        {
          _cleanup_close_ int rootfd = ab_state_root_open (root, false, NULL);
          int n = 0;

          ab_error_clear (err);
          if (rootfd >= 0 && (n = ab_state_dir_remove_orphan (rootfd, id, err)) < 0)
            return -1;
          if (n > 0)
            ab_debug ("delete: removed the state directory of an interrupted create of `%s`", id);
          return remove_unfinished_changes (root, id, err);
        }
      return -1;
    }
  status = ab_state_status (c->dirfd, c->state);
  if ((status == AB_STATUS_RUNNING || status == AB_STATUS_PAUSED) && !force)
    return ab_error_setc (err, AB_EC_STATE, 0, "cannot delete container `%s` that is not stopped: %s", id,
                          ab_status_name (status));
  if (status != AB_STATUS_STOPPED)
    {
      _cleanup_close_ int pidfd = ab_state_pidfd (c->state);
      if (pidfd >= 0)
        syscall (SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
    }
  spec = ab_container_load_spec (c, NULL);
  r = ab_container_release_resources (c, err);
  run_poststop (c, spec);
  ab_spec_free (spec);
  /* while the id is still taken: no create of it can make a change set meanwhile */
  if (r == 0 && ab_ws_mode_of (&c->state->annotations) == AB_WS_MODE_OVERLAY)
    r = remove_unfinished_changes (root, id, err);
  if (r < 0)
    {
      ab_container_keep_for_delete (c, err);
      return -1;
    }
  ab_state_file_close (&c->state_file);
  {
    int fd = c->dirfd;
    c->dirfd = -1;
    /* removed while still locked, as in ab_container_destroy */
    if (ab_state_dir_remove_fd (c->rootfd, c->id, fd, err) < 0)
      r = -1;
  }
  return r;
}

char *
ab_runtime_state_json (struct ab_container *c, int status, size_t *len)
{
  return ab_state_oci_json (c->state, status, false, len);
}

/* The held network namespace of a container with a wall (<root>/<id>/netns), or -1.
   Rootless, where none can be held (a bind mount on the host): its init's
   while it runs, the pidfd making sure that pid is still the container's. */
int
ab_net_held_netns (const char *root, const char *id)
{
  _cleanup_container_ struct ab_container *c = NULL;
  ab_error_t ignored = { 0 };
  _cleanup_close_ int pidfd = -1;
  char path[64];
  int fd;

  if (ab_container_peek (root, id, &c, &ignored) < 0 || c->state->rules_text == NULL)
    return -1;
  if (c->state->netns_held)
    return openat (c->dirfd, AB_NETNS_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (!c->state->rootless || !c->state->own_netns || (pidfd = ab_state_pidfd (c->state)) < 0)
    return -1;
  snprintf (path, sizeof path, "/proc/%d/ns/net", (int) c->state->pid);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd >= 0 && ab_proc_start_time (c->state->pid, NULL) != c->state->pid_start)
    {
      close (fd);
      return -1;
    }
  return fd;
}
