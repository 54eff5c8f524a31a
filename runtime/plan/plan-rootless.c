/* The plan's rootless part: how the user namespace gets its maps, and
 * which limits a container made without host privileges cannot have
 * (runtime/plan/plan.h, docs/rootless.md). */
#include "config.h"

#include <sys/resource.h>
#include <sys/utsname.h>

#include "base/util.h"
#include "runtime/plan/host-ids.h"
#include "runtime/plan/plan-internal.h"
#include "spec/annotations.h"
#include "spec/tables.h"

const char *
ab_idmap_how_name (int how)
{
  switch (how)
    {
    case AB_IDMAP_KERNEL:
      return "privileged";
    case AB_IDMAP_SINGLE:
      return "single-id";
    case AB_IDMAP_HELPER:
      return "subordinate-ids";
    default:
      return "none";
    }
}

/* ---- the user namespace ----------------------------------------------------------- */

static bool
single_own (const struct ab_idmaps *m, uint32_t own)
{
  return m->n == 1 && m->v[0].host_id == own && m->v[0].size == 1;
}

/* Whether newuidmap would write m[i]: the caller's own id alone, or inside
   a range the subordinate file gives it.  -1: all fit; else the index of
   the first that does not. */
static long
outside_ranges (const struct ab_idmaps *m, uint32_t own, const struct ab_idmaps *ranges)
{
  for (size_t i = 0; i < m->n; i++)
    {
      const struct ab_idmap *e = &m->v[i];
      bool fits = e->size == 1 && e->host_id == own;
      for (size_t k = 0; k < ranges->n && !fits; k++)
        fits = e->host_id >= ranges->v[k].host_id
               && (uint64_t) e->host_id + e->size <= (uint64_t) ranges->v[k].host_id + ranges->v[k].size;
      if (!fits)
        return (long) i;
    }
  return -1;
}

static void
ranges_text (const struct ab_idmaps *r, char *buf, size_t len)
{
  size_t off = 0;

  buf[0] = '\0';
  for (size_t i = 0; i < r->n && off < len; i++)
    off += (size_t) snprintf (buf + off, len - off, "%s%u-%u", i ? ", " : "", r->v[i].host_id,
                              r->v[i].host_id + r->v[i].size - 1);
}

static int
map_refused (const char *field, const struct ab_idmaps *m, long i, const struct ab_host_ids *h, bool gid,
             ab_error_t *err)
{
  const struct ab_idmap *e = &m->v[i];
  const struct ab_idmaps *ranges = gid ? &h->subgid : &h->subuid;
  const char *file = gid ? "/etc/subgid" : "/etc/subuid";
  unsigned own = gid ? (unsigned) h->gid : (unsigned) h->uid;
  char have[256], other[400];

  ranges_text (ranges, have, sizeof have);
  if (!(h->newuidmap && h->newgidmap))
    snprintf (other, sizeof other, "and nothing else: newuidmap and newgidmap are not installed (Debian: uidmap)");
  else if (ranges->n == 0)
    snprintf (other, sizeof other, "or, through newuidmap, ranges %s gives it: it gives none", file);
  else
    snprintf (other, sizeof other, "or, through newuidmap, the ranges %s gives it (%s)", file, have);
  return ab_error_setc (err, AB_EC_CONFIG, 0,
                        "config.json: linux.%s[%ld] (container %u-%u = host %u-%u): rootless agentbox (uid %u) may "
                        "map its own %s (%u) alone, %s; map container 0 to host %u alone, or use `agentbox spec "
                        "--rootless`, which writes what this user may map",
                        field, i, e->container_id, e->container_id + e->size - 1, e->host_id,
                        e->host_id + e->size - 1, (unsigned) h->uid, gid ? "gid" : "uid", own, other, own);
}

/* No namespace but a user namespace may be made without CAP_SYS_ADMIN, and
   the others only inside one's own user namespace. */
static int
need_userns (const struct ab_spec *s, const struct ab_host_ids *h, ab_error_t *err)
{
  const struct ab_linux *l = s->linux_;
  char names[160] = "";
  size_t off = 0;

  for (int t = 0; l && t < AB_NS__COUNT; t++)
    if (t != AB_NS_USER && ab_linux_new_ns (l, t) && off < sizeof names)
      off += (size_t) snprintf (names + off, sizeof names - off, "%s%s", off ? ", " : "", ab_ns_name (t));
  if (off == 0)
    return 0;
  return ab_error_setc (err, AB_EC_CONFIG, 0,
                        "config.json: linux.namespaces: rootless agentbox (uid %u, no CAP_SYS_ADMIN) may make %s "
                        "namespaces only inside a user namespace of its own, and there is none: add "
                        "{\"type\": \"user\"} with linux.uidMappings and gidMappings (`agentbox spec --rootless` "
                        "writes them)",
                        (unsigned) h->uid, names);
}

