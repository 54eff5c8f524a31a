/* The default seccomp allowlist (see spec/seccomp_default.h).
 *
 * Policy: defaultAction SCMP_ACT_ERRNO with EPERM, so an unlisted syscall
 * fails the way a missing capability does and programs take their usual
 * error path.  clone, personality, socket and the calls that set a file's
 * mode get argument filters; clone3 and openat2 a different errno.
 *
 * Denied by omission, one reason each:
 *   mount umount2 pivot_root chroot   the mount table belongs to the runtime; a
 *                                     remount or a chroot inside is how escapes start
 *   open_tree move_mount fsopen fsconfig fsmount fspick mount_setattr
 *                                     the new mount API, same reason; fsconfig was
 *                                     CVE-2022-0185 (heap overflow -> escape)
 *   unshare setns                     new namespaces (above all user namespaces) expose
 *                                     kernel code written for root to the sandbox
 *   kexec_load kexec_file_load        replace the running kernel
 *   init_module finit_module delete_module   load or unload kernel code
 *   bpf                               verifier bugs are a recurring root exploit
 *   perf_event_open                   side channels and a long list of kernel CVEs
 *   userfaultfd                       stalls the kernel at a page fault: the standard
 *                                     way to win kernel races in exploits
 *   keyctl add_key request_key        keyrings are not namespaced (CVE-2016-0728)
 *   io_uring_setup io_uring_enter io_uring_register
 *                                     its operations bypass this filter entirely, and
 *                                     it has been a top source of kernel exploits
 *   ptrace                            kernel bugs reachable through it (CVE-2019-13272
 *                                     PTRACE_TRACEME root, CVE-2022-30594 seccomp bypass
 *                                     via PTRACE_SEIZE); agents need no debugger
 *   process_vm_readv process_vm_writev   ptrace-equivalent access to other processes
 *   kcmp                              compares kernel pointers of other processes
 *   pidfd_getfd                       steals a file descriptor from another process
 *   open_by_handle_at                 the "shocker" escape: opens host files by handle
 *   name_to_handle_at                 its other half; leaks file handles
 *   swapon swapoff                    host memory configuration
 *   reboot                            host power state (and kills the namespace's init)
 *   syslog                            the kernel log leaks kernel addresses
 *   acct                              process accounting into a host file
 *   quotactl quotactl_fd              host filesystem quotas
 *   iopl ioperm                       raw x86 I/O port access
 *   modify_ldt                        x86 LDT, an old exploit vector (CVE-2015-5157,
 *                                     CVE-2017-17053); only Wine and dosemu use it
 *   lookup_dcookie nfsservctl uselib  obsolete (uselib: a.out loader, CVE-2004-1235)
 *   _sysctl sysfs ustat create_module get_kernel_syms query_module
 *   epoll_ctl_old epoll_wait_old afs_syscall tuxcall security vserver getpmsg putpmsg
 *                                     obsolete or never implemented
 *   vm86 vm86old                      32-bit x86 only: killed by the architecture check
 *   set_thread_area get_thread_area   32-bit TLS; x86_64 programs use arch_prctl
 *   settimeofday clock_settime adjtimex clock_adjtime
 *                                     the realtime clock is not namespaced
 *   fanotify_init fanotify_mark       filesystem-wide event monitoring
 *   sethostname setdomainname         the runtime sets the names; no capability here
 *   vhangup                           revokes a terminal other processes may hold
 *   migrate_pages move_pages          move another process's memory between nodes
 *   process_madvise process_mrelease  act on another process's memory
 *   get_robust_list                   reads another thread's futex list (an address
 *                                     leak); only debuggers use it
 *   memfd_secret                      unmaps pages from the kernel's direct map; no
 *                                     ordinary program needs it
 *   mseal statmount listmount lsm_* setxattrat getxattrat listxattrat removexattrat
 *   open_tree_attr file_getattr file_setattr uretprobe
 *                                     newer than libseccomp 2.5 (Debian 12), which could
 *                                     not compile them; they get the default EPERM
 *
 * Not filtered, on purpose:
 *   ioctl(TIOCSTI, TIOCLINUX) types input into a terminal.  The command is an
 *   `unsigned int`: a 64-bit comparison is bypassed by setting the upper bits
 *   (CVE-2019-10063 in Flatpak), and libseccomp cannot express "low 32 bits
 *   differ" next to an unconditional allow.  The defence is the runtime's:
 *   the container never gets the host's terminal (terminal false: pipes; or a
 *   pty of its own) and runs in a new session, and the kernel refuses TIOCSTI
 *   on a terminal that is not the caller's controlling one.
 */
#include "config.h"

