/* The domain-allowlist egress proxy and DNS stub (supervisor side).
 *
 * The container's network namespace keeps only `lo`.  The supervisor, which
 * stays in the host netns, opens its listening sockets INSIDE the container's
 * netns (a socket's namespace is fixed when it is created), so the container
 * can reach exactly three things: the DNS stub on 127.0.0.1:53 (UDP and TCP),
 * the HTTP/CONNECT proxy on 127.0.0.1:<http_port>, and, through the nftables
 * `redirect` that netns/netns.h installs, the same proxy for TCP to the
 * captured ports (80, 443, ...).  Every upstream connection is made by the
 * supervisor from the host netns, to an address the supervisor resolved or
 * pinned itself and checked against the private/metadata ranges.  Every
 * decision is recorded.  Once decided, a connection is relayed with
 * splice(2) where the bytes cannot name another host (TLS, tunnels, the
 * answers, request bodies); plain HTTP is read request by request, and a
 * later request on a kept-alive connection that names another host is
 * refused and recorded (egress-relay.c).
 *
 * Policy input (annotations; an admin baseline with the same keys can only be
 * narrowed by them, see ab_egress_policy_parse):
 *
 *   dev.agentbox.net.allow-domains   ENTRY[,ENTRY...]
 *   dev.agentbox.net.deny-domains    ENTRY[,ENTRY...]
 *   dev.agentbox.net.pins            NAME=ADDRESS[,NAME=ADDRESS...]
 *
 *   ENTRY   = HOST [ ":" PORT ]*          e.g. example.com  *.pypi.org:443
 *   HOST    = NAME | "*." NAME | IPV4 | "[" IPV6 "]"
 *   NAME    = LDH labels (letters, digits, '-', '_'), 1..63 bytes each, at most
 *             253 bytes, case-insensitive, one trailing dot ignored; the last
 *             label is not all digits (that would be an IP in disguise)
 *   PORT    = 1..65535; at most 16 per entry
 *
 * An allow entry without ports allows 80 and 443; a deny entry without ports
 * denies every port.  `*.example.com` matches a.example.com and
 * a.b.example.com, never example.com itself.  Deny wins over allow.  A
 * NAME=ADDRESS pin (IPv4 or IPv6, no brackets needed) replaces DNS for that
 * exact name; several pins for one name give several addresses.
 *
 * DNS answers: A/AAAA of an allowed name come from its pins or from the
 * host's resolver (getaddrinfo, off the event loop) and are pinned for the
 * life of the engine (no rebinding).  Other query types of an allowed name get
 * NOERROR with no answer.  A name that is not allowed gets NXDOMAIN: every
 * stub resolver fails fast on it without retrying (REFUSED makes glibc try
 * the next server and some tools retry "temporary" failures), and the record
 * says why.  Malformed queries get FORMERR when a header could be read, else
 * they are dropped.
 *
 * Integration (what the runtime does when the policy is enabled):
 *  1. parse: ab_egress_baseline_load (--egress-policy) then
 *     ab_egress_policy_parse (spec annotations) before any namespace exists;
 *     an enabled policy requires a NEW network namespace (refuse a
 *     linux.namespaces net path: our listeners would land in a shared netns).
 *  2. once the child has unshared its netns and waits on the sync socket:
 *     open its netns (O_RDONLY|O_CLOEXEC), then ab_egress_start (run, MCP)
 *     or, for create, ab_egress_daemon_spawn once the child is in its cgroup.
 *  3. ab_netns_apply in that netns with { enabled, http_port, dns_port,
 *     ab_egress_policy_ports () }.  The wall must route every destination to
 *     lo with source 127.0.0.1 (`default dev lo src 127.0.0.1`, and an IPv6
 *     default via lo), redirect TCP to the ports for ip and ip6, accept
 *     127.0.0.1:dns_port (udp, tcp), 127.0.0.1:http_port, [::1]:http_port.
 *  4. bind a file holding AB_PLAN_RESOLV_CONF (runtime/plan/plan.h) read-only over the
 *     rootfs's /etc/resolv.conf (through the rootfs fd), and add the proxy
 *     variables to the process's environment (convenience: transparent
 *     capture does not need them).  Then release the child.
 *  5. after the container's last process: ab_egress_stop, put
 *     ab_egress_decisions_gen in the result record, ab_egress_free.  The
 *     daemon writes its record file itself; `delete` sends it SIGTERM if it
 *     is still alive.
 */
#ifndef AB_NETNS_EGRESS_H
#define AB_NETNS_EGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"
#include "base/util.h"
#include "base/gen.h"
#include "spec/model.h"
#include "spec/netpolicy.h"

/* Why the proxy never connects to an address ("ssrf:loopback",
   "ssrf:rfc1918", "ssrf:metadata", ...), or NULL when it is public
   (egress-addr.c; the wall's allow list is judged by the same table in
   `agentbox audit`). */
const char *ab_egress_addr_refusal (int family, const uint8_t *addr);

/* ---- the engine ----------------------------------------------------- */

