/* The container process between clone and execve (docs/child-setup.md). */
#ifndef AB_RUNTIME_CHILD_H
#define AB_RUNTIME_CHILD_H

#include <stdbool.h>
#include <sys/types.h>

#include "runtime/landlock.h"
#include "runtime/ns.h"
#include "runtime/seccomp.h"
#include "runtime/plan/plan.h"
#include "spec/spec.h"

struct ab_child_ctx
{
  const char *id;
  const struct ab_bundle *bundle;  /* its directory and root filesystem */
  const struct ab_plan *plan;      /* the model, the process and the mounts to make */
  const struct ab_ns_setup *ns;
  const struct ab_seccomp_prog *seccomp; /* NULL: no filter */
  const struct ab_ll_ruleset *landlock;  /* fitted to the kernel (runtime/landlock.h); NULL: none */
  pid_t parent_pid;
  int sync_fd;         /* child end of the setup socket */
  int wall_sock_fd;    /* the wall's netlink sockets go to the parent here, made first thing; -1 */
  int start_listen_fd; /* detached: the start socket to accept on; -1 otherwise */
  int console_fd;      /* connected console socket, or -1 */
  int stdio[3];        /* fds to make 0,1,2, or -1 */
  int preserve_fds;
  bool no_new_keyring;
  bool foreground;
  bool allow_setgroups;
  const char *annotations_json;       /* for container-namespace hooks' state */
  struct ab_cgroup_selfjoin *cg_join; /* v1 `tasks` fds to join first, n_cg_join of them */
  const struct ab_cgroup *cg;         /* the container's cgroup: what a "cgroup" mount shows */
  size_t n_cg_join;
};

/* Never returns. */
void ab_child_main (struct ab_child_ctx *c) __attribute__ ((noreturn));

/* Exit codes of the container process when setup fails before exec. */
#define AB_CHILD_EXIT_SETUP 125
#define AB_CHILD_EXIT_NOEXEC 126
#define AB_CHILD_EXIT_NOENT 127

#endif
