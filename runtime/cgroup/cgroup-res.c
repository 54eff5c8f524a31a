/* linux.resources -> the interface files of cgroup v1 and v2.
 *
 * Each limit goes to the hierarchy that holds its controller here: the v1
 * one when the controller is mounted as v1 (v1 and hybrid hosts), else the
 * v2 tree when the controller is enabled there.  A limit whose controller
 * is in neither is an error naming the JSON path and the file, never a
 * silent no-op.
 */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>

#include "runtime/cgroup/cgroup-internal.h"
#include "spec/spec.h"
#include "base/log.h"
#include "base/util.h"

#define JR "linux.resources."

struct res
{
  struct ab_cgroup *cg;
  char *v2avail; /* the leaf's cgroup.controllers, read when first asked */
  bool update;
  ab_error_t *err;
};

/* Only a controller missing from v1 is looked for in v2: on a hybrid host
   whose v1 has every one asked for, the file is never read. */
static const char *
v2avail (struct res *r)
{
  if (r->v2avail == NULL)
    r->v2avail = ab_cg_v2_available (r->cg);
  return r->v2avail;
}

/* Where one controller lives. */
struct target
{
  struct ab_cg_hier *h;
  bool v2;
};

/* The hierarchy of controller v1name (v2name in the v2 tree); an error
   naming what asked for it and the files it would have written. */
static int
find (struct res *r, const char *v1name, const char *v2name, const char *what, const char *file_v1,
      const char *file_v2, struct target *t)
{
  t->h = v1name ? ab_cg_v1 (r->cg, v1name) : NULL;
  t->v2 = false;
  if (t->h)
    return 0;
  if (v2name && r->cg->v2 && ab_word_in (v2avail (r), v2name))
    {
      t->h = r->cg->v2;
      t->v2 = true;
      return 0;
    }
  if (file_v1 && file_v2)
    return ab_error_setc (
        r->err, AB_EC_RESOURCE, 0,
        "%s: the %s controller is not available on this host (no `%s` in cgroup v1, no `%s` in "
        "cgroup v2)",
        what, v1name ? v1name : v2name, file_v1, file_v2);
  return ab_error_setc (r->err, AB_EC_RESOURCE, 0,
                        "%s: the %s controller is not available on this host (no `%s`%s)", what,
                        v1name ? v1name : v2name, file_v1 ? file_v1 : file_v2,
                        file_v1 ? ", and cgroup v2 has no equivalent" : "");
}

static int __attribute__ ((format (printf, 5, 6)))
wr (struct res *r, struct target *t, const char *file, const char *what, const char *fmt, ...)
{
  _cleanup_free_ char *val = NULL;
  va_list ap;
  int n;

  va_start (ap, fmt);
  n = vasprintf (&val, fmt, ap);
  va_end (ap);
  if (n < 0)
    abort ();
  return ab_cg_write (t->h, file, val, what, r->err);
}

static int
refuse (struct res *r, const char *what, const char *why)
{
  return ab_error_setc (r->err, AB_EC_CONFIG, 0, "%s: %s", what, why);
}

/* ---- memory ---------------------------------------------------------------- */

/* The JSON path of the first memory member that needs the controller. */
static const char *
memory_first (const struct ab_memory *m)
{
  return m->limit.set                ? JR "memory.limit"
         : m->reservation.set        ? JR "memory.reservation"
         : m->swap.set               ? JR "memory.swap"
         : m->swappiness.set         ? JR "memory.swappiness"
         : m->disable_oom_killer.set ? JR "memory.disableOOMKiller"
         : m->use_hierarchy.set      ? JR "memory.useHierarchy"
                                     : NULL;
}

static const char *
cpu_first (const struct ab_cpu *c)
{
  return c->shares.set             ? JR "cpu.shares"
         : c->quota.set            ? JR "cpu.quota"
         : c->period.set           ? JR "cpu.period"
         : c->burst.set            ? JR "cpu.burst"
         : c->realtime_runtime.set ? JR "cpu.realtimeRuntime"
         : c->realtime_period.set  ? JR "cpu.realtimePeriod"
         : c->idle.set             ? JR "cpu.idle"
                                   : NULL;
}

