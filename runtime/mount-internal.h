/* The mount primitives of runtime/mount-fs.c, which runtime/mount.c and
 * runtime/mount-cgroup.c build on. */
#ifndef AB_RUNTIME_MOUNT_INTERNAL_H
#define AB_RUNTIME_MOUNT_INTERNAL_H

#include "base/error.h"
#include "runtime/mount.h"
#include "spec/model.h"

/* A new filesystem instance as a detached mount fd (fsopen, fsconfig,
   fsmount with the MS_* flags as mount attributes). */
int ab_mount_make_fs (const char *type, const char *source, unsigned long ms, const char *data, const char *what,
                      ab_error_t *err);
/* The mount point of m inside the root (ab_mkpath_in_root, last: what
   to make of a missing last component), refused where it resolved into a
   procfs other than as /proc itself or a file lxcfs stands in for. */
int ab_mount_target (struct ab_mount_ctx *ctx, const struct ab_mount *m, int last, const char *what,
                     ab_error_t *err);
/* A filesystem mount of mounts[] onto its destination inside the root. */
int ab_mount_fs (struct ab_mount_ctx *ctx, const struct ab_mount *m, const char *what, ab_error_t *err);
/* m's propagation option on the mount target_fd refers to (none: nothing). */
int ab_mount_set_propagation (int target_fd, const struct ab_mount *m, const char *what, ab_error_t *err);

/* Set ab_fd_paths_ok (runtime/mount.h) for the /proc the process sees. */
void ab_fd_paths_check (void);
/* MS_SHARED, MS_SLAVE, ... for an enum ab_propagation (0: none). */
unsigned long ab_mount_propagation_flag (int p);
/* m's flags and attributes on the mount mfd (apply_top: on its top too). */
int ab_mount_set_attrs (int mfd, const struct ab_mount *m, bool apply_top, const char *what, ab_error_t *err);
/* m's propagation on its destination inside the root. */
int ab_mount_set_propagation_at (struct ab_mount_ctx *ctx, const struct ab_mount *m, const char *what,
                                 ab_error_t *err);
/* The name of dest inside the last fresh tmpfs (ctx->fresh), or NULL when
   dest is not below it. */
const char *ab_mount_fresh_child (const struct ab_mount_ctx *ctx, const char *dest);

/* A "cgroup" or "cgroup2" mount (runtime/mount-cgroup.c). */
int ab_mount_cgroup (struct ab_mount_ctx *ctx, const struct ab_mount *m, const char *what, ab_error_t *err);

#endif
