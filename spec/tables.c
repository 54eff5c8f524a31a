/* Name tables of the OCI runtime-spec 1.3.0 (config.md, config-linux.md,
 * schema/defs-linux.json), with the kernel value behind each name.
 *
 * The parser maps config.json strings through these tables and `features`
 * prints them, so the two can never disagree.  Values are the kernel ABI's
 * (they never change once released); where libc or the uapi headers name a
 * value, a static assertion ties the table to the header. */
#include "config.h"

#include <linux/capability.h>
#include <sched.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/capability.h>
#include <sys/resource.h>

#include "base/kernel-compat.h"
#include "base/util.h"
#include "spec/model.h"
#include "spec/tables.h"

/* glibc < 2.36 does not name the mount_setattr(2) attributes; the values
   are the kernel's (include/uapi/linux/mount.h). */

/* Look a name up in a NULL-padded table indexed by value. */
static int
index_of (const char *const *names, size_t n, const char *name)
{
  size_t i;

  if (name == NULL)
    return -1;
  for (i = 0; i < n; i++)
    if (names[i] != NULL && strcmp (names[i], name) == 0)
      return (int)i;
  return -1;
}

static const char *
name_at (const char *const *names, size_t n, long i)
{
  if (i < 0 || (size_t)i >= n)
    return NULL;
  return names[i];
}

/* ---- namespaces ------------------------------------------------------- */

static const struct
{
  const char *name;      /* config-linux.md */
  const char *proc_name; /* /proc/PID/ns/<proc_name> */
  unsigned long clone_flag;
} namespaces[AB_NS__COUNT] = {
  [AB_NS_USER] = { "user", "user", CLONE_NEWUSER },
  [AB_NS_MOUNT] = { "mount", "mnt", CLONE_NEWNS },
  [AB_NS_PID] = { "pid", "pid", CLONE_NEWPID },
  [AB_NS_NET] = { "network", "net", CLONE_NEWNET },
  [AB_NS_IPC] = { "ipc", "ipc", CLONE_NEWIPC },
  [AB_NS_UTS] = { "uts", "uts", CLONE_NEWUTS },
  [AB_NS_CGROUP] = { "cgroup", "cgroup", CLONE_NEWCGROUP },
  [AB_NS_TIME] = { "time", "time", CLONE_NEWTIME },
};

int
ab_ns_from_name (const char *name)
{
  int i;

  if (name == NULL)
    return -1;
  for (i = 0; i < AB_NS__COUNT; i++)
    if (strcmp (namespaces[i].name, name) == 0)
      return i;
  return -1;
}

const char *
ab_ns_name (int type)
{
  return type >= 0 && type < AB_NS__COUNT ? namespaces[type].name : NULL;
}

unsigned long
ab_ns_clone_flag (int type)
{
  return type >= 0 && type < AB_NS__COUNT ? namespaces[type].clone_flag : 0;
}

const char *
ab_ns_proc_name (int type)
{
  return type >= 0 && type < AB_NS__COUNT ? namespaces[type].proc_name : NULL;
}

/* ---- capabilities ----------------------------------------------------- */

