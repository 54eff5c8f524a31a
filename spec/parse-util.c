/* Helpers shared by the parser's files (spec/parse-internal.h): quoting
 * for messages, typed members with the JSON path on error, the checks of
 * paths, lists and names that several members share. */
#include "config.h"

#include <limits.h>

#include "spec/parse-internal.h"

#define IFNAME_MAX 15 /* IFNAMSIZ - 1 */

void
ab_parse_sanitize (char *s, size_t size)
{
  _cleanup_free_ char *tmp = xmalloc (size);

  ab_escape (tmp, size, s, (size_t)-1, AB_ESC_NL);
  memcpy (s, tmp, strlen (tmp) + 1);
}

bool
ab_parse_is_safe (const char *s)
{
  size_t i = 0, len = strlen (s);

  while (i < len)
    {
      uint32_t cp;
      size_t n = ab_utf8_decode (s + i, len - i, &cp);
      if (n == 0 || ab_must_escape (cp))
        return false;
      i += n;
    }
  return true;
}

size_t
ab_parse_push_user_key (struct ab_jctx *c, const char *key)
{
  char q[AB_QUOTE_SIZE];
  const unsigned char *p;

  for (p = (const unsigned char *)key; *p; p++)
    if (*p < 0x20 || *p >= 0x7f || *p == '"' || *p == '\\')
      return ab_jpush_key (c, ab_quote (q, key));
  return ab_jpush_key (c, key);
}

int
ab_parse_enter_item (struct ab_jctx *c, struct ab_json *a, size_t i, struct ab_json **out, size_t *mark)
{
  struct ab_json *e = a->u.arr.items[i];

  *out = e;
  *mark = ab_jpush_index (c, i);
  if (e->type != AB_J_OBJECT)
    return ab_jerr (c, "must be an object, not %s", ab_jtype_name (e->type));
  return 0;
}

int
ab_parse_get_u32 (struct ab_jctx *c, struct ab_json *o, const char *key, int required, uint32_t *out)
{
  uint64_t v;
  int r = ab_jget_u64 (c, o, key, required, UINT32_MAX, &v);

  if (r > 0)
    *out = (uint32_t)v;
  return r;
}

int
ab_parse_get_i32 (struct ab_jctx *c, struct ab_json *o, const char *key, int required, int32_t *out)
{
  int64_t v;
  int r = ab_jget_i64 (c, o, key, required, INT32_MIN, INT32_MAX, &v);

  if (r > 0)
    *out = (int32_t)v;
  return r;
}

int
ab_parse_get_opt_i64 (struct ab_jctx *c, struct ab_json *o, const char *key, int64_t min, int64_t max,
                      ab_opt_i64 *out)
{
  int r = ab_jget_i64 (c, o, key, AB_OPTIONAL, min, max, &out->v);

  if (r > 0)
    out->set = true;
  return r;
}

int
ab_parse_get_opt_u64 (struct ab_jctx *c, struct ab_json *o, const char *key, uint64_t max, ab_opt_u64 *out)
{
  int r = ab_jget_u64 (c, o, key, AB_OPTIONAL, max, &out->v);

  if (r > 0)
    out->set = true;
  return r;
}

int
ab_parse_get_opt_bool (struct ab_jctx *c, struct ab_json *o, const char *key, ab_opt_bool *out)
{
  int r = ab_jget_bool (c, o, key, AB_OPTIONAL, &out->v);

  if (r > 0)
    out->set = true;
  return r;
}

/* The value at the current path is a path the runtime resolves: absolute,
   no "." or ".." component, shorter than PATH_MAX. */
static int
ab_parse_check_path (struct ab_jctx *c, const char *path)
{
  char q[AB_QUOTE_SIZE];

  if (path[0] != '/')
    return ab_jerr (c, "must be an absolute path, not %s", ab_quote (q, path));
  if (strlen (path) >= PATH_MAX)
    return ab_jerr (c, "path longer than %d bytes", PATH_MAX - 1);
  /* ".." is how a path written for one directory reaches another; "." is
     refused too so that the path checked is the path resolved. */
  if (ab_path_has_dotdot (path))
    return ab_jerr (c, "must not contain a \"..\" component: %s", ab_quote (q, path));
  if (!ab_path_is_clean_absolute (path))
    return ab_jerr (c, "must not contain a \".\" component: %s", ab_quote (q, path));
  return 0;
}

