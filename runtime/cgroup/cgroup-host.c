/* Host discovery for the cgroupfs driver: which cgroup filesystems are
 * mounted where (/proc/self/mountinfo), which cgroup we are in
 * (/proc/self/cgroup), the mode that makes, and the container's path in a
 * hierarchy (config-linux.md "Cgroups Path").  Pure string work apart from
 * reading the two files, so the unit tests can feed it any host.
 */
#include "config.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <sys/syscall.h>

#include "runtime/cgroup/cgroup-internal.h"
#include "base/kernel-compat.h"
#include "base/util.h"

#define MOUNTINFO_MAX (4u << 20)
#define SMALL_FILE_MAX (1u << 20)
#define CG_NAME_MAX 255

/* v1 controllers agentbox joins (any other super option of a v1 mount is a
   mount flag, or a named hierarchy "name=..." that holds no controller). */
static const char *const v1_controllers[] = {
  "cpu",      "cpuacct", "cpuset", "memory",     "devices", "freezer", "net_cls",
  "net_prio", "blkio",   "pids",   "perf_event", "hugetlb", "rdma",    "misc",
};

/* ---- small helpers -------------------------------------------------------- */

bool
ab_cg_list_has (const char *list, const char *item)
{
  size_t n = strlen (item);
  const char *p = list;

  while (p && *p)
    {
      const char *end = strchr (p, ',');
      size_t len = end ? (size_t)(end - p) : strlen (p);
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
bool
ab_cg_list_same_set (const char *a, const char *b)
{
  const char *p = a;

  if (list_count (a) != list_count (b))
    return false;
  while (p && *p)
    {
      const char *end = strchr (p, ',');
      _cleanup_free_ char *item = end ? xstrndup (p, (size_t)(end - p)) : xstrdup (p);
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
      if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0'
          && s[3] <= '7')
        {
          *o++ = (char)(((s[1] - '0') << 6) | ((s[2] - '0') << 3) | (s[3] - '0'));
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
bool
ab_cg_path_covers (const char *top, const char *dir)
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
    *superopts = (char *)"";
  *root = f[3];
  *mountpoint = f[4];
  return true;
}

/* Parse the text of /proc/self/mountinfo and of /proc/self/cgroup. */
static int
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
        hidden = ab_cg_path_covers (all.v[j], h->mounts[i].mountpoint);
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

static int
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

/* Mount one hierarchy of ours at /sys/fs/cgroup/NAME (v1: its controllers,
   a named one at the part after "name=") or, for v2, at `v2_at`. */
static void
mount_own_hierarchy (const struct ab_cg_own *o, const char *v2_at)
{
  _cleanup_free_ char *dir = NULL;
  const char *name = o->controllers;

  if (o->v2)
    {
      if (strcmp (v2_at, "/sys/fs/cgroup") != 0)
        mkdir (v2_at, 0555);
      mount ("cgroup2", v2_at, "cgroup2", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
      return;
    }
  if (*name == '\0')
    return;
  if (ab_str_has_prefix (name, "name="))
    name += strlen ("name=");
  dir = xasprintf ("/sys/fs/cgroup/%s", name);
  mkdir (dir, 0555);
  mount ("cgroup", dir, "cgroup", MS_NOSUID | MS_NODEV | MS_NOEXEC, o->controllers);
}

/* A mount namespace without cgroup filesystems: `ip netns exec` unshares
   one and mounts a fresh sysfs over /sys, hiding /sys/fs/cgroup.  agentbox
   then moves itself (still single-threaded: what it starts inherits it)
   into a mount namespace of its own -- made a slave first, so nothing
   mounted here propagates back to the caller's -- and mounts the
   hierarchies /proc/self/cgroup names where a host keeps them (v1
   controllers and named hierarchies at /sys/fs/cgroup/NAME, v2 at
   /sys/fs/cgroup, or at /sys/fs/cgroup/unified beside v1).  Mounted from
   our own cgroup namespace, each shows the root our /proc/self/cgroup
   paths are relative to; the paths are the host's, so a container created
   here is found by a `delete` run outside, and the other way round.  The
   caller's namespace is left as it was; ours ends with us.  Without the
   privilege to do it nothing changes, and the cgroup driver reports that
   no cgroup filesystem is mounted. */
void
ab_cg_private_view (void)
{
  _cleanup_free_ char *pc = NULL;
  struct ab_cg_host h = { 0 };
  ab_error_t ignored = { 0 };
  struct statfs sf;
  bool v1 = false;

  /* One statfs on every start: a host's /sys/fs/cgroup is a cgroup2 mount
     or the tmpfs holding the v1 ones, never the bare sysfs directory. */
  if (statfs ("/sys/fs/cgroup", &sf) < 0 || sf.f_type != SYSFS_MAGIC)
    return;
  if (ab_read_file_at (AT_FDCWD, "/proc/self/cgroup", SMALL_FILE_MAX, &pc, NULL, &ignored) < 0
      || ab_cg_parse_proc_cgroup (pc, &h, &ignored) < 0)
    return;
  for (size_t i = 0; i < h.n_own; i++)
    v1 = v1 || ab_cg_has_real_v1_controller (h.own[i].controllers);
  if (unshare (CLONE_NEWNS) == 0 && mount (NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) == 0
      && (!v1 || mount ("tmpfs", "/sys/fs/cgroup", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=755") == 0))
    for (size_t i = 0; i < h.n_own; i++)
      mount_own_hierarchy (&h.own[i], v1 ? "/sys/fs/cgroup/unified" : "/sys/fs/cgroup");
  ab_cg_host_free (&h);
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

/* The head of statmount(2)'s answer (linux/mount.h, Linux 6.8), the
   strings after it. */
struct statmount_head
{
  uint32_t size, mnt_opts;
  uint64_t mask;
  uint32_t sb_dev_major, sb_dev_minor;
  uint64_t sb_magic;
  uint32_t sb_flags, fs_type;
  uint64_t mnt_id, mnt_parent_id;
  uint32_t mnt_id_old, mnt_parent_id_old;
  uint64_t mnt_attr, mnt_propagation, mnt_peer_group, mnt_master, propagate_from;
  uint32_t mnt_root, mnt_point;
  uint64_t spare[50];
  char str[];
};

/* The cgroup2 mount at `at` as a line of mountinfo would give it (root and
   mount point), from statmount(2).  false: none there, or no statmount;
   then m is untouched. */
static bool
v2_mount_at (const char *at, struct ab_cg_mount *m)
{
  struct
  {
    uint32_t size, spare;
    uint64_t mnt_id, param;
  } req = { .size = 24, .param = STATMOUNT_SB_BASIC | STATMOUNT_MNT_ROOT | STATMOUNT_MNT_POINT };
  _cleanup_close_ int fd = open (at, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  _cleanup_free_ struct statmount_head *sm = NULL;
  size_t len = sizeof *sm + 2 * CG_PATH_MAX;
  struct statx stx;

  if (fd < 0 || statx (fd, "", AT_EMPTY_PATH, STATX_MNT_ID_UNIQUE, &stx) < 0
      || !(stx.stx_mask & STATX_MNT_ID_UNIQUE))
    return false;
  req.mnt_id = stx.stx_mnt_id;
  sm = xzalloc (len);
  if (syscall (SYS_statmount, &req, sm, len, 0) < 0 || (sm->mask & req.param) != req.param
      || sm->sb_magic != CGROUP2_SUPER_MAGIC)
    return false;
  m->v2 = true;
  m->controllers = xstrdup ("");
  m->root = xstrdup (sm->str + sm->mnt_root);
  m->mountpoint = xstrdup (sm->str + sm->mnt_point);
  return true;
}

int
ab_cg_host_read_v2 (struct ab_cg_host *h, ab_error_t *err)
{
  static const char *const places[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
  _cleanup_free_ char *pc = NULL;
  struct ab_cg_mount m = { 0 };

  memset (h, 0, sizeof *h);
  for (size_t i = 0; i < AB_ARRAY_SIZE (places) && !m.v2; i++)
    v2_mount_at (places[i], &m);
  if (!m.v2)
    return 0;
  h->mounts = xcalloc (1, sizeof *h->mounts);
  h->mounts[0] = m;
  h->n_mounts = 1;
  if (ab_read_file_at (AT_FDCWD, "/proc/self/cgroup", SMALL_FILE_MAX, &pc, NULL, err) < 0
      || ab_cg_parse_proc_cgroup (pc, h, err) < 0)
    {
      ab_cg_host_free (h);
      return -1;
    }
  return 1;
}

bool
ab_cg_has_real_v1_controller (const char *controllers)
{
  const char *p = controllers;

  while (p && *p)
    {
      const char *end = strchr (p, ',');
      _cleanup_free_ char *item = end ? xstrndup (p, (size_t)(end - p)) : xstrdup (p);
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
      else if (ab_cg_has_real_v1_controller (h->mounts[i].controllers))
        v1 = true;
    }
  if (v1)
    return v2 ? AB_CGROUP_HYBRID : AB_CGROUP_V1;
  return v2 ? AB_CGROUP_V2 : AB_CGROUP_NONE;
}

/* ---- paths ---------------------------------------------------------------- */

char *
ab_cg_path_to_dir (const char *mountpoint, const char *root, const char *path)
{
  const char *rest;

  if (!ab_cg_path_covers (root, path))
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
      size_t n = end ? (size_t)(end - p) : strlen (p), k;

      if (n > 0)
        {
          if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
            {
              free (buf);
              /* ".." would climb out of the hierarchy part it names. */
              return ab_error_setc (err, AB_EC_CONFIG, 0, "%s: `%s`: \".\" and \"..\" are not allowed", what,
                                    rel);
            }
          if (n > CG_NAME_MAX)
            {
              free (buf);
              return ab_error_setc (err, AB_EC_CONFIG, 0, "%s: `%s`: a component is longer than %d bytes",
                                    what, rel, CG_NAME_MAX);
            }
          for (k = 0; k < n; k++)
            if ((unsigned char)p[k] < 0x20 || p[k] == 0x7f)
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
          return ab_error_setc (
              err, AB_EC_CONFIG, 0,
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
