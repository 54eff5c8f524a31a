/* A warm user namespace for rootless starts with subordinate ids: the
   holder, its socket, and the checks of what it hands over (warm.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "base/log.h"
#include "base/util.h"
#include "runtime/ns.h"
#include "runtime/plan/plan.h"
#include "runtime/warm.h"

#define PROTO "agentbox-userns 1"

static bool
warm_enabled (void)
{
  const char *v = getenv ("AGENTBOX_WARM_USERNS");

  return v == NULL || strcmp (v, "0") != 0;
}

/* "C:H:N,C:H:N" of maps into buf; false when it does not fit. */
static bool
maps_text (const struct ab_idmaps *m, char *buf, size_t len)
{
  size_t off = 0;

  buf[0] = '\0';
  for (size_t i = 0; i < m->n; i++)
    {
      int w = snprintf (buf + off, len - off, "%s%u:%u:%u", i ? "," : "", m->v[i].container_id, m->v[i].host_id,
                        m->v[i].size);
      if (w < 0 || (size_t) w >= len - off)
        return false;
      off += (size_t) w;
    }
  return m->n > 0;
}

/* The socket's abstract name (sun_path[0] == '\0') for the caller's euid
   and these maps, and its address length; 0 when the maps are too many. */
static socklen_t
holder_addr (const char *uid_maps, const char *gid_maps, struct sockaddr_un *a)
{
  int w;

  memset (a, 0, sizeof *a);
  a->sun_family = AF_UNIX;
  w = snprintf (a->sun_path + 1, sizeof a->sun_path - 1, "agentbox-userns-1-%u-u%s-g%s", (unsigned) geteuid (),
                uid_maps, gid_maps);
  if (w < 0 || (size_t) w >= sizeof a->sun_path - 1)
    return 0;
  return (socklen_t) (offsetof (struct sockaddr_un, sun_path) + 1 + (size_t) w);
}

static bool
texts_of (const struct ab_linux *l, char *u, char *g, size_t len)
{
  return maps_text (&l->uid_mappings, u, len) && maps_text (&l->gid_mappings, g, len);
}

/* What the holder of these maps says with the namespace it hands over. */
static void
hello_text (char *buf, size_t len, const char *uid_maps, const char *gid_maps)
{
  snprintf (buf, len, PROTO " u=%s g=%s", uid_maps, gid_maps);
}

/* ---- the caller's side ----------------------------------------------------------- */

/* The checks of warm.h on a received fd. */
static bool
userns_is_ours (int fd)
{
  struct stat mine, parent_st;
  uid_t owner;
  int parent;
  bool ok;

  if (ioctl (fd, NS_GET_NSTYPE) != CLONE_NEWUSER || ioctl (fd, NS_GET_OWNER_UID, &owner) < 0
      || owner != geteuid ())
    return false;
  parent = ioctl (fd, NS_GET_PARENT);
  if (parent < 0)
    return false;
  ok = fstat (parent, &parent_st) == 0 && stat ("/proc/self/ns/user", &mine) == 0
       && parent_st.st_dev == mine.st_dev && parent_st.st_ino == mine.st_ino;
  close (parent);
  return ok;
}

