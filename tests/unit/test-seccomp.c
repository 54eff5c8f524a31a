/* linux.seccomp: every test compiles a profile in this process, forks a child
   that installs it and then acts, and judges the outcome from here: the exit
   status or the signal the kernel killed the child with (waitid), a file the
   child could not create, or what a ptrace stop shows. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/seccomp.h"
#include "runtime/sync.h"
#include "tests/unit/tap.h"

/* The probe syscall: getppid cannot fail and has no effect, so any error it
   returns comes from the filter; the filter sees whatever we pass in the
   argument registers even though getppid reads none. */
#define PROBE_ERRNO EXDEV
#define INSTALL_FAILED 125
#define AB_SECCOMP_MAX_INSNS_TEST 4096

#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1 /* si_code of a SIGSYS raised by SECCOMP_RET_TRAP */
#endif

/* ---- building profiles by hand (the parser is written elsewhere) -------- */

static struct ab_seccomp *
profile_new (int default_action)
{
  struct ab_seccomp *s = xzalloc (sizeof *s);

  s->default_action = default_action;
  return s;
}

/* Append a syscalls[] entry; `names` is space-separated.  The pointer is
   valid until the next profile_add. */
static struct ab_seccomp_rule *
profile_add (struct ab_seccomp *s, int action, const char *names)
{
  _cleanup_free_ char *copy = xstrdup (names);
  struct ab_seccomp_rule *r;
  char *save = NULL, *tok;

  s->syscalls = xreallocarray (s->syscalls, s->n_syscalls + 1, sizeof *s->syscalls);
  r = &s->syscalls[s->n_syscalls++];
  memset (r, 0, sizeof *r);
  r->action = action;
  for (tok = strtok_r (copy, " ", &save); tok != NULL; tok = strtok_r (NULL, " ", &save))
    ab_strv_push (&r->names, tok);
  return r;
}

static struct ab_seccomp_rule *
profile_add_errno (struct ab_seccomp *s, const char *names, uint32_t e)
{
  struct ab_seccomp_rule *r = profile_add (s, AB_SCMP_ACT_ERRNO, names);

  r->errno_ret_set = true;
  r->errno_ret = e;
  return r;
}

static void
rule_arg (struct ab_seccomp_rule *r, uint32_t index, int op, uint64_t value, uint64_t value_two)
{
  r->args = xreallocarray (r->args, r->n_args + 1, sizeof *r->args);
  r->args[r->n_args++]
      = (struct ab_seccomp_arg){ .index = index, .op = op, .value = value, .value_two = value_two };
}

static void
profile_free (struct ab_seccomp *s)
{
  size_t i;

  for (i = 0; i < s->n_syscalls; i++)
    {
      ab_strv_free (&s->syscalls[i].names);
      free (s->syscalls[i].args);
    }
  free (s->syscalls);
  ab_strv_free (&s->architectures);
  free (s->listener_path);
  free (s);
}

/* Compile, or print the error and return false. */
static bool
compile (const struct ab_seccomp *s, struct ab_seccomp_prog *p)
{
  ab_error_t err = { 0 };

  if (ab_seccomp_compile (s, p, &err) == 0)
    return true;
  printf ("# compile failed: %s\n", err.msg);
  return false;
}

/* The message of a compile that must fail (NULL if it succeeded). */
static const char *
compile_error (const struct ab_seccomp *s)
{
  static ab_error_t err;
  struct ab_seccomp_prog p;

  memset (&err, 0, sizeof err);
  if (ab_seccomp_compile (s, &p, &err) == 0)
    {
      ab_seccomp_prog_free (&p);
      return NULL;
    }
  if (p.insns != NULL || p.skipped.n != 0)
    return "compile failed but left a program behind";
  return err.msg;
}

/* ---- running a filtered child ------------------------------------------ */

static const struct ab_seccomp_prog *child_prog;

/* Children leave with the bare exit_group syscall: libc's _exit is wrapped by
   the sanitizers, whose exit-time leak check needs syscalls (clone, ptrace)
   that the filters under test deny.  Kept from being seen as noreturn (noipa):
   ASan precedes calls to noreturn functions with a sigaltstack(2) call. */
static void __attribute__ ((noipa)) child_exit (int status)
{
  for (;;)
    syscall (SYS_exit_group, status);
}

/* In the child: no core files (the default core_pattern writes into the
   build tree), no_new_privs as the runtime sets it, then the filter. */
static void
enter_filter (void)
{
  struct rlimit no_core = { 0, 0 };
  ab_error_t err;

  setrlimit (RLIMIT_CORE, &no_core);
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    child_exit (INSTALL_FAILED);
  if (ab_seccomp_install (child_prog, &err) < 0)
    child_exit (INSTALL_FAILED);
}

static long
probe (uint64_t a0, uint64_t a1)
{
  return syscall (SYS_getppid, a0, a1, 0, 0, 0, 0);
}

/* Fork, run fn in the child (its return value is the exit status), and wait
   for the kernel's verdict on it. */
static siginfo_t
run_child (const struct ab_seccomp_prog *p, int (*fn) (void *), void *arg)
{
  siginfo_t si;
  pid_t pid;

  memset (&si, 0, sizeof si);
  child_prog = p;
  fflush (stdout);
  pid = fork ();
  if (pid < 0)
    {
      si.si_code = -1;
      return si;
    }
  if (pid == 0)
    child_exit (fn (arg));
  if (waitid (P_PID, (id_t)pid, &si, WEXITED) < 0)
    si.si_code = -1;
  return si;
}

static bool
exited_with (siginfo_t si, int code)
{
  if (si.si_code == CLD_EXITED && si.si_status == code)
    return true;
  printf ("#   child: si_code %d si_status %d, expected exit %d\n", si.si_code, si.si_status, code);
  return false;
}

static bool
killed_by (siginfo_t si, int sig)
{
  if ((si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED) && si.si_status == sig)
    return true;
  printf ("#   child: si_code %d si_status %d, expected death by signal %d\n", si.si_code, si.si_status, sig);
  return false;
}

/* Child bodies. */

static int
child_probe_errno (void *arg AB_UNUSED)
{
  enter_filter ();
  return probe (0, 0) < 0 ? errno : 0;
}

static int
child_probe_then_exit_7 (void *arg AB_UNUSED)
{
  enter_filter ();
  probe (0, 0);
  return 7;
}

static int
child_exit_7 (void *arg AB_UNUSED)
{
  enter_filter ();
  return 7;
}

static int
child_mkdir (void *arg)
{
  enter_filter ();
  return syscall (SYS_mkdirat, AT_FDCWD, (const char *)arg, 0700) < 0 ? errno : 0;
}

static int
child_getppid_is_parent (void *arg)
{
  pid_t parent = *(pid_t *)arg;

  enter_filter ();
  return syscall (SYS_getppid) == parent ? 0 : 1;
}

/* Probe with each argument pair; bit i of the result: call i was filtered. */
struct probes
{
  size_t n;
  uint64_t a0[7];
  uint64_t a1[7];
};

static int
child_probe_mask (void *arg)
{
  const struct probes *pr = arg;
  int mask = 0;
  size_t i;

  enter_filter ();
  for (i = 0; i < pr->n; i++)
    if (probe (pr->a0[i], pr->a1[i]) < 0 && errno == PROBE_ERRNO)
      mask |= 1 << i;
  return mask;
}

/* ---- actions ------------------------------------------------------------ */

