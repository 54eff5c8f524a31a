/* The built-in default sandbox: the hardened profile of `agentbox spec` on a
 * root filesystem that is a read-only view of the host's /usr and /etc
 * (secrets masked), with a writable /workspace (a tmpfs, or a host
 * directory bound id-mapped so files land owned by the directory's owner)
 * and tmpfs /tmp and /root; the host's /var/lib read-only (its package
 * managers' state), and the caller's extra binds (runtime/sandbox/binds.h).  Built as typed options of the profile
 * (spec/defaults.h: mounts, environment, limits, annotations), which the
 * profile writes out once as config.json; that text is loaded through the
 * same parser and validator as any bundle, and kept as the container's
 * config.  No document is parsed and edited on the way. */
#ifndef AB_RUNTIME_SANDBOX_H
#define AB_RUNTIME_SANDBOX_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "base/util.h"
#include "spec/spec.h"

#define AB_SANDBOX_HOME_SIZE (256ull << 20)
#define AB_SANDBOX_WORKSPACE_SIZE (1ull << 30)

/* --ro-bind / --bind SRC[:DST] */
struct ab_sandbox_bind
{
  const char *arg;
  bool rw;
};

struct ab_sandbox_opts
{
  const char *root;        /* state root */
  const char *id;          /* the container's id */
  char *const *argv;       /* the program; NULL with init = true */
  size_t argc;
  const char *cwd;         /* default /workspace */
  bool terminal;           /* --tty: a pty of the sandbox's own, relayed to the caller's stdio */
  const char *workspace;   /* host directory for /workspace, or NULL (tmpfs) */
  struct ab_strv env;      /* extra NAME=VALUE entries */
  uint64_t memory;         /* bytes, 0 = the profile's default */
  int64_t pids;            /* 0 = the profile's default */
  uint64_t tmp_size, shm_size, file_size, open_files; /* 0 = the profile's defaults (spec/defaults.h) */
  uint64_t home_size;      /* /root, 0 = AB_SANDBOX_HOME_SIZE */
  uint64_t workspace_size; /* the tmpfs /workspace (no `workspace`), 0 = AB_SANDBOX_WORKSPACE_SIZE */
  struct ab_strv allow_domains;
  bool init;               /* a persistent sandbox: PID 1 is agentbox-init, a reaper */
  struct ab_kvlist annotations; /* extra annotations */
  int rootless;            /* --rootless: -1 auto, 0, 1 */
  struct
  {
    struct ab_sandbox_bind *v;
    size_t n;
  } binds;                 /* extra host paths, in command-line order */
};

/* The bundle of the sandbox.  Its root is the skeleton of mount points in
   the cache (runtime/cache.h), or a private one in the state root when the
   cache cannot hold it (with a warning) or an extra bind needs a mount
   point the cache's lacks: then *lock is its lock, held until
   ab_sandbox_release, else -1. */
int ab_sandbox_bundle (const struct ab_sandbox_opts *o, struct ab_bundle **out, int *lock, ab_error_t *err);
/* The run is over (failure: its setup error, or NULL): drop the lock; a
   private skeleton no container of the id uses is removed. */
void ab_sandbox_release (const struct ab_sandbox_opts *o, int lock, const ab_error_t *failure);

/* The host's directories the sandbox shows read-only ("/usr", "/etc", ...):
   also the view of the fallback without namespaces (runtime/sandbox/fallback.h). */
const char *const *ab_sandbox_host_view (size_t *n);

#endif
