/* The foreground supervisor (run and exec).
 *
 * One event loop watches the process (pidfd), our signals (signalfd), the
 * captured output (pipes), the stdin we feed, and the deadline.  The end is
 * decoded with waitid: an exit code, or a signal and the core flag, never
 * `status & 0xff`.  On the deadline or a cancel the whole unit is killed —
 * the container's cgroup (cgroup.kill), or the exec's own sub-cgroup — so a
 * setsid'd, double-forked grandchild does not survive. */
#include "config.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "netns/netns.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/console.h"
#include "runtime/fallback.h"
#include "runtime/lifecycle/exec.h"
#include "runtime/lifecycle/lifecycle-internal.h"
#include "base/log.h"
#include "runtime/lifecycle/network.h"
#include "runtime/ns.h"
#include "runtime/plan/plan.h"
#include "runtime/supervise/fswatch.h"
#include "runtime/supervise/supervise.h"
#include "runtime/warm.h"
#include "base/util.h"
#include "runtime/lifecycle/wsstore.h"
#include "base/gen.h"

void
ab_supervise_opts_init (struct ab_supervise_opts *o)
{
  memset (o, 0, sizeof *o);
  o->passthrough = true;
  o->max_output = AB_SUPERVISE_MAX_OUTPUT_DEFAULT;
}

const char *
ab_reason_name (int reason)
{
  switch (reason)
    {
    case AB_REASON_EXITED:
      return "exited";
    case AB_REASON_SIGNALED:
      return "signaled";
    case AB_REASON_TIMEOUT:
      return "timeout";
    case AB_REASON_OOM:
      return "oom_killed";
    default:
      return "setup_failed";
    }
}

void
ab_outcome_free (struct ab_outcome *o)
{
  free (o->out.data);
  free (o->err.data);
  ab_strv_free (&o->degraded);
  ab_strv_free (&o->full_mounts);
  free (o->violations_json);
  free (o->egress_json);
  free (o->workspace_json);
  free (o->cgroup);
  free (o->id);
  memset (o, 0, sizeof *o);
}

/* Capture up to max bytes of the stream and copy all of it to *tee (-1:
   none).  A copy that fails (the reader of our stdout went away) stops,
   the capture goes on.  The buffer doubles, up to max and its NUL: a
   handful of reallocations, never more than the cap held. */
static void
stream_add (struct ab_stream *s, const char *buf, size_t n, uint64_t max, int *tee, unsigned *limits)
{
  size_t take;

  if (*tee >= 0 && ab_write_all (*tee, buf, n) < 0)
    *tee = -1;
  if (s == NULL)
    return; /* copied, not captured */
  s->total += n;
  take = s->len >= max ? 0 : (size_t) (max - s->len < n ? max - s->len : n);
  if (take && s->len + take + 1 > s->size)
    {
      s->size = s->size * 2 > s->len + take + 1 ? s->size * 2 : s->len + take + 1;
      if (s->size > max + 1)
        s->size = (size_t)max + 1;
      s->data = xrealloc (s->data, s->size);
    }
  if (take)
    {
      memcpy (s->data + s->len, buf, take);
      s->len += take;
      s->data[s->len] = '\0';
    }
  if (take < n)
    {
      s->truncated = true;
      *limits |= AB_LIMIT_OUTPUT;
    }
}

/* Pipes between the program and us, or its terminal. */
struct io
{
  int out[2], err[2], in[2];
  size_t in_off;
  int tee_out, tee_err; /* where the captured streams are copied to, or -1 */
  /* process.terminal relayed (no --console-socket): the pty master, whose
     output is copied to our stdout (and captured), and our stdin (or
     stdin_data) copied to it. */
  int pty;
  /* Our stdin is a terminal and the program has no pty: in[1], the pipe
     the program reads, is fed from our stdin as the pty is. */
  bool in_relay;
  bool stdin_open;       /* our stdin is still read (for the pty or in_relay) */
  const char *pend;      /* input not yet written to the pty or in[1] */
  size_t pend_len;
  char pbuf[4096];
  struct ab_caller_tty caller;
};

static void
io_init (struct io *io)
{
  io->out[0] = io->out[1] = io->err[0] = io->err[1] = io->in[0] = io->in[1] = -1;
  io->in_off = 0;
  io->tee_out = io->tee_err = -1;
  io->pty = -1;
  io->in_relay = false;
  io->stdin_open = false;
  io->pend = NULL;
  io->pend_len = 0;
  io->caller.fd = -1;
  io->caller.raw = false;
}

/* The program's stdio: pipes to capture its output, and pipes in place
   of every stdio fd of ours that is a terminal, as runc gives a
   foreground process without one.  The caller's terminal is not the
   program's to hold: with it the program could change its modes under
   the caller's shell (stty), read what is typed after it ended, or ask
   the terminal for input (TIOCSTI) were it ever its controlling one. */
static int
io_open (struct io *io, const struct ab_supervise_opts *so, int stdio[3], ab_error_t *err)
{
  bool out = so->capture || isatty (1), errs = so->capture || isatty (2);
  int tee = !so->capture || so->passthrough;

  if ((out && pipe2 (io->out, O_CLOEXEC) < 0) || (errs && pipe2 (io->err, O_CLOEXEC) < 0))
    return ab_error_set (err, errno, "pipe");
  if (out)
    {
      stdio[1] = io->out[1];
      io->tee_out = tee ? 1 : -1;
    }
  if (errs)
    {
      stdio[2] = io->err[1];
      io->tee_err = tee ? 2 : -1;
    }
  io->in_relay = so->stdin_data == NULL && isatty (0);
  if (so->stdin_data || io->in_relay)
    {
      if (pipe2 (io->in, O_CLOEXEC) < 0)
        return ab_error_set (err, errno, "pipe");
      stdio[0] = io->in[0];
    }
  io->stdin_open = io->in_relay;
  return 0;
}

static void
closep2 (int *fd)
{
  if (*fd >= 0)
    close (*fd);
  *fd = -1;
}

/* The program's ends, once it has them. */
static void
io_close_child_ends (struct io *io)
{
  closep2 (&io->out[1]);
  closep2 (&io->err[1]);
  closep2 (&io->in[0]);
}

static void
io_close (struct io *io)
{
  int i;
  for (i = 0; i < 2; i++)
    {
      closep2 (&io->out[i]);
      closep2 (&io->err[i]);
      closep2 (&io->in[i]);
    }
  closep2 (&io->pty);
  ab_caller_tty_restore (&io->caller);
}

/* The program got a terminal we relay (master: ours now).  Its output
   goes to our stdout, captured as `stdout` when the caller captures;
   our stdin, or the stdin_data, goes to it. */
