/* Rules: namespaces, users, sysctl, network, hooks, and the document itself.
 * One small function per rule or family; they read the spec and the facts
 * of facts.c and add findings, nothing else. */
#include "config.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <libgen.h>
#include <sys/stat.h>

#include "audit/audit-internal.h"
#include "hooks/hooks.h"
#include "base/util.h"
#include "spec/annotations.h"
#include "spec/spec.h"
#include "spec/tables.h"

/* ---- namespaces -------------------------------------------------------------- */

static void
rule_ns_absent (struct ab_audit_ctx *a)
{
  static const struct
  {
    int type;
    const char *id;
  } tab[] = {
    { AB_NS_PID, "AB-NS-001" },   { AB_NS_NET, "AB-NS-002" }, { AB_NS_IPC, "AB-NS-003" },
    { AB_NS_MOUNT, "AB-NS-004" }, { AB_NS_UTS, "AB-NS-005" }, { AB_NS_CGROUP, "AB-NS-006" },
  };

  for (size_t i = 0; i < AB_ARRAY_SIZE (tab); i++)
    if (!a->f.ns_present[tab[i].type])
      ab_audit_find (
          a, tab[i].id, "linux.namespaces",
          "linux.namespaces has no \"%s\" entry: the container stays in the runtime's (the host's) %s "
          "namespace",
          ab_ns_name (tab[i].type), ab_ns_name (tab[i].type));
}

static void
rule_ns_host_init (struct ab_audit_ctx *a)
{
  for (int t = 0; a->l && t < AB_NS__COUNT; t++)
    if (a->f.ns_present[t] && a->f.ns_host[t])
      ab_audit_find (a, "AB-NS-007", "linux.namespaces", "the %s namespace is joined at %s", ab_ns_name (t),
                     a->l->ns[t].path);
}

/* ---- users --------------------------------------------------------------------- */

static void
rule_user_none (struct ab_audit_ctx *a)
{
  const struct ab_process *p = a->s->process;

  if (a->f.ns_present[AB_NS_USER])
    return;
  /* A process that is not root, holds nothing and cannot gain anything still
     has host root's identity one set-user-ID exploit away: medium. */
  if (p && !a->f.root_user && a->f.nnp && a->f.caps_exec == 0)
    ab_audit_find_sev (
        a, "AB-USER-001", AB_AUDIT_MEDIUM, "linux.namespaces",
        "no user namespace; the process runs as host uid %u without capabilities, but root in the container "
        "(and every file it owns) is host root",
        p->user.uid);
  else
    ab_audit_find (a, "AB-USER-001", "linux.namespaces",
                   "no user namespace: uid %u in the container is uid %u on the host", p ? p->user.uid : 0,
                   p ? p->user.uid : 0);
}

static void
check_maps (struct ab_audit_ctx *a, const char *key, const struct ab_idmaps *m)
{
  for (size_t i = 0; i < m->n; i++)
    {
      const struct ab_idmap *e = &m->v[i];
      char path[64];

      snprintf (path, sizeof path, "linux.%s[%zu]", key, i);
      if (e->host_id == 0)
        ab_audit_find (a, "AB-USER-002", path, "container ID %" PRIu32 " is host ID 0 (%s)", e->container_id,
                       strcmp (key, "uidMappings") == 0 ? "root" : "group root");
      else if (e->host_id < 1000)
        ab_audit_find (a, "AB-USER-003", path, "host IDs %" PRIu32 "-%" PRIu64 " are mapped", e->host_id,
                       (uint64_t)e->host_id + e->size - 1);
    }
}

static void
rule_user_maps (struct ab_audit_ctx *a)
{
  if (!a->f.userns)
    return;
  check_maps (a, "uidMappings", &a->l->uid_mappings);
  check_maps (a, "gidMappings", &a->l->gid_mappings);
}

/* ---- sysctl ---------------------------------------------------------------------- */

static void
rule_sysctl (struct ab_audit_ctx *a)
{
  for (size_t i = 0; a->l && i < a->l->sysctl.n; i++)
    {
      const char *key = a->l->sysctl.v[i].key;
      int ns = ab_sysctl_namespace (key);
      char path[320];

      snprintf (path, sizeof path, "linux.sysctl.%s", key);
      if (ns < 0)
        ab_audit_find (a, "AB-SYSCTL-001", path, "%s = %s is a global sysctl", key, a->l->sysctl.v[i].value);
      else if (a->f.ns_host[ns])
        ab_audit_find (a, "AB-SYSCTL-002", path, "%s belongs to the %s namespace, which is the host's", key,
                       ab_ns_name (ns));
    }
}

/* ---- network ----------------------------------------------------------------------- */

