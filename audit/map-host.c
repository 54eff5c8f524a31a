/* The mechanism map, first part: what the parent sets up around the
 * container process (runtime/lifecycle/create.c): cgroups before clone3, the device
 * cgroup, the namespaces of clone3, the ID maps, the network, and the
 * process attributes written with host privileges. */
#include "config.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <linux/netfilter.h>

#include "audit/audit-internal.h"
#include "netns/nft-rules.h"
#include "runtime/lifecycle/network.h"
#include "base/util.h"
#include "spec/annotations.h"
#include "spec/tables.h"

#define JR "linux.resources"

/* ---- cgroups ---------------------------------------------------------------- */

static void
map_cgroup_path (struct ab_audit_ctx *a)
{
  const char *p = a->l ? a->l->cgroups_path : NULL;
  struct ab_audit_line *l;

  if (p == NULL || p[0] != '/')
    l = ab_audit_add (a, AB_AUDIT_S_CGROUPS, "cgroupsPath", "linux.cgroupsPath", 0,
                      "below agentbox's own cgroup in every hierarchy (%s%s); the process starts in it "
                      "(clone3 CLONE_INTO_CGROUP), v1 hierarchies are joined before it runs",
                      p ? p : "agentbox-<id>", p ? ", relative" : ", the default name");
  else
    l = ab_audit_add (
        a, AB_AUDIT_S_CGROUPS, "cgroupsPath", "linux.cgroupsPath", AB_AUDIT_L_HOST,
        "%s from the root of each hierarchy, outside agentbox's own subtree; create fails if that cgroup "
        "already holds processes",
        p);
  if (p)
    ab_audit_line_value (l, "%s", p);
}

static void
map_limit (struct ab_audit_ctx *a, const char *name, const char *path, bool set, const char *value,
           const char *mech, const char *missing)
{
  struct ab_audit_line *l;

  if (!set)
    {
      ab_audit_add (a, AB_AUDIT_S_CGROUPS, name, path, AB_AUDIT_L_WEAK, "%s", missing);
      return;
    }
  l = ab_audit_add (a, AB_AUDIT_S_CGROUPS, name, path, 0, "%s", mech);
  ab_audit_line_value (l, "%s", value);
}

static void
map_memory (struct ab_audit_ctx *a, const struct ab_memory *m)
{
  char v[64];

  snprintf (v, sizeof v, "%" PRId64, m->limit.set ? m->limit.v : -1);
  map_limit (a, "memory.limit", JR ".memory.limit", a->f.mem_limited, v,
             "memory.limit_in_bytes (v1) or memory.max (v2); the OOM killer acts inside the container",
             "no memory limit: the container can take the host's memory (the parent cgroup's limit aside)");
  if (m->swap.set)
    {
      snprintf (v, sizeof v, "%" PRId64, m->swap.v);
      ab_audit_line_value (ab_audit_add (a, AB_AUDIT_S_CGROUPS, "memory.swap", JR ".memory.swap", 0,
                                         "memory+swap: memory.memsw.limit_in_bytes (v1); memory.swap.max = "
                                         "swap - limit (v2)%s",
                                         m->swap.v < 0 ? "; -1: swap unlimited" : ""),
                           "%s", v);
    }
  if (m->reservation.set)
    ab_audit_line_value (ab_audit_add (a, AB_AUDIT_S_CGROUPS, "memory.reservation", JR ".memory.reservation",
                                       0, "memory.soft_limit_in_bytes (v1) or memory.low (v2)"),
                         "%" PRId64, m->reservation.v);
  if (m->swappiness.set)
    ab_audit_line_value (ab_audit_add (a, AB_AUDIT_S_CGROUPS, "memory.swappiness", JR ".memory.swappiness", 0,
                                       "memory.swappiness (v1 only; refused on v2)"),
                         "%" PRIu64, m->swappiness.v);
  if (m->disable_oom_killer.set && m->disable_oom_killer.v)
    ab_audit_add (
        a, AB_AUDIT_S_CGROUPS, "memory.disableOOMKiller", JR ".memory.disableOOMKiller", AB_AUDIT_L_WEAK,
        "memory.oom_control = 1 (v1 only; refused on v2): at the limit, tasks wait instead of being killed");
  if (m->kernel.set || m->kernel_tcp.set)
    ab_audit_add (a, AB_AUDIT_S_CGROUPS, "memory.kernel", JR ".memory.kernel", 0,
                  "kernel memory limits: kernelTCP in v1's memory.kmem.tcp.limit_in_bytes; memory.kernel "
                  "only where the kernel still enforces it, else a warning (as on v2)");
}

