/* Applying a change set to its workspace, and undoing an interrupted apply.
 *
 * The change set is hostile (the container wrote it) and the workspace may
 * change under us (the host's own programs write it).  So:
 *   - every target is reached from the workspace's fd through its parent
 *     directory, resolved with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS
 *     | RESOLVE_NO_XDEV): no symlink is followed, no mount crossed; a
 *     symlink the tool made is created as a symlink, never followed;
 *   - what is written is made from the upper layer's data only: contents,
 *     permission bits without set-uid and set-gid, times, owners mapped
 *     back through the lower layer's id mapping; no xattr, so no file
 *     capability; device nodes, fifos and sockets are refused;
 *   - a target that changed on the host after the run started (its ctime
 *     is not older than the run, or it is gone though the run copied it
 *     up) is a conflict: refused unless overwrite; any problem refuses the
 *     whole apply unless partial, and nothing is changed;
 *   - every new object is staged in full under a temporary name in the
 *     target's directory, then put in place with one renameat2
 *     (RENAME_EXCHANGE over an existing one, whose old object stays under
 *     the temporary name until the end; RENAME_NOREPLACE where there was
 *     none); a deletion is a rename to a temporary name.  Each path is old
 *     or new at any instant, never torn.
 *   - a journal in the change set's directory (written before the first
 *     staged byte, then at two more points) says what the apply does; an
 *     apply killed at any point is resumed by the next apply, or rolled
 *     back by a discard, from the journal and the inodes of what is in
 *     place.  Against a kill; nothing is fsync'd, so a power cut is what
 *     the filesystem's rename ordering makes of it.
 */
#ifndef AB_RUNTIME_WSAPPLY_H
#define AB_RUNTIME_WSAPPLY_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "runtime/wsdiff.h"
#include "spec/model.h"

struct ab_ws_apply_ctx
{
  int upper_fd;          /* the upper layer's root */
  int dir_fd;            /* the workspace */
  int journal_dir;       /* where the journal is kept */
  uint64_t started_ns;   /* host changes from this instant on are conflicts */
  bool mapped;           /* the upper's owners are host ids of this mapping: */
  const struct ab_idmaps *uids, *gids; /* disk containerID+k shows as hostID+k */
  uint32_t owner_uid, owner_gid; /* the workspace's owner: for an id no mapping covers */
  bool overwrite, partial;
};

enum ab_ws_problem_kind
{
  AB_WS_CONFLICT,    /* changed on the host since the run started */
  AB_WS_REFUSED,     /* never applied (device node, fifo, socket) */
  AB_WS_UNREACHABLE, /* its directory is not a directory inside the workspace any more */
};

struct ab_ws_problem
{
  char *path;
  int kind;     /* enum ab_ws_problem_kind */
  char *reason;
};

struct ab_ws_report
{
  struct ab_ws_problem *v;
  size_t n;
  size_t applied; /* paths put in place, deleted or chmod'ed */
  size_t skipped; /* partial: the problem paths left out */
  bool resumed;   /* an interrupted apply was finished */
};

void ab_ws_report_free (struct ab_ws_report *r);
const char *ab_ws_problem_name (int kind);

enum
{
  AB_WS_JOURNAL_NONE = 0,
  AB_WS_JOURNAL_OPEN,      /* an apply was interrupted before its end */
  AB_WS_JOURNAL_COMMITTED, /* ... after everything was in place: only cleaning was left */
};
int ab_ws_journal_state (int journal_dir);

/* Apply changes (the change list of the upper layer over dir_fd).  0:
   applied (rep->skipped problem paths left out with partial); 1: refused,
   nothing changed, rep lists the problems; -1: error, nothing changed or
   everything undone (a step that failed half-way is rolled back). */
int ab_ws_apply (const struct ab_ws_apply_ctx *x, const struct ab_ws_changes *changes, struct ab_ws_report *rep,
                 ab_error_t *err);
/* Finish an interrupted apply (AB_WS_JOURNAL_OPEN or _COMMITTED). */
int ab_ws_resume (const struct ab_ws_apply_ctx *x, struct ab_ws_report *rep, ab_error_t *err);
/* Undo an interrupted apply that had not committed; one that had is
   finished instead (1).  0 when undone, -1 on error. */
int ab_ws_rollback (const struct ab_ws_apply_ctx *x, ab_error_t *err);

#endif
