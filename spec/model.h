/* The config.json model: typed C structures for the Linux part of the OCI
 * runtime-spec 1.3.0 (config.md, config-linux.md).
 *
 * Every field the parser accepts is represented here and must be honoured by
 * the runtime or refused with an error naming it.  Optional scalars carry a
 * `set` flag so "absent" and "zero" never collapse.  Enumerations are stored
 * as agentbox's own enums (spec/tables.c maps names), so this layer needs no
 * kernel or library headers beyond libc and can be fuzzed on its own.
 */
#ifndef AB_SPEC_MODEL_H
#define AB_SPEC_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"
#include "spec/landlock.h"
#include "spec/netpolicy.h"

#define AB_OCI_VERSION "1.3.0"
#define AB_OCI_VERSION_MIN "1.0.0"

typedef struct
{
  bool set;
  int64_t v;
} ab_opt_i64;
typedef struct
{
  bool set;
  uint64_t v;
} ab_opt_u64;
typedef struct
{
  bool set;
  bool v;
} ab_opt_bool;

/* A string map in document order (annotations, sysctl, unified, ...). */
struct ab_kv
{
  char *key;
  char *value;
};
struct ab_kvlist
{
  struct ab_kv *v;
  size_t n;
};
const char *ab_kvlist_get (const struct ab_kvlist *l, const char *key);
/* Set key to value: in place where the key is, else added at the end. */
void ab_kvlist_set (struct ab_kvlist *l, const char *key, const char *value);
void ab_kvlist_free (struct ab_kvlist *l);

struct ab_idmap
{
  uint32_t container_id;
  uint32_t host_id;
  uint32_t size;
};
struct ab_idmaps
{
  struct ab_idmap *v;
  size_t n;
};

/* ---- process ---------------------------------------------------------- */

struct ab_rlimit
{
  int resource; /* RLIMIT_* value */
  char *type;   /* "RLIMIT_NOFILE" */
  uint64_t soft;
  uint64_t hard;
};

enum ab_capset
{
  AB_CAP_BOUNDING,
  AB_CAP_EFFECTIVE,
  AB_CAP_INHERITABLE,
  AB_CAP_PERMITTED,
  AB_CAP_AMBIENT,
  AB_CAP__SETS
};
#define AB_CAP_LAST 63 /* capabilities are numbered 0..63 in the kernel ABI */

struct ab_capabilities
{
  bool set[AB_CAP__SETS];    /* the set was present in config.json */
  uint64_t mask[AB_CAP__SETS];
};

struct ab_user
{
  uint32_t uid;
  uint32_t gid;
  bool umask_set;
  uint32_t umask;
  uint32_t *additional_gids;
  size_t n_additional_gids;
  char *username; /* schema allows it; unused on Linux */
};

enum ab_sched_policy
{
  AB_SCHED_OTHER,
  AB_SCHED_FIFO,
  AB_SCHED_RR,
  AB_SCHED_BATCH,
  AB_SCHED_ISO,
  AB_SCHED_IDLE,
  AB_SCHED_DEADLINE,
};

struct ab_scheduler
{
  int policy; /* enum ab_sched_policy */
  int32_t nice;
  int32_t priority;
  uint64_t flags; /* SCHED_FLAG_* bits, kernel values */
  uint64_t runtime;
  uint64_t deadline;
  uint64_t period;
};

enum ab_ioprio_class
{
  AB_IOPRIO_RT = 1,
  AB_IOPRIO_BE = 2,
  AB_IOPRIO_IDLE = 3,
};
struct ab_io_priority
{
  int klass; /* enum ab_ioprio_class (kernel IOPRIO_CLASS_* values) */
  int32_t priority;
};

