/* A cache of compiled seccomp programs, in <root>/.cache/seccomp/.
 *
 * libseccomp takes milliseconds to build a large allowlist; the same profile
 * comes back on every run.  The entry's name is a 64-bit FNV-1a hash of a
 * canonical encoding of the profile (and the libseccomp version), but the
 * entry also stores that encoding and a hit requires it to be byte-for-byte
 * equal: a crafted collision can only cause a miss, never hand a container
 * another profile's filter.  The directory is root's (0700). */
#include "config.h"

#include <fcntl.h>
#include <seccomp.h>
#include <sys/stat.h>

#include "runtime/seccomp.h"
#include "runtime/util.h"
#include "spec/gen.h"

#define MAGIC "agentbox-seccomp-1\n"

static char *
canonical_key (const struct ab_seccomp *s, size_t *len)
{
  _cleanup_gen_ struct ab_gen *g = ab_gen_new (false);
  const struct scmp_version *v = seccomp_version ();
  size_t i, k;

  ab_gen_arr_open (g);
  ab_gen_u64 (g, v ? v->major : 0);
  ab_gen_u64 (g, v ? v->minor : 0);
  ab_gen_u64 (g, v ? v->micro : 0);
  ab_gen_i64 (g, s->default_action);
  ab_gen_bool (g, s->default_errno_ret_set);
  ab_gen_u64 (g, s->default_errno_ret);
  ab_gen_u64 (g, s->flags);
  ab_gen_str (g, s->listener_path);
  ab_gen_arr_open (g);
  for (i = 0; i < s->architectures.n; i++)
    ab_gen_str (g, s->architectures.v[i]);
  ab_gen_arr_close (g);
  ab_gen_arr_open (g);
  for (i = 0; i < s->n_syscalls; i++)
    {
      const struct ab_seccomp_rule *r = &s->syscalls[i];
      ab_gen_arr_open (g);
      for (k = 0; k < r->names.n; k++)
        ab_gen_str (g, r->names.v[k]);
      ab_gen_arr_close (g);
      ab_gen_i64 (g, r->action);
      ab_gen_bool (g, r->errno_ret_set);
      ab_gen_u64 (g, r->errno_ret);
      ab_gen_arr_open (g);
      for (k = 0; k < r->n_args; k++)
        {
          ab_gen_u64 (g, r->args[k].index);
          ab_gen_u64 (g, r->args[k].value);
          ab_gen_u64 (g, r->args[k].value_two);
          ab_gen_i64 (g, r->args[k].op);
        }
      ab_gen_arr_close (g);
    }
  ab_gen_arr_close (g);
  ab_gen_arr_close (g);
  return ab_gen_steal (g, false, len);
}

static uint64_t
fnv1a (const char *p, size_t n)
{
  uint64_t h = 0xcbf29ce484222325ull;
  size_t i;

  for (i = 0; i < n; i++)
    {
      h ^= (unsigned char) p[i];
      h *= 0x100000001b3ull;
    }
  return h;
}

static int
cache_dir (const char *root, bool create)
{
  _cleanup_free_ char *d1 = xasprintf ("%s/.cache", root);
  _cleanup_free_ char *d2 = xasprintf ("%s/.cache/seccomp", root);

  if (create)
    {
      mkdir (d1, 0700);
      mkdir (d2, 0700);
    }
  return open (d2, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
}

static bool
load (int dfd, const char *name, const char *key, size_t keylen, struct ab_seccomp_prog *out)
{
  _cleanup_free_ char *buf = NULL;
  size_t len, off = sizeof MAGIC - 1;
  uint32_t kl, flags, n;

  if (ab_read_file_at (dfd, name, 1u << 20, &buf, &len, NULL) < 0)
    return false;
  if (len < off + 12 || memcmp (buf, MAGIC, off) != 0)
    return false;
  memcpy (&kl, buf + off, 4);
  memcpy (&flags, buf + off + 4, 4);
  memcpy (&n, buf + off + 8, 4);
  off += 12;
  if (kl != keylen || len - off < kl || memcmp (buf + off, key, keylen) != 0)
    return false; /* another profile with the same hash: a miss */
  off += kl;
  if (n == 0 || n > 4096 || len - off != (size_t) n * sizeof (struct sock_filter))
    return false;
  memset (out, 0, sizeof *out);
  out->insns = xmalloc ((size_t) n * sizeof (struct sock_filter));
  memcpy (out->insns, buf + off, (size_t) n * sizeof (struct sock_filter));
  out->len = (unsigned short) n;
  out->flags = flags;
  return true;
}

static void
store (int dfd, const char *name, const char *key, size_t keylen, const struct ab_seccomp_prog *p)
{
  size_t insn = (size_t) p->len * sizeof (struct sock_filter);
  size_t len = sizeof MAGIC - 1 + 12 + keylen + insn, off = sizeof MAGIC - 1;
  _cleanup_free_ char *buf = xmalloc (len);
  uint32_t kl = (uint32_t) keylen, flags = p->flags, n = p->len;

  memcpy (buf, MAGIC, off);
  memcpy (buf + off, &kl, 4);
  memcpy (buf + off + 4, &flags, 4);
  memcpy (buf + off + 8, &n, 4);
  off += 12;
  memcpy (buf + off, key, keylen);
  memcpy (buf + off + keylen, p->insns, insn);
  /* best effort: a cache that cannot be written is only slower */
  ab_write_file_atomic (dfd, name, buf, len, 0600, NULL);
}

int
ab_seccomp_compile_cached (const char *root, const struct ab_seccomp *s, struct ab_seccomp_prog *out,
                           ab_error_t *err)
{
  _cleanup_free_ char *key = NULL;
  _cleanup_close_ int dfd = -1;
  char name[32];
  size_t keylen;

  if (root == NULL || s->listener_path)
    return ab_seccomp_compile (s, out, err);
  key = canonical_key (s, &keylen);
  snprintf (name, sizeof name, "%016llx", (unsigned long long) fnv1a (key, keylen));
  dfd = cache_dir (root, false);
  if (dfd >= 0 && load (dfd, name, key, keylen, out))
    return 0;
  if (ab_seccomp_compile (s, out, err) < 0)
    return -1;
  if (dfd < 0)
    dfd = cache_dir (root, true);
  if (dfd >= 0)
    store (dfd, name, key, keylen, out);
  return 0;
}
