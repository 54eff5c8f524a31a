/* The operations on a change set by id (`agentbox workspace`, the MCP
 * tools): a lifecycle front door over the store (runtime/lifecycle/wsstore.h), the
 * change list (runtime/wsdiff.h) and the apply engine (runtime/wsapply.h).
 * Apply and discard wait for the container to be gone or stopped: the
 * upper layer of a running one is still being written. */
#ifndef AB_RUNTIME_WORKSPACE_H
#define AB_RUNTIME_WORKSPACE_H

#include <stdbool.h>

#include "base/error.h"
#include "runtime/wsapply.h"
#include "runtime/wsdiff.h"
#include "runtime/lifecycle/wsstore.h"

/* The change list of change set `id` (*cs for its metadata; free both). */
int ab_workspace_diff (const char *root, const char *id, struct ab_changeset **cs, struct ab_ws_changes *out,
                       ab_error_t *err);

struct ab_workspace_result
{
  char *workspace;         /* the host directory */
  struct ab_ws_report rep; /* what was applied, skipped or refused */
  bool rolled_back;        /* discard: an interrupted apply was undone */
  bool finished;           /* discard: an interrupted apply had committed, and was finished */
  bool unfinished;         /* discard: a create that never finished, or lost its tmpfs (no change) */
};
void ab_workspace_result_free (struct ab_workspace_result *r);

/* Apply change set `id` to its workspace and remove it; an interrupted
   apply is resumed.  0 applied, 1 refused (r->rep.v lists why; nothing
   changed, the change set stays), -1 error. */
int ab_workspace_apply (const char *root, const char *id, bool overwrite, bool partial,
                        struct ab_workspace_result *r, ab_error_t *err);

/* The result as JSON members of the caller's open object: id, workspace,
   result ("applied", "refused", "discarded"), and for an apply the counts
   and the problems (rc: what ab_workspace_apply returned). */
struct ab_gen;
void ab_workspace_result_gen (struct ab_gen *g, const char *id, const struct ab_workspace_result *r, bool apply, int rc);

/* Remove change set `id` without applying it; an interrupted apply is
   rolled back first.  One whose create never finished is removed too,
   its tmpfs unmounted. */
int ab_workspace_discard (const char *root, const char *id, struct ab_workspace_result *r, ab_error_t *err);

#endif
