#include "config.h"

#include "base/util.h"
#include "spec/annotations.h"
#include "spec/netpolicy.h"

int
ab_parse_duration_ms (const char *s, uint64_t *out)
{
  char num[32];
  size_t i = 0;
  uint64_t v, mul;
  const char *unit;

  while (s[i] >= '0' && s[i] <= '9' && i < sizeof num - 1)
    {
      num[i] = s[i];
      i++;
    }
  num[i] = '\0';
  unit = s + i;
  if (i == 0 || ab_parse_u64 (num, &v) < 0)
    return -1;
  if (*unit == '\0' || strcmp (unit, "s") == 0)
    mul = 1000;
  else if (strcmp (unit, "ms") == 0)
    mul = 1;
  else if (strcmp (unit, "m") == 0)
    mul = 60000;
  else if (strcmp (unit, "h") == 0)
    mul = 3600000;
  else
    return -1;
  if (v > UINT64_MAX / mul)
    return -1;
  *out = v * mul;
  return 0;
}

static int
validate_timeout (const char *value, ab_error_t *err)
{
  uint64_t ms;

  if (ab_parse_duration_ms (value, &ms) < 0 || ms == 0)
    return ab_error_setc (err, AB_EC_CONFIG, 0,
                          "invalid duration \"%s\" (a positive number with s, ms, m or h; plain numbers are seconds)",
                          value);
  return 0;
}

static int
validate_net_allow (const char *value, ab_error_t *err)
{
  struct ab_net_policy p = { 0 };
  int r = ab_net_policy_parse (value, &p, err);
  ab_net_policy_free (&p);
  return r;
}

/* The domain policy is parsed as a whole by the egress module; here each
   key alone, for a message that names it. */
static int
validate_egress (const char *key, const char *value, ab_error_t *err)
{
  struct ab_kv kv = { .key = (char *) key, .value = (char *) value };
  struct ab_kvlist l = { .v = &kv, .n = 1 };
  struct ab_egress_policy p = { 0 };
  int r = ab_egress_policy_parse (&l, NULL, &p, err);
  ab_egress_policy_free (&p);
  return r;
}

static int
validate_allow_domains (const char *value, ab_error_t *err)
{
  return validate_egress (AB_ANNOT_NET_ALLOW_DOMAINS, value, err);
}

static int
validate_deny_domains (const char *value, ab_error_t *err)
{
  return validate_egress (AB_ANNOT_NET_DENY_DOMAINS, value, err);
}

static int
validate_pins (const char *value, ab_error_t *err)
{
  return validate_egress (AB_ANNOT_NET_PINS, value, err);
}

static int
validate_bool (const char *value, ab_error_t *err)
{
  if (strcmp (value, "true") != 0 && strcmp (value, "false") != 0)
    return ab_error_setc (err, AB_EC_CONFIG, 0, "must be \"true\" or \"false\", not \"%s\"", value);
  return 0;
}

bool
ab_annot_rootfs_idmap (const struct ab_spec *s)
{
  const char *v = ab_kvlist_get (&s->annotations, AB_ANNOT_ROOTFS_IDMAP);
  return v != NULL && strcmp (v, "true") == 0;
}

/* The id-mapped root goes through the container's own user namespace: it
   needs a new one whose mapping gives the container a root. */
static int
check_rootfs_idmap (const struct ab_spec *s, ab_error_t *err)
{
  const struct ab_linux *l = s->linux_;
  bool root_mapped = false;

  if (!ab_annot_rootfs_idmap (s))
    return 0;
  if (l == NULL || !l->ns[AB_NS_USER].present || l->ns[AB_NS_USER].path != NULL)
    return ab_error_setc (err, AB_EC_CONFIG, 0,
                          "config.json: annotations." AB_ANNOT_ROOTFS_IDMAP
                          ": needs a new user namespace (linux.namespaces type \"user\", no path)");
  for (size_t i = 0; i < l->uid_mappings.n; i++)
    root_mapped = root_mapped || l->uid_mappings.v[i].container_id == 0;
  if (!root_mapped)
    return ab_error_setc (err, AB_EC_CONFIG, 0,
                          "config.json: annotations." AB_ANNOT_ROOTFS_IDMAP
                          ": linux.uidMappings must map container uid 0 (the image's owner is mapped to it)");
  return 0;
}

static const struct ab_annotation_info known[] = {
  { AB_ANNOT_TIMEOUT, "wall-clock limit of a run: 30s, 1500ms, 2m (plain number: seconds); the smaller of this and "
                      "--timeout applies",
    validate_timeout },
  { AB_ANNOT_NET_ALLOW,
    "egress allowed by address: comma-separated ADDR[/PREFIX][:PORT][/tcp|/udp], IPv6 in brackets; absent: no "
    "egress at all (a network namespace agentbox creates gets the default-deny nftables wall; a joined one only "
    "when this is set)",
    validate_net_allow },
  { AB_ANNOT_NET_ALLOW_DOMAINS,
    "egress allowed by name through the proxy and DNS stub: comma-separated NAME or *.SUFFIX, optional :PORT list "
    "(default 80 and 443); narrows the --egress-policy baseline",
    validate_allow_domains },
  { AB_ANNOT_NET_DENY_DOMAINS, "names refused even if allowed (deny wins): same grammar, no port = every port",
    validate_deny_domains },
  { AB_ANNOT_NET_PINS, "static name=address pins used instead of DNS (for tests and air-gapped hosts)",
    validate_pins },
  { AB_ANNOT_ROOTFS_IDMAP,
    "\"true\": mount the root filesystem id-mapped through the container's user namespace, so that an image "
    "owned by host root works under the mapping with nothing chowned (the container's root then owns the "
    "image's files: keep root.readonly unless the image may be changed)",
    validate_bool },
  { NULL, NULL, NULL },
};

const struct ab_annotation_info *
ab_annotations_known (void)
{
  return known;
}

int
ab_annotations_validate (const struct ab_spec *s, ab_error_t *err)
{
  size_t i;

  for (i = 0; i < s->annotations.n; i++)
    {
      const char *k = s->annotations.v[i].key;
      const struct ab_annotation_info *a;
      if (!ab_str_has_prefix (k, AB_ANNOT_PREFIX))
        continue;
      for (a = known; a->key; a++)
        if (strcmp (a->key, k) == 0)
          break;
      if (a->key == NULL)
        return ab_error_setc (err, AB_EC_CONFIG, 0,
                              "config.json: annotations.%s: unknown agentbox annotation (see `agentbox features`)", k);
      if (a->validate && a->validate (s->annotations.v[i].value, err) < 0)
        {
          /* the network parsers name the annotation themselves */
          if (!ab_str_has_prefix (err->msg, "annotations."))
            return ab_error_prefix (err, "config.json: annotations.%s", k);
          return ab_error_prefix (err, "config.json");
        }
    }
  return check_rootfs_idmap (s, err);
}