static void
test_errno (void)
{
  char dir[] = "/tmp/ab-seccomp-XXXXXX", path[64];
  struct ab_seccomp_prog p;
  struct ab_seccomp *s;
  struct stat st;
  siginfo_t si;

  if (mkdtemp (dir) == NULL)
    {
      ok (0, "mkdtemp: %s", strerror (errno));
      return;
    }
  snprintf (path, sizeof path, "%s/made", dir);

  s = profile_new (AB_SCMP_ACT_ALLOW);
  profile_add (s, AB_SCMP_ACT_ERRNO, "mkdir mkdirat");
  if (compile (s, &p))
    {
      si = run_child (&p, child_mkdir, path);
      ok (exited_with (si, EPERM), "SCMP_ACT_ERRNO without errnoRet fails mkdirat with EPERM");
      ok (stat (path, &st) < 0 && errno == ENOENT, "the denied mkdirat created nothing on the host side");
      ab_seccomp_prog_free (&p);
    }
  profile_free (s);

  s = profile_new (AB_SCMP_ACT_ALLOW);
  profile_add_errno (s, "mkdir mkdirat", EROFS);
  if (compile (s, &p))
    {
      si = run_child (&p, child_mkdir, path);
      ok (exited_with (si, EROFS), "SCMP_ACT_ERRNO with errnoRet 30 fails mkdirat with EROFS");
      ab_seccomp_prog_free (&p);
    }
  profile_free (s);

  /* The same profile without the rule does create the directory: the test
     above can fail. */
  s = profile_new (AB_SCMP_ACT_ALLOW);
  profile_add_errno (s, "getppid", PROBE_ERRNO);
  if (compile (s, &p))
    {
      si = run_child (&p, child_mkdir, path);
      ok (exited_with (si, 0) && stat (path, &st) == 0,
          "an unfiltered mkdirat under a filter does create the "
          "directory");
      ab_seccomp_prog_free (&p);
    }
  profile_free (s);
  rmdir (path);
  rmdir (dir);
}

static void
test_default_errno (void)
{
  struct ab_seccomp_prog p;
  struct ab_seccomp *s;

  /* An allowlist: everything but exit_group fails, and the child still
     manages to exit with its own status. */
  s = profile_new (AB_SCMP_ACT_ERRNO);
  profile_add (s, AB_SCMP_ACT_ALLOW, "exit_group");
  if (compile (s, &p))
    {
      ok (exited_with (run_child (&p, child_probe_errno, NULL), EPERM),
          "defaultAction SCMP_ACT_ERRNO without defaultErrnoRet fails other syscalls with EPERM");
      ok (exited_with (run_child (&p, child_probe_then_exit_7, NULL), 7),
          "defaultAction SCMP_ACT_ERRNO allowing only exit_group still lets the child exit with its status");
      ab_seccomp_prog_free (&p);
    }
  profile_free (s);

  s = profile_new (AB_SCMP_ACT_ERRNO);
  s->default_errno_ret_set = true;
  s->default_errno_ret = ENOTBLK;
  profile_add (s, AB_SCMP_ACT_ALLOW, "exit_group");
  if (compile (s, &p))
    {
      ok (exited_with (run_child (&p, child_probe_errno, NULL), ENOTBLK),
          "defaultErrnoRet 15 makes the default action return ENOTBLK");
      ab_seccomp_prog_free (&p);
    }
  profile_free (s);

  s = profile_new (AB_SCMP_ACT_KILL_PROCESS);
  profile_add (s, AB_SCMP_ACT_ALLOW, "exit_group");
  if (compile (s, &p))
    {
      ok (exited_with (run_child (&p, child_exit_7, NULL), 7),
          "defaultAction SCMP_ACT_KILL_PROCESS allowing exit_group: a child that only exits is not killed");
      ok (killed_by (run_child (&p, child_probe_then_exit_7, NULL), SIGSYS),
          "defaultAction SCMP_ACT_KILL_PROCESS: any other syscall kills the child with SIGSYS");
      ab_seccomp_prog_free (&p);
    }
  profile_free (s);
}

/* A second thread probes once the main thread has installed the filter. */
#define THREAD_SURVIVED 40
#define THREAD_KILLED 41

static atomic_int thread_returned;

static void *
thread_probe (void *arg)
{
  int fd = *(int *)arg;
  char c;

  if (read (fd, &c, 1) != 1)
    return NULL;
  probe (0, 0);
  atomic_store (&thread_returned, 1);
  return NULL;
}

/* the tasks of this process */
static int
task_count (void)
{
  DIR *d = opendir ("/proc/self/task");
  int n = 0;
  if (d == NULL)
    return -1;
  for (struct dirent *e; (e = readdir (d)) != NULL;)
    n += e->d_name[0] != '.';
  closedir (d);
  return n;
}

/* The thread starts before the install (arg != NULL: it is filtered only if
   TSYNC brings it in) or after it (arg == NULL: it inherits the filter). */
static int
child_thread_probe (void *arg)
{
  bool before = arg != NULL;
  pthread_t t;
  int fds[2];

  if (pipe (fds) < 0)
    return 3;
  if (before && pthread_create (&t, NULL, thread_probe, &fds[0]) != 0)
    return 3;
  enter_filter ();
  if (!before && pthread_create (&t, NULL, thread_probe, &fds[0]) != 0)
    return 3;
  if (write (fds[1], "x", 1) != 1)
    return 4;
  /* A thread killed by the filter never returns: wait for its task to go
     (glibc's pthread_join would see the tid the kernel clears, musl's waits
     for the thread's own wake-up, which a killed thread never sends). */
  (void)t;
  for (int i = 0; i < 10000 && task_count () > 1; i++)
    usleep (1000);
  return atomic_load (&thread_returned) ? THREAD_SURVIVED : THREAD_KILLED;
}

#define STARTED_BEFORE_INSTALL ((void *)1)
#define STARTED_AFTER_INSTALL NULL

static int child_trap_handler_sets_status (void *arg AB_UNUSED);

static void
test_kill (void)
{
  struct ab_seccomp_prog p;
  struct ab_seccomp *s;

  s = profile_new (AB_SCMP_ACT_ALLOW);
  profile_add (s, AB_SCMP_ACT_KILL_PROCESS, "getppid");
  if (compile (s, &p))
    {
      ok (killed_by (run_child (&p, child_probe_then_exit_7, NULL), SIGSYS),
          "SCMP_ACT_KILL_PROCESS: the child dies by SIGSYS");
      ok (killed_by (run_child (&p, child_thread_probe, STARTED_AFTER_INSTALL), SIGSYS),
          "SCMP_ACT_KILL_PROCESS in a second thread kills the whole process");
      ab_seccomp_prog_free (&p);
    }
  profile_free (s);

  s = profile_new (AB_SCMP_ACT_ALLOW);
  profile_add (s, AB_SCMP_ACT_KILL, "getppid");
  if (compile (s, &p))
    {
      ok (killed_by (run_child (&p, child_probe_then_exit_7, NULL), SIGSYS),
          "SCMP_ACT_KILL (thread) in a single-thread child: the child dies by SIGSYS");
      ab_seccomp_prog_free (&p);
    }
  profile_free (s);

  s = profile_new (AB_SCMP_ACT_ALLOW);
  profile_add (s, AB_SCMP_ACT_KILL_THREAD, "getppid");
  if (compile (s, &p))
    {
      ok (exited_with (run_child (&p, child_thread_probe, STARTED_AFTER_INSTALL), THREAD_KILLED),
          "SCMP_ACT_KILL_THREAD in a second thread kills only that thread; the process exits normally");
      ab_seccomp_prog_free (&p);
    }
  profile_free (s);

  s = profile_new (AB_SCMP_ACT_ALLOW);
  profile_add (s, AB_SCMP_ACT_TRAP, "getppid");
  if (compile (s, &p))
    {
      ok (killed_by (run_child (&p, child_probe_then_exit_7, NULL), SIGSYS),
          "SCMP_ACT_TRAP without a handler: SIGSYS is delivered and kills the child");
      ok (exited_with (run_child (&p, child_trap_handler_sets_status, NULL), 42),
          "SCMP_ACT_TRAP with a handler: SIGSYS arrives with si_code SYS_SECCOMP and si_syscall getppid");
      ab_seccomp_prog_free (&p);
    }
  profile_free (s);
}

static void
trap_handler (int sig, siginfo_t *info, void *ctx AB_UNUSED)
{
  child_exit (sig == SIGSYS && info->si_code == SYS_SECCOMP && info->si_syscall == SYS_getppid ? 42 : 41);
}

static int
child_trap_handler_sets_status (void *arg AB_UNUSED)
{
  struct sigaction sa;

  memset (&sa, 0, sizeof sa);
  sa.sa_sigaction = trap_handler;
  sa.sa_flags = SA_SIGINFO;
  sigaction (SIGSYS, &sa, NULL);
  enter_filter ();
  probe (0, 0);
  return 7;
}

