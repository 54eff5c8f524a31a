/* Internals of the cgroupfs driver, shared by runtime/cgroup*.c and the unit
 * tests.  Nothing outside runtime/cgroup*.c and tests/unit/test-cgroup*.c may
 * include this header: the public interface is runtime/cgroup/cgroup.h.
 *
 * Files:
 *   cgroup-host.c     host discovery (mountinfo, /proc/self/cgroup), mode, paths
 *   cgroup.c          the front door: plan, create / update / destroy, directories
 *   cgroup-fs.c       the write layer: directory fds, reading and writing
 *                     interface files (uses no other file of the room)
 *   cgroup-state.c    enter, clone fd, state (gen / load)
 *   cgroup-res.c      linux.resources -> v1 and v2 interface files
 *   cgroup-devices.c  device rules: v1 devices.{allow,deny}, v2 BPF program
 *   cgroup-proc.c     processes: kill, freeze, populated, wait, stats
 *   cgroup-events.c   runc's statistics and the OOM-kill watch of `events`
 */
#ifndef AB_RUNTIME_CGROUP_INTERNAL_H
#define AB_RUNTIME_CGROUP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/cgroup/cgroup.h"
#include "base/error.h"
#include "spec/model.h"

/* ---- host discovery ---------------------------------------------------- */

/* One cgroup filesystem mount from /proc/self/mountinfo. */
struct ab_cg_mount
{
  bool v2;
  char *controllers; /* v1: comma-joined, sorted as in the super options ("cpu,cpuacct", "name=systemd") */
  char *root;        /* field 4: the cgroup the mount shows, as seen from our cgroup namespace */
  char *mountpoint;  /* field 5, unescaped */
};

/* One line of /proc/self/cgroup. */
struct ab_cg_own
{
  bool v2;           /* "0::/path" */
  char *controllers; /* "cpu,cpuacct", "name=systemd"; "" for v2 */
  char *path;        /* our cgroup, relative to our cgroup namespace root */
};

struct ab_cg_host
{
  struct ab_cg_mount *mounts;
  size_t n_mounts;
  struct ab_cg_own *own;
  size_t n_own;
};

void ab_cg_host_free (struct ab_cg_host *h);
/* Read both files of the calling process. */
int ab_cg_host_read (struct ab_cg_host *h, ab_error_t *err);
/* The cgroup2 mount at /sys/fs/cgroup or else /sys/fs/cgroup/unified
   alone, and /proc/self/cgroup: enough to find a delegated cgroup without
   /proc/self/mountinfo, whose read costs 60-100 us at every rootless start.
   The mount's root and mount point come from statmount(2), as mountinfo
   would give them.  1: h holds that one mount; 0: neither place has a
   cgroup2 mount, or the kernel has no statmount (read the whole host). */
int ab_cg_host_read_v2 (struct ab_cg_host *h, ab_error_t *err);
void ab_cg_private_view (void);
/* The mode the parsed host is in (enum ab_cgroup_mode). */
int ab_cg_host_mode_of (const struct ab_cg_host *h);
/* Whether the comma-joined list `list` contains `item`; whether two lists
   hold the same names in any order; whether one holds a real v1
   controller (not only "name=..."). */
bool ab_cg_list_has (const char *list, const char *item);
bool ab_cg_list_same_set (const char *a, const char *b);
bool ab_cg_has_real_v1_controller (const char *controllers);
/* Whether `dir` is `top` or below it, component-wise. */
bool ab_cg_path_covers (const char *top, const char *dir);

#define CG_PATH_MAX 4096

/* Map a cgroup path (as in /proc/self/cgroup) to a directory below a mount
   whose root is `root`: mountpoint + (path - root).  NULL when the path is
   not at or below the root (the mount shows another part of the tree). */
char *ab_cg_path_to_dir (const char *mountpoint, const char *root, const char *path);

/* The container's cgroup path in one hierarchy, per config-linux.md:
   absolute cgroupsPath -> taken from the hierarchy's root (the mount root);
   relative -> below `own`; NULL -> own + "/agentbox-<id>".  Validated: no
   "." or ".." component, no control characters, not the root itself. */
int ab_cg_container_path (const char *cgroups_path, const char *id, const char *root, const char *own,
                          char **out, ab_error_t *err);

/* ---- the container's cgroup ----------------------------------------------- */

/* The container's cgroup in one hierarchy. */
struct ab_cg_hier
{
  bool v2;
  char *controllers; /* v1: "cpu,cpuacct"; v2: "" */
  char *mountpoint;
  char *root;     /* mount root */
  char *path;     /* the container's cgroup, same namespace as root */
  char *dir;      /* mountpoint + (path - root) */
  size_t created; /* how many trailing components of path we made */
  int dfd;        /* O_DIRECTORY fd of dir, or -1 (destroyed / vanished) */
  /* A v1 leaf made by its full path and held by no fd (dfd -1): its files
     are opened by path, the fd only when a walk needs one (ab_cg_dirfd). */
  bool by_path;
  char *sub;      /* exec --cgroup: the sub-cgroup of the container's this now is, or NULL */
};

