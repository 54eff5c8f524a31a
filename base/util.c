#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>

#include "base/util.h"

bool ab_closes_deferred;

static void __attribute__ ((noreturn))
oom (void)
{
  static const char msg[] = "agentbox: out of memory\n";
  ssize_t r AB_UNUSED = write (2, msg, sizeof msg - 1);
  abort ();
}

void *
xmalloc (size_t n)
{
  void *p = malloc (n ? n : 1);
  if (p == NULL)
    oom ();
  return p;
}

void *
xzalloc (size_t n)
{
  return xcalloc (1, n);
}

void *
xcalloc (size_t n, size_t size)
{
  void *p = calloc (n ? n : 1, size ? size : 1);
  if (p == NULL)
    oom ();
  return p;
}

void *
xrealloc (void *p, size_t n)
{
  p = realloc (p, n ? n : 1);
  if (p == NULL)
    oom ();
  return p;
}

void *
xreallocarray (void *p, size_t n, size_t size)
{
  if (size != 0 && n > SIZE_MAX / size)
    oom ();
  return xrealloc (p, n * size);
}

char *
xstrdup (const char *s)
{
  char *r = strdup (s ? s : "");
  if (r == NULL)
    oom ();
  return r;
}

char *
xstrndup (const char *s, size_t n)
{
  char *r = strndup (s, n);
  if (r == NULL)
    oom ();
  return r;
}

char *
xasprintf (const char *fmt, ...)
{
  va_list ap;
  char *r;
  int n;

  va_start (ap, fmt);
  n = vasprintf (&r, fmt, ap);
  va_end (ap);
  if (n < 0)
    oom ();
  return r;
}

void
ab_strv_push_owned (struct ab_strv *s, char *str)
{
  s->v = xreallocarray (s->v, s->n + 2, sizeof *s->v);
  s->v[s->n++] = str;
  s->v[s->n] = NULL;
}

void
ab_strv_push (struct ab_strv *s, const char *str)
{
  ab_strv_push_owned (s, xstrdup (str));
}

void
ab_strv_free (struct ab_strv *s)
{
  size_t i;

  if (s == NULL)
    return;
  for (i = 0; i < s->n; i++)
    free (s->v[i]);
  free (s->v);
  s->v = NULL;
  s->n = 0;
}

bool
ab_strv_contains (const struct ab_strv *s, const char *str)
{
  size_t i;

  for (i = 0; i < s->n; i++)
    if (strcmp (s->v[i], str) == 0)
      return true;
  return false;
}

ssize_t
ab_write_all (int fd, const void *buf, size_t len)
{
  const char *p = buf;
  size_t done = 0;

  while (done < len)
    {
      ssize_t r = write (fd, p + done, len - done);
      if (r < 0)
        {
          if (errno == EINTR)
            continue;
          return -1;
        }
      done += (size_t) r;
    }
  return (ssize_t) done;
}

ssize_t
ab_read_all (int fd, void *buf, size_t len)
{
  char *p = buf;
  size_t done = 0;

  while (done < len)
    {
      ssize_t r = read (fd, p + done, len - done);
      if (r < 0)
        {
          if (errno == EINTR)
            continue;
          return -1;
        }
      if (r == 0)
        break;
      done += (size_t) r;
    }
  return (ssize_t) done;
}

int
ab_read_fd (int fd, size_t max, char **out, size_t *len, ab_error_t *err)
{
  return ab_read_fd_sized (fd, max, 0, out, len, err);
}

int
ab_read_fd_sized (int fd, size_t max, size_t size, char **out, size_t *len, ab_error_t *err)
{
  _cleanup_free_ char *buf = NULL;
  /* Room for the size fstat saw, the NUL and one byte more, so that the
     first read takes the whole file.  A read that returns exactly that size
     when asked for more met the end: no second read to see it (a file that
     grew meanwhile is read on, bounded by max as before; a filesystem with
     short reads returns less than the size and is read on too). */
  size_t cap = size > 0 && size < max ? size + 2 : 4096, n = 0;

  buf = xmalloc (cap);
  for (;;)
    {
      ssize_t r;
      size_t want;
      if (n + 1 >= cap)
        {
          if (cap > max + 1)
            return ab_error_setc (err, AB_EC_CONFIG, EFBIG, "read: more than %zu bytes", max);
          cap *= 2;
          buf = xrealloc (buf, cap);
        }
      want = cap - n - 1;
      r = read (fd, buf + n, want);
      if (r < 0)
        {
          if (errno == EINTR)
            continue;
          return ab_error_set (err, errno, "read");
        }
      if (r == 0)
        break;
      n += (size_t) r;
      if (n > max)
        return ab_error_setc (err, AB_EC_CONFIG, EFBIG, "read: more than %zu bytes", max);
      if (size > 0 && n == size && (size_t)r < want)
        break;
    }
  buf[n] = '\0';
  if (len)
    *len = n;
  *out = ab_steal_ptr (&buf);
  return 0;
}

