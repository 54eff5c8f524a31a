/* The ranges layout of a seccomp program (runtime/seccomp-internal.h):
 * the syscalls a profile allows outright, as a binary search over their
 * number ranges, in front of libseccomp's tree of every other rule.
 *
 * Installing a filter costs the kernel time in proportion to its length
 * (the JIT, and seccomp_cache_prepare's emulation of it per syscall
 * number).  The default profile allows ~280 syscalls outright, in 36
 * ranges: its tree of 433 instructions becomes 214 this way.  The verdict
 * of every syscall, architecture and argument is libseccomp's for the
 * whole profile: tests/unit/test-seccomp-layout.c compares the two
 * programs with the linear layout over every syscall number and a spread
 * of arguments, and checks the kernel against its interpreter.
 *
 * ab_seccomp_compile, at the end, chooses between this layout and
 * libseccomp's (runtime/seccomp.c). */
#include "config.h"

#include <linux/seccomp.h>
#include <seccomp.h>
#include <stddef.h>

#include "runtime/seccomp.h"
#include "runtime/seccomp-internal.h"
#include "base/util.h"

static void
rest_freep (struct ab_seccomp_prog *p)
{
  ab_seccomp_prog_free (p);
}

/* The native syscalls a rule allows outright (SCMP_ACT_ALLOW, no argument)
   and no rule that matters names otherwise (a rule with arguments, another
   action; one with the default action is a no-op, add_syscalls).  Their
   verdict is ALLOW whatever the arguments. */
static int
plain_allowed (const struct ab_seccomp *s, uint32_t default_action, struct ab_nr_set *plain, ab_error_t *err)
{
  struct ab_nr_set other = { 0 };

  memset (plain, 0, sizeof *plain);
  for (size_t i = 0; i < s->n_syscalls; i++)
    {
      const struct ab_seccomp_rule *rule = &s->syscalls[i];
      uint32_t action;
      bool outright;

      if (ab_seccomp_map_action (rule->action, rule->errno_ret_set, rule->errno_ret, "linux.seccomp.syscalls",
                                 "action", "errnoRet", &action, err)
          < 0)
        return -1;
      if (action == default_action)
        continue;
      outright = action == SCMP_ACT_ALLOW && rule->n_args == 0;
      for (size_t j = 0; j < rule->names.n; j++)
        {
          int nr = seccomp_syscall_resolve_name (rule->names.v[j]);
          ab_nr_set_add (outright ? plain : &other, nr);
        }
    }
  for (size_t w = 0; w < AB_ARRAY_SIZE (plain->bits); w++)
    plain->bits[w] &= ~other.bits[w];
  return 0;
}

struct nr_range
{
  uint32_t lo, hi;
};

/* The instructions a search over n ranges takes (emit_search). */
static size_t
search_len (size_t n)
{
  return n == 1 ? 2 : 1 + search_len (n / 2) + search_len (n - n / 2);
}

/* A binary search over the sorted ranges r[0..n) of the number in A,
   written at insns[pc..): a number in one of them jumps to `allow`,
   anything else to `rest` (both after the search).  Every jump is
   forward and shorter than 256 (the caller checks the length). */
static void
emit_search (struct sock_filter *insns, size_t pc, const struct nr_range *r, size_t n, size_t allow,
             size_t rest)
{
  size_t left = n / 2;

  if (n == 1)
    {
      insns[pc]
          = (struct sock_filter)BPF_JUMP (BPF_JMP | BPF_JGE | BPF_K, r[0].lo, 0, (uint8_t)(rest - pc - 1));
      insns[pc + 1] = (struct sock_filter)BPF_JUMP (BPF_JMP | BPF_JGT | BPF_K, r[0].hi,
                                                    (uint8_t)(rest - pc - 2), (uint8_t)(allow - pc - 2));
      return;
    }
  /* At or above the first range of the right half: the right half. */
  insns[pc]
      = (struct sock_filter)BPF_JUMP (BPF_JMP | BPF_JGE | BPF_K, r[left].lo, (uint8_t)search_len (left), 0);
  emit_search (insns, pc + 1, r, left, allow, rest);
  emit_search (insns, pc + 1 + search_len (left), r + left, n - left, allow, rest);
}

/* The ranges layout: the native syscalls allowed outright, as a binary
   search over their ranges, in front of libseccomp's tree of every other
   rule:

     A = arch; not the native one        -> the tree
     A = nr;   x32 bit (0x40000000) set  -> the tree
     search: A in an allowed range       -> ALLOW, else the tree
     ALLOW
     the tree (without the syscalls the ranges allow)

   Where the tree goes, its verdict is libseccomp's for the whole profile:
   a syscall it no longer names is one the ranges took, so the tree never
   sees it on the native ABI.  Applies to a profile for the native
   architecture alone (x86_64, aarch64) with a default other than ALLOW,
   and (unless `always`) only where it shortens the program: the tree
   spends at least one comparison on each syscall the ranges take, the
   search two instructions per range and five more.  1 when it does not
   apply (or fails: the tree's compile then reports). */
