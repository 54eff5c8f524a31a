/* Symlinks of the bundle on the way of a host path (spec/bundle-links.h).
 *
 * A bind source such as "<bundle>/rootfs/srcvol" names a file of the image,
 * and the image is hostile: "srcvol -> /some/host/dir" would show the host's
 * directory in the container if the path were resolved as usual.  Paths
 * that enter the bundle (or the rootfs, which podman and containerd keep
 * outside it) resolve beneath it: openat2(RESOLVE_BENEATH) from the fd of
 * that directory.
 *
 * Why RESOLVE_BENEATH and not RESOLVE_IN_ROOT: IN_ROOT would re-root an
 * absolute link at the bundle directory and quietly bind
 * "<bundle>/some/host/dir", a path neither the config author nor the image
 * named.  BENEATH keeps the meaning of every link that stays inside (the
 * relative "lib -> usr/lib" of any image) and refuses, with an error that
 * names the mount and the link, exactly the links that would leave: the
 * author can then name the target directly.  Paths outside the bundle are
 * the config author's and are resolved as given, by a walk that holds an
 * fd at every step, so a symlink swapped in later cannot redirect anything:
 * the caller mounts the fd (open_tree on it), never the path. */
#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <sys/stat.h>

#include "base/resolve.h"
#include "base/util.h"
#include "spec/bundle-links.h"

#define MAX_LINKS 40 /* as the kernel's path walk */

static int
open_beneath_flags (int dirfd, const char *rel, int flags)
{
  return ab_openat2 (dirfd, rel, flags, 0, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS);
}

static int
open_beneath (int dirfd, const char *rel)
{
  return open_beneath_flags (dirfd, rel, O_PATH);
}

static char *
read_link_at (int dirfd, const char *name)
{
  char buf[PATH_MAX];
  ssize_t n = readlinkat (dirfd, name, buf, sizeof buf - 1);

  if (n < 0)
    return NULL;
  buf[n] = '\0';
  return xstrdup (buf);
}

/* Walk `rel` below rootfd (named root_path in messages) and find its
   symlinks: 1 with the first that leads out (else the first at all), 0 when
   there is none. */
