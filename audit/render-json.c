/* The report as JSON (docs/audit-schema.json): the same content as the text,
 * every member always present (null when absent), members in a fixed order
 * so that outputs are byte-stable. */
#include "config.h"

#include <string.h>

#include "audit/audit-internal.h"
#include "base/util.h"
#include "base/gen.h"

#define SCHEMA_VERSION 1

static void
kv_str_or_null (struct ab_gen *g, const char *key, const char *v)
{
  ab_gen_key (g, key);
  if (v)
    ab_gen_str (g, v);
  else
    ab_gen_null (g);
}

static void
gen_tool (struct ab_gen *g)
{
  ab_gen_kv_u64 (g, "schemaVersion", SCHEMA_VERSION);
  ab_gen_key (g, "tool");
  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "name", PACKAGE_NAME);
  ab_gen_kv_str (g, "version", PACKAGE_VERSION);
  ab_gen_kv_str (g, "ociVersion", AB_OCI_VERSION);
  ab_gen_obj_close (g);
}

/* "CVE-a, CVE-b" as an array. */
static void
gen_cves (struct ab_gen *g, const char *cve)
{
  ab_gen_key (g, "cve");
  ab_gen_arr_open (g);
  for (const char *p = cve; p && *p;)
    {
      size_t n = strcspn (p, ",");
      _cleanup_free_ char *one = xstrndup (p, n);
      ab_gen_str (g, one);
      p += n;
      while (*p == ',' || *p == ' ')
        p++;
    }
  ab_gen_arr_close (g);
}

static void
gen_line (struct ab_gen *g, const struct ab_audit_line *l)
{
  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "name", l->name);
  kv_str_or_null (g, "path", l->path);
  kv_str_or_null (g, "value", l->value);
  ab_gen_kv_str (g, "mechanism", l->mechanism);
  kv_str_or_null (g, "note", l->note);
  ab_gen_kv_bool (g, "hostShared", (l->flags & AB_AUDIT_L_HOST) != 0);
  ab_gen_kv_bool (g, "weakens", (l->flags & AB_AUDIT_L_WEAK) != 0);
  ab_gen_kv_bool (g, "refused", (l->flags & AB_AUDIT_L_REFUSED) != 0);
  ab_gen_obj_close (g);
}

static void
gen_rule_fields (struct ab_gen *g, const struct ab_audit_rule *r)
{
  ab_gen_kv_str (g, "title", r->title);
  ab_gen_kv_str (g, "why", r->why);
  ab_gen_kv_str (g, "fix", r->fix);
  gen_cves (g, r->cve);
}

static void
gen_finding (struct ab_gen *g, const struct ab_audit_finding *f)
{
  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "id", f->rule->id);
  ab_gen_kv_str (g, "severity", ab_audit_severity_name (f->severity));
  ab_gen_kv_str (g, "path", f->path);
  ab_gen_kv_str (g, "detail", f->detail);
  gen_rule_fields (g, f->rule);
  ab_gen_obj_close (g);
}

static void
gen_mechanisms (struct ab_gen *g, const struct ab_audit_report *r)
{
  ab_gen_key (g, "mechanisms");
  ab_gen_arr_open (g);
  for (int s = 0; s < AB_AUDIT_S__COUNT; s++)
    {
      bool any = false;
      for (size_t i = 0; i < r->n_lines; i++)
        {
          if (r->lines[i].section != s)
            continue;
          if (!any)
            {
              ab_gen_obj_open (g);
              ab_gen_kv_str (g, "section", ab_audit_section_id (s));
              ab_gen_kv_str (g, "title", ab_audit_section_title (s));
              ab_gen_key (g, "items");
              ab_gen_arr_open (g);
            }
          any = true;
          gen_line (g, &r->lines[i]);
        }
      if (any)
        {
          ab_gen_arr_close (g);
          ab_gen_obj_close (g);
        }
    }
  ab_gen_arr_close (g);
}

static void
gen_summary (struct ab_gen *g, const struct ab_audit_report *r, int fail_on)
{
  int max = ab_audit_report_max_severity (r);

  ab_gen_key (g, "summary");
  ab_gen_obj_open (g);
  ab_gen_kv_u64 (g, "high", ab_audit_report_count (r, AB_AUDIT_HIGH));
  ab_gen_kv_u64 (g, "medium", ab_audit_report_count (r, AB_AUDIT_MEDIUM));
  ab_gen_kv_u64 (g, "low", ab_audit_report_count (r, AB_AUDIT_LOW));
  kv_str_or_null (g, "maxSeverity", max ? ab_audit_severity_name (max) : NULL);
  ab_gen_kv_str (g, "failOn", ab_audit_severity_name (fail_on));
  ab_gen_kv_bool (g, "failed", max >= fail_on);
  ab_gen_obj_close (g);
}