/* Whether h's directory is there for us (held by an fd, or by_path). */
static inline bool
ab_cg_live (const struct ab_cg_hier *h)
{
  return h->dfd >= 0 || h->by_path;
}
/* h's directory fd, opened now if h is by_path; -1 with errno. */
int ab_cg_dirfd (struct ab_cg_hier *h);
/* Forget h's directory (closing its fd, if any). */
void ab_cg_drop_dir (struct ab_cg_hier *h);

struct ab_cgroup
{
  int mode; /* enum ab_cgroup_mode */
  struct ab_cg_hier *h;
  size_t n;
  struct ab_cg_hier *v2; /* the cgroup2 hierarchy (v2 or hybrid), or NULL */
  /* Planned, not made yet (ab_cgroup_plan): `created` counts the levels
     about to be made; no process of the container was ever in it. */
  bool planned;
  /* Rootless, below a delegated cgroup: the v2 leaf alone, no device
     rules (ab_cgroup_plan_delegated). */
  bool delegated;
};

/* Bookkeeping shared by cgroup.c and cgroup-state.c (cgroup-fs.c). */
struct ab_cg_hier *ab_cg_hier_add (struct ab_cgroup *cg); /* a zeroed entry, dfd -1 */
void ab_cg_fix_v2 (struct ab_cgroup *cg);                 /* point cg->v2 at the v2 entry */
/* Components of h->path below the mount root. */
size_t ab_cg_path_depth (const struct ab_cg_hier *h);

/* The v1 hierarchy holding `controller`, or NULL. */
struct ab_cg_hier *ab_cg_v1 (struct ab_cgroup *cg, const char *controller);
/* The container's v2 cgroup if its directory is there (ab_cg_live), or NULL. */
struct ab_cg_hier *ab_cg_v2 (struct ab_cgroup *cg);
/* Controllers available to the container in the v2 tree: the parent's
   cgroup.controllers (space-separated), "" when there is no v2 tree. */
char *ab_cg_v2_available (struct ab_cgroup *cg);

/* ---- the write layer (cgroup-fs.c) ----------------------------------------- */

/* Read an interface file of the directory dirfd to its end (NUL-terminated);
   -1 with errno. */
int ab_cg_read_at (int dirfd, const char *file, char **out);
/* Read a small interface file of one hierarchy's cgroup (NUL-terminated). */
int ab_cg_read (struct ab_cg_hier *h, const char *file, char **out, ab_error_t *err);
/* Write one value; `what` names the JSON path or purpose in the error. */
int ab_cg_write (struct ab_cg_hier *h, const char *file, const char *value, const char *what,
                 ab_error_t *err);
/* The same in two steps, for many values to one file (the v1 devices
   rules): an O_WRONLY fd of FILE, or -1 with *err set; then one write(2)
   per value, which the kernel parses as one setting. */
int ab_cg_open_w (struct ab_cg_hier *h, const char *file, const char *what, ab_error_t *err);
int ab_cg_write_fd (struct ab_cg_hier *h, int fd, const char *file, const char *value, const char *what,
                    ab_error_t *err);
/* Whether the interface file exists in the cgroup. */
bool ab_cg_has_file (struct ab_cg_hier *h, const char *file);
/* The value of "key N" in a flat-keyed file (memory.events, cpu.stat). */
int ab_cg_read_key (struct ab_cg_hier *h, const char *file, const char *key, uint64_t *out);
/* The same from a file's text already read (several keys, one read). */
int ab_cg_key_value (const char *text, const char *key, uint64_t *out);
/* A file holding one number; "max" (a v2 limit) is UINT64_MAX, as runc
   reads it.  false when h is NULL, or the file is missing or holds
   something else. */
bool ab_cg_read_u64 (struct ab_cg_hier *h, const char *file, uint64_t *out);

/* ---- resources (cgroup-res.c) --------------------------------------------- */

/* The v2 controllers `r` needs that are not v1 controllers here, as a
   space-separated list; `why` gets the JSON path of the first user of each. */
void ab_cg_v2_needed (struct ab_cgroup *cg, const struct ab_resources *r, struct ab_strv *ctrls,
                      struct ab_strv *why);
/* Write every limit of r; `update` enables checkBeforeUpdate. */
int ab_cg_apply (struct ab_cgroup *cg, const struct ab_resources *r, bool update, ab_error_t *err);

/* ---- devices (cgroup-devices.c) ------------------------------------------- */

/* Bits of an access mask. */
enum
{
  AB_CG_DEV_MKNOD = 1,
  AB_CG_DEV_READ = 2,
  AB_CG_DEV_WRITE = 4,
};

/* Apply the device rules followed by the OCI default devices: v1 devices
   controller when mounted, else a BPF program on the v2 cgroup. */
int ab_cg_devices_apply (struct ab_cgroup *cg, const struct ab_device_rule *rules, size_t n, ab_error_t *err);
/* Validate rules (majors/minors in range, access letters); JSON paths in errors. */
int ab_cg_devices_check (const struct ab_device_rule *rules, size_t n, ab_error_t *err);

/* The eBPF program for rules + defaults. */
struct bpf_insn;
struct ab_cg_bpf
{
  struct bpf_insn *insns;
  size_t n;
};

/* ---- processes (cgroup-proc.c) --------------------------------------------- */

/* The hierarchy to read process lists from: v2, else freezer, else any. */
struct ab_cg_hier *ab_cg_tracking (struct ab_cgroup *cg);

#endif
