/* Egress policy: the name matcher, the annotation grammar and its error
   messages, deny over allow, narrowing by an admin baseline. */
#include "config.h"

#include <fcntl.h>
#include <sys/socket.h>

#include "netns/egress-internal.h"
#include "tests/unit/tap.h"


/* The annotations' policy, narrowed by a baseline (NULL: none), as the
   plan makes the effective one (runtime/plan/plan.c). */
static int
policy_parse (const struct ab_kvlist *annotations, const struct ab_egress_policy *baseline,
              struct ab_egress_policy *out, ab_error_t *err)
{
  struct ab_egress_policy run = { 0 };
  int r = ab_egress_policy_parse (annotations, &run, err);

  memset (out, 0, sizeof *out);
  if (r == 0)
    r = ab_egress_policy_narrow (baseline, &run, out, err);
  ab_egress_policy_free (&run);
  return r;
}

static struct ab_kv kv[3];
static struct ab_kvlist annots;

static const struct ab_kvlist *
mk (const char *allow, const char *deny, const char *pins)
{
  annots.n = 0;
  annots.v = kv;
  if (allow)
    kv[annots.n++] = (struct ab_kv){ (char *)AB_ANNOT_NET_ALLOW_DOMAINS, (char *)allow };
  if (deny)
    kv[annots.n++] = (struct ab_kv){ (char *)AB_ANNOT_NET_DENY_DOMAINS, (char *)deny };
  if (pins)
    kv[annots.n++] = (struct ab_kv){ (char *)AB_ANNOT_NET_PINS, (char *)pins };
  return &annots;
}

static const char *
parse_err (const char *allow, const char *deny, const char *pins)
{
  static ab_error_t err;
  struct ab_egress_policy p;

  memset (&err, 0, sizeof err);
  if (policy_parse (mk (allow, deny, pins), NULL, &p, &err) == 0)
    {
      ab_egress_policy_free (&p);
      return NULL;
    }
  return err.msg;
}

static const char *
decide (const struct ab_egress_policy *p, const char *name, uint16_t port)
{
  static char rule[300];
  bool a = ab_egress_policy_decide (p, name, port, rule, sizeof rule);
  static char out[320];
  snprintf (out, sizeof out, "%s %s", a ? "allow" : "deny", rule);
  return out;
}

static void
test_names (void)
{
  char out[AB_EGRESS_NAME_MAX + 1];
  char big[300];

  ok (ab_egress_name_normalize ("PyPI.Org.", 9, out) == 0 && strcmp (out, "pypi.org") == 0,
      "names are lower-cased and one trailing dot is dropped");
  ok (ab_egress_name_normalize ("a..b", 4, out) < 0, "an empty label is refused");
  ok (ab_egress_name_normalize ("-a.b", 4, out) < 0 && ab_egress_name_normalize ("a-.b", 4, out) < 0,
      "a label may not start or end with '-'");
  ok (ab_egress_name_normalize ("a b.c", 5, out) < 0 && ab_egress_name_normalize ("a\0b.c", 5, out) < 0,
      "space and NUL are refused in names");
  ok (ab_egress_name_normalize ("2130706433", 10, out) < 0 && ab_egress_name_normalize ("0x7f.1", 6, out) < 0
          && ab_egress_name_normalize ("127.1", 5, out) < 0 && ab_egress_name_normalize ("a.123", 5, out) < 0,
      "numeric forms the resolver would read as an address are not names");
  memset (big, 'a', sizeof big);
  ok (ab_egress_name_normalize (big, 64, out) < 0, "a 64-byte label is refused");
  for (int i = 63; i < 300; i += 64)
    big[i] = '.';
  ok (ab_egress_name_normalize (big, 254, out) < 0, "a 254-byte name is refused");
  ok (ab_egress_name_normalize (big, 253, out) == 0 && strlen (out) == 253, "253 bytes is the limit");
  ok (ab_egress_name_normalize ("_dmarc.example.com", 18, out) == 0, "underscores are allowed");
}