static void
gen_report_body (struct ab_gen *g, const struct ab_audit_report *r, int fail_on)
{
  ab_gen_kv_str (g, "kind", r->kind);
  ab_gen_kv_str (g, "source", r->source);
  kv_str_or_null (g, "configPath", r->config_path);
  ab_gen_kv_bool (g, "accepted", r->accepted);
  kv_str_or_null (g, "refusal", r->refusal);
  ab_gen_kv_bool (g, "live", r->live);
  kv_str_or_null (g, "liveStatus", r->live_status);
  gen_summary (g, r, fail_on);
  gen_mechanisms (g, r);
  ab_gen_key (g, "findings");
  ab_gen_arr_open (g);
  for (size_t i = 0; i < r->n_findings; i++)
    gen_finding (g, &r->findings[i]);
  ab_gen_arr_close (g);
}

/* The document with exactly one trailing newline (yajl's beautifier may
   have written it already). */
char *
ab_audit_gen_document (struct ab_gen *g)
{
  size_t n;
  const char *buf = ab_gen_buf (g, &n);

  return ab_gen_steal (g, n == 0 || buf[n - 1] != '\n', NULL);
}

static int
fail_on_of (const struct ab_audit_render_opts *o)
{
  return o && o->fail_on > 0 ? o->fail_on : AB_AUDIT_HIGH;
}

char *
ab_audit_render_json (const struct ab_audit_report *r, const struct ab_audit_render_opts *o)
{
  _cleanup_gen_ struct ab_gen *g = ab_gen_new (true);

  ab_gen_obj_open (g);
  gen_tool (g);
  gen_report_body (g, r, fail_on_of (o));
  ab_gen_obj_close (g);
  return ab_audit_gen_document (g);
}

static void
gen_side (struct ab_gen *g, const char *key, const struct ab_audit_report *r)
{
  ab_gen_key (g, key);
  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "kind", r->kind);
  ab_gen_kv_str (g, "source", r->source);
  ab_gen_kv_u64 (g, "high", ab_audit_report_count (r, AB_AUDIT_HIGH));
  ab_gen_kv_u64 (g, "medium", ab_audit_report_count (r, AB_AUDIT_MEDIUM));
  ab_gen_kv_u64 (g, "low", ab_audit_report_count (r, AB_AUDIT_LOW));
  ab_gen_obj_close (g);
}

static void
gen_findings (struct ab_gen *g, const char *key, const struct ab_audit_finding *const *v, size_t n)
{
  ab_gen_key (g, key);
  ab_gen_arr_open (g);
  for (size_t i = 0; i < n; i++)
    gen_finding (g, v[i]);
  ab_gen_arr_close (g);
}

char *
ab_audit_render_diff_json (const struct ab_audit_diff *d, const struct ab_audit_render_opts *o)
{
  _cleanup_gen_ struct ab_gen *g = ab_gen_new (true);

  (void)o;
  ab_gen_obj_open (g);
  gen_tool (g);
  ab_gen_key (g, "diff");
  ab_gen_obj_open (g);
  gen_side (g, "a", d->a);
  gen_side (g, "b", d->b);
  ab_gen_key (g, "changes");
  ab_gen_arr_open (g);
  for (size_t i = 0; i < d->n_changes; i++)
    {
      const struct ab_audit_change *c = &d->changes[i];
      ab_gen_obj_open (g);
      ab_gen_kv_str (g, "section", ab_audit_section_id (c->section));
      ab_gen_kv_str (g, "name", c->name);
      ab_gen_key (g, "a");
      if (c->a)
        gen_line (g, c->a);
      else
        ab_gen_null (g);
      ab_gen_key (g, "b");
      if (c->b)
        gen_line (g, c->b);
      else
        ab_gen_null (g);
      ab_gen_obj_close (g);
    }
  ab_gen_arr_close (g);
  gen_findings (g, "onlyInA", d->only_a, d->n_only_a);
  gen_findings (g, "onlyInB", d->only_b, d->n_only_b);
  ab_gen_obj_close (g);
  ab_gen_obj_close (g);
  return ab_audit_gen_document (g);
}

char *
ab_audit_render_rules_json (void)
{
  _cleanup_gen_ struct ab_gen *g = ab_gen_new (true);
  size_t n;
  const struct ab_audit_rule *rules = ab_audit_rules (&n);

  ab_gen_obj_open (g);
  gen_tool (g);
  ab_gen_key (g, "rules");
  ab_gen_arr_open (g);
  for (size_t i = 0; i < n; i++)
    {
      ab_gen_obj_open (g);
      ab_gen_kv_str (g, "id", rules[i].id);
      ab_gen_kv_str (g, "severity", ab_audit_severity_name (rules[i].severity));
      gen_rule_fields (g, &rules[i]);
      ab_gen_obj_close (g);
    }
  ab_gen_arr_close (g);
  ab_gen_obj_close (g);
  return ab_audit_gen_document (g);
}
