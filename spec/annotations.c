#include "config.h"

#include <stdarg.h>
#include <stdio.h>

#include "base/json.h"
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

/* ---- one typer per annotation ------------------------------------------------ */

static int
type_timeout (struct ab_spec *s, const char *value, ab_error_t *err)
{
  uint64_t ms;

  if (ab_parse_duration_ms (value, &ms) < 0 || ms == 0)
    return ab_error_setc (err, AB_EC_CONFIG, 0,
                          "invalid duration \"%s\" (a positive number with s, ms, m or h; plain numbers are seconds)",
                          value);
  s->agentbox.timeout_set = true;
  s->agentbox.timeout_ms = ms;
  return 0;
}

static int
type_timeout_grace (struct ab_spec *s, const char *value, ab_error_t *err)
{
  uint64_t ms;

  if (ab_parse_duration_ms (value, &ms) < 0)
    return ab_error_setc (err, AB_EC_CONFIG, 0,
                          "invalid duration \"%s\" (a number with s, ms, m or h; plain numbers are seconds; 0: "
                          "no grace)",
                          value);
  s->agentbox.grace_set = true;
  s->agentbox.grace_ms = ms;
  return 0;
}

/* An annotation of two words: *out is whether value is `yes`; any other
   word than the two is an error naming both. */
static int
two_words (const char *value, const char *yes, const char *no, bool *out, ab_error_t *err)
{
  if (strcmp (value, yes) != 0 && strcmp (value, no) != 0)
    return ab_error_setc (err, AB_EC_CONFIG, 0, "must be \"%s\" or \"%s\", not \"%s\"", yes, no, value);
  *out = strcmp (value, yes) == 0;
  return 0;
}

static int
type_etc_hosts (struct ab_spec *s, const char *value, ab_error_t *err)
{
  return two_words (value, "true", "false", &s->agentbox.etc_hosts, err);
}

/* A JSON array of canonical absolute paths, as a string. */
static int
type_bind_nofollow (struct ab_spec *s, const char *value, ab_error_t *err)
{
  static const struct ab_json_limits lim
      = { .max_bytes = 1u << 20, .max_depth = 1, .max_string = 4096, .max_items = 1024, .max_nodes = 1025 };
  _cleanup_json_ struct ab_json *j = ab_json_parse (value, strlen (value), &lim, "value", err);

  if (j == NULL)
    return -1;
  if (j->type != AB_J_ARRAY)
    return ab_error_setc (err, AB_EC_CONFIG, 0, "must be a JSON array of paths");
  for (size_t i = 0; i < j->u.arr.n; i++)
    {
      struct ab_json *p = j->u.arr.items[i];
      if (p->type != AB_J_STRING || !ab_path_is_canonical (p->u.str.s))
        return ab_error_setc (err, AB_EC_CONFIG, 0, "[%zu] must be a canonical absolute path", i);
      ab_strv_push (&s->agentbox.nofollow, p->u.str.s);
    }
  return 0;
}

static int
type_net_allow (struct ab_spec *s, const char *value, ab_error_t *err)
{
  if (ab_net_policy_parse (value, &s->agentbox.net, err) == 0)
    return 0;
  s->agentbox.net_error = xstrdup (err->msg);
  return -1;
}

static int
type_net_wall (struct ab_spec *s, const char *value, ab_error_t *err)
{
  bool on = true;
  int r = two_words (value, "on", "off", &on, err);

  s->agentbox.wall_off = r == 0 && !on;
  return r;
}

/* The domain allowlist's three keys make one policy, parsed once (for the
   first of them); each key's own errors name it. */
static int
type_egress (struct ab_spec *s, const char *value AB_UNUSED, ab_error_t *err)
{
  if (s->agentbox.egress_typed)
    return s->agentbox.egress_error ? ab_error_setc (err, AB_EC_CONFIG, 0, "%s", s->agentbox.egress_error) : 0;
  s->agentbox.egress_typed = true;
  if (ab_egress_policy_parse (&s->annotations, &s->agentbox.egress, err) == 0)
    return 0;
  s->agentbox.egress_error = xstrdup (err->msg);
  return -1;
}

