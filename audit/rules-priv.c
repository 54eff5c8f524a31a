/* Rules: capabilities, no_new_privs, attributes set from the host, seccomp,
 * rlimits, cgroup limits and devices. */
#include "config.h"

#include <inttypes.h>
#include <linux/capability.h>

#include "audit/audit-internal.h"
#include "base/util.h"
#include "spec/tables.h"

#define BIT(c) (UINT64_C (1) << (c))

/* ---- capabilities ------------------------------------------------------------- */

/* init_ns: the kernel checks it against the initial user namespace only,
   so inside a user namespace of its own the capability does nothing. */
static const struct
{
  int cap;
  const char *id;
  bool init_ns;
} cap_rules[] = {
  { CAP_SYS_ADMIN, "AB-CAP-001", false },       { CAP_SYS_PTRACE, "AB-CAP-002", false },
  { CAP_NET_ADMIN, "AB-CAP-003", false },       { CAP_DAC_READ_SEARCH, "AB-CAP-004", true },
  { CAP_SYS_MODULE, "AB-CAP-005", true },       { CAP_SYS_RAWIO, "AB-CAP-006", true },
  { CAP_NET_RAW, "AB-CAP-007", false },         { CAP_SYS_TIME, "AB-CAP-008", true },
  { CAP_SYS_BOOT, "AB-CAP-008", true },         { CAP_SYSLOG, "AB-CAP-008", true },
  { CAP_SYS_PACCT, "AB-CAP-008", true },        { CAP_MAC_ADMIN, "AB-CAP-008", true },
  { CAP_MAC_OVERRIDE, "AB-CAP-008", true },     { CAP_AUDIT_CONTROL, "AB-CAP-008", true },
  { CAP_SYS_NICE, "AB-CAP-008", true },         { CAP_SYS_RESOURCE, "AB-CAP-008", true },
  { CAP_LINUX_IMMUTABLE, "AB-CAP-008", false }, { CAP_WAKE_ALARM, "AB-CAP-008", true },
  { CAP_BLOCK_SUSPEND, "AB-CAP-008", true },    { CAP_SYS_TTY_CONFIG, "AB-CAP-008", true },
  { CAP_IPC_LOCK, "AB-CAP-008", false },        { CAP_BPF, "AB-CAP-009", true },
  { CAP_PERFMON, "AB-CAP-009", true },
};

/* Which configured set makes the program hold the capability. */
static const char *
cap_source (const struct ab_audit_facts *f, int cap)
{
  if (f->caps[AB_CAP_AMBIENT] & f->caps[AB_CAP_PERMITTED] & f->caps[AB_CAP_INHERITABLE] & BIT (cap))
    return ab_capset_name (AB_CAP_AMBIENT);
  if (f->caps[AB_CAP_PERMITTED] & BIT (cap))
    return ab_capset_name (AB_CAP_PERMITTED);
  if (f->caps[AB_CAP_INHERITABLE] & BIT (cap))
    return ab_capset_name (AB_CAP_INHERITABLE);
  return ab_capset_name (AB_CAP_BOUNDING);
}

static void
rule_caps_each (struct ab_audit_ctx *a)
{
  const struct ab_audit_facts *f = &a->f;

  for (size_t i = 0; i < AB_ARRAY_SIZE (cap_rules); i++)
    {
      int cap = cap_rules[i].cap;
      bool held = f->caps_exec & BIT (cap), gain = f->caps_gain & BIT (cap);
      char path[64];

      if (!held && !gain)
        continue;
      snprintf (path, sizeof path, "process.capabilities.%s", cap_source (f, cap));
      if (cap_rules[i].init_ns && f->userns)
        ab_audit_find_sev (
            a, cap_rules[i].id, AB_AUDIT_LOW, path,
            "%s is %s, but only over the container's own user namespace, where it grants nothing",
            ab_cap_name (cap), held ? "held" : "reachable through execve");
      else
        ab_audit_find (a, cap_rules[i].id, path, "%s is %s%s", ab_cap_name (cap),
                       held ? "held after execve"
                            : "not held, but reachable through a set-user-ID or file-capability "
                              "program (no_new_privs is off)",
                       f->userns ? " (over the container's user namespace)"
                                 : " (a host capability: no user namespace)");
    }
}

/* "Every capability": what --privileged and --cap-add ALL write, which is
   every capability the engine's own host knows, so one or two short of
   ours on an older or restricted host. */
