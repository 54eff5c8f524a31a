/* The container's network, from the parent: the nftables egress wall of
 * netns/netns.h in the container's network namespace, linux.netDevices, and
 * the domain-allowlist proxy of netns/egress.h (in the supervisor for a
 * foreground run, in a per-container daemon for a detached one). */
#ifndef AB_RUNTIME_NETWORK_H
#define AB_RUNTIME_NETWORK_H

#include <stdbool.h>
#include <stddef.h>

#include "runtime/error.h"
#include "spec/gen.h"

/* Where the egress proxy listens inside the container's netns (127.0.0.1,
   [::1]): the HTTP/CONNECT proxy and the DNS stub. */
#define AB_NET_PROXY_HTTP_PORT 3128
#define AB_NET_PROXY_DNS_PORT 53

struct ab_container;
struct ab_ns_plan;
struct ab_net;

/* Before clone: parse the policies (dev.agentbox.net.allow, the domain
   annotations and the --egress-policy baseline), check they fit the
   namespaces, and with a proxy add the read-only /etc/resolv.conf mount and
   the proxy variables to the process (in memory: the snapshot is the
   user's config).  egress_baseline may be NULL. */
int ab_net_prepare (struct ab_container *c, const char *egress_baseline, bool foreground, ab_error_t *err);

/* After clone, while the child mounts: move netDevices, install the wall,
   start the proxy, keep the netns for the denied record.  own_thread: the
   caller is a thread that ends after this call, which may then enter the
   container's network namespace itself (else a thread is made for that). */
int ab_net_setup (struct ab_container *c, const struct ab_ns_plan *plan, bool own_thread, ab_error_t *err);

/* After the container's last process: stop the proxy and describe what was
   refused, as one JSON array value (NULL when there is no wall).  Without
   read_wall the wall's denials are left out (nothing will report them: a
   run without a record), which spares a thread and a netlink dump. */
char *ab_net_violations_json (struct ab_container *c, bool read_wall);
/* Every decision of the proxy as one JSON array value, or NULL. */
char *ab_net_decisions_json (struct ab_container *c);

void ab_net_free (struct ab_net *n);

/* What landlock's network rules need of the container's network: from
   create's policies (the --egress-policy baseline included), or for exec
   from the config's annotations. */
struct ab_ll_net;
struct ab_spec;
void ab_net_landlock (const struct ab_net *n, struct ab_ll_net *out);
int ab_net_landlock_spec (const struct ab_spec *s, struct ab_ll_net *out, ab_error_t *err);

/* Readings of a network namespace's denied-destination counts, for the
   share of one exec in a long-lived container. */
struct ab_net_denied;
struct ab_net_counts
{
  struct ab_net_denied *v;
  size_t n;
};
/* The held network namespace of a container with a wall (<root>/<id>/netns), or -1. */
int ab_net_held_netns (const char *root, const char *id);
void ab_net_counts_read (int netns_fd, struct ab_net_counts *out);
void ab_net_counts_free (struct ab_net_counts *c);
/* What the counts gained from before to after, in the shape of
   ab_net_violations_json. */
char *ab_net_violations_since (const struct ab_net_counts *before, const struct ab_net_counts *after);

#endif
