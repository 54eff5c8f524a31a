/* The container lifecycle: the library the CLI, the supervisor and the MCP
 * server call.  runc semantics (runtime.md): create leaves the container
 * process blocked before exec; start releases it; kill signals it; delete
 * removes everything create made. */
#ifndef AB_RUNTIME_CONTAINER_H
#define AB_RUNTIME_CONTAINER_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "base/error.h"
#include "runtime/lifecycle/state.h"
#include "spec/spec.h"

struct ab_cgroup;
struct ab_changeset;
struct ab_net;
struct ab_plan;
struct ab_seccomp_prog;

struct ab_create_opts
{
  const char *root;           /* state directory (--root) */
  const char *id;
  const char *bundle;         /* bundle directory; ignored when `prebuilt` is set */
  struct ab_bundle *prebuilt; /* an already loaded bundle (taken over) */
  const char *pid_file;
  const char *console_socket;
  const char *pidfd_socket;   /* --pidfd-socket: where the init's pidfd is sent once it is created */
  bool relay_tty;             /* process.terminal without console_socket: the caller relays the pty
                                 (a foreground run); the master ends up in pty_master */
  int preserve_fds;
  int listen_fds;             /* LISTEN_FDS: fds 3.. before the preserved ones (ab_plan_opts.listen_fds) */
  bool no_new_keyring;
  bool foreground;            /* the caller stays and supervises (run without --detach) */
  int stdio[3];               /* fds that become the container's 0,1,2; -1 = ours */
  int rootless;               /* -1 auto, 0, 1 */
  const char *egress_policy;  /* --egress-policy FILE: the admin baseline, or NULL */
  uint64_t timeout_ms;        /* --timeout (foreground), 0 = none: the plan takes the smaller of it and the config's */
  const char *cgroup_parent;  /* --cgroup-parent: rootless, the delegated cgroup v2 parent, or NULL */
  bool accept_degraded;       /* --accept-degraded: run without what the host cannot enforce */
  bool grace_set;             /* --timeout-grace given */
  uint64_t grace_ms;
  /* The caller makes this one container and then only supervises it, in
     this process (a foreground run): made inside the user's warm user
     namespace (subordinate ids), it may enter that namespace itself
     instead of through an intermediate process (runtime/ns.h). */
  bool may_enter_warm_userns;
};

struct ab_container
{
  char *id;
  char *root;
  int rootfd;  /* state root */
  int dirfd;   /* <root>/<id>, locked */
  int lock;    /* what this process holds on dirfd: LOCK_EX, LOCK_SH or 0 */
  struct ab_state_file state_file; /* for ab_container_write_state */
  struct ab_bundle *bundle;
  struct ab_plan *plan;  /* what create derived from the bundle and the options (runtime/plan/plan.h) */
  struct ab_state *state;
  struct ab_cgroup *cg;
  pid_t pid;
  int pidfd;
  int sync_fd; /* parent end of the setup socket (foreground) */
  int netns_fd; /* the container's netns, held for the denied record; -1 */
  int pty_master; /* relay_tty: the master of the container's terminal; -1 */
  bool started;
  bool created_here;  /* by this process: then c->state->netns_held is all it ever held */
  bool warm_wanted;   /* mapped by the helpers for want of a warm user namespace (runtime/warm.h) */
  struct ab_net *net; /* network policies and the proxy (runtime/lifecycle/network.h) */
  struct ab_strv degraded; /* protections create could not apply here (the record's `degraded`) */
  struct ab_changeset *ws; /* an overlay workspace's change set (runtime/lifecycle/wsstore.h), or NULL */
};

void ab_create_opts_init (struct ab_create_opts *o);

/* What create checks of a loaded bundle's config beyond its validation:
   what agentbox supports (ab_spec_check_supported), then this host (LSMs,
   rlimits above ours when not in the foreground, the namespaces to join by
   path: opened into *ns, the caller's to close; with ns NULL opened,
   checked and closed).  `validate` runs it too, so that its verdict is
   create's. */
struct ab_ns_setup;
int ab_container_check (const struct ab_bundle *b, bool foreground, struct ab_ns_setup *ns, ab_error_t *err);

/* The plan of a checked config (create's first phase, and validate's
   verdict): for a rootless container, what the host's cgroups allow it
   (the delegated cgroup v2 below cgroup_parent or agentbox's own, the
   limits it cannot enforce) goes into the plan's options first. */
struct ab_plan;
struct ab_plan_opts;
int ab_container_plan (const struct ab_spec *s, const struct ab_plan_opts *po, const char *cgroup_parent,
                       struct ab_plan **out, ab_error_t *err);

/* Create: everything up to status `created`.  On failure nothing is left
   behind (process, cgroups, mounts, state directory). */
int ab_container_create (const struct ab_create_opts *o, struct ab_container **out, ab_error_t *err);

/* Release a container this process created in the foreground: exec the
   user program, run poststart hooks. */
int ab_container_start_local (struct ab_container *c, ab_error_t *err);

/* Wait for the container's init to exit (pidfd).  *status: the waitid
   siginfo (si_code CLD_EXITED/KILLED/DUMPED, si_status). */
int ab_container_wait (struct ab_container *c, siginfo_t *info, ab_error_t *err);

/* Remove everything of a container this process holds (the `delete` of a
   foreground run): kill leftovers, poststop hooks, cgroups, state. */
int ab_container_destroy (struct ab_container *c, ab_error_t *err);

void ab_container_free (struct ab_container *c);

/* Write c->state: in place while this process holds (or can take at once)
   the directory's exclusive lock, else by rename (ab_state_write_locked). */
int ab_container_write_state (struct ab_container *c, ab_error_t *err);

/* Operations by id, from any process. */
int ab_container_start (const char *root, const char *id, ab_error_t *err);
int ab_container_kill (const char *root, const char *id, int sig, bool all, ab_error_t *err);
int ab_container_delete (const char *root, const char *id, bool force, ab_error_t *err);
/* runc's pause, resume, ps and update (runtime/lifecycle/control.c): the cgroup
   freezer (status `paused` while frozen), the pids of every process in the
   container's cgroup (host pid namespace; free *pids), new limits. */
int ab_container_pause (const char *root, const char *id, ab_error_t *err);
int ab_container_resume (const char *root, const char *id, ab_error_t *err);
int ab_container_pids (const char *root, const char *id, pid_t **pids, size_t *n, ab_error_t *err);
struct ab_resources;
int ab_container_update (const char *root, const char *id, const struct ab_resources *resources,
                         ab_error_t *err);
/* runc's events: a created, running or paused container with a cgroup
   (c->cg), loaded with its init's pidfd (c->pidfd, readable once the init
   exits: the container stopped) and its state directory unlocked, so that
   the caller may watch it for as long as it runs.  A stopped one is an
   error of class AB_EC_STATE saying it is not running. */
int ab_container_open_events (const char *root, const char *id, struct ab_container **out, ab_error_t *err);
/* The state and its live status. */
int ab_container_state (const char *root, const char *id, struct ab_state **out, int *status, ab_error_t *err);

/* The held network namespace of a container with a wall (<root>/<id>/netns), or -1. */
int ab_net_held_netns (const char *root, const char *id);

/* Exit status for a waitid result: the code, or 128 + signal. */
int ab_exit_status_from_siginfo (const siginfo_t *info);

#endif
