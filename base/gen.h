/* The one place agentbox writes JSON: a thin wrapper over yajl_gen.
 * Output is byte-stable (callers emit members in a fixed order), '/' is not
 * escaped, strings are validated as UTF-8 (callers escape tool output first,
 * see ab_gen_bytes). */
#ifndef AB_SPEC_GEN_H
#define AB_SPEC_GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ab_gen;

struct ab_gen *ab_gen_new (bool pretty);
/* A compact document written to fd as it is made, through a buffer of 64
   KiB, not kept (ab_gen_buf and ab_gen_steal are not for it): for one
   whose size follows a program's output.  ab_gen_finish_fd ends it with
   LF and writes what is buffered: -1 with errno when a write failed (the
   first such error; nothing is written after it). */
struct ab_gen *ab_gen_new_fd (int fd);
int ab_gen_finish_fd (struct ab_gen *g);
void ab_gen_free (struct ab_gen *g);
static inline void
ab_gen_freep (struct ab_gen **g)
{
  ab_gen_free (*g);
}
#define _cleanup_gen_ __attribute__ ((cleanup (ab_gen_freep)))

void ab_gen_obj_open (struct ab_gen *g);
void ab_gen_obj_close (struct ab_gen *g);
void ab_gen_arr_open (struct ab_gen *g);
void ab_gen_arr_close (struct ab_gen *g);
void ab_gen_key (struct ab_gen *g, const char *key);
void ab_gen_str (struct ab_gen *g, const char *s);
/* Arbitrary bytes as a JSON string: valid UTF-8 passes through, each byte of
   an invalid sequence becomes U+FFFD, so the output is always valid JSON. */
void ab_gen_bytes (struct ab_gen *g, const char *s, size_t len);
void ab_gen_i64 (struct ab_gen *g, int64_t v);
void ab_gen_u64 (struct ab_gen *g, uint64_t v);
void ab_gen_bool (struct ab_gen *g, bool v);
void ab_gen_null (struct ab_gen *g);
/* Insert already-valid JSON text (e.g. a nested document generated elsewhere). */
void ab_gen_raw_number (struct ab_gen *g, const char *text);
void ab_gen_raw (struct ab_gen *g, const char *text, size_t len);

/* Re-emit a parsed document value (base/json.h). */
struct ab_json;
void ab_gen_json (struct ab_gen *g, const struct ab_json *v);

/* Convenience: key + value. */
void ab_gen_kv_str (struct ab_gen *g, const char *key, const char *v);
void ab_gen_kv_i64 (struct ab_gen *g, const char *key, int64_t v);
void ab_gen_kv_u64 (struct ab_gen *g, const char *key, uint64_t v);
void ab_gen_kv_bool (struct ab_gen *g, const char *key, bool v);
void ab_gen_kv_strv (struct ab_gen *g, const char *key, char *const *v, size_t n);

/* The document so far; valid until the next call on g. */
const char *ab_gen_buf (struct ab_gen *g, size_t *len);
/* A copy of the document, NUL-terminated; with_newline appends "\n". */
char *ab_gen_steal (struct ab_gen *g, bool with_newline, size_t *len);

#endif
