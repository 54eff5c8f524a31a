/* Which system calls a linux.seccomp profile lets through, evaluated the way
 * runtime/seccomp.c builds the filter (runc's semantics):
 *
 *   - a rule whose action is the default action is skipped;
 *   - a name libseccomp does not know is skipped: the default applies to it;
 *   - the conditions of one entry must all hold (AND), unless two of them
 *     test the same argument: then each condition is a rule of its own (OR);
 *   - SCMP_ACT_KILL is KILL_THREAD, ERRNO without errnoRet is EPERM.
 *
 * A probe is a syscall, optionally with one argument fixed (unshare with
 * CLONE_NEWUSER).  How libseccomp (2.5) resolves several entries for one
 * syscall, as measured with seccomp_export_pfc: an entry without conditions
 * decides alone, and among those the first one added (the first in
 * syscalls[]) wins, the others being dropped without an error; only
 * without such an entry do the conditional ones count.  A condition on
 * another argument, or on the probed one with a value we do not know, may
 * or may not hold: the result is then "conditionally".  Among conditional
 * entries, an allowing one that certainly matches makes the call
 * reachable, a blocking one under a default that allows blocks it; two
 * that certainly match with different verdicts are reported as
 * conditional. */
#include "config.h"

#include <errno.h>
#include <linux/capability.h>
#include <seccomp.h>
#include <string.h>

#include "audit/audit-internal.h"
#include "base/util.h"
#include "spec/tables.h"

#define CLONE_NEWUSER_FLAG 0x10000000ull
#define NR_MAX 2048 /* native syscall numbers are below this on every architecture libseccomp knows */

/* The reasons follow spec/seccomp_default.c, which denies all of these. */
const struct ab_danger ab_dangers[] = {
  { "mount", "mount", -1, 0, CAP_SYS_ADMIN, false,
    "mounts over any path of the container: uncovers masked paths, remounts read-only ones writable" },
  { "umount2", "umount2", -1, 0, CAP_SYS_ADMIN, false,
    "unmounts the masks and read-only binds of /proc and /sys" },
  { "fsconfig", "fsconfig", -1, 0, CAP_SYS_ADMIN, false,
    "the new mount API; its legacy parameter parser was a heap overflow to root (CVE-2022-0185)" },
  { "open_tree", "open_tree", -1, 0, CAP_SYS_ADMIN, false, "clones mount trees (new mount API)" },
  { "move_mount", "move_mount", -1, 0, CAP_SYS_ADMIN, false, "attaches mounts anywhere (new mount API)" },
  { "setns", "setns", -1, 0, CAP_SYS_ADMIN, false,
    "joins the namespaces behind inherited or /proc file descriptors" },
  { "unshare(CLONE_NEWUSER)", "unshare", 0, CLONE_NEWUSER_FLAG, -1, false,
    "a new user namespace holds every capability over itself: kernel code written for root (mount, "
    "netfilter, ...) becomes reachable without any capability" },
  { "clone(CLONE_NEWUSER)", "clone", 0, CLONE_NEWUSER_FLAG, -1, false,
    "the same new user namespace, through clone" },
  { "clone3", "clone3", -1, 0, -1, false,
    "its flags are in memory, out of seccomp's reach: an allowed clone3 creates namespaces whatever the "
    "clone filter says" },
  { "ptrace", "ptrace", -1, 0, -1, false,
    "traces processes of the same user; kernel bugs reachable through it (CVE-2019-13272)" },
  { "process_vm_writev", "process_vm_writev", -1, 0, -1, false,
    "writes the memory of other processes of the same user" },
  { "bpf", "bpf", -1, 0, -1, false,
    "loads eBPF programs where the host allows unprivileged BPF: verifier bugs are a recurring root "
    "exploit" },
  { "perf_event_open", "perf_event_open", -1, 0, -1, false,
    "performance counters: side channels and a long list of kernel bugs, as far as perf_event_paranoid "
    "allows" },
  { "userfaultfd", "userfaultfd", -1, 0, -1, false,
    "stalls the kernel at a page fault: the standard way to win the races of kernel exploits" },
  { "io_uring_setup", "io_uring_setup", -1, 0, -1, false,
    "io_uring operations run past seccomp entirely, and it has been a top source of kernel exploits" },
  { "io_uring_enter", "io_uring_enter", -1, 0, -1, false, "submits io_uring operations (past seccomp)" },
  { "io_uring_register", "io_uring_register", -1, 0, -1, false, "registers files and buffers with io_uring" },
  { "keyctl", "keyctl", -1, 0, -1, false,
    "the kernel keyrings are not namespaced; a refcount overflow in them was a root exploit "
    "(CVE-2016-0728)" },
  { "add_key", "add_key", -1, 0, -1, false, "adds keys to the kernel keyrings (not namespaced)" },
  { "request_key", "request_key", -1, 0, -1, false, "asks the host's key upcall helpers for keys" },
  { "open_by_handle_at", "open_by_handle_at", -1, 0, CAP_DAC_READ_SEARCH, true,
    "opens any file of a mounted filesystem by its handle, past the mount namespace (the 'shocker' escape)" },
  { "kexec_load", "kexec_load", -1, 0, CAP_SYS_BOOT, true, "replaces the running kernel" },
  { "kexec_file_load", "kexec_file_load", -1, 0, CAP_SYS_BOOT, true, "replaces the running kernel" },
  { "init_module", "init_module", -1, 0, CAP_SYS_MODULE, true, "loads code into the kernel" },
  { "finit_module", "finit_module", -1, 0, CAP_SYS_MODULE, true, "loads code into the kernel from a file" },
  { "delete_module", "delete_module", -1, 0, CAP_SYS_MODULE, true, "unloads kernel modules" },
  { "iopl", "iopl", -1, 0, CAP_SYS_RAWIO, true, "raw x86 I/O port access" },
  { "swapon", "swapon", -1, 0, CAP_SYS_ADMIN, true, "changes the host's swap" },
  { "clock_settime", "clock_settime", -1, 0, CAP_SYS_TIME, true,
    "sets the host's realtime clock (not namespaced)" },
};
const size_t ab_n_dangers = AB_ARRAY_SIZE (ab_dangers);

