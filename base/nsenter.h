/* Doing something inside a container's user namespace from the runtime,
 * without host privileges (rootless).
 *
 * The runtime owns the user namespace it made for a container (it was its
 * creator), so the kernel gives it every capability over that namespace
 * and what the namespace owns -- but only for checks made against that
 * namespace.  A few operations check the caller's *own* user namespace
 * too: setns into the container's network namespace (CAP_SYS_ADMIN here
 * and there), open_tree(OPEN_TREE_CLONE) and fsopen (CAP_SYS_ADMIN over
 * the mount namespace the caller is in, the host's).  For those, a helper
 * enters the container's user namespace first, where it has them.
 *
 * setns(CLONE_NEWUSER) refuses a multithreaded caller, and the runtime has
 * threads (create's network and cgroup jobs, the egress engine), so the
 * helper is a process of its own that shares the runtime's memory and file
 * descriptor table (clone CLONE_VM | CLONE_FILES | CLONE_VFORK, like
 * posix_spawn): what fn stores in memory and every fd it opens are the
 * runtime's when it returns, and the calling thread waits for it.  fn runs
 * no code that another thread of the runtime could be in the middle of
 * holding a lock of this thread for (the caller is suspended).  It is not
 * a helper program: nothing is executed. */
#ifndef AB_BASE_NSENTER_H
#define AB_BASE_NSENTER_H

#include <stdbool.h>

#include "base/error.h"

struct ab_nsenter
{
  int userns_fd;  /* the user namespace to enter first (-1: stay; ours: skipped) */
  int netns_fd;   /* then this network namespace (-1: stay) */
  int mntns_fd;   /* then this mount namespace (-1: stay), one that user namespace owns */
};

/* Run fn (arg) in a helper that entered ns; fn's return value (0 or -1) is
   returned.  -1 and *err when the helper could not enter the namespaces
   (fn's own errors are fn's to report through arg). */
int ab_nsenter_run (const struct ab_nsenter *ns, int (*fn) (void *arg), void *arg, ab_error_t *err);

/* The user namespace that owns the namespace behind ns_fd (NS_GET_USERNS),
   or -1 with errno. */
int ab_ns_owner_fd (int ns_fd);

/* Whether the caller holds CAP_SYS_ADMIN in its own user namespace (then
   it enters a container's namespaces directly, from a thread). */
bool ab_have_cap_sys_admin (void);

#endif
