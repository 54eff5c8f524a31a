/* The mechanism map, third part: the container process's last steps before
 * execve (runtime/child.c, runtime/process.c, runtime/caps.c,
 * runtime/seccomp.c): personality, memory policy, keyring, cwd, rlimits,
 * LSM, user, capabilities, no_new_privs, seccomp, exec. */
#include "config.h"

#include <ctype.h>
#include <inttypes.h>
#include <seccomp.h>

#include "audit/audit-internal.h"
#include "base/util.h"
#include "spec/tables.h"

static void
map_process_setup (struct ab_audit_ctx *a, const struct ab_process *p)
{
  const struct ab_linux *l = a->l;

  if (l && l->personality_set)
    ab_audit_add (a, AB_AUDIT_S_PROCESS, "personality", "linux.personality", 0, "personality(%s)",
                  l->personality_domain == AB_PERSONA_LINUX32 ? "PER_LINUX32" : "PER_LINUX");
  if (l && l->memory_policy)
    ab_audit_add (a, AB_AUDIT_S_PROCESS, "memoryPolicy", "linux.memoryPolicy", 0, "set_mempolicy(%s%s%s)",
                  ab_mpol_mode_name (l->memory_policy->mode), l->memory_policy->nodes ? ", nodes " : "",
                  l->memory_policy->nodes ? l->memory_policy->nodes : "");
  ab_audit_add (
      a, AB_AUDIT_S_PROCESS, "keyring", NULL, 0,
      "a new session keyring named after the container (unless --no-new-keyring): the host's keys are not "
      "the container's");
  ab_audit_line_value (
      ab_audit_add (a, AB_AUDIT_S_PROCESS, "cwd", "process.cwd", 0,
                    "resolved inside the new root and entered before any seccomp filter; every fd above "
                    "stdio (and --preserve-fds) is closed at exec, so no host directory fd can become the "
                    "cwd (runc's CVE-2024-21626)"),
      "%s", p->cwd);
  for (size_t i = 0; i < p->n_rlimits; i++)
    {
      const struct ab_rlimit *r = &p->rlimits[i];
      char path[48], soft[24], hard[24];
      snprintf (path, sizeof path, "process.rlimits[%zu]", i);
      snprintf (soft, sizeof soft, r->soft == UINT64_MAX ? "unlimited" : "%" PRIu64, r->soft);
      snprintf (hard, sizeof hard, r->hard == UINT64_MAX ? "unlimited" : "%" PRIu64, r->hard);
      ab_audit_line_value (
          ab_audit_add (a, AB_AUDIT_S_PROCESS, r->type, path, 0,
                        "setrlimit in the container process; a hard limit above the host's needs host "
                        "CAP_SYS_RESOURCE (create fails otherwise)"),
          "soft %s, hard %s", soft, hard);
    }
  if (p->n_rlimits == 0)
    ab_audit_add (a, AB_AUDIT_S_PROCESS, "rlimits", "process.rlimits", 0,
                  "none set: the container inherits agentbox's limits");
  if (p->apparmor_profile && *p->apparmor_profile)
    ab_audit_add (a, AB_AUDIT_S_PROCESS, "apparmorProfile", "process.apparmorProfile", 0,
                  "\"exec %s\" to /proc/thread-self/attr/apparmor/exec (create fails without AppArmor)",
                  p->apparmor_profile);
  if (p->selinux_label && *p->selinux_label)
    ab_audit_add (a, AB_AUDIT_S_PROCESS, "selinuxLabel", "process.selinuxLabel", 0,
                  "written to /proc/thread-self/attr/exec (create fails without SELinux)");
  if (l && l->mount_label && *l->mount_label)
    ab_audit_add (a, AB_AUDIT_S_PROCESS, "mountLabel", "linux.mountLabel", AB_AUDIT_L_REFUSED,
                  "SELinux mount labels are refused by agentbox");
  ab_audit_line_value (
      ab_audit_add (a, AB_AUDIT_S_PROCESS, "user", "process.user",
                    a->f.root_user && !a->f.userns ? AB_AUDIT_L_HOST | AB_AUDIT_L_WEAK : 0,
                    "setgroups(%zu additional gids; denied when rootless), setresgid, setresuid with "
                    "PR_SET_KEEPCAPS so the configured capabilities survive%s",
                    p->user.n_additional_gids, p->user.umask_set ? ", umask" : ""),
      "uid %u gid %u%s", p->user.uid, p->user.gid, a->f.root_user && !a->f.userns ? " (host root)" : "");
}

