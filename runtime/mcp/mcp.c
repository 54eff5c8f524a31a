/* MCP server: setup, the input loop, and the shutdown that leaves nothing
 * behind (runtime/mcp/mcp.h). */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "base/log.h"
#include "runtime/mcp/mcp-internal.h"
#include "base/util.h"

/* The names of the subdirectories of dirfd that are not hidden. */
static void
list_subdirs (int dirfd, struct ab_strv *out)
{
  int fd = fcntl (dirfd, F_DUPFD_CLOEXEC, 3);
  DIR *d = fd >= 0 ? fdopendir (fd) : NULL;
  struct dirent *e;

  if (d == NULL)
    {
      if (fd >= 0)
        close (fd);
      return;
    }
  while ((e = readdir (d)) != NULL)
    if (e->d_name[0] != '.' && e->d_type == DT_DIR)
      ab_strv_push (out, e->d_name);
  closedir (d);
}

/* Every container directory left in the state root `root` (rootfd), by
   `delete --force`: what a server killed before its EOF left there. */
static void
sweep_containers (struct ab_mcp_server *s, int rootfd, const char *root)
{
  struct ab_strv ids = { 0 };

  list_subdirs (rootfd, &ids);
  for (size_t i = 0; i < ids.n; i++)
    {
      char *argv[] = { (char *)"agentbox", (char *)"--root", (char *)root, (char *)"delete",
                       (char *)"--force",  ids.v[i],         NULL };
      pid_t pid;

      ab_warn ("mcp: removing container `%s` left by a previous server", ids.v[i]);
      /* Still single-threaded: the worker pool starts after the sweep. */
      pid = fork ();
      if (pid == 0)
        {
          dup2 (2, 1); /* never the protocol stream */
          execv (s->o->exe, argv);
          _exit (127);
        }
      if (pid > 0)
        waitpid (pid, NULL, 0);
    }
  ab_strv_free (&ids);
  ab_mcp_workspace_discard_all (root); /* the change sets of the server that is gone */
}

/* Remove parent/name, a state root whose containers are gone. */
static void
remove_root_at (int parent, const char *name)
{
  if (ab_rm_tree_at (parent, name, 64) < 0)
    ab_warn ("mcp: cannot remove `%s`: %s", name,
             errno == EXDEV ? "a mount point is left in it" : strerror (errno));
}

/* The state roots of servers that are gone: <parent>/mcp-<pid> whose lock
   nobody holds.  A server holds its root's lock for as long as it lives
   (open_state_root; the fd is close-on-exec, so no worker or sandbox
   inherits it), so a root we can lock is one whose server died without
   its EOF cleanup (SIGKILL): its sandboxes are deleted and the root
   removed, as that server would have done.  A live server's root is never
   touched, and two new servers never sweep the same root at once (the
   lock is kept for the sweep). */