static int
memory_check_usage (struct res *r, struct target *t, const struct ab_memory *m)
{
  _cleanup_free_ char *text = NULL;
  uint64_t usage;

  if (!r->update || !m->check_before_update.set || !m->check_before_update.v || !m->limit.set
      || m->limit.v < 0)
    return 0;
  if (ab_cg_read (t->h, t->v2 ? "memory.current" : "memory.usage_in_bytes", &text, r->err) < 0)
    return ab_error_prefix (r->err, JR "memory.checkBeforeUpdate");
  text[strcspn (text, "\n")] = '\0';
  if (ab_parse_u64 (text, &usage) < 0)
    return ab_error_setc (r->err, AB_EC_RESOURCE, 0, JR "memory.checkBeforeUpdate: cannot parse usage `%s`",
                          text);
  if ((uint64_t)m->limit.v < usage)
    return ab_error_setc (r->err, AB_EC_RESOURCE, 0,
                          JR "memory.limit: %" PRId64 " is below the current usage of %" PRIu64
                             " bytes (checkBeforeUpdate)",
                          m->limit.v, usage);
  return 0;
}

/* memory.kernel and memory.kernelTCP (config-linux.md: OPTIONAL, NOT
   RECOMMENDED).  v1 has the files: kernelTCP is enforced, and the kmem
   limit was until Linux 5.16; a newer kernel accepts the write and keeps
   no limit, which the read back shows.  What the kernel does not enforce
   is a warning, as runc does, not a refusal: no limit is what the kernel
   gives every cgroup anyway. */
static int
kmem_v1 (struct res *r, struct target *t, const char *file, const char *what, int64_t v)
{
  _cleanup_free_ char *text = NULL;
  long page = sysconf (_SC_PAGESIZE);
  int64_t got;

  if (!ab_cg_has_file (t->h, file))
    {
      ab_warn ("%s: not enforced, this kernel has no `%s`", what, file);
      return 0;
    }
  if (wr (r, t, file, what, "%" PRId64, v) < 0)
    {
      if (r->err->errnum != EOPNOTSUPP && r->err->errnum != ENOTSUP)
        return -1;
      ab_warn ("%s: not enforced, this kernel refuses `%s`", what, file);
      return 0;
    }
  if (v < 0 || ab_cg_read (t->h, file, &text, r->err) < 0)
    return 0;
  /* The kernel keeps whole pages. */
  if (sscanf (text, "%" SCNd64, &got) != 1 || got != v / page * page)
    ab_warn ("%s: not enforced, this kernel ignores `%s` (kernel memory limits are deprecated)", what, file);
  return 0;
}

static int
memory_kmem_v1 (struct res *r, struct target *t, const struct ab_memory *m)
{
  if (m->kernel.set && kmem_v1 (r, t, "memory.kmem.limit_in_bytes", JR "memory.kernel", m->kernel.v) < 0)
    return -1;
  if (m->kernel_tcp.set
      && kmem_v1 (r, t, "memory.kmem.tcp.limit_in_bytes", JR "memory.kernelTCP", m->kernel_tcp.v) < 0)
    return -1;
  return 0;
}

/* No kernel memory limits in v2, or no memory controller at all: a
   warning (see kmem_v1). */
static void
memory_kmem_warn (const struct ab_memory *m, const char *why)
{
  if (m->kernel.set && m->kernel.v != -1)
    ab_warn (JR "memory.kernel: not enforced, %s", why);
  if (m->kernel_tcp.set && m->kernel_tcp.v != -1)
    ab_warn (JR "memory.kernelTCP: not enforced, %s", why);
}

