/* The report for a terminal: the map grouped by section in pipeline order,
 * names aligned, long text wrapped under its column; then the findings,
 * worst first.  Colour only when the caller says so (a tty without
 * NO_COLOR).  The strings of a hostile config reach this output (paths,
 * names, annotation values): every one is printed through escape(), so
 * that control characters, C1 codes and bidirectional overrides cannot
 * drive the reviewer's terminal or reorder what it shows. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "audit/audit-internal.h"
#include "base/text.h"
#include "base/util.h"

#define WIDTH 100 /* wrap column: stable output for files and pipes */

struct out
{
  FILE *f;
  bool color;
};

static const char *
sgr (const struct out *o, const char *code)
{
  return o->color ? code : "";
}
#define BOLD "\033[1m"
#define DIM "\033[2m"
#define RED "\033[31m"
#define YELLOW "\033[33m"
#define CYAN "\033[36m"
#define RESET "\033[0m"

static const char *
sev_color (int sev)
{
  return sev == AB_AUDIT_HIGH ? BOLD RED : sev == AB_AUDIT_MEDIUM ? YELLOW : CYAN;
}

/* A copy of s with those escaped as \xNN or \uNNNN (and invalid UTF-8 as
   \xNN, though the parser lets none through). */
static char *
escape (const char *s)
{
  size_t size = strlen (s) * 6 + 8; /* every byte as \u00XX, and the room ab_escape keeps */

  return (char *)ab_escape (xmalloc (size), size, s, (size_t)-1, AB_ESC_XBYTE);
}

/* Print text from column `col` (where the cursor is), wrapping at WIDTH
   with continuation lines indented to `indent`. */
static void
wrap (FILE *f, const char *raw, size_t col, size_t indent)
{
  _cleanup_free_ char *text = escape (raw);
  const char *p = text;

  while (*p)
    {
      size_t room = col < WIDTH - 20 ? WIDTH - col : 20;
      size_t n = strlen (p), cut;

      if (n <= room)
        {
          fputs (p, f);
          break;
        }
      cut = room;
      while (cut > 0 && p[cut] != ' ')
        cut--;
      if (cut == 0)
        {
          cut = room;
          while (p[cut] && p[cut] != ' ')
            cut++;
        }
      fwrite (p, 1, cut, f);
      p += cut;
      while (*p == ' ')
        p++;
      if (*p)
        fprintf (f, "\n%*s", (int)indent, "");
      col = indent;
    }
  fputc ('\n', f);
}

static size_t
name_width (const struct ab_audit_report *r, int section)
{
  size_t w = 4;

  for (size_t i = 0; i < r->n_lines; i++)
    if (r->lines[i].section == section && strlen (r->lines[i].name) > w)
      w = strlen (r->lines[i].name);
  return w > 26 ? 26 : w;
}

static char
marker (unsigned flags)
{
  if (flags & AB_AUDIT_L_REFUSED)
    return 'x';
  if (flags & (AB_AUDIT_L_HOST | AB_AUDIT_L_WEAK))
    return '!';
  return ' ';
}

static void
print_line (const struct out *o, const struct ab_audit_line *l, size_t w)
{
  _cleanup_free_ char *text = NULL, *name = escape (l->name);
  size_t nl = strlen (name), col;
  char m = marker (l->flags);

  fprintf (o->f, " %s%c%s %s", m == ' ' ? "" : sgr (o, m == 'x' ? RED : YELLOW), m,
           m == ' ' ? "" : sgr (o, RESET), name);
  if (nl > w)
    {
      fprintf (o->f, "\n%*s", (int)w + 5, "");
      col = w + 5;
    }
  else
    {
      fprintf (o->f, "%*s", (int)(w - nl + 2), "");
      col = w + 5;
    }
  text = l->value ? xasprintf ("[%s] %s", l->value, l->mechanism) : xstrdup (l->mechanism);
  wrap (o->f, text, col, w + 5);
  if (l->note)
    {
      _cleanup_free_ char *n = xasprintf ("note: %s", l->note);
      fprintf (o->f, "%*s%s", (int)w + 5, "", sgr (o, DIM));
      wrap (o->f, n, w + 5, w + 11);
      fputs (sgr (o, RESET), o->f);
    }
}

static void
print_map (const struct out *o, const struct ab_audit_report *r)
{
  int n = 0;

  fprintf (o->f, "\n%sMechanisms, in the order agentbox applies them%s\n", sgr (o, BOLD), sgr (o, RESET));
  fprintf (o->f, "(! weakens the sandbox or is shared with the host; x agentbox refuses it)\n");
  for (int s = 0; s < AB_AUDIT_S__COUNT; s++)
    {
      size_t w = name_width (r, s);
      bool any = false;

      for (size_t i = 0; i < r->n_lines; i++)
        {
          if (r->lines[i].section != s)
            continue;
          if (!any)
            fprintf (o->f, "\n%s%2d %s%s  %s\n", sgr (o, BOLD), ++n, ab_audit_section_id (s), sgr (o, RESET),
                     ab_audit_section_title (s));
          any = true;
          print_line (o, &r->lines[i], w);
        }
    }
}

static void
print_finding (const struct out *o, const struct ab_audit_finding *f)
{
  _cleanup_free_ char *why = NULL, *at = NULL, *fix = NULL;
  const struct ab_audit_rule *rule = f->rule;

  fprintf (o->f, "\n %s%-6s%s %s%s%s  ", sgr (o, sev_color (f->severity)),
           ab_audit_severity_name (f->severity), sgr (o, RESET), sgr (o, BOLD), rule->id, sgr (o, RESET));
  wrap (o->f, rule->title, 9 + strlen (rule->id) + 2, 9);
  at = xasprintf ("at %s: %s", f->path, f->detail);
  fprintf (o->f, "%*s", 9, "");
  wrap (o->f, at, 9, 12);
  why = xasprintf ("why: %s", rule->why);
  fprintf (o->f, "%*s", 9, "");
  wrap (o->f, why, 9, 14);
  fix = xasprintf ("fix: %s", rule->fix);
  fprintf (o->f, "%*s", 9, "");
  wrap (o->f, fix, 9, 14);
}

