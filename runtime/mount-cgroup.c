/* A config's "cgroup" and "cgroup2" mounts: what the container sees of its
 * cgroup.  On a v1 or hybrid host a "cgroup" mount is runc's view, a
 * directory per hierarchy (do_cgroup_v1); otherwise the v2 tree, bound or,
 * in the container's own cgroup namespace, mounted anew (ab_mount_cgroup).
 * Runs in the child, in its own mount namespace, before pivot_root. */
#include "config.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "base/kernel-compat.h"
#include "runtime/mount-internal.h"
#include "runtime/mount.h"
#include "base/resolve.h"
#include "base/util.h"

/* Our own cgroup in the host's cgroup2 mount, e.g.
   /sys/fs/cgroup/unified/agentbox-x: from /proc/self/cgroup ("0::/path")
   and the cgroup2 line of /proc/self/mountinfo (mount point, mount root). */
static char *
own_cgroup2_dir (void)
{
  _cleanup_fclose_ FILE *f = fopen ("/proc/self/cgroup", "re");
  _cleanup_fclose_ FILE *mi = NULL;
  char line[4096], own[4096] = "";
  char *res = NULL;

  if (f == NULL)
    return NULL;
  while (fgets (line, sizeof line, f))
    if (strncmp (line, "0::", 3) == 0)
      {
        snprintf (own, sizeof own, "%s", line + 3);
        own[strcspn (own, "\n")] = '\0';
      }
  if (own[0] != '/')
    return NULL;
  mi = fopen ("/proc/self/mountinfo", "re");
  if (mi == NULL)
    return NULL;
  while (res == NULL && fgets (line, sizeof line, mi))
    {
      char *sep = strstr (line, " - cgroup2 ");
      char root[4096], mp[4096];
      size_t rl;
      if (sep == NULL || sscanf (line, "%*d %*d %*s %4095s %4095s", root, mp) != 2)
        continue;
      rl = strlen (root);
      if (strcmp (root, "/") == 0)
        res = xasprintf ("%s%s", mp, own);
      else if (strncmp (own, root, rl) == 0 && (own[rl] == '/' || own[rl] == '\0'))
        res = xasprintf ("%s%s", mp, own + rl);
    }
  return res;
}

/* A read-only bind of one host cgroup directory onto target_fd. */
static int
bind_cgroup_dir (const char *dir, int target_fd, const char *name, const char *what, ab_error_t *err)
{
  _cleanup_close_ int tree = -1;
  struct mount_attr a
      = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC };

  /* Not recursive: a mount someone made below the cgroup on the host is
     not the container's to see. */
  tree = open_tree (AT_FDCWD, dir, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (tree < 0)
    return ab_error_set (err, errno, "%s: open `%s`", what, dir);
  if (mount_setattr (tree, "", AT_EMPTY_PATH, &a, sizeof a) < 0)
    return ab_error_set (err, errno, "%s: make `%s` read-only", what, dir);
  return ab_move_mount_fd (tree, target_fd, name, err) < 0 ? ab_error_prefix (err, "%s", what) : 0;
}

/* The container's own cgroup directory, bound read-only: what a config's
   cgroup mount gives a container without a cgroup namespace of its own.
   A new cgroup2 superblock there would be made in the host's (initial)
   cgroup namespace, where
   - it shows the whole host tree: every other container's cgroup, its
     limits and usage (other tenants' names and activity);
   - its mount options are system-wide: the kernel applies them to the
     host's cgroup2 root (apply_cgroup_root_flags), so a mount without
     nsdelegate/memory_recursiveprot turns those off for the whole machine
     (on systemd hosts, the delegation boundary);
   - it waits on the cgroup locks the host's cgroup work holds: 8-14 ms in
     a quarter of the runs measured here (docs/benchmarks.md).
   In a user namespace the mount is refused anyway (only the owner of the
   cgroup namespace may mount); runc binds the cgroup directory there too. */
static int
do_cgroup_bind (struct ab_mount_ctx *ctx, const struct ab_mount *m, const char *dir, const char *what,
                ab_error_t *err)
{
  _cleanup_close_ int target = -1;

  if (dir == NULL)
    return ab_error_setc (err, AB_EC_SETUP, ENOENT, "%s: no cgroup2 hierarchy to show the container", what);
  target = ab_mount_target (ctx, m, AB_LAST_DIR, what, err);
  if (target < 0)
    return -1;
  return bind_cgroup_dir (dir, target, m->destination, what, err);
}

#define CG_VIEWS_MAX 32

