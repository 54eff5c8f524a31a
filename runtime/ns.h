/* Namespaces: which to create, which to join (setns by path, type checked),
 * clone3 into them and into the container's cgroup, uid/gid maps written by
 * the parent, the time namespace and its offsets. */
#ifndef AB_RUNTIME_NS_H
#define AB_RUNTIME_NS_H

#include <stdbool.h>
#include <sys/types.h>

#include "base/error.h"
#include "spec/model.h"
#include "spec/spec.h"

struct ab_ns_setup
{
  unsigned long clone_flags; /* CLONE_NEW* given to clone3 */
  bool new_user;
  bool new_cgroup;           /* unshared by the child after it joined its cgroups */
  bool new_time;             /* unshared by the child, offsets written, then entered */
  int join_fd[AB_NS__COUNT]; /* fds of namespaces to join, -1 if none */
  bool any_join;
  /* With a mount namespace to join: the host's root directory, which its
     root must not be (runtime/child.c). */
  dev_t host_root_dev;
  ino_t host_root_ino;
  /* new_user, made inside this user namespace instead of ours (a warm one
     of the caller's, runtime/warm.h; -1: ours).  The intermediate process
     that enters it writes the new namespace's maps there: every range of
     nested_maps onto the same ids of that namespace, which maps them as
     nested_maps says (setgroups denied first unless nested_setgroups).
     The caller owns the fd. */
  int userns_parent_fd;
  const struct ab_linux *nested_maps;
  bool nested_setgroups;
  /* With userns_parent_fd: the intermediate process, once it wrote the
     maps, tells the child so itself (AB_SYNC_IDS_DONE, no mount tree to
     follow: the child makes its own), instead of the caller after its
     state write.  Then the child makes its mounts while we write it. */
  bool nested_ids_done;
  /* With userns_parent_fd: we enter that namespace ourselves, for good,
     and clone the container straight into a new one inside it (no
     intermediate process: its vfork, exit and reaping were a quarter of a
     millisecond).  Only for a caller that then only supervises, runs no
     hook and no fallback: every process it starts after would be in the
     warm namespace with all its capabilities, and getuid() says 0 there.
     Falls back to the intermediate process where setns refuses (a
     process with threads). */
  bool enter_parent_userns;
};

/* Open and type-check linux.namespaces[].path; compute the clone flags.
   A mount namespace to join must not be the runtime's own (the host's). */
int ab_ns_setup_init (const struct ab_spec *s, const struct ab_bundle *b, struct ab_ns_setup *plan, ab_error_t *err);
void ab_ns_setup_close (struct ab_ns_setup *plan);

/* Spawn the container process.  In the child returns 0 (and the child must
   never return from its entry point); in the parent returns the child's pid
   (host pid namespace) and *pidfd.  cgroup_fd: v2 cgroup for
   CLONE_INTO_CGROUP, or -1.  With namespaces to join, an intermediate
   process joins them and clones the container process as our child
   (CLONE_PARENT); sync_fd is used for it to report the pid.  So does a
   new user namespace made inside plan->userns_parent_fd, whose maps are
   then written when this returns. */
pid_t ab_ns_spawn (const struct ab_ns_setup *plan, int cgroup_fd, int child_sync_fd, int parent_sync_fd,
                   int *pidfd, ab_error_t *err);

/* Parent: the maps of the user namespace of `pid`, as the plan says
   (ids->how): written to /proc/<pid>/{uid_map,gid_map} (with "deny" in
   setgroups first for a single own id, which the kernel requires of a
   writer without CAP_SETGID), or by newuidmap and newgidmap. */
struct ab_plan_ids;
int ab_ns_write_idmaps (pid_t pid, const struct ab_linux *l, const struct ab_plan_ids *ids, ab_error_t *err);

/* The processes of the pid namespace of host process `init` and of the
   namespaces below it (host pids, unsorted; free *out): what a container
   without a cgroup (rootless, none delegated) has. */
int ab_pidns_pids (pid_t init, pid_t **out, size_t *n, ab_error_t *err);

/* sig to every live process of those but the init, once each, walking
   /proc again until a walk finds no one new (sig 0: none sent).  Each is
   pinned by a pidfd and signalled only if still in the namespace, so a
   recycled pid never is.  How many live (not zombies) besides the init
   the last walk found, or -1.  None where the init shares our pid
   namespace. */
int ab_pidns_signal (pid_t init, int sig, ab_error_t *err);

/* SIGKILL to every process of that pid namespace but the init that holds
   one of `pipes` (pipefs inodes) open, each pinned by a pidfd: what keeps
   a caller's output open once the process it waited for has ended.  How
   many, or -1. */
int ab_pidns_kill_pipe_holders (pid_t init, const ino_t *pipes, size_t n_pipes, ab_error_t *err);

/* Child: unshare(CLONE_NEWTIME), write the offsets, enter it (setns on
   /proc/self/ns/time_for_children, allowed for a single-threaded process). */
int ab_ns_enter_new_time (const struct ab_linux *l, ab_error_t *err);

#endif
