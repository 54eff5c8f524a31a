/* process.capabilities -> the bounding, permitted, inheritable, effective and
 * ambient sets of the container process, with libcap.
 *
 * Nothing is kept implicitly: a set absent from config.json is empty.  The
 * program inside is hostile, so every capability it does not need is one
 * kernel attack surface less (CAP_SYS_ADMIN alone is most of the runc CVE
 * history).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdatomic.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/caps.h"
#include "base/log.h"
#include "base/util.h"
#include "spec/tables.h"


static const char *
cap_name (int cap, char *buf, size_t size)
{
  if (ab_cap_name (cap) != NULL)
    return ab_cap_name (cap);
  snprintf (buf, size, "capability %d", cap);
  return buf;
}

static inline void
cap_freep (cap_t *c)
{
  if (*c != NULL)
    cap_free (*c);
}
#define _cleanup_cap_ _cleanup_ (cap_freep)

static inline uint64_t
cap_bit (int cap)
{
  return UINT64_C (1) << cap;
}

static uint64_t
configured (const struct ab_capabilities *c, enum ab_capset set)
{
  return c->set[set] ? c->mask[set] : 0;
}

/* Whether capability `cap` exists on this kernel, asked directly:
   PR_CAPBSET_READ answers 0 or 1 for a capability it knows and fails with
   EINVAL past the last one.  1 / 0, or -1 with errno for any other failure,
   which proves nothing either way. */
static int
cap_exists (int cap)
{
  if (prctl (PR_CAPBSET_READ, (unsigned long)cap, 0, 0, 0) >= 0)
    return 1;
  return errno == EINVAL ? 0 : -1;
}

/* The kernel's last capability, or -1 with errno.  Never libcap's
   cap_max_bits () alone: its constructor probes PR_CAPBSET_READ once and
   reads any failure of that probe as "no such capability" (then it says
   32, and capabilities 32..40 were once left in the bounding set).  Its
   count is only a guess here, taken when the kernel confirms it: the
   capability after it does not exist (EINVAL).  (A guess too high cannot
   come from a failed probe; it would fail the drops, not skip one.)
   Otherwise /proc/sys/kernel/cap_last_cap, read with plain syscalls;
   otherwise PR_CAPBSET_READ upward from 0 to the first EINVAL.  A failure
   that is not EINVAL is an error, never an end. */
static int
read_last_cap (void)
{
  char buf[16];
  ssize_t n;
  int fd, v = 0, cap = (int)cap_max_bits () - 1;

  if (cap >= 0 && cap < AB_CAP_LAST && cap_exists (cap + 1) == 0)
    return cap;
  fd = open ("/proc/sys/kernel/cap_last_cap", O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd >= 0)
    {
      n = read (fd, buf, sizeof buf - 1);
      close (fd);
      if (n > 0)
        {
          ssize_t i;

          for (i = 0; i < n && buf[i] >= '0' && buf[i] <= '9' && v <= AB_CAP_LAST; i++)
            v = v * 10 + (buf[i] - '0');
          if (i > 0 && (i == n || buf[i] == '\n') && v <= AB_CAP_LAST)
            return v;
        }
    }
  for (cap = 0; cap <= AB_CAP_LAST; cap++)
    {
      int r = cap_exists (cap);

      if (r < 0)
        return -1;
      if (r == 0)
        {
          if (cap > 0)
            return cap - 1;
          errno = EINVAL; /* no capability at all: not a kernel we know */
          return -1;
        }
    }
  return AB_CAP_LAST;
}

static atomic_int last_cap_cached = -1;

int
ab_caps_last_cap (void)
{
  int v = atomic_load_explicit (&last_cap_cached, memory_order_relaxed);

  if (v < 0)
    {
      int saved = errno;

      v = read_last_cap ();
      if (v < 0)
        return -1; /* errno from the failed probe; asked again next time */
      errno = saved;
      atomic_store_explicit (&last_cap_cached, v, memory_order_relaxed);
    }
  return v;
}

