/* The container's mount tree: propagation, the rootfs bind, `mounts` in
 * order (onto fds resolved inside the rootfs), pivot_root, the read-only
 * root.  Runs in the child, in its own mount namespace. */
#ifndef AB_RUNTIME_MOUNT_H
#define AB_RUNTIME_MOUNT_H

#include <stdbool.h>

#include "runtime/cgroup/cgroup.h"
#include "base/error.h"
#include "spec/model.h"

struct ab_mount_ctx
{
  const struct ab_spec *spec;    /* linux, root */
  const struct ab_mount *mounts; /* the plan's: the model's, then the derived ones */
  size_t n_mounts;
  const char *bundle;   /* relative bind sources are relative to it */
  const char *rootfs;   /* absolute host path */
  int rootfd;           /* O_PATH fd of the rootfs mount, set by ab_rootfs_prepare */
  int root_tree;        /* the detached tree of root.path the parent made (taken by ab_rootfs_prepare) */
  bool userns;          /* we are in a new user namespace */
  bool cgroupns;        /* we are in a cgroup namespace of the container (new or joined) */
  const struct ab_cgroup *cg; /* the container's cgroup (for a "cgroup" mount), or NULL */
  const int *idmap_fds; /* per mount: prepared id-mapped tree fd or -1 (may be NULL) */
  const char *fresh;    /* destination of the last tmpfs mounted here, still on top (or NULL) */
  int fresh_fd;         /* its root, opened when first needed (-1) */
};

/* Make "/" slave (or private, per rootfsPropagation) recursively, attach
   the parent's tree of the rootfs at its path and make it ctx->rootfd. */
int ab_rootfs_prepare (struct ab_mount_ctx *ctx, ab_error_t *err);

/* Perform linux `mounts` in order.  Error messages name mounts[i]. */
int ab_mounts_apply (struct ab_mount_ctx *ctx, ab_error_t *err);

/* pivot_root into ctx->rootfd and detach the old root. */
int ab_pivot_root (struct ab_mount_ctx *ctx, ab_error_t *err);

/* After pivot_root: rootfsPropagation on "/", and root.readonly. */
int ab_root_finalize (struct ab_mount_ctx *ctx, ab_error_t *err);

/* Whether mount(2) may name an fd as /proc/self/fd/N: set by
   ab_fd_paths_check, which the child calls before its first mount and
   again after pivot_root. */
extern bool ab_fd_paths_ok;

/* mount(2) of source (a path, NULL for a new filesystem) onto the object
   target_fd refers to; -1 with errno if it failed or !ab_fd_paths_ok
   (ENOSYS), for the caller to take the fd-based way.  source_fd >= 0
   names the source by its fd instead. */
int ab_mount_on_fd (const char *source, int source_fd, int target_fd, const char *type, unsigned long flags,
                    const char *data);

/* Low-level: attach a detached mount fd (fsmount/open_tree) onto target_fd. */
int ab_move_mount_fd (int from_fd, int target_fd, const char *what, ab_error_t *err);

/* The kernel explains fsconfig failures on the fs context fd: append its
   message to err's (" (kernel: ...)"). */
void ab_fs_kernel_message (int fsfd, ab_error_t *err);

#endif
