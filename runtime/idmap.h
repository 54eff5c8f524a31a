/* Id-mapped mounts (mounts[].options idmap/ridmap, mounts[].uidMappings):
 * prepared by the parent, which owns the source in the runtime namespace, as
 * detached mount trees with MOUNT_ATTR_IDMAP, then passed to the child to
 * attach inside the rootfs. */
#ifndef AB_RUNTIME_IDMAP_H
#define AB_RUNTIME_IDMAP_H

#include <stdbool.h>
#include <sys/types.h>

#include "runtime/error.h"
#include "spec/model.h"

static inline bool
ab_mount_is_idmapped (const struct ab_mount *m)
{
  return m->idmap || m->uid_mappings.n > 0 || m->gid_mappings.n > 0;
}

/* Mounts whose source the parent opens: id-mapped ones, and those the
   runtime added from its own state directory (which the container's user
   cannot traverse), e.g. the generated /etc/resolv.conf. */
static inline bool
ab_mount_from_parent (const struct ab_mount *m)
{
  return ab_mount_is_idmapped (m) || m->from_parent || m->source_nofollow;
}

/* fds[i] for every mounts[i] that ab_mount_from_parent (else -1).  The mapping is
   the mount's own uid/gidMappings (a user namespace made for it) or the
   container's user namespace (/proc/<child>/ns/user). */
int ab_idmap_prepare (const struct ab_spec *s, const char *bundle, pid_t child, bool child_userns, int *fds,
                      ab_error_t *err);

#endif
