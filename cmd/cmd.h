/* The command-line layer: global options, the subcommand table, exit
 * statuses.  Each subcommand lives in its own file and only translates
 * arguments into calls of the runtime library. */
#ifndef AB_CMD_H
#define AB_CMD_H

#include <stdbool.h>

#include "base/error.h"

/* Exit statuses (documented in agentbox(8)). */
enum
{
  AB_EXIT_OK = 0,
  AB_EXIT_FAILURE = 1,     /* the operation failed (message on stderr and in --log) */
  AB_EXIT_USAGE = 2,       /* wrong command-line use */
  AB_EXIT_SETUP = 125,     /* run: the sandbox could not be set up; nothing ran */
  AB_EXIT_CANNOT_EXEC = 126, /* run: the program exists but could not be executed */
  AB_EXIT_NOT_FOUND = 127, /* run: the program was not found in the container */
  AB_EXIT_EXEC_FAILED = 255, /* exec: agentbox could not run the process */
};

struct ab_global
{
  const char *root;       /* --root, default /run/agentbox (root) or $XDG_RUNTIME_DIR/agentbox;
                             NULL when neither (commands that keep state refuse to run) */
  const char *log_path;   /* --log */
  int log_format;         /* enum ab_log_format */
  bool debug;
  const char *systemd_cgroup; /* the option that asked for the systemd cgroup driver (--systemd-cgroup,
                                 --cgroup-manager systemd): accepted, refused when used; or NULL */
  int rootless;           /* --rootless: -1 auto, 0 false, 1 true */
  const char *cgroup_parent; /* --cgroup-parent: rootless, the delegated cgroup v2 parent, or NULL */
  const char *argv0;
  char **argv_all; /* the whole command line, for a re-exec from the sealed copy */
};

struct ab_cmd
{
  const char *name;
  int (*run) (struct ab_global *g, int argc, char **argv);
  const char *summary;
  bool sealed; /* starts container processes: run from a sealed copy of the binary */
  bool needs_root; /* keeps state: refuses to run without a state root */
};

#define AB_DEFAULT_ROOT "/run/agentbox"

/* Print the error and map its class to an exit status. */
int ab_cmd_fail (const ab_error_t *err);

/* ab_container_create for `create` and `run --detach` (cmd names it),
   with SIGINT, SIGTERM and SIGHUP held from before anything is made until
   it returned, and seen meanwhile by its long waits (a hook that hangs is
   killed: ab_cancel_fd).  0: made; -1: failed, *err set; > 0: one of them
   came, and this is the exit status (128 + it): whatever this create made
   is deleted (one that failed undid itself, and an id that existed before
   is never touched) and one line says so, so that a creator told to stop
   leaves no container.  The signals then stay held until the command
   exits: a second Ctrl-C cannot cut the deletion short. */
struct ab_create_opts;
int ab_cmd_create_held (const char *root, const char *cmd, const struct ab_create_opts *o, ab_error_t *err);
/* Usage error unless fds 3 .. n+2 are all open and none is agentbox's own
   (the log file, record_fd). */
int ab_cmd_check_preserve_fds (const char *cmd, int listen, int n, int record_fd);
/* systemd socket activation, as runc: LISTEN_FDS=N in our environment,
   with LISTEN_PID ours, passes fds 3 .. N+2 on before the --preserve-fds
   ones.  0 with *n set (0 without it), or a usage error's
   exit status. */
int ab_cmd_listen_fds (const char *cmd, int *n);
/* A usage error: "agentbox <cmd>: <message>" plus a hint; returns AB_EXIT_USAGE. */
int ab_cmd_usage_error (const char *cmd, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

/* Require between min and max positional arguments after option parsing
   (argv[optind..]); prints a usage error naming the command otherwise. */
int ab_cmd_positionals (const char *cmd, int argc, char **argv, int min, int max, const char *what);
/* A subcommand whose only argument is the container id (start, pause,
   resume): parse it, run op, map its error to the exit status. */
int ab_cmd_on_id (struct ab_global *g, int argc, char **argv, const char *cmd, const char *help,
                  int (*op) (const char *root, const char *id, ab_error_t *err));
/* --format of list and ps: "table" or "json" (sets *json); otherwise a
   usage error naming the command, whose exit status is returned. */
int ab_cmd_parse_format (const char *cmd, const char *arg, bool *json);
/* Parse a signal: a number, or a name with or without the SIG prefix. */
int ab_parse_signal (const char *s);

/* --die-with-parent PID: end (cancel, SIGUSR1) when the parent that
   spawned us dies; fails if it is already gone. */
int ab_die_with_parent (const char *cmd, const char *pid);

/* The fd of --record PATH: `-`, /dev/stdout, /dev/stderr and /dev/fd/N
   are the fds we already have; anything else is created or truncated.
   -1 with errno on failure. */
int ab_open_record (const char *path);
/* --pid-file PATH of `cmd`: 0 when the directory it goes in is one, else
   the usage error's exit status (as --record in a missing directory):
   found before anything is made, not once the container exists. */
int ab_cmd_check_pid_file (const char *cmd, const char *path);

/* The uid/gid maps of the user namespace a config creates, or NULLs. */
struct ab_spec;
struct ab_idmaps;
void ab_new_userns_maps (const struct ab_spec *s, const struct ab_idmaps **uids, const struct ab_idmaps **gids);

/* Subcommands (cmd/<name>.c). */
int ab_cmd_spec (struct ab_global *g, int argc, char **argv);
int ab_cmd_features (struct ab_global *g, int argc, char **argv);
int ab_cmd_state (struct ab_global *g, int argc, char **argv);
int ab_cmd_list (struct ab_global *g, int argc, char **argv);
int ab_cmd_validate (struct ab_global *g, int argc, char **argv);
int ab_cmd_audit (struct ab_global *g, int argc, char **argv);
int ab_cmd_create (struct ab_global *g, int argc, char **argv);
int ab_cmd_start (struct ab_global *g, int argc, char **argv);
int ab_cmd_run (struct ab_global *g, int argc, char **argv);
int ab_cmd_kill (struct ab_global *g, int argc, char **argv);
int ab_cmd_delete (struct ab_global *g, int argc, char **argv);
int ab_cmd_exec (struct ab_global *g, int argc, char **argv);
int ab_cmd_pause (struct ab_global *g, int argc, char **argv);
int ab_cmd_resume (struct ab_global *g, int argc, char **argv);
int ab_cmd_ps (struct ab_global *g, int argc, char **argv);
int ab_cmd_events (struct ab_global *g, int argc, char **argv);
int ab_cmd_update (struct ab_global *g, int argc, char **argv);
int ab_cmd_mcp (struct ab_global *g, int argc, char **argv);
int ab_cmd_workspace (struct ab_global *g, int argc, char **argv);
int ab_cmd_userns_holder (struct ab_global *g, int argc, char **argv);

#endif
