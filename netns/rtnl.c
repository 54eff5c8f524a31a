/* rtnetlink through libmnl: the loopback link and the catch-all routes of
 * the egress wall (why they exist: the design comment of nft.c), and the
 * moves of linux.netDevices. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/if.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "netns/netns.h"
#include "netns/nl.h"
#include "base/util.h"

#define LOOPBACK_IFINDEX 1 /* the kernel registers lo first in every netns */
#define AB_ROUTE_METRIC UINT32_MAX

/* ---- the loopback link and the catch-all routes ------------------------ */

/* An RTM_NEWLINK request in buf for the link ifindex, its ifinfomsg
   returned for the caller's changes. */
static struct ifinfomsg *
newlink_msg (char *buf, int ifindex, struct nlmsghdr **out)
{
  struct nlmsghdr *nlh = mnl_nlmsg_put_header (buf);
  struct ifinfomsg *ifi;

  nlh->nlmsg_type = RTM_NEWLINK;
  nlh->nlmsg_flags = NLM_F_REQUEST;
  ifi = mnl_nlmsg_put_extra_header (nlh, sizeof *ifi);
  ifi->ifi_family = AF_UNSPEC;
  ifi->ifi_index = ifindex;
  *out = nlh;
  return ifi;
}

static int
link_set_up (struct mnl_socket *nl, int ifindex, struct ab_nl_reply *reply)
{
  char buf[MNL_SOCKET_BUFFER_SIZE];
  struct nlmsghdr *nlh;
  struct ifinfomsg *ifi = newlink_msg (buf, ifindex, &nlh);

  ifi->ifi_flags = IFF_UP;
  ifi->ifi_change = IFF_UP;
  return ab_nl_talk (nl, nlh, NULL, NULL, reply);
}

/* default dev lo metric 4294967295 [src 127.0.0.1]: the route of last
   resort, so that no destination fails routing before the output hook. */
static int
add_lo_default (struct mnl_socket *nl, int family, struct ab_nl_reply *reply)
{
  static const struct in6_addr loopback6 = IN6ADDR_LOOPBACK_INIT;
  char buf[MNL_SOCKET_BUFFER_SIZE];
  struct nlmsghdr *nlh = mnl_nlmsg_put_header (buf);
  struct rtmsg *rtm;

  nlh->nlmsg_type = RTM_NEWROUTE;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL;
  rtm = mnl_nlmsg_put_extra_header (nlh, sizeof *rtm);
  rtm->rtm_family = (unsigned char)family;
  rtm->rtm_table = RT_TABLE_MAIN;
  rtm->rtm_protocol = RTPROT_STATIC;
  rtm->rtm_scope = family == AF_INET ? RT_SCOPE_LINK : RT_SCOPE_UNIVERSE;
  rtm->rtm_type = RTN_UNICAST;
  mnl_attr_put_u32 (nlh, RTA_OIF, LOOPBACK_IFINDEX);
  mnl_attr_put_u32 (nlh, RTA_PRIORITY, AB_ROUTE_METRIC);
  if (family == AF_INET)
    mnl_attr_put_u32 (nlh, RTA_PREFSRC, htonl (INADDR_LOOPBACK));
  else
    mnl_attr_put (nlh, RTA_PREFSRC, sizeof loopback6, &loopback6);
  return ab_nl_talk (nl, nlh, NULL, NULL, reply);
}

int
ab_netns_setup_routes (struct mnl_socket *nl, ab_error_t *err)
{
  struct ab_nl_reply r;

  if (link_set_up (nl, LOOPBACK_IFINDEX, &r) < 0)
    return ab_error_set (err, errno, "bring up lo: RTM_NEWLINK");
  if (r.errnum != 0)
    return ab_error_set (err, r.errnum, "bring up lo: RTM_NEWLINK%s%s%s", ab_nl_extack_sep (&r), r.extack,
                         ab_nl_extack_end (&r));
  for (int family = AF_INET; family != 0; family = family == AF_INET ? AF_INET6 : 0)
    {
      const char *route = family == AF_INET ? "default dev lo src 127.0.0.1" : "default dev lo src ::1";

      if (add_lo_default (nl, family, &r) < 0)
        return ab_error_set (err, errno, "add route `%s`: RTM_NEWROUTE", route);
      /* Present already: a joined namespace that has it, or a second apply.
         No IPv6 in this kernel: nothing of that family can be sent. */
      if (r.errnum == 0 || r.errnum == EEXIST || (family == AF_INET6 && r.errnum == EAFNOSUPPORT))
        continue;
      return ab_error_set (err, r.errnum, "add route `%s`: RTM_NEWROUTE%s%s%s", route, ab_nl_extack_sep (&r),
                           r.extack, ab_nl_extack_end (&r));
    }
  return 0;
}

