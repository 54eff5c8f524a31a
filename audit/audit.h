/* agentbox audit: what a config.json really does to the kernel, and what is
 * dangerous in it.
 *
 * The engine takes a config (bytes, through the same bounded parser as
 * create) or a running container and builds one report:
 *
 *   - the mechanism map: for every field that takes effect, the kernel
 *     mechanism agentbox turns it into, in the order agentbox applies them
 *     (audit/map*.c walks the one spec model, spec/model.h);
 *   - findings: rules of audit/rules*.c, each with a stable id (AB-NS-001),
 *     a severity, the JSON path, why it matters and the fix;
 *   - for a running container, what is really applied, read from the host
 *     side (audit/live*.c), every difference from the config a finding.
 *
 * Renderers (text, JSON, SARIF 2.1.0) only read the report.  Nothing here
 * prints or exits: the CLI is cmd/audit.c, and the MCP server may call the
 * same functions. */
#ifndef AB_AUDIT_AUDIT_H
#define AB_AUDIT_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "base/error.h"

enum ab_audit_severity
{
  AB_AUDIT_LOW = 1,
  AB_AUDIT_MEDIUM = 2,
  AB_AUDIT_HIGH = 3,
};
const char *ab_audit_severity_name (int sev);       /* "low", "medium", "high" */
int ab_audit_severity_from_name (const char *name); /* -1 when unknown */

/* The sections of the mechanism map, in the order agentbox applies them
   (runtime/lifecycle/create.c and runtime/child.c). */
enum ab_audit_section
{
  AB_AUDIT_S_CGROUPS,    /* created and limited before clone3(CLONE_INTO_CGROUP) */
  AB_AUDIT_S_DEVICES,    /* device cgroup, then the nodes in /dev */
  AB_AUDIT_S_NAMESPACES, /* clone3 flags, setns for joined ones */
  AB_AUDIT_S_USERNS,     /* uid_map, gid_map, setgroups */
  AB_AUDIT_S_NETWORK,    /* netDevices, the nftables wall, the egress proxy */
  AB_AUDIT_S_HOSTATTR,   /* oomScoreAdj, scheduler, ioPriority: from the parent */
  AB_AUDIT_S_MOUNTS,     /* propagation of /, the rootfs bind, mounts[] in order */
  AB_AUDIT_S_HOOKS,      /* where each hook runs */
  AB_AUDIT_S_PIVOT,      /* pivot_root, hostname, domainname */
  AB_AUDIT_S_SYSCTL,
  AB_AUDIT_S_PATHS,   /* readonlyPaths, maskedPaths, root.readonly, rootfsPropagation */
  AB_AUDIT_S_PROCESS, /* personality, memory policy, keyring, cwd, rlimits, LSM, user */
  AB_AUDIT_S_LANDLOCK, /* the landlock ruleset, restricted after the LSM label */
  AB_AUDIT_S_CAPS,
  AB_AUDIT_S_NNP,
  AB_AUDIT_S_SECCOMP,
  AB_AUDIT_S_EXEC,
  AB_AUDIT_S_LIVE, /* a running container: what the host sees applied */
  AB_AUDIT_S__COUNT
};
const char *ab_audit_section_id (int section);    /* "cgroups" */
const char *ab_audit_section_title (int section); /* one line for humans */

/* Flags of a map line, for renderers that highlight. */
enum
{
  AB_AUDIT_L_HOST = 1u << 0,    /* shared with the host, or runs on the host */
  AB_AUDIT_L_REFUSED = 1u << 1, /* agentbox refuses this (create fails) */
  AB_AUDIT_L_WEAK = 1u << 2,    /* weakens the sandbox (e.g. a reachable dangerous syscall) */
};

/* One line of the mechanism map. */
struct ab_audit_line
{
  int section;     /* enum ab_audit_section */
  char *name;      /* "pid", "mounts[3] /proc", "CAP_SYS_ADMIN" */
  char *path;      /* JSON path in config.json, or NULL */
  char *value;     /* what the config says, short; NULL when absent */
  char *mechanism; /* what the kernel gets */
  char *note;      /* how other runtimes differ, or NULL */
  unsigned flags;  /* AB_AUDIT_L_* */
};

/* The catalogue entry of a rule (audit/rules-table.c). */
struct ab_audit_rule
{
  const char *id;    /* "AB-NS-001" */
  int severity;      /* default severity */
  const char *title; /* one line */
  const char *why;   /* the escape or abuse it allows */
  const char *fix;   /* the concrete change to config.json */
  const char *cve;   /* "CVE-2019-5736" or "CVE-a, CVE-b", NULL when none applies */
};
/* The catalogue in id order; *n entries. */
const struct ab_audit_rule *ab_audit_rules (size_t *n);
const struct ab_audit_rule *ab_audit_rule_find (const char *id);