/* Id-mapped mounts need CAP_SYS_ADMIN over the filesystem (the host's, for
   a bind of a host directory): root's. */
static int
no_idmapped_mounts (const struct ab_spec *s, const struct ab_host_ids *h, ab_error_t *err)
{
  if (s->agentbox.rootfs_idmap)
    return ab_error_setc (err, AB_EC_CONFIG, 0,
                          "config.json: annotations." AB_ANNOT_ROOTFS_IDMAP ": rootless agentbox (uid %u) cannot "
                          "mount the rootfs id-mapped (MOUNT_ATTR_IDMAP needs CAP_SYS_ADMIN over the host's "
                          "filesystem); leave it out: files of ids the namespace does not map show as 65534 "
                          "and stay readable as their mode allows",
                          (unsigned) h->uid);
  for (size_t i = 0; i < s->n_mounts; i++)
    if (s->mounts[i].idmap || s->mounts[i].uid_mappings.n || s->mounts[i].gid_mappings.n)
      return ab_error_setc (err, AB_EC_CONFIG, 0,
                            "config.json: mounts[%zu] (%s): rootless agentbox (uid %u) cannot make an id-mapped "
                            "mount (MOUNT_ATTR_IDMAP needs CAP_SYS_ADMIN over the host's filesystem); drop the "
                            "idmap option and the mount's mappings: the user namespace already shows your files "
                            "as the container's root's",
                            i, s->mounts[i].destination, (unsigned) h->uid);
  return 0;
}

/* proc, sysfs and mqueue filesystems are mounted for the pid, network and
   IPC namespaces the mounter is in, and the kernel wants CAP_SYS_ADMIN
   over their owner: the container's own namespaces, made in its user
   namespace, or the host's, which are root's. */
static int
own_ns_mounts (const struct ab_spec *s, const struct ab_host_ids *h, ab_error_t *err)
{
  static const struct
  {
    const char *type;
    int ns;
  } fs[] = { { "proc", AB_NS_PID }, { "sysfs", AB_NS_NET }, { "mqueue", AB_NS_IPC } };
  const struct ab_linux *l = s->linux_;

  for (size_t i = 0; i < s->n_mounts; i++)
    for (size_t k = 0; k < AB_ARRAY_SIZE (fs); k++)
      if (s->mounts[i].type && strcmp (s->mounts[i].type, fs[k].type) == 0
          && !ab_linux_new_ns (l, fs[k].ns))
        return ab_error_setc (err, AB_EC_CONFIG, 0,
                              "config.json: mounts[%zu] (%s): rootless agentbox (uid %u) cannot mount %s for "
                              "the host's %s namespace (that needs CAP_SYS_ADMIN over it, root's); give the "
                              "container a %s namespace of its own, or bind the host's %s instead",
                              i, s->mounts[i].destination, (unsigned) h->uid, fs[k].type, ab_ns_name (fs[k].ns),
                              ab_ns_name (fs[k].ns), s->mounts[i].destination);
  return 0;
}

int
ab_plan_ids (struct ab_plan *p, const struct ab_spec *s, struct ab_host_ids *h, ab_error_t *err)
{
  const struct ab_linux *l = s->linux_;
  long bad;

  if (l == NULL || !l->ns[AB_NS_USER].present || l->ns[AB_NS_USER].path != NULL)
    {
      p->ids.how = AB_IDMAP_NONE;
      return p->rootless && (l == NULL || !l->ns[AB_NS_USER].present) ? need_userns (s, h, err) : 0;
    }
  p->ids.setgroups = true;
  if (p->rootless && (no_idmapped_mounts (s, h, err) < 0 || own_ns_mounts (s, h, err) < 0))
    return -1;
  /* Root of its own user namespace (root on the host, or inside an outer
     container with CAP_SETUID and CAP_SETGID): any map of ids it has. */
  if (!p->rootless || (h->cap_setuid && h->cap_setgid))
    return p->ids.how = AB_IDMAP_KERNEL, 0;
  /* The kernel lets the namespace's creator write one line mapping its own
     id, and for gid_map only once setgroups is denied (else a process
     could drop a group that denies it access: CVE-2014-8989). */
  if (single_own (&l->uid_mappings, h->uid) && single_own (&l->gid_mappings, h->gid))
    {
      p->ids.how = AB_IDMAP_SINGLE;
      p->ids.setgroups = false;
      return 0;
    }
  ab_host_ids_subids (h);
  {
    /* Without the helpers nothing but the single own id may be mapped:
       outside_ranges with no range says which entry is not that. */
    static const struct ab_idmaps none = { 0 };
    bool helpers = h->newuidmap && h->newgidmap;
    if ((bad = outside_ranges (&l->uid_mappings, h->uid, helpers ? &h->subuid : &none)) >= 0
        || (!helpers && l->uid_mappings.n > 1))
      return map_refused ("uidMappings", &l->uid_mappings, bad >= 0 ? bad : 1, h, false, err);
    if ((bad = outside_ranges (&l->gid_mappings, h->gid, helpers ? &h->subgid : &none)) >= 0
        || (!helpers && l->gid_mappings.n > 1))
      return map_refused ("gidMappings", &l->gid_mappings, bad >= 0 ? bad : 1, h, true, err);
  }
  p->ids.how = AB_IDMAP_HELPER;
  p->ids.newuidmap = h->newuidmap;
  p->ids.newgidmap = h->newgidmap;
  return 0;
}

