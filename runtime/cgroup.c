/* The cgroupfs driver: host discovery, paths, create / enter / destroy,
 * state.  Resources are in cgroup-res.c, devices in cgroup-devices.c,
 * process control and statistics in cgroup-proc.c.
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
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>

#include "runtime/cgroup-internal.h"
#include "runtime/util.h"

#define MOUNTINFO_MAX (4u << 20)
#define SMALL_FILE_MAX (1u << 20)
#define CG_PATH_MAX 4096
#define CG_NAME_MAX 255

/* v1 controllers agentbox joins (any other super option of a v1 mount is a
   mount flag, or a named hierarchy "name=..." that holds no controller). */
static const char *const v1_controllers[] = {
  "cpu",     "cpuacct", "cpuset", "memory",     "devices", "freezer", "net_cls",
  "net_prio", "blkio",   "pids",   "perf_event", "hugetlb", "rdma",    "misc",
};

bool ab_cg_enter_parallel = false;

/* ---- small helpers -------------------------------------------------------- */

bool
ab_cg_list_has (const char *list, const char *item)
{
  size_t n = strlen (item);
  const char *p = list;

  while (p && *p)
    {
      const char *end = strchr (p, ',');
      size_t len = end ? (size_t) (end - p) : strlen (p);
      if (len == n && memcmp (p, item, n) == 0)
        return true;
      p = end ? end + 1 : NULL;
    }
  return false;
}

static size_t
list_count (const char *list)
{
  size_t n = 0;
  const char *p;

  if (list == NULL || *list == '\0')
    return 0;
  for (n = 1, p = list; *p; p++)
    n += *p == ',';
  return n;
}

/* Same set of comma-joined names, in any order. */
static bool
list_same_set (const char *a, const char *b)
{
  const char *p = a;

  if (list_count (a) != list_count (b))
    return false;
  while (p && *p)
    {
      const char *end = strchr (p, ',');
      _cleanup_free_ char *item = end ? xstrndup (p, (size_t) (end - p)) : xstrdup (p);
      if (!ab_cg_list_has (b, item))
        return false;
      p = end ? end + 1 : NULL;
    }
  return true;
}

static bool
is_v1_controller (const char *s)
{
  size_t i;

  for (i = 0; i < AB_ARRAY_SIZE (v1_controllers); i++)
    if (strcmp (s, v1_controllers[i]) == 0)
      return true;
  return false;
}

/* Undo mountinfo's octal escapes (\040 for space, \011, \012, \134). */
static char *
unescape (const char *s)
{
  char *out = xmalloc (strlen (s) + 1), *o = out;

  while (*s)
    {
      if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7')
        {
          *o++ = (char) (((s[1] - '0') << 6) | ((s[2] - '0') << 3) | (s[3] - '0'));
          s += 4;
        }
      else
        *o++ = *s++;
    }
  *o = '\0';
  return out;
}

/* Whether `dir` is `top` or below it, component-wise ("/a" covers "/a/b",
   not "/ab"). */
static bool
path_covers (const char *top, const char *dir)
{
  size_t n = strlen (top);

  if (strcmp (top, "/") == 0)
    return dir[0] == '/';
  return strncmp (top, dir, n) == 0 && (dir[n] == '\0' || dir[n] == '/');
}

void
ab_cg_host_free (struct ab_cg_host *h)
{
  size_t i;

  for (i = 0; i < h->n_mounts; i++)
    {
      free (h->mounts[i].controllers);
      free (h->mounts[i].root);
      free (h->mounts[i].mountpoint);
    }
  for (i = 0; i < h->n_own; i++)
    {
      free (h->own[i].controllers);
      free (h->own[i].path);
    }
  free (h->mounts);
  free (h->own);
  memset (h, 0, sizeof *h);
}

/* ---- /proc/self/mountinfo --------------------------------------------------- */

