#include "config.h"

#include <stdio.h>
#include <yajl/yajl_gen.h>

#include "base/util.h"
#include "base/gen.h"
#include "base/json.h"

/* What ab_gen_new_fd buffers before a write. */
#define GEN_FD_BUF (64u << 10)

struct ab_gen
{
  yajl_gen g;
  /* ab_gen_new_fd: the document goes to fd through buf; err is the errno
     of the first write that failed (nothing is written after it) */
  int fd;
  char *buf;
  size_t len;
  int err;
};

struct ab_gen *
ab_gen_new (bool pretty)
{
  struct ab_gen *g = xzalloc (sizeof *g);

  g->fd = -1;
  g->g = yajl_gen_alloc (NULL);
  if (g->g == NULL)
    abort ();
  yajl_gen_config (g->g, yajl_gen_beautify, pretty ? 1 : 0);
  yajl_gen_config (g->g, yajl_gen_indent_string, "  ");
  yajl_gen_config (g->g, yajl_gen_validate_utf8, 1);
  yajl_gen_config (g->g, yajl_gen_escape_solidus, 0);
  return g;
}

static void
fd_write (struct ab_gen *g, const char *s, size_t n)
{
  if (g->err == 0 && ab_write_all (g->fd, s, n) < 0)
    g->err = errno;
}

static void
fd_print (void *ctx, const char *s, size_t n)
{
  struct ab_gen *g = ctx;

  if (g->len + n > GEN_FD_BUF)
    {
      fd_write (g, g->buf, g->len);
      g->len = 0;
    }
  if (n > GEN_FD_BUF)
    fd_write (g, s, n);
  else
    {
      memcpy (g->buf + g->len, s, n);
      g->len += n;
    }
}

struct ab_gen *
ab_gen_new_fd (int fd)
{
  struct ab_gen *g = ab_gen_new (false);

  g->fd = fd;
  g->buf = xmalloc (GEN_FD_BUF);
  yajl_gen_config (g->g, yajl_gen_print_callback, fd_print, g);
  return g;
}

int
ab_gen_finish_fd (struct ab_gen *g)
{
  fd_print (g, "\n", 1);
  fd_write (g, g->buf, g->len);
  g->len = 0;
  errno = g->err;
  return g->err ? -1 : 0;
}

void
ab_gen_free (struct ab_gen *g)
{
  if (g == NULL)
    return;
  yajl_gen_free (g->g);
  free (g->buf);
  free (g);
}

/* A yajl_gen status other than ok is a bug in the caller (unbalanced
   containers, invalid UTF-8 passed to ab_gen_str): fail loudly. */
static void
check (yajl_gen_status st)
{
  if (st != yajl_gen_status_ok)
    {
      fprintf (stderr, "agentbox: internal error: JSON generator status %d\n", (int) st);
      abort ();
    }
}

void
ab_gen_obj_open (struct ab_gen *g)
{
  check (yajl_gen_map_open (g->g));
}

void
ab_gen_obj_close (struct ab_gen *g)
{
  check (yajl_gen_map_close (g->g));
}

void
ab_gen_arr_open (struct ab_gen *g)
{
  check (yajl_gen_array_open (g->g));
}

void
ab_gen_arr_close (struct ab_gen *g)
{
  check (yajl_gen_array_close (g->g));
}

void
ab_gen_key (struct ab_gen *g, const char *key)
{
  check (yajl_gen_string (g->g, (const unsigned char *) key, strlen (key)));
}

void
ab_gen_str (struct ab_gen *g, const char *s)
{
  if (s == NULL)
    {
      ab_gen_null (g);
      return;
    }
  ab_gen_bytes (g, s, strlen (s));
}

