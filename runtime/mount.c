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

#include "runtime/kernel-compat.h"
#include "runtime/log.h"
#include "runtime/mount.h"
#include "runtime/resolve.h"
#include "runtime/util.h"


uint64_t
ab_ms_to_mount_attr (unsigned long ms)
{
  uint64_t a = 0;

  if (ms & MS_RDONLY)
    a |= MOUNT_ATTR_RDONLY;
  if (ms & MS_NOSUID)
    a |= MOUNT_ATTR_NOSUID;
  if (ms & MS_NODEV)
    a |= MOUNT_ATTR_NODEV;
  if (ms & MS_NOEXEC)
    a |= MOUNT_ATTR_NOEXEC;
  if (ms & MS_NODIRATIME)
    a |= MOUNT_ATTR_NODIRATIME;
  if (ms & MS_NOSYMFOLLOW)
    a |= MOUNT_ATTR_NOSYMFOLLOW;
  if (ms & MS_NOATIME)
    a |= MOUNT_ATTR_NOATIME;
  else if (ms & MS_STRICTATIME)
    a |= MOUNT_ATTR_STRICTATIME;
  return a;
}

/* The atime field of mount_attr is an enumeration, not bits. */
static bool
ms_sets_atime (unsigned long ms)
{
  return (ms & (MS_NOATIME | MS_STRICTATIME | MS_RELATIME)) != 0;
}

bool ab_fd_paths_ok;

/* /proc/self/fd/N names our fd N only where /proc is a procfs: the host's
   before pivot_root, the container's after it unless a config mount
   covered /proc (or its "self") with something else.  Then every mount
   takes the fd-based way.  Another procfs reached through a planted
   symlink is as good: its self/fd is still ours, and we are the only
   process of the container's pid namespace. */