static int
type_rootfs_idmap (struct ab_spec *s, const char *value, ab_error_t *err)
{
  return two_words (value, "true", "false", &s->agentbox.rootfs_idmap, err);
}

/* dev.agentbox.degraded: "accept" lets a run go on without the limits and
   protections this host cannot give it (rootless without a delegated
   cgroup), each listed in the record's `degraded`; "refuse" (the default)
   fails the create, naming the first. */
static int
type_degraded (struct ab_spec *s, const char *value, ab_error_t *err)
{
  return two_words (value, "accept", "refuse", &s->agentbox.accept_degraded, err);
}

/* ---- dev.agentbox.workspace.* ------------------------------------------ */

void
ab_workspace_free (struct ab_workspace *w)
{
  free (w->destination);
  free (w->changes_dir);
  memset (w, 0, sizeof *w);
}

static int __attribute__ ((format (printf, 3, 4)))
ws_err (ab_error_t *err, const char *key, const char *fmt, ...)
{
  char msg[512];
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  return ab_error_setc (err, AB_EC_CONFIG, 0, "config.json: annotations.%s: %s", key, msg);
}

/* The workspace mount: the last mount at the destination (the one on top),
   which must be a bind of a host directory for the overlay to have a lower
   layer. */
static int
ws_find_mount (struct ab_spec *s, ab_error_t *err)
{
  struct ab_workspace *w = &s->workspace;
  size_t i;

  for (i = s->n_mounts; i-- > 0;)
    if (strcmp (s->mounts[i].destination, w->destination) == 0)
      {
        if (!ab_mount_is_bind (&s->mounts[i]))
          return ws_err (err, AB_ANNOT_WS_MODE,
                         "overlay needs a bind mount of a host directory at `%s`, but mounts[%zu] is %s%s", w->destination,
                         i, s->mounts[i].type ? "of type " : "a remount", s->mounts[i].type ? s->mounts[i].type : "");
        w->mount = i;
        return 0;
      }
  return ws_err (err, AB_ANNOT_WS_MODE, "overlay needs a bind mount at `%s` (mounts has none; see %s)",
                 w->destination, AB_ANNOT_WS_DESTINATION);
}

/* The workspace's keys make one setting, typed once (for the first of
   them); each error names its key. */
int
ab_ws_mode_of (const struct ab_kvlist *annotations)
{
  const char *mode = ab_kvlist_get (annotations, AB_ANNOT_WS_MODE);

  if (mode == NULL || strcmp (mode, "bind") == 0)
    return AB_WS_MODE_BIND;
  return strcmp (mode, "overlay") == 0 ? AB_WS_MODE_OVERLAY : -1;
}

