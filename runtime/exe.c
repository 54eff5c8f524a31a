#include "config.h"

#include <elf.h>
#include <inttypes.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <sys/syscall.h>
#include <linux/mount.h>

#include "runtime/exe.h"
#include "base/util.h"

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

#define SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

#ifndef OVERLAYFS_SUPER_MAGIC
#define OVERLAYFS_SUPER_MAGIC 0x794c7630
#endif

/* Set by the first stage for the re-executed one: the mount id of the
   read-only overlay it runs from (see overlay_copy). */
#define EXE_MNT_ENV "AGENTBOX_EXE_MNT"

extern char **environ;

/* The bytes execve needs: up to the end of the last PT_LOAD segment.  The
   debug sections (most of a -g build) and the section headers come after
   and are never read by the kernel's loader; copying less makes every
   create and exec cheaper.  Anything unexpected: the whole file. */
static off_t
loadable_size (int fd, off_t file_size)
{
  Elf64_Ehdr eh;
  Elf64_Phdr ph;
  off_t end = 0;
  int i;

  if (pread (fd, &eh, sizeof eh, 0) != (ssize_t) sizeof eh || memcmp (eh.e_ident, ELFMAG, SELFMAG) != 0
      || eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof ph)
    return file_size;
  for (i = 0; i < eh.e_phnum; i++)
    {
      off_t e;
      if (pread (fd, &ph, sizeof ph, (off_t) (eh.e_phoff + (uint64_t) i * sizeof ph)) != (ssize_t) sizeof ph)
        return file_size;
      if (ph.p_type != PT_LOAD && ph.p_type != PT_INTERP && ph.p_type != PT_DYNAMIC && ph.p_type != PT_NOTE)
        continue;
      e = (off_t) (ph.p_offset + ph.p_filesz);
      if (e > end)
        end = e;
    }
  /* the program headers themselves must be in the copy */
  if ((off_t) (eh.e_phoff + (uint64_t) eh.e_phnum * sizeof ph) > end)
    end = (off_t) (eh.e_phoff + (uint64_t) eh.e_phnum * sizeof ph);
  return end > 0 && end <= file_size ? end : file_size;
}

/* Where the binary came from, for finding agentbox-init beside it in a
   build tree (a sealed copy has no path).  Never passed to containers:
   their environment comes from config.json only. */
static void
remember_path (const char *path)
{
  if (path)
    setenv (AB_EXE_PATH_ENV, path, 1);
}

/* Whether we run from the overlay a first stage made (overlay_copy): the
   marker it left names the mount /proc/self/exe is on, and that mount is
   an overlay whose superblock is read-only.  The marker is removed either
   way, so nothing this process starts inherits it. */
static bool
overlay_check (int self)
{
  const char *m = getenv (EXE_MNT_ENV);
  struct statx stx;
  struct statfs sfs;
  uint64_t want;
  bool ok;

  if (m == NULL)
    return false;
  ok = ab_parse_u64 (m, &want) == 0 && statx (self, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) == 0
       && (stx.stx_mask & STATX_MNT_ID) && stx.stx_mnt_id == want && fstatfs (self, &sfs) == 0
       && sfs.f_type == OVERLAYFS_SUPER_MAGIC && (sfs.f_flags & ST_RDONLY);
  unsetenv (EXE_MNT_ENV);
  return ok;
}

static int from_overlay = -1; /* overlay_check's answer, once */

static bool
running_from_overlay (int self)
{
  if (from_overlay < 0)
    {
      from_overlay = overlay_check (self);
      if (from_overlay)
        prctl (PR_SET_NAME, "agentbox"); /* not the fd number execveat gave */
    }
  return from_overlay;
}

/* self (/proc/self/exe) is the overlay or our sealed copy */
static bool
protected_exe (int self)
{
  int seals;

  if (running_from_overlay (self))
    return true;
  seals = fcntl (self, F_GET_SEALS);
  return seals >= 0 && (seals & SEALS) == SEALS;
}

bool
ab_exe_protected (void)
{
  _cleanup_close_ int self = open ("/proc/self/exe", O_RDONLY | O_CLOEXEC);

  return self >= 0 && protected_exe (self);
}

/* The binary at path, opened through an overlay of its directory with no
   upper layer, mounted nowhere (fsmount without move_mount): or -1.
   Why this protects the binary as well as a sealed copy does, without
   copying 2.6 MB for every container (0.4-0.5 ms here):
   - an overlay without an upper directory has a read-only superblock:
     every open for writing, also through /proc/<pid>/exe, fails with EROFS
     (clearing the mount's own read-only flag does not change that);
   - making the superblock writable means reconfiguring it, which needs
     CAP_SYS_ADMIN in the initial user namespace, and overlay cannot gain an
     upper layer on reconfigure;
   - the mount is attached nowhere, so no mount table shows or holds it; it
     goes away with the last process running from it.
   Overlay needs two lower layers without an upper one: the second is an
   empty read-only tmpfs, also attached nowhere.  Any failure (no
   CAP_SYS_ADMIN, no overlay in the kernel, a directory name overlay cannot
   take): the caller makes the sealed copy instead. */
