#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "base/owner.h"
#include "runtime/lifecycle/state.h"
#include "base/util.h"
#include "base/gen.h"

/* runtime.md's status names, by enum ab_status. */
static const char *const status_names[] = {
  [AB_STATUS_CREATING] = "creating", [AB_STATUS_CREATED] = "created", [AB_STATUS_RUNNING] = "running",
  [AB_STATUS_STOPPED] = "stopped",   [AB_STATUS_PAUSED] = "paused",
};

const char *
ab_status_name (int status)
{
  return status >= 0 && (size_t)status < AB_ARRAY_SIZE (status_names) && status_names[status]
             ? status_names[status]
             : "stopped";
}

static int
status_from_name (const char *s)
{
  size_t i;

  for (i = 0; i < AB_ARRAY_SIZE (status_names); i++)
    if (status_names[i] && strcmp (s, status_names[i]) == 0)
      return (int) i;
  return -1;
}

int
ab_id_validate (const char *id, ab_error_t *err)
{
  size_t i, n = strlen (id);

  if (n == 0)
    return ab_error_setc (err, AB_EC_USAGE, 0, "container id must not be empty");
  if (n > AB_ID_MAX)
    return ab_error_setc (err, AB_EC_USAGE, 0, "container id longer than %d characters", AB_ID_MAX);
  for (i = 0; i < n; i++)
    {
      char c = id[i];
      bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
      if (alnum || (i > 0 && (c == '_' || c == '.' || c == '+' || c == '-')))
        continue;
      return ab_error_setc (err, AB_EC_USAGE, 0,
                            "invalid container id `%.64s`: use letters, digits and _.+- (not first)", id);
    }
  return 0;
}

void
ab_state_free (struct ab_state *s)
{
  size_t i;

  if (s == NULL)
    return;
  free (s->id);
  free (s->bundle);
  free (s->rootfs);
  ab_json_free (s->cgroup);
  for (i = 0; i < s->annotations.n; i++)
    {
      free (s->annotations.v[i].key);
      free (s->annotations.v[i].value);
    }
  free (s->annotations.v);
  free (s->rules_text);
  free (s->id_mapping);
  ab_strv_free (&s->degraded);
  free (s);
}

/* The state root is agentbox's alone: it belongs to the effective user
   (as does every directory above it, or to root), and no one else may
   write or list it.  Another local user who could make it first, swap it
   or plant entries in it could hand agentbox a state.json of their
   choosing: pids that kill and delete would signal, cgroups they would
   remove, a config create would run. */
static int
root_checked (int fd, const char *root, ab_error_t *err)
{
  if (ab_dir_private_check (fd, root, geteuid (), "state directory", err) < 0)
    {
      close (fd);
      return -1;
    }
  return fd;
}