static void
map_cpu (struct ab_audit_ctx *a, const struct ab_cpu *c)
{
  if (c->shares.set)
    ab_audit_line_value (ab_audit_add (a, AB_AUDIT_S_CGROUPS, "cpu.shares", JR ".cpu.shares", 0,
                                       "cpu.shares (v1) or cpu.weight (v2, converted as runc does)"),
                         "%" PRIu64, c->shares.v);
  if (c->quota.set || c->period.set)
    ab_audit_line_value (ab_audit_add (a, AB_AUDIT_S_CGROUPS, "cpu.quota", JR ".cpu.quota", 0,
                                       "cpu.cfs_quota_us / cpu.cfs_period_us (v1) or cpu.max (v2)"),
                         "%" PRId64 " per %" PRIu64 " us", c->quota.set ? c->quota.v : -1,
                         c->period.set ? c->period.v : 100000);
  if (c->cpus && *c->cpus)
    ab_audit_line_value (ab_audit_add (a, AB_AUDIT_S_CGROUPS, "cpu.cpus", JR ".cpu.cpus", 0, "cpuset.cpus"),
                         "%s", c->cpus);
  if (c->mems && *c->mems)
    ab_audit_line_value (ab_audit_add (a, AB_AUDIT_S_CGROUPS, "cpu.mems", JR ".cpu.mems", 0, "cpuset.mems"),
                         "%s", c->mems);
  if (c->realtime_runtime.set || c->realtime_period.set)
    ab_audit_add (a, AB_AUDIT_S_CGROUPS, "cpu.realtime", JR ".cpu.realtimeRuntime", 0,
                  "cpu.rt_runtime_us / cpu.rt_period_us (v1 with CONFIG_RT_GROUP_SCHED only)");
}

static void
map_cgroups (struct ab_audit_ctx *a)
{
  const struct ab_resources *r = a->l ? a->l->resources : NULL;
  char v[32];

  map_cgroup_path (a);
  snprintf (v, sizeof v, "%" PRId64, r && r->pids_set && r->pids_limit.set ? r->pids_limit.v : -1);
  map_limit (a, "pids.limit", JR ".pids.limit", a->f.pids_limited, v,
             "pids.max: fork and clone fail with EAGAIN past it",
             "no pids limit: pids.max stays max (the parent cgroup's limit aside), a fork bomb exhausts "
             "the host's pids");
  if (r && r->memory_set)
    map_memory (a, &r->memory);
  else
    map_limit (a, "memory.limit", JR ".memory.limit", false, NULL, NULL,
               "no memory limit: the container can take the host's memory (the parent cgroup's limit aside)");
  if (r && r->cpu_set)
    map_cpu (a, &r->cpu);
  if (!a->f.cpu_limited)
    ab_audit_add (a, AB_AUDIT_S_CGROUPS, "cpu", JR ".cpu", AB_AUDIT_L_WEAK,
                  "no CPU quota or cpuset: the container may use every CPU of the host");
  if (r && r->blkio_set)
    ab_audit_add (a, AB_AUDIT_S_CGROUPS, "blockIO", JR ".blockIO", 0,
                  "blkio.* (v1) or io.weight / io.max (v2)");
  if (r && r->n_hugepages)
    ab_audit_add (a, AB_AUDIT_S_CGROUPS, "hugepageLimits", JR ".hugepageLimits", 0,
                  "hugetlb.<size>.limit_in_bytes (v1) or hugetlb.<size>.max (v2), %zu sizes", r->n_hugepages);
  if (r && r->network_set)
    ab_audit_add (a, AB_AUDIT_S_CGROUPS, "network", JR ".network", 0,
                  "net_cls.classid / net_prio.ifpriomap (v1)");
  if (r && r->n_rdma)
    ab_audit_add (a, AB_AUDIT_S_CGROUPS, "rdma", JR ".rdma", 0, "rdma.max");
  for (size_t i = 0; r && i < r->unified.n; i++)
    {
      char path[512];
      snprintf (path, sizeof path, JR ".unified.%s", r->unified.v[i].key);
      ab_audit_line_value (ab_audit_add (a, AB_AUDIT_S_CGROUPS, r->unified.v[i].key, path, 0,
                                         "written as is to the cgroup2 file %s", r->unified.v[i].key),
                           "%s", r->unified.v[i].value);
    }
}

