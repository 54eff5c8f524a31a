#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>

#include "base/kernel-compat.h"
#include "runtime/mount.h"
#include "runtime/paths.h"
#include "base/resolve.h"
#include "base/util.h"

/* The names in /proc, listed once: most of the default masked paths are
   /proc files that this kernel may not have (kcore, timer_stats, asound,
   ...), and a lookup that fails costs a syscall each where the listing
   costs three.  It answers only for "/proc/NAME", one plain component,
   and only "absent": a listed name is opened as any other path.  Nothing
   runs in the container yet that could change /proc's entries (procfs
   makes them; pids are not looked up this way). */
struct proc_names
{
  bool tried, ok;
  _Alignas(struct dirent64) char buf[8192];
  size_t len;
};

static void
proc_names_load (struct proc_names *pn, int rootfd)
{
  _cleanup_close_ int fd = -1;
  ssize_t n;

  pn->tried = true;
  fd = ab_open_in_root (rootfd, "/proc", O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0, NULL);
  if (fd < 0)
    return;
  while ((n = getdents64 (fd, pn->buf + pn->len, sizeof pn->buf - pn->len)) > 0)
    pn->len += (size_t)n;
  pn->ok = n == 0; /* all of it (a full buffer fails with EINVAL) */
}

static bool
proc_name_absent (struct proc_names *pn, int rootfd, const char *path)
{
  const char *name;
  size_t off;

  if (!ab_str_has_prefix (path, "/proc/") || !ab_path_is_canonical (path) || strchr (path + 6, '/'))
    return false;
  name = path + 6;
  if (!pn->tried)
    proc_names_load (pn, rootfd);
  if (!pn->ok)
    return false;
  for (off = 0; off < pn->len;)
    {
      const struct dirent64 *d = (const struct dirent64 *)(pn->buf + off);
      if (strcmp (d->d_name, name) == 0)
        return false;
      off += d->d_reclen;
    }
  return true;
}

/* Open `path` below the (new) root without following a final symlink:
   the mask or read-only bind lands on the object itself.  -1 with errno
   ENOENT (and *err untouched) for a /proc name the listing lacks. */
static int
open_target (int rootfd, struct proc_names *pn, const char *path, ab_error_t *err)
{
  if (proc_name_absent (pn, rootfd, path))
    return errno = ENOENT, -1;
  return ab_open_in_root (rootfd, path, O_PATH | O_NOFOLLOW, 0, err);
}

static int
readonly_paths (int rootfd, struct proc_names *pn, const struct ab_strv *paths, ab_error_t *err)
{
  size_t i;

  ab_set_step ("readonly-paths");
  for (i = 0; i < paths->n; i++)
    {
      const char *p = paths->v[i];
      _cleanup_close_ int target = open_target (rootfd, pn, p, err);
      _cleanup_close_ int tree = -1;
      struct mount_attr a = { .attr_set = MOUNT_ATTR_RDONLY };

      if (target < 0)
        {
          if (errno == ENOENT)
            continue; /* nothing to protect */
          return ab_error_prefix (err, "linux.readonlyPaths[%zu]", i);
        }
      /* A recursive clone of the object, made read-only, mounted on the
         object itself: the kernel, not a path lookup, connects the two. */
      tree = open_tree (target, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH);
      if (tree < 0)
        return ab_error_set (err, errno, "linux.readonlyPaths[%zu]: bind `%s`", i, p);
      if (mount_setattr (tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof a) < 0)
        return ab_error_set (err, errno, "linux.readonlyPaths[%zu]: make `%s` read-only", i, p);
      if (ab_move_mount_fd (tree, target, p, err) < 0)
        return ab_error_prefix (err, "linux.readonlyPaths[%zu]", i);
    }
  return 0;
}

/* The container's own /dev/null, opened once and verified to be the null
   device: never a path that could have been swapped for a symlink to
   something writable on the host. */
static int
open_devnull (int rootfd, ab_error_t *err)
{
  _cleanup_close_ int fd = ab_open_in_root (rootfd, "/dev/null", O_PATH | O_NOFOLLOW, 0, err);
  struct stat ds;

  if (fd < 0)
    return ab_error_prefix (err, "linux.maskedPaths");
  if (fstat (fd, &ds) < 0)
    return ab_error_set (err, errno, "linux.maskedPaths: stat /dev/null");
  if (!S_ISCHR (ds.st_mode) || major (ds.st_rdev) != 1 || minor (ds.st_rdev) != 3)
    return ab_error_setc (err, AB_EC_SETUP, EPERM,
                          "linux.maskedPaths: /dev/null in the container is not the null device (1:3)");
  return ab_steal_fd (&fd);
}