int
ab_read_file_at (int dirfd, const char *path, size_t max, char **out, size_t *len, ab_error_t *err)
{
  _cleanup_close_ int fd = openat (dirfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);

  if (fd < 0)
    return ab_error_set (err, errno, "open `%s`", path);
  if (ab_read_fd (fd, max, out, len, err) < 0)
    return ab_error_prefix (err, "`%s`", path);
  return 0;
}

int
ab_write_file_at (int dirfd, const char *path, const char *data, size_t len, ab_error_t *err)
{
  _cleanup_close_now_ int fd = openat (dirfd, path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);

  if (fd < 0)
    return ab_error_set (err, errno, "open `%s`", path);
  if (ab_write_all (fd, data, len) < 0)
    return ab_error_set (err, errno, "write `%s`", path);
  return 0;
}

int
ab_write_file_create (int dirfd, const char *name, const char *data, size_t len, mode_t mode, ab_error_t *err)
{
  _cleanup_close_now_ int fd
      = openat (dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, mode);

  if (fd < 0)
    return ab_error_set (err, errno, "create `%s`", name);
  if (ab_write_all (fd, data, len) < 0)
    return ab_error_set (err, errno, "write `%s`", name);
  return 0;
}

int
ab_write_file_atomic (int dirfd, const char *name, const char *data, size_t len, mode_t mode,
                      ab_error_t *err)
{
  int fd = ab_write_file_atomic_open (dirfd, name, data, len, mode, err);

  if (fd < 0)
    return -1;
  close (fd);
  return 0;
}

int
ab_write_file_atomic_open (int dirfd, const char *name, const char *data, size_t len, mode_t mode,
                           ab_error_t *err)
{
  _cleanup_free_ char *tmp = xasprintf (".%s.tmp.%d", name, (int) getpid ());
  _cleanup_close_now_ int fd = -1;

  fd = openat (dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0)
    return ab_error_set (err, errno, "create `%s`", tmp);
  /* No fsync: these files describe processes that do not survive a reboot;
     rename alone makes the replacement atomic for concurrent readers. */
  if (ab_write_all (fd, data, len) < 0)
    {
      int e = errno;
      unlinkat (dirfd, tmp, 0);
      return ab_error_set (err, e, "write `%s`", tmp);
    }
  if (renameat (dirfd, tmp, dirfd, name) < 0)
    {
      int e = errno;
      unlinkat (dirfd, tmp, 0);
      return ab_error_set (err, e, "rename `%s` to `%s`", tmp, name);
    }
  return ab_steal_fd (&fd);
}

int
ab_parse_u64 (const char *s, uint64_t *out)
{
  uint64_t v = 0;

  if (s == NULL || *s == '\0')
    return -1;
  for (; *s; s++)
    {
      unsigned d;
      if (*s < '0' || *s > '9')
        return -1;
      d = (unsigned) (*s - '0');
      if (v > (UINT64_MAX - d) / 10)
        return -1;
      v = v * 10 + d;
    }
  *out = v;
  return 0;
}

int
ab_parse_i64 (const char *s, int64_t *out)
{
  uint64_t u;

  if (s == NULL)
    return -1;
  if (*s == '-')
    {
      if (ab_parse_u64 (s + 1, &u) < 0 || u > (uint64_t) INT64_MAX + 1)
        return -1;
      *out = (int64_t) (0 - u);
      return 0;
    }
  if (ab_parse_u64 (s, &u) < 0 || u > (uint64_t) INT64_MAX)
    return -1;
  *out = (int64_t) u;
  return 0;
}

