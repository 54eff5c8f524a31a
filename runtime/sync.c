#include "config.h"

#include <sys/socket.h>

#include "runtime/sync.h"
#include "base/util.h"

int
ab_sync_send (int fd, uint32_t type, int32_t value, ab_error_t *err)
{
  struct ab_sync_msg m;

  memset (&m, 0, sizeof m);
  m.type = type;
  m.value = value;
  for (;;)
    {
      ssize_t r = send (fd, &m, sizeof m, MSG_NOSIGNAL);
      if (r == (ssize_t) sizeof m)
        return 0;
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0 && (errno == EPIPE || errno == ECONNRESET))
        {
          /* The peer is gone; what it said before dying is the real error. */
          struct ab_sync_msg last;
          ssize_t n = recv (fd, &last, sizeof last, MSG_DONTWAIT);
          if (n == (ssize_t) sizeof last && last.type == AB_SYNC_ERROR)
            {
              last.err.msg[sizeof last.err.msg - 1] = '\0';
              if (err)
                *err = last.err;
              return -1;
            }
          return ab_error_setc (err, AB_EC_SETUP, EPIPE, "the container process exited during setup");
        }
      return ab_error_set (err, r < 0 ? errno : EPROTO, "sync: send message %u", type);
    }
}

int
ab_sync_send_error (int fd, const ab_error_t *e)
{
  struct ab_sync_msg m;

  memset (&m, 0, sizeof m);
  m.type = AB_SYNC_ERROR;
  m.err = *e;
  for (;;)
    {
      ssize_t r = send (fd, &m, sizeof m, MSG_NOSIGNAL);
      if (r >= 0 || errno != EINTR)
        return r == (ssize_t) sizeof m ? 0 : -1;
    }
}

int
ab_sync_recv (int fd, struct ab_sync_msg *m, ab_error_t *err)
{
  for (;;)
    {
      ssize_t r = recv (fd, m, sizeof *m, 0);
      if (r == (ssize_t) sizeof *m)
        {
          m->err.msg[sizeof m->err.msg - 1] = '\0';
          m->err.step[sizeof m->err.step - 1] = '\0';
          return 0;
        }
      if (r < 0 && errno == EINTR)
        continue;
      if (r == 0)
        return ab_error_setc (err, AB_EC_SETUP, EPIPE, "the container process exited during setup");
      return ab_error_set (err, r < 0 ? errno : EPROTO, "sync: receive");
    }
}

int
ab_sync_expect (int fd, uint32_t type, struct ab_sync_msg *m, ab_error_t *err)
{
  struct ab_sync_msg local;

  if (m == NULL)
    m = &local;
  if (ab_sync_recv (fd, m, err) < 0)
    return -1;
  if (m->type == AB_SYNC_ERROR)
    {
      if (err)
        *err = m->err;
      return -1;
    }
  if (m->type != type)
    return ab_error_setc (err, AB_EC_INTERNAL, EPROTO, "sync: expected message %u, got %u", type, m->type);
  return 0;
}

/* Room for up to 8 fds, aligned for a cmsghdr. */
union fd_cmsg
{
  char buf[CMSG_SPACE (sizeof (int) * 8)];
  struct cmsghdr align;
};

