/* runtime/paths.c: the runtime's writes to the container's /proc (sysctls,
 * AppArmor and SELinux exec labels) open their file beneath a /proc checked
 * to be a procfs's root, crossing no mount and following no magic link, so
 * that nothing mounted in the way can take the write (CVE-2025-52881).
 * t-hostile.sh section 6 runs the sysctl path in containers; this file
 * holds the LSM label's path, which needs an LSM this host may not run. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/util.h"
#include "runtime/paths.h"
#include "tests/unit/tap.h"

/* ab_proc_open of rel under ab_proc_root: 0, or -1 with *err filled. */
static int
proc_open (const char *rel, ab_error_t *err)
{
  _cleanup_close_ int procfd = ab_proc_root (err);
  int fd;

  if (procfd < 0)
    return -1;
  fd = ab_proc_open (procfd, rel, O_RDONLY, err);
  if (fd < 0)
    return -1;
  close (fd);
  return 0;
}

/* In a mount namespace of its own (a child), mount what `how` says over
   /proc or a file of it, then open rel: the error's message, or "opened". */
static const char *
after_mount (const char *how, const char *rel)
{
  static char msg[AB_ERR_MSG_MAX];
  int p[2];
  pid_t pid;
  ssize_t n;

  if (pipe (p) < 0 || (pid = fork ()) < 0)
    return "fork failed";
  if (pid == 0)
    {
      ab_error_t err = { 0 };
      int r = -1;
      const char *out;

      close (p[0]);
      if (unshare (CLONE_NEWNS) == 0 && mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0)
        {
          if (strcmp (how, "bind-null-on-attr-exec") == 0)
            r = mount ("/dev/null", "/proc/thread-self/attr/exec", NULL, MS_BIND, NULL);
          else if (strcmp (how, "tmpfs-on-proc") == 0)
            r = mount ("tmpfs", "/proc", "tmpfs", 0, NULL);
          else if (strcmp (how, "bind-proc-self-on-proc") == 0)
            r = mount ("/proc/self", "/proc", NULL, MS_BIND, NULL);
        }
      if (r < 0)
        out = "the mount failed";
      else
        out = proc_open (rel, &err) == 0 ? "opened" : err.msg;
      (void)!write (p[1], out, strlen (out));
      _exit (0);
    }
  close (p[1]);
  n = read (p[0], msg, sizeof msg - 1);
  close (p[0]);
  waitpid (pid, NULL, 0);
  msg[n > 0 ? n : 0] = '\0';
  return msg;
}

int
main (void)
{
  ab_error_t err = { 0 };

  ok (proc_open ("thread-self/attr/exec", &err) == 0,
      "the exec label's file opens through procfs's own thread-self link");
  ok (proc_open ("sys/net/ipv4/ip_default_ttl", &err) == 0, "a sysctl's file opens");
  if (access ("/proc/self/attr/apparmor", F_OK) != 0)
    {
      ab_error_clear (&err);
      ok (proc_open ("thread-self/attr/apparmor/exec", &err) < 0 && err.errnum == ENOENT,
          "no attr/apparmor here: ENOENT, the one error that sends the AppArmor label to attr/exec");
    }
  else
    ok (proc_open ("thread-self/attr/apparmor/exec", &err) == 0, "attr/apparmor/exec opens");
  ab_error_clear (&err);
  ok (proc_open ("self/fd/0", &err) < 0 && err.errnum == ELOOP, "a magic link (self/fd/0) is never followed");

  if (geteuid () != 0)
    {
      for (int i = 0; i < 3; i++)
        printf ("ok %d # SKIP mounts need root\n", ++tap_count);
      return tap_done ();
    }
  is_str (after_mount ("bind-null-on-attr-exec", "thread-self/attr/exec"),
          "open /proc/thread-self/attr/exec: something is mounted on its way (it could take the write elsewhere)",
          "/dev/null bound over the exec label's file: refused, nothing written through it");
  is_str (after_mount ("tmpfs-on-proc", "thread-self/attr/exec"), "/proc is not the root of a procfs",
          "a tmpfs over /proc: refused");
  is_str (after_mount ("bind-proc-self-on-proc", "attr/exec"), "/proc is not the root of a procfs",
          "a procfs directory (/proc/self) bound over /proc: refused, though it is a procfs");
  return tap_done ();
}
