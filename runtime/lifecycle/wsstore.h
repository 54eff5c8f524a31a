/* Change sets: where an overlay-mode workspace keeps what the container
 * changed, from create until `agentbox workspace apply` or `discard`, past
 * the container's own delete.
 *
 *   <root>/.changesets/<id>/   one per container id: a tmpfs of
 *                              dev.agentbox.workspace.size bytes (mode 0700)
 *       meta.json              the workspace (path, device, inode), when the
 *                              run started, the lower layer's id mapping
 *       journal                while an apply runs (runtime/wsapply.h)
 *       upper/ work/           the overlay's upper layer and work directory
 *       lower/                 a mount point (runtime/mount-overlay.c)
 *
 * With dev.agentbox.workspace.changes the directory is a plain one (0700)
 * holding meta.json and the journal, and upper/, work/ and lower/ are in the
 * caller's directory.
 *
 * meta.json is create's last step: a directory without it is a create that
 * never finished (killed; no change was kept, the program never ran on it),
 * with its tmpfs mounted or not yet (or, unmounted, one whose tmpfs went
 * away with the mount namespace that held it), unless the removal of an
 * applied or discarded change set was cut short: apply and discard first
 * mark the directory itself, on the state root's filesystem (under the
 * tmpfs, which goes first), with the xattr trusted.agentbox.outcome
 * ("applied" or "discarded"), which goes with its rmdir; an apply's
 * committed journal says so too.
 *
 * The tmpfs bounds the change set: past it the container's writes fail with
 * ENOSPC (and its record says limitsHit "workspace"); a change set cannot
 * fill the host's /run.  It is a mount of the host's mount namespace, made
 * by create and removed by apply or discard (or, for a create that never
 * finished, by `delete` of its container). */
#ifndef AB_RUNTIME_WSSTORE_H
#define AB_RUNTIME_WSSTORE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "base/util.h"
#include "runtime/wsdiff.h"
#include "spec/model.h"

struct ab_bundle;
struct ab_gen;

#define AB_CHANGESETS_DIR ".changesets"

/* What a change set's directory holds (ab_changeset_open). */
enum ab_changeset_kind
{
  AB_CS_PENDING = 0, /* meta.json: changes to apply or discard */
  AB_CS_UNFINISHED,  /* a create that never finished, or its tmpfs is gone: no change (discard, `delete` remove it) */
  AB_CS_APPLIED,     /* what a removal after an apply left: the workspace holds the changes */
  AB_CS_DISCARDED,   /* ... after a discard: the workspace is as it was */
};

struct ab_ws_meta
{
  char *workspace;        /* the host directory, canonical */
  uint64_t dev, ino;      /* what it was when the run started */
  uint64_t started_ns;    /* the run's start: host changes from here on are conflicts (create) */
  uint64_t created_ns;
  char *destination;      /* where the container saw it */
  uint64_t size;          /* the tmpfs's size; 0: the layers are in changes_dir */
  char *changes_dir;
  uint64_t list_max;
  bool mapped;            /* ids through uids/gids (an id-mapped lower layer) */
  struct ab_idmaps uids, gids; /* disk id containerID+k shows as host id hostID+k */
};

struct ab_changeset
{
  char *id;
  char *root;       /* the state root */
  int dirfd;        /* <root>/.changesets/<id> (the tmpfs's root) */
  int layer_fd;     /* the directory holding upper/, work/, lower/ */
  char *layer_path;
  bool made;        /* by this process (create): abort removes it */
  bool made_layer;  /* ... and the caller's directory with it */
  int kind;         /* enum ab_changeset_kind; m is filled only for AB_CS_PENDING */
  struct ab_ws_meta m;
  /* create's job (a thread; ab_changeset_join) */
  pthread_t job;
  bool job_started, job_joined;
  int job_rootfd, job_r;
  const struct ab_bundle *job_bundle;
  ab_error_t job_err;
};

/* create: a new change set for the overlay workspace of bundle b (its
   spec->workspace), with the workspace opened the way its bind would be;
   refused (class exists) while one of that id is pending.  Made in a
   thread (*out at once): rootfd and b must stay until
   ab_changeset_join, which says whether it worked.  since_ns: the wall
   clock (ab_now_realtime_ns) when the container's create began, the run's
   start until ab_changeset_settle. */
int ab_changeset_create (const char *root, int rootfd, const char *id, const struct ab_bundle *b, uint64_t since_ns,
                         struct ab_changeset **out, ab_error_t *err);
/* The run's start, settled before the program may run (at the end of a
   detached create, just before a foreground run's START): the coarse
   clock's first value past create's start on the fine clock
   (ab_coarse_past; a wait only when the set-up was quicker than the coarse
   clock's way past that instant).  A host change made before create began
   has a ctime before it, even one in the same tick as create's start (an
   apply right before this run); one made once the program runs has a
   ctime at or past it.  In memory until
   ab_changeset_save writes meta.json again. */
void ab_changeset_settle (struct ab_changeset *cs);
int ab_changeset_save (const struct ab_changeset *cs, ab_error_t *err);
/* Replace *tree, the workspace's bind tree, by the overlay mount (closing
   it); the tree must be the directory create recorded.  Joins create. */
int ab_changeset_overlay (struct ab_changeset *cs, int *tree, const char *what, ab_error_t *err);
/* A failed create: remove everything ab_changeset_create made, and free. */
void ab_changeset_abort (struct ab_changeset *cs);

/* An existing change set (class not_found when there is none), of any kind. */
int ab_changeset_open (const char *root, const char *id, struct ab_changeset **out, ab_error_t *err);
/* The one-line error for an operation that needs a pending change set
   (diff, apply) on one of another kind: what it is, and what removes it. */
int ab_changeset_not_pending (const struct ab_changeset *cs, ab_error_t *err);
/* Hold it alone (apply, discard): class state when another process does. */
int ab_changeset_lock (struct ab_changeset *cs, ab_error_t *err);
/* The workspace, opened without following a symlink and checked to be the
   directory the run used. */
int ab_changeset_open_workspace (const struct ab_changeset *cs, ab_error_t *err);
/* Its change list. */
int ab_changeset_diff (const struct ab_changeset *cs, struct ab_ws_changes *out, ab_error_t *err);
/* The members of a change set's JSON object (the caller opens and closes
   it): its id, workspace, the change list ch (or the error that prevented
   it) with at most list_max entries besides deletions and replaced
   directories (0: the change set's own cap), its storage. */
void ab_changeset_gen (struct ab_gen *g, const struct ab_changeset *cs, const struct ab_ws_changes *ch,
                       const char *error, uint64_t list_max);
/* The record's workspaceChanges member value (a JSON object), and whether
   the storage is full. */
char *ab_changeset_record_json (const struct ab_changeset *cs, bool *full);
/* Remove the change set and its storage (after apply, or discard: outcome
   AB_CS_APPLIED or AB_CS_DISCARDED, recorded before anything goes; any
   other value records nothing).  Held alone (ab_changeset_lock). */
int ab_changeset_remove (struct ab_changeset *cs, int outcome, ab_error_t *err);
/* `delete` of container `id`: its change set if its create never finished
   (AB_CS_UNFINISHED: it holds nothing, and only the container's id names
   it), with its tmpfs; a pending one outlives the container.  1 removed,
   0 nothing to do, -1 error. */
int ab_changeset_remove_unfinished (const char *root, const char *id, ab_error_t *err);
void ab_changeset_free (struct ab_changeset *cs);

/* The ids of every change set under root, sorted. */
int ab_changeset_list (const char *root, struct ab_strv *ids, ab_error_t *err);

#endif
