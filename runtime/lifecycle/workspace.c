/* The operations on a change set by id (runtime/lifecycle/workspace.h). */
#include "config.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "runtime/lifecycle/container.h"
#include "base/util.h"
#include "runtime/lifecycle/workspace.h"
#include "base/gen.h"

void
ab_workspace_result_free (struct ab_workspace_result *r)
{
  free (r->workspace);
  ab_ws_report_free (&r->rep);
  memset (r, 0, sizeof *r);
}

void
ab_workspace_result_gen (struct ab_gen *g, const char *id, const struct ab_workspace_result *r, bool apply, int rc)
{
  size_t i;

  ab_gen_kv_str (g, "id", id);
  ab_gen_kv_str (g, "workspace", r->workspace ? r->workspace : "");
  if (!apply)
    {
      ab_gen_kv_str (g, "result", r->finished ? "applied" : "discarded");
      ab_gen_kv_bool (g, "rolledBack", r->rolled_back);
      return;
    }
  ab_gen_kv_str (g, "result", rc == 0 ? "applied" : "refused");
  ab_gen_kv_u64 (g, "applied", r->rep.applied);
  ab_gen_kv_u64 (g, "skipped", r->rep.skipped);
  ab_gen_kv_bool (g, "resumed", r->rep.resumed);
  ab_gen_key (g, "problems");
  ab_gen_arr_open (g);
  for (i = 0; i < r->rep.n; i++)
    {
      ab_gen_obj_open (g);
      ab_gen_key (g, "path");
      ab_gen_bytes (g, r->rep.v[i].path, strlen (r->rep.v[i].path));
      ab_gen_kv_str (g, "problem", ab_ws_problem_name (r->rep.v[i].kind));
      ab_gen_kv_str (g, "reason", r->rep.v[i].reason);
      ab_gen_obj_close (g);
    }
  ab_gen_arr_close (g);
}

static void
changeset_freep (struct ab_changeset **cs)
{
  ab_changeset_free (*cs);
}

int
ab_workspace_diff (const char *root, const char *id, struct ab_changeset **cs, struct ab_ws_changes *out,
                   ab_error_t *err)
{
  memset (out, 0, sizeof *out);
  if (ab_changeset_open (root, id, cs, err) < 0)
    return -1;
  return ab_changeset_diff (*cs, out, err);
}

/* The container of that id is gone or stopped: nothing writes the upper
   layer any more. */
static int
check_final (const char *root, const char *id, ab_error_t *err)
{
  _cleanup_state_ struct ab_state *s = NULL;
  ab_error_t e = { 0 };
  int status;

  if (ab_container_state (root, id, &s, &status, &e) < 0)
    {
      if (e.cls == AB_EC_NOTFOUND)
        return 0;
      *err = e;
      return -1;
    }
  if (status != AB_STATUS_STOPPED)
    return ab_error_setc (err, AB_EC_STATE, 0,
                          "container `%s` is %s: its change set is not final (delete the container first)", id,
                          ab_status_name (status));
  return 0;
}

/* Change set `id`, held alone, of a container that is gone or stopped. */
static int
open_final (const char *root, const char *id, struct ab_changeset **cs, ab_error_t *err)
{
  if (ab_changeset_open (root, id, cs, err) < 0 || ab_changeset_lock (*cs, err) < 0 || check_final (root, id, err) < 0)
    return -1;
  if ((*cs)->kind != AB_CS_UNFINISHED)
    return 0;
  /* Told apart before check_final waited for the container's lock, which
     a create holds until its change set is made: one that was being made
     then is made now (and, its container stopped since, final). */
  ab_changeset_free (*cs);
  *cs = NULL;
  return ab_changeset_open (root, id, cs, err) < 0 || ab_changeset_lock (*cs, err) < 0 ? -1 : 0;
}

/* The apply context: the upper layer, the workspace (the directory the
   run used), the journal. */