ssize_t
ab_sendmsg_fds (int sock, const void *buf, size_t len, const int *fds, int n)
{
  struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
  union fd_cmsg u;
  ssize_t r;

  /* No allocation: this runs between clone and execve. */
  if (n < 0 || n > 8)
    {
      errno = EINVAL;
      return -1;
    }
  if (n > 0)
    {
      struct cmsghdr *c;
      memset (&u, 0, sizeof u);
      msg.msg_control = u.buf;
      msg.msg_controllen = CMSG_SPACE (sizeof (int) * (size_t)n);
      c = CMSG_FIRSTHDR (&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN (sizeof (int) * (size_t)n);
      memcpy (CMSG_DATA (c), fds, sizeof (int) * (size_t)n);
    }
  do
    r = sendmsg (sock, &msg, MSG_NOSIGNAL);
  while (r < 0 && errno == EINTR);
  return r;
}

/* One recvmsg into buf; up to n fds (close-on-exec) into fds, their number
   in *got (exactly n, or none; any other count is closed and reads 0). */
static ssize_t
recvmsg_fds (int sock, void *buf, size_t len, int *fds, int n, int *got)
{
  struct iovec iov = { .iov_base = buf, .iov_len = len };
  union fd_cmsg u;
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                        .msg_controllen = CMSG_SPACE (sizeof (int) * (size_t)n) };
  struct cmsghdr *c;
  ssize_t r;

  *got = 0;
  do
    r = recvmsg (sock, &msg, MSG_CMSG_CLOEXEC);
  while (r < 0 && errno == EINTR);
  for (c = r > 0 ? CMSG_FIRSTHDR (&msg) : NULL; c != NULL; c = CMSG_NXTHDR (&msg, c))
    {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
        continue;
      if (*got == 0 && c->cmsg_len == CMSG_LEN (sizeof (int) * (size_t)n))
        {
          memcpy (fds, CMSG_DATA (c), sizeof (int) * (size_t)n);
          *got = n;
          continue;
        }
      /* Not what was asked for: none of it stays open here. */
      for (size_t k = 0; k < (c->cmsg_len - CMSG_LEN (0)) / sizeof (int); k++)
        {
          int fd;
          memcpy (&fd, CMSG_DATA (c) + k * sizeof (int), sizeof fd);
          close (fd);
        }
    }
  return r;
}

int
ab_sync_send_fd (int fd, uint32_t type, int passfd, ab_error_t *err)
{
  struct ab_sync_msg m;
  ssize_t r;

  memset (&m, 0, sizeof m);
  m.type = type;
  r = ab_sendmsg_fds (fd, &m, sizeof m, &passfd, 1);
  if (r == (ssize_t) sizeof m)
    return 0;
  return ab_error_set (err, r < 0 ? errno : EPROTO, "sync: send message %u with a file descriptor", type);
}

int
ab_sync_recv_fd (int fd, struct ab_sync_msg *m, int *passed, ab_error_t *err)
{
  int got;
  ssize_t r = recvmsg_fds (fd, m, sizeof *m, passed, 1, &got);

  if (got == 0)
    *passed = -1;
  if (r == (ssize_t) sizeof *m)
    {
      m->err.msg[sizeof m->err.msg - 1] = '\0';
      m->err.step[sizeof m->err.step - 1] = '\0';
      return 0;
    }
  if (*passed >= 0)
    close (*passed);
  *passed = -1;
  if (r == 0)
    return ab_error_setc (err, AB_EC_SETUP, EPIPE, "the container process exited during setup");
  return ab_error_set (err, r < 0 ? errno : EPROTO, "sync: receive");
}

int
ab_send_fds (int sock, const int *fds, int n, ab_error_t *err)
{
  char byte = 0;
  ssize_t r;

  if (n < 1 || n > 8)
    return ab_error_setc (err, AB_EC_INTERNAL, EINVAL, "send_fds: %d fds", n);
  r = ab_sendmsg_fds (sock, &byte, 1, fds, n);
  if (r == 1)
    return 0;
  return ab_error_set (err, r < 0 ? errno : EPROTO, "send file descriptor");
}

int
ab_recv_fds (int sock, int *fds, int n, ab_error_t *err)
{
  char byte;
  int got;
  ssize_t r;

  if (n < 1 || n > 8)
    return ab_error_setc (err, AB_EC_INTERNAL, EINVAL, "recv_fds: %d fds", n);
  r = recvmsg_fds (sock, &byte, 1, fds, n, &got);
  if (r <= 0)
    return ab_error_set (err, r < 0 ? errno : EPIPE, "receive file descriptor");
  if (got != n)
    return ab_error_setc (err, AB_EC_SETUP, EPROTO, "receive file descriptor: no descriptor in the message");
  return 0;
}
