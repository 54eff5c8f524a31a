#include "config.h"

#include <stdio.h>
#include <netinet/in.h>
#include <sys/mount.h>

#include "base/kernel-compat.h"
#include "runtime/plan/landlock.h"
#include "runtime/plan/plan.h"

void
ab_ll_ruleset_free (struct ab_ll_ruleset *rs)
{
  for (size_t i = 0; i < rs->n_paths; i++)
    {
      free (rs->paths[i].path);
      free (rs->paths[i].origin);
    }
  free (rs->paths);
  free (rs->ports);
  memset (rs, 0, sizeof *rs);
}

void
ab_ll_ruleset_add_path (struct ab_ll_ruleset *rs, const char *path, uint64_t access, bool nofollow,
                        bool optional, const char *origin)
{
  rs->paths = xreallocarray (rs->paths, rs->n_paths + 1, sizeof *rs->paths);
  rs->paths[rs->n_paths++] = (struct ab_ll_rule){
    .path = xstrdup (path),
    .access = access,
    .nofollow = nofollow,
    .optional = optional,
    .origin = xstrdup (origin ? origin : "rule"),
  };
}

void
ab_ll_ruleset_add_port (struct ab_ll_ruleset *rs, uint16_t port, uint64_t access)
{
  for (size_t i = 0; i < rs->n_ports; i++)
    if (rs->ports[i].port == port)
      {
        rs->ports[i].access |= access;
        return;
      }
  rs->ports = xreallocarray (rs->ports, rs->n_ports + 1, sizeof *rs->ports);
  rs->ports[rs->n_ports++] = (struct ab_ll_port_rule){ .port = port, .access = access };
}

static void
ll_net_add_port (struct ab_ll_net *n, uint16_t port)
{
  for (size_t i = 0; i < n->n_ports; i++)
    if (n->ports[i] == port)
      return;
  if (n->n_ports < AB_ARRAY_SIZE (n->ports))
    n->ports[n->n_ports++] = port;
  else
    n->connect_any = true; /* more than we keep: do not refuse what the wall passes */
}

void
ab_ll_net_view (bool shared, const struct ab_net_policy *allow, const struct ab_egress_policy *egress,
                struct ab_ll_net *out)
{
  uint16_t ports[64];
  size_t n;

  memset (out, 0, sizeof *out);
  out->shared = shared;
  if (!shared)
    return;
  for (size_t i = 0; allow && i < allow->n_allow; i++)
    {
      if (allow->allow[i].proto == IPPROTO_UDP)
        continue;
      if (allow->allow[i].port == 0)
        out->connect_any = true;
      else
        ll_net_add_port (out, allow->allow[i].port);
    }
  if (egress == NULL || !egress->enabled)
    return;
  ll_net_add_port (out, AB_NET_PROXY_HTTP_PORT);
  ll_net_add_port (out, AB_NET_PROXY_DNS_PORT);
  n = ab_egress_policy_ports (egress, ports, AB_ARRAY_SIZE (ports));
  for (size_t i = 0; i < n && i < AB_ARRAY_SIZE (ports); i++)
    ll_net_add_port (out, ports[i]);
}

uint64_t
ab_landlock_mount_rights (const struct ab_mount *m)
{
  bool ro = (m->flags & MS_RDONLY) || (m->attr_set & MOUNT_ATTR_RDONLY);
  bool noexec = (m->flags & MS_NOEXEC) || (m->attr_set & MOUNT_ATTR_NOEXEC);
  uint64_t r = ro ? AB_LL_AUTO_RO : AB_LL_AUTO_RW;

  return noexec ? r & ~AB_LL_FS_EXECUTE : r;
}

/* The last mount at each destination: a later one covers it (a mount on
   top) or changes it (a remount), so only its flags count there. */
static bool
covered_later (const struct ab_mount *mounts, size_t n, size_t i)
{
  for (size_t k = i + 1; k < n; k++)
    if (strcmp (mounts[k].destination, mounts[i].destination) == 0)
      return true;
  return false;
}

static void
auto_rules (const struct ab_spec *s, const struct ab_mount *mounts, size_t n_mounts,
            const struct ab_ll_net *net, struct ab_ll_ruleset *out)
{
  out->handled[AB_LL_KIND_FS] |= ab_ll_known (AB_LL_KIND_FS, AB_LL_ABI_MAX);
  ab_ll_ruleset_add_path (out, "/", s->root.readonly ? AB_LL_AUTO_RO : AB_LL_AUTO_RW, false, false, "root");
  for (size_t i = 0; i < n_mounts; i++)
    {
      char origin[32];
      if (covered_later (mounts, n_mounts, i))
        continue;
      snprintf (origin, sizeof origin, "mounts[%zu]", i);
      ab_ll_ruleset_add_path (out, mounts[i].destination, ab_landlock_mount_rights (&mounts[i]), false, false,
                              origin);
    }
  /* Network rules only in a namespace the container shares under our
     wall, where a listener or a connect reaches others.  In one of its
     own the wall is the boundary: TCP on its loopback is the program's own
     business (a test suite's server, a session's background server), and
     a connect the wall refuses is counted in the record, which a refusal
     in the kernel before any packet would hide.  Without a wall of ours
     (the host's network, a namespace joined without
     dev.agentbox.net.allow) the config chose that network. */
  if (net == NULL || !net->shared)
    return;
  out->handled[AB_LL_KIND_NET] |= AB_LL_NET_BIND_TCP;
  if (net->connect_any)
    return;
  out->handled[AB_LL_KIND_NET] |= AB_LL_NET_CONNECT_TCP;
  for (size_t i = 0; i < net->n_ports; i++)
    ab_ll_ruleset_add_port (out, net->ports[i], AB_LL_NET_CONNECT_TCP);
}

void
ab_landlock_rules (const struct ab_spec *s, const struct ab_mount *mounts, size_t n_mounts,
                   const struct ab_ll_net *net, struct ab_ll_ruleset *out)
{
  const struct ab_landlock_policy *p = &s->agentbox.landlock;

  memset (out, 0, sizeof *out);
  out->abi = AB_LL_ABI_MAX;
  out->best_effort = true;
  if (p->mode == AB_LL_MODE_AUTO)
    {
      auto_rules (s, mounts, n_mounts, net, out);
      return;
    }
  if (p->mode != AB_LL_MODE_POLICY)
    return;
  if (p->with_auto)
    auto_rules (s, mounts, n_mounts, net, out);
  /* The policy's own: written for its ABI, so a right a newer kernel has
     but the policy's ABI lacks stays unhandled (that is what the version
     is for), unless the auto rules handle it. */
  out->abi = p->abi;
  out->best_effort = p->best_effort;
  for (int k = 0; k < AB_LL_KIND__COUNT; k++)
    out->handled[k] |= p->handled[k];
  for (size_t i = 0; i < p->n_paths; i++)
    ab_ll_ruleset_add_path (out, p->paths[i].path, p->paths[i].access, true, false, "pathBeneath");
  for (size_t i = 0; i < p->n_ports; i++)
    ab_ll_ruleset_add_port (out, p->ports[i].port, p->ports[i].access);
}
