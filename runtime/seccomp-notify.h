/* Seccomp user notification (config-linux.md, linux.seccomp.listenerPath):
 * the agent at listenerPath gets the filter's listener fd and the container
 * process state.
 *
 * The order, and why.  The filter is loaded in the container process, last
 * before execve (runtime/process.c); seccomp(2) returns the listener's fd
 * there.  The process sends it to whoever started it (`start`, or the
 * foreground run or exec) over the setup socket, in a single sendmsg with
 * the AB_SYNC_SECCOMP message (validate refuses NOTIFY for sendmsg: it
 * would wait for an agent that cannot have the fd yet), and waits.  The
 * starter connects to listenerPath, sends the container process state JSON
 * with the fd (SCM_RIGHTS, in the first and only sendmsg), closes the
 * connection, and only then answers AB_SYNC_SECCOMP_DONE: the program is
 * never executed under a filter whose listener no agent holds.  When the
 * agent cannot be reached (no socket, refused, no accept within
 * AB_SECCOMP_AGENT_TIMEOUT_S, a short send), the starter kills the process
 * and reports one line naming listenerPath. */
#ifndef AB_RUNTIME_SECCOMP_NOTIFY_H
#define AB_RUNTIME_SECCOMP_NOTIFY_H

#include <sys/types.h>

#include "base/error.h"
#include "spec/model.h"

/* How long connecting to the agent and sending to it may block (a listener
   whose backlog is full, or that stopped reading). */
#define AB_SECCOMP_AGENT_TIMEOUT_S 3

/* Connect to sc->listener_path and send the container process state
   (state_json, len bytes: `fds` ["seccompFd"], `pid` the host pid of the
   process that loaded the filter, `metadata` listenerMetadata, `state`;
   made by the lifecycle, which owns the container's state) with
   `listener` attached.  The connection is closed either way. */
int ab_seccomp_agent_send (const struct ab_seccomp *sc, const char *state_json, size_t len, int listener,
                           ab_error_t *err);

#endif