static void
test_log_allow (void)
{
  struct ab_seccomp_prog p;
  struct ab_seccomp *s;
  pid_t self = getpid ();

  s = profile_new (AB_SCMP_ACT_ALLOW);
  profile_add (s, AB_SCMP_ACT_LOG, "getppid");
  if (compile (s, &p))
    {
      ok (exited_with (run_child (&p, child_getppid_is_parent, &self), 0),
          "SCMP_ACT_LOG lets getppid through with its real result");
      ab_seccomp_prog_free (&p);
    }
  profile_free (s);

  s = profile_new (AB_SCMP_ACT_KILL_PROCESS);
  profile_add (s, AB_SCMP_ACT_ALLOW, "getppid exit_group");
  if (compile (s, &p))
    {
      ok (exited_with (run_child (&p, child_getppid_is_parent, &self), 0),
          "SCMP_ACT_ALLOW under defaultAction KILL_PROCESS lets getppid through with its real result");
      ab_seccomp_prog_free (&p);
    }
  profile_free (s);
}

static int
child_trace_me (void *arg AB_UNUSED)
{
  if (ptrace (PTRACE_TRACEME, 0, NULL, NULL) < 0)
    return 3;
  raise (SIGSTOP);
  enter_filter ();
  return probe (0, 0) < 0 ? errno : 0;
}

/* Wait for the next ptrace stop of pid that is ours (SIGSTOP, SIGTRAP, an
   event or a syscall stop); other signals are re-injected, resuming with
   `resume` (PTRACE_CONT or PTRACE_SYSCALL).  Returns the wait status. */
static int
wait_stop (pid_t pid, int resume)
{
  int status;

  for (;;)
    {
      if (waitpid (pid, &status, 0) < 0)
        return -1;
      if (!WIFSTOPPED (status))
        return status;
      if (WSTOPSIG (status) == SIGTRAP || (status >> 8) == (SIGTRAP | 0x80) || (status >> 16) != 0)
        return status;
      if (WSTOPSIG (status) == SIGSTOP)
        return status;
      ptrace (resume, pid, NULL, (void *)(long)WSTOPSIG (status));
    }
}

static void
test_trace (void)
{
  struct __ptrace_syscall_info info;
  struct ab_seccomp_prog p;
  struct ab_seccomp_rule *r;
  struct ab_seccomp *s;
  int status, seen = 0;
  pid_t pid;

  /* Without a tracer, the kernel fails the syscall with ENOSYS. */
  s = profile_new (AB_SCMP_ACT_ALLOW);
  profile_add (s, AB_SCMP_ACT_TRACE, "getppid");
  if (compile (s, &p))
    {
      ok (exited_with (run_child (&p, child_probe_errno, NULL), ENOSYS),
          "SCMP_ACT_TRACE without a tracer fails the syscall with ENOSYS");
      ab_seccomp_prog_free (&p);
    }
  profile_free (s);

  /* With a tracer (us), the tracer gets a PTRACE_EVENT_SECCOMP stop carrying
     errnoRet as the message. */
  s = profile_new (AB_SCMP_ACT_ALLOW);
  r = profile_add (s, AB_SCMP_ACT_TRACE, "getppid");
  r->errno_ret_set = true;
  r->errno_ret = 777;
  if (!compile (s, &p))
    {
      profile_free (s);
      return;
    }
  child_prog = &p;
  fflush (stdout);
  pid = fork ();
  if (pid == 0)
    child_exit (child_trace_me (NULL));
  status = wait_stop (pid, PTRACE_CONT);
  if (pid > 0 && WIFSTOPPED (status)
      && ptrace (PTRACE_SETOPTIONS, pid, NULL, (void *)(long)(PTRACE_O_TRACESECCOMP | PTRACE_O_EXITKILL))
             == 0)
    {
      ptrace (PTRACE_CONT, pid, NULL, NULL);
      while ((status = wait_stop (pid, PTRACE_CONT)) != -1 && WIFSTOPPED (status))
        {
          if ((status >> 8) == (SIGTRAP | (PTRACE_EVENT_SECCOMP << 8)))
            {
              unsigned long msg = 0;

              memset (&info, 0, sizeof info);
              ptrace (PTRACE_GETEVENTMSG, pid, NULL, &msg);
              ptrace (PTRACE_GET_SYSCALL_INFO, pid, (void *)sizeof info, &info);
              if (msg == 777 && info.op == PTRACE_SYSCALL_INFO_SECCOMP && info.seccomp.nr == SYS_getppid
                  && info.seccomp.ret_data == 777)
                seen++;
              else
                printf ("#   seccomp stop: msg %lu op %u nr %llu\n", msg, info.op,
                        (unsigned long long)info.seccomp.nr);
            }
          ptrace (PTRACE_CONT, pid, NULL, NULL);
        }
    }
  else if (pid > 0)
    {
      kill (pid, SIGKILL);
      waitpid (pid, &status, 0);
    }
  ok (seen == 1 && WIFEXITED (status) && WEXITSTATUS (status) == 0,
      "SCMP_ACT_TRACE with errnoRet 777: the tracer stops at getppid with message 777, then the call "
      "proceeds");
  ab_seccomp_prog_free (&p);
  profile_free (s);
}

/* ---- argument comparisons ----------------------------------------------- */

struct op_case
{
  const char *what;
  int op;
  uint64_t value, value_two;
  struct probes probes;
  int expect; /* bit i: probe i is filtered */
};

static void
test_operators (void)
{
  static const struct op_case cases[] = {
    { "SCMP_CMP_NE 5: 4 and 6 filtered, 5 not", AB_SCMP_CMP_NE, 5, 0, { 3, { 4, 5, 6 } }, 0x5 },
    { "SCMP_CMP_LT 10: 9 filtered, 10 and 11 not", AB_SCMP_CMP_LT, 10, 0, { 3, { 9, 10, 11 } }, 0x1 },
    { "SCMP_CMP_LE 10: 9 and 10 filtered, 11 not", AB_SCMP_CMP_LE, 10, 0, { 3, { 9, 10, 11 } }, 0x3 },
    { "SCMP_CMP_EQ 0x100000001 compares all 64 bits: 1 and 0x200000001 pass",
      AB_SCMP_CMP_EQ,
      0x100000001ULL,
      0,
      { 3, { 0x100000001ULL, 1, 0x200000001ULL } },
      0x1 },
    { "SCMP_CMP_GE 10: 10 and 11 filtered, 9 not", AB_SCMP_CMP_GE, 10, 0, { 3, { 9, 10, 11 } }, 0x6 },
    { "SCMP_CMP_GT 10: 11 and 2^63 filtered, 10 not (unsigned)",
      AB_SCMP_CMP_GT,
      10,
      0,
      { 3, { 10, 11, 1ULL << 63 } },
      0x6 },
    { "SCMP_CMP_MASKED_EQ mask 0xf0 value 0x30: 0x35 and 0x130 filtered, 0x45 and 0x03 not",
      AB_SCMP_CMP_MASKED_EQ,
      0xf0,
      0x30,
      { 4, { 0x35, 0x45, 0x130, 0x03 } },
      0x5 },
  };
  struct ab_seccomp_prog p;
  size_t i;

  for (i = 0; i < AB_ARRAY_SIZE (cases); i++)
    {
      struct ab_seccomp *s = profile_new (AB_SCMP_ACT_ALLOW);
      siginfo_t si;

      rule_arg (profile_add_errno (s, "getppid", PROBE_ERRNO), 0, cases[i].op, cases[i].value,
                cases[i].value_two);
      if (compile (s, &p))
        {
          si = run_child (&p, child_probe_mask, (void *)&cases[i].probes);
          ok (exited_with (si, cases[i].expect), "%s", cases[i].what);
          ab_seccomp_prog_free (&p);
        }
      profile_free (s);
    }
}

