#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "runtime/cache.h"
#include "runtime/exe.h"
#include "base/log.h"
#include "runtime/sandbox/sandbox.h"
#include "runtime/lifecycle/state.h"
#include "base/util.h"
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

/* Remove a small tree we made (directories, files, symlinks). */
static void
rm_tree (int at, const char *name)
{
  int fd = openat (at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  DIR *d;
  struct dirent *e;

  if (fd < 0)
    {
      unlinkat (at, name, 0);
      return;
    }
  d = fdopendir (fd);
  if (d == NULL)
    {
      close (fd);
      return;
    }
  while ((e = readdir (d)) != NULL)
    if (strcmp (e->d_name, ".") && strcmp (e->d_name, ".."))
      {
        if (e->d_type == DT_DIR)
          rm_tree (dirfd (d), e->d_name);
        else
          unlinkat (dirfd (d), e->d_name, 0);
      }
  closedir (d);
  unlinkat (at, name, AT_REMOVEDIR);
}

/* Fill the skeleton directory fd: mount points and the host's symlinks. */
static int
fill_skeleton (int fd, const char *tmp, ab_error_t *err)
{
  static const char *const dirs[] = { "proc", "sys", "dev", "tmp", "root", "workspace", "run", "var", "home",
                                      ".agentbox" };
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
   place, so a concurrent run sees all of it or none. */
static int
ensure_skeleton (char **out, ab_error_t *err)
{
  char why[AB_CACHE_WHY_MAX];
  _cleanup_close_ int base = ab_cache_open_base (why);
  _cleanup_free_ char *dir = NULL, *tmp = NULL;
  _cleanup_close_ int fd = -1;
  char tmpname[64];

  if (base < 0)
    return ab_error_setc (err, AB_EC_SETUP, 0, "run --default: the rootfs skeleton lives in the cache: %s",
                          why[0] ? why : "there is none (AGENTBOX_CACHE_DIR is empty)");
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
      rm_tree (base, SKELETON);
      close (fd);
    }
  snprintf (tmpname, sizeof tmpname, "." SKELETON ".tmp.%d", (int) getpid ());
  tmp = xasprintf ("%s/%s", ab_cache_base (), tmpname);
  rm_tree (base, tmpname);
  if (mkdirat (base, tmpname, 0755) < 0)
    return ab_error_set (err, errno, "create `%s`", tmp);
  fd = openat (base, tmpname, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return ab_error_set (err, errno, "open `%s`", tmp);
  if (fill_skeleton (fd, tmp, err) < 0)
    {
      rm_tree (base, tmpname);
      return -1;
    }
  if (renameat (base, tmpname, base, SKELETON) < 0)
    {
      int e = errno;
      rm_tree (base, tmpname);
      /* a concurrent run made it first: use theirs */
      if (!(e == ENOTEMPTY || e == EEXIST))
        return ab_error_set (err, e, "rename `%s`", tmp);
    }
  *out = ab_steal_ptr (&dir);
  return 0;
}

/* The annotations of the sandbox's config: the caller's, each key once (a
   later one replaces an earlier one in place), then --allow-domain's
   list, which replaces a caller's allow-domains. */
static void
sandbox_annotations (const struct ab_sandbox_opts *o, struct ab_kvlist *out)
{
  _cleanup_free_ char *joined = NULL;

  for (size_t i = 0; i < o->annotations.n; i++)
    ab_kvlist_set (out, o->annotations.v[i].key, o->annotations.v[i].value);
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

/* /workspace: the caller's directory, bound read-write (id-mapped: root
   inside writes files the host sees owned by the directory's owner, not
   by uid 100000), or a tmpfs.  A root-owned directory uses the
   container's own mapping (every id shows as itself); any other owner is
   mapped, alone, to the container's root, which holds no capability and
   could otherwise not write there at all.  *real gets the directory's
   resolved path, which create opens refusing every symlink. */
static int
workspace_mount (const struct ab_sandbox_opts *o, bool rootless, struct ab_default_mount *m, char **real,
                 ab_error_t *err)
{
  static const char *const ws_opts[] = { "rbind", "rw", "nosuid", "nodev", "idmap" };
  static const char *const ws_opts_rootless[] = { "rbind", "rw", "nosuid", "nodev" };
  static const char *const tmpfs_opts[] = { "nosuid", "nodev", "mode=755", "size=1073741824" };
  struct stat st;

  if (o->workspace == NULL)
    {
      *m = (struct ab_default_mount){ "/workspace", "tmpfs", "tmpfs", tmpfs_opts, AB_ARRAY_SIZE (tmpfs_opts) };
      return 0;
    }
  *real = realpath (o->workspace, NULL);
  if (*real == NULL)
    return ab_error_setc (err, AB_EC_USAGE, errno, "workspace `%s`", o->workspace);
  if (stat (*real, &st) < 0 || !S_ISDIR (st.st_mode))
    return ab_error_setc (err, AB_EC_USAGE, ENOTDIR, "workspace `%s` is not a directory", *real);
  *m = (struct ab_default_mount){ "/workspace", "bind", *real, rootless ? ws_opts_rootless : ws_opts,
                                  rootless ? AB_ARRAY_SIZE (ws_opts_rootless) : AB_ARRAY_SIZE (ws_opts) };
  if (!rootless && (st.st_uid != 0 || st.st_gid != 0))
    {
      m->map_owner = true;
      m->owner_uid = st.st_uid;
      m->owner_gid = st.st_gid;
    }
  return 0;
}

/* The config of the sandbox, as options of the profile: the program, the
   host view, /root, /run, /workspace, the init, the masked secrets, the
   limits and the annotations.  `mounts` has room for every mount. */
static int
sandbox_opts (const struct ab_sandbox_opts *o, struct ab_default_opts *d, struct ab_default_mount *mounts,
              char **real, ab_error_t *err)
{
  /* Recursive flags: a host submount below /usr or /etc (a separate
     /usr/local, an autofs) must be read-only, nosuid and nodev too, not
     only the top of the bind. */
  static const char *const ro[] = { "rbind", "rro", "rnosuid", "rnodev" };
  static const char *const root_opts[] = { "nosuid", "nodev", "mode=700", "size=268435456" };
  static const char *const run_opts[] = { "nosuid", "nodev", "noexec", "mode=755", "size=16777216" };
  static const char *const init_opts[] = { "bind", "ro", "nosuid", "nodev" };
  size_t n = 0;
  struct stat st;

  d->rootless = geteuid () != 0;
  d->uid = getuid ();
  d->gid = getgid ();
  if (!o->init && o->argc == 0)
    return ab_error_setc (err, AB_EC_USAGE, 0, "no program to run (give it after `--`)");
  for (size_t i = 0; i < AB_ARRAY_SIZE (host_view); i++)
    {
      if (lstat (host_view[i], &st) < 0 || !S_ISDIR (st.st_mode))
        continue; /* absent, or a symlink the skeleton already has */
      mounts[n++] = (struct ab_default_mount){ host_view[i], "bind", host_view[i], ro, AB_ARRAY_SIZE (ro) };
    }
  mounts[n++] = (struct ab_default_mount){ "/root", "tmpfs", "tmpfs", root_opts, AB_ARRAY_SIZE (root_opts) };
  mounts[n++] = (struct ab_default_mount){ "/run", "tmpfs", "tmpfs", run_opts, AB_ARRAY_SIZE (run_opts) };
  if (workspace_mount (o, d->rootless, &mounts[n++], real, err) < 0)
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
  d->env = &o->env;
  d->masked = etc_masked;
  d->n_masked = AB_ARRAY_SIZE (etc_masked);
  d->memory = o->memory;
  d->pids = o->pids;
  return 0;
}

int
ab_sandbox_bundle (const struct ab_sandbox_opts *o, struct ab_bundle **out, ab_error_t *err)
{
  static const char *const init_args[] = { "/.agentbox/init", NULL };
  _cleanup_free_ char *skeleton = NULL;
  _cleanup_free_ char *real = NULL;
  _cleanup_free_ char *config = NULL;
  _cleanup_free_ const char **args = NULL;
  struct ab_default_mount mounts[AB_ARRAY_SIZE (host_view) + 4];
  struct ab_default_opts d = { 0 };
  struct ab_kvlist annotations = { 0 };
  struct ab_bundle_guard guard;
  size_t len;
  int r;

  if (ensure_skeleton (&skeleton, err) < 0)
    return -1;
  /* The state root is the sandbox's bundle directory. */
  {
    int rfd = ab_state_root_open (o->root, true, err);
    if (rfd < 0)
      return -1;
    close (rfd);
  }
  if (sandbox_opts (o, &d, mounts, &real, err) < 0)
    return -1;
  d.root_path = skeleton;
  if (o->init)
    d.args = init_args;
  else
    {
      args = xcalloc (o->argc + 1, sizeof *args);
      memcpy (args, o->argv, o->argc * sizeof *args);
      d.args = args;
    }
  sandbox_annotations (o, &annotations);
  d.annotations = &annotations;
  config = ab_spec_default_json (&d, &len);
  ab_kvlist_free (&annotations);
  guard = ab_bundle_guard (o->root);
  r = ab_bundle_from_bytes (o->root, &guard, config, len, out, err);
  if (r == 0 && real)
    (*out)->nofollow_source = ab_steal_ptr (&real);
  return r;
}