#include <stdint.h>

#include "base/util.h"
#include "spec/seccomp_default.h"

#if defined(__x86_64__)
const char ab_seccomp_default_arch[] = "SCMP_ARCH_X86_64";
#elif defined(__aarch64__)
const char ab_seccomp_default_arch[] = "SCMP_ARCH_AARCH64";
#else
#error "the default seccomp profile is written for x86_64 and aarch64"
#endif

/* Syscalls allowed without condition, by topic.  aarch64 has only the
   generic table, so the *at forms are the common ground; the legacy x86_64
   entry points come last. */

/* clang-format off */
/* File descriptors, files and directories.  The calls that set a mode
   (open, chmod, mknod: without CAP_MKNOD only FIFOs, sockets and regular
   files) come with the set-id filter, below. */
static const char *const files[] = {
  "read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev", "preadv2", "pwritev2",
  "close", "close_range", "lseek", "dup", "dup3", "fcntl", "flock", "ioctl",
  "newfstatat", "fstat", "statx", "statfs", "fstatfs", "faccessat", "faccessat2", "getdents64", "getcwd",
  "chdir", "fchdir", "mkdirat", "unlinkat", "renameat", "renameat2", "linkat", "symlinkat",
  "readlinkat", "fchown", "fchownat", "utimensat", "truncate",
  "ftruncate", "fallocate", "fadvise64", "readahead", "fsync", "fdatasync", "sync", "syncfs",
  "sync_file_range", "copy_file_range", "sendfile", "splice", "tee", "vmsplice", "umask", "getxattr",
  "lgetxattr", "fgetxattr", "listxattr", "llistxattr", "flistxattr", "setxattr", "lsetxattr", "fsetxattr",
  "removexattr", "lremovexattr", "fremovexattr", "inotify_init1", "inotify_add_watch", "inotify_rm_watch",
  "memfd_create",
};

/* Memory, bounded by the memory cgroup and RLIMIT_MEMLOCK. */
static const char *const memory[] = {
  "brk", "mmap", "munmap", "mremap", "mprotect", "msync", "madvise", "mincore", "mlock", "mlock2", "munlock",
  "mlockall", "munlockall", "remap_file_pages", "pkey_alloc", "pkey_free", "pkey_mprotect", "mbind",
  "get_mempolicy", "set_mempolicy", "set_mempolicy_home_node", "membarrier", "cachestat", "map_shadow_stack",
};

/* Processes and threads (clone comes with its filter, below).  The last
   line only ever restricts the caller further. */
static const char *const processes[] = {
  "execve", "execveat", "exit", "exit_group", "wait4", "waitid", "set_tid_address", "set_robust_list",
  "futex", "futex_waitv", "futex_wake", "futex_wait", "futex_requeue", "rseq", "gettid", "getpid", "getppid",
  "getpgid", "setpgid", "getsid", "setsid", "prctl", "sched_yield", "sched_getaffinity", "sched_setaffinity",
  "sched_getparam", "sched_setparam", "sched_getscheduler", "sched_setscheduler", "sched_getattr",
  "sched_setattr", "sched_get_priority_max", "sched_get_priority_min", "sched_rr_get_interval",
  "getpriority", "setpriority", "ioprio_get", "ioprio_set", "getrlimit", "setrlimit", "prlimit64",
  "getrusage", "times", "getcpu", "capget", "capset", "seccomp", "landlock_create_ruleset",
  "landlock_add_rule", "landlock_restrict_self",
};

/* Credentials: inside the user namespace and without capabilities these can
   only switch between the IDs the process already has. */
static const char *const credentials[] = {
  "getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid", "getgroups", "setuid", "setgid",
  "setreuid", "setregid", "setresuid", "setresgid", "setgroups", "setfsuid", "setfsgid",
};

/* Signals: the PID namespace bounds who can be reached. */
static const char *const signals[] = {
  "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigpending", "rt_sigtimedwait", "rt_sigsuspend",
  "rt_sigqueueinfo", "rt_tgsigqueueinfo", "sigaltstack", "kill", "tkill", "tgkill", "pidfd_open",
  "pidfd_send_signal", "signalfd4", "restart_syscall",
};

/* Clocks (reading only), timers, polling and events. */
static const char *const time_events[] = {
  "clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep", "gettimeofday", "getitimer", "setitimer",
  "timer_create", "timer_settime", "timer_gettime", "timer_getoverrun", "timer_delete", "timerfd_create",
  "timerfd_settime", "timerfd_gettime", "epoll_create1", "epoll_ctl", "epoll_pwait", "epoll_pwait2", "ppoll",
  "pselect6", "eventfd2", "pipe2",
};