/* capabilities(7), numbered as in include/uapi/linux/capability.h. */
static const char *const capabilities[] = {
  [0] = "CAP_CHOWN",
  [1] = "CAP_DAC_OVERRIDE",
  [2] = "CAP_DAC_READ_SEARCH",
  [3] = "CAP_FOWNER",
  [4] = "CAP_FSETID",
  [5] = "CAP_KILL",
  [6] = "CAP_SETGID",
  [7] = "CAP_SETUID",
  [8] = "CAP_SETPCAP",
  [9] = "CAP_LINUX_IMMUTABLE",
  [10] = "CAP_NET_BIND_SERVICE",
  [11] = "CAP_NET_BROADCAST",
  [12] = "CAP_NET_ADMIN",
  [13] = "CAP_NET_RAW",
  [14] = "CAP_IPC_LOCK",
  [15] = "CAP_IPC_OWNER",
  [16] = "CAP_SYS_MODULE",
  [17] = "CAP_SYS_RAWIO",
  [18] = "CAP_SYS_CHROOT",
  [19] = "CAP_SYS_PTRACE",
  [20] = "CAP_SYS_PACCT",
  [21] = "CAP_SYS_ADMIN",
  [22] = "CAP_SYS_BOOT",
  [23] = "CAP_SYS_NICE",
  [24] = "CAP_SYS_RESOURCE",
  [25] = "CAP_SYS_TIME",
  [26] = "CAP_SYS_TTY_CONFIG",
  [27] = "CAP_MKNOD",
  [28] = "CAP_LEASE",
  [29] = "CAP_AUDIT_WRITE",
  [30] = "CAP_AUDIT_CONTROL",
  [31] = "CAP_SETFCAP",
  [32] = "CAP_MAC_OVERRIDE",
  [33] = "CAP_MAC_ADMIN",
  [34] = "CAP_SYSLOG",
  [35] = "CAP_WAKE_ALARM",
  [36] = "CAP_BLOCK_SUSPEND",
  [37] = "CAP_AUDIT_READ",
  [38] = "CAP_PERFMON",
  [39] = "CAP_BPF",
  [40] = "CAP_CHECKPOINT_RESTORE",
};
_Static_assert(AB_ARRAY_SIZE (capabilities) == CAP_CHECKPOINT_RESTORE + 1, "capability table is complete");
_Static_assert(CAP_SYS_ADMIN == 21 && CAP_BPF == 39, "capability numbers are the kernel's");
_Static_assert(AB_ARRAY_SIZE (capabilities) <= AB_CAP_LAST + 1, "capabilities fit the 64-bit masks");

/* A capability newer than this table that libcap knows by name (libcap
   also accepts lower case and numbers: neither is what capabilities(7)
   spells, so only CAP_ and upper case go to it). */
static int
cap_from_libcap (const char *name)
{
  cap_value_t v;
  const char *p;

  if (strncmp (name, "CAP_", 4) != 0 || name[4] == '\0')
    return -1;
  for (p = name + 4; *p; p++)
    if (!((*p >= 'A' && *p <= 'Z') || *p == '_'))
      return -1;
  if (cap_from_name (name, &v) < 0 || v < 0 || v > AB_CAP_LAST)
    return -1;
  return (int)v;
}

int
ab_cap_from_name (const char *name)
{
  int cap = index_of (capabilities, AB_ARRAY_SIZE (capabilities), name);

  return cap >= 0 || name == NULL ? cap : cap_from_libcap (name);
}

const char *
ab_cap_name (int cap)
{
  return name_at (capabilities, AB_ARRAY_SIZE (capabilities), cap);
}

int
ab_cap_count (void)
{
  return (int)AB_ARRAY_SIZE (capabilities);
}

/* The members of process.capabilities. */
static const char *const capsets[AB_CAP__SETS] = {
  [AB_CAP_BOUNDING] = "bounding",   [AB_CAP_EFFECTIVE] = "effective", [AB_CAP_INHERITABLE] = "inheritable",
  [AB_CAP_PERMITTED] = "permitted", [AB_CAP_AMBIENT] = "ambient",
};

const char *
ab_capset_name (int set)
{
  return name_at (capsets, AB_ARRAY_SIZE (capsets), set);
}

/* ---- hooks ------------------------------------------------------------- */

/* The members of hooks (config.md "POSIX-platform Hooks"), in the order of
   the lifecycle. */
static const char *const hook_kinds[AB_HOOK__KINDS] = {
  [AB_HOOK_PRESTART] = "prestart",
  [AB_HOOK_CREATE_RUNTIME] = "createRuntime",
  [AB_HOOK_CREATE_CONTAINER] = "createContainer",
  [AB_HOOK_START_CONTAINER] = "startContainer",
  [AB_HOOK_POSTSTART] = "poststart",
  [AB_HOOK_POSTSTOP] = "poststop",
};

