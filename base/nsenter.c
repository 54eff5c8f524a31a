#include "config.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "base/nsenter.h"
#include "base/util.h"

/* fn may resolve paths, build mount trees or nftables batches: room for
   that, allocated per call (the helper is short-lived and rare). */
#define HELPER_STACK (1u << 20)

struct helper
{
  const struct ab_nsenter *ns;
  int (*fn) (void *);
  void *arg;
  int r;
  int errnum;        /* the namespace step that failed, its errno */
  const char *failed;
};

static bool
same_ns (int fd, const char *self)
{
  struct stat a, b;

  return fstat (fd, &a) == 0 && stat (self, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static int
helper_main (void *p)
{
  struct helper *h = p;
  const struct ab_nsenter *ns = h->ns;

  /* Into the owner first: there we hold every capability, which the
     setns into its network and mount namespaces needs. */
  if (ns->userns_fd >= 0 && !same_ns (ns->userns_fd, "/proc/self/ns/user")
      && setns (ns->userns_fd, CLONE_NEWUSER) < 0)
    return h->errnum = errno, h->failed = "setns into the container's user namespace", 1;
  if (ns->netns_fd >= 0 && setns (ns->netns_fd, CLONE_NEWNET) < 0)
    return h->errnum = errno, h->failed = "setns into the container's network namespace", 1;
  if (ns->mntns_fd >= 0 && setns (ns->mntns_fd, CLONE_NEWNS) < 0)
    return h->errnum = errno, h->failed = "setns into the container's mount namespace", 1;
  h->r = h->fn (h->arg);
  return 0;
}

int
ab_nsenter_run (const struct ab_nsenter *ns, int (*fn) (void *arg), void *arg, ab_error_t *err)
{
  struct helper h = { .ns = ns, .fn = fn, .arg = arg, .r = -1 };
  sigset_t all, saved;
  void *stack;
  pid_t pid;
  int st, e;

  stack = mmap (NULL, HELPER_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED)
    return ab_error_set (err, errno, "a stack for the namespace helper");
  /* No handler of ours may run on the helper's stack: signals wait until
     it is gone.  Exit signal 0 (a "clone" child, waited for with __WCLONE):
     no SIGCHLD for the supervisor, and no wait(-1) elsewhere reaps it. */
  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &saved);
  pid = clone (helper_main, (char *)stack + HELPER_STACK, CLONE_VM | CLONE_FILES | CLONE_VFORK, &h);
  e = errno;
  pthread_sigmask (SIG_SETMASK, &saved, NULL);
  if (pid > 0)
    while (waitpid (pid, &st, __WCLONE) < 0 && errno == EINTR)
      ;
  munmap (stack, HELPER_STACK);
  if (pid < 0)
    return ab_error_set (err, e, "clone the namespace helper");
  if (h.failed)
    return ab_error_set (err, h.errnum, "%s", h.failed);
  return h.r;
}

int
ab_ns_owner_fd (int ns_fd)
{
  return ioctl (ns_fd, NS_GET_USERNS);
}

bool
ab_have_cap_sys_admin (void)
{
  struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
  struct __user_cap_data_struct data[2] = { 0 };

  if (syscall (SYS_capget, &hdr, data) < 0)
    return false;
  return (data[CAP_SYS_ADMIN / 32].effective & (1u << (CAP_SYS_ADMIN % 32))) != 0;
}