static int
type_workspace (struct ab_spec *s, const char *value AB_UNUSED, ab_error_t *err)
{
  struct ab_workspace *w = &s->workspace;
  const char *mode = ab_kvlist_get (&s->annotations, AB_ANNOT_WS_MODE);
  const char *dest = ab_kvlist_get (&s->annotations, AB_ANNOT_WS_DESTINATION);
  const char *size = ab_kvlist_get (&s->annotations, AB_ANNOT_WS_SIZE);
  const char *changes = ab_kvlist_get (&s->annotations, AB_ANNOT_WS_CHANGES);
  const char *max = ab_kvlist_get (&s->annotations, AB_ANNOT_WS_LIST_MAX);
  const char *given = dest ? AB_ANNOT_WS_DESTINATION : size ? AB_ANNOT_WS_SIZE : changes ? AB_ANNOT_WS_CHANGES : max ? AB_ANNOT_WS_LIST_MAX : NULL;

  if (w->typed)
    return 0; /* the first of its keys reported its error, if any */
  w->typed = true;
  if (ab_ws_mode_of (&s->annotations) == AB_WS_MODE_BIND)
    {
      /* Refused rather than ignored: the caller asked for something a
         bound workspace would silently not do. */
      if (given)
        return ws_err (err, given, "only with %s=overlay", AB_ANNOT_WS_MODE);
      return 0;
    }
  if (ab_ws_mode_of (&s->annotations) < 0)
    return ws_err (err, AB_ANNOT_WS_MODE, "must be \"bind\" or \"overlay\", not \"%s\"", mode);
  w->mode = AB_WS_MODE_OVERLAY;
  if (dest && (!ab_path_is_clean_absolute (dest) || strcmp (dest, "/") == 0))
    return ws_err (err, AB_ANNOT_WS_DESTINATION, "must be an absolute path below /, not \"%s\"", dest);
  w->destination = xstrdup (dest ? dest : AB_WS_DEFAULT_DESTINATION);
  if (size && changes)
    return ws_err (err, AB_ANNOT_WS_SIZE,
                   "not with %s: a change set kept in a directory of yours is bounded by its filesystem",
                   AB_ANNOT_WS_CHANGES);
  if (size && (ab_parse_size (size, &w->size) < 0 || w->size < (1u << 20)))
    return ws_err (err, AB_ANNOT_WS_SIZE, "expected a size of at least 1M, like 512M or 2G, not \"%s\"", size);
  if (changes && !ab_path_is_clean_absolute (changes))
    return ws_err (err, AB_ANNOT_WS_CHANGES, "must be an absolute path without . or .., not \"%s\"", changes);
  if (max && (ab_parse_u64 (max, &w->list_max) < 0 || w->list_max == 0 || w->list_max > 1000000))
    return ws_err (err, AB_ANNOT_WS_LIST_MAX, "expected a number from 1 to 1000000, not \"%s\"", max);
  w->changes_dir = changes ? xstrdup (changes) : NULL;
  if (!changes && !size)
    w->size = AB_WS_DEFAULT_SIZE;
  return ws_find_mount (s, err);
}

/* ---- dev.agentbox.landlock, dev.agentbox.fallback ------------------------- */

static int
type_landlock (struct ab_spec *s, const char *value, ab_error_t *err)
{
  return ab_landlock_policy_parse (value, "config.json: annotations." AB_ANNOT_LANDLOCK, &s->agentbox.landlock, err);
}

static int
type_fallback (struct ab_spec *s, const char *value, ab_error_t *err)
{
  if (strcmp (value, "landlock") != 0 && strcmp (value, "none") != 0)
    return ab_error_setc (err, AB_EC_CONFIG, 0, "must be \"landlock\" or \"none\", not \"%s\"", value);
  s->agentbox.fallback = strcmp (value, "landlock") == 0 ? AB_FALLBACK_LANDLOCK : AB_FALLBACK_NONE;
  return 0;
}

/* The one table of agentbox's annotations: names, documentation for
   `features`, typers. */
