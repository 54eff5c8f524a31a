/* Small helpers shared by every module: cleanup attributes, checked
 * allocation, whole-file I/O, number parsing, string vectors. */
#ifndef AB_UTIL_H
#define AB_UTIL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "base/error.h"

#define _cleanup_(f) __attribute__ ((cleanup (f)))
#define _cleanup_free_ _cleanup_ (ab_freep)
#define _cleanup_close_ _cleanup_ (ab_closep)
#define _cleanup_close_now_ _cleanup_ (ab_closep_now)
#define _cleanup_fclose_ _cleanup_ (ab_fclosep)
#define _cleanup_strv_ _cleanup_ (ab_strv_freep)

/* Set by the first stage of agentbox for its sealed copy, which has no
   path of its own (runtime/exe.c): where the binary that was started is.
   Ours, not the caller's: never passed on to what agentbox runs (hooks). */
#define AB_EXE_PATH_ENV "AGENTBOX_EXE"

#define AB_ARRAY_SIZE(a) (sizeof (a) / sizeof ((a)[0]))
#define AB_UNUSED __attribute__ ((unused))

static inline void
ab_freep (void *p)
{
  free (*(void **) p);
}

/* Set by the container's setup process (runtime/child.c) while it builds
   the mount tree: ab_closep then leaves an fd below AB_DEFERRED_CLOSE_MAX
   open, for the execve to close with the others at once.  Every fd
   there is close-on-exec (ab_fds_prepare makes sure of it before execve),
   and the ones left are O_PATH handles, fs contexts and mount fds of the
   tree being set up: nothing waits for their close (an EOF or a lock), and
   the process runs nothing of the container's while it holds them.  The
   bound keeps a config with thousands of mounts from running out of fds. */
extern bool ab_closes_deferred;
#define AB_DEFERRED_CLOSE_MAX 512

/* Closed at once even while closes are deferred: for an fd open for
   writing, since a file open for writing keeps its mount from being made
   read-only (EBUSY).  Keeps errno. */
static inline void
ab_closep_now (int *fd)
{
  if (*fd >= 0)
    {
      int saved = errno;
      close (*fd);
      errno = saved;
      *fd = -1;
    }
}

static inline void
ab_closep (int *fd)
{
  if (*fd >= 0 && ab_closes_deferred && *fd < AB_DEFERRED_CLOSE_MAX)
    *fd = -1;
  else
    ab_closep_now (fd);
}

/* close(fd), or left for execve like ab_closep; keeps errno. */
static inline void
ab_close (int fd)
{
  ab_closep (&fd);
}

static inline void
ab_fclosep (FILE **f)
{
  if (*f != NULL)
    {
      int saved = errno;
      fclose (*f);
      errno = saved;
    }
}

/* Hand ownership out of a cleanup variable. */
static inline void *
ab_steal_ptr (void *pp)
{
  void **p = (void **) pp;
  void *r = *p;
  *p = NULL;
  return r;
}

static inline int
ab_steal_fd (int *fd)
{
  int r = *fd;
  *fd = -1;
  return r;
}

