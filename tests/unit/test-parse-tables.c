/* The name tables: every name of runtime-spec 1.3.0 is known, maps to the
   kernel's value (checked against libc, the uapi headers and libcap), and
   maps back. */
#include "config.h"

#include <sched.h>
#include <sys/capability.h>
#include <sys/mount.h>
#include <sys/resource.h>

#include "spec/model.h"
#include "spec/tables.h"
#include "tests/unit/tap.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

static void
test_namespaces (void)
{
  static const struct
  {
    const char *name, *proc;
    unsigned long flag;
  } want[] = {
    { "mount", "mnt", CLONE_NEWNS },         { "pid", "pid", CLONE_NEWPID },
    { "network", "net", CLONE_NEWNET },      { "uts", "uts", CLONE_NEWUTS },
    { "ipc", "ipc", CLONE_NEWIPC },          { "user", "user", CLONE_NEWUSER },
    { "cgroup", "cgroup", CLONE_NEWCGROUP }, { "time", "time", CLONE_NEWTIME },
  };
  size_t i;
  int good = 1;

  for (i = 0; i < AB_ARRAY_SIZE (want); i++)
    {
      int t = ab_ns_from_name (want[i].name);
      good = good && t >= 0 && strcmp (ab_ns_name (t), want[i].name) == 0
             && ab_ns_clone_flag (t) == want[i].flag && strcmp (ab_ns_proc_name (t), want[i].proc) == 0;
    }
  ok (good, "the eight namespace types map to their CLONE_NEW* flag and /proc/PID/ns name, and back");
  is_int (ab_ns_from_name ("user"), AB_NS_USER, "\"user\" is AB_NS_USER (created first)");
  ok (ab_ns_from_name ("net") < 0 && ab_ns_from_name ("mnt") < 0 && ab_ns_from_name ("") < 0
          && ab_ns_from_name (NULL) < 0,
      "the /proc names and the empty name are not namespace types");
  ok (ab_ns_name (AB_NS__COUNT) == NULL && ab_ns_name (-1) == NULL && ab_ns_clone_flag (99) == 0,
      "out-of-range types have no name and no flag");
}

static void
test_capabilities (void)
{
  int i, good = 1, libcap = 1;

  is_int (ab_cap_count (), 41, "41 capabilities, CAP_CHOWN to CAP_CHECKPOINT_RESTORE");
  is_int (ab_cap_from_name ("CAP_CHOWN"), 0, "CAP_CHOWN is 0");
  is_int (ab_cap_from_name ("CAP_SYS_ADMIN"), 21, "CAP_SYS_ADMIN is 21");
  is_int (ab_cap_from_name ("CAP_CHECKPOINT_RESTORE"), 40, "CAP_CHECKPOINT_RESTORE is 40");
  for (i = 0; i < ab_cap_count (); i++)
    {
      const char *name = ab_cap_name (i);
      cap_value_t v;
      char lower[64];
      size_t k;

      good = good && name != NULL && ab_cap_from_name (name) == i;
      /* libcap names them in lower case: "cap_chown". */
      for (k = 0; name && name[k] && k + 1 < sizeof lower; k++)
        lower[k] = (char)(name[k] >= 'A' && name[k] <= 'Z' ? name[k] - 'A' + 'a' : name[k]);
      lower[k] = '\0';
      libcap = libcap && cap_from_name (lower, &v) == 0 && v == i;
    }
  ok (good, "every capability name maps to its number and back");
  ok (libcap, "every capability number agrees with libcap's");
  ok (ab_cap_from_name ("cap_chown") < 0 && ab_cap_from_name ("CHOWN") < 0 && ab_cap_name (41) == NULL
          && ab_cap_name (-1) == NULL,
      "names are exact; numbers past the table have no name");
}