static const struct
{
  struct ab_annotation_info info;
  int (*type) (struct ab_spec *s, const char *value, ab_error_t *err);
} known[] = {
  { { AB_ANNOT_TIMEOUT, "wall-clock limit of a run: 30s, 1500ms, 2m (plain number: seconds); the smaller of "
                        "this and --timeout applies" },
    type_timeout },
  { { AB_ANNOT_TIMEOUT_GRACE,
      "at the wall-clock limit every process gets SIGTERM, and the container is killed this long after (default "
      "5s; 0: killed at once); the smaller of this and --timeout-grace applies" },
    type_timeout_grace },
  { { AB_ANNOT_ETC_HOSTS,
      "\"true\": /etc/hosts is a file agentbox writes (localhost names and the container's hostname), mounted "
      "read-only over the root's, whose file stays as it is; the destination must exist, as for any mount" },
    type_etc_hosts },
  { { AB_ANNOT_BIND_NOFOLLOW,
      "a JSON array of bind sources (canonical paths) that create opens refusing every symlink on the path "
      "(openat2 RESOLVE_NO_SYMLINKS): one swapped in after the path was resolved fails the create instead of "
      "redirecting the bind" },
    type_bind_nofollow },
  { { AB_ANNOT_NET_ALLOW,
      "egress allowed by address: comma-separated ADDR[/PREFIX][:PORT][/tcp|/udp], IPv6 in brackets; absent: no "
      "egress at all (a network namespace agentbox creates gets the default-deny nftables wall; a joined one only "
      "when this is set)" },
    type_net_allow },
  { { AB_ANNOT_NET_WALL,
      "\"on\" (default) or \"off\": \"off\" installs no wall in a network namespace agentbox makes, for an "
      "orchestrator that adds its own links after create (podman with --uidmap and a bridge, slirp4netns, pasta): "
      "their traffic then flows unfiltered, as with runc; refused with the allowlists, which need the wall" },
    type_net_wall },
  { { AB_ANNOT_NET_ALLOW_DOMAINS,
      "egress allowed by name through the proxy and DNS stub: comma-separated NAME or *.SUFFIX, optional :PORT "
      "list (default 80 and 443); narrows the --egress-policy baseline" },
    type_egress },
  { { AB_ANNOT_NET_DENY_DOMAINS, "names refused even if allowed (deny wins): same grammar, no port = every port" },
    type_egress },
  { { AB_ANNOT_NET_PINS, "static name=address pins used instead of DNS (for tests and air-gapped hosts)" },
    type_egress },
  { { AB_ANNOT_ROOTFS_IDMAP,
      "\"true\": mount the root filesystem id-mapped through the container's user namespace, so that an image "
      "owned by host root works under the mapping with nothing chowned (the container's root then owns the "
      "image's files: keep root.readonly unless the image may be changed)" },
    type_rootfs_idmap },
  { { AB_ANNOT_DEGRADED,
      "\"accept\": run even where a limit of linux.resources cannot be enforced (rootless without a delegated "
      "cgroup): each is listed in the record's `degraded` and by `audit`, and what can be is enforced instead "
      "(rlimits, the timeout, killing through the PID namespace); \"refuse\" (default): fail naming the first" },
    type_degraded },
  { { AB_ANNOT_WS_MODE,
      "\"bind\" (default) or \"overlay\": the workspace mount shows its host directory through an overlay; what "
      "the container changes is kept as a change set (`agentbox workspace diff|apply|discard ID`) and the "
      "directory is untouched until it is applied" },
    type_workspace },
  { { AB_ANNOT_WS_DESTINATION, "overlay: the destination of the workspace mount (default /workspace)" },
    type_workspace },
  { { AB_ANNOT_WS_SIZE,
      "overlay: the most the change set may hold, e.g. 512M (default 1G): beyond it writes fail with ENOSPC and "
      "the record says limitsHit workspace" },
    type_workspace },
  { { AB_ANNOT_WS_CHANGES, "overlay: a host directory (absent or empty) that keeps the change set instead of "
                           "the state root; bounded by its filesystem" },
    type_workspace },
  { { AB_ANNOT_WS_LIST_MAX, "overlay: changes listed in the result record (default 1000); deletions and replaced "
                            "directories are always listed" },
    type_workspace },
  { { AB_ANNOT_LANDLOCK,
      "landlock, a second filesystem and network boundary: \"off\" (the default of a bundle), \"auto\" (the "
      "hardened profile's: read beneath read-only mounts, read-write beneath writable ones; in a network "
      "namespace joined under the wall no TCP bind, TCP connect only where the egress policy allows), or a JSON "
      "policy {\"abi\": N, \"pathBeneath\": [...], "
      "\"netPort\": [...]} (docs/landlock.md); rights the kernel's ABI lacks are listed in the record's "
      "degraded" },
    type_landlock },
  { { AB_ANNOT_FALLBACK,
      "\"landlock\": where the namespaced sandbox cannot be made (user namespaces refused), `run` runs the "
      "program without namespaces, under landlock, seccomp, no_new_privs and rlimits, the host read-only but for "
      "the workspace and a private temporary directory (docs/landlock.md); \"none\" (default): it fails and says "
      "why" },
    type_fallback },
};