int
ab_state_root_open (const char *root, bool create, ab_error_t *err)
{
  int fd;

  if (root == NULL || root[0] != '/')
    return ab_error_setc (err, AB_EC_USAGE, 0, "--root `%s` must be an absolute path", root ? root : "");
  if (ab_path_owner_check (root, geteuid (), "state directory", err) < 0)
    return -1;
  fd = open (root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0 || !create || errno != ENOENT)
    {
      if (fd < 0)
        {
          if (errno == ENOENT)
            return ab_error_setc (err, AB_EC_NOTFOUND, 0, "state directory `%s` does not exist", root);
          return ab_error_set (err, errno, "open state directory `%s`", root);
        }
      return root_checked (fd, root, err);
    }
  /* mkdir -p.  The root is 0711 for root (traversable, not listable) and
     0700 for anyone else; each container's directory is 0700.  Nothing
     else is kept here (caches are in runtime/cache.h's directory), so that
     the last delete leaves the root as create found it. */
  {
    _cleanup_free_ char *copy = xstrdup (root);
    char *p;
    for (p = copy + 1; *p; p++)
      if (*p == '/')
        {
          *p = '\0';
          if (mkdir (copy, 0755) < 0 && errno != EEXIST)
            return ab_error_set (err, errno, "create `%s`", copy);
          *p = '/';
        }
    if (mkdir (copy, geteuid () == 0 ? 0711 : 0700) < 0 && errno != EEXIST)
      return ab_error_set (err, errno, "create state directory `%s`", root);
  }
  /* Again: a directory on the way that another user made between the
     check and our mkdir (EEXIST) is theirs. */
  if (ab_path_owner_check (root, geteuid (), "state directory", err) < 0)
    return -1;
  fd = open (root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return ab_error_set (err, errno, "open state directory `%s`", root);
  return root_checked (fd, root, err);
}

/* The name a container directory is made under before it is renamed to
   its id (ids start with an alphanumeric, so ".<id>" is nobody's id);
   false when that does not fit a file name. */
static bool
hidden_name (char buf[NAME_MAX + 2], const char *id)
{
  return snprintf (buf, NAME_MAX + 2, ".%s", id) < NAME_MAX + 2;
}

int
ab_state_dir_create (int rootfd, const char *id, ab_error_t *err)
{
  char tmp[NAME_MAX + 2];
  bool made;
  int fd, e;

  if (ab_id_validate (id, err) < 0)
    return -1;
  /* Made under a hidden name, locked, then renamed into place: the
     directory never appears under its id unlocked, so `delete --force`
     taking the lock knows that its creator is gone. */
  if (!hidden_name (tmp, id))
    return ab_error_setc (err, AB_EC_USAGE, ENAMETOOLONG, "container id `%.32s...` is too long for a directory name",
                          id);
  made = mkdirat (rootfd, tmp, 0700) == 0;
  if (!made && errno != EEXIST)
    return ab_error_set (err, errno, "create state directory for `%s`", id);
  fd = openat (rootfd, tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    {
      e = errno;
      /* Ours, empty and never opened: nothing may stay of a failed create.
         (One we did not make may be another create's, between its mkdir
         and its lock: not ours to remove.) */
      if (made)
        unlinkat (rootfd, tmp, AT_REMOVEDIR);
      return ab_error_set (err, e, "open state directory for `%s`", id);
    }
  /* A leftover of a create killed right here is reused; a locked one is a
     create of the same id in progress. */
  if (flock (fd, LOCK_EX | LOCK_NB) < 0)
    {
      e = errno;
      close (fd);
      if (e == EWOULDBLOCK)
        return ab_error_setc (err, AB_EC_EXISTS, 0, "container `%s` already exists (being created)", id);
      if (made)
        unlinkat (rootfd, tmp, AT_REMOVEDIR);
      return ab_error_set (err, e, "lock state of `%s`", id);
    }
  if (renameat2 (rootfd, tmp, rootfd, id, RENAME_NOREPLACE) < 0)
    {
      e = errno;
      unlinkat (rootfd, tmp, AT_REMOVEDIR);
      close (fd);
      if (e == EEXIST)
        return ab_error_setc (err, AB_EC_EXISTS, 0, "container `%s` already exists", id);
      return ab_error_set (err, e, "create state directory for `%s`", id);
    }
  return fd;
}

int
ab_state_dir_remove_orphan (int rootfd, const char *id, ab_error_t *err)
{
  char tmp[NAME_MAX + 2];
  const char *names[2] = { id, tmp };
  int removed = 0;

  for (size_t i = 0; i < (hidden_name (tmp, id) ? 2 : 1); i++)
    {
      _cleanup_close_ int fd = openat (rootfd, names[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
      struct stat st;

      if (fd < 0)
        {
          if (errno == ENOENT)
            continue;
          return ab_error_set (err, errno, "open state of `%s`", names[i]);
        }
      /* A server's root holds the state of its sandboxes: removed here,
         their processes, cgroups and mounts would have nothing left to
         manage them by. */
      if (faccessat (fd, AB_SERVER_RECORD, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
        return ab_error_setc (err, AB_EC_STATE, 0,
                              "`%s` is the state directory of an MCP server, not a container (its sandboxes: "
                              "--root set to it; the next `agentbox mcp` on this root removes it)",
                              names[i]);
      if (flock (fd, LOCK_EX | LOCK_NB) < 0)
        {
          if (errno == EWOULDBLOCK)
            continue; /* its creator still runs */
          return ab_error_set (err, errno, "lock state of `%s`", names[i]);
        }
      if (fstatat (fd, AB_STATE_FILE, &st, AT_SYMLINK_NOFOLLOW) == 0)
        continue; /* a real container: not an orphan */
      if (errno != ENOENT)
        return ab_error_set (err, errno, "stat `%s` of `%s`", AB_STATE_FILE, names[i]);
      /* Removed while still locked (ab_state_dir_remove_fd takes the fd). */
      if (ab_state_dir_remove_fd (rootfd, names[i], ab_steal_fd (&fd), err) < 0)
        return -1;
      removed++;
    }
  if (ab_state_private_rootfs_remove (rootfd, id, true) < 0)
    return ab_error_set (err, errno, "remove the private rootfs skeleton of `%s`", id);
  return removed;
}

int
ab_state_dir_open (int rootfd, const char *id, bool exclusive, ab_error_t *err)
{
  int fd;

  if (ab_id_validate (id, err) < 0)
    return -1;
  fd = openat (rootfd, id, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    {
      if (errno == ENOENT)
        return ab_error_setc (err, AB_EC_NOTFOUND, 0, "container `%s` does not exist", id);
      return ab_error_set (err, errno, "open state of `%s`", id);
    }
  /* An MCP server's root is no container, and its server holds its lock
     for as long as it runs: `list` and `state` would wait for its end. */
  if (faccessat (fd, AB_SERVER_RECORD, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
    {
      close (fd);
      return ab_error_setc (err, AB_EC_NOTFOUND, 0,
                            "container `%s` does not exist (a directory of that name is an MCP server's state)", id);
    }
  if (flock (fd, exclusive ? LOCK_EX : LOCK_SH) < 0)
    {
      int e = errno;
      close (fd);
      return ab_error_set (err, e, "lock state of `%s`", id);
    }
  return fd;
}

/* unlinkat that also takes a mount point away: the network namespace is
   bind-mounted on a file of the directory (runtime/network.c), and a create
   killed, or an unmount that failed, may have left it there.  The
   directory is ours (0700, root's), so whatever is mounted in it is one of
   ours too. */
static int
unlink_entry (int dfd, const char *name)
{
  char path[64 + NAME_MAX];

  if (unlinkat (dfd, name, 0) == 0 || errno == ENOENT)
    return 0;
  if (errno == EISDIR)
    return unlinkat (dfd, name, AT_REMOVEDIR) == 0 || errno == ENOENT ? 0 : -1;
  if (errno != EBUSY)
    return -1;
  snprintf (path, sizeof path, "/proc/self/fd/%d/%s", dfd, name);
  if (umount2 (path, MNT_DETACH | UMOUNT_NOFOLLOW) < 0 && errno != EINVAL)
    return -1;
  return unlinkat (dfd, name, 0) == 0 || errno == ENOENT ? 0 : -1;
}

/* rmdir of the container's directory, tried twice: a failure of the kind
   that can pass (not ENOTEMPTY) gets a second chance before the directory
   is left for `delete --force`. */
static int
rmdir_state (int rootfd, const char *id)
{
  for (int i = 0; i < 2; i++)
    {
      if (unlinkat (rootfd, id, AT_REMOVEDIR) == 0 || errno == ENOENT)
        return 0;
      if (errno == ENOTEMPTY || errno == EEXIST)
        return -1;
    }
  return -1;
}

int
ab_state_dir_remove_fd (int rootfd, const char *id, int dir_fd, ab_error_t *err)
{
  _cleanup_close_ int fd = dir_fd;
  DIR *d;
  struct dirent *e;
  int bad = 0;

  /* What a state directory holds, by name; the rmdir tells whether there
     was anything else (a netns file still mounted, a start socket), and
     only then is the directory listed.  Nothing outside the directory
     depends on it any more (the caller released the cgroups, processes
     and mounts first), so what a failure here leaves is found again by
     `delete --force` (ab_state_dir_remove_orphan). */
  unlinkat (fd, AB_STATE_FILE, 0);
  unlinkat (fd, AB_CONFIG_FILE, 0);
  if (rmdir_state (rootfd, id) == 0)
    return 0;
  if (errno != ENOTEMPTY && errno != EEXIST)
    return ab_error_set (err, errno, "remove state directory of `%s`", id);
  d = fdopendir (ab_steal_fd (&fd));
  if (d == NULL)
    return ab_error_set (err, errno, "read state of `%s`", id);
  while ((e = readdir (d)) != NULL)
    {
      if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
        continue;
      /* Every entry is tried; the first failure is the one reported. */
      if (unlink_entry (dirfd (d), e->d_name) < 0 && !bad)
        {
          bad = errno;
          ab_error_set (err, bad, "remove `%s` from the state of `%s`", e->d_name, id);
        }
    }
  closedir (d);
  if (bad)
    return -1;
  if (rmdir_state (rootfd, id) < 0)
    return ab_error_set (err, errno, "remove state directory of `%s`", id);
  return 0;
}

/* Rootless: that it was, how its user namespace was mapped, and what this
   host could not give it (rootless without a delegated cgroup); keys after
   `prefix` ("" in state.json, "dev.agentbox/" in the OCI state). */
static void
gen_rootless (struct ab_gen *g, const struct ab_state *s, const char *prefix)
{
  char key[64];

  if (s->rootless)
    ab_gen_kv_bool (g, (snprintf (key, sizeof key, "%srootless", prefix), key), true);
  if (s->id_mapping)
    ab_gen_kv_str (g, (snprintf (key, sizeof key, "%sidMapping", prefix), key), s->id_mapping);
  if (s->degraded.n)
    ab_gen_kv_strv (g, (snprintf (key, sizeof key, "%sdegraded", prefix), key), s->degraded.v, s->degraded.n);
}

static void
state_gen (struct ab_gen *g, const struct ab_state *s)
{
  size_t i;

  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "id", s->id);
  ab_gen_kv_str (g, "bundle", s->bundle);
  ab_gen_kv_str (g, "rootfs", s->rootfs);
  ab_gen_kv_u64 (g, "created", s->created_ns);
  ab_gen_kv_str (g, "status", ab_status_name (s->status));
  ab_gen_kv_i64 (g, "pid", s->pid);
  ab_gen_kv_u64 (g, "pidStart", s->pid_start);
  ab_gen_kv_bool (g, "netnsHeld", s->netns_held);
  ab_gen_kv_bool (g, "ownNetns", s->own_netns);
  ab_gen_kv_i64 (g, "helperPid", s->helper_pid);
  ab_gen_kv_u64 (g, "helperStart", s->helper_start);
  ab_gen_key (g, "annotations");
  ab_gen_obj_open (g);
  for (i = 0; i < s->annotations.n; i++)
    ab_gen_kv_str (g, s->annotations.v[i].key, s->annotations.v[i].value);
  ab_gen_obj_close (g);
  if (s->rules_text)
    ab_gen_kv_str (g, "rules", s->rules_text);
  gen_rootless (g, s, "");
  if (s->cgroup)
    {
      ab_gen_key (g, "cgroup");
      ab_gen_json (g, s->cgroup);
    }
  ab_gen_obj_close (g);
}

int
ab_state_dir_failed (ab_error_t *err, const char *root, const char *id)
{
  size_t n = strlen (root);

  if (n > 1 && root[n - 1] == '/')
    n--;
  if (id)
    ab_error_prefix (err, "state directory `%.*s/%s`", (int)n, root, id);
  else
    ab_error_prefix (err, "state directory `%.*s`", (int)n, root);
  snprintf (err->step, sizeof err->step, "state");
  return -1;
}

int
ab_state_write (int dirfd, const struct ab_state *s, ab_error_t *err)
{
  _cleanup_gen_ struct ab_gen *g = ab_gen_new (false);
  const char *buf;
  size_t len;

  state_gen (g, s);
  buf = ab_gen_buf (g, &len);
  return ab_write_file_atomic (dirfd, AB_STATE_FILE, buf, len, 0600, err);
}

void
ab_state_file_close (struct ab_state_file *f)
{
  if (f->fd >= 0)
    close (f->fd);
  f->fd = -1;
  f->len = 0;
}

/* At most one page: see ab_state_write_locked. */
#define STATE_INPLACE_MAX 4096

/* Open the existing state.json for overwrites; 0 with f->fd -1 when there
   is none yet (the first write renames a complete file into place, so a
   writer killed at any point leaves a whole state.json or none). */
static int
state_file_open (int dirfd, struct ab_state_file *f, ab_error_t *err)
{
  struct stat st;

  f->fd = openat (dirfd, AB_STATE_FILE, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
  if (f->fd < 0)
    return errno == ENOENT ? 0 : ab_error_set (err, errno, "open `%s`", AB_STATE_FILE);
  if (fstat (f->fd, &st) < 0 || !S_ISREG (st.st_mode))
    {
      int e = errno ? errno : EINVAL;
      ab_state_file_close (f);
      return ab_error_set (err, e, "`%s` is not a regular file", AB_STATE_FILE);
    }
  f->len = (size_t)st.st_size;
  return 0;
}

int
ab_state_write_locked (int dirfd, struct ab_state_file *f, const struct ab_state *s, ab_error_t *err)
{
  _cleanup_gen_ struct ab_gen *g = ab_gen_new (false);
  char page[STATE_INPLACE_MAX];
  const char *buf;
  size_t len, n;
  ssize_t w;

  state_gen (g, s);
  buf = ab_gen_buf (g, &len);
  if (f->fd < 0 && !f->absent && len <= STATE_INPLACE_MAX && state_file_open (dirfd, f, err) < 0)
    return -1;
  n = len > f->len ? len : f->len;
  if (f->fd < 0 || n > STATE_INPLACE_MAX)
    {
      /* The first write, or too long for one page: the rename (after
         which an open file would no longer be state.json; the new file's
         own fd is, and is kept for the writes in place). */
      int fd;
      ab_state_file_close (f);
      fd = ab_write_file_atomic_open (dirfd, AB_STATE_FILE, buf, len, 0600, err);
      if (fd < 0)
        return -1;
      f->absent = false;
      if (len > STATE_INPLACE_MAX)
        close (fd);
      else
        {
          f->fd = fd;
          f->len = len;
        }
      return 0;
    }
  /* Why in place is safe here:
     - readers: every reader of state.json holds the directory's lock
       (ab_state_dir_open, LOCK_SH at least) and the caller holds LOCK_EX,
       so no read overlaps the write;
     - a writer killed mid-way (the fault-injection case: kill -9, then
       delete --force reads what is on disk): one write(2) of at most one
       page at offset 0, from a buffer on our stack that is resident, is
       copied as one chunk; the kernel checks for a fatal signal only
       between chunks (generic_perform_write), so the file holds the old
       text or the new one, never a mix; a full disk fails the write
       before anything is copied;
     - no truncation is ever needed: a shorter text is padded with spaces,
       which JSON ignores, so the file never holds the tail of an older
       text after its end. */
  memcpy (page, buf, len);
  memset (page + len, ' ', n - len);
  w = pwrite (f->fd, page, n, 0);
  if (w != (ssize_t)n)
    {
      int e = w < 0 ? errno : EIO;
      ab_state_file_close (f);
      return ab_error_set (err, e, "write `%s`", AB_STATE_FILE);
    }
  f->len = n;
  return 0;
}

int
ab_state_read (int dirfd, const char *id, struct ab_state **out, ab_error_t *err)
{
  _cleanup_free_ char *buf = NULL;
  _cleanup_json_ struct ab_json *j = NULL;
  _cleanup_state_ struct ab_state *s = xzalloc (sizeof *s);
  _cleanup_free_ char *status = NULL;
  struct ab_json *ann;
  struct ab_jctx c;
  uint64_t u;
  int64_t i64;
  size_t len, mark;

  if (ab_read_file_at (dirfd, AB_STATE_FILE, 1u << 20, &buf, &len, err) < 0)
    {
      if (err->errnum == ENOENT)
        return ab_error_setc (err, AB_EC_NOTFOUND, 0, "container `%s` does not exist (no state file)", id);
      return ab_error_prefix (err, "container `%s`", id);
    }
  j = ab_json_parse (buf, len, &ab_json_config_limits, AB_STATE_FILE, err);
  if (j == NULL)
    return ab_error_prefix (err, "container `%s`: corrupt state", id);
  ab_jctx_init (&c, AB_STATE_FILE, err);
  if (j->type != AB_J_OBJECT || ab_jget_str (&c, j, "id", AB_REQUIRED, &s->id) < 0
      || ab_jget_str (&c, j, "bundle", AB_REQUIRED, &s->bundle) < 0
      || ab_jget_str (&c, j, "rootfs", AB_OPTIONAL, &s->rootfs) < 0
      || ab_jget_u64 (&c, j, "created", AB_REQUIRED, UINT64_MAX, &s->created_ns) < 0
      || ab_jget_str (&c, j, "status", AB_REQUIRED, &status) < 0
      || ab_jget_i64 (&c, j, "pid", AB_REQUIRED, 0, INT32_MAX, &i64) < 0)
    {
      if (j->type != AB_J_OBJECT)
        ab_error_setc (err, AB_EC_INTERNAL, 0, "state.json: not an object");
      return ab_error_prefix (err, "container `%s`: corrupt state", id);
    }
  s->pid = (pid_t) i64;
  if ((s->status = status_from_name (status)) < 0)
    return ab_error_setc (err, AB_EC_INTERNAL, 0, "container `%s`: corrupt state: unknown status `%s`", id, status);
  if (ab_jget_u64 (&c, j, "pidStart", AB_OPTIONAL, UINT64_MAX, &s->pid_start) < 0
      || ab_jget_bool (&c, j, "netnsHeld", AB_OPTIONAL, &s->netns_held) < 0
      || ab_jget_bool (&c, j, "ownNetns", AB_OPTIONAL, &s->own_netns) < 0
      || ab_jget_i64 (&c, j, "helperPid", AB_OPTIONAL, 0, INT32_MAX, &i64) < 0
      || ab_jget_u64 (&c, j, "helperStart", AB_OPTIONAL, UINT64_MAX, &u) < 0
      || ab_jget_str (&c, j, "rules", AB_OPTIONAL, &s->rules_text) < 0
      || ab_jget_bool (&c, j, "rootless", AB_OPTIONAL, &s->rootless) < 0
      || ab_jget_str (&c, j, "idMapping", AB_OPTIONAL, &s->id_mapping) < 0
      || ab_jget_strv (&c, j, "degraded", AB_OPTIONAL, &s->degraded) < 0)
    return ab_error_prefix (err, "container `%s`: corrupt state", id);
  if (ab_json_member (j, "helperPid"))
    s->helper_pid = (pid_t) i64;
  if (ab_json_member (j, "helperStart"))
    s->helper_start = u;
  if (ab_jenter (&c, j, "annotations", AB_J_OBJECT, AB_OPTIONAL, &ann, &mark) > 0)
    {
      size_t k;
      for (k = 0; k < ann->u.obj.n; k++)
        {
          struct ab_json *v = ann->u.obj.m[k].val;
          if (v->type != AB_J_STRING)
            return ab_error_setc (err, AB_EC_INTERNAL, 0, "container `%s`: corrupt state: annotation value", id);
          s->annotations.v = xreallocarray (s->annotations.v, s->annotations.n + 1, sizeof *s->annotations.v);
          s->annotations.v[s->annotations.n].key = xstrdup (ann->u.obj.m[k].key);
          s->annotations.v[s->annotations.n].value = xstrdup (v->u.str.s);
          s->annotations.n++;
        }
      ab_jpop (&c, mark);
    }
  {
    /* A copy of the cgroup object, which outlives the document (whose
       nodes all go with it, base/json.c): the cgroup driver parses it. */
    struct ab_json *cg = ab_json_member (j, "cgroup");
    if (cg != NULL)
      s->cgroup = ab_json_copy (cg);
  }
  if (strcmp (s->id, id) != 0)
    return ab_error_setc (err, AB_EC_INTERNAL, 0, "container `%s`: corrupt state: it names `%s`", id, s->id);
  *out = ab_steal_ptr (&s);
  return 0;
}

uint64_t
ab_proc_start_time (pid_t pid, bool *zombie)
{
  struct ab_proc_stat st;

  if (zombie)
    *zombie = false;
  if (!ab_proc_stat_read (pid, &st))
    return 0;
  if (zombie)
    *zombie = st.state == 'Z' || st.state == 'X';
  return st.start;
}

int
ab_state_pidfd (const struct ab_state *s)
{
  int fd;
  uint64_t st;

  if (s->pid <= 0)
    {
      errno = ESRCH;
      return -1;
    }
  fd = (int) syscall (SYS_pidfd_open, s->pid, 0);
  if (fd < 0)
    return -1;
  /* The pidfd pins the process from now on; the start time tells whether it is
     still the one we started, and not a recycled pid. */
  st = ab_proc_start_time (s->pid, NULL);
  if (st == 0 || (s->pid_start != 0 && st != s->pid_start))
    {
      close (fd);
      errno = ESRCH;
      return -1;
    }
  return fd;
}

int
ab_state_status (int dirfd, const struct ab_state *s)
{
  bool zombie = false;
  uint64_t st;
  struct stat sb;

  /* Every caller holds the directory's lock (ab_state_dir_open), and a
     creator holds it exclusively for as long as the status says creating
     (create.c; a foreground run up to its "running"): "creating" seen
     under the lock is what a creator that died left, a container that can
     never be started, whatever became of its process. */
  if (s->status == AB_STATUS_STOPPED || s->status == AB_STATUS_CREATING || s->pid <= 0)
    return AB_STATUS_STOPPED;
  st = ab_proc_start_time (s->pid, &zombie);
  if (st == 0 || zombie || (s->pid_start != 0 && st != s->pid_start))
    return AB_STATUS_STOPPED;
  if (s->status == AB_STATUS_PAUSED)
    return s->status;
  if (fstatat (dirfd, AB_START_SOCK, &sb, AT_SYMLINK_NOFOLLOW) == 0)
    return AB_STATUS_CREATED;
  return AB_STATUS_RUNNING;
}

/* The OCI state object (runtime.md): `state`, hooks' stdin, and the
   `state` of a seccomp agent's container process state. */
static void
gen_oci_state (struct ab_gen *g, const struct ab_state *s, int status)
{
  char ts[64];

  ab_format_time_rfc3339 (s->created_ns, ts, sizeof ts);
  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "ociVersion", AB_OCI_VERSION);
  ab_gen_kv_str (g, "id", s->id);
  ab_gen_kv_str (g, "status", ab_status_name (status));
  /* pid is REQUIRED for created and running; a stopped container has none. */
  ab_gen_kv_i64 (g, "pid", status == AB_STATUS_STOPPED ? 0 : s->pid);
  ab_gen_kv_str (g, "bundle", s->bundle);
  ab_gen_kv_str (g, "rootfs", s->rootfs ? s->rootfs : "");
  ab_gen_kv_str (g, "created", ts);
  ab_gen_kv_str (g, "owner", "");
  /* For reviewers: exactly the nftables ruleset installed in the
     container's network namespace (the state may carry extra properties). */
  if (s->rules_text)
    ab_gen_kv_str (g, "dev.agentbox/netRules", s->rules_text);
  /* How its user namespace was mapped, and what this host could not give
     it (rootless without a delegated cgroup). */
  gen_rootless (g, s, "dev.agentbox/");
  ab_state_gen_annotations (g, s);
  ab_gen_obj_close (g);
}

void
ab_state_gen_annotations (struct ab_gen *g, const struct ab_state *s)
{
  if (s->annotations.n == 0)
    return;
  ab_gen_key (g, "annotations");
  ab_gen_obj_open (g);
  for (size_t i = 0; i < s->annotations.n; i++)
    ab_gen_kv_str (g, s->annotations.v[i].key, s->annotations.v[i].value);
  ab_gen_obj_close (g);
}

char *
ab_state_oci_json (const struct ab_state *s, int status, bool pretty, size_t *len)
{
  _cleanup_gen_ struct ab_gen *g = ab_gen_new (pretty);

  gen_oci_state (g, s, status);
  return ab_gen_steal (g, true, len);
}

char *
ab_state_process_json (const struct ab_state *s, int status, pid_t pid, const char *metadata, size_t *len)
{
  _cleanup_gen_ struct ab_gen *g = ab_gen_new (false);
  static const char *const fds[] = { "seccompFd" };

  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "ociVersion", AB_OCI_VERSION);
  ab_gen_kv_strv (g, "fds", (char *const *) fds, 1);
  ab_gen_kv_i64 (g, "pid", pid);
  if (metadata)
    ab_gen_kv_str (g, "metadata", metadata);
  ab_gen_key (g, "state");
  gen_oci_state (g, s, status);
  ab_gen_obj_close (g);
  return ab_gen_steal (g, false, len);
}

static int
cmp_str (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

int
ab_state_list (int rootfd, struct ab_strv *ids, ab_error_t *err)
{
  int fd = dup (rootfd);
  DIR *d;
  struct dirent *e;

  if (fd < 0)
    return ab_error_set (err, errno, "dup");
  d = fdopendir (fd);
  if (d == NULL)
    {
      close (fd);
      return ab_error_set (err, errno, "read state directory");
    }
  rewinddir (d);
  while ((e = readdir (d)) != NULL)
    {
      if (e->d_name[0] == '.' || e->d_type != DT_DIR)
        continue;
      if (ab_id_validate (e->d_name, NULL) < 0)
        continue;
      ab_strv_push (ids, e->d_name);
    }
  closedir (d);
  if (ids->n > 1)
    qsort (ids->v, ids->n, sizeof *ids->v, cmp_str);
  return 0;
}

/* "<root>/.rootfs@<id>": the rootfs skeleton of `run --default` when the
   cache cannot hold it (runtime/sandbox/sandbox.c).  '@' is in no id, so the name
   is neither a container's directory nor the hidden one of a create. */
static bool
private_rootfs_name (char buf[NAME_MAX + 1], const char *id)
{
  return snprintf (buf, NAME_MAX + 1, AB_PRIVATE_ROOTFS_PREFIX "%s", id) < NAME_MAX + 1;
}

int
ab_state_private_rootfs_open (int rootfd, const char *id, bool *made, ab_error_t *err)
{
  char name[NAME_MAX + 1];
  int fd;

  if (ab_id_validate (id, err) < 0)
    return -1;
  if (!private_rootfs_name (name, id))
    return ab_error_setc (err, AB_EC_USAGE, ENAMETOOLONG, "container id `%.32s...` is too long", id);
  *made = mkdirat (rootfd, name, 0755) == 0;
  if (!*made && errno != EEXIST)
    return ab_error_set (err, errno, "create the private rootfs skeleton `" AB_PRIVATE_ROOTFS_PREFIX "%s`",
                         id);
  fd = openat (rootfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    {
      int e = errno;
      if (*made)
        unlinkat (rootfd, name, AT_REMOVEDIR);
      return ab_error_set (err, e, "open the private rootfs skeleton `" AB_PRIVATE_ROOTFS_PREFIX "%s`", id);
    }
  if (flock (fd, LOCK_EX | LOCK_NB) < 0)
    {
      int e = errno;
      close (fd);
      if (e == EWOULDBLOCK)
        return ab_error_setc (err, AB_EC_EXISTS, 0, "container `%s` already exists (being created)", id);
      return ab_error_set (err, e, "lock the private rootfs skeleton `" AB_PRIVATE_ROOTFS_PREFIX "%s`", id);
    }
  return fd;
}

int
ab_state_private_rootfs_remove (int rootfd, const char *id, bool if_unlocked)
{
  char name[NAME_MAX + 1];
  _cleanup_close_ int fd = -1;

  if (ab_id_validate (id, NULL) < 0 || !private_rootfs_name (name, id))
    return 0;
  if (if_unlocked)
    {
      fd = openat (rootfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0)
        return errno == ENOENT ? 0 : -1;
      if (flock (fd, LOCK_EX | LOCK_NB) < 0)
        return errno == EWOULDBLOCK ? 0 : -1; /* a run is building it */
    }
  return ab_rm_tree_at (rootfd, name, 64);
}