const char *
ab_hook_kind_name (int kind)
{
  return name_at (hook_kinds, AB_ARRAY_SIZE (hook_kinds), kind);
}

/* ---- rlimits ---------------------------------------------------------- */

/* getrlimit(2): every resource glibc defines. */
static const char *const rlimits[] = {
  [RLIMIT_CPU] = "RLIMIT_CPU",           [RLIMIT_FSIZE] = "RLIMIT_FSIZE",
  [RLIMIT_DATA] = "RLIMIT_DATA",         [RLIMIT_STACK] = "RLIMIT_STACK",
  [RLIMIT_CORE] = "RLIMIT_CORE",         [RLIMIT_RSS] = "RLIMIT_RSS",
  [RLIMIT_NPROC] = "RLIMIT_NPROC",       [RLIMIT_NOFILE] = "RLIMIT_NOFILE",
  [RLIMIT_MEMLOCK] = "RLIMIT_MEMLOCK",   [RLIMIT_AS] = "RLIMIT_AS",
  [RLIMIT_LOCKS] = "RLIMIT_LOCKS",       [RLIMIT_SIGPENDING] = "RLIMIT_SIGPENDING",
  [RLIMIT_MSGQUEUE] = "RLIMIT_MSGQUEUE", [RLIMIT_NICE] = "RLIMIT_NICE",
  [RLIMIT_RTPRIO] = "RLIMIT_RTPRIO",     [RLIMIT_RTTIME] = "RLIMIT_RTTIME",
};
_Static_assert(AB_ARRAY_SIZE (rlimits) == RLIMIT_NLIMITS, "rlimit table is complete");

int
ab_rlimit_from_name (const char *name)
{
  return index_of (rlimits, AB_ARRAY_SIZE (rlimits), name);
}

/* ---- seccomp ---------------------------------------------------------- */

static const char *const seccomp_actions[AB_SCMP_ACT__COUNT] = {
  [AB_SCMP_ACT_KILL] = "SCMP_ACT_KILL",
  [AB_SCMP_ACT_KILL_PROCESS] = "SCMP_ACT_KILL_PROCESS",
  [AB_SCMP_ACT_KILL_THREAD] = "SCMP_ACT_KILL_THREAD",
  [AB_SCMP_ACT_TRAP] = "SCMP_ACT_TRAP",
  [AB_SCMP_ACT_ERRNO] = "SCMP_ACT_ERRNO",
  [AB_SCMP_ACT_TRACE] = "SCMP_ACT_TRACE",
  [AB_SCMP_ACT_ALLOW] = "SCMP_ACT_ALLOW",
  [AB_SCMP_ACT_LOG] = "SCMP_ACT_LOG",
  [AB_SCMP_ACT_NOTIFY] = "SCMP_ACT_NOTIFY",
};

int
ab_seccomp_action_from_name (const char *name)
{
  return index_of (seccomp_actions, AB_SCMP_ACT__COUNT, name);
}

const char *
ab_seccomp_action_name (int action)
{
  return name_at (seccomp_actions, AB_SCMP_ACT__COUNT, action);
}

static const char *const seccomp_ops[AB_SCMP_CMP__COUNT] = {
  [AB_SCMP_CMP_NE] = "SCMP_CMP_NE",
  [AB_SCMP_CMP_LT] = "SCMP_CMP_LT",
  [AB_SCMP_CMP_LE] = "SCMP_CMP_LE",
  [AB_SCMP_CMP_EQ] = "SCMP_CMP_EQ",
  [AB_SCMP_CMP_GE] = "SCMP_CMP_GE",
  [AB_SCMP_CMP_GT] = "SCMP_CMP_GT",
  [AB_SCMP_CMP_MASKED_EQ] = "SCMP_CMP_MASKED_EQ",
};

int
ab_seccomp_op_from_name (const char *name)
{
  return index_of (seccomp_ops, AB_SCMP_CMP__COUNT, name);
}

