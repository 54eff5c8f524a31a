/* exec: a new process inside a running container.  It joins every namespace
 * and the cgroup of the container, gets the container's (or the process
 * file's) capabilities, no_new_privs, seccomp and rlimits, and carries
 * nothing of the host: no fd beyond stdio and --preserve-fds, no host cwd,
 * not dumpable (so not ptrace-able or /proc-readable by the container's
 * processes) until it executes the program. */
#ifndef AB_RUNTIME_EXEC_H
#define AB_RUNTIME_EXEC_H

#include <stdbool.h>
#include <sys/types.h>

#include "base/error.h"
#include "base/util.h"
#include "spec/model.h"

struct ab_exec_opts
{
  const char *root;
  const char *id;
  const char *process_file; /* --process: a config.md process object */
  struct ab_strv args;      /* the program (when no process file) */
  const char *cwd;
  struct ab_strv env;       /* NAME=VALUE added or replacing */
  bool user_set;
  uid_t uid;
  gid_t gid;
  bool gid_set;
  uint32_t *add_gids;       /* --additional-gids */
  size_t n_add_gids;
  struct ab_strv add_caps;  /* --cap */
  bool tty;
  const char *console_socket;
  const char *pidfd_socket; /* --pidfd-socket: where the process's pidfd is sent once it runs */
  bool relay_tty;           /* a terminal without console_socket: the caller relays it (pty_master) */
  unsigned short tty_rows, tty_cols; /* the relayed terminal's first size (0: consoleSize or none) */
  const char *pid_file;
  int preserve_fds;
  bool detach;
  bool no_new_privs;        /* force no_new_privs on */
  bool ignore_paused;       /* exec into a paused container (the process waits, frozen, for resume) */
  const char *apparmor_profile; /* --apparmor, --process-label: NULL keeps the config's */
  const char *selinux_label;
  struct ab_strv cgroups;   /* --cgroup [CONTROLLERS:]PATH: existing sub-cgroups of the container's */
  int stdio[3];
};
void ab_exec_opts_init (struct ab_exec_opts *o);
/* Free the vectors of o (for __attribute__ ((cleanup))). */
void ab_exec_opts_clear (struct ab_exec_opts *o);

struct ab_exec
{
  pid_t pid;
  int pidfd;
  int sync_fd;
  struct ab_cgroup *cg; /* the container's */
  int cg_dirfd;         /* v2 cgroup of the container (for the exec's own sub-cgroup), -1 */
  char subcg[48];       /* name of the exec's sub-cgroup below it, "" if none */
  int subcg_fd;
  pid_t pgid;
  pid_t init_pid;       /* the container's init, when the exec has no sub-cgroup */
  ino_t init_pidns;     /* the inode of its pid namespace then */
  struct ab_cgroup_stats *before;
  int pty_master;       /* relay_tty: the master of the process's terminal; -1 */
  struct ab_strv degraded; /* what landlock gives up on this kernel (the record's `degraded`) */
};

/* The uid/gid maps of a running container's user namespace when it has
   its own (from /proc/<init>/uid_map); -1 otherwise. */
int ab_exec_container_maps (const char *root, const char *id, struct ab_idmaps *uids, struct ab_idmaps *gids);

/* Spawn the process and wait until it executed the program (or failed to:
   class AB_EC_EXEC). */
int ab_exec_start (const struct ab_exec_opts *o, struct ab_exec **out, ab_error_t *err);
/* SIGTERM (or another catchable signal) to every process of the exec: its
   sub-cgroup frozen, each process in it signalled, thawed, so none forks
   past it or exits to have its pid reused meanwhile; without a sub-cgroup,
   its process group, the process itself and, until it is reaped, its
   descendants (a setsid'd child is one; a double-forked one is not). */
void ab_exec_signal_all (struct ab_exec *x, int sig);
/* Kill the exec'd process and everything it started, as found above. */
void ab_exec_kill_all (struct ab_exec *x);
/* Once the exec's process ended, without a sub-cgroup: kill what keeps
   its output open (`pipes`, the read ends' inodes) in the container, a
   daemon that left its process group among them. */
void ab_exec_kill_pipe_holders (struct ab_exec *x, const ino_t *pipes, size_t n);
/* Remove the sub-cgroup; close everything. */
void ab_exec_free (struct ab_exec *x);

#endif
