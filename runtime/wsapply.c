/* Applying a change set (runtime/wsapply.h).
 *
 * An apply is a plan of operations, one per top-most changed path:
 *   put   the upper object (a file, a symlink or a whole new directory
 *         tree) staged as .agentbox-apply-<nonce>-<n> in the target's
 *         directory, then exchanged with the target (or renamed into place
 *         where there was none);
 *   del   the target renamed to its temporary name;
 *   mode  the target's permission bits set.
 * The journal holds the plan ("op" lines, then "plan"), then the inodes of
 * the staged objects ("staged" lines, then "staged-end"), then "commit"
 * when every operation is done; the old objects under temporary names are
 * removed after it.  Whether one operation was done is read from the
 * filesystem: a put is done when the target has the staged inode, a del
 * when the temporary name exists. */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "base/resolve.h"
#include "base/util.h"
#include "runtime/wsapply.h"

#define JOURNAL "journal"
#define TMP_PREFIX ".agentbox-apply-"

enum
{
  OP_PUT,
  OP_DEL,
  OP_MODE,
};
static const char *const op_names[] = { "put", "del", "mode" };

struct op
{
  int kind;
  char *path;
  bool exists;      /* put: a target was there when planned (exchanged) */
  uint32_t old_mode, new_mode;
  uint64_t old_ino; /* the target's inode when planned */
  uint64_t staged;  /* put: the staged object's inode */
  bool skipped;     /* partial: changed on the host while the apply ran; left out */
};

/* The directory of the last path looked up, kept open: the operations
   are in path order, so most share it with the one before. */
struct dir_cache
{
  char *dir;
  int fd;
};

struct plan
{
  struct op *v;
  size_t n;
  char nonce[17];
  bool have_plan, staged_end, committed;
  struct dir_cache ws, up; /* in the workspace, in the upper layer */
};

static void
plan_init (struct plan *p)
{
  memset (p, 0, sizeof *p);
  p->ws.fd = p->up.fd = -1;
}

static void
plan_free (struct plan *p)
{
  size_t i;

  for (i = 0; i < p->n; i++)
    free (p->v[i].path);
  free (p->v);
  free (p->ws.dir);
  free (p->up.dir);
  ab_closep_now (&p->ws.fd);
  ab_closep_now (&p->up.fd);
  plan_init (p);
}

void
ab_ws_report_free (struct ab_ws_report *r)
{
  size_t i;

  for (i = 0; i < r->n; i++)
    {
      free (r->v[i].path);
      free (r->v[i].reason);
    }
  free (r->v);
  memset (r, 0, sizeof *r);
}

const char *
ab_ws_problem_name (int kind)
{
  return kind == AB_WS_CONFLICT ? "conflict" : kind == AB_WS_REFUSED ? "refused" : "unreachable";
}

static void __attribute__ ((format (printf, 4, 5)))
problem (struct ab_ws_report *r, const char *path, int kind, const char *fmt, ...)
{
  char msg[512];
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  r->v = xreallocarray (r->v, r->n + 1, sizeof *r->v);
  r->v[r->n].path = xstrdup (path);
  r->v[r->n].kind = kind;
  r->v[r->n].reason = xstrdup (msg);
  r->n++;
}

/* ---- paths -------------------------------------------------------------- */

static const char *
base_name (const char *path)
{
  const char *s = strrchr (path, '/');
  return s ? s + 1 : path;
}

/* The directory holding `path` (relative to dirfd), resolved beneath
   dirfd: no symlink followed, no mount crossed, no ".." out.  An O_PATH fd,
   or -1 with errno. */