static int
memory_v1 (struct res *r, struct target *t, const struct ab_memory *m)
{
  if (memory_kmem_v1 (r, t, m) < 0)
    return -1;
  if (m->swap.set && m->limit.set && !r->update && t->h->created > 0)
    {
      /* A cgroup we just made has both at the maximum: the limit first
         always fits below memsw, then memsw (the kernel refuses one below
         the limit either way).  Spares the EINVAL round trip below. */
      if (wr (r, t, "memory.limit_in_bytes", JR "memory.limit", "%" PRId64, m->limit.v) < 0
          || wr (r, t, "memory.memsw.limit_in_bytes", JR "memory.swap", "%" PRId64, m->swap.v) < 0)
        return -1;
    }
  else if (m->swap.set)
    {
      /* The kernel keeps limit <= memsw at every step: write memsw first
         when it grows, second when it shrinks below the current limit. */
      if (wr (r, t, "memory.memsw.limit_in_bytes", JR "memory.swap", "%" PRId64, m->swap.v) < 0)
        {
          if (r->err->errnum != EINVAL || !m->limit.set)
            return -1;
          if (wr (r, t, "memory.limit_in_bytes", JR "memory.limit", "%" PRId64, m->limit.v) < 0
              || wr (r, t, "memory.memsw.limit_in_bytes", JR "memory.swap", "%" PRId64, m->swap.v) < 0)
            return -1;
        }
      else if (m->limit.set
               && wr (r, t, "memory.limit_in_bytes", JR "memory.limit", "%" PRId64, m->limit.v) < 0)
        return -1;
    }
  else if (m->limit.set && wr (r, t, "memory.limit_in_bytes", JR "memory.limit", "%" PRId64, m->limit.v) < 0)
    {
      /* As runc: lifting the limit (-1) with no swap value lifts memsw
         too, first, which would otherwise stay below it (EINVAL). */
      if (!r->update || m->limit.v != -1 || r->err->errnum != EINVAL
          || wr (r, t, "memory.memsw.limit_in_bytes", JR "memory.swap", "-1") < 0
          || wr (r, t, "memory.limit_in_bytes", JR "memory.limit", "-1") < 0)
        return -1;
    }
  if (m->reservation.set
      && wr (r, t, "memory.soft_limit_in_bytes", JR "memory.reservation", "%" PRId64, m->reservation.v) < 0)
    return -1;
  if (m->swappiness.set
      && wr (r, t, "memory.swappiness", JR "memory.swappiness", "%" PRIu64, m->swappiness.v) < 0)
    return -1;
  if (m->disable_oom_killer.set
      && wr (r, t, "memory.oom_control", JR "memory.disableOOMKiller", "%d", m->disable_oom_killer.v ? 1 : 0)
             < 0)
    return -1;
  if (m->use_hierarchy.set
      && wr (r, t, "memory.use_hierarchy", JR "memory.useHierarchy", "%d", m->use_hierarchy.v ? 1 : 0) < 0)
    return -1;
  return 0;
}

static void
bytes_or_max (char *buf, size_t len, int64_t v)
{
  if (v < 0)
    snprintf (buf, len, "max");
  else
    snprintf (buf, len, "%" PRId64, v);
}

static int
memory_v2 (struct res *r, struct target *t, const struct ab_memory *m)
{
  char buf[32];

  if (m->swappiness.set)
    return refuse (r, JR "memory.swappiness", "cgroup v2 has no per-cgroup swappiness");
  if (m->disable_oom_killer.set && m->disable_oom_killer.v)
    return refuse (r, JR "memory.disableOOMKiller", "cgroup v2 cannot disable the OOM killer");
  if (m->use_hierarchy.set && !m->use_hierarchy.v)
    return refuse (r, JR "memory.useHierarchy", "cgroup v2 accounting is always hierarchical");
  memory_kmem_warn (m, "cgroup v2 has no kernel memory limits");
  if (m->limit.set)
    {
      bytes_or_max (buf, sizeof buf, m->limit.v);
      if (wr (r, t, "memory.max", JR "memory.limit", "%s", buf) < 0)
        return -1;
    }
  if (m->reservation.set)
    {
      bytes_or_max (buf, sizeof buf, m->reservation.v);
      if (wr (r, t, "memory.low", JR "memory.reservation", "%s", buf) < 0)
        return -1;
    }
  if (m->swap.set)
    {
      /* v1's memory+swap becomes v2's swap alone. */
      bytes_or_max (buf, sizeof buf, m->swap.v < 0 ? -1 : m->swap.v - m->limit.v);
      /* Without swap accounting the file is absent; "unlimited" is then
         what the kernel does anyway. */
      if ((m->swap.v >= 0 || ab_cg_has_file (t->h, "memory.swap.max"))
          && wr (r, t, "memory.swap.max", JR "memory.swap", "%s", buf) < 0)
        return -1;
    }
  return 0;
}

static int
apply_memory (struct res *r, const struct ab_memory *m)
{
  struct target t;

  if (memory_first (m) == NULL)
    {
      /* Kernel limits alone need no memory controller: without a v1 one
         they are not enforced, which is only a warning. */
      ab_error_t quiet = { 0 };
      struct res q = *r;

      if (!m->kernel.set && !m->kernel_tcp.set)
        return 0;
      q.err = &quiet;
      if (find (&q, "memory", NULL, JR "memory.kernel", "memory.limit_in_bytes", "memory.max", &t) == 0)
        return memory_kmem_v1 (r, &t, m);
      memory_kmem_warn (m, "no cgroup v1 memory controller here");
      return 0;
    }
  if (find (r, "memory", "memory", memory_first (m), "memory.limit_in_bytes", "memory.max", &t) < 0)
    return -1;
  if (memory_check_usage (r, &t, m) < 0)
    return -1;
  return t.v2 ? memory_v2 (r, &t, m) : memory_v1 (r, &t, m);
}