/* Sockets (socket itself is filtered by family, below); System V and POSIX
   IPC in the container's own IPC namespace; Linux AIO; system information. */
static const char *const ipc[] = {
  "socketpair", "bind", "connect", "listen", "accept", "accept4", "getsockname", "getpeername", "getsockopt",
  "setsockopt", "sendto", "recvfrom", "sendmsg", "recvmsg", "sendmmsg", "recvmmsg", "shutdown", "shmget",
  "shmat", "shmdt", "shmctl", "semget", "semop", "semtimedop", "semctl", "msgget", "msgsnd", "msgrcv",
  "msgctl", "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr",
  "io_setup", "io_destroy", "io_submit", "io_cancel", "io_getevents", "io_pgetevents", "uname", "sysinfo",
  "getrandom",
};

#if defined(__x86_64__)
/* The legacy x86_64 entry points that aarch64 never had: static binaries and
   older libcs still call them. */
static const char *const legacy[] = {
  "stat", "lstat", "access", "getdents", "mkdir", "rmdir", "rename", "link", "unlink",
  "symlink", "readlink", "chown", "lchown", "utime", "utimes", "futimesat", "pipe", "dup2",
  "poll", "select", "epoll_create", "epoll_wait", "eventfd", "signalfd", "inotify_init", "fork", "vfork",
  "pause", "alarm", "time", "getpgrp", "arch_prctl",
};
#endif

static const struct
{
  const char *const *names;
  size_t n;
} allowed[] = {
  { files, AB_ARRAY_SIZE (files) },
  { memory, AB_ARRAY_SIZE (memory) },
  { processes, AB_ARRAY_SIZE (processes) },
  { credentials, AB_ARRAY_SIZE (credentials) },
  { signals, AB_ARRAY_SIZE (signals) },
  { time_events, AB_ARRAY_SIZE (time_events) },
  { ipc, AB_ARRAY_SIZE (ipc) },
#if defined(__x86_64__)
  { legacy, AB_ARRAY_SIZE (legacy) },
#endif
};
/* clang-format on */

/* clone(2) without any CLONE_NEW* flag: threads and fork stay possible,
   namespaces do not (see unshare above).  CLONE_NEWNS | CLONE_NEWCGROUP |
   CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET;
   CLONE_NEWTIME (0x80) cannot be passed to clone(2), whose low byte is the
   exit signal.  The flags are argument 0 on x86_64 and aarch64 (only s390
   swaps the first two). */
#define CLONE_NEW_MASK 0x7E020000ull

/* personality(2): the execution domains a program may legitimately ask for.
   Other flags (READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE, ...) switch off exploit
   mitigations for the programs run afterwards. */
static const uint64_t personas[] = {
  0x0,        /* PER_LINUX */
  0x8,        /* PER_LINUX32 */
  0x20000,    /* UNAME26 */
  0x20008,    /* PER_LINUX32 | UNAME26 */
  0xffffffff, /* query the current persona */
};

/* socket(2) families.  Creating a socket of any other family autoloads its
   protocol module (RDS, TIPC, ... have had root exploits), and AF_VSOCK
   reaches the hypervisor past the network namespace.  An exact 64-bit
   comparison is safe here: setting upper bits only fails the match. */
static const uint64_t families[] = {
  1,  /* AF_UNIX */
  2,  /* AF_INET */
  10, /* AF_INET6 */
  16, /* AF_NETLINK: the container's own routes and addresses (getifaddrs) */
};

/* Set-user-ID and set-group-ID bits.  The owner of a file may set them
   without any capability, and through an id-mapped --workspace the
   container's root owns files as the directory's owner on the host: a
   set-uid binary written there runs as that user (root, often) for anyone
   on the host who can reach it.  So every call that gives a file a mode is
   allowed only without these bits (EPERM otherwise); open and openat also
   when they create nothing, whatever their mode argument holds.  openat2
   passes its mode in memory, out of seccomp's reach: ENOSYS, and libcs and
   runtimes fall back to openat. */
#define SETID_BITS 06000ull                     /* S_ISUID | S_ISGID */
#define CREATING_FLAGS (0100ull | 020000000ull) /* O_CREAT | __O_TMPFILE */

static const struct
{
  const char *name;
  int mode_arg;  /* the index of the mode argument */
  int flags_arg; /* of the open flags, or -1: the call always sets the mode */
} mode_setters[] = {
  { "openat", 3, 2 },   { "fchmod", 1, -1 }, { "fchmodat", 2, -1 }, { "fchmodat2", 2, -1 },
  { "mknodat", 2, -1 },
#if defined(__x86_64__)
  { "open", 2, 1 },     { "creat", 1, -1 },  { "chmod", 1, -1 },    { "mknod", 1, -1 },
#endif
};

