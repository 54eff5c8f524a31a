/* A bounded JSON document model for hostile input, built with yajl's
 * callback parser, and typed accessors that report errors with the JSON
 * path of the offending value:
 *
 *     config.json: linux.namespaces[3].type: unknown namespace "nett"
 *
 * The parser enforces limits (size, depth, string and array lengths, node
 * count), rejects duplicate keys, invalid UTF-8 and NUL bytes in strings, and
 * keeps numbers as their source text so that each typed accessor can check
 * the range of its own C type.  Every object member records whether the model
 * consumed it, so unknown properties can be listed afterwards.
 */
#ifndef AB_SPEC_JSON_H
#define AB_SPEC_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/text.h"
#include "base/util.h"

enum ab_jtype
{
  AB_J_NULL,
  AB_J_BOOL,
  AB_J_NUMBER,
  AB_J_STRING,
  AB_J_ARRAY,
  AB_J_OBJECT,
};

struct ab_json;

struct ab_json_member
{
  char *key;
  struct ab_json *val;
  bool used;
};

struct ab_json_arena;

struct ab_json
{
  enum ab_jtype type;
  /* A parsed document's nodes, texts, arrays and keys live in one arena,
     freed with its root; NULL: a node of its own (ab_json_new). */
  struct ab_json_arena *arena;
  union
  {
    bool b;
    char *num; /* the number's JSON text */
    struct
    {
      char *s;
      size_t len;
    } str;
    struct
    {
      struct ab_json **items;
      size_t n;
    } arr;
    struct
    {
      struct ab_json_member *m;
      size_t n;
    } obj;
  } u;
};

struct ab_json_limits
{
  size_t max_bytes;   /* whole document */
  size_t max_depth;   /* nesting of arrays and objects */
  size_t max_string;  /* bytes in one string or key */
  size_t max_items;   /* elements of one array or members of one object */
  size_t max_nodes;   /* values in the whole document */
};
extern const struct ab_json_limits ab_json_config_limits;

/* Parse a whole document.  `name` prefixes error messages ("config.json"). */
struct ab_json *ab_json_parse (const char *buf, size_t len, const struct ab_json_limits *lim, const char *name,
                               ab_error_t *err);
void ab_json_free (struct ab_json *j);
static inline void
ab_json_freep (struct ab_json **j)
{
  ab_json_free (*j);
}
#define _cleanup_json_ _cleanup_ (ab_json_freep)

const char *ab_jtype_name (enum ab_jtype t);

/* Path-tracking context for typed extraction. */
struct ab_jctx
{
  const char *file; /* "config.json" */
  char path[1024];
  size_t len;
  ab_error_t *err;
};
void ab_jctx_init (struct ab_jctx *c, const char *file, ab_error_t *err);
size_t ab_jpush_key (struct ab_jctx *c, const char *key);
size_t ab_jpush_index (struct ab_jctx *c, size_t i);
void ab_jpop (struct ab_jctx *c, size_t mark);
/* "<file>: <path>: <message>", class AB_EC_CONFIG; returns -1. */
int ab_jerr (struct ab_jctx *c, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
/* The same at <path>.<key> (key NULL: at the path); the key stays pushed,
   as the message is all that is left to use. */
int ab_jerr_at (struct ab_jctx *c, const char *key, const char *fmt, ...) __attribute__ ((format (printf, 3, 4)));

/* Find a member and mark it consumed; NULL when absent. */
struct ab_json *ab_json_member (struct ab_json *obj, const char *key);

enum
{
  AB_OPTIONAL = 0,
  AB_REQUIRED = 1
};

/* Enter member `key` of `obj`, which must have type `type`.  Returns 1 and
   pushes the key on the path (undo with ab_jpop(c, *mark)), 0 when the member
   is absent or null and optional, -1 on error. */
int ab_jenter (struct ab_jctx *c, struct ab_json *obj, const char *key, enum ab_jtype type, int required,
               struct ab_json **out, size_t *mark);

/* Typed values of the node at the current path. */
int ab_jval_str (struct ab_jctx *c, struct ab_json *v, char **out);
int ab_jval_u64 (struct ab_jctx *c, struct ab_json *v, uint64_t max, uint64_t *out);

/* Typed members: 1 when present, 0 when absent (and optional), -1 on error. */
int ab_jget_str (struct ab_jctx *c, struct ab_json *obj, const char *key, int required, char **out);
int ab_jget_bool (struct ab_jctx *c, struct ab_json *obj, const char *key, int required, bool *out);
int ab_jget_u64 (struct ab_jctx *c, struct ab_json *obj, const char *key, int required, uint64_t max,
                 uint64_t *out);
int ab_jget_i64 (struct ab_jctx *c, struct ab_json *obj, const char *key, int required, int64_t min, int64_t max,
                 int64_t *out);
int ab_jget_strv (struct ab_jctx *c, struct ab_json *obj, const char *key, int required, struct ab_strv *out);

/* Paths ("process.foo", "linux.bar[2].baz") of object members that were
   never consumed, appended to `out`, in document order. */
void ab_json_collect_unused (struct ab_json *j, const char *prefix, struct ab_strv *out);

/* Building and editing documents. */
struct ab_json *ab_json_new (enum ab_jtype t);
/* A deep copy of j made of nodes of its own (a parsed document's nodes
   live and go with its root: a part kept beyond it is copied). */
struct ab_json *ab_json_copy (const struct ab_json *j);
struct ab_json *ab_json_new_str (const char *s);
/* Set obj[key] = val (replacing and freeing an existing value); takes val. */
void ab_json_set (struct ab_json *obj, const char *key, struct ab_json *val);

#endif
