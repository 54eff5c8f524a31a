/* The memcpy, memmove and allocator that a musl build of agentbox uses
 * (base/libc-string.c, base/libc-malloc.c), compiled here under glibc with
 * AB_LIBC_MEM_TEST: this program's malloc, free, calloc, realloc, memcpy and
 * memmove are those, for glibc's own calls too.  Checked against byte-wise
 * references: every size and alignment of a copy, overlaps both ways, the
 * classes' edges, the large blocks, alignment, zeroing, a random workload
 * whose blocks carry their contents, threads, and a fork while another
 * thread allocates. */
#include "config.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/unit/tap.h"

/* through pointers, so that the compiler calls the functions under test */
static void *(*volatile cpy) (void *restrict, const void *restrict, size_t) = memcpy;
static void *(*volatile mov) (void *, const void *, size_t) = memmove;

static void
fill (unsigned char *p, size_t n, unsigned seed)
{
  for (size_t i = 0; i < n; i++)
    p[i] = (unsigned char)(seed * 131 + i * 7 + (i >> 8));
}

static void
test_memcpy (void)
{
  static unsigned char src[1200], dst[1200], want[1200];
  int bad = 0;
  for (size_t n = 0; n <= 600 && !bad; n++)
    for (size_t so = 0; so < 16 && !bad; so++)
      for (size_t d = 0; d < 16 && !bad; d++)
        {
          fill (src, sizeof src, (unsigned)(n + so));
          memset (dst, 0xA5, sizeof dst);
          memset (want, 0xA5, sizeof want);
          for (size_t i = 0; i < n; i++)
            want[d + 64 + i] = src[so + i];
          if (cpy (dst + d + 64, src + so, n) != dst + d + 64 || memcmp (dst, want, sizeof dst) != 0)
            {
              bad = 1;
              printf ("# memcpy of %zu bytes, source offset %zu, destination offset %zu\n", n, so, d);
            }
        }
  ok (!bad, "memcpy: every size 0-600 at 16 x 16 alignments, nothing written outside");
}

static void
test_memmove (void)
{
  static unsigned char buf[1400], want[1400], tmp[1400];
  int bad = 0;
  for (size_t n = 0; n <= 600 && !bad; n++)
    for (int shift = -40; shift <= 40 && !bad; shift++)
      {
        size_t from = 300, to = (size_t)((long)from + shift);
        fill (buf, sizeof buf, (unsigned)n);
        memcpy (want, buf, sizeof buf);
        for (size_t i = 0; i < n; i++)
          tmp[i] = want[from + i];
        for (size_t i = 0; i < n; i++)
          want[to + i] = tmp[i];
        if (mov (buf + to, buf + from, n) != buf + to || memcmp (buf, want, sizeof buf) != 0)
          {
            bad = 1;
            printf ("# memmove of %zu bytes by %d\n", n, shift);
          }
      }
  ok (!bad, "memmove: every size 0-600, overlapping forward and backward by up to 40 bytes");
}

static void
test_classes (void)
{
  static const size_t sizes[] = { 0,    1,    15,   16,   17,    127,   128,   129,   159,   160,   161,
                                  1023, 1024, 1025, 4096, 40959, 40960, 40961, 65535, 65536, 65537, 300000 };
  int bad = 0;
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
    {
      size_t n = sizes[i];
      unsigned char *p = malloc (n);
      if (p == NULL || (uintptr_t)p % 16 != 0 || malloc_usable_size (p) < n)
        {
          bad = 1;
          printf ("# malloc (%zu): %p, usable %zu\n", n, (void *)p, p ? malloc_usable_size (p) : 0);
        }
      else
        memset (p, 0x5A, n);
      free (p);
    }
  ok (!bad, "malloc: each class edge and large block is 16-aligned, as big as asked, writable");
  free (NULL);
  ok (1, "free (NULL) returns");
}

static void
test_calloc_realloc (void)
{
  unsigned char *p = malloc (100);
  memset (p, 0xFF, 100);
  free (p);
  unsigned char *q = calloc (1, 100);
  int zero = 1;
  for (int i = 0; i < 100; i++)
    zero &= q[i] == 0;
  ok (q == p && zero, "calloc zeroes a slot that free gave back (the same slot)");
  free (q);
  volatile size_t huge = SIZE_MAX / 2;
  errno = 0;
  ok (calloc (huge, 3) == NULL && errno == ENOMEM, "calloc: an overflowing product is ENOMEM");
  errno = 0;
  ok (malloc (huge * 2 - 7) == NULL && errno == ENOMEM, "malloc: a size near SIZE_MAX is ENOMEM");

  /* small -> small -> large -> larger -> small, contents kept */
  static const size_t steps[] = { 10, 100, 3000, 70000, 500000, 200, 5 };
  unsigned char *r = NULL;
  size_t have = 0;
  int kept = 1;
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
    {
      size_t n = steps[i], keep = have < n ? have : n;
      r = realloc (r, n);
      for (size_t j = 0; j < keep; j++)
        kept &= r[j] == (unsigned char)(j * 13);
      for (size_t j = 0; j < n; j++)
        r[j] = (unsigned char)(j * 13);
      have = n;
    }
  free (r);
  ok (kept, "realloc keeps the contents across small, large and back");
}

