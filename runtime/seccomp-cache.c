/* The cache (runtime/cache.h), and compiled seccomp programs kept in it.
 *
 * libseccomp takes milliseconds to build a large allowlist, and the same
 * profile comes back on every run.  The cache lives outside the state root
 * (which `delete` must leave as `create` found it), in a directory of its
 * own, bounded to AB_CACHE_MAX_FILES entries and AB_CACHE_MAX_BYTES.
 *
 * Why a cache entry can never hand a container the wrong filter:
 *   - where: the directory is opened with O_NOFOLLOW and every entry with
 *     openat(O_NOFOLLOW) from its fd; the base and the directory must be
 *     ours and writable by no one else, the directory 0700, each entry a
 *     regular 0600 file of ours with one link (a hard link planted to
 *     another file is refused), else the cache is not used.  Only the
 *     effective user (root for /var/cache/agentbox) can write there, and
 *     that user could replace agentbox itself.
 *   - what: an entry holds a magic, the lengths, an FNV-1a checksum and the
 *     full canonical encoding of the profile next to the program; a hit
 *     needs the exact length, the magic, the checksum and the key equal
 *     byte for byte.  A name collision (the file name is a 64-bit hash of
 *     the key), a truncated or half-written file, or flipped bytes are a
 *     miss.  The checksum is against accidents, not forgery: forging needs
 *     write access, which the checks above reserve to the owner.
 *   - when: entries are written under a unique temporary name (O_EXCL) and
 *     renamed into place, so concurrent runs see the old entry or the new
 *     one, never a part of one.
 * A broken cache never fails a run: it is a miss, and the log says why. */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <linux/openat2.h>
#include <seccomp.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>

#include "runtime/cache.h"
#include "base/log.h"
#include "runtime/seccomp.h"
#include "base/util.h"

#define MAGIC "agentbox-cache-1\n"
#define MAGIC_LEN (sizeof MAGIC - 1)
#define HEADER_LEN (MAGIC_LEN + 3 * 8)

static uint64_t
fnv1a (uint64_t h, const void *data, size_t n)
{
  const unsigned char *p = data;

  for (size_t i = 0; i < n; i++)
    {
      h ^= p[i];
      h *= 0x100000001b3ull;
    }
  return h;
}
#define FNV_INIT 0xcbf29ce484222325ull

/* ---- where ---------------------------------------------------------------- */

/* The runtime's effective uid, read once: the cache is only used by the
   runtime process, which never changes its own ids. */
static uid_t
cache_euid (void)
{
  static uid_t euid = (uid_t)-1;

  if (euid == (uid_t)-1)
    euid = geteuid ();
  return euid;
}

const char *
ab_cache_base (void)
{
  static char *base;
  static bool done;
  const char *env;

  if (done)
    return base;
  done = true;
  env = getenv ("AGENTBOX_CACHE_DIR");
  if (env != NULL)
    base = *env == '/' ? xstrdup (env) : NULL; /* "" (or a relative path): no cache */
  else if (cache_euid () == 0)
    base = xstrdup ("/var/cache/agentbox");
  else if ((env = getenv ("XDG_CACHE_HOME")) != NULL && *env == '/')
    base = xasprintf ("%s/agentbox", env);
  else if ((env = getenv ("HOME")) != NULL && *env == '/')
    base = xasprintf ("%s/.cache/agentbox", env);
  return base;
}

/* Ours and writable by no one else; for the leaf also no bit beyond `mode`. */
bool
ab_cache_dir_is_safe (int fd, const char *path, mode_t mode, char why[static AB_CACHE_WHY_MAX])
{
  struct stat st;

  if (fstat (fd, &st) < 0)
    return snprintf (why, AB_CACHE_WHY_MAX, "stat `%s`: %s", path, strerror (errno)), false;
  if (!S_ISDIR (st.st_mode))
    return snprintf (why, AB_CACHE_WHY_MAX, "`%s` is not a directory", path), false;
  if (st.st_uid != cache_euid ())
    return snprintf (why, AB_CACHE_WHY_MAX, "`%s` is owned by uid %u, not %u", path, (unsigned)st.st_uid,
                     (unsigned)cache_euid ()),
           false;
  if ((st.st_mode & 07777 & ~mode) != 0)
    return snprintf (why, AB_CACHE_WHY_MAX, "`%s` has mode %04o (at most %04o)", path,
                     (unsigned) (st.st_mode & 07777), (unsigned) mode),
           false;
  return true;
}

