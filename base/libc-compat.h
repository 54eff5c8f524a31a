/* What glibc 2.36 declares and another C library may not: musl 1.2 has no
 * wrappers for the new mount API, statx, renameat2 or getdents64 of its own
 * type, no errno or signal abbreviations, no posix_spawn closefrom action
 * and no mallopt, and words its strerror texts its own way (libc-compat.c
 * has glibc's, so that messages read the same in both builds).  config.h includes this header where configure found a C
 * library other than glibc (scripts/static-musl.sh builds with musl); under
 * glibc nothing here is compiled.  The constants and structures are the
 * kernel's ABI (include/uapi/linux/{mount,stat,fs}.h). */
#ifndef AB_LIBC_COMPAT_H
#define AB_LIBC_COMPAT_H

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/kernel-compat.h"

typedef int __rlimit_resource_t;

/* the new mount API: the kernel's header has the structure and constants */
#include <linux/mount.h>
int open_tree (int dfd, const char *path, unsigned flags);
int move_mount (int from_dfd, const char *from, int to_dfd, const char *to, unsigned flags);
int fsopen (const char *fsname, unsigned flags);
int fsconfig (int fd, unsigned cmd, const char *key, const void *value, int aux);
int fsmount (int fd, unsigned flags, unsigned attr_flags);
int mount_setattr (int dfd, const char *path, unsigned flags, struct mount_attr *attr, size_t size);

/* statx */
#ifndef STATX_TYPE
struct statx_timestamp
{
  int64_t tv_sec;
  uint32_t tv_nsec;
  int32_t __reserved;
};
struct statx
{
  uint32_t stx_mask;
  uint32_t stx_blksize;
  uint64_t stx_attributes;
  uint32_t stx_nlink;
  uint32_t stx_uid;
  uint32_t stx_gid;
  uint16_t stx_mode;
  uint16_t __spare0[1];
  uint64_t stx_ino;
  uint64_t stx_size;
  uint64_t stx_blocks;
  uint64_t stx_attributes_mask;
  struct statx_timestamp stx_atime, stx_btime, stx_ctime, stx_mtime;
  uint32_t stx_rdev_major;
  uint32_t stx_rdev_minor;
  uint32_t stx_dev_major;
  uint32_t stx_dev_minor;
  uint64_t stx_mnt_id;
  uint32_t stx_dio_mem_align;
  uint32_t stx_dio_offset_align;
  uint64_t __spare3[12];
};
#define STATX_TYPE 0x00000001U
#define STATX_MODE 0x00000002U
#define STATX_NLINK 0x00000004U
#define STATX_UID 0x00000008U
#define STATX_GID 0x00000010U
#define STATX_INO 0x00000100U
#define STATX_SIZE 0x00000200U
#define STATX_BASIC_STATS 0x000007ffU
#define STATX_MNT_ID 0x00001000U
#define STATX_ATTR_MOUNT_ROOT 0x00002000
int statx (int dfd, const char *path, int flags, unsigned mask, struct statx *buf);
#endif

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#define RENAME_EXCHANGE (1 << 1)
int renameat2 (int olddfd, const char *oldpath, int newdfd, const char *newpath, unsigned flags);
#endif

/* musl's getdents64 is its getdents, of struct dirent */
#undef getdents64
#define getdents64 ab_getdents64
ssize_t ab_getdents64 (int fd, void *buf, size_t len);

const char *strerrorname_np (int errnum);
const char *sigabbrev_np (int sig);
int posix_spawn_file_actions_addclosefrom_np (posix_spawn_file_actions_t *fa, int from);

/* one malloc arena is musl's only way */
#define M_ARENA_MAX (-8)
static inline int
mallopt (int param, int value)
{
  (void)param;
  (void)value;
  return 1;
}

#endif