static int
compile_ranges (const struct ab_seccomp *s, bool always, struct ab_seccomp_prog *out)
{
  _cleanup_ (rest_freep) struct ab_seccomp_prog rest = { 0 };
  struct nr_range r[AB_SECCOMP_NR_SET_MAX / 2];
  struct ab_nr_set plain;
  uint32_t native = seccomp_arch_native (), default_action;
  size_t n = 0, head = 4, len;
  ab_error_t ignored = { 0 }; /* any error repeats in the tree's compile, which reports it */

  memset (out, 0, sizeof *out);
  if (native != SCMP_ARCH_X86_64 && native != SCMP_ARCH_AARCH64)
    return 1;
  for (size_t i = 0; i < s->architectures.n; i++)
    if (ab_seccomp_arch_token (s->architectures.v[i]) != native)
      return 1;
  if (ab_seccomp_map_action (s->default_action, s->default_errno_ret_set, s->default_errno_ret,
                             "linux.seccomp", "defaultAction", "defaultErrnoRet", &default_action, &ignored)
          < 0
      || default_action == SCMP_ACT_ALLOW || plain_allowed (s, default_action, &plain, &ignored) < 0)
    return 1;
  size_t taken = 0;
  for (uint32_t nr = 0; nr < AB_SECCOMP_NR_SET_MAX; nr++)
    if (ab_nr_set_has (&plain, (int)nr))
      {
        taken++;
        if (n > 0 && r[n - 1].hi + 1 == nr)
          r[n - 1].hi = nr;
        else
          r[n++] = (struct nr_range){ nr, nr };
      }
  /* Every jump to the tree must fit in 8 bits. */
  if (n == 0 || head + search_len (n) + 1 > 255 || (!always && taken <= head + search_len (n) + 1))
    return 1;
  if (ab_seccomp_compile_libseccomp (s, AB_SECCOMP_TREE, &plain, &rest, &ignored) < 0)
    return 1;
  len = head + search_len (n) + 1 + rest.len;
  if (len > AB_SECCOMP_MAX_INSNS)
    return 1;

  size_t allow = head + search_len (n), tree = allow + 1;
  out->insns = xcalloc (len, sizeof *out->insns);
  out->insns[0]
      = (struct sock_filter)BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, arch));
  out->insns[1] = (struct sock_filter)BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, native, 0, (uint8_t)(tree - 2));
  out->insns[2] = (struct sock_filter)BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr));
  out->insns[3]
      = (struct sock_filter)BPF_JUMP (BPF_JMP | BPF_JGE | BPF_K, 0x40000000, (uint8_t)(tree - 4), 0);
  emit_search (out->insns, head, r, n, allow, tree);
  out->insns[allow] = (struct sock_filter)BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  memcpy (out->insns + tree, rest.insns, rest.len * sizeof *rest.insns);
  out->len = (unsigned short)len;
  out->flags = rest.flags;
  out->skipped = rest.skipped;
  memset (&rest.skipped, 0, sizeof rest.skipped);
  return 0;
}

/* The tree.  Installing a filter costs the kernel, under the caller's
   siglock, one emulation of the program per syscall number and
   architecture (seccomp_cache_prepare, the always-allow bitmap), then a JIT
   pass over it.  A linear allowlist of ~280 names makes every emulation walk
   up to all 358 instructions: 0.41 ms per seccomp(2) on this VM, on the
   critical path of every run and exec.  The tree's 433 instructions take
   0.20 ms (strace -T, the default profile).  The verdicts do not change:
   test-seccomp-layout compares both layouts for every syscall number,
   architecture and a spread of argument values.  The tree is longer (about
   a fifth here); a profile whose tree passes the kernel's 4096-instruction
   limit is compiled linear instead, which may still fit.

   Shorter still, where it applies (the native architecture alone, a
   default that is not allow): the ranges layout (compile_ranges, above), whose
   search over the 36 ranges of the ~280 syscalls allowed outright replaces
   one comparison per syscall.  The default profile's program: 433 -> 214
   instructions; seccomp(2) in a rootless run 0.22 -> 0.15 ms (perf trace,
   medians of 40).  Installed where it shortens the program (a small
   profile's ranges add more than they take out of its tree); the test
   compares the ranges with the linear layout in the same way, and checks
   that the one installed is the shorter. */
int
ab_seccomp_compile (const struct ab_seccomp *s, struct ab_seccomp_prog *out, ab_error_t *err)
{
  ab_error_t tree_err = { 0 };

  if (compile_ranges (s, false, out) == 0)
    return 0;
  if (ab_seccomp_compile_libseccomp (s, AB_SECCOMP_TREE, NULL, out, &tree_err) == 0)
    return 0;
  /* Any other failure repeats in the linear compile, which reports it. */
  return ab_seccomp_compile_libseccomp (s, AB_SECCOMP_LINEAR, NULL, out, err);
}
