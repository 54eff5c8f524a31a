#include "config.h"

#include <stdio.h>

#include "base/util.h"
#include "base/json.h"
#include "spec/landlock.h"

/* The one table of landlock's rights: the policy parser, the derived
   rules, the per-ABI fit, `features`, `audit` and the docs read it. */
static const struct ab_ll_right rights[] = {
  { "execute", AB_LL_KIND_FS, AB_LL_FS_EXECUTE, 1 },
  { "write_file", AB_LL_KIND_FS, AB_LL_FS_WRITE_FILE, 1 },
  { "read_file", AB_LL_KIND_FS, AB_LL_FS_READ_FILE, 1 },
  { "read_dir", AB_LL_KIND_FS, AB_LL_FS_READ_DIR, 1 },
  { "remove_dir", AB_LL_KIND_FS, AB_LL_FS_REMOVE_DIR, 1 },
  { "remove_file", AB_LL_KIND_FS, AB_LL_FS_REMOVE_FILE, 1 },
  { "make_char", AB_LL_KIND_FS, AB_LL_FS_MAKE_CHAR, 1 },
  { "make_dir", AB_LL_KIND_FS, AB_LL_FS_MAKE_DIR, 1 },
  { "make_reg", AB_LL_KIND_FS, AB_LL_FS_MAKE_REG, 1 },
  { "make_sock", AB_LL_KIND_FS, AB_LL_FS_MAKE_SOCK, 1 },
  { "make_fifo", AB_LL_KIND_FS, AB_LL_FS_MAKE_FIFO, 1 },
  { "make_block", AB_LL_KIND_FS, AB_LL_FS_MAKE_BLOCK, 1 },
  { "make_sym", AB_LL_KIND_FS, AB_LL_FS_MAKE_SYM, 1 },
  { "refer", AB_LL_KIND_FS, AB_LL_FS_REFER, 2 },
  { "truncate", AB_LL_KIND_FS, AB_LL_FS_TRUNCATE, 3 },
  { "ioctl_dev", AB_LL_KIND_FS, AB_LL_FS_IOCTL_DEV, 5 },
  { "bind_tcp", AB_LL_KIND_NET, AB_LL_NET_BIND_TCP, 4 },
  { "connect_tcp", AB_LL_KIND_NET, AB_LL_NET_CONNECT_TCP, 4 },
  { "abstract_unix_socket", AB_LL_KIND_SCOPE, AB_LL_SCOPE_ABSTRACT_UNIX_SOCKET, 6 },
  { "signal", AB_LL_KIND_SCOPE, AB_LL_SCOPE_SIGNAL, 6 },
};

const struct ab_ll_right *
ab_ll_rights (size_t *n)
{
  *n = AB_ARRAY_SIZE (rights);
  return rights;
}

uint64_t
ab_ll_known (int kind, unsigned abi)
{
  uint64_t m = 0;

  for (size_t i = 0; i < AB_ARRAY_SIZE (rights); i++)
    if (rights[i].kind == kind && rights[i].abi <= abi)
      m |= rights[i].bit;
  return m;
}

const char *
ab_ll_kind_name (int kind)
{
  static const char *const names[AB_LL_KIND__COUNT] = { "filesystem", "network", "scope" };
  return kind >= 0 && kind < AB_LL_KIND__COUNT ? names[kind] : "?";
}

static const struct ab_ll_right *
right_by_bit (int kind, uint64_t bit)
{
  for (size_t i = 0; i < AB_ARRAY_SIZE (rights); i++)
    if (rights[i].kind == kind && rights[i].bit == bit)
      return &rights[i];
  return NULL;
}