/* Allocation failure aborts: there is no sane recovery. */
void *xmalloc (size_t n);
void *xzalloc (size_t n);
void *xcalloc (size_t n, size_t size);
void *xrealloc (void *p, size_t n);
void *xreallocarray (void *p, size_t n, size_t size);
char *xstrdup (const char *s);
char *xstrndup (const char *s, size_t n);
char *xasprintf (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

/* A NULL-terminated vector of owned strings. */
struct ab_strv
{
  char **v; /* v[n] == NULL when n > 0 */
  size_t n;
};
void ab_strv_push (struct ab_strv *s, const char *str);
void ab_strv_push_owned (struct ab_strv *s, char *str);
void ab_strv_free (struct ab_strv *s);
static inline void
ab_strv_freep (struct ab_strv *s)
{
  ab_strv_free (s);
}
bool ab_strv_contains (const struct ab_strv *s, const char *str);

/* I/O that retries on EINTR and short transfers. */
ssize_t ab_write_all (int fd, const void *buf, size_t len);
ssize_t ab_read_all (int fd, void *buf, size_t len);
/* Read the whole of fd into a NUL-terminated buffer; fail with EFBIG past max bytes. */
int ab_read_fd (int fd, size_t max, char **out, size_t *len, ab_error_t *err);
/* The same with the size fstat reported (0: unknown): read in two calls, one
   for the data and one for the end, however large the file. */
int ab_read_fd_sized (int fd, size_t max, size_t size, char **out, size_t *len, ab_error_t *err);
/* Read dirfd/path (AT_FDCWD allowed), O_CLOEXEC|O_NOFOLLOW on the last component. */
int ab_read_file_at (int dirfd, const char *path, size_t max, char **out, size_t *len, ab_error_t *err);
/* Write data to an existing file dirfd/path (no O_CREAT), e.g. a cgroup or /proc file. */
int ab_write_file_at (int dirfd, const char *path, const char *data, size_t len, ab_error_t *err);
/* Create (or truncate) dirfd/name and write data: for a file no reader can
   see half-written (the caller says why). */
int ab_write_file_create (int dirfd, const char *name, const char *data, size_t len, mode_t mode,
                          ab_error_t *err);
/* Create or replace dirfd/name atomically for readers: write a temporary, rename. */
int ab_write_file_atomic (int dirfd, const char *name, const char *data, size_t len, mode_t mode,
                          ab_error_t *err);
/* The same, and return the new file's fd (O_WRONLY, close-on-exec), which
   is dirfd/name from the rename on. */
int ab_write_file_atomic_open (int dirfd, const char *name, const char *data, size_t len, mode_t mode,
                               ab_error_t *err);

/* Strict number parsing: the whole string, no sign for unsigned, no overflow. */
int ab_parse_u64 (const char *s, uint64_t *out);
int ab_parse_i64 (const char *s, int64_t *out);
int ab_parse_int (const char *s, int *out);
/* A size in bytes: "1024", "64k", "512M", "2G" (powers of 1024; "MB"/"MiB" suffixes too). */
int ab_parse_size (const char *s, uint64_t *out);

/* A CPU or memory-node list ("0-3,7") into a bit mask of nbits bits;
   returns the highest bit set + 1, or -1 for bad syntax or a bit >= nbits. */
int ab_parse_id_list (const char *s, unsigned long *mask, size_t nbits);

bool ab_str_has_prefix (const char *s, const char *prefix);
bool ab_str_has_suffix (const char *s, const char *suffix);

/* The path the kernel gives fd (/proc/self/fd/N's link) into buf,
   NUL-terminated: its length, or -1 with errno. */
ssize_t ab_fd_path (int fd, char *buf, size_t size);

/* What /proc/PID/stat says of a process: its state letter ('Z' a
   zombie), parent and start time (clock ticks after boot: with the pid,
   the process itself, never one that reused its pid).  false when it
   cannot be read (gone). */
struct ab_proc_stat
{
  char state;
  pid_t ppid;
  uint64_t start;
};
bool ab_proc_stat_read (pid_t pid, struct ab_proc_stat *st);

/* Monotonic and wall clocks in nanoseconds. */
uint64_t ab_now_monotonic_ns (void);
uint64_t ab_now_realtime_ns (void);
/* The first value of the coarse wall clock past t0, a value read of the
   fine one (ab_now_realtime_ns): waits until the coarse clock passes it (a
   tick at most, unless the timer is late).  A change made before t0 was
   read has a ctime before the result; one made after this returns has a
   ctime at or past it.  (The coarse clock read instead of t0 would not do:
   it lags the fine one by a tick, more when the tick is late, and a ctime
   can be a fine-grained value.)  t0 itself when the clock does not pass it
   within a few ticks. */
uint64_t ab_coarse_past (uint64_t t0);
/* RFC 3339 UTC timestamp with nanoseconds, e.g. 2026-12-02T10:00:00.123456789Z. */
void ab_format_time_rfc3339 (uint64_t realtime_ns, char *buf, size_t len);

/* A caller's cancel, for the long waits below the front end that took it
   (a hook that hangs while a foreground run is created): an fd that turns
   readable once the caller gave up, -1 when there is none.  Polled, never
   read: the front end still sees what it signals. */
void ab_cancel_watch (int fd);
int ab_cancel_fd (void);

/* Make fd close-on-exec / non-blocking. */
int ab_set_cloexec (int fd, bool on);
int ab_set_nonblock (int fd, bool on);

/* Whether a path is absolute, normalised enough for the spec: starts with '/',
   has no "." or ".." component.  Empty components ("//") are tolerated. */
bool ab_path_is_clean_absolute (const char *path);
/* Whether a path is its own canonical form, if no symlink is on its way:
   clean absolute, no empty component, no trailing slash (but "/"). */
bool ab_path_is_canonical (const char *path);
/* One openat2(RESOLVE_NO_SYMLINKS) of a canonical path (O_CLOEXEC added):
   an fd means the path names, as written, the file opened -- no walk could
   resolve it elsewhere.  -1 (EINVAL when not canonical, ELOOP at a
   symlink, ENOSYS on old kernels): callers then take their careful way. */
int ab_open_canonical (const char *path, int flags);
/* Whether any component of path is "..". */
bool ab_path_has_dotdot (const char *path);

/* Whether w is one of the space-separated words of a line like
   cgroup.controllers ("cpu io memory\n"). */
bool ab_word_in (const char *words, const char *w);

/* qsort comparator for int (and pid_t) arrays. */
int ab_cmp_int (const void *a, const void *b);

/* Close the n fds (entries < 0 are skipped, the array is sorted in
   place): one close_range per run of consecutive numbers. */
void ab_close_all (int *fds, size_t n);

/* Remove `name` in dirfd and everything below it, never following a
   symlink, never entering another filesystem (a mount point below it is
   left, and makes this fail with EXDEV), at most `depth` directories deep
   (ELOOP beyond).  An entry that cannot be removed stops none of the
   others.  0, or -1 with errno of the first failure; a name already gone
   is 0. */
int ab_rm_tree_at (int dirfd, const char *name, int depth);

/* The calling process runs under a seccomp filter (Seccomp: 2 in
   /proc/self/status): for a message that names it as the refusal. */
bool ab_seccomp_filtered (void);

/* The home directory of `uid` in passwd(5) text (buf, len bytes): the
   sixth field of its first entry, or "/" when it has none or the entry
   leaves it empty.  Malloc'ed. */
char *ab_passwd_home (const char *buf, size_t len, uid_t uid);

#endif
