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
#include "base/nsenter.h"
#include "netns/nl.h"
#include "base/util.h"

struct sock_job
{
  int netns_fd;
  struct ab_sock_req *reqs;
  size_t n;
  int errnum;
  const char *failed; /* "setns", or NULL */
};

/* The sockets, where the caller (thread or helper) now is. */
static void
make_sockets (struct sock_job *job)
{
  for (size_t i = 0; i < job->n; i++)
    {
      struct ab_sock_req *r = &job->reqs[i];
      r->fd = socket (r->domain, r->type | SOCK_CLOEXEC, r->protocol);
      r->errnum = r->fd < 0 ? errno : 0;
    }
}

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
  make_sockets (job);
  return NULL;
}

static int
sock_helper (void *arg)
{
  make_sockets (arg);
  return 0;
}

/* Rootless: setns into the container's network namespace needs
   CAP_SYS_ADMIN in our own user namespace too, which an unprivileged
   runtime lacks; a helper enters the user namespace that owns the network
   namespace first (there it has every capability: we made it), then the
   network namespace (base/nsenter.h).  The sockets it makes land in our fd
   table, and what we send on them later is checked against the
   container's user namespace, where we, its creator, hold every
   capability (CAP_NET_ADMIN for netlink, CAP_NET_BIND_SERVICE for port 53). */
static int
sockets_rootless (struct sock_job *job, ab_error_t *err)
{
  _cleanup_close_ int owner = ab_ns_owner_fd (job->netns_fd);
  struct ab_nsenter ns = { .userns_fd = owner, .netns_fd = job->netns_fd, .mntns_fd = -1 };

  if (owner < 0)
    return ab_error_set (err, errno, "find the user namespace owning the network namespace");
  return ab_nsenter_run (&ns, sock_helper, job, err);
}

int
ab_netns_sockets (int netns_fd, struct ab_sock_req *reqs, size_t n, ab_error_t *err)
{
  static int direct = -1; /* whether setns from a thread works: CAP_SYS_ADMIN here */
  struct sock_job job = { netns_fd, reqs, n, 0, NULL };
  pthread_t t;
  int r;

  for (size_t i = 0; i < n; i++)
    reqs[i].fd = -1;
  if (direct < 0)
    direct = ab_have_cap_sys_admin ();
  if (!direct)
    return sockets_rootless (&job, err);
  r = pthread_create (&t, NULL, sock_thread, &job);
  if (r != 0)
    return ab_error_set (err, r, "create a thread to enter the network namespace");
  r = pthread_join (t, NULL);
  if (r != 0)
    return ab_error_set (err, r, "join the network namespace thread");
  if (job.failed)
    return ab_error_set (err, job.errnum, "%s into the target network namespace", job.failed);
  return 0;
}

static const char *
bus_name (int bus)
{
  return bus == NETLINK_ROUTE ? "NETLINK_ROUTE" : "NETLINK_NETFILTER";
}

/* fd (taken, even on error; -1: socket() failed with errnum) as one of our
   netlink sockets.  Errors carry the kernel's explanation when it has one
   (and the failed request in full: ab_nl_parse_error skips it; one
   message, where the receive buffer holds a whole batch).  No bind (nor
   the getsockname after it): the first send binds the socket to a port of
   the kernel's choosing, and the replies need no check of it (nl.h). */
static struct mnl_socket *
nl_wrap (int fd, int errnum, int bus, ab_error_t *err)
{
  struct mnl_socket *nl = fd < 0 ? NULL : mnl_socket_fdopen (fd);
  int one = 1;

  if (nl == NULL)
    {
      ab_error_set (err, fd < 0 ? errnum : errno, "open a %s socket", bus_name (bus));
      if (fd >= 0)
        close (fd);
      return NULL;
    }
  if (mnl_socket_setsockopt (nl, NETLINK_EXT_ACK, &one, sizeof one) < 0)
    {
      ab_error_set (err, errno, "set up the %s socket", bus_name (bus));
      mnl_socket_close (nl);
      return NULL;
    }
  return nl;
}

struct mnl_socket *
ab_nl_adopt (int fd, int bus, ab_error_t *err)
{
  return nl_wrap (fd, EBADF, bus, err);
}

struct mnl_socket *
ab_nl_open (int netns_fd, int bus, ab_error_t *err)
{
  struct mnl_socket *nl;

  return ab_nl_open_n (netns_fd, &bus, &nl, 1, err) < 0 ? NULL : nl;
}

int
ab_nl_open_n (int netns_fd, const int *bus, struct mnl_socket **nl, size_t n, ab_error_t *err)
{
  struct ab_sock_req r[4];
  size_t i;
  int rc = 0;

  if (n > sizeof r / sizeof r[0])
    return ab_error_set (err, EINVAL, "%zu netlink sockets at once", n);
  for (i = 0; i < n; i++)
    {
      r[i] = (struct ab_sock_req){ .domain = AF_NETLINK, .type = SOCK_RAW, .protocol = bus[i] };
      nl[i] = NULL;
    }
  if (netns_fd < 0)
    for (i = 0; i < n; i++)
      {
        r[i].fd = socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, bus[i]);
        r[i].errnum = errno;
      }
  else if (ab_netns_sockets (netns_fd, r, n, err) < 0)
    return -1;
  for (i = 0; i < n; i++)
    if ((nl[i] = nl_wrap (r[i].fd, r[i].errnum, bus[i], rc == 0 ? err : NULL)) == NULL)
      rc = -1;
  if (rc < 0)
    for (i = 0; i < n; i++)
      if (nl[i] != NULL)
        {
          mnl_socket_close (nl[i]);
          nl[i] = NULL;
        }
  return rc;
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
