/* agentbox audit [--bundle DIR | --config FILE | ID] [--format text|json|sarif]
 *                [--fail-on low|medium|high] [--diff OTHER] [--rules]
 *
 * Only the command line: the engine is audit/ (audit/audit.h).  Exit status:
 * 0 when no finding is at or above --fail-on (default high), 1 otherwise, 2
 * for unreadable input (the message names the field path) or wrong use. */
#include "config.h"

#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/audit.h"
#include "cmd/cmd.h"
#include "base/log.h"
#include "base/util.h"
#include "spec/spec.h"

enum format
{
  F_TEXT,
  F_JSON,
  F_SARIF,
  F_MAN,
};

struct opts
{
  const char *bundle, *config, *id, *diff;
  int format;
  int fail_on;
  bool rules;
};

static const char usage_text[]
    = "Usage: agentbox audit [--bundle DIR | --config FILE | ID] [--format text|json|sarif]\n"
      "                      [--fail-on low|medium|high] [--diff OTHER] [--landlock-abi N]\n       agentbox audit --rules "
      "[--format text|json|man]\n\nShow what a config.json does to the kernel, mechanism by mechanism in "
      "the order agentbox\napplies it, and what is dangerous in it.  DIR defaults to the current directory; "
      "ID audits\na container of --root, and, while it runs, what the host sees applied to it.\n\n  "
      "--format F      text (default), json (docs/audit-schema.json) or sarif (2.1.0)\n  --fail-on S     "
      "exit 1 when a finding is at least S (default high)\n  --diff OTHER    compare with OTHER: a bundle "
      "directory, a config file, or the profile\n                  of agentbox spec: hardened (or "
      "hardened-rootless)\n  --landlock-abi N  fit the landlock rules to a kernel of ABI N (default: this one's)\n"
      "  --rules         list every rule\n\nExit status: 0 nothing at or above "
      "--fail-on, 1 a finding is, 2 unreadable input.\n";

static int
parse (int argc, char **argv, struct opts *o)
{
  static const struct option longopts[] = {
    { "bundle", required_argument, NULL, 'b' }, { "config", required_argument, NULL, 'c' },
    { "format", required_argument, NULL, 'f' }, { "fail-on", required_argument, NULL, 'F' },
    { "diff", required_argument, NULL, 'd' },   { "rules", no_argument, NULL, 'r' },
    { "landlock-abi", required_argument, NULL, 'L' },
    { "help", no_argument, NULL, 'h' },         { NULL, 0, NULL, 0 },
  };
  int c;

  o->format = F_TEXT;
  o->fail_on = AB_AUDIT_HIGH;
  while ((c = getopt_long (argc, argv, "b:h", longopts, NULL)) != -1)
    switch (c)
      {
      case 'b':
        o->bundle = optarg;
        break;
      case 'c':
        o->config = optarg;
        break;
      case 'd':
        o->diff = optarg;
        break;
      case 'r':
        o->rules = true;
        break;
      case 'f':
        if (strcmp (optarg, "text") == 0)
          o->format = F_TEXT;
        else if (strcmp (optarg, "json") == 0)
          o->format = F_JSON;
        else if (strcmp (optarg, "sarif") == 0)
          o->format = F_SARIF;
        else if (strcmp (optarg, "man") == 0)
          o->format = F_MAN;
        else
          return ab_cmd_usage_error ("audit", "--format: expected text, json or sarif, got `%s`", optarg);
        break;
      case 'F':
        o->fail_on = ab_audit_severity_from_name (optarg);
        if (o->fail_on < 0)
          return ab_cmd_usage_error ("audit", "--fail-on: expected low, medium or high, got `%s`", optarg);
        break;
      case 'L':
        {
          uint64_t abi;
          if (ab_parse_u64 (optarg, &abi) < 0 || abi > AB_LL_ABI_MAX)
            return ab_cmd_usage_error ("audit", "--landlock-abi: expected 0 to %d, got `%s`", AB_LL_ABI_MAX, optarg);
          ab_audit_set_landlock_abi ((int) abi);
          break;
        }
      case 'h':
        fputs (usage_text, stdout);
        return -1;
      default:
        return ab_cmd_usage_error ("audit", "unknown option `%s`", argv[optind - 1]);
      }
  if ((c = ab_cmd_positionals ("audit", argc, argv, 0, 1, "container ID")) != 0)
    return c;
  if (optind < argc)
    o->id = argv[optind];
  if ((o->bundle != NULL) + (o->config != NULL) + (o->id != NULL) > 1)
    return ab_cmd_usage_error ("audit", "give one of --bundle, --config and a container ID");
  if (o->format == F_MAN && !o->rules)
    return ab_cmd_usage_error ("audit", "--format man goes with --rules");
  if (o->format == F_SARIF && (o->diff || o->rules))
    return ab_cmd_usage_error ("audit", "--format sarif reports findings: not with --diff or --rules");
  return 0;
}