static void
gen_rule_open (struct ab_gen *g, const char *const *names, size_t n, const char *action)
{
  ab_gen_obj_open (g);
  ab_gen_kv_strv (g, "names", (char *const *)names, n);
  ab_gen_kv_str (g, "action", action);
}

static void
gen_one_arg (struct ab_gen *g, unsigned index, uint64_t value, uint64_t value_two, const char *op)
{
  ab_gen_key (g, "args");
  ab_gen_arr_open (g);
  ab_gen_obj_open (g);
  ab_gen_kv_u64 (g, "index", index);
  ab_gen_kv_u64 (g, "value", value);
  ab_gen_kv_u64 (g, "valueTwo", value_two);
  ab_gen_kv_str (g, "op", op);
  ab_gen_obj_close (g);
  ab_gen_arr_close (g);
}

void
ab_seccomp_default_gen (struct ab_gen *g)
{
  static const char *const clone[] = { "clone" };
  static const char *const clone3[] = { "clone3" };
  static const char *const openat2[] = { "openat2" };
  static const char *const personality[] = { "personality" };
  static const char *const socket[] = { "socket" };
  static const char *const arches[] = { ab_seccomp_default_arch };

  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "defaultAction", "SCMP_ACT_ERRNO");
  ab_gen_kv_u64 (g, "defaultErrnoRet", 1); /* EPERM */
  /* Only the native ABI: the BPF program kills anything else (int 0x80 on
     x86_64, x32, AArch32), so no syscall slips past under another number. */
  ab_gen_kv_strv (g, "architectures", (char *const *)arches, 1);
  ab_gen_key (g, "syscalls");
  ab_gen_arr_open (g);

  ab_gen_obj_open (g);
  ab_gen_key (g, "names");
  ab_gen_arr_open (g);
  for (size_t i = 0; i < AB_ARRAY_SIZE (allowed); i++)
    for (size_t j = 0; j < allowed[i].n; j++)
      ab_gen_str (g, allowed[i].names[j]);
  ab_gen_arr_close (g);
  ab_gen_kv_str (g, "action", "SCMP_ACT_ALLOW");
  ab_gen_obj_close (g);

  gen_rule_open (g, clone, 1, "SCMP_ACT_ALLOW");
  gen_one_arg (g, 0, CLONE_NEW_MASK, 0, "SCMP_CMP_MASKED_EQ");
  ab_gen_obj_close (g);

  /* clone3 passes its flags in memory, which seccomp cannot read: ENOSYS
     makes glibc (pthread_create, posix_spawn) fall back to the filtered
     clone, where EPERM would be a hard failure. */
  gen_rule_open (g, clone3, 1, "SCMP_ACT_ERRNO");
  ab_gen_kv_u64 (g, "errnoRet", 38); /* ENOSYS */
  ab_gen_obj_close (g);

  for (size_t i = 0; i < AB_ARRAY_SIZE (mode_setters); i++)
    {
      const char *name[] = { mode_setters[i].name };
      gen_rule_open (g, name, 1, "SCMP_ACT_ALLOW");
      gen_one_arg (g, (unsigned) mode_setters[i].mode_arg, SETID_BITS, 0, "SCMP_CMP_MASKED_EQ");
      ab_gen_obj_close (g);
      if (mode_setters[i].flags_arg < 0)
        continue;
      gen_rule_open (g, name, 1, "SCMP_ACT_ALLOW");
      gen_one_arg (g, (unsigned) mode_setters[i].flags_arg, CREATING_FLAGS, 0, "SCMP_CMP_MASKED_EQ");
      ab_gen_obj_close (g);
    }
  gen_rule_open (g, openat2, 1, "SCMP_ACT_ERRNO");
  ab_gen_kv_u64 (g, "errnoRet", 38); /* ENOSYS */
  ab_gen_obj_close (g);

  for (size_t i = 0; i < AB_ARRAY_SIZE (personas); i++)
    {
      gen_rule_open (g, personality, 1, "SCMP_ACT_ALLOW");
      gen_one_arg (g, 0, personas[i], 0, "SCMP_CMP_EQ");
      ab_gen_obj_close (g);
    }
  for (size_t i = 0; i < AB_ARRAY_SIZE (families); i++)
    {
      gen_rule_open (g, socket, 1, "SCMP_ACT_ALLOW");
      gen_one_arg (g, 0, families[i], 0, "SCMP_CMP_EQ");
      ab_gen_obj_close (g);
    }

  ab_gen_arr_close (g);
  ab_gen_obj_close (g);
}
