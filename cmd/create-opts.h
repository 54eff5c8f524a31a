/* The options create and run share, and those of run alone. */
#ifndef AB_CMD_CREATE_OPTS_H
#define AB_CMD_CREATE_OPTS_H

#include <getopt.h>
#include <stdbool.h>

#include "cmd/cmd.h"
#include "runtime/container.h"
#include "runtime/sandbox.h"
#include "runtime/supervise.h"

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
  AB_OPT__CREATE_LAST,
};

#define AB_CREATE_LONG_OPTIONS                                                                                     \
  { "bundle", required_argument, NULL, AB_OPT_BUNDLE }, { "pid-file", required_argument, NULL, AB_OPT_PID_FILE },  \
      { "console-socket", required_argument, NULL, AB_OPT_CONSOLE_SOCKET },                                        \
      { "preserve-fds", required_argument, NULL, AB_OPT_PRESERVE_FDS },                                            \
      { "no-new-keyring", no_argument, NULL, AB_OPT_NO_NEW_KEYRING },                                              \
      { "no-pivot", no_argument, NULL, AB_OPT_NO_PIVOT }, { "help", no_argument, NULL, AB_OPT_HELP },         \
      { "egress-policy", required_argument, NULL, AB_OPT_EGRESS_POLICY }

#define AB_CREATE_HELP                                                                                             \
  "  -b, --bundle DIR         bundle directory (default: the current directory)\n"                                 \
  "      --pid-file FILE      write the container process's pid to FILE (bare digits)\n"                           \
  "      --console-socket S   send the pty master to the Unix socket S (process.terminal)\n"                       \
  "      --preserve-fds N     pass fds 3..3+N-1 to the container\n"                                                \
  "      --no-new-keyring     keep the caller's session keyring\n"                                                \
  "      --egress-policy FILE the admin baseline of the egress proxy (annotations can only narrow it)\n"

/* Handle one of the shared options: 1 handled, 0 not a shared option,
   or an exit status (> 1) for a usage error. */
int ab_create_opt (const char *cmd, int c, const char *arg, struct ab_create_opts *o);
/* Common checks after parsing (systemd cgroup driver, ...). */
int ab_create_opts_finish (const char *cmd, struct ab_global *g, struct ab_create_opts *o);

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
  bool ws_opts;    /* --workspace-size or --workspace-changes */
  bool detach;
  bool fallback;       /* --fallback landlock */
  uint64_t timeout_ms; /* --timeout, 0 = none */
  int record_fd;       /* -1: no record */
  const char *record_id; /* raw JSON of the request id ("null" when absent) */
};
int ab_parse_run_cli (const char *cmd, struct ab_global *g, int argc, char **argv, struct ab_run_cli *cli);
/* The wall-clock limit: the smaller of --timeout and the annotation. */
int ab_run_cli_timeout (struct ab_run_cli *cli, const struct ab_spec *s, ab_error_t *err);
void ab_run_cli_free (struct ab_run_cli *cli);

#endif