struct ab_process
{
  bool terminal;
  bool console_size_set;
  uint64_t console_height;
  uint64_t console_width;
  char *cwd;
  struct ab_strv env;
  struct ab_strv args;
  char *command_line; /* Windows only; refused on Linux */
  struct ab_user user;
  struct ab_rlimit *rlimits;
  size_t n_rlimits;
  bool capabilities_set;
  struct ab_capabilities caps;
  bool no_new_privileges;
  bool oom_score_adj_set;
  int oom_score_adj;
  char *apparmor_profile;
  char *selinux_label;
  struct ab_scheduler *scheduler;
  struct ab_io_priority *io_priority;
  char *exec_cpu_affinity_initial; /* execCPUAffinity.initial, NULL when unset */
  char *exec_cpu_affinity_final;
};

/* ---- root and mounts -------------------------------------------------- */

struct ab_root
{
  char *path;
  bool readonly;
};

/* Propagation requested by a mount option (applied after the mount). */
enum ab_propagation
{
  AB_PROP_NONE = 0,
  AB_PROP_SHARED,
  AB_PROP_SLAVE,
  AB_PROP_PRIVATE,
  AB_PROP_UNBINDABLE,
};

struct ab_mount
{
  char *destination; /* absolute (a relative one is made absolute at parse) */
  char *source;
  char *type;
  struct ab_strv options;   /* as given */
  struct ab_idmaps uid_mappings;
  struct ab_idmaps gid_mappings;

  /* Derived from options by the parser. */
  bool bind;                 /* bind or rbind */
  bool recursive;            /* rbind */
  unsigned long flags;       /* MS_* to set */
  unsigned long clear_flags; /* MS_* explicitly cleared (rw, suid, dev, ...) */
  uint64_t attr_set;         /* MOUNT_ATTR_* to set recursively (rro, rnosuid, ...) */
  uint64_t attr_clr;         /* MOUNT_ATTR_* to clear recursively (rrw, rsuid, ...) */
  int propagation;           /* enum ab_propagation */
  bool propagation_recursive;
  bool idmap;                /* idmap or ridmap */
  bool idmap_recursive;      /* ridmap */
  bool tmpcopyup;
  char *data;                /* filesystem-specific options, comma-joined, or NULL */
  bool from_parent;          /* added by the runtime: the parent opens the source (not the child) */
  bool source_nofollow;      /* the parent opens the source refusing every symlink on the path
                                (never parsed: the plan sets it from dev.agentbox.bind-nofollow) */
};

/* A bind mount (bind/rbind option or type "bind"), not a remount of one. */
static inline bool
ab_mount_is_bind (const struct ab_mount *m)
{
  return (m->bind || (m->type != NULL && strcmp (m->type, "bind") == 0)) && !(m->flags & 0x20 /* MS_REMOUNT */);
}

/* ---- hooks ------------------------------------------------------------ */

enum ab_hook_kind
{
  AB_HOOK_PRESTART,
  AB_HOOK_CREATE_RUNTIME,
  AB_HOOK_CREATE_CONTAINER,
  AB_HOOK_START_CONTAINER,
  AB_HOOK_POSTSTART,
  AB_HOOK_POSTSTOP,
  AB_HOOK__KINDS
};

struct ab_hook
{
  char *path;
  struct ab_strv args;
  struct ab_strv env;
  bool env_set; /* "env" is present (even empty): exactly env; absent: the runtime's own */
  bool timeout_set;
  int timeout; /* seconds, > 0 */
};

struct ab_hook_list
{
  struct ab_hook *v;
  size_t n;
};

/* ---- linux ------------------------------------------------------------ */

enum ab_ns_type
{
  AB_NS_USER, /* first: it owns the others */
  AB_NS_MOUNT,
  AB_NS_PID,
  AB_NS_NET,
  AB_NS_IPC,
  AB_NS_UTS,
  AB_NS_CGROUP,
  AB_NS_TIME,
  AB_NS__COUNT
};

struct ab_namespace
{
  bool present;   /* listed in linux.namespaces */
  char *path;     /* join this one instead of creating */
  unsigned index; /* its place in linux.namespaces, for messages */
};

struct ab_time_offset
{
  bool set;
  int64_t secs;
  uint32_t nanosecs;
};