int
ab_parse_get_path (struct ab_jctx *c, struct ab_json *o, const char *key, int required, char **out)
{
  size_t mark;
  int r = ab_jget_str (c, o, key, required, out);

  if (r <= 0)
    return r;
  mark = ab_jpush_key (c, key);
  if (ab_parse_check_path (c, *out) < 0)
    return -1;
  ab_jpop (c, mark);
  return 1;
}

int
ab_parse_get_paths (struct ab_jctx *c, struct ab_json *o, const char *key, struct ab_strv *out)
{
  size_t mark, i;
  int r = ab_jget_strv (c, o, key, AB_OPTIONAL, out);

  if (r <= 0)
    return r;
  mark = ab_jpush_key (c, key);
  for (i = 0; i < out->n; i++)
    {
      size_t m = ab_jpush_index (c, i);
      if (ab_parse_check_path (c, out->v[i]) < 0)
        return -1;
      ab_jpop (c, m);
    }
  ab_jpop (c, mark);
  return 1;
}

int
ab_parse_check_cpu_list (struct ab_jctx *c, const char *list)
{
  char q[AB_QUOTE_SIZE];

  if (list[strspn (list, "0123456789, -")] != '\0')
    return ab_jerr (c, "%s is not a list like \"0-3,7\"", ab_quote (q, list));
  return 0;
}

int
ab_parse_idmaps (struct ab_jctx *c, struct ab_json *o, const char *key, struct ab_idmaps *out)
{
  struct ab_json *a;
  size_t mark, i;
  int r = ab_jenter (c, o, key, AB_J_ARRAY, AB_OPTIONAL, &a, &mark);

  if (r <= 0)
    return r;
  out->v = xcalloc (a->u.arr.n, sizeof *out->v);
  out->n = a->u.arr.n;
  for (i = 0; i < a->u.arr.n; i++)
    {
      struct ab_idmap *m = &out->v[i];
      struct ab_json *e;
      size_t im;

      if (ab_parse_enter_item (c, a, i, &e, &im) < 0
          || ab_parse_get_u32 (c, e, "containerID", AB_REQUIRED, &m->container_id) < 0
          || ab_parse_get_u32 (c, e, "hostID", AB_REQUIRED, &m->host_id) < 0
          || ab_parse_get_u32 (c, e, "size", AB_REQUIRED, &m->size) < 0)
        return -1;
      /* The kernel refuses an empty range and one that wraps around the
         32-bit ID space (ID 4294967295 is the invalid ID, never mapped). */
      if (m->size == 0)
        return ab_jerr (c, "size must not be zero");
      if ((uint64_t)m->container_id + m->size > UINT32_MAX)
        return ab_jerr (c, "containerID %u + size %u runs past the last ID, 4294967294", m->container_id,
                        m->size);
      if ((uint64_t)m->host_id + m->size > UINT32_MAX)
        return ab_jerr (c, "hostID %u + size %u runs past the last ID, 4294967294", m->host_id, m->size);
      ab_jpop (c, im);
    }
  ab_jpop (c, mark);
  return 1;
}

int
ab_parse_string_map (struct ab_jctx *c, struct ab_json *o, const char *key, struct ab_kvlist *out,
                     int (*check_key) (struct ab_jctx *c, const char *key))
{
  struct ab_json *m;
  size_t mark, i;
  int r = ab_jenter (c, o, key, AB_J_OBJECT, AB_OPTIONAL, &m, &mark);

  if (r <= 0)
    return r;
  out->v = xcalloc (m->u.obj.n, sizeof *out->v);
  for (i = 0; i < m->u.obj.n; i++)
    {
      struct ab_json_member *e = &m->u.obj.m[i];
      size_t km;

      e->used = true;
      if (e->key[0] == '\0')
        return ab_jerr (c, "keys must not be empty");
      km = ab_parse_push_user_key (c, e->key);
      if (e->val->type != AB_J_STRING)
        return ab_jerr (c, "must be a string, not %s", ab_jtype_name (e->val->type));
      if (check_key && check_key (c, e->key) < 0)
        return -1;
      out->v[out->n].key = xstrdup (e->key);
      out->v[out->n].value = xstrdup (e->val->u.str.s);
      out->n++;
      ab_jpop (c, km);
    }
  ab_jpop (c, mark);
  return 1;
}