static int
io_relay_tty (struct io *io, const struct ab_supervise_opts *so, int *master, ab_error_t *err)
{
  io->pty = *master;
  *master = -1;
  io->tee_out = so->capture && !so->passthrough ? -1 : 1;
  /* The terminal takes our stdin, or the stdin_data: a pipe io_open made
     for either is not the program's. */
  closep2 (&io->in[1]);
  io->in_relay = false;
  if (so->stdin_data)
    {
      io->pend = so->stdin_data;
      io->pend_len = so->stdin_len;
    }
  else
    io->stdin_open = true;
  ab_caller_tty_resize (&io->caller, io->pty);
  return ab_caller_tty_raw (&io->caller, err);
}

/* Copy input to the terminal (or the relayed stdin's pipe), as much as
   it takes now. */
static void
input_write (struct io *io, int fd)
{
  ssize_t w = write (fd, io->pend, io->pend_len);

  if (w > 0)
    {
      io->pend += w;
      io->pend_len -= (size_t) w;
    }
  else if (w < 0 && errno != EAGAIN && errno != EINTR)
    {
      /* The terminal is gone (EIO), or no one reads the pipe (EPIPE): the
         input goes nowhere. */
      io->pend_len = 0;
      io->stdin_open = false;
    }
}

/* One read of our stdin (poll said it is ready: a terminal or pipe does
   not block).  Our stdin is not made non-blocking: its file description
   may be the caller's terminal, shared with the caller's shell. */
static void
stdin_read (struct io *io)
{
  ssize_t r = read (0, io->pbuf, sizeof io->pbuf);

  if (r > 0)
    {
      io->pend = io->pbuf;
      io->pend_len = (size_t) r;
    }
  else if (r == 0 || (errno != EINTR && errno != EAGAIN))
    io->stdin_open = false;
}

/* The program's stdin pipe can take more: the stdin_data, or what was
   read of our stdin (in_relay).  The pipe closes after the stdin_data, or
   when the program no longer reads it. */
static void
stdin_pipe_write (struct io *io, const struct ab_supervise_opts *so)
{
  ssize_t n;

  if (io->in_relay)
    {
      input_write (io, io->in[1]);
      return;
    }
  n = write (io->in[1], so->stdin_data + io->in_off, so->stdin_len - io->in_off);
  if (n > 0)
    io->in_off += (size_t) n;
  if ((n < 0 && errno != EAGAIN) || io->in_off >= so->stdin_len)
    closep2 (&io->in[1]);
}

/* Drain a pipe (or a pty master) without blocking; returns false at EOF
   (a master reads EIO once every holder of the slave closed it, after the
   data they wrote). */
static bool
drain (int fd, struct ab_stream *s, uint64_t max, int *tee, unsigned *limits)
{
  char buf[65536];

  for (;;)
    {
      ssize_t n = read (fd, buf, sizeof buf);
      if (n > 0)
        {
          stream_add (s, buf, (size_t)n, max, tee, limits);
          continue;
        }
      if (n == 0)
        return false;
      if (errno == EINTR)
        continue;
      return errno == EAGAIN;
    }
}

struct unit
{
  pid_t pid;
  int pidfd;
  void (*kill_all) (void *, bool reaped); /* reaped: the process itself is gone */
  void (*term_all) (void *);              /* SIGTERM to every process, at the deadline */
  int (*count) (void *);                  /* processes left, -1 unknown (NULL: not asked) */
  /* Once the process itself ended: how many it left that still run, -1
     unknown (NULL: none can outlive it, its end ends them) */
  int (*left) (void *);
  unsigned (*limits_now) (void *);        /* the cgroup's limits hit so far (AB_LIMIT_*) */
  /* Once the process ended and what it left was killed: kill what still
     holds these pipes open (NULL: nothing can, the kill reached all) */
  void (*kill_pipe_holders) (void *, const ino_t *pipes, size_t n);
  void *arg;
};

/* The limits a cgroup's counters say were hit since `before` (NULL: since
   it was made). */
static unsigned
limits_of (struct ab_cgroup *cg, const struct ab_cgroup_stats *before)
{
  struct ab_cgroup_stats st;
  unsigned hits = 0;

  if (cg == NULL || ab_cgroup_stats (cg, &st, NULL) < 0)
    return 0;
  if (st.oom_kills > (before ? before->oom_kills : 0))
    hits |= AB_LIMIT_MEMORY;
  if (st.pids_max_events > (before ? before->pids_max_events : 0))
    hits |= AB_LIMIT_PIDS;
  return hits;
}

/* In sigwaitinfo or sigtimedwait: while it waits, the kernel unblocks the
   signals it waits for, and SigBlk no longer shows them (the kernel still
   queues them: it also looks at the mask saved for the wait). */
static bool
in_sigtimedwait (pid_t pid)
{
  _cleanup_free_ char *buf = NULL;
  char path[64];
  ab_error_t e = { 0 };
  long nr;

  snprintf (path, sizeof path, "/proc/%d/syscall", (int)pid);
  return ab_read_file_at (AT_FDCWD, path, 4096, &buf, NULL, &e) == 0 && sscanf (buf, "%ld", &nr) == 1
         && nr == SYS_rt_sigtimedwait;
}

/* The mask of /proc/PID/status's line `key` ("SigCgt") into *v. */
static bool
status_mask (const char *st, const char *key, unsigned long long *v)
{
  char line[16];
  const char *at;

  snprintf (line, sizeof line, "\n%s:", key);
  return (at = strstr (st, line)) != NULL && sscanf (at + strlen (line), " %llx", v) == 1;
}

/* Whether process `pid` reads `sig` from a signalfd (as catatonit does):
   1 yes, 0 no, -1 its fds cannot be read (not ours to look at). */
static int
signalfd_for (pid_t pid, int sig)
{
  char path[64];
  struct dirent *e;
  DIR *d;
  int found = 0;

  snprintf (path, sizeof path, "/proc/%d/fd", (int)pid);
  d = opendir (path);
  if (d == NULL)
    return -1;
  while (found == 0 && (e = readdir (d)) != NULL)
    {
      _cleanup_free_ char *info = NULL;
      char link[32], where[96];
      unsigned long long mask;
      const char *at;
      ab_error_t ignored = { 0 };
      ssize_t n;

      snprintf (where, sizeof where, "/proc/%d/fd/%s", (int)pid, e->d_name);
      n = readlink (where, link, sizeof link - 1);
      if (e->d_name[0] == '.' || n <= 0 || (link[n] = '\0', strcmp (link, "anon_inode:[signalfd]") != 0))
        continue;
      snprintf (where, sizeof where, "/proc/%d/fdinfo/%s", (int)pid, e->d_name);
      if (ab_read_file_at (AT_FDCWD, where, 4096, &info, NULL, &ignored) == 0
          && (at = strstr (info, "sigmask:")) != NULL && sscanf (at + strlen ("sigmask:"), " %llx", &mask) == 1
          && (mask & (1ull << (sig - 1))))
        found = 1;
    }
  closedir (d);
  return found;
}