void
ab_warm_userns_connect (const struct ab_linux *l, struct ab_warm_ask *ask)
{
  char u[160], g[160];
  struct sockaddr_un a;
  struct ucred cred = { .uid = (uid_t) -1 };
  socklen_t alen, clen = sizeof cred;
  struct timeval tv = { .tv_sec = 0, .tv_usec = 200000 };
  _cleanup_close_ int s = -1;

  ask->sock = -1;
  if (!warm_enabled () || !texts_of (l, u, g, sizeof u) || (alen = holder_addr (u, g, &a)) == 0)
    return;
  s = socket (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  /* A holder that stopped answering costs at most this long. */
  if (s < 0 || setsockopt (s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0
      || setsockopt (s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) < 0 || connect (s, (struct sockaddr *) &a, alen) < 0)
    return;
  if (getsockopt (s, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0 || cred.uid != geteuid ())
    {
      ab_debug ("warm user namespace: the socket's peer is uid %u, not ours: not used", (unsigned) cred.uid);
      return;
    }
  hello_text (ask->want, sizeof ask->want, u, g);
  ask->sock = ab_steal_fd (&s);
}

int
ab_warm_userns_receive (struct ab_warm_ask *ask)
{
  char got[sizeof ask->want];
  _cleanup_close_ int sock = ab_steal_fd (&ask->sock);
  union
  {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } ctl;
  struct iovec iov = { got, sizeof got - 1 };
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf };
  struct cmsghdr *cm;
  ssize_t n;
  int fd = -1;

  if (sock < 0)
    return -1;
  n = recvmsg (sock, &msg, MSG_CMSG_CLOEXEC);
  cm = n > 0 ? CMSG_FIRSTHDR (&msg) : NULL;
  if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS && cm->cmsg_len == CMSG_LEN (sizeof (int)))
    memcpy (&fd, CMSG_DATA (cm), sizeof fd);
  if (fd < 0)
    return -1;
  got[n] = '\0';
  if ((msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || strcmp (got, ask->want) != 0 || !userns_is_ours (fd))
    {
      ab_debug ("warm user namespace: what the holder handed over failed a check: not used");
      close (fd);
      return -1;
    }
  ab_debug ("warm user namespace: in use (%s)", ask->want);
  return fd;
}

void
ab_warm_userns_start (const struct ab_linux *l, const struct ab_plan_ids *ids)
{
  char u[160], g[160], idle[64] = "";
  struct sockaddr_un a;
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t at;
  sigset_t none, all;
  const char *v = getenv ("AGENTBOX_WARM_USERNS_IDLE_MS");
  char *argv[] = { (char *) "agentbox", (char *) "_userns-holder", (char *) ids->newuidmap,
                   (char *) ids->newgidmap, u, g, NULL };
  char *envp[] = { idle, NULL };
  pid_t pid;
  int r;

  if (!warm_enabled () || ids->newuidmap == NULL || ids->newgidmap == NULL || !texts_of (l, u, g, sizeof u)
      || holder_addr (u, g, &a) == 0)
    return;
  if (v != NULL)
    snprintf (idle, sizeof idle, "AGENTBOX_WARM_USERNS_IDLE_MS=%s", v);
  /* Nothing of ours: stdio on /dev/null, every other fd closed, a session
     of its own (no signal to our process group or terminal reaches it). */
  posix_spawn_file_actions_init (&fa);
  posix_spawn_file_actions_addopen (&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen (&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2 (&fa, 1, 2);
  posix_spawn_file_actions_addclosefrom_np (&fa, 3);
  posix_spawn_file_actions_addchdir_np (&fa, "/");
  /* Nor our blocked signals: TERM must end it. */
  sigemptyset (&none);
  sigfillset (&all);
  posix_spawnattr_init (&at);
  posix_spawnattr_setsigmask (&at, &none);
  posix_spawnattr_setsigdefault (&at, &all);
  posix_spawnattr_setflags (&at, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  r = posix_spawn (&pid, "/proc/self/exe", &fa, &at, argv, idle[0] ? envp : envp + 1);
  posix_spawn_file_actions_destroy (&fa);
  posix_spawnattr_destroy (&at);
  if (r != 0)
    ab_debug ("warm user namespace: start a holder: %s", strerror (r));
}

/* ---- the holder -------------------------------------------------------------------- */

static int
parse_maps (const char *text, struct ab_idmaps *m)
{
  const char *p = text;

  m->n = 0;
  m->v = NULL;
  while (*p)
    {
      unsigned c, h, n;
      int used = 0;
      if (sscanf (p, "%u:%u:%u%n", &c, &h, &n, &used) != 3 || used == 0)
        return -1;
      m->v = xreallocarray (m->v, m->n + 1, sizeof *m->v);
      m->v[m->n++] = (struct ab_idmap){ .container_id = c, .host_id = h, .size = n };
      p += used;
      if (*p == ',')
        p++;
      else if (*p != '\0')
        return -1;
    }
  return m->n > 0 ? 0 : -1;
}

/* A user namespace mapped by the helpers: a child unshares one and waits
   while they write its maps; an fd of it keeps it once the child is gone. */
static int
make_userns (const struct ab_linux *l, const struct ab_plan_ids *ids, ab_error_t *err)
{
  int ready[2], hold[2], fd = -1, st;
  char path[64], c;
  pid_t pid;

  if (pipe2 (ready, O_CLOEXEC) < 0 || pipe2 (hold, O_CLOEXEC) < 0)
    return ab_error_set (err, errno, "pipe");
  pid = fork ();
  if (pid < 0)
    return ab_error_set (err, errno, "fork");
  if (pid == 0)
    {
      close (ready[0]);
      close (hold[1]);
      if (unshare (CLONE_NEWUSER) < 0)
        _exit (1);
      if (write (ready[1], "r", 1) != 1)
        _exit (1);
      (void) !read (hold[0], &c, 1); /* until the holder closes its end */
      _exit (0);
    }
  close (ready[1]);
  close (hold[0]);
  if (read (ready[0], &c, 1) != 1)
    ab_error_set (err, EIO, "the namespace child failed to unshare its user namespace");
  else if (ab_ns_write_idmaps (pid, l, ids, err) == 0)
    {
      snprintf (path, sizeof path, "/proc/%d/ns/user", (int) pid);
      fd = open (path, O_RDONLY | O_CLOEXEC);
      if (fd < 0)
        ab_error_set (err, errno, "open %s", path);
    }
  close (ready[0]);
  close (hold[1]);
  while (waitpid (pid, &st, 0) < 0 && errno == EINTR)
    ;
  return fd;
}

static void
serve_one (int s, int ufd, const char *hello)
{
  struct ucred cred;
  socklen_t clen = sizeof cred;
  union
  {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } ctl;
  struct iovec iov = { (void *) hello, strlen (hello) };
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf };
  struct cmsghdr *cm = CMSG_FIRSTHDR (&msg);
  int c = accept4 (s, NULL, NULL, SOCK_CLOEXEC);

  if (c < 0)
    return;
  /* Only to the user itself. */
  if (getsockopt (c, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == 0 && cred.uid == geteuid ())
    {
      memset (&ctl, 0, sizeof ctl);
      cm->cmsg_level = SOL_SOCKET;
      cm->cmsg_type = SCM_RIGHTS;
      cm->cmsg_len = CMSG_LEN (sizeof (int));
      memcpy (CMSG_DATA (cm), &ufd, sizeof ufd);
      (void) !sendmsg (c, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
  close (c);
}

int
ab_warm_userns_serve (const char *newuidmap, const char *newgidmap, const char *uid_maps, const char *gid_maps)
{
  struct ab_linux l = { 0 };
  struct ab_plan_ids ids = { .how = AB_IDMAP_HELPER, .setgroups = true, .newuidmap = newuidmap,
                             .newgidmap = newgidmap };
  const char *v = getenv ("AGENTBOX_WARM_USERNS_IDLE_MS");
  long idle = v ? strtol (v, NULL, 10) : AB_WARM_IDLE_MS;
  char hello[400];
  struct sockaddr_un a;
  socklen_t alen;
  ab_error_t err = { 0 };
  _cleanup_close_ int s = -1, ufd = -1;

  prctl (PR_SET_NAME, "agentbox-userns");
  if (idle <= 0 || idle > 3600000)
    idle = AB_WARM_IDLE_MS;
  if (newuidmap[0] != '/' || newgidmap[0] != '/' || parse_maps (uid_maps, &l.uid_mappings) < 0
      || parse_maps (gid_maps, &l.gid_mappings) < 0 || (alen = holder_addr (uid_maps, gid_maps, &a)) == 0)
    return 2;
  /* The name first: a holder already serving these maps is enough. */
  s = socket (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (s < 0 || bind (s, (struct sockaddr *) &a, alen) < 0)
    return 0;
  ufd = make_userns (&l, &ids, &err);
  free (l.uid_mappings.v);
  free (l.gid_mappings.v);
  if (ufd < 0 || listen (s, 64) < 0)
    return 1;
  hello_text (hello, sizeof hello, uid_maps, gid_maps);
  for (;;)
    {
      struct pollfd p = { .fd = s, .events = POLLIN };
      int r = poll (&p, 1, (int) idle);
      if (r == 0)
        return 0; /* idle: the namespace goes with its last fd */
      if (r < 0 && errno != EINTR)
        return 1;
      if (r > 0)
        serve_one (s, ufd, hello);
    }
}