int
ab_parse_int (const char *s, int *out)
{
  int64_t v;

  if (ab_parse_i64 (s, &v) < 0 || v < INT32_MIN || v > INT32_MAX)
    return -1;
  *out = (int) v;
  return 0;
}

int
ab_parse_id_list (const char *s, unsigned long *mask, size_t nbits)
{
  const size_t per = 8 * sizeof (unsigned long);
  int top = 0;

  memset (mask, 0, (nbits + per - 1) / per * sizeof (unsigned long));
  while (*s)
    {
      char *end;
      unsigned long a, b, k;
      if (*s < '0' || *s > '9')
        return -1;
      a = b = strtoul (s, &end, 10);
      if (*end == '-')
        {
          if (end[1] < '0' || end[1] > '9')
            return -1;
          b = strtoul (end + 1, &end, 10);
        }
      if (b < a || b >= nbits)
        return -1;
      for (k = a; k <= b; k++)
        mask[k / per] |= 1ul << (k % per);
      if ((int) b + 1 > top)
        top = (int) b + 1;
      if (*end == ',')
        end++;
      else if (*end != '\0')
        return -1;
      s = end;
    }
  return top;
}

bool
ab_str_has_prefix (const char *s, const char *prefix)
{
  return strncmp (s, prefix, strlen (prefix)) == 0;
}

bool
ab_str_has_suffix (const char *s, const char *suffix)
{
  size_t ls = strlen (s), lx = strlen (suffix);
  return ls >= lx && memcmp (s + ls - lx, suffix, lx) == 0;
}

ssize_t
ab_fd_path (int fd, char *buf, size_t size)
{
  char link[32];
  ssize_t n;

  snprintf (link, sizeof link, "/proc/self/fd/%d", fd);
  n = readlink (link, buf, size - 1);
  if (n >= 0)
    buf[n] = '\0';
  return n;
}

bool
ab_proc_stat_read (pid_t pid, struct ab_proc_stat *st)
{
  char path[64], buf[1024], *p;
  unsigned long long start;
  ssize_t n;
  int fd, ppid;

  snprintf (path, sizeof path, "/proc/%d/stat", (int)pid);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  n = read (fd, buf, sizeof buf - 1);
  close (fd);
  if (n <= 0)
    return false;
  buf[n] = '\0';
  /* pid (comm) state ppid ... starttime (field 22): comm may hold
     anything, the last ')' ends it */
  p = strrchr (buf, ')');
  if (p == NULL
      || sscanf (p + 1, " %c %d %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu",
                 &st->state, &ppid, &start)
             != 3)
    return false;
  st->ppid = (pid_t)ppid;
  st->start = start;
  return true;
}