/* ---- devices ---------------------------------------------------------------- */

static void
dev_rule_text (const struct ab_device_rule *d, char *buf, size_t len)
{
  char maj[24] = "*", min[24] = "*";

  if (d->major.set && d->major.v != -1)
    snprintf (maj, sizeof maj, "%" PRId64, d->major.v);
  if (d->minor.set && d->minor.v != -1)
    snprintf (min, sizeof min, "%" PRId64, d->minor.v);
  if (d->type == 'a')
    snprintf (buf, len, "%s a (every device, every access)", d->allow ? "allow" : "deny");
  else
    snprintf (buf, len, "%s %c %s:%s %s", d->allow ? "allow" : "deny", d->type, maj, min,
              d->access[0] ? d->access : "rwm");
}

static void
map_device_probe (struct ab_audit_ctx *a, const char *name, char type, int64_t major, int64_t minor)
{
  ssize_t rule;
  bool r = ab_audit_dev_allowed (a, type, major, minor, 'r', &rule);
  bool w = ab_audit_dev_allowed (a, type, major, minor, 'w', &rule);
  char path[64];

  if (!r && !w)
    return;
  snprintf (path, sizeof path, JR ".devices[%zd]", rule);
  ab_audit_add (a, AB_AUDIT_S_DEVICES, name, rule >= 0 ? path : NULL, AB_AUDIT_L_WEAK,
                "%c %" PRId64 ":%" PRId64 " is %s%s%s by the device cgroup", type, major, minor,
                r ? "readable" : "", r && w ? " and " : "", w ? "writable" : "");
}

static void
map_devices (struct ab_audit_ctx *a)
{
  const struct ab_resources *r = a->l ? a->l->resources : NULL;
  size_t n = r ? r->n_devices : 0;

  ab_audit_add (
      a, AB_AUDIT_S_DEVICES, "device cgroup", JR ".devices", 0,
      "deny everything, then %zu rule%s in order, then the defaults (c 1:3, 1:5, 1:7, 1:8, 1:9, 5:0, 5:2 "
      "rwm; c 136:* rw): v1 devices.deny/devices.allow, or a BPF_PROG_TYPE_CGROUP_DEVICE program on the "
      "cgroup2 directory",
      n, n == 1 ? "" : "s");
  for (size_t i = 0; i < n; i++)
    {
      char path[64], text[96], name[32];
      const struct ab_device_rule *d = &r->devices[i];
      snprintf (path, sizeof path, JR ".devices[%zu]", i);
      snprintf (name, sizeof name, "devices[%zu]", i);
      dev_rule_text (d, text, sizeof text);
      ab_audit_add (a, AB_AUDIT_S_DEVICES, name, path, d->allow && d->type == 'a' ? AB_AUDIT_L_WEAK : 0, "%s",
                    text);
    }
  map_device_probe (a, "/dev/mem", 'c', 1, 1);
  map_device_probe (a, "/dev/kmem", 'c', 1, 2);
  map_device_probe (a, "/dev/port", 'c', 1, 4);
  map_device_probe (a, "/dev/kmsg", 'c', 1, 11);
  map_device_probe (a, "block 8:0", 'b', 8, 0);
  ab_audit_add (
      a, AB_AUDIT_S_DEVICES, "default nodes", NULL, 0,
      "null, zero, full, random, urandom, tty: mknod in the container's /dev (in a user namespace, where "
      "mknod is refused, a bind of the host's node after checking its type and number); /dev/fd, stdin, "
      "stdout, stderr symlinks; /dev/ptmx -> pts/ptmx when a devpts is mounted");
  for (size_t i = 0; a->l && i < a->l->n_devices; i++)
    {
      const struct ab_device *d = &a->l->devices[i];
      char path[64];
      ssize_t rule;
      bool usable
          = ab_audit_dev_allowed (a, d->type == 'u' ? 'c' : d->type, d->major, d->minor, 'r', &rule)
            || ab_audit_dev_allowed (a, d->type == 'u' ? 'c' : d->type, d->major, d->minor, 'w', &rule);
      snprintf (path, sizeof path, "linux.devices[%zu]", i);
      ab_audit_add (
          a, AB_AUDIT_S_DEVICES, d->path, path, usable ? AB_AUDIT_L_WEAK : 0,
          "mknod %c %" PRId64 ":%" PRId64 " mode %04o (a user namespace: bind of the host's node at the "
          "same path); %s",
          d->type, d->major, d->minor, d->file_mode_set ? d->file_mode : 0666,
          usable ? "the device cgroup lets it be opened"
                 : "the device cgroup refuses to open it (agentbox adds no rule for linux.devices)");
    }
}