static int
overlay_copy (const char *path, uint64_t *mnt_id)
{
  _cleanup_free_ char *dir = xstrdup (path);
  _cleanup_close_ int tfs = -1, tmnt = -1, ofs = -1, omnt = -1;
  char *slash = strrchr (dir, '/');
  char lower[4200];
  struct statx stx;
  int fd;

  if (slash == NULL || slash == dir || strpbrk (dir, ":,\\") != NULL)
    return -1;
  *slash = '\0';
  tfs = (int)syscall (SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
  if (tfs < 0 || syscall (SYS_fsconfig, tfs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return -1;
  tmnt = (int)syscall (SYS_fsmount, tfs, FSMOUNT_CLOEXEC,
                       MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
  if (tmnt < 0)
    return -1;
  if ((size_t)snprintf (lower, sizeof lower, "%s:/proc/self/fd/%d", dir, tmnt) >= sizeof lower)
    return -1;
  ofs = (int)syscall (SYS_fsopen, "overlay", FSOPEN_CLOEXEC);
  if (ofs < 0 || syscall (SYS_fsconfig, ofs, FSCONFIG_SET_STRING, "lowerdir", lower, 0) < 0
      || syscall (SYS_fsconfig, ofs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return -1;
  omnt = (int)syscall (SYS_fsmount, ofs, FSMOUNT_CLOEXEC,
                       MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID);
  if (omnt < 0)
    return -1;
  fd = openat (omnt, slash + 1, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return -1;
  if (statx (fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) < 0 || !(stx.stx_mask & STATX_MNT_ID))
    {
      close (fd);
      return -1;
    }
  *mnt_id = stx.stx_mnt_id;
  return fd;
}

int
ab_exe_ensure_sealed (char **argv, ab_error_t *err)
{
  _cleanup_close_ int self = open ("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  _cleanup_close_ int mfd = -1;
  struct stat st;
  off_t off = 0, size;
  char path[4096];
  ssize_t n;
  uint64_t mnt_id;

  if (self < 0)
    return ab_error_set (err, errno, "open /proc/self/exe");
  if (protected_exe (self))
    return 0;
  n = readlink ("/proc/self/exe", path, sizeof path - 1);
  if (n > 0)
    {
      _cleanup_close_ int ofd = -1;
      path[n] = '\0';
      ofd = overlay_copy (path, &mnt_id);
      if (ofd >= 0)
        {
          char v[32];
          snprintf (v, sizeof v, "%" PRIu64, mnt_id);
          remember_path (path);
          setenv (EXE_MNT_ENV, v, 1);
          syscall (SYS_execveat, ofd, "", argv, environ, AT_EMPTY_PATH);
          unsetenv (EXE_MNT_ENV); /* then the sealed copy */
        }
    }
  if (fstat (self, &st) < 0)
    return ab_error_set (err, errno, "stat /proc/self/exe");
  size = loadable_size (self, st.st_size);

  /* MFD_EXEC: an explicit request for an executable memfd (kernels with
     vm.memfd_noexec); older kernels reject the flag, then retry without. */
  mfd = memfd_create ("agentbox", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
  if (mfd < 0 && errno == EINVAL)
    mfd = memfd_create ("agentbox", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (mfd < 0)
    return ab_error_set (err, errno, "memfd_create");
  while (off < size)
    {
      ssize_t k = sendfile (mfd, self, &off, (size_t)(size - off));
      if (k < 0)
        {
          if (errno == EINTR)
            continue;
          return ab_error_set (err, errno, "copy /proc/self/exe to a memfd");
        }
      if (k == 0)
        break;
    }
  if (fcntl (mfd, F_ADD_SEALS, SEALS) < 0)
    return ab_error_set (err, errno, "seal the memfd copy of agentbox");
  remember_path (n > 0 ? path : NULL);
  syscall (SYS_execveat, mfd, "", argv, environ, AT_EMPTY_PATH);
  return ab_error_set (err, errno, "execute the sealed copy of agentbox");
}

static bool
mapped (const struct ab_idmaps *m, uint32_t host_id)
{
  size_t i;

  for (i = 0; i < m->n; i++)
    if (host_id >= m->v[i].host_id && host_id - m->v[i].host_id < m->v[i].size)
      return true;
  return false;
}

/* Whether no process of a new user namespace with these mappings can open
   the agentbox binary for writing, whatever it does with /proc/<pid>/exe:
   the file's owner uid is not mapped, its group is not mapped or has no
   write permission, others cannot write, and it carries no ACL.  The
   kernel's DAC check then refuses the open (a capability of the
   namespace covers only inodes whose owner it maps), and a re-exec from a
   memfd copy buys nothing. */
static bool
ab_exe_unwritable_from (const struct ab_idmaps *uids, const struct ab_idmaps *gids)
{
  struct stat st;

  /* By the magic link itself, which always names the file we run: no fd
     to open and close for the two questions. */
  if (stat ("/proc/self/exe", &st) < 0)
    return false;
  if (st.st_mode & S_IWOTH)
    return false;
  if (mapped (uids, st.st_uid))
    return false;
  if (mapped (gids, st.st_gid) && (st.st_mode & S_IWGRP))
    return false;
  /* An ACL could grant a mapped user write access: then do not reason. */
  if (getxattr ("/proc/self/exe", "system.posix_acl_access", NULL, 0) >= 0
      || (errno != ENODATA && errno != ENOTSUP))
    return false;
  return true;
}

int
ab_exe_seal_unless_safe (char **argv, const struct ab_idmaps *uids, const struct ab_idmaps *gids, ab_error_t *err)
{
  if (uids && gids && uids->n && ab_exe_unwritable_from (uids, gids))
    return 0;
  return ab_exe_ensure_sealed (argv, err);
}