static int
open_parent (int dirfd, const char *path)
{
  const char *slash = strrchr (path, '/');
  _cleanup_free_ char *dir = NULL;

  if (slash == NULL)
    return openat (dirfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  dir = xstrndup (path, (size_t)(slash - path));
  return ab_openat2 (dirfd, dir, O_PATH | O_DIRECTORY | O_NOFOLLOW, 0,
                     RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV);
}

/* open_parent through the cache: the fd is the cache's (not to close);
   -1 with errno when the directory cannot be reached. */
static int
parent_fd (struct dir_cache *c, int dirfd, const char *path)
{
  const char *slash = strrchr (path, '/');
  size_t n = slash ? (size_t)(slash - path) : 0;

  if (c->dir && strlen (c->dir) == n && memcmp (c->dir, path, n) == 0)
    {
      if (c->fd < 0)
        errno = ENOENT;
      return c->fd;
    }
  free (c->dir);
  ab_closep_now (&c->fd);
  c->dir = xstrndup (path, n);
  c->fd = open_parent (dirfd, path);
  return c->fd;
}

static void
tmp_name (char *buf, size_t len, const struct plan *p, size_t n)
{
  snprintf (buf, len, TMP_PREFIX "%s-%zu", p->nonce, n);
}

static uint64_t
ctime_ns (const struct stat *st)
{
  return (uint64_t)st->st_ctim.tv_sec * 1000000000u + (uint64_t)st->st_ctim.tv_nsec;
}

/* Something at or below name (in dirfd) changed at or after t0: its path
   (relative to name) in `found`.  1 changed, 0 not, -1 too deep or
   unreadable (counts as changed: it cannot be shown not to be). */
static int
tree_changed (int at, const char *name, uint64_t t0, int depth, char *found, size_t len)
{
  _cleanup_close_ int fd = -1;
  struct stat st;
  struct dirent *e;
  DIR *d;
  int r = 0;

  if (fstatat (at, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return errno == ENOENT ? 0 : -1;
  if (ctime_ns (&st) >= t0)
    {
      snprintf (found, len, "%s", name);
      return 1;
    }
  if (!S_ISDIR (st.st_mode))
    return 0;
  if (depth > AB_WS_MAX_DEPTH)
    return -1;
  fd = openat (at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 || (d = fdopendir (fd)) == NULL)
    return -1;
  fd = -1;
  while (r == 0 && (e = readdir (d)) != NULL)
    if (strcmp (e->d_name, ".") && strcmp (e->d_name, ".."))
      {
        char sub[4096];
        r = tree_changed (dirfd (d), e->d_name, t0, depth + 1, sub, sizeof sub);
        if (r == 1)
          snprintf (found, len, "%s/%s", name, sub);
      }
  closedir (d);
  return r;
}

/* ---- ids ---------------------------------------------------------------- */

/* The disk id of host id `id` (what the container's files are owned by in
   the upper layer) through the lower layer's mapping; the workspace's
   owner for an id it does not cover. */
static uint32_t
host_to_disk (const struct ab_ws_apply_ctx *x, const struct ab_idmaps *maps, uint32_t id, uint32_t fallback)
{
  size_t i;

  if (!x->mapped)
    return id;
  for (i = 0; i < maps->n; i++)
    if (id >= maps->v[i].host_id && id - maps->v[i].host_id < maps->v[i].size)
      return maps->v[i].container_id + (id - maps->v[i].host_id);
  return fallback;
}

static int
set_owner_times (const struct ab_ws_apply_ctx *x, int fd, const struct stat *st, const char *what, ab_error_t *err)
{
  struct timespec ts[2] = { st->st_atim, st->st_mtim };

  if (fchown (fd, host_to_disk (x, x->uids, st->st_uid, x->owner_uid), host_to_disk (x, x->gids, st->st_gid, x->owner_gid))
      < 0)
    return ab_error_set (err, errno, "apply: set the owner of `%s`", what);
  /* The permission bits, never set-uid or set-gid: a set-uid file the
     container made would be one on the host. */
  if (fchmod (fd, st->st_mode & (S_ISDIR (st->st_mode) ? 01777 : 0777)) < 0)
    return ab_error_set (err, errno, "apply: set the mode of `%s`", what);
  if (futimens (fd, ts) < 0)
    return ab_error_set (err, errno, "apply: set the times of `%s`", what);
  return 0;
}

/* ---- staging ------------------------------------------------------------ */

static int stage (const struct ab_ws_apply_ctx *x, int from_dir, const char *from, int to_dir, const char *to,
                  const char *what, int depth, ab_error_t *err);

static int
stage_file (const struct ab_ws_apply_ctx *x, int from_dir, const char *from, int to_dir, const char *to,
            const char *what, ab_error_t *err)
{
  _cleanup_close_ int in = openat (from_dir, from, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  _cleanup_close_now_ int out = -1;
  struct stat st;
  char buf[65536];
  ssize_t n;

  if (in < 0 || fstat (in, &st) < 0 || !S_ISREG (st.st_mode))
    return ab_error_setc (err, AB_EC_STATE, in < 0 ? errno : EINVAL, "apply: read `%s` from the change set", what);
  out = openat (to_dir, to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (out < 0)
    return ab_error_set (err, errno, "apply: create a temporary file for `%s`", what);
  /* copy_file_range while it works (same filesystem type); once it says
     the two cannot (the upper layer's tmpfs to a disk), read and write. */
  static __thread bool no_cfr;
  for (;;)
    {
      n = no_cfr ? -1 : copy_file_range (in, NULL, out, NULL, 1u << 30, 0);
      if (n > 0)
        continue;
      if (n == 0)
        break;
      if (!no_cfr && errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
        return ab_error_set (err, errno, "apply: copy `%s`", what);
      no_cfr = true;
      while ((n = read (in, buf, sizeof buf)) > 0)
        if (ab_write_all (out, buf, (size_t)n) < 0)
          return ab_error_set (err, errno, "apply: write `%s`", what);
      if (n < 0)
        return ab_error_set (err, errno, "apply: read `%s`", what);
      break;
    }
  return set_owner_times (x, out, &st, what, err);
}

static int
stage_symlink (const struct ab_ws_apply_ctx *x, int from_dir, const char *from, int to_dir, const char *to,
               const struct stat *st, const char *what, ab_error_t *err)
{
  char target[4096];
  struct timespec ts[2] = { st->st_atim, st->st_mtim };
  ssize_t n = readlinkat (from_dir, from, target, sizeof target - 1);

  if (n < 0)
    return ab_error_set (err, errno, "apply: read the symlink `%s`", what);
  target[n] = '\0';
  /* a link, as the container made it: nothing here resolves it */
  if (symlinkat (target, to_dir, to) < 0)
    return ab_error_set (err, errno, "apply: create the symlink `%s`", what);
  if (fchownat (to_dir, to, host_to_disk (x, x->uids, st->st_uid, x->owner_uid),
                host_to_disk (x, x->gids, st->st_gid, x->owner_gid), AT_SYMLINK_NOFOLLOW)
          < 0
      || utimensat (to_dir, to, ts, AT_SYMLINK_NOFOLLOW) < 0)
    return ab_error_set (err, errno, "apply: set the owner and times of the symlink `%s`", what);
  return 0;
}

/* A new directory and everything in it (all of it new: it is the upper
   layer's, whole). */
static int
stage_dir (const struct ab_ws_apply_ctx *x, int from_dir, const char *from, int to_dir, const char *to,
           const char *what, int depth, ab_error_t *err)
{
  _cleanup_close_ int in = -1, out = -1;
  struct stat st;
  struct dirent *e;
  DIR *d;
  int fd, r = 0;

  if (depth > AB_WS_MAX_DEPTH)
    return ab_error_setc (err, AB_EC_STATE, ELOOP, "apply: `%s` is nested too deep", what);
  in = openat (from_dir, from, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (in < 0 || fstat (in, &st) < 0)
    return ab_error_setc (err, AB_EC_STATE, errno, "apply: read `%s` from the change set", what);
  if (mkdirat (to_dir, to, 0700) < 0)
    return ab_error_set (err, errno, "apply: create a temporary directory for `%s`", what);
  out = openat (to_dir, to, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  fd = dup (in);
  if (out < 0 || fd < 0 || (d = fdopendir (fd)) == NULL)
    {
      if (fd >= 0)
        close (fd);
      return ab_error_set (err, errno, "apply: read the directory `%s`", what);
    }
  while (r == 0 && (e = readdir (d)) != NULL)
    if (strcmp (e->d_name, ".") && strcmp (e->d_name, ".."))
      {
        _cleanup_free_ char *sub = xasprintf ("%s/%s", what, e->d_name);
        r = stage (x, dirfd (d), e->d_name, out, e->d_name, sub, depth + 1, err);
      }
  closedir (d);
  if (r < 0)
    return -1;
  return set_owner_times (x, out, &st, what, err);
}

/* The upper object from/from_dir as to/to_dir.  Whiteouts and what is never
   applied (reported when planned) are left out. */
static int
stage (const struct ab_ws_apply_ctx *x, int from_dir, const char *from, int to_dir, const char *to, const char *what,
       int depth, ab_error_t *err)
{
  struct stat st;

  if (fstatat (from_dir, from, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return ab_error_setc (err, AB_EC_STATE, errno, "apply: `%s` is gone from the change set", what);
  if (S_ISREG (st.st_mode))
    return stage_file (x, from_dir, from, to_dir, to, what, err);
  if (S_ISLNK (st.st_mode))
    return stage_symlink (x, from_dir, from, to_dir, to, &st, what, err);
  if (S_ISDIR (st.st_mode))
    return stage_dir (x, from_dir, from, to_dir, to, what, depth, err);
  return 0;
}

/* ---- the journal -------------------------------------------------------- */

static void
hex (char *out, const char *s)
{
  static const char digits[] = "0123456789abcdef";

  for (; *s; s++)
    {
      *out++ = digits[(unsigned char)*s >> 4];
      *out++ = digits[(unsigned char)*s & 15];
    }
  *out = '\0';
}

static char *
unhex (const char *s)
{
  size_t n = strlen (s), i;
  char *out;

  if (n % 2)
    return NULL;
  out = xmalloc (n / 2 + 1);
  for (i = 0; i < n / 2; i++)
    {
      unsigned v;
      if (sscanf (s + 2 * i, "%2x", &v) != 1 || v == 0)
        {
          free (out);
          return NULL;
        }
      out[i] = (char)v;
    }
  out[n / 2] = '\0';
  return out;
}

static int
journal_append (const struct ab_ws_apply_ctx *x, const char *buf, size_t len, bool create, ab_error_t *err)
{
  _cleanup_close_now_ int fd
      = openat (x->journal_dir, JOURNAL, O_WRONLY | O_APPEND | O_CLOEXEC | (create ? O_CREAT | O_TRUNC : 0), 0600);

  if (fd < 0 || ab_write_all (fd, buf, len) < 0)
    return ab_error_set (err, errno, "apply: write the journal");
  return 0;
}

static int
journal_plan (const struct ab_ws_apply_ctx *x, const struct plan *p, ab_error_t *err)
{
  size_t cap = 64, len = 0, i;
  _cleanup_free_ char *buf = xmalloc (cap);

  len += (size_t)snprintf (buf, cap, "agentbox-apply 1 %s\n", p->nonce);
  for (i = 0; i < p->n; i++)
    {
      const struct op *o = &p->v[i];
      size_t need = 2 * strlen (o->path) + 128;
      if (len + need > cap)
        {
          cap = 2 * (len + need);
          buf = xrealloc (buf, cap);
        }
      len += (size_t)snprintf (buf + len, cap - len, "op %zu %s %d %o %o %llu ", i, op_names[o->kind], o->exists,
                               o->old_mode, o->new_mode, (unsigned long long)o->old_ino);
      hex (buf + len, o->path);
      len += strlen (buf + len);
      buf[len++] = '\n';
    }
  if (len + 8 > cap)
    buf = xrealloc (buf, len + 8);
  memcpy (buf + len, "plan\n", 5);
  return journal_append (x, buf, len + 5, true, err);
}

static int
journal_staged (const struct ab_ws_apply_ctx *x, const struct plan *p, ab_error_t *err)
{
  size_t cap = 64 * p->n + 32, len = 0, i;
  _cleanup_free_ char *buf = xmalloc (cap);

  for (i = 0; i < p->n; i++)
    if (p->v[i].kind == OP_PUT)
      len += (size_t)snprintf (buf + len, cap - len, "staged %zu %llu\n", i, (unsigned long long)p->v[i].staged);
  len += (size_t)snprintf (buf + len, cap - len, "staged-end\n");
  return journal_append (x, buf, len, false, err);
}

/* Read the journal; a line cut short by a kill is not one. */
static int
journal_read (const struct ab_ws_apply_ctx *x, struct plan *p, ab_error_t *err)
{
  _cleanup_free_ char *buf = NULL;
  size_t len;
  char *line, *next;

  plan_init (p);
  if (ab_read_file_at (x->journal_dir, JOURNAL, 1u << 30, &buf, &len, err) < 0)
    return -1;
  for (line = buf; line < buf + len; line = next)
    {
      char *nl = memchr (line, '\n', (size_t)(buf + len - line));
      char kind[8], path[8192 * 2 + 1];
      unsigned long long a, b;
      int exists;
      unsigned om, nm;
      size_t n;

      if (nl == NULL)
        break;
      *nl = '\0';
      next = nl + 1;
      if (sscanf (line, "agentbox-apply 1 %16s", p->nonce) == 1)
        continue;
      if (strcmp (line, "plan") == 0)
        p->have_plan = true;
      else if (strcmp (line, "staged-end") == 0)
        p->staged_end = true;
      else if (strcmp (line, "commit") == 0)
        p->committed = true;
      else if (sscanf (line, "staged %llu %llu", &a, &b) == 2 && a < p->n)
        p->v[a].staged = b;
      else if (sscanf (line, "skip %llu", &a) == 1 && a < p->n)
        p->v[a].skipped = true;
      else if (!p->have_plan
               && sscanf (line, "op %zu %7s %d %o %o %llu %16384s", &n, kind, &exists, &om, &nm, &a, path) == 7
               && n == p->n)
        {
          struct op o = { .exists = exists != 0, .old_mode = om, .new_mode = nm, .old_ino = a };
          o.kind = strcmp (kind, "put") == 0 ? OP_PUT : strcmp (kind, "del") == 0 ? OP_DEL : OP_MODE;
          o.path = unhex (path);
          if (o.path == NULL || o.path[0] == '/'
              || (strcmp (kind, "put") != 0 && strcmp (kind, "del") != 0 && strcmp (kind, "mode") != 0))
            {
              free (o.path);
              plan_free (p);
              return ab_error_setc (err, AB_EC_STATE, EINVAL, "apply: the journal is damaged (op %zu)", n);
            }
          p->v = xreallocarray (p->v, p->n + 1, sizeof *p->v);
          p->v[p->n++] = o;
        }
    }
  if (p->nonce[0] == '\0' || strspn (p->nonce, "0123456789abcdef") != 16)
    p->have_plan = false;
  return 0;
}

int
ab_ws_journal_state (int journal_dir)
{
  struct ab_ws_apply_ctx x = { .journal_dir = journal_dir };
  ab_error_t ignored = { 0 };
  struct plan p;
  int r;

  if (faccessat (journal_dir, JOURNAL, F_OK, AT_SYMLINK_NOFOLLOW) < 0 || journal_read (&x, &p, &ignored) < 0)
    return AB_WS_JOURNAL_NONE;
  r = !p.have_plan ? AB_WS_JOURNAL_NONE : p.committed ? AB_WS_JOURNAL_COMMITTED : AB_WS_JOURNAL_OPEN;
  plan_free (&p);
  return r;
}

/* ---- planning ----------------------------------------------------------- */

static bool
changed (const struct ab_ws_apply_ctx *x, const struct stat *st)
{
  return ctime_ns (st) >= x->started_ns;
}

/* The conflicts of an existing target: it, and for a directory that goes
   (deleted, replaced, turned into something else) everything below it. */
static bool
target_conflicts (const struct ab_ws_apply_ctx *x, int parent, const char *path, const struct stat *st, bool whole,
                  struct ab_ws_report *rep)
{
  char found[4096];
  int r;

  if (x->overwrite)
    return false;
  if (changed (x, st))
    {
      problem (rep, path, AB_WS_CONFLICT, "changed on the host since the run started");
      return true;
    }
  if (whole && S_ISDIR (st->st_mode) && (r = tree_changed (parent, base_name (path), x->started_ns, 0, found, sizeof found)) != 0)
    {
      if (r < 0)
        problem (rep, path, AB_WS_CONFLICT, "cannot be shown unchanged on the host (too deep or unreadable)");
      else
        problem (rep, path, AB_WS_CONFLICT, "`%s` in it changed on the host since the run started", found);
      return true;
    }
  return false;
}

/* One operation for change ch, or none (false with a problem reported,
   or nothing to do). */
static bool
plan_one (const struct ab_ws_apply_ctx *x, struct plan *p, const struct ab_ws_change *ch, struct op *o,
          struct ab_ws_report *rep)
{
  int parent = parent_fd (&p->ws, x->dir_fd, ch->path);
  const char *name = base_name (ch->path);
  struct stat st;
  bool have;

  memset (o, 0, sizeof *o);
  if (parent < 0)
    {
      problem (rep, ch->path, AB_WS_UNREACHABLE,
               "its directory is no directory inside the workspace now (gone, a symlink, or another filesystem)");
      return false;
    }
  have = fstatat (parent, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
  o->path = ch->path;
  o->exists = have;
  o->old_ino = have ? st.st_ino : 0;
  o->old_mode = have ? st.st_mode & 07777 : 0;
  switch (ch->kind)
    {
    case AB_WS_DELETED:
      o->kind = OP_DEL;
      if (!have)
        return false; /* deleted on the host as well */
      return !target_conflicts (x, parent, ch->path, &st, true, rep);
    case AB_WS_MODE_CHANGED:
      o->kind = OP_MODE;
      o->new_mode = ch->mode & (ch->type == AB_WS_T_DIR ? 01777 : 0777);
      if (!have && !x->overwrite)
        problem (rep, ch->path, AB_WS_CONFLICT, "deleted on the host since the run started");
      if (!have)
        return false;
      if ((st.st_mode & S_IFMT) != (ch->type == AB_WS_T_DIR ? S_IFDIR : S_IFREG))
        {
          problem (rep, ch->path, AB_WS_CONFLICT, "no longer a %s on the host", ab_ws_type_name (ch->type));
          return false;
        }
      return !target_conflicts (x, parent, ch->path, &st, false, rep);
    default:
      o->kind = OP_PUT;
      if (!have && ch->copied_up && !x->overwrite)
        {
          problem (rep, ch->path, AB_WS_CONFLICT, "deleted on the host since the run started");
          return false;
        }
      return !have || !target_conflicts (x, parent, ch->path, &st, ch->kind != AB_WS_MODIFIED, rep);
    }
}

static int
make_plan (const struct ab_ws_apply_ctx *x, const struct ab_ws_changes *c, struct plan *p, struct ab_ws_report *rep)
{
  unsigned char rnd[8];
  size_t i;

  plan_init (p);
  if (getrandom (rnd, sizeof rnd, 0) != sizeof rnd)
    return -1;
  for (i = 0; i < 8; i++)
    snprintf (p->nonce + 2 * i, 3, "%02x", rnd[i]);
  p->v = xcalloc (c->n + 1, sizeof *p->v);
  for (i = 0; i < c->n; i++)
    {
      const struct ab_ws_change *ch = &c->v[i];
      size_t before = rep->n;
      struct op o;

      if (ch->refused)
        {
          problem (rep, ch->path, AB_WS_REFUSED, "a %s is never applied", ab_ws_type_name (ch->type));
          rep->skipped++;
          continue;
        }
      if (ch->inner)
        continue; /* with the new directory it is in */
      if (plan_one (x, p, ch, &o, rep))
        {
          o.path = xstrdup (ch->path);
          p->v[p->n++] = o;
        }
      else if (rep->n > before)
        rep->skipped++;
    }
  return 0;
}

/* ---- doing and undoing -------------------------------------------------- */

/* Remove the temporary object of op n, if any. */
static void
drop_tmp (const struct ab_ws_apply_ctx *x, struct plan *p, size_t n)
{
  int parent = parent_fd (&p->ws, x->dir_fd, p->v[n].path);
  char t[64];

  tmp_name (t, sizeof t, p, n);
  if (parent >= 0)
    ab_rm_tree_at (parent, t, 4 * AB_WS_MAX_DEPTH);
}

static int
stage_all (const struct ab_ws_apply_ctx *x, struct plan *p, ab_error_t *err)
{
  size_t i;

  for (i = 0; i < p->n; i++)
    {
      struct op *o = &p->v[i];
      int parent, up;
      struct stat st;
      char t[64];

      if (o->kind != OP_PUT)
        continue;
      parent = parent_fd (&p->ws, x->dir_fd, o->path);
      up = parent_fd (&p->up, x->upper_fd, o->path);
      if (parent < 0 || up < 0)
        return ab_error_setc (err, AB_EC_STATE, errno, "apply: reach the directory of `%s`", o->path);
      tmp_name (t, sizeof t, p, i);
      ab_rm_tree_at (parent, t, 4 * AB_WS_MAX_DEPTH); /* a half-staged one of a killed apply */
      if (stage (x, up, base_name (o->path), parent, t, o->path, 0, err) < 0)
        return -1;
      if (fstatat (parent, t, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return ab_error_set (err, errno, "apply: stat the staged `%s`", o->path);
      o->staged = st.st_ino;
    }
  return journal_staged (x, p, err);
}

/* chmod without following a symlink: through an O_PATH fd of what was
   checked. */
static int
chmod_nofollow (int parent, const char *name, uint32_t mode, uint64_t ino)
{
  _cleanup_close_ int fd = openat (parent, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  char self[64];
  struct stat st;

  if (fd < 0 || fstat (fd, &st) < 0)
    return -1;
  if (S_ISLNK (st.st_mode) || (ino && st.st_ino != ino))
    {
      errno = ESTALE;
      return -1;
    }
  snprintf (self, sizeof self, "/proc/self/fd/%d", fd);
  return chmod (self, mode);
}

/* Do op n (resumable: what is already done is left).  1 when the target
   changed under us since it was planned (a late conflict). */
static int
do_op (const struct ab_ws_apply_ctx *x, struct plan *p, size_t n, ab_error_t *err)
{
  const struct op *o = &p->v[n];
  int parent = parent_fd (&p->ws, x->dir_fd, o->path);
  const char *name = base_name (o->path);
  struct stat st, ts;
  bool have;
  char t[64];

  if (parent < 0)
    return ab_error_setc (err, AB_EC_STATE, errno, "apply: reach the directory of `%s`", o->path);
  tmp_name (t, sizeof t, p, n);
  have = fstatat (parent, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
  switch (o->kind)
    {
    case OP_PUT:
      if (have && st.st_ino == o->staged)
        return 0; /* in place already */
      if (fstatat (parent, t, &ts, AT_SYMLINK_NOFOLLOW) < 0 || ts.st_ino != o->staged)
        return ab_error_setc (err, AB_EC_STATE, ENOENT, "apply: the staged `%s` is gone", o->path);
      if (o->exists != have || (have && st.st_ino != o->old_ino) || (have && !x->overwrite && changed (x, &st)))
        return 1;
      if (renameat2 (parent, t, parent, name, have ? RENAME_EXCHANGE : RENAME_NOREPLACE) < 0)
        return errno == EEXIST ? 1 : ab_error_set (err, errno, "apply: put `%s` in place", o->path);
      return 0;
    case OP_DEL:
      if (faccessat (parent, t, F_OK, AT_SYMLINK_NOFOLLOW) == 0 || !have)
        return 0; /* done, or gone */
      if (st.st_ino != o->old_ino || (!x->overwrite && changed (x, &st)))
        return 1;
      if (renameat2 (parent, name, parent, t, RENAME_NOREPLACE) < 0)
        return ab_error_set (err, errno, "apply: delete `%s`", o->path);
      return 0;
    default:
      if (have && (st.st_mode & 07777) == o->new_mode)
        return 0;
      if (!have || st.st_ino != o->old_ino || (!x->overwrite && changed (x, &st)))
        return 1;
      if (chmod_nofollow (parent, name, o->new_mode, o->old_ino) < 0)
        return errno == ESTALE ? 1 : ab_error_set (err, errno, "apply: chmod `%s`", o->path);
      return 0;
    }
}

/* Undo op n, whatever of it was done (best effort: every op is tried). */
static int
undo_op (const struct ab_ws_apply_ctx *x, struct plan *p, size_t n, ab_error_t *err)
{
  const struct op *o = &p->v[n];
  int parent = parent_fd (&p->ws, x->dir_fd, o->path);
  const char *name = base_name (o->path);
  struct stat st;
  char t[64];

  if (parent < 0)
    return ab_error_setc (err, AB_EC_STATE, errno, "roll back: reach the directory of `%s`", o->path);
  tmp_name (t, sizeof t, p, n);
  switch (o->kind)
    {
    case OP_PUT:
      if (o->staged && fstatat (parent, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_ino == o->staged)
        {
          /* in place: the old object back (it is under the temporary
             name), or the new one away */
          if (o->exists && renameat2 (parent, t, parent, name, RENAME_EXCHANGE) < 0)
            return ab_error_set (err, errno, "roll back: put the old `%s` back", o->path);
          if (ab_rm_tree_at (parent, o->exists ? t : name, 4 * AB_WS_MAX_DEPTH) < 0)
            return ab_error_set (err, errno, "roll back: remove the new `%s`", o->path);
          return 0;
        }
      if (ab_rm_tree_at (parent, t, 4 * AB_WS_MAX_DEPTH) < 0)
        return ab_error_set (err, errno, "roll back: remove the staged `%s`", o->path);
      return 0;
    case OP_DEL:
      if (faccessat (parent, t, F_OK, AT_SYMLINK_NOFOLLOW) == 0
          && renameat2 (parent, t, parent, name, RENAME_NOREPLACE) < 0)
        return ab_error_set (err, errno, "roll back: restore `%s`", o->path);
      return 0;
    default:
      if (fstatat (parent, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_ino == o->old_ino
          && chmod_nofollow (parent, name, o->old_mode, o->old_ino) < 0)
        return ab_error_set (err, errno, "roll back: chmod `%s`", o->path);
      return 0;
    }
}

static int
undo_all (const struct ab_ws_apply_ctx *x, struct plan *p, ab_error_t *err)
{
  ab_error_t first = { 0 };
  size_t i;
  int r = 0;

  for (i = p->n; i-- > 0;)
    if (!p->v[i].skipped && undo_op (x, p, i, r == 0 ? &first : NULL) < 0)
      r = -1;
  if (r < 0)
    {
      if (err)
        *err = first;
      return -1;
    }
  if (unlinkat (x->journal_dir, JOURNAL, 0) < 0 && errno != ENOENT)
    return ab_error_set (err, errno, "roll back: remove the journal");
  return 0;
}

/* Every op, then "commit", then the old objects removed. */
static int
finish (const struct ab_ws_apply_ctx *x, struct plan *p, struct ab_ws_report *rep, ab_error_t *err)
{
  size_t i;

  if (!p->committed)
    {
      for (i = 0; i < p->n; i++)
        {
          int r = p->v[i].skipped ? 0 : do_op (x, p, i, err);
          if (r < 0)
            return -1;
          if (p->v[i].skipped)
            continue;
          if (r == 1)
            {
              /* Changed on the host between the check and now: nothing of
                 this apply stays (partial: only this path is left out). */
              if (x->partial)
                {
                  char line[64];
                  int n = snprintf (line, sizeof line, "skip %zu\n", i);
                  if (journal_append (x, line, (size_t)n, false, err) < 0)
                    return -1;
                  problem (rep, p->v[i].path, AB_WS_CONFLICT, "changed on the host while the apply ran");
                  rep->skipped++;
                  p->v[i].skipped = true;
                  drop_tmp (x, p, i);
                  continue;
                }
              problem (rep, p->v[i].path, AB_WS_CONFLICT, "changed on the host while the apply ran");
              if (undo_all (x, p, err) < 0)
                return -1;
              return 1;
            }
          rep->applied++;
        }
      if (journal_append (x, "commit\n", 7, false, err) < 0)
        return -1;
      p->committed = true;
    }
  for (i = 0; i < p->n; i++)
    if (!p->v[i].skipped && (p->v[i].kind == OP_DEL || (p->v[i].kind == OP_PUT && p->v[i].exists)))
      drop_tmp (x, p, i);
  return 0;
}

int
ab_ws_apply (const struct ab_ws_apply_ctx *x, const struct ab_ws_changes *changes, struct ab_ws_report *rep,
             ab_error_t *err)
{
  struct plan p;
  size_t i;
  int r;

  memset (rep, 0, sizeof *rep);
  if (make_plan (x, changes, &p, rep) < 0)
    return ab_error_set (err, errno, "apply: getrandom");
  if (rep->n && !x->partial)
    {
      plan_free (&p);
      return 1;
    }
  if (journal_plan (x, &p, err) < 0)
    {
      plan_free (&p);
      return -1;
    }
  p.have_plan = true;
  if (stage_all (x, &p, err) < 0)
    {
      for (i = 0; i < p.n; i++)
        if (p.v[i].kind == OP_PUT)
          drop_tmp (x, &p, i);
      unlinkat (x->journal_dir, JOURNAL, 0);
      plan_free (&p);
      return -1;
    }
  r = finish (x, &p, rep, err);
  if (r < 0)
    {
      ab_error_t ignored = { 0 };
      undo_all (x, &p, &ignored);
    }
  plan_free (&p);
  return r;
}

int
ab_ws_resume (const struct ab_ws_apply_ctx *x, struct ab_ws_report *rep, ab_error_t *err)
{
  struct plan p;
  size_t i;
  int r;

  memset (rep, 0, sizeof *rep);
  if (journal_read (x, &p, err) < 0)
    return -1;
  rep->resumed = true;
  if (!p.staged_end && !p.committed)
    {
      /* killed while staging: nothing is in place yet; stage anew */
      for (i = 0; i < p.n; i++)
        if (p.v[i].kind == OP_PUT)
          drop_tmp (x, &p, i);
      if (stage_all (x, &p, err) < 0)
        {
          plan_free (&p);
          return -1;
        }
    }
  r = finish (x, &p, rep, err);
  plan_free (&p);
  return r;
}

int
ab_ws_rollback (const struct ab_ws_apply_ctx *x, ab_error_t *err)
{
  struct ab_ws_report rep = { 0 };
  struct plan p;
  size_t i;
  int r;

  if (journal_read (x, &p, err) < 0)
    return -1;
  if (p.committed)
    {
      r = finish (x, &p, &rep, err);
      ab_ws_report_free (&rep);
      plan_free (&p);
      return r < 0 ? -1 : 1;
    }
  if (!p.staged_end)
    for (i = 0; i < p.n; i++)
      p.v[i].staged = 0; /* nothing was put in place */
  r = undo_all (x, &p, err);
  plan_free (&p);
  return r;
}
