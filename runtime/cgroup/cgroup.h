/* The cgroupfs driver: cgroup v2, v1 and hybrid hosts.
 *
 * Hybrid (the hosts here): v1 controllers under /sys/fs/cgroup/<controller>
 * plus a cgroup2 mount at /sys/fs/cgroup/unified holding no controllers (or
 * only hugetlb).  The v2 tree is then used for process tracking
 * (CLONE_INTO_CGROUP, cgroup.kill, cgroup.events) and v1 for the limits.
 *
 * Paths (config-linux.md "Cgroups Path"): an absolute cgroupsPath is taken
 * relative to each hierarchy's mount root; a relative or missing one is placed
 * under agentbox's own current cgroup in each hierarchy (from
 * /proc/self/cgroup), default name "agentbox-<id>".  agentbox never moves a
 * process out of its own cgroup otherwise, and never modifies or removes a
 * cgroup it did not create.
 */
#ifndef AB_RUNTIME_CGROUP_H
#define AB_RUNTIME_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"
#include "base/json.h"
#include "base/gen.h"
#include "spec/model.h"

struct ab_cgroup;

enum ab_cgroup_mode
{
  AB_CGROUP_NONE,   /* no cgroup filesystem usable */
  AB_CGROUP_V1,     /* v1 controllers only */
  AB_CGROUP_HYBRID, /* v1 controllers + a cgroup2 mount for tracking */
  AB_CGROUP_V2,     /* unified */
};

/* ab_cgroup_create in two steps, so the plan can be recorded before any
   directory exists (a runtime killed in between leaves a state from which
   delete removes what was made): plan works out the directories, with
   those still missing counted as to be made; realize makes them and applies
   `resources`, removing what it made on failure.  Killing, listing or
   freezing a planned cgroup does nothing: no process was ever in it. */
/* Called once at the start, before any thread: when this mount namespace
   shows no cgroup filesystem (`ip netns exec` mounts a fresh /sys), move
   into a private one that mounts our hierarchies at the host's paths
   (cgroup-host.c says how).  Costs one statfs otherwise. */
void ab_cgroup_host_view (void);

int ab_cgroup_plan (const char *cgroups_path, const char *id, const struct ab_resources *resources,
                    struct ab_cgroup **out, ab_error_t *err);
int ab_cgroup_realize (struct ab_cgroup *cg, const struct ab_resources *resources, ab_error_t *err);

/* Rootless (runtime/cgroup/cgroup-deleg.c): the cgroup v2 directory
   delegated to the caller -- `parent` (a cgroup path, --cgroup-parent) or
   else agentbox's own cgroup -- and the controllers a leaf below it can
   get.  When none is delegated, usable is false and why says so; a
   `parent` that is not delegated is an error. */
struct ab_cgroup_deleg
{
  bool usable;
  char *parent;      /* cgroup path (as in /proc/self/cgroup) the leaf is made below */
  char *dir;         /* its directory */
  char *controllers; /* space-separated: what a leaf below it can enable */
  bool busy;         /* it holds processes: no controller for a child (no internal processes) */
  char why[640];     /* when not usable: why, one sentence */
  char fix[400];     /* what would make limits enforceable */
};
int ab_cgroup_delegation (const char *parent, struct ab_cgroup_deleg *d, ab_error_t *err);
void ab_cgroup_deleg_free (struct ab_cgroup_deleg *d);
/* Every limit of r a container below d cannot have, as
   "JSON-PATH\tCONTROLLER\tWHY" lines appended to out. */
void ab_cgroup_unenforced (const struct ab_cgroup_deleg *d, const struct ab_resources *r, struct ab_strv *out);
/* ab_cgroup_plan for a rootless container: its leaf in the cgroup v2
   hierarchy alone, below `parent` (agentbox-<id>, or a relative
   cgroupsPath; an absolute one must lie below parent).  No device rules
   are ever written for it (a cgroup device program needs host root). */
int ab_cgroup_plan_delegated (const char *parent, const char *cgroups_path, const char *id, struct ab_cgroup **out,
                              ab_error_t *err);

/* O_DIRECTORY fd of the v2 cgroup for clone3(CLONE_INTO_CGROUP), or -1. */
int ab_cgroup_clone_fd (struct ab_cgroup *cg);

/* exec --cgroup [CONTROLLERS:]SUB (runc): the hierarchies of cg that hold
   one of the comma-separated v1 CONTROLLERS (NULL: every one not moved by
   an earlier call) now stand for SUB, an existing cgroup below the
   container's, for the one process; nothing is made or removed.  Fails
   (class AB_EC_USAGE) on a path that is not clean and relative, a
   controller no hierarchy of the container holds, two paths for one
   hierarchy, and a SUB that is not there. */
int ab_cgroup_descend (struct ab_cgroup *cg, const char *controllers, const char *sub, ab_error_t *err);

