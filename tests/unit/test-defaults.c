/* The hardened default profile (`agentbox spec`) and its seccomp allowlist.

   Checked three ways: the bytes (stable, 2-space JSON, trailing newline),
   the model our own parser builds from them (every value the profile
   promises), and the behaviour of the seccomp profile itself, compiled with
   libseccomp and installed in a child process: what it must refuse is
   refused (judged from the parent, by exit status and signal), and real
   programs (sh, coreutils, python3, git, gcc, make, node) still work.

   With --print [--rootless UID GID] it writes the profile to stdout, and
   with --load FILE it parses and validates FILE and fails on any warning or
   unknown property: tests/schema/test-default-schema.py uses both. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "spec/defaults.h"
#include "spec/seccomp_default.h"
#include "spec/spec.h"
#include "tests/unit/tap.h"

#define GiB (1ll << 30)

static struct ab_spec *
parse_default (const struct ab_default_opts *o)
{
  ab_error_t err = { 0 };
  _cleanup_free_ char *doc = ab_spec_default_json (o, NULL);
  struct ab_spec *s = ab_spec_parse (doc, strlen (doc), &err);

  if (s == NULL)
    printf ("# parse error: %s\n", err.msg);
  return s;
}

/* ---- bytes -------------------------------------------------------------- */

static void
test_bytes (void)
{
  struct ab_default_opts o = { 0 };
  size_t n1, n2;
  _cleanup_free_ char *a = ab_spec_default_json (&o, &n1), *b = ab_spec_default_json (NULL, &n2);
  bool indent_ok = true;

  ok (n1 == n2 && memcmp (a, b, n1) == 0, "two generations are byte-identical (and NULL options = defaults)");
  ok (n1 == strlen (a) && n1 > 2 && a[n1 - 1] == '\n' && a[n1 - 2] == '}', "the document ends with \"}\\n\"");
  ok (ab_str_has_prefix (a, "{\n  \"ociVersion\": \"1.3.0\",\n  \"process\": {\n    \"terminal\": false,\n"),
      "the document starts with ociVersion 1.3.0 in 2-space indentation");
  for (const char *line = a; *line; line = strchr (line, '\n') + 1)
    {
      size_t sp = strspn (line, " ");
      if (sp % 2 != 0 || line[sp] == '\t')
        indent_ok = false;
    }
  ok (indent_ok && strchr (a, '\t') == NULL, "every line is indented by a multiple of two spaces, no tabs");
  ok (strstr (a, "\n      \"bounding\": [],\n") != NULL && strstr (a, "\n\n") == NULL,
      "empty arrays are written as [] and there is no empty line");
}

/* ---- the model ---------------------------------------------------------- */

static bool
strv_is (const struct ab_strv *v, const char *const *want, size_t n)
{
  if (v->n != n)
    return false;
  for (size_t i = 0; i < n; i++)
    if (strcmp (v->v[i], want[i]) != 0)
      return false;
  return true;
}