static void
test_aligned (void)
{
  int bad = 0;
  for (size_t a = 1; a <= 8192; a *= 2)
    {
      unsigned char *p = aligned_alloc (a, 100);
      if (p == NULL || (uintptr_t)p % a != 0 || malloc_usable_size (p) < 100)
        bad = 1;
      else
        memset (p, 1, 100);
      void *q = realloc (p, 5000);
      if (q == NULL || ((unsigned char *)q)[99] != 1)
        bad = 1;
      free (q);
    }
  ok (!bad, "aligned_alloc: alignments 1-8192 hold, usable, reallocated and freed");
  void *p = NULL;
  ok (posix_memalign (&p, 3, 10) == EINVAL && p == NULL, "posix_memalign: a bad alignment is EINVAL");
  ok (posix_memalign (&p, 64, 10) == 0 && (uintptr_t)p % 64 == 0, "posix_memalign: 64");
  free (p);
}

/* a random workload: each block holds its own size and a byte pattern */
struct blk
{
  unsigned char *p;
  size_t n;
  unsigned char tag;
};

static int
churn (unsigned seed, int rounds)
{
  enum { SLOTS = 512 };
  static __thread struct blk b[SLOTS];
  int bad = 0;
  for (int r = 0; r < rounds; r++)
    {
      seed = seed * 1103515245 + 12345;
      struct blk *x = &b[(seed >> 8) % SLOTS];
      if (x->p != NULL)
        for (size_t i = 0; i < x->n; i++)
          bad |= x->p[i] != x->tag;
      size_t n = (seed >> 16) % 8 == 0 ? (seed >> 4) % 100000 : (seed >> 4) % 600;
      if ((seed >> 12) % 3 == 0)
        {
          free (x->p);
          x->p = NULL;
          x->n = 0;
          continue;
        }
      unsigned char *p = (seed >> 14) % 2 ? realloc (x->p, n) : (free (x->p), malloc (n));
      if (p == NULL && n > 0)
        return 1;
      if (p != NULL && (seed >> 14) % 2)
        for (size_t i = 0; i < (n < x->n ? n : x->n); i++)
          bad |= p[i] != x->tag;
      x->p = p;
      x->n = n;
      x->tag = (unsigned char)(seed >> 24);
      memset (p, x->tag, n);
    }
  for (int i = 0; i < SLOTS; i++)
    {
      free (b[i].p);
      b[i].p = NULL;
    }
  return bad;
}

static void *
churn_thread (void *arg)
{
  return (void *)(intptr_t)churn ((unsigned)(uintptr_t)arg, 60000);
}

static volatile int stop;

static void *
busy_thread (void *arg)
{
  (void)arg;
  while (!stop)
    free (malloc (64));
  return NULL;
}

static void
test_threads_fork (void)
{
  ok (churn (1, 200000) == 0, "a random workload of 200000 steps: every block keeps its contents");
  pthread_t t[4];
  int bad = 0;
  for (int i = 0; i < 4; i++)
    pthread_create (&t[i], NULL, churn_thread, (void *)(uintptr_t)(i + 7));
  for (int i = 0; i < 4; i++)
    {
      void *r;
      pthread_join (t[i], &r);
      bad |= r != NULL;
    }
  ok (!bad, "four threads at once: every block keeps its contents");

  pthread_t busy;
  pthread_create (&busy, NULL, busy_thread, NULL);
  int hung = 0;
  for (int i = 0; i < 50; i++)
    {
      pid_t pid = fork ();
      if (pid == 0)
        {
          alarm (5);
          free (malloc (64));
          _exit (0);
        }
      int st = 0;
      waitpid (pid, &st, 0);
      hung |= !WIFEXITED (st) || WEXITSTATUS (st) != 0;
    }
  stop = 1;
  pthread_join (busy, NULL);
  ok (!hung, "50 forks while another thread allocates: each child allocates and exits");
}

int
main (void)
{
  test_memcpy ();
  test_memmove ();
  test_classes ();
  test_calloc_realloc ();
  test_aligned ();
  test_threads_fork ();
  return tap_done ();
}
