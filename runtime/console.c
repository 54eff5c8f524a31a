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
#include "base/resolve.h"
#include "runtime/sync.h"
#include "base/util.h"

#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO ('T', 0x41)
#endif

int
ab_fd_socket_connect (const char *path, const char *opt, ab_error_t *err)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  int fd;

  if (strlen (path) >= sizeof sa.sun_path)
    return ab_error_setc (err, AB_EC_USAGE, ENAMETOOLONG, "%s `%s`: path too long", opt, path);
  strcpy (sa.sun_path, path);
  fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return ab_error_set (err, errno, "%s: socket", opt);
  if (connect (fd, (struct sockaddr *) &sa, sizeof sa) < 0)
    {
      int e = errno;
      close (fd);
      return ab_error_setc (err, AB_EC_USAGE, e, "%s: connect `%s`", opt, path);
    }
  return fd;
}

int
ab_console_setup (int sock, const struct ab_process *p, bool dev_console, ab_error_t *err)
{
  _cleanup_close_ int master = -1;
  _cleanup_close_ int slave = -1;
  int unlock = 0;

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
  /* /dev/console: bind the slave onto it (config-linux.md default devices).
     Not for an exec'd process: that would stack one more mount on the
     container's /dev/console per `exec --tty`, left pointing at a pty that
     is gone once the process ends. */
  if (dev_console)
    {
      _cleanup_close_ int root = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
      _cleanup_close_ int target = -1;
      _cleanup_close_ int tree = -1;
      target = root >= 0 ? ab_mkpath_in_root (root, "/dev/console", AB_LAST_FILE, NULL) : -1;
      /* The pty we hold, by its fd: never the path /dev/pts/N, which a
         container sharing this /dev could swap for a symlink to a file it
         wants bound writable on /dev/console (CVE-2025-52565). */
      tree = open_tree (slave, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
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

int
ab_console_relay_pair (int *ours, ab_error_t *err)
{
  int sp[2];

  /* SOCK_STREAM like a --console-socket connection; close-on-exec both: the
     child's end is closed by ab_console_setup's caller long before exec. */
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
    return ab_error_set (err, errno, "process.terminal: socketpair for the terminal relay");
  *ours = sp[0];
  return sp[1];
}

int
ab_console_relay_take (int *ours, ab_error_t *err)
{
  int master = -1;
  int r = ab_recv_fds (*ours, &master, 1, err);

  close (*ours);
  *ours = -1;
  if (r < 0)
    return ab_error_prefix (err, "process.terminal: the pty master");
  /* Ours alone (the child closed its copy): non-blocking is safe here and
     keeps the relay from blocking on a container that reads no input. */
  ab_set_nonblock (master, true);
  return master;
}

void
ab_caller_tty_find (struct ab_caller_tty *t)
{
  memset (t, 0, sizeof *t);
  t->fd = -1;
  for (int fd = 0; fd <= 2; fd++)
    if (isatty (fd))
      {
        t->fd = fd;
        return;
      }
}

bool
ab_caller_tty_size (const struct ab_caller_tty *t, unsigned short *rows, unsigned short *cols)
{
  struct winsize ws;

  if (t->fd < 0 || ioctl (t->fd, TIOCGWINSZ, &ws) < 0 || ws.ws_row == 0 || ws.ws_col == 0)
    return false;
  *rows = ws.ws_row;
  *cols = ws.ws_col;
  return true;
}

void
ab_caller_tty_resize (const struct ab_caller_tty *t, int master)
{
  struct winsize ws;

  if (t->fd >= 0 && master >= 0 && ioctl (t->fd, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col)
    ioctl (master, TIOCSWINSZ, &ws);
}

int
ab_caller_tty_raw (struct ab_caller_tty *t, ab_error_t *err)
{
  struct termios raw;

  if (t->raw || !isatty (0))
    return 0;
  if (tcgetattr (0, &t->saved) < 0)
    return ab_error_set (err, errno, "process.terminal: tcgetattr on stdin");
  raw = t->saved;
  cfmakeraw (&raw);
  if (tcsetattr (0, TCSANOW, &raw) < 0)
    return ab_error_set (err, errno, "process.terminal: raw mode on stdin");
  t->raw = true;
  return 0;
}

void
ab_caller_tty_restore (struct ab_caller_tty *t)
{
  if (!t->raw)
    return;
  /* TCSANOW, not TCSADRAIN: a reader of the terminal that stopped reading
     must not keep us from restoring it and exiting. */
  while (tcsetattr (0, TCSANOW, &t->saved) < 0 && errno == EINTR)
    ;
  t->raw = false;
}
