/* /proc/self/exe protection (CVE-2019-5736): a process inside the container
 * must never be able to overwrite the agentbox binary through
 * /proc/<pid>/exe of an agentbox process that is (or was) in its
 * namespaces.  Commands that start container processes re-execute
 * themselves from a read-only overlay of the binary's directory that is
 * mounted nowhere (no copy; its superblock cannot be made writable), or,
 * where no overlay can be mounted, from a sealed memfd copy: writes fail,
 * and the host file is never what /proc/<pid>/exe points to. */
#ifndef AB_RUNTIME_EXE_H
#define AB_RUNTIME_EXE_H

/* AB_EXE_PATH_ENV (base/util.h): where the binary that was started is. */

#include <stdbool.h>

#include "base/error.h"
#include "spec/model.h"

/* Re-execute from the read-only overlay (else a sealed memfd copy) unless
   already running from one.
   Returns 0 when already sealed; on success of the re-exec it does not
   return; -1 on failure. */
int ab_exe_ensure_sealed (char **argv, ab_error_t *err);

/* Whether this process already runs from the overlay or the sealed copy
   (then ab_exe_ensure_sealed returns at once). */
bool ab_exe_protected (void);

/* ab_exe_ensure_sealed unless ab_exe_unwritable_from: what create, run and
   exec call once they know the container's user namespace (NULL maps: no
   new user namespace, always sealed). */
int ab_exe_seal_unless_safe (char **argv, const struct ab_idmaps *uids, const struct ab_idmaps *gids,
                             ab_error_t *err);

#endif