const char *
ab_reach_name (int reach)
{
  switch (reach)
    {
    case AB_REACH_NA:
      return "not on this architecture";
    case AB_REACH_BLOCKED:
      return "blocked";
    case AB_REACH_COND:
      return "conditionally";
    default:
      return "reachable";
    }
}

char *
ab_seccomp_action_text (int action, bool errno_set, uint32_t errno_ret)
{
  const char *name;

  switch (action)
    {
    case AB_SCMP_ACT_KILL:
    case AB_SCMP_ACT_KILL_THREAD:
      return xstrdup ("SCMP_ACT_KILL_THREAD");
    case AB_SCMP_ACT_ERRNO:
      name = strerrorname_np (errno_set ? (int)errno_ret : EPERM);
      if (name != NULL)
        return xasprintf ("SCMP_ACT_ERRNO(%s)", name);
      return xasprintf ("SCMP_ACT_ERRNO(%u)", errno_set ? errno_ret : (unsigned)EPERM);
    case AB_SCMP_ACT_TRACE:
      return xasprintf ("SCMP_ACT_TRACE(%u)", errno_set ? errno_ret : (unsigned)EPERM);
    default:
      name = ab_seccomp_action_name (action);
      return xstrdup (name ? name : "?");
    }
}

enum
{
  C_BLOCKS,
  C_ALLOWS,
  C_DEFERS, /* TRACE, NOTIFY: another process decides */
};

static int
action_class (int action)
{
  switch (action)
    {
    case AB_SCMP_ACT_ALLOW:
    case AB_SCMP_ACT_LOG:
      return C_ALLOWS;
    case AB_SCMP_ACT_TRACE:
    case AB_SCMP_ACT_NOTIFY:
      return C_DEFERS;
    default:
      return C_BLOCKS;
    }
}

enum
{
  M_NO,
  M_MAYBE,
  M_YES,
};