/* ---- linux.netDevices -------------------------------------------------- */

struct link_info
{
  int ifindex;
  char name[IFNAMSIZ];
  uint8_t mac[32];
  size_t mac_len;
  bool found;
};

struct saved_addr
{
  int family;
  uint8_t prefixlen, scope;
  uint32_t flags;
  uint8_t local[16], address[16], broadcast[4];
  bool has_local, has_address, has_broadcast;
};

struct addr_list
{
  int ifindex;
  struct saved_addr *v;
  size_t n;
};

static void
addr_list_free (struct addr_list *l)
{
  free (l->v);
}

static int
attr_cb (const struct nlattr *attr, void *data)
{
  const struct nlattr **tb = data;
  uint16_t type = mnl_attr_get_type (attr);

  /* IFLA_MAX is larger than IFA_MAX: one table size serves both. */
  if (type <= IFLA_MAX)
    tb[type] = attr;
  return MNL_CB_OK;
}

static void
parse_link (const struct nlmsghdr *nlh, struct link_info *out)
{
  const struct nlattr *tb[IFLA_MAX + 1] = { NULL };
  const struct ifinfomsg *ifi = mnl_nlmsg_get_payload (nlh);

  mnl_attr_parse (nlh, sizeof *ifi, attr_cb, tb);
  memset (out, 0, sizeof *out);
  out->ifindex = ifi->ifi_index;
  out->found = true;
  if (tb[IFLA_IFNAME] != NULL && mnl_attr_validate (tb[IFLA_IFNAME], MNL_TYPE_NUL_STRING) == 0)
    snprintf (out->name, sizeof out->name, "%s", mnl_attr_get_str (tb[IFLA_IFNAME]));
  if (tb[IFLA_ADDRESS] != NULL)
    {
      out->mac_len = mnl_attr_get_payload_len (tb[IFLA_ADDRESS]);
      if (out->mac_len > sizeof out->mac)
        out->mac_len = sizeof out->mac;
      memcpy (out->mac, mnl_attr_get_payload (tb[IFLA_ADDRESS]), out->mac_len);
    }
}

static int
link_cb (const struct nlmsghdr *nlh, void *data)
{
  if (nlh->nlmsg_type == RTM_NEWLINK)
    parse_link (nlh, data);
  return MNL_CB_OK;
}

/* RTM_GETLINK by name (ifindex 0) or by index.  Returns 0 with
   reply->errnum ENODEV when there is no such link. */
static int
get_link (struct mnl_socket *nl, const char *name, int ifindex, struct link_info *out,
          struct ab_nl_reply *reply)
{
  char buf[MNL_SOCKET_BUFFER_SIZE];
  struct nlmsghdr *nlh = mnl_nlmsg_put_header (buf);
  struct ifinfomsg *ifi;

  memset (out, 0, sizeof *out);
  nlh->nlmsg_type = RTM_GETLINK;
  nlh->nlmsg_flags = NLM_F_REQUEST;
  ifi = mnl_nlmsg_put_extra_header (nlh, sizeof *ifi);
  ifi->ifi_family = AF_UNSPEC;
  ifi->ifi_index = ifindex;
  if (name != NULL)
    mnl_attr_put_strz (nlh, IFLA_IFNAME, name);
  if (ab_nl_talk (nl, nlh, link_cb, out, reply) < 0)
    return -1;
  if (reply->errnum == 0 && !out->found)
    reply->errnum = ENODEV;
  return 0;
}