static bool
covers (const struct ab_net_allow *e, int family, const char *text)
{
  uint8_t addr[16] = { 0 };
  unsigned bits = e->prefix;

  if (e->family != family || inet_pton (family, text, addr) != 1)
    return false;
  for (unsigned i = 0; i < bits / 8; i++)
    if (addr[i] != e->addr[i])
      return false;
  if (bits % 8)
    {
      uint8_t mask = (uint8_t)(0xff << (8 - bits % 8));
      if ((addr[bits / 8] & mask) != (e->addr[bits / 8] & mask))
        return false;
    }
  return true;
}

/* One address of each non-public range the egress proxy refuses: an entry
   containing one of them opens that range. */
static const char *
private_sample (const struct ab_net_allow *e)
{
  static const struct
  {
    int family;
    const char *addr;
  } samples[] = {
    { AF_INET, "127.0.0.1" },   { AF_INET, "10.0.0.1" },    { AF_INET, "172.16.0.1" },
    { AF_INET, "192.168.0.1" }, { AF_INET, "169.254.1.1" }, { AF_INET, "100.64.0.1" },
    { AF_INET6, "::1" },        { AF_INET6, "fc00::1" },    { AF_INET6, "fe80::1" },
  };
  const char *why = ab_egress_addr_refusal (e->family, e->addr);

  /* Metadata addresses are dropped by the wall ahead of every accept. */
  if (why != NULL && strcmp (why, "ssrf:metadata") != 0)
    return why;
  for (size_t i = 0; i < AB_ARRAY_SIZE (samples); i++)
    if (covers (e, samples[i].family, samples[i].addr))
      return samples[i].addr;
  return NULL;
}

static void
rule_net_allow (struct ab_audit_ctx *a)
{
  for (size_t i = 0; a->f.wall && i < a->f.net.n_allow; i++)
    {
      const struct ab_net_allow *e = &a->f.net.allow[i];
      char addr[INET6_ADDRSTRLEN];
      const char *why;

      inet_ntop (e->family, e->addr, addr, sizeof addr);
      if (e->prefix == 0)
        ab_audit_find (a, "AB-NET-001", "annotations." AB_ANNOT_NET_ALLOW,
                       "entry %zu (%s/0) allows every %s address", i, addr,
                       e->family == AF_INET ? "IPv4" : "IPv6");
      else if ((why = private_sample (e)) != NULL)
        ab_audit_find (a, "AB-NET-002", "annotations." AB_ANNOT_NET_ALLOW, "entry %zu (%s/%u) reaches %s", i,
                       addr, e->prefix, why);
    }
}

static void
rule_net_joined (struct ab_audit_ctx *a)
{
  if (a->f.ns_present[AB_NS_NET] && !a->f.ns_new[AB_NS_NET] && !a->f.wall && !a->f.ns_host[AB_NS_NET])
    ab_audit_find (a, "AB-NET-003", "annotations." AB_ANNOT_NET_ALLOW,
                   "the network namespace %s is joined and %s is not set: no wall", a->l->ns[AB_NS_NET].path,
                   AB_ANNOT_NET_ALLOW);
}

static void
rule_net_wall_off (struct ab_audit_ctx *a)
{
  if (a->f.own_netns && !a->f.wall)
    ab_audit_find (a, "AB-NET-006", "annotations." AB_ANNOT_NET_WALL,
                   "the network namespace agentbox makes gets no wall: any link added to it carries "
                   "everything");
}

static void
rule_net_devices (struct ab_audit_ctx *a)
{
  for (size_t i = 0; a->l && i < a->l->n_net_devices; i++)
    {
      char path[320];
      snprintf (path, sizeof path, "linux.netDevices.%s", a->l->net_devices[i].host_name);
      ab_audit_find (a, "AB-NET-004", path, "the host interface %s moves into the container",
                     a->l->net_devices[i].host_name);
    }
}

static void
rule_net_domains (struct ab_audit_ctx *a)
{
  for (size_t i = 0; i < a->f.egress.n_allow; i++)
    {
      const struct ab_egress_rule *r = &a->f.egress.allow[i];
      if (r->wildcard && r->name && strchr (r->name, '.') == NULL)
        ab_audit_find (a, "AB-NET-005", "annotations." AB_ANNOT_NET_ALLOW_DOMAINS,
                       "%s allows every name under the top-level domain %s", r->pattern, r->name);
    }
}

/* ---- hooks -------------------------------------------------------------------------- */

static bool
runs_on_host (int kind)
{
  return kind == AB_HOOK_PRESTART || kind == AB_HOOK_CREATE_RUNTIME || kind == AB_HOOK_POSTSTART
         || kind == AB_HOOK_POSTSTOP;
}

static bool
inline_code (const struct ab_hook *h)
{
  for (size_t i = 1; i < h->args.n; i++)
    if (strcmp (h->args.v[i], "-c") == 0 || strcmp (h->args.v[i], "-e") == 0)
      return true;
  return false;
}

