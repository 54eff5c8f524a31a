#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include "base/owner.h"
#include "base/util.h"

/* The uid the kernel shows for an owner our user namespace does not map
   (kernel.overflowuid), when we are in a user namespace other than the
   initial one; (uid_t) -1 otherwise. */
static uid_t
unmapped_owner (void)
{
  static int known;
  static uid_t overflow = (uid_t) -1;
  _cleanup_free_ char *map = NULL, *text = NULL;
  unsigned a, b, c;

  if (known)
    return overflow;
  known = 1;
  if (ab_read_file_at (AT_FDCWD, "/proc/self/uid_map", 4096, &map, NULL, NULL) < 0
      || (sscanf (map, "%u %u %u", &a, &b, &c) == 3 && a == 0 && b == 0 && c == 4294967295u))
    return overflow;
  overflow = 65534;
  if (ab_read_file_at (AT_FDCWD, "/proc/sys/kernel/overflowuid", 64, &text, NULL, NULL) == 0)
    overflow = (uid_t) strtoul (text, NULL, 10);
  return overflow;
}

/* One directory above the checked path: root's or uid's, and if others may
   write it, sticky.  A group-writable directory whose group is root's
   (gid 0) is root's alone as well.  Nested in a container's user
   namespace, the host's root (and any id the namespace does not map) shows
   as the overflow uid: an owner outside the namespace, which no process
   inside it can be, so nobody who shares the namespace with us can
   replace it; it counts as root's. */
static int
ancestor_check (const char *dir, const struct stat *st, uid_t uid, const char *what, const char *path,
                ab_error_t *err)
{
  bool others_write = (st->st_mode & S_IWOTH) || ((st->st_mode & S_IWGRP) && st->st_gid != 0);

  if (st->st_uid != 0 && st->st_uid != uid && st->st_uid != unmapped_owner ())
    return ab_error_setc (err, AB_EC_USAGE, 0,
                          "%s `%s`: `%s` above it belongs to uid %u, who could replace it; use a directory "
                          "whose every parent is root's or yours (uid %u)",
                          what, path, dir, (unsigned) st->st_uid, (unsigned) uid);
  if (others_write && !(st->st_mode & S_ISVTX))
    return ab_error_setc (err, AB_EC_USAGE, 0,
                          "%s `%s`: `%s` above it is writable by other users (mode %04o, not sticky), who "
                          "could replace it; use a directory only you can change",
                          what, path, dir, (unsigned) (st->st_mode & 07777));
  return 0;
}

int
ab_path_owner_check (const char *path, uid_t uid, const char *what, ab_error_t *err)
{
  _cleanup_free_ char *copy = xstrdup (path), *real = NULL, *leaf = realpath (path, NULL);
  struct stat st;
  char *slash;

  /* From the deepest part that exists: what does not exist yet is made by
     us, inside it. */
  while ((real = realpath (copy, NULL)) == NULL)
    {
      if (errno != ENOENT)
        return ab_error_setc (err, AB_EC_USAGE, errno, "%s `%s`: resolve `%s`", what, path, copy);
      slash = strrchr (copy, '/');
      if (slash == NULL || slash == copy)
        {
          real = xstrdup ("/");
          break;
        }
      *slash = '\0';
    }
  /* Every directory up to /, but the path itself (the caller checks it
     with ab_dir_private_check). */
  for (;;)
    {
      if (lstat (real, &st) < 0)
        return ab_error_setc (err, AB_EC_USAGE, errno, "%s `%s`: stat `%s`", what, path, real);
      if ((leaf == NULL || strcmp (real, leaf) != 0) && ancestor_check (real, &st, uid, what, path, err) < 0)
        return -1;
      if (strcmp (real, "/") == 0)
        return 0;
      slash = strrchr (real, '/');
      if (slash == real)
        slash[1] = '\0';
      else
        *slash = '\0';
    }
}

int
ab_dir_private_check (int fd, const char *path, uid_t uid, const char *what, ab_error_t *err)
{
  struct stat st;

  if (fstat (fd, &st) < 0)
    return ab_error_set (err, errno, "%s `%s`: stat", what, path);
  if (!S_ISDIR (st.st_mode))
    return ab_error_setc (err, AB_EC_USAGE, 0, "%s `%s` is not a directory", what, path);
  if (st.st_uid != uid)
    return ab_error_setc (err, AB_EC_USAGE, 0,
                          "%s `%s` belongs to uid %u, not to uid %u that runs agentbox: another user made it "
                          "(remove it, or use another --root)",
                          what, path, (unsigned) st.st_uid, (unsigned) uid);
  if (st.st_mode & 066)
    return ab_error_setc (err, AB_EC_USAGE, 0,
                          "%s `%s` has mode %04o: other users may read or write it; make it 0700 or 0711 "
                          "(chmod go-rw)",
                          what, path, (unsigned) (st.st_mode & 07777));
  return 0;
}
