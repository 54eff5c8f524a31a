/* Landlock on the spec floor: the one table of landlock's rights (name,
 * bit, kind, the ABI that brought it), and the `dev.agentbox.landlock`
 * annotation typed once into struct ab_landlock_policy:
 *
 *   "off"      no landlock
 *   "auto"     rules derived from the final mount plan and the egress
 *              policy (runtime/plan/landlock.h)
 *   {...}      a policy of its own, versioned by the landlock ABI it was
 *              written for (docs/landlock.md):
 *
 *   { "abi": 4,
 *     "auto": false,                   the derived rules as well (default false)
 *     "bestEffort": true,              on an older kernel drop what it lacks (default), or refuse
 *     "handledAccessFs": [...] | N,    default: every filesystem right of "abi"
 *     "handledAccessNet": [...] | N,   default: every network right of "abi"
 *     "scoped": [...] | N,             default: none
 *     "pathBeneath": [ { "paths": ["/usr"], "allowedAccess": ["read_file", ...] | N } ],
 *     "netPort":     [ { "ports": [8080],   "allowedAccess": ["connect_tcp"] | N } ] }
 *
 * Rights are names of this table or numbers in the kernel's own encoding
 * (include/uapi/linux/landlock.h).  Everything the kernel would refuse is
 * refused here, with the JSON path of the value. */
#ifndef AB_SPEC_LANDLOCK_H
#define AB_SPEC_LANDLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

/* The newest landlock ABI agentbox knows (Linux 6.15). */
#define AB_LL_ABI_MAX 7

/* The kernel's values (include/uapi/linux/landlock.h); defined here, for C
   libraries whose headers predate them. */
#define AB_LL_FS_EXECUTE (1ull << 0)
#define AB_LL_FS_WRITE_FILE (1ull << 1)
#define AB_LL_FS_READ_FILE (1ull << 2)
#define AB_LL_FS_READ_DIR (1ull << 3)
#define AB_LL_FS_REMOVE_DIR (1ull << 4)
#define AB_LL_FS_REMOVE_FILE (1ull << 5)
#define AB_LL_FS_MAKE_CHAR (1ull << 6)
#define AB_LL_FS_MAKE_DIR (1ull << 7)
#define AB_LL_FS_MAKE_REG (1ull << 8)
#define AB_LL_FS_MAKE_SOCK (1ull << 9)
#define AB_LL_FS_MAKE_FIFO (1ull << 10)
#define AB_LL_FS_MAKE_BLOCK (1ull << 11)
#define AB_LL_FS_MAKE_SYM (1ull << 12)
#define AB_LL_FS_REFER (1ull << 13)                  /* ABI 2 */
#define AB_LL_FS_TRUNCATE (1ull << 14)               /* ABI 3 */
#define AB_LL_FS_IOCTL_DEV (1ull << 15)              /* ABI 5 */
#define AB_LL_NET_BIND_TCP (1ull << 0)               /* ABI 4 */
#define AB_LL_NET_CONNECT_TCP (1ull << 1)            /* ABI 4 */
#define AB_LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ull << 0) /* ABI 6 */
#define AB_LL_SCOPE_SIGNAL (1ull << 1)               /* ABI 6 */

/* The rights a rule on a file (not a directory) may carry. */
#define AB_LL_FS_FILE_RIGHTS                                                                                 \
  (AB_LL_FS_EXECUTE | AB_LL_FS_WRITE_FILE | AB_LL_FS_READ_FILE | AB_LL_FS_TRUNCATE | AB_LL_FS_IOCTL_DEV)

enum ab_ll_kind
{
  AB_LL_KIND_FS,
  AB_LL_KIND_NET,
  AB_LL_KIND_SCOPE,
  AB_LL_KIND__COUNT,
};

struct ab_ll_right
{
  const char *name; /* "read_file" */
  int kind;         /* enum ab_ll_kind */
  uint64_t bit;
  unsigned abi; /* the first ABI that has it */
};

/* The table, in bit order per kind; *n gets its length. */
const struct ab_ll_right *ab_ll_rights (size_t *n);
/* Every right of `kind` that ABI `abi` knows (0 for abi 0). */
uint64_t ab_ll_known (int kind, unsigned abi);
/* "read_file,read_dir" ("none" for 0); bits the table lacks as "bit N". */
char *ab_ll_rights_text (int kind, uint64_t mask);
/* "filesystem", "network", "scope" */
const char *ab_ll_kind_name (int kind);

enum ab_ll_mode
{
  AB_LL_MODE_UNSET = 0, /* no annotation: off */
  AB_LL_MODE_OFF,
  AB_LL_MODE_AUTO,
  AB_LL_MODE_POLICY,
};

struct ab_ll_path_rule
{
  char *path;      /* absolute, clean, in the container */
  uint64_t access; /* filesystem rights */
};

struct ab_ll_port_rule
{
  uint16_t port;
  uint64_t access; /* network rights */
};

/* dev.agentbox.landlock, typed. */
struct ab_landlock_policy
{
  int mode;                            /* enum ab_ll_mode */
  unsigned abi;                        /* POLICY: the ABI it was written for */
  bool with_auto;                      /* POLICY: the derived rules as well ("auto": true) */
  bool best_effort;                    /* POLICY: on an older kernel, drop what it lacks (else refuse) */
  uint64_t handled[AB_LL_KIND__COUNT]; /* POLICY: handled rights per kind (scoped for AB_LL_KIND_SCOPE) */
  struct ab_ll_path_rule *paths;
  size_t n_paths;
  struct ab_ll_port_rule *ports;
  size_t n_ports;
};

/* Type the annotation's value.  `where` names it in messages
   ("config.json: annotations.dev.agentbox.landlock"). */
int ab_landlock_policy_parse (const char *value, const char *where, struct ab_landlock_policy *out,
                              ab_error_t *err);
void ab_landlock_policy_free (struct ab_landlock_policy *p);

/* dev.agentbox.fallback: what `run` may do where no user namespace can be
   created (docs/landlock.md). */
enum ab_fallback_mode
{
  AB_FALLBACK_NONE = 0,
  AB_FALLBACK_LANDLOCK,
};

#endif
