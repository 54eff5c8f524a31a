/* Change sets (runtime/lifecycle/wsstore.h). */
#include "config.h"

#include <dirent.h>
#include <pthread.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <time.h>

#include "runtime/idmap.h"
#include "base/kernel-compat.h"
#include "base/log.h"
#include "runtime/mount-overlay.h"
#include "runtime/lifecycle/state.h"
#include "runtime/lifecycle/wsstore.h"
#include "runtime/wsapply.h"
#include "base/gen.h"
#include "spec/defaults.h"
#include "base/json.h"
#include "spec/spec.h"

#define META "meta.json"
/* On the change set's directory itself: what its removal is for. */
#define OUTCOME_XATTR "trusted.agentbox.outcome"
/* Below this much room the storage counts as full (a write that failed
   with ENOSPC leaves less than a page or two). */
#define FULL_MARGIN (64u << 10)

static void
meta_free (struct ab_ws_meta *m)
{
  free (m->workspace);
  free (m->destination);
  free (m->changes_dir);
  free (m->uids.v);
  free (m->gids.v);
  memset (m, 0, sizeof *m);
}

static int ab_changeset_join (struct ab_changeset *cs, ab_error_t *err);

void
ab_changeset_free (struct ab_changeset *cs)
{
  if (cs == NULL)
    return;
  ab_changeset_join (cs, NULL);
  if (cs->dirfd >= 0)
    close (cs->dirfd);
  if (cs->layer_fd >= 0)
    close (cs->layer_fd);
  free (cs->id);
  free (cs->root);
  free (cs->layer_path);
  meta_free (&cs->m);
  free (cs);
}

static struct ab_changeset *
changeset_new (const char *root, const char *id)
{
  struct ab_changeset *cs = xzalloc (sizeof *cs);

  cs->root = xstrdup (root);
  cs->id = xstrdup (id);
  cs->dirfd = cs->layer_fd = -1;
  return cs;
}

/* ---- meta.json ---------------------------------------------------------- */

static int
meta_write (const struct ab_changeset *cs, ab_error_t *err)
{
  _cleanup_gen_ struct ab_gen *g = ab_gen_new (true);
  const struct ab_ws_meta *m = &cs->m;
  const char *buf;
  size_t len;

  ab_gen_obj_open (g);
  ab_gen_kv_u64 (g, "version", 1);
  ab_gen_kv_str (g, "id", cs->id);
  ab_gen_kv_str (g, "workspace", m->workspace);
  ab_gen_kv_u64 (g, "dev", m->dev);
  ab_gen_kv_u64 (g, "ino", m->ino);
  ab_gen_kv_u64 (g, "started", m->started_ns);
  ab_gen_kv_u64 (g, "created", m->created_ns);
  ab_gen_kv_str (g, "destination", m->destination);
  ab_gen_kv_u64 (g, "size", m->size);
  if (m->changes_dir)
    ab_gen_kv_str (g, "changesDir", m->changes_dir);
  ab_gen_kv_bool (g, "changesDirMade", cs->made_layer);
  ab_gen_kv_u64 (g, "listMax", m->list_max);
  ab_gen_kv_bool (g, "mapped", m->mapped);
  ab_gen_idmaps (g, "uidMappings", &m->uids);
  ab_gen_idmaps (g, "gidMappings", &m->gids);
  ab_gen_obj_close (g);
  buf = ab_gen_buf (g, &len);
  return ab_write_file_atomic (cs->dirfd, META, buf, len, 0600, err);
}

static int
read_maps (struct ab_jctx *c, struct ab_json *j, const char *key, struct ab_idmaps *out)
{
  int r = ab_parse_idmaps (c, j, key, out);

  if (r == 0)
    {
      ab_jpush_key (c, key);
      return ab_jerr (c, "required");
    }
  return r < 0 ? -1 : 0;
}

