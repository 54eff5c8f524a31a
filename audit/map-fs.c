/* The mechanism map, second part: the container's filesystem
 * (runtime/mount.c, runtime/dev.c, runtime/paths.c, hooks/hooks.c): the
 * propagation of /, every mount in order with the flags it really gets,
 * the hooks and where they run, pivot_root, sysctl, and the read-only and
 * masked paths with the defaults a config removed. */
#include "config.h"

#include <limits.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "base/kernel-compat.h"
#include "audit/audit-internal.h"
#include "hooks/hooks.h"
#include "base/util.h"
#include "spec/bundle-links.h"
#include "spec/defaults.h"
#include "spec/spec.h"
#include "spec/tables.h"

struct flag_name
{
  uint64_t bit;
  const char *name;
};

/* The per-mount flags runtime/mount.c hands to mount_setattr/fsmount. */
static const struct flag_name ms_names[] = {
  { MS_RDONLY, "ro" },
  { MS_NOSUID, "nosuid" },
  { MS_NODEV, "nodev" },
  { MS_NOEXEC, "noexec" },
  { MS_NOSYMFOLLOW, "nosymfollow" },
  { MS_NOATIME, "noatime" },
  { MS_STRICTATIME, "strictatime" },
  { MS_NODIRATIME, "nodiratime" },
};
static const struct flag_name attr_names[] = {
  { MOUNT_ATTR_RDONLY, "ro" },
  { MOUNT_ATTR_NOSUID, "nosuid" },
  { MOUNT_ATTR_NODEV, "nodev" },
  { MOUNT_ATTR_NOEXEC, "noexec" },
  { MOUNT_ATTR_NOSYMFOLLOW, "nosymfollow" },
  { MOUNT_ATTR_NOATIME, "noatime" },
  { MOUNT_ATTR_STRICTATIME, "strictatime" },
  { MOUNT_ATTR_NODIRATIME, "nodiratime" },
};

static void
flags_text (char *buf, size_t len, uint64_t bits, const struct flag_name *t, size_t n)
{
  size_t o = 0;

  buf[0] = '\0';
  for (size_t i = 0; i < n && o < len; i++)
    if (bits & t[i].bit)
      o += (size_t)snprintf (buf + o, len - o, "%s%s", o ? "," : "", t[i].name);
}

/* "ro,nosuid on the mount[; recursively ...][; propagation ...]" */
static void
attrs_text (const struct ab_mount *m, char *buf, size_t len)
{
  char top[128], rec[128];
  const char *prop = ab_propagation_name (m->propagation, m->propagation_recursive);

  flags_text (top, sizeof top, m->flags, ms_names, AB_ARRAY_SIZE (ms_names));
  flags_text (rec, sizeof rec, m->attr_set, attr_names, AB_ARRAY_SIZE (attr_names));
  snprintf (buf, len, "%s%s%s%s%s%s%s", top[0] ? top : "no flags", ab_audit_mount_ro (m) ? "" : " (writable)",
            rec[0] ? "; recursively " : "", rec, prop ? "; propagation " : "", prop ? prop : "",
            prop && m->propagation == AB_PROP_SHARED
                ? " (mount events flow between the container and the host)"
                : "");
}

static void
source_facts (struct ab_audit_ctx *a, size_t i, const struct ab_mount *m, char *buf, size_t len)
{
  _cleanup_free_ char *src = ab_audit_bind_source (a, m);
  _cleanup_free_ char *lp = NULL, *lt = NULL;
  ab_error_t err = { 0 };
  struct stat st;
  size_t o = 0;
  int r;

  buf[0] = '\0';
  if (src == NULL)
    return;
  r = ab_bundle_source_link (a->bundle_dir, m->source, &lp, &lt, &err);
  if (r > 0)
    o += (size_t)snprintf (buf + o, len - o, "; passes through the symlink %s -> %s inside the bundle", lp,
                           lt);
  if (ab_path_has_dotdot (m->source))
    o += (size_t)snprintf (buf + o, len - o,
                           "; the \"..\" in the source climbs out of where it seems to point");
  if (a->bundle_dir && !(ab_str_has_prefix (src, a->bundle_dir) && src[strlen (a->bundle_dir)] == '/'))
    o += (size_t)snprintf (buf + o, len - o, "; a host path outside the bundle");
  if (o < len && lstat (src, &st) == 0 && S_ISLNK (st.st_mode) && r <= 0)
    o += (size_t)snprintf (buf + o, len - o, "; the source is a symlink, which the bind follows");
  (void)i;
}