/* ---- namespaces -------------------------------------------------------------- */

static const char *const ns_absent[AB_NS__COUNT] = {
  [AB_NS_USER] = "the host's: container uid 0 is host uid 0 and every capability is a host capability",
  [AB_NS_MOUNT] = "the host's mount table: agentbox refuses to create such a container",
  [AB_NS_PID]
  = "the host's: every host process is visible, and signalable or traceable with the capabilities",
  [AB_NS_NET] = "the host's: every interface and localhost service of the host, and no agentbox wall",
  [AB_NS_IPC] = "the host's System V IPC and POSIX message queues",
  [AB_NS_UTS] = "the host's hostname and domain name",
  [AB_NS_CGROUP] = "the host's: /proc/self/cgroup shows host cgroup paths",
  [AB_NS_TIME] = "the host's clocks (usual: offsets are rarely needed)",
};

static const char *const ns_new_text[AB_NS__COUNT] = {
  [AB_NS_USER] = "clone3 CLONE_NEWUSER: capabilities count only over the namespace's own resources",
  [AB_NS_MOUNT] = "clone3 CLONE_NEWNS; / is made rslave before any mount",
  [AB_NS_PID] = "clone3 CLONE_NEWPID: the program is PID 1 of its own PID namespace",
  [AB_NS_NET] = "clone3 CLONE_NEWNET: only lo, and the agentbox wall",
  [AB_NS_IPC] = "clone3 CLONE_NEWIPC",
  [AB_NS_UTS] = "clone3 CLONE_NEWUTS",
  [AB_NS_CGROUP]
  = "unshare(CLONE_NEWCGROUP) by the container process once it is in its cgroups: its cgroup is "
    "the namespace's root",
  [AB_NS_TIME]
  = "unshare(CLONE_NEWTIME) by the container process, offsets written to /proc/self/timens_offsets, "
    "then setns into time_for_children",
};

