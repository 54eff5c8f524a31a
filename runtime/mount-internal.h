/* Internals of runtime/mount.c shared with runtime/mount-cgroup.c. */
#ifndef AB_RUNTIME_MOUNT_INTERNAL_H
#define AB_RUNTIME_MOUNT_INTERNAL_H

#include "runtime/error.h"
#include "runtime/mount.h"
#include "spec/model.h"

/* A new filesystem instance as a detached mount fd (fsopen, fsconfig,
   fsmount with the MS_* flags as mount attributes). */
int ab_mount_make_fs (const char *type, const char *source, unsigned long ms, const char *data, const char *what,
                      ab_error_t *err);
/* A filesystem mount of mounts[] onto its destination inside the root. */
int ab_mount_fs (struct ab_mount_ctx *ctx, const struct ab_mount *m, const char *what, ab_error_t *err);
/* m's propagation option on the mount target_fd refers to (none: nothing). */
int ab_mount_set_propagation (int target_fd, const struct ab_mount *m, const char *what, ab_error_t *err);

/* A "cgroup" or "cgroup2" mount (runtime/mount-cgroup.c). */
int ab_mount_cgroup (struct ab_mount_ctx *ctx, const struct ab_mount *m, const char *what, ab_error_t *err);

#endif
