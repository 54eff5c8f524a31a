/* agentbox run [create options] [--detach] [--keep] [supervision options] ID [-- ARGS...]
 *
 * create + start; in the foreground, wait and exit with the container's
 * status (its exit code, or 128 + the signal that killed it), then delete.
 * --default runs ARGS in the built-in sandbox (runtime/sandbox/sandbox.h) instead of
 * a bundle; --record writes the outcome as an MCP tools/call result frame. */
#include "config.h"

#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>

#include "cmd/cmd.h"
#include "cmd/create-opts.h"
#include "runtime/cache.h"
#include "runtime/lifecycle/container.h"
#include "runtime/exe.h"
#include "base/log.h"
#include "runtime/supervise/record.h"
#include "runtime/sandbox/sandbox.h"
#include "runtime/supervise/supervise.h"
#include "base/util.h"
#include "spec/annotations.h"

static int
ab_run_exit_for (const ab_error_t *err)
{
  if (err->cls == AB_EC_USAGE)
    return AB_EXIT_USAGE;
  if (err->cls == AB_EC_EXEC)
    return (err->errnum == ENOENT || err->errnum == ENOTDIR) ? AB_EXIT_NOT_FOUND : AB_EXIT_CANNOT_EXEC;
  return AB_EXIT_SETUP;
}

/* A record of a detached run exists only for its failure (the sandbox could
   not be set up): the caller learns the class, step and errno. */
static int
detached_failed (const struct ab_run_cli *cli, const ab_error_t *err)
{
  ab_log_error (err);
  if (cli->record_fd >= 0)
    {
      struct ab_outcome out;
      memset (&out, 0, sizeof out);
      out.reason = AB_REASON_SETUP_FAILED;
      out.setup_error = *err;
      out.exit_status = ab_run_exit_for (err);
      ab_record_write (cli->record_fd, &out, cli->record_id, NULL);
    }
  return ab_run_exit_for (err);
}

static int
run_detached (struct ab_global *g, struct ab_run_cli *cli, ab_error_t *err)
{
  struct ab_container *c = NULL;

  if (ab_container_create (&cli->co, &c, err) < 0)
    return detached_failed (cli, err);
  ab_container_free (c);
  if (ab_container_start (g->root, cli->co.id, err) < 0)
    {
      ab_error_t ignored = { 0 };
      ab_container_delete (g->root, cli->co.id, true, &ignored);
      return detached_failed (cli, err);
    }
  return AB_EXIT_OK;
}

int
ab_cmd_run (struct ab_global *g, int argc, char **argv)
{
  struct ab_run_cli cli;
  struct ab_bundle *bundle = NULL;
  struct ab_outcome out;
  ab_error_t err = { 0 };
  bool overlay, failed = true;
  int r, status, sb_lock = -1;

  r = ab_parse_run_cli ("run", g, argc, argv, &cli);
  if (r != 0)
    {
      ab_run_cli_free (&cli);
      return r < 0 ? AB_EXIT_OK : r;
    }

  /* The bundle is loaded here (create takes it over) so that the sealed
     copy of ourselves is chosen by its user namespace. */
  if (cli.sandbox)
    r = ab_sandbox_bundle (&cli.sb, &bundle, &sb_lock, &err);
  else
    {
      struct ab_bundle_guard guard = ab_bundle_guard (cli.co.root);
      r = ab_bundle_load (cli.co.bundle, &guard, &bundle, &err);
    }
  if (r < 0)
    {
      memset (&out, 0, sizeof out);
      out.reason = AB_REASON_SETUP_FAILED;
      out.setup_error = err;
      out.exit_status = ab_run_exit_for (&err);
      ab_log_error (&err);
      if (cli.record_fd >= 0)
        ab_record_write (cli.record_fd, &out, cli.record_id, NULL);
      status = out.exit_status;
      goto done;
    }
  {
    const struct ab_idmaps *uids, *gids;
    ab_new_userns_maps (bundle->spec, &uids, &gids);
    if (ab_exe_seal_unless_safe (g->argv_all, uids, gids, &err) < 0)
      {
        ab_bundle_free (bundle);
        status = ab_cmd_fail (&err);
        goto done;
      }
  }
  /* Our record fd stays ours: the container never sees it. */
  if (cli.record_fd > 2)
    ab_set_cloexec (cli.record_fd, true);
  cli.co.prebuilt = bundle;
  overlay = bundle->spec->workspace.mode == AB_WS_MODE_OVERLAY;

  if (cli.detach)
    {
      status = run_detached (g, &cli, &err);
      failed = status != AB_EXIT_OK;
      goto done;
    }

  cli.co.foreground = true;
  cli.so.relay_tty = true; /* process.terminal without --console-socket: runc's pty relay */
  cli.so.no_violations = cli.record_fd < 0; /* only the record reports them */
  failed = ab_supervise_run (&cli.co, &cli.so, &out, &err) < 0;
  if (failed)
    {
      ab_log_error (&err);
      out.exit_status = ab_run_exit_for (&err);
    }
  status = out.exit_status;
  /* The record says it (workspaceChanges); a person is told here. */
  if (overlay && cli.record_fd < 0 && out.reason != AB_REASON_SETUP_FAILED && !out.canceled)
    fprintf (stderr, "agentbox: the workspace's changes are kept as change set `%s`: agentbox workspace diff|apply|discard %s\n",
             cli.co.id, cli.co.id);
  if (out.canceled)
    status = 128 + SIGUSR1;
  else if (cli.record_fd >= 0 && ab_record_write (cli.record_fd, &out, cli.record_id, &err) < 0)
    {
      ab_log_error (&err);
      status = AB_EXIT_SETUP;
    }
  ab_outcome_free (&out);
done:
  ab_sandbox_release (&cli.sb, sb_lock, failed ? &err : NULL);
  ab_run_cli_free (&cli);
  return status;
}
