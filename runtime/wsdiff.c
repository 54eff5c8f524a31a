/* The change list of an overlay workspace (runtime/wsdiff.h). */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#include "base/util.h"
#include "runtime/wsdiff.h"
#include "base/gen.h"

static const char *
ws_kind_name (int kind)
{
  static const char *const names[AB_WS__KINDS] = {
    [AB_WS_DELETED] = "deleted",           [AB_WS_REPLACED] = "replaced", [AB_WS_TYPE_CHANGED] = "type-changed",
    [AB_WS_CREATED] = "created",           [AB_WS_MODIFIED] = "modified", [AB_WS_MODE_CHANGED] = "mode-changed",
  };
  return kind >= 0 && kind < AB_WS__KINDS ? names[kind] : "?";
}

const char *
ab_ws_type_name (int type)
{
  static const char *const names[] = {
    [AB_WS_T_NONE] = "none",        [AB_WS_T_FILE] = "file", [AB_WS_T_DIR] = "directory",
    [AB_WS_T_SYMLINK] = "symlink",  [AB_WS_T_FIFO] = "fifo", [AB_WS_T_SOCKET] = "socket",
    [AB_WS_T_CHAR] = "char-device", [AB_WS_T_BLOCK] = "block-device",
  };
  return type >= 0 && (size_t)type < AB_ARRAY_SIZE (names) ? names[type] : "?";
}

static int
type_of (mode_t m)
{
  switch (m & S_IFMT)
    {
    case S_IFREG:
      return AB_WS_T_FILE;
    case S_IFDIR:
      return AB_WS_T_DIR;
    case S_IFLNK:
      return AB_WS_T_SYMLINK;
    case S_IFIFO:
      return AB_WS_T_FIFO;
    case S_IFSOCK:
      return AB_WS_T_SOCKET;
    case S_IFCHR:
      return AB_WS_T_CHAR;
    default:
      return AB_WS_T_BLOCK;
    }
}

void
ab_ws_changes_free (struct ab_ws_changes *c)
{
  size_t i;

  for (i = 0; i < c->n; i++)
    {
      free (c->v[i].path);
      free (c->v[i].target);
    }
  free (c->v);
  memset (c, 0, sizeof *c);
}

/* An overlay xattr of the upper object: trusted.overlay.NAME (a mounter
   with CAP_SYS_ADMIN, as agentbox's parent is) or user.overlay.NAME (an
   overlay mounted with userxattr).  Its length, or -1.  fd >= 0 is the
   object itself; else the object is `name` in directory `dirfd`. */
static ssize_t
ovl_xattr (int fd, int dirfd, const char *name, const char *attr, char *buf, size_t len)
{
  static const char *const prefixes[] = { "trusted.overlay.", "user.overlay." };
  char key[64], path[64 + NAME_MAX];
  size_t i;

  if (fd < 0)
    snprintf (path, sizeof path, "/proc/self/fd/%d/%s", dirfd, name);
  for (i = 0; i < AB_ARRAY_SIZE (prefixes); i++)
    {
      ssize_t n;
      snprintf (key, sizeof key, "%s%s", prefixes[i], attr);
      n = fd >= 0 ? fgetxattr (fd, key, buf, len) : lgetxattr (path, key, buf, len);
      if (n >= 0 || errno == ERANGE)
        return n < 0 ? (ssize_t)len : n;
    }
  return -1;
}

/* Whether a symlink at `path` with `target` leads out of the workspace,
   read lexically (the link is applied as a link and never followed by
   agentbox; this says where it would lead whoever follows it on the
   host).  Absolute targets lead out: the host resolves them against its
   own root, not the workspace. */
static bool
target_outside (const char *path, const char *target)
{
  long depth = 0;
  const char *p;

  if (target[0] == '/' || target[0] == '\0')
    return true;
  for (p = path; *p; p++)
    depth += *p == '/';
  while (*target)
    {
      size_t n = strcspn (target, "/");
      if (n == 2 && target[0] == '.' && target[1] == '.')
        {
          if (--depth < 0)
            return true;
        }
      else if (n > 0 && !(n == 1 && target[0] == '.'))
        depth++;
      target += n;
      target += *target == '/';
    }
  return false;
}

