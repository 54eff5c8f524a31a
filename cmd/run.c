/* agentbox run [create options] [--detach] [--keep] ID
 * create + start; in the foreground, wait and exit with the container's
 * status (its exit code, or 128 + the signal that killed it), then delete. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "cmd/cmd.h"
#include "cmd/create-opts.h"
#include "runtime/container.h"
#include "runtime/log.h"
#include "runtime/supervise.h"
#include "runtime/util.h"

/* Exit statuses of `run` for failures of agentbox itself, distinct from any
   the program could choose only by convention (see agentbox(8)). */
int
ab_run_exit_for (const ab_error_t *err)
{
  if (err->cls == AB_EC_USAGE)
    return AB_EXIT_USAGE;
  if (err->cls == AB_EC_EXEC)
    return (err->errnum == ENOENT || err->errnum == ENOTDIR) ? AB_EXIT_NOT_FOUND : AB_EXIT_CANNOT_EXEC;
  return AB_EXIT_SETUP;
}

int
ab_cmd_run (struct ab_global *g, int argc, char **argv)
{
  struct ab_create_opts o;
  struct ab_run_flags rf = { 0 };
  struct ab_container *c = NULL;
  struct ab_supervise_opts so;
  struct ab_outcome out;
  ab_error_t err = { 0 };
  int r, status;

  ab_create_opts_init (&o);
  r = ab_parse_create_opts ("run", g, argc, argv, &o, &rf);
  if (r != 0)
    return r < 0 ? AB_EXIT_OK : r;

  if (rf.detach)
    {
      if (ab_container_create (&o, &c, &err) < 0)
        {
          ab_log_error (&err);
          return ab_run_exit_for (&err);
        }
      ab_container_free (c);
      if (ab_container_start (g->root, o.id, &err) < 0)
        {
          ab_error_t ignored = { 0 };
          ab_log_error (&err);
          ab_container_delete (g->root, o.id, true, &ignored);
          return ab_run_exit_for (&err);
        }
      return AB_EXIT_OK;
    }

  ab_supervise_opts_init (&so);
  so.keep = rf.keep;
  o.foreground = true;
  if (ab_supervise_run (&o, &so, &out, &err) < 0)
    {
      ab_log_error (&err);
      status = ab_run_exit_for (&err);
      ab_outcome_free (&out);
      return status;
    }
  status = out.exit_status;
  ab_outcome_free (&out);
  return status;
}