const struct ab_annotation_info *
ab_annotations_known (void)
{
  static struct ab_annotation_info list[AB_ARRAY_SIZE (known) + 1];

  if (list[0].key == NULL)
    for (size_t i = 0; i < AB_ARRAY_SIZE (known); i++)
      list[i] = known[i].info;
  return list;
}

void
ab_annotations_type (struct ab_spec *s)
{
  s->workspace.list_max = AB_WS_DEFAULT_LIST_MAX;
  for (size_t i = 0; i < s->annotations.n; i++)
    {
      const char *k = s->annotations.v[i].key;
      ab_error_t err = { 0 };
      size_t t;

      if (!ab_str_has_prefix (k, AB_ANNOT_PREFIX))
        continue;
      for (t = 0; t < AB_ARRAY_SIZE (known); t++)
        if (strcmp (known[t].info.key, k) == 0)
          break;
      if (t == AB_ARRAY_SIZE (known))
        ab_error_setc (&err, AB_EC_CONFIG, 0,
                       "config.json: annotations.%s: unknown agentbox annotation (see `agentbox features`)", k);
      else if (known[t].type (s, s->annotations.v[i].value, &err) == 0)
        continue;
      /* the network and workspace typers name the annotation themselves */
      else if (ab_str_has_prefix (err.msg, "annotations."))
        ab_error_prefix (&err, "config.json");
      else if (!ab_str_has_prefix (err.msg, "config.json: "))
        ab_error_prefix (&err, "config.json: annotations.%s", k);
      if (s->agentbox.error == NULL)
        s->agentbox.error = xstrdup (err.msg);
    }
}

void
ab_agentbox_free (struct ab_agentbox *a)
{
  ab_net_policy_free (&a->net);
  ab_egress_policy_free (&a->egress);
  ab_strv_free (&a->nofollow);
  free (a->error);
  free (a->net_error);
  free (a->egress_error);
  ab_landlock_policy_free (&a->landlock);
  memset (a, 0, sizeof *a);
}

/* ---- what the typed values need of the rest of the config ------------------- */

/* The id-mapped root goes through the container's own user namespace: it
   needs a new one whose mapping gives the container a root. */
static int
check_rootfs_idmap (const struct ab_spec *s, ab_error_t *err)
{
  const struct ab_linux *l = s->linux_;
  bool root_mapped = false;

  if (!s->agentbox.rootfs_idmap)
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

/* Without the wall nothing would hold egress to what the allowlists say. */
static int
check_wall_off (const struct ab_spec *s, ab_error_t *err)
{
  if (!s->agentbox.wall_off)
    return 0;
  if (s->agentbox.net.present)
    return ab_error_setc (err, AB_EC_CONFIG, 0,
                          "config.json: annotations." AB_ANNOT_NET_WALL ": \"off\" not with " AB_ANNOT_NET_ALLOW
                          " (the wall is what holds egress to it)");
  if (s->agentbox.egress.enabled)
    return ab_error_setc (err, AB_EC_CONFIG, 0,
                          "config.json: annotations." AB_ANNOT_NET_WALL ": \"off\" not with the domain allowlist "
                          "(" AB_ANNOT_NET_ALLOW_DOMAINS "): the wall is what sends egress through its proxy");
  return 0;
}

int
ab_annotations_validate (const struct ab_spec *s, ab_error_t *err)
{
  if (s->agentbox.error != NULL)
    return ab_error_setc (err, AB_EC_CONFIG, 0, "%s", s->agentbox.error);
  if (check_wall_off (s, err) < 0)
    return -1;
  return check_rootfs_idmap (s, err);
}