const char *
ab_seccomp_op_name (int op)
{
  return name_at (seccomp_ops, AB_SCMP_CMP__COUNT, op);
}

/* config-linux.md, "as of libseccomp v2.6.0", in the order listed there. */
static const char *const seccomp_archs[] = {
  "SCMP_ARCH_X86",     "SCMP_ARCH_X86_64",   "SCMP_ARCH_X32",         "SCMP_ARCH_ARM",
  "SCMP_ARCH_AARCH64", "SCMP_ARCH_MIPS",     "SCMP_ARCH_MIPS64",      "SCMP_ARCH_MIPS64N32",
  "SCMP_ARCH_MIPSEL",  "SCMP_ARCH_MIPSEL64", "SCMP_ARCH_MIPSEL64N32", "SCMP_ARCH_PPC",
  "SCMP_ARCH_PPC64",   "SCMP_ARCH_PPC64LE",  "SCMP_ARCH_S390",        "SCMP_ARCH_S390X",
  "SCMP_ARCH_PARISC",  "SCMP_ARCH_PARISC64", "SCMP_ARCH_RISCV64",     "SCMP_ARCH_LOONGARCH64",
  "SCMP_ARCH_M68K",    "SCMP_ARCH_SH",       "SCMP_ARCH_SHEB",
};

int
ab_seccomp_arch_index (const char *name)
{
  return index_of (seccomp_archs, AB_ARRAY_SIZE (seccomp_archs), name);
}

const char *
ab_seccomp_arch_name (int index)
{
  return name_at (seccomp_archs, AB_ARRAY_SIZE (seccomp_archs), index);
}

int
ab_seccomp_arch_count (void)
{
  return (int)AB_ARRAY_SIZE (seccomp_archs);
}

static const struct
{
  const char *name;
  unsigned bit;
} seccomp_flags[] = {
  { "SECCOMP_FILTER_FLAG_TSYNC", AB_SECCOMP_FLAG_TSYNC },
  { "SECCOMP_FILTER_FLAG_LOG", AB_SECCOMP_FLAG_LOG },
  { "SECCOMP_FILTER_FLAG_SPEC_ALLOW", AB_SECCOMP_FLAG_SPEC_ALLOW },
  { "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV", AB_SECCOMP_FLAG_WAIT_KILLABLE_RECV },
};

int
ab_seccomp_flag_from_name (const char *name)
{
  size_t i;

  if (name == NULL)
    return -1;
  for (i = 0; i < AB_ARRAY_SIZE (seccomp_flags); i++)
    if (strcmp (seccomp_flags[i].name, name) == 0)
      return (int)seccomp_flags[i].bit;
  return -1;
}

const char *
ab_seccomp_flag_name (unsigned bit)
{
  size_t i;

  for (i = 0; i < AB_ARRAY_SIZE (seccomp_flags); i++)
    if (seccomp_flags[i].bit == bit)
      return seccomp_flags[i].name;
  return NULL;
}

/* ---- mount options ---------------------------------------------------- */

/* config.md "Linux mount options", in the order features.md lists them
   (plus idmap and ridmap, which its example omits).  "acl" and "noacl" of
   that example are filesystem-specific (mount(8)) and go to the data.

   FLAG and CLEAR carry the MS_* bit for mount(2); BIND, RBIND and
   PROPAGATION carry the MS_* bits the runtime passes for them (MS_REC when
   recursive).  ATTR_SET and ATTR_CLR carry a MOUNT_ATTR_* bit for
   mount_setattr(2) with AT_RECURSIVE.

   The kernel treats the atime attributes as one enumerated field,
   MOUNT_ATTR__ATIME: changing it takes the whole mask in attr_clr and the
   new mode in attr_set (a partial mask is EINVAL).  So every recursive
   atime option is an ATTR_SET entry whose `attr` is the resulting mode, a
   value inside MOUNT_ATTR__ATIME (MOUNT_ATTR_RELATIME is 0), and no other
   entry has an `attr` inside that mask.  Following mount(8), "ratime" and
   "rnostrictatime" mean the kernel default (relatime) and "rnorelatime"
   means updating on every access (strictatime). */