/* mkdir -p of the base's parents (0755, as /var/cache is) and the base. */
static void
make_base (const char *base)
{
  _cleanup_free_ char *copy = xstrdup (base);

  for (char *p = copy + 1; *p; p++)
    if (*p == '/')
      {
        *p = '\0';
        mkdir (copy, 0755);
        *p = '/';
      }
  mkdir (copy, 0711);
}

int
ab_cache_open_base (char why[static AB_CACHE_WHY_MAX])
{
  const char *base = ab_cache_base ();
  int bfd;

  why[0] = '\0';
  if (base == NULL)
    return -1;
  bfd = open (base, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (bfd < 0 && errno == ENOENT)
    {
      make_base (base);
      bfd = open (base, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
  if (bfd < 0)
    return snprintf (why, AB_CACHE_WHY_MAX, "open `%s`: %s", base, strerror (errno)), -1;
  if (!ab_cache_dir_is_safe (bfd, base, 0755, why))
    {
      close (bfd);
      return -1;
    }
  return bfd;
}

void
ab_cache_unusable (const char *consequence, const char *why)
{
  static atomic_bool told;

  /* One warning a process: the second user of the cache would only say
     the same again (the debug log has every one). */
  if (atomic_exchange (&told, true))
    ab_debug ("cache not used (%s): %s", consequence, why);
  else
    ab_warn ("cache not used (%s): %s", consequence, why);
}

/* Open <base>/<sub> (made with `mode` if missing, base 0711), O_PATH.
   The base and <sub> must be directories owned by the effective uid that
   no one else can write; <sub> must have no permission bit beyond `mode`.
   Returns the fd, or -1 with the reason in why (quiet: "" when caching is
   simply off). */
static int
ab_cache_open_dir (const char *sub, mode_t mode, char why[static AB_CACHE_WHY_MAX])
{
  const char *base = ab_cache_base ();
  _cleanup_free_ char *path = NULL;
  _cleanup_close_ int bfd = -1;
  struct open_how how
      = { .flags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS };
  int fd;

  if (base == NULL)
    return why[0] = '\0', -1;
  path = xasprintf ("%s/%s", base, sub);
  /* The usual case, one open: the directory itself, no symlink on the way,
     ours and private (mode).  That is what makes its entries trustworthy
     (see the top): only we can put a file in it, whoever can write to the
     base, which could at most swap in another directory, refused unless it
     is ours and private too.  Anything else takes the checked walk from
     the base, which also makes what is missing. */
  fd = (int)syscall (SYS_openat2, AT_FDCWD, path, &how, sizeof how);
  if (fd >= 0 && ab_cache_dir_is_safe (fd, path, mode, why))
    return fd;
  if (fd >= 0)
    close (fd);
  bfd = ab_cache_open_base (why);

  if (bfd < 0)
    return -1;
  fd = openat (bfd, sub, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT && mkdirat (bfd, sub, mode) == 0)
    fd = openat (bfd, sub, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return snprintf (why, AB_CACHE_WHY_MAX, "open `%s`: %s", path, strerror (errno)), -1;
  if (!ab_cache_dir_is_safe (fd, path, mode, why))
    {
      close (fd);
      return -1;
    }
  return fd;
}

/* ---- entries -------------------------------------------------------------- */

static void
entry_name (const void *key, size_t keylen, char name[static 17])
{
  snprintf (name, 17, "%016llx", (unsigned long long) fnv1a (FNV_INIT, key, keylen));
}

static uint64_t
get_u64 (const char *p)
{
  uint64_t v;
  memcpy (&v, p, 8);
  return v;
}

/* The entry's fd, if it is a file the cache may trust (see the top). */
static int
open_entry (int dfd, const char *name, size_t *size, time_t *mtime, char why[static AB_CACHE_WHY_MAX])
{
  _cleanup_close_ int fd = -1;
  struct stat st;

  /* O_NONBLOCK|O_NOCTTY: a FIFO or a terminal must not block or become
     ours; fstat below takes regular files only. */
  fd = openat (dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    {
      if (errno != ENOENT)
        snprintf (why, AB_CACHE_WHY_MAX, "open entry %s: %s", name, strerror (errno));
      return -1;
    }
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode) || st.st_uid != cache_euid () || (st.st_mode & 077) != 0
      || st.st_nlink != 1 || st.st_size > (off_t)AB_CACHE_MAX_BYTES)
    {
      snprintf (why, AB_CACHE_WHY_MAX, "entry %s is not a 0600 regular file of uid %u with one link", name,
                (unsigned)cache_euid ());
      return -1;
    }
  *size = (size_t)st.st_size;
  *mtime = st.st_mtim.tv_sec;
  return ab_steal_fd (&fd);
}

/* The entry for `key` in the directory: true with a malloc'ed copy of its
   value when the file is ours (owner, mode 0600, one link, regular), its
   length, magic and checksum are right and its stored key equals `key`
   byte for byte.  false otherwise, with why set unless the entry simply
   does not exist. */
static bool
ab_cache_get (int dfd, const void *key, size_t keylen, char **val, size_t *vallen,
              char why[static AB_CACHE_WHY_MAX])
{
  _cleanup_free_ char *buf = NULL;
  _cleanup_close_ int fd = -1;
  uint64_t kl, vl, sum;
  char name[17];
  size_t len, size = 0;
  time_t mtime = 0;

  why[0] = '\0';
  entry_name (key, keylen, name);
  fd = open_entry (dfd, name, &size, &mtime, why);
  if (fd < 0)
    return false;
  if (ab_read_fd_sized (fd, AB_CACHE_MAX_BYTES, size, &buf, &len, NULL) < 0)
    return snprintf (why, AB_CACHE_WHY_MAX, "read entry %s: %s", name, strerror (errno)), false;
  if (len < HEADER_LEN || memcmp (buf, MAGIC, MAGIC_LEN) != 0)
    return snprintf (why, AB_CACHE_WHY_MAX, "entry %s: no header (truncated or foreign)", name), false;
  kl = get_u64 (buf + MAGIC_LEN);
  vl = get_u64 (buf + MAGIC_LEN + 8);
  sum = get_u64 (buf + MAGIC_LEN + 16);
  if (kl > len || vl > len || HEADER_LEN + kl + vl != len)
    return snprintf (why, AB_CACHE_WHY_MAX, "entry %s: %zu bytes, not what its header says", name, len), false;
  if (fnv1a (fnv1a (FNV_INIT, buf + HEADER_LEN, kl), buf + HEADER_LEN + kl, vl) != sum)
    return snprintf (why, AB_CACHE_WHY_MAX, "entry %s: checksum mismatch", name), false;
  if (kl != keylen || memcmp (buf + HEADER_LEN, key, keylen) != 0)
    return false; /* another key with the same hash: an ordinary miss */
  *val = xmalloc (vl + 1);
  memcpy (*val, buf + HEADER_LEN + kl, vl);
  *vallen = vl;
  /* Recently used: eviction takes the oldest modification time first.  An
     entry touched within the last minute is as recent as the order needs. */
  if (mtime < time (NULL) - 60)
    futimens (fd, NULL);
  return true;
}

struct entry_info
{
  char name[NAME_MAX + 1];
  struct timespec mtime;
  off_t size;
};

static int
older_first (const void *a, const void *b)
{
  const struct entry_info *x = a, *y = b;

  if (x->mtime.tv_sec != y->mtime.tv_sec)
    return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
  if (x->mtime.tv_nsec != y->mtime.tv_nsec)
    return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
  return 0;
}

/* Keep the directory within its bounds: the oldest entries go first, and
   so do temporary files a killed writer left more than a minute ago. */
static void
evict (int dfd)
{
  _cleanup_free_ struct entry_info *v = NULL;
  size_t n = 0, cap = 0, i;
  uint64_t bytes = 0;
  int fd = openat (dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  struct timespec now;
  struct dirent *e;
  DIR *d;

  if (fd < 0 || (d = fdopendir (fd)) == NULL)
    {
      if (fd >= 0)
        close (fd);
      return;
    }
  clock_gettime (CLOCK_REALTIME, &now);
  while ((e = readdir (d)) != NULL)
    {
      struct stat st;
      if (e->d_name[0] == '.' && (e->d_name[1] == '\0' || (e->d_name[1] == '.' && e->d_name[2] == '\0')))
        continue;
      if (fstatat (dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        continue;
      if (e->d_name[0] == '.' && strstr (e->d_name, ".tmp."))
        {
          if (st.st_mtim.tv_sec + 60 < now.tv_sec)
            unlinkat (dfd, e->d_name, 0);
          continue;
        }
      if (n == cap)
        v = xreallocarray (v, cap = cap ? 2 * cap : 64, sizeof *v);
      snprintf (v[n].name, sizeof v[n].name, "%s", e->d_name);
      v[n].mtime = st.st_mtim;
      v[n].size = S_ISDIR (st.st_mode) ? 0 : st.st_size;
      bytes += (uint64_t) v[n].size;
      n++;
    }
  closedir (d);
  if (n <= AB_CACHE_MAX_FILES && bytes <= AB_CACHE_MAX_BYTES)
    return;
  qsort (v, n, sizeof *v, older_first);
  for (i = 0; i < n && (n - i > AB_CACHE_MAX_FILES || bytes > AB_CACHE_MAX_BYTES); i++)
    if (unlinkat (dfd, v[i].name, 0) == 0 || errno == ENOENT)
      bytes -= (uint64_t) v[i].size;
  ab_debug ("cache: evicted %zu entries", i);
}

/* Store an entry (written aside and renamed: a concurrent reader sees the
   old entry or the new one, never a part), then evict the oldest entries
   beyond the directory's bounds.  Best effort: failures only cost speed. */
static void
ab_cache_put (int dfd, const void *key, size_t keylen, const void *val, size_t vallen)
{
  size_t len = HEADER_LEN + keylen + vallen;
  _cleanup_free_ char *buf = NULL;
  _cleanup_close_ int fd = -1;
  char name[17], tmp[64];
  uint64_t kl = keylen, vl = vallen, sum, rnd = 0;

  if (len > AB_CACHE_MAX_BYTES / 4)
    return;
  buf = xmalloc (len);
  sum = fnv1a (fnv1a (FNV_INIT, key, keylen), val, vallen);
  memcpy (buf, MAGIC, MAGIC_LEN);
  memcpy (buf + MAGIC_LEN, &kl, 8);
  memcpy (buf + MAGIC_LEN + 8, &vl, 8);
  memcpy (buf + MAGIC_LEN + 16, &sum, 8);
  memcpy (buf + HEADER_LEN, key, keylen);
  memcpy (buf + HEADER_LEN + keylen, val, vallen);
  entry_name (key, keylen, name);
  if (getrandom (&rnd, sizeof rnd, GRND_NONBLOCK) < 0)
    rnd = (uint64_t) ab_now_monotonic_ns ();
  snprintf (tmp, sizeof tmp, ".%s.tmp.%d.%016llx", name, (int) getpid (), (unsigned long long) rnd);
  /* O_EXCL|O_NOFOLLOW: never write through anything already there. */
  fd = openat (dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    {
      ab_debug ("cache: create %s: %s", tmp, strerror (errno));
      return;
    }
  if (ab_write_all (fd, buf, len) < 0 || renameat (dfd, tmp, dfd, name) < 0)
    {
      ab_debug ("cache: write %s: %s", name, strerror (errno));
      unlinkat (dfd, tmp, 0);
      return;
    }
  evict (dfd);
}

/* ---- compiled seccomp programs ------------------------------------------- */

/* The key: everything of the profile that shapes the program, and what
   compiles it, in a binary encoding where every list has its count and
   every string its length in front (so no two profiles share one).  It
   was JSON through yajl_gen: a third of a cache hit's 60 us went to
   escaping 300 names. */
struct keybuf
{
  char *p;
  size_t len, cap;
};

static void
kb_bytes (struct keybuf *k, const void *data, size_t n)
{
  if (k->cap - k->len < n)
    {
      k->cap = k->cap * 2 > k->len + n ? k->cap * 2 : k->len + n;
      k->p = xrealloc (k->p, k->cap);
    }
  if (n)
    memcpy (k->p + k->len, data, n);
  k->len += n;
}

static void
kb_u64 (struct keybuf *k, uint64_t v)
{
  kb_bytes (k, &v, sizeof v);
}

/* A string, or NULL (a length no string has). */
static void
kb_str (struct keybuf *k, const char *s)
{
  size_t n = s ? strlen (s) : 0;

  kb_u64 (k, s ? (uint64_t) n : UINT64_MAX);
  kb_bytes (k, s, n);
}

static void
kb_strv (struct keybuf *k, const struct ab_strv *v)
{
  kb_u64 (k, v->n);
  for (size_t i = 0; i < v->n; i++)
    kb_str (k, v->v[i]);
}

static char *
canonical_key (const struct ab_seccomp *s, size_t *len)
{
  static const char tag[] = "agentbox seccomp key 2";
  const struct scmp_version *v = seccomp_version ();
  struct keybuf k = { .p = xmalloc (8192), .cap = 8192 };

  kb_bytes (&k, tag, sizeof tag);
  kb_u64 (&k, v ? v->major : 0);
  kb_u64 (&k, v ? v->minor : 0);
  kb_u64 (&k, v ? v->micro : 0);
  kb_u64 (&k, AB_SECCOMP_SCHEME);
  kb_u64 (&k, (uint64_t) (int64_t) s->default_action);
  kb_u64 (&k, s->default_errno_ret_set);
  kb_u64 (&k, s->default_errno_ret);
  kb_u64 (&k, s->flags);
  kb_str (&k, s->listener_path);
  kb_strv (&k, &s->architectures);
  kb_u64 (&k, s->n_syscalls);
  for (size_t i = 0; i < s->n_syscalls; i++)
    {
      const struct ab_seccomp_rule *r = &s->syscalls[i];
      kb_strv (&k, &r->names);
      kb_u64 (&k, (uint64_t) (int64_t) r->action);
      kb_u64 (&k, r->errno_ret_set);
      kb_u64 (&k, r->errno_ret);
      kb_u64 (&k, r->n_args);
      for (size_t j = 0; j < r->n_args; j++)
        {
          kb_u64 (&k, r->args[j].index);
          kb_u64 (&k, r->args[j].value);
          kb_u64 (&k, r->args[j].value_two);
          kb_u64 (&k, (uint64_t) (int64_t) r->args[j].op);
        }
    }
  *len = k.len;
  return k.p;
}

/* The value: the seccomp(2) flags, then the instructions. */
static bool
prog_from_value (const char *v, size_t len, struct ab_seccomp_prog *out)
{
  uint32_t flags;
  size_t n;

  if (len < 4 || (len - 4) % sizeof (struct sock_filter) != 0)
    return false;
  n = (len - 4) / sizeof (struct sock_filter);
  if (n == 0 || n > BPF_MAXINSNS)
    return false;
  memcpy (&flags, v, 4);
  memset (out, 0, sizeof *out);
  out->insns = xmalloc (len - 4);
  memcpy (out->insns, v + 4, len - 4);
  out->len = (unsigned short) n;
  out->flags = flags;
  return true;
}

int
ab_seccomp_compile_cached (const struct ab_seccomp *s, struct ab_seccomp_prog *out, ab_error_t *err)
{
  _cleanup_free_ char *key = NULL, *val = NULL;
  _cleanup_close_ int dfd = -1;
  char why[AB_CACHE_WHY_MAX];
  size_t keylen, vallen;

  dfd = ab_cache_open_dir ("seccomp", 0700, why);
  if (dfd < 0 && why[0])
    ab_cache_unusable ("seccomp programs are compiled anew", why);
  key = canonical_key (s, &keylen);
  if (dfd >= 0)
    {
      if (ab_cache_get (dfd, key, keylen, &val, &vallen, why) && prog_from_value (val, vallen, out))
        return 0;
      if (why[0])
        ab_warn ("seccomp cache: %s: compiling anew", why);
    }
  if (ab_seccomp_compile (s, out, err) < 0)
    return -1;
  if (dfd >= 0)
    {
      size_t insn = (size_t) out->len * sizeof (struct sock_filter);
      _cleanup_free_ char *v = xmalloc (4 + insn);
      uint32_t flags = out->flags;
      memcpy (v, &flags, 4);
      memcpy (v + 4, out->insns, insn);
      ab_cache_put (dfd, key, keylen, v, 4 + insn);
    }
  return 0;
}