static void
sweep_dead_servers (struct ab_mcp_server *s, int parentfd, const char *parent, const char *own)
{
  struct ab_strv roots = { 0 };

  list_subdirs (parentfd, &roots);
  for (size_t i = 0; i < roots.n; i++)
    {
      const char *n = roots.v[i];
      _cleanup_close_ int rfd = -1;
      _cleanup_free_ char *path = NULL;

      if (!ab_str_has_prefix (n, "mcp-") || n[4] == '\0' || strspn (n + 4, "0123456789") != strlen (n + 4)
          || strcmp (n, own) == 0)
        continue; /* not a server's root, or ours */
      rfd = openat (parentfd, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (rfd < 0 || flock (rfd, LOCK_EX | LOCK_NB) < 0)
        continue; /* gone meanwhile, or its server lives */
      path = xasprintf ("%s/%s", parent, roots.v[i]);
      ab_warn ("mcp: `%s` belongs to a server that is gone: sweeping it", path);
      sweep_containers (s, rfd, path);
      remove_root_at (parentfd, roots.v[i]);
    }
  ab_strv_free (&roots);
}

/* The state root: created for this server, locked for its lifetime (a
   second server with the same pid in another pid namespace is refused),
   swept if a crashed predecessor left it.  Mode 0711 like any state root:
   the sandboxes' user namespaces must traverse it to their rootfs. */
static int
open_state_root (struct ab_mcp_server *s, int *lockfd, ab_error_t *err)
{
  _cleanup_free_ char *parent = xstrdup (s->o->state_root);
  char *slash = strrchr (parent, '/');
  _cleanup_close_ int pfd = -1;
  bool existed = false;
  int fd;

  if (slash && slash != parent)
    {
      *slash = '\0';
      if (mkdir (parent, 0711) < 0 && errno != EEXIST)
        return ab_error_setc (err, AB_EC_SETUP, errno, "create the state directory `%s`", parent);
    }
  if (mkdir (s->o->state_root, 0711) < 0)
    {
      if (errno != EEXIST)
        return ab_error_setc (err, AB_EC_SETUP, errno, "create the state directory `%s`", s->o->state_root);
      existed = true;
    }
  fd = open (s->o->state_root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return ab_error_setc (err, AB_EC_SETUP, errno, "open the state directory `%s`", s->o->state_root);
  if (flock (fd, LOCK_EX | LOCK_NB) < 0)
    {
      int e = errno;
      close (fd);
      return ab_error_setc (err, AB_EC_EXISTS, e, "the state directory `%s` belongs to a running server",
                            s->o->state_root);
    }
  if (existed)
    sweep_containers (s, fd, s->o->state_root);
  /* And the roots that other servers, killed, left beside ours. */
  if (slash && slash != parent && (pfd = open (parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0)
    sweep_dead_servers (s, pfd, parent, strrchr (s->o->state_root, '/') + 1);
  *lockfd = fd;
  return 0;
}

static void
remove_state_root (struct ab_mcp_server *s)
{
  _cleanup_free_ char *parent = xstrdup (s->o->state_root);
  char *slash = strrchr (parent, '/');
  const char *base = slash ? slash + 1 : parent;
  _cleanup_close_ int pfd = -1;

  /* Change sets live as long as the server (their workspaces untouched);
     their tmpfs mounts are not ours to walk into. */
  ab_mcp_workspace_discard_all (s->o->state_root);
  if (slash)
    *slash = '\0';
  pfd = open (slash == parent ? "/" : slash ? parent : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (pfd >= 0)
    remove_root_at (pfd, base);
}

/* Split the input into lines.  A line longer than AB_MCP_MAX_LINE is
   answered with a parse error as soon as it is known to be too long and
   skipped up to its LF without being kept. */
struct reader
{
  char *buf;
  size_t len, cap;
  bool discarding;
};

static void
reader_lines (struct ab_mcp_server *s, struct reader *rd)
{
  size_t start = 0;
  char *nl;

  while (start < rd->len && (nl = memchr (rd->buf + start, '\n', rd->len - start)) != NULL)
    {
      size_t n = (size_t)(nl - (rd->buf + start));
      if (rd->discarding)
        rd->discarding = false;
      else
        {
          const char *line = rd->buf + start;
          size_t k = n;
          while (k > 0 && (line[k - 1] == '\r' || line[k - 1] == ' ' || line[k - 1] == '\t'))
            k--;
          if (k > 0)
            ab_mcp_handle_line (s, line, k);
        }
      start += n + 1;
    }
  memmove (rd->buf, rd->buf + start, rd->len - start);
  rd->len -= start;
  if (rd->discarding)
    rd->len = 0;
  else if (rd->len > AB_MCP_MAX_LINE)
    {
      char msg[128];
      snprintf (msg, sizeof msg, "Parse error: message longer than %u bytes", AB_MCP_MAX_LINE);
      ab_mcp_send_error (s, NULL, AB_RPC_PARSE_ERROR, msg, NULL);
      rd->discarding = true;
      rd->len = 0;
    }
}

/* Read until EOF or a stop signal. */
static void
input_loop (struct ab_mcp_server *s, int in, int sfd)
{
  struct reader rd = { .cap = 1u << 16 };

  rd.buf = xmalloc (rd.cap);
  for (;;)
    {
      struct pollfd p[2] = { { .fd = in, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };
      ssize_t n;

      if (poll (p, 2, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          ab_warn ("mcp: poll: %s", strerror (errno));
          break;
        }
      if (p[1].revents & POLLIN)
        {
          struct signalfd_siginfo si;
          if (read (sfd, &si, sizeof si) == (ssize_t)sizeof si)
            ab_warn ("mcp: %s: stopping", strsignal ((int)si.ssi_signo));
          break;
        }
      if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
        continue;
      if (rd.cap - rd.len < (1u << 16))
        {
          rd.cap = rd.cap * 2 > AB_MCP_MAX_LINE + (2u << 16) ? AB_MCP_MAX_LINE + (2u << 16) : rd.cap * 2;
          rd.buf = xrealloc (rd.buf, rd.cap);
        }
      n = read (in, rd.buf + rd.len, rd.cap - rd.len);
      if (n < 0 && (errno == EINTR || errno == EAGAIN))
        continue;
      if (n <= 0)
        {
          /* EOF: a last line without LF still counts. */
          if (rd.len && !rd.discarding)
            {
              rd.buf = xrealloc (rd.buf, rd.len + 1);
              rd.buf[rd.len++] = '\n';
              reader_lines (s, &rd);
            }
          break;
        }
      rd.len += (size_t)n;
      reader_lines (s, &rd);
    }
  free (rd.buf);
}

int
ab_mcp_serve (const struct ab_mcp_opts *o, int in_fd, int out_fd, ab_error_t *err)
{
  struct ab_mcp_server s = { .o = o };
  _cleanup_close_ int in = -1, out = -1, sfd = -1, lockfd = -1, devnull = -1;
  sigset_t mask;

  /* The protocol gets private, close-on-exec copies of stdin and stdout;
     fd 1 becomes a second stderr and fd 0 /dev/null.  Nothing we start
     can inherit the protocol stream, and a stray printf from anywhere in
     the process lands in the log, not in a frame. */
  in = fcntl (in_fd, F_DUPFD_CLOEXEC, 3);
  out = fcntl (out_fd, F_DUPFD_CLOEXEC, 3);
  devnull = open ("/dev/null", O_RDWR | O_CLOEXEC);
  if (in < 0 || out < 0 || devnull < 0)
    return ab_error_setc (err, AB_EC_INTERNAL, errno, "set up the protocol streams");
  if (out_fd == 1)
    dup2 (2, 1);
  if (in_fd == 0)
    dup2 (devnull, 0);
  s.out_fd = out;

  /* A client that goes away must show up as EPIPE, not kill us before we
     can clean up. */
  signal (SIGPIPE, SIG_IGN);
  sigemptyset (&mask);
  sigaddset (&mask, SIGINT);
  sigaddset (&mask, SIGTERM);
  sigaddset (&mask, SIGHUP);
  /* Blocked before any thread exists, so only the signalfd sees them. */
  pthread_sigmask (SIG_BLOCK, &mask, NULL);
  sfd = signalfd (-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0)
    return ab_error_setc (err, AB_EC_INTERNAL, errno, "signalfd");

  pthread_mutex_init (&s.out_lock, NULL);
  pthread_mutex_init (&s.lock, NULL);
  pthread_cond_init (&s.cond, NULL);
  pthread_cond_init (&s.session_cond, NULL);
  if (open_state_root (&s, &lockfd, err) < 0)
    return -1;
  if (ab_mcp_workers_start (&s, err) < 0)
    {
      remove_state_root (&s);
      return -1;
    }
  ab_debug ("mcp: serving on stdio, state in %s, %u workers", o->state_root, o->max_concurrency);

  input_loop (&s, in, sfd);

  ab_mcp_workers_stop (&s);
  remove_state_root (&s);
  pthread_mutex_destroy (&s.out_lock);
  pthread_mutex_destroy (&s.lock);
  pthread_cond_destroy (&s.cond);
  pthread_cond_destroy (&s.session_cond);
  return 0;
}