/* Move pid into the cgroup in every hierarchy it is not already in (v1
   writes; v2 too if clone3 could not place it).  The v1 writes each cost an
   RCU grace period; callers overlap this with the child's setup. */
int ab_cgroup_enter (struct ab_cgroup *cg, pid_t pid, bool v2_done, bool v1_done, ab_error_t *err);

/* The v1 hierarchies a fresh child joins by itself, without the RCU grace
   period (cgroup-state.c says why that is safe): the runtime opens each
   `tasks` file (O_WRONLY, O_CLOEXEC) before the clone, the child writes "0"
   to every one as its first step and its close_range right after closes
   them; the parent closes its copies after the clone.  *n is 0 when there
   is no v1 hierarchy. */
struct ab_cgroup_selfjoin
{
  int fd;
  const char *dir; /* for the error message */
};
int ab_cgroup_selfjoin_open (struct ab_cgroup *cg, struct ab_cgroup_selfjoin **out, size_t *n,
                             ab_error_t *err);
int ab_cgroup_selfjoin (struct ab_cgroup_selfjoin *j, size_t n, ab_error_t *err);
/* Close every fd (idempotent) and free the array. */
void ab_cgroup_selfjoin_free (struct ab_cgroup_selfjoin **j, size_t *n);

/* Signal every process in the cgroup.  SIGKILL uses cgroup.kill when the
   kernel has it; otherwise (and for other signals) freeze, signal each task,
   thaw — so a process forking concurrently cannot escape. */
int ab_cgroup_kill (struct ab_cgroup *cg, int sig, ab_error_t *err);

/* Whether any process is left (cgroup.events populated, or cgroup.procs). */
int ab_cgroup_populated (struct ab_cgroup *cg, ab_error_t *err);
/* Wait up to timeout_ms for the cgroup to empty; 0 when empty, -1 + ETIMEDOUT. */
int ab_cgroup_wait_empty (struct ab_cgroup *cg, int timeout_ms, ab_error_t *err);

/* The pids in the cgroup (host pid namespace). */
int ab_cgroup_pids (struct ab_cgroup *cg, pid_t **pids, size_t *n, ab_error_t *err);

int ab_cgroup_freeze (struct ab_cgroup *cg, bool frozen, ab_error_t *err);

/* Apply new limits (runc `update`). */
int ab_cgroup_update (struct ab_cgroup *cg, const struct ab_resources *resources, ab_error_t *err);

struct ab_cgroup_stats
{
  bool oom_killed; /* memory.events oom_kill > 0 (v2) / memory.oom_control oom_kill (v1) */
  uint64_t oom_kills;
  bool pids_max_hit; /* pids.events max > 0 */
  uint64_t pids_max_events;
  uint64_t memory_peak;   /* bytes; memory.peak (v2) / memory.max_usage_in_bytes (v1); 0 if unknown */
  uint64_t cpu_user_usec; /* 0 if unknown */
  uint64_t cpu_system_usec;
  bool memory_known, cpu_known, pids_known;
};
/* Read the counters; call before ab_cgroup_destroy. */
int ab_cgroup_stats (struct ab_cgroup *cg, struct ab_cgroup_stats *st, ab_error_t *err);

/* The statistics of `agentbox events` (runtime/cgroup/cgroup-events.c): what
   runc's libcontainer reads for `runc events`, from the same files and in
   its units.  Each controller is read in the container's v1 hierarchy when
   it has one (where runc's fs manager reads on a v1 or hybrid host), else
   in its v2 cgroup.  What the cgroup does not offer stays 0 or empty. */
