/* Facts derived once from the spec, which the map and the rules share: the
 * capabilities the program really holds after execve, which namespaces are
 * the host's, what the network annotations say, the device cgroup's verdict.
 *
 * Capabilities after execve (capabilities(7), the kernel's
 * cap_bprm_creds_from_file): agentbox sets the five sets, then execs the
 * program.  For uid 0 the kernel treats every program as if it carried all
 * file capabilities: permitted' = inheritable | bounding | ambient, and
 * effective' = permitted'; with no_new_privs the new permitted set cannot
 * exceed the old one.  For any other uid, a program without file
 * capabilities keeps only the ambient set.  Without no_new_privs, a
 * set-user-ID-root program or one with file capabilities gets up to the
 * bounding set back: what the bounding set allows is reachable. */
#include "config.h"

#include <sys/mount.h>

#include "base/kernel-compat.h"
#include "audit/audit-internal.h"
#include "base/log.h"
#include "base/util.h"
#include "runtime/lifecycle/container.h"
#include "spec/tables.h"


static uint64_t
known_caps (void)
{
  int n = ab_cap_count ();

  return n >= 64 ? UINT64_MAX : (UINT64_C (1) << n) - 1;
}

char *
ab_audit_caps_text (uint64_t mask)
{
  size_t len = 0;
  char *s;

  mask &= known_caps ();
  if (mask == 0)
    return xstrdup ("none");
  if (mask == known_caps ())
    return xasprintf ("all %d", ab_cap_count ());
  s = xstrdup ("");
  for (int c = 0; c < ab_cap_count (); c++)
    if (mask & (UINT64_C (1) << c))
      {
        const char *name = ab_cap_name (c);
        size_t n = strlen (name);
        s = xrealloc (s, len + n + 3);
        if (len)
          {
            memcpy (s + len, ", ", 2);
            len += 2;
          }
        memcpy (s + len, name, n + 1);
        len += n;
      }
  return s;
}

static bool
maps_host_id0 (const struct ab_idmaps *m)
{
  for (size_t i = 0; i < m->n; i++)
    if (m->v[i].host_id == 0)
      return true;
  return false;
}

static void
facts_ns (struct ab_audit_ctx *a)
{
  struct ab_audit_facts *f = &a->f;

  for (int t = 0; t < AB_NS__COUNT; t++)
    {
      const struct ab_namespace *ns = a->l ? &a->l->ns[t] : NULL;
      f->ns_present[t] = ns && ns->present;
      f->ns_new[t] = ns && ns->present && ns->path == NULL;
      f->ns_host[t] = !f->ns_present[t] || (ns->path && ab_str_has_prefix (ns->path, "/proc/1/ns/"));
    }
  f->userns = f->ns_new[AB_NS_USER];
  /* Without a user namespace of its own, root in the container is root on the
     host; a joined one has mappings the config cannot show. */
  f->uid0_mapped = !f->ns_present[AB_NS_USER] || (f->userns && maps_host_id0 (&a->l->uid_mappings))
                   || (f->ns_present[AB_NS_USER] && f->ns_host[AB_NS_USER]);
  f->gid0_mapped = !f->ns_present[AB_NS_USER] || (f->userns && maps_host_id0 (&a->l->gid_mappings))
                   || (f->ns_present[AB_NS_USER] && f->ns_host[AB_NS_USER]);
}

static void
facts_caps (struct ab_audit_ctx *a)
{
  struct ab_audit_facts *f = &a->f;
  const struct ab_process *p = a->s->process;
  uint64_t P, I, B, A;

  if (p == NULL)
    return;
  f->root_user = p->user.uid == 0;
  f->nnp = p->no_new_privileges;
  for (int k = 0; k < AB_CAP__SETS; k++)
    f->caps[k] = p->caps.set[k] ? p->caps.mask[k] & known_caps () : 0;
  P = f->caps[AB_CAP_PERMITTED];
  I = f->caps[AB_CAP_INHERITABLE];
  B = f->caps[AB_CAP_BOUNDING];
  /* The kernel raises an ambient capability only if permitted and inheritable. */
  A = f->caps[AB_CAP_AMBIENT] & P & I;
  if (f->root_user)
    {
      f->caps_exec = I | B | A;
      if (f->nnp)
        f->caps_exec &= P;
    }
  else
    f->caps_exec = A;
  f->caps_gain = f->nnp ? 0 : B & ~f->caps_exec;
}

static void
facts_resources (struct ab_audit_ctx *a)
{
  const struct ab_resources *r = a->l ? a->l->resources : NULL;
  struct ab_audit_facts *f = &a->f;

  if (r == NULL)
    return;
  f->pids_limited = r->pids_set && r->pids_limit.set && r->pids_limit.v >= 0;
  f->mem_limited = r->memory_set && r->memory.limit.set && r->memory.limit.v > 0;
  f->cpu_limited
      = r->cpu_set
        && ((r->cpu.quota.set && r->cpu.quota.v > 0) || (r->cpu.cpus != NULL && r->cpu.cpus[0] != '\0'));
}

