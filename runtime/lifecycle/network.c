#include "config.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "netns/egress.h"
#include "netns/netns.h"
#include "runtime/plan/plan.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/lifecycle/container.h"
#include "runtime/lifecycle/lifecycle-internal.h"
#include "base/log.h"
#include "runtime/lifecycle/network.h"
#include "runtime/ns.h"
#include "runtime/sync.h"
#include "base/util.h"
#include "base/gen.h"

/* What the container's network holds while it lives. */
struct ab_net
{
  const struct ab_plan_net *plan;
  struct ab_egress *engine; /* the proxy, when it runs in this process */
};

void
ab_net_free (struct ab_net *n)
{
  if (n == NULL)
    return;
  ab_egress_free (n->engine);
  free (n);
}

int
ab_net_prepare (struct ab_container *c, const struct ab_plan *p, ab_error_t *err)
{
  struct ab_net *n = xzalloc (sizeof *n);

  c->net = n;
  n->plan = &p->net;
  /* The plan's generated /etc/hosts, beside it (name resolution, as the
     stub's resolv.conf). */
  if (p->hosts && ab_write_file_atomic (c->dirfd, "hosts", p->hosts, strlen (p->hosts), 0644, err) < 0)
    return ab_state_dir_failed (err, c->root, c->id);
  if (p->net.resolv_conf == NULL)
    return 0;
  /* The file the plan's /etc/resolv.conf mount binds: in the state
     directory, which the container's user cannot traverse. */
  if (ab_write_file_atomic (c->dirfd, "resolv.conf", p->net.resolv_conf, strlen (p->net.resolv_conf), 0644, err)
      < 0)
    return ab_state_dir_failed (err, c->root, c->id);
  return 0;
}