static int
cond_eval (const struct ab_seccomp_arg *c, const struct ab_danger *d)
{
  uint64_t v = d->value;
  bool r;

  if (d->arg < 0 || c->index != (uint32_t)d->arg)
    return M_MAYBE;
  switch (c->op)
    {
    case AB_SCMP_CMP_NE:
      r = v != c->value;
      break;
    case AB_SCMP_CMP_LT:
      r = v < c->value;
      break;
    case AB_SCMP_CMP_LE:
      r = v <= c->value;
      break;
    case AB_SCMP_CMP_EQ:
      r = v == c->value;
      break;
    case AB_SCMP_CMP_GE:
      r = v >= c->value;
      break;
    case AB_SCMP_CMP_GT:
      r = v > c->value;
      break;
    default: /* MASKED_EQ: (arg & value) == valueTwo */
      r = (v & c->value) == c->value_two;
      break;
    }
  return r ? M_YES : M_NO;
}

static bool
same_index (const struct ab_seccomp_rule *rule)
{
  for (size_t i = 0; i < rule->n_args; i++)
    for (size_t j = 0; j < i; j++)
      if (rule->args[i].index == rule->args[j].index)
        return true;
  return false;
}

/* Whether one syscalls[] entry matches the probe. */
static int
rule_match (const struct ab_seccomp_rule *rule, const struct ab_danger *d)
{
  bool any_or = same_index (rule);
  int yes = 0, no = 0;

  if (rule->n_args == 0)
    return M_YES;
  for (size_t i = 0; i < rule->n_args; i++)
    {
      int m = cond_eval (&rule->args[i], d);
      yes += m == M_YES;
      no += m == M_NO;
    }
  if (any_or)
    return yes > 0 ? M_YES : (size_t)no == rule->n_args ? M_NO : M_MAYBE;
  return no > 0 ? M_NO : (size_t)yes == rule->n_args ? M_YES : M_MAYBE;
}

/* The profile with every name resolved once: nrs[i][k] is the number of
   syscalls[i].names[k] (__NR_SCMP_ERROR when unknown), skipped[i] whether
   the runtime skips the entry (its action is the default one). */
struct resolved
{
  const struct ab_seccomp *sc;
  int **nrs;
  bool *skipped;
};

static void
resolve (const struct ab_seccomp *sc, struct resolved *r)
{
  _cleanup_free_ char *d
      = ab_seccomp_action_text (sc->default_action, sc->default_errno_ret_set, sc->default_errno_ret);

  r->sc = sc;
  r->nrs = xcalloc (sc->n_syscalls + 1, sizeof *r->nrs);
  r->skipped = xcalloc (sc->n_syscalls + 1, sizeof *r->skipped);
  for (size_t i = 0; i < sc->n_syscalls; i++)
    {
      const struct ab_seccomp_rule *rule = &sc->syscalls[i];
      _cleanup_free_ char *t = ab_seccomp_action_text (rule->action, rule->errno_ret_set, rule->errno_ret);

      r->skipped[i] = strcmp (d, t) == 0;
      r->nrs[i] = xcalloc (rule->names.n + 1, sizeof **r->nrs);
      for (size_t k = 0; k < rule->names.n; k++)
        r->nrs[i][k] = seccomp_syscall_resolve_name (rule->names.v[k]);
    }
}

static void
resolved_free (struct resolved *r)
{
  for (size_t i = 0; i < r->sc->n_syscalls; i++)
    free (r->nrs[i]);
  free (r->nrs);
  free (r->skipped);
}

static bool
rule_names_nr (const struct resolved *rs, size_t i, int nr)
{
  for (size_t k = 0; k < rs->sc->syscalls[i].names.n; k++)
    if (rs->nrs[i][k] == nr)
      return true;
  return false;
}

struct best
{
  int m;
  ssize_t rule;
};

static void
keep_best (struct best *b, int m, size_t i)
{
  if (m > b->m)
    {
      b->m = m;
      b->rule = (ssize_t)i;
    }
}

