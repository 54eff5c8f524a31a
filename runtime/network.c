#include "config.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "netns/egress.h"
#include "netns/netns.h"
#include "runtime/cgroup.h"
#include "runtime/container.h"
#include "runtime/landlock-rules.h"
#include "runtime/lifecycle-internal.h"
#include "runtime/log.h"
#include "runtime/network.h"
#include "runtime/ns.h"
#include "runtime/util.h"
#include "spec/gen.h"

#define RESOLV_FILE "resolv.conf"

struct ab_net
{
  bool wall;    /* install the nftables wall */
  bool own_ns;  /* we created the network namespace */
  struct ab_net_policy policy;
  struct ab_egress_policy egress;
  uint16_t redirect[64];
  size_t n_redirect;
  struct ab_egress *engine; /* foreground */
  bool foreground;
};

void
ab_net_free (struct ab_net *n)
{
  if (n == NULL)
    return;
  ab_egress_free (n->engine);
  ab_net_policy_free (&n->policy);
  ab_egress_policy_free (&n->egress);
  free (n);
}

static void
add_env (struct ab_process *p, const char *entry)
{
  const char *eq = strchr (entry, '=');
  size_t nl = (size_t) (eq - entry), k;

  for (k = 0; k < p->env.n; k++)
    if (strncmp (p->env.v[k], entry, nl) == 0 && p->env.v[k][nl] == '=')
      return; /* the config's own value wins */
  ab_strv_push (&p->env, entry);
}

int
ab_net_prepare (struct ab_container *c, const char *egress_baseline, bool foreground, ab_error_t *err)
{
  struct ab_spec *s = c->bundle->spec;
  const struct ab_linux *l = s->linux_;
  const char *allow = ab_kvlist_get (&s->annotations, AB_ANNOT_NET_ALLOW);
  struct ab_egress_policy baseline = { 0 };
  struct ab_net *n = xzalloc (sizeof *n);
  bool netns = l && l->ns[AB_NS_NET].present;
  bool joined = netns && l->ns[AB_NS_NET].path != NULL;

  c->net = n;
  n->foreground = foreground;
  n->own_ns = netns && !joined;
  if (allow && ab_net_policy_parse (allow, &n->policy, err) < 0)
    return ab_error_prefix (err, "config.json");
  if (egress_baseline && ab_egress_baseline_load (AT_FDCWD, egress_baseline, &baseline, err) < 0)
    return ab_error_prefix (err, "--egress-policy");
  if (ab_egress_policy_parse (&s->annotations, egress_baseline ? &baseline : NULL, &n->egress, err) < 0)
    {
      ab_egress_policy_free (&baseline);
      return ab_error_prefix (err, "config.json");
    }
  ab_egress_policy_free (&baseline);

  /* A netns we create always gets the wall; a joined one (podman,
     containerd) only when the config asks with the annotation. */
  n->wall = n->own_ns || (joined && allow != NULL);
  if ((allow || n->egress.enabled) && !netns)
    return ab_error_setc (err, AB_EC_CONFIG, 0,
                          "config.json: annotations: an egress policy needs a network namespace in linux.namespaces");
  if (n->egress.enabled && joined)
    return ab_error_setc (err, AB_EC_CONFIG, 0,
                          "config.json: annotations.%s: the egress proxy needs a new network namespace, not a "
                          "joined one (%s)",
                          AB_ANNOT_NET_ALLOW_DOMAINS, l->ns[AB_NS_NET].path);
  if (!n->egress.enabled)
    return 0;
  /* Its resolver is a bind on /etc/resolv.conf, and a mount namespace
     joined by path gets no mount from agentbox (runtime/child.c). */
  if (l->ns[AB_NS_MOUNT].path)
    return ab_error_setc (err, AB_EC_CONFIG, 0,
                          "config.json: annotations.%s: the egress proxy's /etc/resolv.conf cannot be mounted in a "
                          "mount namespace joined by path (%s)",
                          AB_ANNOT_NET_ALLOW_DOMAINS, l->ns[AB_NS_MOUNT].path);

  n->n_redirect = ab_egress_policy_ports (&n->egress, n->redirect, AB_ARRAY_SIZE (n->redirect));
  {
    /* /etc/resolv.conf of the container: the stub, read-only.  The file
       lives in the state directory, which the container's user cannot
       traverse: the parent opens it (from_parent). */
    static const char resolv[] = "# written by agentbox: names resolve only through its egress policy\n"
                                 "nameserver 127.0.0.1\noptions ndots:0 attempts:1 timeout:2\n";
    struct ab_mount *m;
    if (ab_write_file_atomic (c->dirfd, RESOLV_FILE, resolv, sizeof resolv - 1, 0644, err) < 0)
      return -1;
    s->mounts = xreallocarray (s->mounts, s->n_mounts + 1, sizeof *s->mounts);
    m = &s->mounts[s->n_mounts++];
    memset (m, 0, sizeof *m);
    m->destination = xstrdup ("/etc/resolv.conf");
    m->source = xasprintf ("%s/%s/%s", c->root, c->id, RESOLV_FILE);
    m->type = xstrdup ("bind");
    m->bind = true;
    m->flags = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;
    m->from_parent = true;
  }
  if (s->process)
    {
      /* Convenience only: transparent capture does not depend on them. */
      static const char *const vars[] = { "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy" };
      size_t i;
      for (i = 0; i < AB_ARRAY_SIZE (vars); i++)
        {
          char *e = xasprintf ("%s=http://127.0.0.1:%d", vars[i], AB_NET_PROXY_HTTP_PORT);
          add_env (s->process, e);
          free (e);
        }
      add_env (s->process, "NO_PROXY=localhost,127.0.0.1,::1");
      add_env (s->process, "no_proxy=localhost,127.0.0.1,::1");
    }
  return 0;
}