static void
rule_caps_all (struct ab_audit_ctx *a)
{
  int n = __builtin_popcountll (a->f.caps_exec | a->f.caps_gain);

  if (n >= ab_cap_count () - 3)
    ab_audit_find (a, "AB-CAP-010", "process.capabilities",
                   "%d of the %d capabilities are held or reachable%s", n, ab_cap_count (),
                   a->f.userns ? " (over the container's user namespace)" : " as host root");
}

static void
rule_caps_sets (struct ab_audit_ctx *a)
{
  const struct ab_audit_facts *f = &a->f;

  if (f->caps_gain)
    {
      _cleanup_free_ char *txt = ab_audit_caps_text (f->caps_gain);
      ab_audit_find (a, "AB-CAP-011", "process.capabilities.bounding",
                     "%s in the bounding set can be regained at execve", txt);
    }
  if (f->caps[AB_CAP_AMBIENT] & f->caps[AB_CAP_PERMITTED] & f->caps[AB_CAP_INHERITABLE])
    {
      _cleanup_free_ char *txt = ab_audit_caps_text (f->caps[AB_CAP_AMBIENT] & f->caps[AB_CAP_PERMITTED]
                                                     & f->caps[AB_CAP_INHERITABLE]);
      ab_audit_find (a, "AB-CAP-012", "process.capabilities.ambient", "ambient: %s", txt);
    }
}

/* ---- privileges ------------------------------------------------------------------ */

static void
rule_process (struct ab_audit_ctx *a)
{
  const struct ab_process *p = a->s->process;

  if (p == NULL)
    return;
  if (!p->no_new_privileges)
    ab_audit_find (a, "AB-SEC-001", "process.noNewPrivileges", "process.noNewPrivileges is false or absent");
  if (p->oom_score_adj_set && p->oom_score_adj < 0)
    ab_audit_find (a, "AB-SEC-002", "process.oomScoreAdj", "oomScoreAdj is %d", p->oom_score_adj);
  if (p->scheduler
      && (p->scheduler->policy == AB_SCHED_FIFO || p->scheduler->policy == AB_SCHED_RR
          || p->scheduler->policy == AB_SCHED_DEADLINE))
    ab_audit_find (a, "AB-SEC-003", "process.scheduler.policy", "the scheduler policy is %s",
                   ab_sched_policy_name (p->scheduler->policy));
  if (p->io_priority && p->io_priority->klass == AB_IOPRIO_RT)
    ab_audit_find (a, "AB-SEC-003", "process.ioPriority.class", "the I/O priority class is IOPRIO_CLASS_RT");
}

/* ---- seccomp --------------------------------------------------------------------- */

/* Reachable syscalls that share a rule, a severity and a deciding entry
   make one finding that names them all. */
struct group
{
  const char *id;
  int sev;
  char path[64];
  char names[1024];
  char how[256];
};

static void
group_add (struct group *g, size_t *n, size_t max, const char *id, int sev, const char *path,
           const char *label, const char *how)
{
  size_t i;

  for (i = 0; i < *n; i++)
    if (g[i].id == id && g[i].sev == sev && strcmp (g[i].path, path) == 0)
      break;
  if (i == *n)
    {
      if (*n == max)
        return;
      memset (&g[i], 0, sizeof g[i]);
      g[i].id = id;
      g[i].sev = sev;
      snprintf (g[i].path, sizeof g[i].path, "%s", path);
      snprintf (g[i].how, sizeof g[i].how, "%s", how);
      (*n)++;
    }
  if (strlen (g[i].names) + strlen (label) + 3 < sizeof g[i].names)
    {
      if (g[i].names[0])
        strcat (g[i].names, ", ");
      strcat (g[i].names, label);
    }
}

static void
rule_seccomp_dangers (struct ab_audit_ctx *a)
{
  const struct ab_seccomp_eval *e = &a->f.sc;
  uint64_t caps = a->f.caps_exec | a->f.caps_gain;
  struct group g[32];
  size_t n = 0;

  for (size_t i = 0; i < ab_n_dangers; i++)
    {
      const struct ab_danger *d = &ab_dangers[i];
      const struct ab_reach_result *r = &e->danger[i];
      int sev = r->reach == AB_REACH_COND ? AB_AUDIT_MEDIUM : AB_AUDIT_HIGH;
      char path[64], label[128];

      if (r->reach < AB_REACH_COND)
        continue;
      if (r->rule >= 0)
        snprintf (path, sizeof path, "linux.seccomp.syscalls[%zd]", r->rule);
      else
        snprintf (path, sizeof path, "linux.seccomp.defaultAction");
      if (d->cap < 0)
        group_add (g, &n, AB_ARRAY_SIZE (g), "AB-SECCOMP-003", sev, path, d->label, r->how);
      else if ((caps & BIT (d->cap)) && !(d->init_ns && a->f.userns))
        {
          snprintf (label, sizeof label, "%s (with %s)", d->label, ab_cap_name (d->cap));
          group_add (g, &n, AB_ARRAY_SIZE (g), "AB-SECCOMP-004", sev, path, label, r->how);
        }
    }
  for (size_t i = 0; i < n; i++)
    ab_audit_find_sev (a, g[i].id, g[i].sev, g[i].path, "%s %s %s: %s", g[i].names,
                       strchr (g[i].names, ',') ? "are" : "is",
                       g[i].sev == AB_AUDIT_MEDIUM ? "conditionally reachable" : "reachable", g[i].how);
}

