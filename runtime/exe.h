/* /proc/self/exe protection (CVE-2019-5736): a process inside the container
 * must never be able to overwrite the agentbox binary through
 * /proc/<pid>/exe of an agentbox process that is (or was) in its
 * namespaces.  Commands that start container processes run from a sealed
 * memfd copy of the binary: writes to it fail, and the host file is never
 * what /proc/<pid>/exe points to. */
#ifndef AB_RUNTIME_EXE_H
#define AB_RUNTIME_EXE_H

#include "runtime/error.h"

/* Re-execute from a sealed memfd copy unless already running from one.
   Returns 0 when already sealed; on success of the re-exec it does not
   return; -1 on failure. */
int ab_exe_ensure_sealed (char **argv, ab_error_t *err);

#endif
