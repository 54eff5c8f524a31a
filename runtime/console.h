/* process.terminal: a pty from the container's own devpts.  The master goes
 * to the caller over --console-socket (SCM_RIGHTS), the slave becomes the
 * process's stdio and controlling terminal, and /dev/console. */
#ifndef AB_RUNTIME_CONSOLE_H
#define AB_RUNTIME_CONSOLE_H

#include "base/error.h"
#include "spec/model.h"

/* Connect to the console socket (in the runtime namespace, before clone). */
int ab_console_socket_connect (const char *path, ab_error_t *err);

/* Child, after pivot_root: allocate the pty, send the master on sock, make
   the slave stdio + controlling tty, bind it on /dev/console. */
int ab_console_setup (int sock, const struct ab_process *p, ab_error_t *err);

#endif
