/* Rules: mounts, masked and read-only paths.  Bind sources are judged as
 * the host paths the runtime opens (relative ones against the bundle), in
 * the tables below; one function per rule or family. */
#include "config.h"

#include <sys/mount.h>
#include <sys/stat.h>

#include "base/kernel-compat.h"
#include "audit/audit-internal.h"
#include "base/util.h"
#include "spec/bundle-links.h"
#include "spec/defaults.h"


/* Whether path is dir or below it, component-wise. */
static bool
at_or_below (const char *path, const char *dir)
{
  size_t n = strlen (dir);

  if (strcmp (dir, "/") == 0)
    return path[0] == '/';
  return strncmp (path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* The source without trailing slashes and doubled ones ("//etc/" -> "/etc"). */
static char *
clean_source (const char *src)
{
  char *c = xstrdup (src);
  size_t o = 0;

  for (size_t i = 0; c[i]; i++)
    if (!(c[i] == '/' && o > 0 && c[o - 1] == '/'))
      c[o++] = c[i];
  while (o > 1 && c[o - 1] == '/')
    o--;
  c[o] = '\0';
  return c;
}

struct bind
{
  size_t i;
  const struct ab_mount *m;
  char *src; /* cleaned host path */
  bool ro;
  char path[48]; /* "mounts[3].source" */
};

/* ---- host paths ----------------------------------------------------------------- */

static void
rule_host_dirs (struct ab_audit_ctx *a, const struct bind *b)
{
  static const struct
  {
    const char *dir;
    bool below_too;
    const char *id;
  } tab[] = {
    { "/", false, "AB-MNT-002" },
    { "/proc", true, "AB-MNT-003" },
    { "/sys", true, "AB-MNT-004" },
    { "/dev", false, "AB-MNT-006" },
  };

  for (size_t k = 0; k < AB_ARRAY_SIZE (tab); k++)
    if (strcmp (b->src, tab[k].dir) == 0 || (tab[k].below_too && at_or_below (b->src, tab[k].dir)))
      ab_audit_find (a, tab[k].id, b->path, "mounts[%zu] binds the host's %s at %s%s", b->i, b->src,
                     b->m->destination, b->ro ? " (read-only)" : ", writable");
}

/* Whether maskedPaths covers dest + what (the secret as the container sees it). */
static bool
masked_at (const struct ab_audit_ctx *a, const char *dest, const char *what)
{
  _cleanup_free_ char *p = xasprintf ("%s%s", strcmp (dest, "/") == 0 ? "" : dest, what);

  for (size_t i = 0; a->l && i < a->l->masked_paths.n; i++)
    if (at_or_below (p, a->l->masked_paths.v[i]))
      return true;
  return false;
}

static void
rule_etc (struct ab_audit_ctx *a, const struct bind *b)
{
  static const char *const secrets[]
      = { "/etc/shadow",     "/etc/gshadow",   "/etc/passwd",    "/etc/group",
          "/etc/sudoers",    "/etc/sudoers.d", "/etc/ssh",       "/etc/ssl/private",
          "/etc/kubernetes", "/etc/docker",    "/etc/containers" };
  /* What a read-only view of the whole /etc must hide to leak no credential. */
  static const char *const hidden[]
      = { "/shadow", "/gshadow", "/sudoers", "/sudoers.d", "/ssh", "/ssl/private" };
  bool secret = strcmp (b->src, "/etc") == 0, all_masked = strcmp (b->src, "/etc") == 0;

  for (size_t k = 0; !secret && k < AB_ARRAY_SIZE (secrets); k++)
    secret = at_or_below (b->src, secrets[k]);
  if (!at_or_below (b->src, "/etc") || (b->ro && !secret))
    return;
  for (size_t k = 0; all_masked && k < AB_ARRAY_SIZE (hidden); k++)
    all_masked = masked_at (a, b->m->destination, hidden[k]);
  if (b->ro && all_masked)
    ab_audit_find_sev (
        a, "AB-MNT-007", AB_AUDIT_LOW, b->path,
        "mounts[%zu] binds %s read-only at %s, with shadow, gshadow, sudoers, ssh and ssl/private masked: "
        "the rest of the host's configuration is visible",
        b->i, b->src, b->m->destination);
  else
    ab_audit_find_sev (a, "AB-MNT-007", b->ro ? AB_AUDIT_MEDIUM : AB_AUDIT_HIGH, b->path,
                       "mounts[%zu] binds %s at %s%s", b->i, b->src, b->m->destination,
                       b->ro ? " read-only" : " writable");
}

/* The engines' API sockets.  A bind of a directory holding one exposes it too. */
static const char *const engine_sockets[] = {
  "/run/docker.sock",
  "/var/run/docker.sock",
  "/run/containerd/containerd.sock",
  "/var/run/containerd/containerd.sock",
  "/run/podman/podman.sock",
  "/var/run/podman/podman.sock",
  "/run/crio/crio.sock",
  "/var/run/crio/crio.sock",
  "/run/buildkit/buildkitd.sock",
  "/run/cri-dockerd.sock",
};
static const char *const engine_names[]
    = { "docker.sock",    "containerd.sock",  "podman.sock",    "crio.sock",
        "buildkitd.sock", "cri-dockerd.sock", "dockershim.sock" };

/* 1: the source is a socket; 2: a directory holding one; 0: neither. */
static int
rule_sockets (struct ab_audit_ctx *a, const struct bind *b)
{
  const char *base = strrchr (b->src, '/');

  for (size_t k = 0; base && k < AB_ARRAY_SIZE (engine_names); k++)
    if (strcmp (base + 1, engine_names[k]) == 0)
      {
        ab_audit_find (a, "AB-MNT-005", b->path, "mounts[%zu] binds %s at %s", b->i, b->src,
                       b->m->destination);
        return 1;
      }
  if (strcmp (b->src, "/") == 0)
    return 0; /* AB-MNT-002 says it all */
  for (size_t k = 0; k < AB_ARRAY_SIZE (engine_sockets); k++)
    if (at_or_below (engine_sockets[k], b->src))
      {
        ab_audit_find (a, "AB-MNT-005", b->path, "mounts[%zu] binds %s, which holds %s, at %s", b->i, b->src,
                       engine_sockets[k], b->m->destination);
        return 2;
      }
  return 0;
}

/* below_too: anything inside is sensitive (credentials in homes, kernel
   images and modules, logs); otherwise only the directory itself or one
   holding it (a volume below /var/lib/docker, a per-container file below
   /run are how engines work).  ro_ok: only a writable view matters (the
   kernel's images and modules are no secret; replacing them is the risk). */
static void
rule_sensitive (struct ab_audit_ctx *a, const struct bind *b)
{
  static const struct
  {
    const char *dir;
    bool below_too, ro_ok;
  } dirs[] = {
    { "/root", true, false },
    { "/home", true, false },
    { "/boot", true, true },
    { "/lib/modules", true, true },
    { "/usr/lib/modules", true, true },
    { "/var/log", true, false },
    { "/var/lib/docker", false, false },
    { "/var/lib/containers", false, false },
    { "/var/lib/containerd", false, false },
    { "/var/lib/kubelet", false, false },
    { "/run", false, false },
    { "/var/run", false, false },
  };

  if (strcmp (b->src, "/") == 0)
    return;
  for (size_t k = 0; k < AB_ARRAY_SIZE (dirs); k++)
    {
      bool inside = at_or_below (b->src, dirs[k].dir), holds = at_or_below (dirs[k].dir, b->src);
      if (b->ro && dirs[k].ro_ok)
        continue;
      if (holds || (inside && dirs[k].below_too))
        {
          ab_audit_find (a, "AB-MNT-008", b->path, "mounts[%zu] binds %s (%s %s) at %s%s", b->i, b->src,
                         holds ? "which holds" : "inside", dirs[k].dir, b->m->destination,
                         b->ro ? ", read-only" : ", writable");
          return;
        }
    }
}

/* What engines bind into every container (podman, containerd): files,
   which cannot take a new file, so no set-user-ID program can be planted,
   and the per-container tmpfs of /dev/shm. */
static bool
single_file (const struct bind *b)
{
  static const char *const files[]
      = { "/etc/hosts",     "/etc/hostname",  "/etc/resolv.conf", "/run/.containerenv",
          "/.containerenv", "/etc/localtime", "/etc/timezone",    "/dev/shm" };
  struct stat st;

  for (size_t k = 0; k < AB_ARRAY_SIZE (files); k++)
    if (strcmp (b->m->destination, files[k]) == 0)
      return true;
  return stat (b->src, &st) == 0 && !S_ISDIR (st.st_mode);
}

static void
rule_source_paths (struct ab_audit_ctx *a, const struct bind *b)
{
  _cleanup_free_ char *lp = NULL, *lt = NULL;
  ab_error_t err = { 0 };

  if (ab_bundle_source_link (a->bundle_dir, b->m->source, &lp, &lt, &err) > 0)
    ab_audit_find (a, "AB-MNT-009", b->path, "%s passes through %s -> %s", b->m->source, lp, lt);
  if (ab_path_has_dotdot (b->m->source))
    ab_audit_find (a, "AB-MNT-010", b->path, "the source %s has a \"..\" component (the runtime opens %s)",
                   b->m->source, b->src);
}

static void
rule_bind_flags (struct ab_audit_ctx *a, const struct bind *b)
{
  char path[48];

  snprintf (path, sizeof path, "mounts[%zu].options", b->i);
  if (b->m->recursive && (b->m->flags & MS_RDONLY) && !(b->m->attr_set & MOUNT_ATTR_RDONLY))
    ab_audit_find (a, "AB-MNT-012", path, "mounts[%zu] (%s) is rbind with ro but not rro", b->i,
                   b->m->destination);
  if (!b->ro && a->f.uid0_mapped && b->src[0] == '/' && !single_file (b)
      && !(a->bundle_dir && at_or_below (b->src, a->bundle_dir)))
    ab_audit_find (a, "AB-MNT-013", path,
                   "mounts[%zu] binds %s writable at %s, and container root is host root", b->i, b->src,
                   b->m->destination);
}

static void
check_bind (struct ab_audit_ctx *a, size_t i, const struct ab_mount *m)
{
  _cleanup_free_ char *raw = ab_audit_bind_source (a, m);
  struct bind b = { .i = i, .m = m, .ro = ab_audit_mount_ro (m) };

  if (raw == NULL)
    return;
  b.src = clean_source (raw);
  snprintf (b.path, sizeof b.path, "mounts[%zu].source", i);
  rule_host_dirs (a, &b);
  rule_etc (a, &b);
  /* A socket itself is AB-MNT-005's alone; the directory around it is more. */
  if (rule_sockets (a, &b) != 1)
    rule_sensitive (a, &b);
  rule_source_paths (a, &b);
  rule_bind_flags (a, &b);
  free (b.src);
}

/* ---- filesystems ------------------------------------------------------------------- */

static void
check_fs (struct ab_audit_ctx *a, size_t i, const struct ab_mount *m)
{
  bool ro = ab_audit_mount_ro (m);
  char path[48];

  snprintf (path, sizeof path, "mounts[%zu].options", i);
  if (m->type == NULL)
    return;
  if (strcmp (m->type, "sysfs") == 0 && !ro && a->f.uid0_mapped)
    ab_audit_find (a, "AB-MNT-014", path, "mounts[%zu] mounts sysfs at %s without ro, as host root", i,
                   m->destination);
  if ((strcmp (m->type, "cgroup") == 0 || strcmp (m->type, "cgroup2") == 0) && !ro)
    {
      bool host_tree = !a->f.ns_new[AB_NS_CGROUP] && a->f.uid0_mapped;
      ab_audit_find_sev (a, "AB-MNT-015", host_tree ? AB_AUDIT_HIGH : AB_AUDIT_MEDIUM, path,
                         "mounts[%zu] mounts %s at %s without ro%s", i, m->type, m->destination,
                         host_tree ? ", with no cgroup namespace, as host root" : "");
    }
}

static void
rule_mounts (struct ab_audit_ctx *a)
{
  for (size_t i = 0; i < a->s->n_mounts; i++)
    {
      const struct ab_mount *m = &a->s->mounts[i];
      char path[48];

      if (ab_audit_is_bind (m))
        check_bind (a, i, m);
      else
        check_fs (a, i, m);
      snprintf (path, sizeof path, "mounts[%zu].options", i);
      if (m->propagation == AB_PROP_SHARED)
        ab_audit_find (a, "AB-MNT-011", path, "mounts[%zu] (%s) is %s", i, m->destination,
                       m->propagation_recursive ? "rshared" : "shared");
    }
}

static void
rule_root (struct ab_audit_ctx *a)
{
  if (a->s->root_set && !a->s->root.readonly)
    ab_audit_find (a, "AB-MNT-001", "root.readonly", "root.readonly is %s",
                   a->s->root.readonly ? "true" : "false or absent");
  if (a->s->root.path && ab_path_has_dotdot (a->s->root.path))
    ab_audit_find (a, "AB-MNT-010", "root.path", "root.path %s has a \"..\" component", a->s->root.path);
  if (a->l && a->l->rootfs_propagation == AB_PROP_SHARED)
    ab_audit_find (a, "AB-MNT-011", "linux.rootfsPropagation", "rootfsPropagation is shared");
}

/* ---- masked and read-only paths ------------------------------------------------------ */

static bool
mounts_type (const struct ab_spec *s, const char *type)
{
  for (size_t i = 0; i < s->n_mounts; i++)
    if (s->mounts[i].type && strcmp (s->mounts[i].type, type) == 0)
      return true;
  return false;
}

static bool
listed (const struct ab_linux *l, bool masked, const char *path)
{
  const struct ab_strv *v = masked ? &l->masked_paths : &l->readonly_paths;

  for (size_t i = 0; l && i < v->n; i++)
    if (strcmp (v->v[i], path) == 0)
      return true;
  return false;
}

/* The defaults of `table` that apply (their filesystem is mounted) and are
   missing, comma-joined into buf; how many. */
static size_t
missing (struct ab_audit_ctx *a, bool masked, const char *const *defs, size_t n, const char *skip, char *buf,
         size_t len)
{
  bool proc = mounts_type (a->s, "proc"), sys = mounts_type (a->s, "sysfs");
  size_t count = 0, o = 0;

  buf[0] = '\0';
  for (size_t i = 0; i < n; i++)
    {
      bool applies = ab_str_has_prefix (defs[i], "/proc/") ? proc : sys;
      if (!applies || (skip && strcmp (defs[i], skip) == 0) || (a->l && listed (a->l, masked, defs[i])))
        continue;
      count++;
      if (o < len)
        o += (size_t)snprintf (buf + o, len - o, "%s%s", o ? ", " : "", defs[i]);
    }
  return count;
}

static void
rule_paths (struct ab_audit_ctx *a)
{
  const char *const *defs;
  char buf[1024];
  size_t n, k;
  bool host_root = a->f.uid0_mapped;

  defs = ab_default_masked_paths (&n);
  if ((k = missing (a, true, defs, n, NULL, buf, sizeof buf)) > 0)
    ab_audit_find (a, "AB-PROC-001", "linux.maskedPaths", "%zu default masked path%s missing: %s", k,
                   k == 1 ? " is" : "s are", buf);
  defs = ab_default_readonly_paths (&n);
  if (mounts_type (a->s, "proc") && !(a->l && listed (a->l, false, "/proc/sys")))
    ab_audit_find_sev (a, "AB-PROC-002", host_root ? AB_AUDIT_HIGH : AB_AUDIT_LOW, "linux.readonlyPaths",
                       "/proc/sys is not in linux.readonlyPaths%s",
                       host_root ? " and container root is host root"
                                 : " (a user namespace: only its namespaced sysctls are writable)");
  if ((k = missing (a, false, defs, n, "/proc/sys", buf, sizeof buf)) > 0)
    ab_audit_find_sev (a, "AB-PROC-003", host_root ? AB_AUDIT_MEDIUM : AB_AUDIT_LOW, "linux.readonlyPaths",
                       "%zu default read-only path%s missing: %s%s", k, k == 1 ? " is" : "s are", buf,
                       host_root ? "" : " (a user namespace limits what root can write there)");
}

void
ab_audit_rules_fs (struct ab_audit_ctx *a)
{
  rule_root (a);
  rule_mounts (a);
  rule_paths (a);
}
