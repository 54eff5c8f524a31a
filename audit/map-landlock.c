/* The mechanism map: landlock (runtime/plan/landlock.h derives the rules,
 * runtime/landlock.h fits them to a kernel's ABI).  Which paths get which
 * rights, which TCP ports, what a kernel of the running ABI (or
 * --landlock-abi) leaves unrestricted; and rule AB-LL-001, a policy that
 * grants more beneath a mount than the mount allows. */
#include "config.h"

#include <stdio.h>

#include "audit/audit-internal.h"
#include "runtime/plan/landlock.h"
#include "runtime/landlock.h"
#include "spec/annotations.h"

#define AB_STR_(x) #x
#define AB_STR(x) AB_STR_ (x)
#define ANNOT_PATH "annotations." AB_ANNOT_LANDLOCK

static int abi_override = -1;

void
ab_audit_set_landlock_abi (int abi)
{
  abi_override = abi;
}

/* What a mount (or the root) can let through at all: no write beneath a
   read-only one, no execute beneath a noexec one. */
#define LL_WRITES (AB_LL_AUTO_RW & ~AB_LL_AUTO_RO & ~AB_LL_FS_IOCTL_DEV)

static uint64_t
mount_allows (const struct ab_plan *pl, const char *path, const char **what, size_t *index)
{
  size_t best = SIZE_MAX, best_len = 0;
  uint64_t rights;

  for (size_t i = 0; i < pl->n_mounts; i++)
    {
      const char *d = pl->mounts[i].destination;
      size_t l = strcmp (d, "/") == 0 ? 0 : strlen (d);
      /* the last mount at the longest destination that covers the path */
      if (strncmp (path, d, l) == 0 && (path[l] == '\0' || path[l] == '/') && l >= best_len)
        best = i, best_len = l;
    }
  if (best == SIZE_MAX)
    {
      *what = "the root";
      return (pl->spec->root.readonly ? AB_LL_AUTO_RO : AB_LL_AUTO_RW) | AB_LL_FS_IOCTL_DEV
             | AB_LL_FS_MAKE_CHAR | AB_LL_FS_MAKE_BLOCK;
    }
  *what = pl->mounts[best].destination;
  *index = best;
  rights = ab_landlock_mount_rights (&pl->mounts[best]);
  return rights | AB_LL_FS_IOCTL_DEV
         | ((rights & AB_LL_FS_WRITE_FILE) ? AB_LL_FS_MAKE_CHAR | AB_LL_FS_MAKE_BLOCK : 0);
}

static void
rule_beyond_mounts (struct ab_audit_ctx *a, const struct ab_ll_rule *r)
{
  const char *what;
  size_t index = SIZE_MAX;
  uint64_t beyond = r->access & ~mount_allows (a->p, r->path, &what, &index);
  _cleanup_free_ char *text = NULL;

  if (beyond == 0)
    return;
  text = ab_ll_rights_text (AB_LL_KIND_FS, beyond);
  if (index == SIZE_MAX)
    ab_audit_find (a, "AB-LL-001", ANNOT_PATH, "pathBeneath grants %s beneath %s, but the root is read-only",
                   text, r->path);
  else
    ab_audit_find (a, "AB-LL-001", ANNOT_PATH, "pathBeneath grants %s beneath %s, but mounts[%zu] (%s) is %s",
                   text, r->path, index, what,
                   (beyond & AB_LL_FS_EXECUTE) && !(beyond & LL_WRITES) ? "noexec" : "read-only");
}

/* The auto sets by name (runtime/plan/landlock.h), any other by its rights. */
static char *
fs_label (uint64_t m)
{
  if (m == AB_LL_AUTO_RW)
    return xstrdup ("read-write");
  if (m == (AB_LL_AUTO_RW & ~AB_LL_FS_EXECUTE))
    return xstrdup ("read-write, no execute");
  if (m == AB_LL_AUTO_RO)
    return xstrdup ("read, execute");
  if (m == (AB_LL_AUTO_RO & ~AB_LL_FS_EXECUTE))
    return xstrdup ("read");
  return ab_ll_rights_text (AB_LL_KIND_FS, m);
}

static void
map_rules (struct ab_audit_ctx *a, const struct ab_ll_ruleset *rs)
{
  for (size_t i = 0; i < rs->n_paths; i++)
    {
      const struct ab_ll_rule *r = &rs->paths[i];
      _cleanup_free_ char *text = fs_label (r->access);
      bool policy = strcmp (r->origin, "pathBeneath") == 0;
      ab_audit_line_value (
          ab_audit_add (
              a, AB_AUDIT_S_LANDLOCK, r->path, policy || strcmp (r->origin, "root") == 0 ? NULL : r->origin,
              0, "landlock_add_rule(PATH_BENEATH) on `%s`, opened beneath the container's root%s", r->path,
              policy ? " without following a symlink (the policy's own path)" : " (the mount's flags)"),
          "%s", text);
      if (policy)
        rule_beyond_mounts (a, r);
    }
  for (size_t i = 0; i < rs->n_ports; i++)
    {
      _cleanup_free_ char *text = ab_ll_rights_text (AB_LL_KIND_NET, rs->ports[i].access);
      char name[32];
      snprintf (name, sizeof name, "tcp port %u", (unsigned)rs->ports[i].port);
      ab_audit_line_value (
          ab_audit_add (a, AB_AUDIT_S_LANDLOCK, name, NULL, 0, "landlock_add_rule(NET_PORT)"), "%s", text);
    }
}

