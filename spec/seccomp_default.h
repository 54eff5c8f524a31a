/* The seccomp profile of agentbox's default configuration: an allowlist of
 * the system calls that ordinary programs (shells, coreutils, python, node,
 * gcc, make, git, pip/npm) make on x86_64 and aarch64, everything else
 * failing with EPERM.  Only the native architecture is listed, so a syscall
 * through a foreign ABI (int 0x80, x32) kills the process.
 *
 * This module only writes JSON; runtime/seccomp.c compiles it to BPF. */
#ifndef AB_SPEC_SECCOMP_DEFAULT_H
#define AB_SPEC_SECCOMP_DEFAULT_H

#include "base/gen.h"

/* The architecture the profile is written for ("SCMP_ARCH_X86_64" or
   "SCMP_ARCH_AARCH64"), chosen at compile time. */
extern const char ab_seccomp_default_arch[];

/* Emit the value of `linux.seccomp` (an object) at the current position of g. */
void ab_seccomp_default_gen (struct ab_gen *g);

#endif
