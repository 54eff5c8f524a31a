/* The built-in sandbox's host paths besides /usr and /etc (binds.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "runtime/sandbox/binds.h"

/* The host's /var/lib, read-only: only the state of package managers and
   toolchains, each directory present on the host bound by name.  Not the
   whole of it with secrets masked, as for /etc: /etc holds what a
   distribution puts there by design, and a short list names its secrets;
   /var/lib holds the state of every service installed -- databases, CI
   credentials (jenkins), TLS keys (letsencrypt), cluster secrets (etcd,
   kubelet, rancher), the DKMS signing key (dkms/mok.key), SSSD and Samba
   credential caches, other containers' storage -- which no list of names
   can enumerate.  What is not here is simply absent, as before. */
static const char *const var_lib_view[] = {
  "dpkg",     "apt",        "rpm",     "dnf",  "yum",       "pacman",   "ucf",
  "python",   "dictionaries-common",   "ca-certificates",   "locales",  "gems",
  "texmf",    "tex-common", "sgml-base", "xml-core", "alternatives", "man-db", "vim",
  "aspell",   "ispell",     "emacsen-common",
};

/* Destinations an extra bind may not take: the sandbox's own mounts and
   the kernel's filesystems (below them too for those marked). */
static const struct
{
  const char *path;
  bool below;
} reserved[] = {
  { "/", false },     { "/proc", true },  { "/sys", true },   { "/dev", true },      { "/.agentbox", true },
  { "/usr", false },  { "/etc", false },  { "/bin", false },  { "/sbin", false },    { "/lib", false },
  { "/lib32", false }, { "/lib64", false }, { "/libx32", false }, { "/tmp", false }, { "/root", false },
  { "/run", false },  { "/workspace", false }, { "/var/lib", false },
};

/* Mount points under these are made by the container in its own tmpfs, or
   are the host's (a bind of the host view): nothing to make in the
   skeleton. */
static const char *const not_in_skeleton[] = { "/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64",
                                               "/libx32", "/tmp", "/root", "/run", "/workspace" };

