/* Helpers of the live cgroup tests (test-cgroup-live, test-cgroup-res):
 * children that stand in for the container, the host's own cgroups read
 * independently of the driver's plan, and a cleanup that removes whatever a
 * failed test left behind. */
#ifndef AB_TEST_CGROUP_UTIL_H
#define AB_TEST_CGROUP_UTIL_H

#include <stdbool.h>
#include <sys/types.h>

#include "runtime/cgroup/cgroup-internal.h"

/* The container's cgroup made at once, as create does it in two steps
   (plan, then realize). */
static inline int
t_cgroup_create (const char *cgroups_path, const char *id, const struct ab_resources *r, struct ab_cgroup **out,
                 ab_error_t *err)
{
  if (ab_cgroup_plan (cgroups_path, id, r, out, err) < 0)
    return -1;
  if (ab_cgroup_realize (*out, r, err) < 0)
    {
      ab_cgroup_free (*out);
      *out = NULL;
      return -1;
    }
  return 0;
}

/* "hybrid", "v1" or "v2": the layout the run expects; `ns` when inside a
   cgroup namespace with /sys/fs/cgroup remounted (absolute paths allowed). */
extern int t_mode;
extern bool t_ns;
extern char t_prefix[32]; /* "abt<pid>": every cgroup a test makes starts with it */

/* Parse argv (--mode=hybrid|v1|v2, --ns); print a skip plan and exit 0 when
   not root or cgroups are not usable. */
void t_init (int argc, char **argv);

/* A fresh container id: "<prefix>-<n>". */
const char *t_id (void);

/* Our own cgroup's directory in the hierarchy with v1 controller `ctrl`,
   or the v2 one for ctrl "" ; NULL when not mounted. */
const char *t_own_dir (const char *ctrl);
/* Each hierarchy's own directory, NULL-terminated. */
const char *const *t_own_dirs (void);

/* Every directory below our own cgroups whose name contains t_prefix,
   sorted and joined: "before" and "after" must match. */
char *t_snapshot (void);
/* Kill the processes in, and remove, every cgroup t_snapshot would list. */
void t_cleanup (void);

/* The trimmed contents of dir/file, or NULL. */
char *t_read (const char *dir, const char *file);
bool t_exists (const char *path);
/* Write into an interface file outside the driver (preparing a test). */
int t_write (const char *dir, const char *file, const char *value);

/* Start fn(arg) in a child placed in cg the way agentbox does it:
   clone3(CLONE_INTO_CGROUP) when there is a v2 tree, ab_cgroup_enter for
   the rest; the child runs fn only once it is in every hierarchy. */
pid_t t_spawn (struct ab_cgroup *cg, int (*fn) (void *), void *arg);
/* waitpid; returns the raw status, or -1. */
int t_wait (pid_t pid);

/* The resource-free create of a test cgroup with the default path. */
int t_create (const char *path, const struct ab_resources *r, struct ab_cgroup **cg, ab_error_t *err);

#endif
