/* The options create and run share. */
#ifndef AB_CMD_CREATE_OPTS_H
#define AB_CMD_CREATE_OPTS_H

#include <stdbool.h>

#include "cmd/cmd.h"
#include "runtime/container.h"

struct ab_run_flags
{
  bool detach;
  bool keep;
};

/* Parse argv into o (and run-only flags when `run` is non-NULL).  Returns 0
   to proceed, -1 after printing --help, or an exit status for a usage
   error. */
int ab_parse_create_opts (const char *cmd, struct ab_global *g, int argc, char **argv, struct ab_create_opts *o,
                          struct ab_run_flags *run);

#endif
