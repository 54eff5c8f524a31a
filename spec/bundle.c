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

static void fence_free (struct ab_fence *f);

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
  fence_free (b->fence);
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

/* The guard's directories as chains of identities: [0] the directory (or,
   while it does not exist yet, or is no directory, its nearest existing
   ancestor, where create would make it), then each parent up to the
   runtime's root.  Identity is device and inode, never a path string: a
   bind mount of a directory (of / above all) is the same inode on the
   same device under another name, and so are "..", symlinks and
   /proc/self/root; ".." is resolved by the kernel across mount points to
   the real parent. */
#define FENCE_DEPTH 128

struct fence_dir
{
  char *path;       /* as given, for messages; NULL: no such guard */
  const char *what; /* "agentbox's state root" */
  const char *option;
  bool exists;      /* ids[0] is the directory itself */
  size_t n;
  struct
  {
    dev_t dev;
    ino_t ino;
  } ids[FENCE_DEPTH];
};

struct ab_fence
{
  struct fence_dir d[2]; /* the state root, the cache */
};

/* The index of st in d's chain, or -1. */
static int
fence_index (const struct fence_dir *d, const struct stat *st)
{
  for (size_t i = 0; i < d->n; i++)
    if (d->ids[i].dev == st->st_dev && d->ids[i].ino == st->st_ino)
      return (int) i;
  return -1;
}

/* 0, or -1 with errno (an ancestor that cannot be stat'ed). */
static int
fence_dir_fill (struct fence_dir *d, const char *dir)
{
  _cleanup_free_ char *p = xstrdup (*dir ? dir : ".");
  struct stat st, prev;

  d->path = xstrdup (dir);
  d->exists = true;
  for (;;)
    {
      int r = stat (p, &st);
      char *slash = strrchr (p, '/');

      if (r == 0 && S_ISDIR (st.st_mode))
        break;
      if (r < 0 && errno != ENOENT && errno != ENOTDIR)
        return -1;
      d->exists = false;
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

      if (d->n == FENCE_DEPTH || strlen (p) > PATH_MAX - 4)
        {
          errno = ENAMETOOLONG;
          return -1;
        }
      d->ids[d->n].dev = st.st_dev;
      d->ids[d->n].ino = st.st_ino;
      d->n++;
      prev = st;
      up = xasprintf ("%s/..", p);
      free (p);
      p = up;
      if (stat (p, &st) < 0)
        return -1;
      if (same_file (&st, &prev))
        return 0; /* the root: its ".." is itself */
    }
}

static void
fence_free (struct ab_fence *f)
{
  if (f == NULL)
    return;
  for (int i = 0; i < 2; i++)
    free (f->d[i].path);
  free (f);
}

static int
fence_new (const struct ab_bundle_guard *g, struct ab_fence **out, ab_error_t *err)
{
  struct ab_fence *f = xzalloc (sizeof *f);
  const char *dirs[2] = { g->state_root, g->cache };
  const char *what[2] = { "agentbox's state root", "agentbox's cache" };
  const char *option[2] = { "--root", "AGENTBOX_CACHE_DIR" };

  for (int i = 0; i < 2; i++)
    {
      f->d[i].what = what[i];
      f->d[i].option = option[i];
      if (dirs[i] == NULL || *dirs[i] == '\0')
        continue;
      if (fence_dir_fill (&f->d[i], dirs[i]) < 0)
        {
          ab_error_setc (err, AB_EC_CONFIG, errno, "%s `%s`: stat it and its parents", what[i], dirs[i]);
          fence_free (f);
          return -1;
        }
    }
  *out = f;
  return 0;
}

static int
root_check (const struct stat *root, const char *path, const struct ab_fence *f, ab_error_t *err)
{
  struct stat top;

  if (stat ("/", &top) < 0)
    return ab_error_set (err, errno, "config.json: root.path: stat /");
  if (same_file (root, &top))
    return ab_error_setc (err, AB_EC_CONFIG, 0,
                          "config.json: root.path: `%s` is the host's root directory; a container needs a root "
                          "filesystem of its own",
                          path);
  for (int i = 0; f && i < 2; i++)
    if (f->d[i].path && fence_index (&f->d[i], root) >= 0)
      return ab_error_setc (err, AB_EC_CONFIG, 0,
                            "config.json: root.path: `%s` is or contains %s `%s` (%s); the container could "
                            "rewrite it",
                            path, f->d[i].what, f->d[i].path, f->d[i].option);
  return 0;
}

/* root.path must be a root of its own.  The host's root as the container's
   would hand it every file of the host (and the readonly/masked paths would
   not change that: they are made in the container's private copy of the
   mount).  A root that is or holds the state root (--root) or the cache
   would let the container rewrite the state of other containers (their
   pids, which kill and delete signal) or the compiled seccomp programs
   other containers load: the load checks that against its guard
   (resolve_rootfs).  create checks the fd it clones the root from, so what
   is checked is what runs. */