size_t
ab_caps_beyond_kernel (uint64_t mask, int last, char ***names)
{
  char buf[32];
  size_t n = 0;
  int cap;

  *names = NULL;
  for (cap = last + 1; cap >= 0 && cap <= AB_CAP_LAST; cap++)
    if (mask & cap_bit (cap))
      {
        const char *name = ab_cap_name (cap);
        *names = xreallocarray (*names, n + 1, sizeof **names);
        (*names)[n++] = xstrdup (name ? name : cap_name (cap, buf, sizeof buf));
      }
  return n;
}

/* Drop `cap` from the bounding set unless `keep` has it.  A failed drop
   is excused only by the kernel saying the capability is not in the set
   (PR_CAPBSET_DROP wants CAP_SETPCAP even for a no-op, and a nested
   runtime may lack it). */
static int
drop_one (int cap, uint64_t keep, ab_error_t *err)
{
  char buf[32];
  int e;

  if (keep & cap_bit (cap))
    return 0;
  if (prctl (PR_CAPBSET_DROP, (unsigned long)cap, 0, 0, 0) == 0)
    return 0;
  e = errno;
  if (prctl (PR_CAPBSET_READ, (unsigned long)cap, 0, 0, 0) == 0)
    return 0; /* not in the set: nothing to drop */
  return ab_error_set (err, e, "drop %s from the bounding set: prctl(PR_CAPBSET_DROP)",
                       cap_name (cap, buf, sizeof buf));
}

int
ab_caps_drop_bounding (const struct ab_capabilities *c, ab_error_t *err)
{
  uint64_t keep = configured (c, AB_CAP_BOUNDING);
  int last = atomic_load_explicit (&last_cap_cached, memory_order_relaxed);
  int cap;

  /* The bounding set is what an execve can ever grant (file capabilities,
     setuid root): a capability left in it could come back later.  So every
     capability not kept is dropped, one PR_CAPBSET_DROP each, with no
     PR_CAPBSET_READ first (it only doubled the syscalls: a drop of an
     absent capability succeeds).  The read can only excuse a failure,
     never skip a drop, so a capability present in the set is always
     either dropped or an error.  Where to stop is not taken on trust: the
     count known so far (or libcap's, which can only be too low: its probe
     reads a failure as "no such capability") is where the drops start to
     ask the kernel, below. */
  if (last < 0)
    last = (int)cap_max_bits () - 1;
  if (last > AB_CAP_LAST)
    last = AB_CAP_LAST;
  for (cap = 0; cap <= last; cap++)
    if (drop_one (cap, keep, err) < 0)
      return -1;
  /* The check that the set is empty now: every drop above was answered by
     the kernel (0 from PR_CAPBSET_DROP is the capability gone), so what is
     left to prove is that there is no capability past `last`.  The kernel
     says so with EINVAL; if it knows more than `last` said after all, those
     are dropped too, up to its EINVAL.  Any other answer fails the create:
     an unfinished bounding set is never read as a finished one.  The end
     found is the kernel's last capability, for ab_caps_apply. */
  for (cap = last + 1;; cap++)
    {
      int r = cap > AB_CAP_LAST ? 0 : cap_exists (cap);
      char buf[32];

      if (r == 0)
        {
          atomic_store_explicit (&last_cap_cached, cap - 1, memory_order_relaxed);
          return 0;
        }
      if (r < 0)
        return ab_error_set (err, errno, "check that the bounding set ends at %s: prctl(PR_CAPBSET_READ)",
                             cap_name (cap - 1, buf, sizeof buf));
      if (drop_one (cap, keep, err) < 0)
        return -1;
    }
}

/* capset failed with EPERM: find the capability to blame, so the message says
   what to change in config.json. */
