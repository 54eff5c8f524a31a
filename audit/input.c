/* Reading what to audit, and running the passes over it.
 *
 * A config is read the way create reads it (ab_config_read_at of
 * spec/bundle.c), then goes through the same bounded parser.  Unlike create,
 * a config that parses but fails validation is still audited: another
 * runtime may run it, and the reviewer wants to know what it would do. */
#include "config.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "audit/audit-internal.h"
#include "base/util.h"
#include "spec/defaults.h"
#include "spec/spec.h"

/* --rootless of the command line (-1 auto): the plan is create's as this
   user would run it. */
static int audit_rootless = -1;

void
ab_audit_set_rootless (int rootless)
{
  audit_rootless = rootless;
}

/* Run every pass over a parsed spec; the report gets the lines and findings. */
static void
ab_audit_spec (const struct ab_spec *s, const char *bundle_dir, int rootless, struct ab_audit_report *r)
{
  struct ab_audit_ctx a = { .s = s, .l = s->linux_, .bundle_dir = bundle_dir, .r = r, .rootless = rootless };

  ab_audit_passes (&a);
  ab_audit_facts_free (&a.f);
}

void
ab_audit_passes (struct ab_audit_ctx *a)
{
  ab_audit_facts_init (a);
  ab_audit_map_host (a);
  ab_audit_map_fs (a);
  ab_audit_map_process (a);
  ab_audit_map_landlock (a);
  ab_audit_rules_ns (a);
  ab_audit_rules_fs (a);
  ab_audit_rules_priv (a);
  ab_audit_rules_rootless (a);
}

static struct ab_audit_report *
report_new (const char *kind, const char *source, const char *config_path)
{
  struct ab_audit_report *r = xzalloc (sizeof *r);

  r->kind = xstrdup (kind);
  r->source = xstrdup (source);
  r->config_path = config_path ? xstrdup (config_path) : NULL;
  return r;
}

static int
audit_config (const char *kind, const char *source, const char *bundle_dir, const char *config_path,
              const char *buf, size_t len, int rootless, struct ab_audit_report **out, ab_error_t *err)
{
  _cleanup_audit_report_ struct ab_audit_report *r = NULL;
  struct ab_spec *s = ab_spec_parse (buf, len, err);

  if (s == NULL)
    return -1;
  r = report_new (kind, source, config_path);
  ab_audit_spec (s, bundle_dir, rootless, r);
  ab_spec_free (s);
  ab_audit_report_sort (r);
  *out = ab_steal_ptr (&r);
  return 0;
}

int
ab_audit_config (const char *kind, const char *source, const char *bundle_dir, const char *config_path,
                 const char *buf, size_t len, struct ab_audit_report **out, ab_error_t *err)
{
  return audit_config (kind, source, bundle_dir, config_path, buf, len, audit_rootless, out, err);
}

int
ab_audit_profile (bool rootless, struct ab_audit_report **out, ab_error_t *err)
{
  /* As `agentbox spec [--rootless]` would write it for the caller. */
  struct ab_default_opts o = { .rootless = rootless, .uid = getuid (), .gid = getgid () };
  _cleanup_free_ char *json = NULL;
  size_t len;

  json = ab_spec_default_json (&o, &len);
  return audit_config ("profile", rootless ? "hardened-rootless" : "hardened", NULL, NULL, json, len,
                       rootless ? 1 : audit_rootless, out, err);
}
