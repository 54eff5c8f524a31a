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
#include "spec/model.h"

/* The profile's limits, each with its reason in defaults.c; `run --help`
   and docs list them. */
#define AB_DEFAULT_MEMORY (1ull << 30)
#define AB_DEFAULT_PIDS 512
#define AB_DEFAULT_TMP_SIZE (256ull << 20)
#define AB_DEFAULT_SHM_SIZE (64ull << 20)
#define AB_DEFAULT_FILE_SIZE (1ull << 30)
#define AB_DEFAULT_OPEN_FILES 1024

/* A mount added after the profile's (the built-in sandbox's host view,
   its /workspace, its init). */
struct ab_default_mount
{
  const char *destination;
  const char *type;
  const char *source;
  const char *const *options;
  size_t n_options;
  /* id-mapped with one id each way: `owner_uid`:`owner_gid` on the
     filesystem show as the container's root through the mount */
  bool map_owner;
  uint32_t owner_uid, owner_gid;
};

struct ab_default_opts
{
  bool rootless;
  uid_t uid; /* for rootless: the host user that owns the container */
  gid_t gid;
  /* rootless: the maps to write (uid and gid to container 0, then any
     subordinate ranges); NULL: uid and gid alone */
  const struct ab_idmaps *uid_map, *gid_map;
  const char *const *args; /* NULL-terminated; NULL: ["sh"] */
  bool idmap_rootfs;       /* the dev.agentbox.rootfs.idmap annotation */
  /* What a caller that makes a whole container from the profile (the
     built-in sandbox) sets; zero: the profile's. */
  const char *root_path;   /* NULL: "rootfs" */
  const char *cwd;         /* NULL: "/" */
  bool terminal;           /* process.terminal (false: pipes, what a tool call is driven through) */
  const struct ab_strv *env; /* NAME=VALUE: replaces the profile's NAME, else added */
  const struct ab_default_mount *mounts; /* after the profile's */
  size_t n_mounts;
  const char *const *masked; /* after the profile's linux.maskedPaths */
  size_t n_masked;
  uint64_t memory;         /* bytes: memory limit and memory+swap */
  int64_t pids;
  uint64_t tmp_size;       /* bytes of the /tmp tmpfs (0: AB_DEFAULT_TMP_SIZE) */
  uint64_t shm_size;       /* bytes of /dev/shm (0: AB_DEFAULT_SHM_SIZE) */
  uint64_t file_size;      /* RLIMIT_FSIZE (0: AB_DEFAULT_FILE_SIZE) */
  uint64_t open_files;     /* RLIMIT_NOFILE (0: AB_DEFAULT_OPEN_FILES) */
  const struct ab_kvlist *annotations; /* each key once */
};

/* The whole document, NUL-terminated, with its length in *len (may be NULL).
   The caller frees it.  o may be NULL (defaults: not rootless, ["sh"]). */
char *ab_spec_default_json (const struct ab_default_opts *o, size_t *len);

/* `key`: an array of {containerID, hostID, size}: an id mapping as
   config.json writes it (the rootless profile's; a change set's meta.json). */
struct ab_gen;
void ab_gen_idmaps (struct ab_gen *g, const char *key, const struct ab_idmaps *m);

/* The profile's linux.maskedPaths and linux.readonlyPaths (runc's defaults),
   for `agentbox audit` to name the ones a config removed. */
const char *const *ab_default_masked_paths (size_t *n);
const char *const *ab_default_readonly_paths (size_t *n);

#endif