int
ab_root_dir_check (const struct stat *root, const char *path, ab_error_t *err)
{
  return root_check (root, path, NULL, err);
}

/* The directory the walk up from a bind source starts at: the source
   itself, or a file's directory (by the path the kernel gives its fd). */
static int
source_dir (int fd, const struct stat *st, const char *what, ab_error_t *err)
{
  char real[PATH_MAX];
  ssize_t n;
  char *slash;
  int d;

  if (S_ISDIR (st->st_mode))
    return fcntl (fd, F_DUPFD_CLOEXEC, 0);
  n = ab_fd_path (fd, real, sizeof real);
  if (n <= 0 || real[0] != '/')
    return ab_error_setc (err, AB_EC_CONFIG, n < 0 ? errno : ENOENT, "%s: where is it", what);
  slash = strrchr (real, '/');
  if (slash == real)
    slash[1] = '\0';
  else
    *slash = '\0';
  d = open (real, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (d < 0)
    return ab_error_setc (err, AB_EC_CONFIG, errno, "%s: open its directory `%s`", what, real);
  return d;
}

static int
fence_refuse (const struct fence_dir *d, const char *what, const char *how, ab_error_t *err)
{
  return ab_error_setc (err, AB_EC_CONFIG, 0, "%s %s %s `%s` (%s); the container could rewrite it", what, how,
                        d->what, d->path, d->option);
}

int
ab_bind_source_check (const struct ab_bundle *b, int fd, const char *what, ab_error_t *err)
{
  const struct ab_fence *f = b->fence;
  _cleanup_close_ int dir = -1;
  char rel[PATH_MAX] = "";
  bool decided[2];
  struct stat st, prev;
  size_t len = 0;

  if (f == NULL)
    return 0;
  if (fstat (fd, &st) < 0)
    return ab_error_setc (err, AB_EC_CONFIG, errno, "%s: stat", what);
  for (int i = 0; i < 2; i++)
    {
      decided[i] = f->d[i].path == NULL || !f->d[i].exists;
      if (f->d[i].path && S_ISDIR (st.st_mode) && fence_index (&f->d[i], &st) >= 0)
        return fence_refuse (&f->d[i], what, "is or contains", err);
    }
  if ((dir = source_dir (fd, &st, what, err)) < 0)
    return -1;
  /* Up from the source (a file: from its directory) until each guard
     directory is met (the source lies inside it) or one of its parents is
     (it does not), or the root.  Paths are short: a few steps each. */
  if (!S_ISDIR (st.st_mode) && fstat (dir, &st) < 0)
    return ab_error_setc (err, AB_EC_CONFIG, errno, "%s: stat its directory", what);
  for (;;)
    {
      for (int i = 0; i < 2; i++)
        {
          int k = decided[i] ? -1 : fence_index (&f->d[i], &st);
          if (k == 0)
            return fence_refuse (&f->d[i], what, "lies inside", err);
          decided[i] = decided[i] || k > 0;
        }
      if (decided[0] && decided[1])
        return 0;
      if (len + 4 > sizeof rel)
        return ab_error_setc (err, AB_EC_CONFIG, ENAMETOOLONG, "%s: too deep to check", what);
      memcpy (rel + len, len ? "/.." : "..", len ? 4 : 3);
      len += len ? 3 : 2;
      prev = st;
      if (fstatat (dir, rel, &st, 0) < 0)
        return ab_error_setc (err, AB_EC_CONFIG, errno, "%s: stat `%s` above it", what, rel);
      if (same_file (&st, &prev))
        return 0; /* the root */
    }
}

/* root.path, relative to the bundle unless absolute (config.md), must be a
   directory.  Resolved like a bind source (spec/bundle-links.h): beneath the
   bundle once the path is in it, so that a symlink of the bundle cannot
   make the host's / the container's root; the state records the real
   directory, and create clones the root from the fd kept here (never by
   this path string). */
static int
resolve_rootfs (struct ab_bundle *b, ab_error_t *err)
{
  const char *path = b->spec->root.path;
  _cleanup_free_ char *joined = NULL;
  _cleanup_close_ int fd = -1;
  char real[PATH_MAX];
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
      if (root_check (&st, b->spec->root.path, b->fence, err) < 0)
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
  if (root_check (&st, b->spec->root.path, b->fence, err) < 0)
    return -1;
  n = ab_fd_path (fd, real, sizeof real);
  if (n <= 0 || real[0] != '/')
    return ab_error_set (err, n < 0 ? errno : ENOENT, "config.json: root.path: where is `%s`", joined);
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
        {
          int r;
          snprintf (what, sizeof what, "config.json: mounts[%zu] (%s): source `%s`", i, m->destination, m->source);
          r = ab_bind_source_check (b, fd, what, err);
          close (fd);
          if (r < 0)
            return -1;
        }
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
  if (ab_spec_validate (b->spec, err) < 0 || (guard && fence_new (guard, &b->fence, err) < 0)
      || resolve_rootfs (b, err) < 0)
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
