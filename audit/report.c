/* The audit report: map lines and findings, their order, freeing. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit-internal.h"
#include "base/util.h"

static const struct
{
  const char *id;
  const char *title;
} sections[AB_AUDIT_S__COUNT] = {
  [AB_AUDIT_S_CGROUPS] = { "cgroups", "cgroup limits (made before clone3 places the process in them)" },
  [AB_AUDIT_S_DEVICES] = { "devices", "device access (device cgroup, then the nodes in /dev)" },
  [AB_AUDIT_S_NAMESPACES] = { "namespaces", "namespaces (clone3 flags; setns into joined ones)" },
  [AB_AUDIT_S_USERNS] = { "user-namespace", "user namespace ID maps (written by the parent)" },
  [AB_AUDIT_S_NETWORK] = { "network", "network (the parent, in the container's network namespace)" },
  [AB_AUDIT_S_HOSTATTR]
  = { "process-attributes", "process attributes set by the parent with host privileges" },
  [AB_AUDIT_S_MOUNTS] = { "mounts", "mounts (fd-based, resolved inside the pinned rootfs)" },
  [AB_AUDIT_S_HOOKS] = { "hooks", "hooks (where each program runs)" },
  [AB_AUDIT_S_PIVOT] = { "pivot-root", "pivot_root, hostname, domainname" },
  [AB_AUDIT_S_SYSCTL] = { "sysctl", "sysctl (written below /proc/sys of the container)" },
  [AB_AUDIT_S_PATHS] = { "paths", "read-only and masked paths, read-only root, root propagation" },
  [AB_AUDIT_S_PROCESS]
  = { "process", "process setup before exec (personality, keyring, cwd, rlimits, LSM, user)" },
  [AB_AUDIT_S_LANDLOCK]
  = { "landlock", "landlock (a ruleset from the mount plan, restricted after the LSM label)" },
  [AB_AUDIT_S_CAPS] = { "capabilities", "capabilities (bounding set dropped, then capset)" },
  [AB_AUDIT_S_NNP] = { "no-new-privileges", "no_new_privs (prctl)" },
  [AB_AUDIT_S_SECCOMP] = { "seccomp", "seccomp (one BPF filter, compiled in the parent)" },
  [AB_AUDIT_S_EXEC] = { "exec", "execve of the program" },
  [AB_AUDIT_S_LIVE] = { "live", "applied state, read from the host side" },
};

const char *
ab_audit_section_id (int section)
{
  return section >= 0 && section < AB_AUDIT_S__COUNT ? sections[section].id : "?";
}

const char *
ab_audit_section_title (int section)
{
  return section >= 0 && section < AB_AUDIT_S__COUNT ? sections[section].title : "?";
}

const char *
ab_audit_severity_name (int sev)
{
  switch (sev)
    {
    case AB_AUDIT_LOW:
      return "low";
    case AB_AUDIT_MEDIUM:
      return "medium";
    case AB_AUDIT_HIGH:
      return "high";
    default:
      return "?";
    }
}

int
ab_audit_severity_from_name (const char *name)
{
  for (int s = AB_AUDIT_LOW; s <= AB_AUDIT_HIGH; s++)
    if (strcmp (name, ab_audit_severity_name (s)) == 0)
      return s;
  return -1;
}

/* printf into a fresh string. */
static char *
ab_audit_vfmt (const char *fmt, va_list ap)
{
  char *s = NULL;

  if (vasprintf (&s, fmt, ap) < 0)
    abort ();
  return s;
}

static struct ab_audit_line *
ab_audit_report_add_line (struct ab_audit_report *r, int section, const char *name, const char *path,
                          unsigned flags, const char *mechanism)
{
  struct ab_audit_line *l;

  r->lines = xreallocarray (r->lines, r->n_lines + 1, sizeof *r->lines);
  l = &r->lines[r->n_lines++];
  memset (l, 0, sizeof *l);
  l->section = section;
  l->name = xstrdup (name);
  l->path = path ? xstrdup (path) : NULL;
  l->mechanism = xstrdup (mechanism);
  l->flags = flags;
  return l;
}

struct ab_audit_line *
ab_audit_add (struct ab_audit_ctx *a, int section, const char *name, const char *path, unsigned flags,
              const char *fmt, ...)
{
  _cleanup_free_ char *mech = NULL;
  va_list ap;

  va_start (ap, fmt);
  mech = ab_audit_vfmt (fmt, ap);
  va_end (ap);
  return ab_audit_report_add_line (a->r, section, name, path, flags, mech);
}