static void
map_bind (struct ab_audit_ctx *a, size_t i, const struct ab_mount *m, char *mech, size_t len)
{
  char attrs[512], facts[1024];
  bool from_parent = m->idmap || m->uid_mappings.n || m->gid_mappings.n;

  int rp = a->l ? a->l->rootfs_propagation : AB_PROP_NONE;

  attrs_text (m, attrs, sizeof attrs);
  source_facts (a, i, m, facts, sizeof facts);
  snprintf (
      mech, len,
      "%s open_tree(%s%s, %s) of %s; made %s; mount_setattr %s; move_mount onto %s resolved "
      "inside the rootfs%s",
      from_parent ? "the parent opens it in the host's mount namespace, id-mapped (MOUNT_ATTR_IDMAP), and "
                    "passes it over:"
                  : "the child:",
      m->recursive ? "AT_RECURSIVE" : "non-recursive", m->recursive ? ", submounts included" : "",
      /* dev.agentbox.bind-nofollow (the built-in sandbox's workspace and
         extra binds): one openat2(RESOLVE_NO_SYMLINKS) of the path */
      m->source_nofollow ? "opened refusing every symlink on the path" : "following symlinks",
      m->source ? m->source : "?",
      rp == AB_PROP_PRIVATE || rp == AB_PROP_UNBINDABLE
          ? "private (rootfsPropagation), so no mount crosses it"
          : "a slave of its source, so the host's mounts come in and none made in the container goes out",
      attrs, m->destination, facts);
  if (a->s->workspace.mode == AB_WS_MODE_OVERLAY && i == a->s->workspace.mount)
    {
      /* dev.agentbox.workspace.mode=overlay: what create sends instead */
      size_t n = strlen (mech);
      snprintf (mech + n, len - n,
                "; then made read-only and the lower layer of an overlay the parent builds (redirect_dir, "
                "metacopy, index off) whose upper layer is the change set's (%s%s): the source is not written; "
                "`agentbox workspace apply` writes the changes to it later",
                a->s->workspace.changes_dir ? "in " : "a tmpfs under the state root",
                a->s->workspace.changes_dir ? a->s->workspace.changes_dir : "");
    }
}

static void
map_fs (const struct ab_mount *m, char *mech, size_t len)
{
  char attrs[512], sb[128] = "";

  attrs_text (m, attrs, sizeof attrs);
  if (m->flags & (MS_SYNCHRONOUS | MS_DIRSYNC | MS_LAZYTIME | MS_MANDLOCK | MS_I_VERSION))
    snprintf (sb, sizeof sb, ", superblock flags 0x%lx",
              m->flags & (MS_SYNCHRONOUS | MS_DIRSYNC | MS_LAZYTIME | MS_MANDLOCK | MS_I_VERSION));
  snprintf (mech, len, "fsopen(%s)%s%s%s%s, fsmount with %s; move_mount onto %s resolved inside the rootfs%s",
            m->type, m->source ? " source " : "", m->source ? m->source : "", m->data ? ", options " : "",
            m->data ? m->data : "", attrs, m->destination,
            m->tmpcopyup ? "; tmpcopyup: the rootfs's files copied in" : "");
  (void)sb;
}

