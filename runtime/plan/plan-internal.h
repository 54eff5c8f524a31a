/* Between the files of the plan room: plan.c calls plan-rootless.c. */
#ifndef AB_RUNTIME_PLAN_INTERNAL_H
#define AB_RUNTIME_PLAN_INTERNAL_H

#include "runtime/plan/host-ids.h"
#include "runtime/plan/plan.h"

/* p->ids for a config that makes a user namespace, from p->rootless and
   the host (h); the configs a rootless caller cannot run are refused
   here, naming the field: namespaces without a user namespace, id maps
   beyond what the kernel or newuidmap would write, id-mapped mounts. */
int ab_plan_ids (struct ab_plan *p, const struct ab_spec *s, struct ab_host_ids *h, ab_error_t *err);

/* p->cgroup, p->cgroup_parent and p->degraded from what the host's cgroups
   allow (o->cgroups): each limit they cannot enforce fails the plan,
   naming it, unless degradation is accepted (--accept-degraded or the
   annotation); then *nproc is the RLIMIT_NPROC to set in place of an
   unenforced pids.limit (0: none). */
int ab_plan_cgroups (struct ab_plan *p, const struct ab_spec *s, const struct ab_plan_opts *o, int64_t *nproc,
                     ab_error_t *err);

#endif