void
ab_audit_line_value (struct ab_audit_line *l, const char *fmt, ...)
{
  va_list ap;

  free (l->value);
  va_start (ap, fmt);
  l->value = ab_audit_vfmt (fmt, ap);
  va_end (ap);
}

void
ab_audit_line_note (struct ab_audit_line *l, const char *fmt, ...)
{
  va_list ap;

  free (l->note);
  va_start (ap, fmt);
  l->note = ab_audit_vfmt (fmt, ap);
  va_end (ap);
}

static void
ab_audit_report_add_finding (struct ab_audit_report *r, const char *id, int severity, const char *path,
                             const char *detail)
{
  const struct ab_audit_rule *rule = ab_audit_rule_find (id);
  struct ab_audit_finding *f;

  /* A rule id missing from the catalogue is a bug of this file's callers. */
  if (rule == NULL)
    abort ();
  for (size_t i = 0; i < r->n_findings; i++)
    if (r->findings[i].rule == rule && strcmp (r->findings[i].path, path) == 0)
      return; /* one finding per rule and field */
  r->findings = xreallocarray (r->findings, r->n_findings + 1, sizeof *r->findings);
  f = &r->findings[r->n_findings++];
  f->rule = rule;
  f->severity = severity > 0 ? severity : rule->severity;
  f->path = xstrdup (path);
  f->detail = xstrdup (detail);
}

static void
find_va (struct ab_audit_ctx *a, const char *id, int severity, const char *path, const char *fmt, va_list ap)
{
  _cleanup_free_ char *detail = ab_audit_vfmt (fmt, ap);

  ab_audit_report_add_finding (a->r, id, severity, path, detail);
}

void
ab_audit_find (struct ab_audit_ctx *a, const char *id, const char *path, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  find_va (a, id, 0, path, fmt, ap);
  va_end (ap);
}

void
ab_audit_find_sev (struct ab_audit_ctx *a, const char *id, int severity, const char *path, const char *fmt,
                   ...)
{
  va_list ap;

  va_start (ap, fmt);
  find_va (a, id, severity, path, fmt, ap);
  va_end (ap);
}

static int
cmp_finding (const void *x, const void *y)
{
  const struct ab_audit_finding *a = x, *b = y;
  int c = b->severity - a->severity;

  if (c == 0)
    c = strcmp (a->rule->id, b->rule->id);
  if (c == 0)
    c = strcmp (a->path, b->path);
  return c;
}

/* A stable sort of the lines by section: insertion sort keeps the order in
   which the passes added them within a section (their document order). */
static void
sort_lines (struct ab_audit_report *r)
{
  for (size_t i = 1; i < r->n_lines; i++)
    {
      struct ab_audit_line t = r->lines[i];
      size_t j = i;
      while (j > 0 && r->lines[j - 1].section > t.section)
        {
          r->lines[j] = r->lines[j - 1];
          j--;
        }
      r->lines[j] = t;
    }
}

void
ab_audit_report_sort (struct ab_audit_report *r)
{
  sort_lines (r);
  if (r->n_findings > 1)
    qsort (r->findings, r->n_findings, sizeof *r->findings, cmp_finding);
}

int
ab_audit_report_max_severity (const struct ab_audit_report *r)
{
  int max = 0;

  for (size_t i = 0; i < r->n_findings; i++)
    if (r->findings[i].severity > max)
      max = r->findings[i].severity;
  return max;
}

size_t
ab_audit_report_count (const struct ab_audit_report *r, int severity)
{
  size_t n = 0;

  for (size_t i = 0; i < r->n_findings; i++)
    n += r->findings[i].severity == severity;
  return n;
}

void
ab_audit_report_free (struct ab_audit_report *r)
{
  if (r == NULL)
    return;
  for (size_t i = 0; i < r->n_lines; i++)
    {
      free (r->lines[i].name);
      free (r->lines[i].path);
      free (r->lines[i].value);
      free (r->lines[i].mechanism);
      free (r->lines[i].note);
    }
  free (r->lines);
  for (size_t i = 0; i < r->n_findings; i++)
    {
      free (r->findings[i].path);
      free (r->findings[i].detail);
    }
  free (r->findings);
  free (r->kind);
  free (r->source);
  free (r->config_path);
  free (r->refusal);
  free (r->live_status);
  free (r);
}
