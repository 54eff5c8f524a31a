/* Egress policy: the allow/deny/pins grammar (netns/egress.h), the admin baseline,
 * narrowing, and the decision for a name and port. */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "base/json.h"
#include "base/text.h"
#include "base/util.h"
#include "spec/model.h"
#include "spec/netpolicy.h"

static const uint16_t default_ports[] = { 80, 443 };

/* ---- names ------------------------------------------------------------ */

static bool
label_all_digits (const char *s, size_t len)
{
  size_t i;

  for (i = 0; i < len; i++)
    if (!isdigit ((unsigned char)s[i]))
      return false;
  return true;
}

int
ab_egress_name_normalize (const char *in, size_t len, char *out)
{
  size_t i, label = 0, last_start = 0;
  struct in_addr ia;

  if (len > 0 && in[len - 1] == '.')
    len--;
  if (len == 0 || len > AB_EGRESS_NAME_MAX)
    return -1;
  for (i = 0; i < len; i++)
    {
      unsigned char ch = (unsigned char)in[i];
      if (ch == '.')
        {
          if (label == 0 || in[i - 1] == '-')
            return -1;
          label = 0;
          last_start = i + 1;
          out[i] = '.';
          continue;
        }
      if (!(isalnum (ch) || ch == '-' || ch == '_'))
        return -1;
      if (label == 0 && ch == '-')
        return -1;
      if (++label > 63)
        return -1;
      out[i] = (char)tolower (ch);
    }
  if (label == 0 || in[len - 1] == '-')
    return -1;
  out[len] = '\0';
  /* "2130706433", "0x7f.1", "127.1": forms the C library's resolver reads as
     addresses.  A name must never turn into an address the policy did not
     list as one. */
  if (label_all_digits (out + last_start, len - last_start) || inet_aton (out, &ia) != 0)
    return -1;
  return 0;
}

/* Whether a rule's host part covers the normalised name (or literal text). */
static bool
ab_egress_rule_matches (const struct ab_egress_rule *r, const char *name)
{
  size_t nl, sl;

  if (r->family != 0)
    return strcmp (r->pattern, name) == 0;
  if (!r->wildcard)
    return strcmp (r->name, name) == 0;
  /* "*.example.com" covers every name strictly below example.com. */
  nl = strlen (name);
  sl = strlen (r->name);
  return nl > sl + 1 && name[nl - sl - 1] == '.' && memcmp (name + nl - sl, r->name, sl) == 0;
}

static bool
rule_has_port (const struct ab_egress_rule *r, uint16_t port)
{
  size_t i;

  for (i = 0; i < r->n_ports; i++)
    if (r->ports[i] == port)
      return true;
  return false;
}

/* ---- the grammar ------------------------------------------------------ */

static void
rule_free (struct ab_egress_rule *r)
{
  free (r->pattern);
  free (r->name);
}

static void
rules_free (struct ab_egress_rule *v, size_t n)
{
  size_t i;

  for (i = 0; i < n; i++)
    rule_free (&v[i]);
  free (v);
}

/* HOST of an entry: a name, "*." name, a dotted quad or a bracketed IPv6. */
static int
parse_host (const char *s, size_t len, bool allow_wildcard, struct ab_egress_rule *r, const char **why)
{
  char buf[AB_EGRESS_NAME_MAX + 3];
  struct ab_egress_addr a;

  if (len > 0 && s[0] == '[')
    {
      if (len < 3 || s[len - 1] != ']' || ab_egress_ip_parse (s + 1, len - 2, &a) < 0 || a.family != AF_INET6)
        {
          *why = "invalid IPv6 literal";
          return -1;
        }
      goto literal;
    }
  if (ab_egress_ip_parse (s, len, &a) == 0)
    {
      if (a.family != AF_INET)
        {
          *why = "IPv6 literal must be in brackets";
          return -1;
        }
      goto literal;
    }
  if (len >= 2 && s[0] == '*' && s[1] == '.')
    {
      if (!allow_wildcard)
        {
          *why = "wildcard not allowed here";
          return -1;
        }
      if (ab_egress_name_normalize (s + 2, len - 2, buf) < 0)
        {
          *why = len == 2 ? "empty name" : "invalid name";
          return -1;
        }
      r->wildcard = true;
      r->name = xstrdup (buf);
      r->pattern = xasprintf ("*.%s", buf);
      return 0;
    }
  if (ab_egress_name_normalize (s, len, buf) < 0)
    {
      *why = len == 0 ? "empty name" : "invalid name";
      return -1;
    }
  r->name = xstrdup (buf);
  r->pattern = xstrdup (buf);
  return 0;

literal:
  r->family = a.family;
  memcpy (r->addr, a.addr, sizeof r->addr);
  ab_egress_addr_pattern (&a, buf, sizeof buf);
  r->pattern = xstrdup (buf);
  return 0;
}

