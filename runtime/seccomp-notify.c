#include "config.h"

#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include "runtime/seccomp-notify.h"
#include "runtime/sync.h"
#include "base/util.h"

/* what: the syscall; slow: what the agent did not do in time (the send
   timeout ran out: EAGAIN). */
static int
agent_error (ab_error_t *err, int e, const char *path, const char *what, const char *slow)
{
  if (e == EAGAIN || e == EWOULDBLOCK || e == EINPROGRESS)
    return ab_error_set (err, ETIMEDOUT, "linux.seccomp.listenerPath `%s`: the agent did not %s within %d s", path,
                         slow, AB_SECCOMP_AGENT_TIMEOUT_S);
  return ab_error_set (err, e, "linux.seccomp.listenerPath `%s`: %s", path, what);
}

int
ab_seccomp_agent_send (const struct ab_seccomp *sc, const char *json, size_t len, int listener, ab_error_t *err)
{
  const char *path = sc->listener_path;
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  struct timeval tv = { .tv_sec = AB_SECCOMP_AGENT_TIMEOUT_S };
  _cleanup_close_ int sock = -1;
  size_t off = 0;

  ab_set_step ("seccomp");
  /* validate checked both; the snapshot of a started container is not
     validated again. */
  if (path == NULL || path[0] != '/' || strlen (path) >= sizeof sa.sun_path)
    return ab_error_setc (err, AB_EC_CONFIG, EINVAL, "linux.seccomp.listenerPath: not a usable socket path");
  strcpy (sa.sun_path, path);
  sock = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0)
    return ab_error_set (err, errno, "linux.seccomp.listenerPath: socket");
  /* A unix stream connect waits for room in the listener's backlog, and a
     send for room in its buffer, bounded by the send timeout: an agent that
     stopped accepting cannot hold the container (and us) forever. */
  if (setsockopt (sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) < 0)
    return ab_error_set (err, errno, "linux.seccomp.listenerPath: SO_SNDTIMEO");
  while (connect (sock, (struct sockaddr *)&sa, sizeof sa) < 0)
    if (errno != EINTR)
      return agent_error (err, errno, path, "connect", "accept the connection");

  /* The fd with the first bytes, as the spec requires when the state takes
     more than one sendmsg. */
  while (off < len)
    {
      ssize_t n = ab_sendmsg_fds (sock, json + off, len - off, &listener, off == 0 ? 1 : 0);
      if (n <= 0)
        return agent_error (err, n < 0 ? errno : EPROTO, path, "send the container process state",
                            "take the container process state");
      off += (size_t)n;
    }
  /* One state per connection, then closed (config-linux.md). */
  return 0;
}
