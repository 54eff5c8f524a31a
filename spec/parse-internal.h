/* Helpers shared by the files of the config.json parser: parse.c (the
 * document, process, root, mounts, hooks, annotations), parse-linux.c (the
 * `linux` object), parse-resources.c (linux.resources) and parse-util.c
 * (these helpers).  Not part of any public interface.
 *
 * Every helper follows the accessor convention of base/json.h: it returns
 * 1 when the member was present, 0 when it was absent (or null, for an
 * optional member), -1 after reporting "config.json: <path>: <reason>".
 * On error the path is left as it was at the failure: the caller aborts. */
#ifndef AB_SPEC_PARSE_INTERNAL_H
#define AB_SPEC_PARSE_INTERNAL_H

#include "base/json.h"
#include "base/text.h"
#include "spec/model.h"

/* Device numbers as the kernel encodes them in dev_t (12-bit major,
   20-bit minor): mknod(2) and the device cgroups cannot express more, and
   a larger number would be truncated into another device's. */
#define AB_DEV_MAJOR_MAX 4095
#define AB_DEV_MINOR_MAX 1048575

/* Values in messages are quoted with ab_quote (base/text.h): a hostile
   config.json cannot forge or hide lines on the terminal or in the log
   that shows the error. */
/* Escape, in place, what ab_quote escapes (without quoting): for a
   message or a path built from the document elsewhere. */
void ab_parse_sanitize (char *s, size_t size);
/* Whether s holds nothing ab_parse_sanitize would change. */
bool ab_parse_is_safe (const char *s);
/* Push an object key that came from the document (a map key) on the path,
   quoted when it holds characters that must not reach a terminal. */
size_t ab_parse_push_user_key (struct ab_jctx *c, const char *key);

/* Enter element i of array a, which must be an object; pushes "[i]". */
int ab_parse_enter_item (struct ab_jctx *c, struct ab_json *a, size_t i, struct ab_json **out, size_t *mark);

int ab_parse_get_u32 (struct ab_jctx *c, struct ab_json *o, const char *key, int required, uint32_t *out);
int ab_parse_get_i32 (struct ab_jctx *c, struct ab_json *o, const char *key, int required, int32_t *out);
int ab_parse_get_opt_i64 (struct ab_jctx *c, struct ab_json *o, const char *key, int64_t min, int64_t max,
                          ab_opt_i64 *out);
int ab_parse_get_opt_u64 (struct ab_jctx *c, struct ab_json *o, const char *key, uint64_t max,
                          ab_opt_u64 *out);
int ab_parse_get_opt_bool (struct ab_jctx *c, struct ab_json *o, const char *key, ab_opt_bool *out);

/* Member `key` is an optional string holding such a path. */
int ab_parse_get_path (struct ab_jctx *c, struct ab_json *o, const char *key, int required, char **out);
/* Member `key` is an optional array of such paths. */
int ab_parse_get_paths (struct ab_jctx *c, struct ab_json *o, const char *key, struct ab_strv *out);
/* The value at the current path is a CPU or node list: digits, ',', '-'
   and spaces, as the schema's "^[0-9, -]*$". */
int ab_parse_check_cpu_list (struct ab_jctx *c, const char *list);

/* Member `key` is an optional array of names from a table: lookup maps
   each to a bit (negative when unknown: "unknown <what> \"x\""), ORed
   into *bits. */
int ab_parse_flag_names (struct ab_jctx *c, struct ab_json *o, const char *key, const char *what,
                         int64_t (*lookup) (const char *), uint64_t *bits);

/* Member `key` is an optional CPU or node list (ab_parse_check_cpu_list). */
int ab_parse_get_cpu_list (struct ab_jctx *c, struct ab_json *o, const char *key, char **out);
/* Members "major" and "minor" of o: device numbers the kernel's dev_t can
   hold (12-bit major, 20-bit minor). */
int ab_parse_dev_numbers (struct ab_jctx *c, struct ab_json *o, int required, int64_t *major, int64_t *minor);
/* The value at the current path is a network interface name the kernel
   accepts (dev_valid_name): 1 to 15 bytes, not "." or "..", no '/', ':'
   or white space. */
int ab_parse_check_ifname (struct ab_jctx *c, const char *name);

/* A map of strings (annotations, sysctl, unified) in document order.
   check_key, when not NULL, vets each non-empty key with the key pushed on
   the path. */
int ab_parse_string_map (struct ab_jctx *c, struct ab_json *o, const char *key, struct ab_kvlist *out,
                         int (*check_key) (struct ab_jctx *c, const char *key));

/* The `linux` object (parse-linux.c) and its `resources` (parse-resources.c). */
int ab_parse_linux (struct ab_jctx *c, struct ab_json *root, struct ab_spec *s);
void ab_linux_free (struct ab_linux *l);
int ab_parse_resources (struct ab_jctx *c, struct ab_json *lo, struct ab_linux *l);
/* The static rules of a LinuxResources value (validate.c); its path is pushed. */
int ab_resources_check (struct ab_jctx *c, const struct ab_resources *r);

#endif
