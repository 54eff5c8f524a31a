/* process.terminal: a pty from the container's own devpts.  The master goes
 * to the caller over --console-socket (SCM_RIGHTS), the slave becomes the
 * process's stdio and controlling terminal, and /dev/console. */
#ifndef AB_RUNTIME_CONSOLE_H
#define AB_RUNTIME_CONSOLE_H

#include <stdbool.h>

#include "runtime/error.h"
#include "spec/model.h"

/* Connect to the console socket (in the runtime namespace, before clone). */
int ab_console_socket_connect (const char *path, ab_error_t *err);

/* Child, after pivot_root: allocate the pty, send the master on sock, make
   the slave stdio + controlling tty, and with `console` bind it on
   /dev/console (not in a mount namespace joined by path, which agentbox
   leaves as it is). */
int ab_console_setup (int sock, const struct ab_process *p, bool console, ab_error_t *err);

#endif
