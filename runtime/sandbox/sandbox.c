#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "runtime/cache.h"
#include "runtime/plan/host-ids.h"
#include "spec/annotations.h"
#include "runtime/exe.h"
#include "base/log.h"
#include "runtime/sandbox/binds.h"
#include "runtime/sandbox/sandbox.h"
#include "runtime/lifecycle/state.h"
#include "base/util.h"
#include "spec/annotations.h"
#include "spec/defaults.h"
#include "base/gen.h"
#include "base/json.h"

#define SKELETON "sandbox-rootfs"

#ifndef AB_LIBEXECDIR
#define AB_LIBEXECDIR "/usr/local/libexec"
#endif

/* Host directories of the read-only view.  Where the host has a symlink
   (usr-merged /bin -> usr/bin), the rootfs gets the same symlink. */
static const char *const host_view[] = { "/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32" };

const char *const *
ab_sandbox_host_view (size_t *n)
{
  *n = AB_ARRAY_SIZE (host_view);
  return host_view;
}

/* Secrets of the host's /etc that the view must not show. */
static const char *const etc_masked[] = {
  "/etc/shadow",  "/etc/shadow-", "/etc/gshadow",      "/etc/gshadow-",   "/etc/ssh",
  "/etc/sudoers", "/etc/sudoers.d", "/etc/ssl/private", "/etc/machine-id", "/etc/security/opasswd",
  "/etc/agentbox",
};

/* Where agentbox-init is: $AGENTBOX_INIT, else $(libexecdir)/agentbox/agentbox-init, else next to the
   agentbox binary that was started (build tree). */
static const char *
ab_sandbox_init_path (void)
{
  static char buf[4096];
  char self[4096];
  const char *env = getenv ("AGENTBOX_INIT");
  const char *exe;
  struct stat st;

  if (env && *env)
    return env;
  snprintf (buf, sizeof buf, "%s/agentbox/agentbox-init", AB_LIBEXECDIR);
  if (stat (buf, &st) == 0)
    return buf;
  /* the build tree: next to the binary that was started (before any
     re-exec from a sealed copy, which has no path) */
  exe = getenv (AB_EXE_PATH_ENV);
  if (exe == NULL || *exe == '\0')
    {
      ssize_t n = readlink ("/proc/self/exe", self, sizeof self - 1);
      self[n > 0 ? n : 0] = '\0';
      exe = self;
    }
  if (*exe)
    {
      const char *slash = strrchr (exe, '/');
      if (slash)
        {
          snprintf (buf, sizeof buf, "%.*s/agentbox-init", (int) (slash - exe), exe);
          if (stat (buf, &st) == 0)
            return buf;
        }
    }
  return NULL;
}

