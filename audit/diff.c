/* --diff: two reports compared mechanism by mechanism.
 *
 * Map lines are keyed by section and name, with array indices dropped
 * ("mounts[3] /proc" and "mounts[5] /proc" are the same mount one place
 * further down); lines with equal keys are paired in order.  A pair whose
 * value, mechanism or flags differ, and a line without a partner, are
 * changes.  Findings are keyed by rule id and JSON path. */
#include "config.h"

#include <ctype.h>
#include <string.h>

#include "audit/audit-internal.h"
#include "base/util.h"

static char *
key_of (const struct ab_audit_line *l)
{
  char *k = xmalloc (strlen (l->name) + 1);
  size_t o = 0;

  for (const char *p = l->name; *p; p++)
    {
      k[o++] = *p;
      if (*p == '[' && isdigit ((unsigned char)p[1]))
        {
          while (isdigit ((unsigned char)p[1]))
            p++;
        }
    }
  k[o] = '\0';
  return k;
}

static bool
str_eq (const char *a, const char *b)
{
  return (a == NULL && b == NULL) || (a && b && strcmp (a, b) == 0);
}

static bool
same_line (const struct ab_audit_line *a, const struct ab_audit_line *b)
{
  return str_eq (a->value, b->value) && str_eq (a->mechanism, b->mechanism) && a->flags == b->flags;
}

static void
add_change (struct ab_audit_diff *d, int section, const char *name, const struct ab_audit_line *a,
            const struct ab_audit_line *b)
{
  struct ab_audit_change *c;

  d->changes = xreallocarray (d->changes, d->n_changes + 1, sizeof *d->changes);
  c = &d->changes[d->n_changes++];
  c->section = section;
  c->name = xstrdup (name);
  c->a = a;
  c->b = b;
}

static void
diff_lines (struct ab_audit_diff *d)
{
  const struct ab_audit_report *a = d->a, *b = d->b;
  _cleanup_free_ bool *used = xcalloc (b->n_lines + 1, sizeof *used);

  for (int s = 0; s < AB_AUDIT_S__COUNT; s++)
    {
      for (size_t i = 0; i < a->n_lines; i++)
        {
          const struct ab_audit_line *la = &a->lines[i];
          _cleanup_free_ char *ka = NULL;
          const struct ab_audit_line *lb = NULL;

          if (la->section != s)
            continue;
          ka = key_of (la);
          for (size_t j = 0; j < b->n_lines && lb == NULL; j++)
            {
              _cleanup_free_ char *kb = NULL;
              if (used[j] || b->lines[j].section != s)
                continue;
              kb = key_of (&b->lines[j]);
              if (strcmp (ka, kb) == 0)
                {
                  used[j] = true;
                  lb = &b->lines[j];
                }
            }
          if (lb == NULL || !same_line (la, lb))
            add_change (d, s, la->name, la, lb);
        }
      for (size_t j = 0; j < b->n_lines; j++)
        if (!used[j] && b->lines[j].section == s)
          add_change (d, s, b->lines[j].name, NULL, &b->lines[j]);
    }
}

static bool
has_finding (const struct ab_audit_report *r, const struct ab_audit_finding *f)
{
  for (size_t i = 0; i < r->n_findings; i++)
    if (r->findings[i].rule == f->rule && strcmp (r->findings[i].path, f->path) == 0)
      return true;
  return false;
}

static void
only_in (const struct ab_audit_report *x, const struct ab_audit_report *y,
         const struct ab_audit_finding ***out, size_t *n)
{
  *out = xcalloc (x->n_findings + 1, sizeof **out);
  *n = 0;
  for (size_t i = 0; i < x->n_findings; i++)
    if (!has_finding (y, &x->findings[i]))
      (*out)[(*n)++] = &x->findings[i];
}

struct ab_audit_diff *
ab_audit_diff (const struct ab_audit_report *a, const struct ab_audit_report *b)
{
  struct ab_audit_diff *d = xzalloc (sizeof *d);

  d->a = a;
  d->b = b;
  diff_lines (d);
  only_in (a, b, &d->only_a, &d->n_only_a);
  only_in (b, a, &d->only_b, &d->n_only_b);
  return d;
}

void
ab_audit_diff_free (struct ab_audit_diff *d)
{
  if (d == NULL)
    return;
  for (size_t i = 0; i < d->n_changes; i++)
    free (d->changes[i].name);
  free (d->changes);
  free (d->only_a);
  free (d->only_b);
  free (d);
}