/* Run fn in the network namespace netns_fd, from a thread of its own (a
   thread may change its network namespace without affecting the process). */
struct in_netns
{
  int netns_fd;
  int (*fn) (void *arg, ab_error_t *err);
  void *arg;
  ab_error_t *err;
  int r;
};

static void *
in_netns_thread (void *p)
{
  struct in_netns *x = p;

  if (setns (x->netns_fd, CLONE_NEWNET) < 0)
    x->r = ab_error_set (x->err, errno, "enter the container's network namespace");
  else
    x->r = x->fn (x->arg, x->err);
  return NULL;
}

static int
run_in_netns (int netns_fd, bool own_thread, int (*fn) (void *, ab_error_t *), void *arg, ab_error_t *err)
{
  struct in_netns x = { .netns_fd = netns_fd, .fn = fn, .arg = arg, .err = err, .r = -1 };
  pthread_t t;
  int e;

  /* A thread of its own (create's network job) that ends after this may
     enter the namespace itself: nothing after fn in it depends on the
     host's network namespace (files and mounts only, see ab_net_setup). */
  if (own_thread)
    {
      in_netns_thread (&x);
      return x.r;
    }

  e = pthread_create (&t, NULL, in_netns_thread, &x);
  if (e != 0)
    return ab_error_set (err, e, "pthread_create");
  pthread_join (t, NULL);
  return x.r;
}

struct apply_args
{
  struct ab_net *n;
  struct ab_netns_proxy proxy;
};