static int
hold_netns (struct ab_container *c, ab_error_t *err)
{
  char src[64], dst[64];
  int fd;

  /* Detached: keep the namespace (and its denied record) alive after the
     container's processes, until delete, like `ip netns add` does. */
  fd = openat (c->dirfd, AB_NETNS_FILE, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    {
      ab_error_set (err, errno, "create `" AB_NETNS_FILE "`");
      return ab_state_dir_failed (err, c->root, c->id);
    }
  close (fd);
  snprintf (src, sizeof src, "/proc/self/fd/%d", c->netns_fd);
  snprintf (dst, sizeof dst, "/proc/self/fd/%d/" AB_NETNS_FILE, c->dirfd);
  if (mount (src, dst, NULL, MS_BIND, NULL) < 0)
    return ab_error_set (err, errno, "hold the network namespace of `%s`", c->id);
  c->state->netns_held = true;
  return 0;
}

/* --debug: the installed rules, one log entry per line (an entry is cut at
   2 KiB, and the table of even an empty policy is longer). */
static void
debug_rules (const char *id, const char *text)
{
  const char *p = text, *nl;

  ab_debug ("nftables rules of `%s`:", id);
  for (; *p; p = nl + 1)
    {
      nl = strchrnul (p, '\n');
      ab_debug ("%.*s", (int)(nl - p), p);
      if (*nl == '\0')
        break;
    }
}

/* What the wall lets through to the egress proxy, from the plan. */
static void
wall_proxy (const struct ab_plan_net *pn, struct ab_netns_proxy *proxy)
{
  memset (proxy, 0, sizeof *proxy);
  if (!pn->egress.enabled)
    return;
  proxy->enabled = true;
  proxy->http_port = AB_NET_PROXY_HTTP_PORT;
  proxy->dns_port = AB_NET_PROXY_DNS_PORT;
  proxy->redirect_ports = pn->redirect;
  proxy->n_redirect_ports = pn->n_redirect;
}

void
ab_net_rules_record (struct ab_container *c)
{
  const struct ab_plan_net *pn = c->net ? c->net->plan : NULL;
  struct ab_netns_proxy proxy;

  if (pn == NULL || !pn->netns || !pn->wall || c->state->rules_text != NULL)
    return;
  wall_proxy (pn, &proxy);
  c->state->rules_text = ab_netns_rules_text (pn->allow, &proxy, pn->lo_only);
}

int
ab_net_setup (struct ab_container *c, const struct ab_ns_setup *ns, int wall_sock_fd, ab_error_t *err)
{
  struct ab_net *n = c->net;
  const struct ab_plan_net *pn = n ? n->plan : NULL;
  const struct ab_linux *l = c->plan->spec->linux_;
  struct ab_netns_proxy proxy;
  size_t i;

  ab_set_step ("network");
  if (pn == NULL || !pn->netns)
    return 0;
  if (ns->join_fd[AB_NS_NET] >= 0)
    c->netns_fd = fcntl (ns->join_fd[AB_NS_NET], F_DUPFD_CLOEXEC, 3);
  else
    {
      char path[64];
      snprintf (path, sizeof path, "/proc/%d/ns/net", (int) c->pid);
      c->netns_fd = open (path, O_RDONLY | O_CLOEXEC);
    }
  if (c->netns_fd < 0)
    return ab_error_set (err, errno, "open the container's network namespace");

  for (i = 0; i < l->n_net_devices; i++)
    if (ab_netdev_move (l->net_devices[i].host_name, l->net_devices[i].name, c->netns_fd, err) < 0)
      return ab_error_prefix (err, "linux.netDevices.%s", l->net_devices[i].host_name);

  wall_proxy (pn, &proxy);
  if (pn->egress.enabled)
    {
      struct ab_egress_options opt = { .http_port = AB_NET_PROXY_HTTP_PORT, .dns_port = AB_NET_PROXY_DNS_PORT };
      ab_set_step ("egress-proxy");
      if (pn->proxy_here)
        {
          if (ab_egress_start (&pn->egress, c->netns_fd, &opt, &n->engine, err) < 0)
            return -1;
        }
      else
        {
          struct ab_egress_daemon d;
          int cgfd = c->cg ? ab_cgroup_clone_fd (c->cg) : -1;
          /* No cgroup (rootless, none delegated): the daemon lasts while
             the init does, which the pid namespace makes the container's
             end. */
          _cleanup_close_ int initfd = c->cg ? -1 : (int) syscall (SYS_pidfd_open, c->pid, 0);
          if (c->cg == NULL && initfd < 0)
            return ab_error_set (err, errno, "egress daemon: pidfd_open the container's init %d", (int) c->pid);
          if (ab_egress_daemon_spawn (&pn->egress, c->netns_fd, cgfd, initfd, c->dirfd, "egress.json", &opt, &d,
                                      err)
              < 0)
            return -1;
          c->state->helper_pid = d.pid;
          c->state->helper_start = ab_proc_start_time (d.pid, NULL);
        }
    }
  if (pn->wall)
    {
      ab_set_step ("network");
      int socks[2] = { -1, -1 };
      if (wall_sock_fd >= 0 && ab_recv_fds (wall_sock_fd, socks, 2, err) < 0)
        return err->errnum == EPIPE ? ab_error_set (err, EPIPE, "the container's process ended before it made the "
                                                                "wall's netlink sockets")
                                    : ab_error_prefix (err, "the wall's netlink sockets from the container's process");
      if (ab_netns_apply (c->netns_fd, pn->allow, &proxy, pn->lo_only, wall_sock_fd >= 0 ? socks : NULL, err) < 0)
        return -1;
      /* (Their text for `state` is written later, ab_net_rules_record:
         not before the program starts.) */
      if (ab_log_debug_enabled ())
        {
          _cleanup_free_ char *text = ab_netns_rules_text (pn->allow, &proxy, pn->lo_only);
          debug_rules (c->id, text);
        }
    }
  /* Rootless, the namespace cannot be bound to a file (a mount in the
     host's mount namespace): a detached container's wall counts can be
     read while it runs (its init's /proc/PID/ns/net), not after. */
  if (!pn->proxy_here && pn->own_ns && !c->plan->rootless && hold_netns (c, err) < 0)
    return -1;
  /* What delete --force needs after a crash from here on (the daemon to
     stop, the bound namespace to unmount) goes to state.json at once; the
     rules' text waits for the created state (phase_commit). */
  return c->state->helper_pid > 0 || c->state->netns_held ? 1 : 0;
}

/* The record re-emits the violations only within its bounds (runtime/supervise/record.c:
   4096 entries, 1 MiB) and drops every one of them past those, so a program
   that floods the wall or the proxy with refusals could empty the list and
   hide what it really tried.  Each source lists at most this much; the rest
   is counted in one closing entry per source. */
#define VIOLATIONS_MAX_PER_SOURCE 2000
#define VIOLATIONS_MAX_BYTES_PER_SOURCE (400u << 10)

static bool
violations_room (struct ab_gen *g, size_t start, size_t listed)
{
  size_t len;

  ab_gen_buf (g, &len);
  return listed < VIOLATIONS_MAX_PER_SOURCE && len - start < VIOLATIONS_MAX_BYTES_PER_SOURCE;
}

static void
gen_denied (struct ab_gen *g, const struct ab_net_denied *d, size_t nd)
{
  size_t start, listed = 0, i;
  uint64_t omitted_packets = 0;

  ab_gen_buf (g, &start);
  for (i = 0; i < nd; i++)
    {
      char addr[64];
      const char *proto = d[i].proto == 6    ? "tcp"
                          : d[i].proto == 17 ? "udp"
                          : d[i].proto == 1  ? "icmp"
                          : d[i].proto == 58 ? "icmpv6"
                                             : "other";
      if (!violations_room (g, start, listed))
        {
          omitted_packets += d[i].packets;
          continue;
        }
      listed++;
      inet_ntop (d[i].family, d[i].addr, addr, sizeof addr);
      ab_gen_obj_open (g);
      ab_gen_kv_str (g, "type", "egress-denied");
      ab_gen_kv_str (g, "address", addr);
      ab_gen_kv_i64 (g, "port", d[i].port);
      ab_gen_kv_str (g, "protocol", proto);
      ab_gen_kv_u64 (g, "count", d[i].packets);
      ab_gen_kv_str (g, "by", "nftables");
      ab_gen_obj_close (g);
    }
  if (listed == nd)
    return;
  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "type", "egress-denied-omitted");
  ab_gen_kv_u64 (g, "entries", nd - listed);
  ab_gen_kv_u64 (g, "count", omitted_packets);
  ab_gen_kv_str (g, "by", "nftables");
  ab_gen_obj_close (g);
}