#define F(n, ms)                                                                                             \
  {                                                                                                          \
    n, AB_MOPT_FLAG, ms, 0, 0                                                                                \
  }
#define C(n, ms)                                                                                             \
  {                                                                                                          \
    n, AB_MOPT_CLEAR, ms, 0, 0                                                                               \
  }
#define RSET(n, a)                                                                                           \
  {                                                                                                          \
    n, AB_MOPT_ATTR_SET, 0, a, 0                                                                             \
  }
#define RCLR(n, a)                                                                                           \
  {                                                                                                          \
    n, AB_MOPT_ATTR_CLR, 0, a, 0                                                                             \
  }
#define PROP(n, ms, p)                                                                                       \
  {                                                                                                          \
    n, AB_MOPT_PROPAGATION, ms, 0, p                                                                         \
  }
static const struct ab_mount_option mount_options[] = {
  C ("async", MS_SYNCHRONOUS),
  C ("atime", MS_NOATIME),
  { "bind", AB_MOPT_BIND, MS_BIND, 0, 0 },
  { "defaults", AB_MOPT_IGNORE, 0, 0, 0 },
  C ("dev", MS_NODEV),
  C ("diratime", MS_NODIRATIME),
  F ("dirsync", MS_DIRSYNC),
  C ("exec", MS_NOEXEC),
  { "idmap", AB_MOPT_IDMAP, 0, 0, 0 },
  F ("iversion", MS_I_VERSION),
  F ("lazytime", MS_LAZYTIME),
  C ("loud", MS_SILENT),
  F ("mand", MS_MANDLOCK),
  F ("noatime", MS_NOATIME),
  F ("nodev", MS_NODEV),
  F ("nodiratime", MS_NODIRATIME),
  F ("noexec", MS_NOEXEC),
  C ("noiversion", MS_I_VERSION),
  C ("nolazytime", MS_LAZYTIME),
  C ("nomand", MS_MANDLOCK),
  C ("norelatime", MS_RELATIME),
  C ("nostrictatime", MS_STRICTATIME),
  F ("nosuid", MS_NOSUID),
  F ("nosymfollow", MS_NOSYMFOLLOW),
  PROP ("private", MS_PRIVATE, AB_PROP_PRIVATE),
  RSET ("ratime", MOUNT_ATTR_RELATIME),
  { "rbind", AB_MOPT_RBIND, MS_BIND | MS_REC, 0, 1 },
  RCLR ("rdev", MOUNT_ATTR_NODEV),
  RCLR ("rdiratime", MOUNT_ATTR_NODIRATIME),
  F ("relatime", MS_RELATIME),
  F ("remount", MS_REMOUNT),
  RCLR ("rexec", MOUNT_ATTR_NOEXEC),
  { "ridmap", AB_MOPT_IDMAP, 0, 0, 1 },
  RSET ("rnoatime", MOUNT_ATTR_NOATIME),
  RSET ("rnodev", MOUNT_ATTR_NODEV),
  RSET ("rnodiratime", MOUNT_ATTR_NODIRATIME),
  RSET ("rnoexec", MOUNT_ATTR_NOEXEC),
  RSET ("rnorelatime", MOUNT_ATTR_STRICTATIME),
  RSET ("rnostrictatime", MOUNT_ATTR_RELATIME),
  RSET ("rnosuid", MOUNT_ATTR_NOSUID),
  RSET ("rnosymfollow", MOUNT_ATTR_NOSYMFOLLOW),
  F ("ro", MS_RDONLY),
  PROP ("rprivate", MS_PRIVATE | MS_REC, AB_PROP_PRIVATE),
  RSET ("rrelatime", MOUNT_ATTR_RELATIME),
  RSET ("rro", MOUNT_ATTR_RDONLY),
  RCLR ("rrw", MOUNT_ATTR_RDONLY),
  PROP ("rshared", MS_SHARED | MS_REC, AB_PROP_SHARED),
  PROP ("rslave", MS_SLAVE | MS_REC, AB_PROP_SLAVE),
  RSET ("rstrictatime", MOUNT_ATTR_STRICTATIME),
  RCLR ("rsuid", MOUNT_ATTR_NOSUID),
  RCLR ("rsymfollow", MOUNT_ATTR_NOSYMFOLLOW),
  PROP ("runbindable", MS_UNBINDABLE | MS_REC, AB_PROP_UNBINDABLE),
  C ("rw", MS_RDONLY),
  PROP ("shared", MS_SHARED, AB_PROP_SHARED),
  F ("silent", MS_SILENT),
  PROP ("slave", MS_SLAVE, AB_PROP_SLAVE),
  F ("strictatime", MS_STRICTATIME),
  C ("suid", MS_NOSUID),
  C ("symfollow", MS_NOSYMFOLLOW),
  F ("sync", MS_SYNCHRONOUS),
  { "tmpcopyup", AB_MOPT_TMPCOPYUP, 0, 0, 0 },
  PROP ("unbindable", MS_UNBINDABLE, AB_PROP_UNBINDABLE),
};
#undef F
#undef C
#undef RSET
#undef RCLR
#undef PROP