/* ---- cpu ---------------------------------------------------------------------- */

/* cpu.shares (2..262144) to cpu.weight (1..10000), as runc and crun do. */
static uint64_t
ab_cg_shares_to_weight (uint64_t shares)
{
  if (shares < 2)
    shares = 2;
  if (shares > 262144)
    shares = 262144;
  return 1 + ((shares - 2) * 9999) / 262142;
}

static int
cpu_bandwidth_v1 (struct res *r, struct target *t, const struct ab_cpu *c)
{
  if (c->period.set && wr (r, t, "cpu.cfs_period_us", JR "cpu.period", "%" PRIu64, c->period.v) < 0)
    {
      /* A shorter period can make the current quota invalid: quota first. */
      if (r->err->errnum != EINVAL || !c->quota.set)
        return -1;
      if (wr (r, t, "cpu.cfs_quota_us", JR "cpu.quota", "%" PRId64, c->quota.v) < 0
          || wr (r, t, "cpu.cfs_period_us", JR "cpu.period", "%" PRIu64, c->period.v) < 0)
        return -1;
    }
  else if (c->quota.set && wr (r, t, "cpu.cfs_quota_us", JR "cpu.quota", "%" PRId64, c->quota.v) < 0)
    return -1;
  if (c->burst.set && wr (r, t, "cpu.cfs_burst_us", JR "cpu.burst", "%" PRIu64, c->burst.v) < 0)
    return -1;
  return 0;
}

static int
cpu_bandwidth_v2 (struct res *r, struct target *t, const struct ab_cpu *c)
{
  char quota[32] = "max";
  uint64_t period = 100000;

  if (c->quota.set || c->period.set)
    {
      _cleanup_free_ char *cur = NULL;
      /* cpu.max holds both: keep the half not given. */
      if (ab_cg_read (t->h, "cpu.max", &cur, r->err) < 0)
        return ab_error_prefix (r->err, JR "cpu");
      if (sscanf (cur, "%31s %" SCNu64, quota, &period) != 2)
        return ab_error_setc (r->err, AB_EC_RESOURCE, 0, JR "cpu: cannot parse `%s/cpu.max`", t->h->dir);
      if (c->quota.set)
        bytes_or_max (quota, sizeof quota, c->quota.v);
      if (c->period.set)
        period = c->period.v;
      if (wr (r, t, "cpu.max", c->quota.set ? JR "cpu.quota" : JR "cpu.period", "%s %" PRIu64, quota, period)
          < 0)
        return -1;
    }
  if (c->burst.set && wr (r, t, "cpu.max.burst", JR "cpu.burst", "%" PRIu64, c->burst.v) < 0)
    return -1;
  return 0;
}

static int
cpu_realtime (struct res *r, struct target *t, const struct ab_cpu *c)
{
  if (!c->realtime_runtime.set && !c->realtime_period.set)
    return 0;
  if (t->v2)
    return refuse (r, c->realtime_runtime.set ? JR "cpu.realtimeRuntime" : JR "cpu.realtimePeriod",
                   "cgroup v2 has no realtime bandwidth control");
  if (c->realtime_period.set
      && wr (r, t, "cpu.rt_period_us", JR "cpu.realtimePeriod", "%" PRIu64, c->realtime_period.v) < 0)
    {
      if (r->err->errnum != EINVAL || !c->realtime_runtime.set)
        return -1;
      if (wr (r, t, "cpu.rt_runtime_us", JR "cpu.realtimeRuntime", "%" PRId64, c->realtime_runtime.v) < 0
          || wr (r, t, "cpu.rt_period_us", JR "cpu.realtimePeriod", "%" PRIu64, c->realtime_period.v) < 0)
        return -1;
    }
  else if (c->realtime_runtime.set
           && wr (r, t, "cpu.rt_runtime_us", JR "cpu.realtimeRuntime", "%" PRId64, c->realtime_runtime.v) < 0)
    return -1;
  return 0;
}