struct ab_audit_finding
{
  const struct ab_audit_rule *rule;
  int severity; /* the rule's, or lowered with a reason in detail */
  char *path;   /* JSON path of the field (where to add it, when it is missing) */
  char *detail; /* what exactly in this config */
};

struct ab_audit_report
{
  char *kind;        /* "bundle", "config", "container", "profile" */
  char *source;      /* the bundle directory, file, container id, profile name */
  char *config_path; /* the file findings point at (absolute), or NULL */
  bool accepted;     /* agentbox validate / create would accept the config */
  char *refusal;     /* why not, one line, or NULL */
  struct ab_audit_line *lines;
  size_t n_lines;
  struct ab_audit_finding *findings;
  size_t n_findings;
  bool live;         /* a running container was examined */
  char *live_status; /* "running", "stopped, only the stored config was audited", ... */
};

void ab_audit_report_free (struct ab_audit_report *r);
static inline void
ab_audit_report_freep (struct ab_audit_report **r)
{
  ab_audit_report_free (*r);
}
#define _cleanup_audit_report_ __attribute__ ((cleanup (ab_audit_report_freep)))

/* Count of findings at each severity (index 1..3) and the highest. */
int ab_audit_report_max_severity (const struct ab_audit_report *r);
size_t ab_audit_report_count (const struct ab_audit_report *r, int severity);

/* ---- input (read with ab_config_read_at of spec/spec.h) -------------------- */

/* The landlock ABI the map fits the rules to (audit --landlock-abi N);
   -1: the running kernel's. */
void ab_audit_set_landlock_abi (int abi);

/* Audit config bytes.  bundle_dir (canonical, or NULL) resolves relative
   paths (root.path, bind sources); kind/source/config_path label the report.
   Parse errors are errors (class config, "config.json: <path>: <reason>");
   a config that parses but that agentbox would refuse is audited all the
   same (report->accepted false, plus a finding).  */
int ab_audit_config (const char *kind, const char *source, const char *bundle_dir, const char *config_path,
                     const char *buf, size_t len, struct ab_audit_report **out, ab_error_t *err);

/* --rootless (-1 auto, 0, 1): the audits that follow judge a config as
   create would run it with that option (auto: as the calling user). */
void ab_audit_set_rootless (int rootless);

/* The hardened profile of `agentbox spec` (rootless: `spec --rootless`), audited. */
int ab_audit_profile (bool rootless, struct ab_audit_report **out, ab_error_t *err);

/* A container of state root `root`: its stored config, and if it runs, what
   is applied (audit/live.c).  Class not_found when there is no such
   container. */
int ab_audit_container (const char *root, const char *id, struct ab_audit_report **out, ab_error_t *err);

/* ---- diff ----------------------------------------------------------------- */

struct ab_audit_change
{
  int section;
  char *name;
  const struct ab_audit_line *a; /* NULL: only in b */
  const struct ab_audit_line *b; /* NULL: only in a */
};

struct ab_audit_diff
{
  const struct ab_audit_report *a, *b; /* borrowed */
  struct ab_audit_change *changes;
  size_t n_changes;
  const struct ab_audit_finding **only_a; /* findings of a that b does not have */
  size_t n_only_a;
  const struct ab_audit_finding **only_b;
  size_t n_only_b;
};

/* Compare two reports mechanism by mechanism (lines keyed by section and
   name) and finding by finding (keyed by rule id and path). */
struct ab_audit_diff *ab_audit_diff (const struct ab_audit_report *a, const struct ab_audit_report *b);
void ab_audit_diff_free (struct ab_audit_diff *d);

/* ---- output --------------------------------------------------------------- */

struct ab_audit_render_opts
{
  bool color;  /* text: ANSI colours */
  int fail_on; /* the --fail-on severity, shown in the summary */
};

void ab_audit_render_text (FILE *f, const struct ab_audit_report *r, const struct ab_audit_render_opts *o);
void ab_audit_render_diff_text (FILE *f, const struct ab_audit_diff *d, const struct ab_audit_render_opts *o);
/* JSON documents (docs/audit-schema.json), NUL-terminated, caller frees. */
char *ab_audit_render_json (const struct ab_audit_report *r, const struct ab_audit_render_opts *o);
char *ab_audit_render_diff_json (const struct ab_audit_diff *d, const struct ab_audit_render_opts *o);
/* SARIF 2.1.0: tool.driver.rules is the whole catalogue. */
char *ab_audit_render_sarif (const struct ab_audit_report *r, const struct ab_audit_render_opts *o);
/* The catalogue alone (`audit --rules`): text, JSON, or man(7) source. */
void ab_audit_render_rules_text (FILE *f);
char *ab_audit_render_rules_json (void);
void ab_audit_render_rules_man (FILE *f);

#endif