static void
reach_of (const struct resolved *rs, const struct ab_danger *d, struct ab_reach_result *out)
{
  const struct ab_seccomp *sc = rs->sc;
  struct best allow = { M_NO, -1 }, block = { M_NO, -1 }, defer = { M_NO, -1 };
  int nr = seccomp_syscall_resolve_name (d->name);
  int def = action_class (sc->default_action);

  out->rule = -1;
  if (nr == __NR_SCMP_ERROR)
    {
      out->reach = AB_REACH_NA;
      out->how = xstrdup ("unknown to libseccomp on this architecture");
      return;
    }
  /* The first entry without conditions decides alone. */
  for (size_t i = 0; i < sc->n_syscalls; i++)
    if (!rs->skipped[i] && sc->syscalls[i].n_args == 0 && rule_names_nr (rs, i, nr))
      {
        int cls = action_class (sc->syscalls[i].action);
        out->rule = (ssize_t)i;
        out->reach = cls == C_ALLOWS ? AB_REACH_YES : cls == C_DEFERS ? AB_REACH_COND : AB_REACH_BLOCKED;
        out->how = xasprintf (cls == C_ALLOWS   ? "allowed by linux.seccomp.syscalls[%zu]"
                              : cls == C_DEFERS ? "linux.seccomp.syscalls[%zu]: a tracer or listener decides"
                                                : "refused by linux.seccomp.syscalls[%zu]",
                              i);
        return;
      }
  for (size_t i = 0; i < sc->n_syscalls; i++)
    {
      const struct ab_seccomp_rule *rule = &sc->syscalls[i];
      int m, cls;

      if (rs->skipped[i] || !rule_names_nr (rs, i, nr))
        continue;
      m = rule_match (rule, d);
      cls = action_class (rule->action);
      keep_best (cls == C_ALLOWS ? &allow : cls == C_BLOCKS ? &block : &defer, m, i);
    }
  if (allow.m == M_YES && block.m == M_YES)
    {
      out->reach = AB_REACH_COND;
      out->rule = allow.rule;
      out->how = xasprintf ("linux.seccomp.syscalls[%zd] allows and [%zd] refuses it for the same arguments",
                            allow.rule, block.rule);
    }
  else if (allow.m == M_YES)
    {
      out->reach = AB_REACH_YES;
      out->rule = allow.rule;
      out->how = xasprintf ("allowed by linux.seccomp.syscalls[%zd]", allow.rule);
    }
  else if (allow.m == M_MAYBE)
    {
      out->reach = AB_REACH_COND;
      out->rule = allow.rule;
      out->how = xasprintf ("allowed by linux.seccomp.syscalls[%zd] when its argument conditions hold",
                            allow.rule);
    }
  else if (defer.m != M_NO || def == C_DEFERS)
    {
      out->reach = AB_REACH_COND;
      out->rule = defer.rule;
      out->how = defer.m != M_NO
                     ? xasprintf ("linux.seccomp.syscalls[%zd]: a tracer or listener decides", defer.rule)
                     : xstrdup ("the default action: a tracer or listener decides");
    }
  else if (def == C_ALLOWS && block.m == M_YES)
    {
      out->reach = AB_REACH_BLOCKED;
      out->rule = block.rule;
      out->how = xasprintf ("refused by linux.seccomp.syscalls[%zd]", block.rule);
    }
  else if (def == C_ALLOWS && block.m == M_MAYBE)
    {
      out->reach = AB_REACH_COND;
      out->rule = block.rule;
      out->how = xasprintf ("the default allows it; linux.seccomp.syscalls[%zd] refuses only some arguments",
                            block.rule);
    }
  else if (def == C_ALLOWS)
    {
      out->reach = AB_REACH_YES;
      out->how = xstrdup ("the default action allows it");
    }
  else
    {
      out->reach = AB_REACH_BLOCKED;
      out->how = xstrdup ("the default action refuses it");
    }
}

/* How many native syscalls each action decides. */
struct slot
{
  ssize_t always; /* the first entry deciding it unconditionally, or -1 */
  ssize_t cond;   /* the first entry with conditions, or -1 */
};

