/* The allocator of a build on a C library other than glibc (musl).
 *
 * musl's mallocng gives memory back to the kernel as soon as a group of
 * slots empties: a hardened rootless start made 30 mmap, 28 munmap and 6
 * madvise calls more than the glibc build, and each fresh mapping faults
 * its pages in again (docs/benchmarks.md, "Without glibc's start-up").
 * agentbox's processes are short (a start, a command) or hold a bounded
 * working set (the supervisor, the MCP server), so this one keeps what it
 * was given:
 *
 *  - sizes up to AB_SMALL_MAX fall into size classes (16-byte steps to 128,
 *    then four per power of two); a class's free slots form a list, reused
 *    last-in first-out, and new slots are cut from 256 KiB regions that are
 *    never unmapped;
 *  - larger blocks are mappings of their own, unmapped by free and moved by
 *    mremap in realloc;
 *  - every block has a 16-byte header in front: the class, or the mapping's
 *    length, or for an over-aligned block the distance back to the block it
 *    was cut from.  User pointers are 16-byte aligned.
 *
 * One mutex serialises it; fork() takes it first (pthread_atfork), so the
 * child of a fork never finds it held by a thread it does not have.
 * AB_LIBC_MEM_TEST compiles it under glibc for tests/unit/test-libc-mem. */
#include "config.h"

#if defined AB_LIBC_COMPAT || defined AB_LIBC_MEM_TEST

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define AB_HDR 16
#define AB_SMALL_MAX 65536
#define AB_REGION (256 * 1024)
#define AB_TAG_LARGE ((size_t)-1)
#define AB_TAG_ALIGNED ((size_t)-2)

struct hdr
{
  size_t size; /* class size, mapping length, or the distance back */
  size_t tag;  /* class index, AB_TAG_LARGE or AB_TAG_ALIGNED */
};

struct slot
{
  struct slot *next;
};

/* 16..128 by 16, then four steps per power of two to 65536 */
#define AB_QUARTERS(p) (p) + (p) / 4, (p) + (p) / 2, (p) + 3 * (p) / 4, 2 * (p)
static const size_t class_size[] = {
  16, 32, 48, 64, 80, 96, 112, 128, AB_QUARTERS (128), AB_QUARTERS (256), AB_QUARTERS (512),
  AB_QUARTERS (1024), AB_QUARTERS (2048), AB_QUARTERS (4096), AB_QUARTERS (8192), AB_QUARTERS (16384),
  AB_QUARTERS (32768),
};
#define AB_NCLASS (sizeof class_size / sizeof class_size[0])
static struct slot *free_list[AB_NCLASS];
static unsigned char *bump, *bump_end;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int atfork_done;

static void
lock_take (void)
{
  pthread_mutex_lock (&lock);
}

static void
lock_give (void)
{
  pthread_mutex_unlock (&lock);
}

/* once, at the first allocation (before any thread): pthread_atfork
 * allocates, so the flag is set first and the lock not held */
static void
atfork_once (void)
{
  if (__atomic_exchange_n (&atfork_done, 1, __ATOMIC_ACQ_REL) == 0)
    pthread_atfork (lock_take, lock_give, lock_give);
}

static struct hdr *
hdr_of (void *p)
{
  return (struct hdr *)((unsigned char *)p - AB_HDR);
}

static void *
no_memory (void)
{
  errno = ENOMEM;
  return NULL;
}

/* n bytes and a header in whole pages; false if that overflows */
static bool
pages_for (size_t n, size_t *len)
{
  if (n > SIZE_MAX - AB_HDR - 4096)
    return false;
  *len = (n + AB_HDR + 4095) & ~(size_t)4095;
  return true;
}

