/* What landlock enforces in a container: the ruleset derived from the
 * config's dev.agentbox.landlock (spec/landlock.h), its final mount plan and
 * its network policy.  Pure: no syscall, the same answer for create, exec
 * and `audit`.
 *
 *   "auto":   beneath the root and every mount, the rights its flags give:
 *               read-only      execute (unless noexec), read_file, read_dir
 *               writable       those and write_file, remove_*, make_dir,
 *                              make_reg, make_sock, make_fifo, make_sym,
 *                              refer, truncate, ioctl_dev
 *             (make_char and make_block nowhere); a mount below another
 *             gets its own flags' rights, the last mount at a destination
 *             counts.  With agentbox's network wall: no TCP bind, and TCP
 *             connect only to the ports the egress policy can pass (the
 *             proxy, the DNS stub, the captured ports, the net.allow
 *             entries; any port if an entry allows TCP to every port).
 *   policy:   its own rules (paths resolved without symlinks), plus the
 *             auto rules with "auto": true. */
#ifndef AB_RUNTIME_LANDLOCK_RULES_H
#define AB_RUNTIME_LANDLOCK_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/landlock.h"
#include "spec/model.h"

/* The read-only and writable sets of the auto rules. */
#define AB_LL_AUTO_RO (AB_LL_FS_EXECUTE | AB_LL_FS_READ_FILE | AB_LL_FS_READ_DIR)
#define AB_LL_AUTO_RW                                                                                        \
  (AB_LL_AUTO_RO | AB_LL_FS_WRITE_FILE | AB_LL_FS_REMOVE_DIR | AB_LL_FS_REMOVE_FILE | AB_LL_FS_MAKE_DIR      \
   | AB_LL_FS_MAKE_REG | AB_LL_FS_MAKE_SOCK | AB_LL_FS_MAKE_FIFO | AB_LL_FS_MAKE_SYM | AB_LL_FS_REFER        \
   | AB_LL_FS_TRUNCATE | AB_LL_FS_IOCTL_DEV)

/* The container's network as landlock's network rules see it. */
struct ab_ll_net
{
  bool wall;           /* agentbox's nftables wall governs it: TCP is restricted */
  bool connect_any;    /* an allowed destination takes TCP on every port */
  uint16_t ports[128]; /* TCP ports connect may reach */
  size_t n_ports;
};
void ab_ll_net_add_port (struct ab_ll_net *n, uint16_t port);

/* The rights the auto rules give beneath a mount with these flags. */
uint64_t ab_landlock_mount_rights (const struct ab_mount *m);

/* The ruleset s asks for, in *out (empty when landlock is off).  mounts:
   the final list (the config's and the derived ones); net may be NULL (no
   network rules). */
void ab_landlock_rules (const struct ab_spec *s, const struct ab_mount *mounts, size_t n_mounts,
                        const struct ab_ll_net *net, struct ab_ll_ruleset *out);

/* The same, fitted to this kernel's ABI (runtime/landlock.h): *fit is empty
   when landlock is off (or the kernel has none); every right given up is a
   line of *degraded.  A strict policy the kernel cannot honour is refused. */
int ab_landlock_plan (const struct ab_spec *s, const struct ab_mount *mounts, size_t n_mounts,
                      const struct ab_ll_net *net, struct ab_ll_ruleset *fit, struct ab_strv *degraded,
                      ab_error_t *err);

#endif