/* The program is the init of its own PID namespace and neither catches nor
   ignores `sig`, nor takes it synchronously (sigwaitinfo, a signalfd):
   the kernel drops it when sent (an init gets only the signals it has a
   handler for), so the deadline's SIGTERM, or a SIGINT forwarded from the
   caller's Ctrl-C, does nothing to it.  Blocked is not enough to keep it:
   a shell blocks every signal for a moment each time it looks at its jobs,
   and one unblocked with no handler is dropped then.  Read from
   /proc/PID/status (NSpid's last field, the SigCgt, SigIgn and SigBlk
   masks), /proc/PID/syscall and its fds. */
static bool
init_drops (pid_t pid, int sig)
{
  _cleanup_free_ char *st = NULL;
  char path[64];
  const char *ns, *nl;
  unsigned long long caught, ignored, blocked;
  ab_error_t e = { 0 };

  snprintf (path, sizeof path, "/proc/%d/status", (int)pid);
  if (ab_read_file_at (AT_FDCWD, path, 1u << 16, &st, NULL, &e) < 0 || (ns = strstr (st, "\nNSpid:")) == NULL
      || !status_mask (st, "SigCgt", &caught) || !status_mask (st, "SigIgn", &ignored)
      || !status_mask (st, "SigBlk", &blocked))
    return false;
  nl = strchr (ns + 1, '\n');
  if (nl == NULL)
    nl = ns + strlen (ns);
  while (nl > ns && (nl[-1] == ' ' || nl[-1] == '\t'))
    nl--;
  /* the last pid of the list: its pid in its own namespace */
  if (!(nl - ns >= 2 && nl[-1] == '1' && (nl[-2] == '\t' || nl[-2] == ' ')))
    return false;
  if ((caught | ignored) & (1ull << (sig - 1)) || in_sigtimedwait (pid))
    return false;
  return !(blocked & (1ull << (sig - 1))) || signalfd_for (pid, sig) == 0;
}

/* A signal whose default action ends a process (not one that is ignored
   or stops it by default). */
static bool
default_ends (int sig)
{
  switch (sig)
    {
    case SIGCHLD:
    case SIGCONT:
    case SIGURG:
    case SIGWINCH:
    case SIGSTOP:
    case SIGTSTP:
    case SIGTTIN:
    case SIGTTOU:
      return false;
    default:
      return sig > 0 && sig < 65;
    }
}

/* The wall-clock limit: where the run is in it. */
struct deadline
{
  uint64_t term;      /* SIGTERM to every process (0: none, or sent) */
  uint64_t kill;      /* the grace is over: kill the whole unit (0: not yet, or done) */
  bool init_default;  /* the program is an init that drops SIGTERM (init_drops) */
  bool left;          /* it ended within the grace; what it left has the rest of it */
};

static uint64_t
add_ms (uint64_t t0, uint64_t ms)
{
  /* Saturated: a limit of centuries (any u64 of ms parses) must not wrap
     around to a deadline in the past. */
  return ms > (UINT64_MAX - t0) / 1000000ull ? UINT64_MAX : t0 + ms * 1000000ull;
}

/* The deadline came: SIGTERM to every process, and the grace starts (none:
   the unit is killed now). */
static void
deadline_reached (struct deadline *d, struct unit *u, const struct ab_supervise_opts *so, struct ab_outcome *out,
                  uint64_t now)
{
  /* What was hit before the deadline came first: the likely reason the
     command never finished (a fork bomb at the pids limit). */
  if (u->limits_now)
    out->limits_before_timeout = u->limits_now (u->arg) | (out->limits_hit & ~AB_LIMIT_OUTPUT);
  out->limits_hit |= AB_LIMIT_TIMEOUT;
  out->reason = AB_REASON_TIMEOUT;
  out->timeout_ms = so->timeout_ms;
  out->grace_ms = so->grace_ms;
  d->term = 0;
  if (so->grace_ms == 0 || u->term_all == NULL)
    {
      out->timeout_killed = true;
      u->kill_all (u->arg, false);
      return;
    }
  d->init_default = u->count != NULL && init_drops (u->pid, SIGTERM);
  /* Anywhere else such an init would die of the SIGTERM at once: stopped
     (SIGSTOP reaches an init from outside its namespace), it cannot go on
     to its script's next command once the child it waits for is gone. */
  if (d->init_default)
    syscall (SYS_pidfd_send_signal, u->pidfd, SIGSTOP, NULL, 0);
  u->term_all (u->arg);
  d->kill = add_ms (now, so->grace_ms);
}

/* During the grace.  An init that ignores SIGTERM would have died of it
   anywhere else: it waits stopped (deadline_reached), and once the other
   processes are gone (their own SIGTERM let them clean up) it gets the
   default action of SIGTERM -- ended, reported as SIGTERM -- instead of
   waiting out the grace.  One that set a handler after it was looked at
   is let go on (SIGCONT): its SIGTERM is pending if the handler came
   before the signal was sent, else it has none and runs until the end of
   the grace, when whatever runs is killed. */
static void
grace_tick (struct deadline *d, struct unit *u, struct ab_outcome *out, uint64_t now)
{
  if (now >= d->kill)
    {
      d->kill = 0;
      out->timeout_killed = true;
      u->kill_all (u->arg, false);
    }
  else if (d->init_default && u->count (u->arg) == 1)
    {
      d->init_default = false;
      if (!init_drops (u->pid, SIGTERM))
        {
          syscall (SYS_pidfd_send_signal, u->pidfd, SIGCONT, NULL, 0);
          return;
        }
      d->kill = 0;
      out->init_signal = SIGTERM;
      u->kill_all (u->arg, false);
    }
}

/* The process ended within the grace, and left processes that got the
   SIGTERM too: they have the rest of the grace to clean up and end, as
   the processes of a container whose init waits stopped do.  Whatever
   still runs at the end of it is killed. */
static void
left_tick (struct deadline *d, struct unit *u, struct ab_outcome *out, uint64_t now)
{
  if (now < d->kill && u->left (u->arg) > 0)
    return;
  if (now >= d->kill)
    out->timeout_killed = true;
  d->left = false;
  d->kill = 0;
  u->kill_all (u->arg, true);
}

/* poll's timeout (ms) until the next step of the deadline; -1: none. */
static int
deadline_wait (const struct deadline *d, uint64_t now)
{
  uint64_t next = d->term ? d->term : d->kill;

  if (next == 0)
    return -1;
  if (d->kill && (d->init_default || d->left) && d->kill - now > 50 * 1000000ull)
    return 50; /* look at what is left every 50 ms */
  if (now >= next)
    return 0;
  /* poll takes an int: past 24 days, wake up and look again */
  return (next - now) / 1000000ull >= INT_MAX ? INT_MAX : (int)((next - now) / 1000000ull) + 1;
}

static void
reap_orphans (pid_t keep)
{
  /* As subreaper we inherit orphans of a container without a pid namespace
     of its own; never reap the supervised process here. */
  for (;;)
    {
      siginfo_t info;
      memset (&info, 0, sizeof info);
      if (waitid (P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) < 0 || info.si_pid == 0 || info.si_pid == keep)
        return;
      waitpid (info.si_pid, NULL, WNOHANG);
    }
}

