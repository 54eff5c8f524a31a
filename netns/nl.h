/* Netlink plumbing shared by rtnl.c, nft.c, denied.c and the live nftables
 * reader of agentbox audit (audit/live-nft.c). */
#ifndef AB_NETNS_NL_H
#define AB_NETNS_NL_H

#include <libmnl/libmnl.h>
#include <stddef.h>

#include "base/error.h"

static inline void
ab_mnl_closep (struct mnl_socket **nl)
{
  if (*nl != NULL)
    mnl_socket_close (*nl);
  *nl = NULL;
}
#define _cleanup_mnl_ __attribute__ ((cleanup (ab_mnl_closep)))

/* A netlink socket of `bus` in the network namespace behind netns_fd (-1:
   the caller's), with extended acks, bound by its first send.
   What it receives is the kernel's: it joins no group, and sending to a
   netlink port of these buses takes CAP_NET_ADMIN over the namespace,
   which in a container's namespace no one but us holds while we set it
   up (and in the host's only its root); the replies are matched
   by sequence number.  NULL and *err on error. */
struct mnl_socket *ab_nl_open (int netns_fd, int bus, ab_error_t *err);
/* n (at most 4) of them at once, nl[i] of bus[i]: one entry into the
   namespace for all (rootless, that is one helper process, not n).  All
   or none: -1 and *err, every nl[i] NULL. */
int ab_nl_open_n (int netns_fd, const int *bus, struct mnl_socket **nl, size_t n, ab_error_t *err);
/* fd, a netlink socket of `bus` made elsewhere (the container's process
   makes the wall's in its namespace), as one of ours; fd is taken, even on
   error.  NULL and *err on error. */
struct mnl_socket *ab_nl_adopt (int fd, int bus, ab_error_t *err);

/* Sockets in the network namespace behind netns_fd, made in one go (a
   thread that enters it, or rootless a helper that enters its owning user
   namespace first): each request gets its fd (SOCK_CLOEXEC added) or -1
   and its errnum.  -1 and *err only when the namespace could not be
   entered. */
struct ab_sock_req
{
  int domain, type, protocol;
  int fd;
  int errnum;
};
int ab_netns_sockets (int netns_fd, struct ab_sock_req *reqs, size_t n, ab_error_t *err);

/* Extended-ack text of an NLMSG_ERROR ("" if the kernel gave none). */
struct ab_nl_reply
{
  int errnum; /* positive errno from the kernel, 0 on success */
  char extack[256];
};

/* Send one request (NLM_F_ACK is added) and read the replies until its ack
   or NLMSG_DONE, handing data messages to cb (may be NULL).  Returns 0 when
   the exchange completed (the kernel's verdict is in reply->errnum), -1
   with errno when the socket failed or cb returned MNL_CB_ERROR. */
int ab_nl_talk (struct mnl_socket *nl, struct nlmsghdr *req, mnl_cb_t cb, void *data,
                struct ab_nl_reply *reply);

/* The errno and extended-ack text of an NLMSG_ERROR message. */
void ab_nl_parse_error (const struct nlmsghdr *nlh, struct ab_nl_reply *reply);

/* For messages: "<what> (kernel: <extack>)" when the kernel explained
   itself, "<what>" otherwise:
       ab_error_set (err, r.errnum, "%s%s%s%s", what, ab_nl_extack_sep (&r), r.extack, ab_nl_extack_end (&r));
 */
static inline const char *
ab_nl_extack_sep (const struct ab_nl_reply *r)
{
  return r->extack[0] != '\0' ? " (kernel: " : "";
}
static inline const char *
ab_nl_extack_end (const struct ab_nl_reply *r)
{
  return r->extack[0] != '\0' ? ")" : "";
}

/* rtnl.c: through a NETLINK_ROUTE socket of the network namespace, bring
   lo up and add the routes of last resort via lo (see nft.c). */
int ab_netns_setup_routes (struct mnl_socket *nl, ab_error_t *err);

#endif
