/* agentbox's on-disk cache (runtime/seccomp-cache.c): derived data that is
 * expensive to make and safe to lose, kept out of the state root.
 *
 *   base   $AGENTBOX_CACHE_DIR if set ("" turns caching off), else
 *          /var/cache/agentbox for root, else $XDG_CACHE_HOME/agentbox
 *          ($HOME/.cache/agentbox)
 *   <base>/seccomp/         compiled seccomp programs (0700, entries 0600)
 *   <base>/sandbox-rootfs/  the mount-point skeleton of `run --default`,
 *                           shared: only what every sandbox shows
 *
 * Everything read from it is checked before use and anything wrong is a
 * miss: a broken or tampered cache can make a run slower, never fail it or
 * change what it does.  The safety argument is in seccomp-cache.c. */
#ifndef AB_RUNTIME_CACHE_H
#define AB_RUNTIME_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "spec/spec.h"

#define AB_CACHE_WHY_MAX 256

/* The base directory (see above), or NULL when there is none. */
const char *ab_cache_base (void);

/* What a bundle's root.path may neither be nor contain (spec/spec.h):
   the state root and the cache base. */
static inline struct ab_bundle_guard
ab_bundle_guard (const char *state_root)
{
  return (struct ab_bundle_guard){ .state_root = state_root, .cache = ab_cache_base () };
}

/* Open the base directory (made 0711 if missing), O_PATH, after checking
   that it is a directory of the effective uid that no one else can write.
   -1 with the reason in why ("" when there is no base). */
int ab_cache_open_base (char why[static AB_CACHE_WHY_MAX]);

/* The cache cannot be used (why), so `consequence` (a few words): a
   warning the first time in a process, a debug line after that. */
void ab_cache_unusable (const char *consequence, const char *why);

/* fd is a directory of the effective uid with no permission bit beyond
   `mode` (path is for the message). */
bool ab_cache_dir_is_safe (int fd, const char *path, mode_t mode, char why[static AB_CACHE_WHY_MAX]);

/* Bounds of one cache directory (evicted oldest first). */
#define AB_CACHE_MAX_FILES 64
#define AB_CACHE_MAX_BYTES (16u << 20)

#endif