struct ab_device
{
  char type; /* 'c', 'b', 'u' or 'p' */
  char *path;
  int64_t major;
  int64_t minor;
  bool file_mode_set;
  uint32_t file_mode;
  bool uid_set;
  uint32_t uid;
  bool gid_set;
  uint32_t gid;
};

struct ab_net_device
{
  char *host_name; /* key */
  char *name;      /* name inside the container, NULL = same */
};

struct ab_device_rule
{
  bool allow;
  char type; /* 'a', 'c' or 'b' */
  ab_opt_i64 major;
  ab_opt_i64 minor;
  char access[4]; /* subset of "rwm", "" = all */
};

struct ab_memory
{
  ab_opt_i64 limit;
  ab_opt_i64 reservation;
  ab_opt_i64 swap;
  ab_opt_i64 kernel;
  ab_opt_i64 kernel_tcp;
  ab_opt_u64 swappiness;
  ab_opt_bool disable_oom_killer;
  ab_opt_bool use_hierarchy;
  ab_opt_bool check_before_update;
};

struct ab_cpu
{
  ab_opt_u64 shares;
  ab_opt_i64 quota;
  ab_opt_u64 burst;
  ab_opt_u64 period;
  ab_opt_i64 realtime_runtime;
  ab_opt_u64 realtime_period;
  char *cpus;
  char *mems;
  ab_opt_i64 idle;
};

struct ab_blkio_weight_device
{
  int64_t major;
  int64_t minor;
  ab_opt_u64 weight;
  ab_opt_u64 leaf_weight;
};
struct ab_blkio_throttle
{
  int64_t major;
  int64_t minor;
  uint64_t rate;
};
enum ab_blkio_throttle_kind
{
  AB_THROTTLE_READ_BPS,
  AB_THROTTLE_WRITE_BPS,
  AB_THROTTLE_READ_IOPS,
  AB_THROTTLE_WRITE_IOPS,
  AB_THROTTLE__KINDS
};
struct ab_blkio
{
  ab_opt_u64 weight;
  ab_opt_u64 leaf_weight;
  struct ab_blkio_weight_device *weight_device;
  size_t n_weight_device;
  struct ab_blkio_throttle *throttle[AB_THROTTLE__KINDS];
  size_t n_throttle[AB_THROTTLE__KINDS];
};

struct ab_hugepage_limit
{
  char *page_size; /* "2MB" */
  uint64_t limit;
};

struct ab_net_priority
{
  char *name;
  uint32_t priority;
};

struct ab_rdma
{
  char *device;
  ab_opt_u64 hca_handles;
  ab_opt_u64 hca_objects;
};

struct ab_resources
{
  struct ab_device_rule *devices;
  size_t n_devices;
  bool memory_set;
  struct ab_memory memory;
  bool cpu_set;
  struct ab_cpu cpu;
  bool pids_set;
  ab_opt_i64 pids_limit;
  bool blkio_set;
  struct ab_blkio blkio;
  struct ab_hugepage_limit *hugepages;
  size_t n_hugepages;
  bool network_set;
  ab_opt_u64 net_class_id;
  struct ab_net_priority *net_priorities;
  size_t n_net_priorities;
  struct ab_rdma *rdma;
  size_t n_rdma;
  struct ab_kvlist unified;
};

struct ab_intel_rdt
{
  char *clos_id;
  char *l3_cache_schema;
  char *mem_bw_schema;
  struct ab_strv schemata;
  bool schemata_set;
  bool enable_monitoring;
};

enum ab_seccomp_action
{
  AB_SCMP_ACT_KILL, /* = KILL_THREAD */
  AB_SCMP_ACT_KILL_PROCESS,
  AB_SCMP_ACT_KILL_THREAD,
  AB_SCMP_ACT_TRAP,
  AB_SCMP_ACT_ERRNO,
  AB_SCMP_ACT_TRACE,
  AB_SCMP_ACT_ALLOW,
  AB_SCMP_ACT_LOG,
  AB_SCMP_ACT_NOTIFY,
  AB_SCMP_ACT__COUNT
};

