/* /dev inside the container: the OCI default devices, linux.devices, the
 * standard symlinks, /dev/ptmx.  Nothing of the host's /dev appears except
 * the nodes bound here on purpose. */
#ifndef AB_RUNTIME_DEV_H
#define AB_RUNTIME_DEV_H

#include <stdbool.h>

#include "base/error.h"
#include "spec/model.h"

/* Before pivot_root, against the pinned rootfs fd.  In a user namespace
   mknod is not permitted: nodes are bind-mounted from the host's same node
   (verified to be the requested type and major:minor). */
int ab_dev_setup (const struct ab_spec *s, int rootfd, bool userns, ab_error_t *err);

#endif
