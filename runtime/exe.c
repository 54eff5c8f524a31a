#include "config.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <sys/syscall.h>

#include "runtime/exe.h"
#include "runtime/util.h"

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

#define SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

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
remember_path (void)
{
  char path[4096];
  ssize_t n = readlink ("/proc/self/exe", path, sizeof path - 1);

  if (n > 0)
    {
      path[n] = '\0';
      setenv ("AGENTBOX_EXE", path, 1);
    }
}

int
ab_exe_ensure_sealed (char **argv, ab_error_t *err)
{
  _cleanup_close_ int self = open ("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  _cleanup_close_ int mfd = -1;
  struct stat st;
  off_t off = 0, size;
  int seals;

  if (self < 0)
    return ab_error_set (err, errno, "open /proc/self/exe");
  seals = fcntl (self, F_GET_SEALS);
  if (seals >= 0 && (seals & SEALS) == SEALS)
    return 0; /* already running from our sealed copy */
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
      ssize_t n = sendfile (mfd, self, &off, (size_t) (size - off));
      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          return ab_error_set (err, errno, "copy /proc/self/exe to a memfd");
        }
      if (n == 0)
        break;
    }
  if (fcntl (mfd, F_ADD_SEALS, SEALS) < 0)
    return ab_error_set (err, errno, "seal the memfd copy of agentbox");
  remember_path ();
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

bool
ab_exe_unwritable_from (const struct ab_idmaps *uids, const struct ab_idmaps *gids)
{
  _cleanup_close_ int fd = open ("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  struct stat st;

  if (fd < 0 || fstat (fd, &st) < 0)
    return false;
  if (st.st_mode & S_IWOTH)
    return false;
  if (mapped (uids, st.st_uid))
    return false;
  if (mapped (gids, st.st_gid) && (st.st_mode & S_IWGRP))
    return false;
  /* An ACL could grant a mapped user write access: then do not reason. */
  if (fgetxattr (fd, "system.posix_acl_access", NULL, 0) >= 0 || (errno != ENODATA && errno != ENOTSUP))
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
