/* linux.seccomp -> a BPF program, built with libseccomp in the parent before
 * clone (so the child only makes one syscall to install it, right before
 * execve, with nothing left to allocate or fail). */
#ifndef AB_RUNTIME_SECCOMP_H
#define AB_RUNTIME_SECCOMP_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/filter.h>

#include "base/error.h"
#include "spec/model.h"

struct ab_seccomp_prog
{
  struct sock_filter *insns;
  unsigned short len;
  unsigned int flags;    /* SECCOMP_FILTER_FLAG_* for seccomp(2) */
  struct ab_strv skipped; /* syscall names libseccomp does not know (skipped, as runc does) */
};

/* How libseccomp lays the syscall checks out (SCMP_FLTATR_CTL_OPTIMIZE).
   Both give the same verdict for every syscall and argument; the tree is
   what the runtime installs (see ab_seccomp_compile). */
enum ab_seccomp_layout
{
  AB_SECCOMP_LINEAR = 1, /* one comparison after another, in priority order */
  AB_SECCOMP_TREE = 2,   /* a binary search over the syscall numbers */
};

/* Bumped whenever the program compiled for a profile changes (the layout,
   the attributes); it is part of the compiled-program cache's key. */
#define AB_SECCOMP_SCHEME 3

/* Compile `s`.  Errors name the JSON path (linux.seccomp.syscalls[2].action).
   SCMP_ACT_NOTIFY rules make a program that asks seccomp(2) for a listener
   (SECCOMP_FILTER_FLAG_NEW_LISTENER); NOTIFY as the default is refused. */
int ab_seccomp_compile (const struct ab_seccomp *s, struct ab_seccomp_prog *out, ab_error_t *err);

/* The same through the compiled-program cache (runtime/cache.h, outside
   the state root).  Unknown syscall names are only listed on a miss. */
int ab_seccomp_compile_cached (const struct ab_seccomp *s, struct ab_seccomp_prog *out, ab_error_t *err);

/* Install the program in the calling thread: seccomp(SECCOMP_SET_MODE_FILTER,
   flags, prog).  Async-signal-safe: suitable between clone and execve.
   Without no_new_privs this needs CAP_SYS_ADMIN in the current user namespace.
   Returns 0, or for a program that listens (ab_seccomp_prog_listens) the
   listener's fd, close-on-exec, whatever its number. */
int ab_seccomp_install (const struct ab_seccomp_prog *p, ab_error_t *err);

bool ab_seccomp_prog_listens (const struct ab_seccomp_prog *p);

void ab_seccomp_prog_free (struct ab_seccomp_prog *p);

/* Flags the running kernel accepts (for `features` supportedFlags). */
bool ab_seccomp_flag_supported (unsigned ab_flag);

#endif
