#include "config.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "runtime/exe.h"
#include "runtime/util.h"

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

#define SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

extern char **environ;

int
ab_exe_ensure_sealed (char **argv, ab_error_t *err)
{
  _cleanup_close_ int self = open ("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  _cleanup_close_ int mfd = -1;
  struct stat st;
  off_t off = 0;
  int seals;

  if (self < 0)
    return ab_error_set (err, errno, "open /proc/self/exe");
  seals = fcntl (self, F_GET_SEALS);
  if (seals >= 0 && (seals & SEALS) == SEALS)
    return 0; /* already running from our sealed copy */
  if (fstat (self, &st) < 0)
    return ab_error_set (err, errno, "stat /proc/self/exe");

  /* MFD_EXEC: an explicit request for an executable memfd (kernels with
     vm.memfd_noexec); older kernels reject the flag, then retry without. */
  mfd = memfd_create ("agentbox", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
  if (mfd < 0 && errno == EINVAL)
    mfd = memfd_create ("agentbox", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (mfd < 0)
    return ab_error_set (err, errno, "memfd_create");
  while (off < st.st_size)
    {
      ssize_t n = sendfile (mfd, self, &off, (size_t) (st.st_size - off));
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
  {
    /* Where the binary came from, for finding agentbox-init beside it in a
       build tree (the copy has no path).  Never passed to containers: their
       environment comes from config.json only. */
    char path[4096];
    ssize_t n = readlink ("/proc/self/exe", path, sizeof path - 1);
    if (n > 0)
      {
        path[n] = '\0';
        setenv ("AGENTBOX_EXE", path, 1);
      }
  }
  syscall (SYS_execveat, mfd, "", argv, environ, AT_EMPTY_PATH);
  return ab_error_set (err, errno, "execute the sealed copy of agentbox");
}