static void
map_caps (struct ab_audit_ctx *a, const struct ab_process *p)
{
  static const char *const mech[AB_CAP__SETS] = {
    [AB_CAP_BOUNDING] = "PR_CAPBSET_DROP of every other capability: what any later execve can ever grant",
    [AB_CAP_EFFECTIVE] = "capset, one call with permitted and inheritable",
    [AB_CAP_INHERITABLE] = "capset",
    [AB_CAP_PERMITTED] = "capset",
    [AB_CAP_AMBIENT] = "cleared, then PR_CAP_AMBIENT_RAISE of those also permitted and inheritable (others "
                       "skipped with a note)",
  };

  for (int k = 0; k < AB_CAP__SETS; k++)
    {
      char path[48];
      _cleanup_free_ char *txt = ab_audit_caps_text (a->f.caps[k]);
      snprintf (path, sizeof path, "process.capabilities.%s", ab_capset_name (k));
      ab_audit_line_value (ab_audit_add (a, AB_AUDIT_S_CAPS, ab_capset_name (k), path, 0, "%s%s", mech[k],
                                         p->capabilities_set && p->caps.set[k] ? "" : " (absent: empty)"),
                           "%s", txt);
    }
  {
    _cleanup_free_ char *txt = ab_audit_caps_text (a->f.caps_exec);
    ab_audit_add (a, AB_AUDIT_S_CAPS, "after execve", "process.capabilities",
                  a->f.caps_exec ? AB_AUDIT_L_WEAK : 0, "%s: permitted = effective = %s",
                  a->f.root_user
                      ? (a->f.nnp ? "uid 0: inheritable | bounding | ambient, capped by the permitted "
                                    "set (no_new_privs)"
                                  : "uid 0: inheritable | bounding | ambient")
                      : "not uid 0: the ambient set (a program without file capabilities)",
                  txt);
  }
  if (a->f.caps_gain)
    {
      _cleanup_free_ char *txt = ab_audit_caps_text (a->f.caps_gain);
      ab_audit_add (a, AB_AUDIT_S_CAPS, "regainable", "process.capabilities.bounding", AB_AUDIT_L_WEAK,
                    "%s, through a set-user-ID-root program or file capabilities: no_new_privs is off", txt);
    }
}

static void
map_nnp (struct ab_audit_ctx *a)
{
  if (a->f.nnp)
    ab_audit_add (
        a, AB_AUDIT_S_NNP, "noNewPrivileges", "process.noNewPrivileges", 0,
        "prctl(PR_SET_NO_NEW_PRIVS, 1) after the capabilities: set-user-ID bits and file capabilities of "
        "later programs grant nothing");
  else
    ab_audit_add (a, AB_AUDIT_S_NNP, "noNewPrivileges", "process.noNewPrivileges", AB_AUDIT_L_WEAK,
                  "not set: a set-user-ID or file-capability program gains privileges at execve; %s",
                  a->l && a->l->seccomp
                      ? "the seccomp filter is installed before setresuid instead (it needs "
                        "CAP_SYS_ADMIN then, and must allow the privilege drop)"
                      : "no seccomp filter either");
}

