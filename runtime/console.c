#include "config.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <termios.h>

#include "runtime/console.h"
#include "runtime/mount.h"
#include "runtime/resolve.h"
#include "runtime/sync.h"
#include "runtime/util.h"

#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO ('T', 0x41)
#endif

int
ab_console_socket_connect (const char *path, ab_error_t *err)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  int fd;

  if (strlen (path) >= sizeof sa.sun_path)
    return ab_error_setc (err, AB_EC_USAGE, ENAMETOOLONG, "--console-socket `%s`: path too long", path);
  strcpy (sa.sun_path, path);
  fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return ab_error_set (err, errno, "--console-socket: socket");
  if (connect (fd, (struct sockaddr *) &sa, sizeof sa) < 0)
    {
      int e = errno;
      close (fd);
      return ab_error_setc (err, AB_EC_USAGE, e, "--console-socket: connect `%s`", path);
    }
  return fd;
}

int
ab_console_setup (int sock, const struct ab_process *p, bool console, ab_error_t *err)
{
  _cleanup_close_ int master = -1;
  _cleanup_close_ int slave = -1;
  int unlock = 0, ptn = -1;

  ab_set_step ("console");
  /* The container's own devpts instance, never the host's. */
  master = open ("/dev/pts/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0)
    master = open ("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0)
    return ab_error_set (err, errno, "process.terminal: open /dev/pts/ptmx (is devpts mounted on /dev/pts?)");
  if (ioctl (master, TIOCSPTLCK, &unlock) < 0)
    return ab_error_set (err, errno, "process.terminal: unlock pty");
  /* The peer by fd: no path lookup of /dev/pts/N that could be raced. */
  slave = ioctl (master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (slave < 0)
    return ab_error_set (err, errno, "process.terminal: open pty peer");
  if (p->console_size_set)
    {
      struct winsize ws = { .ws_row = (unsigned short) p->console_height,
                            .ws_col = (unsigned short) p->console_width };
      if (ioctl (slave, TIOCSWINSZ, &ws) < 0)
        return ab_error_set (err, errno, "process.consoleSize: set window size");
    }
  if (fchown (slave, p->user.uid, p->user.gid) < 0 && errno != EINVAL)
    return ab_error_set (err, errno, "process.terminal: chown pty to %u:%u", p->user.uid, p->user.gid);
  /* /dev/console: bind the slave onto it (config-linux.md default devices). */
  if (console && ioctl (master, TIOCGPTN, &ptn) == 0)
    {
      char path[64];
      _cleanup_close_ int root = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
      _cleanup_close_ int target = -1;
      _cleanup_close_ int tree = -1;
      snprintf (path, sizeof path, "/dev/pts/%d", ptn);
      target = root >= 0 ? ab_mkpath_in_root (root, "/dev/console", AB_LAST_FILE, NULL) : -1;
      tree = open_tree (AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
      if (target >= 0 && tree >= 0 && ab_move_mount_fd (tree, target, "/dev/console", err) < 0)
        return -1;
    }
  if (ab_send_fds (sock, &master, 1, err) < 0)
    return ab_error_prefix (err, "--console-socket");
  if (setsid () < 0)
    return ab_error_set (err, errno, "process.terminal: setsid");
  if (ioctl (slave, TIOCSCTTY, 0) < 0)
    return ab_error_set (err, errno, "process.terminal: set controlling terminal");
  if (dup2 (slave, 0) < 0 || dup2 (slave, 1) < 0 || dup2 (slave, 2) < 0)
    return ab_error_set (err, errno, "process.terminal: make the pty stdio");
  return 0;
}
