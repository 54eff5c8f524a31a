/* The hardened agent profile that `agentbox spec` writes: a config.json in
 * which the process is root only inside its own user namespace, holds no
 * capability, cannot gain privileges, sees a read-only root, its own
 * namespaces of every kind, a masked /proc and /sys, and runs under the
 * default seccomp allowlist (spec/seccomp_default.h).
 *
 * The output is byte-stable: 2-space indented JSON with a trailing newline,
 * members in a fixed order, the same bytes for the same options. */
#ifndef AB_SPEC_DEFAULTS_H
#define AB_SPEC_DEFAULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/gen.h"

struct ab_default_opts
{
  bool rootless;
  uid_t uid; /* for rootless: the host user that owns the container */
  gid_t gid;
  const char *const *args; /* NULL-terminated; NULL: ["sh"] */
  bool idmap_rootfs;       /* the dev.agentbox.rootfs.idmap annotation */
};

/* The whole document, NUL-terminated, with its length in *len (may be NULL).
   The caller frees it.  o may be NULL (defaults: not rootless, ["sh"]). */
char *ab_spec_default_json (const struct ab_default_opts *o, size_t *len);

/* The profile's linux.maskedPaths and linux.readonlyPaths (runc's defaults),
   for `agentbox audit` to name the ones a config removed. */
const char *const *ab_default_masked_paths (size_t *n);
const char *const *ab_default_readonly_paths (size_t *n);

#endif
