#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_parse.h>

#include "base/json.h"

/* Generous for any real config.json (a full seccomp profile is ~30 KiB),
   small enough that hostile input cannot exhaust memory. */
const struct ab_json_limits ab_json_config_limits = {
  .max_bytes = 4u << 20,
  .max_depth = 64,
  .max_string = 128u << 10, /* MAX_ARG_STRLEN: no argument or env entry can be longer */
  .max_items = 1u << 16,
  .max_nodes = 1u << 20,
};

struct frame
{
  struct ab_json *node;
  char *key; /* object frames: key waiting for its value */
};

struct builder
{
  struct ab_json_arena *arena;
  const struct ab_json_limits *lim;
  const char *name;
  ab_error_t *err;
  struct ab_json *root;
  struct frame *stack;
  size_t depth;
  size_t nodes;
  bool failed;
};

const char *
ab_jtype_name (enum ab_jtype t)
{
  switch (t)
    {
    case AB_J_NULL:
      return "null";
    case AB_J_BOOL:
      return "a boolean";
    case AB_J_NUMBER:
      return "a number";
    case AB_J_STRING:
      return "a string";
    case AB_J_ARRAY:
      return "an array";
    case AB_J_OBJECT:
      return "an object";
    }
  return "?";
}

/* ---- the arena ------------------------------------------------------------

   A parse makes one node per value and one text per string, number and
   key: 1500 of each for a 17 KB config, and malloc and free were a third
   of its time.  They come from blocks of their own instead, which the
   root's ab_json_free releases at once.  A node added later by
   ab_json_set (malloc'ed) is freed by the walk as before. */
struct arena_block
{
  struct arena_block *next;
  size_t used, cap;
  _Alignas (max_align_t) char data[];
};

struct ab_json_arena
{
  struct ab_json *root; /* the node whose ab_json_free releases the arena */
  struct arena_block *blocks;
};

#define ARENA_BLOCK (16u << 10)

static void *
arena_alloc (struct ab_json_arena *a, size_t n)
{
  struct arena_block *b = a->blocks;
  void *p;

  n = (n + _Alignof (max_align_t) - 1) & ~(size_t)(_Alignof (max_align_t) - 1);
  if (b == NULL || b->cap - b->used < n)
    {
      /* A large request gets a block of its own behind the current one,
         which keeps its room. */
      size_t cap = n > ARENA_BLOCK / 4 ? n : ARENA_BLOCK;
      struct arena_block *nb = xmalloc (sizeof *nb + cap);
      nb->used = 0;
      nb->cap = cap;
      if (b != NULL && cap != ARENA_BLOCK)
        {
          nb->next = b->next;
          b->next = nb;
        }
      else
        {
          nb->next = b;
          a->blocks = nb;
        }
      b = nb;
    }
  p = b->data + b->used;
  b->used += n;
  return p;
}

static char *
arena_strndup (struct ab_json_arena *a, const void *s, size_t len)
{
  char *d = arena_alloc (a, len + 1);
  memcpy (d, s, len);
  d[len] = '\0';
  return d;
}

static void
arena_free (struct ab_json_arena *a)
{
  struct arena_block *b, *next;

  if (a == NULL)
    return;
  for (b = a->blocks; b != NULL; b = next)
    {
      next = b->next;
      free (b);
    }
  free (a);
}

/* Room for element n of an array of n (4, then the next power of two, the
   capacity implied by the count): from the arena, or malloc'ed. */
static void *
grow_in (struct ab_json_arena *a, void *p, size_t n, size_t size)
{
  void *q;

  if (n != 0 && (n < 4 || (n & (n - 1)) != 0))
    return p;
  if (a == NULL)
    return xreallocarray (p, n == 0 ? 4 : n * 2, size);
  if (n > SIZE_MAX / 2 / size)
    abort ();
  q = arena_alloc (a, (n == 0 ? 4 : n * 2) * size);
  if (n)
    memcpy (q, p, n * size);
  return q;
}

/* Append v to array a, or a member to object o whose key is already the
   node's (from its arena, or malloc'ed), unused: the only two ways an
   array or an object grows. */
static void
arr_append (struct ab_json *a, struct ab_json *v)
{
  a->u.arr.items = grow_in (a->arena, a->u.arr.items, a->u.arr.n, sizeof *a->u.arr.items);
  a->u.arr.items[a->u.arr.n++] = v;
}

static struct ab_json_member *
obj_append (struct ab_json *o, char *key, struct ab_json *val)
{
  struct ab_json_member *m;

  o->u.obj.m = grow_in (o->arena, o->u.obj.m, o->u.obj.n, sizeof *o->u.obj.m);
  m = &o->u.obj.m[o->u.obj.n++];
  m->key = key;
  m->val = val;
  m->used = false;
  return m;
}