static void
map_mount (struct ab_audit_ctx *a, size_t i, const struct ab_mount *m)
{
  char name[PATH_MAX + 32], path[32], mech[4096];
  unsigned flags = 0;
  struct ab_audit_line *l;
  const char *note = NULL;

  snprintf (name, sizeof name, "mounts[%zu] %s", i, m->destination);
  snprintf (path, sizeof path, "mounts[%zu]", i);
  if (strcmp (m->destination, "/") == 0)
    {
      snprintf (mech, sizeof mech, "mounting over / is refused by agentbox (create fails)");
      flags |= AB_AUDIT_L_REFUSED;
    }
  else if (m->flags & MS_REMOUNT)
    {
      char attrs[512];
      attrs_text (m, attrs, sizeof attrs);
      snprintf (mech, sizeof mech, "mount_setattr on the existing mount at %s: %s", m->destination, attrs);
    }
  else if (ab_audit_is_bind (m))
    {
      map_bind (a, i, m, mech, sizeof mech);
      if (m->recursive && (m->flags & MS_RDONLY) && !(m->attr_set & MOUNT_ATTR_RDONLY))
        note = "ro applies to the top mount only: submounts of the rbind stay writable (rro makes it "
               "recursive)";
      if (!ab_audit_mount_ro (m))
        flags |= AB_AUDIT_L_HOST;
    }
  else if (m->type && (strcmp (m->type, "cgroup") == 0 || strcmp (m->type, "cgroup2") == 0))
    {
      char attrs[512];
      attrs_text (m, attrs, sizeof attrs);
      snprintf (mech, sizeof mech,
                "%sthe v2 tree: %s (%s)",
                strcmp (m->type, "cgroup") == 0
                    ? "on a v1 or hybrid host, as runc: a read-only tmpfs with one read-only bind per hierarchy "
                      "of the container's own cgroup, named as the host's mount point (memory, cpu,cpuacct "
                      "with cpu and cpuacct symlinks, ..., unified); otherwise "
                    : "",
                a->f.ns_new[AB_NS_CGROUP]
                    ? "fsopen(cgroup2) in the container's cgroup namespace, its own subtree only (a read-only "
                      "bind of its cgroup2 directory where that namespace's owner may not mount)"
                    : "a read-only bind of the container's own cgroup2 directory, never a new superblock in "
                      "the host's cgroup namespace",
                attrs);
    }
  else if (m->type && strcmp (m->type, "sysfs") == 0)
    {
      map_fs (m, mech, sizeof mech);
      strncat (mech,
               "; sysfs of the container's network namespace (in a user namespace that does not own it: a "
               "recursive read-only bind of the host's /sys)",
               sizeof mech - strlen (mech) - 1);
    }
  else if (m->type == NULL || m->type[0] == '\0')
    {
      snprintf (mech, sizeof mech, "a mount without bind needs a type: create fails");
      flags |= AB_AUDIT_L_REFUSED;
    }
  else
    map_fs (m, mech, sizeof mech);
  l = ab_audit_add (a, AB_AUDIT_S_MOUNTS, name, path, flags, "%s", mech);
  ab_audit_line_value (l, "%s %s", m->type ? m->type : "-", m->source ? m->source : "-");
  if (note)
    ab_audit_line_note (l, "%s", note);
}

static void
map_mounts (struct ab_audit_ctx *a)
{
  int prop = a->l ? a->l->rootfs_propagation : AB_PROP_NONE;
  struct ab_audit_line *l;

  l = ab_audit_add (
      a, AB_AUDIT_S_MOUNTS, "rootfs", "root.path", 0,
      "/ made %s first, so nothing mounted here propagates to the host; the rootfs (%s) bound onto itself "
      "(recursive), made private and pinned with an O_PATH fd; every destination below is resolved inside "
      "it (openat2 RESOLVE_IN_ROOT), never through a symlink to the host",
      prop == AB_PROP_PRIVATE || prop == AB_PROP_UNBINDABLE ? "rprivate" : "rslave",
      a->s->root.path && a->s->root.path[0] == '/' ? "an absolute path" : "relative to the bundle");
  ab_audit_line_value (l, "%s", a->s->root.path ? a->s->root.path : "-");
  /* the plan's copies: what create opens them with (source_nofollow) */
  for (size_t i = 0; i < a->s->n_mounts; i++)
    map_mount (a, i, a->p && i < a->p->n_spec_mounts ? &a->p->mounts[i] : &a->s->mounts[i]);
}

/* ---- hooks ------------------------------------------------------------------- */