static void
map_seccomp_counts (struct ab_audit_ctx *a, const struct ab_seccomp *sc, const char *def)
{
  const struct ab_seccomp_eval *e = &a->f.sc;

  for (size_t i = 0; i < e->n_counts; i++)
    ab_audit_add (a, AB_AUDIT_S_SECCOMP, e->counts[i].action, "linux.seccomp.syscalls", 0,
                  "%zu syscall%s always, %zu more for some arguments", e->counts[i].always,
                  e->counts[i].always == 1 ? "" : "s", e->counts[i].cond);
  ab_audit_add (a, AB_AUDIT_S_SECCOMP, "by default", "linux.seccomp.defaultAction", 0,
                "%zu of the %zu syscalls libseccomp knows here get %s whatever their arguments",
                e->default_only, e->native_total, def);
  if (e->unknown.n)
    {
      char buf[512] = "";
      for (size_t i = 0, o = 0; i < e->unknown.n && o < sizeof buf - 64; i++)
        o += (size_t)snprintf (buf + o, sizeof buf - o, "%s%s", i ? ", " : "", e->unknown.v[i]);
      ab_audit_add (
          a, AB_AUDIT_S_SECCOMP, "unknown names", "linux.seccomp.syscalls", 0,
          "%zu name%s libseccomp %d.%d does not know, skipped as runc does (the default applies): %s%s",
          e->unknown.n, e->unknown.n == 1 ? "" : "s", SCMP_VER_MAJOR, SCMP_VER_MINOR, buf,
          e->unknown.n > 12 ? ", ..." : "");
    }
  (void)sc;
}

/* The token libseccomp has for "SCMP_ARCH_X86_64" (its names are "x86_64"). */
static uint32_t
arch_token (const char *name)
{
  char low[32];
  size_t i;

  if (!ab_str_has_prefix (name, "SCMP_ARCH_"))
    return 0;
  for (i = 0; name[10 + i] && i < sizeof low - 1; i++)
    low[i] = (char)tolower ((unsigned char)name[10 + i]);
  low[i] = '\0';
  return seccomp_arch_resolve_name (low);
}

static void
map_seccomp_archs (struct ab_audit_ctx *a, const struct ab_seccomp *sc)
{
  char others[512] = "";
  size_t o = 0;

  for (size_t i = 0; i < sc->architectures.n && o < sizeof others - 64; i++)
    if (arch_token (sc->architectures.v[i]) != seccomp_arch_native ())
      o += (size_t)snprintf (others + o, sizeof others - o, "%s%s", o ? ", " : "", sc->architectures.v[i]);
  ab_audit_add (
      a, AB_AUDIT_S_SECCOMP, "architectures", "linux.seccomp.architectures", 0,
      "the native ABI%s%s; a syscall through any other ABI kills the process (bad-architecture action "
      "KILL_PROCESS)",
      o ? " and " : " only", others);
}

static void
map_dangers_unfiltered (struct ab_audit_ctx *a)
{
  char list[1024] = "";
  size_t o = 0;

  for (size_t i = 0; i < ab_n_dangers && o < sizeof list - 64; i++)
    if (a->f.sc.danger[i].reach != AB_REACH_NA)
      o += (size_t)snprintf (list + o, sizeof list - o, "%s%s", o ? ", " : "", ab_dangers[i].label);
  ab_audit_add (a, AB_AUDIT_S_SECCOMP, "dangerous syscalls", "linux.seccomp", AB_AUDIT_L_WEAK,
                "all reachable, as far as capabilities allow: %s", list);
}