/* Whether the process pid, exited but not yet reaped, was killed by the
   kernel at its RLIMIT_CPU hard limit.  The kernel sends SIGXCPU at the
   soft limit, but not to the init of a pid namespace without a handler for
   it (the program of a sandbox), which runs on until the SIGKILL at the
   hard limit: that one must read as the CPU limit, not as a bare kill.
   The kernel compares the process's PROF clock (user + system as ticks
   sampled it; the adjusted times of /proc and the cgroup lag it, by a fifth
   under load) with the hard limit, and both are still there while the
   zombie waits for us; its pid cannot be reused before we reap it. */
static bool
killed_at_cpu_limit (pid_t pid)
{
  /* The CPUCLOCK_PROF clock of process pid, in the kernel's encoding (as
     glibc's clock_getcpuclockid builds the CPUCLOCK_SCHED one). */
  clockid_t prof = (clockid_t)(~(unsigned int)pid << 3);
  _cleanup_free_ char *limits = NULL;
  char path[64], soft[32], hard[32];
  const char *line;
  struct timespec ts;
  uint64_t limit;

  snprintf (path, sizeof path, "/proc/%d/limits", (int)pid);
  if (ab_read_file_at (AT_FDCWD, path, 1u << 16, &limits, NULL, NULL) < 0
      || (line = strstr (limits, "\nMax cpu time ")) == NULL
      || sscanf (line + strlen ("\nMax cpu time "), "%31s %31s", soft, hard) != 2
      || ab_parse_u64 (hard, &limit) < 0)
    return false; /* no limit ("unlimited") */
  return clock_gettime (prof, &ts) == 0 && (uint64_t)ts.tv_sec >= limit;
}

struct sigs
{
  int fd;
  int cancel_fd; /* SIGUSR1 alone, polled by the waits of the setup (ab_cancel_fd) */
  sigset_t old;
};

/* Signals for the program, taken synchronously from before the container
   is created: one that arrives during setup waits, and is forwarded once the
   program runs, instead of killing us half-way and abandoning the container
   (its state, cgroups and processes).  Threads started during create (the
   egress proxy's) inherit the mask, so none of them can take a signal meant
   for the container and die of it.  The container's process and the hooks
   reset mask and dispositions before they exec. */