static void
test_matcher (void)
{
  struct ab_egress_policy p;
  ab_error_t err = { 0 };

  ok (policy_parse (mk ("*.example.com,exact.test", NULL, NULL), NULL, &p, &err) == 0, "parse %s",
      err.msg);
  is_str (decide (&p, "a.example.com", 443), "allow allow:*.example.com",
          "*.example.com matches a.example.com");
  is_str (decide (&p, "a.b.example.com", 80), "allow allow:*.example.com", "and a.b.example.com");
  is_str (decide (&p, "example.com", 443), "deny default-deny", "but not example.com itself");
  is_str (decide (&p, "badexample.com", 443), "deny default-deny", "nor badexample.com (label boundary)");
  is_str (decide (&p, "exact.test", 443), "allow allow:exact.test", "exact names match");
  is_str (decide (&p, "a.exact.test", 443), "deny default-deny", "an exact name does not cover its children");
  is_str (decide (&p, "exact.test", 8080), "deny port-not-allowed", "default ports are 80 and 443 only");
  is_str (decide (&p, "exact.test", 0), "allow allow:exact.test", "port 0 is the DNS question");
  ab_egress_policy_free (&p);
}

static void
test_grammar (void)
{
  struct ab_egress_policy p;
  ab_error_t err = { 0 };
  uint16_t ports[8];

  is_str (parse_err ("*.", NULL, NULL),
          "annotations.dev.agentbox.net.allow-domains: entry \"*.\": empty name",
          "an empty wildcard names the annotation and the entry");
  is_str (parse_err ("a.test,,b.test", NULL, NULL), "annotations.dev.agentbox.net.allow-domains: empty entry",
          "a stray comma is an error");
  is_str (parse_err ("a.test:0", NULL, NULL),
          "annotations.dev.agentbox.net.allow-domains: entry \"a.test:0\": invalid port",
          "port 0 is refused");
  is_str (parse_err ("a.test:65536", NULL, NULL),
          "annotations.dev.agentbox.net.allow-domains: entry \"a.test:65536\": invalid port",
          "port 65536 is refused");
  is_str (parse_err ("*.*.test", NULL, NULL),
          "annotations.dev.agentbox.net.allow-domains: entry \"*.*.test\": invalid name",
          "only a leading wildcard label");
  is_str (parse_err ("2001:db8::1", NULL, NULL),
          "annotations.dev.agentbox.net.allow-domains: entry \"2001:db8::1\": invalid name",
          "an unbracketed IPv6 literal is not a host");
  is_str (parse_err ("a.test", "x..test", NULL),
          "annotations.dev.agentbox.net.deny-domains: entry \"x..test\": invalid name",
          "deny errors name their annotation");
  is_str (parse_err ("a.test", NULL, "a.test"),
          "annotations.dev.agentbox.net.pins: entry \"a.test\": expected NAME=ADDRESS", "a pin needs '='");
  is_str (parse_err ("a.test", NULL, "a.test=300.1.1.1"),
          "annotations.dev.agentbox.net.pins: entry \"a.test=300.1.1.1\": invalid address",
          "a pin's address is checked");
  is_str (parse_err ("a.test", NULL, "*.a.test=192.0.2.1"),
          "annotations.dev.agentbox.net.pins: entry \"*.a.test=192.0.2.1\": invalid name",
          "pins are for exact names");
  ok (parse_err ("a.test", NULL, "a.test=010.0.0.1") != NULL, "a dotted quad with a leading zero is refused");

  ok (policy_parse (mk (" a.test:443:8443 , [2001:db8::1]:443, 192.0.2.1 ", "b.test",
                                  "a.test=192.0.2.7,a.test=[2001:db8::7]"),
                              NULL, &p, &err)
          == 0,
      "entries are trimmed; ports, literals and pins parse: %s", err.msg);
  is_int (p.n_allow, 3, "three allow entries");
  is_int (p.allow[0].n_ports, 2, "explicit ports replace the defaults");
  is_str (p.allow[1].pattern, "[2001:db8::1]", "IPv6 literal pattern is canonical and bracketed");
  is_int (p.n_pins, 2, "two pins for one name");
  is_str (decide (&p, "[2001:db8::1]", 443), "allow allow:[2001:db8::1]", "a listed IPv6 literal is allowed");
  is_str (decide (&p, "192.0.2.1", 80), "allow allow:192.0.2.1", "a listed IPv4 literal is allowed");
  is_str (decide (&p, "192.0.2.2", 80), "deny default-deny", "another literal is not");
  is_int (ab_egress_policy_ports (&p, ports, 8), 3, "redirect ports: 80, 443, 8443");
  ok (ports[0] == 80 && ports[1] == 443 && ports[2] == 8443, "sorted without duplicates");
  ab_egress_policy_free (&p);

  ok (policy_parse (mk (NULL, NULL, NULL), NULL, &p, &err) == 0 && !p.enabled,
      "no annotation and no baseline: the policy is disabled");
  is_str (decide (&p, "a.test", 443), "deny default-deny", "a disabled policy allows nothing");
  ab_egress_policy_free (&p);
  ok (policy_parse (mk ("", NULL, NULL), NULL, &p, &err) == 0 && p.enabled && p.n_allow == 0,
      "an empty allow list is enabled and allows nothing");
  ab_egress_policy_free (&p);
}