static void
test_rlimits (void)
{
  static const struct
  {
    const char *name;
    int value;
  } want[] = {
    { "RLIMIT_CPU", RLIMIT_CPU },           { "RLIMIT_FSIZE", RLIMIT_FSIZE },
    { "RLIMIT_DATA", RLIMIT_DATA },         { "RLIMIT_STACK", RLIMIT_STACK },
    { "RLIMIT_CORE", RLIMIT_CORE },         { "RLIMIT_RSS", RLIMIT_RSS },
    { "RLIMIT_NPROC", RLIMIT_NPROC },       { "RLIMIT_NOFILE", RLIMIT_NOFILE },
    { "RLIMIT_MEMLOCK", RLIMIT_MEMLOCK },   { "RLIMIT_AS", RLIMIT_AS },
    { "RLIMIT_LOCKS", RLIMIT_LOCKS },       { "RLIMIT_SIGPENDING", RLIMIT_SIGPENDING },
    { "RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE }, { "RLIMIT_NICE", RLIMIT_NICE },
    { "RLIMIT_RTPRIO", RLIMIT_RTPRIO },     { "RLIMIT_RTTIME", RLIMIT_RTTIME },
  };
  size_t i;
  int good = 1;

  for (i = 0; i < AB_ARRAY_SIZE (want); i++)
    good = good && ab_rlimit_from_name (want[i].name) == want[i].value;
  ok (good, "the 16 rlimits of getrlimit(2) map to glibc's RLIMIT_*");
  ok (ab_rlimit_from_name ("RLIMIT_OFILE") < 0 && ab_rlimit_from_name ("RLIMIT_NLIMITS") < 0,
      "the BSD alias RLIMIT_OFILE and RLIMIT_NLIMITS are not resources");
}

static void
test_seccomp (void)
{
  static const char *const actions[] = {
    "SCMP_ACT_KILL",  "SCMP_ACT_KILL_PROCESS", "SCMP_ACT_KILL_THREAD", "SCMP_ACT_TRAP",   "SCMP_ACT_ERRNO",
    "SCMP_ACT_TRACE", "SCMP_ACT_ALLOW",        "SCMP_ACT_LOG",         "SCMP_ACT_NOTIFY",
  };
  static const char *const ops[] = {
    "SCMP_CMP_NE", "SCMP_CMP_LT", "SCMP_CMP_LE",        "SCMP_CMP_EQ",
    "SCMP_CMP_GE", "SCMP_CMP_GT", "SCMP_CMP_MASKED_EQ",
  };
  static const char *const archs[] = {
    "SCMP_ARCH_X86",     "SCMP_ARCH_X86_64",   "SCMP_ARCH_X32",         "SCMP_ARCH_ARM",
    "SCMP_ARCH_AARCH64", "SCMP_ARCH_MIPS",     "SCMP_ARCH_MIPS64",      "SCMP_ARCH_MIPS64N32",
    "SCMP_ARCH_MIPSEL",  "SCMP_ARCH_MIPSEL64", "SCMP_ARCH_MIPSEL64N32", "SCMP_ARCH_PPC",
    "SCMP_ARCH_PPC64",   "SCMP_ARCH_PPC64LE",  "SCMP_ARCH_S390",        "SCMP_ARCH_S390X",
    "SCMP_ARCH_PARISC",  "SCMP_ARCH_PARISC64", "SCMP_ARCH_RISCV64",     "SCMP_ARCH_LOONGARCH64",
    "SCMP_ARCH_M68K",    "SCMP_ARCH_SH",       "SCMP_ARCH_SHEB",
  };
  static const char *const flags[] = {
    "SECCOMP_FILTER_FLAG_TSYNC",
    "SECCOMP_FILTER_FLAG_LOG",
    "SECCOMP_FILTER_FLAG_SPEC_ALLOW",
    "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV",
  };
  size_t i;
  unsigned seen = 0;
  int good = 1;

  for (i = 0; i < AB_ARRAY_SIZE (actions); i++)
    good = good && ab_seccomp_action_from_name (actions[i]) == (int)i
           && strcmp (ab_seccomp_action_name ((int)i), actions[i]) == 0;
  ok (good, "the nine seccomp actions of config-linux.md map to the model's enum and back");
  good = 1;
  for (i = 0; i < AB_ARRAY_SIZE (ops); i++)
    good = good && ab_seccomp_op_from_name (ops[i]) == (int)i
           && strcmp (ab_seccomp_op_name ((int)i), ops[i]) == 0;
  ok (good, "the seven operators map to the model's enum and back");
  good = ab_seccomp_arch_count () == (int)AB_ARRAY_SIZE (archs);
  for (i = 0; i < AB_ARRAY_SIZE (archs); i++)
    good = good && ab_seccomp_arch_index (archs[i]) >= 0
           && strcmp (ab_seccomp_arch_name (ab_seccomp_arch_index (archs[i])), archs[i]) == 0;
  ok (good, "the 23 architectures of libseccomp 2.6 are known");
  good = 1;
  for (i = 0; i < AB_ARRAY_SIZE (flags); i++)
    {
      int bit = ab_seccomp_flag_from_name (flags[i]);
      good = good && bit > 0 && !(seen & (unsigned)bit)
             && strcmp (ab_seccomp_flag_name ((unsigned)bit), flags[i]) == 0;
      seen |= (unsigned)bit;
    }
  ok (good
          && seen
                 == (AB_SECCOMP_FLAG_TSYNC | AB_SECCOMP_FLAG_LOG | AB_SECCOMP_FLAG_SPEC_ALLOW
                     | AB_SECCOMP_FLAG_WAIT_KILLABLE_RECV),
      "the four filter flags map to distinct bits and back");
  ok (ab_seccomp_action_from_name ("SCMP_ACT_KILL ") < 0 && ab_seccomp_arch_index ("SCMP_ARCH_NATIVE") < 0
          && ab_seccomp_flag_name (1u << 9) == NULL && ab_seccomp_op_name (AB_SCMP_CMP__COUNT) == NULL,
      "unknown names and values are refused");
}

static void
test_mount_options (void)
{
  /* features.md's example list, plus idmap and ridmap. */
  static const char *const names[] = {
    "async",         "atime",        "bind",
    "defaults",      "dev",          "diratime",
    "dirsync",       "exec",         "idmap",
    "iversion",      "lazytime",     "loud",
    "mand",          "noatime",      "nodev",
    "nodiratime",    "noexec",       "noiversion",
    "nolazytime",    "nomand",       "norelatime",
    "nostrictatime", "nosuid",       "nosymfollow",
    "private",       "ratime",       "rbind",
    "rdev",          "rdiratime",    "relatime",
    "remount",       "rexec",        "ridmap",
    "rnoatime",      "rnodev",       "rnodiratime",
    "rnoexec",       "rnorelatime",  "rnostrictatime",
    "rnosuid",       "rnosymfollow", "ro",
    "rprivate",      "rrelatime",    "rro",
    "rrw",           "rshared",      "rslave",
    "rstrictatime",  "rsuid",        "rsymfollow",
    "runbindable",   "rw",           "shared",
    "silent",        "slave",        "strictatime",
    "suid",          "symfollow",    "sync",
    "tmpcopyup",     "unbindable",
  };
  const struct ab_mount_option *all, *o;
  size_t n, i;
  int good = 1, sorted = 1, atime = 1;

  all = ab_mount_options (&n);
  is_int (n, AB_ARRAY_SIZE (names), "62 recognised mount options");
  for (i = 0; i < AB_ARRAY_SIZE (names) && i < n; i++)
    good = good && strcmp (all[i].name, names[i]) == 0 && ab_mount_option_lookup (names[i]) == &all[i];
  ok (good, "each option of config.md is found, in features.md order");
  for (i = 1; i < n; i++)
    sorted = sorted && strcmp (all[i - 1].name, all[i].name) < 0;
  ok (sorted, "the table is strictly sorted (lookup bisects it)");
  for (i = 0; i < n; i++)
    if (all[i].kind == AB_MOPT_ATTR_SET || all[i].kind == AB_MOPT_ATTR_CLR)
      {
        bool in_mask = (all[i].attr & ~(uint64_t)MOUNT_ATTR__ATIME) == 0;
        bool named = strstr (all[i].name, "atime") != NULL && strstr (all[i].name, "diratime") == NULL;
        atime = atime && in_mask == named && (!in_mask || all[i].kind == AB_MOPT_ATTR_SET);
      }
  ok (atime, "exactly the recursive atime options carry a mode inside MOUNT_ATTR__ATIME, as ATTR_SET");
  o = ab_mount_option_lookup ("ro");
  ok (o && o->kind == AB_MOPT_FLAG && o->flag == MS_RDONLY, "ro sets MS_RDONLY");
  o = ab_mount_option_lookup ("rw");
  ok (o && o->kind == AB_MOPT_CLEAR && o->flag == MS_RDONLY, "rw clears MS_RDONLY");
  o = ab_mount_option_lookup ("nosymfollow");
  ok (o && o->kind == AB_MOPT_FLAG && o->flag == 256, "nosymfollow sets MS_NOSYMFOLLOW (256)");
  o = ab_mount_option_lookup ("rro");
  ok (o && o->kind == AB_MOPT_ATTR_SET && o->attr == MOUNT_ATTR_RDONLY,
      "rro sets MOUNT_ATTR_RDONLY recursively");
  o = ab_mount_option_lookup ("rsymfollow");
  ok (o && o->kind == AB_MOPT_ATTR_CLR && o->attr == MOUNT_ATTR_NOSYMFOLLOW,
      "rsymfollow clears MOUNT_ATTR_NOSYMFOLLOW");
  o = ab_mount_option_lookup ("rnorelatime");
  ok (o && o->kind == AB_MOPT_ATTR_SET && o->attr == MOUNT_ATTR_STRICTATIME, "rnorelatime means strictatime");
  o = ab_mount_option_lookup ("rbind");
  ok (o && o->kind == AB_MOPT_RBIND && o->flag == (MS_BIND | MS_REC) && o->value == 1,
      "rbind is MS_BIND|MS_REC");
  o = ab_mount_option_lookup ("rslave");
  ok (o && o->kind == AB_MOPT_PROPAGATION && o->flag == (MS_SLAVE | MS_REC) && o->value == AB_PROP_SLAVE,
      "rslave is recursive slave propagation");
  {
    bool rec = false;
    ok (ab_propagation_from_name ("rslave", &rec) == AB_PROP_SLAVE && rec
            && ab_propagation_from_name ("shared", &rec) == AB_PROP_SHARED && !rec
            && ab_propagation_from_name ("rbind", &rec) == -1 && ab_propagation_from_name ("ro", NULL) == -1,
        "propagation words come from the mount option table, other options are none");
    ok (strcmp (ab_propagation_name (AB_PROP_PRIVATE, true), "rprivate") == 0
            && strcmp (ab_propagation_name (AB_PROP_UNBINDABLE, false), "unbindable") == 0
            && ab_propagation_name (AB_PROP_NONE, false) == NULL,
        "... and back to their words");
  }
  o = ab_mount_option_lookup ("unbindable");
  ok (o && o->kind == AB_MOPT_PROPAGATION && o->flag == MS_UNBINDABLE && o->value == AB_PROP_UNBINDABLE,
      "unbindable is non-recursive");
  o = ab_mount_option_lookup ("ridmap");
  ok (o && o->kind == AB_MOPT_IDMAP && o->value == 1 && ab_mount_option_lookup ("idmap")->value == 0,
      "ridmap is the recursive idmap");
  ok (ab_mount_option_lookup ("mode=755") == NULL && ab_mount_option_lookup ("acl") == NULL
          && ab_mount_option_lookup ("RO") == NULL && ab_mount_option_lookup ("") == NULL
          && ab_mount_option_lookup ("zzz") == NULL && ab_mount_option_lookup ("aaa") == NULL,
      "filesystem-specific and unknown options are not in the table");
}

static void
test_scheduler_ioprio_mpol (void)
{
  static const char *const flags[] = {
    "SCHED_FLAG_RESET_ON_FORK",  "SCHED_FLAG_RECLAIM",     "SCHED_FLAG_DL_OVERRUN",
    "SCHED_FLAG_KEEP_POLICY",    "SCHED_FLAG_KEEP_PARAMS", "SCHED_FLAG_UTIL_CLAMP_MIN",
    "SCHED_FLAG_UTIL_CLAMP_MAX",
  };
  size_t i;
  int good = 1, n = 0;

  ok (ab_sched_policy_from_name ("SCHED_OTHER") == SCHED_OTHER
          && ab_sched_policy_from_name ("SCHED_FIFO") == SCHED_FIFO
          && ab_sched_policy_from_name ("SCHED_RR") == SCHED_RR
          && ab_sched_policy_from_name ("SCHED_BATCH") == SCHED_BATCH
          && ab_sched_policy_from_name ("SCHED_ISO") == 4
          && ab_sched_policy_from_name ("SCHED_IDLE") == SCHED_IDLE
          && ab_sched_policy_from_name ("SCHED_DEADLINE") == 6,
      "scheduler policies carry the kernel's SCHED_* numbers");
  for (i = 0; ab_sched_policy_name ((int)i) != NULL; i++)
    good = good && ab_sched_policy_from_name (ab_sched_policy_name ((int)i)) == (int)i;
  ok (good && i == 7, "the seven policies map to their names and back");
  good = 1;
  for (i = 0; i < AB_ARRAY_SIZE (flags); i++)
    good = good && ab_sched_flag_from_name (flags[i]) == (int64_t)1 << i;
  ok (good && ab_sched_flag_from_name ("SCHED_FLAG_ALL") < 0,
      "scheduler flags are the kernel's SCHED_FLAG_* bits");
  ok (ab_ioprio_class_from_name ("IOPRIO_CLASS_RT") == 1 && ab_ioprio_class_from_name ("IOPRIO_CLASS_BE") == 2
          && ab_ioprio_class_from_name ("IOPRIO_CLASS_IDLE") == 3
          && ab_ioprio_class_from_name ("IOPRIO_CLASS_NONE") < 0,
      "I/O priority classes are the kernel's IOPRIO_CLASS_* numbers");
  ok (ab_mpol_mode_from_name ("MPOL_DEFAULT") == 0 && ab_mpol_mode_from_name ("MPOL_PREFERRED") == 1
          && ab_mpol_mode_from_name ("MPOL_BIND") == 2 && ab_mpol_mode_from_name ("MPOL_INTERLEAVE") == 3
          && ab_mpol_mode_from_name ("MPOL_LOCAL") == 4 && ab_mpol_mode_from_name ("MPOL_PREFERRED_MANY") == 5
          && ab_mpol_mode_from_name ("MPOL_WEIGHTED_INTERLEAVE") == 6
          && strcmp (ab_mpol_mode_name (AB_MPOL_LOCAL), "MPOL_LOCAL") == 0,
      "memory policy modes are the kernel's MPOL_* numbers");
  good = 1;
  for (i = 0; ab_mpol_flag_name_at (i) != NULL; i++, n++)
    good = good && ab_mpol_flag_from_name (ab_mpol_flag_name_at (i)) > 0;
  ok (good && n == 3 && ab_mpol_flag_from_name ("MPOL_F_STATIC_NODES") == (1 << 15)
          && ab_mpol_flag_from_name ("MPOL_F_RELATIVE_NODES") == (1 << 14)
          && ab_mpol_flag_from_name ("MPOL_F_NUMA_BALANCING") == (1 << 13),
      "memory policy flags are the kernel's MPOL_F_* bits");
}

int
main (void)
{
  test_namespaces ();
  test_capabilities ();
  test_rlimits ();
  test_seccomp ();
  test_mount_options ();
  test_scheduler_ioprio_mpol ();
  return tap_done ();
}
