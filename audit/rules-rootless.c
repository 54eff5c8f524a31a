/* Rules: what running without host root weakens (docs/rootless.md).
 *
 * They read the plan create would make as the user running the audit (or
 * as --rootless says): its id mapping, whether the container gets a cgroup,
 * and the `degraded` list of every limit this host cannot enforce for that
 * user -- the same list the result record carries. */
#include "config.h"

#include "audit/audit-internal.h"
#include "base/util.h"

/* One finding per limit that is not enforced.  The plan's lines read
   "JSON-PATH: what and why"; the pids limit, kept as RLIMIT_NPROC, and
   the device rules, which the user namespace mostly stands in for, are
   low. */
static void
rule_degraded (struct ab_audit_ctx *a)
{
  const struct ab_strv *d = &a->p->degraded;

  for (size_t i = 0; i < d->n; i++)
    {
      const char *sep = strstr (d->v[i], ": ");
      _cleanup_free_ char *path = sep ? xstrndup (d->v[i], (size_t)(sep - d->v[i])) : xstrdup ("linux.resources");
      const char *why = sep ? sep + 2 : d->v[i];
      if (strcmp (path, "linux.namespaces") == 0)
        continue; /* rule_no_cgroup says it */
      if (strcmp (path, "linux.resources.pids.limit") == 0)
        ab_audit_find_sev (a, "AB-ROOTLESS-001", AB_AUDIT_LOW, path, "%s", why);
      else if (strcmp (path, "linux.resources.devices") == 0 || strncmp (path, "linux.resources.cpu", 19) == 0)
        ab_audit_find_sev (a, "AB-ROOTLESS-001", AB_AUDIT_LOW, path, "%s", why);
      else
        ab_audit_find (a, "AB-ROOTLESS-001", path, "%s", why);
    }
}

/* No cgroup: the pid namespace is all that holds the container together.
   Without one of its own, a daemon of the container outlives it: high. */
static void
rule_no_cgroup (struct ab_audit_ctx *a)
{
  bool own_pid = a->f.ns_new[AB_NS_PID];

  if (a->p->cgroup)
    return;
  if (own_pid)
    ab_audit_find (a, "AB-ROOTLESS-002", "linux.namespaces",
                   "no cgroup: its processes are found and killed through its pid namespace; pause, resume and "
                   "update are refused, and no memory or CPU use is measured");
  else
    ab_audit_find_sev (a, "AB-ROOTLESS-002", AB_AUDIT_HIGH, "linux.namespaces",
                       "no cgroup and no pid namespace of its own: a process that leaves the init's tree (a "
                       "daemon) is not killed with the container, and kill --all reaches the init alone");
}

/* The container's root is the caller on the host. */
static void
rule_root_is_caller (struct ab_audit_ctx *a)
{
  if (a->p->ids.how == AB_IDMAP_SINGLE)
    ab_audit_find (a, "AB-ROOTLESS-003", "linux.uidMappings",
                   "one id is mapped: every process and file of the container is uid %u on the host, the user "
                   "running agentbox",
                   (unsigned)geteuid ());
  else if (a->p->ids.how == AB_IDMAP_HELPER)
    ab_audit_find (a, "AB-ROOTLESS-003", "linux.uidMappings",
                       "the container's root is uid %u on the host, the user running agentbox; its other ids "
                       "are that user's subordinate ids, shared by every container the user runs (written by "
                       "the set-user-ID helpers %s and %s)",
                       (unsigned)geteuid (), a->p->ids.newuidmap ? a->p->ids.newuidmap : "newuidmap",
                       a->p->ids.newgidmap ? a->p->ids.newgidmap : "newgidmap");
}

void
ab_audit_rules_rootless (struct ab_audit_ctx *a)
{
  if (a->p == NULL || !a->p->rootless)
    return;
  rule_degraded (a);
  rule_no_cgroup (a);
  rule_root_is_caller (a);
}