static void
test_deny (void)
{
  struct ab_egress_policy p;
  ab_error_t err = { 0 };

  ok (policy_parse (
          mk ("*.example.com", "bad.example.com,*.evil.example.com,port.example.com:8443", NULL), NULL, &p,
          &err)
          == 0,
      "parse deny list");
  is_str (decide (&p, "bad.example.com", 443), "deny deny:bad.example.com",
          "deny wins over an allow wildcard");
  is_str (decide (&p, "bad.example.com", 0), "deny deny:bad.example.com", "a portless deny also stops DNS");
  is_str (decide (&p, "x.evil.example.com", 443), "deny deny:*.evil.example.com", "deny wildcards work");
  is_str (decide (&p, "port.example.com", 0), "allow allow:*.example.com",
          "a deny with ports does not stop DNS for the name");
  is_str (decide (&p, "port.example.com", 443), "allow allow:*.example.com", "nor other ports");
  ab_egress_policy_free (&p);
}

static bool
has_pin (const struct ab_egress_policy *p, const char *name)
{
  for (size_t i = 0; i < p->n_pins; i++)
    if (strcmp (p->pins[i].name, name) == 0)
      return true;
  return false;
}

static void
test_narrowing (void)
{
  struct ab_egress_policy base, p;
  ab_error_t err = { 0 };

  ok (policy_parse (
          mk ("*.github.com,pypi.org:443,files.test", "bad.github.com", "pypi.org=192.0.2.1"), NULL, &base,
          &err)
          == 0,
      "baseline parses");
  ok (policy_parse (
          mk ("api.github.com,*.x.github.com,pypi.org,other.test", "files.test", "api.github.com=192.0.2.9"),
          &base, &p, &err)
          == 0,
      "run narrows the baseline: %s", err.msg);
  is_str (decide (&p, "api.github.com", 443), "allow allow:api.github.com",
          "exact ∩ wildcard = the exact name");
  is_str (decide (&p, "www.github.com", 443), "deny default-deny", "names the run did not list are dropped");
  is_str (decide (&p, "a.x.github.com", 443), "allow allow:*.x.github.com",
          "wildcard ∩ wildcard = the deeper");
  is_str (decide (&p, "pypi.org", 443), "allow allow:pypi.org", "pypi.org:443 survives");
  is_str (decide (&p, "pypi.org", 80), "deny port-not-allowed", "ports are intersected too");
  is_str (decide (&p, "other.test", 443), "deny default-deny", "the run cannot add a name");
  is_str (decide (&p, "files.test", 443), "deny deny:files.test", "the run can add a deny");
  is_str (decide (&p, "bad.github.com", 443), "deny deny:bad.github.com", "the baseline's deny stays");
  ok (has_pin (&p, "pypi.org") && has_pin (&p, "api.github.com"),
      "baseline pins stay; run pins for names the baseline allows are added");
  ab_egress_policy_free (&p);

  ok (policy_parse (mk (NULL, NULL, NULL), &base, &p, &err) == 0, "no run annotations");
  is_str (decide (&p, "www.github.com", 443), "allow allow:*.github.com",
          "per-run absent: the baseline applies");
  ab_egress_policy_free (&p);

  memset (&err, 0, sizeof err);
  ok (policy_parse (mk ("api.github.com", NULL, "evil.test=192.0.2.66"), &base, &p, &err) < 0,
      "a run cannot pin a name the baseline does not allow");
  is_str (
      err.msg,
      "annotations.dev.agentbox.net.pins: entry \"evil.test\": the admin baseline does not allow this name",
      "and the error names the annotation and the entry");
  ab_egress_policy_free (&base);
}