const struct ab_mount_option *
ab_mount_option_lookup (const char *name)
{
  size_t lo = 0, hi = AB_ARRAY_SIZE (mount_options);

  if (name == NULL)
    return NULL;
  /* The table is sorted (features.md order is alphabetical). */
  while (lo < hi)
    {
      size_t mid = lo + (hi - lo) / 2;
      int c = strcmp (name, mount_options[mid].name);
      if (c == 0)
        return &mount_options[mid];
      if (c < 0)
        hi = mid;
      else
        lo = mid + 1;
    }
  return NULL;
}

const struct ab_mount_option *
ab_mount_options (size_t *n)
{
  *n = AB_ARRAY_SIZE (mount_options);
  return mount_options;
}

/* The propagation words are the PROPAGATION entries of the mount option
   table: linux.rootfsPropagation, mounts[].options and `audit` all read
   them there. */
int
ab_propagation_from_name (const char *name, bool *recursive)
{
  const struct ab_mount_option *o = ab_mount_option_lookup (name);

  if (o == NULL || o->kind != AB_MOPT_PROPAGATION)
    return -1;
  if (recursive)
    *recursive = (o->flag & MS_REC) != 0;
  return o->value;
}

const char *
ab_propagation_name (int kind, bool recursive)
{
  size_t i;

  for (i = 0; i < AB_ARRAY_SIZE (mount_options); i++)
    if (mount_options[i].kind == AB_MOPT_PROPAGATION && mount_options[i].value == kind
        && ((mount_options[i].flag & MS_REC) != 0) == recursive)
      return mount_options[i].name;
  return NULL;
}

/* ---- scheduler, I/O priority, memory policy ---------------------------- */

/* sched(7): the enum values are the kernel's SCHED_* numbers. */
static const char *const sched_policies[] = {
  [AB_SCHED_OTHER] = "SCHED_OTHER",       [AB_SCHED_FIFO] = "SCHED_FIFO", [AB_SCHED_RR] = "SCHED_RR",
  [AB_SCHED_BATCH] = "SCHED_BATCH",       [AB_SCHED_ISO] = "SCHED_ISO",   [AB_SCHED_IDLE] = "SCHED_IDLE",
  [AB_SCHED_DEADLINE] = "SCHED_DEADLINE",
};
_Static_assert(AB_SCHED_FIFO == SCHED_FIFO && AB_SCHED_RR == SCHED_RR && AB_SCHED_BATCH == SCHED_BATCH
                   && AB_SCHED_IDLE == SCHED_IDLE,
               "scheduler policies are the kernel's numbers");
_Static_assert(AB_SCHED_ISO == 4 && AB_SCHED_DEADLINE == 6,
               "SCHED_ISO is reserved as 4, SCHED_DEADLINE is 6");

