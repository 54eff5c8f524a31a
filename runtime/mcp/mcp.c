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
#include "runtime/lifecycle/state.h"
#include "runtime/mcp/mcp-internal.h"
#include "base/util.h"

/* The names of the subdirectories of dirfd that are not hidden, or with
   all, of every entry; -1 when it cannot be read. */
static int
list_entries (int dirfd, bool all, struct ab_strv *out)
{
  int fd = fcntl (dirfd, F_DUPFD_CLOEXEC, 3);
  DIR *d = fd >= 0 ? fdopendir (fd) : NULL;
  struct dirent *e;

  if (d == NULL)
    {
      if (fd >= 0)
        close (fd);
      return -1;
    }
  while ((e = readdir (d)) != NULL)
    if (all ? strcmp (e->d_name, ".") && strcmp (e->d_name, "..") : e->d_name[0] != '.' && e->d_type == DT_DIR)
      ab_strv_push (out, e->d_name);
  closedir (d);
  return 0;
}

/* Every container directory left in the state root `root` (rootfd), by
   `delete --force`: what a server killed before its EOF left there. */
static void
sweep_containers (struct ab_mcp_server *s, int rootfd, const char *root)
{
  struct ab_strv ids = { 0 };

  list_entries (rootfd, false, &ids);
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

/* The record a server writes in its state root (AB_SERVER_RECORD) once it
   holds the root's lock: that the directory is an MCP server's, and which
   process the server is (pid and start time).  A directory without one is
   not a server's root, whatever its name: a container of the parent root
   may well be called `mcp-123` (runc allows any such id, and orchestrators
   choose theirs), and its state must never be taken for a sweepable
   root. */
struct server_record
{
  uint64_t pid, start;
};

static int
write_record (int rootfd, ab_error_t *err)
{
  _cleanup_gen_ struct ab_gen *g = ab_gen_new (false);
  char self[32];
  ssize_t n = readlink ("/proc/self", self, sizeof self - 1);
  int pid = getpid ();
  const char *buf;
  size_t len;

  /* Our pid as /proc knows it (in a pid namespace of our own without a
     /proc of its own, getpid's would name another process there). */
  if (n > 0)
    {
      self[n] = '\0';
      ab_parse_int (self, &pid);
    }

  ab_gen_obj_open (g);
  ab_gen_kv_u64 (g, "pid", (uint64_t)pid);
  ab_gen_kv_u64 (g, "startTime", ab_proc_start_time (pid, NULL));
  ab_gen_obj_close (g);
  buf = ab_gen_buf (g, &len);
  if (ab_write_file_atomic (rootfd, AB_SERVER_RECORD, buf, len, 0600, err) < 0)
    return ab_error_prefix (err, "mcp: record the server in its state directory");
  return 0;
}

/* 1: rootfd holds a server's record (*r); 0: none (not a server's root);
   -1: one that cannot be read, whose owner is unknown. */
static int
read_record (int rootfd, struct server_record *r)
{
  static const struct ab_json_limits lim
      = { .max_bytes = 4096, .max_depth = 2, .max_string = 64, .max_items = 8, .max_nodes = 16 };
  _cleanup_free_ char *buf = NULL;
  _cleanup_json_ struct ab_json *j = NULL;
  ab_error_t err = { 0 };
  struct ab_jctx c;
  size_t len;

  if (faccessat (rootfd, AB_SERVER_RECORD, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
    return 0;
  if (ab_read_file_at (rootfd, AB_SERVER_RECORD, lim.max_bytes, &buf, &len, &err) < 0
      || (j = ab_json_parse (buf, len, &lim, AB_SERVER_RECORD, &err)) == NULL)
    return -1;
  ab_jctx_init (&c, AB_SERVER_RECORD, &err);
  if (ab_jget_u64 (&c, j, "pid", AB_REQUIRED, INT32_MAX, &r->pid) < 0
      || ab_jget_u64 (&c, j, "startTime", AB_REQUIRED, UINT64_MAX, &r->start) < 0)
    return -1;
  return 1;
}

/* Whether the server that recorded rootfd (locked by the caller: its lock
   is free) is gone, so that its containers may be swept.  No record: not a
   server's root; an unreadable one, or a recorded process that still runs
   (same pid and start time): not known to be gone.  Either way, left
   alone. */
static bool
server_gone (int rootfd, const char *path)
{
  struct server_record r;
  bool zombie;
  int k = read_record (rootfd, &r);

  if (k == 0)
    return false; /* a container's directory, say */
  if (k < 0)
    {
      ab_warn ("mcp: `%s` has a server record that cannot be read: left alone", path);
      return false;
    }
  if (r.start != 0 && ab_proc_start_time ((pid_t)r.pid, &zombie) == r.start && !zombie)
    {
      ab_warn ("mcp: `%s`: its server (pid %llu) still runs, though its lock is free: left alone", path,
               (unsigned long long)r.pid);
      return false;
    }
  return true;
}

/* Remove parent/name, a state root whose containers are gone. */
static void
remove_root_at (int parent, const char *name)
{
  if (ab_rm_tree_at (parent, name, 64) < 0)
    ab_warn ("mcp: cannot remove `%s`: %s", name,
             errno == EXDEV ? "a mount point is left in it" : strerror (errno));
}

/* The state roots of servers that are gone: <parent>/mcp-<pid> that holds
   a server's record and whose lock nobody holds.  A server holds its
   root's lock for as long as it lives (open_state_root; the fd is
   close-on-exec, so no worker or sandbox inherits it), so a root we can
   lock is one whose server died without its EOF cleanup (SIGKILL): its
   sandboxes are deleted and the root removed, as that server would have
   done.  A live server's root is never touched, two new servers never
   sweep the same root at once (the lock is kept for the sweep), and a
   directory the name matches but no server recorded as its own (a
   container called `mcp-123`) is not a root at all. */
static void
sweep_dead_servers (struct ab_mcp_server *s, int parentfd, const char *parent, const char *own)
{
  struct ab_strv roots = { 0 };

  list_entries (parentfd, false, &roots);
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
      if (!server_gone (rfd, path))
        continue;
      ab_warn ("mcp: `%s` belongs to a server that is gone: sweeping it", path);
      sweep_containers (s, rfd, path);
      remove_root_at (parentfd, roots.v[i]);
    }
  ab_strv_free (&roots);
}

/* Whether the directory dirfd has no entry. */
static bool
dir_empty (int dirfd)
{
  _cleanup_strv_ struct ab_strv names = { 0 };

  return list_entries (dirfd, true, &names) == 0 && names.n == 0;
}

/* Our state root existed (fd, locked): a predecessor's with our pid,
   killed, is swept; so is an empty one (killed before its record).
   Anything else is not ours to use, nor to sweep: a container of the
   parent root that happens to be called `mcp-<our pid>`. */
static int
adopt_root (struct ab_mcp_server *s, int fd, ab_error_t *err)
{
  struct server_record r;
  int k = read_record (fd, &r);

  if (k < 0)
    return ab_error_setc (err, AB_EC_EXISTS, 0, "the state directory `%s` has a server record that cannot be read",
                          s->o->state_root);
  if (k == 0 && !dir_empty (fd))
    return ab_error_setc (err, AB_EC_EXISTS, 0,
                          "the state directory `%s` exists and is not an MCP server's (a container of that id?)",
                          s->o->state_root);
  sweep_containers (s, fd, s->o->state_root);
  return 0;
}

/* The state root: created for this server, locked for its lifetime (a
   second server with the same pid in another pid namespace is refused),
   swept if a crashed predecessor left it, and recorded as this server's.
   Mode 0711 like any state root: the sandboxes' user namespaces must
   traverse it to their rootfs. */
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
  if ((existed && adopt_root (s, fd, err) < 0) || write_record (fd, err) < 0)
    {
      if (!existed)
        rmdir (s->o->state_root);
      close (fd);
      return -1;
    }
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