static void
test_baseline_file (void)
{
  char path[] = "/tmp/ab-egress-baseline-XXXXXX";
  struct ab_egress_policy p;
  ab_error_t err = { 0 };
  int fd = mkstemp (path);
  const char *doc = "{\"dev.agentbox.net.allow-domains\": [\"a.test\", \"*.b.test:443\"],"
                    " \"dev.agentbox.net.pins\": \"a.test=192.0.2.5\"}";

  ok (fd >= 0 && write (fd, doc, strlen (doc)) == (ssize_t)strlen (doc), "write a baseline file");
  close (fd);
  ok (ab_egress_baseline_load (AT_FDCWD, path, &p, &err) == 0 && p.enabled && p.n_allow == 2 && p.n_pins == 1,
      "the baseline loads from JSON (array or string values): %s", err.msg);
  ab_egress_policy_free (&p);

  fd = open (path, O_WRONLY | O_TRUNC | O_CLOEXEC);
  doc = "{\"dev.agentbox.net.allow-domains\": \"a.test\", \"dev.agentbox.net.allow\": \"x\"}";
  ok (write (fd, doc, strlen (doc)) == (ssize_t)strlen (doc), "rewrite");
  close (fd);
  memset (&err, 0, sizeof err);
  ok (ab_egress_baseline_load (AT_FDCWD, path, &p, &err) < 0 && strstr (err.msg, "dev.agentbox.net.allow")
          && strstr (err.msg, "unknown member"),
      "an unknown key in the baseline is refused by name: %s", err.msg);

  fd = open (path, O_WRONLY | O_TRUNC | O_CLOEXEC);
  doc = "{\"dev.agentbox.net.allow-domains\": [\"a.test,b.test\"]}";
  ok (write (fd, doc, strlen (doc)) == (ssize_t)strlen (doc), "rewrite");
  close (fd);
  memset (&err, 0, sizeof err);
  ok (ab_egress_baseline_load (AT_FDCWD, path, &p, &err) < 0 && strstr (err.msg, "allow-domains[0]"),
      "an array element holding a comma is refused with its JSON path: %s", err.msg);

  fd = open (path, O_WRONLY | O_TRUNC | O_CLOEXEC);
  doc = "{\"dev.agentbox.net.deny-domains\": \"ok.test, bad..test\"}";
  ok (write (fd, doc, strlen (doc)) == (ssize_t)strlen (doc), "rewrite");
  close (fd);
  memset (&err, 0, sizeof err);
  {
    _cleanup_free_ char *want
        = xasprintf ("%s: dev.agentbox.net.deny-domains: entry \"bad..test\": invalid name", path);
    ok (ab_egress_baseline_load (AT_FDCWD, path, &p, &err) < 0 && strcmp (err.msg, want) == 0,
        "an entry error in the baseline names the file, the key and the entry: %s", err.msg);
  }
  unlink (path);
}

static void
test_record (void)
{
  _cleanup_free_ struct ab_egress *e = xzalloc (sizeof *e);
  struct ab_egress_record r;
  struct ab_egress_addr a = { AF_INET, { 192, 0, 2, 10 } };
  _cleanup_gen_ struct ab_gen *g = ab_gen_new (false);
  size_t len;

  ab_egress_record_init (&r, 2);
  ab_egress_record_add (&r, AB_EGRESS_P_CONNECT, "CONNECT", "a.test", &a, 443, true, "allow:a.test");
  ab_egress_record_add (&r, AB_EGRESS_P_DNS, "dns-A", "\xff\\007\"x", NULL, 0, false, "invalid-name");
  ab_egress_record_add (&r, AB_EGRESS_P_DNS, "dns-A", "c.test", NULL, 0, false, "default-deny");
  is_int (r.n, 2, "the record keeps at most max entries");
  is_int (r.dropped, 1, "and counts the others");
  e->record = r; /* the record an engine keeps, read the way the runtime reads it */
  ab_egress_decisions_gen (e, g);
  const char *json = ab_gen_buf (g, &len);
  ok (strstr (json, "{\"time\":\"") == json + 1
          && strstr (json, "\"name\":\"a.test\",\"address\":\"192.0.2.10\",\"port\":443,"
                           "\"protocol\":\"CONNECT\",\"allowed\":true,\"rule\":\"allow:a.test\"}")
                 != NULL,
      "one object per decision, fields in a fixed order: %s", json);
  ok (strstr (json, "\"name\":\"\xef\xbf\xbd\\\\007\\\"x\"") != NULL,
      "a hostile name stays valid JSON (invalid UTF-8 becomes U+FFFD, quotes escaped)");
  ab_egress_record_destroy (&e->record);
}

int
main (void)
{
  test_names ();
  test_matcher ();
  test_grammar ();
  test_deny ();
  test_narrowing ();
  test_baseline_file ();
  test_record ();
  return tap_done ();
}
