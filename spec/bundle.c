/* Loading a bundle (bundle.md): the directory, its config.json, the root
 * filesystem it names.  `create` and `validate` both come through here.
 *
 * config.json is read once, bounded, and the bytes kept: the state
 * directory stores exactly what was parsed, so a later `start` or `delete`
 * never re-reads a file that may have changed in between. */
#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include "base/util.h"
#include "spec/bundle-links.h"
#include "spec/spec.h"

void
ab_bundle_free (struct ab_bundle *b)
{
  if (b == NULL)
    return;
  free (b->dir);
  free (b->config);
  ab_spec_free (b->spec);
  free (b->rootfs);
  if (b->rootfs_fd >= 0)
    close (b->rootfs_fd);
  free (b);
}

/* The canonical absolute path of the bundle directory, and an O_PATH fd
   of it. */
static int
canonical_dir (const char *dir, char **out, int *fdp, ab_error_t *err)
{
  _cleanup_free_ char *real = NULL, *cwd = NULL;
  _cleanup_close_ int fd = -1;
  size_t n;

  if (dir == NULL || dir[0] == '\0')
    return ab_error_setc (err, AB_EC_USAGE, 0, "bundle: empty path");
  /* Plain names with no symlink on the way are their own canonical form:
     one openat2 says so (and that it is a directory) where realpath
     costs a readlink per component. */
  if (dir[0] == '/')
    real = xstrdup (dir);
  else if ((cwd = getcwd (NULL, 0)) != NULL)
    real = xasprintf ("%s/%s", strcmp (cwd, "/") == 0 ? "" : cwd, dir);
  for (n = real ? strlen (real) : 0; n > 1 && real[n - 1] == '/'; n--)
    real[n - 1] = '\0';
  if (real != NULL && (fd = ab_open_canonical (real, O_PATH | O_DIRECTORY)) >= 0)
    goto done;
  free (real);
  real = realpath (dir, NULL);
  if (real == NULL)
    return ab_error_setc (err, AB_EC_CONFIG, errno, "bundle `%s`", dir);
  fd = open (real, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return ab_error_setc (err, AB_EC_CONFIG, errno, "bundle `%s`", dir);
done:
  *out = ab_steal_ptr (&real);
  if (fdp)
    *fdp = ab_steal_fd (&fd);
  return 0;
}

static bool
same_file (const struct stat *a, const struct stat *b)
{
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Is the directory `root` the directory `dir` or one of its ancestors?
   Identity is device and inode, never a path string: a bind mount of a
   directory (of / above all) is the same inode on the same device under
   another name, and so are "..", symlinks and /proc/self/root.  The
   ancestors are found by "..", which the kernel resolves across mount
   points to the real parent, until the runtime's own root (`top`).  A
   `dir` that does not exist yet, or is no directory (a cache path that
   is a file: the cache is unusable, and runs go on without it), is
   checked by its nearest existing directory, where create would make it.
   1 yes, 0 no, -1 with errno. */
static int
is_dir_or_above (const struct stat *root, const struct stat *top, const char *dir)
{
  _cleanup_free_ char *p = xstrdup (*dir ? dir : ".");
  struct stat st;

  for (;;)
    {
      int r = stat (p, &st);
      char *slash = strrchr (p, '/');

      if (r == 0 && S_ISDIR (st.st_mode))
        break;
      if (r < 0 && errno != ENOENT && errno != ENOTDIR)
        return -1;
      if (slash == NULL)
        strcpy (p, ".");
      else if (slash == p)
        p[1] = '\0';
      else
        *slash = '\0';
    }
  for (;;)
    {
      char *up;

      if (same_file (&st, root))
        return 1;
      if (same_file (&st, top))
        return 0;
      if (strlen (p) > PATH_MAX - 4)
        {
          errno = ENAMETOOLONG;
          return -1;
        }
      up = xasprintf ("%s/..", p);
      free (p);
      p = up;
      if (stat (p, &st) < 0)
        return -1;
    }
}

/* root.path must be a root of its own.  The host's root as the container's
   would hand it every file of the host (and the readonly/masked paths would
   not change that: they are made in the container's private copy of the
   mount).  A root that is or holds the state root (--root) or the cache
   would let the container rewrite the state of other containers (their
   pids, which kill and delete signal) or the compiled seccomp programs
   other containers load.  create checks the fd it clones the root from, so
   what is checked is what runs. */
int
ab_root_dir_check (const struct stat *root, const char *path, const struct ab_bundle_guard *guard, ab_error_t *err)
{
  struct stat top;

  if (stat ("/", &top) < 0)
    return ab_error_set (err, errno, "config.json: root.path: stat /");
  if (same_file (root, &top))
    return ab_error_setc (err, AB_EC_CONFIG, 0,
                          "config.json: root.path: `%s` is the host's root directory; a container needs a root "
                          "filesystem of its own",
                          path);
  if (guard == NULL)
    return 0;
  for (int i = 0; i < 2; i++)
    {
      const char *dir = i == 0 ? guard->state_root : guard->cache;
      const char *what = i == 0 ? "agentbox's state root" : "agentbox's cache";
      const char *option = i == 0 ? "--root" : "AGENTBOX_CACHE_DIR";
      int r;

      if (dir == NULL || *dir == '\0')
        continue;
      r = is_dir_or_above (root, &top, dir);
      if (r < 0)
        return ab_error_setc (err, AB_EC_CONFIG, errno, "config.json: root.path: compare `%s` with %s `%s`", path,
                              what, dir);
      if (r > 0)
        return ab_error_setc (err, AB_EC_CONFIG, 0,
                              "config.json: root.path: `%s` is or contains %s `%s` (%s); the container could "
                              "rewrite it",
                              path, what, dir, option);
    }
  return 0;
}

/* root.path, relative to the bundle unless absolute (config.md), must be a
   directory.  Resolved like a bind source (spec/bundle-links.h): beneath the
   bundle once the path is in it, so that a symlink of the bundle cannot
   make the host's / the container's root; the state records the real
   directory, and create clones the root from the fd kept here (never by
   this path string). */
static int
resolve_rootfs (struct ab_bundle *b, const struct ab_bundle_guard *guard, ab_error_t *err)
{
  const char *path = b->spec->root.path;
  _cleanup_free_ char *joined = NULL;
  _cleanup_close_ int fd = -1;
  char link[64], real[PATH_MAX];
  ab_error_t e = { 0 };
  struct stat st;
  ssize_t n;

  if (path[0] == '/')
    joined = xstrdup (path);
  else
    joined = xasprintf ("%s/%s", strcmp (b->dir, "/") == 0 ? "" : b->dir, path);
  /* A canonical path with no symlink (the common case) is the real
     directory as written: no walk, no readlink of the fd.  That is
     ab_bundle_open_path's own first try, made here to know it succeeded
     (and with O_DIRECTORY); the walk follows without repeating it. */
  fd = ab_open_canonical (joined, O_PATH | O_DIRECTORY);
  if (fd >= 0)
    {
      if (fstat (fd, &st) < 0)
        return ab_error_set (err, errno, "config.json: root.path: stat `%s`", joined);
      if (ab_root_dir_check (&st, b->spec->root.path, guard, err) < 0)
        return -1;
      b->rootfs = ab_steal_ptr (&joined);
      b->rootfs_fd = ab_steal_fd (&fd);
      return 0;
    }
  fd = ab_bundle_walk_path (b->dir, NULL, path, "config.json: root.path", &e);
  if (fd < 0 && e.cls == AB_EC_CONFIG)
    {
      if (err)
        *err = e;
      return -1;
    }
  if (fd < 0)
    return ab_error_setc (err, AB_EC_CONFIG, e.errnum, "config.json: root.path: `%s` is not a directory", joined);
  if (fstat (fd, &st) < 0 || !S_ISDIR (st.st_mode))
    return ab_error_setc (err, AB_EC_CONFIG, 0, "config.json: root.path: `%s` is not a directory", joined);
  if (ab_root_dir_check (&st, b->spec->root.path, guard, err) < 0)
    return -1;
  snprintf (link, sizeof link, "/proc/self/fd/%d", fd);
  n = readlink (link, real, sizeof real - 1);
  if (n <= 0 || real[0] != '/')
    return ab_error_set (err, n < 0 ? errno : ENOENT, "config.json: root.path: where is `%s`", joined);
  real[n] = '\0';
  b->rootfs = xstrdup (real);
  b->rootfs_fd = ab_steal_fd (&fd);
  return 0;
}

/* validate and create: every bind source that enters the bundle (or the
   rootfs) stays in it.  Other failures (a missing source) are left for the
   mount itself to report. */
static int
check_bind_sources (const struct ab_bundle *b, ab_error_t *err)
{
  const struct ab_spec *s = b->spec;

  for (size_t i = 0; i < s->n_mounts; i++)
    {
      const struct ab_mount *m = &s->mounts[i];
      char what[64 + PATH_MAX];
      ab_error_t e = { 0 };
      int fd;

      if (!ab_mount_is_bind (m) || m->source == NULL || m->source[0] == '\0')
        continue;
      snprintf (what, sizeof what, "config.json: mounts[%zu] (%s): source", i, m->destination);
      fd = ab_bundle_open_path (b->dir, b->rootfs, m->source, what, &e);
      if (fd >= 0)
        close (fd);
      else if (e.cls == AB_EC_CONFIG)
        {
          if (err)
            *err = e;
          return -1;
        }
    }
  return 0;
}

static int
bundle_build (char *dir, char *config, size_t len, const struct ab_bundle_guard *guard, struct ab_bundle **out,
              ab_error_t *err)
{
  struct ab_bundle *b = xzalloc (sizeof *b);
  _cleanup_ (ab_bundle_freep) struct ab_bundle *owned = b;

  b->rootfs_fd = -1;
  b->dir = dir;
  b->config = config;
  b->config_len = len;
  b->spec = ab_spec_parse (config, len, err);
  if (b->spec == NULL)
    return -1;
  if (ab_spec_validate (b->spec, err) < 0 || resolve_rootfs (b, guard, err) < 0)
    return -1;
  *out = ab_steal_ptr (&owned);
  return 0;
}

int
ab_bundle_from_bytes (const char *dir, const struct ab_bundle_guard *guard, const char *config, size_t len,
                      struct ab_bundle **out, ab_error_t *err)
{
  _cleanup_free_ char *canon = NULL;
  char *copy;

  if (canonical_dir (dir, &canon, NULL, err) < 0)
    return -1;
  if (len > AB_CONFIG_MAX_BYTES)
    return ab_error_setc (err, AB_EC_CONFIG, EFBIG, "bundle `%s`: config.json: larger than %u bytes", canon,
                          AB_CONFIG_MAX_BYTES);
  copy = xmalloc (len + 1);
  memcpy (copy, config, len);
  copy[len] = '\0';
  return bundle_build (ab_steal_ptr (&canon), copy, len, guard, out, err);
}

int
ab_config_read_at (int dirfd, const char *path, const char *prefix, char **buf, size_t *len, ab_error_t *err)
{
  _cleanup_close_ int fd = -1;
  struct stat st;

  /* O_NONBLOCK: a FIFO planted as config.json must not block the open;
     O_NOCTTY: a terminal must not become our controlling tty.  Neither is
     read: fstat below accepts only a regular file. */
  fd = openat (dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    return ab_error_setc (err, AB_EC_CONFIG, errno, "%sopen %s", prefix, path);
  if (fstat (fd, &st) < 0)
    return ab_error_setc (err, AB_EC_CONFIG, errno, "%sstat %s", prefix, path);
  if (!S_ISREG (st.st_mode))
    return ab_error_setc (err, AB_EC_CONFIG, 0, "%s%s is not a regular file", prefix, path);
  if (st.st_size > (off_t)AB_CONFIG_MAX_BYTES)
    return ab_error_setc (err, AB_EC_CONFIG, EFBIG, "%s%s: larger than %u bytes", prefix, path, AB_CONFIG_MAX_BYTES);
  /* The file may still grow after fstat: the read itself is bounded. */
  if (ab_read_fd_sized (fd, AB_CONFIG_MAX_BYTES, (size_t)st.st_size, buf, len, err) < 0)
    return ab_error_prefix (err, "%s%s", prefix, path);
  return 0;
}

int
ab_bundle_load (const char *dir, const struct ab_bundle_guard *guard, struct ab_bundle **out, ab_error_t *err)
{
  _cleanup_free_ char *canon = NULL, *config = NULL, *prefix = NULL;
  _cleanup_close_ int dfd = -1;
  size_t len;

  if (canonical_dir (dir, &canon, &dfd, err) < 0)
    return -1;
  prefix = xasprintf ("bundle `%s`: ", canon);
  if (ab_config_read_at (dfd, "config.json", prefix, &config, &len, err) < 0)
    return -1;
  if (bundle_build (ab_steal_ptr (&canon), ab_steal_ptr (&config), len, guard, out, err) < 0)
    return -1;
  if (check_bind_sources (*out, err) < 0)
    {
      ab_bundle_free (*out);
      *out = NULL;
      return -1;
    }
  return 0;
}
