/* Internals of the audit engine shared by the files of audit/ (the public interface
 * is audit/audit.h).
 *
 * Files:
 *   report.c          the report: lines, findings, counts, freeing
 *   input.c           reading configs, ab_audit_config / ab_audit_profile
 *   facts.c           facts derived once from the spec (caps after exec, ...)
 *   seccomp-eval.c    which syscalls a linux.seccomp profile lets through
 *   map-host.c        map: cgroups, devices, namespaces, user ns, network,
 *                     parent-side process attributes
 *   map-fs.c          map: mounts, hooks, pivot_root, sysctl, paths
 *   map-process.c     map: process setup, capabilities, no_new_privs,
 *                     seccomp, exec
 *   map-landlock.c    map: the landlock ruleset; rule AB-LL-001
 *   rules-table.c     the rule catalogue (ids, severities, why, fix)
 *   rules-ns.c        rules: namespaces, users, sysctl, network, hooks, spec
 *   rules-fs.c        rules: mounts, masked and read-only paths
 *   rules-priv.c      rules: capabilities, no_new_privs, seccomp, limits, devices
 *   live*.c           the running container, from the host side
 *   diff.c, render-*.c
 */
#ifndef AB_AUDIT_INTERNAL_H
#define AB_AUDIT_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "audit/audit.h"
#include "netns/egress.h"
#include "netns/netns.h"
#include "runtime/plan/plan.h"
#include "spec/model.h"

/* ---- seccomp reachability (seccomp-eval.c) -------------------------------- */

enum ab_reach
{
  AB_REACH_NA,      /* the syscall does not exist on this architecture */
  AB_REACH_BLOCKED, /* the filter refuses it whatever the arguments */
  AB_REACH_COND,    /* reachable for some arguments, or a tracer decides */
  AB_REACH_YES,     /* reachable */
};
const char *ab_reach_name (int reach); /* "blocked", "conditionally", "reachable" */

/* A syscall that widens the kernel attack surface or acts on the host.  arg
   >= 0: the probe fixes that argument to `value` (unshare(CLONE_NEWUSER));
   cap >= 0: the capability the kernel checks (in the container's user
   namespace unless init_ns: then only host capabilities count). */
struct ab_danger
{
  const char *label; /* "unshare(CLONE_NEWUSER)" */
  const char *name;  /* "unshare" */
  int arg;
  uint64_t value;
  int cap;
  bool init_ns;
  const char *why;
};
extern const struct ab_danger ab_dangers[];
extern const size_t ab_n_dangers;

struct ab_reach_result
{
  int reach;    /* enum ab_reach */
  char *how;    /* "allowed by linux.seccomp.syscalls[0]", "default action", ... */
  ssize_t rule; /* the deciding syscalls[] entry, or -1 */
};

struct ab_action_count
{
  char *action;  /* "SCMP_ACT_ALLOW", "SCMP_ACT_ERRNO(EPERM)" */
  size_t always; /* syscalls this action decides whatever their arguments */
  size_t cond;   /* syscalls it decides for some arguments */
};

struct ab_seccomp_eval
{
  bool present;
  bool allow_default;  /* the default action lets syscalls through */
  size_t native_total; /* syscalls of the native architecture libseccomp knows */
  size_t default_only; /* decided by the default action alone */
  struct ab_action_count *counts;
  size_t n_counts;
  struct ab_strv unknown;         /* names libseccomp does not know (skipped, as the runtime does) */
  struct ab_reach_result *danger; /* one per ab_dangers[] */
};
void ab_seccomp_eval (const struct ab_seccomp *sc, struct ab_seccomp_eval *out);
void ab_seccomp_eval_free (struct ab_seccomp_eval *e);
/* "SCMP_ACT_ERRNO(EPERM)", "SCMP_ACT_KILL_THREAD": an action as the kernel gets it. */
char *ab_seccomp_action_text (int action, bool errno_set, uint32_t errno_ret);

/* ---- facts (facts.c) -------------------------------------------------------- */

struct ab_audit_facts
{
  bool ns_present[AB_NS__COUNT];
  bool ns_new[AB_NS__COUNT];
  bool ns_host[AB_NS__COUNT]; /* absent (the runtime's), or joined at /proc/1/ns/ */
  bool userns;                /* a new user namespace */
  bool uid0_mapped;           /* host uid 0 is mapped into the container (or no userns) */
  bool gid0_mapped;
  bool root_user; /* process.user.uid is 0 */
  bool nnp;
  uint64_t caps[5];   /* the configured sets (enum ab_capset), absent = empty */
  uint64_t caps_exec; /* permitted = effective of the program after execve */
  uint64_t caps_gain; /* further reachable via set-user-ID or file capabilities */
  struct ab_seccomp_eval sc;
  bool pids_limited, mem_limited, cpu_limited;
  bool own_netns;           /* a network namespace agentbox creates */
  bool lo_only;             /* ... with lo alone (no linux.netDevices) */
  bool wall;                /* agentbox installs the nftables wall */
  struct ab_net_policy net;       /* dev.agentbox.net.allow (the plan's; not owned) */
  struct ab_egress_policy egress; /* the domain policy create would enforce (the plan's; not owned) */
  const char *net_error;          /* why the network annotations do not parse, or NULL */
  char *rootfs;    /* root.path made absolute against the bundle, or NULL */
  struct ab_plan *plan; /* owned */
};