static int
apply_cpu (struct res *r, const struct ab_cpu *c)
{
  struct target t;

  /* Realtime bandwidth is a v1 feature: say so rather than blame a missing
     v2 cpu controller. */
  if ((c->realtime_runtime.set || c->realtime_period.set) && ab_cg_v1 (r->cg, "cpu") == NULL && r->cg->v2)
    return refuse (r, c->realtime_runtime.set ? JR "cpu.realtimeRuntime" : JR "cpu.realtimePeriod",
                   "cgroup v2 has no realtime bandwidth control");
  if (cpu_first (c) != NULL)
    {
      if (find (r, "cpu", "cpu", cpu_first (c), "cpu.shares", "cpu.weight", &t) < 0)
        return -1;
      if (c->shares.set)
        {
          if (t.v2 ? wr (r, &t, "cpu.weight", JR "cpu.shares", "%" PRIu64,
                         ab_cg_shares_to_weight (c->shares.v))
                   : wr (r, &t, "cpu.shares", JR "cpu.shares", "%" PRIu64, c->shares.v))
            return -1;
        }
      if ((t.v2 ? cpu_bandwidth_v2 (r, &t, c) : cpu_bandwidth_v1 (r, &t, c)) < 0
          || cpu_realtime (r, &t, c) < 0)
        return -1;
      if (c->idle.set && wr (r, &t, "cpu.idle", JR "cpu.idle", "%" PRId64, c->idle.v) < 0)
        return -1;
    }
  if (c->cpus || c->mems)
    {
      if (find (r, "cpuset", "cpuset", c->cpus ? JR "cpu.cpus" : JR "cpu.mems", "cpuset.cpus", "cpuset.cpus",
                &t)
          < 0)
        return -1;
      if (c->cpus && wr (r, &t, "cpuset.cpus", JR "cpu.cpus", "%s", c->cpus) < 0)
        return -1;
      if (c->mems && wr (r, &t, "cpuset.mems", JR "cpu.mems", "%s", c->mems) < 0)
        return -1;
    }
  return 0;
}

/* ---- pids ---------------------------------------------------------------------- */

static int
apply_pids (struct res *r, const ab_opt_i64 *limit)
{
  struct target t;

  if (!limit->set)
    return 0;
  if (find (r, "pids", "pids", JR "pids.limit", "pids.max", "pids.max", &t) < 0)
    return -1;
  /* 0 is a valid limit (no new task at all); any negative value is "max". */
  if (limit->v < 0)
    return wr (r, &t, "pids.max", JR "pids.limit", "max");
  return wr (r, &t, "pids.max", JR "pids.limit", "%" PRId64, limit->v);
}

/* ---- block io -------------------------------------------------------------------- */

/* blkio weight (10..1000) to io.weight (1..10000), as runc does. */
static uint64_t
ab_cg_blkio_to_io_weight (uint64_t w)
{
  if (w < 10)
    return 1;
  return 1 + (w - 10) * 9999 / 990;
}

static int
blkio_weight (struct res *r, struct target *t, const char *what, const char *dev, uint64_t w)
{
  const char *sep = dev[0] ? " " : "";

  if (!t->v2)
    {
      /* CFQ's blkio.weight is gone from current kernels; BFQ has its own. */
      const char *file = dev[0] ? "blkio.weight_device" : "blkio.weight";

      if (!ab_cg_has_file (t->h, file))
        file = dev[0] ? "blkio.bfq.weight_device" : "blkio.bfq.weight";
      if (!ab_cg_has_file (t->h, file))
        return refuse (r, what,
                       "this host's blkio controller has no weight (CFQ is gone from the kernel, and the BFQ "
                       "I/O scheduler is not loaded)");
      return wr (r, t, file, what, "%s%s%" PRIu64, dev, sep, w);
    }
  if (ab_cg_has_file (t->h, "io.bfq.weight"))
    return wr (r, t, "io.bfq.weight", what, "%s%s%" PRIu64, dev[0] ? dev : "default", " ", w);
  return wr (r, t, "io.weight", what, "%s %" PRIu64, dev[0] ? dev : "default", ab_cg_blkio_to_io_weight (w));
}

static const char *blkio_first (const struct ab_blkio *b);

