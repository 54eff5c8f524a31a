/* Reading what to audit, and running the passes over it.
 *
 * A config is read the way create reads it (spec/bundle.c): a regular file
 * opened without blocking on a FIFO and without becoming our terminal, at
 * most AB_CONFIG_MAX_BYTES, then the same bounded parser.  Unlike create,
 * a config that parses but fails validation is still audited: another
 * runtime may run it, and the reviewer wants to know what it would do. */
#include "config.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "audit/audit-internal.h"
#include "runtime/util.h"
#include "spec/defaults.h"
#include "spec/spec.h"

int
ab_audit_read_config (const char *path, char **buf, size_t *len, ab_error_t *err)
{
  _cleanup_close_ int fd = -1;
  struct stat st;

  /* O_NONBLOCK: a FIFO must not block the open; O_NOCTTY: a terminal must
     not become ours.  Neither is read: only a regular file is. */
  fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    return ab_error_setc (err, AB_EC_CONFIG, errno, "open `%s`", path);
  if (fstat (fd, &st) < 0)
    return ab_error_setc (err, AB_EC_CONFIG, errno, "stat `%s`", path);
  if (!S_ISREG (st.st_mode))
    return ab_error_setc (err, AB_EC_CONFIG, 0, "`%s` is not a regular file", path);
  if (st.st_size > (off_t)AB_CONFIG_MAX_BYTES)
    return ab_error_setc (err, AB_EC_CONFIG, EFBIG, "`%s`: larger than %u bytes", path, AB_CONFIG_MAX_BYTES);
  /* The file may still grow after fstat: the read itself is bounded. */
  if (ab_read_fd (fd, AB_CONFIG_MAX_BYTES, buf, len, err) < 0)
    return ab_error_prefix (err, "`%s`", path);
  return 0;
}

void
ab_audit_spec (const struct ab_spec *s, const char *bundle_dir, struct ab_audit_report *r)
{
  struct ab_audit_ctx a = { .s = s, .l = s->linux_, .bundle_dir = bundle_dir, .r = r };

  ab_audit_facts_init (&a);
  ab_audit_map_host (&a);
  ab_audit_map_fs (&a);
  ab_audit_map_process (&a);
  ab_audit_rules_ns (&a);
  ab_audit_rules_fs (&a);
  ab_audit_rules_priv (&a);
  ab_audit_facts_free (&a.f);
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

int
ab_audit_config (const char *kind, const char *source, const char *bundle_dir, const char *config_path,
                 const char *buf, size_t len, struct ab_audit_report **out, ab_error_t *err)
{
  _cleanup_audit_report_ struct ab_audit_report *r = NULL;
  struct ab_spec *s = ab_spec_parse (buf, len, err);

  if (s == NULL)
    return -1;
  r = report_new (kind, source, config_path);
  ab_audit_spec (s, bundle_dir, r);
  ab_spec_free (s);
  ab_audit_report_sort (r);
  *out = ab_steal_ptr (&r);
  return 0;
}

int
ab_audit_profile (bool rootless, struct ab_audit_report **out, ab_error_t *err)
{
  /* As `agentbox spec [--rootless]` would write it for the caller. */
  struct ab_default_opts o = { .rootless = rootless, .uid = getuid (), .gid = getgid () };
  _cleanup_free_ char *json = NULL;
  size_t len;

  json = ab_spec_default_json (&o, &len);
  return ab_audit_config ("profile", rootless ? "hardened-rootless" : "hardened", NULL, NULL, json, len, out,
                          err);
}
