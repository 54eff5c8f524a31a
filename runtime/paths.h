/* After pivot_root: linux.maskedPaths, linux.readonlyPaths, linux.sysctl,
 * hostname and domainname. */
#ifndef AB_RUNTIME_PATHS_H
#define AB_RUNTIME_PATHS_H

#include "base/error.h"
#include "spec/model.h"

/* linux.readonlyPaths, then linux.maskedPaths (a missing path is skipped). */
int ab_paths_protect (const struct ab_strv *readonly, const struct ab_strv *masked, ab_error_t *err);
/* The runtime's writes to the container's /proc (sysctls, LSM labels), so
   that no mount can take them elsewhere (CVE-2025-52881: a bind or tmpfs
   over /proc/sys/... or /proc/self/attr/..., put there by a hostile
   image's symlink or by a container racing on a shared mount, would
   receive a write meant for the kernel, and the setting would silently
   not be made).  ab_proc_root opens the /proc the process sees and checks
   it is the root of a procfs; ab_proc_open resolves rel beneath it
   crossing no mount (RESOLVE_NO_XDEV: a mount anywhere on the way is an
   error, EXDEV, naming the path) and following no magic link.  procfs's
   own symlinks (self, thread-self) stay inside it and are followed. */
int ab_proc_root (ab_error_t *err);
int ab_proc_open (int procfd, const char *rel, int flags, ab_error_t *err);
int ab_sysctl_apply (const struct ab_kvlist *sysctl, ab_error_t *err);
int ab_uts_apply (const struct ab_spec *s, ab_error_t *err);

#endif
