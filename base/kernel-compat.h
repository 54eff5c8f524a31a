/* Kernel constants newer than the oldest C library agentbox builds with
 * (glibc 2.36 has them; older headers do not).  One place, so that the
 * runtime, the spec tables and the audit agree on every value. */
#ifndef AB_KERNEL_COMPAT_H
#define AB_KERNEL_COMPAT_H

#include <sched.h>
#include <sys/mount.h>

#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x00000001
#define MOUNT_ATTR_NOSUID 0x00000002
#define MOUNT_ATTR_NODEV 0x00000004
#define MOUNT_ATTR_NOEXEC 0x00000008
#define MOUNT_ATTR__ATIME 0x00000070
#define MOUNT_ATTR_RELATIME 0x00000000
#define MOUNT_ATTR_NOATIME 0x00000010
#define MOUNT_ATTR_STRICTATIME 0x00000020
#define MOUNT_ATTR_NODIRATIME 0x00000080
#define MOUNT_ATTR_NOSYMFOLLOW 0x00200000
#endif
#ifndef MS_NOSYMFOLLOW
#define MS_NOSYMFOLLOW 256
#endif
/* The inode number of a procfs's root directory (fs/proc/root.c): not in
   the uapi headers, and the same on every kernel. */
#ifndef PROC_ROOT_INO
#define PROC_ROOT_INO 1
#endif
/* statx's 64-bit mount id and statmount(2) (Linux 6.8). */
#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x00004000U
#endif
#ifndef SYS_statmount
#define SYS_statmount 457
#endif
#ifndef STATMOUNT_SB_BASIC
#define STATMOUNT_SB_BASIC 0x00000001U
#define STATMOUNT_MNT_ROOT 0x00000008U
#define STATMOUNT_MNT_POINT 0x00000010U
#endif
#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

#endif