struct ab_audit_ctx
{
  const struct ab_spec *s;
  const struct ab_linux *l; /* NULL when the config has no linux object */
  const char *bundle_dir;   /* canonical, or NULL */
  struct ab_audit_report *r;
  const struct ab_plan *p;  /* what create would do: the plan of the config (facts.c builds it) */
  int rootless;             /* --rootless as create takes it: -1 auto (the caller's privileges), 0, 1 */
  struct ab_audit_facts f;
};

void ab_audit_facts_init (struct ab_audit_ctx *a);
void ab_audit_facts_free (struct ab_audit_facts *f);

/* A capability mask as "CAP_A, CAP_B", "none", or "all N"; caller frees. */
char *ab_audit_caps_text (uint64_t mask);
/* Whether the device cgroup (rules in order, last match wins, then the
   runtime's defaults) lets `access` ('r', 'w' or 'm') reach type:major:minor;
   *rule gets the deciding linux.resources.devices index or -1. */
bool ab_audit_dev_allowed (const struct ab_audit_ctx *a, char type, int64_t major, int64_t minor, char access,
                           ssize_t *rule);
/* The host path a bind source names (relative: against the bundle); caller frees. */
char *ab_audit_bind_source (const struct ab_audit_ctx *a, const struct ab_mount *m);
/* Whether a mount is a bind (as the runtime decides: option or type "bind"). */
bool ab_audit_is_bind (const struct ab_mount *m);
/* Whether the mount ends up read-only at its top (ro, rro). */
bool ab_audit_mount_ro (const struct ab_mount *m);

/* The wall agentbox would install for the config's annotations (the
   runtime's own builder, netns/nft-rules.c), and the proxy it implies;
   ports is the proxy's storage for the redirected ports. */
struct ab_nft_ruleset;
struct ab_nft_ruleset *ab_audit_expected_wall (const struct ab_audit_facts *f, uint16_t ports[64],
                                               struct ab_netns_proxy *proxy);

/* ---- building the report (report.c) ---------------------------------------- */

struct ab_audit_line *ab_audit_add (struct ab_audit_ctx *a, int section, const char *name, const char *path,
                                    unsigned flags, const char *fmt, ...)
    __attribute__ ((format (printf, 6, 7)));
void ab_audit_line_value (struct ab_audit_line *l, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
void ab_audit_line_note (struct ab_audit_line *l, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
/* A finding of rule `id` at its default severity; the path names the field. */
void ab_audit_find (struct ab_audit_ctx *a, const char *id, const char *path, const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));
/* The same at another severity (say why in the detail). */
void ab_audit_find_sev (struct ab_audit_ctx *a, const char *id, int severity, const char *path,
                        const char *fmt, ...) __attribute__ ((format (printf, 5, 6)));
/* Stable order: lines by section (document order within), findings by
   severity (high first), then id, then path. */
void ab_audit_report_sort (struct ab_audit_report *r);
/* The finished JSON document of g, one trailing newline (render-json.c). */
struct ab_gen;
char *ab_audit_gen_document (struct ab_gen *g);

/* ---- the passes ------------------------------------------------------------- */

void ab_audit_map_host (struct ab_audit_ctx *a);
void ab_audit_map_fs (struct ab_audit_ctx *a);
void ab_audit_map_process (struct ab_audit_ctx *a);
void ab_audit_map_landlock (struct ab_audit_ctx *a);
void ab_audit_rules_ns (struct ab_audit_ctx *a);
void ab_audit_rules_fs (struct ab_audit_ctx *a);
void ab_audit_rules_priv (struct ab_audit_ctx *a);
void ab_audit_rules_rootless (struct ab_audit_ctx *a);

/* The facts, the maps and the rules over a, in pipeline order; the caller
   frees a->f. */
void ab_audit_passes (struct ab_audit_ctx *a);

/* ---- live (live*.c) ----------------------------------------------------------- */

struct ab_live
{
  pid_t pid;
  int status; /* enum ab_status */
  const struct ab_spec *s;
  const char *bundle_dir;
  struct ab_audit_ctx *a; /* the static audit of the stored config */
  bool own_netns;         /* from the state */
};
void ab_live_mounts (struct ab_live *lv);  /* mountinfo: flags, propagation, masks, extra mounts */
void ab_live_cgroups (struct ab_live *lv); /* pids, memory, cpu limits */
void ab_live_nft (struct ab_live *lv);     /* the agentbox table in the container's netns */

#endif
