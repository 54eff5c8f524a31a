#include "config.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "runtime/idmap.h"
#include "runtime/util.h"

static int
write_map (pid_t pid, const char *file, const struct ab_idmaps *m, ab_error_t *err)
{
  char path[64], buf[340 * 36];
  size_t off = 0, i;

  snprintf (path, sizeof path, "/proc/%d/%s", (int) pid, file);
  for (i = 0; i < m->n && off < sizeof buf; i++)
    off += (size_t) snprintf (buf + off, sizeof buf - off, "%u %u %u\n", m->v[i].container_id, m->v[i].host_id,
                              m->v[i].size);
  return ab_write_file_at (AT_FDCWD, path, buf, off, err);
}

/* A user namespace with the given mapping: a helper process enters it and
   waits; we write its maps, keep an fd of the namespace, and end it. */
static int
userns_with (const struct ab_idmaps *uids, const struct ab_idmaps *gids, ab_error_t *err)
{
  int pipefd[2];
  pid_t pid;
  int fd = -1, r = 0;
  char path[64];

  if (pipe2 (pipefd, O_CLOEXEC) < 0)
    return ab_error_set (err, errno, "pipe");
  pid = (pid_t) syscall (SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
  if (pid < 0)
    {
      close (pipefd[0]);
      close (pipefd[1]);
      return ab_error_set (err, errno, "clone a user namespace for an id-mapped mount");
    }
  if (pid == 0)
    {
      char c;
      close (pipefd[1]);
      (void) !read (pipefd[0], &c, 1);
      _exit (0);
    }
  close (pipefd[0]);
  if (write_map (pid, "uid_map", uids, err) < 0 || write_map (pid, "gid_map", gids, err) < 0)
    r = -1;
  if (r == 0)
    {
      snprintf (path, sizeof path, "/proc/%d/ns/user", (int) pid);
      fd = open (path, O_RDONLY | O_CLOEXEC);
      if (fd < 0)
        r = ab_error_set (err, errno, "open %s", path);
    }
  close (pipefd[1]);
  waitpid (pid, NULL, 0);
  return r < 0 ? -1 : fd;
}

/* A detached clone of the source.  With source_nofollow (a workspace the
   caller resolved), the path is walked refusing every symlink, so nothing
   swapped in after the resolution can redirect the bind. */
static int
open_source (const char *src, const struct ab_mount *m, ab_error_t *err)
{
  unsigned flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (m->recursive ? AT_RECURSIVE : 0);
  int fd, tree;

  if (!m->source_nofollow)
    {
      tree = open_tree (AT_FDCWD, src, flags);
      if (tree < 0)
        return ab_error_set (err, errno, "open bind source `%s`", src);
      return tree;
    }
  {
    struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS };
    fd = (int) syscall (SYS_openat2, AT_FDCWD, src, &how, sizeof how);
  }
  if (fd < 0)
    return ab_error_set (err, errno, "open bind source `%s` (no symlink allowed on the path)", src);
  tree = open_tree (fd, "", flags | AT_EMPTY_PATH);
  close (fd);
  if (tree < 0)
    return ab_error_set (err, errno, "clone bind source `%s`", src);
  return tree;
}

int
ab_idmap_prepare (const struct ab_spec *s, const char *bundle, pid_t child, bool child_userns, int *fds,
                  ab_error_t *err)
{
  _cleanup_close_ int container_ns = -1;
  size_t i;

  for (i = 0; i < s->n_mounts; i++)
    fds[i] = -1;
  for (i = 0; i < s->n_mounts; i++)
    {
      const struct ab_mount *m = &s->mounts[i];
      _cleanup_free_ char *src = NULL;
      _cleanup_close_ int own_ns = -1;
      struct mount_attr a = { .attr_set = MOUNT_ATTR_IDMAP };
      int ns, tree;

      if (!ab_mount_from_parent (m))
        continue;
      if (!ab_mount_is_idmapped (m))
        {
          src = xstrdup (m->source);
          fds[i] = open_source (src, m, err);
          if (fds[i] < 0)
            return ab_error_prefix (err, "mounts[%zu]", i);
          continue;
        }
      if (!m->bind)
        return ab_error_setc (err, AB_EC_CONFIG, EINVAL, "mounts[%zu]: id mapping is supported on bind mounts only",
                              i);
      if (m->uid_mappings.n || m->gid_mappings.n)
        {
          own_ns = userns_with (&m->uid_mappings, &m->gid_mappings, err);
          if (own_ns < 0)
            return ab_error_prefix (err, "mounts[%zu]", i);
          ns = own_ns;
        }
      else
        {
          if (!child_userns)
            return ab_error_setc (err, AB_EC_CONFIG, EINVAL,
                                  "mounts[%zu]: idmap without uidMappings needs a user namespace", i);
          if (container_ns < 0)
            {
              char path[64];
              snprintf (path, sizeof path, "/proc/%d/ns/user", (int) child);
              container_ns = open (path, O_RDONLY | O_CLOEXEC);
              if (container_ns < 0)
                return ab_error_set (err, errno, "open %s", path);
            }
          ns = container_ns;
        }
      src = m->source[0] == '/' ? xstrdup (m->source) : xasprintf ("%s/%s", bundle, m->source);
      tree = open_source (src, m, err);
      if (tree < 0)
        return ab_error_prefix (err, "mounts[%zu]", i);
      a.userns_fd = (uint64_t) ns;
      if (mount_setattr (tree, "", AT_EMPTY_PATH | (m->idmap_recursive ? AT_RECURSIVE : 0), &a, sizeof a) < 0)
        {
          int e = errno;
          close (tree);
          return ab_error_set (err, e, "mounts[%zu]: id-map `%s` (does its filesystem support id-mapped mounts?)", i,
                               src);
        }
      fds[i] = tree;
    }
  return 0;
}