/* Controllers of a v1 mount from its super options ("rw,cpu,cpuacct"). */
static char *
v1_mount_controllers (const char *superopts)
{
  _cleanup_free_ char *opts = xstrdup (superopts);
  struct ab_strv names = { 0 };
  char *save = NULL, *tok, *joined;
  size_t i, len = 1;

  for (tok = strtok_r (opts, ",", &save); tok; tok = strtok_r (NULL, ",", &save))
    if (is_v1_controller (tok) || ab_str_has_prefix (tok, "name="))
      ab_strv_push (&names, tok);
  for (i = 0; i < names.n; i++)
    len += strlen (names.v[i]) + 1;
  joined = xzalloc (len);
  for (i = 0; i < names.n; i++)
    {
      if (i)
        strcat (joined, ",");
      strcat (joined, names.v[i]);
    }
  ab_strv_free (&names);
  return joined;
}

/* Split one mountinfo line in place: "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS
   [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS".  Returns false on a malformed line. */
static bool
split_mountinfo_line (char *line, char **root, char **mountpoint, char **fstype, char **superopts)
{
  char *f[6], *save = NULL, *tok;
  size_t i;

  for (i = 0; i < 6; i++)
    if ((f[i] = strtok_r (i ? NULL : line, " ", &save)) == NULL)
      return false;
  /* Optional fields ("shared:1 master:2 ...") run up to the lone "-". */
  while ((tok = strtok_r (NULL, " ", &save)) != NULL && strcmp (tok, "-") != 0)
    ;
  if (tok == NULL)
    return false;
  *fstype = strtok_r (NULL, " ", &save);
  if (*fstype == NULL || strtok_r (NULL, " ", &save) == NULL)
    return false;
  *superopts = strtok_r (NULL, " ", &save);
  if (*superopts == NULL)
    *superopts = (char *) "";
  *root = f[3];
  *mountpoint = f[4];
  return true;
}