static int
make_ctx (const struct ab_changeset *cs, struct ab_ws_apply_ctx *x, bool need_upper, ab_error_t *err)
{
  struct stat st;

  x->journal_dir = cs->dirfd;
  x->started_ns = cs->m.started_ns;
  x->mapped = cs->m.mapped;
  x->uids = &cs->m.uids;
  x->gids = &cs->m.gids;
  x->upper_fd = cs->layer_fd < 0 ? -1 : openat (cs->layer_fd, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (x->upper_fd < 0 && need_upper)
    return ab_error_setc (err, AB_EC_STATE, errno,
                          "workspace change set `%s`: its storage `%s/upper` is gone (was its tmpfs unmounted, or "
                          "the host restarted?)",
                          cs->id, cs->layer_path);
  x->dir_fd = ab_changeset_open_workspace (cs, err);
  if (x->dir_fd < 0 || fstat (x->dir_fd, &st) < 0)
    return -1;
  x->owner_uid = st.st_uid;
  x->owner_gid = st.st_gid;
  return 0;
}

static void
ctx_close (struct ab_ws_apply_ctx *x)
{
  if (x->upper_fd >= 0)
    close (x->upper_fd);
  if (x->dir_fd >= 0)
    close (x->dir_fd);
}

int
ab_workspace_apply (const char *root, const char *id, bool overwrite, bool partial, struct ab_workspace_result *r,
                    ab_error_t *err)
{
  _cleanup_ (changeset_freep) struct ab_changeset *cs = NULL;
  struct ab_ws_changes changes = { 0 };
  struct ab_ws_apply_ctx x = { .upper_fd = -1, .dir_fd = -1, .overwrite = overwrite, .partial = partial };
  int rc = -1, journal;

  memset (r, 0, sizeof *r);
  if (open_final (root, id, &cs, err) < 0)
    goto out;
  if (cs->kind == AB_CS_APPLIED)
    {
      /* an apply killed while it removed the spent change set */
      r->rep.resumed = true;
      rc = ab_changeset_remove (cs, AB_CS_PENDING, err);
      goto out;
    }
  if (cs->kind != AB_CS_PENDING)
    {
      ab_changeset_not_pending (cs, err);
      goto out;
    }
  r->workspace = xstrdup (cs->m.workspace);
  journal = ab_ws_journal_state (cs->dirfd);
  /* a committed apply has nothing left to copy from the upper layer */
  if (make_ctx (cs, &x, journal != AB_WS_JOURNAL_COMMITTED, err) < 0)
    goto out;
  if (journal != AB_WS_JOURNAL_NONE)
    rc = ab_ws_resume (&x, &r->rep, err);
  else if (ab_ws_diff (x.upper_fd, x.dir_fd, x.started_ns, &changes, err) == 0)
    rc = ab_ws_apply (&x, &changes, &r->rep, err);
  ab_ws_changes_free (&changes);
  /* Applied: the change set is spent. */
  if (rc == 0 && ab_changeset_remove (cs, AB_CS_APPLIED, err) < 0)
    rc = -1;
out:
  ctx_close (&x);
  return rc;
}

int
ab_workspace_discard (const char *root, const char *id, struct ab_workspace_result *r, ab_error_t *err)
{
  _cleanup_ (changeset_freep) struct ab_changeset *cs = NULL;
  struct ab_ws_apply_ctx x = { .upper_fd = -1, .dir_fd = -1 };
  int rc = -1;

  memset (r, 0, sizeof *r);
  if (open_final (root, id, &cs, err) < 0)
    goto out;
  r->workspace = cs->m.workspace ? xstrdup (cs->m.workspace) : NULL;
  r->finished = cs->kind == AB_CS_APPLIED; /* its apply had put everything in place */
  r->unfinished = cs->kind == AB_CS_UNFINISHED;
  /* Only an interrupted apply needs the workspace: a change set whose
     directory went away can still be thrown away. */
  if (cs->kind == AB_CS_PENDING && ab_ws_journal_state (cs->dirfd) != AB_WS_JOURNAL_NONE)
    {
      int u;
      if (make_ctx (cs, &x, false, err) < 0 || (u = ab_ws_rollback (&x, err)) < 0)
        goto out;
      r->rolled_back = u == 0;
      r->finished = u == 1;
    }
  /* (the outcome of a change set of another kind is known already) */
  rc = ab_changeset_remove (cs,
                            cs->kind != AB_CS_PENDING ? AB_CS_PENDING
                            : r->finished             ? AB_CS_APPLIED
                                                      : AB_CS_DISCARDED,
                            err);
out:
  ctx_close (&x);
  return rc;
}