static void
map_namespaces (struct ab_audit_ctx *a)
{
  static const int order[]
      = { AB_NS_USER, AB_NS_MOUNT, AB_NS_PID, AB_NS_NET, AB_NS_IPC, AB_NS_UTS, AB_NS_CGROUP, AB_NS_TIME };

  for (size_t i = 0; i < AB_ARRAY_SIZE (order); i++)
    {
      int t = order[i];
      const struct ab_namespace *ns = a->l ? &a->l->ns[t] : NULL;
      struct ab_audit_line *l;

      if (ns == NULL || !ns->present)
        {
          unsigned flags = AB_AUDIT_L_HOST | (t == AB_NS_MOUNT ? AB_AUDIT_L_REFUSED : 0);
          if (t != AB_NS_TIME)
            flags |= AB_AUDIT_L_WEAK;
          l = ab_audit_add (a, AB_AUDIT_S_NAMESPACES, ab_ns_name (t), "linux.namespaces", flags, "%s",
                            ns_absent[t]);
          ab_audit_line_value (l, "absent");
          if (t == AB_NS_MOUNT)
            ab_audit_line_note (l, "other runtimes may set the container up in the host's mount table");
          continue;
        }
      if (ns->path == NULL)
        {
          bool unwalled = t == AB_NS_NET && !a->f.wall;
          l = ab_audit_add (a, AB_AUDIT_S_NAMESPACES, ab_ns_name (t), "linux.namespaces",
                            unwalled ? AB_AUDIT_L_WEAK : 0, "%s",
                            unwalled ? "clone3 CLONE_NEWNET: only lo at create, and no wall ("
                                       AB_ANNOT_NET_WALL " off)"
                                     : ns_new_text[t]);
          ab_audit_line_value (l, "new");
          continue;
        }
      if (t == AB_NS_MOUNT)
        {
          l = ab_audit_add (a, AB_AUDIT_S_NAMESPACES, ab_ns_name (t), "linux.namespaces",
                            a->f.ns_host[t] ? AB_AUDIT_L_REFUSED : AB_AUDIT_L_WEAK,
                            "setns into it by an intermediate process before clone3, and left as it is: no "
                            "mount, no pivot_root, no masks; the process starts at its root, which must be "
                            "root.path and not the host's root%s",
                            a->f.ns_host[t] ? ": /proc/1's is the host's, refused" : "");
          ab_audit_line_note (l, "runc setns()es into it, mounts there and pivot_root()s, changing the namespace "
                                 "for everything else in it");
        }
      else
        l = ab_audit_add (
            a, AB_AUDIT_S_NAMESPACES, ab_ns_name (t), "linux.namespaces",
            a->f.ns_host[t] ? AB_AUDIT_L_HOST | AB_AUDIT_L_WEAK : 0,
            "setns into it (checked with NS_GET_NSTYPE) by an intermediate process before clone3; shared "
            "with everything else in it%s",
            a->f.ns_host[t] ? ": /proc/1 is the host's init, so this is the host's namespace" : "");
      ab_audit_line_value (l, "joined %s", ns->path);
    }
}

/* ---- user namespace ------------------------------------------------------------ */

static void
map_idmaps (struct ab_audit_ctx *a, const char *key, const struct ab_idmaps *m, const char *file)
{
  for (size_t i = 0; i < m->n; i++)
    {
      const struct ab_idmap *e = &m->v[i];
      char name[48], path[64];
      bool root = e->host_id == 0;
      struct ab_audit_line *l;

      snprintf (name, sizeof name, "%s[%zu]", key, i);
      snprintf (path, sizeof path, "linux.%s[%zu]", key, i);
      l = ab_audit_add (a, AB_AUDIT_S_USERNS, name, path, root ? AB_AUDIT_L_HOST | AB_AUDIT_L_WEAK : 0,
                        "container %" PRIu32 "-%" PRIu64 " = host %" PRIu32 "-%" PRIu64 " in /proc/PID/%s%s",
                        e->container_id, (uint64_t)e->container_id + e->size - 1, e->host_id,
                        (uint64_t)e->host_id + e->size - 1, file,
                        root ? ": host ID 0 is mapped, files of host root are the container's" : "");
      ab_audit_line_value (l, "%" PRIu32 " %" PRIu32 " %" PRIu32, e->container_id, e->host_id, e->size);
    }
}

static void
map_userns (struct ab_audit_ctx *a)
{
  const struct ab_namespace *ns = a->l ? &a->l->ns[AB_NS_USER] : NULL;

  if (ns == NULL || !ns->present)
    {
      ab_audit_add (a, AB_AUDIT_S_USERNS, "ID maps", "linux.uidMappings", AB_AUDIT_L_HOST | AB_AUDIT_L_WEAK,
                    "none: every ID is the host's; process.user.uid %u is host uid %u",
                    a->s->process ? a->s->process->user.uid : 0, a->s->process ? a->s->process->user.uid : 0);
      return;
    }
  if (ns->path != NULL)
    {
      ab_audit_add (a, AB_AUDIT_S_USERNS, "ID maps", NULL, a->f.ns_host[AB_NS_USER] ? AB_AUDIT_L_HOST : 0,
                    "those of the joined user namespace %s (not in the config)", ns->path);
      return;
    }
  ab_audit_add (
      a, AB_AUDIT_S_USERNS, "writing", "linux.uidMappings", 0,
      "the parent writes uid_map and gid_map in one write each before the process runs; setgroups is "
      "denied first when agentbox runs rootless");
  map_idmaps (a, "uidMappings", &a->l->uid_mappings, "uid_map");
  map_idmaps (a, "gidMappings", &a->l->gid_mappings, "gid_map");
}