static void
test_arg_combinations (void)
{
  struct ab_seccomp_prog p;
  struct ab_seccomp_rule *r;
  struct ab_seccomp *s;

  /* Distinct indexes: AND. */
  s = profile_new (AB_SCMP_ACT_ALLOW);
  r = profile_add_errno (s, "getppid", PROBE_ERRNO);
  rule_arg (r, 0, AB_SCMP_CMP_EQ, 1, 0);
  rule_arg (r, 1, AB_SCMP_CMP_EQ, 2, 0);
  if (compile (s, &p))
    {
      struct probes pr = { 3, { 1, 1, 0 }, { 2, 3, 2 } };

      ok (exited_with (run_child (&p, child_probe_mask, &pr), 0x1),
          "args on distinct indexes form one rule: (1,2) filtered, (1,3) and (0,2) not");
      ab_seccomp_prog_free (&p);
    }
  profile_free (s);

  /* The same index twice: each condition is its own rule, OR. */
  s = profile_new (AB_SCMP_ACT_ALLOW);
  r = profile_add_errno (s, "getppid", PROBE_ERRNO);
  rule_arg (r, 0, AB_SCMP_CMP_EQ, 1, 0);
  rule_arg (r, 0, AB_SCMP_CMP_EQ, 2, 0);
  if (compile (s, &p))
    {
      struct probes pr = { 3, { 1, 2, 3 } };

      ok (exited_with (run_child (&p, child_probe_mask, &pr), 0x3),
          "args sharing an index are OR-ed as separate rules: 1 and 2 filtered, 3 not");
      ab_seccomp_prog_free (&p);
    }
  profile_free (s);

  /* As in runc, once an index repeats, every condition becomes its own rule,
     including the one on another index. */
  s = profile_new (AB_SCMP_ACT_ALLOW);
  r = profile_add_errno (s, "getppid", PROBE_ERRNO);
  rule_arg (r, 0, AB_SCMP_CMP_EQ, 1, 0);
  rule_arg (r, 0, AB_SCMP_CMP_EQ, 2, 0);
  rule_arg (r, 1, AB_SCMP_CMP_EQ, 9, 0);
  if (compile (s, &p))
    {
      struct probes pr = { 3, { 1, 5, 5 }, { 0, 9, 0 } };

      ok (exited_with (run_child (&p, child_probe_mask, &pr), 0x3),
          "with a repeated index, a condition on another index is OR-ed too (runc semantics)");
      ab_seccomp_prog_free (&p);
    }
  profile_free (s);
}

/* ---- names, architectures, refusals ------------------------------------ */

static void
test_names (void)
{
  struct ab_seccomp_prog p, base;
  struct ab_seccomp *s;

  s = profile_new (AB_SCMP_ACT_ALLOW);
  profile_add_errno (s, "no_such_syscall_xyz getppid no_such_syscall_xyz", PROBE_ERRNO);
  if (compile (s, &p))
    {
      ok (p.skipped.n == 1 && strcmp (p.skipped.v[0], "no_such_syscall_xyz") == 0,
          "a syscall name libseccomp does not know is skipped and listed once in prog.skipped");
      ok (exited_with (run_child (&p, child_probe_errno, NULL), PROBE_ERRNO),
          "the known names of the same entry are still filtered");
      ab_seccomp_prog_free (&p);
    }
  profile_free (s);

  /* A rule that repeats the default action is dropped (libseccomp would
     refuse it): the program is the one without it. */
  s = profile_new (AB_SCMP_ACT_ERRNO);
  profile_add (s, AB_SCMP_ACT_ALLOW, "exit_group");
  if (compile (s, &base))
    {
      profile_add (s, AB_SCMP_ACT_ERRNO, "getppid");
      if (compile (s, &p))
        {
          ok (p.len == base.len && memcmp (p.insns, base.insns, p.len * sizeof *p.insns) == 0,
              "a rule whose action equals defaultAction (ERRNO/EPERM) is skipped: same program as without "
              "it");
          ab_seccomp_prog_free (&p);
        }
      profile_add_errno (s, "getpid", EROFS);
      if (compile (s, &p))
        {
          ok (p.len > base.len,
              "ERRNO with another errnoRet than the default's is a different action and is kept");
          ab_seccomp_prog_free (&p);
        }
      ab_seccomp_prog_free (&base);
    }
  profile_free (s);
}

static void
test_architectures (void)
{
  struct ab_seccomp_prog p, native;
  struct ab_seccomp *s;

  s = profile_new (AB_SCMP_ACT_ALLOW);
  ab_strv_push (&s->architectures, "SCMP_ARCH_X86_64");
  ab_strv_push (&s->architectures, "SCMP_ARCH_VAX");
  is_str (compile_error (s), "linux.seccomp.architectures[1]: unknown architecture `SCMP_ARCH_VAX`",
          "an unknown architecture is an error naming its JSON path");
  profile_free (s);

  s = profile_new (AB_SCMP_ACT_ALLOW);
  profile_add_errno (s, "getppid", PROBE_ERRNO);
  if (compile (s, &native))
    {
      ab_strv_push (&s->architectures, "SCMP_ARCH_X86_64");
      ab_strv_push (&s->architectures, "SCMP_ARCH_X86");
      ab_strv_push (&s->architectures, "SCMP_ARCH_X32");
      ab_strv_push (&s->architectures, "SCMP_ARCH_AARCH64");
      if (compile (s, &p))
        {
          ok (p.len > native.len,
              "listing the native architecture again is accepted, and more architectures "
              "give a larger program (%u > %u instructions)",
              p.len, native.len);
          ab_seccomp_prog_free (&p);
        }
      ab_seccomp_prog_free (&native);
    }
  profile_free (s);
}

#if defined(__x86_64__)
/* getppid through the i386 ABI (int $0x80, syscall 64). */
static long
ia32_getppid (void)
{
  long r;

  __asm__ volatile("int $0x80" : "=a"(r) : "a"(64L) : "memory", "r8", "r9", "r10", "r11");
  return r;
}

static int
child_ia32 (void *arg)
{
  if (arg != NULL)
    return ia32_getppid () == getppid () ? 0 : 1;
  enter_filter ();
  return ia32_getppid () == -PROBE_ERRNO ? PROBE_ERRNO : 0;
}

static void
test_ia32 (void)
{
  struct ab_seccomp_prog p;
  struct ab_seccomp *s;

  /* Without ia32 emulation the kernel refuses int $0x80 altogether. */
  s = profile_new (AB_SCMP_ACT_ALLOW);
  profile_add_errno (s, "getppid", PROBE_ERRNO);
  if (!compile (s, &p))
    {
      profile_free (s);
      return;
    }
  if (!exited_with (run_child (&p, child_ia32, (void *)1), 0))
    {
      printf ("ok %d # SKIP the kernel runs no i386 binaries (ia32 emulation off)\n", ++tap_count);
      printf ("ok %d # SKIP the kernel runs no i386 binaries (ia32 emulation off)\n", ++tap_count);
      ab_seccomp_prog_free (&p);
      profile_free (s);
      return;
    }
  ok (killed_by (run_child (&p, child_ia32, NULL), SIGSYS),
      "an int $0x80 syscall when SCMP_ARCH_X86 is not listed kills the process (bad architecture)");
  ab_seccomp_prog_free (&p);

  ab_strv_push (&s->architectures, "SCMP_ARCH_X86");
  if (compile (s, &p))
    {
      ok (exited_with (run_child (&p, child_ia32, NULL), PROBE_ERRNO),
          "with SCMP_ARCH_X86 listed, the rule applies to the i386 getppid too");
      ab_seccomp_prog_free (&p);
    }
  profile_free (s);
}
#endif