char *
ab_ll_rights_text (int kind, uint64_t mask)
{
  char buf[512];
  size_t off = 0;

  buf[0] = '\0';
  for (int b = 0; b < 64; b++)
    {
      const struct ab_ll_right *r;
      char other[16];
      if (!(mask & (1ull << b)))
        continue;
      r = right_by_bit (kind, 1ull << b);
      if (r == NULL)
        snprintf (other, sizeof other, "bit %d", b);
      off += (size_t)snprintf (buf + off, off < sizeof buf ? sizeof buf - off : 0, "%s%s", off ? "," : "",
                               r ? r->name : other);
      if (off >= sizeof buf)
        break;
    }
  return xstrdup (off ? buf : "none");
}

void
ab_landlock_policy_free (struct ab_landlock_policy *p)
{
  for (size_t i = 0; i < p->n_paths; i++)
    free (p->paths[i].path);
  free (p->paths);
  free (p->ports);
  memset (p, 0, sizeof *p);
}

/* ---- the JSON policy ------------------------------------------------------ */

/* A set of rights: an array of names, or the kernel's bit mask.  Every
   right must be of `kind` and known to `abi`. */
static int
rights_value (struct ab_jctx *c, struct ab_json *v, int kind, unsigned abi, uint64_t *out)
{
  uint64_t known = ab_ll_known (kind, abi);

  *out = 0;
  if (v->type == AB_J_NUMBER)
    {
      uint64_t m;
      if (ab_jval_u64 (c, v, UINT64_MAX, &m) < 0)
        return -1;
      if (m & ~known)
        {
          _cleanup_free_ char *extra = ab_ll_rights_text (kind, m & ~known);
          return ab_jerr (c, "%s rights of landlock ABI %u are %#llx; %#llx (%s) is not among them",
                          ab_ll_kind_name (kind), abi, (unsigned long long)known,
                          (unsigned long long)(m & ~known), extra);
        }
      *out = m;
      return 0;
    }
  if (v->type != AB_J_ARRAY)
    return ab_jerr (c, "must be an array of right names or a number, not %s", ab_jtype_name (v->type));
  for (size_t i = 0; i < v->u.arr.n; i++)
    {
      size_t mark = ab_jpush_index (c, i);
      struct ab_json *e = v->u.arr.items[i];
      const struct ab_ll_right *r = NULL;

      if (e->type != AB_J_STRING)
        return ab_jerr (c, "must be a string, not %s", ab_jtype_name (e->type));
      for (size_t k = 0; k < AB_ARRAY_SIZE (rights); k++)
        if (strcmp (rights[k].name, e->u.str.s) == 0)
          r = &rights[k];
      if (r == NULL || r->kind != kind)
        return ab_jerr (c, "\"%s\" is not a landlock %s right", e->u.str.s, ab_ll_kind_name (kind));
      if (r->abi > abi)
        return ab_jerr (c, "\"%s\" needs landlock ABI %u, but the policy says \"abi\": %u", r->name, r->abi,
                        abi);
      *out |= r->bit;
      ab_jpop (c, mark);
    }
  return 0;
}

/* Member `key` of obj as a set of rights; *out keeps `dflt` when absent. */
static int
rights_member (struct ab_jctx *c, struct ab_json *obj, const char *key, int kind, unsigned abi, uint64_t dflt,
               uint64_t *out)
{
  struct ab_json *v = ab_json_member (obj, key);
  size_t mark;

  *out = dflt;
  if (v == NULL)
    return 0;
  mark = ab_jpush_key (c, key);
  if (rights_value (c, v, kind, abi, out) < 0)
    return -1;
  ab_jpop (c, mark);
  return 0;
}

/* allowedAccess of a rule: present, and only rights the ruleset handles
   (the kernel refuses a rule with others, EINVAL). */
static int
allowed_member (struct ab_jctx *c, struct ab_json *rule, int kind, const struct ab_landlock_policy *p,
                uint64_t *out)
{
  struct ab_json *v = ab_json_member (rule, "allowedAccess");
  size_t mark = ab_jpush_key (c, "allowedAccess");

  if (v == NULL)
    return ab_jerr (c, "required");
  if (rights_value (c, v, kind, p->abi, out) < 0)
    return -1;
  if (*out & ~p->handled[kind])
    {
      _cleanup_free_ char *extra = ab_ll_rights_text (kind, *out & ~p->handled[kind]);
      return ab_jerr (c, "%s: not in the ruleset's handled %s rights", extra, ab_ll_kind_name (kind));
    }
  ab_jpop (c, mark);
  return 0;
}

