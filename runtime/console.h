/* process.terminal: a pty from the container's own devpts.  The master goes
 * to the caller over --console-socket (SCM_RIGHTS), the slave becomes the
 * process's stdio and controlling terminal, and /dev/console.
 *
 * A foreground run or exec without --console-socket relays the terminal
 * itself, as runc does: a socketpair stands in for the console socket, the
 * supervisor takes the master and copies it to and from its own stdio,
 * with the caller's terminal (if stdin is one) in raw mode and its window
 * size following the caller's. */
#ifndef AB_RUNTIME_CONSOLE_H
#define AB_RUNTIME_CONSOLE_H

#include <stdbool.h>
#include <termios.h>

#include "base/error.h"
#include "spec/model.h"

/* Connect to the AF_UNIX socket an option names (--console-socket,
   --pidfd-socket; errors name opt), in the runtime's namespaces. */
int ab_fd_socket_connect (const char *path, const char *opt, ab_error_t *err);

/* Child, after pivot_root: allocate the pty, send the master on sock, make
   the slave stdio + controlling tty; the container's init (dev_console)
   also binds it on /dev/console, an exec'd process does not (as runc), and
   nothing is bound in a mount namespace joined by path, which agentbox
   leaves as it is. */
int ab_console_setup (int sock, const struct ab_process *p, bool dev_console, ab_error_t *err);

/* The relay: a connected socketpair.  Returns the end that goes to the
   child (as the console socket); *ours is the end the master arrives on. */
int ab_console_relay_pair (int *ours, ab_error_t *err);
/* The master the child sent on *ours (it did before it reported created or
   started, so it is queued); closes *ours.  Returns the fd. */
int ab_console_relay_take (int *ours, ab_error_t *err);

/* The caller's terminal: the first of our stdin, stdout and stderr that is
   one (fd -1: none), as runc sizes the pty from it. */
struct ab_caller_tty
{
  int fd;
  bool raw;              /* stdin was put in raw mode: restore `saved` */
  struct termios saved;
};
void ab_caller_tty_find (struct ab_caller_tty *t);
/* The caller's window size, if it has a terminal. */
bool ab_caller_tty_size (const struct ab_caller_tty *t, unsigned short *rows, unsigned short *cols);
/* Copy the caller's window size to the pty master (start and SIGWINCH);
   the kernel signals the container's foreground group when it changed. */
void ab_caller_tty_resize (const struct ab_caller_tty *t, int master);
/* Raw mode on our stdin when it is a terminal: keys (^C, ^Z, ^D) reach the
   container's pty, whose own line discipline acts on them. */
int ab_caller_tty_raw (struct ab_caller_tty *t, ab_error_t *err);
/* Put the caller's terminal back as it was (idempotent). */
void ab_caller_tty_restore (struct ab_caller_tty *t);

#endif
