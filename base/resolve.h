/* Resolving paths inside the container's root filesystem.
 *
 * The rootfs is attacker-controlled: a symlink in it must never redirect a
 * mount, a mkdir or a chown to the host.  Every path is resolved by the
 * kernel relative to a pinned directory fd of the root with
 * openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS): absolute symlinks and
 * ".." are clamped to that root, /proc magic links are refused.  Where
 * openat2 is missing (ENOSYS) the fallback walks component by component with
 * O_NOFOLLOW and refuses every symlink.  Callers mount onto the returned fd,
 * never onto the path. */
#ifndef AB_RUNTIME_RESOLVE_H
#define AB_RUNTIME_RESOLVE_H

#include <stdbool.h>
#include <sys/types.h>

#include "base/error.h"

/* openat2(2) of path at dirfd with open(2) flags (O_CLOEXEC added), mode
   (used with O_CREAT or O_TMPFILE) and RESOLVE_* flags; leading slashes
   dropped, "" is dirfd itself.  Retried while the kernel answers EAGAIN:
   with RESOLVE_BENEATH or RESOLVE_IN_ROOT a ".." on the way (in the path
   or a symlink) gets it whenever anything on the host renamed or mounted
   meanwhile (global seqlocks), and a retry is what the kernel asks for.  -1 with errno
   set (ENOSYS on kernels without openat2). */
int ab_openat2 (int dirfd, const char *path, int flags, mode_t mode, unsigned long long resolve);

/* Open `path` (absolute or relative, interpreted inside rootfd) with open(2)
   flags (O_CLOEXEC is added).  Returns the fd or -1 with errno set and *err
   filled. */
int ab_open_in_root (int rootfd, const char *path, int flags, mode_t mode, ab_error_t *err);

enum ab_mkpath_last
{
  AB_LAST_DIR,  /* the last component is (made) a directory */
  AB_LAST_FILE, /* the last component is (made) an empty regular file */
  AB_LAST_ANY,  /* must exist already, any type */
};

/* Resolve `path` inside rootfd, creating missing directories (0755) and the
   last component as `last` says; return an O_PATH fd of the final object. */
int ab_mkpath_in_root (int rootfd, const char *path, int last, ab_error_t *err);

/* For tests: force the per-component fallback. */
extern bool ab_resolve_force_fallback;

#endif