static void
test_process (const struct ab_spec *s)
{
  static const char *const env[] = { "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                                     "HOME=/root", "TERM=xterm", "LANG=C.UTF-8" };
  static const char *const sh[] = { "sh" };
  const struct ab_process *p = s->process;
  bool caps_empty = true;

  ok (strcmp (s->oci_version, "1.3.0") == 0, "ociVersion is 1.3.0");
  ok (p && !p->terminal && p->user.uid == 0 && p->user.gid == 0 && p->user.n_additional_gids == 0,
      "the process is root (0:0) without a terminal");
  ok (p && strv_is (&p->args, sh, 1) && strcmp (p->cwd, "/") == 0, "args default to [\"sh\"], cwd is /");
  ok (p && strv_is (&p->env, env, AB_ARRAY_SIZE (env)), "env is PATH, HOME=/root, TERM=xterm, LANG=C.UTF-8");
  for (int k = 0; p && k < AB_CAP__SETS; k++)
    caps_empty = caps_empty && p->caps.set[k] && p->caps.mask[k] == 0;
  ok (p && p->capabilities_set && caps_empty, "all five capability sets are present and empty");
  ok (p && p->no_new_privileges, "noNewPrivileges is true");
  ok (p && p->n_rlimits == 3 && strcmp (p->rlimits[0].type, "RLIMIT_NOFILE") == 0
          && p->rlimits[0].soft == 1024 && p->rlimits[0].hard == 1024
          && strcmp (p->rlimits[1].type, "RLIMIT_CORE") == 0 && p->rlimits[1].soft == 0
          && p->rlimits[1].hard == 0 && strcmp (p->rlimits[2].type, "RLIMIT_FSIZE") == 0
          && p->rlimits[2].soft == (uint64_t)GiB && p->rlimits[2].hard == (uint64_t)GiB,
      "rlimits are NOFILE 1024, CORE 0 and FSIZE 1 GiB, and no NPROC");
}

static void
test_filesystem (const struct ab_spec *s)
{
  static const struct
  {
    const char *dest, *type, *opts;
  } want[] = {
    { "/proc", "proc", "nosuid,noexec,nodev" },
    { "/dev", "tmpfs", "nosuid,strictatime,mode=755,size=65536k" },
    { "/dev/pts", "devpts", "nosuid,noexec,newinstance,ptmxmode=0666,mode=0620" },
    { "/dev/shm", "tmpfs", "nosuid,noexec,nodev,mode=1777,size=65536k" },
    { "/dev/mqueue", "mqueue", "nosuid,noexec,nodev" },
    { "/sys", "sysfs", "nosuid,noexec,nodev,ro" },
    { "/tmp", "tmpfs", "nosuid,nodev,mode=1777,size=268435456" },
  };
  static const char *const masked[]
      = { "/proc/acpi",        "/proc/asound",        "/proc/interrupts", "/proc/kcore",
          "/proc/keys",        "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats",
          "/proc/sched_debug", "/proc/scsi",          "/sys/firmware",    "/sys/devices/virtual/powercap" };
  static const char *const ro[]
      = { "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger" };
  bool mounts_ok = s->n_mounts == AB_ARRAY_SIZE (want);

  ok (s->root_set && strcmp (s->root.path, "rootfs") == 0 && s->root.readonly, "root is rootfs, read-only");
  ok (s->hostname && strcmp (s->hostname, "agentbox") == 0, "hostname is agentbox");
  for (size_t i = 0; mounts_ok && i < AB_ARRAY_SIZE (want); i++)
    {
      char joined[256] = "";
      for (size_t j = 0; j < s->mounts[i].options.n; j++)
        snprintf (joined + strlen (joined), sizeof joined - strlen (joined), "%s%s", j ? "," : "",
                  s->mounts[i].options.v[j]);
      mounts_ok = strcmp (s->mounts[i].destination, want[i].dest) == 0
                  && strcmp (s->mounts[i].type, want[i].type) == 0 && strcmp (joined, want[i].opts) == 0;
      if (!mounts_ok)
        printf ("#   mounts[%zu]: %s %s %s\n", i, s->mounts[i].destination, s->mounts[i].type, joined);
    }
  ok (mounts_ok, "mounts are proc, dev, pts, shm, mqueue, sys, tmp in order with their options");
  ok (s->linux_ && strv_is (&s->linux_->masked_paths, masked, AB_ARRAY_SIZE (masked)),
      "maskedPaths are runc's default list");
  ok (s->linux_ && strv_is (&s->linux_->readonly_paths, ro, AB_ARRAY_SIZE (ro)),
      "readonlyPaths are /proc/bus, fs, irq, sys, sysrq-trigger");
}

static void
test_linux (const struct ab_spec *s, const struct ab_spec *rl)
{
  const struct ab_linux *l = s->linux_;
  const struct ab_resources *r = l ? l->resources : NULL;
  bool all_new = l != NULL;

  for (int t = 0; l && t < AB_NS__COUNT; t++)
    all_new = all_new && l->ns[t].present && l->ns[t].path == NULL;
  ok (all_new, "all eight namespaces are new");
  ok (l && l->uid_mappings.n == 1 && l->uid_mappings.v[0].container_id == 0
          && l->uid_mappings.v[0].host_id == 100000 && l->uid_mappings.v[0].size == 65536
          && l->gid_mappings.n == 1 && l->gid_mappings.v[0].host_id == 100000
          && l->gid_mappings.v[0].size == 65536,
      "uid and gid 0-65535 map to host 100000-165535");
  ok (r && r->memory_set && r->memory.limit.set && r->memory.limit.v == GiB && r->memory.swap.set
          && r->memory.swap.v == GiB,
      "memory is limited to 1 GiB with swap equal to the limit");
  ok (r && r->pids_set && r->pids_limit.v == 512, "pids are limited to 512");
  ok (r && r->n_devices == 1 && !r->devices[0].allow && strcmp (r->devices[0].access, "rwm") == 0
          && !r->devices[0].major.set && !r->devices[0].minor.set,
      "the device cgroup denies everything (rwm)");
  ok (rl->linux_ && rl->linux_->resources == NULL, "the rootless profile has no resources");
  ok (rl->linux_ && rl->linux_->uid_mappings.n == 1 && rl->linux_->uid_mappings.v[0].container_id == 0
          && rl->linux_->uid_mappings.v[0].host_id == 1234 && rl->linux_->uid_mappings.v[0].size == 1
          && rl->linux_->gid_mappings.n == 1 && rl->linux_->gid_mappings.v[0].host_id == 5678
          && rl->linux_->gid_mappings.v[0].size == 1,
      "the rootless profile maps only the invoking uid and gid, to 0");
  ok (rl->process && rl->process->args.n == 3 && strcmp (rl->process->args.v[2], "print(1)") == 0,
      "args given in the options are used");
}

/* ---- the seccomp profile ------------------------------------------------ */

static const struct ab_seccomp_rule *
find_rules (const struct ab_seccomp *sc, const char *name, size_t *n)
{
  const struct ab_seccomp_rule *first = NULL;

  *n = 0;
  for (size_t i = 0; i < sc->n_syscalls; i++)
    if (ab_strv_contains (&sc->syscalls[i].names, name))
      {
        first = first ? first : &sc->syscalls[i];
        (*n)++;
      }
  return first;
}

static void
test_seccomp_profile (const struct ab_seccomp *sc)
{
  /* The brief's list of what must never be allowed, independent of the
     implementation's comments. */
  static const char *const denied[] = {
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "unshare",
    "setns",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "keyctl",
    "add_key",
    "request_key",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "open_by_handle_at",
    "name_to_handle_at",
    "swapon",
    "swapoff",
    "reboot",
    "syslog",
    "acct",
    "quotactl",
    "quotactl_fd",
    "iopl",
    "ioperm",
    "lookup_dcookie",
    "nfsservctl",
    "uselib",
    "vm86",
    "vm86old",
    "settimeofday",
    "clock_settime",
    "adjtimex",
    "clock_adjtime",
    "pidfd_getfd",
    "fanotify_init",
  };
  static const uint64_t personas[] = { 0x0, 0x8, 0x20000, 0x20008, 0xffffffff };
  static const uint64_t families[] = { 1, 2, 10, 16 };
  const struct ab_seccomp_rule *r;
  bool resolve_ok = true, none_denied = true, set_ok;
  size_t n;

  ok (sc->default_action == AB_SCMP_ACT_ERRNO && sc->default_errno_ret_set && sc->default_errno_ret == 1,
      "the default action is SCMP_ACT_ERRNO with EPERM");
  ok (sc->architectures.n == 1 && strcmp (sc->architectures.v[0], ab_seccomp_default_arch) == 0
#if defined(__x86_64__)
          && strcmp (ab_seccomp_default_arch, "SCMP_ARCH_X86_64") == 0
#endif
      ,
      "only the native architecture (%s) is listed", ab_seccomp_default_arch);
  for (size_t i = 0; i < sc->n_syscalls; i++)
    for (size_t j = 0; j < sc->syscalls[i].names.n; j++)
      if (seccomp_syscall_resolve_name (sc->syscalls[i].names.v[j]) < 0)
        {
          printf ("#   not a native syscall for libseccomp: %s\n", sc->syscalls[i].names.v[j]);
          resolve_ok = false;
        }
  ok (resolve_ok, "every syscall named resolves to a native syscall number with libseccomp");
  for (size_t i = 0; i < AB_ARRAY_SIZE (denied); i++)
    if (find_rules (sc, denied[i], &n) != NULL)
      {
        printf ("#   %s is named by the profile\n", denied[i]);
        none_denied = false;
      }
  ok (none_denied, "none of the %zu must-deny syscalls is named by any rule", AB_ARRAY_SIZE (denied));

  /* libseccomp merges an unconditional rule over conditional ones for the
     same syscall, so a filtered syscall must appear in no other rule. */
  r = find_rules (sc, "clone", &n);
  ok (r && n == 1 && r->action == AB_SCMP_ACT_ALLOW && r->n_args == 1 && r->args[0].index == 0
          && r->args[0].op == AB_SCMP_CMP_MASKED_EQ && r->args[0].value == 0x7E020000
          && r->args[0].value_two == 0,
      "clone is allowed only when (flags & CLONE_NEW*) == 0");
  r = find_rules (sc, "clone3", &n);
  ok (r && n == 1 && r->action == AB_SCMP_ACT_ERRNO && r->errno_ret_set && r->errno_ret == 38
          && r->n_args == 0,
      "clone3 fails with ENOSYS");
  find_rules (sc, "personality", &n);
  set_ok = n == AB_ARRAY_SIZE (personas);
  for (size_t i = 0, k = 0; set_ok && i < sc->n_syscalls; i++)
    if (ab_strv_contains (&sc->syscalls[i].names, "personality"))
      {
        r = &sc->syscalls[i];
        set_ok = r->names.n == 1 && r->action == AB_SCMP_ACT_ALLOW && r->n_args == 1 && r->args[0].index == 0
                 && r->args[0].op == AB_SCMP_CMP_EQ && r->args[0].value == personas[k++];
      }
  ok (set_ok, "personality is allowed for PER_LINUX, PER_LINUX32, UNAME26 and the query only");
  find_rules (sc, "socket", &n);
  set_ok = n == AB_ARRAY_SIZE (families);
  for (size_t i = 0, k = 0; set_ok && i < sc->n_syscalls; i++)
    if (ab_strv_contains (&sc->syscalls[i].names, "socket"))
      {
        r = &sc->syscalls[i];
        set_ok = r->names.n == 1 && r->action == AB_SCMP_ACT_ALLOW && r->n_args == 1 && r->args[0].index == 0
                 && r->args[0].op == AB_SCMP_CMP_EQ && r->args[0].value == families[k++];
      }
  ok (set_ok, "socket is allowed for AF_UNIX, AF_INET, AF_INET6 and AF_NETLINK only");
}

/* A minimal translation of the model to libseccomp, enough for the default
   profile (runtime/seccomp.c is the real one). */
static scmp_filter_ctx
build_filter (const struct ab_seccomp *sc)
{
  static const enum scmp_compare ops[AB_SCMP_CMP__COUNT] = {
    [AB_SCMP_CMP_NE] = SCMP_CMP_NE,
    [AB_SCMP_CMP_LT] = SCMP_CMP_LT,
    [AB_SCMP_CMP_LE] = SCMP_CMP_LE,
    [AB_SCMP_CMP_EQ] = SCMP_CMP_EQ,
    [AB_SCMP_CMP_GE] = SCMP_CMP_GE,
    [AB_SCMP_CMP_GT] = SCMP_CMP_GT,
    [AB_SCMP_CMP_MASKED_EQ] = SCMP_CMP_MASKED_EQ,
  };
  scmp_filter_ctx ctx = seccomp_init (SCMP_ACT_ERRNO (sc->default_errno_ret));

  if (ctx == NULL)
    return NULL;
  for (size_t i = 0; i < sc->n_syscalls; i++)
    {
      const struct ab_seccomp_rule *r = &sc->syscalls[i];
      struct scmp_arg_cmp cmp[6];
      uint32_t action;

      if (r->action == AB_SCMP_ACT_ALLOW)
        action = SCMP_ACT_ALLOW;
      else if (r->action == AB_SCMP_ACT_ERRNO)
        action = SCMP_ACT_ERRNO (r->errno_ret_set ? r->errno_ret : EPERM);
      else
        abort ();
      for (size_t a = 0; a < r->n_args && a < 6; a++)
        cmp[a] = (struct scmp_arg_cmp){ r->args[a].index, ops[r->args[a].op], r->args[a].value,
                                        r->args[a].value_two };
      for (size_t j = 0; j < r->names.n; j++)
        if (seccomp_rule_add_array (ctx, action, seccomp_syscall_resolve_name (r->names.v[j]),
                                    (unsigned)r->n_args, cmp)
            < 0)
          {
            seccomp_release (ctx);
            return NULL;
          }
    }
  return ctx;
}

/* Run fn in a child, under the filter when ctx is not NULL; the child exits
   with errno (or 0) and the parent returns the raw wait status. */
static int
in_child (scmp_filter_ctx ctx, long (*fn) (void *), void *arg)
{
  int status;
  pid_t pid = fork ();

  if (pid < 0)
    abort ();
  if (pid == 0)
    {
      long r;
      /* The kernel's own signals, not a sanitizer's report: ASan's SIGSEGV
         handler would turn a missing i386 ABI into an exit status. */
      signal (SIGSEGV, SIG_DFL);
      signal (SIGSYS, SIG_DFL);
      /* libseccomp sets no_new_privs before loading. */
      if (ctx != NULL && seccomp_load (ctx) < 0)
        _exit (250);
      errno = 0;
      r = fn (arg);
      /* _exit: no atexit handlers (LeakSanitizer would need ptrace). */
      _exit (r < 0 ? errno & 0xff : 0);
    }
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      abort ();
  return status;
}

#define PROBE(name, call)                                                                                    \
  static long probe_##name (void *arg AB_UNUSED)                                                             \
  {                                                                                                          \
    return (call);                                                                                           \
  }

/* Each probe passes arguments that make the call fail harmlessly without the
   filter (the tests run as root on the host), so the filtered EPERM is told
   apart from the kernel's own answer. */
PROBE (mount, mount ("none", "/nonexistent/agentbox-test", "tmpfs", 0, NULL))
PROBE (umount2, umount2 ("/nonexistent/agentbox-test", 0))
PROBE (unshare_user, unshare (CLONE_NEWUSER))
PROBE (setns, setns (-1, 0))
/* CLONE_NEWNS with CLONE_FS is invalid: without the filter, EINVAL and no child. */
PROBE (clone_newns, syscall (SYS_clone, (long)(CLONE_NEWNS | CLONE_FS | SIGCHLD), 0L, 0L, 0L, 0L))
PROBE (clone3, syscall (SYS_clone3, NULL, 0L))
/* A pid that cannot exist: without the filter, ESRCH. */
PROBE (ptrace, syscall (SYS_ptrace, 0x4206L /* PTRACE_SEIZE */, 0x7fffffffL, 0L, 0L))
PROBE (bpf, syscall (SYS_bpf, -1L, NULL, 0L))
PROBE (keyctl, syscall (SYS_keyctl, -1L, 0L, 0L, 0L, 0L))
PROBE (io_uring_setup, syscall (SYS_io_uring_setup, 0L, NULL))
PROBE (perf_event_open, syscall (SYS_perf_event_open, NULL, 0L, -1L, -1L, 0L))
PROBE (userfaultfd, syscall (SYS_userfaultfd, -1L))
PROBE (open_by_handle_at, syscall (SYS_open_by_handle_at, -1L, NULL, 0L))
PROBE (process_vm_readv, syscall (SYS_process_vm_readv, 1L, NULL, 0L, NULL, 0L, 1L))
PROBE (kcmp, syscall (SYS_kcmp, (long)getpid (), (long)getpid (), -1L, 0L, 0L))
PROBE (pidfd_getfd, syscall (SYS_pidfd_getfd, -1L, 0L, 0L))
PROBE (clock_settime, syscall (SYS_clock_settime, -1L, NULL))
PROBE (init_module, syscall (SYS_init_module, NULL, 0L, NULL))
PROBE (chroot, chroot ("/nonexistent/agentbox-test"))
PROBE (personality_norandom, personality (ADDR_NO_RANDOMIZE) == -1 ? -1 : 0)
PROBE (socket_vsock, socket (40 /* AF_VSOCK */, SOCK_STREAM, 0))
PROBE (socket_alg, socket (38 /* AF_ALG */, SOCK_SEQPACKET, 0))
PROBE (socket_inet_high_bits, syscall (SYS_socket, (1L << 32) | AF_INET, (long)SOCK_DGRAM, 0L))

/* The set-id probes work on files in setid_dir (made by test_seccomp_behaviour):
   each call would succeed without the filter (root owns the files). */
static char setid_dir[] = "/tmp/agentbox-test-setid-XXXXXX";

static const char *
setid_path (const char *name)
{
  static char path[sizeof setid_dir + 32];
  snprintf (path, sizeof path, "%s/%s", setid_dir, name);
  return path;
}

static long
fresh_fd (const char *name)
{
  unlink (setid_path (name));
  return open (setid_path (name), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
}

PROBE (fchmod_suid, fchmod ((int)fresh_fd ("a"), 04755))
PROBE (fchmodat_sgid, (close ((int)fresh_fd ("b")), fchmodat (AT_FDCWD, setid_path ("b"), 02755, 0)))
PROBE (openat_create_suid, (unlink (setid_path ("c")), openat (AT_FDCWD, setid_path ("c"), O_WRONLY | O_CREAT, 04755)))
PROBE (openat_tmpfile_sgid, openat (AT_FDCWD, setid_dir, O_WRONLY | O_TMPFILE, 02755))
PROBE (mknodat_suid, (unlink (setid_path ("d")), mknodat (AT_FDCWD, setid_path ("d"), S_IFREG | 04755, 0)))
#if defined(__x86_64__)
PROBE (chmod_suid, (close ((int)fresh_fd ("e")), syscall (SYS_chmod, setid_path ("e"), 04755L)))
PROBE (open_create_sgid, (unlink (setid_path ("f")), syscall (SYS_open, setid_path ("f"), (long)(O_WRONLY | O_CREAT), 06755L)))
PROBE (creat_suid, (unlink (setid_path ("g")), syscall (SYS_creat, setid_path ("g"), 04700L)))
#endif

/* How many of the probes' files carry a set-id bit; with remove, they are
   all removed. */
static int
setid_files (bool remove)
{
  struct stat sb;
  int n = 0;

  for (const char *c = "abcdefgpq"; *c; c++)
    {
      char name[2] = { *c, 0 };
      if (lstat (setid_path (name), &sb) == 0 && (sb.st_mode & (S_ISUID | S_ISGID)))
        n++;
      if (remove)
        unlink (setid_path (name));
    }
  return n;
}

/* What must keep working: plain modes, and opens that create nothing
   whatever garbage their mode argument holds. */
static long
probe_plain_modes (void *arg AB_UNUSED)
{
  int fd = (int)fresh_fd ("p");
  if (fd < 0 || fchmod (fd, 0755) < 0 || fchmodat (AT_FDCWD, setid_path ("p"), 01777, 0) < 0)
    return -1;
  close (fd);
  fd = (int)syscall (SYS_openat, (long)AT_FDCWD, setid_path ("p"), (long)O_RDONLY, 06777L);
  if (fd < 0)
    return -1;
  close (fd);
  unlink (setid_path ("q"));
  fd = openat (AT_FDCWD, setid_path ("q"), O_WRONLY | O_CREAT | O_EXCL, 0700);
  return fd < 0 ? -1 : close (fd);
}

static long
probe_openat2 (void *arg AB_UNUSED)
{
  struct
  {
    uint64_t flags, mode, resolve;
  } how = { O_RDONLY, 0, 0 };
  return syscall (SYS_openat2, (long)AT_FDCWD, "/", &how, sizeof how);
}

/* bare: also run without the filter, to show the probe tells the filter's
   EPERM from the kernel's answer.  Not for socket families that would
   autoload a protocol module on the host. */
static const struct
{
  const char *name;
  long (*fn) (void *);
  bool bare;
} refused_probes[] = {
  { "mount", probe_mount, true },
  { "umount2", probe_umount2, true },
  { "unshare(CLONE_NEWUSER)", probe_unshare_user, true },
  { "setns", probe_setns, true },
  { "clone(CLONE_NEWNS)", probe_clone_newns, true },
  { "ptrace(PTRACE_SEIZE)", probe_ptrace, true },
  { "bpf", probe_bpf, true },
  { "keyctl", probe_keyctl, true },
  { "io_uring_setup", probe_io_uring_setup, true },
  { "perf_event_open", probe_perf_event_open, true },
  { "userfaultfd", probe_userfaultfd, true },
  { "open_by_handle_at", probe_open_by_handle_at, true },
  { "process_vm_readv", probe_process_vm_readv, true },
  { "kcmp", probe_kcmp, true },
  { "pidfd_getfd", probe_pidfd_getfd, true },
  { "clock_settime", probe_clock_settime, true },
  { "init_module", probe_init_module, true },
  { "chroot", probe_chroot, true },
  { "personality(ADDR_NO_RANDOMIZE)", probe_personality_norandom, true },
  { "fchmod(04755)", probe_fchmod_suid, true },
  { "fchmodat(02755)", probe_fchmodat_sgid, true },
  { "openat(O_CREAT, 04755)", probe_openat_create_suid, true },
  { "openat(O_TMPFILE, 02755)", probe_openat_tmpfile_sgid, true },
  { "mknodat(S_IFREG | 04755)", probe_mknodat_suid, true },
#if defined(__x86_64__)
  { "chmod(04755)", probe_chmod_suid, true },
  { "open(O_CREAT, 06755)", probe_open_create_sgid, true },
  { "creat(04700)", probe_creat_suid, true },
#endif
  { "socket(AF_VSOCK)", probe_socket_vsock, false },
  { "socket(AF_ALG)", probe_socket_alg, false },
  { "socket(AF_INET) with high bits set", probe_socket_inet_high_bits, true },
};

static long
probe_allowed_basics (void *arg AB_UNUSED)
{
  int fds[2], status;
  pid_t pid;

  /* fork (clone without CLONE_NEW*), pipes, sockets, the persona query. */
  if (pipe2 (fds, O_CLOEXEC) < 0 || personality (0xffffffff) < 0)
    return -1;
  pid = fork ();
  if (pid == 0)
    _exit (7);
  if (pid < 0 || waitpid (pid, &status, 0) < 0 || !WIFEXITED (status) || WEXITSTATUS (status) != 7)
    return -1;
  for (int af = 0; af < 4; af++)
    {
      static const int fam[] = { AF_UNIX, AF_INET, AF_INET6, AF_NETLINK };
      int s = socket (fam[af], fam[af] == AF_NETLINK ? SOCK_RAW : SOCK_DGRAM, 0);
      if (s < 0 && errno != EAFNOSUPPORT)
        return -1;
      if (s >= 0)
        close (s);
    }
  return 0;
}

#if defined(__x86_64__)
static long
probe_int80 (void *arg AB_UNUSED)
{
  long ret;
  /* getpid through the i386 ABI: another syscall table, another number. */
  __asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory");
  return ret < 0 ? (errno = (int)-ret, -1) : 0;
}

static long
probe_x32 (void *arg AB_UNUSED)
{
  return syscall (0x40000000L | 39 /* x32 getpid */);
}
#endif

static void
test_seccomp_behaviour (const struct ab_seccomp *sc)
{
  scmp_filter_ctx ctx = build_filter (sc);
  int st, setid = 0;

  ok (ctx != NULL, "libseccomp compiles the profile");
  if (ctx == NULL)
    return;
  if (mkdtemp (setid_dir) == NULL)
    abort ();
  for (size_t i = 0; i < AB_ARRAY_SIZE (refused_probes); i++)
    {
      int filtered = in_child (ctx, refused_probes[i].fn, NULL), bare;

      setid += setid_files (true);
      bare = refused_probes[i].bare ? in_child (NULL, refused_probes[i].fn, NULL) : 0;
      setid_files (true);

      if (refused_probes[i].bare && WIFEXITED (bare) && WEXITSTATUS (bare) == EPERM)
        {
          printf ("ok %d - # SKIP %s: this kernel refuses it with EPERM anyway\n", ++tap_count,
                  refused_probes[i].name);
          continue;
        }
      ok (WIFEXITED (filtered) && WEXITSTATUS (filtered) == EPERM, "%s fails with EPERM under the profile",
          refused_probes[i].name);
      if (!WIFEXITED (filtered) || WEXITSTATUS (filtered) != EPERM)
        printf ("#   wait status %d\n", filtered);
    }
  st = in_child (ctx, probe_clone3, NULL);
  ok (WIFEXITED (st) && WEXITSTATUS (st) == ENOSYS, "clone3 fails with ENOSYS, so libc falls back to clone");
  st = in_child (ctx, probe_openat2, NULL);
  ok (WIFEXITED (st) && WEXITSTATUS (st) == ENOSYS,
      "openat2 (its mode out of seccomp's reach) fails with ENOSYS, so callers fall back to openat");
  st = in_child (ctx, probe_plain_modes, NULL);
  ok (WIFEXITED (st) && WEXITSTATUS (st) == 0,
      "modes without set-id bits, sticky included, and opens that create nothing (mode argument 06777) work");
  if (!WIFEXITED (st) || WEXITSTATUS (st) != 0)
    printf ("#   wait status %d (errno %d)\n", st, WIFEXITED (st) ? WEXITSTATUS (st) : -1);
  ok (setid == 0, "no file the filtered probes touched got a set-id bit (%d did)", setid);
  setid_files (true);
  rmdir (setid_dir);
  st = in_child (ctx, probe_allowed_basics, NULL);
  ok (WIFEXITED (st) && WEXITSTATUS (st) == 0,
      "fork, pipes, the four socket families and the persona query work");
#if defined(__x86_64__)
  /* A kernel without IA32 emulation (CONFIG_IA32_EMULATION off, or
     ia32_emulation=0) answers int 0x80 with SIGSEGV before seccomp sees
     it: there is no i386 syscall table to reach at all. */
  st = in_child (NULL, probe_int80, NULL);
  if (WIFSIGNALED (st) && WTERMSIG (st) == SIGSEGV)
    printf ("ok %d - # SKIP int 0x80: this kernel has no i386 syscall ABI (SIGSEGV without a filter)\n",
            ++tap_count);
  else
    {
      st = in_child (ctx, probe_int80, NULL);
      ok (WIFSIGNALED (st) && WTERMSIG (st) == SIGSYS, "a syscall through int 0x80 (i386 ABI) kills the process");
    }
  st = in_child (ctx, probe_x32, NULL);
  ok (WIFSIGNALED (st) && WTERMSIG (st) == SIGSYS, "a syscall through the x32 ABI kills the process");
#endif
  seccomp_release (ctx);
}

/* ---- real programs under the profile ------------------------------------ */

struct program
{
  const char *name;
  const char *need; /* skip when this file is not executable */
  const char *script;
};

static long
run_script (void *arg)
{
  const char *script = arg;
  int out = open (getenv ("OUT"), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

  if (out < 0 || dup2 (out, STDOUT_FILENO) < 0 || dup2 (out, STDERR_FILENO) < 0)
    return -1;
  execl ("/bin/sh", "sh", "-ec", script, (char *)NULL);
  return -1;
}

/* The output of a failed program, as TAP comments. */
static void
show_output (const char *path)
{
  _cleanup_fclose_ FILE *f = fopen (path, "re");
  char line[512];

  while (f != NULL && fgets (line, sizeof line, f) != NULL)
    printf ("#   | %s%s", line, strchr (line, '\n') ? "" : "\n");
}

static void
test_programs (const struct ab_seccomp *sc)
{
  char dir[] = "/tmp/agentbox-test-defaults-XXXXXX";
  scmp_filter_ctx ctx = build_filter (sc);
  const struct program programs[] = {
    { "sh and coreutils", "/bin/ls",
      "cd \"$D\"; mkdir -p a/b; echo hi > a/b/f; cp a/b/f g; ln -s g h; mv h i; test \"$(cat i)\" = hi; "
      "ls -la a >/dev/null; find . -name f | grep -q f; sort < g | uniq | wc -l >/dev/null; chmod 600 g; "
      "tar -cf t.tar a; rm -rf a; tar -xf t.tar; test -f a/b/f; date >/dev/null; sleep 0.01; ps >/dev/null "
      "|| true" },
    { "python3 (threads, subprocess, sockets, tempfile)", "/usr/bin/python3",
      "/usr/bin/python3 -c \"import threading, subprocess, socket, tempfile, os, multiprocessing, asyncio;"
      "t = threading.Thread(target=lambda: None); t.start(); t.join();"
      "subprocess.run(['true'], check=True);"
      "a, b = socket.socketpair(); a.send(b'x'); assert b.recv(1) == b'x';"
      "s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(); s.close();"
      "socket.socket(socket.AF_INET6, socket.SOCK_DGRAM).close();"
      "d = tempfile.mkdtemp(dir=os.environ['D']); os.rmdir(d);"
      "p = multiprocessing.Pool(2); assert p.map(abs, [-1, -2]) == [1, 2]; p.close(); p.join();"
      "asyncio.run(asyncio.sleep(0))\"" },
    { "git", "/usr/bin/git",
      "cd \"$D\"; git init -q r; cd r; echo x > f; git add f; "
      "git -c user.name=a -c user.email=a@example.org commit -qm m; git log --oneline | grep -q m; git "
      "status >/dev/null" },
    { "gcc and make", "/usr/bin/gcc",
      "cd \"$D\"; printf '#include <stdio.h>\\nint main(void){puts(\"ok\");return 0;}\\n' > h.c; "
      "printf 'h: h.c\\n\\tgcc -O2 -o h h.c\\n' > Makefile; make -s -j2; test \"$(./h)\" = ok" },
    { "node (libuv threads, child processes)", "/usr/bin/node",
      "cd \"$D\"; /usr/bin/node -e \"const cp = require('child_process'); const fs = require('fs');"
      "if (cp.execSync('echo hi').toString() !== 'hi\\n') process.exit(1);"
      "fs.writeFile('n.txt', 'x', (e) => { if (e) process.exit(2); fs.readFile('n.txt', (e, d) => {"
      "if (e || d.toString() !== 'x') process.exit(3); }); });"
      "require('crypto').pbkdf2('a', 'b', 1000, 32, 'sha256', (e) => { if (e) process.exit(4); });\"" },
  };

  _cleanup_free_ char *out = NULL, *bin = NULL, *rm = NULL;

  if (ctx == NULL || mkdtemp (dir) == NULL)
    abort ();
  out = xasprintf ("%s/out.txt", dir);
  bin = xasprintf ("%s/h", dir);
  rm = xasprintf ("rm -rf '%s'", dir);
  setenv ("D", dir, 1);
  setenv ("OUT", out, 1);
  for (size_t i = 0; i < AB_ARRAY_SIZE (programs); i++)
    {
      int st;
      if (access (programs[i].need, X_OK) != 0)
        {
          printf ("ok %d - # SKIP %s: %s is not installed\n", ++tap_count, programs[i].name,
                  programs[i].need);
          continue;
        }
      st = in_child (ctx, run_script, (void *)programs[i].script);
      ok (WIFEXITED (st) && WEXITSTATUS (st) == 0, "%s: runs under the profile", programs[i].name);
      if (!WIFEXITED (st) || WEXITSTATUS (st) != 0)
        {
          printf ("#   wait status %d\n", st);
          show_output (out);
        }
    }
  /* An effect checked from outside the filtered processes. */
  ok (access (programs[3].need, X_OK) != 0 || access (bin, X_OK) == 0,
      "the binary built under the profile is on disk");
  seccomp_release (ctx);
  ok (system (rm) == 0 && access (dir, F_OK) != 0, "the scratch directory is removed");
}

/* ---- helper modes for the schema test ----------------------------------- */

static int
print_profile (int argc, char **argv)
{
  struct ab_default_opts o = { 0 };
  size_t len;
  _cleanup_free_ char *doc = NULL;

  if (argc == 5 && strcmp (argv[2], "--rootless") == 0)
    {
      o.rootless = true;
      o.uid = (uid_t)strtoul (argv[3], NULL, 10);
      o.gid = (gid_t)strtoul (argv[4], NULL, 10);
    }
  else if (argc != 2)
    return 2;
  doc = ab_spec_default_json (&o, &len);
  return ab_write_all (STDOUT_FILENO, doc, len) == (ssize_t)len ? 0 : 1;
}

static int
load_file (const char *path)
{
  _cleanup_free_ char *buf = NULL;
  ab_error_t err = { 0 };
  struct ab_spec *s;
  size_t len;
  int rc = 0;

  if (ab_read_file_at (AT_FDCWD, path, AB_CONFIG_MAX_BYTES, &buf, &len, &err) < 0)
    {
      fprintf (stderr, "%s\n", err.msg);
      return 1;
    }
  s = ab_spec_parse (buf, len, &err);
  if (s == NULL || ab_spec_validate (s, &err) < 0)
    {
      fprintf (stderr, "%s\n", err.msg);
      ab_spec_free (s);
      return 1;
    }
  for (size_t i = 0; i < s->warnings.n; i++, rc = 1)
    fprintf (stderr, "warning: %s\n", s->warnings.v[i]);
  for (size_t i = 0; i < s->unknown.n; i++, rc = 1)
    fprintf (stderr, "unknown property: %s\n", s->unknown.v[i]);
  ab_spec_free (s);
  return rc;
}

int
main (int argc, char **argv)
{
  struct ab_default_opts rootless = { .rootless = true, .uid = 1234, .gid = 5678 };
  static const char *const args[] = { "python3", "-c", "print(1)", NULL };
  struct ab_spec *s, *rl;

  if (argc >= 2 && strcmp (argv[1], "--print") == 0)
    return print_profile (argc, argv);
  if (argc == 3 && strcmp (argv[1], "--load") == 0)
    return load_file (argv[2]);

  rootless.args = args;
  test_bytes ();
  s = parse_default (NULL);
  rl = parse_default (&rootless);
  ok (s && s->warnings.n == 0 && s->unknown.n == 0 && rl && rl->warnings.n == 0 && rl->unknown.n == 0,
      "our parser reads both profiles without a warning or an unknown property");
  if (s == NULL || rl == NULL)
    return tap_done ();
  test_process (s);
  test_filesystem (s);
  test_linux (s, rl);
  ok (s->linux_->seccomp != NULL, "the profile has a seccomp section");
  if (s->linux_->seccomp != NULL)
    {
      test_seccomp_profile (s->linux_->seccomp);
      test_seccomp_behaviour (s->linux_->seccomp);
      test_programs (s->linux_->seccomp);
    }
  ab_spec_free (s);
  ab_spec_free (rl);
  return tap_done ();
}