static void
rule_seccomp (struct ab_audit_ctx *a)
{
  const struct ab_seccomp_eval *e = &a->f.sc;

  if (a->s->process == NULL)
    return;
  if (!e->present)
    {
      ab_audit_find (a, "AB-SECCOMP-001", "linux.seccomp", "linux.seccomp is absent");
      return;
    }
  if (e->allow_default)
    ab_audit_find (a, "AB-SECCOMP-002", "linux.seccomp.defaultAction", "defaultAction is %s",
                   ab_seccomp_action_name (a->l->seccomp->default_action));
  if (e->unknown.n)
    ab_audit_find_sev (a, "AB-SECCOMP-005", e->allow_default ? AB_AUDIT_MEDIUM : AB_AUDIT_LOW,
                       "linux.seccomp.syscalls", "%zu name%s unknown to libseccomp, first %s", e->unknown.n,
                       e->unknown.n == 1 ? "" : "s", e->unknown.v[0]);
  rule_seccomp_dangers (a);
}

/* ---- rlimits ---------------------------------------------------------------------- */

#define MiB (UINT64_C (1) << 20)

static void
rule_rlimits (struct ab_audit_ctx *a)
{
  const struct ab_process *p = a->s->process;

  for (size_t i = 0; p && i < p->n_rlimits; i++)
    {
      const struct ab_rlimit *r = &p->rlimits[i];
      char path[48];
      char hard[24];

      snprintf (path, sizeof path, "process.rlimits[%zu]", i);
      snprintf (hard, sizeof hard, r->hard == UINT64_MAX ? "unlimited" : "%" PRIu64, r->hard);
      if (strcmp (r->type, "RLIMIT_NOFILE") == 0 && r->hard > 1048576)
        ab_audit_find (a, "AB-RL-001", path, "RLIMIT_NOFILE hard limit %s", hard);
      else if (strcmp (r->type, "RLIMIT_MEMLOCK") == 0 && r->hard > 64 * MiB)
        ab_audit_find (a, "AB-RL-002", path, "RLIMIT_MEMLOCK hard limit %s", hard);
      else if (strcmp (r->type, "RLIMIT_CORE") == 0 && r->soft > 0)
        ab_audit_find (a, "AB-RL-003", path, "RLIMIT_CORE soft limit %s",
                       r->soft == UINT64_MAX ? "unlimited" : "above 0");
      else if (strcmp (r->type, "RLIMIT_RTPRIO") == 0 && r->hard > 0)
        ab_audit_find (a, "AB-RL-004", path, "RLIMIT_RTPRIO hard limit %s", hard);
    }
}

/* ---- cgroups ---------------------------------------------------------------------- */

static void
rule_cgroups (struct ab_audit_ctx *a)
{
  const struct ab_resources *r = a->l ? a->l->resources : NULL;

  if (a->s->process == NULL)
    return;
  if (!a->f.pids_limited)
    ab_audit_find (a, "AB-CG-001", "linux.resources.pids.limit", "no (or a negative) pids limit");
  if (!a->f.mem_limited)
    ab_audit_find (a, "AB-CG-002", "linux.resources.memory.limit", "no (or an unlimited) memory limit");
  if (!a->f.cpu_limited)
    ab_audit_find (a, "AB-CG-003", "linux.resources.cpu", "no CPU quota and no cpuset");
  if (r && r->memory_set && r->memory.disable_oom_killer.set && r->memory.disable_oom_killer.v)
    ab_audit_find (a, "AB-CG-004", "linux.resources.memory.disableOOMKiller", "disableOOMKiller is true");
  if (a->l && a->l->cgroups_path && a->l->cgroups_path[0] == '/')
    ab_audit_find (a, "AB-CG-005", "linux.cgroupsPath", "cgroupsPath is %s", a->l->cgroups_path);
  if (a->f.mem_limited && r->memory.swap.set && r->memory.swap.v < 0)
    ab_audit_find (a, "AB-CG-006", "linux.resources.memory.swap", "memory.swap is %" PRId64,
                   r->memory.swap.v);
}