static void
test_refusals (void)
{
  struct ab_seccomp *s;
  struct ab_seccomp_rule *r;

  s = profile_new (AB_SCMP_ACT_NOTIFY);
  s->listener_path = xstrdup ("/run/agent.sock");
  is_str (compile_error (s), "linux.seccomp.defaultAction: SCMP_ACT_NOTIFY cannot be the default action",
          "defaultAction SCMP_ACT_NOTIFY is refused (the handover itself would wait for the agent)");
  profile_free (s);

  s = profile_new (AB_SCMP_ACT_ERRNO);
  r = profile_add (s, AB_SCMP_ACT_ALLOW, "getppid");
  r->errno_ret_set = true;
  is_str (
      compile_error (s),
      "linux.seccomp.syscalls[0].errnoRet: SCMP_ACT_ALLOW does not take an errno (only SCMP_ACT_ERRNO and "
      "SCMP_ACT_TRACE do)",
      "errnoRet on an action without an errno is an error, as the spec requires");
  profile_free (s);

  s = profile_new (AB_SCMP_ACT_KILL_PROCESS);
  s->default_errno_ret_set = true;
  is_str (
      compile_error (s),
      "linux.seccomp.defaultErrnoRet: SCMP_ACT_KILL_PROCESS does not take an errno (only SCMP_ACT_ERRNO and "
      "SCMP_ACT_TRACE do)",
      "defaultErrnoRet with defaultAction KILL_PROCESS is an error");
  profile_free (s);

  s = profile_new (AB_SCMP_ACT_ALLOW);
  profile_add_errno (s, "getppid", 5000);
  is_str (compile_error (s), "linux.seccomp.syscalls[0].errnoRet: errno 5000 is out of range (0..4095)",
          "an errnoRet the kernel would clamp is refused");
  profile_free (s);

  s = profile_new (AB_SCMP_ACT_ALLOW);
  profile_add (s, AB_SCMP_ACT_ERRNO, "getppid");
  rule_arg (profile_add (s, AB_SCMP_ACT_ERRNO, "getpid"), 6, AB_SCMP_CMP_EQ, 0, 0);
  is_str (compile_error (s), "linux.seccomp.syscalls[1].args[0].index: 6 is out of range (0..5)",
          "an argument index past 5 is an error naming its path");
  profile_free (s);

  s = profile_new (AB_SCMP_ACT_ALLOW);
  rule_arg (profile_add (s, AB_SCMP_ACT_ALLOW, "no_such_syscall_xyz"), 7, AB_SCMP_CMP_EQ, 0, 0);
  is_str (compile_error (s), "linux.seccomp.syscalls[0].args[0].index: 7 is out of range (0..5)",
          "arguments are checked even in an entry that is skipped (default action, unknown name)");
  profile_free (s);

  s = profile_new (AB_SCMP_ACT_ALLOW);
  profile_add (s, AB_SCMP_ACT_ERRNO, "");
  is_str (compile_error (s), "linux.seccomp.syscalls[0].names: must contain at least one syscall name",
          "an entry without names is an error");
  profile_free (s);

  s = profile_new (AB_SCMP_ACT_ALLOW);
  r = profile_add (s, AB_SCMP_ACT_ERRNO, "getppid");
  rule_arg (r, 0, AB_SCMP_CMP_EQ, 0, 0);
  rule_arg (r, 1, 42, 0, 0);
  is_str (compile_error (s), "linux.seccomp.syscalls[0].args[1].op: invalid operator 42",
          "an invalid operator is an error naming linux.seccomp.syscalls[0].args[1].op");
  profile_free (s);
}

/* ---- flags -------------------------------------------------------------- */

/* Install p in a child and bring back the error message. */
static bool
install_error_in_child (const struct ab_seccomp_prog *p, char *msg, size_t size)
{
  ab_error_t err = { 0 };
  int fds[2], status;
  ssize_t n;
  pid_t pid;

  if (pipe (fds) < 0)
    return false;
  fflush (stdout);
  pid = fork ();
  if (pid == 0)
    {
      prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
      if (ab_seccomp_install (p, &err) >= 0) /* 0, or a listener's fd */
        child_exit (0);
      ab_write_all (fds[1], err.msg, strlen (err.msg));
      child_exit (1);
    }
  close (fds[1]);
  n = ab_read_all (fds[0], msg, size - 1);
  close (fds[0]);
  msg[n > 0 ? n : 0] = '\0';
  waitpid (pid, &status, 0);
  return WIFEXITED (status) && WEXITSTATUS (status) == 1;
}

static void
test_flags (void)
{
  struct ab_seccomp_prog p;
  struct ab_seccomp *s;
  char msg[AB_ERR_MSG_MAX];
  const char *e;

  ok (ab_seccomp_flag_supported (AB_SECCOMP_FLAG_TSYNC) && ab_seccomp_flag_supported (AB_SECCOMP_FLAG_LOG)
          && ab_seccomp_flag_supported (AB_SECCOMP_FLAG_SPEC_ALLOW),
      "the kernel probe reports TSYNC, LOG and SPEC_ALLOW as supported");
  ok (ab_seccomp_flag_supported (AB_SECCOMP_FLAG_WAIT_KILLABLE_RECV),
      "the kernel probe reports WAIT_KILLABLE_RECV (probed together with NEW_LISTENER)");
  ok (!ab_seccomp_flag_supported (1u << 20), "an unknown flag is reported as unsupported");

  /* Without TSYNC the sibling thread is not filtered ... */
  s = profile_new (AB_SCMP_ACT_ALLOW);
  profile_add (s, AB_SCMP_ACT_KILL_PROCESS, "getppid");
  if (compile (s, &p))
    {
      ok (exited_with (run_child (&p, child_thread_probe, STARTED_BEFORE_INSTALL), THREAD_SURVIVED),
          "without SECCOMP_FILTER_FLAG_TSYNC a thread started before install is not filtered");
      ab_seccomp_prog_free (&p);
    }
  /* ... with TSYNC it is: its getppid kills the process. */
  s->flags = AB_SECCOMP_FLAG_TSYNC;
  if (compile (s, &p))
    {
      ok (p.flags == SECCOMP_FILTER_FLAG_TSYNC, "TSYNC is passed to seccomp(2) as SECCOMP_FILTER_FLAG_TSYNC");
      ok (killed_by (run_child (&p, child_thread_probe, STARTED_BEFORE_INSTALL), SIGSYS),
          "with SECCOMP_FILTER_FLAG_TSYNC the second thread is filtered too (KILL_PROCESS by SIGSYS)");
      ab_seccomp_prog_free (&p);
    }
  profile_free (s);

  s = profile_new (AB_SCMP_ACT_ALLOW);
  profile_add_errno (s, "getppid", PROBE_ERRNO);
  s->flags = AB_SECCOMP_FLAG_LOG | AB_SECCOMP_FLAG_SPEC_ALLOW;
  if (compile (s, &p))
    {
      ok (p.flags == (SECCOMP_FILTER_FLAG_LOG | SECCOMP_FILTER_FLAG_SPEC_ALLOW)
              && exited_with (run_child (&p, child_probe_errno, NULL), PROBE_ERRNO),
          "SECCOMP_FILTER_FLAG_LOG and SPEC_ALLOW are accepted by the kernel and the filter works");
      ab_seccomp_prog_free (&p);
    }
  else
    ok (0, "LOG and SPEC_ALLOW compile");

  s->flags = AB_SECCOMP_FLAG_WAIT_KILLABLE_RECV;
  is_str (compile_error (s),
          "linux.seccomp.flags: SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV needs a seccomp notification "
          "listener (an SCMP_ACT_NOTIFY rule)",
          "WAIT_KILLABLE_RECV without a notification listener is an unsupported combination, reported at "
          "compile");

  /* What the kernel itself refuses at install, named in the message. */
  s->flags = 0;
  if (compile (s, &p))
    {
      p.flags = SECCOMP_FILTER_FLAG_TSYNC | SECCOMP_FILTER_FLAG_NEW_LISTENER;
      ok (install_error_in_child (&p, msg, sizeof msg)
              && strstr (msg, "seccomp(SECCOMP_SET_MODE_FILTER): the kernel rejects the flags "
                              "SECCOMP_FILTER_FLAG_TSYNC|SECCOMP_FILTER_FLAG_NEW_LISTENER")
                     == msg,
          "a flag combination the kernel rejects at install is named: %s", msg);
      p.flags = 1u << 30;
      e = "seccomp(SECCOMP_SET_MODE_FILTER): the kernel rejects the flags 0x40000000";
      ok (install_error_in_child (&p, msg, sizeof msg) && strncmp (msg, e, strlen (e)) == 0,
          "an unknown flag bit rejected at install is named: %s", msg);
      ab_seccomp_prog_free (&p);
    }
  memset (&p, 0, sizeof p);
  ok (install_error_in_child (&p, msg, sizeof msg) && strstr (msg, "no program was compiled") != NULL,
      "installing an empty program is an error, never a silent success");
  profile_free (s);
}

/* ---- the kernel holds exactly what seccomp_load would have loaded -------- */

