/* Loading a bundle: read config.json (bounded), parse it into the model,
 * validate every MUST of the spec that can be checked statically.  `validate`
 * and `create` share exactly this code path. */
#ifndef AB_SPEC_SPEC_H
#define AB_SPEC_SPEC_H

#include "base/error.h"
#include "spec/model.h"

/* Parse config.json bytes.  Per-field checks (types, ranges, enum names,
   absolute paths, NUL bytes, ...) happen here; the first error is reported as
   "config.json: <json path>: <reason>" with class AB_EC_CONFIG. */
struct ab_spec *ab_spec_parse (const char *buf, size_t len, ab_error_t *err);

/* Cross-field rules (e.g. uidMappings require a user namespace, hostname
   requires a UTS namespace, timeOffsets require a time namespace) and
   agentbox's own annotations. */
int ab_spec_validate (const struct ab_spec *s, ab_error_t *err);

/* What agentbox needs of every config it runs, beyond the spec's rules: a
   process, a mount namespace of its own, no feature it does not implement
   (intelRdt, mountLabel, seccomp notification, a mount over /), a network
   namespace for a network policy.  With ab_spec_validate, every check
   create makes that depends on the config alone: `validate` runs both. */
int ab_spec_check_supported (const struct ab_spec *s, ab_error_t *err);

/* Where a mount destination stands against /proc, as written (symlinks
   of the image are create's to find: runtime/mount-fs.c): outside it, /proc
   itself, a file lxcfs stands in for (/proc/meminfo, ...), or anywhere
   else inside, which ab_spec_check_supported refuses (runc's rule). */
enum
{
  AB_PROC_OUTSIDE,
  AB_PROC_ROOT,
  AB_PROC_STAND_IN,
  AB_PROC_INSIDE,
};
int ab_proc_place (const char *destination);

/* An egress policy (the config's own, or one narrowed from an admin
   baseline) needs a network namespace, and the domain allowlist a new one. */
int ab_spec_check_egress_netns (const struct ab_spec *s, const struct ab_egress_policy *egress, ab_error_t *err);

void ab_spec_free (struct ab_spec *s);

/* The namespace (enum ab_ns_type) that owns a sysctl, or -1 for a global one
   (which validation refuses: setting it would change the host).  Keys use
   '.' or '/' as separators. */
int ab_sysctl_namespace (const char *key);

/* The first setting of s made inside its namespace of `type` (a sysctl
   that namespace owns; for UTS also hostname, domainname), as its JSON
   path ("linux.sysctl.net.ipv4.ip_forward", "hostname": in buf, or a
   constant), or NULL when s sets nothing there. */
const char *ab_spec_ns_setting (const struct ab_spec *s, int type, char *buf, size_t size);

/* Why a key of linux.resources.unified must not be written (not an
   interface file of the container's cgroup, or one of its structure files:
   cgroup.procs, ...), or NULL.  The validator refuses such a key and the
   cgroup driver checks again right before it writes. */
const char *ab_unified_key_refusal (const char *key);

/* A LinuxResources object on its own (`update --resources FILE`), parsed
   and checked by the rules of linux.resources; errors read
   "<file>: <json path>: <reason>". */
struct ab_resources *ab_resources_parse (const char *buf, size_t len, const char *file, ab_error_t *err);
void ab_resources_free (struct ab_resources *r);

struct ab_bundle
{
  char *dir;         /* absolute, canonical path of the bundle directory */
  char *config;      /* the bytes of config.json as read: the snapshot */
  size_t config_len;
  struct ab_spec *spec;
  char *rootfs;      /* absolute path of root.path (resolved against dir) */
  int rootfs_fd;     /* O_PATH fd of that directory as validated, or -1; create
                        clones the root from it (ab_rootfs_tree) */
  struct ab_fence *fence; /* the guard's directories as loaded with one, or NULL */
};

/* Directories of agentbox's own that root.path may neither be nor contain
   (either may be NULL): the state root (--root) and the cache base.  The
   host's root is refused with or without a guard. */
struct ab_bundle_guard
{
  const char *state_root;
  const char *cache;
};

/* That the directory `root` (a stat of what was opened) is not the host's
   /, which a container's root may never be; the guard's directories are the
   load's to check (ab_bundle_load).  `path` is root.path as written, for
   the message (class config). */
struct stat;
int ab_root_dir_check (const struct stat *root, const char *path, ab_error_t *err);

/* That the bind source open at fd (what the mount is made from) neither is,
   contains, nor lies inside one of the guard directories of the bundle's
   load (none: no check).  The container could rewrite through it what
   later commands trust (a state directory's config.json and its hooks, the
   cgroup paths of state.json) or the seccomp programs other containers
   load, or read other containers' configs.  `what` names the mount for the
   message (class config). */
int ab_bind_source_check (const struct ab_bundle *b, int fd, const char *what, ab_error_t *err);

/* Read, parse and validate <dir>/config.json and check that the root
   filesystem is a directory of its own: not the host's root, and neither
   one of the guard's directories nor above them (compared by device and
   inode of the directory opened). */
/* Read a config file the way create does: `path` relative to dirfd (or
   absolute), a regular file opened without blocking on a FIFO or taking a
   terminal, at most AB_CONFIG_MAX_BYTES.  Errors start with `prefix`
   ("bundle `DIR`: ", or ""). */
int ab_config_read_at (int dirfd, const char *path, const char *prefix, char **buf, size_t *len, ab_error_t *err);
int ab_bundle_load (const char *dir, const struct ab_bundle_guard *guard, struct ab_bundle **out, ab_error_t *err);
/* Same, from bytes already read (the built-in sandbox's generated config). */
int ab_bundle_from_bytes (const char *dir, const struct ab_bundle_guard *guard, const char *config, size_t len,
                          struct ab_bundle **out, ab_error_t *err);
void ab_bundle_free (struct ab_bundle *b);
static inline void
ab_bundle_freep (struct ab_bundle **b)
{
  ab_bundle_free (*b);
}
#define _cleanup_bundle_ __attribute__ ((cleanup (ab_bundle_freep)))

#define AB_CONFIG_MAX_BYTES (4u << 20)

/* An array of LinuxIDMapping at o's `key` (user namespace or idmapped
   mount; a change set's meta.json keeps the container's too): 1, 0 when
   absent, -1 on an error at the context's path. */
struct ab_jctx;
struct ab_json;
int ab_parse_idmaps (struct ab_jctx *c, struct ab_json *o, const char *key, struct ab_idmaps *out);

#endif
