/* process.capabilities -> the five capability sets, with libcap.
 *
 * The child calls these in this order (docs/child-setup.md):
 *   ab_caps_drop_bounding ()   while still privileged (needs CAP_SETPCAP)
 *   ab_caps_keep_across_setuid (); setresgid/setgroups/setresuid
 *   ab_caps_apply ()           permitted, inheritable, effective, then ambient
 * A set absent from config.json is empty: nothing is kept implicitly.
 */
#ifndef AB_RUNTIME_CAPS_H
#define AB_RUNTIME_CAPS_H

#include "base/error.h"
#include "spec/model.h"

/* Drop every capability not in the bounding set (all of them when the set is
   absent or empty).  Capabilities the running kernel does not know are
   skipped. */
int ab_caps_drop_bounding (const struct ab_capabilities *c, ab_error_t *err);

/* prctl(PR_SET_KEEPCAPS, 1): the permitted set survives leaving uid 0. */
int ab_caps_keep_across_setuid (void);

/* Set permitted, inheritable and effective exactly to the configured sets and
   raise the configured ambient capabilities.  Clears the KEEPCAPS that
   ab_caps_keep_across_setuid set (execve would too). */
int ab_caps_apply (const struct ab_capabilities *c, ab_error_t *err);

/* The highest capability number the running kernel knows
   (/proc/sys/kernel/cap_last_cap), cached. */
int ab_caps_last_cap (void);

/* The capabilities of `mask` numbered above `last` (a kernel's
   cap_last_cap): their names (CAP_..., or "capability N") in *names, to be
   freed with free(); returns how many.  They cannot be granted here. */
size_t ab_caps_beyond_kernel (uint64_t mask, int last, char ***names);

#endif