static int
parse_entry (const char *annot, const char *s, size_t len, bool is_allow, struct ab_egress_rule *r,
             ab_error_t *err)
{
  const char *why = NULL;
  const char *colon;
  size_t host_len;

  memset (r, 0, sizeof *r);
  /* The host ends at the first ':' outside brackets. */
  if (len > 0 && s[0] == '[')
    {
      const char *close = memchr (s, ']', len);
      host_len = close ? (size_t)(close - s) + 1 : len;
    }
  else
    {
      colon = memchr (s, ':', len);
      host_len = colon ? (size_t)(colon - s) : len;
    }
  if (parse_host (s, host_len, true, r, &why) < 0)
    goto bad;

  for (size_t i = host_len; i < len;)
    {
      char num[8];
      size_t j = i + 1, k;
      uint64_t port;

      if (s[i] != ':')
        {
          why = "junk after the host";
          goto bad;
        }
      for (k = j; k < len && s[k] != ':'; k++)
        ;
      if (k == j || k - j >= sizeof num)
        {
          why = "invalid port";
          goto bad;
        }
      memcpy (num, s + j, k - j);
      num[k - j] = '\0';
      if (ab_parse_u64 (num, &port) < 0 || port == 0 || port > 65535)
        {
          why = "invalid port";
          goto bad;
        }
      if (!rule_has_port (r, (uint16_t)port))
        {
          if (r->n_ports == AB_EGRESS_MAX_RULE_PORTS)
            {
              why = "too many ports";
              goto bad;
            }
          r->ports[r->n_ports++] = (uint16_t)port;
        }
      i = k;
    }
  if (is_allow && r->n_ports == 0)
    {
      memcpy (r->ports, default_ports, sizeof default_ports);
      r->n_ports = AB_ARRAY_SIZE (default_ports);
    }
  return 0;

bad:
  rule_free (r);
  memset (r, 0, sizeof *r);
  return ab_error_setc (err, AB_EC_CONFIG, 0, "%s: entry %s: %s", annot,
                        ab_quote_fragment ((char[AB_QUOTE_FRAGMENT_SIZE]){ 0 }, s, len), why);
}

/* Split on ',' with surrounding blanks trimmed; call fn for each entry.  An
   empty entry is an error (a stray comma usually hides a typo). */
typedef int (*entry_fn) (const char *annot, const char *s, size_t len, void *data, ab_error_t *err);

static int
for_each_entry (const char *annot, const char *value, entry_fn fn, void *data, ab_error_t *err)
{
  const char *p = value;
  size_t count = 0;

  /* A value of only blanks is an empty list. */
  while (*p == ' ' || *p == '\t')
    p++;
  if (*p == '\0')
    return 0;
  for (;;)
    {
      const char *end = strchr (p, ',');
      const char *a = p, *b = end ? end : p + strlen (p);

      while (a < b && (*a == ' ' || *a == '\t'))
        a++;
      while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
        b--;
      if (a == b)
        return ab_error_setc (err, AB_EC_CONFIG, 0, "%s: empty entry", annot);
      if (++count > AB_EGRESS_MAX_ENTRIES)
        return ab_error_setc (err, AB_EC_CONFIG, 0, "%s: more than %d entries", annot, AB_EGRESS_MAX_ENTRIES);
      if (fn (annot, a, (size_t)(b - a), data, err) < 0)
        return -1;
      if (end == NULL)
        return 0;
      p = end + 1;
    }
}

struct rule_list
{
  struct ab_egress_rule *v;
  size_t n;
  bool is_allow;
};

static int
add_rule (const char *annot, const char *s, size_t len, void *data, ab_error_t *err)
{
  struct rule_list *l = data;
  struct ab_egress_rule r;

  if (parse_entry (annot, s, len, l->is_allow, &r, err) < 0)
    return -1;
  l->v = xreallocarray (l->v, l->n + 1, sizeof *l->v);
  l->v[l->n++] = r;
  return 0;
}

struct pin_list
{
  struct ab_egress_pin *v;
  size_t n;
};