enum ab_seccomp_op
{
  AB_SCMP_CMP_NE,
  AB_SCMP_CMP_LT,
  AB_SCMP_CMP_LE,
  AB_SCMP_CMP_EQ,
  AB_SCMP_CMP_GE,
  AB_SCMP_CMP_GT,
  AB_SCMP_CMP_MASKED_EQ,
  AB_SCMP_CMP__COUNT
};

/* Bits of ab_seccomp.flags (names: SECCOMP_FILTER_FLAG_*). */
enum
{
  AB_SECCOMP_FLAG_TSYNC = 1u << 0,
  AB_SECCOMP_FLAG_LOG = 1u << 1,
  AB_SECCOMP_FLAG_SPEC_ALLOW = 1u << 2,
  AB_SECCOMP_FLAG_WAIT_KILLABLE_RECV = 1u << 3,
};

struct ab_seccomp_arg
{
  uint32_t index;
  uint64_t value;
  uint64_t value_two;
  int op; /* enum ab_seccomp_op */
};

struct ab_seccomp_rule
{
  struct ab_strv names;
  int action; /* enum ab_seccomp_action */
  bool errno_ret_set;
  uint32_t errno_ret;
  struct ab_seccomp_arg *args;
  size_t n_args;
};

struct ab_seccomp
{
  int default_action;
  bool default_errno_ret_set;
  uint32_t default_errno_ret;
  struct ab_strv architectures; /* "SCMP_ARCH_X86_64", validated names */
  unsigned flags;
  char *listener_path;
  char *listener_metadata;
  struct ab_seccomp_rule *syscalls;
  size_t n_syscalls;
};


enum ab_personality_domain
{
  AB_PERSONA_LINUX,
  AB_PERSONA_LINUX32,
};

enum ab_mpol_mode
{
  AB_MPOL_DEFAULT,
  AB_MPOL_PREFERRED,
  AB_MPOL_BIND,
  AB_MPOL_INTERLEAVE,
  AB_MPOL_LOCAL,
  AB_MPOL_PREFERRED_MANY,
  AB_MPOL_WEIGHTED_INTERLEAVE,
}; /* kernel MPOL_* values */

enum
{
  AB_MPOL_F_NUMA_BALANCING = 1u << 13, /* kernel values */
  AB_MPOL_F_RELATIVE_NODES = 1u << 14,
  AB_MPOL_F_STATIC_NODES = 1u << 15,
};

struct ab_memory_policy
{
  int mode; /* enum ab_mpol_mode */
  char *nodes;
  unsigned flags;
};

struct ab_linux
{
  struct ab_namespace ns[AB_NS__COUNT];
  struct ab_idmaps uid_mappings;
  struct ab_idmaps gid_mappings;
  struct ab_time_offset time_monotonic;
  struct ab_time_offset time_boottime;
  struct ab_device *devices;
  size_t n_devices;
  struct ab_net_device *net_devices;
  size_t n_net_devices;
  char *cgroups_path;
  struct ab_resources *resources;
  struct ab_intel_rdt *intel_rdt;
  struct ab_kvlist sysctl;
  struct ab_seccomp *seccomp;
  int rootfs_propagation; /* enum ab_propagation, AB_PROP_NONE when unset; plain and "r" words alike (always applied recursively) */
  struct ab_strv masked_paths;
  struct ab_strv readonly_paths;
  char *mount_label;
  bool personality_set;
  int personality_domain; /* enum ab_personality_domain */
  struct ab_memory_policy *memory_policy;
};

/* Whether l (may be NULL) asks for a new namespace of kind t: listed,
   with no path to join. */
static inline bool
ab_linux_new_ns (const struct ab_linux *l, int t)
{
  return l != NULL && l->ns[t].present && l->ns[t].path == NULL;
}

/* ---- agentbox's own annotations ----------------------------------------- */

