/* The last steps of every container process (init or exec'd), in order:
 *   cwd resolved -> HOME (when process.env has none) -> rlimits ->
 *   (seccomp without no_new_privs) -> bounding
 *   set -> user and groups -> capabilities -> parent-death signal (a
 *   foreground process) -> no_new_privs -> chdir -> seccomp (its listener
 *   handed over) -> AB_SYNC_EXEC -> execve
 * Everything that can fail happens before execve and is reported over the
 * sync socket; the program is looked up in the *container's* PATH. */
#ifndef AB_RUNTIME_PROCESS_H
#define AB_RUNTIME_PROCESS_H

#include <stdbool.h>
#include <sys/types.h>

#include "base/error.h"
#include "runtime/seccomp.h"
#include "spec/model.h"

/* setrlimit for each of process.rlimits (the fallback without namespaces
   too, runtime/fallback.c). */
int ab_rlimits_apply (const struct ab_process *p, ab_error_t *err);

/* Before anything is set up: fail as ab_rlimits_apply would for a hard
   limit above ours that the container's process cannot raise (it lacks
   CAP_SYS_RESOURCE in the initial user namespace: we do, or it is in a
   user namespace), so `create` reports it rather than `start`. */
int ab_rlimits_check (const struct ab_process *p, bool userns, ab_error_t *err);

/* The caller's real, effective and saved uids and gids are all 0 (it
   just called setresuid/setresgid (0, 0, 0)): ab_user_apply skips what
   would not change them. */
void ab_process_ids_root (void);

/* Mark every fd >= first close-on-exec (close_range CLOSE_RANGE_CLOEXEC;
   fallback: walk /proc/self/fd), and clear close-on-exec on the preserved
   fds 3..first-1. */
int ab_fds_prepare (int first, ab_error_t *err);

/* The container's first process, after pivot_root and before the root is
   made read-only: make process.cwd if it is missing, as runc does, with
   every missing level, owned by the container's root (the caller), 0755;
   resolved beneath "/" (base/resolve.h), so a link on the way never
   leads to the host.  exec makes nothing (runc neither). */
int ab_cwd_make (const char *cwd, ab_error_t *err);

/* Record which signals this process ignores (/proc/self/status SigIgn),
   right before cloning a container process: its ab_process_exec then
   resets only those (execve resets caught ones).  Without a snapshot it
   resets all. */
void ab_signals_snapshot (void);

/* In the child, before execve: every signal the snapshot saw ignored back
   to SIG_DFL (all of them without one), and nothing blocked. */
void ab_signals_reset (void);

/* A new session keyring of that name (NULL: anonymous), never the
   caller's: one that cannot be joined is a failure, unless keyrings are
   not available at all (ENOSYS, or keyctl refused with EPERM). */
int ab_keyring_join_new (const char *name, ab_error_t *err);

/* Privilege drop and exec.  `seccomp` may be NULL; a filter with a
   listener is handed over on report_fd (the starter's setup socket,
   runtime/seccomp-notify.h).  report_fd >= 0: the socket of whoever
   started us (docs/protocol.md), told AB_SYNC_EXEC right before the
   execve, so that an end of the socket without it is a process that died
   before its program ran.  landlock_fd: a landlock ruleset to restrict the
   process with (runtime/landlock.h), or -1.  with_parent: the process dies
   with that socket's owner, its parent (a foreground run or exec): the
   parent-death signal, which every change of uid or gid clears, is set
   again after the last one.  Does not return on success; on failure *err
   is set (class AB_EC_EXEC for a program that cannot be executed, errnum
   ENOENT/EACCES/...). */
int ab_process_exec (const struct ab_process *p, const struct ab_seccomp_prog *seccomp, bool allow_setgroups,
                     int report_fd, int landlock_fd, bool with_parent, ab_error_t *err);

/* The PATH lookup of the container: argv[0] with a '/' is used as is,
   otherwise each directory of PATH from `env` (default
   /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin) is tried
   with execve.  Returns only on failure (errno). */
void ab_execvpe_container (char *const argv[], char *const envp[]);

#endif