/* What a kernel of ABI `abi` enforces of it. */
static void
map_abi (struct ab_audit_ctx *a, const struct ab_ll_ruleset *want)
{
  const char *why = "";
  unsigned abi = abi_override >= 0 ? (unsigned)abi_override : ab_landlock_abi (&why);
  struct ab_ll_ruleset fit = { 0 };
  struct ab_strv dropped = { 0 };
  ab_error_t err = { 0 };
  char *joined = NULL;
  struct ab_audit_line *l;

  if (ab_landlock_fit (want, abi, &fit, &dropped, &err) < 0)
    l = ab_audit_add (a, AB_AUDIT_S_LANDLOCK, "kernel ABI", ANNOT_PATH, AB_AUDIT_L_REFUSED,
                      "create fails: %s", err.msg);
  else if (dropped.n == 0)
    l = ab_audit_add (a, AB_AUDIT_S_LANDLOCK, "kernel ABI", NULL, 0, "every handled right is enforced");
  else
    {
      size_t len = 1;
      for (size_t i = 0; i < dropped.n; i++)
        len += strlen (dropped.v[i]) + 2;
      joined = xzalloc (len);
      for (size_t i = 0; i < dropped.n; i++)
        {
          if (i)
            strcat (joined, "; ");
          strcat (joined, dropped.v[i]);
        }
      l = ab_audit_add (a, AB_AUDIT_S_LANDLOCK, "kernel ABI", NULL, AB_AUDIT_L_WEAK,
                        "best effort, each in the record's degraded: %s", joined);
    }
  ab_audit_line_value (l, "%u (%s)", abi, abi_override >= 0 ? "--landlock-abi" : "this kernel");
  free (joined);
  ab_strv_free (&dropped);
  ab_ll_ruleset_free (&fit);
}

void
ab_audit_map_landlock (struct ab_audit_ctx *a)
{
  const struct ab_landlock_policy *p = &a->s->agentbox.landlock;
  const struct ab_ll_ruleset *want = a->p ? &a->p->landlock : NULL; /* the plan's: what create derives */
  _cleanup_free_ char *fs = NULL, *nt = NULL, *sc = NULL;
  struct ab_audit_line *l;

  if (p->mode != AB_LL_MODE_AUTO && p->mode != AB_LL_MODE_POLICY)
    {
      ab_audit_line_value (
          ab_audit_add (
              a, AB_AUDIT_S_LANDLOCK, "landlock", ANNOT_PATH, 0,
              "none: the mounts and the network wall are the only filesystem and network boundaries%s",
              p->mode == AB_LL_MODE_OFF ? "" : " (a bundle's default; `agentbox spec` writes \"auto\")"),
          "%s", p->mode == AB_LL_MODE_OFF ? "off" : "absent");
      return;
    }
  if (want == NULL)
    {
      ab_audit_add (a, AB_AUDIT_S_LANDLOCK, "landlock", ANNOT_PATH, AB_AUDIT_L_REFUSED,
                    "no ruleset: the config has no plan (create refuses it)");
      return;
    }
  fs = want->handled[AB_LL_KIND_FS] == ab_ll_known (AB_LL_KIND_FS, AB_LL_ABI_MAX)
           ? xstrdup ("all (ABI " AB_STR (AB_LL_ABI_MAX) ")")
           : ab_ll_rights_text (AB_LL_KIND_FS, want->handled[AB_LL_KIND_FS]);
  nt = ab_ll_rights_text (AB_LL_KIND_NET, want->handled[AB_LL_KIND_NET]);
  sc = ab_ll_rights_text (AB_LL_KIND_SCOPE, want->handled[AB_LL_KIND_SCOPE]);
  l = ab_audit_add (a, AB_AUDIT_S_LANDLOCK, "ruleset", ANNOT_PATH, 0,
                    "landlock_create_ruleset handling filesystem %s; network %s; scoped %s; "
                    "landlock_restrict_self after the LSM label, before the capabilities and seccomp, in the "
                    "container's process and in every exec'd one (a domain each)",
                    fs, nt, sc);
  if (p->mode == AB_LL_MODE_AUTO)
    ab_audit_line_value (l, "auto");
  else
    ab_audit_line_value (l, "policy for ABI %u%s", p->abi, p->with_auto ? ", with the auto rules" : "");
  if (p->mode == AB_LL_MODE_AUTO && !(want->handled[AB_LL_KIND_NET] & AB_LL_NET_CONNECT_TCP))
    ab_audit_add (a, AB_AUDIT_S_LANDLOCK, "network", NULL, 0,
                  want->handled[AB_LL_KIND_NET]
                      ? "TCP bind refused; TCP connect not restricted (an allowed "
                        "destination takes every port)"
                      : "no network rule: a network namespace of the container's own has the wall as its "
                        "boundary (a server on its loopback is the program's own; a refusal reaches the "
                        "record), and a network without agentbox's wall is the config's choice");
  map_rules (a, want);
  map_abi (a, want);
}
