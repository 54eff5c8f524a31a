/* process.apparmorProfile, process.selinuxLabel, linux.mountLabel: applied
 * when the host runs that LSM, refused with a clear error otherwise. */
#ifndef AB_RUNTIME_LSM_H
#define AB_RUNTIME_LSM_H

#include <stdbool.h>

#include "base/error.h"
#include "spec/model.h"

/* Parent, before clone: refuse what the host cannot do for the process p
   (create's, or an exec's with its --apparmor and --process-label). */
int ab_lsm_check (const struct ab_process *p, ab_error_t *err);

/* Child, right before execve: set the exec label / profile. */
int ab_lsm_apply_exec (const struct ab_process *p, ab_error_t *err);

#endif
