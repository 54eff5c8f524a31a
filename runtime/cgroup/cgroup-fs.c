/* The cgroup write layer: the container's cgroup directories as fds (or
 * paths), and reading and writing their interface files.  Every other file
 * of runtime/cgroup/ builds on this one, and this one on none of them: the
 * front door (cgroup.c) decides, the resources, devices and process files
 * say what to write, and only this file touches the cgroupfs. */
#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include "runtime/cgroup/cgroup-internal.h"
#include "base/util.h"

#define SMALL_FILE_MAX (1u << 20)

/* ---- interface files --------------------------------------------------------- */

/* Read a cgroup interface file to its end.  Every cgroup file (v1 and v2)
   is a kernfs seq_file, whose read(2) fills the buffer with as many
   records as fit and returns short only when the file is exhausted: a
   short read is the end, and the read that would return 0 is saved (one
   syscall for each of the dozen small files of a run).  A full buffer
   still reads on. */
static int
read_kernfs (int fd, char **out)
{
  _cleanup_free_ char *buf = NULL;
  size_t cap = 4096, n = 0;

  buf = xmalloc (cap);
  for (;;)
    {
      size_t want = cap - n - 1;
      ssize_t r = read (fd, buf + n, want);

      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        return -1;
      n += (size_t)r;
      if ((size_t)r < want)
        break;
      if (cap > SMALL_FILE_MAX)
        {
          errno = EFBIG;
          return -1;
        }
      cap *= 2;
      buf = xrealloc (buf, cap);
    }
  buf[n] = '\0';
  *out = ab_steal_ptr (&buf);
  return 0;
}

int
ab_cg_read_at (int dirfd, const char *file, char **out)
{
  _cleanup_close_ int fd = openat (dirfd, file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);

  return fd < 0 ? -1 : read_kernfs (fd, out);
}

