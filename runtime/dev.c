#include "config.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "runtime/dev.h"
#include "runtime/mount.h"
#include "base/resolve.h"
#include "base/util.h"

struct devnode
{
  const char *path;
  mode_t type;
  unsigned major, minor;
  mode_t mode;
};

/* config-linux.md "Default Devices". */
static const struct devnode default_devices[] = {
  { "/dev/null", S_IFCHR, 1, 3, 0666 },    { "/dev/zero", S_IFCHR, 1, 5, 0666 },
  { "/dev/full", S_IFCHR, 1, 7, 0666 },    { "/dev/random", S_IFCHR, 1, 8, 0666 },
  { "/dev/urandom", S_IFCHR, 1, 9, 0666 }, { "/dev/tty", S_IFCHR, 5, 0, 0666 },
};

/* Bind the host's node at `host_path` onto the empty file target_fd, after
   checking that the host node is what was asked for. */
static int
bind_host_node (const char *host_path, mode_t type, unsigned major, unsigned minor, int target_fd,
                const char *what, ab_error_t *err)
{
  _cleanup_close_ int tree = -1;
  struct stat st;

  /* The host's /dev, where only the host's root can swap a node between
     the check and the bind: the path is checked, then bound by mount(2);
     or, where mount(2) cannot name the target, cloned, checked and
     attached. */
  if (ab_fd_paths_ok)
    {
      if (stat (host_path, &st) < 0)
        return ab_error_set (err, errno, "%s: stat host device `%s`", what, host_path);
    }
  else
    {
      tree = open_tree (AT_FDCWD, host_path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
      if (tree < 0)
        return ab_error_set (err, errno, "%s: open host device `%s`", what, host_path);
      if (fstat (tree, &st) < 0)
        return ab_error_set (err, errno, "%s: stat host device `%s`", what, host_path);
    }
  if ((st.st_mode & S_IFMT) != type || major (st.st_rdev) != major || minor (st.st_rdev) != minor)
    return ab_error_setc (err, AB_EC_SETUP, ENODEV, "%s: host node `%s` is not device %u:%u", what, host_path, major,
                          minor);
  if (tree < 0)
    return ab_mount_on_fd (host_path, -1, target_fd, NULL, MS_BIND, NULL) < 0
               ? ab_error_set (err, errno, "%s: bind host device `%s`", what, host_path)
               : 0;
  return ab_move_mount_fd (tree, target_fd, what, err);
}

/* `name` exists in dirfd: it must be the requested node already, or an
   empty regular file (a bind target made earlier), which gets the bind. */
static int
existing_node (int dirfd, const char *name, const char *path, const char *host_path, mode_t type,
               unsigned major, unsigned minor, const char *what, ab_error_t *err)
{
  _cleanup_close_ int fd = openat (dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;

  if (fd < 0 || fstat (fd, &st) < 0)
    return ab_error_set (err, errno, "%s: stat `%s`", what, path);
  if ((st.st_mode & S_IFMT) == type
      && (type == S_IFIFO || (major (st.st_rdev) == major && minor (st.st_rdev) == minor)))
    return 0;
  if (!S_ISREG (st.st_mode) || st.st_size != 0)
    return ab_error_setc (err, AB_EC_CONFIG, EEXIST, "%s: `%s` exists and is not the requested device", what,
                          path);
  return bind_host_node (host_path, type, major, minor, fd, what, err);
}

/* Create node `name` in the directory dirfd (inside the rootfs): mknod when
   permitted, else a bind of the host node at host_path.  An existing node
   must match.  Created first and looked at only on EEXIST: the nodes of a
   fresh /dev tmpfs never exist, and the exclusive creation is the check
   that nothing was there. */
static int
make_node_at (int dirfd, const char *name, const char *path, const char *host_path, mode_t type,
              unsigned major, unsigned minor, mode_t mode, bool userns, bool set_owner, uid_t uid, gid_t gid,
              const char *what, ab_error_t *err)
{
  _cleanup_close_ int fd = -1;

  /* In a user namespace mknod of a device node always fails with EPERM
     (it needs CAP_MKNOD in the initial user namespace): skip straight to
     the bind, which is where the EPERM would have led.  A FIFO needs no
     privilege and is always made. */
  if (!userns || type == S_IFIFO)
    {
      if (mknodat (dirfd, name, type | mode, makedev (major, minor)) == 0)
        {
          if (set_owner && fchownat (dirfd, name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
            return ab_error_set (err, errno, "%s: chown `%s`", what, path);
          /* mknod honours the umask; the mode is the one asked for. */
          if (fchmodat (dirfd, name, mode, 0) < 0)
            return ab_error_set (err, errno, "%s: chmod `%s`", what, path);
          return 0;
        }
      if (errno == EEXIST)
        return existing_node (dirfd, name, path, host_path, type, major, minor, what, err);
      if (errno != EPERM || type == S_IFIFO)
        return ab_error_set (err, errno, "%s: mknod `%s`", what, path);
    }
  /* O_CREAT|O_EXCL|O_NOFOLLOW: a new, empty regular file of ours, never an
     existing file or a symlink planted in the rootfs.  Its own fd is the
     mount target (the mount lands on the file the fd refers to), so there
     is no second lookup of the name that a swap could redirect.  Opened
     read-only: no write access held that would keep the mount it is on
     from being made read-only later (EBUSY). */
  fd = openat (dirfd, name, O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0 && errno == EEXIST)
    return existing_node (dirfd, name, path, host_path, type, major, minor, what, err);
  if (fd < 0)
    {
      int e = errno;
      ab_error_set (err, e, "%s: create bind target `%s`", what, path);
      /* the parent tells whose the directory is (create.c) */
      if (err && (e == EACCES || e == EPERM))
        {
          _cleanup_free_ char *dir = xstrdup (path);
          char *slash = strrchr (dir, '/');

          if (slash)
            *slash = '\0';
          snprintf (err->where, sizeof err->where, "%s", *dir ? dir : "/");
        }
      return -1;
    }
  return bind_host_node (host_path, type, major, minor, fd, what, err);
}

/* The same for a path inside the rootfs: its directory is made first. */
static int
make_node (int rootfd, const char *path, const char *host_path, mode_t type, unsigned major, unsigned minor,
           mode_t mode, bool userns, bool set_owner, uid_t uid, gid_t gid, const char *what, ab_error_t *err)
{
  _cleanup_free_ char *dir = xstrdup (path);
  _cleanup_close_ int dirfd = -1;
  char *slash = strrchr (dir, '/');

  if (slash == NULL || slash[1] == '\0')
    return ab_error_setc (err, AB_EC_CONFIG, EINVAL, "%s: invalid path `%s`", what, path);
  *slash = '\0';
  dirfd = ab_mkpath_in_root (rootfd, *dir ? dir : "/", AB_LAST_DIR, err);
  if (dirfd < 0)
    return ab_error_prefix (err, "%s", what);
  return make_node_at (dirfd, slash + 1, path, host_path, type, major, minor, mode, userns, set_owner, uid,
                       gid, what, err);
}

/* A symlink in /dev (devfd: the container's /dev, resolved in its root). */
static int
make_symlink (int devfd, const char *target, const char *path, ab_error_t *err)
{
  const char *name = strrchr (path, '/') + 1;

  if (symlinkat (target, devfd, name) < 0 && errno != EEXIST)
    return ab_error_set (err, errno, "create symlink `%s`", path);
  return 0;
}

static mode_t
device_type (char t)
{
  switch (t)
    {
    case 'b':
      return S_IFBLK;
    case 'p':
      return S_IFIFO;
    default:
      return S_IFCHR; /* 'c' and 'u' */
    }
}

int
ab_dev_setup (const struct ab_spec *s, int rootfd, bool userns, ab_error_t *err)
{
  _cleanup_close_ int devfd = -1;
  size_t i;
  struct stat st;

  ab_set_step ("devices");
  devfd = ab_open_in_root (rootfd, "/dev", O_PATH | O_DIRECTORY, 0, NULL);
  if (devfd >= 0)
    {
      for (i = 0; i < AB_ARRAY_SIZE (default_devices); i++)
        {
          const struct devnode *d = &default_devices[i];
          char what[64];
          snprintf (what, sizeof what, "default device %s", d->path);
          /* devfd is /dev resolved in the root once (RESOLVE_IN_ROOT), as
             each node's own lookup of /dev would be: every node lands in
             that one directory, without re-resolving the path per node. */
          if (make_node_at (devfd, d->path + strlen ("/dev/"), d->path, d->path, d->type, d->major, d->minor,
                            d->mode, userns, false, 0, 0, what, err)
              < 0)
            return -1;
        }
      /* runtime-linux.md "Dev symbolic links" */
      if (make_symlink (devfd, "/proc/self/fd", "/dev/fd", err) < 0
          || make_symlink (devfd, "/proc/self/fd/0", "/dev/stdin", err) < 0
          || make_symlink (devfd, "/proc/self/fd/1", "/dev/stdout", err) < 0
          || make_symlink (devfd, "/proc/self/fd/2", "/dev/stderr", err) < 0)
        return -1;
      /* /dev/ptmx: the container's own devpts instance. */
      if (fstatat (devfd, "pts/ptmx", &st, AT_SYMLINK_NOFOLLOW) == 0
          && symlinkat ("pts/ptmx", devfd, "ptmx") < 0)
        {
          /* the image's own /dev/ptmx (a /dev without a tmpfs): replaced */
          if (errno != EEXIST || (unlinkat (devfd, "ptmx", 0) < 0 && errno != ENOENT))
            return ab_error_set (err, errno, "replace /dev/ptmx");
          if (symlinkat ("pts/ptmx", devfd, "ptmx") < 0)
            return ab_error_set (err, errno, "create symlink /dev/ptmx");
        }
    }

  if (s->linux_ == NULL)
    return 0;
  for (i = 0; i < s->linux_->n_devices; i++)
    {
      const struct ab_device *d = &s->linux_->devices[i];
      char what[64];
      mode_t mode = d->file_mode_set ? (mode_t) d->file_mode & 0777 : 0666; /* type bits: validated */
      snprintf (what, sizeof what, "linux.devices[%zu]", i);
      if (make_node (rootfd, d->path, d->path, device_type (d->type), (unsigned) d->major, (unsigned) d->minor, mode,
                     userns, d->uid_set || d->gid_set, d->uid_set ? d->uid : 0, d->gid_set ? d->gid : 0, what, err)
          < 0)
        return -1;
    }
  return 0;
}
