#include "config.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "runtime/idmap.h"
#include "base/util.h"
#include "spec/bundle-links.h"

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

/* The source of bind mounts[i], resolved once:
   - a mount the runtime added from its own state (from_parent): its path;
   - a workspace the caller resolved (source_nofollow): walked refusing
     every symlink on the path;
   - a bind of config.json: resolved beneath the bundle or the rootfs once
     the path enters them (spec/bundle-links.h), as given elsewhere. */
int
ab_bind_source_open (const struct ab_bundle *b, size_t i, const struct ab_mount *m, ab_error_t *err)
{
  int fd;

  if (m->from_parent)
    {
      fd = open (m->source, O_PATH | O_CLOEXEC);
      if (fd < 0)
        return ab_error_set (err, errno, "mounts[%zu]: open bind source `%s`", i, m->source);
      return fd;
    }
  if (m->source_nofollow)
    {
      struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS };
      fd = (int) syscall (SYS_openat2, AT_FDCWD, m->source, &how, sizeof how);
      if (fd < 0)
        return ab_error_set (err, errno, "mounts[%zu]: open bind source `%s` (no symlink allowed on the path)", i,
                             m->source);
      return fd;
    }
  {
    char what[64 + 4096];
    snprintf (what, sizeof what, "mounts[%zu] (%s): bind source", i, m->destination);
    return ab_bundle_open_path (b->dir, b->rootfs, m->source, what, err);
  }
}

/* A detached clone of the source, from the fd of one resolution of its
   path: nothing swapped in afterwards can redirect the bind. */
static int
open_source (const struct ab_bundle *b, size_t i, const struct ab_mount *m, ab_error_t *err)
{
  unsigned flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (m->recursive ? AT_RECURSIVE : 0);
  _cleanup_close_ int fd = -1;
  int tree;

  if (m->from_parent)
    {
      tree = open_tree (AT_FDCWD, m->source, flags);
      if (tree < 0)
        return ab_error_set (err, errno, "mounts[%zu]: open bind source `%s`", i, m->source);
      return tree;
    }
  fd = ab_bind_source_open (b, i, m, err);
  if (fd < 0)
    return -1;
  /* What is mounted is what is checked: the fd of this resolution. */
  {
    char what[64 + 2 * 4096];
    snprintf (what, sizeof what, "mounts[%zu] (%s): bind source `%s`", i, m->destination, m->source);
    if (ab_bind_source_check (b, fd, what, err) < 0)
      return -1;
  }
  tree = open_tree (fd, "", flags | AT_EMPTY_PATH);
  if (tree < 0)
    return ab_error_set (err, errno, "mounts[%zu]: clone bind source `%s`", i, m->source);
  return tree;
}

/* The user namespace of the container process, opened once. */
static int
container_userns (pid_t child, int *ns, ab_error_t *err)
{
  char path[64];

  if (*ns >= 0)
    return *ns;
  snprintf (path, sizeof path, "/proc/%d/ns/user", (int) child);
  *ns = open (path, O_RDONLY | O_CLOEXEC);
  if (*ns < 0)
    return ab_error_set (err, errno, "open %s", path);
  return *ns;
}

int
ab_idmap_prepare (const struct ab_bundle *b, const struct ab_mount *mounts, size_t n_mounts, pid_t child,
                  bool child_userns, int *fds, ab_error_t *err)
{
  _cleanup_close_ int container_ns = -1;
  size_t i;

  for (i = 0; i < n_mounts; i++)
    fds[i] = -1;
  for (i = 0; i < n_mounts; i++)
    {
      const struct ab_mount *m = &mounts[i];
      _cleanup_close_ int own_ns = -1;
      struct mount_attr a = { .attr_set = MOUNT_ATTR_IDMAP };
      int ns, tree;

      if (!ab_mount_from_parent (m))
        continue;
      if (ab_mount_is_idmapped (m) && !m->bind)
        return ab_error_setc (err, AB_EC_CONFIG, EINVAL, "mounts[%zu]: id mapping is supported on bind mounts only",
                              i);
      if (ab_mount_is_idmapped (m) && !(m->uid_mappings.n || m->gid_mappings.n) && !child_userns)
        return ab_error_setc (err, AB_EC_CONFIG, EINVAL,
                              "mounts[%zu]: idmap without uidMappings needs a user namespace", i);
      fds[i] = tree = open_source (b, i, m, err);
      if (tree < 0)
        return -1;
      if (!ab_mount_is_idmapped (m))
        continue;
      if (m->uid_mappings.n || m->gid_mappings.n)
        {
          own_ns = userns_with (&m->uid_mappings, &m->gid_mappings, err);
          if (own_ns < 0)
            return ab_error_prefix (err, "mounts[%zu]", i);
          ns = own_ns;
        }
      else if ((ns = container_userns (child, &container_ns, err)) < 0)
        return -1;
      a.userns_fd = (uint64_t) ns;
      if (mount_setattr (tree, "", AT_EMPTY_PATH | (m->idmap_recursive ? AT_RECURSIVE : 0), &a, sizeof a) < 0)
        return ab_error_set (err, errno, "mounts[%zu]: id-map `%s` (does its filesystem support id-mapped mounts?)", i,
                             m->source);
    }
  return 0;
}

