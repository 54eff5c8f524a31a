#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "runtime/cache.h"
#include "runtime/exe.h"
#include "runtime/log.h"
#include "runtime/sandbox.h"
#include "runtime/state.h"
#include "runtime/util.h"
#include "spec/defaults.h"
#include "spec/gen.h"
#include "spec/json.h"

#define SKELETON "sandbox-rootfs"

#ifndef AB_LIBEXECDIR
#define AB_LIBEXECDIR "/usr/local/libexec"
#endif

/* Host directories of the read-only view.  Where the host has a symlink
   (usr-merged /bin -> usr/bin), the rootfs gets the same symlink. */
static const char *const host_view[] = { "usr", "etc", "bin", "sbin", "lib", "lib32", "lib64", "libx32" };

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

const char *
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
      char host[64], target[256];
      ssize_t n;
      snprintf (host, sizeof host, "/%s", host_view[i]);
      if (lstat (host, &st) < 0)
        continue;
      if (S_ISLNK (st.st_mode))
        {
          n = readlink (host, target, sizeof target - 1);
          if (n < 0)
            return ab_error_set (err, errno, "readlink `%s`", host);
          target[n] = '\0';
          if (symlinkat (target, fd, host_view[i]) < 0 && errno != EEXIST)
            return ab_error_set (err, errno, "create symlink `%s/%s`", tmp, host_view[i]);
        }
      else if (S_ISDIR (st.st_mode) && mkdirat (fd, host_view[i], 0755) < 0 && errno != EEXIST)
        return ab_error_set (err, errno, "create `%s/%s`", tmp, host_view[i]);
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

static struct ab_json *
strv_json (const char *const *v, size_t n)
{
  struct ab_json *a = ab_json_new (AB_J_ARRAY);
  size_t i;

  for (i = 0; i < n; i++)
    ab_json_append (a, ab_json_new_str (v[i]));
  return a;
}

static struct ab_json *
mount_json (const char *dest, const char *type, const char *source, const char *const *opts, size_t n)
{
  struct ab_json *m = ab_json_new (AB_J_OBJECT);

  ab_json_set (m, "destination", ab_json_new_str (dest));
  ab_json_set (m, "type", ab_json_new_str (type));
  ab_json_set (m, "source", ab_json_new_str (source));
  ab_json_set (m, "options", strv_json (opts, n));
  return m;
}

static struct ab_json *
obj_child (struct ab_json *parent, const char *key, enum ab_jtype t)
{
  struct ab_json *v = ab_json_peek (parent, key);

  if (v == NULL || v->type != t)
    {
      v = ab_json_new (t);
      ab_json_set (parent, key, v);
    }
  return v;
}

/* The host id the container's root maps to in the profile's linux.KEY
   (uidMappings, gidMappings), or -1. */
static int64_t
root_host_id (struct ab_json *linux_, const char *key)
{
  struct ab_json *maps = linux_ ? ab_json_peek (linux_, key) : NULL;
  size_t i;

  if (maps == NULL || maps->type != AB_J_ARRAY)
    return -1;
  for (i = 0; i < maps->u.arr.n; i++)
    {
      struct ab_json *cid = ab_json_peek (maps->u.arr.items[i], "containerID");
      struct ab_json *hid = ab_json_peek (maps->u.arr.items[i], "hostID");
      uint64_t v;
      if (cid && hid && cid->type == AB_J_NUMBER && hid->type == AB_J_NUMBER && strcmp (cid->u.num, "0") == 0
          && ab_parse_u64 (hid->u.num, &v) == 0 && v <= UINT32_MAX)
        return (int64_t) v;
    }
  return -1;
}

/* A mount's id mapping of one id: `disk_id` on the filesystem shows as host
   id `host_id` (the container's root) through the mount. */
static struct ab_json *
one_id_mapping (uint64_t disk_id, int64_t host_id)
{
  struct ab_json *a = ab_json_new (AB_J_ARRAY);
  struct ab_json *m = ab_json_new (AB_J_OBJECT);

  ab_json_set (m, "containerID", ab_json_new_int ((int64_t) disk_id));
  ab_json_set (m, "hostID", ab_json_new_int (host_id));
  ab_json_set (m, "size", ab_json_new_int (1));
  ab_json_append (a, m);
  return a;
}