/* A "cgroup" mount on a v1 or hybrid host, as runc makes it: a tmpfs with
   one directory per hierarchy, named as the host's mount point (memory,
   cpu,cpuacct, pids, ..., unified), each a read-only bind of the
   container's own cgroup there, so that memory/memory.limit_in_bytes,
   pids/pids.max or cpu/cpu.cfs_quota_us show the container's limits to
   the JVMs and build tools that size themselves by them; a symlink per
   controller of a co-mounted hierarchy (cpu -> cpu,cpuacct); then the
   tmpfs is made read-only.  Only the hierarchies the container has a
   cgroup of its own in: the root of each bind is that cgroup, so neither
   the host's other cgroups nor the container's parent can be seen or
   reached through it (".." stops at a mount's root), and a limit cannot be
   raised from inside.  With a cgroup namespace the container's cgroup is
   also "/" in /proc/self/cgroup and in mountinfo; binding it rather than
   mounting a v1 hierarchy anew keeps the host's mount options out of
   reach.  The v2 tree alone on a v2 host stays do_cgroup's. */
static int
do_cgroup_v1 (struct ab_mount_ctx *ctx, const struct ab_mount *m, const struct ab_cgroup_view *v, size_t n,
              const char *what, ab_error_t *err)
{
  _cleanup_close_ int target = -1, mfd = -1;
  struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY };
  size_t i;

  target = ab_mount_target (ctx, m, AB_LAST_DIR, what, err);
  if (target < 0)
    return -1;
  mfd = ab_mount_make_fs ("tmpfs", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=755", what, err);
  if (mfd < 0)
    return -1;
  /* Names made in the detached tmpfs, ours alone: no link can be there. */
  for (i = 0; i < n; i++)
    if (mkdirat (mfd, v[i].name, 0555) < 0 && errno != EEXIST)
      return ab_error_set (err, errno, "%s: mkdir `%s`", what, v[i].name);
  for (i = 0; i < n; i++)
    {
      const char *p = v[i].controllers;
      while (p && *p)
        {
          const char *end = strchrnul (p, ',');
          _cleanup_free_ char *c = xstrndup (p, (size_t)(end - p));
          const char *link = ab_str_has_prefix (c, "name=") ? c + 5 : c;
          if (*link && strcmp (link, v[i].name) != 0 && symlinkat (v[i].name, mfd, link) < 0 && errno != EEXIST)
            return ab_error_set (err, errno, "%s: symlink `%s`", what, link);
          p = *end ? end + 1 : NULL;
        }
    }
  if (ab_move_mount_fd (mfd, target, m->destination, err) < 0)
    return ab_error_prefix (err, "%s", what);
  for (i = 0; i < n; i++)
    {
      _cleanup_close_ int at = openat (mfd, v[i].name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (at < 0)
        return ab_error_set (err, errno, "%s: open `%s`", what, v[i].name);
      if (bind_cgroup_dir (v[i].dir, at, v[i].name, what, err) < 0)
        return -1;
    }
  if (mount_setattr (mfd, "", AT_EMPTY_PATH, &ro, sizeof ro) < 0)
    return ab_error_set (err, errno, "%s: make the tmpfs read-only", what);
  return ab_mount_set_propagation (mfd, m, what, err);
}

/* A config's "cgroup" or "cgroup2" mount.  "cgroup" on a v1 or hybrid host:
   every hierarchy (do_cgroup_v1).  Otherwise the v2 tree: without a cgroup
   namespace of its own the container gets its cgroup bound
   (do_cgroup_bind), never a new superblock, unless the host has no cgroup2
   tree to bind from.  In its cgroup namespace: cgroup2 (v1 hierarchies are
   not mountable from a user namespace; the unified tree tracks the
   container everywhere), or the bind where the namespace's owner is not
   ours. */
int
ab_mount_cgroup (struct ab_mount_ctx *ctx, const struct ab_mount *m, const char *what, ab_error_t *err)
{
  struct ab_cgroup_view v[CG_VIEWS_MAX];
  size_t n = strcmp (m->type, "cgroup") == 0 ? ab_cgroup_views (ctx->cg, v, CG_VIEWS_MAX) : 0;
  _cleanup_free_ char *own = NULL;
  struct ab_mount copy = *m;
  int r;

  if (n > 0)
    return do_cgroup_v1 (ctx, m, v, n, what, err);
  /* The container's cgroup as the runtime made it: /proc/self/cgroup
     could still name the runtime's own while the parent moves us. */
  if (!ctx->cgroupns)
    own = ab_cgroup_v2_dir (ctx->cg) ? xstrdup (ab_cgroup_v2_dir (ctx->cg)) : own_cgroup2_dir ();
  if (own)
    return do_cgroup_bind (ctx, m, own, what, err);
  copy.type = (char *)"cgroup2";
  copy.data = NULL;
  r = ab_mount_fs (ctx, &copy, what, err);
  if (r < 0 && ctx->userns && err && err->errnum == EPERM)
    {
      ab_error_clear (err);
      own = ab_cgroup_v2_dir (ctx->cg) ? xstrdup (ab_cgroup_v2_dir (ctx->cg)) : own_cgroup2_dir ();
      r = do_cgroup_bind (ctx, m, own, what, err);
    }
  return r;
}