static int
mask_paths (int rootfd, struct proc_names *pn, const struct ab_strv *paths, ab_error_t *err)
{
  _cleanup_close_ int devnull = -1;
  _cleanup_close_ int emptydir = -1;
  size_t i;

  ab_set_step ("masked-paths");
  for (i = 0; i < paths->n; i++)
    {
      const char *p = paths->v[i];
      _cleanup_close_ int target = open_target (rootfd, pn, p, err);
      _cleanup_close_ int tree = -1;
      struct stat st;

      if (target < 0)
        {
          if (errno == ENOENT)
            continue;
          return ab_error_prefix (err, "linux.maskedPaths[%zu]", i);
        }
      /* The object's type from the fd itself (it cannot change under an
         fd): a directory gets an empty read-only tmpfs, anything else
         /dev/null.  Asked first: a bind the kernel refuses (ENOTDIR) costs
         ~50 us, a clone of the mount undone, where fstat costs ~2. */
      if (fstat (target, &st) < 0)
        return ab_error_set (err, errno, "linux.maskedPaths[%zu]: stat `%s`", i, p);
      if (!S_ISDIR (st.st_mode) && devnull < 0 && (devnull = open_devnull (rootfd, err)) < 0)
        return -1;
      if (ab_fd_paths_ok
          && (S_ISDIR (st.st_mode) ? ab_mount_on_fd ("tmpfs", -1, target, "tmpfs",
                                                     MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=0,mode=0555")
                                   : ab_mount_on_fd (NULL, devnull, target, NULL, MS_BIND, NULL))
                 == 0)
        continue;
      if (S_ISDIR (st.st_mode))
        {
          /* One empty read-only tmpfs, cloned onto every masked directory. */
          if (emptydir < 0)
            {
              _cleanup_close_ int fsfd = fsopen ("tmpfs", FSOPEN_CLOEXEC);
              if (fsfd < 0 || fsconfig (fsfd, FSCONFIG_SET_STRING, "size", "0", 0) < 0
                  || fsconfig (fsfd, FSCONFIG_SET_STRING, "mode", "0555", 0) < 0
                  || fsconfig (fsfd, FSCONFIG_SET_FLAG, "ro", NULL, 0) < 0
                  || fsconfig (fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
                return ab_error_set (err, errno, "linux.maskedPaths: create empty tmpfs");
              emptydir = fsmount (fsfd, FSMOUNT_CLOEXEC,
                                  MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
              if (emptydir < 0)
                return ab_error_set (err, errno, "linux.maskedPaths: mount empty tmpfs");
            }
          tree = open_tree (emptydir, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
        }
      else
        tree = open_tree (devnull, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
      if (tree < 0)
        return ab_error_set (err, errno, "linux.maskedPaths[%zu]: clone mask for `%s`", i, p);
      if (ab_move_mount_fd (tree, target, p, err) < 0)
        return ab_error_prefix (err, "linux.maskedPaths[%zu]", i);
    }
  return 0;
}

int
ab_paths_protect (const struct ab_strv *readonly, const struct ab_strv *masked, ab_error_t *err)
{
  _cleanup_close_ int rootfd = -1;
  struct proc_names pn = { 0 };

  if (readonly->n == 0 && masked->n == 0)
    return 0;
  rootfd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    return ab_error_set (err, errno, "open /");
  if (readonly_paths (rootfd, &pn, readonly, err) < 0 || mask_paths (rootfd, &pn, masked, err) < 0)
    return -1;
  return 0;
}

int
ab_proc_root (ab_error_t *err)
{
  _cleanup_close_ int fd = open ("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct statfs sf;
  struct stat st;

  if (fd < 0)
    return ab_error_set (err, errno, "open /proc (is it mounted?)");
  if (fstatfs (fd, &sf) < 0 || fstat (fd, &st) < 0)
    return ab_error_set (err, errno, "stat /proc");
  if (sf.f_type != PROC_SUPER_MAGIC || st.st_ino != PROC_ROOT_INO)
    return ab_error_setc (err, AB_EC_SETUP, 0, "/proc is not the root of a procfs");
  return ab_steal_fd (&fd);
}

int
ab_proc_open (int procfd, const char *rel, int flags, ab_error_t *err)
{
  int fd = ab_openat2 (procfd, rel, flags | O_NOCTTY, 0,
                       RESOLVE_BENEATH | RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS);

  if (fd < 0 && errno == EXDEV)
    return ab_error_setc (err, AB_EC_SETUP, 0,
                          "open /proc/%s: something is mounted on its way (it could take the write elsewhere)",
                          rel);
  if (fd < 0)
    return ab_error_set (err, errno, "open /proc/%s", rel);
  return fd;
}

int
ab_sysctl_apply (const struct ab_kvlist *sysctl, ab_error_t *err)
{
  _cleanup_close_ int procfd = -1;
  size_t i;

  ab_set_step ("sysctl");
  if (sysctl->n == 0)
    return 0;
  procfd = ab_proc_root (err);
  if (procfd < 0)
    return ab_error_prefix (err, "linux.sysctl");
  for (i = 0; i < sysctl->n; i++)
    {
      _cleanup_free_ char *rel = xasprintf ("sys/%s", sysctl->v[i].key);
      _cleanup_close_now_ int fd = -1;
      char *p;
      for (p = rel; *p; p++)
        if (*p == '.')
          *p = '/';
      fd = ab_proc_open (procfd, rel, O_WRONLY | O_NOFOLLOW, err);
      if (fd < 0)
        return ab_error_prefix (err, "linux.sysctl.%s", sysctl->v[i].key);
      if (ab_write_all (fd, sysctl->v[i].value, strlen (sysctl->v[i].value)) < 0)
        return ab_error_set (err, errno, "linux.sysctl.%s: write `%s`", sysctl->v[i].key, sysctl->v[i].value);
    }
  return 0;
}

int
ab_uts_apply (const struct ab_spec *s, ab_error_t *err)
{
  ab_set_step ("hostname");
  /* An empty name is no name (as runc reads it): the validator lets it
     pass without a UTS namespace of the container's own, so setting it
     would empty the host's. */
  if (s->hostname && s->hostname[0] && sethostname (s->hostname, strlen (s->hostname)) < 0)
    return ab_error_set (err, errno, "hostname: sethostname `%s`", s->hostname);
  if (s->domainname && s->domainname[0] && setdomainname (s->domainname, strlen (s->domainname)) < 0)
    return ab_error_set (err, errno, "domainname: setdomainname `%s`", s->domainname);
  return 0;
}