/* The dev.agentbox.* annotations, typed once by spec/annotations.c when the
   config is parsed: every reader (the plan, the runtime, `audit`) reads
   these fields, none parses the annotation text again.  A value that does
   not parse leaves its field unset and its message in an error field; the
   validator refuses the config with the first one (`audit` reports it). */
struct ab_agentbox
{
  bool timeout_set;               /* dev.agentbox.timeout */
  uint64_t timeout_ms;
  bool grace_set;                 /* dev.agentbox.timeout.grace */
  uint64_t grace_ms;
  bool etc_hosts;                 /* dev.agentbox.etc-hosts is "true" */
  struct ab_strv nofollow;        /* dev.agentbox.bind-nofollow: bind sources opened refusing every symlink */
  bool rootfs_idmap;              /* dev.agentbox.rootfs.idmap is "true" */
  bool accept_degraded;           /* dev.agentbox.degraded is "accept" */
  struct ab_net_policy net;       /* dev.agentbox.net.allow (net.present: given) */
  bool wall_off;                  /* dev.agentbox.net.wall is "off": no wall in a namespace agentbox makes */
  struct ab_egress_policy egress; /* allow-domains, deny-domains, pins as given (no baseline) */
  bool egress_typed;              /* one of those keys was there (they are typed together) */
  char *error;       /* "config.json: annotations.KEY: ..." of the first bad one, in document order */
  char *net_error;   /* "annotations.dev.agentbox.net.allow: ...", or NULL */
  char *egress_error; /* the domain allowlist's, or NULL */
  struct ab_landlock_policy landlock; /* dev.agentbox.landlock (spec/landlock.h); mode UNSET when absent */
  int fallback;                   /* dev.agentbox.fallback: enum ab_fallback_mode */
};

/* ---- the workspace (dev.agentbox.workspace.*) -------------------------- */

/* How the workspace mount shows its host directory: bound as it is, or
   through an overlay whose changes are kept aside as a change set until
   they are applied or discarded (runtime/lifecycle/wsstore.h). */
enum ab_ws_mode
{
  AB_WS_MODE_BIND = 0,
  AB_WS_MODE_OVERLAY,
};

#define AB_WS_DEFAULT_DESTINATION "/workspace"
#define AB_WS_DEFAULT_SIZE (1ull << 30)   /* the change set's tmpfs: as the sandbox's tmpfs /workspace */
#define AB_WS_DEFAULT_LIST_MAX 1000       /* entries of the record's change list */

/* Parsed once from the annotations (spec/annotations.c). */
struct ab_workspace
{
  int mode;              /* enum ab_ws_mode */
  char *destination;     /* the workspace mount's destination */
  uint64_t size;         /* bytes of the change set's tmpfs (0: changes_dir holds it) */
  char *changes_dir;     /* a host directory that holds the layers instead, or NULL */
  uint64_t list_max;     /* changes listed in a record besides deletions and replaced directories */
  size_t mount;          /* overlay: index in mounts[] of the workspace mount */
  bool typed;            /* one of its keys was there (they are typed together) */
};

/* ---- the whole document ----------------------------------------------- */

struct ab_spec
{
  char *oci_version;
  bool root_set;
  struct ab_root root;
  struct ab_mount *mounts;
  size_t n_mounts;
  struct ab_process *process; /* NULL when absent */
  char *hostname;
  char *domainname;
  struct ab_hook_list hooks[AB_HOOK__KINDS];
  struct ab_kvlist annotations;
  struct ab_agentbox agentbox;   /* the dev.agentbox.* ones, typed */
  struct ab_workspace workspace; /* dev.agentbox.workspace.*, typed */
  struct ab_linux *linux_; /* NULL when absent */

  /* JSON paths of properties the model does not know (ignored, per the
     spec's extensibility rule; kept for `agentbox audit`). */
  struct ab_strv unknown;
  /* Warnings (unknown capability names, ...), one line each. */
  struct ab_strv warnings;
};

#endif