/* The malloc'ed nodes below an arena node (added by ab_json_set). */
static void
free_own_below (struct ab_json *j)
{
  size_t i;

  if (j->type == AB_J_ARRAY)
    for (i = 0; i < j->u.arr.n; i++)
      ab_json_free (j->u.arr.items[i]);
  else if (j->type == AB_J_OBJECT)
    for (i = 0; i < j->u.obj.n; i++)
      ab_json_free (j->u.obj.m[i].val);
}

void
ab_json_free (struct ab_json *j)
{
  size_t i;

  if (j == NULL)
    return;
  if (j->arena != NULL)
    {
      free_own_below (j);
      if (j->arena->root == j)
        arena_free (j->arena);
      return;
    }
  switch (j->type)
    {
    case AB_J_ARRAY:
      for (i = 0; i < j->u.arr.n; i++)
        ab_json_free (j->u.arr.items[i]);
      free (j->u.arr.items);
      break;
    case AB_J_OBJECT:
      for (i = 0; i < j->u.obj.n; i++)
        {
          free (j->u.obj.m[i].key);
          ab_json_free (j->u.obj.m[i].val);
        }
      free (j->u.obj.m);
      break;
    default:
      break;
    }
  free (j);
}

/* The JSON path, for errors, of the value being added (pending = true: the
   value the parser is about to attach to the top frame) or of the container
   at frame `upto` (pending = false). */
static void
builder_path (struct builder *b, size_t upto, bool pending, char *buf, size_t len)
{
  size_t d, off = 0;

  buf[0] = '\0';
  for (d = 0; d < upto && off < len; d++)
    {
      struct ab_json *n = b->stack[d].node;
      bool last = d + 1 == upto;
      int w = 0;
      if (n->type == AB_J_ARRAY)
        w = snprintf (buf + off, len - off, "[%zu]", last && pending ? n->u.arr.n : n->u.arr.n - 1);
      else if (last && pending)
        w = b->stack[d].key ? snprintf (buf + off, len - off, "%s%s", off ? "." : "", b->stack[d].key) : 0;
      else if (n->u.obj.n > 0)
        w = snprintf (buf + off, len - off, "%s%s", off ? "." : "", n->u.obj.m[n->u.obj.n - 1].key);
      if (w < 0)
        break;
      off += (size_t) w;
    }
  if (off >= len)
    buf[len - 1] = '\0';
}

static int
builder_report (struct builder *b, const char *path, const char *msg)
{
  if (path[0])
    ab_error_setc (b->err, AB_EC_CONFIG, 0, "%s: %s: %s", b->name, path, msg);
  else
    ab_error_setc (b->err, AB_EC_CONFIG, 0, "%s: %s", b->name, msg);
  b->failed = true;
  return 0; /* cancels the yajl parse */
}

static int __attribute__ ((format (printf, 2, 3)))
builder_fail (struct builder *b, const char *fmt, ...)
{
  char path[512], msg[512];
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  builder_path (b, b->depth, true, path, sizeof path);
  return builder_report (b, path, msg);
}

/* A node of type t, from arena a (or malloc'ed: NULL); a string's or a
   number's text (len bytes) right after it, NUL-terminated: one
   allocation per leaf, freed with it. */
static struct ab_json *
node_alloc (struct ab_json_arena *a, enum ab_jtype t, const void *text, size_t len)
{
  bool leaf = t == AB_J_STRING || t == AB_J_NUMBER;
  size_t size = sizeof (struct ab_json) + (leaf ? len + 1 : 0);
  struct ab_json *n = a ? arena_alloc (a, size) : xmalloc (size);
  char *s;

  memset (n, 0, sizeof *n);
  n->arena = a;
  n->type = t;
  if (!leaf)
    return n;
  s = (char *)(n + 1);
  if (len)
    memcpy (s, text, len);
  s[len] = '\0';
  if (t == AB_J_NUMBER)
    n->u.num = s;
  else
    n->u.str.s = s, n->u.str.len = len;
  return n;
}

static struct ab_json *
new_node_text (struct builder *b, enum ab_jtype t, const void *text, size_t len)
{
  if (++b->nodes > b->lim->max_nodes)
    {
      builder_fail (b, "more than %zu values in the document", b->lim->max_nodes);
      return NULL;
    }
  return node_alloc (b->arena, t, text, len);
}

static struct ab_json *
new_node (struct builder *b, enum ab_jtype t)
{
  return new_node_text (b, t, NULL, 0);
}

