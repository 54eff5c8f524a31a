/* The network namespace egress wall (rtnetlink through libmnl, nftables
 * through libnftnl; no `ip` or `nft` exec anywhere).
 *
 * Policy input: struct ab_net_policy (spec/netpolicy.h), the typed
 * dev.agentbox.net.allow annotation.
 */
#ifndef AB_NETNS_NETNS_H
#define AB_NETNS_NETNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/gen.h"
#include "spec/netpolicy.h"

/* How the supervisor-side egress proxy (if any) is reached from inside. */
struct ab_netns_proxy
{
  bool enabled;
  uint16_t http_port;                /* 127.0.0.1:http_port, the HTTP/CONNECT proxy */
  uint16_t dns_port;                 /* 127.0.0.1:dns_port, the DNS stub (53) */
  const uint16_t *redirect_ports;    /* TCP ports captured transparently (80, 443, ...) */
  size_t n_redirect_ports;
};

/* Configure the network namespace behind netns_fd (the container's; -1:
   the one the caller is in): bring
   lo up, add the routes that make every destination reach the output hook,
   and install the agentbox table in one nftables batch: output policy drop,
   metadata addresses dropped before any accept (unless nothing can be let
   out of a namespace with lo alone, lo_only: ab_nft_has_metadata_chain),
   the allow entries, replies
   of established flows, loopback as the design needs, a forward/input stance
   that makes the namespace useless as a router, and the recording of denied
   destinations.  Requires CAP_NET_ADMIN over this netns (its creator's
   user namespace: a rootless runtime that made it has it).  socks: its
   NETLINK_NETFILTER and NETLINK_ROUTE sockets made in it already (taken,
   closed whatever happens), or NULL to make them here. */
int ab_netns_apply (int netns_fd, const struct ab_net_policy *p, const struct ab_netns_proxy *proxy, bool lo_only,
                    int *socks, ab_error_t *err);

/* The rules ab_netns_apply installs, in nft syntax, for `state` and --debug. */
char *ab_netns_rules_text (const struct ab_net_policy *p, const struct ab_netns_proxy *proxy, bool lo_only);

struct ab_net_denied
{
  int family;
  uint8_t addr[16];
  uint16_t port;  /* 0 for ICMP */
  int proto;      /* IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMP, IPPROTO_ICMPV6, ... */
  uint64_t packets;
};

/* Read the denied-destination record of the netns behind netns_fd (works
   after the container's processes exited, as long as the netns is held). */
int ab_netns_read_denied (int netns_fd, struct ab_net_denied **out, size_t *n, ab_error_t *err);

/* linux.netDevices: move host interface `host_name` into the netns behind
   netns_fd, rename it to new_name (NULL: keep; a name ending in %d lets the
   kernel pick), keep its permanent global addresses, set it up. */
int ab_netdev_move (const char *host_name, const char *new_name, int netns_fd, ab_error_t *err);

#endif
