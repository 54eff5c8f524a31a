/* Typed reads of a parsed document (base/json.h): the value at a key,
 * checked for its type and range, with the JSON path of the context in
 * every error message (linux.seccomp.syscalls[2].action), and the paths
 * of the members nothing read.  The tree and the reader are base/json.c. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "base/json.h"

/* The JSON paths of the context and of unused members are built for every
   key and index of a config (17 KB of default config: ~1500 of them), so
   they skip snprintf's format machinery (20 % of a parse).  Each writes
   exactly what snprintf (dst, cap, "%s%s", a, b) and
   snprintf (dst, cap, "[%zu]", i) would, and returns the same value: the
   length of the whole text, even when it was cut to fit. */
static int
put_str2 (char *dst, size_t cap, const char *a, const char *b)
{
  size_t la = strlen (a), lb = strlen (b);

  if (cap > 0)
    {
      size_t ka = la < cap - 1 ? la : cap - 1;
      size_t kb = lb < cap - 1 - ka ? lb : cap - 1 - ka;
      memcpy (dst, a, ka);
      memcpy (dst + ka, b, kb);
      dst[ka + kb] = '\0';
    }
  return (int)(la + lb);
}

static int
put_index (char *dst, size_t cap, size_t i)
{
  char digits[24], *p = digits + sizeof digits;

  *--p = '\0';
  *--p = ']';
  do
    *--p = (char)('0' + i % 10);
  while ((i /= 10) != 0);
  *--p = '[';
  return put_str2 (dst, cap, "", p);
}

void
ab_jctx_init (struct ab_jctx *c, const char *file, ab_error_t *err)
{
  c->file = file;
  c->path[0] = '\0';
  c->len = 0;
  c->err = err;
}

size_t
ab_jpush_key (struct ab_jctx *c, const char *key)
{
  size_t mark = c->len;
  int w = put_str2 (c->path + c->len, sizeof c->path - c->len, c->len ? "." : "", key);
  if (w > 0)
    c->len = c->len + (size_t) w < sizeof c->path ? c->len + (size_t) w : sizeof c->path - 1;
  return mark;
}

size_t
ab_jpush_index (struct ab_jctx *c, size_t i)
{
  size_t mark = c->len;
  int w = put_index (c->path + c->len, sizeof c->path - c->len, i);
  if (w > 0)
    c->len = c->len + (size_t) w < sizeof c->path ? c->len + (size_t) w : sizeof c->path - 1;
  return mark;
}

void
ab_jpop (struct ab_jctx *c, size_t mark)
{
  c->len = mark;
  c->path[mark] = '\0';
}

static int
jerr_v (struct ab_jctx *c, const char *fmt, va_list ap)
{
  char msg[768];

  vsnprintf (msg, sizeof msg, fmt, ap);
  if (c->len)
    return ab_error_setc (c->err, AB_EC_CONFIG, 0, "%s: %s: %s", c->file, c->path, msg);
  return ab_error_setc (c->err, AB_EC_CONFIG, 0, "%s: %s", c->file, msg);
}

int
ab_jerr (struct ab_jctx *c, const char *fmt, ...)
{
  va_list ap;
  int r;

  va_start (ap, fmt);
  r = jerr_v (c, fmt, ap);
  va_end (ap);
  return r;
}

int
ab_jerr_at (struct ab_jctx *c, const char *key, const char *fmt, ...)
{
  va_list ap;
  int r;

  if (key != NULL)
    ab_jpush_key (c, key);
  va_start (ap, fmt);
  r = jerr_v (c, fmt, ap);
  va_end (ap);
  return r;
}

struct ab_json *
ab_json_member (struct ab_json *obj, const char *key)
{
  size_t i;

  if (obj == NULL || obj->type != AB_J_OBJECT)
    return NULL;
  for (i = 0; i < obj->u.obj.n; i++)
    if (strcmp (obj->u.obj.m[i].key, key) == 0)
      {
        obj->u.obj.m[i].used = true;
        return obj->u.obj.m[i].val;
      }
  return NULL;
}

