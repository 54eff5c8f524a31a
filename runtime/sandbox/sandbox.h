/* The built-in default sandbox: the hardened profile of `agentbox spec` on a
 * root filesystem that is a read-only view of the host's /usr and /etc
 * (secrets masked), with a writable /workspace (a tmpfs, or a host
 * directory bound id-mapped so files land owned by the directory's owner)
 * and tmpfs /tmp and /root.  Built as typed options of the profile
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

struct ab_sandbox_opts
{
  const char *root;        /* state root: the rootfs skeleton is kept in <root>/.sandbox-rootfs */
  char *const *argv;       /* the program; NULL with init = true */
  size_t argc;
  const char *cwd;         /* default /workspace */
  const char *workspace;   /* host directory for /workspace, or NULL (tmpfs) */
  struct ab_strv env;      /* extra NAME=VALUE entries */
  uint64_t memory;         /* bytes, 0 = the profile's default */
  int64_t pids;            /* 0 = the profile's default */
  struct ab_strv allow_domains;
  bool init;               /* a persistent sandbox: PID 1 is agentbox-init, a reaper */
  struct ab_kvlist annotations; /* extra annotations */
};

int ab_sandbox_bundle (const struct ab_sandbox_opts *o, struct ab_bundle **out, ab_error_t *err);

/* The host's directories the sandbox shows read-only ("/usr", "/etc", ...):
   also the view of the fallback without namespaces (runtime/sandbox/fallback.h). */
const char *const *ab_sandbox_host_view (size_t *n);

#endif
