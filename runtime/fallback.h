/* The sandbox without namespaces, for hosts that refuse user namespaces
 * (docs/landlock.md): the mechanisms.
 *
 *   ab_userns_probe       can this process create a user namespace, and if
 *                         not, what refuses it (one line)
 *   ab_fallback_spawn     the program as our child, in a session of its own:
 *                         rlimits, no capabilities, no_new_privs, landlock,
 *                         seccomp, execve
 *   ab_fallback_kill_all  without a pid namespace or a cgroup, everything
 *                         the program started: its session, then every
 *                         descendant of ours (we are their subreaper: a
 *                         setsid'd, double-forked grandchild is ours too)
 *   ab_signal_descendants a signal to every descendant of a process
 *
 * What the rules are (which host paths, the workspace, the private
 * temporary directory) is decided by the built-in sandbox
 * (runtime/sandbox/fallback.c). */
#ifndef AB_RUNTIME_FALLBACK_H
#define AB_RUNTIME_FALLBACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"
#include "runtime/landlock.h"
#include "runtime/seccomp.h"
#include "spec/model.h"

/* 0 when a user namespace (with a mount namespace in it) can be created
   here; -1 when not, with why[] naming what refuses it:
   "user.max_user_namespaces=0", "kernel.unprivileged_userns_clone=0",
   AppArmor's restrict_unprivileged_userns, a seccomp filter.  Forks a
   child for the test. */
int ab_userns_probe (char *why, size_t n);

struct ab_fallback
{
  char *const *argv; /* the program (looked up in envp's PATH) */
  char *const *envp;
  const char *cwd;                       /* a host directory */
  const struct ab_process *process;      /* its rlimits */
  uint64_t nproc;                        /* RLIMIT_NPROC to set when the process sets none (0: none) */
  const struct ab_seccomp_prog *seccomp; /* NULL: none */
  const struct ab_ll_ruleset *landlock;  /* fitted to this kernel, enforcing */
  int stdio[3];                          /* the program's 0, 1, 2 (-1: ours) */
};

/* Spawn the program; returns its pid with *pidfd, once it has executed
   the program, or -1 with *err: the step of the setup that failed (class
   AB_EC_EXEC with ENOENT/EACCES for a program that cannot run). */
pid_t ab_fallback_spawn (const struct ab_fallback *f, int *pidfd, ab_error_t *err);

/* SIGKILL the session `sid` and every descendant of the calling process,
   and reap them but `keep` (-1: none; its waiter reaps it), until none is
   left alive (the caller must be a child subreaper and have no other
   children).  The pidfd of each is taken before it is signalled: a pid
   reused meanwhile is never hit. */
void ab_fallback_kill_all (pid_t sid, pid_t keep);

/* Send sig to every live descendant of `root` (0: send nothing), each
   once and pinned by its pidfd as above, walking /proc again until a walk
   finds no one new; how many the last walk found.  The sandbox without
   namespaces is the program's descendants; a container's pid namespace
   is not (one `exec` put there is none): ab_pidns_signal walks that. */
size_t ab_signal_descendants (pid_t root, int sig);

#endif
