#include "config.h"

#include <fcntl.h>
#include <limits.h>
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

int
ab_openat2 (int dirfd, const char *path, int flags, mode_t mode, unsigned long long resolve)
{
  struct open_how how = {
    .flags = (uint64_t) (flags | O_CLOEXEC),
    .mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0,
    .resolve = resolve,
  };
  const char *rel = skip_slashes (path);
  int fd;

  do
    fd = (int) syscall (SYS_openat2, dirfd, *rel ? rel : ".", &how, sizeof how);
  while (fd < 0 && errno == EAGAIN); /* a rename or mount meanwhile: retry, as the kernel asks */
  return fd;
}

static int
open_raw (int rootfd, const char *path, int flags, mode_t mode)
{
  if (have_openat2 && !ab_resolve_force_fallback)
    {
      int fd = ab_openat2 (rootfd, path, flags, mode, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);

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

/* Whether a path has a `..` component (or, with dot, a `.` one too). */
static bool
has_dots (const char *p, bool dot)
{
  while (*p)
    {
      size_t n = strcspn (p, "/");

      if ((dot && n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
        return true;
      p = skip_slashes (p + n);
    }
  return false;
}

/* Only the last component of path missing (a mount point in an existing
   directory: the usual case): resolve the parent in the root once, create
   the one name in it and resolve the whole path again in the root, which
   is the last step of ab_mkpath_in_root's walk without the walk from the
   root.  The name is a single component made
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
  if (has_dots (copy, true))
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
  if (fd < 0 && errno == ENOENT)
    return -2; /* the name is a dangling link: the walk follows it */
  if (fd < 0)
    return ab_error_set (err, errno, "resolve `%s` in the container", copy);
  return fd;
}

/* The walk of ab_mkpath_in_root: one component at a time, each opened
   with O_NOFOLLOW relative to the fd of its resolved parent, so the
   kernel never follows a link of the rootfs for us.  A symlink, dangling
   or not, is read and its target resolved beneath the root as
   RESOLVE_IN_ROOT would (runc's securejoin does the same): an absolute
   target starts again at the root, a `..` of a target goes up one resolved
   directory and stops at the root.  `..` is taken lexically from the
   directories this walk resolved itself, never from the filesystem, so a
   directory moved meanwhile cannot lead out.  What is missing is made in
   the directory it belongs to: so a mount point behind a dangling link
   (a mount destination /run -> /var/run where /var/run is missing) is
   made where the link points, inside the root, never on the host. */
#define WALK_MAX_LINKS 40

struct walk
{
  int rootfd;
  int cur;          /* fd of the directory resolved so far */
  char *resolved;   /* its path from the root, "" for the root: for `..` */
  char *todo;       /* what is left to resolve, components joined by '/' */
  unsigned links;   /* symlinks followed */
};

static void
walk_free (struct walk *w)
{
  if (w->cur >= 0)
    ab_close (w->cur);
  free (w->resolved);
  free (w->todo);
}

/* Go to the root (an absolute link) or up one resolved directory. */
static int
walk_reset (struct walk *w, bool up, ab_error_t *err)
{
  int fd;

  if (up)
    {
      char *slash = strrchr (w->resolved, '/');
      if (slash)
        *slash = '\0';
      else
        w->resolved[0] = '\0';
    }
  else
    w->resolved[0] = '\0';
  /* A path of directories this walk opened one by one: no link on it,
     unless one was swapped in since, which RESOLVE_IN_ROOT (or the
     fallback's refusal of links) keeps inside the root. */
  fd = open_raw (w->rootfd, w->resolved[0] ? w->resolved : ".", O_PATH | O_DIRECTORY, 0);
  if (fd < 0)
    return ab_error_set (err, errno, "resolve `/%s` in the container", w->resolved);
  ab_close (w->cur);
  w->cur = fd;
  return 0;
}

/* Replace the component just taken (a symlink opened as fd) by its target. */
static int
walk_follow (struct walk *w, int link, const char *rest, const char *path, ab_error_t *err)
{
  char target[PATH_MAX];
  ssize_t n;
  char *todo;

  if (++w->links > WALK_MAX_LINKS)
    return ab_error_setc (err, AB_EC_CONFIG, ELOOP, "resolve `%s` in the container: more than %d symlinks", path,
                          WALK_MAX_LINKS);
  n = readlinkat (link, "", target, sizeof target - 1);
  if (n < 0)
    return ab_error_set (err, errno, "resolve `%s` in the container: read a symlink", path);
  target[n] = '\0';
  if (n == 0)
    return ab_error_set (err, ENOENT, "resolve `%s` in the container: an empty symlink", path);
  todo = xasprintf ("%s%s%s", target, *rest ? "/" : "", rest);
  free (w->todo);
  w->todo = todo;
  if (target[0] == '/' && walk_reset (w, false, err) < 0)
    return -1;
  return 0;
}

/* Make `name` in the directory the walk stands in.  A refusal names that
   directory (err->where), for the parent to tell whose it is (create.c). */
static int
walk_create (const struct walk *w, const char *name, int kind, const char *path, ab_error_t *err)
{
  int e;

  if (kind == AB_LAST_DIR)
    {
      if (mkdirat (w->cur, name, 0755) == 0 || errno == EEXIST)
        return 0;
    }
  else if (kind == AB_LAST_FILE)
    {
      int nf = openat (w->cur, name, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
      if (nf >= 0)
        ab_close (nf); /* read-only: may wait for execve (util.h) */
      if (nf >= 0 || errno == EEXIST)
        return 0;
    }
  else
    return ab_error_set (err, ENOENT, "resolve `%s` in the container", path);
  e = errno;
  ab_error_set (err, e, "create %s `/%s%s%s` in the container (for `%s`)", kind == AB_LAST_DIR ? "directory" : "file",
                w->resolved, w->resolved[0] ? "/" : "", name, path);
  if (err && (e == EACCES || e == EPERM))
    snprintf (err->where, sizeof err->where, "/%s", w->resolved);
  return -1;
}

/* The next component of the walk: 0 when the walk goes on, 1 when it
   ended with the fd of the path in *out, -1 on error.  A missing component
   is made where the walk stands, then opened again like any other (a link
   planted in between is followed inside the root); bounded by *made: each
   pass either makes a name or finds one. */
static int
walk_step (struct walk *w, const char *path, int last, unsigned *made, int *out, ab_error_t *err)
{
  char *p = w->todo, *slash;
  _cleanup_free_ char *name = NULL;
  const char *rest;
  bool is_last;
  struct stat st;
  int fd;

  while (*p == '/')
    p++;
  if (*p == '\0')
    {
      /* the root itself, or a path ending in `..`, `.` or a link to one */
      *out = open_raw (w->cur, ".", O_PATH, 0);
      return *out < 0 ? ab_error_set (err, errno, "resolve `%s` in the container", path) : 1;
    }
  slash = strchr (p, '/');
  name = slash ? xstrndup (p, (size_t)(slash - p)) : xstrdup (p);
  rest = slash ? skip_slashes (slash) : "";
  is_last = *rest == '\0';
  if (strcmp (name, ".") == 0 || strcmp (name, "..") == 0)
    {
      memmove (w->todo, rest, strlen (rest) + 1);
      return name[1] == '.' && walk_reset (w, true, err) < 0 ? -1 : 0;
    }
  fd = openat (w->cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT)
    {
      if (++*made > 4096)
        return ab_error_setc (err, AB_EC_SETUP, ELOOP, "resolve `%s` in the container: it keeps vanishing", path);
      return walk_create (w, name, is_last ? last : AB_LAST_DIR, path, err) < 0 ? -1 : 0;
    }
  if (fd < 0 || fstat (fd, &st) < 0)
    {
      ab_error_set (err, errno, "resolve `%s` in the container: `%s`", path, name);
      if (fd >= 0)
        ab_close (fd);
      return -1;
    }
  if (S_ISLNK (st.st_mode))
    {
      int f = walk_follow (w, fd, rest, path, err);
      ab_close (fd);
      return f < 0 ? -1 : 0;
    }
  if (is_last)
    {
      *out = fd;
      return 1;
    }
  if (!S_ISDIR (st.st_mode))
    {
      ab_close (fd);
      return ab_error_set (err, ENOTDIR, "resolve `%s` in the container: `%s` is not a directory", path, name);
    }
  {
    char *res = xasprintf ("%s%s%s", w->resolved, w->resolved[0] ? "/" : "", name);
    free (w->resolved);
    w->resolved = res;
  }
  ab_close (w->cur);
  w->cur = fd;
  memmove (w->todo, rest, strlen (rest) + 1);
  return 0;
}

static int
mkpath_walk (int rootfd, const char *path, int last, ab_error_t *err)
{
  struct walk w = { .rootfd = rootfd, .cur = -1, .resolved = xstrdup (""), .todo = xstrdup (skip_slashes (path)) };
  unsigned made = 0;
  int r = -1, step;

  if (has_dots (w.todo, false))
    /* config.json's paths have none (spec/validate.c); only a link's
       target may go up */
    ab_error_setc (err, AB_EC_CONFIG, EXDEV, "resolve `%s` in the container: `..` component", path);
  else if ((w.cur = dup (rootfd)) < 0)
    ab_error_set (err, errno, "dup");
  else
    while ((step = walk_step (&w, path, last, &made, &r, err)) == 0)
      ;
  walk_free (&w);
  return r;
}

int
ab_mkpath_in_root (int rootfd, const char *path, int last, ab_error_t *err)
{
  int fd;

  /* The common cases, with openat2: the target exists (a link on the way
     followed inside the root by the kernel), or only its last component
     is missing.  Without openat2 the walk does it all: the fallback of
     open_raw refuses links, where the walk follows them inside the root. */
  if (have_openat2 && !ab_resolve_force_fallback)
    {
      fd = open_raw (rootfd, path, O_PATH, 0);
      if (fd >= 0)
        return fd;
      if (errno != ENOENT)
        return ab_error_set (err, errno, "resolve `%s` in the container", path);
      fd = make_last (rootfd, path, last, err);
      if (fd != -2)
        return fd;
    }
  return mkpath_walk (rootfd, path, last, err);
}