static int
meta_read (struct ab_changeset *cs, ab_error_t *err)
{
  static const struct ab_json_limits lim = {
    .max_bytes = 1u << 20, .max_depth = 4, .max_string = 8192, .max_items = 1024, .max_nodes = 1u << 14,
  };
  _cleanup_free_ char *buf = NULL;
  _cleanup_json_ struct ab_json *j = NULL;
  struct ab_ws_meta *m = &cs->m;
  uint64_t version;
  size_t len;
  struct ab_jctx c;

  if (ab_read_file_at (cs->dirfd, META, 1u << 20, &buf, &len, err) < 0)
    return ab_error_prefix (err, "workspace change set `%s`", cs->id);
  j = ab_json_parse (buf, len, &lim, "workspace change set " META, err);
  if (j == NULL)
    return -1;
  ab_jctx_init (&c, "workspace change set " META, err);
  if (ab_jget_u64 (&c, j, "version", AB_REQUIRED, 1, &version) < 0
      || ab_jget_str (&c, j, "workspace", AB_REQUIRED, &m->workspace) < 0
      || ab_jget_u64 (&c, j, "dev", AB_REQUIRED, UINT64_MAX, &m->dev) < 0
      || ab_jget_u64 (&c, j, "ino", AB_REQUIRED, UINT64_MAX, &m->ino) < 0
      || ab_jget_u64 (&c, j, "started", AB_REQUIRED, UINT64_MAX, &m->started_ns) < 0
      || ab_jget_u64 (&c, j, "created", AB_REQUIRED, UINT64_MAX, &m->created_ns) < 0
      || ab_jget_str (&c, j, "destination", AB_REQUIRED, &m->destination) < 0
      || ab_jget_u64 (&c, j, "size", AB_REQUIRED, UINT64_MAX, &m->size) < 0
      || ab_jget_str (&c, j, "changesDir", AB_OPTIONAL, &m->changes_dir) < 0
      || ab_jget_bool (&c, j, "changesDirMade", AB_REQUIRED, &cs->made_layer) < 0
      || ab_jget_u64 (&c, j, "listMax", AB_REQUIRED, UINT64_MAX, &m->list_max) < 0
      || ab_jget_bool (&c, j, "mapped", AB_REQUIRED, &m->mapped) < 0 || read_maps (&c, j, "uidMappings", &m->uids) < 0
      || read_maps (&c, j, "gidMappings", &m->gids) < 0)
    return -1;
  return 0;
}

/* ---- create ------------------------------------------------------------- */

/* The host id that disk id `id` shows as through the lower layer's
   mapping (the same id when it is not id-mapped); -1 when unmapped. */
static int64_t
disk_to_host (const struct ab_ws_meta *m, const struct ab_idmaps *maps, uint32_t id)
{
  size_t i;

  if (!m->mapped)
    return id;
  for (i = 0; i < maps->n; i++)
    if (id >= maps->v[i].container_id && id - maps->v[i].container_id < maps->v[i].size)
      return (int64_t)maps->v[i].host_id + (id - maps->v[i].container_id);
  return -1;
}

static void
copy_maps (struct ab_idmaps *to, const struct ab_idmaps *from)
{
  to->v = xcalloc (from->n + 1, sizeof *to->v);
  memcpy (to->v, from->v, from->n * sizeof *to->v);
  to->n = from->n;
}

/* What the workspace is: its canonical path and identity, and the id
   mapping of its lower layer, from one resolution of the bind's source the
   way its tree is made (runtime/idmap.c). */
static int
describe_workspace (struct ab_changeset *cs, const struct ab_bundle *b, struct stat *st, ab_error_t *err)
{
  const struct ab_spec *s = b->spec;
  const struct ab_mount *m = &s->mounts[s->workspace.mount];
  _cleanup_close_ int fd = ab_bind_source_open (b, s->workspace.mount, m, err);
  char path[4096];
  ssize_t n;

  if (fd < 0)
    return -1;
  if (fstat (fd, st) < 0)
    return ab_error_set (err, errno, "mounts[%zu]: stat the workspace `%s`", s->workspace.mount, m->source);
  if (!S_ISDIR (st->st_mode))
    return ab_error_setc (err, AB_EC_CONFIG, ENOTDIR,
                          "mounts[%zu]: an overlay workspace must be a directory, and `%s` is not one",
                          s->workspace.mount, m->source);
  n = ab_fd_path (fd, path, sizeof path);
  if (n <= 0)
    return ab_error_set (err, n < 0 ? errno : EINVAL, "mounts[%zu]: the path of the workspace `%s`",
                         s->workspace.mount, m->source);
  if (path[0] != '/' || !ab_utf8_valid (path, (size_t)n))
    return ab_error_setc (err, AB_EC_CONFIG, EINVAL,
                          "mounts[%zu]: the overlay workspace `%s` has no absolute UTF-8 path on the host",
                          s->workspace.mount, m->source);
  cs->m.workspace = xstrdup (path);
  cs->m.dev = st->st_dev;
  cs->m.ino = st->st_ino;
  /* The lower layer is id-mapped as the bind would be: the mount's own
     mapping, else the container's user namespace, else none. */
  if (m->uid_mappings.n || m->gid_mappings.n)
    {
      cs->m.mapped = true;
      copy_maps (&cs->m.uids, &m->uid_mappings);
      copy_maps (&cs->m.gids, &m->gid_mappings);
    }
  else if (m->idmap && s->linux_)
    {
      cs->m.mapped = true;
      copy_maps (&cs->m.uids, &s->linux_->uid_mappings);
      copy_maps (&cs->m.gids, &s->linux_->gid_mappings);
    }
  return 0;
}