static scmp_filter_ctx child_ctx; /* when set, the child loads it with seccomp_load instead */

static int
child_install_and_stop (void *arg AB_UNUSED)
{
  if (ptrace (PTRACE_TRACEME, 0, NULL, NULL) < 0)
    return 3;
  prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  if (child_ctx != NULL ? seccomp_load (child_ctx) < 0 : ab_seccomp_install (child_prog, NULL) < 0)
    return INSTALL_FAILED;
  raise (SIGSTOP);
  return 0;
}

/* Install in a traced child and read the filter back from the kernel
   (PTRACE_SECCOMP_GET_FILTER).  Returns the number of instructions, or -1. */
static long
installed_filter (const struct ab_seccomp_prog *p, scmp_filter_ctx ctx, struct sock_filter *buf, size_t max)
{
  long n = -1;
  int status;
  pid_t pid;

  child_prog = p;
  child_ctx = ctx;
  fflush (stdout);
  pid = fork ();
  if (pid == 0)
    child_exit (child_install_and_stop (NULL));
  child_ctx = NULL;
  if (pid < 0)
    return -1;
  status = wait_stop (pid, PTRACE_CONT);
  if (WIFSTOPPED (status))
    {
      n = ptrace (PTRACE_SECCOMP_GET_FILTER, pid, (void *)0, NULL);
      if (n > 0 && (size_t)n <= max)
        n = ptrace (PTRACE_SECCOMP_GET_FILTER, pid, (void *)0, buf);
      else
        n = -1;
    }
  kill (pid, SIGKILL);
  waitpid (pid, &status, 0);
  return n;
}