static uint64_t
clock_ns (clockid_t clock)
{
  struct timespec ts;
  clock_gettime (clock, &ts);
  return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

uint64_t
ab_now_monotonic_ns (void)
{
  return clock_ns (CLOCK_MONOTONIC);
}

uint64_t
ab_now_realtime_ns (void)
{
  return clock_ns (CLOCK_REALTIME);
}

/* The coarse wall clock (CLOCK_REALTIME_COARSE), where the kernel takes a
   file's ctime from (or from a finer one): a change made after a read of
   it has a ctime at or past the value read. */
static uint64_t
now_coarse_ns (void)
{
  return clock_ns (CLOCK_REALTIME_COARSE);
}

uint64_t
ab_coarse_past (uint64_t t0)
{
  struct timespec res;
  uint64_t tick, now;

  if ((now = now_coarse_ns ()) > t0)
    return now;
  if (clock_getres (CLOCK_REALTIME_COARSE, &res) < 0)
    return t0;
  tick = (uint64_t) res.tv_sec * 1000000000ull + (uint64_t) res.tv_nsec;
  /* The coarse clock passes t0 at the first tick after it, due by t0 +
     tick; then, if the timer was late, in eighths of a tick, for four
     ticks at most. */
  for (int i = 0; i < 32 && now <= t0; i++)
    {
      uint64_t fine = ab_now_realtime_ns (), due = t0 + tick + 20000;
      uint64_t wait = fine < due ? due - fine : tick / 8;
      struct timespec ts = { .tv_sec = (time_t) (wait / 1000000000ull), .tv_nsec = (long) (wait % 1000000000ull) };
      if (wait > 4 * tick)
        break; /* the wall clock was set back */
      nanosleep (&ts, NULL);
      now = now_coarse_ns ();
    }
  return now > t0 ? now : t0;
}

void
ab_format_time_rfc3339 (uint64_t ns, char *buf, size_t len)
{
  time_t secs = (time_t) (ns / 1000000000ull);
  struct tm tm;
  char base[32];

  gmtime_r (&secs, &tm);
  strftime (base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf (buf, len, "%s.%09uZ", base, (unsigned) (ns % 1000000000ull));
}

static int cancel_fd = -1;

void
ab_cancel_watch (int fd)
{
  cancel_fd = fd;
}

int
ab_cancel_fd (void)
{
  return cancel_fd;
}

int
ab_set_cloexec (int fd, bool on)
{
  int flags = fcntl (fd, F_GETFD);
  if (flags < 0)
    return -1;
  flags = on ? (flags | FD_CLOEXEC) : (flags & ~FD_CLOEXEC);
  return fcntl (fd, F_SETFD, flags);
}

int
ab_set_nonblock (int fd, bool on)
{
  int flags = fcntl (fd, F_GETFL);
  if (flags < 0)
    return -1;
  flags = on ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK);
  return fcntl (fd, F_SETFL, flags);
}

bool
ab_path_has_dotdot (const char *path)
{
  const char *p = path;

  while (*p)
    {
      const char *end = strchr (p, '/');
      size_t n = end ? (size_t) (end - p) : strlen (p);
      if (n == 2 && p[0] == '.' && p[1] == '.')
        return true;
      if (end == NULL)
        break;
      p = end + 1;
    }
  return false;
}

bool
ab_path_is_clean_absolute (const char *path)
{
  const char *p;

  if (path == NULL || path[0] != '/')
    return false;
  p = path;
  while (*p)
    {
      const char *end;
      size_t n;
      while (*p == '/')
        p++;
      if (*p == '\0')
        break;
      end = strchr (p, '/');
      n = end ? (size_t) (end - p) : strlen (p);
      if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
        return false;
      p += n;
    }
  return true;
}

bool
ab_path_is_canonical (const char *path)
{
  size_t n;

  if (!ab_path_is_clean_absolute (path))
    return false;
  n = strlen (path);
  return n == 1 || (strstr (path, "//") == NULL && path[n - 1] != '/');
}

int
ab_open_canonical (const char *path, int flags)
{
  struct open_how how = { .flags = (uint64_t)(flags | O_CLOEXEC), .resolve = RESOLVE_NO_SYMLINKS };

  if (!ab_path_is_canonical (path))
    {
      errno = EINVAL;
      return -1;
    }
  return (int)syscall (SYS_openat2, AT_FDCWD, path, &how, sizeof how);
}

bool
ab_word_in (const char *words, const char *w)
{
  size_t n = strlen (w);
  const char *p = words;

  while ((p = strstr (p, w)) != NULL)
    {
      if ((p == words || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' ' || p[n] == '\n'))
        return true;
      p += n;
    }
  return false;
}

int
ab_cmp_int (const void *a, const void *b)
{
  int x = *(const int *) a, y = *(const int *) b;

  return (x > y) - (x < y);
}

void
ab_close_all (int *fds, size_t n)
{
  size_t i = 0, j;

  qsort (fds, n, sizeof *fds, ab_cmp_int);
  while (i < n && fds[i] < 0)
    i++;
  for (; i < n; i = j)
    {
      for (j = i + 1; j < n && fds[j] <= fds[j - 1] + 1; j++)
        ;
      if (j - i == 1 || syscall (SYS_close_range, (unsigned)fds[i], (unsigned)fds[j - 1], 0) < 0)
        for (size_t k = i; k < j; k++)
          if (k == i || fds[k] != fds[k - 1])
            close (fds[k]);
    }
}

int
ab_parse_size (const char *s, uint64_t *out)
{
  char num[32];
  size_t i = 0;
  uint64_t v, mul = 1;

  while (s[i] >= '0' && s[i] <= '9' && i < sizeof num - 1)
    {
      num[i] = s[i];
      i++;
    }
  num[i] = '\0';
  if (i == 0 || ab_parse_u64 (num, &v) < 0)
    return -1;
  switch (s[i])
    {
    case '\0':
      break;
    case 'k':
    case 'K':
      mul = 1ull << 10;
      break;
    case 'm':
    case 'M':
      mul = 1ull << 20;
      break;
    case 'g':
    case 'G':
      mul = 1ull << 30;
      break;
    default:
      return -1;
    }
  if (s[i] && s[i + 1] && strcmp (s + i + 1, "B") && strcmp (s + i + 1, "iB"))
    return -1;
  if (v > UINT64_MAX / mul)
    return -1;
  *out = v * mul;
  return 0;
}

/* The entries of the directory at/name, each removed (rm_tree_dev); the
   errno of the first that could not be, or 0. */
static int rm_tree_dev (int at, const char *name, dev_t dev, int depth);

static int
rm_entries (int at, const char *name, dev_t dev, int depth)
{
  struct dirent *e;
  DIR *d;
  int fd, bad = 0;

  fd = openat (at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 || (d = fdopendir (fd)) == NULL)
    {
      int saved = errno;
      if (fd >= 0)
        close (fd);
      return saved;
    }
  /* On past an entry that cannot go: as much as can be is removed, and the
     first failure is what the caller hears. */
  while ((e = readdir (d)) != NULL)
    if (strcmp (e->d_name, ".") != 0 && strcmp (e->d_name, "..") != 0
        && rm_tree_dev (dirfd (d), e->d_name, dev, depth - 1) < 0 && bad == 0)
      bad = errno;
  closedir (d);
  return bad;
}

static int
rm_tree_dev (int at, const char *name, dev_t dev, int depth)
{
  struct stat st;

  if (fstatat (at, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return errno == ENOENT ? 0 : -1;
  if (!S_ISDIR (st.st_mode))
    return unlinkat (at, name, 0) == 0 || errno == ENOENT ? 0 : -1;
  /* A directory of another filesystem is a mount point: what is mounted
     there is not ours to empty (a bind of a host directory left by a
     crash would take the host's files with it). */
  if (st.st_dev != dev)
    return errno = EXDEV, -1;
  if (depth <= 0)
    return errno = ELOOP, -1;
  /* Twice at most: entries a first pass missed while it deleted. */
  for (int pass = 0; pass < 2; pass++)
    {
      int bad = rm_entries (at, name, dev, depth);

      if (bad)
        return errno = bad, -1;
      if (unlinkat (at, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
        return 0;
      if (errno != ENOTEMPTY)
        return -1;
    }
  return -1;
}

bool
ab_seccomp_filtered (void)
{
  _cleanup_free_ char *status = NULL;
  const char *p;

  if (ab_read_file_at (AT_FDCWD, "/proc/self/status", 1u << 16, &status, NULL, NULL) < 0)
    return false;
  p = strstr (status, "\nSeccomp:");
  return p && strtol (p + strlen ("\nSeccomp:"), NULL, 10) == 2;
}

int
ab_rm_tree_at (int at, const char *name, int depth)
{
  struct stat st;

  if (fstatat (at, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return errno == ENOENT ? 0 : -1;
  return rm_tree_dev (at, name, st.st_dev, depth);
}

/* The home directory of `uid` in passwd(5) text (buf, len bytes): the
   sixth field of its first entry, or "/" when it has none or the entry
   leaves it empty.  Malloc'ed. */
char *
ab_passwd_home (const char *buf, size_t len, uid_t uid)
{
  const char *p = buf, *end = buf + len;

  while (p < end)
    {
      const char *nl = memchr (p, '\n', (size_t)(end - p));
      const char *line_end = nl ? nl : end;
      const char *f[7];
      int n = 0;

      /* name:password:uid:gid:gecos:home:shell */
      f[n++] = p;
      for (const char *q = p; q < line_end && n < 7; q++)
        if (*q == ':')
          f[n++] = q + 1;
      if (n == 7 && *p != '#' && *p != '+' && *p != '-')
        {
          char num[16];
          size_t l = (size_t)(f[3] - f[2] - 1);
          uint64_t v;

          if (l > 0 && l < sizeof num)
            {
              memcpy (num, f[2], l);
              num[l] = '\0';
              if (ab_parse_u64 (num, &v) == 0 && v == (uint64_t)uid)
                {
                  size_t hl = (size_t)(f[6] - f[5] - 1);
                  return hl > 0 ? xstrndup (f[5], hl) : xstrdup ("/");
                }
            }
        }
      p = line_end + 1;
    }
  return xstrdup ("/");
}