static bool
at_or_below (const char *top, const char *p)
{
  size_t n = strlen (top);

  if (strcmp (top, "/") == 0)
    return true;
  return strncmp (p, top, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

void
ab_sandbox_map_owner (const struct stat *st, bool rootless, struct ab_default_mount *m)
{
  if (!rootless && (st->st_uid != 0 || st->st_gid != 0))
    {
      m->map_owner = true;
      m->owner_uid = st->st_uid;
      m->owner_gid = st->st_gid;
    }
}

size_t
ab_sandbox_host_mounts_max (const struct ab_sandbox_opts *o)
{
  return AB_ARRAY_SIZE (var_lib_view) + o->binds.n;
}

/* m as mount point in the skeleton: directories, the last one a file for
   a file's bind; made when make, else looked for (1: not there).  The
   skeleton is ours (the cache's or the run's); each step is opened
   refusing symlinks. */
static int
skeleton_mountpoint (int skel_fd, const struct ab_sandbox_mountpoint *m, bool make, ab_error_t *err)
{
  _cleanup_free_ char *copy = xstrdup (m->path + 1);
  _cleanup_close_ int at = fcntl (skel_fd, F_DUPFD_CLOEXEC, 3);
  char *save = NULL, *c = strtok_r (copy, "/", &save);
  struct stat st;

  while (c != NULL)
    {
      char *next = strtok_r (NULL, "/", &save);
      int fd;
      if (next == NULL && !m->dir && !make)
        return fstatat (at, c, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISLNK (st.st_mode) ? 0 : 1;
      if (next == NULL && !m->dir)
        {
          fd = openat (at, c, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
          if (fd < 0 && errno != EEXIST && errno != EISDIR)
            return ab_error_set (err, errno, "the sandbox's skeleton: create the mount point `%s`", m->path);
          if (fd >= 0)
            close (fd);
          return 0;
        }
      if (make && mkdirat (at, c, 0755) < 0 && errno != EEXIST)
        return ab_error_set (err, errno, "the sandbox's skeleton: create the mount point `%s`", m->path);
      fd = openat (at, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0)
        return make ? ab_error_set (err, errno, "the sandbox's skeleton: open `%s`", m->path) : 1;
      close (at);
      at = fd;
      c = next;
    }
  return 0;
}

int
ab_sandbox_mountpoints_make (int skel_fd, bool shared, const struct ab_sandbox_mountpoints *mp, ab_error_t *err)
{
  for (size_t i = 0; i < mp->n; i++)
    {
      int r = skeleton_mountpoint (skel_fd, &mp->v[i], !(shared && mp->v[i].own), err);
      if (r != 0)
        return r;
    }
  return 0;
}

static int
var_lib (struct ab_sandbox_mountpoints *mp, struct ab_default_mount *mounts, size_t *n, struct ab_strv *keep,
         ab_error_t *err)
{
  static const char *const ro[] = { "rbind", "rro", "rnosuid", "rnodev" };
  struct stat st;

  for (size_t i = 0; i < AB_ARRAY_SIZE (var_lib_view); i++)
    {
      char *path = xasprintf ("/var/lib/%s", var_lib_view[i]);
      ab_strv_push_owned (keep, path);
      /* Not on this host: not in the view.  Any other failure is no
         reason to run with less than the view the sandbox promises. */
      if (lstat (path, &st) < 0)
        {
          if (errno == ENOENT || errno == ENOTDIR)
            continue;
          return ab_error_set (err, errno, "default sandbox: look at `%s`", path);
        }
      if (!S_ISDIR (st.st_mode))
        continue;
      mp->v[mp->n++] = (struct ab_sandbox_mountpoint){ path, true, false };
      mounts[(*n)++] = (struct ab_default_mount){ path, "bind", path, ro, AB_ARRAY_SIZE (ro) };
    }
  return 0;
}

/* "SRC[:DST]": DST after the last colon when it is absolute, else SRC. */
static int
split_bind (const char *arg, char **src, char **dst, ab_error_t *err)
{
  const char *colon = strrchr (arg, ':');

  if (colon && colon[1] == '/')
    {
      *src = xstrndup (arg, (size_t)(colon - arg));
      *dst = xstrdup (colon + 1);
    }
  else
    {
      *src = xstrdup (arg);
      *dst = NULL;
    }
  if (**src == '\0')
    return ab_error_setc (err, AB_EC_USAGE, 0, "bind `%s`: no source", arg);
  return 0;
}

static int
check_destination (const char *arg, const char *dst, ab_error_t *err)
{
  if (!ab_path_is_clean_absolute (dst))
    return ab_error_setc (err, AB_EC_USAGE, 0, "bind `%s`: the destination `%s` must be absolute, without . or ..",
                          arg, dst);
  for (size_t k = 0; k < AB_ARRAY_SIZE (reserved); k++)
    if (reserved[k].below ? at_or_below (reserved[k].path, dst) : strcmp (reserved[k].path, dst) == 0)
      return ab_error_setc (err, AB_EC_USAGE, 0,
                            "bind `%s`: `%s` is the sandbox's own (use --workspace for /workspace; a path below "
                            "/tmp, /root or /run is fine)",
                            arg, dst);
  return 0;
}

/* One extra bind.  The source is resolved here, once (symlinks, ".."), and
   its canonical path is what create opens, refusing every symlink on it,
   as the workspace's: a link planted later cannot point it elsewhere.  The
   destination is resolved beneath the container's root when mounted. */
static int
extra_bind (const struct ab_sandbox_bind *b, struct ab_sandbox_mountpoints *mp, bool rootless,
            struct ab_default_mount *m, struct ab_strv *nofollow, struct ab_strv *keep, ab_error_t *err)
{
  static const char *const ro[] = { "rbind", "rro", "rnosuid", "rnodev", "idmap" };
  static const char *const rw[] = { "rbind", "rw", "nosuid", "nodev", "idmap" };
  _cleanup_free_ char *src = NULL, *dst = NULL;
  char *real;
  struct stat st;
  bool skel = true;

  if (split_bind (b->arg, &src, &dst, err) < 0)
    return -1;
  real = realpath (src, NULL);
  if (real == NULL)
    return ab_error_setc (err, AB_EC_USAGE, errno, "bind `%s`: source `%s`", b->arg, src);
  ab_strv_push_owned (keep, real);
  if (stat (real, &st) < 0 || !(S_ISDIR (st.st_mode) || S_ISREG (st.st_mode)))
    return ab_error_setc (err, AB_EC_USAGE, 0, "bind `%s`: `%s` is neither a directory nor a regular file", b->arg,
                          real);
  if (dst == NULL)
    dst = xstrdup (real);
  if (check_destination (b->arg, dst, err) < 0)
    return -1;
  for (size_t k = 0; k < AB_ARRAY_SIZE (not_in_skeleton); k++)
    skel = skel && !at_or_below (not_in_skeleton[k], dst);
  ab_strv_push (keep, dst);
  if (skel)
    mp->v[mp->n++] = (struct ab_sandbox_mountpoint){ keep->v[keep->n - 1], S_ISDIR (st.st_mode), true };
  *m = (struct ab_default_mount){ keep->v[keep->n - 1], "bind", real, b->rw ? rw : ro,
                                  b->rw ? AB_ARRAY_SIZE (rw) : AB_ARRAY_SIZE (ro) };
  if (rootless)
    m->n_options--; /* no idmap without privilege */
  ab_sandbox_map_owner (&st, rootless, m);
  ab_strv_push (nofollow, real);
  return 0;
}

int
ab_sandbox_host_mounts (const struct ab_sandbox_opts *o, struct ab_sandbox_mountpoints *mp, bool rootless,
                        struct ab_default_mount *mounts, size_t *n, struct ab_strv *nofollow,
                        struct ab_strv *keep, ab_error_t *err)
{
  if (var_lib (mp, mounts, n, keep, err) < 0)
    return -1;
  for (size_t i = 0; i < o->binds.n; i++)
    if (extra_bind (&o->binds.v[i], mp, rootless, &mounts[(*n)++], nofollow, keep, err) < 0)
      return -1;
  return 0;
}