/* A tmpfs of `size` bytes on the change set's directory (at), mounted in
   our (the host's) mount namespace so that it outlives the container; the
   change set is its root: meta.json, the journal and the layers live in
   memory, bounded, and nothing but the mount point touches the state
   root's filesystem. */
static int
mount_tmpfs (struct ab_changeset *cs, int at, ab_error_t *err)
{
  _cleanup_close_ int fsfd = fsopen ("tmpfs", FSOPEN_CLOEXEC), mfd = -1;
  char size[32];

  snprintf (size, sizeof size, "%llu", (unsigned long long)cs->m.size);
  if (fsfd < 0 || fsconfig (fsfd, FSCONFIG_SET_STRING, "size", size, 0) < 0
      || fsconfig (fsfd, FSCONFIG_SET_STRING, "mode", "0700", 0) < 0
      || fsconfig (fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return ab_error_set (err, errno, "workspace change set: a tmpfs of %s bytes", size);
  mfd = fsmount (fsfd, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
  if (mfd < 0 || move_mount (mfd, "", at, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return ab_error_set (err, errno, "workspace change set: mount its tmpfs on `%s`", cs->layer_path);
  cs->dirfd = openat (mfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  cs->layer_fd = cs->dirfd < 0 ? -1 : dup (cs->dirfd);
  if (cs->layer_fd < 0)
    return ab_error_set (err, errno, "workspace change set: open `%s`", cs->layer_path);
  return 0;
}

/* The caller's directory for the layers: made, or empty. */
static int
open_changes_dir (struct ab_changeset *cs, ab_error_t *err)
{
  struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS };
  DIR *d;
  struct dirent *e;
  int fd;

  if (mkdir (cs->m.changes_dir, 0700) == 0)
    cs->made_layer = true;
  else if (errno != EEXIST)
    return ab_error_setc (err, errno == ENOSPC ? AB_EC_RESOURCE : AB_EC_SETUP, errno,
                          "annotations.dev.agentbox.workspace.changes: create `%s`", cs->m.changes_dir);
  cs->layer_fd = (int)syscall (SYS_openat2, AT_FDCWD, cs->m.changes_dir, &how, sizeof how);
  if (cs->layer_fd < 0)
    return ab_error_set (err, errno, "annotations.dev.agentbox.workspace.changes: open `%s` (no symlink allowed)",
                         cs->m.changes_dir);
  fd = dup (cs->layer_fd);
  if (fd < 0 || (d = fdopendir (fd)) == NULL)
    {
      if (fd >= 0)
        close (fd);
      return ab_error_set (err, errno, "annotations.dev.agentbox.workspace.changes: read `%s`", cs->m.changes_dir);
    }
  while ((e = readdir (d)) != NULL)
    if (strcmp (e->d_name, ".") && strcmp (e->d_name, ".."))
      break;
  closedir (d);
  if (e != NULL)
    return ab_error_setc (err, AB_EC_CONFIG, ENOTEMPTY,
                          "annotations.dev.agentbox.workspace.changes: `%s` must be empty (it holds `%s`)",
                          cs->m.changes_dir, e->d_name);
  return 0;
}

/* upper/ looks like the workspace's own root to the container (its owner
   through the mapping, its mode); work/ and lower/ are the mounter's. */
static int
make_layers (struct ab_changeset *cs, const struct stat *ws, ab_error_t *err)
{
  int64_t uid = disk_to_host (&cs->m, &cs->m.uids, ws->st_uid);
  int64_t gid = disk_to_host (&cs->m, &cs->m.gids, ws->st_gid);
  static const char *const dirs[] = { "upper", "work", "lower" };
  size_t i;

  for (i = 0; i < AB_ARRAY_SIZE (dirs); i++)
    if (mkdirat (cs->layer_fd, dirs[i], 0700) < 0)
      return ab_error_setc (err, errno == ENOSPC ? AB_EC_RESOURCE : AB_EC_SETUP, errno,
                            "workspace change set: create `%s/%s`", cs->layer_path, dirs[i]);
  if (fchownat (cs->layer_fd, "upper", uid < 0 ? 0 : (uid_t)uid, gid < 0 ? 0 : (gid_t)gid, AT_SYMLINK_NOFOLLOW) < 0
      || fchmodat (cs->layer_fd, "upper", ws->st_mode & 01777, 0) < 0)
    return ab_error_set (err, errno, "workspace change set: set the owner and mode of `%s/upper`", cs->layer_path);
  return 0;
}

/* <root>/.changesets/<id>: made (refused while one of that id is
   pending), then the tmpfs on it, or the directory itself for a change
   set whose layers are in the caller's directory. */
static int
make_dirs (struct ab_changeset *cs, int rootfd, ab_error_t *err)
{
  _cleanup_close_ int sets = -1, at = -1;

  if (mkdirat (rootfd, AB_CHANGESETS_DIR, 0700) < 0 && errno != EEXIST)
    return ab_error_set (err, errno, "create the change sets' directory `%s`", AB_CHANGESETS_DIR);
  sets = openat (rootfd, AB_CHANGESETS_DIR, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (sets < 0)
    return ab_error_set (err, errno, "open the change sets' directory `%s`", AB_CHANGESETS_DIR);
  if (mkdirat (sets, cs->id, 0700) < 0)
    {
      if (errno == EEXIST)
        return ab_error_setc (err, AB_EC_EXISTS, 0,
                              "the workspace change set `%s` is pending: apply or discard it first (`agentbox "
                              "workspace apply|discard %s`)",
                              cs->id, cs->id);
      return ab_error_set (err, errno, "create the workspace change set `%s`", cs->id);
    }
  cs->made = true;
  at = openat (sets, cs->id, (cs->m.changes_dir ? O_RDONLY : O_PATH) | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (at < 0)
    return ab_error_set (err, errno, "open the workspace change set `%s`", cs->id);
  if (cs->m.changes_dir == NULL)
    return mount_tmpfs (cs, at, err);
  cs->dirfd = ab_steal_fd (&at);
  return 0;
}

static int
create (struct ab_changeset *cs, int rootfd, const struct ab_bundle *b, ab_error_t *err)
{
  struct stat ws;

  if (describe_workspace (cs, b, &ws, err) < 0 || make_dirs (cs, rootfd, err) < 0)
    return -1;
  if (cs->m.changes_dir && open_changes_dir (cs, err) < 0)
    return -1;
  /* (meta.json says create's start until ab_changeset_settle's is saved:
     an earlier start only finds more conflicts.) */
  return make_layers (cs, &ws, err) < 0 || meta_write (cs, err) < 0 ? -1 : 0;
}

/* The job: made in a thread of its own from right after the container's
   clone (never across it: the child must not inherit a lock this thread
   holds) to just before its mount trees are sent.  The directory and mount
   on the state root's filesystem cost what its metadata writes cost (on a
   disk, each a journal commit away), while create's own thread writes the
   state and the id maps: they overlap.  The thread only reads the bundle,
   which nothing changes meanwhile. */
static void *
create_run (void *p)
{
  struct ab_changeset *cs = p;

  ab_set_step ("workspace");
  cs->job_r = create (cs, cs->job_rootfd, cs->job_bundle, &cs->job_err);
  return NULL;
}

int
ab_changeset_create (const char *root, int rootfd, const char *id, const struct ab_bundle *b, uint64_t since_ns,
                     struct ab_changeset **out, ab_error_t *err)
{
  const struct ab_workspace *w = &b->spec->workspace;
  struct ab_changeset *cs;

  if (geteuid () != 0)
    return ab_error_setc (err, AB_EC_CONFIG, EPERM,
                          "annotations.dev.agentbox.workspace.mode: an overlay workspace needs root (its upper "
                          "layer's whiteouts and xattrs are made by the overlay's mounter)");
  cs = changeset_new (root, id);
  *out = cs;
  cs->m.started_ns = since_ns; /* settled by the job (create) */
  cs->m.created_ns = ab_now_realtime_ns ();
  cs->m.destination = xstrdup (w->destination);
  cs->m.size = w->size;
  cs->m.changes_dir = w->changes_dir ? xstrdup (w->changes_dir) : NULL;
  cs->m.list_max = w->list_max;
  cs->layer_path = cs->m.changes_dir ? xstrdup (cs->m.changes_dir)
                                     : xasprintf ("%s/" AB_CHANGESETS_DIR "/%s", root, id);
  cs->job_rootfd = rootfd;
  cs->job_bundle = b;
  cs->job_started = pthread_create (&cs->job, NULL, create_run, cs) == 0;
  if (!cs->job_started)
    {
      cs->job_joined = true;
      return create (cs, rootfd, b, err);
    }
  return 0;
}

static int
ab_changeset_join (struct ab_changeset *cs, ab_error_t *err)
{
  if (cs->job_started && !cs->job_joined)
    {
      pthread_join (cs->job, NULL);
      cs->job_joined = true;
      if (cs->job_r < 0 && err)
        *err = cs->job_err;
      return cs->job_r;
    }
  return 0;
}

int
ab_changeset_overlay (struct ab_changeset *cs, int *tree, const char *what, ab_error_t *err)
{
  struct stat st;
  int ovl;

  if (ab_changeset_join (cs, err) < 0)
    return -1;
  ab_trace ("workspace change set made");
  /* The tree is of the directory described above: one swapped in between
     the two resolutions would not be the workspace apply writes to. */
  if (fstat (*tree, &st) < 0 || st.st_dev != cs->m.dev || st.st_ino != cs->m.ino)
    return ab_error_setc (err, AB_EC_SETUP, ESTALE, "%s: the workspace `%s` changed while the sandbox was set up",
                          what, cs->m.workspace);
  ovl = ab_overlay_tree (*tree, cs->layer_fd, cs->layer_path, what, err);
  if (ovl < 0)
    return -1;
  ab_trace ("workspace overlay made");
  close (*tree);
  *tree = ovl;
  return 0;
}

void
ab_changeset_settle (struct ab_changeset *cs)
{
  cs->m.started_ns = ab_coarse_past (cs->m.started_ns);
}

int
ab_changeset_save (const struct ab_changeset *cs, ab_error_t *err)
{
  return meta_write (cs, err);
}

/* ---- open, remove ------------------------------------------------------- */

static int
open_sets (const char *root, const char *id, ab_error_t *err)
{
  _cleanup_close_ int rootfd = -1;
  int fd;

  if (ab_id_validate (id, err) < 0)
    return -1;
  rootfd = open (root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  fd = rootfd < 0 ? -1 : openat (rootfd, AB_CHANGESETS_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno != ENOENT)
    return ab_error_set (err, errno, "open `%s/" AB_CHANGESETS_DIR "`", root);
  if (fd < 0)
    return ab_error_setc (err, AB_EC_NOTFOUND, 0, "no workspace change set `%s` (a run with --workspace-mode overlay "
                                                   "keeps one under its id)", id);
  return fd;
}

/* What a directory without meta.json is: what its removal's outcome, or
   an apply's committed journal, says; else a create that never finished,
   or (unmounted) one whose tmpfs went away with the mount namespace that
   held it (runtime/lifecycle/wsstore.h).  Seen through its tmpfs if
   mounted, where neither can be: a removal unmounts first. */
static int
kind_without_meta (int dirfd)
{
  char buf[16];
  ssize_t n = fgetxattr (dirfd, OUTCOME_XATTR, buf, sizeof buf);

  if (n == 7 && memcmp (buf, "applied", 7) == 0)
    return AB_CS_APPLIED;
  if (n == 9 && memcmp (buf, "discarded", 9) == 0)
    return AB_CS_DISCARDED;
  return ab_ws_journal_state (dirfd) == AB_WS_JOURNAL_COMMITTED ? AB_CS_APPLIED : AB_CS_UNFINISHED;
}

/* Change set `id` opened (its tmpfs's root when mounted) and told apart,
   without reading its meta.json. */
static int
open_dir (const char *root, const char *id, struct ab_changeset **out, ab_error_t *err)
{
  _cleanup_close_ int sets = open_sets (root, id, err);
  struct ab_changeset *cs;

  *out = NULL;
  if (sets < 0)
    return -1;
  cs = changeset_new (root, id);
  cs->layer_path = xasprintf ("%s/" AB_CHANGESETS_DIR "/%s", root, id);
  cs->dirfd = openat (sets, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (cs->dirfd < 0)
    {
      int e = errno;
      ab_changeset_free (cs);
      if (e == ENOENT)
        return ab_error_setc (err, AB_EC_NOTFOUND, 0,
                              "no workspace change set `%s` (a run with --workspace-mode overlay keeps one under its "
                              "id)", id);
      return ab_error_set (err, e, "open the workspace change set `%s`", id);
    }
  if (faccessat (cs->dirfd, META, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
    cs->kind = kind_without_meta (cs->dirfd);
  *out = cs;
  return 0;
}

int
ab_changeset_open (const char *root, const char *id, struct ab_changeset **out, ab_error_t *err)
{
  struct ab_changeset *cs;

  if (open_dir (root, id, &cs, err) < 0)
    return -1;
  if (cs->kind != AB_CS_PENDING)
    {
      *out = cs;
      return 0;
    }
  if (meta_read (cs, err) < 0)
    {
      ab_changeset_free (cs);
      return -1;
    }
  if (cs->m.changes_dir)
    {
      struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS };
      free (cs->layer_path);
      cs->layer_path = xstrdup (cs->m.changes_dir);
      cs->layer_fd = (int)syscall (SYS_openat2, AT_FDCWD, cs->layer_path, &how, sizeof how);
    }
  else
    cs->layer_fd = dup (cs->dirfd); /* the tmpfs is the change set's directory */
  *out = cs;
  return 0;
}

int
ab_changeset_not_pending (const struct ab_changeset *cs, ab_error_t *err)
{
  switch (cs->kind)
    {
    case AB_CS_UNFINISHED:
      return ab_error_setc (err, AB_EC_STATE, 0,
                            "workspace change set `%s` holds no change (its run was killed while it was made, or "
                            "its tmpfs is gone): `agentbox workspace discard %s` or `agentbox delete --force %s` "
                            "removes it",
                            cs->id, cs->id, cs->id);
    case AB_CS_APPLIED:
      return ab_error_setc (err, AB_EC_STATE, 0,
                            "workspace change set `%s` was applied; only its directory is left (discard removes it)",
                            cs->id);
    default:
      return ab_error_setc (err, AB_EC_STATE, 0,
                            "workspace change set `%s` was discarded; only its directory is left (discard removes it)",
                            cs->id);
    }
}

int
ab_changeset_lock (struct ab_changeset *cs, ab_error_t *err)
{
  if (flock (cs->dirfd, LOCK_EX | LOCK_NB) < 0)
    return ab_error_setc (err, errno == EWOULDBLOCK ? AB_EC_STATE : AB_EC_SETUP, errno,
                          "workspace change set `%s`: another apply or discard holds it", cs->id);
  return 0;
}

int
ab_changeset_open_workspace (const struct ab_changeset *cs, ab_error_t *err)
{
  if (cs->kind != AB_CS_PENDING)
    return ab_changeset_not_pending (cs, err);
  struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS };
  _cleanup_close_ int fd = (int)syscall (SYS_openat2, AT_FDCWD, cs->m.workspace, &how, sizeof how);
  struct stat st;

  if (fd < 0)
    return ab_error_setc (err, AB_EC_STATE, errno, "workspace `%s` of change set `%s` (no symlink allowed on the path)",
                          cs->m.workspace, cs->id);
  if (fstat (fd, &st) < 0)
    return ab_error_set (err, errno, "stat the workspace `%s`", cs->m.workspace);
  if (st.st_dev != cs->m.dev || st.st_ino != cs->m.ino)
    return ab_error_setc (err, AB_EC_STATE, ESTALE,
                          "workspace `%s` is no longer the directory the run of `%s` used (replaced since)",
                          cs->m.workspace, cs->id);
  return ab_steal_fd (&fd);
}

int
ab_changeset_diff (const struct ab_changeset *cs, struct ab_ws_changes *out, ab_error_t *err)
{
  _cleanup_close_ int upper = -1, lower = -1;

  memset (out, 0, sizeof *out);
  if (cs->kind != AB_CS_PENDING)
    return ab_changeset_not_pending (cs, err);
  upper = cs->layer_fd < 0 ? -1 : openat (cs->layer_fd, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (upper < 0)
    return ab_error_setc (err, AB_EC_STATE, errno,
                          "workspace change set `%s`: its storage `%s/upper` is gone (was its tmpfs unmounted, or "
                          "the host restarted?)",
                          cs->id, cs->layer_path);
  lower = ab_changeset_open_workspace (cs, err);
  if (lower < 0)
    return -1;
  return ab_ws_diff (upper, lower, cs->m.started_ns, out, err);
}

/* The storage is (nearly) full: the container's writes failed with ENOSPC. */
static bool
ab_changeset_full (const struct ab_changeset *cs)
{
  struct statfs sf;

  if (cs->layer_fd < 0 || fstatfs (cs->layer_fd, &sf) < 0)
    return false;
  return (uint64_t)sf.f_bavail * (uint64_t)sf.f_bsize < FULL_MARGIN || (sf.f_files > 0 && sf.f_ffree == 0);
}

void
ab_changeset_gen (struct ab_gen *g, const struct ab_changeset *cs, const struct ab_ws_changes *ch, const char *error,
                  uint64_t list_max)
{
  struct statfs sf;

  ab_gen_kv_str (g, "id", cs->id);
  ab_gen_kv_str (g, "mode", "overlay");
  ab_gen_kv_str (g, "workspace", cs->m.workspace);
  ab_gen_kv_str (g, "destination", cs->m.destination);
  if (ch)
    ab_ws_changes_gen (g, ch, list_max ? list_max : cs->m.list_max);
  else
    ab_gen_kv_str (g, "error", error);
  ab_gen_key (g, "storage");
  ab_gen_obj_open (g);
  ab_gen_key (g, "usedBytes");
  if (cs->layer_fd >= 0 && fstatfs (cs->layer_fd, &sf) == 0)
    ab_gen_u64 (g, (uint64_t)(sf.f_blocks - sf.f_bfree) * (uint64_t)sf.f_bsize);
  else
    ab_gen_null (g);
  ab_gen_key (g, "limitBytes");
  if (cs->m.size)
    ab_gen_u64 (g, cs->m.size);
  else
    ab_gen_null (g);
  ab_gen_kv_bool (g, "full", ab_changeset_full (cs));
  ab_gen_obj_close (g);
}

char *
ab_changeset_record_json (const struct ab_changeset *cs, bool *full)
{
  _cleanup_gen_ struct ab_gen *g = ab_gen_new (false);
  struct ab_ws_changes ch;
  ab_error_t err = { 0 };
  bool ok = ab_changeset_diff (cs, &ch, &err) == 0;

  *full = ab_changeset_full (cs);
  ab_gen_obj_open (g);
  ab_changeset_gen (g, cs, ok ? &ch : NULL, err.msg, 0);
  ab_gen_obj_close (g);
  if (ok)
    ab_ws_changes_free (&ch);
  return ab_gen_steal (g, false, NULL);
}

/* Whether the change set's directory (dirfd) is the root of a mount: its
   tmpfs (1), or nothing (0).  Told by the mount, never by the path: a
   directory whose tmpfs went away with its mount namespace, or was never
   mounted (a create killed before), is a plain one.  Anything but a tmpfs
   there is not ours to unmount. */
static int
storage_mounted (const struct ab_changeset *cs, ab_error_t *err)
{
  struct statx stx;
  struct statfs sf;

  if (statx (cs->dirfd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_TYPE, &stx) < 0)
    return ab_error_set (err, errno, "workspace change set `%s`: statx `%s`", cs->id, cs->layer_path);
  /* (Linux 5.8; overlay workspaces need 5.19) */
  if (!(stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT))
    return ab_error_set (err, ENOSYS, "workspace change set `%s`: statx cannot tell whether `%s` is a mount point",
                         cs->id, cs->layer_path);
  if (!(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
    return 0;
  if (fstatfs (cs->dirfd, &sf) < 0)
    return ab_error_set (err, errno, "workspace change set `%s`: statfs `%s`", cs->id, cs->layer_path);
  if (sf.f_type != TMPFS_MAGIC)
    return ab_error_setc (err, AB_EC_STATE, EBUSY,
                          "workspace change set `%s`: something other than its tmpfs is mounted on `%s`: left alone",
                          cs->id, cs->layer_path);
  return 1;
}

/* Mark the change set's directory on the state root's filesystem with
   what the removal is for, before anything goes: a removal cut short once
   the tmpfs is gone is then told from a create that never finished.  An
   attribute of the directory's own inode, so that the mark goes with the
   rmdir that ends the removal, never before it.  Under a mounted tmpfs the
   directory is reached through a copy of the state root's mount without
   its submounts (open_tree without AT_RECURSIVE).  A filesystem without
   xattrs keeps no mark: such a remnant is then taken for an unfinished
   create (removed all the same). */
static int
record_outcome (struct ab_changeset *cs, int sets, bool mounted, int outcome, ab_error_t *err)
{
  const char *text = outcome == AB_CS_APPLIED ? "applied" : "discarded";
  _cleanup_close_ int tree = -1, under = -1;

  if (mounted)
    {
      tree = open_tree (sets, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
      under = tree < 0 ? -1 : openat (tree, cs->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (under < 0)
        return ab_error_set (err, errno, "workspace change set `%s`: reach its directory under the tmpfs", cs->id);
    }
  if (fsetxattr (mounted ? under : cs->dirfd, OUTCOME_XATTR, text, strlen (text), 0) < 0 && errno != EOPNOTSUPP)
    return ab_error_set (err, errno, "workspace change set `%s`: mark its directory " OUTCOME_XATTR, cs->id);
  return 0;
}

/* Remove the storage (for a tmpfs: meta.json, the journal and the layers
   at once), then the directories: killed at any point, what is left is a
   change set, or the directory of one whose outcome it holds, that the
   next apply or discard removes. */
static int
remove_all (struct ab_changeset *cs, int outcome, ab_error_t *err)
{
  _cleanup_close_ int rootfd = open (cs->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  _cleanup_close_ int sets
      = rootfd < 0 ? -1 : openat (rootfd, AB_CHANGESETS_DIR, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  static const char *const layers[] = { "upper", "work", "lower" };
  char self[64];
  size_t i;
  int mounted = 0;

  ab_changeset_join (cs, NULL);
  /* (create's abort, killed between the mount and the open of its root) */
  if (cs->dirfd < 0 && sets >= 0)
    cs->dirfd = openat (sets, cs->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (cs->dirfd >= 0 && (mounted = storage_mounted (cs, err)) < 0)
    return -1;
  if ((outcome == AB_CS_APPLIED || outcome == AB_CS_DISCARDED) && cs->dirfd >= 0
      && record_outcome (cs, sets, mounted, outcome, err) < 0)
    return -1;
  if (mounted)
    {
      /* the very mount checked above, through its root's fd */
      ab_closep_now (&cs->layer_fd);
      snprintf (self, sizeof self, "/proc/self/fd/%d", cs->dirfd);
      if (umount2 (self, MNT_DETACH) < 0)
        return ab_error_set (err, errno, "workspace change set `%s`: unmount `%s`", cs->id, cs->layer_path);
      ab_closep_now (&cs->dirfd);
    }
  else if (cs->m.changes_dir && cs->layer_fd >= 0)
    {
      for (i = 0; i < AB_ARRAY_SIZE (layers); i++)
        if (ab_rm_tree_at (cs->layer_fd, layers[i], 4 * AB_WS_MAX_DEPTH) < 0)
          return ab_error_set (err, errno, "workspace change set `%s`: remove `%s/%s`", cs->id, cs->layer_path,
                               layers[i]);
      if (cs->made_layer && rmdir (cs->layer_path) < 0 && errno != ENOENT && errno != ENOTEMPTY)
        return ab_error_set (err, errno, "workspace change set `%s`: remove `%s`", cs->id, cs->layer_path);
    }
  /* meta.json before the journal (a plain directory): killed in between,
     the outcome says what is left, and so does the journal of an apply. */
  if (cs->dirfd >= 0 && unlinkat (cs->dirfd, META, 0) < 0 && errno != ENOENT)
    return ab_error_set (err, errno, "workspace change set `%s`: remove " META, cs->id);
  if (cs->dirfd >= 0 && unlinkat (cs->dirfd, "journal", 0) < 0 && errno != ENOENT)
    return ab_error_set (err, errno, "workspace change set `%s`: remove its journal", cs->id);
  if (sets >= 0 && ab_rm_tree_at (sets, cs->id, 4 * AB_WS_MAX_DEPTH) < 0)
    return ab_error_set (err, errno, "workspace change set `%s`: remove its directory", cs->id);
  /* The last one leaves the state root as create found it. */
  if (rootfd >= 0)
    unlinkat (rootfd, AB_CHANGESETS_DIR, AT_REMOVEDIR);
  return 0;
}

int
ab_changeset_remove (struct ab_changeset *cs, int outcome, ab_error_t *err)
{
  return remove_all (cs, outcome, err);
}

int
ab_changeset_remove_unfinished (const char *root, const char *id, ab_error_t *err)
{
  struct ab_changeset *cs = NULL;
  ab_error_t e = { 0 };
  int r;

  if (open_dir (root, id, &cs, &e) < 0)
    {
      if (e.cls == AB_EC_NOTFOUND)
        return 0;
      *err = e;
      return -1;
    }
  /* (an apply or discard that holds it removes it) */
  if (cs->kind != AB_CS_UNFINISHED || flock (cs->dirfd, LOCK_EX | LOCK_NB) < 0)
    r = 0;
  else
    r = remove_all (cs, AB_CS_PENDING, err) < 0 ? -1 : 1;
  ab_changeset_free (cs);
  return r;
}

void
ab_changeset_abort (struct ab_changeset *cs)
{
  ab_error_t ignored = { 0 };

  if (cs != NULL && cs->made)
    remove_all (cs, AB_CS_PENDING, &ignored);
  ab_changeset_free (cs);
}

static int
cmp_str (const void *a, const void *b)
{
  return strcmp (*(char *const *)a, *(char *const *)b);
}

int
ab_changeset_list (const char *root, struct ab_strv *ids, ab_error_t *err)
{
  _cleanup_close_ int rootfd = open (root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  int fd = rootfd < 0 ? -1 : openat (rootfd, AB_CHANGESETS_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  DIR *d;
  struct dirent *e;

  if (fd < 0)
    return errno == ENOENT ? 0 : ab_error_set (err, errno, "open `%s/" AB_CHANGESETS_DIR "`", root);
  d = fdopendir (fd);
  if (d == NULL)
    {
      close (fd);
      return ab_error_set (err, errno, "read `%s/" AB_CHANGESETS_DIR "`", root);
    }
  while ((e = readdir (d)) != NULL)
    if (e->d_name[0] != '.' && ab_id_validate (e->d_name, NULL) == 0)
      ab_strv_push (ids, e->d_name);
  closedir (d);
  if (ids->n > 1)
    qsort (ids->v, ids->n, sizeof *ids->v, cmp_str);
  return 0;
}