/* ---- network ----------------------------------------------------------------- */

struct ab_nft_ruleset *
ab_audit_expected_wall (const struct ab_audit_facts *f, uint16_t ports[64], struct ab_netns_proxy *proxy)
{
  memset (proxy, 0, sizeof *proxy);
  if (f->egress.enabled)
    {
      proxy->enabled = true;
      proxy->http_port = AB_NET_PROXY_HTTP_PORT;
      proxy->dns_port = AB_NET_PROXY_DNS_PORT;
      proxy->redirect_ports = ports;
      proxy->n_redirect_ports = ab_egress_policy_ports (&f->egress, ports, 64);
    }
  return ab_nft_ruleset_build (&f->net, proxy, f->lo_only);
}

static void
map_wall (struct ab_audit_ctx *a)
{
  struct ab_netns_proxy proxy;
  uint16_t ports[64];
  _cleanup_nft_ruleset_ struct ab_nft_ruleset *rs = ab_audit_expected_wall (&a->f, ports, &proxy);

  ab_audit_add (
      a, AB_AUDIT_S_NETWORK, "routes", NULL, 0,
      "lo up; default routes via lo of the lowest priority, so every destination reaches the output hook "
      "and is judged there");
  for (size_t c = 0; c < rs->n_chains; c++)
    {
      const struct ab_nft_chain *ch = &rs->chains[c];
      char name[64];

      snprintf (name, sizeof name, "chain %s", ch->name);
      if (ch->type)
        ab_audit_add (a, AB_AUDIT_S_NETWORK, name, NULL, 0, "type %s, priority %d, policy %s, %zu rule%s",
                      ch->type, ch->prio, ch->policy == NF_DROP ? "drop" : "accept", ch->n_rules,
                      ch->n_rules == 1 ? "" : "s");
      else
        ab_audit_add (a, AB_AUDIT_S_NETWORK, name, NULL, 0, "%zu rule%s", ch->n_rules,
                      ch->n_rules == 1 ? "" : "s");
      for (size_t r = 0; r < ch->n_rules; r++)
        {
          _cleanup_free_ char *text = ab_nft_rule_text (&ch->rules[r]);
          snprintf (name, sizeof name, "  %s[%zu]", ch->name, r);
          ab_audit_add (a, AB_AUDIT_S_NETWORK, name, NULL, 0, "%s", text);
        }
    }
}

static void
map_allow (struct ab_audit_ctx *a)
{
  for (size_t i = 0; i < a->f.net.n_allow; i++)
    {
      const struct ab_net_allow *e = &a->f.net.allow[i];
      char addr[INET6_ADDRSTRLEN], name[32], port[16] = "";
      inet_ntop (e->family, e->addr, addr, sizeof addr);
      snprintf (name, sizeof name, "allow[%zu]", i);
      if (e->port)
        snprintf (port, sizeof port, " port %u", e->port);
      ab_audit_add (a, AB_AUDIT_S_NETWORK, name, "annotations." AB_ANNOT_NET_ALLOW,
                    e->prefix == 0 ? AB_AUDIT_L_WEAK : 0, "accept %s to %s/%u%s in chain output",
                    e->proto == 6    ? "tcp"
                    : e->proto == 17 ? "udp"
                                     : "tcp and udp",
                    addr, e->prefix, port);
    }
}