void
ab_fd_paths_check (void)
{
  struct statfs sf;

  ab_fd_paths_ok = statfs ("/proc/self/fd", &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC;
}

int
ab_mount_on_fd (const char *source, int source_fd, int target_fd, const char *type, unsigned long flags,
                const char *data)
{
  char src[32], dst[32];

  if (!ab_fd_paths_ok)
    {
      errno = ENOSYS;
      return -1;
    }
  if (source_fd >= 0)
    {
      snprintf (src, sizeof src, "/proc/self/fd/%d", source_fd);
      source = src;
    }
  snprintf (dst, sizeof dst, "/proc/self/fd/%d", target_fd);
  return mount (source, dst, type, flags, data);
}

int
ab_move_mount_fd (int from_fd, int target_fd, const char *what, ab_error_t *err)
{
  if (move_mount (from_fd, "", target_fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return ab_error_set (err, errno, "attach mount on `%s`", what);
  return 0;
}

static unsigned long
propagation_flag (int p)
{
  switch (p)
    {
    case AB_PROP_SHARED:
      return MS_SHARED;
    case AB_PROP_SLAVE:
      return MS_SLAVE;
    case AB_PROP_PRIVATE:
      return MS_PRIVATE;
    case AB_PROP_UNBINDABLE:
      return MS_UNBINDABLE;
    default:
      return 0;
    }
}

int
ab_rootfs_prepare (struct ab_mount_ctx *ctx, ab_error_t *err)
{
  const struct ab_linux *l = ctx->spec->linux_;
  unsigned long root_prop = MS_SLAVE;

  ab_set_step ("rootfs");
  /* Nothing we mount may propagate back to the host: make the whole tree a
     slave (or private) first.  "shared" still gets a slave "/" here; the
     rootfs mount itself becomes shared after pivot_root. */
  if (l && l->rootfs_propagation == AB_ROOTFS_PROP_PRIVATE)
    root_prop = MS_PRIVATE;
  if (l && l->rootfs_propagation == AB_ROOTFS_PROP_UNBINDABLE)
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

/* The kernel explains fsconfig failures on the fs context fd. */
static void
append_kernel_message (int fsfd, ab_error_t *err)
{
  char buf[256];
  ssize_t n;

  if (err == NULL || fsfd < 0)
    return;
  n = read (fsfd, buf, sizeof buf - 1);
  if (n > 2)
    {
      size_t len = strlen (err->msg);
      buf[n] = '\0';
      if (buf[n - 1] == '\n')
        buf[n - 1] = '\0';
      snprintf (err->msg + len, sizeof err->msg - len, " (kernel: %s)", buf + 2);
    }
}

static int
fsconfig_data (int fsfd, const char *data, const char *what, ab_error_t *err)
{
  _cleanup_free_ char *copy = NULL;
  char *opt, *save = NULL;

  if (data == NULL || *data == '\0')
    return 0;
  copy = xstrdup (data);
  for (opt = strtok_r (copy, ",", &save); opt; opt = strtok_r (NULL, ",", &save))
    {
      char *eq = strchr (opt, '=');
      int r;
      if (eq)
        {
          *eq = '\0';
          r = fsconfig (fsfd, FSCONFIG_SET_STRING, opt, eq + 1, 0);
        }
      else
        r = fsconfig (fsfd, FSCONFIG_SET_FLAG, opt, NULL, 0);
      if (r < 0)
        {
          ab_error_set (err, errno, "%s: option `%s%s%s`", what, opt, eq ? "=" : "", eq ? eq + 1 : "");
          append_kernel_message (fsfd, err);
          return -1;
        }
    }
  return 0;
}

static int
fsconfig_sb_flags (int fsfd, unsigned long ms, const char *what, ab_error_t *err)
{
  static const struct
  {
    unsigned long flag;
    const char *name;
  } sb[] = {
    /* "ro" too: mount(2) with MS_RDONLY makes a new superblock read-only
       as well as the mount, and this way must leave the same thing, not a
       writable filesystem under a read-only mount. */
    { MS_RDONLY, "ro" },         { MS_SYNCHRONOUS, "sync" }, { MS_DIRSYNC, "dirsync" },
    { MS_LAZYTIME, "lazytime" }, { MS_MANDLOCK, "mand" },    { MS_I_VERSION, "iversion" },
  };
  size_t i;

  for (i = 0; i < AB_ARRAY_SIZE (sb); i++)
    if ((ms & sb[i].flag) && fsconfig (fsfd, FSCONFIG_SET_FLAG, sb[i].name, NULL, 0) < 0)
      {
        ab_error_set (err, errno, "%s: option `%s`", what, sb[i].name);
        append_kernel_message (fsfd, err);
        return -1;
      }
  return 0;
}

/* A new filesystem instance as a detached mount fd. */
static int
make_fs (const char *type, const char *source, unsigned long ms, const char *data, const char *what,
         ab_error_t *err)
{
  _cleanup_close_ int fsfd = fsopen (type, FSOPEN_CLOEXEC);
  uint64_t attr = ab_ms_to_mount_attr (ms);
  int mfd;

  if (fsfd < 0)
    return ab_error_set (err, errno, "%s: filesystem type `%s`", what, type);
  if (source && *source && fsconfig (fsfd, FSCONFIG_SET_STRING, "source", source, 0) < 0)
    {
      ab_error_set (err, errno, "%s: source `%s`", what, source);
      append_kernel_message (fsfd, err);
      return -1;
    }
  if (fsconfig_sb_flags (fsfd, ms, what, err) < 0 || fsconfig_data (fsfd, data, what, err) < 0)
    return -1;
  if (fsconfig (fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    {
      ab_error_set (err, errno, "%s: create %s filesystem", what, type);
      append_kernel_message (fsfd, err);
      return -1;
    }
  mfd = fsmount (fsfd, FSMOUNT_CLOEXEC, (unsigned int)attr);
  if (mfd < 0)
    return ab_error_set (err, errno, "%s: mount %s filesystem", what, type);
  return mfd;
}

/* Apply per-mount flags (top mount), recursive attributes and propagation
   to a detached or attached mount fd. */
static int
set_attrs (int mfd, const struct ab_mount *m, bool apply_top, const char *what, ab_error_t *err)
{
  if (apply_top)
    {
      struct mount_attr a = { 0 };
      a.attr_set = ab_ms_to_mount_attr (m->flags);
      a.attr_clr = ab_ms_to_mount_attr (m->clear_flags) & ~a.attr_set;
      /* atime is an enumeration inside MOUNT_ATTR__ATIME: changing it means
         clearing the whole field. */
      if (ms_sets_atime (m->flags) || (a.attr_clr & MOUNT_ATTR__ATIME))
        a.attr_clr |= MOUNT_ATTR__ATIME;
      if ((a.attr_set || a.attr_clr) && mount_setattr (mfd, "", AT_EMPTY_PATH, &a, sizeof a) < 0)
        return ab_error_set (err, errno, "%s: set mount flags", what);
    }
  if (m->attr_set || m->attr_clr)
    {
      struct mount_attr a = { 0 };
      a.attr_set = m->attr_set;
      a.attr_clr = m->attr_clr & ~m->attr_set;
      if ((a.attr_set & MOUNT_ATTR__ATIME) || (a.attr_clr & MOUNT_ATTR__ATIME))
        a.attr_clr |= MOUNT_ATTR__ATIME;
      if (mount_setattr (mfd, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof a) < 0)
        return ab_error_set (err, errno, "%s: set recursive mount attributes", what);
    }
  return 0;
}

static int
set_propagation (int target_fd, const struct ab_mount *m, const char *what, ab_error_t *err)
{
  struct mount_attr a = { 0 };

  if (m->propagation == AB_PROP_NONE)
    return 0;
  a.propagation = propagation_flag (m->propagation);
  if (mount_setattr (target_fd, "", AT_EMPTY_PATH | (m->propagation_recursive ? AT_RECURSIVE : 0), &a,
                     sizeof a)
      < 0)
    return ab_error_set (err, errno, "%s: set propagation", what);
  return 0;
}

/* Propagation applies to the mount now attached at the destination, which
   only exists after move_mount: open it anew, inside the root. */
static int
set_propagation_at (struct ab_mount_ctx *ctx, const struct ab_mount *m, const char *what, ab_error_t *err)
{
  _cleanup_close_ int now = -1;

  if (m->propagation == AB_PROP_NONE)
    return 0;
  now = ab_open_in_root (ctx->rootfd, m->destination, O_PATH, 0, err);
  if (now < 0)
    return ab_error_prefix (err, "%s", what);
  return set_propagation (now, m, what, err);
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
  target = ab_mkpath_in_root (ctx->rootfd, m->destination, S_ISDIR (st.st_mode) ? AB_LAST_DIR : AB_LAST_FILE,
                              err);
  if (target < 0)
    return ab_error_prefix (err, "%s", what);
  {
    struct stat ts;
    if (fstat (target, &ts) < 0)
      return ab_error_set (err, errno, "%s: stat target", what);
    if (S_ISDIR (ts.st_mode) != S_ISDIR (st.st_mode))
      return ab_error_setc (err, AB_EC_CONFIG, ENOTDIR,
                            "%s: source `%s` is %sa directory but the target is %s", what, src,
                            S_ISDIR (st.st_mode) ? "" : "not ", S_ISDIR (ts.st_mode) ? "one" : "not");
  }
  if (set_attrs (tree, m, true, what, err) < 0)
    return -1;
  if (ab_move_mount_fd (tree, target, m->destination, err) < 0)
    return ab_error_prefix (err, "%s", what);
  if (remake_in_order (ctx, target, m, what, err) < 0)
    return -1;
  return set_propagation_at (ctx, m, what, err);
}

/* tmpcopyup: the new tmpfs starts with a copy of what the rootfs had there. */
static int copy_tree (int from_dir, int to_dir, int depth, const char *what, ab_error_t *err);

static int
copy_entry (int from_dir, int to_dir, const char *name, int depth, const char *what, ab_error_t *err)
{
  struct stat st;

  if (fstatat (from_dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return ab_error_set (err, errno, "%s: tmpcopyup: stat `%s`", what, name);
  if (S_ISDIR (st.st_mode))
    {
      _cleanup_close_ int f = -1, t = -1;
      if (mkdirat (to_dir, name, st.st_mode & 07777) < 0 && errno != EEXIST)
        return ab_error_set (err, errno, "%s: tmpcopyup: mkdir `%s`", what, name);
      f = openat (from_dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      t = openat (to_dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (f < 0 || t < 0)
        return ab_error_set (err, errno, "%s: tmpcopyup: open `%s`", what, name);
      if (copy_tree (f, t, depth + 1, what, err) < 0)
        return -1;
      fchownat (to_dir, name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW);
      return 0;
    }
  if (S_ISLNK (st.st_mode))
    {
      char target[4096];
      ssize_t n = readlinkat (from_dir, name, target, sizeof target - 1);
      if (n < 0)
        return ab_error_set (err, errno, "%s: tmpcopyup: readlink `%s`", what, name);
      target[n] = '\0';
      if (symlinkat (target, to_dir, name) < 0)
        return ab_error_set (err, errno, "%s: tmpcopyup: symlink `%s`", what, name);
      fchownat (to_dir, name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW);
      return 0;
    }
  if (S_ISREG (st.st_mode))
    {
      _cleanup_close_ int f = openat (from_dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
      _cleanup_close_now_ int t = -1;
      char buf[65536];
      ssize_t n;
      if (f < 0)
        return ab_error_set (err, errno, "%s: tmpcopyup: open `%s`", what, name);
      t = openat (to_dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, st.st_mode & 07777);
      if (t < 0)
        return ab_error_set (err, errno, "%s: tmpcopyup: create `%s`", what, name);
      while ((n = read (f, buf, sizeof buf)) > 0)
        if (ab_write_all (t, buf, (size_t)n) < 0)
          return ab_error_set (err, errno, "%s: tmpcopyup: write `%s`", what, name);
      if (n < 0)
        return ab_error_set (err, errno, "%s: tmpcopyup: read `%s`", what, name);
      fchown (t, st.st_uid, st.st_gid);
      return 0;
    }
  return 0; /* devices, sockets, fifos are not copied */
}

static int
copy_tree (int from_dir, int to_dir, int depth, const char *what, ab_error_t *err)
{
  int dfd;
  DIR *d;
  struct dirent *e;
  int r = 0;

  if (depth > 32)
    return ab_error_setc (err, AB_EC_SETUP, ELOOP, "%s: tmpcopyup: deeper than 32 levels", what);
  dfd = dup (from_dir);
  if (dfd < 0 || (d = fdopendir (dfd)) == NULL)
    {
      if (dfd >= 0)
        close (dfd);
      return ab_error_set (err, errno, "%s: tmpcopyup: read directory", what);
    }
  while (r == 0 && (e = readdir (d)) != NULL)
    if (strcmp (e->d_name, ".") && strcmp (e->d_name, ".."))
      r = copy_entry (dirfd (d), to_dir, e->d_name, depth, what, err);
  closedir (d);
  return r;
}

/* The name of dest if it is a direct child of the tmpfs just mounted at
   ctx->fresh (as /dev/pts of /dev), else NULL. */
static const char *
fresh_child (const struct ab_mount_ctx *ctx, const char *dest)
{
  size_t n = ctx->fresh ? strlen (ctx->fresh) : 0;
  const char *name = dest + n + 1;

  if (n == 0 || strncmp (dest, ctx->fresh, n) != 0 || dest[n] != '/' || *name == '\0' || strchr (name, '/')
      || strcmp (name, ".") == 0 || strcmp (name, "..") == 0)
    return NULL;
  return name;
}

/* A mount point in the tmpfs this setup mounted a moment ago: it is ours,
   empty but for what we made, and in our private mount namespace, so
   nothing can have planted a symlink there.  mkdir and one open relative
   to its root, instead of a resolution that fails, one of the parent, the
   mkdir and the resolution again.  A name already mounted over (a second
   /dev/shm) opens here as the directory under that mount; mount(2) still
   attaches on top of the topmost mount there, as through the path.
   -2: not such a mount point. */
static int
fresh_target (struct ab_mount_ctx *ctx, const char *dest)
{
  const char *name = fresh_child (ctx, dest);

  if (name == NULL)
    return -2;
  if (ctx->fresh_fd < 0)
    ctx->fresh_fd = ab_open_in_root (ctx->rootfd, ctx->fresh, O_PATH | O_DIRECTORY, 0, NULL);
  if (ctx->fresh_fd < 0 || (mkdirat (ctx->fresh_fd, name, 0755) < 0 && errno != EEXIST))
    return -2;
  return openat (ctx->fresh_fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

static int
do_fs (struct ab_mount_ctx *ctx, const struct ab_mount *m, const char *what, ab_error_t *err)
{
  _cleanup_close_ int mfd = -1;
  _cleanup_close_ int target = -1;
  const char *type = m->type;
  struct stat ts;

  target = fresh_target (ctx, m->destination);
  if (target < 0)
    target = ab_mkpath_in_root (ctx->rootfd, m->destination, AB_LAST_DIR, err);
  if (target < 0)
    return ab_error_prefix (err, "%s", what);
  /* One mount(2) where nothing needs the detached mount: no copy-up, no
     recursive attributes.  Its flags are those of make_fs (superblock
     flags go with mount(2) as they are).  The kernel refuses a target that
     is not a directory (ENOTDIR).  If it fails, the checks and the
     fd-based way follow: they either work (sysfs below) or say why. */
  if (!m->tmpcopyup && m->attr_set == 0 && m->attr_clr == 0
      && ab_mount_on_fd (
             m->source && *m->source ? m->source : NULL, -1, target, type,
             m->flags & ~(MS_BIND | MS_REC | MS_REMOUNT | MS_SHARED | MS_SLAVE | MS_PRIVATE | MS_UNBINDABLE),
             m->data && *m->data ? m->data : NULL)
             == 0)
    {
      /* A tmpfs on a name of the fresh one (/dev/shm in /dev) leaves the
         other names of it as they were: the outer one stays fresh. */
      if (strcmp (type, "tmpfs") == 0 && fresh_child (ctx, m->destination) == NULL)
        {
          ctx->fresh = m->destination;
          ctx->fresh_fd = -1;
        }
      return set_propagation_at (ctx, m, what, err);
    }
  if (fstat (target, &ts) < 0)
    return ab_error_set (err, errno, "%s: stat target", what);
  if (!S_ISDIR (ts.st_mode))
    return ab_error_setc (err, AB_EC_CONFIG, ENOTDIR, "%s: target `%s` is not a directory", what,
                          m->destination);
  mfd = make_fs (type, m->source, m->flags, m->data, what, err);
  if (mfd < 0 && strcmp (type, "sysfs") == 0 && ctx->userns && err && err->errnum == EPERM)
    {
      /* sysfs can only be mounted by the owner of the network namespace:
         with a joined netns owned by the host, bind the host's /sys
         read-only and recursively instead (as runc does for rootless). */
      ab_error_clear (err);
      mfd = open_tree (AT_FDCWD, "/sys", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
      if (mfd < 0)
        return ab_error_set (err, errno, "%s: bind /sys", what);
      {
        struct mount_attr a
            = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC };
        if (mount_setattr (mfd, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof a) < 0)
          return ab_error_set (err, errno, "%s: make /sys read-only", what);
      }
    }
  if (mfd < 0)
    return -1;
  if (m->tmpcopyup)
    {
      _cleanup_close_ int from
          = ab_open_in_root (ctx->rootfd, m->destination, O_RDONLY | O_DIRECTORY, 0, err);
      _cleanup_close_ int to = openat (mfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (from < 0 || to < 0)
        return ab_error_set (err, errno, "%s: tmpcopyup", what);
      if (copy_tree (from, to, 0, what, err) < 0)
        return -1;
    }
  if (set_attrs (mfd, m, false, what, err) < 0)
    return -1;
  if (ab_move_mount_fd (mfd, target, m->destination, err) < 0)
    return ab_error_prefix (err, "%s", what);
  return set_propagation_at (ctx, m, what, err);
}

static int
do_remount (struct ab_mount_ctx *ctx, const struct ab_mount *m, const char *what, ab_error_t *err)
{
  _cleanup_close_ int target = ab_open_in_root (ctx->rootfd, m->destination, O_PATH, 0, err);

  if (target < 0)
    return ab_error_prefix (err, "%s", what);
  if (set_attrs (target, m, true, what, err) < 0)
    return -1;
  return set_propagation (target, m, what, err);
}

/* Our own cgroup in the host's cgroup2 mount, e.g.
   /sys/fs/cgroup/unified/agentbox-x: from /proc/self/cgroup ("0::/path")
   and the cgroup2 line of /proc/self/mountinfo (mount point, mount root). */
static char *
own_cgroup2_dir (void)
{
  _cleanup_fclose_ FILE *f = fopen ("/proc/self/cgroup", "re");
  _cleanup_fclose_ FILE *mi = NULL;
  char line[4096], own[4096] = "";
  char *res = NULL;

  if (f == NULL)
    return NULL;
  while (fgets (line, sizeof line, f))
    if (strncmp (line, "0::", 3) == 0)
      {
        snprintf (own, sizeof own, "%s", line + 3);
        own[strcspn (own, "\n")] = '\0';
      }
  if (own[0] != '/')
    return NULL;
  mi = fopen ("/proc/self/mountinfo", "re");
  if (mi == NULL)
    return NULL;
  while (res == NULL && fgets (line, sizeof line, mi))
    {
      char *sep = strstr (line, " - cgroup2 ");
      char root[4096], mp[4096];
      size_t rl;
      if (sep == NULL || sscanf (line, "%*d %*d %*s %4095s %4095s", root, mp) != 2)
        continue;
      rl = strlen (root);
      if (strcmp (root, "/") == 0)
        res = xasprintf ("%s%s", mp, own);
      else if (strncmp (own, root, rl) == 0 && (own[rl] == '/' || own[rl] == '\0'))
        res = xasprintf ("%s%s", mp, own + rl);
    }
  return res;
}

/* The container's own cgroup directory, bound read-only: what a config's
   cgroup mount gives a container without a cgroup namespace of its own.
   A new cgroup2 superblock there would be made in the host's (initial)
   cgroup namespace, where
   - it shows the whole host tree: every other container's cgroup, its
     limits and usage (other tenants' names and activity);
   - its mount options are system-wide: the kernel applies them to the
     host's cgroup2 root (apply_cgroup_root_flags), so a mount without
     nsdelegate/memory_recursiveprot turns those off for the whole machine
     (on systemd hosts, the delegation boundary);
   - it waits on the cgroup locks the host's cgroup work holds: 8-14 ms in
     a quarter of the runs measured here (docs/benchmarks.md).
   In a user namespace the mount is refused anyway (only the owner of the
   cgroup namespace may mount); runc binds the cgroup directory there too. */
static int
do_cgroup_bind (struct ab_mount_ctx *ctx, const struct ab_mount *m, const char *dir, const char *what,
                ab_error_t *err)
{
  _cleanup_close_ int tree = -1;
  _cleanup_close_ int target = -1;
  struct mount_attr a
      = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC };

  if (dir == NULL)
    return ab_error_setc (err, AB_EC_SETUP, ENOENT, "%s: no cgroup2 hierarchy to show the container", what);
  target = ab_mkpath_in_root (ctx->rootfd, m->destination, AB_LAST_DIR, err);
  if (target < 0)
    return ab_error_prefix (err, "%s", what);
  tree = open_tree (AT_FDCWD, dir, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (tree < 0)
    return ab_error_set (err, errno, "%s: open `%s`", what, dir);
  if (mount_setattr (tree, "", AT_EMPTY_PATH, &a, sizeof a) < 0)
    return ab_error_set (err, errno, "%s: make `%s` read-only", what, dir);
  return ab_move_mount_fd (tree, target, m->destination, err) < 0 ? ab_error_prefix (err, "%s", what) : 0;
}

/* A config's "cgroup" or "cgroup2" mount.  Without a cgroup namespace of
   its own the container gets its cgroup bound (do_cgroup_bind), never a new
   superblock, unless the host has no cgroup2 tree to bind from.  In its
   cgroup namespace: cgroup2 (v1 hierarchies are not mountable from a user
   namespace; the unified tree tracks the container everywhere), or the bind
   where the namespace's owner is not ours. */
static int
do_cgroup (struct ab_mount_ctx *ctx, const struct ab_mount *m, const char *what, ab_error_t *err)
{
  _cleanup_free_ char *own = ctx->cgroupns ? NULL : own_cgroup2_dir ();
  struct ab_mount copy = *m;
  int r;

  if (own)
    return do_cgroup_bind (ctx, m, own, what, err);
  copy.type = (char *)"cgroup2";
  copy.data = NULL;
  r = do_fs (ctx, &copy, what, err);
  if (r < 0 && ctx->userns && err && err->errnum == EPERM)
    {
      ab_error_clear (err);
      own = own_cgroup2_dir ();
      r = do_cgroup_bind (ctx, m, own, what, err);
    }
  return r;
}

int
ab_mounts_apply (struct ab_mount_ctx *ctx, ab_error_t *err)
{
  size_t i;

  ab_set_step ("mounts");
  for (i = 0; i < ctx->spec->n_mounts; i++)
    {
      const struct ab_mount *m = &ctx->spec->mounts[i];
      char what[64 + 4096];
      int r;

      snprintf (what, sizeof what, "mounts[%zu] (%s)", i, m->destination);
      /* Only a mount below the last fresh tmpfs leaves it on top. */
      if (ctx->fresh && fresh_child (ctx, m->destination) == NULL)
        {
          ctx->fresh = NULL;
          ctx->fresh_fd = -1; /* closed by execve (util.h) */
        }
      if (strcmp (m->destination, "/") == 0)
        return ab_error_setc (err, AB_EC_CONFIG, EINVAL, "%s: mounting over / is not supported", what);
      if (m->flags & MS_REMOUNT)
        r = do_remount (ctx, m, what, err);
      else if (m->bind || (m->type && strcmp (m->type, "bind") == 0))
        r = do_bind (ctx, i, m, what, err);
      else if (m->type == NULL || *m->type == '\0')
        r = ab_error_setc (err, AB_EC_CONFIG, 0, "%s: a mount without bind needs a type", what);
      else if (strcmp (m->type, "cgroup") == 0 || strcmp (m->type, "cgroup2") == 0)
        r = do_cgroup (ctx, m, what, err);
      else
        r = do_fs (ctx, m, what, err);
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
  if (l && l->rootfs_propagation != AB_ROOTFS_PROP_UNSET)
    {
      unsigned long f = l->rootfs_propagation == AB_ROOTFS_PROP_SHARED       ? MS_SHARED
                        : l->rootfs_propagation == AB_ROOTFS_PROP_SLAVE      ? MS_SLAVE
                        : l->rootfs_propagation == AB_ROOTFS_PROP_UNBINDABLE ? MS_UNBINDABLE
                                                                             : MS_PRIVATE;
      if (mount (NULL, "/", NULL, MS_REC | f, NULL) < 0)
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
