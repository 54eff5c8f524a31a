/* The parent/child protocol of container setup (docs/protocol.md).
 *
 * One SOCK_SEQPACKET socketpair per container process: message boundaries
 * are kept, and the child's end is close-on-exec, so the parent sees EOF
 * when the user program was executed or the child died: AB_SYNC_EXEC, the
 * child's last message before its execve, tells the two apart.  Errors
 * raised in the child travel as typed messages and are printed by the
 * parent: they reach the caller's stderr, --log and the result record, never
 * only the child's stderr. */
#ifndef AB_RUNTIME_SYNC_H
#define AB_RUNTIME_SYNC_H

#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"

enum ab_sync_type
{
  AB_SYNC_ERROR = 1,       /* child -> parent: setup failed; payload is an ab_error_t */
  AB_SYNC_IDS_DONE,        /* parent -> child: uid/gid maps written */
  AB_SYNC_MOUNTS_DONE,     /* child -> parent: mounts done, run prestart/createRuntime hooks */
  AB_SYNC_HOOKS_DONE,      /* parent -> child */
  AB_SYNC_CGROUPS_DONE,    /* parent -> child: v1 cgroups joined, network configured */
  AB_SYNC_CREATED,         /* child -> parent: ready, blocked before exec */
  AB_SYNC_CREATED_ACK,     /* parent -> child: state recorded; stop dying with the parent */
  AB_SYNC_START,           /* parent or `start` -> child: execute the user program */
  AB_SYNC_STARTED,         /* child -> starter: startContainer hooks ran; execve follows */
  AB_SYNC_PID,             /* joiner -> parent: pid of the container process */
  AB_SYNC_SECCOMP,         /* child -> starter: the seccomp listener's fd rides along (SCM_RIGHTS) */
  AB_SYNC_SECCOMP_DONE,    /* starter -> child: the agent at listenerPath has it; go on */
  AB_SYNC_EXEC,            /* child -> starter: execve next (EOF before it: the child died) */
};

struct ab_sync_msg
{
  uint32_t type;
  int32_t value; /* a pid for AB_SYNC_PID */
  ab_error_t err;
};

/* Send/receive one message; EINTR retried.  ab_sync_recv fails with EPIPE on
   EOF (class AB_EC_SETUP, "the container process exited during setup"). */
int ab_sync_send (int fd, uint32_t type, int32_t value, ab_error_t *err);
int ab_sync_send_error (int fd, const ab_error_t *e);
int ab_sync_recv (int fd, struct ab_sync_msg *m, ab_error_t *err);
/* Receive and require `type`; an AB_SYNC_ERROR from the peer is copied into
   *err (so the child's message is what the caller sees). */
int ab_sync_expect (int fd, uint32_t type, struct ab_sync_msg *m, ab_error_t *err);

/* A message with one fd attached (SCM_RIGHTS), in a single sendmsg; and
   the receiving side, *passed = the fd (close-on-exec) or -1 if none came. */
int ab_sync_send_fd (int fd, uint32_t type, int passfd, ab_error_t *err);
int ab_sync_recv_fd (int fd, struct ab_sync_msg *m, int *passed, ab_error_t *err);

/* One sendmsg of buf with n (0..8) fds attached (SCM_RIGHTS), MSG_NOSIGNAL,
   EINTR retried; what sendmsg returned.  Allocates nothing. */
ssize_t ab_sendmsg_fds (int sock, const void *buf, size_t len, const int *fds, int n);

/* Pass file descriptors with SCM_RIGHTS along a one-byte message. */
int ab_send_fds (int sock, const int *fds, int n, ab_error_t *err);
int ab_recv_fds (int sock, int *fds, int n, ab_error_t *err);

#endif
