/* The container's mount tree.
 *
 * Every mount is made onto an O_PATH fd that ab_mkpath_in_root resolved
 * inside the rootfs: a symlink in the attacker-controlled rootfs can never
 * redirect a mount to the host, and no path is re-resolved between check
 * and use.  A new filesystem with nothing but flags and options is one
 * mount(2) onto /proc/self/fd/N (ab_mount_on_fd), the magic link the kernel
 * resolves to that very fd, as runc and crun do; everything else, and the
 * error report when mount(2) fails, takes the fd-based mount API
 * (fsopen/fsconfig/fsmount, open_tree, mount_setattr, move_mount), whose
 * fsconfig names the option the kernel refused. */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <sys/syscall.h>

#include "base/kernel-compat.h"
#include "base/log.h"
#include "runtime/mount-internal.h"
#include "runtime/mount.h"
#include "base/resolve.h"
#include "base/util.h"



int
ab_rootfs_prepare (struct ab_mount_ctx *ctx, ab_error_t *err)
{
  const struct ab_linux *l = ctx->spec->linux_;
  unsigned long root_prop = MS_SLAVE;

  ab_set_step ("rootfs");
  /* Nothing we mount may propagate back to the host: make the whole tree a
     slave (or private) first.  "shared" still gets a slave "/" here; the
     rootfs mount itself becomes shared after pivot_root. */
  if (l && (l->rootfs_propagation == AB_PROP_PRIVATE || l->rootfs_propagation == AB_PROP_UNBINDABLE))
    root_prop = MS_PRIVATE;
  if (mount (NULL, "/", NULL, MS_REC | root_prop, NULL) < 0)
    return ab_error_set (err, errno, "make / %s", root_prop == MS_SLAVE ? "rslave" : "rprivate");
  ab_fd_paths_check ();
  /* The parent resolved root.path once and cloned it (runtime/idmap.c);
     what we pivot into is that tree, whatever the path resolves to now.
     It is attached at the rootfs path only so that the createContainer
     hooks see it where runc puts it: a path swapped since would only move
     where it shows in our own, private mount namespace. */
  {
    _cleanup_close_ int at = open (ctx->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (at < 0)
      return ab_error_set (err, errno, "open the root filesystem's mount point `%s`", ctx->rootfs);
    if (ab_move_mount_fd (ctx->root_tree, at, ctx->rootfs, err) < 0)
      return -1;
  }
  ctx->rootfd = ctx->root_tree;
  ctx->root_tree = -1;
  /* pivot_root refuses a new root whose parent mount is shared. */
  {
    struct mount_attr a = { .propagation = MS_PRIVATE };
    if (mount_setattr (ctx->rootfd, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof a) < 0)
      return ab_error_set (err, errno, "make the root filesystem private");
  }
  return 0;
}

/* Since Linux 6.8 /proc/self/mountinfo lists mounts in the order they were
   made, and the parent made every bind's tree before the first mount: the
   bind would be listed ahead of the mounts config.json puts before it (the
   order config.md asks for, which runtime-tools checks).  A copy of the
   attached tree, made now, takes its place (a detached tree cannot be
   copied before kernel 6.15).  The copy is of what is already in place,
   source, flags and depth alike; if it cannot be made the first one
   stays. */
static int
remake_in_order (struct ab_mount_ctx *ctx, int target, const struct ab_mount *m, const char *what,
                 ab_error_t *err)
{
  _cleanup_close_ int now = -1, copy = -1;
  char self[64];

  now = ab_open_in_root (ctx->rootfd, m->destination, O_PATH, 0, NULL);
  if (now < 0)
    return 0;
  copy = open_tree (now, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
  if (copy < 0)
    return 0;
  snprintf (self, sizeof self, "/proc/self/fd/%d", now);
  if (umount2 (self, MNT_DETACH) < 0)
    return 0;
  if (ab_move_mount_fd (copy, target, m->destination, err) < 0)
    return ab_error_prefix (err, "%s", what);
  return 0;
}

static int
do_bind (struct ab_mount_ctx *ctx, size_t i, const struct ab_mount *m, const char *what, ab_error_t *err)
{
  _cleanup_free_ char *src = NULL;
  _cleanup_close_ int tree = -1;
  _cleanup_close_ int target = -1;
  struct stat st;

  if (m->source == NULL || *m->source == '\0')
    return ab_error_setc (err, AB_EC_CONFIG, 0, "%s: a bind mount needs a source", what);
  src = m->source[0] == '/' ? xstrdup (m->source) : xasprintf ("%s/%s", ctx->bundle, m->source);
  /* Filesystem options (validate.c lets only key=value ones through): a
     bind has no filesystem to give them to. */
  if (m->data != NULL && *m->data != '\0')
    ab_warn ("%s: filesystem options `%s` are ignored by a bind mount", what, m->data);

  /* The parent opened the source (beneath the bundle where it enters it)
     and sent its tree: the path is never resolved here, where a symlink of
     the image could have been swapped in since. */
  if (ctx->idmap_fds == NULL || ctx->idmap_fds[i] < 0)
    return ab_error_setc (err, AB_EC_INTERNAL, EPROTO, "%s: no tree from the parent for bind source `%s`",
                          what, src);
  tree = dup (ctx->idmap_fds[i]);
  if (tree < 0)
    return ab_error_set (err, errno, "%s: open bind source `%s`", what, src);
  /* The type of what we opened, not of what the path said a moment ago,
     decides whether the target is a directory or a file. */
  if (fstat (tree, &st) < 0)
    return ab_error_set (err, errno, "%s: stat bind source `%s`", what, src);
  target = ab_mount_target (ctx, m, S_ISDIR (st.st_mode) ? AB_LAST_DIR : AB_LAST_FILE, what, err);
  if (target < 0)
    return -1;
  {
    struct stat ts;
    if (fstat (target, &ts) < 0)
      return ab_error_set (err, errno, "%s: stat target", what);
    if (S_ISDIR (ts.st_mode) != S_ISDIR (st.st_mode))
      return ab_error_setc (err, AB_EC_CONFIG, ENOTDIR,
                            "%s: source `%s` is %sa directory but the target is %s", what, src,
                            S_ISDIR (st.st_mode) ? "" : "not ", S_ISDIR (ts.st_mode) ? "one" : "not");
  }
  /* The parent cloned the source in the host's mount namespace, so a
     shared source (every mount of a systemd host) gives a tree in the
     host's peer group: a mount the container made below it would appear
     on the host.  It becomes a slave first, as a bind made in the
     container's namespace after ab_rootfs_prepare's rslave would (runc):
     the host's mounts still come in, none goes out.  Private for
     rootfsPropagation private or unbindable, as "/" is then.  Also for
     shared and rshared, where runc keeps such a bind a peer (Kubernetes'
     Bidirectional volumes): the container's mounts never reach the host
     here (audit rule AB-MNT-011); a shared option of the mount or the
     rootfs makes it shared on top of that, for namespaces nested in the
     container. */
  {
    int rp = ctx->spec->linux_ ? ctx->spec->linux_->rootfs_propagation : AB_PROP_NONE;
    struct mount_attr a = { .propagation = rp == AB_PROP_PRIVATE || rp == AB_PROP_UNBINDABLE ? MS_PRIVATE
                                                                                            : MS_SLAVE };
    if (mount_setattr (tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof a) < 0)
      return ab_error_set (err, errno, "%s: make the bind of `%s` a %s", what, src,
                           a.propagation == MS_SLAVE ? "slave" : "private mount");
  }
  if (ab_mount_set_attrs (tree, m, true, what, err) < 0)
    return -1;
  if (ab_move_mount_fd (tree, target, m->destination, err) < 0)
    return ab_error_prefix (err, "%s", what);
  if (remake_in_order (ctx, target, m, what, err) < 0)
    return -1;
  return ab_mount_set_propagation_at (ctx, m, what, err);
}

/* tmpcopyup: the new tmpfs starts with a copy of what the rootfs had there. */
static int
do_remount (struct ab_mount_ctx *ctx, const struct ab_mount *m, const char *what, ab_error_t *err)
{
  _cleanup_close_ int target = ab_open_in_root (ctx->rootfd, m->destination, O_PATH, 0, err);

  if (target < 0)
    return ab_error_prefix (err, "%s", what);
  if (ab_mount_set_attrs (target, m, true, what, err) < 0)
    return -1;
  return ab_mount_set_propagation (target, m, what, err);
}

int
ab_mounts_apply (struct ab_mount_ctx *ctx, ab_error_t *err)
{
  size_t i;

  ab_set_step ("mounts");
  for (i = 0; i < ctx->n_mounts; i++)
    {
      const struct ab_mount *m = &ctx->mounts[i];
      char what[64 + 4096];
      int r;

      snprintf (what, sizeof what, "mounts[%zu] (%s)", i, m->destination);
      /* Only a mount below the last fresh tmpfs leaves it on top. */
      if (ctx->fresh && ab_mount_fresh_child (ctx, m->destination) == NULL)
        {
          ctx->fresh = NULL;
          ctx->fresh_fd = -1; /* closed by execve (util.h) */
        }
      if (m->flags & MS_REMOUNT)
        r = do_remount (ctx, m, what, err);
      else if (m->bind || (m->type && strcmp (m->type, "bind") == 0))
        r = do_bind (ctx, i, m, what, err);
      else if (m->type == NULL || *m->type == '\0')
        r = ab_error_setc (err, AB_EC_CONFIG, 0, "%s: a mount without bind needs a type", what);
      else if (strcmp (m->type, "cgroup") == 0 || strcmp (m->type, "cgroup2") == 0)
        r = ab_mount_cgroup (ctx, m, what, err);
      else
        r = ab_mount_fs (ctx, m, what, err);
      if (r < 0)
        return -1;
    }
  return 0;
}

int
ab_pivot_root (struct ab_mount_ctx *ctx, ab_error_t *err)
{
  ab_set_step ("pivot_root");
  if (fchdir (ctx->rootfd) < 0)
    return ab_error_set (err, errno, "chdir to the root filesystem");
  /* pivot_root(".", "."): the old root ends up mounted on top of the new
     one, where "." (the mount on top of the cwd) detaches it; no directory
     of the rootfs is needed for it.  The detach cannot reach the host:
     ab_rootfs_prepare made every mount of the old root a slave (or
     private), and the mount it is detached from, the rootfs, is private;
     an unmount only propagates to the peers of that parent. */
  if (syscall (SYS_pivot_root, ".", ".") < 0)
    return ab_error_set (err, errno, "pivot_root");
  if (umount2 (".", MNT_DETACH) < 0)
    return ab_error_set (err, errno, "detach the old root");
  if (chdir ("/") < 0)
    return ab_error_set (err, errno, "chdir /");
  /* /proc is now the container's */
  ab_fd_paths_check ();
  return 0;
}

int
ab_root_finalize (struct ab_mount_ctx *ctx, ab_error_t *err)
{
  const struct ab_linux *l = ctx->spec->linux_;

  ab_set_step ("rootfs");
  /* "shared" and "rshared" alike: the whole tree, as runc's r-words. */
  if (l && l->rootfs_propagation != AB_PROP_NONE)
    {
      if (mount (NULL, "/", NULL, MS_REC | ab_mount_propagation_flag (l->rootfs_propagation), NULL) < 0)
        return ab_error_set (err, errno, "linux.rootfsPropagation: set propagation of /");
    }
  if (ctx->spec->root.readonly)
    {
      /* Only the root mount: the mounts on top keep their own flags. */
      struct mount_attr a = { .attr_set = MOUNT_ATTR_RDONLY };
      if (mount_setattr (AT_FDCWD, "/", 0, &a, sizeof a) < 0)
        return ab_error_set (err, errno, "root.readonly: make / read-only");
    }
  return 0;
}
