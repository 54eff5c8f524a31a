/* What runtime/seccomp.c (libseccomp's layouts, the install) offers
 * runtime/seccomp-ranges.c (the ranges layout, and the choice of a
 * layout): one program, two files, calls one way. */
#ifndef AB_RUNTIME_SECCOMP_INTERNAL_H
#define AB_RUNTIME_SECCOMP_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "runtime/seccomp.h"
#include "spec/model.h"

/* The kernel's limit on one program (BPF_MAXINSNS). */
#define AB_SECCOMP_MAX_INSNS 4096

/* Native syscall numbers below AB_SECCOMP_NR_SET_MAX, as a bitmap. */
#define AB_SECCOMP_NR_SET_MAX 1024
struct ab_nr_set
{
  uint64_t bits[AB_SECCOMP_NR_SET_MAX / 64];
};
bool ab_nr_set_has (const struct ab_nr_set *set, int nr); /* false for a NULL set */
void ab_nr_set_add (struct ab_nr_set *set, int nr);

/* One action of the model in libseccomp's encoding; `path` names the
   object and `what` its member, for errors. */
int ab_seccomp_map_action (int action, bool errno_set, uint32_t errno_ret, const char *path, const char *what,
                           const char *errno_what, uint32_t *out, ab_error_t *err);
/* The libseccomp token of an architecture's name (SCMP_ARCH_X86_64), 0
   if unknown to this libseccomp. */
uint32_t ab_seccomp_arch_token (const char *name);
/* libseccomp's program of the profile in `layout`, without a rule for
   any syscall in `exclude` (NULL: none). */
int ab_seccomp_compile_libseccomp (const struct ab_seccomp *s, enum ab_seccomp_layout layout,
                                   const struct ab_nr_set *exclude, struct ab_seccomp_prog *out,
                                   ab_error_t *err);

#endif
