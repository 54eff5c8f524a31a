/* base/libc-compat.h's functions, for a C library other than glibc. */
#include "config.h"

#ifdef AB_LIBC_COMPAT

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

int
open_tree (int dfd, const char *path, unsigned flags)
{
  return (int)syscall (SYS_open_tree, dfd, path, flags);
}

int
move_mount (int from_dfd, const char *from, int to_dfd, const char *to, unsigned flags)
{
  return (int)syscall (SYS_move_mount, from_dfd, from, to_dfd, to, flags);
}

int
fsopen (const char *fsname, unsigned flags)
{
  return (int)syscall (SYS_fsopen, fsname, flags);
}

int
fsconfig (int fd, unsigned cmd, const char *key, const void *value, int aux)
{
  return (int)syscall (SYS_fsconfig, fd, cmd, key, value, aux);
}

int
fsmount (int fd, unsigned flags, unsigned attr_flags)
{
  return (int)syscall (SYS_fsmount, fd, flags, attr_flags);
}

int
mount_setattr (int dfd, const char *path, unsigned flags, struct mount_attr *attr, size_t size)
{
  return (int)syscall (SYS_mount_setattr, dfd, path, flags, attr, size);
}

int
statx (int dfd, const char *path, int flags, unsigned mask, struct statx *buf)
{
  return (int)syscall (SYS_statx, dfd, path, flags, mask, buf);
}

int
renameat2 (int olddfd, const char *oldpath, int newdfd, const char *newpath, unsigned flags)
{
  return (int)syscall (SYS_renameat2, olddfd, oldpath, newdfd, newpath, flags);
}

ssize_t
ab_getdents64 (int fd, void *buf, size_t len)
{
  return syscall (SYS_getdents64, fd, buf, len);
}

/* every errno value: its name and glibc's wording of it, so that agentbox's
 * messages read the same whatever the C library */
#define AB_ERRNO(X) \
  X (EPERM, "Operation not permitted") \
  X (ENOENT, "No such file or directory") \
  X (ESRCH, "No such process") \
  X (EINTR, "Interrupted system call") \
  X (EIO, "Input/output error") \
  X (ENXIO, "No such device or address") \
  X (E2BIG, "Argument list too long") \
  X (ENOEXEC, "Exec format error") \
  X (EBADF, "Bad file descriptor") \
  X (ECHILD, "No child processes") \
  X (EAGAIN, "Resource temporarily unavailable") \
  X (ENOMEM, "Cannot allocate memory") \
  X (EACCES, "Permission denied") \
  X (EFAULT, "Bad address") \
  X (ENOTBLK, "Block device required") \
  X (EBUSY, "Device or resource busy") \
  X (EEXIST, "File exists") \
  X (EXDEV, "Invalid cross-device link") \
  X (ENODEV, "No such device") \
  X (ENOTDIR, "Not a directory") \
  X (EISDIR, "Is a directory") \
  X (EINVAL, "Invalid argument") \
  X (ENFILE, "Too many open files in system") \
  X (EMFILE, "Too many open files") \
  X (ENOTTY, "Inappropriate ioctl for device") \
  X (ETXTBSY, "Text file busy") \
  X (EFBIG, "File too large") \
  X (ENOSPC, "No space left on device") \
  X (ESPIPE, "Illegal seek") \
  X (EROFS, "Read-only file system") \
  X (EMLINK, "Too many links") \
  X (EPIPE, "Broken pipe") \
  X (EDOM, "Numerical argument out of domain") \
  X (ERANGE, "Numerical result out of range") \
  X (EDEADLK, "Resource deadlock avoided") \
  X (ENAMETOOLONG, "File name too long") \
  X (ENOLCK, "No locks available") \
  X (ENOSYS, "Function not implemented") \
  X (ENOTEMPTY, "Directory not empty") \
  X (ELOOP, "Too many levels of symbolic links") \
  X (ENOMSG, "No message of desired type") \
  X (EIDRM, "Identifier removed") \
  X (ECHRNG, "Channel number out of range") \
  X (EL2NSYNC, "Level 2 not synchronized") \
  X (EL3HLT, "Level 3 halted") \
  X (EL3RST, "Level 3 reset") \
  X (ELNRNG, "Link number out of range") \
  X (EUNATCH, "Protocol driver not attached") \
  X (ENOCSI, "No CSI structure available") \
  X (EL2HLT, "Level 2 halted") \
  X (EBADE, "Invalid exchange") \
  X (EBADR, "Invalid request descriptor") \
  X (EXFULL, "Exchange full") \
  X (ENOANO, "No anode") \
  X (EBADRQC, "Invalid request code") \
  X (EBADSLT, "Invalid slot") \
  X (EBFONT, "Bad font file format") \
  X (ENOSTR, "Device not a stream") \
  X (ENODATA, "No data available") \
  X (ETIME, "Timer expired") \
  X (ENOSR, "Out of streams resources") \
  X (ENONET, "Machine is not on the network") \
  X (ENOPKG, "Package not installed") \
  X (EREMOTE, "Object is remote") \
  X (ENOLINK, "Link has been severed") \
  X (EADV, "Advertise error") \
  X (ESRMNT, "Srmount error") \
  X (ECOMM, "Communication error on send") \
  X (EPROTO, "Protocol error") \
  X (EMULTIHOP, "Multihop attempted") \
  X (EDOTDOT, "RFS specific error") \
  X (EBADMSG, "Bad message") \
  X (EOVERFLOW, "Value too large for defined data type") \
  X (ENOTUNIQ, "Name not unique on network") \
  X (EBADFD, "File descriptor in bad state") \
  X (EREMCHG, "Remote address changed") \
  X (ELIBACC, "Can not access a needed shared library") \
  X (ELIBBAD, "Accessing a corrupted shared library") \
  X (ELIBSCN, ".lib section in a.out corrupted") \
  X (ELIBMAX, "Attempting to link in too many shared libraries") \
  X (ELIBEXEC, "Cannot exec a shared library directly") \
  X (EILSEQ, "Invalid or incomplete multibyte or wide character") \
  X (ERESTART, "Interrupted system call should be restarted") \
  X (ESTRPIPE, "Streams pipe error") \
  X (EUSERS, "Too many users") \
  X (ENOTSOCK, "Socket operation on non-socket") \
  X (EDESTADDRREQ, "Destination address required") \
  X (EMSGSIZE, "Message too long") \
  X (EPROTOTYPE, "Protocol wrong type for socket") \
  X (ENOPROTOOPT, "Protocol not available") \
  X (EPROTONOSUPPORT, "Protocol not supported") \
  X (ESOCKTNOSUPPORT, "Socket type not supported") \
  X (EOPNOTSUPP, "Operation not supported") \
  X (EPFNOSUPPORT, "Protocol family not supported") \
  X (EAFNOSUPPORT, "Address family not supported by protocol") \
  X (EADDRINUSE, "Address already in use") \
  X (EADDRNOTAVAIL, "Cannot assign requested address") \
  X (ENETDOWN, "Network is down") \
  X (ENETUNREACH, "Network is unreachable") \
  X (ENETRESET, "Network dropped connection on reset") \
  X (ECONNABORTED, "Software caused connection abort") \
  X (ECONNRESET, "Connection reset by peer") \
  X (ENOBUFS, "No buffer space available") \
  X (EISCONN, "Transport endpoint is already connected") \
  X (ENOTCONN, "Transport endpoint is not connected") \
  X (ESHUTDOWN, "Cannot send after transport endpoint shutdown") \
  X (ETOOMANYREFS, "Too many references: cannot splice") \
  X (ETIMEDOUT, "Connection timed out") \
  X (ECONNREFUSED, "Connection refused") \
  X (EHOSTDOWN, "Host is down") \
  X (EHOSTUNREACH, "No route to host") \
  X (EALREADY, "Operation already in progress") \
  X (EINPROGRESS, "Operation now in progress") \
  X (ESTALE, "Stale file handle") \
  X (EUCLEAN, "Structure needs cleaning") \
  X (ENOTNAM, "Not a XENIX named type file") \
  X (ENAVAIL, "No XENIX semaphores available") \
  X (EISNAM, "Is a named type file") \
  X (EREMOTEIO, "Remote I/O error") \
  X (EDQUOT, "Disk quota exceeded") \
  X (ENOMEDIUM, "No medium found") \
  X (EMEDIUMTYPE, "Wrong medium type") \
  X (ECANCELED, "Operation canceled") \
  X (ENOKEY, "Required key not available") \
  X (EKEYEXPIRED, "Key has expired") \
  X (EKEYREVOKED, "Key has been revoked") \
  X (EKEYREJECTED, "Key was rejected by service") \
  X (EOWNERDEAD, "Owner died") \
  X (ENOTRECOVERABLE, "State not recoverable") \
  X (ERFKILL, "Operation not possible due to RF-kill") \
  X (EHWPOISON, "Memory page has hardware error")