struct mac_match
{
  const struct link_info *want;
  struct link_info found;
  size_t n;
};

static int
mac_match_cb (const struct nlmsghdr *nlh, void *data)
{
  struct mac_match *m = data;
  struct link_info l;

  if (nlh->nlmsg_type != RTM_NEWLINK)
    return MNL_CB_OK;
  parse_link (nlh, &l);
  if (l.mac_len == m->want->mac_len && memcmp (l.mac, m->want->mac, l.mac_len) == 0)
    {
      m->found = l;
      m->n++;
    }
  return MNL_CB_OK;
}

static void
save_addr (struct addr_list *list, const struct nlmsghdr *nlh)
{
  const struct nlattr *tb[IFLA_MAX + 1] = { NULL };
  const struct ifaddrmsg *ifa = mnl_nlmsg_get_payload (nlh);
  size_t alen = ifa->ifa_family == AF_INET ? 4 : 16;
  struct saved_addr a = { 0 };

  if (ifa->ifa_index != (unsigned)list->ifindex
      || (ifa->ifa_family != AF_INET && ifa->ifa_family != AF_INET6))
    return;
  mnl_attr_parse (nlh, sizeof *ifa, attr_cb, tb);
  a.flags = ifa->ifa_flags;
  if (tb[IFA_FLAGS] != NULL && mnl_attr_validate (tb[IFA_FLAGS], MNL_TYPE_U32) == 0)
    a.flags = mnl_attr_get_u32 (tb[IFA_FLAGS]);
  /* Only what the spec asks to keep: permanent addresses of global scope
     (not the link-local or autoconfigured ones the kernel recreates). */
  if (!(a.flags & IFA_F_PERMANENT) || ifa->ifa_scope != RT_SCOPE_UNIVERSE)
    return;
  a.family = ifa->ifa_family;
  a.prefixlen = ifa->ifa_prefixlen;
  a.scope = ifa->ifa_scope;
  if (tb[IFA_LOCAL] != NULL && mnl_attr_get_payload_len (tb[IFA_LOCAL]) == alen)
    a.has_local = true, memcpy (a.local, mnl_attr_get_payload (tb[IFA_LOCAL]), alen);
  if (tb[IFA_ADDRESS] != NULL && mnl_attr_get_payload_len (tb[IFA_ADDRESS]) == alen)
    a.has_address = true, memcpy (a.address, mnl_attr_get_payload (tb[IFA_ADDRESS]), alen);
  if (a.family == AF_INET && tb[IFA_BROADCAST] != NULL && mnl_attr_get_payload_len (tb[IFA_BROADCAST]) == 4)
    a.has_broadcast = true, memcpy (a.broadcast, mnl_attr_get_payload (tb[IFA_BROADCAST]), 4);
  if (!a.has_local && !a.has_address)
    return;
  list->v = xreallocarray (list->v, list->n + 1, sizeof *list->v);
  list->v[list->n++] = a;
}

static int
addr_cb (const struct nlmsghdr *nlh, void *data)
{
  if (nlh->nlmsg_type == RTM_NEWADDR)
    save_addr (data, nlh);
  return MNL_CB_OK;
}

static int
dump (struct mnl_socket *nl, uint16_t type, mnl_cb_t cb, void *data, struct ab_nl_reply *reply)
{
  char buf[MNL_SOCKET_BUFFER_SIZE];
  struct nlmsghdr *nlh = mnl_nlmsg_put_header (buf);

  nlh->nlmsg_type = type;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  /* Zeroed header of the request type: family AF_UNSPEC, no filter. */
  mnl_nlmsg_put_extra_header (nlh,
                              type == RTM_GETLINK ? sizeof (struct ifinfomsg) : sizeof (struct ifaddrmsg));
  return ab_nl_talk (nl, nlh, cb, data, reply);
}

