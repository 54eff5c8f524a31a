#include "config.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "base/resolve.h"
#include "base/util.h"

bool ab_resolve_force_fallback = false;
static bool have_openat2 = true;

static const char *
skip_slashes (const char *p)
{
  while (*p == '/')
    p++;
  return p;
}

/* Per-component walk with O_NOFOLLOW: no symlink is ever followed, "." is
   skipped, ".." is refused (the spec already forbids it in our paths). */
static int
open_fallback (int rootfd, const char *path, int flags, mode_t mode)
{
  _cleanup_free_ char *copy = xstrdup (skip_slashes (path));
  char *p = copy, *next;
  int cur = dup (rootfd);

  if (cur < 0)
    return -1;
  if (*p == '\0')
    {
      /* the root itself */
      int fd = openat (cur, ".", (flags & ~O_CREAT) | O_CLOEXEC | O_NOFOLLOW);
      ab_close (cur);
      return fd;
    }
  for (;;)
    {
      int fd, e;
      next = strchr (p, '/');
      if (next)
        *next = '\0';
      if (strcmp (p, "..") == 0)
        {
          ab_close (cur);
          errno = EXDEV;
          return -1;
        }
      if (next == NULL || *skip_slashes (next + 1) == '\0')
        {
          fd = openat (cur, p, flags | O_CLOEXEC | O_NOFOLLOW, mode);
          e = errno;
          ab_close (cur);
          errno = e;
          return fd;
        }
      if (strcmp (p, ".") != 0)
        {
          fd = openat (cur, p, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
          e = errno;
          ab_close (cur);
          if (fd < 0)
            {
              errno = e == ENOTDIR ? ELOOP : e; /* a symlink where a directory should be */
              return -1;
            }
          cur = fd;
        }
      p = (char *) skip_slashes (next + 1);
    }
}

static int
open_raw (int rootfd, const char *path, int flags, mode_t mode)
{
  if (have_openat2 && !ab_resolve_force_fallback)
    {
      struct open_how how = {
        .flags = (uint64_t) (flags | O_CLOEXEC),
        .mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0,
        .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
      };
      const char *rel = skip_slashes (path);
      int fd;

      do
        fd = (int) syscall (SYS_openat2, rootfd, *rel ? rel : ".", &how, sizeof how);
      while (fd < 0 && errno == EAGAIN); /* a concurrent rename: retry, the kernel says it is safe to */
      if (fd >= 0 || errno != ENOSYS)
        return fd;
      have_openat2 = false;
    }
  return open_fallback (rootfd, path, flags, mode);
}

int
ab_open_in_root (int rootfd, const char *path, int flags, mode_t mode, ab_error_t *err)
{
  int fd = open_raw (rootfd, path, flags, mode);

  if (fd < 0)
    {
      int e = errno;
      ab_error_set (err, e, "open `%s` in the container", path);
      errno = e;
    }
  return fd;
}

/* Creating in a directory failed: name the directory for the parent, which
   can tell whose it is on the host (create.c). */
static int
creation_failed (ab_error_t *err, int e, const char *what, const char *copy, const char *name)
{
  ab_error_set (err, e, "create %s `%s` in the container", what, copy);
  if (err && (e == EACCES || e == EPERM))
    snprintf (err->where, sizeof err->where, "/%.*s", (int) (name - copy), copy);
  return -1;
}

/* Whether a path has a `.` or `..` component. */
static bool
has_dot_component (const char *p)
{
  while (*p)
    {
      size_t n = strcspn (p, "/");

      if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
        return true;
      p = skip_slashes (p + n);
    }
  return false;
}

/* Only the last component of path missing (a mount point in an existing
   directory: the usual case): resolve the parent in the root once, create
   the one name in it and resolve the whole path again in the root, which
   is the last step of ab_mkpath_in_root's walk without the walk from the
   root (5 syscalls instead of 8).  The name is a single component made
   relative to the resolved parent's fd, as in the walk.  Returns the fd,
   -1 with *err set, or -2 when the walk must do it (a deeper component is
   missing, or `.`/`..` components, which the walk handles or refuses). */
static int
make_last (int rootfd, const char *path, int last, ab_error_t *err)
{
  _cleanup_free_ char *copy = xstrdup (skip_slashes (path));
  _cleanup_free_ char *dir = NULL;
  _cleanup_close_ int parent = -1;
  size_t len = strlen (copy);
  char *name;
  int fd;

  while (len > 0 && copy[len - 1] == '/')
    copy[--len] = '\0';
  if (has_dot_component (copy))
    return -2;
  name = strrchr (copy, '/');
  name = name ? name + 1 : copy;
  if (*name == '\0' || (last != AB_LAST_DIR && last != AB_LAST_FILE))
    return -2;
  dir = xstrndup (copy, (size_t)(name - copy));
  parent = open_raw (rootfd, *dir ? dir : ".", O_PATH, 0);
  if (parent < 0)
    return errno == ENOENT ? -2 : ab_error_set (err, errno, "resolve `%s` in the container", dir);
  if (last == AB_LAST_DIR)
    {
      if (mkdirat (parent, name, 0755) < 0 && errno != EEXIST)
        return creation_failed (err, errno, "directory", copy, name);
    }
  else
    {
      int nf = openat (parent, name, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
      if (nf < 0 && errno != EEXIST)
        return creation_failed (err, errno, "file", copy, name);
      if (nf >= 0)
        ab_close (nf); /* read-only: may wait for execve (util.h) */
    }
  fd = open_raw (rootfd, copy, O_PATH, 0);
  if (fd < 0)
    return ab_error_set (err, errno, "resolve `%s` in the container", copy);
  return fd;
}

int
ab_mkpath_in_root (int rootfd, const char *path, int last, ab_error_t *err)
{
  _cleanup_free_ char *copy = NULL;
  _cleanup_close_ int parent = -1;
  char *p, *slash;
  int fd;

  /* The common case: the target already exists. */
  fd = open_raw (rootfd, path, O_PATH, 0);
  if (fd >= 0)
    return fd;
  if (errno != ENOENT)
    return ab_error_set (err, errno, "resolve `%s` in the container", path);
  fd = make_last (rootfd, path, last, err);
  if (fd != -2)
    return fd;

  /* Walk from the root, creating what is missing.  Each mkdirat/openat is
     relative to the fd of the already resolved parent, with a single name:
     the kernel resolved every symlink on the way inside the root. */
  copy = xstrdup (skip_slashes (path));
  parent = dup (rootfd);
  if (parent < 0)
    return ab_error_set (err, errno, "dup");
  p = copy;
  for (;;)
    {
      bool is_last;
      int cfd;
      slash = strchr (p, '/');
      if (slash)
        *slash = '\0';
      is_last = slash == NULL || *skip_slashes (slash + 1) == '\0';
      if (*p == '\0' || strcmp (p, ".") == 0)
        {
          if (is_last)
            break;
          p = (char *) skip_slashes (slash + 1);
          continue;
        }
      if (strcmp (p, "..") == 0)
        return ab_error_setc (err, AB_EC_CONFIG, EXDEV, "resolve `%s` in the container: `..` component", path);
      /* Resolve the prefix path so far from the root (symlinks clamped). */
      if (slash)
        *slash = '\0';
      cfd = open_raw (rootfd, copy, O_PATH, 0);
      if (cfd < 0 && errno == ENOENT)
        {
          if (!is_last || last == AB_LAST_DIR)
            {
              if (mkdirat (parent, p, 0755) < 0 && errno != EEXIST)
                return creation_failed (err, errno, "directory", copy, p);
            }
          else if (last == AB_LAST_FILE)
            {
              int nf = openat (parent, p, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
              if (nf < 0 && errno != EEXIST)
                return creation_failed (err, errno, "file", copy, p);
              if (nf >= 0)
                ab_close (nf); /* read-only: may wait for execve (util.h) */
            }
          else
            return ab_error_set (err, ENOENT, "resolve `%s` in the container", path);
          cfd = open_raw (rootfd, copy, O_PATH, 0);
        }
      if (cfd < 0)
        return ab_error_set (err, errno, "resolve `%s` in the container", copy);
      if (is_last)
        return cfd;
      ab_close (parent);
      parent = cfd;
      *slash = '/';
      p = (char *) skip_slashes (slash + 1);
    }
  /* path named the root itself */
  fd = open_raw (rootfd, ".", O_PATH, 0);
  if (fd < 0)
    return ab_error_set (err, errno, "open the container root");
  return fd;
}