static void
map_egress (struct ab_audit_ctx *a)
{
  const struct ab_egress_policy *p = &a->f.egress;
  uint16_t ports[64];
  size_t n = ab_egress_policy_ports (p, ports, AB_ARRAY_SIZE (ports));
  char list[400] = "";

  for (size_t i = 0, o = 0; i < n && o < sizeof list - 8; i++)
    o += (size_t)snprintf (list + o, sizeof list - o, "%s%u", i ? "," : "", ports[i]);
  ab_audit_add (
      a, AB_AUDIT_S_NETWORK, "egress proxy", "annotations." AB_ANNOT_NET_ALLOW_DOMAINS, 0,
      "HTTP/CONNECT proxy on 127.0.0.1:%d and DNS stub on 127.0.0.1:%d, sockets of the supervisor inside "
      "the netns; TCP to ports %s redirected to the proxy; /etc/resolv.conf bound read-only to the stub; "
      "HTTP(S)_PROXY added to the environment; upstream connections leave from the host netns, never to "
      "private or metadata addresses",
      AB_NET_PROXY_HTTP_PORT, AB_NET_PROXY_DNS_PORT, list);
  for (size_t i = 0; i < p->n_allow; i++)
    {
      char name[32], pl[128] = "";
      for (size_t k = 0, o = 0; k < p->allow[i].n_ports && o < sizeof pl - 8; k++)
        o += (size_t)snprintf (pl + o, sizeof pl - o, "%s%u", k ? "," : "", p->allow[i].ports[k]);
      snprintf (name, sizeof name, "domain[%zu]", i);
      ab_audit_add (a, AB_AUDIT_S_NETWORK, name, "annotations." AB_ANNOT_NET_ALLOW_DOMAINS, 0,
                    "%s allowed on ports %s (resolved by the stub and pinned)", p->allow[i].pattern, pl);
    }
  for (size_t i = 0; i < p->n_deny; i++)
    {
      char name[32];
      snprintf (name, sizeof name, "deny[%zu]", i);
      ab_audit_add (a, AB_AUDIT_S_NETWORK, name, "annotations." AB_ANNOT_NET_DENY_DOMAINS, 0,
                    "%s refused (deny wins over allow)", p->deny[i].pattern);
    }
  for (size_t i = 0; i < p->n_pins; i++)
    {
      char name[32], addr[INET6_ADDRSTRLEN];
      inet_ntop (p->pins[i].family, p->pins[i].addr, addr, sizeof addr);
      snprintf (name, sizeof name, "pin[%zu]", i);
      ab_audit_add (a, AB_AUDIT_S_NETWORK, name, "annotations." AB_ANNOT_NET_PINS, 0,
                    "%s resolves to %s without DNS (still refused if private)", p->pins[i].name, addr);
    }
}