static int
add_addr (struct mnl_socket *nl, int ifindex, const struct saved_addr *a, struct ab_nl_reply *reply)
{
  size_t alen = a->family == AF_INET ? 4 : 16;
  char buf[MNL_SOCKET_BUFFER_SIZE];
  struct nlmsghdr *nlh = mnl_nlmsg_put_header (buf);
  struct ifaddrmsg *ifa;
  uint32_t flags = a->flags & (IFA_F_NOPREFIXROUTE | IFA_F_HOMEADDRESS | IFA_F_MANAGETEMPADDR);

  /* The address was in use on this very link already: no second DAD, so
     it is usable as soon as the link is up. */
  if (a->family == AF_INET6)
    flags |= IFA_F_NODAD;
  nlh->nlmsg_type = RTM_NEWADDR;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL;
  ifa = mnl_nlmsg_put_extra_header (nlh, sizeof *ifa);
  ifa->ifa_family = (unsigned char)a->family;
  ifa->ifa_prefixlen = a->prefixlen;
  ifa->ifa_flags = (unsigned char)(flags & 0xff);
  ifa->ifa_scope = a->scope;
  ifa->ifa_index = (unsigned)ifindex;
  if (a->has_local)
    mnl_attr_put (nlh, IFA_LOCAL, alen, a->local);
  if (a->has_address)
    mnl_attr_put (nlh, IFA_ADDRESS, alen, a->address);
  if (a->has_broadcast)
    mnl_attr_put (nlh, IFA_BROADCAST, 4, a->broadcast);
  mnl_attr_put_u32 (nlh, IFA_FLAGS, flags);
  return ab_nl_talk (nl, nlh, NULL, NULL, reply);
}

static int
move_link (struct mnl_socket *nl, int ifindex, int netns_fd, const char *new_name, struct ab_nl_reply *reply)
{
  char buf[MNL_SOCKET_BUFFER_SIZE];
  struct nlmsghdr *nlh;

  newlink_msg (buf, ifindex, &nlh);
  mnl_attr_put_u32 (nlh, IFLA_NET_NS_FD, (uint32_t)netns_fd);
  if (new_name != NULL)
    mnl_attr_put_strz (nlh, IFLA_IFNAME, new_name);
  return ab_nl_talk (nl, nlh, NULL, NULL, reply);
}

#define NL_FAIL(err, r, fmt, ...)                                                                            \
  ab_error_set (err, (r)->errnum, fmt "%s%s%s", __VA_ARGS__, ab_nl_extack_sep (r), (r)->extack,              \
                ab_nl_extack_end (r))

/* The moved link in the target: the kernel keeps its ifindex unless the
   target uses it already; then it is the one link with its hardware
   address.  The target runs no container code yet, so nothing there can
   race us or fake a match. */
static int
find_moved (struct mnl_socket *target, const struct link_info *host, struct link_info *out, ab_error_t *err)
{
  struct mac_match m = { .want = host };
  struct ab_nl_reply r;

  if (get_link (target, NULL, host->ifindex, out, &r) < 0)
    return ab_error_set (err, errno, "interface `%s`: RTM_GETLINK in the target", host->name);
  if (r.errnum == 0 && out->mac_len == host->mac_len && memcmp (out->mac, host->mac, host->mac_len) == 0)
    return 0;
  if (host->mac_len == 0)
    return ab_error_setc (err, AB_EC_SETUP, 0, "interface `%s`: moved, but not found in the target namespace",
                          host->name);
  if (dump (target, RTM_GETLINK, mac_match_cb, &m, &r) < 0)
    return ab_error_set (err, errno, "interface `%s`: RTM_GETLINK dump in the target", host->name);
  if (r.errnum != 0)
    return NL_FAIL (err, &r, "interface `%s`: RTM_GETLINK dump in the target", host->name);
  if (m.n != 1)
    return ab_error_setc (err, AB_EC_SETUP, 0,
                          "interface `%s`: moved, but %zu links of the target have its address", host->name,
                          m.n);
  *out = m.found;
  return 0;
}

static bool
valid_ifname (const char *name)
{
  size_t len = name != NULL ? strlen (name) : 0;

  if (len == 0 || len >= IFNAMSIZ || strcmp (name, ".") == 0 || strcmp (name, "..") == 0)
    return false;
  for (size_t i = 0; i < len; i++)
    if (name[i] == '/' || name[i] == ':' || name[i] <= ' ' || name[i] == 0x7f)
      return false;
  return true;
}