static int
add_pin (const char *annot, const char *s, size_t len, void *data, ab_error_t *err)
{
  struct pin_list *l = data;
  const char *eq = memchr (s, '=', len);
  char name[AB_EGRESS_NAME_MAX + 1];
  struct ab_egress_addr a;
  size_t al;
  const char *ap;

  if (eq == NULL)
    return ab_error_setc (err, AB_EC_CONFIG, 0, "%s: entry %s: expected NAME=ADDRESS", annot,
                          ab_quote_fragment ((char[AB_QUOTE_FRAGMENT_SIZE]){ 0 }, s, len));
  if (ab_egress_name_normalize (s, (size_t)(eq - s), name) < 0)
    return ab_error_setc (err, AB_EC_CONFIG, 0, "%s: entry %s: invalid name", annot,
                          ab_quote_fragment ((char[AB_QUOTE_FRAGMENT_SIZE]){ 0 }, s, len));
  ap = eq + 1;
  al = len - (size_t)(ap - s);
  if (al >= 2 && ap[0] == '[' && ap[al - 1] == ']')
    ap++, al -= 2;
  if (ab_egress_ip_parse (ap, al, &a) < 0)
    return ab_error_setc (err, AB_EC_CONFIG, 0, "%s: entry %s: invalid address", annot,
                          ab_quote_fragment ((char[AB_QUOTE_FRAGMENT_SIZE]){ 0 }, s, len));
  l->v = xreallocarray (l->v, l->n + 1, sizeof *l->v);
  l->v[l->n].name = xstrdup (name);
  l->v[l->n].family = a.family;
  memcpy (l->v[l->n].addr, a.addr, 16);
  l->n++;
  return 0;
}

/* ---- policy objects --------------------------------------------------- */

static void
rule_copy (struct ab_egress_rule *d, const struct ab_egress_rule *s)
{
  *d = *s;
  d->pattern = xstrdup (s->pattern);
  d->name = s->name ? xstrdup (s->name) : NULL;
}

void
ab_egress_policy_free (struct ab_egress_policy *p)
{
  size_t i;

  if (p == NULL)
    return;
  rules_free (p->allow, p->n_allow);
  rules_free (p->deny, p->n_deny);
  for (i = 0; i < p->n_pins; i++)
    free (p->pins[i].name);
  free (p->pins);
  memset (p, 0, sizeof *p);
}

void
ab_egress_policy_copy (struct ab_egress_policy *d, const struct ab_egress_policy *s)
{
  size_t i;

  memset (d, 0, sizeof *d);
  d->enabled = s->enabled;
  d->allow = xcalloc (s->n_allow, sizeof *d->allow);
  for (i = 0; i < s->n_allow; i++)
    rule_copy (&d->allow[i], &s->allow[i]);
  d->n_allow = s->n_allow;
  d->deny = xcalloc (s->n_deny, sizeof *d->deny);
  for (i = 0; i < s->n_deny; i++)
    rule_copy (&d->deny[i], &s->deny[i]);
  d->n_deny = s->n_deny;
  d->pins = xcalloc (s->n_pins, sizeof *d->pins);
  for (i = 0; i < s->n_pins; i++)
    {
      d->pins[i] = s->pins[i];
      d->pins[i].name = xstrdup (s->pins[i].name);
    }
  d->n_pins = s->n_pins;
}

/* Whether the policy's pins mention the name. */
static bool
ab_egress_policy_has_pin (const struct ab_egress_policy *p, const char *name)
{
  size_t i;

  for (i = 0; i < p->n_pins; i++)
    if (strcmp (p->pins[i].name, name) == 0)
      return true;
  return false;
}

/* The names both rules' host parts cover, as a rule (host part only), or
   false when they share none.  Exact ∩ wildcard is the exact name when the
   wildcard covers it; wildcard ∩ wildcard is the deeper one. */
static bool
host_intersect (const struct ab_egress_rule *a, const struct ab_egress_rule *b,
                const struct ab_egress_rule **out)
{
  if (a->family != 0 || b->family != 0)
    {
      *out = a;
      return a->family == b->family && memcmp (a->addr, b->addr, 16) == 0;
    }
  if (!a->wildcard)
    {
      *out = a;
      return ab_egress_rule_matches (b, a->name);
    }
  if (!b->wildcard)
    {
      *out = b;
      return ab_egress_rule_matches (a, b->name);
    }
  /* *.x.y ∩ *.y = *.x.y */
  if (strcmp (a->name, b->name) == 0 || ab_egress_rule_matches (b, a->name))
    {
      *out = a;
      return true;
    }
  if (ab_egress_rule_matches (a, b->name))
    {
      *out = b;
      return true;
    }
  return false;
}