int
ab_sched_policy_from_name (const char *name)
{
  return index_of (sched_policies, AB_ARRAY_SIZE (sched_policies), name);
}

const char *
ab_sched_policy_name (int policy)
{
  return name_at (sched_policies, AB_ARRAY_SIZE (sched_policies), policy);
}

/* include/uapi/linux/sched.h */
static const struct
{
  const char *name;
  int64_t bit;
} sched_flags[] = {
  { "SCHED_FLAG_RESET_ON_FORK", 0x01 },  { "SCHED_FLAG_RECLAIM", 0x02 },
  { "SCHED_FLAG_DL_OVERRUN", 0x04 },     { "SCHED_FLAG_KEEP_POLICY", 0x08 },
  { "SCHED_FLAG_KEEP_PARAMS", 0x10 },    { "SCHED_FLAG_UTIL_CLAMP_MIN", 0x20 },
  { "SCHED_FLAG_UTIL_CLAMP_MAX", 0x40 },
};

int64_t
ab_sched_flag_from_name (const char *name)
{
  size_t i;

  if (name == NULL)
    return -1;
  for (i = 0; i < AB_ARRAY_SIZE (sched_flags); i++)
    if (strcmp (sched_flags[i].name, name) == 0)
      return sched_flags[i].bit;
  return -1;
}

/* ioprio_set(2): IOPRIO_CLASS_* numbers. */
static const char *const ioprio_classes[] = {
  [AB_IOPRIO_RT] = "IOPRIO_CLASS_RT",
  [AB_IOPRIO_BE] = "IOPRIO_CLASS_BE",
  [AB_IOPRIO_IDLE] = "IOPRIO_CLASS_IDLE",
};

int
ab_ioprio_class_from_name (const char *name)
{
  return index_of (ioprio_classes, AB_ARRAY_SIZE (ioprio_classes), name);
}

/* set_mempolicy(2): the enum values are the kernel's MPOL_* numbers. */
static const char *const mpol_modes[] = {
  [AB_MPOL_DEFAULT] = "MPOL_DEFAULT",
  [AB_MPOL_PREFERRED] = "MPOL_PREFERRED",
  [AB_MPOL_BIND] = "MPOL_BIND",
  [AB_MPOL_INTERLEAVE] = "MPOL_INTERLEAVE",
  [AB_MPOL_LOCAL] = "MPOL_LOCAL",
  [AB_MPOL_PREFERRED_MANY] = "MPOL_PREFERRED_MANY",
  [AB_MPOL_WEIGHTED_INTERLEAVE] = "MPOL_WEIGHTED_INTERLEAVE",
};

int
ab_mpol_mode_from_name (const char *name)
{
  return index_of (mpol_modes, AB_ARRAY_SIZE (mpol_modes), name);
}

const char *
ab_mpol_mode_name (int mode)
{
  return name_at (mpol_modes, AB_ARRAY_SIZE (mpol_modes), mode);
}

static const struct
{
  const char *name;
  int bit;
} mpol_flags[] = {
  { "MPOL_F_NUMA_BALANCING", AB_MPOL_F_NUMA_BALANCING },
  { "MPOL_F_RELATIVE_NODES", AB_MPOL_F_RELATIVE_NODES },
  { "MPOL_F_STATIC_NODES", AB_MPOL_F_STATIC_NODES },
};

int
ab_mpol_flag_from_name (const char *name)
{
  size_t i;

  if (name == NULL)
    return -1;
  for (i = 0; i < AB_ARRAY_SIZE (mpol_flags); i++)
    if (strcmp (mpol_flags[i].name, name) == 0)
      return mpol_flags[i].bit;
  return -1;
}

const char *
ab_mpol_flag_name_at (size_t i)
{
  return i < AB_ARRAY_SIZE (mpol_flags) ? mpol_flags[i].name : NULL;
}
_Static_assert (MS_REMOUNT == 0x20, "ab_mount_is_bind (spec/model.h) spells MS_REMOUNT");
