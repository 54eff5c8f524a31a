/* The built-in sandbox where no user namespace can be made (docs/landlock.md):
 * `run --default --fallback landlock`, or a bundle whose config opts in
 * (annotations dev.agentbox.fallback = "landlock").  From the same model as
 * the namespaced sandbox it derives what runtime/fallback.h runs:
 *
 *   - the host's filesystem as the namespaced sandbox shows it (/usr, /etc,
 *     /bin, /sbin, /lib*), read-only (and executable), every path of
 *     linux.maskedPaths unreadable (the secrets of /etc among them), /proc
 *     and /sys readable, /dev/null, zero, full, random, urandom, tty;
 *   - the workspace (the host directory of the bind at the workspace's
 *     destination, or a private one for a tmpfs) and a private temporary
 *     directory (HOME, TMPDIR) read-write;
 *   - nothing else: no rule, no access;
 *   - TCP: no bind, connect only to the ports of dev.agentbox.net.allow
 *     (landlock ABI 4); signals and abstract Unix sockets only within the
 *     sandbox (ABI 6);
 *   - process.args, env, cwd (below the workspace's destination: below the
 *     workspace), rlimits (RLIMIT_NPROC from linux.resources.pids.limit),
 *     linux.seccomp; no capability, no_new_privs.
 *
 * What this mode does not give is listed, one line each, in `degraded`. */
#ifndef AB_RUNTIME_SANDBOX_FALLBACK_H
#define AB_RUNTIME_SANDBOX_FALLBACK_H

#include "base/error.h"
#include "runtime/fallback.h"
#include "runtime/seccomp.h"
#include "spec/spec.h"

struct ab_sandbox_fallback
{
  struct ab_fallback run;        /* what runtime/fallback.h runs (points into this struct) */
  struct ab_ll_ruleset landlock; /* fitted to this kernel */
  struct ab_seccomp_prog seccomp;
  bool have_seccomp;
  char *private_dir; /* removed by ab_sandbox_fallback_free */
  char *workspace;   /* the host directory */
  char *cwd;
  struct ab_strv env;
  struct ab_strv degraded; /* for the record */
};

/* Derive the fallback of bundle b (its config says what to run);
   `refusal` says why there are no namespaces ("no user namespace can be
   made here: ...", for `degraded`).
   Refuses what this mode cannot do: no landlock at all, an overlay
   workspace. */
int ab_sandbox_fallback (const struct ab_bundle *b, const char *refusal, struct ab_sandbox_fallback *out,
                         ab_error_t *err);
void ab_sandbox_fallback_free (struct ab_sandbox_fallback *f);

#endif
