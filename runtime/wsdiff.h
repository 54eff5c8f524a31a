/* The change list of an overlay workspace: what the upper layer holds,
 * read as changes to the lower directory.
 *
 * Computed from the upper layer only: the walk visits what the run wrote
 * and looks each entry up once in the lower directory, so its cost grows
 * with the change, not with the workspace.  It reads what the kernel's
 * overlay left there (runtime/mount-overlay.c mounts it with redirect_dir,
 * metacopy and index off, so an upper entry is complete in itself):
 *   - a character device 0:0 is a whiteout: the lower entry was deleted;
 *   - a directory with the trusted.overlay.opaque (or user.overlay.opaque)
 *     xattr "y" replaced the lower directory of that name wholesale;
 *   - a file or directory with trusted.overlay.origin was copied up from
 *     the lower one (it existed when the run wrote it).
 * The upper layer was written by the container: every name, type, size and
 * symlink target in it is hostile data, never followed or trusted. */
#ifndef AB_RUNTIME_WSDIFF_H
#define AB_RUNTIME_WSDIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "base/error.h"

struct ab_gen;

enum ab_ws_kind
{
  AB_WS_DELETED,      /* a whiteout: the lower entry (a whole tree for a directory) goes */
  AB_WS_REPLACED,     /* an opaque directory over a lower one: the old contents go */
  AB_WS_TYPE_CHANGED, /* a file became a directory, a directory a symlink, ... */
  AB_WS_CREATED,
  AB_WS_MODIFIED,     /* contents (or a symlink's target) changed */
  AB_WS_MODE_CHANGED, /* only the permission bits changed */
  AB_WS__KINDS
};

enum ab_ws_type
{
  AB_WS_T_NONE,
  AB_WS_T_FILE,
  AB_WS_T_DIR,
  AB_WS_T_SYMLINK,
  AB_WS_T_FIFO,
  AB_WS_T_SOCKET,
  AB_WS_T_CHAR,
  AB_WS_T_BLOCK,
};

struct ab_ws_change
{
  char *path;      /* relative to the workspace, no leading '/' */
  int kind;        /* enum ab_ws_kind */
  int type;        /* of the new object; deleted: of the old one */
  int old_type;    /* of the lower object when the list was made; AB_WS_T_NONE when absent */
  uint32_t mode;   /* permission bits (07777) of the new object */
  uint32_t old_mode;
  uint32_t uid, gid; /* owner of the new object in the upper layer (host ids) */
  uint64_t size;   /* regular file: bytes; symlink: the target's length */
  struct timespec mtime;
  char *target;    /* symlink target, as the container wrote it */
  bool outside;    /* the target leads out of the workspace (absolute, or too many "..") */
  bool refused;    /* a device node, fifo or socket: never applied */
  bool inner;      /* below a created, replaced or type-changed directory: applied with it */
  bool copied_up;  /* the upper object was copied up from the lower one of this path, which existed then */
};

struct ab_ws_changes
{
  struct ab_ws_change *v;
  size_t n, cap;
  uint64_t totals[AB_WS__KINDS];
  uint64_t bytes;   /* of new regular files' contents */
  uint64_t refused;
};

/* The deepest directory nesting a change list is made for (each level holds
   two directory fds during the walk). */
#define AB_WS_MAX_DEPTH 256

/* The changes of upper_fd (the upper layer's root directory) over lower_fd
   (the workspace), sorted by path; lower_fd -1 reads every entry as new.
   started_ns is when the run started: a copied-up file whose name is not
   in the lower directory was renamed by the run when that directory has
   not changed since, and is counted as deleted on the host otherwise. */
int ab_ws_diff (int upper_fd, int lower_fd, uint64_t started_ns, struct ab_ws_changes *out, ab_error_t *err);
void ab_ws_changes_free (struct ab_ws_changes *c);

const char *ab_ws_kind_name (int kind);   /* "created", "type-changed", ... */
const char *ab_ws_type_name (int type);   /* "file", "directory", ... */

/* The change list as JSON members of the caller's open object: "changes"
   (deletions and replaced directories always, the rest up to list_max),
   "listed", "truncated", "totals", "bytes", "refused". */
void ab_ws_changes_gen (struct ab_gen *g, const struct ab_ws_changes *c, uint64_t list_max);

/* One line per change for a terminal: "M  src/a.c", "A  link -> /etc (outside)". */
void ab_ws_change_line (const struct ab_ws_change *ch, char *buf, size_t len);

#endif
