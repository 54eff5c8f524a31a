/* Landlock, the mechanism: probe the kernel's ABI, fit a ruleset to it
 * (every right it lacks named), build the ruleset from (path, rights) and
 * (port, rights) entries, and restrict the calling process.
 *
 *   ab_landlock_abi ─▶ ab_landlock_fit ─▶ ab_landlock_build ─▶ ab_landlock_restrict
 *   (once per process)  (parent: dropped   (child, in its final    (child, before
 *                        rights to degraded) root: opens the paths)   seccomp)
 *
 * What the rules are is the plan's (runtime/plan/landlock.h); this file
 * knows nothing of mounts or policies. */
#ifndef AB_RUNTIME_LANDLOCK_H
#define AB_RUNTIME_LANDLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/util.h"
#include "runtime/plan/landlock.h"

/* The kernel's landlock ABI, probed once per process
   (landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)): 0 when
   landlock cannot be used, and then *why (if not NULL) says why. */
unsigned ab_landlock_abi (const char **why);

/* `want` as kernel ABI `abi` can enforce it, in *out: handled rights and
   rules cut to what the ABI knows, rules left with no right dropped.  Every
   right given up is one line in *dropped ("landlock: ..."), for the
   record's `degraded`.  abi 0: nothing is enforced (out->handled all 0).
   A strict ruleset (!best_effort) that would lose anything is refused:
   -1, *err names the rights. */
int ab_landlock_fit (const struct ab_ll_ruleset *want, unsigned abi, struct ab_ll_ruleset *out,
                     struct ab_strv *dropped, ab_error_t *err);

/* The plan's ruleset fitted to this kernel (ab_landlock_abi): *fit is
   empty when the plan asks for none or the kernel has no landlock; every
   right given up is a line of *degraded.  A strict policy the kernel
   cannot honour is refused, naming the annotation. */
int ab_landlock_fit_kernel (const struct ab_ll_ruleset *want, struct ab_ll_ruleset *fit,
                            struct ab_strv *degraded, ab_error_t *err);

/* Whether a fitted ruleset restricts anything. */
bool ab_landlock_enforces (const struct ab_ll_ruleset *rs);

/* Build the kernel ruleset of a fitted `rs` (ABI `abi`): each path opened
   O_PATH beneath rootfd (-1: the caller's "/") with openat2 (RESOLVE_IN_ROOT, no magic links;
   RESOLVE_NO_SYMLINKS for nofollow rules) and added.  Returns the ruleset
   fd, close-on-exec and numbered at least min_fd (so that it cannot land
   among fds the program is to inherit), or -1 with *err naming the rule. */
int ab_landlock_build (const struct ab_ll_ruleset *rs, unsigned abi, int rootfd, int min_fd, ab_error_t *err);

/* landlock_restrict_self on the ruleset fd, which is closed.  Needs
   no_new_privs or CAP_SYS_ADMIN in the caller's user namespace. */
int ab_landlock_restrict (int fd, ab_error_t *err);

#endif