/* fresh zeroed pages; NULL with ENOMEM */
static void *
map_pages (size_t len)
{
  void *r = mmap (NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return r == MAP_FAILED ? no_memory () : r;
}

static size_t
class_of (size_t n)
{
  if (n <= 128)
    return n == 0 ? 0 : (n - 1) / 16;
  size_t lo = 8, hi = AB_NCLASS - 1;
  while (lo < hi)
    {
      size_t mid = (lo + hi) / 2;
      if (class_size[mid] >= n)
        hi = mid;
      else
        lo = mid + 1;
    }
  return lo;
}

static void *
large_alloc (size_t n)
{
  size_t len;
  struct hdr *h;
  if (!pages_for (n, &len))
    return no_memory ();
  if ((h = map_pages (len)) == NULL)
    return NULL;
  h->size = len;
  h->tag = AB_TAG_LARGE;
  return (unsigned char *)h + AB_HDR;
}

/* a slot of class C, the lock held */
static void *
small_alloc (size_t c)
{
  size_t need = class_size[c] + AB_HDR;
  struct hdr *h;
  if (free_list[c] != NULL)
    {
      struct slot *s = free_list[c];
      free_list[c] = s->next;
      return s;
    }
  if (bump == NULL || (size_t)(bump_end - bump) < need)
    {
      size_t len = need > AB_REGION ? need : AB_REGION;
      unsigned char *r = map_pages (len);
      if (r == NULL)
        return NULL;
      bump = r;
      bump_end = bump + len;
    }
  h = (struct hdr *)bump;
  bump += need;
  h->size = class_size[c];
  h->tag = c;
  return (unsigned char *)h + AB_HDR;
}

/* malloc's body, apart so that calloc's malloc-then-memset is not turned
 * into a call of calloc by the compiler */
static void *
alloc (size_t n)
{
  if (__builtin_expect (!__atomic_load_n (&atfork_done, __ATOMIC_ACQUIRE), 0))
    atfork_once ();
  if (n > AB_SMALL_MAX)
    return large_alloc (n);
  lock_take ();
  void *p = small_alloc (class_of (n));
  lock_give ();
  return p;
}

void *
malloc (size_t n)
{
  return alloc (n);
}

void
free (void *p)
{
  if (p == NULL)
    return;
  struct hdr *h = hdr_of (p);
  if (h->tag == AB_TAG_ALIGNED)
    {
      free ((unsigned char *)p - h->size);
      return;
    }
  if (h->tag == AB_TAG_LARGE)
    {
      munmap (h, h->size);
      return;
    }
  struct slot *s = p;
  lock_take ();
  s->next = free_list[h->tag];
  free_list[h->tag] = s;
  lock_give ();
}

size_t
malloc_usable_size (void *p)
{
  if (p == NULL)
    return 0;
  struct hdr *h = hdr_of (p);
  if (h->tag == AB_TAG_ALIGNED)
    return malloc_usable_size ((unsigned char *)p - h->size) - h->size;
  return h->tag == AB_TAG_LARGE ? h->size - AB_HDR : h->size;
}

void *
calloc (size_t m, size_t n)
{
  if (n != 0 && m > SIZE_MAX / n)
    return no_memory ();
  void *p = alloc (m * n);
  if (p != NULL)
    memset (p, 0, m * n);
  return p;
}

void *
realloc (void *p, size_t n)
{
  if (p == NULL)
    return malloc (n);
  struct hdr *h = hdr_of (p);
  if (h->tag == AB_TAG_LARGE && n > AB_SMALL_MAX)
    {
      size_t len;
      struct hdr *g;
      if (!pages_for (n, &len))
        return no_memory ();
      if ((g = mremap (h, h->size, len, MREMAP_MAYMOVE)) == MAP_FAILED)
        return no_memory ();
      g->size = len;
      return (unsigned char *)g + AB_HDR;
    }
  size_t have = malloc_usable_size (p);
  if (h->tag != AB_TAG_ALIGNED && n <= have && (h->tag == AB_TAG_LARGE || n > have / 2))
    return p;
  void *q = malloc (n);
  if (q == NULL)
    return NULL;
  memcpy (q, p, n < have ? n : have);
  free (p);
  return q;
}

void *
aligned_alloc (size_t align, size_t n)
{
  if (align == 0 || (align & (align - 1)) != 0)
    {
      errno = EINVAL;
      return NULL;
    }
  if (align <= AB_HDR)
    return malloc (n);
  if (n > SIZE_MAX - align - AB_HDR)
    return no_memory ();
  unsigned char *p = malloc (n + align + AB_HDR);
  if (p == NULL)
    return NULL;
  unsigned char *u = (unsigned char *)(((uintptr_t)p + AB_HDR + align - 1) & ~(uintptr_t)(align - 1));
  struct hdr *h = hdr_of (u);
  h->size = (size_t)(u - p);
  h->tag = AB_TAG_ALIGNED;
  return u;
}

int
posix_memalign (void **out, size_t align, size_t n)
{
  if (align < sizeof (void *))
    return EINVAL;
  void *p = aligned_alloc (align, n);
  if (p == NULL)
    return errno;
  *out = p;
  return 0;
}

void *
memalign (size_t align, size_t n)
{
  return aligned_alloc (align, n);
}

#endif