/* ---- devices ---------------------------------------------------------------------- */

static void
rule_devices_all (struct ab_audit_ctx *a)
{
  const struct ab_resources *r = a->l ? a->l->resources : NULL;

  for (size_t i = 0; r && i < r->n_devices; i++)
    {
      const struct ab_device_rule *d = &r->devices[i];
      bool any_major = !d->major.set || d->major.v == -1;
      bool rw = d->access[0] == '\0' || strpbrk (d->access, "rw") != NULL;
      char path[48];
      ssize_t last;

      snprintf (path, sizeof path, "linux.resources.devices[%zu]", i);
      if (!d->allow || !(d->type == 'a' || (any_major && rw)))
        continue;
      /* Only if a later rule does not take it back (last match wins). */
      if (d->type != 'c' && ab_audit_dev_allowed (a, 'b', 8, 0, 'r', &last) && last == (ssize_t)i)
        ab_audit_find (a, "AB-DEV-001", path, "rule %zu allows %s", i,
                       d->type == 'a' ? "every device (type a)" : "every block device");
      else if (d->type == 'c' && ab_audit_dev_allowed (a, 'c', 1, 1, 'r', &last) && last == (ssize_t)i)
        ab_audit_find (a, "AB-DEV-001", path, "rule %zu allows every character device", i);
    }
}

static void
probe_device (struct ab_audit_ctx *a, const char *id, const char *name, char type, int64_t major,
              int64_t minor)
{
  ssize_t rule = -1;
  char path[48];
  bool r = ab_audit_dev_allowed (a, type, major, minor, 'r', &rule);
  bool w = ab_audit_dev_allowed (a, type, major, minor, 'w', &rule);

  if (!r && !w)
    return;
  snprintf (path, sizeof path, "linux.resources.devices[%zd]", rule);
  ab_audit_find (a, id, rule >= 0 ? path : "linux.resources.devices", "%s (%c %" PRId64 ":%" PRId64 ") is %s",
                 name, type, major, minor,
                 r && w ? "readable and writable"
                 : r    ? "readable"
                        : "writable");
}

static void
rule_devices_nodes (struct ab_audit_ctx *a)
{
  static const struct
  {
    const char *id;
    const char *name;
    char type;
    int64_t major, minor;
  } probes[] = {
    { "AB-DEV-002", "/dev/mem", 'c', 1, 1 },        { "AB-DEV-002", "/dev/kmem", 'c', 1, 2 },
    { "AB-DEV-002", "/dev/port", 'c', 1, 4 },       { "AB-DEV-003", "a disk", 'b', 8, 0 },
    { "AB-DEV-003", "an NVMe disk", 'b', 259, 0 },  { "AB-DEV-004", "/dev/kmsg", 'c', 1, 11 },
    { "AB-DEV-004", "/dev/kvm", 'c', 10, 232 },     { "AB-DEV-004", "/dev/fuse", 'c', 10, 229 },
    { "AB-DEV-004", "/dev/net/tun", 'c', 10, 200 }, { "AB-DEV-004", "/dev/uinput", 'c', 10, 223 },
    { "AB-DEV-004", "/dev/tty1", 'c', 4, 1 },
  };

  /* Every device allowed is AB-DEV-001's; these name the worst ones when a
     narrower rule lets them through. */
  for (size_t i = 0; i < AB_ARRAY_SIZE (probes); i++)
    probe_device (a, probes[i].id, probes[i].name, probes[i].type, probes[i].major, probes[i].minor);
  {
    char list[512] = "";
    size_t n = 0, o = 0;
    for (size_t i = 0; a->l && i < a->l->n_devices; i++)
      if (a->l->devices[i].type == 'b')
        {
          if (o < sizeof list - 64)
            o += (size_t)snprintf (list + o, sizeof list - o, "%s%s", n ? ", " : "", a->l->devices[i].path);
          n++;
        }
    if (n)
      ab_audit_find (a, "AB-DEV-003", "linux.devices", "%zu block device%s created: %s", n,
                     n == 1 ? " is" : "s are", list);
  }
}

void
ab_audit_rules_priv (struct ab_audit_ctx *a)
{
  rule_caps_each (a);
  rule_caps_all (a);
  rule_caps_sets (a);
  rule_process (a);
  rule_seccomp (a);
  rule_rlimits (a);
  rule_cgroups (a);
  rule_devices_all (a);
  rule_devices_nodes (a);
}