/* Two regular files of equal size: the same bytes? */
static bool
same_contents (int dirfd_a, int dirfd_b, const char *name)
{
  _cleanup_close_ int a = openat (dirfd_a, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  _cleanup_close_ int b = openat (dirfd_b, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  char ba[65536], bb[65536];

  if (a < 0 || b < 0)
    return false;
  for (;;)
    {
      ssize_t na = ab_read_all (a, ba, sizeof ba), nb = ab_read_all (b, bb, sizeof bb);
      if (na < 0 || na != nb || memcmp (ba, bb, (size_t)na) != 0)
        return false;
      if (na == 0)
        return true;
    }
}

struct walk
{
  uint64_t started_ns;
  struct ab_ws_changes *out;
  ab_error_t *err;
  char path[8192];
};

static struct ab_ws_change *
add (struct walk *w, const char *name, int kind, const struct stat *st, bool inner)
{
  struct ab_ws_changes *c = w->out;
  struct ab_ws_change *ch;

  if (c->n == c->cap)
    {
      c->cap = c->cap ? 2 * c->cap : 64;
      c->v = xreallocarray (c->v, c->cap, sizeof *c->v);
    }
  ch = &c->v[c->n++];
  memset (ch, 0, sizeof *ch);
  ch->path = w->path[0] ? xasprintf ("%s/%s", w->path, name) : xstrdup (name);
  ch->kind = kind;
  ch->inner = inner;
  if (st)
    {
      ch->type = type_of (st->st_mode);
      ch->mode = st->st_mode & 07777;
      ch->uid = st->st_uid;
      ch->gid = st->st_gid;
      ch->mtime = st->st_mtim;
      if (S_ISREG (st->st_mode))
        ch->size = (uint64_t)st->st_size;
      ch->refused = !(S_ISREG (st->st_mode) || S_ISDIR (st->st_mode) || S_ISLNK (st->st_mode));
    }
  c->totals[kind]++;
  c->refused += ch->refused;
  if (S_ISREG (st ? st->st_mode : 0) && (kind == AB_WS_CREATED || kind == AB_WS_MODIFIED || kind == AB_WS_TYPE_CHANGED))
    c->bytes += ch->size;
  return ch;
}

static void
drop_last (struct walk *w)
{
  struct ab_ws_change *ch = &w->out->v[--w->out->n];

  w->out->totals[ch->kind]--;
  free (ch->path);
  free (ch->target);
}

static int
read_target (struct walk *w, int dirfd, const char *name, struct ab_ws_change *ch)
{
  char buf[4096];
  ssize_t n = readlinkat (dirfd, name, buf, sizeof buf - 1);

  if (n < 0)
    return ab_error_set (w->err, errno, "workspace change set: readlink `%s`", ch->path);
  buf[n] = '\0';
  ch->target = xstrdup (buf);
  ch->size = (uint64_t)n;
  ch->outside = target_outside (ch->path, buf);
  return 0;
}

static int walk_dir (struct walk *w, int upper, int lower, bool inner, int depth);

static int
cmp_names (const void *a, const void *b)
{
  return strcmp (*(char *const *)a, *(char *const *)b);
}

/* The names of a directory, sorted (the list is stable run to run). */
static int
read_names (struct walk *w, int dirfd, struct ab_strv *names)
{
  int fd = dup (dirfd);
  DIR *d;
  struct dirent *e;

  if (fd < 0 || (d = fdopendir (fd)) == NULL)
    {
      if (fd >= 0)
        close (fd);
      return ab_error_set (w->err, errno, "workspace change set: read directory `%s`", w->path[0] ? w->path : ".");
    }
  /* the dup shares the caller's offset: from the start, whatever read it before */
  rewinddir (d);
  while ((e = readdir (d)) != NULL)
    if (strcmp (e->d_name, ".") && strcmp (e->d_name, ".."))
      ab_strv_push (names, e->d_name);
  closedir (d);
  if (names->n > 1)
    qsort (names->v, names->n, sizeof *names->v, cmp_names);
  return 0;
}

/* A directory of the upper layer: created, replaced, type-changed or a
   merge of the lower one; then what is in it. */
static int
entry_dir (struct walk *w, int upper, int lower, const char *name, const struct stat *st, const struct stat *lst,
           bool inner, int depth)
{
  _cleanup_close_ int ud = openat (upper, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  _cleanup_close_ int ld = -1;
  struct ab_ws_change *ch;
  char v[8];
  ssize_t n;
  size_t len = strlen (w->path);
  int r;

  if (ud < 0)
    return ab_error_set (w->err, errno, "workspace change set: open directory `%s/%s`", w->path, name);
  /* A directory renamed by the overlay itself would need its redirect
     xattr read: agentbox mounts with redirect_dir=off, so one here was not
     made by that mount. */
  if (ovl_xattr (ud, -1, NULL, "redirect", v, sizeof v) >= 0)
    return ab_error_setc (w->err, AB_EC_STATE, 0,
                          "workspace change set: `%s%s%s` carries an overlay redirect, which agentbox's overlay "
                          "never makes: refused",
                          w->path, len ? "/" : "", name);
  if (inner || lst == NULL)
    {
      add (w, name, AB_WS_CREATED, st, inner);
      inner = true;
    }
  else if (!S_ISDIR (lst->st_mode))
    {
      ch = add (w, name, AB_WS_TYPE_CHANGED, st, false);
      ch->old_type = type_of (lst->st_mode);
      ch->old_mode = lst->st_mode & 07777;
      inner = true;
    }
  else if ((n = ovl_xattr (ud, -1, NULL, "opaque", v, sizeof v)) == 1 && v[0] == 'y')
    {
      ch = add (w, name, AB_WS_REPLACED, st, false);
      ch->old_type = AB_WS_T_DIR;
      ch->old_mode = lst->st_mode & 07777;
      ch->copied_up = true;
      inner = true;
    }
  else
    {
      if ((st->st_mode & 07777) != (lst->st_mode & 07777))
        {
          ch = add (w, name, AB_WS_MODE_CHANGED, st, false);
          ch->old_type = AB_WS_T_DIR;
          ch->old_mode = lst->st_mode & 07777;
          ch->copied_up = true;
        }
      ld = openat (lower, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
  if (len + 1 + strlen (name) + 1 > sizeof w->path)
    return ab_error_setc (w->err, AB_EC_STATE, ENAMETOOLONG, "workspace change set: a path under `%.200s` is too long",
                          w->path);
  snprintf (w->path + len, sizeof w->path - len, "%s%s", len ? "/" : "", name);
  r = walk_dir (w, ud, ld, inner, depth + 1);
  w->path[len] = '\0';
  return r;
}

/* A non-directory of the upper layer, against the lower entry lst (NULL:
   none) of the same name. */
static int
entry_other (struct walk *w, int upper, int lower, const char *name, const struct stat *st, const struct stat *lst,
             bool inner, bool impure)
{
  struct ab_ws_change *ch;
  char v[256];

  if (inner || lst == NULL)
    {
      struct stat dst;
      ch = add (w, name, AB_WS_CREATED, st, inner);
      /* Copied up, yet not in the lower directory now: renamed by the run
         (from another name), or deleted on the host since the run wrote
         it.  Only the host can change the lower directory: unchanged since
         the run started, it was a rename. */
      if (!inner && impure && lower >= 0 && ovl_xattr (-1, upper, name, "origin", v, sizeof v) >= 0
          && fstat (lower, &dst) == 0
          && (uint64_t)dst.st_ctim.tv_sec * 1000000000u + (uint64_t)dst.st_ctim.tv_nsec >= w->started_ns)
        {
          w->out->totals[AB_WS_CREATED]--;
          w->out->totals[AB_WS_MODIFIED]++;
          ch->kind = AB_WS_MODIFIED;
          ch->copied_up = true;
        }
    }
  else if ((st->st_mode & S_IFMT) != (lst->st_mode & S_IFMT))
    {
      ch = add (w, name, AB_WS_TYPE_CHANGED, st, false);
      ch->old_type = type_of (lst->st_mode);
      ch->old_mode = lst->st_mode & 07777;
    }
  else if (S_ISREG (st->st_mode))
    {
      bool same = st->st_size == lst->st_size && st->st_mtim.tv_sec == lst->st_mtim.tv_sec
                  && st->st_mtim.tv_nsec == lst->st_mtim.tv_nsec && same_contents (upper, lower, name);
      if (same && (st->st_mode & 07777) == (lst->st_mode & 07777))
        return 0; /* copied up (opened for writing, touched) but the same */
      ch = add (w, name, same ? AB_WS_MODE_CHANGED : AB_WS_MODIFIED, st, false);
      ch->old_type = AB_WS_T_FILE;
      ch->old_mode = lst->st_mode & 07777;
      ch->copied_up = true;
    }
  else if (S_ISLNK (st->st_mode))
    {
      char old[4096];
      ssize_t n = readlinkat (lower, name, old, sizeof old - 1);
      ch = add (w, name, AB_WS_MODIFIED, st, false);
      ch->old_type = AB_WS_T_SYMLINK;
      ch->copied_up = true;
      if (read_target (w, upper, name, ch) < 0)
        return -1;
      if (n >= 0 && (size_t)n == strlen (ch->target) && memcmp (old, ch->target, (size_t)n) == 0)
        drop_last (w); /* the same link, copied up for an owner or time change */
      return 0;
    }
  else
    {
      ch = add (w, name, AB_WS_MODIFIED, st, false);
      ch->old_type = type_of (lst->st_mode);
    }
  if (S_ISLNK (st->st_mode))
    return read_target (w, upper, name, ch);
  return 0;
}

static int
walk_dir (struct walk *w, int upper, int lower, bool inner, int depth)
{
  _cleanup_strv_ struct ab_strv names = { 0 };
  bool impure;
  size_t i;

  if (depth > AB_WS_MAX_DEPTH)
    return ab_error_setc (w->err, AB_EC_STATE, ELOOP,
                          "workspace change set: `%.200s` is nested deeper than %d directories: refused", w->path,
                          AB_WS_MAX_DEPTH);
  if (read_names (w, upper, &names) < 0)
    return -1;
  /* The overlay marks a directory "impure" when something in it was
     copied up (or moved in with its origin): without the mark no entry
     here has an origin to look for (unless the mark cannot be read). */
  {
    char v[8];
    impure = !inner && (ovl_xattr (upper, -1, NULL, "impure", v, sizeof v) >= 0 || errno != ENODATA);
  }
  for (i = 0; i < names.n; i++)
    {
      const char *name = names.v[i];
      struct stat st, lst;
      bool have_lower;
      int r;

      if (fstatat (upper, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return ab_error_set (w->err, errno, "workspace change set: stat `%s/%s`", w->path, name);
      have_lower = !inner && lower >= 0 && fstatat (lower, name, &lst, AT_SYMLINK_NOFOLLOW) == 0;
      if (S_ISCHR (st.st_mode) && st.st_rdev == makedev (0, 0))
        {
          /* A whiteout.  In a new directory, or over nothing (deleted on
             the host as well), it deletes nothing. */
          if (have_lower)
            {
              struct ab_ws_change *ch = add (w, name, AB_WS_DELETED, &lst, false);
              ch->old_type = ch->type;
              ch->old_mode = ch->mode;
              if (ch->refused)
                w->out->refused--;
              ch->refused = false; /* deleting a fifo is fine */
              ch->size = 0;
            }
          continue;
        }
      if (S_ISDIR (st.st_mode))
        r = entry_dir (w, upper, lower, name, &st, have_lower ? &lst : NULL, inner, depth);
      else
        r = entry_other (w, upper, lower, name, &st, have_lower ? &lst : NULL, inner, impure);
      if (r < 0)
        return -1;
    }
  return 0;
}

int
ab_ws_diff (int upper_fd, int lower_fd, uint64_t started_ns, struct ab_ws_changes *out, ab_error_t *err)
{
  struct walk *w = xzalloc (sizeof *w);
  int r;

  memset (out, 0, sizeof *out);
  w->started_ns = started_ns;
  w->out = out;
  w->err = err;
  r = walk_dir (w, upper_fd, lower_fd, lower_fd < 0, 0);
  free (w);
  if (r < 0)
    ab_ws_changes_free (out);
  return r;
}

/* ---- rendering --------------------------------------------------------- */

static void
gen_mode (struct ab_gen *g, const char *key, uint32_t mode)
{
  char buf[8];

  snprintf (buf, sizeof buf, "%04o", mode & 07777);
  ab_gen_kv_str (g, key, buf);
}

static void
gen_change (struct ab_gen *g, const struct ab_ws_change *ch)
{
  ab_gen_obj_open (g);
  ab_gen_key (g, "path");
  ab_gen_bytes (g, ch->path, strlen (ch->path));
  ab_gen_kv_str (g, "change", ws_kind_name (ch->kind));
  ab_gen_kv_str (g, "type", ab_ws_type_name (ch->type));
  if (ch->kind == AB_WS_TYPE_CHANGED)
    ab_gen_kv_str (g, "oldType", ab_ws_type_name (ch->old_type));
  if (ch->type == AB_WS_T_FILE && ch->kind != AB_WS_DELETED)
    ab_gen_kv_u64 (g, "size", ch->size);
  if (ch->type != AB_WS_T_SYMLINK && ch->kind != AB_WS_DELETED)
    gen_mode (g, "mode", ch->mode);
  if (ch->kind == AB_WS_MODE_CHANGED)
    gen_mode (g, "oldMode", ch->old_mode);
  if (ch->target)
    {
      ab_gen_key (g, "target");
      ab_gen_bytes (g, ch->target, strlen (ch->target));
      ab_gen_kv_bool (g, "targetOutside", ch->outside);
    }
  if (ch->refused)
    ab_gen_kv_bool (g, "refused", true);
  ab_gen_obj_close (g);
}

static bool
always_listed (const struct ab_ws_change *ch)
{
  return ch->kind == AB_WS_DELETED || ch->kind == AB_WS_REPLACED;
}

void
ab_ws_changes_gen (struct ab_gen *g, const struct ab_ws_changes *c, uint64_t list_max)
{
  static const char *const total_keys[AB_WS__KINDS] = {
    [AB_WS_DELETED] = "deleted",      [AB_WS_REPLACED] = "replaced", [AB_WS_TYPE_CHANGED] = "typeChanged",
    [AB_WS_CREATED] = "created",      [AB_WS_MODIFIED] = "modified", [AB_WS_MODE_CHANGED] = "modeChanged",
  };
  uint64_t listed = 0, others = 0;
  size_t i;
  int k;

  ab_gen_key (g, "changes");
  ab_gen_arr_open (g);
  /* Deletions and replaced directories first, and whatever the cap: a
     capped list must never hide that something is gone. */
  for (i = 0; i < c->n; i++)
    if (always_listed (&c->v[i]))
      {
        gen_change (g, &c->v[i]);
        listed++;
      }
  for (i = 0; i < c->n; i++)
    if (!always_listed (&c->v[i]) && others < list_max)
      {
        gen_change (g, &c->v[i]);
        listed++;
        others++;
      }
  ab_gen_arr_close (g);
  ab_gen_kv_u64 (g, "listed", listed);
  ab_gen_kv_bool (g, "truncated", listed < c->n);
  ab_gen_key (g, "totals");
  ab_gen_obj_open (g);
  for (k = 0; k < AB_WS__KINDS; k++)
    ab_gen_kv_u64 (g, total_keys[k], c->totals[k]);
  ab_gen_obj_close (g);
  ab_gen_kv_u64 (g, "bytes", c->bytes);
  ab_gen_kv_u64 (g, "refused", c->refused);
}

void
ab_ws_change_line (const struct ab_ws_change *ch, char *buf, size_t len)
{
  static const char letters[AB_WS__KINDS] = {
    [AB_WS_DELETED] = 'D',  [AB_WS_REPLACED] = 'R', [AB_WS_TYPE_CHANGED] = 'T',
    [AB_WS_CREATED] = 'A',  [AB_WS_MODIFIED] = 'M', [AB_WS_MODE_CHANGED] = 'P',
  };
  const char *slash = ch->type == AB_WS_T_DIR ? "/" : "";
  int n = snprintf (buf, len, "%c  %s%s", letters[ch->kind], ch->path, slash);

  if (n < 0 || (size_t)n >= len)
    return;
  if (ch->kind == AB_WS_TYPE_CHANGED)
    n += snprintf (buf + n, len - (size_t)n, " (%s -> %s)", ab_ws_type_name (ch->old_type), ab_ws_type_name (ch->type));
  else if (ch->kind == AB_WS_MODE_CHANGED)
    n += snprintf (buf + n, len - (size_t)n, " (%04o -> %04o)", ch->old_mode, ch->mode);
  if ((size_t)n < len && ch->target)
    n += snprintf (buf + n, len - (size_t)n, " -> %s%s", ch->target, ch->outside ? " (outside the workspace)" : "");
  if ((size_t)n < len && ch->refused)
    snprintf (buf + n, len - (size_t)n, " (%s: never applied)", ab_ws_type_name (ch->type));
}