static struct ab_action_count *
count_for (struct ab_seccomp_eval *e, const char *text)
{
  for (size_t i = 0; i < e->n_counts; i++)
    if (strcmp (e->counts[i].action, text) == 0)
      return &e->counts[i];
  e->counts = xreallocarray (e->counts, e->n_counts + 1, sizeof *e->counts);
  memset (&e->counts[e->n_counts], 0, sizeof *e->counts);
  e->counts[e->n_counts].action = xstrdup (text);
  return &e->counts[e->n_counts++];
}

static void
count_actions (const struct resolved *rs, struct ab_seccomp_eval *e)
{
  const struct ab_seccomp *sc = rs->sc;
  _cleanup_free_ struct slot *slots = xcalloc (NR_MAX, sizeof *slots);

  for (int nr = 0; nr < NR_MAX; nr++)
    slots[nr].always = slots[nr].cond = -1;
  for (size_t i = 0; i < sc->n_syscalls; i++)
    {
      const struct ab_seccomp_rule *rule = &sc->syscalls[i];
      bool skipped = rs->skipped[i];

      for (size_t k = 0; k < rule->names.n; k++)
        {
          int nr = rs->nrs[i][k];
          if (nr == __NR_SCMP_ERROR)
            {
              if (!ab_strv_contains (&e->unknown, rule->names.v[k]))
                ab_strv_push (&e->unknown, rule->names.v[k]);
              continue;
            }
          if (skipped || nr < 0 || nr >= NR_MAX)
            continue;
          if (rule->n_args == 0 && slots[nr].always < 0)
            slots[nr].always = (ssize_t)i;
          else if (rule->n_args > 0 && slots[nr].cond < 0)
            slots[nr].cond = (ssize_t)i;
        }
    }
  for (int nr = 0; nr < NR_MAX; nr++)
    {
      char *name = seccomp_syscall_resolve_num_arch (SCMP_ARCH_NATIVE, nr);
      const struct ab_seccomp_rule *rule;

      if (name == NULL)
        continue;
      free (name);
      e->native_total++;
      if (slots[nr].always >= 0)
        {
          _cleanup_free_ char *t = NULL;
          rule = &sc->syscalls[slots[nr].always];
          t = ab_seccomp_action_text (rule->action, rule->errno_ret_set, rule->errno_ret);
          count_for (e, t)->always++;
        }
      else
        {
          if (slots[nr].cond >= 0)
            {
              _cleanup_free_ char *t = NULL;
              rule = &sc->syscalls[slots[nr].cond];
              t = ab_seccomp_action_text (rule->action, rule->errno_ret_set, rule->errno_ret);
              count_for (e, t)->cond++;
            }
          e->default_only += slots[nr].cond < 0;
        }
    }
}

void
ab_seccomp_eval (const struct ab_seccomp *sc, struct ab_seccomp_eval *out)
{
  struct resolved rs;

  memset (out, 0, sizeof *out);
  out->danger = xcalloc (ab_n_dangers, sizeof *out->danger);
  if (sc == NULL)
    {
      for (size_t i = 0; i < ab_n_dangers; i++)
        {
          out->danger[i].reach = seccomp_syscall_resolve_name (ab_dangers[i].name) == __NR_SCMP_ERROR
                                     ? AB_REACH_NA
                                     : AB_REACH_YES;
          out->danger[i].how = xstrdup (out->danger[i].reach == AB_REACH_NA ? "unknown on this architecture"
                                                                            : "no seccomp filter");
          out->danger[i].rule = -1;
        }
      return;
    }
  out->present = true;
  out->allow_default = action_class (sc->default_action) == C_ALLOWS;
  resolve (sc, &rs);
  count_actions (&rs, out);
  for (size_t i = 0; i < ab_n_dangers; i++)
    reach_of (&rs, &ab_dangers[i], &out->danger[i]);
  resolved_free (&rs);
}

void
ab_seccomp_eval_free (struct ab_seccomp_eval *e)
{
  for (size_t i = 0; i < e->n_counts; i++)
    free (e->counts[i].action);
  free (e->counts);
  if (e->danger)
    for (size_t i = 0; i < ab_n_dangers; i++)
      free (e->danger[i].how);
  free (e->danger);
  ab_strv_free (&e->unknown);
  memset (e, 0, sizeof *e);
}