/* One element of a rule's list ("paths", "ports"), added with the rule's
   rights. */
typedef int (*rule_item_fn) (struct ab_jctx *c, struct ab_json *v, uint64_t access,
                             struct ab_landlock_policy *p);

static int
add_path (struct ab_jctx *c, struct ab_json *v, uint64_t access, struct ab_landlock_policy *p)
{
  char *path = NULL;

  if (ab_jval_str (c, v, &path) < 0)
    return -1;
  /* Resolved beneath the container's root without symlinks
     (runtime/landlock.c): a clean absolute path, as written. */
  if (!ab_path_is_clean_absolute (path))
    {
      ab_jerr (c, "\"%s\" is not a clean absolute path", path);
      free (path);
      return -1;
    }
  p->paths = xreallocarray (p->paths, p->n_paths + 1, sizeof *p->paths);
  p->paths[p->n_paths++] = (struct ab_ll_path_rule){ .path = path, .access = access };
  return 0;
}

static int
add_port (struct ab_jctx *c, struct ab_json *v, uint64_t access, struct ab_landlock_policy *p)
{
  uint64_t port;

  if (ab_jval_u64 (c, v, 65535, &port) < 0)
    return -1;
  p->ports = xreallocarray (p->ports, p->n_ports + 1, sizeof *p->ports);
  p->ports[p->n_ports++] = (struct ab_ll_port_rule){ .port = (uint16_t)port, .access = access };
  return 0;
}

/* pathBeneath or netPort: objects with allowedAccess and a list. */
static int
rules (struct ab_jctx *c, struct ab_json *arr, int kind, const char *list, const char *what, rule_item_fn add,
       struct ab_landlock_policy *p)
{
  for (size_t i = 0; i < arr->u.arr.n; i++)
    {
      size_t mark = ab_jpush_index (c, i), lm;
      struct ab_json *rule = arr->u.arr.items[i], *items;
      uint64_t access;

      if (rule->type != AB_J_OBJECT)
        return ab_jerr (c, "must be an object, not %s", ab_jtype_name (rule->type));
      if (allowed_member (c, rule, kind, p, &access) < 0
          || ab_jenter (c, rule, list, AB_J_ARRAY, AB_REQUIRED, &items, &lm) < 0)
        return -1;
      if (items->u.arr.n == 0)
        return ab_jerr (c, "empty: a rule grants its rights %s", what);
      for (size_t k = 0; k < items->u.arr.n; k++)
        {
          size_t km = ab_jpush_index (c, k);
          if (add (c, items->u.arr.items[k], access, p) < 0)
            return -1;
          ab_jpop (c, km);
        }
      ab_jpop (c, lm);
      ab_jpop (c, mark);
    }
  return 0;
}

/* Members the policy does not know: refused, not ignored (a misspelt
   "pathBeneath" would quietly grant nothing, a misspelt "bestEffort"
   would quietly change what an old kernel does). */
static int
refuse_unknown (struct ab_jctx *c, struct ab_json *root)
{
  _cleanup_strv_ struct ab_strv unused = { 0 };

  ab_json_collect_unused (root, "", &unused);
  if (unused.n)
    {
      c->len = 0;
      c->path[0] = '\0';
      return ab_jerr (c, "%s: unknown member", unused.v[0]);
    }
  return 0;
}