/* Attach a new value to the container on top of the stack; takes ownership. */
static int
add_value (struct builder *b, struct ab_json *v)
{
  struct frame *top;

  if (v == NULL)
    return 0;
  if (b->depth == 0)
    {
      b->root = v;
      return 1;
    }
  top = &b->stack[b->depth - 1];
  if (top->node->type == AB_J_ARRAY)
    {
      struct ab_json *a = top->node;
      if (a->u.arr.n >= b->lim->max_items)
        {
          ab_json_free (v);
          return builder_fail (b, "array has more than %zu elements", b->lim->max_items);
        }
      arr_append (a, v);
    }
  else
    {
      struct ab_json *o = top->node;
      if (o->u.obj.n >= b->lim->max_items)
        {
          ab_json_free (v);
          return builder_fail (b, "object has more than %zu members", b->lim->max_items);
        }
      obj_append (o, ab_steal_ptr (&top->key), v);
    }
  return 1;
}

static int
check_string (struct builder *b, const unsigned char *s, size_t len, const char *what)
{
  if (len > b->lim->max_string)
    return builder_fail (b, "%s longer than %zu bytes", what, b->lim->max_string);
  if (memchr (s, '\0', len) != NULL)
    return builder_fail (b, "%s contains a NUL byte", what);
  if (!ab_utf8_valid ((const char *) s, len))
    return builder_fail (b, "%s is not valid UTF-8", what);
  return 1;
}

static int
cb_null (void *ctx)
{
  struct builder *b = ctx;
  return add_value (b, new_node (b, AB_J_NULL));
}

static int
cb_boolean (void *ctx, int v)
{
  struct builder *b = ctx;
  struct ab_json *n = new_node (b, AB_J_BOOL);
  if (n)
    n->u.b = v != 0;
  return add_value (b, n);
}

static int
cb_number (void *ctx, const char *s, size_t len)
{
  struct builder *b = ctx;
  struct ab_json *n;

  if (len > 64)
    return builder_fail (b, "number literal longer than 64 characters");
  n = new_node_text (b, AB_J_NUMBER, s, len);
  return add_value (b, n);
}

static int
cb_string (void *ctx, const unsigned char *s, size_t len)
{
  struct builder *b = ctx;
  struct ab_json *n;

  if (!check_string (b, s, len, "string"))
    return 0;
  n = new_node_text (b, AB_J_STRING, s, len);
  return add_value (b, n);
}

static int
push_container (struct builder *b, enum ab_jtype t)
{
  struct ab_json *n;

  if (b->depth >= b->lim->max_depth)
    return builder_fail (b, "nesting deeper than %zu levels", b->lim->max_depth);
  n = new_node (b, t);
  if (n == NULL || !add_value (b, n))
    return 0;
  b->stack[b->depth].node = n;
  b->stack[b->depth].key = NULL;
  b->depth++;
  return 1;
}

static int
cb_start_map (void *ctx)
{
  return push_container (ctx, AB_J_OBJECT);
}

static int
cb_map_key (void *ctx, const unsigned char *s, size_t len)
{
  struct builder *b = ctx;
  struct frame *top = &b->stack[b->depth - 1];

  /* (An error names the object, not the member before this key.) */
  top->key = NULL;
  if (!check_string (b, s, len, "key"))
    return 0;
  top->key = arena_strndup (b->arena, s, len);
  return 1;
}

static int
cmp_member_ptr (const void *a, const void *b)
{
  const struct ab_json_member *const *x = a, *const *y = b;
  return strcmp ((*x)->key, (*y)->key);
}

static int
duplicate_key (struct builder *b, const char *key)
{
  char path[512], msg[600];

  builder_path (b, b->depth - 1, false, path, sizeof path);
  snprintf (msg, sizeof msg, "duplicate key \"%.500s\"", key);
  return builder_report (b, path, msg);
}

static int
cb_end_map (void *ctx)
{
  struct builder *b = ctx;
  struct ab_json *o = b->stack[b->depth - 1].node;
  size_t i, n = o->u.obj.n;

  /* Duplicate keys: sort pointers to the members, compare neighbours.
     O(n log n), so a hostile object with 65536 members stays cheap.  A
     small object (most of a config's) is compared pair by pair, without
     the sort's allocation. */
  if (n > 1 && n <= 8)
    {
      for (i = 1; i < n; i++)
        for (size_t k = 0; k < i; k++)
          if (strcmp (o->u.obj.m[k].key, o->u.obj.m[i].key) == 0)
            return duplicate_key (b, o->u.obj.m[i].key);
    }
  else if (n > 1)
    {
      _cleanup_free_ struct ab_json_member **v = xreallocarray (NULL, n, sizeof *v);
      for (i = 0; i < n; i++)
        v[i] = &o->u.obj.m[i];
      qsort (v, n, sizeof *v, cmp_member_ptr);
      for (i = 1; i < n; i++)
        if (strcmp (v[i - 1]->key, v[i]->key) == 0)
          return duplicate_key (b, v[i]->key);
    }
  b->depth--;
  return 1;
}

static int
cb_start_array (void *ctx)
{
  return push_container (ctx, AB_J_ARRAY);
}