static bool
below (const char *path, const char *dir)
{
  size_t n = strlen (dir);

  while (n > 1 && dir[n - 1] == '/')
    n--;
  return strncmp (path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* Where the container can write the host path `path`: its writable rootfs,
   or a writable bind of a host directory containing it. */
static const char *
container_writes (struct ab_audit_ctx *a, const char *path)
{
  if (a->f.rootfs && !a->s->root.readonly && below (path, a->f.rootfs))
    return "the container's writable root filesystem";
  for (size_t i = 0; i < a->s->n_mounts; i++)
    {
      const struct ab_mount *m = &a->s->mounts[i];
      _cleanup_free_ char *src = NULL;
      if (!ab_audit_is_bind (m) || ab_audit_mount_ro (m))
        continue;
      src = ab_audit_bind_source (a, m);
      if (src && below (path, src))
        return "a writable bind mount";
    }
  return NULL;
}

static void
rule_hooks (struct ab_audit_ctx *a)
{
  for (int k = 0; k < AB_HOOK__KINDS; k++)
    for (size_t i = 0; i < a->s->hooks[k].n; i++)
      {
        const struct ab_hook *h = &a->s->hooks[k].v[i];
        char path[64];
        const char *where;

        snprintf (path, sizeof path, "hooks.%s[%zu]", ab_hook_kind_name (k), i);
        if (runs_on_host (k))
          ab_audit_find (a, "AB-HOOK-001", path, "%s runs %s on the host", ab_hook_kind_name (k), h->path);
        if (k == AB_HOOK_CREATE_CONTAINER)
          ab_audit_find (a, "AB-HOOK-002", path, "%s runs in the container's namespaces before pivot_root",
                         h->path);
        if (k != AB_HOOK_START_CONTAINER && (where = container_writes (a, h->path)) != NULL)
          ab_audit_find (a, "AB-HOOK-003", path, "%s lies in %s", h->path, where);
        if (k != AB_HOOK_START_CONTAINER && inline_code (h))
          ab_audit_find (a, "AB-HOOK-004", path, "%s is given code to run with -c or -e", h->path);
      }
}

/* ---- the document -------------------------------------------------------------------- */

static void
rule_unknown (struct ab_audit_ctx *a)
{
  size_t n = a->s->unknown.n < 100 ? a->s->unknown.n : 100;

  for (size_t i = 0; i < n; i++)
    ab_audit_find (a, "AB-SPEC-001", a->s->unknown.v[i],
                   "%s is not part of runtime-spec %s: agentbox ignores it", a->s->unknown.v[i],
                   AB_OCI_VERSION);
}

static void
rule_foreign_annotations (struct ab_audit_ctx *a)
{
  static const char *const prefixes[] = { "run.oci.", "org.systemd.property." };

  for (size_t i = 0; i < a->s->annotations.n; i++)
    for (size_t k = 0; k < AB_ARRAY_SIZE (prefixes); k++)
      if (ab_str_has_prefix (a->s->annotations.v[i].key, prefixes[k]))
        {
          char path[512];
          snprintf (path, sizeof path, "annotations.%s", a->s->annotations.v[i].key);
          ab_audit_find (a, "AB-SPEC-002", path, "%s = %s", a->s->annotations.v[i].key,
                         a->s->annotations.v[i].value);
        }
}

/* The JSON path a validation message names ("config.json: <path>: ..."). */
static char *
message_path (const char *msg)
{
  const char *p = ab_str_has_prefix (msg, "config.json: ") ? msg + 13 : msg;
  const char *end = strstr (p, ": ");

  return end ? xstrndup (p, (size_t)(end - p)) : xstrdup ("config.json");
}

static void
rule_refused (struct ab_audit_ctx *a)
{
  ab_error_t err = { 0 };
  const char *why = NULL;
  _cleanup_free_ char *path = NULL;

  /* The validator is create's verdict on the config (runtime/plan,
     lifecycle/create.c): what it refuses, create refuses. */
  if (ab_spec_validate (a->s, &err) < 0 || ab_spec_check_supported (a->s, &err) < 0)
    why = err.msg;
  else if (a->f.rootfs != NULL)
    {
      /* create's check of the root (spec/bundle.c), on what root.path names
         on this host; the state root and the cache depend on the caller's
         --root and environment, which create checks too. */
      struct stat st;
      if (stat (a->f.rootfs, &st) == 0 && ab_root_dir_check (&st, a->s->root.path, &err) < 0)
        why = err.msg;
    }
  if (why == NULL)
    {
      a->r->accepted = true;
      return;
    }
  a->r->accepted = false;
  a->r->refusal = xstrdup (why);
  path = message_path (why);
  ab_audit_find (a, "AB-SPEC-003", path, "%s", why);
}

void
ab_audit_rules_ns (struct ab_audit_ctx *a)
{
  rule_ns_absent (a);
  rule_ns_host_init (a);
  rule_user_none (a);
  rule_user_maps (a);
  rule_sysctl (a);
  rule_net_allow (a);
  rule_net_joined (a);
  rule_net_wall_off (a);
  rule_net_devices (a);
  rule_net_domains (a);
  rule_hooks (a);
  rule_unknown (a);
  rule_foreign_annotations (a);
  rule_refused (a);
}
