/* The front door of the cgroupfs driver: plan, create / update / destroy
 * of the container's cgroup and its directories.  The interface files are
 * read and written by the write layer (cgroup-fs.c), which calls nothing
 * back; host discovery is in cgroup-host.c, enter and state in
 * cgroup-state.c, resources in cgroup-res.c, devices in cgroup-devices.c,
 * processes in cgroup-proc.c.
 *
 * What agentbox may touch: directories it created itself (remembered as the
 * number of trailing path components it made, per hierarchy) and the
 * interface files inside them; cgroup.subtree_control of the parent and of
 * created ancestors (v2, to delegate controllers); nothing else.  The only
 * process it ever moves is the container's own.
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include "runtime/cgroup/cgroup-internal.h"
#include "base/util.h"

/* ---- directories ------------------------------------------------------------ */

/* Open the directory `n` components below the mount root along h->path:
   n = 0 is the mount point itself.  -1 with errno on failure. */
static int
open_level (struct ab_cg_hier *h, size_t n)
{
  _cleanup_close_ int fd = open (h->mountpoint, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  const char *p = h->path + (strcmp (h->root, "/") == 0 ? 0 : strlen (h->root));
  size_t depth = 0;

  while (fd >= 0 && depth < n && *p)
    {
      const char *end;
      _cleanup_free_ char *name = NULL;
      int next;

      while (*p == '/')
        p++;
      end = strchrnul (p, '/');
      name = xstrndup (p, (size_t)(end - p));
      /* No symlinks in cgroupfs; O_NOFOLLOW keeps it that way should some
         other filesystem be mounted in the path. */
      next = openat (fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
      if (next < 0)
        return -1;
      close (fd);
      fd = next;
      depth++;
      p = end;
    }
  if (fd >= 0 && depth < n)
    {
      errno = EINVAL;
      return -1;
    }
  return ab_steal_fd (&fd);
}

/* The name of component `i` (0-based) below the mount root. */
static char *
component (const struct ab_cg_hier *h, size_t i)
{
  const char *p = h->path + (strcmp (h->root, "/") == 0 ? 0 : strlen (h->root));
  size_t k = 0;

  for (;;)
    {
      const char *end;
      while (*p == '/')
        p++;
      end = strchrnul (p, '/');
      if (k++ == i)
        return xstrndup (p, (size_t)(end - p));
      p = end;
    }
}

/* A fresh v1 cpuset is empty (no cpus, no mems) and refuses tasks until
   both are set: inherit the parent's.  `dir` was just made, so it holds
   nothing of its own: empty, or (the parent's cgroup.clone_children) a
   copy of the parent's values, which the write below repeats. */
/* parent and dir: directory fds, or AT_FDCWD with the directories' paths
   in pprefix and dprefix (else NULL). */
static int
cpuset_inherit (int parent, const char *pprefix, int dir, const char *dprefix, const char *path,
                ab_error_t *err)
{
  static const char *const files[] = { "cpuset.cpus", "cpuset.mems" };
  size_t i;

  for (i = 0; i < AB_ARRAY_SIZE (files); i++)
    {
      _cleanup_free_ char *val = NULL, *pf = pprefix ? xasprintf ("%s/%s", pprefix, files[i]) : NULL,
                          *df = dprefix ? xasprintf ("%s/%s", dprefix, files[i]) : NULL;
      if (ab_cg_read_at (parent, pf ? pf : files[i], &val) < 0)
        return ab_error_set (err, errno, "read `%s` of the parent of `%s`", files[i], path);
      if (ab_write_file_at (dir, df ? df : files[i], val, strlen (val), err) < 0)
        return ab_error_prefix (err, "`%s`", path);
    }
  return 0;
}

/* The common case of hier_mkdir in two syscalls instead of two per level
   and four: only the leaf is missing (a relative cgroupsPath below the
   runtime's own cgroup, or a new container's directory), made and opened
   by its full path.  The same resolution as the walk: the mount point's
   path is resolved as open (h->mountpoint) resolves it; the components
   below it are cgroupfs directories, and cgroupfs has no symlinks (the
   walk's O_NOFOLLOW cannot matter there; h->path is clean, without `.` or
   `..`); the leaf is the last component (mkdir never follows it,
   O_NOFOLLOW refuses a symlink there).  A mkdir that succeeds made exactly
   one level.  A v1 cpuset leaf inherits the parent's cpus and mems, read
   by the parent's path (h->dir but its last component).  1: done; 0: take
   the walk (the leaf exists, a parent is missing, or something else); -1:
   the cpuset could not inherit (*err). */
static int
hier_mkdir_leaf (struct ab_cg_hier *h, bool cpuset, ab_error_t *err)
{
  int fd;

  if (mkdirat (AT_FDCWD, h->dir, 0755) < 0)
    return 0;
  /* v1: no fd at all; its few files are opened by path (cg_openat).  v2
     keeps one: CLONE_INTO_CGROUP needs it. */
  if (!h->v2)
    {
      h->created = 1;
      h->by_path = true;
      if (cpuset)
        {
          _cleanup_free_ char *parent = xstrdup (h->dir);

          *strrchr (parent, '/') = '\0'; /* h->dir is below the mount point */
          if (cpuset_inherit (AT_FDCWD, parent, AT_FDCWD, h->dir, h->dir, err) < 0)
            return -1;
        }
      return 1;
    }
  fd = openat (AT_FDCWD, h->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    {
      unlinkat (AT_FDCWD, h->dir, AT_REMOVEDIR); /* ours, empty: the walk starts afresh */
      return 0;
    }
  h->created = 1;
  h->dfd = fd;
  return 1;
}

/* Make the missing directories of h->path and open the leaf. */
static int
hier_mkdir (struct ab_cg_hier *h, ab_error_t *err)
{
  size_t depth = ab_cg_path_depth (h), i;
  bool cpuset = !h->v2 && ab_cg_list_has (h->controllers, "cpuset");
  _cleanup_close_ int fd = -1;

  switch (hier_mkdir_leaf (h, cpuset, err))
    {
    case 1:
      return 0;
    case -1:
      return -1; /* the leaf is made: the caller's rollback removes it */
    }
  fd = open (h->mountpoint, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return ab_error_set (err, errno, "open cgroup mount `%s`", h->mountpoint);
  for (i = 0; i < depth; i++)
    {
      _cleanup_free_ char *name = component (h, i);
      bool leaf = i + 1 == depth;
      int next = -1;
      bool make;

      /* The leaf is normally new (named after the container): mkdir it
         first and open it once, rather than an open that fails, the mkdir
         and the open.  EEXIST takes the path of an existing directory, as
         the failed-open order would; the O_NOFOLLOW open below is the same
         either way. */
      if (leaf)
        {
          make = mkdirat (fd, name, 0755) == 0;
          if (!make && errno != EEXIST)
            return ab_error_set (err, errno, "mkdir `%s/%s`", h->mountpoint, name);
          if (!make)
            next = openat (fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        }
      else
        {
          next = openat (fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
          make = next < 0 && errno == ENOENT;
          if (make && mkdirat (fd, name, 0755) < 0)
            return ab_error_set (err, errno, "mkdir `%s/%s`", h->mountpoint, name);
        }
      if (make)
        {
          h->created++;
          next = openat (fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
          if (next >= 0 && cpuset && cpuset_inherit (fd, NULL, next, NULL, h->dir, err) < 0)
            {
              close (next);
              return -1;
            }
        }
      else if (next >= 0 && h->created > 0)
        {
          /* Someone made a directory inside one we just created: it is not
             ours to remove, and the layout is not what we planned. */
          close (next);
          return ab_error_set (err, EEXIST, "cgroup `%s` changed while being created", h->dir);
        }
      if (next < 0)
        return ab_error_set (err, errno, "open `%s` component `%s`", h->dir, name);
      close (fd);
      fd = next;
    }
  h->dfd = ab_steal_fd (&fd);
  return 0;
}

/* rmdir every cgroup below dfd (made by the container itself), deepest
   first.  Only called inside a leaf we created. */
static void
rmdir_children (int dfd, int depth)
{
  _cleanup_close_ int fd = -1;
  DIR *d;
  struct dirent *e;

  if (depth > 32 || (fd = openat (dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
    return;
  d = fdopendir (fd);
  if (d == NULL)
    return;
  fd = -1;
  while ((e = readdir (d)) != NULL)
    {
      int sub;
      if (e->d_type != DT_DIR || strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
        continue;
      sub = openat (dirfd (d), e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
      if (sub < 0)
        continue;
      rmdir_children (sub, depth + 1);
      close (sub);
      unlinkat (dirfd (d), e->d_name, AT_REMOVEDIR);
    }
  closedir (d);
}

/* rmdir with a short retry: a v1 cgroup whose last task just exited can
   be busy for a moment. */
static int
rmdir_retry (int parent, const char *name)
{
  int i;

  for (i = 0; i < 200; i++)
    {
      if (unlinkat (parent, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
        return 0;
      if (errno != EBUSY)
        return -1;
      nanosleep (&(struct timespec){ 0, 5 * 1000 * 1000 }, NULL);
    }
  return -1;
}

/* When only the leaf is ours: rmdir it by its full path (one syscall
   instead of an open, rmdir and close, and two more per level above it).
   rmdir never follows the last component, the levels above are cgroupfs
   directories (no symlinks: hier_mkdir_leaf), and h->dir is the path
   hier_mkdir made.  1: removed (or gone already); 0: not tried (more than
   the leaf is ours), or EBUSY (processes, or cgroups below it); -1: error
   (*err). */
static int
leaf_rmdir (struct ab_cg_hier *h, ab_error_t *err)
{
  if (h->created != 1 || !ab_cg_live (h))
    return 0;
  if (unlinkat (AT_FDCWD, h->dir, AT_REMOVEDIR) == 0 || errno == ENOENT)
    {
      h->created = 0;
      return 1;
    }
  return errno == EBUSY ? 0 : ab_error_set (err, errno, "rmdir cgroup `%s`", h->dir);
}

/* Remove the directories of h we created, deepest first. */
static int
hier_rmdir_dirs (struct ab_cg_hier *h, ab_error_t *err)
{
  size_t depth = ab_cg_path_depth (h);
  bool leaf = true;
  int r = leaf_rmdir (h, err);

  /* 0, EBUSY: cgroups of the container's own below it; the walk lists them */
  if (r != 0)
    return r < 0 ? -1 : 0;
  while (h->created > 0)
    {
      size_t level = depth - 1; /* the component to remove */
      _cleanup_close_ int parent = open_level (h, level);
      _cleanup_free_ char *name = component (h, level);

      if (parent < 0)
        {
          if (errno == ENOENT) /* an ancestor is gone, and with it the rest */
            {
              h->created = 0;
              break;
            }
          return ab_error_set (err, errno, "open parent of `%s`", h->dir);
        }
      /* The leaf is tried once before its directory is read: the kernel
         refuses to rmdir a cgroup with child cgroups (EBUSY), so the
         attempt can remove nothing but an empty leaf, and the listing (7
         syscalls a hierarchy) is only paid when the container made
         cgroups of its own. */
      bool gone = false;
      if (leaf && ab_cg_live (h))
        {
          gone = unlinkat (parent, name, AT_REMOVEDIR) == 0 || errno == ENOENT;
          if (!gone && ab_cg_dirfd (h) >= 0)
            rmdir_children (h->dfd, 0);
        }
      leaf = false;
      if (!gone && rmdir_retry (parent, name) < 0)
        return ab_error_set (err, errno, "rmdir cgroup `%s` (level %zu)", h->dir, level);
      h->created--;
      depth--;
    }
  return 0;
}

static int
hier_rmdir (struct ab_cg_hier *h, ab_error_t *err)
{
  int r = hier_rmdir_dirs (h, err);

  ab_cg_drop_dir (h);
  return r;
}

/* ---- v2 controller delegation -------------------------------------------------- */

/* Enable each controller in cgroup.subtree_control from the first existing
   ancestor down to the leaf's parent. */
static int
v2_enable (struct ab_cg_hier *h, const struct ab_strv *ctrls, const struct ab_strv *why, ab_error_t *err)
{
  size_t depth = ab_cg_path_depth (h), first, level, i;

  if (ctrls->n == 0 || depth == 0)
    return 0;
  first = depth - (h->created > 1 ? h->created : 1);
  for (level = first; level < depth; level++)
    {
      _cleanup_close_ int fd = open_level (h, level);
      _cleanup_free_ char *avail = NULL, *enabled = NULL;
      _cleanup_free_ char *dir = NULL;

      if (fd < 0)
        return ab_error_set (err, errno, "open an ancestor of `%s`", h->dir);
      dir = level == 0 ? xstrdup (h->mountpoint) : NULL;
      if (dir == NULL)
        {
          _cleanup_free_ char *tmp = xstrdup (h->dir);
          size_t up = depth - level;
          while (up-- > 0)
            *strrchr (tmp, '/') = '\0';
          dir = ab_steal_ptr (&tmp);
        }
      if (ab_read_file_at (fd, "cgroup.controllers", 4096, &avail, NULL, err) < 0
          || ab_read_file_at (fd, "cgroup.subtree_control", 4096, &enabled, NULL, err) < 0)
        return ab_error_prefix (err, "`%s`", dir);
      for (i = 0; i < ctrls->n; i++)
        {
          _cleanup_free_ char *plus = NULL;
          if (ab_word_in (enabled, ctrls->v[i]))
            continue;
          if (!ab_word_in (avail, ctrls->v[i]))
            return ab_error_setc (err, AB_EC_RESOURCE, 0,
                                  "%s: the `%s` controller is not available in `%s/cgroup.controllers`",
                                  why->v[i], ctrls->v[i], dir);
          plus = xasprintf ("+%s", ctrls->v[i]);
          if (ab_write_file_at (fd, "cgroup.subtree_control", plus, strlen (plus), err) < 0)
            {
              int e = err->errnum;
              return ab_error_setc (err, AB_EC_RESOURCE, e,
                                    "%s: cannot enable the `%s` controller in `%s/%s`%s", why->v[i],
                                    ctrls->v[i], dir, "cgroup.subtree_control",
                                    e == EBUSY ? " (that cgroup has processes of its own, and cgroup v2 lets "
                                                 "only a cgroup without processes delegate controllers)"
                                               : "");
            }
        }
    }
  return 0;
}

/* ---- create / free ------------------------------------------------------------ */

void
ab_cgroup_free (struct ab_cgroup *cg)
{
  size_t i;

  if (cg == NULL)
    return;
  for (i = 0; i < cg->n; i++)
    {
      if (cg->h[i].dfd >= 0)
        close (cg->h[i].dfd);
      free (cg->h[i].controllers);
      free (cg->h[i].mountpoint);
      free (cg->h[i].root);
      free (cg->h[i].path);
      free (cg->h[i].dir);
      free (cg->h[i].sub);
    }
  free (cg->h);
  free (cg);
}

/* Our own cgroup in the hierarchy of mount m, or NULL. */
static const char *
own_path (const struct ab_cg_host *host, const struct ab_cg_mount *m)
{
  size_t i;

  for (i = 0; i < host->n_own; i++)
    if (m->v2 ? host->own[i].v2
              : (!host->own[i].v2 && ab_cg_list_same_set (host->own[i].controllers, m->controllers)))
      return host->own[i].path;
  return NULL;
}

/* Prefer the conventional mount point when a hierarchy is mounted twice. */
static int
mount_rank (const char *mountpoint)
{
  if (strcmp (mountpoint, "/sys/fs/cgroup") == 0 || strcmp (mountpoint, "/sys/fs/cgroup/unified") == 0)
    return 0;
  return ab_str_has_prefix (mountpoint, "/sys/fs/cgroup/") ? 1 : 2;
}

/* Whether mount m is one the container joins, and shows our own cgroup. */
static bool
mount_usable (const struct ab_cgroup *cg, const struct ab_cg_host *host, const struct ab_cg_mount *m)
{
  const char *own = own_path (host, m);
  _cleanup_free_ char *dir = NULL;

  if (m->v2 ? cg->mode == AB_CGROUP_V1
            : (cg->mode == AB_CGROUP_V2 || !ab_cg_has_real_v1_controller (m->controllers)))
    return false;
  /* A mount that shows another part of the tree cannot reach our cgroup. */
  return own != NULL && (dir = ab_cg_path_to_dir (m->mountpoint, m->root, own)) != NULL;
}

/* The hierarchies the container joins, with their paths: one mount per
   hierarchy, the best ranked one. */
static int
plan (struct ab_cgroup *cg, const struct ab_cg_host *host, const char *cgroups_path, const char *id,
      ab_error_t *err)
{
  size_t i, j;

  for (i = 0; i < host->n_mounts; i++)
    {
      const struct ab_cg_mount *m = &host->mounts[i];
      struct ab_cg_hier *h;
      bool better = true;

      if (!mount_usable (cg, host, m))
        continue;
      for (j = 0; j < host->n_mounts && better; j++)
        if (j != i && host->mounts[j].v2 == m->v2 && strcmp (host->mounts[j].controllers, m->controllers) == 0
            && mount_usable (cg, host, &host->mounts[j]))
          {
            int rj = mount_rank (host->mounts[j].mountpoint), ri = mount_rank (m->mountpoint);
            better = ri < rj || (ri == rj && i < j);
          }
      if (!better)
        continue;
      h = ab_cg_hier_add (cg);
      h->v2 = m->v2;
      h->controllers = xstrdup (m->controllers);
      h->mountpoint = xstrdup (m->mountpoint);
      h->root = xstrdup (m->root);
      if (ab_cg_container_path (cgroups_path, id, m->root, own_path (host, m), &h->path, err) < 0)
        return -1;
      h->dir = ab_cg_path_to_dir (m->mountpoint, m->root, h->path);
    }
  ab_cg_fix_v2 (cg);
  if (cg->n == 0)
    return ab_error_set (err, 0, "no usable cgroup hierarchy: no cgroup mount shows agentbox's own cgroup");
  return 0;
}

/* Refuse a cgroup that already runs something, or is frozen: the container
   would share it with processes that are not its own. */
static int
check_reusable (struct ab_cgroup *cg, ab_error_t *err)
{
  size_t i;

  for (i = 0; i < cg->n; i++)
    {
      struct ab_cg_hier *h = &cg->h[i];
      _cleanup_free_ char *procs = NULL, *st = NULL;
      uint64_t populated = 0;

      if (h->created > 0)
        continue;
      /* v2 counts the subtree; v1 has only the cgroup's own list. */
      if (h->v2 && ab_cg_read_key (h, "cgroup.events", "populated", &populated) == 0 && populated)
        return ab_error_setc (err, AB_EC_STATE, 0, "cgroup `%s` already has processes", h->dir);
      if (ab_cg_read (h, "cgroup.procs", &procs, err) < 0)
        return -1;
      if (procs[0] != '\0')
        return ab_error_setc (err, AB_EC_STATE, 0, "cgroup `%s` already has processes", h->dir);
      if (!h->v2 && ab_cg_list_has (h->controllers, "freezer")
          && ab_cg_read (h, "freezer.state", &st, err) == 0 && !ab_str_has_prefix (st, "THAWED"))
        return ab_error_setc (err, AB_EC_STATE, 0, "cgroup `%s` is frozen", h->dir);
      if (h->v2 && ab_cg_read (h, "cgroup.freeze", &st, err) == 0 && st[0] == '1')
        return ab_error_setc (err, AB_EC_STATE, 0, "cgroup `%s` is frozen", h->dir);
    }
  return 0;
}

static void
rollback (struct ab_cgroup *cg)
{
  ab_error_t ignored;
  size_t i;

  for (i = cg->n; i-- > 0;)
    hier_rmdir (&cg->h[i], &ignored);
}

/* How many trailing components of h's path do not exist yet (a count for
   the record only: the directories are made by hier_mkdir's O_NOFOLLOW
   walk, and cgroupfs holds no symlinks). */
static size_t
missing_levels (const struct ab_cg_hier *h)
{
  size_t depth = ab_cg_path_depth (h), n;
  _cleanup_free_ char *dir = xstrdup (h->dir);
  struct stat st;

  for (n = 0; n < depth; n++)
    {
      char *slash;
      if (fstatat (AT_FDCWD, dir, &st, AT_SYMLINK_NOFOLLOW) == 0)
        break;
      slash = strrchr (dir, '/');
      if (slash == NULL || slash == dir)
        break;
      *slash = '\0';
    }
  return n;
}

void
ab_cgroup_host_view (void)
{
  ab_cg_private_view ();
}

int
ab_cgroup_plan (const char *cgroups_path, const char *id, const struct ab_resources *resources,
                struct ab_cgroup **out, ab_error_t *err)
{
  _cleanup_ (ab_cgroup_freep) struct ab_cgroup *cg = xzalloc (sizeof *cg);
  struct ab_cg_host host = { 0 };
  size_t i;
  int r;

  if (resources && ab_cg_devices_check (resources->devices, resources->n_devices, err) < 0)
    return -1;
  if (ab_cg_host_read (&host, err) < 0)
    return -1;
  cg->mode = ab_cg_host_mode_of (&host);
  if (cg->mode == AB_CGROUP_NONE)
    {
      ab_cg_host_free (&host);
      return ab_error_set (err, 0, "no cgroup filesystem is mounted (see /proc/self/mountinfo) and agentbox "
                           "could not mount its own view (it needs CAP_SYS_ADMIN); under `ip netns exec`, which "
                           "mounts a fresh /sys without them, mount cgroup2 on /sys/fs/cgroup first, or enter "
                           "the network namespace with `nsenter --net=/run/netns/NAME` instead");
    }
  r = plan (cg, &host, cgroups_path, id, err);
  ab_cg_host_free (&host);
  if (r < 0)
    return -1;
  /* Without a cgroupsPath the leaf is agentbox-<id>, made right below our
     own cgroup, which exists (we are in it): one level to make, and no
     stat to tell.  A directory of that name there already is a leftover
     of one of ours with the same id (ids are unique in the state root, as
     creating the state directory just proved), which a delete after a
     crash may well remove; a busy one it cannot (EBUSY). */
  for (i = 0; i < cg->n; i++)
    cg->h[i].created = cgroups_path == NULL || *cgroups_path == '\0' ? 1 : missing_levels (&cg->h[i]);
  cg->planned = true;
  *out = ab_steal_ptr (&cg);
  return 0;
}

int
ab_cgroup_plan_delegated (const char *parent, const char *cgroups_path, const char *id, struct ab_cgroup **out,
                          ab_error_t *err)
{
  _cleanup_ (ab_cgroup_freep) struct ab_cgroup *cg = xzalloc (sizeof *cg);
  struct ab_cg_host host = { 0 };
  struct ab_cg_hier *h = NULL;
  int r = 0;

  if (parent == NULL)
    return ab_error_setc (err, AB_EC_INTERNAL, 0, "a rootless cgroup planned without a delegated parent");
  if (ab_cg_host_read (&host, err) < 0)
    return -1;
  cg->mode = AB_CGROUP_V2;
  cg->delegated = true;
  for (size_t i = 0; i < host.n_mounts && h == NULL; i++)
    {
      const struct ab_cg_mount *m = &host.mounts[i];
      if (!m->v2 || !ab_cg_path_covers (m->root, parent))
        continue;
      h = ab_cg_hier_add (cg);
      h->v2 = true;
      h->controllers = xstrdup ("");
      h->mountpoint = xstrdup (m->mountpoint);
      h->root = xstrdup (m->root);
      /* An absolute cgroupsPath is the config's; it must lie below the
         delegated cgroup, where alone we may make anything. */
      r = ab_cg_container_path (cgroups_path, id, m->root, parent, &h->path, err);
      if (r == 0 && (!ab_cg_path_covers (parent, h->path) || strcmp (parent, h->path) == 0))
        r = ab_error_setc (err, AB_EC_CONFIG, 0,
                           "linux.cgroupsPath: `%s` is not below `%s`, the cgroup delegated to uid %u", h->path,
                           parent, (unsigned) geteuid ());
      if (r == 0)
        h->dir = ab_cg_path_to_dir (m->mountpoint, m->root, h->path);
    }
  ab_cg_host_free (&host);
  if (r < 0)
    return -1;
  if (h == NULL)
    return ab_error_setc (err, AB_EC_RESOURCE, 0, "the cgroup2 hierarchy holding `%s` is not mounted", parent);
  ab_cg_fix_v2 (cg);
  h->created = missing_levels (h);
  cg->planned = true;
  *out = ab_steal_ptr (&cg);
  return 0;
}

int
ab_cgroup_realize (struct ab_cgroup *cg, const struct ab_resources *resources, ab_error_t *err)
{
  size_t i;

  for (i = 0; i < cg->n; i++)
    cg->h[i].created = 0;
  cg->planned = false;
  for (i = 0; i < cg->n; i++)
    if (hier_mkdir (&cg->h[i], err) < 0)
      {
        rollback (cg);
        return -1;
      }
  if (check_reusable (cg, err) < 0)
    {
      rollback (cg);
      return -1;
    }
  if (cg->v2 && resources)
    {
      _cleanup_strv_ struct ab_strv ctrls = { 0 }, why = { 0 };
      ab_cg_v2_needed (cg, resources, &ctrls, &why);
      if (v2_enable (cg->v2, &ctrls, &why, err) < 0)
        {
          rollback (cg);
          return -1;
        }
    }
  if ((resources && ab_cg_apply (cg, resources, false, err) < 0)
      || (!cg->delegated
          && ab_cg_devices_apply (cg, resources ? resources->devices : NULL, resources ? resources->n_devices : 0,
                                  err)
                 < 0))
    {
      rollback (cg);
      return -1;
    }
  return 0;
}

int
ab_cgroup_update (struct ab_cgroup *cg, const struct ab_resources *resources, ab_error_t *err)
{
  if (resources == NULL)
    return 0;
  if (ab_cg_devices_check (resources->devices, resources->n_devices, err) < 0)
    return -1;
  if (cg->v2)
    {
      _cleanup_strv_ struct ab_strv ctrls = { 0 }, why = { 0 };
      ab_cg_v2_needed (cg, resources, &ctrls, &why);
      if (v2_enable (cg->v2, &ctrls, &why, err) < 0)
        return -1;
    }
  if (resources->n_devices > 0 && cg->delegated)
    return ab_error_setc (err, AB_EC_RESOURCE, 0,
                          "linux.resources.devices: a rootless container's cgroup takes no device rules (a cgroup "
                          "device program needs CAP_SYS_ADMIN on the host)");
  if (ab_cg_apply (cg, resources, true, err) < 0)
    return -1;
  if (resources->n_devices > 0)
    return ab_cg_devices_apply (cg, resources->devices, resources->n_devices, err);
  return 0;
}

int
ab_cgroup_remove (struct ab_cgroup *cg, ab_error_t *err)
{
  _cleanup_free_ int *fds = xcalloc (cg->n + 1, sizeof *fds);
  size_t i, k = 0;
  int r = 0;

  /* Every hierarchy is tried: a failed rmdir in one stops none of the
     others (they were once left behind, unrecorded, by the first EIO).
     Those that failed get a second try after the rest, for a failure that
     can pass; what still fails keeps its count in `created`, which the
     caller saves in state.json, so that `delete --force` can finish. */
  for (int pass = 0; pass < 2; pass++)
    {
      r = 0;
      for (i = cg->n; i-- > 0;)
        {
          ab_error_t e = { 0 };

          if (hier_rmdir_dirs (&cg->h[i], &e) < 0 && r == 0)
            {
              r = -1;
              if (err)
                *err = e;
            }
        }
      if (r == 0)
        break;
    }
  /* The fds of the directories done with, opened one after the other at
     creation: a close_range or two rather than a close each. */
  for (i = 0; i < cg->n; i++)
    {
      if (cg->h[i].dfd >= 0)
        fds[k++] = cg->h[i].dfd;
      cg->h[i].dfd = -1;
      cg->h[i].by_path = false;
    }
  ab_close_all (fds, k);
  return r;
}

int
ab_cgroup_remove_if_empty (struct ab_cgroup *cg, ab_error_t *err)
{
  struct ab_cg_hier *h = ab_cg_tracking (cg);
  int r;

  /* rmdir refuses a populated cgroup (v1 and v2 alike), so its success is
     the emptiness check, one syscall instead of reading cgroup.events.
     Then the other hierarchies hold the same processes: none. */
  if (cg->planned || h == NULL)
    return 0;
  r = leaf_rmdir (h, err);
  if (r <= 0)
    return r;
  return ab_cgroup_remove (cg, err) < 0 ? -1 : 1;
}

int
ab_cgroup_destroy (struct ab_cgroup *cg, ab_error_t *err)
{
  int r = ab_cgroup_populated (cg, err);

  if (r < 0)
    return -1;
  if (r > 0)
    return ab_error_setc (err, AB_EC_STATE, EBUSY, "cgroup `%s` still has processes",
                          ab_cg_tracking (cg)->dir);
  return ab_cgroup_remove (cg, err);
}

int
ab_cgroup_clone_fd (struct ab_cgroup *cg)
{
  return cg->v2 ? cg->v2->dfd : -1;
}

const char *
ab_cgroup_v2_path (struct ab_cgroup *cg)
{
  const char *p;

  if (cg->v2 == NULL)
    return NULL;
  p = cg->v2->path;
  if (strcmp (cg->v2->root, "/") != 0)
    p += strlen (cg->v2->root);
  return *p ? p : "/";
}
