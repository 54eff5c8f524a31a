/* The host paths the built-in sandbox shows besides /usr and /etc: the
 * host's /var/lib read-only (the package managers' and toolchains' state
 * only), and the caller's extra binds (--ro-bind, --bind SRC[:DST]).
 * Internal to runtime/sandbox/. */
#ifndef AB_RUNTIME_SANDBOX_BINDS_H
#define AB_RUNTIME_SANDBOX_BINDS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/util.h"
#include "runtime/sandbox/sandbox.h"
#include "spec/defaults.h"

/* A bind of a host directory or file the container's root may use as its
   owner: a root-owned one through the container's own mapping (every id
   shows as itself), any other owner mapped, alone, to the container's
   root, which holds no capability and could otherwise not write there (or
   read what only the owner may).  Rootless: as it is. */
void ab_sandbox_map_owner (const struct stat *st, bool rootless, struct ab_default_mount *m);

/* How many mounts ab_sandbox_host_mounts may add. */
size_t ab_sandbox_host_mounts_max (const struct ab_sandbox_opts *o);

/* The mount points the host mounts need in the read-only root's skeleton:
   the /var/lib view's are the host's, the same for every run; an extra
   bind's (own) is this run's choice. */
struct ab_sandbox_mountpoints
{
  struct ab_sandbox_mountpoint
  {
    const char *path;
    bool dir; /* else a file, for a file's bind */
    bool own;
  } *v;       /* room for ab_sandbox_host_mounts_max */
  size_t n;
};

/* Append the /var/lib view and the extra binds to mounts[*n...], the mount
   points they need to *mp, and push each extra bind's resolved source to
   *nofollow (the plan opens it refusing every symlink on its path).  The
   strings live in *keep. */
int ab_sandbox_host_mounts (const struct ab_sandbox_opts *o, struct ab_sandbox_mountpoints *mp, bool rootless,
                            struct ab_default_mount *mounts, size_t *n, struct ab_strv *nofollow,
                            struct ab_strv *keep, ab_error_t *err);

/* Make the mount points of *mp in the skeleton skel_fd.  In the shared one
   (the cache's) only the host's are made: an extra bind's that it lacks
   would show in every later sandbox (an empty directory), so then nothing
   more is done and 1 says that the run needs a skeleton of its own. */
int ab_sandbox_mountpoints_make (int skel_fd, bool shared, const struct ab_sandbox_mountpoints *mp,
                                 ab_error_t *err);

#endif
