/* Operations on a live container besides start, kill and delete: pause and
 * resume (the cgroup freezer), its process list, new resource limits and
 * the watch of its cgroup's counters (runc's pause, resume, ps, update and
 * events).  Pause, resume, update and events act on the container's
 * cgroup, so a container without one (rootless, none delegated) refuses
 * them; ps lists its pid namespace instead. */
#include "config.h"

#include "runtime/cgroup/cgroup.h"
#include "runtime/lifecycle/container.h"
#include "runtime/lifecycle/lifecycle-internal.h"
#include "runtime/ns.h"
#include "base/util.h"

/* The statuses in which a container has processes in its cgroup. */
#define LIVE (1u << AB_STATUS_CREATED | 1u << AB_STATUS_RUNNING | 1u << AB_STATUS_PAUSED)

/* Load by id and require one of the statuses in `ok` (a bit per status)
   and, unless `acts` is NULL, a cgroup; `what` names the operation in the
   errors, `acts` what of it works on the cgroup. */
static int
load_live (const char *root, const char *id, bool exclusive, unsigned ok, const char *what, const char *acts,
           struct ab_container **out, ab_error_t *err)
{
  _cleanup_container_ struct ab_container *c = NULL;
  int st;

  if (ab_container_load (root, id, exclusive, &c, err) < 0)
    return -1;
  st = ab_state_status (c->dirfd, c->state);
  if (!(ok & (1u << st)))
    {
      if (st == AB_STATUS_STOPPED)
        return ab_error_setc (err, AB_EC_STATE, 0, "cannot %s container `%s`: container not running", what, id);
      return ab_error_setc (err, AB_EC_STATE, 0, "cannot %s container `%s`: it is %s", what, id,
                            ab_status_name (st));
    }
  if (c->cg == NULL && acts != NULL)
    return ab_error_setc (err, AB_EC_STATE, 0,
                          "cannot %s container `%s`: it has no cgroup%s, and %s acts on the cgroup%s", what, id,
                          c->state->rootless ? " (rootless, none delegated)" : "", acts,
                          c->state->rootless ? "; delegate one (--cgroup-parent) to have it" : "");
  *out = ab_steal_ptr (&c);
  return 0;
}

/* Freeze or thaw, then record the new status; a failed record undoes the
   freezer change, so the state file never disagrees with the cgroup. */
static int
set_frozen (const char *root, const char *id, bool frozen, ab_error_t *err)
{
  _cleanup_container_ struct ab_container *c = NULL;
  unsigned ok = frozen ? 1u << AB_STATUS_RUNNING : 1u << AB_STATUS_PAUSED;
  const char *what = frozen ? "pause" : "resume";

  ab_set_step (what);
  if (load_live (root, id, true, ok, what, "the freezer", &c, err) < 0)
    return -1;
  if (ab_cgroup_freeze (c->cg, frozen, err) < 0)
    {
      if (frozen)
        ab_cgroup_freeze (c->cg, false, NULL);
      return ab_error_prefix (err, "%s container `%s`", what, id);
    }
  c->state->status = frozen ? AB_STATUS_PAUSED : AB_STATUS_RUNNING;
  if (ab_container_write_state (c, err) < 0)
    {
      ab_cgroup_freeze (c->cg, !frozen, NULL);
      return -1;
    }
  return 0;
}

int
ab_container_pause (const char *root, const char *id, ab_error_t *err)
{
  return set_frozen (root, id, true, err);
}

int
ab_container_resume (const char *root, const char *id, ab_error_t *err)
{
  return set_frozen (root, id, false, err);
}

int
ab_container_pids (const char *root, const char *id, pid_t **pids, size_t *n, ab_error_t *err)
{
  _cleanup_container_ struct ab_container *c = NULL;

  ab_set_step ("ps");
  /* As runc, a stopped container is no error: its list is what is left in
     its cgroup (nothing, unless a process outlived the init in the host's
     pid namespace), and empty once the cgroup is gone. */
  if (load_live (root, id, false, LIVE | 1u << AB_STATUS_STOPPED, "list the processes of", NULL, &c, err) < 0)
    return -1;
  /* Without a cgroup (rootless): the processes of its pid namespace. */
  if (c->cg == NULL)
    {
      if (ab_state_status (c->dirfd, c->state) == AB_STATUS_STOPPED)
        return *pids = NULL, *n = 0, 0;
      return ab_pidns_pids (c->pid, pids, n, err);
    }
  if (ab_cgroup_pids (c->cg, pids, n, err) < 0)
    {
      if (ab_state_status (c->dirfd, c->state) != AB_STATUS_STOPPED || err->errnum != ENOENT)
        return -1;
      ab_error_clear (err);
      *pids = NULL;
      *n = 0;
    }
  return 0;
}

int
ab_container_update (const char *root, const char *id, const struct ab_resources *resources, ab_error_t *err)
{
  _cleanup_container_ struct ab_container *c = NULL;

  ab_set_step ("update");
  if (load_live (root, id, true, LIVE, "update", "update", &c, err) < 0)
    return -1;
  if (ab_cgroup_update (c->cg, resources, err) < 0)
    return ab_error_prefix (err, "update container `%s`", id);
  return 0;
}

int
ab_container_open_events (const char *root, const char *id, struct ab_container **out, ab_error_t *err)
{
  _cleanup_container_ struct ab_container *c = NULL;

  ab_set_step ("events");
  if (load_live (root, id, false, LIVE, "report the events of", "events", &c, err) < 0)
    return -1;
  /* The init's pidfd tells the watcher when the container stops; opened
     after the status was read, so an init that exited in between (or a
     recycled pid: ab_state_pidfd checks the start time) is a container
     that is not running. */
  c->pidfd = ab_state_pidfd (c->state);
  if (c->pidfd < 0)
    return ab_error_setc (err, AB_EC_STATE, 0,
                          "cannot report the events of container `%s`: container not running", id);
  /* events runs for as long as the container: a lock held that long
     would hold off kill, delete and every other command on it. */
  if (ab_container_unlock (c, err) < 0)
    return -1;
  *out = ab_steal_ptr (&c);
  return 0;
}