static int
apply_blkio (struct res *r, const struct ab_blkio *b)
{
  static const char *const v1_files[AB_THROTTLE__KINDS] = {
    [AB_THROTTLE_READ_BPS] = "blkio.throttle.read_bps_device",
    [AB_THROTTLE_WRITE_BPS] = "blkio.throttle.write_bps_device",
    [AB_THROTTLE_READ_IOPS] = "blkio.throttle.read_iops_device",
    [AB_THROTTLE_WRITE_IOPS] = "blkio.throttle.write_iops_device",
  };
  static const char *const v2_keys[AB_THROTTLE__KINDS] = { "rbps", "wbps", "riops", "wiops" };
  static const char *const names[AB_THROTTLE__KINDS]
      = { "throttleReadBpsDevice", "throttleWriteBpsDevice", "throttleReadIOPSDevice",
          "throttleWriteIOPSDevice" };
  struct target t;
  size_t i, k;

  if (find (r, "blkio", "io", blkio_first (b), "blkio.weight", "io.weight", &t) < 0)
    return -1;
  if (b->weight.set && blkio_weight (r, &t, JR "blockIO.weight", "", b->weight.v) < 0)
    return -1;
  if (b->leaf_weight.set)
    {
      if (t.v2)
        return refuse (r, JR "blockIO.leafWeight", "cgroup v2 has no leaf weight");
      if (wr (r, &t, "blkio.leaf_weight", JR "blockIO.leafWeight", "%" PRIu64, b->leaf_weight.v) < 0)
        return -1;
    }
  for (i = 0; i < b->n_weight_device; i++)
    {
      const struct ab_blkio_weight_device *d = &b->weight_device[i];
      char what[96], dev[48];

      snprintf (what, sizeof what, JR "blockIO.weightDevice[%zu]", i);
      snprintf (dev, sizeof dev, "%" PRId64 ":%" PRId64, d->major, d->minor);
      if (d->weight.set && blkio_weight (r, &t, what, dev, d->weight.v) < 0)
        return -1;
      if (d->leaf_weight.set)
        {
          if (t.v2)
            return refuse (r, what, "cgroup v2 has no leaf weight");
          if (wr (r, &t, "blkio.leaf_weight_device", what, "%s %" PRIu64, dev, d->leaf_weight.v) < 0)
            return -1;
        }
    }
  for (k = 0; k < AB_THROTTLE__KINDS; k++)
    for (i = 0; i < b->n_throttle[k]; i++)
      {
        const struct ab_blkio_throttle *d = &b->throttle[k][i];
        char what[96];

        snprintf (what, sizeof what, JR "blockIO.%s[%zu]", names[k], i);
        if (!t.v2)
          {
            if (wr (r, &t, v1_files[k], what, "%" PRId64 ":%" PRId64 " %" PRIu64, d->major, d->minor, d->rate)
                < 0)
              return -1;
          }
        else if (d->rate == 0) /* v1's "0" removes the limit; v2 says "max" */
          {
            if (wr (r, &t, "io.max", what, "%" PRId64 ":%" PRId64 " %s=max", d->major, d->minor, v2_keys[k])
                < 0)
              return -1;
          }
        else if (wr (r, &t, "io.max", what, "%" PRId64 ":%" PRId64 " %s=%" PRIu64, d->major, d->minor,
                     v2_keys[k], d->rate)
                 < 0)
          return -1;
      }
  return 0;
}

static const char *
blkio_first (const struct ab_blkio *b)
{
  static const char *const names[AB_THROTTLE__KINDS]
      = { JR "blockIO.throttleReadBpsDevice", JR "blockIO.throttleWriteBpsDevice",
          JR "blockIO.throttleReadIOPSDevice", JR "blockIO.throttleWriteIOPSDevice" };
  size_t k;

  if (b->weight.set)
    return JR "blockIO.weight";
  if (b->leaf_weight.set)
    return JR "blockIO.leafWeight";
  if (b->n_weight_device)
    return JR "blockIO.weightDevice";
  for (k = 0; k < AB_THROTTLE__KINDS; k++)
    if (b->n_throttle[k])
      return names[k];
  return JR "blockIO";
}

static bool
blkio_any (const struct ab_blkio *b)
{
  size_t k;

  if (b->weight.set || b->leaf_weight.set || b->n_weight_device)
    return true;
  for (k = 0; k < AB_THROTTLE__KINDS; k++)
    if (b->n_throttle[k])
      return true;
  return false;
}

/* ---- hugetlb, network, rdma -------------------------------------------------------- */