static int
parse_object (struct ab_jctx *c, struct ab_json *root, struct ab_landlock_policy *p)
{
  struct ab_json *arr;
  uint64_t abi;
  size_t mark;
  int r;

  if (ab_jget_u64 (c, root, "abi", AB_REQUIRED, UINT32_MAX, &abi) < 0)
    return -1;
  if (abi < 1 || abi > AB_LL_ABI_MAX)
    {
      mark = ab_jpush_key (c, "abi");
      return ab_jerr (c, "%llu: agentbox knows landlock ABI 1 to %d", (unsigned long long)abi, AB_LL_ABI_MAX);
    }
  p->abi = (unsigned)abi;
  p->best_effort = true;
  if (ab_jget_bool (c, root, "auto", AB_OPTIONAL, &p->with_auto) < 0
      || ab_jget_bool (c, root, "bestEffort", AB_OPTIONAL, &p->best_effort) < 0
      || rights_member (c, root, "handledAccessFs", AB_LL_KIND_FS, p->abi,
                        ab_ll_known (AB_LL_KIND_FS, p->abi), &p->handled[AB_LL_KIND_FS])
             < 0
      || rights_member (c, root, "handledAccessNet", AB_LL_KIND_NET, p->abi,
                        ab_ll_known (AB_LL_KIND_NET, p->abi), &p->handled[AB_LL_KIND_NET])
             < 0
      || rights_member (c, root, "scoped", AB_LL_KIND_SCOPE, p->abi, 0, &p->handled[AB_LL_KIND_SCOPE]) < 0)
    return -1;
  r = ab_jenter (c, root, "pathBeneath", AB_J_ARRAY, AB_OPTIONAL, &arr, &mark);
  if (r < 0
      || (r > 0 && rules (c, arr, AB_LL_KIND_FS, "paths", "beneath at least one path", add_path, p) < 0))
    return -1;
  if (r > 0)
    ab_jpop (c, mark);
  r = ab_jenter (c, root, "netPort", AB_J_ARRAY, AB_OPTIONAL, &arr, &mark);
  if (r < 0 || (r > 0 && rules (c, arr, AB_LL_KIND_NET, "ports", "on at least one port", add_port, p) < 0))
    return -1;
  if (r > 0)
    ab_jpop (c, mark);
  return refuse_unknown (c, root);
}

int
ab_landlock_policy_parse (const char *value, const char *where, struct ab_landlock_policy *out,
                          ab_error_t *err)
{
  _cleanup_json_ struct ab_json *root = NULL;
  struct ab_jctx c;

  ab_landlock_policy_free (out);
  if (strcmp (value, "off") == 0)
    {
      out->mode = AB_LL_MODE_OFF;
      return 0;
    }
  if (strcmp (value, "auto") == 0)
    {
      out->mode = AB_LL_MODE_AUTO;
      return 0;
    }
  if (value[strspn (value, " \t\r\n")] != '{')
    return ab_error_setc (err, AB_EC_CONFIG, 0,
                          "%s: must be \"off\", \"auto\" or a JSON policy object, not \"%.64s\"", where,
                          value);
  root = ab_json_parse (value, strlen (value), &ab_json_config_limits, where, err);
  if (root == NULL)
    return -1;
  ab_jctx_init (&c, where, err);
  out->mode = AB_LL_MODE_POLICY;
  if (parse_object (&c, root, out) < 0)
    {
      ab_landlock_policy_free (out);
      return -1;
    }
  /* What the kernel itself would refuse (landlock_create_ruleset: EINVAL
     for an empty ruleset, ENOMSG for nothing handled). */
  if (out->handled[AB_LL_KIND_FS] == 0 && out->handled[AB_LL_KIND_NET] == 0
      && out->handled[AB_LL_KIND_SCOPE] == 0)
    {
      ab_landlock_policy_free (out);
      return ab_jerr (&c, "handles no right: the ruleset would restrict nothing (say \"off\")");
    }
  if (out->n_ports && out->handled[AB_LL_KIND_NET] == 0)
    {
      ab_landlock_policy_free (out);
      return ab_jerr (&c, "netPort: network rules need \"abi\": 4 or more and handled network rights");
    }
  return 0;
}