static void
map_hooks (struct ab_audit_ctx *a)
{
  static const char *const where[AB_HOOK__KINDS] = {
    [AB_HOOK_PRESTART]
    = "on the host: the runtime's namespaces, agentbox's user (root), after the mounts and "
      "before pivot_root (deprecated by the spec)",
    [AB_HOOK_CREATE_RUNTIME]
    = "on the host: the runtime's namespaces, agentbox's user (root), after the mounts and "
      "before pivot_root",
    [AB_HOOK_CREATE_CONTAINER]
    = "a host program (the path is resolved in the runtime's mount namespace) run inside "
      "the container's namespaces before pivot_root, with the container's full capabilities",
    [AB_HOOK_START_CONTAINER]
    = "a program of the container's filesystem, run in the container after start, before "
      "the capability drop, no_new_privs and seccomp",
    [AB_HOOK_POSTSTART]
    = "on the host: the runtime's namespaces, agentbox's user (root), after the program started",
    [AB_HOOK_POSTSTOP]
    = "on the host: the runtime's namespaces, agentbox's user (root), when the container is "
      "deleted",
  };

  for (int k = 0; k < AB_HOOK__KINDS; k++)
    for (size_t i = 0; i < a->s->hooks[k].n; i++)
      {
        const struct ab_hook *h = &a->s->hooks[k].v[i];
        bool host = k != AB_HOOK_START_CONTAINER;
        char name[64], path[64];
        struct ab_audit_line *l;

        snprintf (name, sizeof name, "%s[%zu]", ab_hook_kind_name (k), i);
        snprintf (path, sizeof path, "hooks.%s[%zu]", ab_hook_kind_name (k), i);
        l = ab_audit_add (a, AB_AUDIT_S_HOOKS, name, path, host ? AB_AUDIT_L_HOST : 0,
                          "%s; the state JSON on stdin; killed after %d s", where[k],
                          h->timeout_set ? h->timeout : AB_HOOK_DEFAULT_TIMEOUT);
        ab_audit_line_value (l, "%s%s%s", h->path, h->args.n > 1 ? " " : "",
                             h->args.n > 1 ? h->args.v[1] : "");
      }
}

/* ---- pivot_root, hostname, sysctl ---------------------------------------------------- */

static void
map_pivot (struct ab_audit_ctx *a)
{
  ab_audit_add (a, AB_AUDIT_S_PIVOT, "pivot_root", "root.path", 0,
                "pivot_root(\".\", \".\") in the rootfs; the old root made rslave and detached "
                "(MNT_DETACH): nothing of the host's tree stays reachable by path");
  if (a->s->hostname)
    ab_audit_line_value (ab_audit_add (a, AB_AUDIT_S_PIVOT, "hostname", "hostname",
                                       a->f.ns_present[AB_NS_UTS] ? 0 : AB_AUDIT_L_REFUSED | AB_AUDIT_L_HOST,
                                       "sethostname in %s",
                                       a->f.ns_present[AB_NS_UTS]
                                           ? "the container's UTS namespace"
                                           : "the host's UTS namespace: refused by validation"),
                         "%s", a->s->hostname);
  if (a->s->domainname)
    ab_audit_line_value (ab_audit_add (a, AB_AUDIT_S_PIVOT, "domainname", "domainname", 0,
                                       "setdomainname in the container's UTS namespace"),
                         "%s", a->s->domainname);
}

static void
map_sysctl (struct ab_audit_ctx *a)
{
  for (size_t i = 0; a->l && i < a->l->sysctl.n; i++)
    {
      const char *key = a->l->sysctl.v[i].key;
      int ns = ab_sysctl_namespace (key);
      char path[320];
      struct ab_audit_line *l;

      snprintf (path, sizeof path, "linux.sysctl.%s", key);
      if (ns < 0)
        l = ab_audit_add (
            a, AB_AUDIT_S_SYSCTL, key, path, AB_AUDIT_L_REFUSED | AB_AUDIT_L_HOST,
            "not namespaced: writing it would change the whole host; agentbox (like runc) refuses it");
      else
        l = ab_audit_add (
            a, AB_AUDIT_S_SYSCTL, key, path, a->f.ns_host[ns] ? AB_AUDIT_L_HOST | AB_AUDIT_L_WEAK : 0,
            "written to /proc/sys/%s of the %s namespace %s (opened beneath a checked procfs root, "
            "crossing no mount: a mount in the way fails the run)", key,
            ab_ns_name (ns), a->f.ns_host[ns] ? "it shares with the host" : "of the container");
      ab_audit_line_value (l, "%s", a->l->sysctl.v[i].value);
    }
}

