/* Helpers shared by the subcommands. */
#include "config.h"

#include <signal.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <ctype.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "base/log.h"
#include "base/util.h"
#include "runtime/lifecycle/container.h"
#include "spec/model.h"

int
ab_cmd_fail (const ab_error_t *err)
{
  ab_log_error (err);
  return err->cls == AB_EC_USAGE ? AB_EXIT_USAGE : AB_EXIT_FAILURE;
}

int
ab_cmd_create_held (const char *root, const char *cmd, const struct ab_create_opts *o, ab_error_t *err)
{
  struct ab_container *c = NULL;
  struct signalfd_siginfo si;
  sigset_t set, old;
  ab_error_t del = { 0 };
  const char *left = "nothing of it is left";
  int fd, r, sig = 0;

  sigemptyset (&set);
  sigaddset (&set, SIGINT);
  sigaddset (&set, SIGTERM);
  sigaddset (&set, SIGHUP);
  sigprocmask (SIG_BLOCK, &set, &old);
  fd = signalfd (-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  ab_cancel_watch (fd);
  r = ab_container_create (o, &c, err);
  ab_container_free (c);
  ab_cancel_watch (-1);
  if (fd >= 0 && read (fd, &si, sizeof si) == (ssize_t)sizeof si)
    sig = (int)si.ssi_signo;
  ab_closep_now (&fd);
  if (sig == 0)
    {
      sigprocmask (SIG_SETMASK, &old, NULL);
      return r;
    }
  if (r == 0 && ab_container_delete (root, o->id, true, &del) < 0)
    left = del.msg;
  else if (r < 0 && err->msg[0] && err->errnum != ECANCELED)
    left = err->msg; /* its own failure, not the hook the signal stopped */
  fprintf (stderr, "agentbox: %s `%s`: interrupted by SIG%s; %s\n", cmd, o->id, sigabbrev_np (sig), left);
  return 128 + sig;
}

int
ab_cmd_usage_error (const char *cmd, const char *fmt, ...)
{
  char msg[1024];
  ab_error_t err = { 0 };
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  if (cmd)
    ab_error_setc (&err, AB_EC_USAGE, 0, "%s: %s (see `agentbox %s --help`)", cmd, msg, cmd);
  else
    ab_error_setc (&err, AB_EC_USAGE, 0, "%s (see `agentbox --help`)", msg);
  ab_log_error (&err);
  return AB_EXIT_USAGE;
}

/* The maps of the user namespace a config creates, or NULL. */
void
ab_new_userns_maps (const struct ab_spec *s, const struct ab_idmaps **uids, const struct ab_idmaps **gids)
{
  *uids = *gids = NULL;
  if (ab_linux_new_ns (s->linux_, AB_NS_USER))
    {
      *uids = &s->linux_->uid_mappings;
      *gids = &s->linux_->gid_mappings;
    }
}

/* --preserve-fds N hands fds 3 .. N+2 to the container as they are, with
   close-on-exec cleared (runtime/process.c).  Each must be the caller's own
   open fd: a hole in that range would be filled by the next fd agentbox
   opens (its log, a record file, the root filesystem's directory, a cgroup
   directory of the host), and that fd would then reach the container.  So
   the range is checked before agentbox opens anything more. */
int
ab_cmd_check_preserve_fds (const char *cmd, int listen, int n, int record_fd)
{
  for (int fd = 3; fd < 3 + listen + n; fd++)
    {
      char what[48];
      if (fd < 3 + listen)
        snprintf (what, sizeof what, "LISTEN_FDS=%d", listen);
      else
        snprintf (what, sizeof what, "--preserve-fds %d", n);
      if (fcntl (fd, F_GETFD) < 0)
        return ab_cmd_usage_error (cmd, "%s: fd %d is not open (fds 3 to %d must be)", what, fd, listen + n + 2);
      if (fd == ab_log_fd () || fd == record_fd)
        return ab_cmd_usage_error (cmd, "%s: fd %d is agentbox's own %s, not one to pass on", what, fd,
                                   fd == record_fd ? "record file" : "log file");
    }
  return 0;
}

int
ab_cmd_listen_fds (const char *cmd, int *n)
{
  const char *fds = getenv ("LISTEN_FDS"), *pid = getenv ("LISTEN_PID");
  int v, p;

  *n = 0;
  if (fds == NULL || *fds == '\0')
    return 0;
  /* Without LISTEN_PID, or another process's (inherited past the one
     systemd started): not ours, as runc (go-systemd) reads it. */
  if (pid == NULL || ab_parse_int (pid, &p) < 0 || p != (int)getpid ())
    return 0;
  if (ab_parse_int (fds, &v) < 0 || v < 0 || v > 65536)
    return ab_cmd_usage_error (cmd, "LISTEN_FDS=%s: expected a number of fds", fds);
  *n = v;
  return 0;
}

int
ab_cmd_positionals (const char *cmd, int argc, char **argv, int min, int max, const char *what)
{
  extern int optind;
  int n = argc - optind;

  (void) argv;
  if (n < min)
    return ab_cmd_usage_error (cmd, "missing %s", what);
  if (max >= 0 && n > max)
    return ab_cmd_usage_error (cmd, "unexpected argument `%s`", argv[optind + max]);
  return 0;
}

int
ab_cmd_on_id (struct ab_global *g, int argc, char **argv, const char *cmd, const char *help,
              int (*op) (const char *root, const char *id, ab_error_t *err))
{
  static const struct option opts[] = { { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
  ab_error_t err = { 0 };
  int c;

  while ((c = getopt_long (argc, argv, "h", opts, NULL)) != -1)
    {
      if (c == 'h')
        {
          printf ("Usage: agentbox %s ID\n\n%s\n", cmd, help);
          return AB_EXIT_OK;
        }
      return ab_cmd_usage_error (cmd, "unknown option `%s`", argv[optind - 1]);
    }
  if ((c = ab_cmd_positionals (cmd, argc, argv, 1, 1, "container ID")) != 0)
    return c;
  if (op (g->root, argv[optind], &err) < 0)
    return ab_cmd_fail (&err);
  return AB_EXIT_OK;
}

int
ab_cmd_parse_format (const char *cmd, const char *arg, bool *json)
{
  if (strcmp (arg, "json") == 0 || strcmp (arg, "table") == 0)
    {
      *json = arg[0] == 'j';
      return 0;
    }
  return ab_cmd_usage_error (cmd, "--format: expected table or json, got `%s`", arg);
}

static const struct
{
  const char *name;
  int sig;
} signals[] = {
  { "HUP", SIGHUP },       { "INT", SIGINT },     { "QUIT", SIGQUIT },   { "ILL", SIGILL },     { "TRAP", SIGTRAP },
  { "ABRT", SIGABRT },     { "IOT", SIGIOT },     { "BUS", SIGBUS },     { "FPE", SIGFPE },     { "KILL", SIGKILL },
  { "USR1", SIGUSR1 },     { "SEGV", SIGSEGV },   { "USR2", SIGUSR2 },   { "PIPE", SIGPIPE },   { "ALRM", SIGALRM },
  { "TERM", SIGTERM },     { "STKFLT", SIGSTKFLT }, { "CHLD", SIGCHLD }, { "CONT", SIGCONT },   { "STOP", SIGSTOP },
  { "TSTP", SIGTSTP },     { "TTIN", SIGTTIN },   { "TTOU", SIGTTOU },   { "URG", SIGURG },     { "XCPU", SIGXCPU },
  { "XFSZ", SIGXFSZ },     { "VTALRM", SIGVTALRM }, { "PROF", SIGPROF }, { "WINCH", SIGWINCH }, { "IO", SIGIO },
  { "POLL", SIGPOLL },     { "PWR", SIGPWR },     { "SYS", SIGSYS },
};

int
ab_parse_signal (const char *s)
{
  int n;
  size_t i;

  /* 0 as runc takes it: no signal, the check that the process is there. */
  if (ab_parse_int (s, &n) == 0)
    return n >= 0 && n < NSIG ? n : -1;
  if (strncasecmp (s, "SIG", 3) == 0)
    s += 3;
  for (i = 0; i < AB_ARRAY_SIZE (signals); i++)
    if (strcasecmp (s, signals[i].name) == 0)
      return signals[i].sig;
  if (strncasecmp (s, "RTMIN", 5) == 0 || strncasecmp (s, "RTMAX", 5) == 0)
    {
      int base = toupper ((unsigned char) s[3]) == 'I' ? SIGRTMIN : SIGRTMAX;
      int off = 0;
      if (s[5] == '\0')
        return base;
      if ((s[5] == '+' || s[5] == '-') && ab_parse_int (s + 6, &off) == 0)
        {
          int v = s[5] == '+' ? base + off : base - off;
          return v >= SIGRTMIN && v <= SIGRTMAX ? v : -1;
        }
    }
  return -1;
}

int
ab_die_with_parent (const char *cmd, const char *arg)
{
  int pid;

  if (ab_parse_int (arg, &pid) < 0 || pid <= 0)
    return ab_cmd_usage_error (cmd, "--die-with-parent: expected a pid, got `%s`", arg);
  /* SIGUSR1 is the supervisor's cancel: the whole container goes with us.
     The check after the prctl closes the race with a parent that died
     before it. */
  prctl (PR_SET_PDEATHSIG, SIGUSR1);
  if (getppid () != pid)
    return ab_cmd_usage_error (cmd, "--die-with-parent: %d is not our parent (any more)", pid);
  return 0;
}

int
ab_cmd_check_pid_file (const char *cmd, const char *path)
{
  _cleanup_free_ char *dir = xstrdup (path);
  char *slash = strrchr (dir, '/');
  struct stat st;

  if (slash == NULL)
    return 0;
  if (slash == dir)
    slash++; /* "/name": the root */
  *slash = '\0';
  if (stat (dir, &st) < 0)
    return ab_cmd_usage_error (cmd, "--pid-file `%s`: directory `%s`: %s", path, dir, strerror (errno));
  if (!S_ISDIR (st.st_mode))
    return ab_cmd_usage_error (cmd, "--pid-file `%s`: `%s` is not a directory", path, dir);
  return 0;
}

int
ab_open_record (const char *path)
{
  int fd;

  /* Our own stdout or stderr: the same open file, never a second one at
     offset 0 with O_TRUNC (which, on a redirected stdout, would truncate
     the caller's file and overwrite the program's streamed output). */
  if (strcmp (path, "-") == 0 || strcmp (path, "/dev/stdout") == 0)
    return STDOUT_FILENO;
  if (strcmp (path, "/dev/stderr") == 0)
    return STDERR_FILENO;
  if (strncmp (path, "/dev/fd/", 8) == 0 && ab_parse_int (path + 8, &fd) == 0 && fd >= 0
      && fcntl (fd, F_GETFD) >= 0)
    return fd;
  return open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0644);
}