static void
narrow_allow (const struct ab_egress_rule *run, size_t n_run, const struct ab_egress_rule *base,
              size_t n_base, struct ab_egress_policy *out)
{
  size_t i, j, k;

  for (i = 0; i < n_run; i++)
    for (j = 0; j < n_base; j++)
      {
        const struct ab_egress_rule *host;
        struct ab_egress_rule r;

        if (!host_intersect (&run[i], &base[j], &host))
          continue;
        rule_copy (&r, host);
        r.n_ports = 0;
        for (k = 0; k < run[i].n_ports; k++)
          if (rule_has_port (&base[j], run[i].ports[k]))
            r.ports[r.n_ports++] = run[i].ports[k];
        if (r.n_ports == 0)
          {
            rule_free (&r);
            continue;
          }
        out->allow = xreallocarray (out->allow, out->n_allow + 1, sizeof *out->allow);
        out->allow[out->n_allow++] = r;
      }
}

static bool
base_allows_name (const struct ab_egress_policy *base, const char *name)
{
  size_t i;

  for (i = 0; i < base->n_allow; i++)
    if (ab_egress_rule_matches (&base->allow[i], name))
      return true;
  return false;
}

/* Parse the three values (any may be NULL) into out.  Errors name each
   value as where + its key: "annotations.dev.agentbox.net.pins", or the
   baseline file's "FILE: dev.agentbox.net.pins". */
static int
parse_values (const char *where, const char *allow, const char *deny, const char *pins,
              struct ab_egress_policy *out, ab_error_t *err)
{
  struct rule_list al = { .is_allow = true }, dl = { .is_allow = false };
  struct pin_list pl = { 0 };
  _cleanup_free_ char *la = xasprintf ("%s%s", where, AB_ANNOT_NET_ALLOW_DOMAINS);
  _cleanup_free_ char *ld = xasprintf ("%s%s", where, AB_ANNOT_NET_DENY_DOMAINS);
  _cleanup_free_ char *lp = xasprintf ("%s%s", where, AB_ANNOT_NET_PINS);

  memset (out, 0, sizeof *out);
  if (allow && for_each_entry (la, allow, add_rule, &al, err) < 0)
    goto fail;
  if (deny && for_each_entry (ld, deny, add_rule, &dl, err) < 0)
    goto fail;
  if (pins && for_each_entry (lp, pins, add_pin, &pl, err) < 0)
    goto fail;
  out->enabled = allow != NULL;
  out->allow = al.v, out->n_allow = al.n;
  out->deny = dl.v, out->n_deny = dl.n;
  out->pins = pl.v, out->n_pins = pl.n;
  return 0;

fail:
  rules_free (al.v, al.n);
  rules_free (dl.v, dl.n);
  for (size_t i = 0; i < pl.n; i++)
    free (pl.v[i].name);
  free (pl.v);
  return -1;
}

int
ab_egress_policy_parse (const struct ab_kvlist *annotations, struct ab_egress_policy *out, ab_error_t *err)
{
  const char *allow = ab_kvlist_get (annotations, AB_ANNOT_NET_ALLOW_DOMAINS);
  const char *deny = ab_kvlist_get (annotations, AB_ANNOT_NET_DENY_DOMAINS);
  const char *pins = ab_kvlist_get (annotations, AB_ANNOT_NET_PINS);

  return parse_values ("annotations.", allow, deny, pins, out, err);
}

int
ab_egress_policy_narrow (const struct ab_egress_policy *baseline, const struct ab_egress_policy *run,
                         struct ab_egress_policy *out, ab_error_t *err)
{
  size_t i;

  memset (out, 0, sizeof *out);
  if (baseline == NULL || !baseline->enabled)
    {
      ab_egress_policy_copy (out, run);
      return 0;
    }

  for (i = 0; i < run->n_pins; i++)
    if (!base_allows_name (baseline, run->pins[i].name))
      return ab_error_setc (err, AB_EC_CONFIG, 0,
                            "annotations.%s: entry \"%s\": the admin baseline does not allow this name",
                            AB_ANNOT_NET_PINS, run->pins[i].name);

