/* The plan's part of landlock: the ruleset a container asks for, derived
 * from the config's dev.agentbox.landlock (spec/landlock.h), its final
 * mount plan and its network policy, before it meets a kernel
 * (runtime/landlock.h fits it to one and enforces it).  Pure: no syscall,
 * the same answer for create, exec and `audit`.
 *
 *   "auto":   beneath the root and every mount, the rights its flags give:
 *               read-only      execute (unless noexec), read_file, read_dir
 *               writable       those and write_file, remove_*, make_dir,
 *                              make_reg, make_sock, make_fifo, make_sym,
 *                              refer, truncate, ioctl_dev
 *             (make_char and make_block nowhere); a mount below another
 *             gets its own flags' rights, the last mount at a destination
 *             counts.  In a network namespace the container joins under
 *             agentbox's wall (shared with others): no TCP bind, and TCP
 *             connect only to the ports the egress policy can pass (the
 *             proxy, the DNS stub, the captured ports, the net.allow
 *             entries; any port if an entry allows TCP to every port).  In
 *             a namespace of its own, no network rule: the wall is its
 *             boundary, a server on its loopback is the program's own, and
 *             every refused attempt reaches the wall's record.
 *   policy:   its own rules (paths resolved without symlinks), plus the
 *             auto rules with "auto": true. */
#ifndef AB_RUNTIME_PLAN_LANDLOCK_H
#define AB_RUNTIME_PLAN_LANDLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spec/landlock.h"
#include "spec/model.h"

/* One filesystem rule: `access` beneath `path`. */
struct ab_ll_rule
{
  char *path;      /* absolute, resolved beneath the container's root */
  uint64_t access; /* on a file (not a directory) only its AB_LL_FS_FILE_RIGHTS are kept */
  bool nofollow;   /* refuse a symlink anywhere on the path (a policy's own paths) */
  bool optional;   /* a missing path is skipped, not an error */
  char *origin;    /* what asked for it, for messages and `audit`: "mounts[3]", "root", "pathBeneath" */
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
/* Add rights on a port (one rule per port). */
void ab_ll_ruleset_add_port (struct ab_ll_ruleset *rs, uint16_t port, uint64_t access);

/* The read-only and writable sets of the auto rules. */
#define AB_LL_AUTO_RO (AB_LL_FS_EXECUTE | AB_LL_FS_READ_FILE | AB_LL_FS_READ_DIR)
#define AB_LL_AUTO_RW                                                                                        \
  (AB_LL_AUTO_RO | AB_LL_FS_WRITE_FILE | AB_LL_FS_REMOVE_DIR | AB_LL_FS_REMOVE_FILE | AB_LL_FS_MAKE_DIR      \
   | AB_LL_FS_MAKE_REG | AB_LL_FS_MAKE_SOCK | AB_LL_FS_MAKE_FIFO | AB_LL_FS_MAKE_SYM | AB_LL_FS_REFER        \
   | AB_LL_FS_TRUNCATE | AB_LL_FS_IOCTL_DEV)

/* The container's network as landlock's network rules see it. */
struct ab_ll_net
{
  bool shared;         /* a network namespace the container joins (shared with others), under agentbox's
                          nftables wall: TCP is restricted */
  bool connect_any;    /* an allowed destination takes TCP on every port */
  uint16_t ports[128]; /* TCP ports connect may reach */
  size_t n_ports;
};

/* The view of a network: shared (a joined namespace under agentbox's
   wall), the net.allow entries' TCP ports; with a domain allowlist (egress
   enabled) the proxy's and the stub's ports and those the wall captures
   (connect(2) names the destination's port, before the redirection).  Not
   shared: no view (no network rule). */
void ab_ll_net_view (bool shared, const struct ab_net_policy *allow, const struct ab_egress_policy *egress,
                     struct ab_ll_net *out);

/* The rights the auto rules give beneath a mount with these flags. */
uint64_t ab_landlock_mount_rights (const struct ab_mount *m);

/* The ruleset s asks for, in *out (empty when landlock is off).  mounts:
   the final list (the config's and the derived ones); net may be NULL (no
   network rules). */
void ab_landlock_rules (const struct ab_spec *s, const struct ab_mount *mounts, size_t n_mounts,
                        const struct ab_ll_net *net, struct ab_ll_ruleset *out);

#endif
