/* Mount primitives: a new filesystem (fsopen, fsconfig, fsmount), mount(2)
 * onto an fd, attributes and propagation of a mount, a filesystem mount of
 * mounts[] onto its destination inside the root.  runtime/mount.c (the
 * tree: rootfs, binds, the order of mounts[], pivot_root) and
 * runtime/mount-cgroup.c build on these; these call neither. */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
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
#include "spec/spec.h"

/* Convert MS_* per-mount flags to MOUNT_ATTR_* bits. */
static uint64_t
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

unsigned long
ab_mount_propagation_flag (int p)
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

void
ab_fs_kernel_message (int fsfd, ab_error_t *err)
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
          ab_fs_kernel_message (fsfd, err);
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
        ab_fs_kernel_message (fsfd, err);
        return -1;
      }
  return 0;
}

/* How many mounts lie below `top` (/proc, /sys) in our mount namespace. */
static int
mounts_below (const char *top)
{
  _cleanup_fclose_ FILE *f = fopen ("/proc/self/mountinfo", "re");
  size_t n = strlen (top);
  char line[4096], mp[4096];
  int count = 0;

  while (f && fgets (line, sizeof line, f))
    if (sscanf (line, "%*s %*s %*s %*s %4095s", mp) == 1 && strncmp (mp, top, n) == 0 && mp[n] == '/')
      count++;
  return count;
}