static void
test_same_as_seccomp_load (void)
{
  static struct sock_filter ours[AB_SECCOMP_MAX_INSNS_TEST], theirs[AB_SECCOMP_MAX_INSNS_TEST];
  struct ab_seccomp_prog p;
  struct ab_seccomp_rule *r;
  struct ab_seccomp *s;
  scmp_filter_ctx ctx;
  long n_ours, n_theirs;

  s = profile_new (AB_SCMP_ACT_ALLOW);
  ab_strv_push (&s->architectures, "SCMP_ARCH_X86");
  r = profile_add_errno (s, "getppid", PROBE_ERRNO);
  rule_arg (r, 1, AB_SCMP_CMP_MASKED_EQ, 0xf0, 0x30);
  profile_add (s, AB_SCMP_ACT_KILL_PROCESS, "mkdirat");
  if (!compile (s, &p))
    {
      profile_free (s);
      return;
    }

  /* The same filter through libseccomp's own loader, with the attributes
     the runtime uses. */
  ctx = seccomp_init (SCMP_ACT_ALLOW);
  seccomp_attr_set (ctx, SCMP_FLTATR_CTL_NNP, 0);
  seccomp_attr_set (ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
  seccomp_attr_set (ctx, SCMP_FLTATR_CTL_OPTIMIZE, AB_SECCOMP_TREE);
  seccomp_arch_add (ctx, SCMP_ARCH_X86);
  seccomp_rule_add (ctx, SCMP_ACT_ERRNO (PROBE_ERRNO), SCMP_SYS (getppid), 1,
                    SCMP_A1 (SCMP_CMP_MASKED_EQ, 0xf0, 0x30));
  seccomp_rule_add (ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS (mkdirat), 0);

  n_ours = installed_filter (&p, NULL, ours, AB_ARRAY_SIZE (ours));
  n_theirs = installed_filter (NULL, ctx, theirs, AB_ARRAY_SIZE (theirs));
  if (n_ours < 0 && (errno == EINVAL || errno == EACCES))
    printf ("ok %d # SKIP PTRACE_SECCOMP_GET_FILTER unavailable (CONFIG_CHECKPOINT_RESTORE)\n", ++tap_count);
  else
    ok (n_ours == p.len && n_theirs == n_ours && memcmp (ours, theirs, (size_t)n_ours * sizeof *ours) == 0
            && memcmp (ours, p.insns, (size_t)n_ours * sizeof *ours) == 0,
        "the kernel holds exactly the compiled program, the same %ld instructions seccomp_load installs",
        n_ours);
  seccomp_release (ctx);
  ab_seccomp_prog_free (&p);
  profile_free (s);
}

/* ---- install is one syscall --------------------------------------------- */

#define MARK_BEGIN 0xab5ec0
#define MARK_END 0xab5ec1

static int
child_marked_install (void *arg AB_UNUSED)
{
  if (ptrace (PTRACE_TRACEME, 0, NULL, NULL) < 0)
    return 3;
  prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  raise (SIGSTOP);
  probe (MARK_BEGIN, 0);
  if (ab_seccomp_install (child_prog, NULL) < 0)
    return INSTALL_FAILED;
  probe (MARK_END, 0);
  return 0;
}

static void
test_install_is_one_syscall (void)
{
  struct __ptrace_syscall_info info;
  struct ab_seccomp_prog p;
  struct ab_seccomp *s;
  int status, inside = 0, calls = 0, seccomp_calls = 0, done = 0;
  pid_t pid;

  s = profile_new (AB_SCMP_ACT_ALLOW);
  profile_add (s, AB_SCMP_ACT_ERRNO, "mkdirat");
  if (!compile (s, &p))
    {
      profile_free (s);
      return;
    }
  child_prog = &p;
  fflush (stdout);
  pid = fork ();
  if (pid == 0)
    child_exit (child_marked_install (NULL));
  status = wait_stop (pid, PTRACE_SYSCALL);
  if (pid > 0 && WIFSTOPPED (status)
      && ptrace (PTRACE_SETOPTIONS, pid, NULL, (void *)(long)(PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL))
             == 0)
    {
      ptrace (PTRACE_SYSCALL, pid, NULL, NULL);
      while ((status = wait_stop (pid, PTRACE_SYSCALL)) != -1 && WIFSTOPPED (status))
        {
          if ((status >> 8) == (SIGTRAP | 0x80)
              && ptrace (PTRACE_GET_SYSCALL_INFO, pid, (void *)sizeof info, &info) > 0
              && info.op == PTRACE_SYSCALL_INFO_ENTRY)
            {
              if (info.entry.nr == SYS_getppid && info.entry.args[0] == MARK_BEGIN)
                inside = 1;
              else if (info.entry.nr == SYS_getppid && info.entry.args[0] == MARK_END)
                {
                  inside = 0;
                  done = 1;
                }
              else if (inside)
                {
                  calls++;
                  if (info.entry.nr == SYS_seccomp)
                    seccomp_calls++;
                  else
                    printf ("#   install made syscall %llu\n", (unsigned long long)info.entry.nr);
                }
            }
          ptrace (PTRACE_SYSCALL, pid, NULL, NULL);
        }
    }
  else if (pid > 0)
    {
      kill (pid, SIGKILL);
      waitpid (pid, &status, 0);
    }
  ok (done && calls == 1 && seccomp_calls == 1 && WIFEXITED (status) && WEXITSTATUS (status) == 0,
      "ab_seccomp_install makes exactly one syscall, seccomp(2) (seen by a ptrace tracer: %d call(s))",
      calls);
  ab_seccomp_prog_free (&p);
  profile_free (s);
}

/* ---- a real-world-sized profile ----------------------------------------- */

/* An allowlist in the spirit of the container engines' default profiles:
   the x86_64 syscalls a build or a test suite uses, a few newer names this
   libseccomp may not know, and the usual argument-checked rules. */
static const char allowlist[]
    = "accept accept4 access adjtimex alarm arch_prctl bind brk cachestat capget capset chdir chmod chown "
      "clock_getres clock_gettime clock_nanosleep close close_range connect copy_file_range creat dup dup2 "
      "dup3 epoll_create epoll_create1 epoll_ctl epoll_pwait epoll_pwait2 epoll_wait eventfd eventfd2 execve "
      "execveat exit exit_group faccessat faccessat2 fadvise64 fallocate fanotify_mark fchdir fchmod "
      "fchmodat "
      "fchmodat2 fchown fchownat fcntl fdatasync fgetxattr flistxattr flock fork fremovexattr fsetxattr "
      "fstat "
      "fstatfs fsync ftruncate futex futex_requeue futex_wait futex_waitv futex_wake futimesat getcpu getcwd "
      "getdents getdents64 getegid geteuid getgid getgroups getitimer getpeername getpgid getpgrp getpid "
      "getppid getpriority getrandom getresgid getresuid getrlimit get_robust_list getrusage getsid "
      "getsockname getsockopt get_thread_area gettid gettimeofday getuid getxattr inotify_add_watch "
      "inotify_init inotify_init1 inotify_rm_watch io_cancel ioctl io_destroy io_getevents io_pgetevents "
      "ioprio_get ioprio_set io_setup io_submit ipc kill landlock_add_rule landlock_create_ruleset "
      "landlock_restrict_self lchown lgetxattr link linkat listen listxattr llistxattr lremovexattr lseek "
      "lsetxattr lstat madvise map_shadow_stack membarrier memfd_create memfd_secret mincore mkdir mkdirat "
      "mknod mknodat mlock mlock2 mlockall mmap mprotect mq_getsetattr mq_notify mq_open mq_timedreceive "
      "mq_timedsend mq_unlink mremap mseal msgctl msgget msgrcv msgsnd msync munlock munlockall munmap "
      "name_to_handle_at nanosleep newfstatat open openat openat2 pause pidfd_getfd pidfd_open "
      "pidfd_send_signal pipe pipe2 pkey_alloc pkey_free pkey_mprotect poll ppoll prctl pread64 preadv "
      "preadv2 "
      "prlimit64 process_mrelease pselect6 pwrite64 pwritev pwritev2 read readahead readlink readlinkat "
      "readv "
      "recvfrom recvmmsg recvmsg remap_file_pages removexattr rename renameat renameat2 restart_syscall "
      "rmdir "
      "rseq rt_sigaction rt_sigpending rt_sigprocmask rt_sigqueueinfo rt_sigreturn rt_sigsuspend "
      "rt_sigtimedwait rt_tgsigqueueinfo sched_getaffinity sched_getattr sched_getparam "
      "sched_get_priority_max "
      "sched_get_priority_min sched_getscheduler sched_rr_get_interval sched_setaffinity sched_setattr "
      "sched_setparam sched_setscheduler sched_yield seccomp select semctl semget semop semtimedop sendfile "
      "sendmmsg sendmsg sendto setfsgid setfsuid setgid setgroups setitimer setpgid setpriority setregid "
      "setresgid setresuid setreuid setrlimit set_robust_list setsid setsockopt set_thread_area "
      "set_tid_address setuid setxattr shmat shmctl shmdt shmget shutdown sigaltstack signalfd signalfd4 "
      "socket socketcall socketpair splice stat statfs statx symlink symlinkat sync sync_file_range syncfs "
      "sysinfo tee tgkill time timer_create timer_delete timer_getoverrun timer_gettime timer_settime "
      "timerfd_create timerfd_gettime timerfd_settime times tkill truncate umask uname unlink unlinkat utime "
      "utimensat utimes vfork vmsplice wait4 waitid write writev statmount listmount lsm_get_self_attr "
      "lsm_set_self_attr lsm_list_modules setxattrat getxattrat listxattrat removexattrat uretprobe";

/* Namespace flags of clone(2): clone is allowed only without them. */
#define NS_CLONE_FLAGS 0x7e020000ULL

static struct ab_seccomp *
real_world_profile (void)
{
  struct ab_seccomp *s = profile_new (AB_SCMP_ACT_ERRNO);
  struct ab_seccomp_rule *r;

  ab_strv_push (&s->architectures, "SCMP_ARCH_X86_64");
  ab_strv_push (&s->architectures, "SCMP_ARCH_X86");
  ab_strv_push (&s->architectures, "SCMP_ARCH_X32");
  profile_add (s, AB_SCMP_ACT_ALLOW, allowlist);
  /* personality: only the harmless personas (the same index three times). */
  r = profile_add (s, AB_SCMP_ACT_ALLOW, "personality");
  rule_arg (r, 0, AB_SCMP_CMP_EQ, 0x0, 0);
  rule_arg (r, 0, AB_SCMP_CMP_EQ, 0x8, 0);
  rule_arg (r, 0, AB_SCMP_CMP_EQ, 0xffffffff, 0);
  /* clone without namespace flags; clone3 cannot be checked (its flags are in
     memory), so it fails with ENOSYS and libc falls back to clone. */
  rule_arg (profile_add (s, AB_SCMP_ACT_ALLOW, "clone"), 0, AB_SCMP_CMP_MASKED_EQ, NS_CLONE_FLAGS, 0);
  profile_add_errno (s, "clone3", ENOSYS);
  /* socket: every family but AF_VSOCK (40). */
  rule_arg (profile_add (s, AB_SCMP_ACT_ALLOW, "socket"), 0, AB_SCMP_CMP_NE, 40, 0);
  return s;
}

static int
child_real_world (void *arg AB_UNUSED)
{
  char *argv[] = { (char *)"/bin/sh", (char *)"-c", (char *)"exit 3", NULL };
  extern char **environ;

  enter_filter ();
  /* What the profile denies: a new namespace, in both ways of asking. */
  if (syscall (SYS_unshare, CLONE_NEWUSER) == 0 || errno != EPERM)
    return 10;
  if (syscall (SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0) >= 0 || errno != EPERM)
    return 11;
  if (syscall (SYS_clone3, NULL, 0) == 0 || errno != ENOSYS)
    return 12;
  execve (argv[0], argv, environ);
  return 13;
}

static void
test_real_world (void)
{
  struct ab_seccomp *s = real_world_profile ();
  struct ab_seccomp_prog p;
  uint64_t t0, best = UINT64_MAX, total = 0;
  const int rounds = 20;
  int i, ok_all = 1;
  size_t names = 0;

  for (i = 0; (size_t)i < s->n_syscalls; i++)
    names += s->syscalls[i].names.n;

  for (i = 0; i < rounds; i++)
    {
      uint64_t dt;

      t0 = ab_now_monotonic_ns ();
      if (!compile (s, &p))
        {
          ok_all = 0;
          break;
        }
      dt = ab_now_monotonic_ns () - t0;
      total += dt;
      if (dt < best)
        best = dt;
      if (i + 1 < rounds)
        ab_seccomp_prog_free (&p);
    }
  ok (ok_all, "a %zu-name allowlist for x86_64, x86 and x32 with argument rules compiles", names);
  if (!ok_all)
    {
      profile_free (s);
      return;
    }
  printf (
      "# compile of a %zu-name profile (3 architectures): best %.2f ms, mean %.2f ms over %d rounds; %u BPF "
      "instructions; %zu names unknown to libseccomp %u.%u.%u\n",
      names, best / 1e6, total / 1e6 / rounds, rounds, p.len, p.skipped.n, SCMP_VER_MAJOR, SCMP_VER_MINOR,
      SCMP_VER_MICRO);
  ok (p.skipped.n > 0 && ab_strv_contains (&p.skipped, "uretprobe")
          && !ab_strv_contains (&p.skipped, "getpid"),
      "names newer than libseccomp are skipped and listed (%zu), known ones are not", p.skipped.n);
  ok (exited_with (run_child (&p, child_real_world, NULL), 3),
      "under the real-world profile unshare/clone with namespace flags fail with EPERM, clone3 with ENOSYS, "
      "and "
      "/bin/sh runs and exits 3");
  ab_seccomp_prog_free (&p);

  /* The same profile natively only, for comparison. */
  ab_strv_free (&s->architectures);
  t0 = ab_now_monotonic_ns ();
  if (compile (s, &p))
    {
      printf ("# the same profile for x86_64 only: %.2f ms, %u BPF instructions\n",
              (ab_now_monotonic_ns () - t0) / 1e6, p.len);
      ab_seccomp_prog_free (&p);
    }
  profile_free (s);
}

/* ---- SCMP_ACT_NOTIFY: the listener ------------------------------------- */

static int notify_sock = -1;

/* In the child: install, hand the listener over as the runtime does (one
   sendmsg with the sync message), then make the notified call: what it
   returns is what the parent, the agent here, answered. */
static int
child_notify (void *arg AB_UNUSED)
{
  struct rlimit no_core = { 0, 0 };
  ab_error_t err;
  int listener;
  long r;

  setrlimit (RLIMIT_CORE, &no_core);
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return INSTALL_FAILED;
  listener = ab_seccomp_install (child_prog, &err);
  if (listener < 0)
    return INSTALL_FAILED;
  if (!(fcntl (listener, F_GETFD) & FD_CLOEXEC) || ab_sync_send_fd (notify_sock, AB_SYNC_SECCOMP, listener, &err) < 0)
    return 1;
  r = syscall (SYS_getppid);
  return r == 4242 ? 0 : 2;
}

static void
test_notify (void)
{
  struct ab_seccomp *s = profile_new (AB_SCMP_ACT_ALLOW);
  struct ab_seccomp_prog p;
  struct ab_sync_msg m;
  int sp[2], listener = -1;
  siginfo_t si;
  pid_t pid;

  s->listener_path = xstrdup ("/run/agent.sock");
  profile_add (s, AB_SCMP_ACT_NOTIFY, "getppid");
  if (!compile (s, &p))
    {
      ok (0, "a profile with an SCMP_ACT_NOTIFY rule compiles");
      profile_free (s);
      return;
    }
  ok (ab_seccomp_prog_listens (&p) && (p.flags & SECCOMP_FILTER_FLAG_NEW_LISTENER),
      "an SCMP_ACT_NOTIFY rule makes a program that asks for a listener (NEW_LISTENER)");

  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
    abort ();
  notify_sock = sp[1];
  child_prog = &p;
  fflush (stdout);
  pid = fork ();
  if (pid == 0)
    child_exit (child_notify (NULL));
  close (sp[1]);
  if (ab_sync_recv_fd (sp[0], &m, &listener, NULL) == 0 && m.type == AB_SYNC_SECCOMP && listener >= 0)
    {
      /* The agent: one notification, answered with a value of its own. */
      struct seccomp_notif req;
      struct seccomp_notif_resp resp;
      memset (&req, 0, sizeof req);
      if (ioctl (listener, SECCOMP_IOCTL_NOTIF_RECV, &req) == 0)
        {
          ok (req.data.nr == SYS_getppid && req.pid == (uint32_t)pid,
              "the agent is told of the child's getppid, with the child's pid");
          memset (&resp, 0, sizeof resp);
          resp.id = req.id;
          resp.val = 4242;
          ioctl (listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
        }
      else
        ok (0, "SECCOMP_IOCTL_NOTIF_RECV on the listener that came over the socket");
      close (listener);
    }
  else
    ok (0, "the listener comes over the socket with AB_SYNC_SECCOMP");
  memset (&si, 0, sizeof si);
  waitid (P_PID, (id_t)pid, &si, WEXITED);
  ok (exited_with (si, 0), "the notified call returns what the agent answered (4242); the listener is close-on-exec");
  close (sp[0]);
  ab_seccomp_prog_free (&p);

  /* TSYNC reports through the return value the listener takes: the kernel
     wants TSYNC_ESRCH with it. */
  s->flags = AB_SECCOMP_FLAG_TSYNC;
  if (compile (s, &p))
    {
      char msg[AB_ERR_MSG_MAX];
      ok ((p.flags & SECCOMP_FILTER_FLAG_TSYNC_ESRCH) && (p.flags & SECCOMP_FILTER_FLAG_NEW_LISTENER)
              && !install_error_in_child (&p, msg, sizeof msg),
          "TSYNC with a listener comes with TSYNC_ESRCH, and the kernel takes the three");
      ab_seccomp_prog_free (&p);
    }
  else
    ok (0, "TSYNC with a NOTIFY rule compiles");
  s->flags = AB_SECCOMP_FLAG_WAIT_KILLABLE_RECV;
  ok (compile_error (s) == NULL || !ab_seccomp_flag_supported (AB_SECCOMP_FLAG_WAIT_KILLABLE_RECV),
      "WAIT_KILLABLE_RECV compiles with a NOTIFY rule (where the kernel has it)");
  profile_free (s);
}

/* ---- the compiled-program cache's key ---------------------------------- */

static bool
same_prog (const struct ab_seccomp_prog *a, const struct ab_seccomp_prog *b)
{
  return a->len == b->len && a->flags == b->flags && memcmp (a->insns, b->insns, a->len * sizeof *a->insns) == 0;
}

/* A profile differing from another in any one field must never be handed
   the other's cached program: each variant below, compiled through an
   empty cache (a miss, stored) and again (a hit), gives exactly what an
   uncached compile gives, and each left an entry of its own. */
static void
test_cache_keys (void)
{
  char dir[] = "/tmp/ab-seccomp-cache.XXXXXX";
  unsigned mismatches = 0, variants = 0;
  size_t entries = 0;
  DIR *d;
  struct dirent *e;

  if (mkdtemp (dir) == NULL || setenv ("AGENTBOX_CACHE_DIR", dir, 1) < 0)
    {
      ok (0, "a cache directory for the key test");
      return;
    }
  for (int v = 0; v < 13; v++)
    {
      struct ab_seccomp *s = profile_new (AB_SCMP_ACT_ERRNO);
      struct ab_seccomp_rule *r;
      struct ab_seccomp_prog miss = { 0 }, hit = { 0 }, plain = { 0 };
      ab_error_t err = { 0 };

      profile_add (s, AB_SCMP_ACT_ALLOW, v == 4 ? "read write exit_group getuid"
                                         : v == 5 ? "write read exit_group getpid"
                                                  : "read write exit_group getpid");
      r = profile_add_errno (s, "getppid", v == 6 ? 6 : 5);
      rule_arg (r, v == 7 ? 1 : 0, v == 9 ? AB_SCMP_CMP_NE : v == 10 ? AB_SCMP_CMP_MASKED_EQ : AB_SCMP_CMP_EQ,
                v == 8 ? 4 : 3, v == 10 ? 3 : 0);
      if (v == 1)
        s->default_errno_ret_set = true, s->default_errno_ret = 7;
      if (v == 2)
        s->default_action = AB_SCMP_ACT_KILL_PROCESS;
      if (v == 3)
        ab_strv_push (&s->architectures, "SCMP_ARCH_X86");
      if (v == 11)
        profile_add (s, AB_SCMP_ACT_LOG, "uname");
      if (v == 12)
        rule_arg (r, 2, AB_SCMP_CMP_GT, 1, 0);
      variants++;
      if (ab_seccomp_compile_cached (s, &miss, &err) < 0 || ab_seccomp_compile_cached (s, &hit, &err) < 0
          || ab_seccomp_compile (s, &plain, &err) < 0)
        {
          printf ("# variant %d: %s\n", v, err.msg);
          mismatches++;
        }
      else if (!same_prog (&miss, &plain) || !same_prog (&hit, &plain))
        {
          printf ("# variant %d: the cache handed over another program\n", v);
          mismatches++;
        }
      ab_seccomp_prog_free (&miss);
      ab_seccomp_prog_free (&hit);
      ab_seccomp_prog_free (&plain);
      profile_free (s);
    }
  {
    char sub[sizeof dir + 16];
    snprintf (sub, sizeof sub, "%s/seccomp", dir);
    if ((d = opendir (sub)) != NULL)
      {
        while ((e = readdir (d)) != NULL)
          entries += e->d_name[0] != '.';
        closedir (d);
      }
  }
  ok (mismatches == 0 && entries == variants,
      "%u profiles, each one field apart, get their own program from the cache, missed and hit (%zu entries)",
      variants, entries);
  unsetenv ("AGENTBOX_CACHE_DIR");
  {
    char cmd[sizeof dir + 16];
    snprintf (cmd, sizeof cmd, "rm -rf %s", dir);
    if (system (cmd) != 0)
      printf ("# could not remove %s\n", dir);
  }
}

int
main (void)
{
  test_errno ();
  test_default_errno ();
  test_kill ();
  test_log_allow ();
  test_trace ();
  test_operators ();
  test_arg_combinations ();
  test_names ();
  test_architectures ();
#if defined(__x86_64__)
  test_ia32 ();
#endif
  test_refusals ();
  test_flags ();
  test_notify ();
  test_same_as_seccomp_load ();
  test_install_is_one_syscall ();
  test_real_world ();
  test_cache_keys ();
  return tap_done ();
}