void
ab_kvlist_free (struct ab_kvlist *l)
{
  size_t i;

  for (i = 0; i < l->n; i++)
    {
      free (l->v[i].key);
      free (l->v[i].value);
    }
  free (l->v);
  l->v = NULL;
  l->n = 0;
}

const char *
ab_kvlist_get (const struct ab_kvlist *l, const char *key)
{
  size_t i;

  for (i = 0; i < l->n; i++)
    if (strcmp (l->v[i].key, key) == 0)
      return l->v[i].value;
  return NULL;
}

void
ab_kvlist_set (struct ab_kvlist *l, const char *key, const char *value)
{
  for (size_t i = 0; i < l->n; i++)
    if (strcmp (l->v[i].key, key) == 0)
      {
        free (l->v[i].value);
        l->v[i].value = xstrdup (value);
        return;
      }
  l->v = xreallocarray (l->v, l->n + 1, sizeof *l->v);
  l->v[l->n].key = xstrdup (key);
  l->v[l->n].value = xstrdup (value);
  l->n++;
}

int
ab_parse_flag_names (struct ab_jctx *c, struct ab_json *o, const char *key, const char *what,
                     int64_t (*lookup) (const char *), uint64_t *bits)
{
  _cleanup_strv_ struct ab_strv names = { 0 };
  size_t mark, i;
  int r = ab_jget_strv (c, o, key, AB_OPTIONAL, &names);

  if (r <= 0)
    return r;
  mark = ab_jpush_key (c, key);
  for (i = 0; i < names.n; i++)
    {
      char q[AB_QUOTE_SIZE];
      int64_t bit = lookup (names.v[i]);

      if (bit < 0)
        {
          ab_jpush_index (c, i);
          return ab_jerr (c, "unknown %s %s", what, ab_quote (q, names.v[i]));
        }
      *bits |= (uint64_t)bit;
    }
  ab_jpop (c, mark);
  return 1;
}

int
ab_parse_get_cpu_list (struct ab_jctx *c, struct ab_json *o, const char *key, char **out)
{
  size_t mark;
  int r = ab_jget_str (c, o, key, AB_OPTIONAL, out);

  if (r <= 0)
    return r;
  mark = ab_jpush_key (c, key);
  if (ab_parse_check_cpu_list (c, *out) < 0)
    return -1;
  ab_jpop (c, mark);
  return 1;
}

int
ab_parse_dev_numbers (struct ab_jctx *c, struct ab_json *o, int required, int64_t *major, int64_t *minor)
{
  if (ab_jget_i64 (c, o, "major", required, 0, AB_DEV_MAJOR_MAX, major) < 0
      || ab_jget_i64 (c, o, "minor", required, 0, AB_DEV_MINOR_MAX, minor) < 0)
    return -1;
  return 0;
}

/* dev_valid_name() of the kernel: 1 to 15 bytes, not "." or "..", no '/',
   ':' or white space.  template allows the "%d" of netDevices names. */
int
ab_parse_check_ifname (struct ab_jctx *c, const char *name)
{
  char q[AB_QUOTE_SIZE];
  size_t n = strlen (name);

  if (n == 0 || n > IFNAME_MAX || strcmp (name, ".") == 0 || strcmp (name, "..") == 0
      || strpbrk (name, "/: \t\n\v\f\r") != NULL)
    return ab_jerr (c, "invalid network interface name %s (1 to %d bytes, no '/', ':' or white space)",
                    ab_quote (q, name), IFNAME_MAX);
  return 0;
}