static void
map_network (struct ab_audit_ctx *a)
{
  const struct ab_namespace *ns = a->l ? &a->l->ns[AB_NS_NET] : NULL;

  if (a->f.net_error)
    ab_audit_add (a, AB_AUDIT_S_NETWORK, "annotations", "annotations", AB_AUDIT_L_REFUSED, "create fails: %s",
                  a->f.net_error);
  if (ns == NULL || !ns->present)
    {
      ab_audit_add (a, AB_AUDIT_S_NETWORK, "network", "linux.namespaces", AB_AUDIT_L_HOST | AB_AUDIT_L_WEAK,
                    "the host's network namespace: no wall, every host interface and listening socket");
      return;
    }
  for (size_t i = 0; i < a->l->n_net_devices; i++)
    {
      const struct ab_net_device *d = &a->l->net_devices[i];
      char path[320];
      snprintf (path, sizeof path, "linux.netDevices.%s", d->host_name);
      ab_audit_add (
          a, AB_AUDIT_S_NETWORK, d->host_name, path, AB_AUDIT_L_HOST,
          "the host interface moves into the container (rtnetlink) as %s, keeping its permanent global "
          "addresses, and is set up",
          d->name ? d->name : d->host_name);
    }
  if (!a->f.wall && a->f.own_netns)
    {
      ab_audit_add (a, AB_AUDIT_S_NETWORK, "wall", "annotations." AB_ANNOT_NET_WALL, AB_AUDIT_L_WEAK,
                    "none (\"off\"): the namespace agentbox makes holds only lo at create, but every link an "
                    "orchestrator or a hook adds to it (a bridge's veth, slirp4netns, pasta) carries the "
                    "container's traffic unfiltered: any address and port, cloud metadata included");
      return;
    }
  if (!a->f.wall)
    {
      ab_audit_add (
          a, AB_AUDIT_S_NETWORK, "wall", "annotations." AB_ANNOT_NET_ALLOW, AB_AUDIT_L_WEAK,
          "none: the joined namespace %s keeps whatever filtering it has (agentbox installs its wall in a "
          "joined one only when %s is set)",
          ns->path ? ns->path : "", AB_ANNOT_NET_ALLOW);
      return;
    }
  {
    struct ab_netns_proxy proxy = { .enabled = a->f.egress.enabled };
    char meta[160];

    if (ab_nft_has_metadata_chain (&a->f.net, &proxy, a->f.lo_only))
      snprintf (meta, sizeof meta, "%zu cloud metadata addresses dropped ahead of every accept",
                ab_nft_n_metadata_addrs);
    else
      snprintf (meta, sizeof meta, "nothing let out of lo, the cloud metadata addresses denied with every "
                                   "other destination");
    ab_audit_add (a, AB_AUDIT_S_NETWORK, "wall", "annotations." AB_ANNOT_NET_ALLOW, 0,
                  "table inet agentbox installed by the parent in one nftables batch (libnftnl): output "
                  "policy drop, %s, %zu allow entr%s, denied destinations counted",
                  meta, a->f.net.n_allow, a->f.net.n_allow == 1 ? "y" : "ies");
  }
  map_allow (a);
  if (a->f.egress.enabled)
    map_egress (a);
  map_wall (a);
}

/* ---- attributes the parent sets ---------------------------------------------- */

static void
map_host_attrs (struct ab_audit_ctx *a)
{
  const struct ab_process *p = a->s->process;
  struct ab_audit_line *l;

  if (p == NULL)
    return;
  if (p->oom_score_adj_set)
    {
      l = ab_audit_add (
          a, AB_AUDIT_S_HOSTATTR, "oomScoreAdj", "process.oomScoreAdj",
          p->oom_score_adj < 0 ? AB_AUDIT_L_WEAK : 0,
          "written to /proc/PID/oom_score_adj by the parent with agentbox's own privileges (lowering it "
          "needs CAP_SYS_RESOURCE, which root has)");
      ab_audit_line_value (l, "%d", p->oom_score_adj);
    }
  if (p->scheduler)
    {
      l = ab_audit_add (a, AB_AUDIT_S_HOSTATTR, "scheduler", "process.scheduler",
                        p->scheduler->policy == AB_SCHED_FIFO || p->scheduler->policy == AB_SCHED_RR
                                || p->scheduler->policy == AB_SCHED_DEADLINE
                            ? AB_AUDIT_L_WEAK
                            : 0,
                        "sched_setattr on the container process by the parent, with host privileges");
      ab_audit_line_value (l, "%s", ab_sched_policy_name (p->scheduler->policy));
    }
  if (p->io_priority)
    ab_audit_line_value (ab_audit_add (a, AB_AUDIT_S_HOSTATTR, "ioPriority", "process.ioPriority",
                                       p->io_priority->klass == AB_IOPRIO_RT ? AB_AUDIT_L_WEAK : 0,
                                       "ioprio_set(IOPRIO_WHO_PROCESS) by the parent"),
                         "class %d level %d", p->io_priority->klass, p->io_priority->priority);
  if (p->exec_cpu_affinity_initial || p->exec_cpu_affinity_final)
    ab_audit_add (
        a, AB_AUDIT_S_HOSTATTR, "execCPUAffinity", "process.execCPUAffinity", 0,
        "applied by `agentbox exec` to the processes it starts, not to the container's first process");
}

void
ab_audit_map_host (struct ab_audit_ctx *a)
{
  map_cgroups (a);
  map_devices (a);
  map_namespaces (a);
  map_userns (a);
  map_network (a);
  map_host_attrs (a);
}