/* "2MB", "1GB", "64KB": the page size becomes part of a file name, so it is
   held to exactly this shape. */
static int
apply_hugetlb (struct res *r, const struct ab_resources *res)
{
  struct target t;
  size_t i;

  for (i = 0; i < res->n_hugepages; i++)
    {
      const struct ab_hugepage_limit *hp = &res->hugepages[i];
      _cleanup_free_ char *file = NULL, *rsvd = NULL;
      char what[96];

      snprintf (what, sizeof what, JR "hugepageLimits[%zu]", i);
      if (find (r, "hugetlb", "hugetlb", what, "hugetlb.<size>.limit_in_bytes", "hugetlb.<size>.max", &t) < 0)
        return -1;
      file = xasprintf (t.v2 ? "hugetlb.%s.max" : "hugetlb.%s.limit_in_bytes", hp->page_size);
      if (wr (r, &t, file, what, "%" PRIu64, hp->limit) < 0)
        return -1;
      /* Reservations are charged separately on v2: cap them too. */
      rsvd = xasprintf ("hugetlb.%s.rsvd.max", hp->page_size);
      if (t.v2 && ab_cg_has_file (t.h, rsvd) && wr (r, &t, rsvd, what, "%" PRIu64, hp->limit) < 0)
        return -1;
    }
  return 0;
}

/* A name that goes into a space-separated interface file. */
static int
apply_network (struct res *r, const struct ab_resources *res)
{
  struct target t;
  size_t i;

  if (res->net_class_id.set)
    {
      if (find (r, "net_cls", NULL, JR "network.classID", "net_cls.classid", NULL, &t) < 0
          || wr (r, &t, "net_cls.classid", JR "network.classID", "%" PRIu64, res->net_class_id.v) < 0)
        return -1;
    }
  for (i = 0; i < res->n_net_priorities; i++)
    {
      const struct ab_net_priority *p = &res->net_priorities[i];
      char what[96];

      snprintf (what, sizeof what, JR "network.priorities[%zu]", i);
      if (find (r, "net_prio", NULL, what, "net_prio.ifpriomap", NULL, &t) < 0
          || wr (r, &t, "net_prio.ifpriomap", what, "%s %" PRIu32, p->name, p->priority) < 0)
        return -1;
    }
  return 0;
}

static int
apply_rdma (struct res *r, const struct ab_resources *res)
{
  struct target t;
  size_t i;

  for (i = 0; i < res->n_rdma; i++)
    {
      const struct ab_rdma *d = &res->rdma[i];
      char what[96], h[40] = "", o[40] = "";

      snprintf (what, sizeof what, JR "rdma.%s", d->device ? d->device : "?");
      if (!d->hca_handles.set && !d->hca_objects.set)
        continue;
      if (find (r, "rdma", "rdma", what, "rdma.max", "rdma.max", &t) < 0)
        return -1;
      if (d->hca_handles.set)
        snprintf (h, sizeof h, " hca_handle=%" PRIu64, d->hca_handles.v);
      if (d->hca_objects.set)
        snprintf (o, sizeof o, " hca_object=%" PRIu64, d->hca_objects.v);
      if (wr (r, &t, "rdma.max", what, "%s%s%s", d->device, h, o) < 0)
        return -1;
    }
  return 0;
}

/* ---- unified ---------------------------------------------------------------------- */

/* "memory.high" -> "memory"; NULL when the key has no controller prefix
   (spec/validate.c checks the names: [A-Za-z0-9_.], no '/', so the file
   stays in the container's directory, and no structure file). */