static int
find_link (int rootfd, const char *root_path, const char *rel, char **link_path, char **link_target)
{
  _cleanup_free_ char *copy = xstrdup (rel + strspn (rel, "/"));
  _cleanup_free_ char *first_path = NULL, *first_target = NULL;
  _cleanup_close_ int cur = dup (rootfd);
  size_t i = 0, n = strlen (copy);

  while (cur >= 0 && i < n)
    {
      size_t start = i, end;
      char saved;
      struct stat st;
      int next;

      while (start < n && copy[start] == '/')
        start++;
      for (end = start; end < n && copy[end] != '/'; end++)
        ;
      if (end == start)
        break;
      i = end;
      saved = copy[end];
      copy[end] = '\0';
      if (strcmp (copy + start, ".") == 0)
        next = dup (cur);
      else if (strcmp (copy + start, "..") == 0)
        next = open_beneath (rootfd, copy);
      else if (fstatat (cur, copy + start, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK (st.st_mode))
        {
          _cleanup_free_ char *target = read_link_at (cur, copy + start);
          _cleanup_free_ char *path = xasprintf ("%s/%s", root_path, copy);
          next = open_beneath (rootfd, copy);
          if (next < 0 && (errno == EXDEV || errno == ELOOP) && target != NULL)
            {
              *link_path = ab_steal_ptr (&path);
              *link_target = ab_steal_ptr (&target);
              return 1;
            }
          if (first_path == NULL && target != NULL)
            {
              first_path = ab_steal_ptr (&path);
              first_target = ab_steal_ptr (&target);
            }
        }
      else
        next = openat (cur, copy + start, O_PATH | O_NOFOLLOW | O_CLOEXEC);
      copy[end] = saved;
      close (cur);
      cur = next;
    }
  if (first_path == NULL)
    return 0;
  *link_path = ab_steal_ptr (&first_path);
  *link_target = ab_steal_ptr (&first_target);
  return 1;
}

/* The part of `source` below `dir` ("" for dir itself), or NULL. */
static const char *
below (const char *dir, const char *source)
{
  size_t n = strlen (dir);

  while (n > 1 && dir[n - 1] == '/')
    n--;
  if (strncmp (source, dir, n) != 0 || (source[n] != '/' && source[n] != '\0'))
    return NULL;
  return source + n;
}

int
ab_bundle_source_link (const char *bundle_dir, const char *source, char **link_path, char **link_target,
                       ab_error_t *err)
{
  _cleanup_free_ char *real = realpath (bundle_dir, NULL);
  _cleanup_close_ int bfd = -1;
  const char *rel = NULL;

  *link_path = *link_target = NULL;
  if (source[0] != '/')
    rel = source;
  else if ((rel = below (bundle_dir, source)) == NULL && real != NULL)
    rel = below (real, source);
  if (rel == NULL)
    return 0;
  bfd = open (bundle_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (bfd < 0)
    return ab_error_setc (err, AB_EC_CONFIG, errno, "bundle `%s`", bundle_dir);
  return find_link (bfd, real ? real : bundle_dir, rel, link_path, link_target);
}

struct image_root
{
  const char *path;
  int fd;
  dev_t dev;
  ino_t ino;
};

static void
image_root_open (struct image_root *r, const char *path)
{
  struct stat st;

  r->path = path;
  r->fd = path ? open (path, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
  if (r->fd >= 0 && fstat (r->fd, &st) == 0)
    {
      r->dev = st.st_dev;
      r->ino = st.st_ino;
    }
  else if (r->fd >= 0)
    {
      close (r->fd);
      r->fd = -1;
    }
}

/* The image root that fd is, if any; known: fd's stat when the caller has
   it already. */
static const struct image_root *
image_root_of (int fd, const struct stat *known, const struct image_root *roots, size_t n)
{
  struct stat st;

  if (known)
    st = *known;
  else if (fstat (fd, &st) < 0)
    return NULL;
  for (size_t i = 0; i < n; i++)
    if (roots[i].fd >= 0 && roots[i].dev == st.st_dev && roots[i].ino == st.st_ino)
      return &roots[i];
  return NULL;
}

/* The rest of the walk happens beneath an image root. */
static int
open_in_image (const struct image_root *r, int at, const char *rest, const char *what, const char *path,
               ab_error_t *err)
{
  _cleanup_free_ char *lp = NULL, *lt = NULL;
  int fd = open_beneath (at, rest);
  int e = errno;

  if (fd >= 0)
    return fd;
  if (e != EXDEV && e != ELOOP)
    return ab_error_set (err, e, "%s `%s`", what, path);
  if (find_link (at, r->path, rest, &lp, &lt) > 0)
    return ab_error_setc (err, AB_EC_CONFIG, 0,
                          "%s `%s` passes through the symlink `%s` -> `%s` inside `%s`, which leads out of it "
                          "(name the target itself, or remove the link)",
                          what, path, lp, lt, r->path);
  return ab_error_setc (err, AB_EC_CONFIG, 0, "%s `%s` leads out of `%s`", what, path, r->path);
}

int
ab_bundle_open_path (const char *bundle_dir, const char *rootfs, const char *path, const char *what,
                     ab_error_t *err)
{
  /* No symlink, "." or ".." on the way: the walk would take the path name
     by name to the same file (it differs from a plain resolution only at
     those), so one openat2 does.  Anything else, and every failure, takes
     the walk, which also words the error. */
  if (path[0] == '/' || bundle_dir != NULL)
    {
      _cleanup_free_ char *joined = path[0] == '/' ? NULL : xasprintf ("%s/%s", bundle_dir, path);
      int fd = ab_open_canonical (joined ? joined : path, O_PATH);

      if (fd >= 0)
        return fd;
    }
  return ab_bundle_walk_path (bundle_dir, rootfs, path, what, err);
}

int
ab_bundle_walk_path (const char *bundle_dir, const char *rootfs, const char *path, const char *what,
                     ab_error_t *err)
{
  struct image_root roots[2];
  _cleanup_free_ char *rest = NULL;
  _cleanup_close_ int cur = -1;
  int links = 0, r = -1;
  const struct image_root *in;
  struct stat st, cur_st;
  bool cur_known = false; /* cur_st is cur's stat */
  size_t i;

  image_root_open (&roots[0], bundle_dir);
  image_root_open (&roots[1], rootfs);
  if (path[0] != '/' && roots[0].fd < 0)
    {
      r = ab_error_setc (err, AB_EC_CONFIG, errno, "%s `%s`: bundle `%s`", what, path, bundle_dir);
      goto out;
    }
  cur = path[0] == '/' ? open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC) : dup (roots[0].fd);
  rest = xstrdup (path);
  for (;;)
    {
      char *p = rest, *comp;
      int next;

      if (cur < 0)
        {
          r = ab_error_set (err, errno, "%s `%s`", what, path);
          goto out;
        }
      if ((in = image_root_of (cur, cur_known ? &cur_st : NULL, roots, 2)) != NULL)
        {
          r = open_in_image (in, cur, rest, what, path, err);
          goto out;
        }
      while (*p == '/')
        p++;
      if (*p == '\0')
        {
          r = ab_steal_fd (&cur);
          goto out;
        }
      comp = p;
      p += strcspn (p, "/");
      if (*p)
        *p++ = '\0';
      if (strcmp (comp, ".") == 0)
        next = dup (cur);
      else if (strcmp (comp, "..") == 0)
        next = openat (cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
      else
        next = openat (cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
      bool next_known = next >= 0 && fstat (next, &st) == 0;
      if (next_known && S_ISLNK (st.st_mode))
        {
          /* The author's symlink (outside every image root): follow it,
             from where it is. */
          _cleanup_free_ char *target = read_link_at (next, "");
          close (next);
          if (target == NULL || ++links > MAX_LINKS)
            {
              r = ab_error_set (err, target ? ELOOP : errno, "%s `%s`", what, path);
              goto out;
            }
          {
            char *joined = xasprintf ("%s/%s", target, p);
            free (rest);
            rest = joined;
          }
          if (target[0] == '/')
            {
              close (cur);
              cur = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
              cur_known = false;
            }
          continue;
        }
      memmove (rest, p, strlen (p) + 1);
      close (cur);
      cur = next;
      cur_st = st;
      cur_known = next_known;
    }
out:
  for (i = 0; i < 2; i++)
    if (roots[i].fd >= 0)
      close (roots[i].fd);
  return r;
}

int
ab_bundle_open_file (const char *bundle_dir, const char *rootfs, const char *path, int flags, const char *what,
                     ab_error_t *err)
{
  const char *dirs[2] = { bundle_dir, rootfs };

  for (size_t i = 0; i < 2; i++)
    {
      _cleanup_close_ int dfd = -1;
      const char *rel = dirs[i] ? below (dirs[i], path) : NULL;
      int fd;

      if (rel == NULL)
        continue;
      dfd = open (dirs[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (dfd < 0)
        return ab_error_set (err, errno, "%s `%s`: open `%s`", what, path, dirs[i]);
      fd = open_beneath_flags (dfd, rel, flags);
      if (fd < 0 && (errno == EXDEV || errno == ELOOP))
        {
          struct image_root r = { .path = dirs[i], .fd = dfd };
          return open_in_image (&r, dfd, rel, what, path, err);
        }
      if (fd < 0)
        return ab_error_set (err, errno, "%s `%s`", what, path);
      return fd;
    }
  {
    int fd = open (path, flags | O_CLOEXEC);
    if (fd < 0)
      return ab_error_set (err, errno, "%s `%s`", what, path);
    return fd;
  }
}