int
ab_sandbox_bundle (const struct ab_sandbox_opts *o, struct ab_bundle **out, ab_error_t *err)
{
  _cleanup_free_ char *skeleton = NULL;
  _cleanup_free_ char *base = NULL;
  _cleanup_json_ struct ab_json *doc = NULL;
  _cleanup_gen_ struct ab_gen *g = NULL;
  struct ab_default_opts d = { 0 };
  struct ab_bundle_guard guard;
  struct ab_json *process, *mounts, *linux_, *masked, *env, *res, *ann;
  const char *buf;
  size_t len, i;
  struct stat st;

  if (ensure_skeleton (&skeleton, err) < 0)
    return -1;
  /* The state root is the sandbox's bundle directory. */
  {
    int rfd = ab_state_root_open (o->root, true, err);
    if (rfd < 0)
      return -1;
    close (rfd);
  }
  d.rootless = geteuid () != 0;
  d.uid = getuid ();
  d.gid = getgid ();
  base = ab_spec_default_json (&d, &len);
  doc = ab_json_parse (base, len, &ab_json_config_limits, "default profile", err);
  if (doc == NULL)
    return -1;

  ab_json_set (obj_child (doc, "root", AB_J_OBJECT), "path", ab_json_new_str (skeleton));

  process = obj_child (doc, "process", AB_J_OBJECT);
  if (o->init)
    {
      static const char *const init_args[] = { "/.agentbox/init" };
      ab_json_set (process, "args", strv_json (init_args, 1));
    }
  else
    {
      if (o->argc == 0)
        return ab_error_setc (err, AB_EC_USAGE, 0, "no program to run (give it after `--`)");
      ab_json_set (process, "args", strv_json ((const char *const *) o->argv, o->argc));
    }
  ab_json_set (process, "cwd", ab_json_new_str (o->cwd ? o->cwd : "/workspace"));
  env = obj_child (process, "env", AB_J_ARRAY);
  for (i = 0; i < o->env.n; i++)
    {
      /* a later NAME= replaces the profile's */
      const char *eq = strchr (o->env.v[i], '=');
      size_t nl = eq ? (size_t) (eq - o->env.v[i]) : strlen (o->env.v[i]);
      size_t k;
      for (k = 0; k < env->u.arr.n; k++)
        if (env->u.arr.items[k]->type == AB_J_STRING && strncmp (env->u.arr.items[k]->u.str.s, o->env.v[i], nl) == 0
            && env->u.arr.items[k]->u.str.s[nl] == '=')
          {
            ab_json_free (env->u.arr.items[k]);
            env->u.arr.items[k] = ab_json_new_str (o->env.v[i]);
            break;
          }
      if (k == env->u.arr.n)
        ab_json_append (env, ab_json_new_str (o->env.v[i]));
    }

  mounts = obj_child (doc, "mounts", AB_J_ARRAY);
  for (i = 0; i < AB_ARRAY_SIZE (host_view); i++)
    {
      /* Recursive flags: a host submount below /usr or /etc (a separate
         /usr/local, an autofs) must be read-only, nosuid and nodev too,
         not only the top of the bind. */
      static const char *const ro[] = { "rbind", "rro", "rnosuid", "rnodev" };
      char host[64];
      snprintf (host, sizeof host, "/%s", host_view[i]);
      if (lstat (host, &st) < 0 || !S_ISDIR (st.st_mode))
        continue; /* absent, or a symlink the skeleton already has */
      ab_json_append (mounts, mount_json (host, "bind", host, ro, AB_ARRAY_SIZE (ro)));
    }
  {
    static const char *const root_opts[] = { "nosuid", "nodev", "mode=700", "size=268435456" };
    ab_json_append (mounts, mount_json ("/root", "tmpfs", "tmpfs", root_opts, AB_ARRAY_SIZE (root_opts)));
  }
  {
    static const char *const run_opts[] = { "nosuid", "nodev", "noexec", "mode=755", "size=16777216" };
    ab_json_append (mounts, mount_json ("/run", "tmpfs", "tmpfs", run_opts, AB_ARRAY_SIZE (run_opts)));
  }
  if (o->workspace)
    {
      /* id-mapped: root inside writes files the host sees owned by the
         directory's owner, not by uid 100000.  A root-owned directory uses
         the container's own mapping (every id shows as itself); any other
         owner is mapped, alone, to the container's root, which holds no
         capability and could otherwise not write there at all. */
      static const char *const ws_opts[] = { "rbind", "rw", "nosuid", "nodev", "idmap" };
      static const char *const ws_opts_rootless[] = { "rbind", "rw", "nosuid", "nodev" };
      _cleanup_free_ char *real = realpath (o->workspace, NULL);
      struct ab_json *ws;
      if (real == NULL)
        return ab_error_setc (err, AB_EC_USAGE, errno, "workspace `%s`", o->workspace);
      if (stat (real, &st) < 0 || !S_ISDIR (st.st_mode))
        return ab_error_setc (err, AB_EC_USAGE, ENOTDIR, "workspace `%s` is not a directory", real);
      ws = mount_json ("/workspace", "bind", real, d.rootless ? ws_opts_rootless : ws_opts,
                       d.rootless ? AB_ARRAY_SIZE (ws_opts_rootless) : AB_ARRAY_SIZE (ws_opts));
      if (!d.rootless && (st.st_uid != 0 || st.st_gid != 0))
        {
          struct ab_json *l = ab_json_peek (doc, "linux");
          int64_t hu = root_host_id (l, "uidMappings"), hg = root_host_id (l, "gidMappings");
          if (hu < 0 || hg < 0)
            {
              ab_json_free (ws);
              return ab_error_setc (err, AB_EC_INTERNAL, 0, "default profile: no mapping for the container's root");
            }
          ab_json_set (ws, "uidMappings", one_id_mapping (st.st_uid, hu));
          ab_json_set (ws, "gidMappings", one_id_mapping (st.st_gid, hg));
        }
      ab_json_append (mounts, ws);
    }
  else
    {
      static const char *const ws_opts[] = { "nosuid", "nodev", "mode=755", "size=1073741824" };
      ab_json_append (mounts, mount_json ("/workspace", "tmpfs", "tmpfs", ws_opts, AB_ARRAY_SIZE (ws_opts)));
    }
  if (o->init)
    {
      static const char *const init_opts[] = { "bind", "ro", "nosuid", "nodev" };
      const char *init = ab_sandbox_init_path ();
      if (init == NULL)
        return ab_error_setc (err, AB_EC_SETUP, ENOENT,
                              "agentbox-init not found (set AGENTBOX_INIT or install agentbox)");
      ab_json_append (mounts, mount_json ("/.agentbox/init", "bind", init, init_opts, AB_ARRAY_SIZE (init_opts)));
    }

  linux_ = obj_child (doc, "linux", AB_J_OBJECT);
  masked = obj_child (linux_, "maskedPaths", AB_J_ARRAY);
  for (i = 0; i < AB_ARRAY_SIZE (etc_masked); i++)
    ab_json_append (masked, ab_json_new_str (etc_masked[i]));
  if (o->memory || o->pids)
    {
      res = obj_child (linux_, "resources", AB_J_OBJECT);
      if (o->memory)
        {
          struct ab_json *mem = obj_child (res, "memory", AB_J_OBJECT);
          ab_json_set (mem, "limit", ab_json_new_int ((int64_t) o->memory));
          ab_json_set (mem, "swap", ab_json_new_int ((int64_t) o->memory));
        }
      if (o->pids)
        ab_json_set (obj_child (res, "pids", AB_J_OBJECT), "limit", ab_json_new_int (o->pids));
    }
  if (o->annotations.n || o->allow_domains.n)
    {
      ann = obj_child (doc, "annotations", AB_J_OBJECT);
      for (i = 0; i < o->annotations.n; i++)
        ab_json_set (ann, o->annotations.v[i].key, ab_json_new_str (o->annotations.v[i].value));
      if (o->allow_domains.n)
        {
          /* --allow-domain: the domain allowlist of the egress proxy */
          size_t total = 1, k;
          char *joined;
          for (k = 0; k < o->allow_domains.n; k++)
            total += strlen (o->allow_domains.v[k]) + 1;
          joined = xzalloc (total);
          for (k = 0; k < o->allow_domains.n; k++)
            {
              if (k)
                strcat (joined, ",");
              strcat (joined, o->allow_domains.v[k]);
            }
          ab_json_set (ann, "dev.agentbox.net.allow-domains", ab_json_new_str (joined));
          free (joined);
        }
    }

  g = ab_gen_new (true);
  ab_gen_json (g, doc);
  buf = ab_gen_buf (g, &len);
  guard = ab_bundle_guard (o->root);
  if (ab_bundle_from_bytes (o->root, &guard, buf, len, out, err) < 0)
    return -1;
  if (o->workspace)
    {
      /* The workspace was resolved above (realpath): open it refusing any
         symlink, so one swapped in since cannot redirect the bind. */
      struct ab_spec *spec = (*out)->spec;
      for (i = 0; i < spec->n_mounts; i++)
        if (strcmp (spec->mounts[i].destination, "/workspace") == 0 && spec->mounts[i].bind)
          spec->mounts[i].source_nofollow = true;
    }
  return 0;
}