  ab_egress_policy_copy (out, baseline);
  out->enabled = true;
  if (run->enabled)
    {
      rules_free (out->allow, out->n_allow);
      out->allow = NULL;
      out->n_allow = 0;
      narrow_allow (run->allow, run->n_allow, baseline->allow, baseline->n_allow, out);
    }
  for (i = 0; i < run->n_deny; i++)
    {
      out->deny = xreallocarray (out->deny, out->n_deny + 1, sizeof *out->deny);
      rule_copy (&out->deny[out->n_deny++], &run->deny[i]);
    }
  /* A per-run pin never overrides the admin's for the same name. */
  for (i = 0; i < run->n_pins; i++)
    {
      if (ab_egress_policy_has_pin (baseline, run->pins[i].name))
        continue;
      out->pins = xreallocarray (out->pins, out->n_pins + 1, sizeof *out->pins);
      out->pins[out->n_pins] = run->pins[i];
      out->pins[out->n_pins++].name = xstrdup (run->pins[i].name);
    }
  return 0;
}

/* A baseline member: a string in the annotation grammar, or an array of
   entry strings (joined with ',' after checking none contains one). */
static int
baseline_value (struct ab_jctx *c, struct ab_json *obj, const char *key, char **out)
{
  struct ab_json *v = ab_json_member (obj, key);
  size_t mark, i, len = 0;
  char *s;

  *out = NULL;
  if (v == NULL || v->type == AB_J_NULL)
    return 0;
  mark = ab_jpush_key (c, key);
  if (v->type == AB_J_STRING)
    {
      if (ab_jval_str (c, v, out) < 0)
        return -1;
      ab_jpop (c, mark);
      return 0;
    }
  if (v->type != AB_J_ARRAY)
    return ab_jerr (c, "expected a string or an array of strings, got %s", ab_jtype_name (v->type));
  for (i = 0; i < v->u.arr.n; i++)
    {
      struct ab_json *it = v->u.arr.items[i];
      size_t m2 = ab_jpush_index (c, i);
      if (it->type != AB_J_STRING)
        return ab_jerr (c, "expected a string, got %s", ab_jtype_name (it->type));
      if (memchr (it->u.str.s, ',', it->u.str.len) != NULL || it->u.str.len == 0)
        return ab_jerr (c, "one entry per string, not empty and without ','");
      len += it->u.str.len + 1;
      ab_jpop (c, m2);
    }
  s = xmalloc (len + 1);
  s[0] = '\0';
  for (i = 0, len = 0; i < v->u.arr.n; i++)
    {
      struct ab_json *it = v->u.arr.items[i];
      if (i > 0)
        s[len++] = ',';
      memcpy (s + len, it->u.str.s, it->u.str.len);
      len += it->u.str.len;
    }
  s[len] = '\0';
  *out = s;
  ab_jpop (c, mark);
  return 0;
}

int
ab_egress_baseline_load (int dirfd, const char *path, struct ab_egress_policy *out, ab_error_t *err)
{
  static const struct ab_json_limits lim = { 1 << 20, 8, 4096, 4096, 65536 };
  _cleanup_free_ char *buf = NULL, *allow = NULL, *deny = NULL, *pins = NULL;
  _cleanup_json_ struct ab_json *j = NULL;
  _cleanup_strv_ struct ab_strv unused = { 0 };
  struct ab_jctx c;
  size_t len;

  memset (out, 0, sizeof *out);
  if (ab_read_file_at (dirfd, path, lim.max_bytes, &buf, &len, err) < 0)
    return ab_error_prefix (err, "egress policy `%s`", path);
  j = ab_json_parse (buf, len, &lim, path, err);
  if (j == NULL)
    return -1;
  ab_jctx_init (&c, path, err);
  if (j->type != AB_J_OBJECT)
    return ab_jerr (&c, "expected an object");
  if (baseline_value (&c, j, AB_ANNOT_NET_ALLOW_DOMAINS, &allow) < 0
      || baseline_value (&c, j, AB_ANNOT_NET_DENY_DOMAINS, &deny) < 0
      || baseline_value (&c, j, AB_ANNOT_NET_PINS, &pins) < 0)
    return -1;
  ab_json_collect_unused (j, "", &unused);
  if (unused.n > 0)
    return ab_error_setc (err, AB_EC_CONFIG, 0, "%s: %s: unknown member", path, unused.v[0]);
  _cleanup_free_ char *where = xasprintf ("%s: ", path);
  if (parse_values (where, allow, deny, pins, out, err) < 0)
    return -1;
  /* An admin file that exists is a policy even if it lists no allow entry:
     it then allows nothing. */
  out->enabled = true;
  return 0;
}