int
ab_cg_parse_mountinfo (const char *text, struct ab_cg_host *h, ab_error_t *err)
{
  _cleanup_free_ char *copy = xstrdup (text);
  _cleanup_strv_ struct ab_strv all = { 0 }; /* every mountpoint, in order */
  _cleanup_free_ size_t *at = NULL;          /* index in `all` of each cgroup mount */
  char *save = NULL, *line;
  size_t i, j, n = 0, lineno = 0;

  for (line = strtok_r (copy, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      char *root, *mp, *fstype, *superopts;
      struct ab_cg_mount m = { 0 };

      lineno++;
      if (!split_mountinfo_line (line, &root, &mp, &fstype, &superopts))
        return ab_error_set (err, 0, "/proc/self/mountinfo: line %zu is malformed", lineno);
      ab_strv_push_owned (&all, unescape (mp));
      if (strcmp (fstype, "cgroup2") == 0)
        m.v2 = true;
      else if (strcmp (fstype, "cgroup") != 0)
        continue;
      m.controllers = m.v2 ? xstrdup ("") : v1_mount_controllers (superopts);
      m.root = unescape (root);
      m.mountpoint = xstrdup (all.v[all.n - 1]);
      h->mounts = xreallocarray (h->mounts, h->n_mounts + 1, sizeof *h->mounts);
      h->mounts[h->n_mounts++] = m;
      at = xreallocarray (at, h->n_mounts, sizeof *at);
      at[h->n_mounts - 1] = all.n - 1;
    }

  /* A later mount on the same directory or on one of its parents hides a
     mount (a tmpfs over /sys/fs/cgroup, then fresh cgroup mounts below it):
     keep only the mounts a path lookup reaches. */
  for (i = 0; i < h->n_mounts; i++)
    {
      bool hidden = false;
      for (j = at[i] + 1; j < all.n && !hidden; j++)
        hidden = path_covers (all.v[j], h->mounts[i].mountpoint);
      if (hidden)
        {
          free (h->mounts[i].controllers);
          free (h->mounts[i].root);
          free (h->mounts[i].mountpoint);
          continue;
        }
      h->mounts[n++] = h->mounts[i];
    }
  h->n_mounts = n;
  return 0;
}

/* ---- /proc/self/cgroup ------------------------------------------------------ */

int
ab_cg_parse_proc_cgroup (const char *text, struct ab_cg_host *h, ab_error_t *err)
{
  _cleanup_free_ char *copy = xstrdup (text);
  char *save = NULL, *line;
  size_t lineno = 0;

  for (line = strtok_r (copy, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      char *c1 = strchr (line, ':'), *c2 = c1 ? strchr (c1 + 1, ':') : NULL;
      struct ab_cg_own o = { 0 };

      lineno++;
      /* "ID:CONTROLLERS:PATH"; the path may itself contain ':'. */
      if (c2 == NULL || c2[1] != '/')
        return ab_error_set (err, 0, "/proc/self/cgroup: line %zu is malformed", lineno);
      *c1 = *c2 = '\0';
      o.v2 = strcmp (line, "0") == 0 && c1 + 1 == c2;
      o.controllers = xstrdup (c1 + 1);
      /* A cgroup removed under us reads "/path (deleted)". */
      if (ab_str_has_suffix (c2 + 1, " (deleted)"))
        o.path = xstrndup (c2 + 1, strlen (c2 + 1) - strlen (" (deleted)"));
      else
        o.path = xstrdup (c2 + 1);
      h->own = xreallocarray (h->own, h->n_own + 1, sizeof *h->own);
      h->own[h->n_own++] = o;
    }
  return 0;
}

int
ab_cg_host_read (struct ab_cg_host *h, ab_error_t *err)
{
  _cleanup_free_ char *mi = NULL, *pc = NULL;

  if (ab_read_file_at (AT_FDCWD, "/proc/self/mountinfo", MOUNTINFO_MAX, &mi, NULL, err) < 0
      || ab_read_file_at (AT_FDCWD, "/proc/self/cgroup", SMALL_FILE_MAX, &pc, NULL, err) < 0)
    return -1;
  if (ab_cg_parse_mountinfo (mi, h, err) < 0 || ab_cg_parse_proc_cgroup (pc, h, err) < 0)
    {
      ab_cg_host_free (h);
      return -1;
    }
  return 0;
}

static bool
has_real_v1_controller (const char *controllers)
{
  const char *p = controllers;

  while (p && *p)
    {
      const char *end = strchr (p, ',');
      _cleanup_free_ char *item = end ? xstrndup (p, (size_t) (end - p)) : xstrdup (p);
      if (is_v1_controller (item))
        return true;
      p = end ? end + 1 : NULL;
    }
  return false;
}

int
ab_cg_host_mode_of (const struct ab_cg_host *h)
{
  bool v1 = false, v2 = false;
  size_t i;

  for (i = 0; i < h->n_mounts; i++)
    {
      if (h->mounts[i].v2 && strcmp (h->mounts[i].mountpoint, "/sys/fs/cgroup") == 0)
        return AB_CGROUP_V2;
      if (h->mounts[i].v2)
        v2 = true;
      else if (has_real_v1_controller (h->mounts[i].controllers))
        v1 = true;
    }
  if (v1)
    return v2 ? AB_CGROUP_HYBRID : AB_CGROUP_V1;
  return v2 ? AB_CGROUP_V2 : AB_CGROUP_NONE;
}

int
ab_cgroup_host_mode (void)
{
  struct ab_cg_host h = { 0 };
  ab_error_t err;
  int mode;

  if (ab_cg_host_read (&h, &err) < 0)
    return AB_CGROUP_NONE;
  mode = ab_cg_host_mode_of (&h);
  ab_cg_host_free (&h);
  return mode;
}

/* ---- paths ---------------------------------------------------------------- */

char *
ab_cg_path_to_dir (const char *mountpoint, const char *root, const char *path)
{
  const char *rest;

  if (!path_covers (root, path))
    return NULL;
  rest = strcmp (root, "/") == 0 ? path : path + strlen (root);
  if (strcmp (rest, "/") == 0)
    rest = "";
  return xasprintf ("%s%s", strcmp (mountpoint, "/") == 0 ? "" : mountpoint, rest);
}

/* Append the components of `rel` to `base`, checking each. */
static int
join_checked (const char *base, const char *rel, const char *what, char **out, ab_error_t *err)
{
  size_t len = strlen (base), cap = len + strlen (rel) + 2;
  char *buf = xmalloc (cap);
  const char *p = rel;

  memcpy (buf, base, len + 1);
  if (len == 1) /* base "/" */
    len = 0;
  while (*p)
    {
      const char *end = strchr (p, '/');
      size_t n = end ? (size_t) (end - p) : strlen (p), k;

      if (n > 0)
        {
          if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
            {
              free (buf);
              /* ".." would climb out of the hierarchy part it names. */
              return ab_error_setc (err, AB_EC_CONFIG, 0, "%s: `%s`: \".\" and \"..\" are not allowed", what, rel);
            }
          if (n > CG_NAME_MAX)
            {
              free (buf);
              return ab_error_setc (err, AB_EC_CONFIG, 0, "%s: `%s`: a component is longer than %d bytes", what,
                                    rel, CG_NAME_MAX);
            }
          for (k = 0; k < n; k++)
            if ((unsigned char) p[k] < 0x20 || p[k] == 0x7f)
              {
                free (buf);
                return ab_error_setc (err, AB_EC_CONFIG, 0, "%s: control characters are not allowed", what);
              }
          buf[len++] = '/';
          memcpy (buf + len, p, n);
          len += n;
          buf[len] = '\0';
        }
      if (end == NULL)
        break;
      p = end + 1;
    }
  if (len == 0)
    strcpy (buf, "/");
  if (strlen (buf) > CG_PATH_MAX)
    {
      free (buf);
      return ab_error_setc (err, AB_EC_CONFIG, 0, "%s: longer than %d bytes", what, CG_PATH_MAX);
    }
  *out = buf;
  return 0;
}

int
ab_cg_container_path (const char *cgroups_path, const char *id, const char *root, const char *own, char **out,
                      ab_error_t *err)
{
  _cleanup_free_ char *name = NULL;
  char *p = NULL;

  if (cgroups_path == NULL || cgroups_path[0] == '\0')
    {
      if (id == NULL || id[0] == '\0' || strchr (id, '/') != NULL)
        return ab_error_setc (err, AB_EC_CONFIG, 0, "container id `%s` cannot name a cgroup", id ? id : "");
      name = xasprintf ("agentbox-%s", id);
      if (join_checked (own, name, "container id", &p, err) < 0)
        return -1;
    }
  else if (cgroups_path[0] == '/')
    {
      if (join_checked (root, cgroups_path, "linux.cgroupsPath", &p, err) < 0)
        return -1;
      if (strcmp (p, root) == 0)
        {
          free (p);
          return ab_error_setc (err, AB_EC_CONFIG, 0,
                                "linux.cgroupsPath: `%s` names the root of the hierarchy, which cannot hold limits",
                                cgroups_path);
        }
    }
  else if (join_checked (own, cgroups_path, "linux.cgroupsPath", &p, err) < 0)
    return -1;
  else if (strcmp (p, own) == 0)
    {
      free (p);
      return ab_error_setc (err, AB_EC_CONFIG, 0, "linux.cgroupsPath: `%s` names agentbox's own cgroup",
                            cgroups_path);
    }
  *out = p;
  return 0;
}

/* ---- interface files --------------------------------------------------------- */

int
ab_cg_read (struct ab_cg_hier *h, const char *file, char **out, ab_error_t *err)
{
  if (h->dfd < 0)
    return ab_error_set (err, ENOENT, "read `%s/%s`", h->dir, file);
  if (ab_read_file_at (h->dfd, file, SMALL_FILE_MAX, out, NULL, err) < 0)
    return ab_error_set (err, err->errnum, "read `%s/%s`", h->dir, file);
  return 0;
}

int
ab_cg_write (struct ab_cg_hier *h, const char *file, const char *value, const char *what, ab_error_t *err)
{
  _cleanup_close_ int fd = -1;
  size_t len = strlen (value);

  fd = h->dfd < 0 ? -1 : openat (h->dfd, file, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
  if (fd < 0)
    return ab_error_setc (err, AB_EC_RESOURCE, h->dfd < 0 ? ENOENT : errno, "%s: open `%s/%s`", what, h->dir,
                          file);
  /* One write(2) per value: the kernel parses each write as one setting. */
  if (ab_write_all (fd, value, len) < 0)
    return ab_error_setc (err, AB_EC_RESOURCE, errno, "%s: write `%.64s` to `%s/%s`", what, value, h->dir, file);
  return 0;
}

bool
ab_cg_has_file (struct ab_cg_hier *h, const char *file)
{
  return h->dfd >= 0 && faccessat (h->dfd, file, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

int
ab_cg_read_key (struct ab_cg_hier *h, const char *file, const char *key, uint64_t *out)
{
  _cleanup_free_ char *text = NULL;
  ab_error_t err;
  size_t klen = strlen (key);
  char *line, *save = NULL;

  if (ab_cg_read (h, file, &text, &err) < 0)
    return -1;
  for (line = strtok_r (text, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    if (strncmp (line, key, klen) == 0 && line[klen] == ' ')
      return ab_parse_u64 (line + klen + 1, out);
  return -1;
}

struct ab_cg_hier *
ab_cg_v1 (struct ab_cgroup *cg, const char *controller)
{
  size_t i;

  for (i = 0; i < cg->n; i++)
    if (!cg->h[i].v2 && ab_cg_list_has (cg->h[i].controllers, controller) && cg->h[i].dfd >= 0)
      return &cg->h[i];
  return NULL;
}

char *
ab_cg_v2_available (struct ab_cgroup *cg)
{
  char *text = NULL;
  ab_error_t err;

  if (cg->v2 == NULL || ab_cg_read (cg->v2, "cgroup.controllers", &text, &err) < 0)
    return xstrdup ("");
  text[strcspn (text, "\n")] = '\0';
  return text;
}

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
      name = xstrndup (p, (size_t) (end - p));
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

static size_t
path_depth (const struct ab_cg_hier *h)
{
  const char *p = h->path + (strcmp (h->root, "/") == 0 ? 0 : strlen (h->root));
  size_t n = 0;

  for (; *p; p++)
    if (*p != '/' && (p[-1] == '/'))
      n++;
  return n;
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
        return xstrndup (p, (size_t) (end - p));
      p = end;
    }
}

/* A fresh v1 cpuset is empty (no cpus, no mems) and refuses tasks until
   both are set: inherit the parent's. */
static int
cpuset_inherit (int parent, int dir, const char *path, ab_error_t *err)
{
  static const char *const files[] = { "cpuset.cpus", "cpuset.mems" };
  size_t i;

  for (i = 0; i < AB_ARRAY_SIZE (files); i++)
    {
      _cleanup_free_ char *cur = NULL, *val = NULL;
      if (ab_read_file_at (dir, files[i], 4096, &cur, NULL, err) < 0)
        return ab_error_prefix (err, "`%s`", path);
      if (cur[0] != '\n' && cur[0] != '\0')
        continue;
      if (ab_read_file_at (parent, files[i], 4096, &val, NULL, err) < 0)
        return ab_error_prefix (err, "parent of `%s`", path);
      if (ab_write_file_at (dir, files[i], val, strlen (val), err) < 0)
        return ab_error_prefix (err, "`%s`", path);
    }
  return 0;
}

/* Make the missing directories of h->path and open the leaf. */
static int
hier_mkdir (struct ab_cg_hier *h, ab_error_t *err)
{
  size_t depth = path_depth (h), i;
  _cleanup_close_ int fd = open (h->mountpoint, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  bool cpuset = !h->v2 && ab_cg_list_has (h->controllers, "cpuset");

  if (fd < 0)
    return ab_error_set (err, errno, "open cgroup mount `%s`", h->mountpoint);
  for (i = 0; i < depth; i++)
    {
      _cleanup_free_ char *name = component (h, i);
      int next = openat (fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);

      if (next < 0 && errno == ENOENT)
        {
          if (mkdirat (fd, name, 0755) < 0)
            return ab_error_set (err, errno, "mkdir `%s/%s`", h->mountpoint, name);
          h->created++;
          next = openat (fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
          if (next >= 0 && cpuset && cpuset_inherit (fd, next, h->dir, err) < 0)
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

/* Remove the directories of h we created, deepest first. */
static int
hier_rmdir (struct ab_cg_hier *h, ab_error_t *err)
{
  size_t depth = path_depth (h);

  if (h->dfd >= 0)
    {
      if (h->created > 0)
        rmdir_children (h->dfd, 0);
      close (h->dfd);
      h->dfd = -1;
    }
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
              return 0;
            }
          return ab_error_set (err, errno, "open parent of `%s`", h->dir);
        }
      if (rmdir_retry (parent, name) < 0)
        return ab_error_set (err, errno, "rmdir cgroup `%s` (level %zu)", h->dir, level);
      h->created--;
      depth--;
    }
  return 0;
}

/* ---- v2 controller delegation -------------------------------------------------- */

static bool
word_in (const char *words, const char *w)
{
  size_t n = strlen (w);
  const char *p = words;

  while ((p = strstr (p, w)) != NULL)
    {
      if ((p == words || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' ' || p[n] == '\n'))
        return true;
      p += n;
    }
  return false;
}

/* Enable each controller in cgroup.subtree_control from the first existing
   ancestor down to the leaf's parent. */
static int
v2_enable (struct ab_cg_hier *h, const struct ab_strv *ctrls, const struct ab_strv *why, ab_error_t *err)
{
  size_t depth = path_depth (h), first, level, i;

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
          if (word_in (enabled, ctrls->v[i]))
            continue;
          if (!word_in (avail, ctrls->v[i]))
            return ab_error_setc (err, AB_EC_RESOURCE, 0,
                                  "%s: the `%s` controller is not available in `%s/cgroup.controllers`",
                                  why->v[i], ctrls->v[i], dir);
          plus = xasprintf ("+%s", ctrls->v[i]);
          if (ab_write_file_at (fd, "cgroup.subtree_control", plus, strlen (plus), err) < 0)
            {
              int e = err->errnum;
              return ab_error_setc (err, AB_EC_RESOURCE, e, "%s: cannot enable the `%s` controller in `%s/%s`%s",
                                    why->v[i], ctrls->v[i], dir, "cgroup.subtree_control",
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
    }
  free (cg->h);
  free (cg);
}

static void
cgroup_freep (struct ab_cgroup **cg)
{
  ab_cgroup_free (*cg);
}

static struct ab_cg_hier *
hier_add (struct ab_cgroup *cg)
{
  struct ab_cg_hier *h;

  cg->h = xreallocarray (cg->h, cg->n + 1, sizeof *cg->h);
  h = &cg->h[cg->n++];
  memset (h, 0, sizeof *h);
  h->dfd = -1;
  return h;
}

static void
fix_v2_pointer (struct ab_cgroup *cg)
{
  size_t i;

  cg->v2 = NULL;
  for (i = 0; i < cg->n; i++)
    if (cg->h[i].v2)
      cg->v2 = &cg->h[i];
}

/* Our own cgroup in the hierarchy of mount m, or NULL. */
static const char *
own_path (const struct ab_cg_host *host, const struct ab_cg_mount *m)
{
  size_t i;

  for (i = 0; i < host->n_own; i++)
    if (m->v2 ? host->own[i].v2 : (!host->own[i].v2 && list_same_set (host->own[i].controllers, m->controllers)))
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

  if (m->v2 ? cg->mode == AB_CGROUP_V1 : (cg->mode == AB_CGROUP_V2 || !has_real_v1_controller (m->controllers)))
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
      h = hier_add (cg);
      h->v2 = m->v2;
      h->controllers = xstrdup (m->controllers);
      h->mountpoint = xstrdup (m->mountpoint);
      h->root = xstrdup (m->root);
      if (ab_cg_container_path (cgroups_path, id, m->root, own_path (host, m), &h->path, err) < 0)
        return -1;
      h->dir = ab_cg_path_to_dir (m->mountpoint, m->root, h->path);
    }
  fix_v2_pointer (cg);
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

      if (h->created > 0)
        continue;
      if (ab_cg_read (h, "cgroup.procs", &procs, err) < 0)
        return -1;
      if (procs[0] != '\0')
        return ab_error_setc (err, AB_EC_STATE, 0, "cgroup `%s` already has processes", h->dir);
      if (!h->v2 && ab_cg_list_has (h->controllers, "freezer") && ab_cg_read (h, "freezer.state", &st, err) == 0
          && !ab_str_has_prefix (st, "THAWED"))
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

int
ab_cgroup_create (const char *cgroups_path, const char *id, const struct ab_resources *resources,
                  struct ab_cgroup **out, ab_error_t *err)
{
  _cleanup_ (cgroup_freep) struct ab_cgroup *cg = xzalloc (sizeof *cg);
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
      return ab_error_set (err, 0, "no cgroup filesystem is mounted (see /proc/self/mountinfo)");
    }
  r = plan (cg, &host, cgroups_path, id, err);
  ab_cg_host_free (&host);
  if (r < 0)
    return -1;

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
      || ab_cg_devices_apply (cg, resources ? resources->devices : NULL, resources ? resources->n_devices : 0, err)
             < 0)
    {
      rollback (cg);
      return -1;
    }
  *out = ab_steal_ptr (&cg);
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
  if (ab_cg_apply (cg, resources, true, err) < 0)
    return -1;
  if (resources->n_devices > 0)
    return ab_cg_devices_apply (cg, resources->devices, resources->n_devices, err);
  return 0;
}

int
ab_cgroup_destroy (struct ab_cgroup *cg, ab_error_t *err)
{
  size_t i;
  int r = 0;

  r = ab_cgroup_populated (cg, err);
  if (r < 0)
    return -1;
  if (r > 0)
    return ab_error_setc (err, AB_EC_STATE, EBUSY, "cgroup `%s` still has processes", ab_cg_tracking (cg)->dir);
  for (i = cg->n; i-- > 0;)
    if (hier_rmdir (&cg->h[i], err) < 0)
      return -1;
  return 0;
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

/* ---- enter -------------------------------------------------------------------- */

struct enter_job
{
  struct ab_cg_hier *h;
  char pid[16];
  ab_error_t err;
  int r;
};

static void *
enter_one (void *arg)
{
  struct enter_job *j = arg;

  j->r = ab_cg_write (j->h, "cgroup.procs", j->pid, "join cgroup", &j->err);
  return NULL;
}

int
ab_cgroup_enter (struct ab_cgroup *cg, pid_t pid, bool v2_done, ab_error_t *err)
{
  _cleanup_free_ struct enter_job *jobs = xcalloc (cg->n, sizeof *jobs);
  _cleanup_free_ pthread_t *th = xcalloc (cg->n, sizeof *th);
  _cleanup_free_ bool *started = xcalloc (cg->n, sizeof *started);
  size_t i, n = 0;

  for (i = 0; i < cg->n; i++)
    {
      if (cg->h[i].v2 && v2_done)
        continue;
      jobs[n].h = &cg->h[i];
      snprintf (jobs[n].pid, sizeof jobs[n].pid, "%d", (int) pid);
      n++;
    }
  /* Each v1 write waits for an RCU grace period; threads let them overlap.
     A thread that cannot start runs its write here instead. */
  for (i = 0; i < n; i++)
    {
      if (ab_cg_enter_parallel && n > 1)
        started[i] = pthread_create (&th[i], NULL, enter_one, &jobs[i]) == 0;
      if (!started[i])
        enter_one (&jobs[i]);
    }
  for (i = 0; i < n; i++)
    if (started[i])
      pthread_join (th[i], NULL);
  for (i = 0; i < n; i++)
    if (jobs[i].r < 0)
      {
        *err = jobs[i].err;
        return ab_error_prefix (err, "move pid %d", (int) pid);
      }
  return 0;
}

/* ---- state ---------------------------------------------------------------------- */

static const char *const mode_names[] = {
  [AB_CGROUP_NONE] = "none",
  [AB_CGROUP_V1] = "v1",
  [AB_CGROUP_HYBRID] = "hybrid",
  [AB_CGROUP_V2] = "v2",
};

void
ab_cgroup_gen (struct ab_cgroup *cg, struct ab_gen *g)
{
  size_t i;

  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "mode", mode_names[cg->mode]);
  ab_gen_key (g, "hierarchies");
  ab_gen_arr_open (g);
  for (i = 0; i < cg->n; i++)
    {
      ab_gen_obj_open (g);
      ab_gen_kv_bool (g, "v2", cg->h[i].v2);
      ab_gen_kv_str (g, "controllers", cg->h[i].controllers);
      ab_gen_kv_str (g, "mountpoint", cg->h[i].mountpoint);
      ab_gen_kv_str (g, "root", cg->h[i].root);
      ab_gen_kv_str (g, "path", cg->h[i].path);
      ab_gen_kv_u64 (g, "created", cg->h[i].created);
      ab_gen_obj_close (g);
    }
  ab_gen_arr_close (g);
  ab_gen_obj_close (g);
}

static bool
clean_absolute (const char *p)
{
  return ab_path_is_clean_absolute (p) && strlen (p) <= CG_PATH_MAX;
}

static int
load_hier (struct ab_jctx *c, struct ab_json *o, struct ab_cg_hier *h)
{
  uint64_t created = 0;

  if (ab_jget_bool (c, o, "v2", AB_REQUIRED, &h->v2) < 0
      || ab_jget_str (c, o, "controllers", AB_REQUIRED, &h->controllers) < 0
      || ab_jget_str (c, o, "mountpoint", AB_REQUIRED, &h->mountpoint) < 0
      || ab_jget_str (c, o, "root", AB_REQUIRED, &h->root) < 0
      || ab_jget_str (c, o, "path", AB_REQUIRED, &h->path) < 0
      || ab_jget_u64 (c, o, "created", AB_REQUIRED, 4096, &created) < 0)
    return -1;
  /* The state file decides what delete removes: hold it to the same rules
     as a fresh plan, so an edited file cannot aim rmdir elsewhere. */
  if (!clean_absolute (h->mountpoint) || !clean_absolute (h->root) || !clean_absolute (h->path)
      || !path_covers (h->root, h->path))
    return ab_jerr (c, "paths must be clean and absolute, the path below the root");
  h->dir = ab_cg_path_to_dir (h->mountpoint, h->root, h->path);
  if (created > path_depth (h))
    return ab_jerr (c, "created: %llu is more than the path has components", (unsigned long long) created);
  h->created = created;
  h->dfd = open (h->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (h->dfd < 0 && errno != ENOENT)
    return ab_error_set (c->err, errno, "open cgroup `%s`", h->dir);
  return 0;
}

int
ab_cgroup_load (struct ab_json *obj, struct ab_cgroup **out, ab_error_t *err)
{
  _cleanup_ (cgroup_freep) struct ab_cgroup *cg = xzalloc (sizeof *cg);
  _cleanup_free_ char *mode = NULL;
  struct ab_jctx c;
  struct ab_json *arr;
  size_t mark, i, k;

  ab_jctx_init (&c, "state.json", err);
  mark = ab_jpush_key (&c, "cgroup");
  if (obj == NULL || obj->type != AB_J_OBJECT)
    return ab_jerr (&c, "must be an object");
  if (ab_jget_str (&c, obj, "mode", AB_REQUIRED, &mode) < 0)
    return -1;
  for (k = 0; k < AB_ARRAY_SIZE (mode_names); k++)
    if (strcmp (mode, mode_names[k]) == 0)
      break;
  if (k == AB_ARRAY_SIZE (mode_names) || k == AB_CGROUP_NONE)
    return ab_jerr (&c, "mode: unknown `%s`", mode);
  cg->mode = (int) k;
  if (ab_jenter (&c, obj, "hierarchies", AB_J_ARRAY, AB_REQUIRED, &arr, &mark) < 0)
    return -1;
  for (i = 0; i < arr->u.arr.n; i++)
    {
      size_t m = ab_jpush_index (&c, i);
      struct ab_json *o = arr->u.arr.items[i];
      if (o->type != AB_J_OBJECT)
        return ab_jerr (&c, "must be an object");
      if (load_hier (&c, o, hier_add (cg)) < 0)
        return -1;
      ab_jpop (&c, m);
    }
  fix_v2_pointer (cg);
  if (cg->n == 0)
    return ab_jerr (&c, "no hierarchy");
  *out = ab_steal_ptr (&cg);
  return 0;
}
