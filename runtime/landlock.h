/* Landlock, the mechanism: probe the kernel's ABI, fit a ruleset to it
 * (every right it lacks named), build the ruleset from (path, rights) and
 * (port, rights) entries, and restrict the calling process.
 *
 *   ab_landlock_abi ─▶ ab_landlock_fit ─▶ ab_landlock_build ─▶ ab_landlock_restrict
 *   (once per process)  (parent: dropped   (child, in its final    (child, before
 *                        rights to degraded) root: opens the paths)   seccomp)
 *
 * What the rules are is decided elsewhere (runtime/landlock-rules.h); this
 * file knows nothing of mounts or policies. */
#ifndef AB_RUNTIME_LANDLOCK_H
#define AB_RUNTIME_LANDLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/error.h"
#include "runtime/util.h"
#include "spec/landlock.h"

/* One filesystem rule: `access` beneath `path`. */
struct ab_ll_rule
{
  char *path;      /* absolute, resolved beneath the root given to ab_landlock_build */
  uint64_t access; /* on a file (not a directory) only its AB_LL_FS_FILE_RIGHTS are kept */
  bool nofollow;   /* refuse a symlink anywhere on the path (a policy's own paths) */
  bool optional;   /* a missing path is skipped, not an error */
  char *origin;    /* what asked for it, for messages and `audit`: "mounts[3]", "root.path", "pathBeneath" */
};

/* A ruleset before it meets a kernel. */
struct ab_ll_ruleset
{
  unsigned abi;                        /* the ABI the rules were written for */
  bool best_effort;                    /* on an older kernel drop what it lacks (else refuse) */
  uint64_t handled[AB_LL_KIND__COUNT]; /* handled fs, handled net, scoped */
  struct ab_ll_rule *paths;
  size_t n_paths;
  struct ab_ll_port_rule *ports;
  size_t n_ports;
};

void ab_ll_ruleset_free (struct ab_ll_ruleset *rs);
/* Append a rule (path and origin copied). */
void ab_ll_ruleset_add_path (struct ab_ll_ruleset *rs, const char *path, uint64_t access, bool nofollow,
                             bool optional, const char *origin);
void ab_ll_ruleset_add_port (struct ab_ll_ruleset *rs, uint16_t port, uint64_t access);

/* The kernel's landlock ABI, probed once per process
   (landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)): 0 when
   landlock cannot be used, and then *why (if not NULL) says why. */
unsigned ab_landlock_abi (const char **why);

/* `want` as kernel ABI `abi` can enforce it, in *out: handled rights and
   rules cut to what the ABI knows, rules left with no right dropped.  Every
   right given up is one line in *dropped ("landlock: ..."), for the
   record's `degraded`.  abi 0: nothing is enforced (out->handled all 0).
   A strict ruleset (!best_effort) that would lose anything is refused:
   -1, *err names the rights. */
int ab_landlock_fit (const struct ab_ll_ruleset *want, unsigned abi, struct ab_ll_ruleset *out,
                     struct ab_strv *dropped, ab_error_t *err);

/* Whether a fitted ruleset restricts anything. */
bool ab_landlock_enforces (const struct ab_ll_ruleset *rs);

/* Build the kernel ruleset of a fitted `rs` (ABI `abi`): each path opened
   O_PATH beneath rootfd (-1: the caller's "/") with openat2 (RESOLVE_IN_ROOT, no magic links;
   RESOLVE_NO_SYMLINKS for nofollow rules) and added.  Returns the ruleset
   fd, close-on-exec and numbered at least min_fd (so that it cannot land
   among fds the program is to inherit), or -1 with *err naming the rule. */
int ab_landlock_build (const struct ab_ll_ruleset *rs, unsigned abi, int rootfd, int min_fd, ab_error_t *err);

/* landlock_restrict_self on the ruleset fd, which is closed.  Needs
   no_new_privs or CAP_SYS_ADMIN in the caller's user namespace. */
int ab_landlock_restrict (int fd, ab_error_t *err);

#endif