/* A new filesystem instance as a detached mount fd. */
int
ab_mount_make_fs (const char *type, const char *source, unsigned long ms, const char *data, const char *what,
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
      ab_fs_kernel_message (fsfd, err);
      return -1;
    }
  if (fsconfig_sb_flags (fsfd, ms, what, err) < 0 || fsconfig_data (fsfd, data, what, err) < 0)
    return -1;
  if (fsconfig (fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    {
      ab_error_set (err, errno, "%s: create %s filesystem", what, type);
      ab_fs_kernel_message (fsfd, err);
      return -1;
    }
  mfd = fsmount (fsfd, FSMOUNT_CLOEXEC, (unsigned int)attr);
  if (mfd < 0 && errno == EPERM && (strcmp (type, "proc") == 0 || strcmp (type, "sysfs") == 0))
    {
      /* In a user namespace the kernel mounts a proc or sysfs only where
         the one already there is wholly visible: an outer container's
         masked paths (mounts over parts of it) forbid it. */
      const char *top = type[0] == 'p' ? "/proc" : "/sys";
      int covered = mounts_below (top);
      if (covered > 0)
        return ab_error_set (err, EPERM,
                             "%s: mount %s filesystem: refused while %d mounts cover parts of the %s agentbox runs "
                             "with (an outer container's masked paths; podman: --security-opt unmask=ALL)",
                             what, type, covered, top);
    }
  if (mfd < 0)
    return ab_error_set (err, errno, "%s: mount %s filesystem", what, type);
  return mfd;
}

/* Apply per-mount flags (top mount), recursive attributes and propagation
   to a detached or attached mount fd. */
int
ab_mount_set_attrs (int mfd, const struct ab_mount *m, bool apply_top, const char *what, ab_error_t *err)
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

int
ab_mount_set_propagation (int target_fd, const struct ab_mount *m, const char *what, ab_error_t *err)
{
  struct mount_attr a = { 0 };

  if (m->propagation == AB_PROP_NONE)
    return 0;
  a.propagation = ab_mount_propagation_flag (m->propagation);
  if (mount_setattr (target_fd, "", AT_EMPTY_PATH | (m->propagation_recursive ? AT_RECURSIVE : 0), &a,
                     sizeof a)
      < 0)
    return ab_error_set (err, errno, "%s: set propagation", what);
  return 0;
}

/* Propagation applies to the mount now attached at the destination, which
   only exists after move_mount: open it anew, inside the root. */
int
ab_mount_set_propagation_at (struct ab_mount_ctx *ctx, const struct ab_mount *m, const char *what, ab_error_t *err)
{
  _cleanup_close_ int now = -1;

  if (m->propagation == AB_PROP_NONE)
    return 0;
  now = ab_open_in_root (ctx->rootfd, m->destination, O_PATH, 0, err);
  if (now < 0)
    return ab_error_prefix (err, "%s", what);
  return ab_mount_set_propagation (now, m, what, err);
}

int
ab_mount_target (struct ab_mount_ctx *ctx, const struct ab_mount *m, int last, const char *what, ab_error_t *err)
{
  _cleanup_close_ int fd = ab_mkpath_in_root (ctx->rootfd, m->destination, last, err);
  struct statfs sf;
  struct stat st;
  int place;

  if (fd < 0)
    return ab_error_prefix (err, "%s", what);
  if (fstatfs (fd, &sf) < 0)
    return ab_error_set (err, errno, "%s: stat target", what);
  if (sf.f_type != PROC_SUPER_MAGIC)
    return ab_steal_fd (&fd);
  if (fstat (fd, &st) < 0)
    return ab_error_set (err, errno, "%s: stat target", what);
  /* The validator refused every destination inside /proc but these, as
     written; here the image's symlinks have been followed.  A mount that
     lands in a procfs anywhere else (a volume at /data, with the image's
     /data -> /proc/sys/net) could hide what the runtime writes there, or
     take it, and is refused (CVE-2025-52881). */
  place = ab_proc_place (m->destination);
  if ((place == AB_PROC_ROOT && st.st_ino == PROC_ROOT_INO) || (place == AB_PROC_STAND_IN && !S_ISDIR (st.st_mode)))
    return ab_steal_fd (&fd);
  return ab_error_setc (err, AB_EC_CONFIG, 0,
                        "%s: the target resolves into a procfs (through a symlink of the image?), where a mount "
                        "could hide or take the runtime's writes; only /proc itself and the files lxcfs stands in "
                        "for take one",
                        what);
}

/* The name of dest if it is a direct child of the tmpfs just mounted at
   ctx->fresh (as /dev/pts of /dev), else NULL. */
const char *
ab_mount_fresh_child (const struct ab_mount_ctx *ctx, const char *dest)
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
  const char *name = ab_mount_fresh_child (ctx, dest);

  if (name == NULL)
    return -2;
  if (ctx->fresh_fd < 0)
    ctx->fresh_fd = ab_open_in_root (ctx->rootfd, ctx->fresh, O_PATH | O_DIRECTORY, 0, NULL);
  if (ctx->fresh_fd < 0 || (mkdirat (ctx->fresh_fd, name, 0755) < 0 && errno != EEXIST))
    return -2;
  return openat (ctx->fresh_fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

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

int
ab_mount_fs (struct ab_mount_ctx *ctx, const struct ab_mount *m, const char *what, ab_error_t *err)
{
  _cleanup_close_ int mfd = -1;
  _cleanup_close_ int target = -1;
  const char *type = m->type;
  struct stat ts;

  target = fresh_target (ctx, m->destination);
  if (target < 0)
    target = ab_mount_target (ctx, m, AB_LAST_DIR, what, err);
  if (target < 0)
    return -1;
  /* One mount(2) where nothing needs the detached mount: no copy-up, no
     recursive attributes.  Its flags are those of ab_mount_make_fs (superblock
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
      if (strcmp (type, "tmpfs") == 0 && ab_mount_fresh_child (ctx, m->destination) == NULL)
        {
          ctx->fresh = m->destination;
          ctx->fresh_fd = -1;
        }
      return ab_mount_set_propagation_at (ctx, m, what, err);
    }
  if (fstat (target, &ts) < 0)
    return ab_error_set (err, errno, "%s: stat target", what);
  if (!S_ISDIR (ts.st_mode))
    return ab_error_setc (err, AB_EC_CONFIG, ENOTDIR, "%s: target `%s` is not a directory", what,
                          m->destination);
  mfd = ab_mount_make_fs (type, m->source, m->flags, m->data, what, err);
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
  if (ab_mount_set_attrs (mfd, m, false, what, err) < 0)
    return -1;
  if (ab_move_mount_fd (mfd, target, m->destination, err) < 0)
    return ab_error_prefix (err, "%s", what);
  return ab_mount_set_propagation_at (ctx, m, what, err);
}

