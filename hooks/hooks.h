/* OCI hooks (config.md "POSIX-platform Hooks"): each runs with the state
 * JSON on stdin, its own args and env (nothing inherited), in the namespace
 * of the process calling ab_hooks_run, with a timeout. */
#ifndef AB_HOOKS_HOOKS_H
#define AB_HOOKS_HOOKS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "spec/model.h"
#include "spec/tables.h" /* ab_hook_kind_name */

/* A hook without `timeout` may run this long before it is killed. */
#define AB_HOOK_DEFAULT_TIMEOUT 120

/* prestart, createRuntime or createContainer hooks: the setup waits for
   them between the mounts and pivot_root (runtime/child.c, create.c). */
static inline bool
ab_hooks_at_creation (const struct ab_spec *s)
{
  return s->hooks[AB_HOOK_PRESTART].n || s->hooks[AB_HOOK_CREATE_RUNTIME].n
         || s->hooks[AB_HOOK_CREATE_CONTAINER].n;
}

/* Run hooks[kind] in order.  The first failing hook stops the run: non-zero
   exit, death by a signal, or timeout (its whole process group is killed).
   The error names hooks.<kind>[i], the path, and the last line the hook
   wrote to stderr (class AB_EC_HOOK). */
int ab_hooks_run (const struct ab_spec *s, int kind, const char *state_json, size_t state_len, ab_error_t *err);

#endif
