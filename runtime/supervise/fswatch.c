/* The sandbox's filesystem limits seen from outside (fswatch.h). */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "base/kernel-compat.h"
#include "base/resolve.h"
#include "base/util.h"
#include "runtime/supervise/fswatch.h"

/* Below this much room a tmpfs counts as full (as an overlay's change set,
   runtime/lifecycle/wsstore.c). */
#define FULL_MARGIN (64u << 10)
/* Entries looked at, over all mounts, for a file cut at the limit: a
   bound on the time a search of a large workspace takes. */
#define FSWATCH_SCAN_MAX 100000
#define FSWATCH_DEPTH_MAX 64

static bool
bounded_tmpfs (const struct ab_mount *m)
{
  return m->type && strcmp (m->type, "tmpfs") == 0 && m->data && strstr (m->data, "size=") != NULL;
}

/* A mount a command can write files to: a tmpfs or a bind, not read-only. */
static bool
writable (const struct ab_mount *m)
{
  if ((m->flags & MS_RDONLY) || (m->attr_set & MOUNT_ATTR_RDONLY) || m->type == NULL)
    return false;
  return strcmp (m->type, "tmpfs") == 0 || ab_mount_is_bind (m);
}

static uint64_t
fsize_of (const struct ab_process *proc)
{
  for (size_t i = 0; proc && i < proc->n_rlimits; i++)
    if (proc->rlimits[i].resource == RLIMIT_FSIZE)
      return proc->rlimits[i].soft == RLIM_INFINITY ? 0 : proc->rlimits[i].soft;
  return 0;
}

void
ab_fswatch_open (struct ab_fswatch *w, pid_t pid, const struct ab_plan *p)
{
  _cleanup_close_ int rootfd = -1;
  char path[64];

  memset (w, 0, sizeof *w);
  w->file_size = fsize_of (p->process);
  snprintf (path, sizeof path, "/proc/%d/root", (int)pid);
  /* The container's root, pinned; each destination is resolved beneath it
     (a symlink the image planted cannot lead us to a host directory). */
  rootfd = open (path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    return;
  w->m = xcalloc (p->n_mounts + 1, sizeof *w->m);
  for (size_t i = 0; i < p->n_mounts; i++)
    {
      const struct ab_mount *m = &p->mounts[i];
      ab_error_t ignored = { 0 };
      int fd;
      if (!writable (m))
        continue;
      fd = ab_open_in_root (rootfd, m->destination, O_PATH | O_DIRECTORY, 0, &ignored);
      if (fd < 0)
        continue; /* a file bound over a file: nothing to search or fill */
      w->m[w->n++] = (struct ab_fswatch_mount){ xstrdup (m->destination), fd, bounded_tmpfs (m) };
    }
}

size_t
ab_fswatch_full (const struct ab_fswatch *w, struct ab_strv *full)
{
  size_t n = 0;

  for (size_t i = 0; i < w->n; i++)
    {
      struct statfs sf;
      if (!w->m[i].tmpfs || fstatfs (w->m[i].fd, &sf) < 0 || sf.f_type != TMPFS_MAGIC)
        continue;
      if ((uint64_t)sf.f_bavail * (uint64_t)sf.f_bsize < FULL_MARGIN || (sf.f_files > 0 && sf.f_ffree == 0))
        {
          ab_strv_push (full, w->m[i].destination);
          n++;
        }
    }
  return n;
}

/* Search the directory at (on device dev) for a regular file `size`
   bytes long; *budget counts down the entries looked at.  Nothing is
   followed: symlinks are not, and other filesystems mounted below are left
   to their own watch. */
static bool
search (int at, dev_t dev, uint64_t size, int depth, long *budget)
{
  int fd = openat (at, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d;
  struct dirent *e;
  bool found = false;

  if (fd < 0)
    return false;
  d = fdopendir (fd);
  if (d == NULL)
    {
      close (fd);
      return false;
    }
  while (!found && *budget > 0 && (e = readdir (d)) != NULL)
    {
      struct stat st;
      if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
        continue;
      (*budget)--;
      if (fstatat (dirfd (d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_dev != dev)
        continue;
      if (S_ISREG (st.st_mode))
        found = (uint64_t)st.st_size == size;
      else if (S_ISDIR (st.st_mode) && depth < FSWATCH_DEPTH_MAX)
        {
          int sub = openat (dirfd (d), e->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (sub >= 0)
            {
              found = search (sub, dev, size, depth + 1, budget);
              close (sub);
            }
        }
    }
  closedir (d);
  return found;
}

bool
ab_fswatch_cut_file (const struct ab_fswatch *w)
{
  long budget = FSWATCH_SCAN_MAX;

  if (w->file_size == 0)
    return false;
  for (size_t i = 0; i < w->n; i++)
    {
      struct stat st;
      if (fstat (w->m[i].fd, &st) == 0 && search (w->m[i].fd, st.st_dev, w->file_size, 0, &budget))
        return true;
    }
  return false;
}

void
ab_fswatch_close (struct ab_fswatch *w)
{
  for (size_t i = 0; i < w->n; i++)
    {
      free (w->m[i].destination);
      if (w->m[i].fd >= 0)
        close (w->m[i].fd);
    }
  free (w->m);
  memset (w, 0, sizeof *w);
}