static int
cb_end_array (void *ctx)
{
  struct builder *b = ctx;
  b->depth--;
  return 1;
}

static const yajl_callbacks callbacks = {
  .yajl_null = cb_null,
  .yajl_boolean = cb_boolean,
  .yajl_number = cb_number,
  .yajl_string = cb_string,
  .yajl_start_map = cb_start_map,
  .yajl_map_key = cb_map_key,
  .yajl_end_map = cb_end_map,
  .yajl_start_array = cb_start_array,
  .yajl_end_array = cb_end_array,
};

struct ab_json *
ab_json_parse (const char *buf, size_t len, const struct ab_json_limits *lim, const char *name, ab_error_t *err)
{
  struct builder b = { .lim = lim, .name = name, .err = err };
  yajl_handle h;
  yajl_status st;
  size_t off;

  if (len > lim->max_bytes)
    {
      ab_error_setc (err, AB_EC_CONFIG, 0, "%s: larger than %zu bytes", name, lim->max_bytes);
      return NULL;
    }
  b.stack = xcalloc (lim->max_depth + 1, sizeof *b.stack);
  b.arena = xzalloc (sizeof *b.arena);
  h = yajl_alloc (&callbacks, NULL, &b);
  if (h == NULL)
    abort ();
  /* Every string and key is checked as UTF-8 once decoded (check_string),
     which covers the raw bytes too: yajl's own pass would be a second. */
  yajl_config (h, yajl_dont_validate_strings, 1);
  st = yajl_parse (h, (const unsigned char *) buf, len);
  /* Where it went wrong: yajl_parse counts into buf; yajl_complete_parse
     parses a buffer of its own (one space), so an error found there (a
     premature EOF, the document cut short) is at buf's end. */
  off = yajl_get_bytes_consumed (h);
  if (st == yajl_status_ok)
    {
      st = yajl_complete_parse (h);
      off = len;
    }
  if (st != yajl_status_ok && !b.failed)
    {
      unsigned char *m = yajl_get_error (h, 0, (const unsigned char *) buf, len);
      char *nl;
      /* yajl's message may span lines; keep the first. */
      if (m && (nl = strchr ((char *) m, '\n')) != NULL)
        *nl = '\0';
      ab_error_setc (err, AB_EC_CONFIG, 0, "%s: invalid JSON near byte %zu: %s", name, off,
                     m ? (const char *) m : "parse error");
      if (m)
        yajl_free_error (h, m);
      b.failed = true;
    }
  yajl_free (h);
  free (b.stack);
  if (b.failed || b.root == NULL)
    {
      if (!b.failed)
        ab_error_setc (err, AB_EC_CONFIG, 0, "%s: empty document", name);
      /* Every node so far is the arena's. */
      arena_free (b.arena);
      return NULL;
    }
  b.arena->root = b.root;
  return b.root;
}

struct ab_json *
ab_json_new (enum ab_jtype t)
{
  return node_alloc (NULL, t, "", 0);
}

struct ab_json *
ab_json_copy (const struct ab_json *j)
{
  struct ab_json *c;
  size_t i;

  if (j == NULL)
    return NULL;
  switch (j->type)
    {
    case AB_J_STRING:
      return node_alloc (NULL, AB_J_STRING, j->u.str.s, j->u.str.len);
    case AB_J_NUMBER:
      return node_alloc (NULL, AB_J_NUMBER, j->u.num, strlen (j->u.num));
    case AB_J_ARRAY:
      c = node_alloc (NULL, AB_J_ARRAY, "", 0);
      for (i = 0; i < j->u.arr.n; i++)
        arr_append (c, ab_json_copy (j->u.arr.items[i]));
      return c;
    case AB_J_OBJECT:
      c = node_alloc (NULL, AB_J_OBJECT, "", 0);
      for (i = 0; i < j->u.obj.n; i++)
        {
          const struct ab_json_member *from = &j->u.obj.m[i];
          obj_append (c, xstrdup (from->key), ab_json_copy (from->val))->used = from->used;
        }
      return c;
    default:
      c = node_alloc (NULL, j->type, "", 0);
      c->u = j->u; /* null, or a boolean */
      return c;
    }
}

struct ab_json *
ab_json_new_str (const char *str)
{
  return node_alloc (NULL, AB_J_STRING, str, strlen (str));
}

void
ab_json_set (struct ab_json *obj, const char *key, struct ab_json *val)
{
  size_t i;

  for (i = 0; i < obj->u.obj.n; i++)
    if (strcmp (obj->u.obj.m[i].key, key) == 0)
      {
        ab_json_free (obj->u.obj.m[i].val);
        obj->u.obj.m[i].val = val;
        return;
      }
  obj_append (obj, obj->arena ? arena_strndup (obj->arena, key, strlen (key)) : xstrdup (key), val);
}