static int
apply_wall (void *p, ab_error_t *err)
{
  struct apply_args *a = p;
  return ab_netns_apply (&a->n->policy, &a->proxy, err);
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
    return ab_error_set (err, errno, "create the netns file of `%s`", c->id);
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

int
ab_net_setup (struct ab_container *c, const struct ab_ns_plan *plan, bool own_thread, ab_error_t *err)
{
  struct ab_net *n = c->net;
  const struct ab_linux *l = c->bundle->spec->linux_;
  struct apply_args a;
  size_t i;

  ab_set_step ("network");
  if (n == NULL || l == NULL || !l->ns[AB_NS_NET].present)
    return 0;
  if (plan->join_fd[AB_NS_NET] >= 0)
    c->netns_fd = fcntl (plan->join_fd[AB_NS_NET], F_DUPFD_CLOEXEC, 3);
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

  memset (&a, 0, sizeof a);
  a.n = n;
  if (n->egress.enabled)
    {
      struct ab_egress_options opt = { .http_port = AB_NET_PROXY_HTTP_PORT, .dns_port = AB_NET_PROXY_DNS_PORT };
      a.proxy.enabled = true;
      a.proxy.http_port = AB_NET_PROXY_HTTP_PORT;
      a.proxy.dns_port = AB_NET_PROXY_DNS_PORT;
      a.proxy.redirect_ports = n->redirect;
      a.proxy.n_redirect_ports = n->n_redirect;
      ab_set_step ("egress-proxy");
      if (n->foreground)
        {
          if (ab_egress_start (&n->egress, c->netns_fd, &opt, &n->engine, err) < 0)
            return -1;
        }
      else
        {
          struct ab_egress_daemon d;
          int cgfd = c->cg ? ab_cgroup_clone_fd (c->cg) : -1;
          if (ab_egress_daemon_spawn (&n->egress, c->netns_fd, cgfd, c->dirfd, "egress.json", &opt, &d, err) < 0)
            return -1;
          c->state->helper_pid = d.pid;
          c->state->helper_start = ab_proc_start_time (d.pid, NULL);
        }
    }
  if (n->wall)
    {
      ab_set_step ("network");
      if (run_in_netns (c->netns_fd, own_thread, apply_wall, &a, err) < 0)
        return -1;
      free (c->state->rules_text);
      c->state->rules_text = ab_netns_rules_text (&n->policy, &a.proxy);
      if (ab_log_debug_enabled ())
        debug_rules (c->id, c->state->rules_text);
    }
  if (!n->foreground && n->own_ns && hold_netns (c, err) < 0)
    return -1;
  return ab_container_write_state (c, err);
}

/* The record re-emits the violations only within its bounds (runtime/record.c:
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

  if (c->net == NULL || (!c->net->wall && c->net->engine == NULL))
    return NULL;
  if (c->net->engine)
    {
      ab_egress_stop (c->net->engine);
      ndec = ab_egress_decisions (c->net->engine, &dec, &dropped);
    }
  if (read_wall && c->net->wall && c->netns_fd >= 0 && ab_netns_read_denied (c->netns_fd, &d, &nd, &e) < 0)
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

int
ab_net_held_netns (const char *root, const char *id)
{
  _cleanup_container_ struct ab_container *c = NULL;
  ab_error_t ignored = { 0 };

  if (ab_container_peek (root, id, &c, &ignored) < 0 || !c->state->netns_held || c->state->rules_text == NULL)
    return -1;
  return openat (c->dirfd, AB_NETNS_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
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

/* ---- what landlock's network rules need (runtime/landlock-rules.h) ------- */

static void
landlock_view (bool wall, const struct ab_net_policy *allow, const struct ab_egress_policy *egress,
               struct ab_ll_net *out)
{
  uint16_t ports[64];
  size_t n;

  memset (out, 0, sizeof *out);
  out->wall = wall;
  if (!wall)
    return;
  for (size_t i = 0; i < allow->n_allow; i++)
    {
      if (allow->allow[i].proto == IPPROTO_UDP)
        continue;
      if (allow->allow[i].port == 0)
        out->connect_any = true;
      else
        ab_ll_net_add_port (out, allow->allow[i].port);
    }
  if (!egress->enabled)
    return;
  /* The proxy, the stub (DNS over TCP), and the ports the wall captures for
     the proxy: connect(2) names the destination's port, before the
     redirection. */
  ab_ll_net_add_port (out, AB_NET_PROXY_HTTP_PORT);
  ab_ll_net_add_port (out, AB_NET_PROXY_DNS_PORT);
  n = ab_egress_policy_ports (egress, ports, AB_ARRAY_SIZE (ports));
  for (size_t i = 0; i < n && i < AB_ARRAY_SIZE (ports); i++)
    ab_ll_net_add_port (out, ports[i]);
}

void
ab_net_landlock (const struct ab_net *n, struct ab_ll_net *out)
{
  landlock_view (n->wall, &n->policy, &n->egress, out);
}

int
ab_net_landlock_spec (const struct ab_spec *s, struct ab_ll_net *out, ab_error_t *err)
{
  const struct ab_linux *l = s->linux_;
  const char *allow = ab_kvlist_get (&s->annotations, AB_ANNOT_NET_ALLOW);
  struct ab_net_policy policy = { 0 };
  struct ab_egress_policy egress = { 0 };
  bool netns = l && l->ns[AB_NS_NET].present;
  int r = -1;

  if ((allow && ab_net_policy_parse (allow, &policy, err) < 0)
      || ab_egress_policy_parse (&s->annotations, NULL, &egress, err) < 0)
    goto out;
  landlock_view (netns && (l->ns[AB_NS_NET].path == NULL || allow != NULL), &policy, &egress, out);
  r = 0;
out:
  ab_net_policy_free (&policy);
  ab_egress_policy_free (&egress);
  return r;
}