static int
load_bundle (const char *dir, struct ab_audit_report **out, ab_error_t *err)
{
  _cleanup_free_ char *canon = realpath (dir, NULL), *path = NULL, *buf = NULL;
  size_t len;

  if (canon == NULL)
    return ab_error_setc (err, AB_EC_CONFIG, errno, "bundle `%s`", dir);
  path = xasprintf ("%s/config.json", strcmp (canon, "/") == 0 ? "" : canon);
  if (ab_config_read_at (AT_FDCWD, path, "", &buf, &len, err) < 0)
    return -1;
  return ab_audit_config ("bundle", canon, canon, path, buf, len, out, err);
}

static int
load_config (const char *file, struct ab_audit_report **out, ab_error_t *err)
{
  _cleanup_free_ char *canon = realpath (file, NULL), *dir = NULL, *buf = NULL;
  size_t len;

  if (canon == NULL)
    return ab_error_setc (err, AB_EC_CONFIG, errno, "config `%s`", file);
  /* Relative paths of the config (root.path, bind sources) are taken from
     its directory, as if it were the bundle's config.json. */
  dir = xstrdup (canon);
  if (ab_config_read_at (AT_FDCWD, canon, "", &buf, &len, err) < 0)
    return -1;
  return ab_audit_config ("config", canon, dirname (dir), canon, buf, len, out, err);
}

static int
load_other (const char *other, struct ab_audit_report **out, ab_error_t *err)
{
  struct stat st;

  if (strcmp (other, "hardened") == 0 || strcmp (other, "hardened-rootless") == 0)
    return ab_audit_profile (strcmp (other, "hardened-rootless") == 0, out, err);
  if (stat (other, &st) == 0 && S_ISDIR (st.st_mode))
    return load_bundle (other, out, err);
  return load_config (other, out, err);
}

static bool
use_color (void)
{
  const char *nc = getenv ("NO_COLOR"), *term = getenv ("TERM");

  return isatty (STDOUT_FILENO) && (nc == NULL || nc[0] == '\0') && !(term && strcmp (term, "dumb") == 0);
}

static int
print_doc (char *doc)
{
  fputs (doc, stdout);
  free (doc);
  return 0;
}

static int
list_rules (const struct opts *o)
{
  if (o->format == F_JSON)
    print_doc (ab_audit_render_rules_json ());
  else if (o->format == F_MAN)
    ab_audit_render_rules_man (stdout);
  else
    ab_audit_render_rules_text (stdout);
  return AB_EXIT_OK;
}

/* Input errors are exit 2: the message names the file or the JSON path. */
static int
input_error (const ab_error_t *err)
{
  ab_log_error (err);
  return AB_EXIT_USAGE;
}

int
ab_cmd_audit (struct ab_global *g, int argc, char **argv)
{
  _cleanup_audit_report_ struct ab_audit_report *r = NULL;
  _cleanup_audit_report_ struct ab_audit_report *other = NULL;
  struct opts o = { 0 };
  struct ab_audit_render_opts ro;
  ab_error_t err = { 0 };
  int rc = parse (argc, argv, &o);

  if (rc != 0)
    return rc < 0 ? AB_EXIT_OK : rc;
  if (o.rules)
    return list_rules (&o);
  /* A config is judged as create would run it for this user: rootless,
     what this host cannot enforce is reported (AB-ROOTLESS-*). */
  ab_audit_set_rootless (g->rootless);
  if (o.id && g->root == NULL)
    rc = ab_error_setc (&err, AB_EC_USAGE, 0,
                        "audit %s: no state directory: XDG_RUNTIME_DIR is not set; give one with --root DIR", o.id);
  else if (o.id)
    rc = ab_audit_container (g->root, o.id, &r, &err);
  else if (o.config)
    rc = load_config (o.config, &r, &err);
  else
    rc = load_bundle (o.bundle ? o.bundle : ".", &r, &err);
  if (rc < 0 || (o.diff && load_other (o.diff, &other, &err) < 0))
    return input_error (&err);
  ro = (struct ab_audit_render_opts){ .color = use_color (), .fail_on = o.fail_on };
  if (other)
    {
      struct ab_audit_diff *d = ab_audit_diff (r, other);
      if (o.format == F_JSON)
        print_doc (ab_audit_render_diff_json (d, &ro));
      else
        ab_audit_render_diff_text (stdout, d, &ro);
      ab_audit_diff_free (d);
    }
  else if (o.format == F_JSON)
    print_doc (ab_audit_render_json (r, &ro));
  else if (o.format == F_SARIF)
    print_doc (ab_audit_render_sarif (r, &ro));
  else
    ab_audit_render_text (stdout, r, &ro);
  if (fflush (stdout) != 0)
    {
      ab_error_set (&err, errno, "audit: write the report");
      return ab_cmd_fail (&err);
    }
  return ab_audit_report_max_severity (r) >= o.fail_on ? AB_EXIT_FAILURE : AB_EXIT_OK;
}
