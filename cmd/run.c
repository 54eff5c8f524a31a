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
#include "runtime/plan/plan.h"
#include "runtime/exe.h"
#include "runtime/fallback.h"
#include "base/log.h"
#include "runtime/supervise/record.h"
#include "runtime/sandbox/fallback.h"
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

/* Write the record of a run that ended (or never started: reason
   setup_failed) and free the outcome; returns the exit status. */
static int
run_finish (struct ab_run_cli *cli, struct ab_outcome *out)
{
  ab_error_t err = { 0 };
  int status = out->exit_status;

  if (out->canceled)
    status = 128 + SIGUSR1;
  else if (cli->record_fd >= 0 && ab_record_write (cli->record_fd, out, cli->record_id, &err) < 0)
    {
      ab_log_error (&err);
      status = AB_EXIT_SETUP;
    }
  ab_outcome_free (out);
  return status;
}

/* The sandbox without namespaces (runtime/sandbox/fallback.h), where none
   can be made and the config opted in. */
static int
run_fallback (struct ab_run_cli *cli, struct ab_bundle *bundle, const char *refusal)
{
  const struct ab_agentbox *a = &bundle->spec->agentbox;
  struct ab_sandbox_fallback sf = { 0 };
  struct ab_supervise_opts so = cli->so;
  struct ab_outcome out;
  ab_error_t err = { 0 };
  int r;

  ab_log (AB_LOG_INFO, "%s: `%s` runs without namespaces, under landlock", refusal, cli->co.id);
  if (cli->record_fd > 2)
    ab_set_cloexec (cli->record_fd, true);
  /* the timeout and its grace, as the plan takes them */
  ab_plan_deadline (a, cli->so.timeout_ms, cli->so.grace_set, cli->so.grace_ms, &so.timeout_ms, &so.grace_ms);
  r = ab_sandbox_fallback (bundle, refusal, &sf, &err);
  if (r == 0)
    {
      memcpy (sf.run.stdio, cli->co.stdio, sizeof sf.run.stdio);
      r = ab_supervise_fallback (&sf.run, cli->co.id, &so, &out, &err);
    }
  else
    {
      memset (&out, 0, sizeof out);
      out.reason = AB_REASON_SETUP_FAILED;
      out.setup_error = err;
    }
  if (r < 0)
    {
      ab_log_error (&err);
      out.exit_status = ab_run_exit_for (&err);
    }
  for (size_t i = 0; i < sf.degraded.n; i++)
    ab_strv_push (&out.degraded, sf.degraded.v[i]);
  ab_sandbox_fallback_free (&sf);
  ab_bundle_free (bundle);
  return run_finish (cli, &out);
}

/* The config opted in to the fallback (run --default --fallback landlock
   says so in the sandbox's config): 1 when no user namespace can be made
   here, with why; 0 otherwise.  A bundle run given --fallback whose config
   did not opt in is refused: the fallback runs process.args on the host's
   filesystem instead of root.path, which the config's author must have
   meant. */
static int
fallback_wanted (const struct ab_run_cli *cli, const struct ab_bundle *bundle, char *why, size_t n, ab_error_t *err)
{
  int opted_in = bundle->spec->agentbox.fallback == AB_FALLBACK_LANDLOCK;

  if (cli->fallback && !opted_in)
    return ab_error_setc (err, AB_EC_CONFIG, 0,
                          "run --fallback landlock: config.json must opt in (annotations " AB_ANNOT_FALLBACK
                          " = \"landlock\"): the fallback runs process.args on the host's filesystem, without "
                          "root.path, mounts or namespaces");
  if (!opted_in || cli->detach)
    return 0;
  if (ab_userns_probe (why, n) == 0)
    return 0;
  {
    _cleanup_free_ char *probe = xstrdup (why);
    snprintf (why, n, "no user namespace can be made here: %s", probe);
  }
  return 1;
}

static int
load_bundle (struct ab_run_cli *cli, struct ab_bundle **bundle, int *sb_lock, ab_error_t *err)
{
  struct ab_bundle_guard guard = ab_bundle_guard (cli->co.root);

  if (cli->sandbox)
    return ab_sandbox_bundle (&cli->sb, bundle, sb_lock, err);
  return ab_bundle_load (cli->co.bundle, &guard, bundle, err);
}

/* The namespaced sandbox failed to be set up in a way that says this host
   (a container, as a rule) cannot have it: the kernel refused a step
   (cgroups read-only, a namespace or mount refused), not the config. */
static bool
namespaces_unusable (const ab_error_t *err)
{
  static const int errnos[] = { EPERM, EACCES, EROFS, ENOSPC, ENOSYS, EOPNOTSUPP };

  if (err->cls != AB_EC_SETUP && err->cls != AB_EC_RESOURCE)
    return false;
  /* A full or read-only state root is not the host's namespaces. */
  if (strcmp (err->step, "state") == 0)
    return false;
  for (size_t i = 0; i < AB_ARRAY_SIZE (errnos); i++)
    if (err->errnum == errnos[i])
      return true;
  return strstr (err->msg, "no user namespace can be made here") != NULL;
}

