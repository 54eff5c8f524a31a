/* Netlink sockets inside a given network namespace, and request/ack. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <time.h>

#include "netns/netns.h"
#include "netns/nl.h"
#include "base/util.h"

struct sock_job
{
  int netns_fd;
  int domain, type, protocol;
  int fd;
  int errnum;
  const char *failed; /* "setns" or "socket" */
};

/* Runs in a thread of its own: setns(CLONE_NEWNET) moves only the calling
   thread, and the thread ends right after, so no other code of this
   process ever runs in the target namespace by accident. */
static void *
sock_thread (void *arg)
{
  struct sock_job *job = arg;

  if (setns (job->netns_fd, CLONE_NEWNET) < 0)
    {
      job->errnum = errno;
      job->failed = "setns";
      return NULL;
    }
  job->fd = socket (job->domain, job->type | SOCK_CLOEXEC, job->protocol);
  if (job->fd < 0)
    {
      job->errnum = errno;
      job->failed = "socket";
    }
  return NULL;
}

/* A socket living in the network namespace behind netns_fd: a short-lived
   helper thread enters the namespace (setns moves only the calling thread)
   and creates it there; a socket keeps the namespace of its creation for its
   whole life, so the caller's own namespace is never touched.  For netlink
   sockets that configure the container's netns and for listeners inside it.
   SOCK_CLOEXEC is always added.  Needs CAP_SYS_ADMIN over the user
   namespace that owns the target.  Returns the fd. */
static int
ab_netns_socket (int netns_fd, int domain, int type, int protocol, ab_error_t *err)
{
  struct sock_job job = { netns_fd, domain, type, protocol, -1, 0, NULL };
  pthread_t t;
  int r;

  r = pthread_create (&t, NULL, sock_thread, &job);
  if (r != 0)
    return ab_error_set (err, r, "create a thread to enter the network namespace");
  r = pthread_join (t, NULL);
  if (r != 0)
    return ab_error_set (err, r, "join the network namespace thread");
  if (job.fd < 0)
    return ab_error_set (err, job.errnum, "%s in the target network namespace", job.failed);
  return job.fd;
}

struct mnl_socket *
ab_nl_open (int netns_fd, int bus, ab_error_t *err)
{
  const char *name = bus == NETLINK_ROUTE ? "NETLINK_ROUTE" : "NETLINK_NETFILTER";
  struct mnl_socket *nl;
  int one = 1;

  if (netns_fd < 0)
    nl = mnl_socket_open2 (bus, SOCK_CLOEXEC);
  else
    {
      _cleanup_close_ int fd = ab_netns_socket (netns_fd, AF_NETLINK, SOCK_RAW, bus, err);

      if (fd < 0)
        return NULL;
      nl = mnl_socket_fdopen (fd);
      if (nl != NULL)
        fd = -1;
    }
  if (nl == NULL)
    {
      ab_error_set (err, errno, "open a %s socket", name);
      return NULL;
    }
  /* Errors carry the kernel's explanation when it has one (and the failed
     request in full: ab_nl_parse_error skips it; one message, where the
     receive buffer holds a whole batch).  No bind (nor the getsockname
     after it): the first send binds the socket to a port of the kernel's
     choosing, and the replies need no check of it (nl.h). */
  if (mnl_socket_setsockopt (nl, NETLINK_EXT_ACK, &one, sizeof one) < 0)
    {
      ab_error_set (err, errno, "set up the %s socket", name);
      mnl_socket_close (nl);
      return NULL;
    }
  return nl;
}

static int
extack_cb (const struct nlattr *attr, void *data)
{
  struct ab_nl_reply *reply = data;

  if (mnl_attr_get_type (attr) == NLMSGERR_ATTR_MSG && mnl_attr_validate (attr, MNL_TYPE_NUL_STRING) == 0)
    snprintf (reply->extack, sizeof reply->extack, "%s", mnl_attr_get_str (attr));
  return MNL_CB_OK;
}

void
ab_nl_parse_error (const struct nlmsghdr *nlh, struct ab_nl_reply *reply)
{
  const struct nlmsgerr *e = mnl_nlmsg_get_payload (nlh);
  size_t off = sizeof *e;

  reply->extack[0] = '\0';
  if (mnl_nlmsg_get_payload_len (nlh) < sizeof *e)
    {
      reply->errnum = EPROTO;
      return;
    }
  reply->errnum = -e->error;
  if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
    return;
  if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
    off += e->msg.nlmsg_len - sizeof e->msg;
  if (off < mnl_nlmsg_get_payload_len (nlh))
    mnl_attr_parse_payload ((const char *)e + off, mnl_nlmsg_get_payload_len (nlh) - off, extack_cb, reply);
}

int
ab_nl_talk (struct mnl_socket *nl, struct nlmsghdr *req, mnl_cb_t cb, void *data, struct ab_nl_reply *reply)
{
  static uint32_t seq_base;
  _cleanup_free_ char *buf = xmalloc (MNL_SOCKET_BUFFER_SIZE * 4);

  if (seq_base == 0)
    seq_base = (uint32_t)time (NULL);
  req->nlmsg_flags |= NLM_F_ACK;
  req->nlmsg_seq = __atomic_add_fetch (&seq_base, 1, __ATOMIC_RELAXED);
  reply->errnum = 0;
  reply->extack[0] = '\0';
  if (mnl_socket_sendto (nl, req, req->nlmsg_len) < 0)
    return -1;
  for (;;)
    {
      ssize_t n = mnl_socket_recvfrom (nl, buf, MNL_SOCKET_BUFFER_SIZE * 4);
      const struct nlmsghdr *nlh = (const struct nlmsghdr *)buf;
      int len;

      if (n < 0)
        return -1;
      len = (int)n;
      for (; mnl_nlmsg_ok (nlh, len); nlh = mnl_nlmsg_next (nlh, &len))
        {
          if (nlh->nlmsg_seq != req->nlmsg_seq)
            continue;
          if (nlh->nlmsg_type == NLMSG_ERROR)
            {
              ab_nl_parse_error (nlh, reply);
              return 0;
            }
          if (nlh->nlmsg_type == NLMSG_DONE)
            {
              /* A dump ends with DONE, whose payload is its status. */
              if (mnl_nlmsg_get_payload_len (nlh) >= sizeof (int))
                reply->errnum = -*(const int *)mnl_nlmsg_get_payload (nlh);
              return 0;
            }
          if (cb != NULL && cb (nlh, data) == MNL_CB_ERROR)
            return -1;
        }
    }
}