/* fd, opened in the runtime's mount namespace, as the same directory in
   the one the caller is in now (the container's, a copy of the runtime's
   made at clone): its path as the kernel names it (the namespace is a
   copy, so the path leads to the copy of the same mount), opened with no
   symlink followed, and it must be the same inode -- a path swapped since
   can only make this fail. */
static int
reopen_here (int fd, const char *what, ab_error_t *err)
{
  char path[4096];
  struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                          .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
  struct stat a, b;
  ssize_t n;
  int here;

  n = ab_fd_path (fd, path, sizeof path);
  if (n < 0)
    return ab_error_set (err, errno, "%s: readlink /proc/self/fd/%d", what, fd);
  here = (int) syscall (SYS_openat2, AT_FDCWD, path, &how, sizeof how);
  if (here < 0)
    return ab_error_set (err, errno, "%s: open `%s` again in the rootless helper's mount namespace", what, path);
  if (fstat (fd, &a) < 0 || fstat (here, &b) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino)
    {
      close (here);
      return ab_error_setc (err, AB_EC_SETUP, ESTALE, "%s: `%s` is no longer the directory that was checked", what,
                            path);
    }
  return here;
}

int
ab_rootfs_tree (struct ab_bundle *b, pid_t child, bool idmap, bool elsewhere, ab_error_t *err)
{
  _cleanup_close_ int fd = ab_steal_fd (&b->rootfs_fd);

  /* The directory the bundle's load resolved and checked (spec/bundle.c:
     a directory, not the host's root, not holding the state root), by the
     fd it kept: no path is resolved again, so a symlink swapped into
     root.path since cannot make another directory the root.  The fd is
     used once: it closes here.  There is no second way in: a walk of the
     path here would clone what the checks never saw. */
  if (fd < 0)
    return ab_error_setc (err, AB_EC_INTERNAL, EBADF, "root.path: the bundle's root directory fd is gone");
  return ab_rootfs_tree_at (fd, b->rootfs, child, idmap, elsewhere, err);
}

int
ab_rootfs_tree_at (int dirfd, const char *rootfs, pid_t child, bool idmap, bool elsewhere, ab_error_t *err)
{
  _cleanup_close_ int here = -1, tree = -1, ns = -1;
  int fd = dirfd;

  if (elsewhere)
    {
      here = reopen_here (dirfd, "root.path", err);
      if (here < 0)
        return -1;
      fd = here;
    }
  tree = open_tree (fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH);
  if (tree < 0)
    return ab_error_set (err, errno, "root.path: clone `%s`", rootfs);
  if (idmap)
    {
      /* Host uid 0 of the image is the container's uid 0, through the
         container's own mapping.  What this means for the host is said
         where the annotation is read (spec/annotations.c) and in the man
         page: the image's files become the container root's to change
         when the root is writable; they are the bundle's, not the host's. */
      struct mount_attr a = { .attr_set = MOUNT_ATTR_IDMAP };
      if (container_userns (child, &ns, err) < 0)
        return -1;
      a.userns_fd = (uint64_t) ns;
      if (mount_setattr (tree, "", AT_EMPTY_PATH, &a, sizeof a) < 0)
        return ab_error_set (err, errno,
                             "dev.agentbox.rootfs.idmap: id-map the root filesystem `%s` (does its filesystem "
                             "support id-mapped mounts?)",
                             rootfs);
    }
  return ab_steal_fd (&tree);
}