static int
explain_capset_failure (const uint64_t want[AB_CAP__SETS], int last, int errnum, ab_error_t *err)
{
  _cleanup_cap_ cap_t cur = cap_get_proc ();
  char buf[32];
  int cap;

  for (cap = 0; cap <= last; cap++)
    {
      uint64_t bit = cap_bit (cap);
      cap_flag_value_t prm = CAP_CLEAR, inh = CAP_CLEAR;

      if ((want[AB_CAP_EFFECTIVE] & bit) && !(want[AB_CAP_PERMITTED] & bit))
        return ab_error_setc (err, AB_EC_CONFIG, errnum,
                              "process.capabilities.effective: %s is not in the permitted set: capset",
                              cap_name (cap, buf, sizeof buf));
      if (cur != NULL)
        {
          cap_get_flag (cur, (cap_value_t)cap, CAP_PERMITTED, &prm);
          cap_get_flag (cur, (cap_value_t)cap, CAP_INHERITABLE, &inh);
        }
      if ((want[AB_CAP_PERMITTED] & bit) && prm != CAP_SET)
        return ab_error_set (
            err, errnum,
            "process.capabilities.permitted: %s cannot be granted, the runtime does not hold it: "
            "capset",
            cap_name (cap, buf, sizeof buf));
      if ((want[AB_CAP_INHERITABLE] & bit) && prm != CAP_SET && inh != CAP_SET)
        return ab_error_set (
            err, errnum,
            "process.capabilities.inheritable: %s cannot be granted, the runtime does not hold "
            "it: capset",
            cap_name (cap, buf, sizeof buf));
      if ((want[AB_CAP_INHERITABLE] & bit) && inh != CAP_SET && cap_get_bound ((cap_value_t)cap) == 0)
        return ab_error_set (err, errnum,
                             "process.capabilities.inheritable: %s is not in the bounding set: capset",
                             cap_name (cap, buf, sizeof buf));
    }
  return ab_error_set (err, errnum, "capset of the permitted, inheritable and effective sets");
}

