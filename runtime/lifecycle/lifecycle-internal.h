/* Helpers shared by runtime/lifecycle/create.c and runtime/lifecycle/lifecycle.c. */
#ifndef AB_RUNTIME_LIFECYCLE_INTERNAL_H
#define AB_RUNTIME_LIFECYCLE_INTERNAL_H

#include "runtime/lifecycle/container.h"
#include "runtime/ns.h"

static inline void
ab_container_freep (struct ab_container **c)
{
  if (*c)
    ab_container_free (*c);
}
#define _cleanup_container_ __attribute__ ((cleanup (ab_container_freep)))

/* OCI state JSON with the host pid, for hooks in the runtime namespace. */
char *ab_runtime_state_json (struct ab_container *c, int status, size_t *len);
/* Write the pid file atomically; its directory resolves beneath the bundle
   b (may be NULL) when it lies inside. */
int ab_write_pid_file (const char *path, const struct ab_bundle *b, pid_t pid, ab_error_t *err);

/* Drop c's lock on its state directory (flock; if that fails, by
   reopening the directory: a lock must never be kept by mistake). */
int ab_container_unlock (struct ab_container *c, ab_error_t *err);

/* Put cg into c->state (not written). */
int ab_container_set_cgroup (struct ab_container *c, struct ab_cgroup *cg, ab_error_t *err);
/* Record c->cg in the state file. */
int ab_container_save_cgroup (struct ab_container *c, ab_error_t *err);

/* Whether c runs on the private rootfs skeleton of a `run --default`,
   which goes with the container (<root>/.rootfs@<id>). */
bool ab_container_private_rootfs (const struct ab_container *c);

/* Kill what is left in the cgroup, remove the cgroups and the netns bind
   mount: everything create made except the state directory.  Idempotent. */
int ab_container_release_resources (struct ab_container *c, ab_error_t *err);
/* ab_container_release_resources failed with *err: keep the state
   directory, state.json recording what is left, for `delete --force`, and
   say so at the end of err's message. */
void ab_container_keep_for_delete (struct ab_container *c, ab_error_t *err);

/* Load a container by id (state, cgroup), locked shared or exclusive. */
int ab_container_load (const char *root, const char *id, bool exclusive, struct ab_container **out,
                       ab_error_t *err);
/* The state alone (shared lock, c->cg NULL): no cgroup directory opened,
   for callers that only read the recorded pid or flags. */
int ab_container_peek (const char *root, const char *id, struct ab_container **out, ab_error_t *err);
/* Parse the config.json snapshot of a loaded container. */
struct ab_spec *ab_container_load_spec (struct ab_container *c, ab_error_t *err);
/* err came from a broken sync socket: if the container process was killed
   by a signal (from outside: a kill of the container during its setup),
   say that instead. */
void ab_explain_dead_child (int pidfd, ab_error_t *err);
/* Where the listener of a seccomp filter goes (runtime/seccomp-notify.h),
   should the process loading it send one. */
struct ab_listener_target
{
  struct ab_container *c;       /* the container: its state */
  const struct ab_seccomp *sc;  /* NULL: read from c's config snapshot when a listener comes */
  int status;                   /* the container's status, for the state */
  pid_t pid;                    /* the process loading the filter (host pid) */
  int pidfd;                    /* ... killed when the agent cannot get the listener */
};

/* After a start/exec request: STARTED (when `started`: the child sends
   it), a seccomp listener to pass on to t (t may be NULL: none expected),
   then EOF (executed) or an error: -1, or AB_AWAIT_NO_AGENT when the
   listener could not be passed on and the process was killed for it. */
int ab_await_exec (int fd, bool started, const struct ab_listener_target *t, ab_error_t *err);
#define AB_AWAIT_NO_AGENT (-2)

#endif