int
ab_cg_dirfd (struct ab_cg_hier *h)
{
  if (h->dfd >= 0)
    return h->dfd;
  if (!h->by_path)
    return errno = ENOENT, -1;
  h->dfd = open (h->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (h->dfd >= 0)
    h->by_path = false;
  return h->dfd;
}

void
ab_cg_drop_dir (struct ab_cg_hier *h)
{
  if (h->dfd >= 0)
    close (h->dfd);
  h->dfd = -1;
  h->by_path = false;
}

/* Where a file of h's directory is for the *at calls: (h->dfd, file), or
   (by_path) (AT_FDCWD, full path in buf), the same file -- the directory
   is a cgroupfs leaf we made, which only the host's root could rename,
   and the callers do not follow the last component.  NULL with errno:
   neither. */
static const char *
cg_file_at (const struct ab_cg_hier *h, const char *file, char buf[PATH_MAX], int *dirfd)
{
  *dirfd = h->dfd;
  if (h->dfd >= 0)
    return file;
  if (!h->by_path)
    return errno = ENOENT, NULL;
  if ((size_t)snprintf (buf, PATH_MAX, "%s/%s", h->dir, file) >= PATH_MAX)
    return errno = ENAMETOOLONG, NULL;
  *dirfd = AT_FDCWD;
  return buf;
}

static int
cg_openat (const struct ab_cg_hier *h, const char *file, int flags)
{
  char buf[PATH_MAX];
  int dirfd;
  const char *at = cg_file_at (h, file, buf, &dirfd);

  return at ? openat (dirfd, at, flags | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY) : -1;
}

int
ab_cg_read (struct ab_cg_hier *h, const char *file, char **out, ab_error_t *err)
{
  _cleanup_close_ int fd = cg_openat (h, file, O_RDONLY);

  if (fd < 0 || read_kernfs (fd, out) < 0)
    return ab_error_set (err, errno, "read `%s/%s`", h->dir, file);
  return 0;
}

int
ab_cg_open_w (struct ab_cg_hier *h, const char *file, const char *what, ab_error_t *err)
{
  int fd = cg_openat (h, file, O_WRONLY);

  if (fd < 0)
    return ab_error_setc (err, AB_EC_RESOURCE, errno, "%s: open `%s/%s`", what, h->dir, file);
  return fd;
}

int
ab_cg_write_fd (struct ab_cg_hier *h, int fd, const char *file, const char *value, const char *what,
                ab_error_t *err)
{
  /* One write(2) per value: the kernel parses each write as one setting. */
  if (ab_write_all (fd, value, strlen (value)) < 0)
    return ab_error_setc (err, AB_EC_RESOURCE, errno, "%s: write `%.64s` to `%s/%s`", what, value, h->dir,
                          file);
  return 0;
}

int
ab_cg_write (struct ab_cg_hier *h, const char *file, const char *value, const char *what, ab_error_t *err)
{
  _cleanup_close_ int fd = ab_cg_open_w (h, file, what, err);

  if (fd < 0)
    return -1;
  return ab_cg_write_fd (h, fd, file, value, what, err);
}

bool
ab_cg_has_file (struct ab_cg_hier *h, const char *file)
{
  char buf[PATH_MAX];
  int dirfd;
  const char *at = cg_file_at (h, file, buf, &dirfd);

  /* Only "no such file" is an answer: a limit file that could not be
     looked up for another reason is taken to be there, so that the write
     is tried and fails loudly, rather than the limit being skipped as one
     this kernel does not have. */
  return at && (faccessat (dirfd, at, F_OK, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT);
}

int
ab_cg_key_value (const char *text, const char *key, uint64_t *out)
{
  size_t klen = strlen (key);
  const char *line;

  for (line = text; line && *line; line = strchr (line, '\n'), line = line ? line + 1 : NULL)
    if (strncmp (line, key, klen) == 0 && line[klen] == ' ')
      {
        char num[32];
        size_t len = strcspn (line + klen + 1, "\n");

        if (len >= sizeof num)
          return -1;
        memcpy (num, line + klen + 1, len);
        num[len] = '\0';
        return ab_parse_u64 (num, out);
      }
  return -1;
}

int
ab_cg_read_key (struct ab_cg_hier *h, const char *file, const char *key, uint64_t *out)
{
  _cleanup_free_ char *text = NULL;
  ab_error_t err;

  if (ab_cg_read (h, file, &text, &err) < 0)
    return -1;
  return ab_cg_key_value (text, key, out);
}

bool
ab_cg_read_u64 (struct ab_cg_hier *h, const char *file, uint64_t *out)
{
  _cleanup_free_ char *text = NULL;
  ab_error_t err;

  if (h == NULL || ab_cg_read (h, file, &text, &err) < 0)
    return false;
  text[strcspn (text, "\n")] = '\0';
  if (strcmp (text, "max") == 0)
    return *out = UINT64_MAX, true;
  return ab_parse_u64 (text, out) == 0;
}

struct ab_cg_hier *
ab_cg_v1 (struct ab_cgroup *cg, const char *controller)
{
  size_t i;

  for (i = 0; i < cg->n; i++)
    if (!cg->h[i].v2 && ab_cg_list_has (cg->h[i].controllers, controller) && ab_cg_live (&cg->h[i]))
      return &cg->h[i];
  return NULL;
}

struct ab_cg_hier *
ab_cg_v2 (struct ab_cgroup *cg)
{
  return cg->v2 && ab_cg_live (cg->v2) ? cg->v2 : NULL;
}

char *
ab_cg_v2_available (struct ab_cgroup *cg)
{
  char *text = NULL;
  ab_error_t err;

  if (cg->v2 == NULL || ab_cg_read (cg->v2, "cgroup.controllers", &text, &err) < 0)
    return xstrdup ("");
  text[strcspn (text, "\n")] = '\0';
  return text;
}

size_t
ab_cg_path_depth (const struct ab_cg_hier *h)
{
  const char *p = h->path + (strcmp (h->root, "/") == 0 ? 0 : strlen (h->root));
  size_t n = 0;

  for (; *p; p++)
    if (*p != '/' && (p[-1] == '/'))
      n++;
  return n;
}

struct ab_cg_hier *
ab_cg_hier_add (struct ab_cgroup *cg)
{
  struct ab_cg_hier *h;

  cg->h = xreallocarray (cg->h, cg->n + 1, sizeof *cg->h);
  h = &cg->h[cg->n++];
  memset (h, 0, sizeof *h);
  h->dfd = -1;
  return h;
}

void
ab_cg_fix_v2 (struct ab_cgroup *cg)
{
  size_t i;

  cg->v2 = NULL;
  for (i = 0; i < cg->n; i++)
    if (cg->h[i].v2)
      cg->v2 = &cg->h[i];
}