int
ab_jenter (struct ab_jctx *c, struct ab_json *obj, const char *key, enum ab_jtype type, int required,
           struct ab_json **out, size_t *mark)
{
  struct ab_json *v = ab_json_member (obj, key);

  *out = NULL;
  if (v == NULL || (v->type == AB_J_NULL && !required))
    {
      if (required)
        {
          size_t m = ab_jpush_key (c, key);
          ab_jerr (c, "required");
          ab_jpop (c, m);
          return -1;
        }
      return 0;
    }
  *mark = ab_jpush_key (c, key);
  if (v->type != type)
    {
      ab_jerr (c, "must be %s, not %s", ab_jtype_name (type), ab_jtype_name (v->type));
      ab_jpop (c, *mark);
      return -1;
    }
  *out = v;
  return 1;
}

int
ab_jval_str (struct ab_jctx *c, struct ab_json *v, char **out)
{
  if (v->type != AB_J_STRING)
    return ab_jerr (c, "must be a string, not %s", ab_jtype_name (v->type));
  free (*out);
  *out = xstrdup (v->u.str.s);
  return 0;
}

static int
ab_jval_bool (struct ab_jctx *c, struct ab_json *v, bool *out)
{
  if (v->type != AB_J_BOOL)
    return ab_jerr (c, "must be a boolean, not %s", ab_jtype_name (v->type));
  *out = v->u.b;
  return 0;
}

static bool
is_integer_text (const char *s)
{
  return strpbrk (s, ".eE") == NULL;
}

int
ab_jval_u64 (struct ab_jctx *c, struct ab_json *v, uint64_t max, uint64_t *out)
{
  uint64_t u;

  if (v->type != AB_J_NUMBER)
    return ab_jerr (c, "must be an integer, not %s", ab_jtype_name (v->type));
  if (!is_integer_text (v->u.num))
    return ab_jerr (c, "must be an integer, not %s", v->u.num);
  if (v->u.num[0] == '-')
    return ab_jerr (c, "must not be negative (%s)", v->u.num);
  if (ab_parse_u64 (v->u.num, &u) < 0 || u > max)
    return ab_jerr (c, "%s is out of range (maximum %llu)", v->u.num, (unsigned long long) max);
  *out = u;
  return 0;
}

static int
ab_jval_i64 (struct ab_jctx *c, struct ab_json *v, int64_t min, int64_t max, int64_t *out)
{
  int64_t i;

  if (v->type != AB_J_NUMBER)
    return ab_jerr (c, "must be an integer, not %s", ab_jtype_name (v->type));
  if (!is_integer_text (v->u.num))
    return ab_jerr (c, "must be an integer, not %s", v->u.num);
  if (ab_parse_i64 (v->u.num, &i) < 0 || i < min || i > max)
    return ab_jerr (c, "%s is out of range (%lld to %lld)", v->u.num, (long long) min, (long long) max);
  *out = i;
  return 0;
}

static int
ab_jval_strv (struct ab_jctx *c, struct ab_json *v, struct ab_strv *out)
{
  size_t i;

  if (v->type != AB_J_ARRAY)
    return ab_jerr (c, "must be an array of strings, not %s", ab_jtype_name (v->type));
  ab_strv_free (out);
  if (v->u.arr.n == 0)
    return 0;
  /* Sized once (a profile's syscall list is some 300 names). */
  out->v = xreallocarray (NULL, v->u.arr.n + 1, sizeof *out->v);
  out->v[0] = NULL;
  for (i = 0; i < v->u.arr.n; i++)
    {
      struct ab_json *e = v->u.arr.items[i];
      if (e->type != AB_J_STRING)
        {
          size_t m = ab_jpush_index (c, i);
          ab_jerr (c, "must be a string, not %s", ab_jtype_name (e->type));
          ab_jpop (c, m);
          return -1;
        }
      out->v[out->n++] = xstrdup (e->u.str.s);
      out->v[out->n] = NULL;
    }
  return 0;
}