int
ab_netdev_move (const char *host_name, const char *new_name, int netns_fd, ab_error_t *err)
{
  _cleanup_mnl_ struct mnl_socket *host = NULL;
  _cleanup_mnl_ struct mnl_socket *target = NULL;
  _cleanup_ (addr_list_free) struct addr_list addrs = { 0 };
  struct link_info hl, tl;
  const char *final = new_name != NULL ? new_name : host_name;
  struct ab_nl_reply r;

  if (!valid_ifname (host_name))
    return ab_error_setc (err, AB_EC_CONFIG, 0, "interface name `%s` is invalid", host_name ? host_name : "");
  if (!valid_ifname (final) || (strchr (final, '%') != NULL && !ab_str_has_suffix (final, "%d"))
      || strchr (final, '%') != strrchr (final, '%'))
    return ab_error_setc (err, AB_EC_CONFIG, 0, "interface `%s`: new name `%s` is invalid", host_name, final);

  host = ab_nl_open (-1, NETLINK_ROUTE, err);
  if (host == NULL)
    return -1;
  target = ab_nl_open (netns_fd, NETLINK_ROUTE, err);
  if (target == NULL)
    return ab_error_prefix (err, "interface `%s`", host_name);

  if (get_link (host, host_name, 0, &hl, &r) < 0)
    return ab_error_set (err, errno, "interface `%s`: RTM_GETLINK", host_name);
  if (r.errnum == ENODEV)
    return ab_error_setc (err, AB_EC_CONFIG, 0, "interface `%s` does not exist on the host", host_name);
  if (r.errnum != 0)
    return NL_FAIL (err, &r, "interface `%s`: RTM_GETLINK", host_name);

  /* Read the addresses now: the move flushes them. */
  addrs.ifindex = hl.ifindex;
  if (dump (host, RTM_GETADDR, addr_cb, &addrs, &r) < 0)
    return ab_error_set (err, errno, "interface `%s`: RTM_GETADDR dump", host_name);
  if (r.errnum != 0)
    return NL_FAIL (err, &r, "interface `%s`: RTM_GETADDR dump", host_name);

  /* The spec wants an error, not a kernel-made name, when the name is
     taken in the container; a %d template lets the kernel choose. */
  if (strchr (final, '%') == NULL)
    {
      if (get_link (target, final, 0, &tl, &r) < 0)
        return ab_error_set (err, errno, "interface `%s`: RTM_GETLINK in the target", host_name);
      if (r.errnum == 0)
        return ab_error_setc (
            err, AB_EC_CONFIG, EEXIST,
            "interface `%s`: the container's network namespace has an interface `%s` already", host_name,
            final);
    }

  if (move_link (host, hl.ifindex, netns_fd, new_name, &r) < 0)
    return ab_error_set (err, errno, "interface `%s`: move into the container: RTM_NEWLINK", host_name);
  if (r.errnum != 0)
    return NL_FAIL (err, &r, "interface `%s`: move into the container: RTM_NEWLINK", host_name);

  if (find_moved (target, &hl, &tl, err) < 0)
    return -1;
  for (size_t i = 0; i < addrs.n; i++)
    {
      const struct saved_addr *a = &addrs.v[i];
      char text[INET6_ADDRSTRLEN];

      inet_ntop (a->family, a->has_local ? a->local : a->address, text, sizeof text);
      if (add_addr (target, tl.ifindex, a, &r) < 0)
        return ab_error_set (err, errno, "interface `%s`: add address %s/%u: RTM_NEWADDR", tl.name, text,
                             a->prefixlen);
      if (r.errnum != 0 && r.errnum != EEXIST)
        return NL_FAIL (err, &r, "interface `%s`: add address %s/%u: RTM_NEWADDR", tl.name, text,
                        a->prefixlen);
    }
  if (link_set_up (target, tl.ifindex, &r) < 0)
    return ab_error_set (err, errno, "interface `%s`: set up: RTM_NEWLINK", tl.name);
  if (r.errnum != 0)
    return NL_FAIL (err, &r, "interface `%s`: set up: RTM_NEWLINK", tl.name);
  return 0;
}