/* ---- read-only and masked paths -------------------------------------------------------- */

static bool
listed (const struct ab_strv *v, const char *path)
{
  for (size_t i = 0; i < v->n; i++)
    if (strcmp (v->v[i], path) == 0)
      return true;
  return false;
}

static void
map_removed_defaults (struct ab_audit_ctx *a, const char *what, const char *path, const struct ab_strv *have,
                      const char *const *defs, size_t n)
{
  char buf[1024] = "";
  size_t o = 0, missing = 0;

  for (size_t i = 0; i < n; i++)
    if (!listed (have, defs[i]))
      {
        missing++;
        if (o < sizeof buf)
          o += (size_t)snprintf (buf + o, sizeof buf - o, "%s%s", o ? ", " : "", defs[i]);
      }
  if (missing)
    ab_audit_add (a, AB_AUDIT_S_PATHS, what, path, AB_AUDIT_L_WEAK, "%zu default%s not covered: %s", missing,
                  missing == 1 ? "" : "s", buf);
}

/* Each entry of one path list with what it becomes, then the defaults of
   `agentbox spec` it leaves out. */
static void
map_path_list (struct ab_audit_ctx *a, const struct ab_strv *list, const char *field, const char *mechanism,
               const char *what, const char *const *(*defaults) (size_t *n))
{
  size_t n;
  const char *const *defs = defaults (&n);

  for (size_t i = 0; i < list->n; i++)
    {
      char path[48];
      snprintf (path, sizeof path, "%s[%zu]", field, i);
      ab_audit_add (a, AB_AUDIT_S_PATHS, list->v[i], path, 0, "%s", mechanism);
    }
  map_removed_defaults (a, what, field, list, defs, n);
}

static void
map_paths (struct ab_audit_ctx *a)
{
  static const struct ab_strv empty = { 0 };

  map_path_list (a, a->l ? &a->l->readonly_paths : &empty, "linux.readonlyPaths",
                 "read-only: a recursive clone of the object made read-only and mounted on itself (skipped when "
                 "absent)",
                 "readonly defaults", ab_default_readonly_paths);
  map_path_list (a, a->l ? &a->l->masked_paths : &empty, "linux.maskedPaths",
                 "masked: a directory gets an empty read-only tmpfs, a file the container's /dev/null (checked to "
                 "be 1:3); skipped when absent",
                 "masked defaults", ab_default_masked_paths);
  if (a->s->root.readonly)
    ab_audit_add (a, AB_AUDIT_S_PATHS, "root.readonly", "root.readonly", 0,
                  "mount_setattr(MOUNT_ATTR_RDONLY) on / only: the mounts on top keep their own flags");
  else
    ab_audit_add (a, AB_AUDIT_S_PATHS, "root.readonly", "root.readonly", AB_AUDIT_L_WEAK,
                  "false: the image stays writable");
  if (a->l && a->l->rootfs_propagation != AB_PROP_NONE)
    {
      int p = a->l->rootfs_propagation;
      ab_audit_add (
          a, AB_AUDIT_S_PATHS, "rootfsPropagation", "linux.rootfsPropagation",
          p == AB_PROP_SHARED ? AB_AUDIT_L_WEAK : 0, "/ made %s after pivot_root%s", ab_propagation_name (p, true),
          p == AB_PROP_SHARED ? ": a new peer group of the container's own (the rootfs bind was made "
                                       "private), so its mounts reach nested mount namespaces, not the host"
                                     : "");
    }
}

void
ab_audit_map_fs (struct ab_audit_ctx *a)
{
  map_mounts (a);
  map_hooks (a);
  map_pivot (a);
  map_sysctl (a);
  map_paths (a);
}