static void
map_seccomp (struct ab_audit_ctx *a)
{
  const struct ab_seccomp *sc = a->l ? a->l->seccomp : NULL;
  _cleanup_free_ char *def = NULL;

  if (sc == NULL)
    {
      ab_audit_add (
          a, AB_AUDIT_S_SECCOMP, "filter", "linux.seccomp", AB_AUDIT_L_WEAK,
          "none: every syscall of every ABI is reachable; agentbox adds no default profile (neither does "
          "runc; Docker and podman write theirs into config.json)");
      map_dangers_unfiltered (a);
      return;
    }
  else
    {
      def = ab_seccomp_action_text (sc->default_action, sc->default_errno_ret_set, sc->default_errno_ret);
      ab_audit_line_value (
          ab_audit_add (a, AB_AUDIT_S_SECCOMP, "defaultAction", "linux.seccomp.defaultAction",
                        a->f.sc.allow_default ? AB_AUDIT_L_WEAK : 0, "%s for every syscall without a rule%s",
                        def, a->f.sc.allow_default ? ": a denylist" : ""),
          "%s", ab_seccomp_action_name (sc->default_action));
      map_seccomp_archs (a, sc);
      ab_audit_add (a, AB_AUDIT_S_SECCOMP, "install", "linux.seccomp", 0,
                    "compiled to BPF in the parent; one seccomp(SECCOMP_SET_MODE_FILTER%s) %s",
                    sc->flags ? ", flags" : "",
                    a->f.nnp ? "right before execve, after the privilege drop"
                             : "before setresuid (no no_new_privs)");
      size_t n_notify = 0;
      for (size_t i = 0; i < sc->n_syscalls; i++)
        n_notify += sc->syscalls[i].action == AB_SCMP_ACT_NOTIFY;
      /* Without a NOTIFY rule listenerPath is ignored (config-linux.md). */
      if (sc->listener_path && n_notify > 0)
        {
          size_t n = n_notify;
          /* The agent is a host process: what it answers (an errno, a
             value, or "continue") is the verdict on those calls. */
          ab_audit_add (a, AB_AUDIT_S_SECCOMP, "listenerPath", "linux.seccomp.listenerPath", AB_AUDIT_L_HOST,
                        "the filter's listener goes to the agent at %s before the program runs: it decides "
                        "the syscalls of %zu SCMP_ACT_NOTIFY rule%s",
                        sc->listener_path, n, n == 1 ? "" : "s");
        }
      map_seccomp_counts (a, sc, def);
    }
  for (size_t i = 0; i < ab_n_dangers; i++)
    {
      const struct ab_reach_result *r = &a->f.sc.danger[i];
      char path[48];

      if (r->reach == AB_REACH_NA)
        continue;
      snprintf (path, sizeof path, "linux.seccomp.syscalls[%zd]", r->rule);
      ab_audit_add (a, AB_AUDIT_S_SECCOMP, ab_dangers[i].label, r->rule >= 0 ? path : "linux.seccomp",
                    r->reach >= AB_REACH_COND ? AB_AUDIT_L_WEAK : 0, "%s: %s", ab_reach_name (r->reach),
                    r->how);
    }
}

static void
map_exec (struct ab_audit_ctx *a, const struct ab_process *p)
{
  ab_audit_line_value (ab_audit_add (a, AB_AUDIT_S_EXEC, "args", "process.args", 0,
                                     "execve, searched in the config's PATH inside the container, with %zu "
                                     "environment variables; signals reset to their defaults",
                                     p->env.n),
                       "%s", p->args.v[0]);
  ab_audit_add (a, AB_AUDIT_S_EXEC, "terminal", "process.terminal", 0, "%s",
                p->terminal ? "a pty of its own, the master sent to --console-socket"
                            : "agentbox's stdio (pipes for a tool call); never the host's terminal");
  ab_audit_add (
      a, AB_AUDIT_S_EXEC, "/proc/self/exe", NULL, 0,
      "agentbox re-executes itself from a read-only overlay of its directory mounted nowhere (else a sealed "
      "memfd copy) unless the user namespace cannot write its binary anyway: the container cannot overwrite "
      "the runtime (CVE-2019-5736)");
}

void
ab_audit_map_process (struct ab_audit_ctx *a)
{
  const struct ab_process *p = a->s->process;

  if (p == NULL)
    {
      ab_audit_add (a, AB_AUDIT_S_PROCESS, "process", "process", AB_AUDIT_L_REFUSED,
                    "absent: agentbox refuses to create a container with nothing to run");
      return;
    }
  map_process_setup (a, p);
  map_caps (a, p);
  map_nnp (a);
  map_seccomp (a);
  map_exec (a, p);
}
