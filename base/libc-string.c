/* memcpy and memmove of a build on a C library other than glibc (musl).
 * AB_LIBC_MEM_TEST compiles them under glibc for tests/unit/test-libc-mem. */
#include "config.h"

#if defined AB_LIBC_COMPAT || defined AB_LIBC_MEM_TEST

#include <stdint.h>
#include <string.h>

/* musl's x86_64 memcpy starts every copy with `rep movsq`, whose start-up
 * costs tens of cycles: in a hardened start agentbox makes about 21 000
 * copies, most of 1 to 20 bytes (yajl's generator appends token by token,
 * stdio writes piece by piece), and they took 11 % of its CPU.  Small copies
 * as two overlapping loads and stores, large ones with `rep movsb`, which
 * the CPUs that have ERMS run at full speed.  __builtin_memcpy of a constant
 * size compiles to moves, not to a call of this function, and no loop here
 * may become one (AB_NO_LIBCALL). */
#define AB_NO_LIBCALL __attribute__ ((optimize ("no-tree-loop-distribute-patterns")))

/* 16 bytes, one unaligned vector move */
struct ab_16
{
  uint64_t lo, hi;
};

/* T-sized N <= n <= 2 N bytes: the first and the last N, both loaded before
 * either is stored (so that an overlapping memmove is right too) */
#define AB_COPY_ENDS(T)                                                                                    \
  do                                                                                                       \
    {                                                                                                      \
      T first_, last_;                                                                                     \
      __builtin_memcpy (&first_, s, sizeof first_);                                                        \
      __builtin_memcpy (&last_, s + n - sizeof last_, sizeof last_);                                       \
      __builtin_memcpy (d, &first_, sizeof first_);                                                        \
      __builtin_memcpy (d + n - sizeof last_, &last_, sizeof last_);                                       \
    }                                                                                                      \
  while (0)

static AB_NO_LIBCALL void
copy_forward (unsigned char *d, const unsigned char *s, size_t n)
{
  if (n >= 16 && n <= 32)
    AB_COPY_ENDS (struct ab_16);
  else if (n >= 8 && n < 16)
    AB_COPY_ENDS (uint64_t);
  else if (n >= 4 && n < 8)
    AB_COPY_ENDS (uint32_t);
  else if (n >= 2 && n < 4)
    AB_COPY_ENDS (uint16_t);
  else if (n == 1)
    *d = *s;
  else if (n == 0)
    return;
  else
    {
#if defined(__x86_64__)
      __asm__ volatile ("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
#else
      for (; n >= 8; n -= 8, d += 8, s += 8)
        {
          uint64_t a;
          __builtin_memcpy (&a, s, 8);
          __builtin_memcpy (d, &a, 8);
        }
      while (n-- > 0)
        *d++ = *s++;
#endif
    }
}

void *
memcpy (void *restrict dst, const void *restrict src, size_t n)
{
  copy_forward (dst, src, n);
  return dst;
}

/* musl's memmove jumps into its memcpy, so it comes along: up to 32 bytes
 * every load precedes every store, and a forward copy is right unless dst
 * starts inside src. */
AB_NO_LIBCALL void *
memmove (void *dst, const void *src, size_t n)
{
  unsigned char *d = dst;
  const unsigned char *s = src;
  if (n <= 32 || (uintptr_t)d - (uintptr_t)s >= n)
    copy_forward (d, s, n);
  else
    while (n-- > 0)
      d[n] = s[n];
  return dst;
}

#endif