const char *
strerrorname_np (int errnum)
{
#define AB_CASE(e, text)                                                                                   \
  case e:                                                                                                  \
    return #e;
  switch (errnum)
    {
      AB_ERRNO (AB_CASE)
    }
  return NULL;
#undef AB_CASE
}

char *
strerror (int errnum)
{
  static __thread char unknown[32];
#define AB_CASE(e, text)                                                                                   \
  case e:                                                                                                  \
    return (char *)text;
  switch (errnum)
    {
    case 0:
      return (char *)"Success";
      AB_ERRNO (AB_CASE)
    }
#undef AB_CASE
  snprintf (unknown, sizeof unknown, "Unknown error %d", errnum);
  return unknown;
}

#define AB_SIGNAL_NAMES(X)                                                                                 \
  X (HUP) X (INT) X (QUIT) X (ILL) X (TRAP) X (ABRT) X (BUS) X (FPE) X (KILL) X (USR1) X (SEGV) X (USR2)   \
  X (PIPE) X (ALRM) X (TERM) X (STKFLT) X (CHLD) X (CONT) X (STOP) X (TSTP) X (TTIN) X (TTOU) X (URG)     \
  X (XCPU) X (XFSZ) X (VTALRM) X (PROF) X (WINCH) X (POLL) X (PWR) X (SYS)

const char *
sigabbrev_np (int sig)
{
#define AB_CASE(s)                                                                                         \
  case SIG##s:                                                                                             \
    return #s;
  switch (sig)
    {
      AB_SIGNAL_NAMES (AB_CASE)
    }
  return NULL;
#undef AB_CASE
}

/* posix_spawn's child closes what was open at this call: the fds agentbox
 * opens are O_CLOEXEC, so one opened later by another thread goes at the
 * exec anyway.  Closing an fd closed meanwhile is harmless in musl's child. */
int
posix_spawn_file_actions_addclosefrom_np (posix_spawn_file_actions_t *fa, int from)
{
  DIR *d = opendir ("/proc/self/fd");
  if (d == NULL)
    return errno;
  int dfd = dirfd (d), rc = 0;
  struct dirent *e;
  while (rc == 0 && (e = readdir (d)) != NULL)
    {
      char *end;
      long fd = strtol (e->d_name, &end, 10);
      if (*end == '\0' && end != e->d_name && fd >= from && fd != dfd)
        rc = posix_spawn_file_actions_addclose (fa, (int)fd);
    }
  closedir (d);
  return rc;
}

#endif