/* The network as create makes it: the plan's. */
static void
facts_net (struct ab_audit_ctx *a)
{
  struct ab_audit_facts *f = &a->f;
  const struct ab_plan_net *n;

  if (a->p == NULL)
    return;
  n = &a->p->net;
  f->own_netns = n->own_ns;
  f->lo_only = n->lo_only;
  f->wall = n->wall;
  f->net = *n->allow;
  f->egress = n->egress;
  f->net_error = a->s->agentbox.net_error ? a->s->agentbox.net_error : a->s->agentbox.egress_error;
}

void
ab_audit_facts_init (struct ab_audit_ctx *a)
{
  struct ab_audit_facts *f = &a->f;

  /* Rootless, limits this host cannot enforce are accepted, so that the
     plan lists them in `degraded` (rules-rootless.c) instead of failing. */
  struct ab_plan_opts po = { .root = "<root>", .id = "<id>", .rootless = a->rootless, .accept_degraded = true };
  ab_error_t err = { 0 };

  memset (f, 0, sizeof *f);
  /* What create would do with this config: its plan, built as create
     builds it (without an --egress-policy baseline).  A plan is built for
     any parsed config, valid or not. */
  if (ab_container_plan (a->s, &po, NULL, &f->plan, &err) < 0)
    {
      ab_error_t again = { 0 };
      ab_warn ("audit: %s", err.msg);
      /* Refused rootless (an id map or a mount this user cannot have): the
         rest reads the plan root would make. */
      po.rootless = 0;
      if (ab_plan_build (a->s, &po, &f->plan, &again) < 0)
        f->plan = NULL;
    }
  a->p = f->plan;
  facts_ns (a);
  facts_caps (a);
  facts_resources (a);
  facts_net (a);
  ab_seccomp_eval (a->l ? a->l->seccomp : NULL, &f->sc);
  if (a->s->root.path != NULL)
    {
      if (a->s->root.path[0] == '/')
        f->rootfs = xstrdup (a->s->root.path);
      else if (a->bundle_dir != NULL)
        f->rootfs
            = xasprintf ("%s/%s", strcmp (a->bundle_dir, "/") == 0 ? "" : a->bundle_dir, a->s->root.path);
    }
}

void
ab_audit_facts_free (struct ab_audit_facts *f)
{
  ab_seccomp_eval_free (&f->sc);
  ab_plan_free (f->plan);
  free (f->rootfs);
}

/* ---- helpers ------------------------------------------------------------- */

static bool
dev_rule_matches (const struct ab_device_rule *d, char type, int64_t major, int64_t minor, char access)
{
  if (d->type != 'a')
    {
      if (d->type != type)
        return false;
      if (d->major.set && d->major.v != -1 && d->major.v != major)
        return false;
      if (d->minor.set && d->minor.v != -1 && d->minor.v != minor)
        return false;
      /* "" means every access; the v1 "a" rule ignores the access letters. */
      if (d->access[0] != '\0' && strchr (d->access, access) == NULL)
        return false;
    }
  return true;
}

/* runtime/cgroup/cgroup-devices.c: deny everything, the rules in order, then the
   runtime's defaults (null, zero, full, random, urandom, tty, ptmx rwm;
   the pty slaves 136:* rw). */
static bool
dev_default (char type, int64_t major, int64_t minor, char access)
{
  static const int64_t rwm[][2] = { { 1, 3 }, { 1, 5 }, { 1, 7 }, { 1, 8 }, { 1, 9 }, { 5, 0 }, { 5, 2 } };

  if (type != 'c')
    return false;
  for (size_t i = 0; i < AB_ARRAY_SIZE (rwm); i++)
    if (rwm[i][0] == major && rwm[i][1] == minor)
      return true;
  return major == 136 && access != 'm';
}

bool
ab_audit_dev_allowed (const struct ab_audit_ctx *a, char type, int64_t major, int64_t minor, char access,
                      ssize_t *rule)
{
  const struct ab_resources *r = a->l ? a->l->resources : NULL;
  bool allowed = false;

  *rule = -1;
  for (size_t i = 0; r && i < r->n_devices; i++)
    if (dev_rule_matches (&r->devices[i], type, major, minor, access))
      {
        allowed = r->devices[i].allow;
        *rule = (ssize_t)i;
      }
  if (dev_default (type, major, minor, access))
    {
      *rule = -1;
      return true;
    }
  return allowed;
}

char *
ab_audit_bind_source (const struct ab_audit_ctx *a, const struct ab_mount *m)
{
  if (m->source == NULL)
    return NULL;
  if (m->source[0] == '/' || a->bundle_dir == NULL)
    return xstrdup (m->source);
  return xasprintf ("%s/%s", strcmp (a->bundle_dir, "/") == 0 ? "" : a->bundle_dir, m->source);
}

bool
ab_audit_is_bind (const struct ab_mount *m)
{
  return m->bind || (m->type != NULL && strcmp (m->type, "bind") == 0);
}

bool
ab_audit_mount_ro (const struct ab_mount *m)
{
  return (m->flags & MS_RDONLY) || (m->attr_set & MOUNT_ATTR_RDONLY);
}
