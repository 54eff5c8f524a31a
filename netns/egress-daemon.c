/* The egress engine for detached containers (`create` then `start`): a
 * small process of its own in the host netns whose life is the container's
 * cgroup's.  It exits when the cgroup has no process left, and never keeps
 * anything of its caller but the three directory/namespace fds it needs. */
#include "config.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "netns/egress-internal.h"

#define V1_POLL_MS 200
#define RECORD_EVERY_MS 1000

struct daemon_status
{
  int32_t errnum; /* -1: ok */
  int32_t pid;
  uint16_t http_port, dns_port;
  char msg[AB_ERR_MSG_MAX];
};

/* Close every fd but the ones in keep[] (sorted, ascending). */
static void
close_all_but (const int *keep, size_t n)
{
  unsigned lo = 3;

  for (size_t i = 0; i < n; i++)
    {
      if ((unsigned)keep[i] < lo)
        continue;
      if ((unsigned)keep[i] > lo)
        syscall (__NR_close_range, lo, (unsigned)keep[i] - 1, 0);
      lo = (unsigned)keep[i] + 1;
    }
  syscall (__NR_close_range, lo, ~0U, 0);
}

static int
cmp_int (const void *a, const void *b)
{
  return *(const int *)a - *(const int *)b;
}

/* Rewrite the record in place, through the fd opened at spawn time: the
   daemon never makes a directory entry of its own.  A `delete` removes the
   state directory without waiting for the daemon (it only signals it), so
   a temporary file and rename landing after delete's unlink pass would
   leave the directory behind.  Decisions only accrue, so each rewrite
   extends the previous one; a reader racing it may see a torn record while
   the daemon runs, a complete one after it exits. */
static void
write_record (struct ab_egress *e, int record_fd)
{
  _cleanup_gen_ struct ab_gen *g = ab_gen_new (false);
  const char *buf;
  size_t len, off = 0;
  ssize_t n;

  ab_egress_decisions_gen (e, g);
  buf = ab_gen_buf (g, &len);
  while (off < len)
    {
      n = pwrite (record_fd, buf + off, len - off, (off_t)off);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return;
      off += (size_t)n;
    }
  (void)ftruncate (record_fd, (off_t)len);
}

/* Whether the cgroup still holds a process.  v2: "populated 1" in
   cgroup.events (which also covers descendants), re-read through the fd
   poll() watches; v1: a non-empty cgroup.procs, opened afresh each time
   (a v1 cgroup.procs fd keeps serving the pid list it loaded first).  A
   cgroup that cannot be read any more is gone. */