static void
sigs_block (struct sigs *s)
{
  sigset_t mask;

  sigemptyset (&mask);
  sigaddset (&mask, SIGINT);
  sigaddset (&mask, SIGTERM);
  sigaddset (&mask, SIGHUP);
  sigaddset (&mask, SIGQUIT);
  sigaddset (&mask, SIGUSR1);
  sigaddset (&mask, SIGCHLD);
  /* Every other signal a caller may send, as runc forwards them (all but
     CHLD, WINCH and URG): left to their default action, they would end
     agentbox and, with it, the container, without a record.  Not the
     faults (SEGV, BUS, ...), which are ours, nor XCPU and XFSZ, which our
     own limits send us, nor glibc's two reserved real-time signals. */
  static const int forwarded[] = { SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGPWR,  SIGSTKFLT, SIGIO,
                                   SIGTSTP, SIGTTIN, SIGTTOU,   SIGCONT, SIGABRT };
  for (size_t i = 0; i < AB_ARRAY_SIZE (forwarded); i++)
    sigaddset (&mask, forwarded[i]);
  for (int rt = SIGRTMIN; rt <= SIGRTMAX; rt++)
    sigaddset (&mask, rt);
  /* Not the program's either: with a relayed terminal it means "copy the
     caller's window size", and the pty signals the program itself.  Its
     default disposition is to be ignored, so without one nothing changes. */
  sigaddset (&mask, SIGWINCH);
  /* A reader of our stdout that goes away must not kill us (and abandon the
     container): the copy fails with EPIPE instead, and the signal is read
     and dropped. */
  sigaddset (&mask, SIGPIPE);
  sigprocmask (SIG_BLOCK, &mask, &s->old);
  s->fd = signalfd (-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  /* A cancel during the setup stops it where it waits long (a hook), and
     the program never starts (cancel_pending). */
  sigemptyset (&mask);
  sigaddset (&mask, SIGUSR1);
  s->cancel_fd = signalfd (-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  ab_cancel_watch (s->cancel_fd);
}

/* The caller gave up (SIGUSR1), and the signal waits to be read. */
static bool
cancel_pending (void)
{
  sigset_t pending;

  return sigpending (&pending) == 0 && sigismember (&pending, SIGUSR1) == 1;
}

static void
sigs_restore (struct sigs *s)
{
  if (s->fd >= 0)
    {
      struct signalfd_siginfo si[8];
      /* What is still pending was meant for a program that is gone now.
         One read takes all there is (one SIGCHLD, as a rule) unless the
         buffer fills. */
      while (read (s->fd, si, sizeof si) == (ssize_t)sizeof si)
        ;
      close (s->fd);
      sigprocmask (SIG_SETMASK, &s->old, NULL);
    }
  s->fd = -1;
  ab_cancel_watch (-1);
  ab_closep_now (&s->cancel_fd);
}

/* The descriptors watch waits on in one turn, and where each one is. */
struct watch_set
{
  struct pollfd p[7];
  int n, ipid, isig, iout, ierr, iin, ipty, istdin;
};

static int
watch_add (struct watch_set *w, int fd, short events)
{
  w->p[w->n] = (struct pollfd){ .fd = fd, .events = events };
  return w->n++;
}

static void
watch_fill (struct watch_set *w, const struct unit *u, const struct io *io, const struct sigs *sg, bool exited,
            bool out_open, bool err_open, bool pty_open)
{
  *w = (struct watch_set){ .ipid = -1, .isig = -1, .iout = -1, .ierr = -1, .iin = -1, .ipty = -1, .istdin = -1 };
  if (!exited)
    w->ipid = watch_add (w, u->pidfd, POLLIN);
  if (sg->fd >= 0)
    w->isig = watch_add (w, sg->fd, POLLIN);
  if (out_open)
    w->iout = watch_add (w, io->out[0], POLLIN);
  if (err_open)
    w->ierr = watch_add (w, io->err[0], POLLIN);
  /* Input waits in pend until the terminal or the pipe takes it; no
     more is read meanwhile, so a program that reads nothing stalls the
     caller's input, never the relay of its output. */
  if (io->in[1] >= 0 && (!io->in_relay || io->pend_len))
    w->iin = watch_add (w, io->in[1], POLLOUT);
  if (pty_open)
    w->ipty = watch_add (w, io->pty, (short) (POLLIN | (io->pend_len ? POLLOUT : 0)));
  if ((pty_open || io->in[1] >= 0) && io->stdin_open && io->pend_len == 0 && !exited)
    w->istdin = watch_add (w, 0, POLLIN);
}

/* The signals that came: SIGCHLD reaps orphans, SIGWINCH resizes the
   terminal, SIGUSR1 cancels the run, the others go to the program.  One
   the program, the init of its pid namespace, would drop though its
   default action ends a process (a Ctrl-C to `run -- sleep 9`) gets that
   action from us: the container ends, reported as killed by it. */
static void
watch_signals (struct unit *u, struct io *io, struct sigs *sg, struct ab_outcome *out, bool exited)
{
  struct signalfd_siginfo si;

  while (read (sg->fd, &si, sizeof si) == (ssize_t) sizeof si)
    {
      if (si.ssi_signo == SIGCHLD)
        reap_orphans (u->pid);
      else if (si.ssi_signo == SIGPIPE)
        continue; /* ours, not the program's */
      else if (si.ssi_signo == SIGWINCH)
        ab_caller_tty_resize (&io->caller, io->pty);
      else if (si.ssi_signo == SIGUSR1)
        {
          out->canceled = true;
          u->kill_all (u->arg, exited);
        }
      else if (exited && default_ends ((int) si.ssi_signo))
        u->kill_all (u->arg, true); /* what it left, in the rest of a grace, ends now */
      else if (!exited)
        {
          int sig = (int) si.ssi_signo;
          bool dropped = u->count != NULL && default_ends (sig) && init_drops (u->pid, sig);
          syscall (SYS_pidfd_send_signal, u->pidfd, sig, NULL, 0);
          if (dropped && out->init_signal == 0)
            {
              out->init_signal = sig;
              u->kill_all (u->arg, false);
            }
        }
    }
}

/* The process ended: reap it (a SIGKILL at the CPU limit is named). */
static int
watch_reap (struct unit *u, struct ab_outcome *out, siginfo_t *info, ab_error_t *err)
{
  memset (info, 0, sizeof *info);
  if (waitid (P_PIDFD, (id_t)u->pidfd, info, WEXITED | WNOWAIT) == 0 && info->si_code == CLD_KILLED
      && info->si_status == SIGKILL && out->reason != AB_REASON_TIMEOUT && !out->canceled
      && killed_at_cpu_limit (u->pid))
    out->limits_hit |= AB_LIMIT_CPU;
  while (waitid (P_PIDFD, (id_t) u->pidfd, info, WEXITED) < 0)
    if (errno != EINTR)
      return ab_error_set (err, errno, "wait for the process");
  return 0;
}

/* Watch until the process is gone and its output drained. */
static int
watch (struct unit *u, const struct ab_supervise_opts *so, struct io *io, struct sigs *sg, struct ab_outcome *out,
       siginfo_t *info, ab_error_t *err)
{
  struct deadline dl = { 0 };
  bool exited = false, out_open = io->out[0] >= 0, err_open = io->err[0] >= 0, pty_open = io->pty >= 0;
  struct watch_set w;

  if (so->timeout_ms)
    dl.term = add_ms (ab_now_monotonic_ns (), so->timeout_ms);
  if (out_open)
    ab_set_nonblock (io->out[0], true);
  if (err_open)
    ab_set_nonblock (io->err[0], true);
  if (io->in[1] >= 0)
    ab_set_nonblock (io->in[1], true);

  while (!exited || out_open || err_open || pty_open || dl.left)
    {
      int timeout = -1;

      watch_fill (&w, u, io, sg, exited, out_open, err_open, pty_open);
      if (!exited && (dl.term || dl.kill))
        {
          uint64_t now = ab_now_monotonic_ns ();
          if (dl.term && now >= dl.term)
            deadline_reached (&dl, u, so, out, now);
          else if (dl.kill)
            grace_tick (&dl, u, out, now);
          timeout = deadline_wait (&dl, now);
        }
      else if (dl.left)
        {
          uint64_t now = ab_now_monotonic_ns ();
          left_tick (&dl, u, out, now);
          timeout = dl.left ? deadline_wait (&dl, now) : 0; /* ended: look again at once */
        }
      if (poll (w.p, (nfds_t) w.n, timeout) < 0)
        {
          if (errno == EINTR)
            continue;
          u->kill_all (u->arg, exited);
          return ab_error_set (err, errno, "poll");
        }
      if (w.isig >= 0 && (w.p[w.isig].revents & POLLIN))
        watch_signals (u, io, sg, out, exited);
      if (w.iin >= 0 && w.p[w.iin].revents)
        stdin_pipe_write (io, so);
      if (w.istdin >= 0 && w.p[w.istdin].revents)
        stdin_read (io);
      /* our stdin ended (or the program closed its end): so does its */
      if (io->in_relay && !io->stdin_open && io->pend_len == 0)
        closep2 (&io->in[1]);
      if (w.ipty >= 0 && (w.p[w.ipty].revents & POLLOUT) && io->pend_len)
        input_write (io, io->pty);
      if (w.ipty >= 0 && (w.p[w.ipty].revents & (POLLIN | POLLHUP | POLLERR)))
        pty_open = drain (io->pty, so->capture ? &out->out : NULL, so->max_output, &io->tee_out,
                          &out->limits_hit);
      if (w.iout >= 0 && w.p[w.iout].revents)
        out_open = drain (io->out[0], so->capture ? &out->out : NULL, so->max_output, &io->tee_out,
                          &out->limits_hit);
      if (w.ierr >= 0 && w.p[w.ierr].revents)
        err_open = drain (io->err[0], so->capture ? &out->err : NULL, so->max_output, &io->tee_err,
                          &out->limits_hit);
      if (w.ipid >= 0 && (w.p[w.ipid].revents & POLLIN))
        {
          if (watch_reap (u, out, info, err) < 0)
            return -1;
          exited = true;
          /* What it left behind goes with it (and would hold our pipes),
             but for the rest of a grace */
          dl.left = dl.kill && u->left && u->left (u->arg) > 0;
          if (!dl.left)
            u->kill_all (u->arg, true);
          if (!dl.left && u->kill_pipe_holders && (out_open || err_open))
            {
              ino_t pipes[2];
              size_t n = 0;
              struct stat st;
              if (out_open && fstat (io->out[0], &st) == 0)
                pipes[n++] = st.st_ino;
              if (err_open && fstat (io->err[0], &st) == 0)
                pipes[n++] = st.st_ino;
              u->kill_pipe_holders (u->arg, pipes, n);
            }
        }
    }
  return 0;
}

static void
outcome_from_siginfo (struct ab_outcome *out, const siginfo_t *info)
{
  out->exited = info->si_code == CLD_EXITED;
  if (out->exited)
    {
      out->exit_code = info->si_status;
      if (out->reason != AB_REASON_TIMEOUT)
        out->reason = AB_REASON_EXITED;
    }
  else
    {
      out->signal = info->si_status;
      /* the default action the kernel withholds from an init, applied by
         us (grace_tick, watch_signals) */
      if (out->init_signal && out->signal == SIGKILL)
        out->signal = out->init_signal;
      out->core_dumped = info->si_code == CLD_DUMPED;
      if (out->reason != AB_REASON_TIMEOUT)
        out->reason = AB_REASON_SIGNALED;
      if (out->signal == SIGXCPU)
        out->limits_hit |= AB_LIMIT_CPU;
      if (out->signal == SIGXFSZ)
        out->limits_hit |= AB_LIMIT_FILE_SIZE;
    }
  out->exit_status = out->init_signal && !out->exited && out->signal == out->init_signal
                         ? 128 + out->init_signal
                         : ab_exit_status_from_siginfo (info);
}

/* The program could not be executed: a result the caller can act on (like
   a shell's 127), not a broken sandbox. */
static void
outcome_exec_failed (struct ab_outcome *out, const struct ab_supervise_opts *so, ab_error_t *err)
{
  char *line = xasprintf ("agentbox: %s\n", err->msg);
  int no_tee = -1;

  out->reason = AB_REASON_EXITED;
  out->exited = true;
  out->exit_code = out->exit_status = (err->errnum == ENOENT || err->errnum == ENOTDIR) ? 127 : 126;
  stream_add (&out->err, line, strlen (line), so->max_output, &no_tee, &out->limits_hit);
  ab_write_all (2, line, strlen (line));
  free (line);
  ab_error_clear (err);
}

static void
outcome_stats (struct ab_outcome *out, struct ab_cgroup *cg, const struct ab_cgroup_stats *before)
{
  struct ab_cgroup_stats st;

  if (cg == NULL || ab_cgroup_stats (cg, &st, NULL) < 0)
    return;
  out->stats_known = true;
  out->memory_peak = st.memory_peak;
  out->cpu_user_usec = st.cpu_user_usec - (before ? before->cpu_user_usec : 0);
  out->cpu_system_usec = st.cpu_system_usec - (before ? before->cpu_system_usec : 0);
  if (st.oom_kills > (before ? before->oom_kills : 0))
    {
      out->limits_hit |= AB_LIMIT_MEMORY;
      /* Killed by the OOM killer: report it as such, not as a bare SIGKILL. */
      if (!out->exited && out->signal == SIGKILL && out->reason != AB_REASON_TIMEOUT)
        out->reason = AB_REASON_OOM;
    }
  if (st.pids_max_events > (before ? before->pids_max_events : 0))
    out->limits_hit |= AB_LIMIT_PIDS;
}

/* The filesystem limits, seen after the run (fswatch.h): a full bounded
   tmpfs; a file cut at the file-size limit, looked for only when the
   command failed (then the cut is a likely cause; a search of the
   workspace is not worth its time on every success). */
static void
outcome_fs (struct ab_outcome *out, const struct ab_fswatch *fw)
{
  bool failed = !out->exited || out->exit_code != 0 || out->reason == AB_REASON_TIMEOUT;

  out->file_size_max = fw->file_size;
  if (ab_fswatch_full (fw, &out->full_mounts) > 0)
    out->limits_hit |= AB_LIMIT_TMPFS;
  if (failed && !(out->limits_hit & AB_LIMIT_FILE_SIZE) && ab_fswatch_cut_file (fw))
    out->limits_hit |= AB_LIMIT_FILE_SIZE;
}

/* An overlay workspace's change set, for the record: what the program
   changed, and whether it ran out of room. */
static void
outcome_workspace (struct ab_outcome *out, const struct ab_changeset *cs)
{
  bool full;

  if (cs == NULL)
    return;
  out->workspace_json = ab_changeset_record_json (cs, &full);
  if (full)
    out->limits_hit |= AB_LIMIT_WORKSPACE;
}

static void
setup_failed (struct ab_outcome *out, const ab_error_t *err, uint64_t t0)
{
  out->reason = AB_REASON_SETUP_FAILED;
  out->exit_status = 125;
  out->setup_error = *err;
  out->duration_ns = ab_now_monotonic_ns () - t0;
}

/* ---- run ----------------------------------------------------------------- */

static void
outcome_rootless (struct ab_outcome *out, const struct ab_container *c)
{
  const char *path = c->cg ? ab_cgroup_v2_path (c->cg) : NULL;

  out->rootless = c->plan->rootless;
  out->id_mapping = ab_idmap_how_name (c->plan->ids.how);
  out->cgroup = xstrdup (path ? path : "none");
}

static void
container_kill_all (void *arg, bool reaped)
{
  struct ab_container *c = arg;
  ab_error_t ignored = { 0 };

  if (c->cg)
    ab_cgroup_kill (c->cg, SIGKILL, &ignored);
  /* A reaped process has no one left to signal through its pidfd. */
  if (!reaped)
    syscall (SYS_pidfd_send_signal, c->pidfd, SIGKILL, NULL, 0);
  /* No cgroup (rootless, none delegated): without a pid namespace of its
     own, a daemon the program left (setsid, double fork) would outlive
     the run and hold our output pipes.  We are the subreaper, so every
     descendant of ours is the container's: kill them all, as the
     fallback does (the init itself stays unreaped for our wait).  With
     one, the init's SIGKILL (or its exit, when reaped) is the kernel's
     SIGKILL to every member, and waiting for the init waits for them:
     no walk of /proc. */
  if (c->cg == NULL && !c->plan->own_pid_ns)
    ab_fallback_kill_all (0, reaped ? -1 : c->pid);
}

/* SIGTERM to every process of the container.  Without a cgroup (rootless,
   none delegated), to every process of its pid namespace, one an `exec`
   put there too (ab_pidns_signal); without a pid namespace either, to our
   descendants, as container_kill_all's SIGKILL. */
static void
container_term_all (void *arg)
{
  struct ab_container *c = arg;
  ab_error_t ignored = { 0 };

  if (c->cg && ab_cgroup_kill (c->cg, SIGTERM, &ignored) == 0)
    return;
  syscall (SYS_pidfd_send_signal, c->pidfd, SIGTERM, NULL, 0);
  if (c->cg == NULL && c->plan->own_pid_ns)
    ab_pidns_signal (c->pid, SIGTERM, &ignored);
  else if (c->cg == NULL)
    ab_signal_descendants (getpid (), SIGTERM);
}

static unsigned
container_limits (void *arg)
{
  return limits_of (((struct ab_container *)arg)->cg, NULL);
}

/* The limits of the container's linux.resources, for the record to name. */
static void
outcome_limits_in_force (struct ab_outcome *out, const struct ab_plan *p)
{
  const struct ab_resources *r = p->resources;

  if (r && r->pids_set && r->pids_limit.set && r->pids_limit.v > 0)
    out->pids_max = r->pids_limit.v;
  if (r && r->memory_set && r->memory.limit.set && r->memory.limit.v > 0)
    out->memory_max = (uint64_t)r->memory.limit.v;
}

/* How many processes a cgroup holds, -1 unknown. */
static int
cgroup_count (struct ab_cgroup *cg)
{
  _cleanup_free_ pid_t *pids = NULL;
  ab_error_t ignored = { 0 };
  size_t n = 0;

  if (cg == NULL || ab_cgroup_pids (cg, &pids, &n, &ignored) < 0)
    return -1;
  return (int)n;
}

static int
container_count (void *arg)
{
  struct ab_container *c = arg;
  ab_error_t ignored = { 0 };

  /* the init and the live processes of its pid namespace (zombies it
     does not reap while stopped are not counted) */
  if (c->cg == NULL && c->plan->own_pid_ns)
    {
      int others = ab_pidns_signal (c->pid, 0, &ignored);
      return others < 0 ? -1 : 1 + others;
    }
  return cgroup_count (c->cg);
}

/* Once the init ended: what still runs of a container without a pid
   namespace of its own (with one, the init's end was the end of them
   all).  Its cgroup's processes; without a cgroup, our descendants (we
   are the subreaper, container_kill_all). */
static int
container_left (void *arg)
{
  struct ab_container *c = arg;

  if (c->plan->own_pid_ns)
    return 0;
  if (c->cg == NULL)
    return (int) ab_signal_descendants (getpid (), 0);
  return cgroup_count (c->cg);
}

/* What the container's run comes to, read after its process ended and
   before the container is destroyed. */
static void
outcome_of_container (struct ab_outcome *out, struct ab_container *c, const struct ab_supervise_opts *so,
                      const struct ab_fswatch *fw, uint64_t t0)
{
  out->duration_ns = ab_now_monotonic_ns () - t0;
  outcome_stats (out, c->cg, NULL);
  outcome_fs (out, fw);
  out->violations_json = ab_net_violations_json (c, !so->no_violations);
  out->egress_json = ab_net_decisions_json (c);
  /* only a record reports the change list (a walk of what changed) */
  if (!so->no_violations)
    outcome_workspace (out, c->ws);
}

/* run --no-subreaper (runc): orphans of a container without a pid
   namespace go to the host's reaper, not to us.  Only where killing the
   whole container does not need them to be our descendants: with neither
   a pid namespace nor a cgroup, the subreaper is how they are found
   (container_kill_all), and a daemon the program left would outlive the
   run. */
static int
drop_subreaper (const struct ab_container *c, ab_error_t *err)
{
  if (c->cg == NULL && !c->plan->own_pid_ns)
    return ab_error_setc (err, AB_EC_CONFIG, 0,
                          "--no-subreaper: container `%s` has neither a pid namespace nor a cgroup, and without the "
                          "subreaper what it leaves behind would outlive the run",
                          c->id);
  prctl (PR_SET_CHILD_SUBREAPER, 0);
  return 0;
}

int
ab_supervise_run (const struct ab_create_opts *co_in, const struct ab_supervise_opts *so, struct ab_outcome *out,
                  ab_error_t *err)
{
  struct ab_create_opts co = *co_in;
  struct ab_supervise_opts so_run;
  struct ab_container *c = NULL;
  struct sigs sg = { .fd = -1, .cancel_fd = -1 };
  struct io io;
  uint64_t t0 = ab_now_monotonic_ns ();
  struct unit u;
  siginfo_t info;
  struct ab_fswatch fw = { 0 };
  int r = -1;

  memset (out, 0, sizeof *out);
  out->id = xstrdup (co.id);
  io_init (&io);
  if (io_open (&io, so, co.stdio, err) < 0)
    {
      ab_bundle_free (co.prebuilt);
      goto failed;
    }
  prctl (PR_SET_CHILD_SUBREAPER, 1);
  sigs_block (&sg);
  co.timeout_ms = so->timeout_ms;
  co.grace_set = so->grace_set;
  co.grace_ms = so->grace_ms;
  co.relay_tty = so->relay_tty;
  if (ab_container_create (&co, &c, err) < 0)
    goto failed;
  /* The wall-clock limit is the plan's: the smaller of --timeout and the
     config's dev.agentbox.timeout. */
  so_run = *so;
  so_run.timeout_ms = c->plan->timeout_ms;
  so_run.grace_ms = c->plan->grace_ms;
  so = &so_run;
  if (so->no_subreaper && drop_subreaper (c, err) < 0)
    goto failed_container;
  out->degraded = c->degraded;
  memset (&c->degraded, 0, sizeof c->degraded);
  outcome_rootless (out, c);
  outcome_limits_in_force (out, c->plan);
  /* created, not started: the mounts are there, nothing of the program ran */
  if (!so->no_violations)
    ab_fswatch_open (&fw, c->pid, c->plan);
  io_close_child_ends (&io);
  ab_trace ("created");
  if (c->pty_master >= 0)
    {
      ab_caller_tty_find (&io.caller);
      if (io_relay_tty (&io, so, &c->pty_master, err) < 0)
        goto failed_container;
    }
  if (cancel_pending ())
    goto canceled;
  if (ab_container_start_local (c, err) < 0)
    {
      if (err->cls != AB_EC_EXEC)
        goto failed_container;
      outcome_exec_failed (out, so, err);
      ab_container_wait (c, &info, NULL);
    }
  else
    {
      ab_trace ("started (exec observed)");
      u = (struct unit){ .pid = c->pid, .pidfd = c->pidfd, .kill_all = container_kill_all,
                         .term_all = container_term_all, .count = container_count,
                         .left = container_left, .limits_now = container_limits, .arg = c };
      if (watch (&u, so, &io, &sg, out, &info, err) < 0)
        goto failed_container;
      outcome_from_siginfo (out, &info);
    }
  ab_trace ("exited");
  outcome_of_container (out, c, so, &fw, t0);
  if (!so->keep)
    {
      ab_error_t e = { 0 };
      if (ab_container_destroy (c, &e) < 0)
        ab_warn ("container `%s`: %s", co.id, e.msg);
    }
  ab_trace ("destroyed");
  /* After the run, not before it: the next start with these maps finds a
     warm user namespace (runtime/warm.h). */
  if (c->warm_wanted)
    ab_warm_userns_start (c->plan->spec->linux_, &c->plan->ids);
  r = 0;
  goto cleanup;

canceled:
failed_container:
  {
    ab_error_t e = { 0 };
    container_kill_all (c, false);
    ab_container_wait (c, &info, NULL);
    ab_container_destroy (c, &e);
  }
failed:
  /* A cancel during the setup (which a hook's wait saw, or that came
     before the start): nothing of the program ran; no record. */
  if (cancel_pending ())
    {
      out->canceled = true;
      r = 0;
      goto cleanup;
    }
  setup_failed (out, err, t0);
cleanup:
  ab_fswatch_close (&fw);
  sigs_restore (&sg);
  ab_container_free (c);
  io_close (&io);
  return r;
}

/* ---- without namespaces ------------------------------------------------------ */

struct fallback_unit
{
  pid_t pid;
};

static void
fallback_kill_all (void *arg, bool reaped)
{
  struct fallback_unit *f = arg;

  /* The program leads its session (setsid): its pid is the session's id.
     Until the supervisor reaped it, it is not ours to reap. */
  ab_fallback_kill_all (f->pid, reaped ? -1 : f->pid);
}

/* SIGTERM to every process the program started, once each: all are our
   descendants (we are their subreaper). */
static void
fallback_term_all (void *arg AB_UNUSED)
{
  ab_signal_descendants (getpid (), SIGTERM);
}

/* Once the program ended: its descendants still running. */
static int
fallback_left (void *arg AB_UNUSED)
{
  return (int) ab_signal_descendants (getpid (), 0);
}

int
ab_supervise_fallback (const struct ab_fallback *f_in, const char *id, const struct ab_supervise_opts *so,
                       struct ab_outcome *out, ab_error_t *err)
{
  struct ab_fallback f = *f_in;
  struct fallback_unit fu = { 0 };
  struct sigs sg = { .fd = -1, .cancel_fd = -1 };
  struct io io;
  uint64_t t0 = ab_now_monotonic_ns ();
  struct unit u;
  siginfo_t info;
  int pidfd = -1, r = -1;

  memset (out, 0, sizeof *out);
  out->id = xstrdup (id);
  io_init (&io);
  if (io_open (&io, so, f.stdio, err) < 0)
    goto failed;
  if (so->no_subreaper)
    {
      ab_error_setc (err, AB_EC_CONFIG, 0,
                     "--no-subreaper: the sandbox without namespaces has neither a pid namespace nor a cgroup, "
                     "and without the subreaper what it leaves behind would outlive the run");
      goto failed;
    }
  prctl (PR_SET_CHILD_SUBREAPER, 1);
  sigs_block (&sg);
  if (cancel_pending ())
    {
      out->canceled = true; /* nothing ran */
      r = 0;
      goto cleanup;
    }
  fu.pid = ab_fallback_spawn (&f, &pidfd, err);
  io_close_child_ends (&io);
  if (fu.pid < 0)
    {
      if (err->cls != AB_EC_EXEC)
        goto failed;
      outcome_exec_failed (out, so, err);
    }
  else
    {
      u = (struct unit){ .pid = fu.pid, .pidfd = pidfd, .kill_all = fallback_kill_all,
                         .term_all = fallback_term_all, .left = fallback_left, .arg = &fu };
      if (watch (&u, so, &io, &sg, out, &info, err) < 0)
        goto failed;
      outcome_from_siginfo (out, &info);
    }
  out->duration_ns = ab_now_monotonic_ns () - t0;
  r = 0;
  goto cleanup;

failed:
  if (fu.pid > 0)
    ab_fallback_kill_all (fu.pid, -1);
  setup_failed (out, err, t0);
cleanup:
  if (pidfd >= 0)
    close (pidfd);
  sigs_restore (&sg);
  io_close (&io);
  return r;
}

/* ---- exec ---------------------------------------------------------------- */

static void
exec_kill_all (void *arg, bool reaped AB_UNUSED)
{
  ab_exec_kill_all (arg);
}

static void
exec_kill_pipe_holders (void *arg, const ino_t *pipes, size_t n)
{
  ab_exec_kill_pipe_holders (arg, pipes, n);
}

static void
exec_term_all (void *arg)
{
  ab_exec_signal_all (arg, SIGTERM);
}

static unsigned
exec_limits (void *arg)
{
  struct ab_exec *x = arg;

  return limits_of (x->cg, x->before);
}

int
ab_supervise_exec (const struct ab_exec_opts *eo_in, const struct ab_supervise_opts *so, struct ab_outcome *out,
                   ab_error_t *err)
{
  struct ab_exec_opts eo = *eo_in;
  struct ab_exec *x = NULL;
  struct sigs sg = { .fd = -1, .cancel_fd = -1 };
  struct io io;
  uint64_t t0 = ab_now_monotonic_ns ();
  struct unit u;
  siginfo_t info;
  _cleanup_close_ int wall_fd = -1;
  struct ab_net_counts before = { 0 }, after = { 0 };
  int r = -1, started;

  memset (out, 0, sizeof *out);
  out->id = xstrdup (eo.id);
  io_init (&io);
  if (io_open (&io, so, eo.stdio, err) < 0)
    goto failed;
  prctl (PR_SET_CHILD_SUBREAPER, 1);
  sigs_block (&sg);
  /* The wall counts a container's denied egress over its whole life: the
     exec's violations are what the counts gained while it ran. */
  wall_fd = so->no_violations ? -1 : ab_net_held_netns (eo.root, eo.id);
  if (wall_fd >= 0)
    ab_net_counts_read (wall_fd, &before);
  eo.relay_tty = so->relay_tty;
  ab_caller_tty_find (&io.caller);
  if (eo.relay_tty)
    ab_caller_tty_size (&io.caller, &eo.tty_rows, &eo.tty_cols);
  if (cancel_pending ())
    {
      out->canceled = true; /* nothing ran */
      r = 0;
      goto cleanup;
    }
  started = ab_exec_start (&eo, &x, err);
  if (started < 0)
    {
      if (err->cls != AB_EC_EXEC)
        goto failed;
      outcome_exec_failed (out, so, err);
      out->exit_status = 255;
    }
  else
    {
      io_close_child_ends (&io);
      if (x->pty_master >= 0 && io_relay_tty (&io, so, &x->pty_master, err) < 0)
        {
          ab_exec_kill_all (x);
          goto failed;
        }
      out->degraded = x->degraded;
      memset (&x->degraded, 0, sizeof x->degraded);
      struct ab_supervise_opts so_exec = *so;
      if (!so_exec.grace_set)
        so_exec.grace_ms = AB_PLAN_GRACE_DEFAULT_MS;
      u = (struct unit){ .pid = x->pid, .pidfd = x->pidfd, .kill_all = exec_kill_all, .term_all = exec_term_all,
                         .limits_now = exec_limits, .kill_pipe_holders = exec_kill_pipe_holders, .arg = x };
      if (watch (&u, &so_exec, &io, &sg, out, &info, err) < 0)
        goto failed;
      outcome_from_siginfo (out, &info);
      outcome_stats (out, x->cg, x->before);
      if (wall_fd >= 0)
        {
          ab_net_counts_read (wall_fd, &after);
          out->violations_json = ab_net_violations_since (&before, &after);
        }
      if (!so->no_violations)
        {
          /* a persistent sandbox's change set so far (none: ENOENT) */
          struct ab_changeset *cs = NULL;
          ab_error_t none = { 0 };
          if (ab_changeset_open (eo.root, eo.id, &cs, &none) == 0)
            outcome_workspace (out, cs);
          ab_changeset_free (cs);
        }
    }
  out->duration_ns = ab_now_monotonic_ns () - t0;
  r = 0;
  goto cleanup;

failed:
  setup_failed (out, err, t0);
  out->exit_status = 255;
cleanup:
  sigs_restore (&sg);
  ab_exec_free (x);
  io_close (&io);
  ab_net_counts_free (&before);
  ab_net_counts_free (&after);
  return r;
}