/* Shared shape of the ab_jget_* accessors. */
#define JGET_BODY(call)                                                                                            \
  struct ab_json *v = ab_json_member (obj, key);                                                                 \
  size_t mark;                                                                                                   \
  int r;                                                                                                         \
  if (v == NULL || (v->type == AB_J_NULL && !required))                                                          \
    {                                                                                                            \
      if (!required)                                                                                             \
        return 0;                                                                                                \
      mark = ab_jpush_key (c, key);                                                                              \
      ab_jerr (c, "required");                                                                                   \
      ab_jpop (c, mark);                                                                                         \
      return -1;                                                                                                 \
    }                                                                                                            \
  mark = ab_jpush_key (c, key);                                                                                  \
  r = (call);                                                                                                    \
  ab_jpop (c, mark);                                                                                             \
  return r < 0 ? -1 : 1

int
ab_jget_str (struct ab_jctx *c, struct ab_json *obj, const char *key, int required, char **out)
{
  JGET_BODY (ab_jval_str (c, v, out));
}

int
ab_jget_bool (struct ab_jctx *c, struct ab_json *obj, const char *key, int required, bool *out)
{
  JGET_BODY (ab_jval_bool (c, v, out));
}

int
ab_jget_u64 (struct ab_jctx *c, struct ab_json *obj, const char *key, int required, uint64_t max, uint64_t *out)
{
  JGET_BODY (ab_jval_u64 (c, v, max, out));
}

int
ab_jget_i64 (struct ab_jctx *c, struct ab_json *obj, const char *key, int required, int64_t min, int64_t max,
             int64_t *out)
{
  JGET_BODY (ab_jval_i64 (c, v, min, max, out));
}

int
ab_jget_strv (struct ab_jctx *c, struct ab_json *obj, const char *key, int required, struct ab_strv *out)
{
  JGET_BODY (ab_jval_strv (c, v, out));
}

/* Whether j can hold an unused member (collect). */
static bool
is_container (const struct ab_json *j)
{
  return j->type == AB_J_ARRAY || j->type == AB_J_OBJECT;
}

/* A path is formatted only on the way to an object: a profile's 300
   syscall names are not each given one. */
static void
collect (struct ab_json *j, char *path, size_t len, size_t cap, struct ab_strv *out)
{
  size_t i;

  if (j->type == AB_J_ARRAY)
    {
      for (i = 0; i < j->u.arr.n; i++)
        {
          if (!is_container (j->u.arr.items[i]))
            continue;
          int w = put_index (path + len, cap - len, i);
          if (w > 0 && len + (size_t) w < cap)
            collect (j->u.arr.items[i], path, len + (size_t) w, cap, out);
        }
      path[len] = '\0';
    }
  else if (j->type == AB_J_OBJECT)
    {
      for (i = 0; i < j->u.obj.n; i++)
        {
          struct ab_json_member *m = &j->u.obj.m[i];
          if (m->used && !is_container (m->val))
            continue;
          int w = put_str2 (path + len, cap - len, len ? "." : "", m->key);
          if (w <= 0 || len + (size_t) w >= cap)
            continue;
          if (!m->used)
            ab_strv_push (out, path);
          else
            collect (m->val, path, len + (size_t) w, cap, out);
        }
      path[len] = '\0';
    }
}

void
ab_json_collect_unused (struct ab_json *j, const char *prefix, struct ab_strv *out)
{
  char path[1024];
  size_t len;

  snprintf (path, sizeof path, "%s", prefix ? prefix : "");
  len = strlen (path);
  if (j)
    collect (j, path, len, sizeof path, out);
}