/* dropped: decisions the engine counted but did not keep (max_decisions). */
static void
gen_refused (struct ab_gen *g, const struct ab_egress_decision *dec, size_t ndec, uint64_t dropped)
{
  size_t start, listed = 0, omitted = 0, i;

  ab_gen_buf (g, &start);
  for (i = 0; i < ndec; i++)
    {
      char ts[64];
      if (dec[i].allowed)
        continue;
      if (!violations_room (g, start, listed))
        {
          omitted++;
          continue;
        }
      listed++;
      ab_format_time_rfc3339 (dec[i].time_ns, ts, sizeof ts);
      ab_gen_obj_open (g);
      ab_gen_kv_str (g, "type", "egress-refused");
      ab_gen_kv_str (g, "name", dec[i].name);
      ab_gen_kv_str (g, "address", dec[i].address);
      ab_gen_kv_i64 (g, "port", dec[i].port);
      ab_gen_kv_str (g, "protocol", dec[i].protocol);
      ab_gen_kv_str (g, "rule", dec[i].rule);
      ab_gen_kv_str (g, "time", ts);
      ab_gen_kv_str (g, "by", "proxy");
      ab_gen_obj_close (g);
    }
  if (omitted == 0 && dropped == 0)
    return;
  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "type", "egress-refused-omitted");
  ab_gen_kv_u64 (g, "entries", omitted);
  ab_gen_kv_u64 (g, "notRecorded", dropped);
  ab_gen_kv_str (g, "by", "proxy");
  ab_gen_obj_close (g);
}

char *
ab_net_violations_json (struct ab_container *c, bool read_wall)
{
  _cleanup_gen_ struct ab_gen *g = NULL;
  struct ab_net_denied *d = NULL;
  struct ab_egress_decision *dec = NULL;
  uint64_t dropped = 0;
  size_t nd = 0, ndec = 0;
  ab_error_t e = { 0 };

  if (c->net == NULL || (!c->net->plan->wall && c->net->engine == NULL))
    return NULL;
  if (c->net->engine)
    {
      ab_egress_stop (c->net->engine);
      ndec = ab_egress_decisions (c->net->engine, &dec, &dropped);
    }
  if (read_wall && c->net->plan->wall && c->netns_fd >= 0 && ab_netns_read_denied (c->netns_fd, &d, &nd, &e) < 0)
    ab_warn ("container `%s`: %s", c->id, e.msg);
  g = ab_gen_new (false);
  ab_gen_arr_open (g);
  gen_denied (g, d, nd);
  gen_refused (g, dec, ndec, dropped);
  ab_gen_arr_close (g);
  free (d);
  ab_egress_decisions_free (dec, ndec);
  return ab_gen_steal (g, false, NULL);
}

void
ab_net_counts_read (int netns_fd, struct ab_net_counts *out)
{
  ab_error_t e = { 0 };

  out->v = NULL;
  out->n = 0;
  if (ab_netns_read_denied (netns_fd, &out->v, &out->n, &e) < 0)
    ab_warn ("%s", e.msg);
}

void
ab_net_counts_free (struct ab_net_counts *c)
{
  free (c->v);
  c->v = NULL;
  c->n = 0;
}

char *
ab_net_violations_since (const struct ab_net_counts *before, const struct ab_net_counts *after)
{
  _cleanup_gen_ struct ab_gen *g = ab_gen_new (false);
  _cleanup_free_ struct ab_net_denied *gained = xcalloc (after->n + 1, sizeof *gained);
  size_t i, k, n = 0;

  for (i = 0; i < after->n; i++)
    {
      const struct ab_net_denied *d = &after->v[i];
      uint64_t count = d->packets;
      for (k = 0; k < before->n; k++)
        {
          const struct ab_net_denied *b = &before->v[k];
          if (b->family == d->family && b->port == d->port && b->proto == d->proto
              && memcmp (b->addr, d->addr, sizeof b->addr) == 0)
            count = d->packets > b->packets ? d->packets - b->packets : 0;
        }
      if (count == 0)
        continue;
      gained[n] = *d;
      gained[n++].packets = count;
    }
  ab_gen_arr_open (g);
  gen_denied (g, gained, n);
  ab_gen_arr_close (g);
  return ab_gen_steal (g, false, NULL);
}

char *
ab_net_decisions_json (struct ab_container *c)
{
  _cleanup_gen_ struct ab_gen *g = NULL;

  if (c->net == NULL || c->net->engine == NULL)
    return NULL;
  g = ab_gen_new (false);
  ab_egress_decisions_gen (c->net->engine, g);
  return ab_gen_steal (g, false, NULL);
}