/* Fill the skeleton directory fd: mount points and the host's symlinks. */
static int
fill_skeleton (int fd, const char *tmp, ab_error_t *err)
{
  static const char *const dirs[] = { "proc", "sys", "dev", "tmp", "root", "workspace", "run", "var", "var/lib",
                                      "home", ".agentbox" };
  struct stat st;
  size_t i;

  for (i = 0; i < AB_ARRAY_SIZE (dirs); i++)
    if (mkdirat (fd, dirs[i], 0755) < 0 && errno != EEXIST)
      return ab_error_set (err, errno, "create `%s/%s`", tmp, dirs[i]);
  if (symlinkat ("/tmp", fd, "var/tmp") < 0 && errno != EEXIST)
    return ab_error_set (err, errno, "create `%s/var/tmp`", tmp);
  for (i = 0; i < AB_ARRAY_SIZE (host_view); i++)
    {
      const char *host = host_view[i], *name = host + 1;
      char target[256];
      ssize_t n;
      if (lstat (host, &st) < 0)
        continue;
      if (S_ISLNK (st.st_mode))
        {
          n = readlink (host, target, sizeof target - 1);
          if (n < 0)
            return ab_error_set (err, errno, "readlink `%s`", host);
          target[n] = '\0';
          if (symlinkat (target, fd, name) < 0 && errno != EEXIST)
            return ab_error_set (err, errno, "create symlink `%s/%s`", tmp, name);
        }
      else if (S_ISDIR (st.st_mode) && mkdirat (fd, name, 0755) < 0 && errno != EEXIST)
        return ab_error_set (err, errno, "create `%s/%s`", tmp, name);
    }
  {
    int f = openat (fd, ".agentbox/init", O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (f < 0)
      return ab_error_set (err, errno, "create `%s/.agentbox/init`", tmp);
    close (f);
  }
  return 0;
}

/* The skeleton is derived data, made once and shared by every run: it
   lives in the cache (runtime/cache.h), not in the state root, which
   `delete` leaves as `create` found it.  Built aside and renamed into
   place, so a concurrent run sees all of it or none.  -1 with the reason
   in why when the cache cannot hold it. */
static int
cache_skeleton (char **out, char why[static AB_CACHE_WHY_MAX])
{
  _cleanup_close_ int base = ab_cache_open_base (why);
  _cleanup_free_ char *dir = NULL, *tmp = NULL;
  _cleanup_close_ int fd = -1;
  char tmpname[64];
  ab_error_t err = { 0 };

  if (base < 0)
    {
      if (why[0] == '\0')
        snprintf (why, AB_CACHE_WHY_MAX, "there is no cache (AGENTBOX_CACHE_DIR is empty)");
      return -1;
    }
  dir = xasprintf ("%s/" SKELETON, ab_cache_base ());
  fd = openat (base, SKELETON, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0 && ab_cache_dir_is_safe (fd, dir, 0755, why))
    {
      *out = ab_steal_ptr (&dir);
      return 0;
    }
  if (fd >= 0)
    {
      /* Not what we made (the cache is ours alone, so this is damage):
         replace it. */
      ab_warn ("%s: rebuilt", why);
      ab_rm_tree_at (base, SKELETON, 64);
      close (fd);
    }
  snprintf (tmpname, sizeof tmpname, "." SKELETON ".tmp.%d", (int) getpid ());
  tmp = xasprintf ("%s/%s", ab_cache_base (), tmpname);
  ab_rm_tree_at (base, tmpname, 64);
  if (mkdirat (base, tmpname, 0755) < 0)
    ab_error_set (&err, errno, "create `%s`", tmp);
  else if ((fd = openat (base, tmpname, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
    ab_error_set (&err, errno, "open `%s`", tmp);
  else if (fill_skeleton (fd, tmp, &err) == 0
           && renameat (base, tmpname, base, SKELETON) < 0
           /* a concurrent run made it first: use theirs */
           && errno != ENOTEMPTY && errno != EEXIST)
    ab_error_set (&err, errno, "rename `%s`", tmp);
  if (err.cls != AB_EC_NONE || fd < 0)
    {
      ab_rm_tree_at (base, tmpname, 64);
      snprintf (why, AB_CACHE_WHY_MAX, "%s", err.msg);
      return -1;
    }
  ab_rm_tree_at (base, tmpname, 64); /* what a lost rename race left */
  *out = ab_steal_ptr (&dir);
  return 0;
}

/* The cache cannot hold the skeleton: the run builds its own, private
   one, <root>/.rootfs@<id> (state.h), which goes with the container
   (ab_container_release_resources).  A broken cache makes a run slower,
   never fails it (runtime/cache.h).  Built under the lock of *lock, kept
   until the run ends (ab_sandbox_release); an id someone else holds is
   left alone: create reports it. */
static int
private_skeleton (const struct ab_sandbox_opts *o, char **out, int *lock, ab_error_t *err)
{
  _cleanup_close_ int rootfd = ab_state_root_open (o->root, true, err);
  _cleanup_close_ int fd = -1;
  _cleanup_free_ char *path = NULL;
  struct stat st;
  bool made;

  if (rootfd < 0)
    return -1;
  fd = ab_state_private_rootfs_open (rootfd, o->id, &made, err);
  if (fd < 0)
    return -1;
  /* Checked under the lock: a container of this id may be using the
     skeleton (a detached one, whose run has exited). */
  if (fstatat (rootfd, o->id, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
    {
      if (made)
        ab_state_private_rootfs_remove (rootfd, o->id, false);
      return ab_error_setc (err, AB_EC_EXISTS, 0, "container `%s` already exists", o->id);
    }
  path = xasprintf ("%s/" AB_PRIVATE_ROOTFS_PREFIX "%s", o->root, o->id);
  /* A leftover of a run killed while building it is completed: every
     step of fill_skeleton takes what is already there. */
  if (fill_skeleton (fd, path, err) < 0)
    {
      ab_state_private_rootfs_remove (rootfd, o->id, false);
      return -1;
    }
  *lock = ab_steal_fd (&fd);
  *out = ab_steal_ptr (&path);
  return 0;
}

void
ab_sandbox_release (const struct ab_sandbox_opts *o, int lock, const ab_error_t *failure)
{
  struct stat st;

  if (lock < 0)
    return;
  /* A run that failed without a container of the id (none was made, or
     the id was taken meanwhile by a container that does not use it):
     the skeleton it built is nobody's.  Otherwise it goes with the
     container. */
  if (failure)
    {
      _cleanup_close_ int rootfd = ab_state_root_open (o->root, false, NULL);
      if (rootfd >= 0
          && (failure->cls == AB_EC_EXISTS
              || (fstatat (rootfd, o->id, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)))
        ab_state_private_rootfs_remove (rootfd, o->id, false);
    }
  close (lock);
}

static int
ensure_skeleton (const struct ab_sandbox_opts *o, char **out, int *lock, ab_error_t *err)
{
  char why[AB_CACHE_WHY_MAX] = "";

  *lock = -1;
  if (cache_skeleton (out, why) == 0)
    return 0;
  if (ab_cache_base () == NULL || *ab_cache_base () == '\0')
    ab_debug ("run --default: %s: a private rootfs skeleton", why);
  else
    ab_cache_unusable ("run --default builds a private rootfs skeleton", why);
  return private_skeleton (o, out, lock, err);
}

/* The annotations of the sandbox's config: the caller's, each key once (a
   later one replaces an earlier one in place), then --allow-domain's
   list, which replaces a caller's allow-domains. */
static void
sandbox_annotations (const struct ab_sandbox_opts *o, const struct ab_strv *nofollow, struct ab_kvlist *out)
{
  _cleanup_free_ char *joined = NULL;
  struct stat st;

  /* The host's /etc/hosts does not name the sandbox: our own one, mounted
     over it (a bind needs the file there; a host without one keeps none). */
  if (lstat ("/etc/hosts", &st) == 0 && S_ISREG (st.st_mode))
    ab_kvlist_set (out, AB_ANNOT_ETC_HOSTS, "true");
  for (size_t i = 0; i < o->annotations.n; i++)
    ab_kvlist_set (out, o->annotations.v[i].key, o->annotations.v[i].value);
  /* The sources it resolved itself (the workspace, the extra binds): create
     opens them refusing every symlink on the path, and `audit` says so;
     after the caller's, which cannot take it away. */
  if (nofollow->n)
    {
      _cleanup_gen_ struct ab_gen *g = ab_gen_new (false);
      _cleanup_free_ char *list = NULL;
      ab_gen_arr_open (g);
      for (size_t i = 0; i < nofollow->n; i++)
        ab_gen_str (g, nofollow->v[i]);
      ab_gen_arr_close (g);
      list = ab_gen_steal (g, false, NULL);
      ab_kvlist_set (out, AB_ANNOT_BIND_NOFOLLOW, list);
    }

  if (o->allow_domains.n == 0)
    return;
  for (size_t k = 0; k < o->allow_domains.n; k++)
    {
      char *j = xasprintf ("%s%s%s", joined ? joined : "", joined ? "," : "", o->allow_domains.v[k]);
      free (joined);
      joined = j;
    }
  ab_kvlist_set (out, AB_ANNOT_NET_ALLOW_DOMAINS, joined);
}

/* Option strings made for one config (the sizes of the sandbox's tmpfs
   mounts), alive until it is written. */
struct sized
{
  const char *ws[4];
  const char *root[4];
  char ws_size[40], root_size[40];
  struct ab_strv env;  /* USER, LOGNAME, then the caller's */
  struct ab_strv keep; /* the host mounts' paths */
  struct ab_strv nofollow; /* their resolved sources */
  struct ab_sandbox_mountpoints mp; /* their mount points in the skeleton */
};

static void
sized_free (struct sized *sz)
{
  ab_strv_free (&sz->env);
  ab_strv_free (&sz->keep);
  ab_strv_free (&sz->nofollow);
  free (sz->mp.v);
}

/* The options of a bounded tmpfs: nosuid, nodev, its mode and its size
   (written into size_buf). */
static void
tmpfs_opts (const char *opts[4], char *size_buf, size_t n, uint64_t size, const char *mode)
{
  snprintf (size_buf, n, "size=%llu", (unsigned long long)size);
  opts[0] = "nosuid";
  opts[1] = "nodev";
  opts[2] = mode;
  opts[3] = size_buf;
}

/* /workspace: the caller's directory, bound read-write (id-mapped: root
   inside writes files the host sees owned by the directory's owner, not
   by uid 100000), or a tmpfs.  A root-owned directory uses the
   container's own mapping (every id shows as itself); any other owner is
   mapped, alone, to the container's root, which holds no capability and
   could otherwise not write there at all.  *real gets the directory's
   resolved path, which create opens refusing every symlink. */
static int
workspace_mount (const struct ab_sandbox_opts *o, bool rootless, struct ab_default_mount *m, char **real,
                 struct sized *sz, ab_error_t *err)
{
  static const char *const ws_opts[] = { "rbind", "rw", "nosuid", "nodev", "idmap" };
  static const char *const ws_opts_rootless[] = { "rbind", "rw", "nosuid", "nodev" };
  struct stat st;

  if (o->workspace == NULL)
    {
      tmpfs_opts (sz->ws, sz->ws_size, sizeof sz->ws_size, o->workspace_size ? o->workspace_size : AB_SANDBOX_WORKSPACE_SIZE,
                  "mode=755");
      *m = (struct ab_default_mount){ "/workspace", "tmpfs", "tmpfs", sz->ws, AB_ARRAY_SIZE (sz->ws) };
      return 0;
    }
  *real = realpath (o->workspace, NULL);
  if (*real == NULL)
    return ab_error_setc (err, AB_EC_USAGE, errno, "workspace `%s`", o->workspace);
  if (stat (*real, &st) < 0 || !S_ISDIR (st.st_mode))
    return ab_error_setc (err, AB_EC_USAGE, ENOTDIR, "workspace `%s` is not a directory", *real);
  *m = (struct ab_default_mount){ "/workspace", "bind", *real, rootless ? ws_opts_rootless : ws_opts,
                                  rootless ? AB_ARRAY_SIZE (ws_opts_rootless) : AB_ARRAY_SIZE (ws_opts) };
  ab_sandbox_map_owner (&st, rootless, m);
  return 0;
}

/* The config of the sandbox, as options of the profile: the program, the
   host view, /root, /run, /workspace, the init, the masked secrets, the
   limits and the annotations.  `mounts` has room for every mount. */
/* Rootless: the caller's own ids at container 0, and its subordinate
   ranges after them where newuidmap and newgidmap can write them
   (runtime/plan/host-ids.h); the profile's limits as rootful, accepted
   degraded unless the caller asked for limits (--memory, --pids): the
   record's `degraded` then says which of them this host cannot enforce. */
static void
sandbox_rootless (const struct ab_sandbox_opts *o, struct ab_default_opts *d, struct ab_idmaps maps[2],
                  struct ab_kvlist *annotations)
{
  struct ab_host_ids h;
  bool full;

  ab_host_ids_read (&h);
  d->rootless = ab_host_rootless (&h, o->rootless);
  if (d->rootless)
    {
      ab_host_rootless_maps (&h, &maps[0], &maps[1], &full);
      d->uid_map = &maps[0];
      d->gid_map = &maps[1];
      if (o->memory == 0 && o->pids == 0)
        ab_kvlist_set (annotations, AB_ANNOT_DEGRADED, "accept");
      d->memory = o->memory ? o->memory : AB_DEFAULT_MEMORY;
      d->pids = o->pids ? o->pids : AB_DEFAULT_PIDS;
    }
  ab_host_ids_free (&h);
}

static int
sandbox_opts (const struct ab_sandbox_opts *o, struct ab_default_opts *d, struct ab_default_mount *mounts,
              char **real, struct sized *sz, ab_error_t *err)
{
  /* The process is root in its user namespace: the names tools look up. */
  static const char *const who[] = { "USER=root", "LOGNAME=root" };
  /* Recursive flags: a host submount below /usr or /etc (a separate
     /usr/local, an autofs) must be read-only, nosuid and nodev too, not
     only the top of the bind. */
  static const char *const ro[] = { "rbind", "rro", "rnosuid", "rnodev" };
  static const char *const run_opts[] = { "nosuid", "nodev", "noexec", "mode=755", "size=16777216" };
  static const char *const init_opts[] = { "bind", "ro", "nosuid", "nodev" };
  size_t n = 0;
  struct stat st;

  d->uid = geteuid ();
  d->gid = getegid ();
  if (!o->init && o->argc == 0)
    return ab_error_setc (err, AB_EC_USAGE, 0, "no program to run (give it after `--`)");
  for (size_t i = 0; i < AB_ARRAY_SIZE (host_view); i++)
    {
      /* absent, or a symlink the skeleton already has; any other failure
         is not taken for absence (the sandbox would silently lack it) */
      if (lstat (host_view[i], &st) < 0)
        {
          if (errno == ENOENT)
            continue;
          return ab_error_set (err, errno, "lstat `%s` (the host's, for the sandbox's view)", host_view[i]);
        }
      if (!S_ISDIR (st.st_mode))
        continue;
      mounts[n++] = (struct ab_default_mount){ host_view[i], "bind", host_view[i], ro, AB_ARRAY_SIZE (ro) };
    }
  /* HOME: where pip, npm and git keep caches and config */
  tmpfs_opts (sz->root, sz->root_size, sizeof sz->root_size, o->home_size ? o->home_size : AB_SANDBOX_HOME_SIZE,
              "mode=700");
  mounts[n++] = (struct ab_default_mount){ "/root", "tmpfs", "tmpfs", sz->root, AB_ARRAY_SIZE (sz->root) };
  mounts[n++] = (struct ab_default_mount){ "/run", "tmpfs", "tmpfs", run_opts, AB_ARRAY_SIZE (run_opts) };
  if (workspace_mount (o, d->rootless, &mounts[n++], real, sz, err) < 0)
    return -1;
  if (ab_sandbox_host_mounts (o, &sz->mp, d->rootless, mounts, &n, &sz->nofollow, &sz->keep, err) < 0)
    return -1;
  if (o->init)
    {
      const char *init = ab_sandbox_init_path ();
      if (init == NULL)
        return ab_error_setc (err, AB_EC_SETUP, ENOENT,
                              "agentbox-init not found (set AGENTBOX_INIT or install agentbox)");
      mounts[n++] = (struct ab_default_mount){ "/.agentbox/init", "bind", init, init_opts, AB_ARRAY_SIZE (init_opts) };
    }
  d->mounts = mounts;
  d->n_mounts = n;
  d->cwd = o->cwd ? o->cwd : "/workspace";
  d->terminal = o->terminal;
  for (size_t i = 0; i < AB_ARRAY_SIZE (who); i++)
    ab_strv_push (&sz->env, who[i]);
  for (size_t i = 0; i < o->env.n; i++)
    ab_strv_push (&sz->env, o->env.v[i]);
  d->env = &sz->env;
  d->masked = etc_masked;
  d->n_masked = AB_ARRAY_SIZE (etc_masked);
  if (!d->rootless)
    {
      d->memory = o->memory;
      d->pids = o->pids;
    }
  d->tmp_size = o->tmp_size;
  d->shm_size = o->shm_size;
  d->file_size = o->file_size;
  d->open_files = o->open_files;
  return 0;
}

/* The host mounts' mount points, in the skeleton.  One the shared skeleton
   lacks (an extra bind's destination) is made in a private skeleton of
   the run's (as when the cache cannot hold one), never in the shared one:
   every later sandbox would show it, one run's choice in the others'
   view. */
static int
skeleton_mountpoints (const struct ab_sandbox_opts *o, const struct sized *sz, char **skeleton, int *lock,
                      ab_error_t *err)
{
  _cleanup_close_ int fd = open (*skeleton, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  int r;

  if (fd < 0)
    return ab_error_set (err, errno, "open `%s`", *skeleton);
  r = ab_sandbox_mountpoints_make (fd, *lock < 0, &sz->mp, err);
  if (r <= 0)
    return r;
  ab_debug ("run --default: a bind's mount point is not in the shared skeleton: a private rootfs skeleton");
  free (*skeleton);
  *skeleton = NULL;
  close (fd);
  fd = -1;
  if (private_skeleton (o, skeleton, lock, err) < 0)
    return -1;
  fd = open (*skeleton, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return ab_error_set (err, errno, "open `%s`", *skeleton);
  return ab_sandbox_mountpoints_make (fd, false, &sz->mp, err);
}

int
ab_sandbox_bundle (const struct ab_sandbox_opts *o, struct ab_bundle **out, int *lock, ab_error_t *err)
{
  static const char *const init_args[] = { "/.agentbox/init", NULL };
  _cleanup_free_ char *skeleton = NULL;
  _cleanup_free_ char *real = NULL;
  _cleanup_free_ char *config = NULL;
  _cleanup_free_ const char **args = NULL;
  _cleanup_free_ struct ab_default_mount *mounts
      = xcalloc (AB_ARRAY_SIZE (host_view) + 4 + ab_sandbox_host_mounts_max (o), sizeof *mounts);
  struct ab_default_opts d = { 0 };
  struct sized sz = { 0 };
  struct ab_kvlist annotations = { 0 };
  struct ab_idmaps maps[2] = { { 0 } };
  struct ab_bundle_guard guard;
  size_t len;
  int r;

  if (ensure_skeleton (o, &skeleton, lock, err) < 0)
    return -1;
  /* The state root is the sandbox's bundle directory. */
  {
    int rfd = ab_state_root_open (o->root, true, err);
    if (rfd < 0)
      return -1;
    close (rfd);
  }
  sz.mp.v = xcalloc (ab_sandbox_host_mounts_max (o), sizeof *sz.mp.v);
  sandbox_rootless (o, &d, maps, &annotations);
  r = sandbox_opts (o, &d, mounts, &real, &sz, err);
  if (r == 0)
    r = skeleton_mountpoints (o, &sz, &skeleton, lock, err);
  if (r < 0)
    {
      free (maps[0].v);
      free (maps[1].v);
      ab_kvlist_free (&annotations);
      sized_free (&sz);
      return -1;
    }
  d.root_path = skeleton;
  if (o->init)
    d.args = init_args;
  else
    {
      args = xcalloc (o->argc + 1, sizeof *args);
      memcpy (args, o->argv, o->argc * sizeof *args);
      d.args = args;
    }
  if (real)
    ab_strv_push (&sz.nofollow, real);
  sandbox_annotations (o, &sz.nofollow, &annotations);
  d.annotations = &annotations;
  config = ab_spec_default_json (&d, &len);
  ab_kvlist_free (&annotations);
  free (maps[0].v);
  free (maps[1].v);
  guard = ab_bundle_guard (o->root);
  r = ab_bundle_from_bytes (o->root, &guard, config, len, out, err);
  sized_free (&sz);
  return r;
}