static int
run_detached (struct ab_global *g, struct ab_run_cli *cli, ab_error_t *err)
{
  int r = ab_cmd_create_held (g->root, "run", &cli->co, err);

  if (r > 0)
    return r;
  if (r < 0)
    return detached_failed (cli, err);
  if (ab_container_start (g->root, cli->co.id, err) < 0)
    {
      ab_error_t ignored = { 0 };
      ab_container_delete (g->root, cli->co.id, true, &ignored);
      return detached_failed (cli, err);
    }
  return AB_EXIT_OK;
}

/* The foreground run: the supervisor, then the record.  A sandbox that
   opted in to the fallback and cannot be set up here runs without
   namespaces instead. */
static int
run_foreground (struct ab_run_cli *cli, int *sb_lock, bool *failed, ab_error_t *err)
{
  bool overlay = cli->co.prebuilt->spec->workspace.mode == AB_WS_MODE_OVERLAY;
  bool fallback = cli->co.prebuilt->spec->agentbox.fallback == AB_FALLBACK_LANDLOCK;
  struct ab_bundle *bundle = NULL;
  struct ab_outcome out;

  cli->co.foreground = true;
  /* This process only supervises the one container from here on. */
  cli->co.may_enter_warm_userns = true;
  cli->so.relay_tty = true; /* process.terminal without --console-socket: runc's pty relay */
  cli->so.no_violations = cli->record_fd < 0; /* only the record reports them */
  *failed = ab_supervise_run (&cli->co, &cli->so, &out, err) < 0;
  if (*failed)
    {
      if (fallback && namespaces_unusable (err))
        {
          /* Opted in: the sandbox without namespaces, the failure named in
             its `degraded`. */
          _cleanup_free_ char *why = xasprintf ("the namespaced sandbox could not be set up: %s", err->msg);
          ab_outcome_free (&out);
          /* the namespaced sandbox's private skeleton, if any, goes now */
          ab_sandbox_release (&cli->sb, *sb_lock, err);
          *sb_lock = -1;
          memset (err, 0, sizeof *err);
          *failed = load_bundle (cli, &bundle, sb_lock, err) < 0;
          return *failed ? ab_cmd_fail (err) : run_fallback (cli, bundle, why);
        }
      if (cli->sandbox && namespaces_unusable (err) && strstr (err->msg, "--fallback") == NULL)
        {
          size_t len = strlen (err->msg);
          snprintf (err->msg + len, sizeof err->msg - len,
                    "; where namespaces cannot be set up, `run --default --fallback landlock` runs without them "
                    "(docs/landlock.md)");
          out.setup_error = *err;
        }
      ab_log_error (err);
      out.exit_status = ab_run_exit_for (err);
    }
  /* The record says it (workspaceChanges); a person is told here. */
  if (overlay && cli->record_fd < 0 && out.reason != AB_REASON_SETUP_FAILED && !out.canceled)
    fprintf (stderr, "agentbox: the workspace's changes are kept as change set `%s`: agentbox workspace diff|apply|discard %s\n",
             cli->co.id, cli->co.id);
  return run_finish (cli, &out);
}

int
ab_cmd_run (struct ab_global *g, int argc, char **argv)
{
  struct ab_run_cli cli;
  struct ab_bundle *bundle = NULL;
  struct ab_outcome out;
  ab_error_t err = { 0 };
  bool failed = true;
  int r, status, sb_lock = -1;

  r = ab_parse_run_cli ("run", g, argc, argv, &cli);
  if (r != 0)
    {
      ab_run_cli_free (&cli);
      return r < 0 ? AB_EXIT_OK : r;
    }

  /* The bundle is loaded here (create takes it over) so that the sealed
     copy of ourselves is chosen by its user namespace. */
  r = load_bundle (&cli, &bundle, &sb_lock, &err);
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
    char why[512];
    r = fallback_wanted (&cli, bundle, why, sizeof why, &err);
    if (r < 0)
      {
        ab_bundle_free (bundle);
        status = ab_cmd_fail (&err);
        goto done;
      }
    if (r > 0)
      {
        status = run_fallback (&cli, bundle, why);
        failed = false;
        goto done;
      }
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

  if (cli.detach)
    {
      status = run_detached (g, &cli, &err);
      failed = status != AB_EXIT_OK;
      goto done;
    }

  status = run_foreground (&cli, &sb_lock, &failed, &err);
done:
  ab_sandbox_release (&cli.sb, sb_lock, failed ? &err : NULL);
  ab_run_cli_free (&cli);
  return status;
}