struct ab_egress_options
{
  uint16_t http_port;          /* 0: 3128, or any free port if 3128 is taken */
  uint16_t dns_port;           /* 0: 53 */
  unsigned head_timeout_ms;    /* request head / ClientHello must arrive within (0: 10 s) */
  unsigned connect_timeout_ms; /* upstream connect, per address (0: 10 s) */
  unsigned idle_timeout_ms;    /* relay without traffic either way (0: 300 s) */
  unsigned max_connections;    /* proxy connections at once; more are reset (0: 512; each two sockets, at
                                  most ~200 KiB of buffers, up to two pipes: the engine's pipes take at
                                  most an eighth of RLIMIT_NOFILE in fds, past that the relay copies) */
  size_t max_decisions;        /* record entries kept; later ones are counted only (0: 10000) */
  bool copy_relay;             /* relay through user-space buffers, never splice(2) (tests the fallback
                                  taken when no pipe can be had) */
};

struct ab_egress;

/* Start the engine for the container whose network namespace is netns_fd:
   create the listeners inside it (from a short-lived helper thread that
   setns()es there and exits), copy the policy, and run the event loop and the
   resolver workers in threads of the caller's process, in the caller's
   (host) netns.  Needs CAP_SYS_ADMIN over the container netns.  opt may be
   NULL.  The caller keeps netns_fd. */
int ab_egress_start (const struct ab_egress_policy *p, int netns_fd, const struct ab_egress_options *opt,
                     struct ab_egress **out, ab_error_t *err);
/* The ports the listeners got inside the container (for ab_netns_apply). */
void ab_egress_ports (const struct ab_egress *e, uint16_t *http_port, uint16_t *dns_port);
/* Stop: close every socket, join every thread.  The record stays readable
   until ab_egress_free.  Idempotent. */
void ab_egress_stop (struct ab_egress *e);
/* Stop if needed and free. */
void ab_egress_free (struct ab_egress *e);

enum ab_egress_proto
{
  AB_EGRESS_P_DNS,       /* "dns-A", "dns-AAAA", "dns-MX", "dns-TYPE65534" */
  AB_EGRESS_P_CONNECT,   /* "CONNECT" */
  AB_EGRESS_P_HTTP,      /* the method of an absolute-URI request: "GET", "POST" */
  AB_EGRESS_P_TLS_SNI,   /* "tls-sni": transparent capture, name from the ClientHello */
  AB_EGRESS_P_HTTP_HOST, /* "http-host": transparent capture, name from Host */
};

struct ab_egress_decision
{
  uint64_t time_ns;  /* CLOCK_REALTIME */
  char *name;        /* the name as asked (escaped if it was not a valid name) */
  char address[48];  /* upstream or original destination, "" when none */
  uint16_t port;     /* 0 for DNS */
  int proto;         /* enum ab_egress_proto */
  char protocol[24]; /* its text, see the enum */
  bool allowed;
  char *rule; /* "allow:*.example.com", "deny:bad.example", "default-deny", "ssrf:rfc1918", "not-pinned",
                 "sni-mismatch", "host-mismatch", ...; a later request on a kept-alive plain HTTP
                 connection ("http-host"): "host-mismatch", "no-host", "upgrade-not-first",
                 "http-malformed" */
};

/* A copy of the record (free with ab_egress_decisions_free).  *dropped gets
   the number of decisions past max_decisions that were not kept. */
size_t ab_egress_decisions (struct ab_egress *e, struct ab_egress_decision **out, uint64_t *dropped);
void ab_egress_decisions_free (struct ab_egress_decision *d, size_t n);
/* One JSON array value, one object per decision, in order:
   {"time":"2026-12-02T10:00:00.000000000Z","name":"pypi.org","address":"192.0.2.10","port":443,
    "protocol":"CONNECT","allowed":true,"rule":"allow:pypi.org"} */
void ab_egress_decisions_gen (struct ab_egress *e, struct ab_gen *g);

/* ---- detached containers --------------------------------------------- */

struct ab_egress_daemon
{
  pid_t pid; /* the daemon, reparented away from the caller (double fork) */
  uint16_t http_port;
  uint16_t dns_port;
};

/* For `create`/`start`: run the engine in a small process of its own, in the
   host netns, whose life is tied to the container's cgroup (cgroup_dirfd, a
   directory fd of the container's cgroup: v2 `cgroup.events` when it has one,
   else v1 `cgroup.procs`).  The daemon exits when that cgroup has no process
   left (or on SIGTERM), after writing the decision record (a JSON array) to
   record_dirfd/record_name, which the spawn creates (an empty array first)
   and the daemon rewrites in place as decisions accrue: it never makes a
   directory entry itself, so a delete removing the directory under it
   leaves nothing behind.  It keeps none of the caller's fds but netns_fd,
   cgroup_dirfd and the record's (stdio goes to /dev/null).  Spawn it once
   the container's first process is in the cgroup: an empty cgroup makes it
   exit at once.  Returns once the listeners exist (or with the daemon's
   error).  A container without a cgroup (rootless, none delegated) gives
   cgroup_dirfd -1 and a pidfd of its init instead: the daemon then lasts
   while the init does (with its pid namespace, the init's end is the end
   of every process of the container). */
int ab_egress_daemon_spawn (const struct ab_egress_policy *p, int netns_fd, int cgroup_dirfd, int init_pidfd,
                            int record_dirfd, const char *record_name, const struct ab_egress_options *opt,
                            struct ab_egress_daemon *out, ab_error_t *err);

#endif