struct ab_cgroup_u64s
{
  uint64_t *v;
  size_t n;
};
struct ab_cgroup_mem_entry
{
  uint64_t limit; /* bytes; UINT64_MAX for v2's "max" */
  uint64_t usage;
  uint64_t max;   /* the peak (v1 max_usage_in_bytes, v2 memory.peak) */
  uint64_t failcnt;
};
struct ab_cgroup_kv
{
  char *key;
  uint64_t value;
};
struct ab_cgroup_blkio_entry
{
  uint64_t major, minor, value;
  char op[16]; /* "Read", "Write", "Sync", "Async", "Discard", "Total"; "" for sectors and time */
};
/* runc's blkio lists, in its order. */
enum ab_cgroup_blkio_kind
{
  AB_CGROUP_BLKIO_SERVICE_BYTES,
  AB_CGROUP_BLKIO_SERVICED,
  AB_CGROUP_BLKIO_QUEUED,
  AB_CGROUP_BLKIO_SERVICE_TIME,
  AB_CGROUP_BLKIO_WAIT_TIME,
  AB_CGROUP_BLKIO_MERGED,
  AB_CGROUP_BLKIO_TIME,
  AB_CGROUP_BLKIO_SECTORS,
  AB_CGROUP_BLKIO_KINDS,
};
struct ab_cgroup_hugetlb
{
  char size[16]; /* the kernel's name of the page size: "2MB", "1GB" */
  uint64_t usage, max, failcnt;
};
struct ab_cgroup_counters
{
  struct
  {
    uint64_t total, kernel, user; /* ns */
    struct ab_cgroup_u64s percpu, percpu_kernel, percpu_user;
    uint64_t periods, throttled_periods, throttled_time; /* throttled_time in ns */
  } cpu;
  struct
  {
    struct ab_cgroup_u64s cpus, mems;
    uint64_t cpu_exclusive, mem_hardwall, mem_exclusive, memory_migrate, memory_spread_page,
        memory_spread_slab, memory_pressure, sched_load_balance;
    int64_t sched_relax_domain_level;
  } cpuset; /* v1 only, as runc's */
  struct
  {
    uint64_t cache;
    struct ab_cgroup_mem_entry usage, swap, kernel, kernel_tcp; /* swap: memory + swap, as v1 counts it */
    struct ab_cgroup_kv *raw; /* memory.stat, sorted by key */
    size_t n_raw;
  } memory;
  struct
  {
    uint64_t current, limit; /* limit 0: none */
  } pids;
  struct
  {
    struct ab_cgroup_blkio_entry *v;
    size_t n;
  } blkio[AB_CGROUP_BLKIO_KINDS];
  struct ab_cgroup_hugetlb *hugetlb; /* sorted by size */
  size_t n_hugetlb;
};
/* Fill *out (to be freed with ab_cgroup_counters_free, also on failure);
   fails only when none of the container's cgroup directories is there. */
int ab_cgroup_counters (struct ab_cgroup *cg, struct ab_cgroup_counters *out, ab_error_t *err);
void ab_cgroup_counters_free (struct ab_cgroup_counters *c);

/* The OOM kills the container's memory controller has counted (v1
   memory.oom_control, v2 memory.events: oom_kill); -1 without one. */
int ab_cgroup_oom_kills (struct ab_cgroup *cg, uint64_t *out);
/* An fd that polls ready (*events: POLLIN or POLLPRI) when the memory
   controller meets an OOM, so that a watcher need not poll the counter;
   -1 when there is no way to be told.  After each wake-up,
   ab_cgroup_oom_rearm: -1 when the fd can tell no more (its cgroup was
   removed), and the caller should stop polling it. */
int ab_cgroup_oom_watch (struct ab_cgroup *cg, short *events);
int ab_cgroup_oom_rearm (int fd, short events);

/* Remove every directory ab_cgroup_create made (deepest first), after the
   cgroup is empty.  Idempotent. */
int ab_cgroup_destroy (struct ab_cgroup *cg, ab_error_t *err);
/* The same without the check, for a caller that has just seen the cgroup
   empty (ab_cgroup_populated, ab_cgroup_wait_empty): a cgroup that is not
   fails its rmdir with EBUSY. */
int ab_cgroup_remove (struct ab_cgroup *cg, ab_error_t *err);
/* Remove everything if the cgroup is empty, asking the kernel by the
   rmdir of the leaf that tracks processes (EBUSY while any is left):
   1 removed, 0 not (busy, or not a leaf of ours alone: the caller kills,
   waits and removes), -1 error. */
int ab_cgroup_remove_if_empty (struct ab_cgroup *cg, ab_error_t *err);

void ab_cgroup_free (struct ab_cgroup *cg);
static inline void
ab_cgroup_freep (struct ab_cgroup **cg)
{
  ab_cgroup_free (*cg);
}

/* Persist in the state file and load back (for start/kill/delete run by
   other processes).  ab_cgroup_gen writes one JSON object value. */
void ab_cgroup_gen (struct ab_cgroup *cg, struct ab_gen *g);
int ab_cgroup_load (struct ab_json *obj, struct ab_cgroup **out, ab_error_t *err);

/* The v2 path relative to the unified mount root (e.g. "/agentbox-x"), or
   NULL; for logs and the state file. */
const char *ab_cgroup_v2_path (struct ab_cgroup *cg);

/* One hierarchy of the container's cgroup as a config's "cgroup" mount
   shows it on a v1 or hybrid host (runtime/mount.c): the host directory of
   the container's cgroup in it, and the name of the host's mount point
   (memory, cpu,cpuacct, unified, ...) with its controllers, for the
   symlinks of co-mounted hierarchies. */
struct ab_cgroup_view
{
  const char *name;
  const char *dir;
  const char *controllers; /* "cpu,cpuacct"; "" for v2 */
  bool v2;
};
/* The hierarchies of cg with a v1 controller, then its v2 one, at most
   `max`; 0 when it has no v1 hierarchy (a v2 host: the caller keeps its v2
   view).  The strings are cg's. */
size_t ab_cgroup_views (const struct ab_cgroup *cg, struct ab_cgroup_view *out, size_t max);
/* The host directory of the container's v2 cgroup, or NULL. */
const char *ab_cgroup_v2_dir (const struct ab_cgroup *cg);

#endif