static char *
unified_controller (const char *key)
{
  const char *dot = strchr (key, '.');

  if (dot == NULL || dot == key || dot[1] == '\0'
      || strspn (key, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") != strlen (key))
    return NULL;
  return xstrndup (key, (size_t)(dot - key));
}

static int
apply_unified (struct res *r, const struct ab_kvlist *u)
{
  size_t i;

  for (i = 0; i < u->n; i++)
    {
      const char *key = u->v[i].key;
      _cleanup_free_ char *ctrl = unified_controller (key);
      char what[320];

      snprintf (what, sizeof what, JR "unified.\"%.256s\"", key);
      /* Checked by the validator, and here again right before the write:
         a key that slipped through would move processes (cgroup.procs)
         or leave the container's directory. */
      const char *why = ab_unified_key_refusal (key);
      if (why != NULL || ctrl == NULL)
        return refuse (r, what, why ? why : "not a cgroup interface file name");
      if (r->cg->v2 == NULL)
        return ab_error_setc (r->err, AB_EC_RESOURCE, 0, "%s: this host has no cgroup v2 hierarchy", what);
      if (strcmp (ctrl, "cgroup") != 0)
        {
          if (ab_cg_v1 (r->cg, ctrl) != NULL)
            return ab_error_setc (
                r->err, AB_EC_RESOURCE, 0,
                "%s: the %s controller is a cgroup v1 controller on this host, not in the v2 tree", what,
                ctrl);
          if (!ab_word_in (v2avail (r), ctrl))
            return ab_error_setc (
                r->err, AB_EC_RESOURCE, 0,
                "%s: the %s controller is not enabled for `%s` (its cgroup.controllers: `%s`)", what, ctrl,
                r->cg->v2->dir, r->v2avail);
        }
      if (ab_cg_write (r->cg->v2, key, u->v[i].value, what, r->err) < 0)
        return -1;
    }
  return 0;
}

/* ---- entry points -------------------------------------------------------------------- */

static void
need (struct ab_cgroup *cg, const char *v1name, const char *v2name, const char *why, struct ab_strv *ctrls,
      struct ab_strv *whys)
{
  if (ab_cg_v1 (cg, v1name) != NULL || ab_strv_contains (ctrls, v2name))
    return;
  ab_strv_push (ctrls, v2name);
  ab_strv_push (whys, why);
}

void
ab_cg_v2_needed (struct ab_cgroup *cg, const struct ab_resources *r, struct ab_strv *ctrls,
                 struct ab_strv *why)
{
  const struct ab_memory *m = &r->memory;
  const struct ab_cpu *c = &r->cpu;
  size_t i;

  /* realtime* and v2-refused memory members are left to apply, which
     explains why they cannot be honoured. */
  if (r->memory_set && (m->limit.set || m->reservation.set || m->swap.set))
    need (cg, "memory", "memory", memory_first (m), ctrls, why);
  if (r->cpu_set && (c->shares.set || c->quota.set || c->period.set || c->burst.set || c->idle.set))
    need (cg, "cpu", "cpu", cpu_first (c), ctrls, why);
  if (r->cpu_set && (c->cpus || c->mems))
    need (cg, "cpuset", "cpuset", c->cpus ? JR "cpu.cpus" : JR "cpu.mems", ctrls, why);
  if (r->pids_set && r->pids_limit.set)
    need (cg, "pids", "pids", JR "pids.limit", ctrls, why);
  if (r->blkio_set && blkio_any (&r->blkio))
    need (cg, "blkio", "io", blkio_first (&r->blkio), ctrls, why);
  if (r->n_hugepages)
    need (cg, "hugetlb", "hugetlb", JR "hugepageLimits", ctrls, why);
  if (r->n_rdma)
    need (cg, "rdma", "rdma", JR "rdma", ctrls, why);
  for (i = 0; i < r->unified.n; i++)
    {
      _cleanup_free_ char *ctrl = unified_controller (r->unified.v[i].key);
      _cleanup_free_ char *w = xasprintf (JR "unified.\"%s\"", r->unified.v[i].key);
      /* A v1 controller here is refused by apply_unified with its reason. */
      if (ctrl && strcmp (ctrl, "cgroup") != 0 && ab_cg_v1 (cg, ctrl) == NULL)
        need (cg, ctrl, ctrl, w, ctrls, why);
    }
}

int
ab_cg_apply (struct ab_cgroup *cg, const struct ab_resources *res, bool update, ab_error_t *err)
{
  struct res r = { .cg = cg, .v2avail = NULL, .update = update, .err = err };
  int ret = -1;

  if (res->memory_set && apply_memory (&r, &res->memory) < 0)
    goto out;
  if (res->cpu_set && apply_cpu (&r, &res->cpu) < 0)
    goto out;
  if (res->pids_set && apply_pids (&r, &res->pids_limit) < 0)
    goto out;
  if (res->blkio_set && blkio_any (&res->blkio) && apply_blkio (&r, &res->blkio) < 0)
    goto out;
  if (apply_hugetlb (&r, res) < 0 || apply_network (&r, res) < 0 || apply_rdma (&r, res) < 0)
    goto out;
  ret = apply_unified (&r, &res->unified);
out:
  free (r.v2avail);
  return ret;
}