void
ab_gen_bytes (struct ab_gen *g, const char *s, size_t len)
{
  static const char repl[] = "\xef\xbf\xbd";
  _cleanup_free_ char *fixed = NULL;
  size_t i = 0, o = 0;

  if (ab_utf8_valid (s, len))
    {
      check (yajl_gen_string (g->g, (const unsigned char *) s, len));
      return;
    }
  fixed = xmalloc (len * 3 + 1);
  while (i < len)
    {
      /* Take the longest valid sequence starting at i (1..4 bytes). */
      size_t k, take = 0;
      for (k = 1; k <= 4 && i + k <= len; k++)
        if (ab_utf8_valid (s + i, k))
          {
            take = k;
            break;
          }
      if (take)
        {
          memcpy (fixed + o, s + i, take);
          o += take;
          i += take;
        }
      else
        {
          memcpy (fixed + o, repl, 3);
          o += 3;
          i++;
        }
    }
  check (yajl_gen_string (g->g, (const unsigned char *) fixed, o));
}

void
ab_gen_i64 (struct ab_gen *g, int64_t v)
{
  check (yajl_gen_integer (g->g, (long long) v));
}

void
ab_gen_u64 (struct ab_gen *g, uint64_t v)
{
  char buf[32];
  int n = snprintf (buf, sizeof buf, "%llu", (unsigned long long) v);
  check (yajl_gen_number (g->g, buf, (size_t) n));
}

void
ab_gen_bool (struct ab_gen *g, bool v)
{
  check (yajl_gen_bool (g->g, v));
}

void
ab_gen_null (struct ab_gen *g)
{
  check (yajl_gen_null (g->g));
}

void
ab_gen_raw_number (struct ab_gen *g, const char *text)
{
  ab_gen_raw (g, text, strlen (text));
}

void
ab_gen_raw (struct ab_gen *g, const char *text, size_t len)
{
  check (yajl_gen_number (g->g, text, len));
}

void
ab_gen_json (struct ab_gen *g, const struct ab_json *v)
{
  size_t i;

  switch (v->type)
    {
    case AB_J_NULL:
      ab_gen_null (g);
      break;
    case AB_J_BOOL:
      ab_gen_bool (g, v->u.b);
      break;
    case AB_J_NUMBER:
      ab_gen_raw_number (g, v->u.num);
      break;
    case AB_J_STRING:
      ab_gen_bytes (g, v->u.str.s, v->u.str.len);
      break;
    case AB_J_ARRAY:
      ab_gen_arr_open (g);
      for (i = 0; i < v->u.arr.n; i++)
        ab_gen_json (g, v->u.arr.items[i]);
      ab_gen_arr_close (g);
      break;
    case AB_J_OBJECT:
      ab_gen_obj_open (g);
      for (i = 0; i < v->u.obj.n; i++)
        {
          ab_gen_key (g, v->u.obj.m[i].key);
          ab_gen_json (g, v->u.obj.m[i].val);
        }
      ab_gen_obj_close (g);
      break;
    }
}

void
ab_gen_kv_str (struct ab_gen *g, const char *key, const char *v)
{
  ab_gen_key (g, key);
  ab_gen_str (g, v);
}

void
ab_gen_kv_i64 (struct ab_gen *g, const char *key, int64_t v)
{
  ab_gen_key (g, key);
  ab_gen_i64 (g, v);
}

void
ab_gen_kv_u64 (struct ab_gen *g, const char *key, uint64_t v)
{
  ab_gen_key (g, key);
  ab_gen_u64 (g, v);
}

void
ab_gen_kv_bool (struct ab_gen *g, const char *key, bool v)
{
  ab_gen_key (g, key);
  ab_gen_bool (g, v);
}

void
ab_gen_kv_strv (struct ab_gen *g, const char *key, char *const *v, size_t n)
{
  size_t i;

  ab_gen_key (g, key);
  ab_gen_arr_open (g);
  for (i = 0; i < n; i++)
    ab_gen_str (g, v[i]);
  ab_gen_arr_close (g);
}

const char *
ab_gen_buf (struct ab_gen *g, size_t *len)
{
  const unsigned char *buf;
  size_t l;

  check (yajl_gen_get_buf (g->g, &buf, &l));
  if (len)
    *len = l;
  return (const char *) buf;
}

char *
ab_gen_steal (struct ab_gen *g, bool with_newline, size_t *len)
{
  size_t l;
  const char *buf = ab_gen_buf (g, &l);
  char *r = xmalloc (l + 2);

  memcpy (r, buf, l);
  if (with_newline)
    r[l++] = '\n';
  r[l] = '\0';
  if (len)
    *len = l;
  return r;
}