/* ---- decisions -------------------------------------------------------- */

bool
ab_egress_policy_decide (const struct ab_egress_policy *p, const char *name, uint16_t port, char *rule,
                         size_t rule_len)
{
  bool name_seen = false;
  size_t i;

  /* Deny wins: checked first, and a deny entry without ports covers every
     port (and the DNS question, port 0). */
  for (i = 0; i < p->n_deny; i++)
    {
      const struct ab_egress_rule *r = &p->deny[i];
      if (!ab_egress_rule_matches (r, name))
        continue;
      if (r->n_ports == 0 || (port != 0 && rule_has_port (r, port)))
        {
          snprintf (rule, rule_len, "deny:%s", r->pattern);
          return false;
        }
    }
  for (i = 0; p->enabled && i < p->n_allow; i++)
    {
      const struct ab_egress_rule *r = &p->allow[i];
      if (!ab_egress_rule_matches (r, name))
        continue;
      name_seen = true;
      if (port == 0 || rule_has_port (r, port))
        {
          snprintf (rule, rule_len, "allow:%s", r->pattern);
          return true;
        }
    }
  snprintf (rule, rule_len, "%s", name_seen ? "port-not-allowed" : "default-deny");
  return false;
}

static int
cmp_u16 (const void *a, const void *b)
{
  return (int)*(const uint16_t *)a - (int)*(const uint16_t *)b;
}

size_t
ab_egress_policy_ports (const struct ab_egress_policy *p, uint16_t *ports, size_t max)
{
  _cleanup_free_ uint16_t *all = NULL;
  size_t n = 0, total = AB_ARRAY_SIZE (default_ports), i, j, out = 0;

  for (i = 0; i < p->n_allow; i++)
    total += p->allow[i].n_ports;
  all = xcalloc (total, sizeof *all);
  for (i = 0; i < AB_ARRAY_SIZE (default_ports); i++)
    all[n++] = default_ports[i];
  for (i = 0; i < p->n_allow; i++)
    for (j = 0; j < p->allow[i].n_ports; j++)
      all[n++] = p->allow[i].ports[j];
  qsort (all, n, sizeof all[0], cmp_u16);
  for (i = 0; i < n; i++)
    {
      if (i > 0 && all[i] == all[i - 1])
        continue;
      if (out < max)
        ports[out] = all[i];
      out++;
    }
  return out;
}

/* ---- IP literals -------------------------------------------------------- */

int
ab_egress_ip_parse (const char *s, size_t len, struct ab_egress_addr *out)
{
  char buf[INET6_ADDRSTRLEN + 1];
  size_t i;

  memset (out, 0, sizeof *out);
  if (len >= 2 && s[0] == '[' && s[len - 1] == ']')
    s++, len -= 2;
  if (len == 0 || len >= sizeof buf)
    return -1;
  memcpy (buf, s, len);
  buf[len] = '\0';
  if (strchr (buf, ':') != NULL)
    {
      /* No zone index ("fe80::1%eth0"): it names an interface of the host. */
      if (inet_pton (AF_INET6, buf, out->addr) != 1)
        return -1;
      out->family = AF_INET6;
      return 0;
    }
  /* Four decimal parts, no leading zeros: "010.0.0.1" is octal to some
     parsers and decimal to others, and the two must never disagree. */
  for (i = 0; i < len; i++)
    if (buf[i] == '0' && (i == 0 || buf[i - 1] == '.') && i + 1 < len && buf[i + 1] != '.')
      return -1;
  if (inet_pton (AF_INET, buf, out->addr) != 1)
    return -1;
  out->family = AF_INET;
  return 0;
}

void
ab_egress_addr_format (const struct ab_egress_addr *a, char *buf, size_t len)
{
  if (inet_ntop (a->family, a->addr, buf, (socklen_t)len) == NULL)
    snprintf (buf, len, "?");
}

void
ab_egress_addr_pattern (const struct ab_egress_addr *a, char *buf, size_t len)
{
  char tmp[INET6_ADDRSTRLEN];

  ab_egress_addr_format (a, tmp, sizeof tmp);
  if (a->family == AF_INET6)
    snprintf (buf, len, "[%s]", tmp);
  else
    snprintf (buf, len, "%s", tmp);
}

bool
ab_egress_addr_equal (const struct ab_egress_addr *a, const struct ab_egress_addr *b)
{
  size_t n = a->family == AF_INET ? 4 : 16;
  return a->family == b->family && memcmp (a->addr, b->addr, n) == 0;
}