/* ---- limits without a cgroup --------------------------------------------------------- */

/* RLIMIT_NPROC in place of pids.limit: the child sets it after it entered
   its user namespace, and since Linux 5.14 the kernel counts RLIMIT_NPROC
   per user namespace and uid (ucounts): the tasks of the container's uid
   in the container's namespace, not the caller's other processes on the
   host (which it would count if it were set before the namespace was
   made).  The container holds no capability, so it cannot change to
   another uid with a count of its own.  Kept at or below our hard limit. */
/* Whether the kernel counts RLIMIT_NPROC per user namespace (5.14, the
   ucounts rlimits).  Before, it counts every process of the host uid --
   the agent host's own too -- so that a limit the size of pids.limit would
   refuse the container's forks for the caller's processes, and one above
   them would not bound the container: agentbox then sets none. */
static bool
nproc_per_userns (void)
{
  struct utsname u;
  unsigned major = 0, minor = 0;

  if (uname (&u) < 0 || sscanf (u.release, "%u.%u", &major, &minor) != 2)
    return false;
  return major > 5 || (major == 5 && minor >= 14);
}

static int64_t
nproc_for (const struct ab_spec *s, const struct ab_resources *r)
{
  const struct ab_process *pr = s->process;

  if (!nproc_per_userns ())
    return 0;
  if (r == NULL || !r->pids_set || !r->pids_limit.set || r->pids_limit.v <= 0 || pr == NULL)
    return 0;
  for (size_t i = 0; i < pr->n_rlimits; i++)
    if (pr->rlimits[i].resource == RLIMIT_NPROC)
      return 0; /* the config's own */
  return r->pids_limit.v;
}

int
ab_plan_cgroups (struct ab_plan *p, const struct ab_spec *s, const struct ab_plan_opts *o, int64_t *nproc,
                 ab_error_t *err)
{
  const struct ab_plan_cgroups *cg = o->cgroups;
  bool accept = o->accept_degraded || s->agentbox.accept_degraded;

  *nproc = 0;
  p->cgroup = cg == NULL || cg->usable;
  p->cgroup_parent = cg && cg->usable && cg->parent ? xstrdup (cg->parent) : NULL;
  if (cg == NULL || cg->unenforced == NULL || cg->unenforced->n == 0)
    return 0;
  for (size_t i = 0; i < cg->unenforced->n; i++)
    {
      /* "JSON-PATH\tCONTROLLER\tWHY" (ab_cgroup_unenforced) */
      _cleanup_free_ char *line = xstrdup (cg->unenforced->v[i]);
      char *ctrl = strchr (line, '\t'), *why = ctrl ? strchr (ctrl + 1, '\t') : NULL;

      if (why == NULL)
        continue;
      *ctrl++ = '\0';
      *why++ = '\0';
      if (!accept)
        return ab_error_setc (err, AB_EC_RESOURCE, 0,
                              "config.json: %s: cannot be enforced: %s; %s, or run with it unenforced "
                              "(--accept-degraded, or the annotation " AB_ANNOT_DEGRADED "=accept)",
                              line, why, cg->fix);
      if (strcmp (ctrl, "pids") == 0 && (*nproc = nproc_for (s, s->linux_ ? s->linux_->resources : NULL)) > 0)
        ab_strv_push_owned (&p->degraded,
                            xasprintf ("%s: not enforced as a cgroup limit (%s); RLIMIT_NPROC %lld instead, which "
                                       "the kernel counts for the container's uid inside its user namespace",
                                       line, why, (long long) *nproc));
      else
        ab_strv_push_owned (&p->degraded, xasprintf ("%s: not enforced (%s)", line, why));
    }
  return 0;
}