static bool
cgroup_populated (int cgroup_dirfd, int events_fd)
{
  char buf[4096];
  ssize_t n;

  if (events_fd < 0)
    {
      _cleanup_close_ int fd = openat (cgroup_dirfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
      if (fd < 0)
        return false;
      n = read (fd, buf, 1);
      return n > 0;
    }
  n = pread (events_fd, buf, sizeof buf - 1, 0);
  if (n < 0)
    return false;
  buf[n] = '\0';
  for (char *line = buf; line && *line; line = strchr (line, '\n') ? strchr (line, '\n') + 1 : NULL)
    if (ab_str_has_prefix (line, "populated "))
      return line[10] == '1';
  return false;
}

/* Whether the container is still there: its cgroup holds a process, or,
   without a cgroup, its init has not exited (the pidfd is not readable). */
static bool
container_alive (int cgroup_dirfd, int watch_fd, int init_pidfd)
{
  struct pollfd pfd = { .fd = init_pidfd, .events = POLLIN };

  if (cgroup_dirfd < 0)
    return poll (&pfd, 1, 0) == 0;
  return cgroup_populated (cgroup_dirfd, watch_fd);
}

static void __attribute__ ((noreturn))
daemon_main (const struct ab_egress_policy *p, int netns_fd, int cgroup_dirfd, int init_pidfd, int record_fd,
             const struct ab_egress_options *opt, int status_fd)
{
  struct daemon_status st = { .errnum = -1 };
  struct ab_egress *e = NULL;
  ab_error_t err = { 0 };
  bool by_pid = cgroup_dirfd < 0;
  int keep[] = { netns_fd, by_pid ? init_pidfd : cgroup_dirfd, record_fd, status_fd };
  int devnull, watch_fd, sfd;
  size_t last_n = 0;
  sigset_t mask;
  bool v2;

  /* The caller's stdio may be a pipe someone waits on to close (a shell's
     $(...), a test harness): the daemon must not hold it open. */
  devnull = open ("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull >= 0)
    {
      dup2 (devnull, 0), dup2 (devnull, 1), dup2 (devnull, 2);
      if (devnull > 2)
        close (devnull);
    }
  qsort (keep, AB_ARRAY_SIZE (keep), sizeof keep[0], cmp_int);
  close_all_but (keep, AB_ARRAY_SIZE (keep));
  prctl (PR_SET_NAME, "agentbox-egress", 0, 0, 0);

  sigemptyset (&mask);
  sigaddset (&mask, SIGTERM);
  sigaddset (&mask, SIGINT);
  sigaddset (&mask, SIGHUP);
  sigprocmask (SIG_BLOCK, &mask, NULL);
  signal (SIGPIPE, SIG_IGN);
  sfd = signalfd (-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);

  /* Without a cgroup the init's pidfd is what is waited on: it becomes
     readable when the init exits (POLLIN, as v2's POLLPRI below). */
  watch_fd = by_pid ? -1 : openat (cgroup_dirfd, "cgroup.events", O_RDONLY | O_CLOEXEC);
  v2 = watch_fd >= 0 || by_pid;
  if (by_pid && init_pidfd < 0)
    ab_error_set (&err, EBADF, "egress daemon: neither a cgroup nor the init's pidfd to watch");
  else if (!v2 && faccessat (cgroup_dirfd, "cgroup.procs", R_OK, 0) < 0)
    ab_error_set (&err, errno, "egress daemon: neither cgroup.events nor cgroup.procs in the cgroup");
  else if (sfd < 0)
    ab_error_set (&err, errno, "egress daemon: signalfd");
  else if (ab_egress_start (p, netns_fd, opt, &e, &err) == 0)
    ab_egress_ports (e, &st.http_port, &st.dns_port);
  if (e == NULL)
    {
      st.errnum = err.errnum;
      snprintf (st.msg, sizeof st.msg, "%s", err.msg);
    }
  else
    write_record (e, record_fd); /* "[]": the record is valid JSON from the start */
  st.pid = getpid ();
  (void)ab_write_all (status_fd, &st, sizeof st);
  close (status_fd);
  if (e == NULL)
    _exit (1);
  close (netns_fd); /* the listeners hold the namespace now */

  while (container_alive (cgroup_dirfd, watch_fd, init_pidfd))
    {
      struct pollfd pfd[2] = { { .fd = by_pid ? init_pidfd : watch_fd, .events = by_pid ? POLLIN : POLLPRI },
                               { .fd = sfd, .events = POLLIN } };
      struct ab_egress_decision *d;
      size_t n;

      /* v2 kernfs wakes POLLPRI on every change of cgroup.events; v1
         cgroup.procs cannot be waited on, so it is polled. */
      if (poll (v2 ? pfd : pfd + 1, v2 ? 2 : 1, v2 ? RECORD_EVERY_MS : V1_POLL_MS) < 0 && errno != EINTR)
        break;
      if (pfd[1].revents & POLLIN)
        break;
      n = ab_egress_decisions (e, &d, NULL);
      ab_egress_decisions_free (d, n);
      if (n != last_n)
        {
          write_record (e, record_fd);
          last_n = n;
        }
    }
  ab_egress_stop (e);
  write_record (e, record_fd);
  ab_egress_free (e);
  _exit (0);
}

int
ab_egress_daemon_spawn (const struct ab_egress_policy *p, int netns_fd, int cgroup_dirfd, int init_pidfd,
                        int record_dirfd,
                        const char *record_name, const struct ab_egress_options *opt,
                        struct ab_egress_daemon *out, ab_error_t *err)
{
  struct daemon_status st;
  _cleanup_close_ int rd = -1, record_fd = -1;
  int pipefd[2], status;
  pid_t mid;
  ssize_t n;

  memset (out, 0, sizeof *out);
  record_fd = openat (record_dirfd, record_name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (record_fd < 0)
    return ab_error_set (err, errno, "egress daemon: create the record `%s`", record_name);
  if (pipe2 (pipefd, O_CLOEXEC) < 0)
    return ab_error_set (err, errno, "egress daemon: pipe2");
  rd = pipefd[0];
  /* Double fork: the daemon is nobody's child in the caller, so `create`
     can exit without reaping it and no zombie is left behind. */
  mid = fork ();
  if (mid < 0)
    {
      close (pipefd[1]);
      return ab_error_set (err, errno, "egress daemon: fork");
    }
  if (mid == 0)
    {
      close (pipefd[0]);
      setsid ();
      pid_t d = fork ();
      if (d != 0)
        _exit (d < 0 ? 1 : 0);
      daemon_main (p, netns_fd, cgroup_dirfd, init_pidfd, record_fd, opt, pipefd[1]);
    }
  close (pipefd[1]);
  while (waitpid (mid, &status, 0) < 0 && errno == EINTR)
    ;
  n = ab_read_all (rd, &st, sizeof st);
  if (n != (ssize_t)sizeof st || st.errnum != -1)
    {
      unlinkat (record_dirfd, record_name, 0);
      if (n != (ssize_t)sizeof st)
        return ab_error_set (err, 0, "egress daemon: exited before it reported its listeners");
      return ab_error_set (err, 0, "%s", st.msg);
    }
  out->pid = st.pid;
  out->http_port = st.http_port;
  out->dns_port = st.dns_port;
  return 0;
}