static int
set_ambient (const uint64_t want[AB_CAP__SETS], int last, ab_error_t *err)
{
  uint64_t ambient = want[AB_CAP_AMBIENT];
  char buf[32];
  int cap;

  /* Start from nothing: an ambient capability inherited from the runtime
     must not survive into the container.  One PR_CAP_AMBIENT_CLEAR_ALL, not
     libcap's cap_reset_ambient (which first asks PR_CAP_AMBIENT_IS_SET for
     every capability): clearing an empty set is a no-op, so
     the clear leaves the same (empty) set.  No clear at all when no
     capability is both permitted and inheritable: the capset just made took
     every such one out of the ambient set. */
  if ((want[AB_CAP_PERMITTED] & want[AB_CAP_INHERITABLE]) == 0)
    return 0;
  if (prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
    {
      /* Kernels before 4.3 have no ambient set: nothing to clear. */
      if (errno == EINVAL && ambient == 0)
        return 0;
      return ab_error_set (err, errno, "prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)");
    }

  for (cap = 0; cap <= last; cap++)
    {
      if (!(ambient & cap_bit (cap)))
        continue;
      /* The kernel raises an ambient capability only if it is permitted and
         inheritable.  config.md: a capability that cannot be granted is a
         warning, not a failure (runc's default config asks for exactly
         this); the parent warned before clone (ab_caps_warnings). */
      if (!(want[AB_CAP_PERMITTED] & cap_bit (cap)) || !(want[AB_CAP_INHERITABLE] & cap_bit (cap)))
        continue;
      if (cap_set_ambient ((cap_value_t)cap, CAP_SET) < 0)
        return ab_error_set (err, errno,
                             "process.capabilities.ambient: raise %s: prctl(PR_CAP_AMBIENT_RAISE)",
                             cap_name (cap, buf, sizeof buf));
    }
  return 0;
}

/* config.md: a capability that "cannot be granted otherwise MUST be logged
   as a warning ... Runtimes SHOULD NOT fail" (a runtime that runs in a
   restricted environment).  What this process does not hold (permitted; for
   inheritable, permitted or inheritable and still in the bounding set) no
   capset can give, so it leaves the sets the container gets, with a
   warning.  Only ever a loss: the sets asked for shrink, never grow.
   Effective and ambient go with permitted. */
static void
drop_ungrantable (uint64_t want[AB_CAP__SETS], int last)
{
  _cleanup_cap_ cap_t cur = cap_get_proc ();
  char buf[32];
  int cap;

  if (cur == NULL)
    return; /* capset will fail and explain_capset_failure says why */
  for (cap = 0; cap <= last; cap++)
    {
      uint64_t bit = cap_bit (cap);
      cap_flag_value_t prm = CAP_CLEAR, inh = CAP_CLEAR;

      cap_get_flag (cur, (cap_value_t)cap, CAP_PERMITTED, &prm);
      cap_get_flag (cur, (cap_value_t)cap, CAP_INHERITABLE, &inh);
      if ((want[AB_CAP_PERMITTED] & bit) && prm != CAP_SET)
        {
          ab_warn (
              "process.capabilities.permitted: %s cannot be granted, the runtime does not hold it: dropped",
              cap_name (cap, buf, sizeof buf));
          want[AB_CAP_PERMITTED] &= ~bit;
          want[AB_CAP_EFFECTIVE] &= ~bit;
          want[AB_CAP_AMBIENT] &= ~bit;
        }
      if ((want[AB_CAP_INHERITABLE] & bit) && inh != CAP_SET
          && (prm != CAP_SET || cap_get_bound ((cap_value_t)cap) != 1))
        {
          ab_warn ("process.capabilities.inheritable: %s cannot be granted, the runtime does not hold it or "
                   "it is not in the bounding set: dropped",
                   cap_name (cap, buf, sizeof buf));
          want[AB_CAP_INHERITABLE] &= ~bit;
          want[AB_CAP_AMBIENT] &= ~bit;
        }
    }
}

static bool keepcaps_set;

int
ab_caps_keep_across_setuid (void)
{
  if (prctl (PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
    return -1;
  keepcaps_set = true;
  return 0;
}

int
ab_caps_apply (const struct ab_capabilities *c, ab_error_t *err)
{
  uint64_t want[AB_CAP__SETS];
  int last = ab_caps_last_cap ();
  uint64_t known;
  size_t i;
  int r;

  if (last < 0)
    return ab_error_set (err, errno,
                         "find the last capability of the kernel: /proc/sys/kernel/cap_last_cap, "
                         "prctl(PR_CAPBSET_READ)");

  /* Capabilities past the kernel's last one were warned about by the parser
     (unknown names) or cannot exist here: skip them silently. */
  known = last >= 63 ? UINT64_MAX : (cap_bit (last + 1) - 1);
  for (i = 0; i < AB_CAP__SETS; i++)
    want[i] = configured (c, (enum ab_capset)i) & known;

  /* Nothing asked for is nothing to find ungrantable. */
  if (want[AB_CAP_PERMITTED] | want[AB_CAP_INHERITABLE] | want[AB_CAP_EFFECTIVE] | want[AB_CAP_AMBIENT])
    drop_ungrantable (want, last);

  /* One capset(2) for the three sets: permitted can only shrink, and effective
     and inheritable are checked against the new permitted set.  Made
     directly: libcap's cap_set_proc asks the kernel for its capability
     version first, every time. */
  {
    struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
    struct __user_cap_data_struct data[2] = { { 0 } };

    for (i = 0; i < 2; i++)
      {
        data[i].permitted = (uint32_t)(want[AB_CAP_PERMITTED] >> (32 * i));
        data[i].inheritable = (uint32_t)(want[AB_CAP_INHERITABLE] >> (32 * i));
        data[i].effective = (uint32_t)(want[AB_CAP_EFFECTIVE] >> (32 * i));
      }
    r = (int)syscall (SYS_capset, &hdr, data);
  }
  if (r < 0)
    {
      if (errno == EPERM)
        return explain_capset_failure (want, last, errno, err);
      return ab_error_set (err, errno, "capset of the permitted, inheritable and effective sets");
    }

  if (set_ambient (want, last, err) < 0)
    return -1;

  /* KEEPCAPS was only needed across the uid change; a later setuid in the
     container must drop the capabilities as it normally would.  Only ours
     to clear if we set it (execve clears it anyway). */
  if (keepcaps_set && prctl (PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
    return ab_error_set (err, errno, "prctl(PR_SET_KEEPCAPS, 0)");
  keepcaps_set = false;
  return 0;
}
