/* The report as SARIF 2.1.0 (OASIS), for code-scanning tools: one run whose
 * tool.driver.rules is the whole catalogue, one result per finding located
 * in config.json (physical: the file; logical: the JSON path).  Severities
 * map to levels: high -> error, medium -> warning, low -> note. */
#include "config.h"

#include <string.h>

#include "audit/audit-internal.h"
#include "base/util.h"
#include "base/gen.h"

#define SARIF_SCHEMA                                                                                         \
  "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

static const char *
level (int sev)
{
  return sev == AB_AUDIT_HIGH ? "error" : sev == AB_AUDIT_MEDIUM ? "warning" : "note";
}

static void
gen_text (struct ab_gen *g, const char *key, const char *text)
{
  ab_gen_key (g, key);
  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "text", text);
  ab_gen_obj_close (g);
}

/* file:// URI of an absolute path (RFC 8089), unreserved characters and '/'
   kept, everything else percent-encoded. */
static char *
file_uri (const char *path)
{
  static const char hex[] = "0123456789ABCDEF";
  char *out = xmalloc (strlen (path) * 3 + 8);
  size_t o = 0;

  memcpy (out, "file://", 7);
  o = 7;
  for (const unsigned char *p = (const unsigned char *)path; *p; p++)
    {
      if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')
          || strchr ("-._~/", *p))
        out[o++] = (char)*p;
      else
        {
          out[o++] = '%';
          out[o++] = hex[*p >> 4];
          out[o++] = hex[*p & 15];
        }
    }
  out[o] = '\0';
  return out;
}

static void
gen_rule (struct ab_gen *g, const struct ab_audit_rule *r)
{
  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "id", r->id);
  gen_text (g, "shortDescription", r->title);
  gen_text (g, "fullDescription", r->why);
  {
    _cleanup_free_ char *help = xasprintf ("%s Fix: %s", r->why, r->fix);
    gen_text (g, "help", help);
  }
  ab_gen_key (g, "defaultConfiguration");
  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "level", level (r->severity));
  ab_gen_obj_close (g);
  ab_gen_key (g, "properties");
  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "severity", ab_audit_severity_name (r->severity));
  ab_gen_key (g, "tags");
  ab_gen_arr_open (g);
  ab_gen_str (g, "security");
  for (const char *p = r->cve; p && *p;)
    {
      size_t len = strcspn (p, ",");
      _cleanup_free_ char *one = xstrndup (p, len);
      ab_gen_str (g, one);
      p += len;
      while (*p == ',' || *p == ' ')
        p++;
    }
  ab_gen_arr_close (g);
  ab_gen_obj_close (g);
  ab_gen_obj_close (g);
}

static size_t
rule_index (const struct ab_audit_rule *r)
{
  size_t n;
  const struct ab_audit_rule *all = ab_audit_rules (&n);

  return (size_t)(r - all);
}

static void
gen_result (struct ab_gen *g, const struct ab_audit_finding *f, const char *uri)
{
  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "ruleId", f->rule->id);
  ab_gen_kv_u64 (g, "ruleIndex", rule_index (f->rule));
  ab_gen_kv_str (g, "level", level (f->severity));
  {
    _cleanup_free_ char *msg = xasprintf ("%s: %s", f->rule->title, f->detail);
    gen_text (g, "message", msg);
  }
  ab_gen_key (g, "locations");
  ab_gen_arr_open (g);
  ab_gen_obj_open (g);
  if (uri)
    {
      ab_gen_key (g, "physicalLocation");
      ab_gen_obj_open (g);
      ab_gen_key (g, "artifactLocation");
      ab_gen_obj_open (g);
      ab_gen_kv_str (g, "uri", uri);
      ab_gen_kv_u64 (g, "index", 0);
      ab_gen_obj_close (g);
      ab_gen_obj_close (g);
    }
  ab_gen_key (g, "logicalLocations");
  ab_gen_arr_open (g);
  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "fullyQualifiedName", f->path);
  ab_gen_kv_str (g, "kind", "member");
  ab_gen_obj_close (g);
  ab_gen_arr_close (g);
  ab_gen_obj_close (g);
  ab_gen_arr_close (g);
  ab_gen_key (g, "properties");
  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "severity", ab_audit_severity_name (f->severity));
  ab_gen_obj_close (g);
  ab_gen_obj_close (g);
}

char *
ab_audit_render_sarif (const struct ab_audit_report *r, const struct ab_audit_render_opts *o)
{
  _cleanup_gen_ struct ab_gen *g = ab_gen_new (true);
  _cleanup_free_ char *uri = r->config_path ? file_uri (r->config_path) : NULL;
  size_t n;
  const struct ab_audit_rule *rules = ab_audit_rules (&n);

  (void)o;
  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "$schema", SARIF_SCHEMA);
  ab_gen_kv_str (g, "version", "2.1.0");
  ab_gen_key (g, "runs");
  ab_gen_arr_open (g);
  ab_gen_obj_open (g);
  ab_gen_key (g, "tool");
  ab_gen_obj_open (g);
  ab_gen_key (g, "driver");
  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "name", PACKAGE_NAME);
  ab_gen_kv_str (g, "version", PACKAGE_VERSION);
  ab_gen_key (g, "rules");
  ab_gen_arr_open (g);
  for (size_t i = 0; i < n; i++)
    gen_rule (g, &rules[i]);
  ab_gen_arr_close (g);
  ab_gen_obj_close (g);
  ab_gen_obj_close (g);
  if (uri)
    {
      ab_gen_key (g, "artifacts");
      ab_gen_arr_open (g);
      ab_gen_obj_open (g);
      ab_gen_key (g, "location");
      ab_gen_obj_open (g);
      ab_gen_kv_str (g, "uri", uri);
      ab_gen_obj_close (g);
      ab_gen_obj_close (g);
      ab_gen_arr_close (g);
    }
  ab_gen_key (g, "results");
  ab_gen_arr_open (g);
  for (size_t i = 0; i < r->n_findings; i++)
    gen_result (g, &r->findings[i], uri);
  ab_gen_arr_close (g);
  ab_gen_obj_close (g);
  ab_gen_arr_close (g);
  ab_gen_obj_close (g);
  return ab_audit_gen_document (g);
}
