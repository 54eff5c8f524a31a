/* The container's network, from the parent: the nftables egress wall of
 * netns/netns.h in the container's network namespace, linux.netDevices, and
 * the domain-allowlist proxy of netns/egress.h (in the supervisor for a
 * foreground run, in a per-container daemon for a detached one). */
#ifndef AB_RUNTIME_NETWORK_H
#define AB_RUNTIME_NETWORK_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "base/gen.h"

struct ab_container;
struct ab_ns_setup;
struct ab_net;
struct ab_plan;

/* Before clone: the network of the plan p (its policies, the resolv.conf
   of the stub, which this writes into the state directory for the plan's
   mount of it) becomes c->net. */
int ab_net_prepare (struct ab_container *c, const struct ab_plan *p, ab_error_t *err);

/* After clone, while the child mounts: move netDevices, install the wall,
   start the proxy, keep the netns for the denied record.  1 when c->state
   gained what delete --force needs (the caller writes it at once), 0
   otherwise (the rules' text it records waits for the next write).
   Nothing here enters the container's namespaces: sockets made in them
   carry the work, the wall's from the container's process over
   wall_sock_fd (-1: made by netns/nl.h, ab_netns_sockets). */
int ab_net_setup (struct ab_container *c, const struct ab_ns_setup *ns, int wall_sock_fd, ab_error_t *err);

/* The wall's rules as text into c->state (for `state`), once the wall is
   in: made for the state write after setup (a detached create's created,
   a run's running), not in the setup every start waits for. */
void ab_net_rules_record (struct ab_container *c);

/* After the container's last process: stop the proxy and describe what was
   refused, as one JSON array value (NULL when there is no wall).  Without
   read_wall the wall's denials are left out (nothing will report them: a
   run without a record), which spares a thread and a netlink dump. */
char *ab_net_violations_json (struct ab_container *c, bool read_wall);
/* Every decision of the proxy as one JSON array value, or NULL. */
char *ab_net_decisions_json (struct ab_container *c);

void ab_net_free (struct ab_net *n);

/* Readings of a network namespace's denied-destination counts, for the
   share of one exec in a long-lived container. */
struct ab_net_denied;
struct ab_net_counts
{
  struct ab_net_denied *v;
  size_t n;
};
void ab_net_counts_read (int netns_fd, struct ab_net_counts *out);
void ab_net_counts_free (struct ab_net_counts *c);
/* What the counts gained from before to after, in the shape of
   ab_net_violations_json. */
char *ab_net_violations_since (const struct ab_net_counts *before, const struct ab_net_counts *after);

#endif