static void
print_summary (const struct out *o, const struct ab_audit_report *r, int fail_on)
{
  int max = ab_audit_report_max_severity (r);

  fprintf (o->f, "\n%sFindings%s: %zu high, %zu medium, %zu low", sgr (o, BOLD), sgr (o, RESET),
           ab_audit_report_count (r, AB_AUDIT_HIGH), ab_audit_report_count (r, AB_AUDIT_MEDIUM),
           ab_audit_report_count (r, AB_AUDIT_LOW));
  if (fail_on > 0)
    fprintf (o->f, " (--fail-on %s: %s)", ab_audit_severity_name (fail_on),
             max >= fail_on ? "fails" : "passes");
  fputc ('\n', o->f);
}

static void
print_header (const struct out *o, const struct ab_audit_report *r)
{
  _cleanup_free_ char *src = escape (r->source);

  fprintf (o->f, "%sagentbox audit%s of %s %s\n", sgr (o, BOLD), sgr (o, RESET), r->kind, src);
  if (r->config_path)
    {
      fputs ("config: ", o->f);
      wrap (o->f, r->config_path, 8, 8);
    }
  if (r->accepted)
    fprintf (o->f, "agentbox accepts this config\n");
  else
    {
      fprintf (o->f, "%sagentbox refuses this config%s: ", sgr (o, RED), sgr (o, RESET));
      wrap (o->f, r->refusal ? r->refusal : "?", 30, 4);
    }
  if (r->live_status)
    {
      fputs ("live: ", o->f);
      wrap (o->f, r->live_status, 6, 6);
    }
}

void
ab_audit_render_text (FILE *f, const struct ab_audit_report *r, const struct ab_audit_render_opts *opts)
{
  struct out o = { .f = f, .color = opts && opts->color };

  print_header (&o, r);
  print_map (&o, r);
  print_summary (&o, r, opts ? opts->fail_on : 0);
  for (size_t i = 0; i < r->n_findings; i++)
    print_finding (&o, &r->findings[i]);
}

/* ---- diff -------------------------------------------------------------------- */

static void
print_side (const struct out *o, char sign, const struct ab_audit_line *l)
{
  _cleanup_free_ char *text = NULL;

  if (l == NULL)
    {
      fprintf (o->f, "    %s%c (not there)%s\n", sgr (o, sign == '-' ? RED : CYAN), sign, sgr (o, RESET));
      return;
    }
  text = l->value ? xasprintf ("[%s] %s", l->value, l->mechanism) : xstrdup (l->mechanism);
  fprintf (o->f, "    %s%c%s ", sgr (o, sign == '-' ? RED : CYAN), sign, sgr (o, RESET));
  wrap (o->f, text, 6, 6);
}

static void
print_only (const struct out *o, const char *what, const struct ab_audit_finding *const *v, size_t n)
{
  fprintf (o->f, "\n%sFindings only in %s%s (%zu)\n", sgr (o, BOLD), what, sgr (o, RESET), n);
  for (size_t i = 0; i < n; i++)
    {
      _cleanup_free_ char *t = xasprintf ("%s at %s: %s", v[i]->rule->title, v[i]->path, v[i]->detail);
      fprintf (o->f, "  %s%-6s%s %s  ", sgr (o, sev_color (v[i]->severity)),
               ab_audit_severity_name (v[i]->severity), sgr (o, RESET), v[i]->rule->id);
      wrap (o->f, t, 11 + strlen (v[i]->rule->id), 11);
    }
}

void
ab_audit_render_diff_text (FILE *f, const struct ab_audit_diff *d, const struct ab_audit_render_opts *opts)
{
  struct out o = { .f = f, .color = opts && opts->color };
  int last = -1;

  _cleanup_free_ char *sa = escape (d->a->source), *sb = escape (d->b->source);

  fprintf (f, "%sagentbox audit --diff%s\n  - %s %s\n  + %s %s\n", sgr (&o, BOLD), sgr (&o, RESET),
           d->a->kind, sa, d->b->kind, sb);
  fprintf (f, "\n%sMechanisms that differ%s (%zu)\n", sgr (&o, BOLD), sgr (&o, RESET), d->n_changes);
  for (size_t i = 0; i < d->n_changes; i++)
    {
      const struct ab_audit_change *c = &d->changes[i];
      _cleanup_free_ char *name = escape (c->name);
      if (c->section != last)
        fprintf (f, "\n %s%s%s\n", sgr (&o, BOLD), ab_audit_section_id (c->section), sgr (&o, RESET));
      last = c->section;
      fprintf (f, "  %s\n", name);
      print_side (&o, '-', c->a);
      print_side (&o, '+', c->b);
    }
  print_only (&o, "-", d->only_a, d->n_only_a);
  print_only (&o, "+", d->only_b, d->n_only_b);
}

/* ---- the catalogue ---------------------------------------------------------------- */

void
ab_audit_render_rules_text (FILE *f)
{
  size_t n;
  const struct ab_audit_rule *rules = ab_audit_rules (&n);

  for (size_t i = 0; i < n; i++)
    {
      fprintf (f, "%-15s %-6s ", rules[i].id, ab_audit_severity_name (rules[i].severity));
      wrap (f, rules[i].title, 23, 23);
    }
}
