/* Id-mapped mounts (mounts[].options idmap/ridmap, mounts[].uidMappings):
 * prepared by the parent, which owns the source in the runtime namespace, as
 * detached mount trees with MOUNT_ATTR_IDMAP, then passed to the child to
 * attach inside the rootfs. */
#ifndef AB_RUNTIME_IDMAP_H
#define AB_RUNTIME_IDMAP_H

#include <stdbool.h>
#include <sys/types.h>

#include "base/error.h"
#include "spec/model.h"
#include "spec/spec.h"

static inline bool
ab_mount_is_idmapped (const struct ab_mount *m)
{
  return m->idmap || m->uid_mappings.n > 0 || m->gid_mappings.n > 0;
}

/* Mounts whose source the parent opens: every bind.  The parent resolves
   the source once (beneath the bundle where it enters it, see
   spec/bundle-links.h) and hands the child a detached tree, so the child
   never resolves a source path; it also reaches what the container's user
   could not traverse (the generated /etc/resolv.conf in the state
   directory) and id-maps where asked. */
static inline bool
ab_mount_from_parent (const struct ab_mount *m)
{
  return ab_mount_is_bind (m) || ab_mount_is_idmapped (m) || m->from_parent || m->source_nofollow;
}

/* An O_PATH fd of the source of bind mounts[i], resolved the way its tree
   is (below): the workspace's change set records what it is. */
int ab_bind_source_open (const struct ab_bundle *b, size_t i, const struct ab_mount *m, ab_error_t *err);

/* fds[i] for every mounts[i] that ab_mount_from_parent (else -1).  The mapping is
   the mount's own uid/gidMappings (a user namespace made for it) or the
   container's user namespace (/proc/<child>/ns/user). */
int ab_idmap_prepare (const struct ab_bundle *b, const struct ab_mount *mounts, size_t n_mounts, pid_t child,
                      bool child_userns, int *fds, ab_error_t *err);

/* The root filesystem as a detached recursive tree, from one resolution of
   root.path; with idmap, id-mapped through the container's user namespace
   (dev.agentbox.rootfs.idmap).  elsewhere: the caller is in another mount
   namespace than the one the bundle was loaded in (a rootless helper's
   copy of it), where the directory is found again by the kernel's path of
   the loaded fd, with no symlink followed, and must be the same inode. */
int ab_rootfs_tree (struct ab_bundle *b, pid_t child, bool idmap, bool elsewhere, ab_error_t *err);
/* The same from dirfd, the bundle's checked root directory (b->rootfs_fd,
   named rootfs in messages), which the caller keeps: the child's way
   (plan->trees_by_child), always elsewhere. */
int ab_rootfs_tree_at (int dirfd, const char *rootfs, pid_t child, bool idmap, bool elsewhere, ab_error_t *err);

#endif
