/* The options create and run share, and those of run alone. */
#ifndef AB_CMD_CREATE_OPTS_H
#define AB_CMD_CREATE_OPTS_H

#include <getopt.h>
#include <stdbool.h>

#include "cmd/cmd.h"
#include "runtime/lifecycle/container.h"
#include "runtime/sandbox/sandbox.h"
#include "runtime/supervise/supervise.h"

enum
{
  AB_OPT_BUNDLE = 'b',
  AB_OPT_DETACH = 'd',
  AB_OPT_PID_FILE = 256,
  AB_OPT_CONSOLE_SOCKET,
  AB_OPT_PRESERVE_FDS,
  AB_OPT_NO_NEW_KEYRING,
  AB_OPT_NO_PIVOT,
  AB_OPT_HELP,
  AB_OPT_EGRESS_POLICY,
  AB_OPT_ACCEPT_DEGRADED,
  AB_OPT_PIDFD_SOCKET,
  AB_OPT__CREATE_LAST,
};

#define AB_CREATE_LONG_OPTIONS                                                                                     \
  { "bundle", required_argument, NULL, AB_OPT_BUNDLE }, { "pid-file", required_argument, NULL, AB_OPT_PID_FILE },  \
      { "console-socket", required_argument, NULL, AB_OPT_CONSOLE_SOCKET },                                        \
      { "pidfd-socket", required_argument, NULL, AB_OPT_PIDFD_SOCKET },                                            \
      { "preserve-fds", required_argument, NULL, AB_OPT_PRESERVE_FDS },                                            \
      { "no-new-keyring", no_argument, NULL, AB_OPT_NO_NEW_KEYRING },                                              \
      { "no-pivot", no_argument, NULL, AB_OPT_NO_PIVOT }, { "help", no_argument, NULL, AB_OPT_HELP },         \
      { "egress-policy", required_argument, NULL, AB_OPT_EGRESS_POLICY },                                          \
      { "accept-degraded", no_argument, NULL, AB_OPT_ACCEPT_DEGRADED }

#define AB_CREATE_HELP                                                                                             \
  "  -b, --bundle DIR         bundle directory (default: the current directory)\n"                                 \
  "      --pid-file FILE      write the container process's pid to FILE (bare digits)\n"                           \
  "      --console-socket S   send the pty master to the Unix socket S (process.terminal)\n"                       \
  "      --pidfd-socket S     send a pidfd of the container's process to the Unix socket S once it is created\n"  \
  "      --preserve-fds N     pass fds 3..3+N-1 to the container\n"                                                \
  "      --no-new-keyring     keep the caller's session keyring\n"                                                \
  "      --egress-policy FILE the admin baseline of the egress proxy (annotations can only narrow it)\n"        \
  "      --accept-degraded    rootless: run even where a limit cannot be enforced here (each is listed in\n"      \
  "                           the record's `degraded`); without it such a config fails, naming the limit\n"

/* create: returns 0 to proceed, -1 after --help, or an exit status. */
int ab_parse_create_opts (const char *cmd, struct ab_global *g, int argc, char **argv, struct ab_create_opts *o);

/* run */
struct ab_run_cli
{
  struct ab_create_opts co;
  struct ab_supervise_opts so;
  struct ab_sandbox_opts sb;
  bool sandbox; /* --default */
  bool ws_overlay; /* --workspace-mode overlay */
  bool ws_opts;    /* --workspace-changes */
  const char *ws_size; /* --workspace-size */
  bool limit_opts; /* options of --default alone: the limits, --ro-bind, --bind, --env-pass */
  bool detach;
  bool fallback;       /* --fallback landlock */
  int record_fd;       /* -1: no record */
  const char *record_id; /* raw JSON of the request id ("null" when absent) */
};
int ab_parse_run_cli (const char *cmd, struct ab_global *g, int argc, char **argv, struct ab_run_cli *cli);
void ab_run_cli_free (struct ab_run_cli *cli);

#endif
