/* Name tables of the OCI runtime-spec: namespaces, capabilities, rlimits,
 * capability sets, hook kinds, seccomp actions/operators/architectures/flags,
 * mount options, scheduler, I/O priority, memory policy.  One table per
 * name set: the parser, the validator, the runtime's messages, `features`
 * and `audit` all read these, so what we advertise is exactly what we parse
 * and every message spells a name as config.json does. */
#ifndef AB_SPEC_TABLES_H
#define AB_SPEC_TABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* All lookups return -1 for an unknown name, and NULL for an unknown value. */

int ab_ns_from_name (const char *name);  /* "network" -> AB_NS_NET */
const char *ab_ns_name (int type);       /* AB_NS_NET -> "network" */
unsigned long ab_ns_clone_flag (int type); /* AB_NS_NET -> CLONE_NEWNET */
const char *ab_ns_proc_name (int type);  /* AB_NS_NET -> "net" (as in /proc/PID/ns/) */

int ab_cap_from_name (const char *name); /* "CAP_CHOWN" -> 0 */
const char *ab_cap_name (int cap);
int ab_cap_count (void);                 /* number of capabilities we know (CAP_LAST_CAP + 1) */
const char *ab_capset_name (int set);    /* AB_CAP_BOUNDING -> "bounding" */

const char *ab_hook_kind_name (int kind); /* AB_HOOK_CREATE_RUNTIME -> "createRuntime" */

int ab_rlimit_from_name (const char *name); 
int ab_seccomp_action_from_name (const char *name);
const char *ab_seccomp_action_name (int action);
int ab_seccomp_op_from_name (const char *name);
const char *ab_seccomp_op_name (int op);
/* Architectures: names as in config-linux.md; -1 when unknown. */
int ab_seccomp_arch_index (const char *name);
const char *ab_seccomp_arch_name (int index);
int ab_seccomp_arch_count (void);
int ab_seccomp_flag_from_name (const char *name); /* returns the AB_SECCOMP_FLAG_* bit */
const char *ab_seccomp_flag_name (unsigned bit);

/* Mount options (config.md "Linux mount options"). */
enum ab_mopt_kind
{
  AB_MOPT_FLAG,        /* set MS_* (flag) */
  AB_MOPT_CLEAR,       /* clear MS_* (flag): rw, suid, dev, exec, ... */
  AB_MOPT_ATTR_SET,    /* recursive MOUNT_ATTR_* set (rro, rnosuid, ...) */
  AB_MOPT_ATTR_CLR,    /* recursive MOUNT_ATTR_* clear (rrw, rsuid, ...) */
  AB_MOPT_BIND,        /* bind */
  AB_MOPT_RBIND,       /* rbind */
  AB_MOPT_PROPAGATION, /* shared, rslave, ... (value: enum ab_propagation) */
  AB_MOPT_IDMAP,       /* idmap / ridmap */
  AB_MOPT_TMPCOPYUP,
  AB_MOPT_IGNORE,      /* defaults, loud: accepted, no effect by definition */
};
struct ab_mount_option
{
  const char *name;
  int kind;           /* enum ab_mopt_kind */
  unsigned long flag; /* MS_* for FLAG/CLEAR */
  uint64_t attr;      /* MOUNT_ATTR_* for ATTR_SET/ATTR_CLR (atime kinds use the MOUNT_ATTR__ATIME mask) */
  int value;          /* propagation kind, recursive flag for RBIND/IDMAP/PROPAGATION */
};
/* NULL for a filesystem-specific option (passed as mount data). */
const struct ab_mount_option *ab_mount_option_lookup (const char *name);
/* The recognised option names in features.md order; count via *n. */
const struct ab_mount_option *ab_mount_options (size_t *n);
/* Propagation words (shared, rslave, ...), from the same table: the kind
   (enum ab_propagation) and whether the word is the recursive "r" form;
   -1 / NULL when unknown. */
int ab_propagation_from_name (const char *name, bool *recursive);
const char *ab_propagation_name (int kind, bool recursive);

int ab_sched_policy_from_name (const char *name);   /* enum ab_sched_policy */
const char *ab_sched_policy_name (int policy);
int64_t ab_sched_flag_from_name (const char *name); /* SCHED_FLAG_* kernel bit */
int ab_ioprio_class_from_name (const char *name);   /* enum ab_ioprio_class */
int ab_mpol_mode_from_name (const char *name);      /* enum ab_mpol_mode */
const char *ab_mpol_mode_name (int mode);
int ab_mpol_flag_from_name (const char *name);      /* AB_MPOL_F_* */

const char *ab_mpol_flag_name_at (size_t i);

#endif
