/* After pivot_root: linux.maskedPaths, linux.readonlyPaths, linux.sysctl,
 * hostname and domainname. */
#ifndef AB_RUNTIME_PATHS_H
#define AB_RUNTIME_PATHS_H

#include "base/error.h"
#include "spec/model.h"

/* linux.readonlyPaths, then linux.maskedPaths (a missing path is skipped). */
int ab_paths_protect (const struct ab_strv *readonly, const struct ab_strv *masked, ab_error_t *err);
int ab_sysctl_apply (const struct ab_kvlist *sysctl, ab_error_t *err);
int ab_uts_apply (const struct ab_spec *s, ab_error_t *err);

#endif
