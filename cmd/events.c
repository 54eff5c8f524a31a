/* agentbox events [--stats] [--interval DUR] ID
 *
 * runc's events: JSON lines on stdout, {"type":"stats","id":ID,"data":{...}}
 * with the counters of the container's cgroup in the shape of runc's
 * types/events.go, and {"type":"oom","id":ID} for each OOM kill.  --stats
 * prints one stats line; otherwise one every interval until the container
 * stops.  Members are written in runc's order, and those runc declares
 * omitempty are left out when zero or empty, so that a reader written
 * against runc's output (containerd's go-runc) reads ours the same. */
#include "config.h"

#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <time.h>

#include "cmd/cmd.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/lifecycle/container.h"
#include "base/gen.h"
#include "base/log.h"
#include "base/util.h"

#define NS_PER_S 1000000000ull
#define DEFAULT_INTERVAL_NS (5 * NS_PER_S)
/* Go's durations are int64 nanoseconds: about 292 years. */
#define INTERVAL_MAX_NS ((uint64_t)INT64_MAX)
/* The v1 OOM notification comes as the memory cgroup enters OOM, just
   before the kill is counted: after one, the counter is read again every
   SETTLE_STEP_NS for up to SETTLE_NS. */
#define SETTLE_STEP_NS (20 * 1000000ull)
#define SETTLE_NS NS_PER_S

/* --interval: Go's duration syntax (time.ParseDuration, what runc's flag
   takes): numbers, each with its unit (ns, us, µs, ms, s, m, h), as in
   500ms, 1.5s, 1m30s; a plain number is seconds, as agentbox's other
   durations.  0 on success with *out in ns (0 only for a zero duration). */
static int
parse_interval (const char *s, uint64_t *out)
{
  static const struct
  {
    const char *unit;
    uint64_t ns;
  } units[] = {
    { "ns", 1 },       { "us", 1000 },    { "\xc2\xb5s", 1000 } /* µs */, { "\xce\xbcs", 1000 } /* μs */,
    { "ms", 1000000 }, { "s", NS_PER_S }, { "m", 60 * NS_PER_S },         { "h", 3600 * NS_PER_S },
  };
  long double total = 0;
  const char *p = s;

  if (*p == '+')
    p++;
  if (p[strspn (p, "0123456789")] == '\0' && *p != '\0') /* a plain number */
    {
      uint64_t secs;
      if (ab_parse_u64 (p, &secs) < 0 || secs > INTERVAL_MAX_NS / NS_PER_S)
        return -1;
      return *out = secs * NS_PER_S, 0;
    }
  if (*p == '\0')
    return -1;
  while (*p)
    {
      long double v = 0, scale = 1;
      const char *q = p;
      size_t len, i;

      for (; *q >= '0' && *q <= '9'; q++)
        v = v * 10 + (*q - '0');
      if (*q == '.')
        for (q++; *q >= '0' && *q <= '9'; q++)
          v += (*q - '0') / (scale *= 10);
      if (q == p || (q == p + 1 && *p == '.'))
        return -1;
      p = q;
      len = strcspn (p, "0123456789.");
      for (i = 0; i < AB_ARRAY_SIZE (units); i++)
        if (strlen (units[i].unit) == len && strncmp (p, units[i].unit, len) == 0)
          break;
      if (i == AB_ARRAY_SIZE (units))
        return -1;
      total += v * (long double)units[i].ns;
      p += len;
    }
  if (total >= (long double)INTERVAL_MAX_NS)
    return -1;
  *out = (uint64_t)total;
  return 0;
}

/* ---- runc's JSON ---------------------------------------------------------------- */

/* A member runc declares omitempty: left out when zero. */
static void
opt_u64 (struct ab_gen *g, const char *key, uint64_t v)
{
  if (v != 0)
    ab_gen_kv_u64 (g, key, v);
}

static void
opt_list (struct ab_gen *g, const char *key, const struct ab_cgroup_u64s *l)
{
  if (l->n == 0)
    return;
  ab_gen_key (g, key);
  ab_gen_arr_open (g);
  for (size_t i = 0; i < l->n; i++)
    ab_gen_u64 (g, l->v[i]);
  ab_gen_arr_close (g);
}

/* cpu: usage in ns and throttling (a struct member: always there, if
   empty). */
static void
gen_cpu (struct ab_gen *g, const struct ab_cgroup_counters *st)
{
  ab_gen_key (g, "cpu");
  ab_gen_obj_open (g);
  ab_gen_key (g, "usage");
  ab_gen_obj_open (g);
  opt_u64 (g, "total", st->cpu.total);
  opt_list (g, "percpu", &st->cpu.percpu);
  opt_list (g, "percpu_kernel", &st->cpu.percpu_kernel);
  opt_list (g, "percpu_user", &st->cpu.percpu_user);
  ab_gen_kv_u64 (g, "kernel", st->cpu.kernel);
  ab_gen_kv_u64 (g, "user", st->cpu.user);
  ab_gen_obj_close (g);
  ab_gen_key (g, "throttling");
  ab_gen_obj_open (g);
  opt_u64 (g, "periods", st->cpu.periods);
  opt_u64 (g, "throttledPeriods", st->cpu.throttled_periods);
  opt_u64 (g, "throttledTime", st->cpu.throttled_time);
  ab_gen_obj_close (g);
  ab_gen_obj_close (g);

  ab_gen_key (g, "cpuset");
  ab_gen_obj_open (g);
  opt_list (g, "cpus", &st->cpuset.cpus);
  ab_gen_kv_u64 (g, "cpu_exclusive", st->cpuset.cpu_exclusive);
  opt_list (g, "mems", &st->cpuset.mems);
  ab_gen_kv_u64 (g, "mem_hardwall", st->cpuset.mem_hardwall);
  ab_gen_kv_u64 (g, "mem_exclusive", st->cpuset.mem_exclusive);
  ab_gen_kv_u64 (g, "memory_migrate", st->cpuset.memory_migrate);
  ab_gen_kv_u64 (g, "memory_spread_page", st->cpuset.memory_spread_page);
  ab_gen_kv_u64 (g, "memory_spread_slab", st->cpuset.memory_spread_slab);
  ab_gen_kv_u64 (g, "memory_pressure", st->cpuset.memory_pressure);
  ab_gen_kv_u64 (g, "sched_load_balance", st->cpuset.sched_load_balance);
  ab_gen_kv_i64 (g, "sched_relax_domain_level", st->cpuset.sched_relax_domain_level);
  ab_gen_obj_close (g);
}

static void
gen_mem_entry (struct ab_gen *g, const char *key, const struct ab_cgroup_mem_entry *e)
{
  ab_gen_key (g, key);
  ab_gen_obj_open (g);
  ab_gen_kv_u64 (g, "limit", e->limit);
  opt_u64 (g, "usage", e->usage);
  opt_u64 (g, "max", e->max);
  ab_gen_kv_u64 (g, "failcnt", e->failcnt);
  ab_gen_obj_close (g);
}

static void
gen_memory (struct ab_gen *g, const struct ab_cgroup_counters *st)
{
  ab_gen_key (g, "memory");
  ab_gen_obj_open (g);
  opt_u64 (g, "cache", st->memory.cache);
  gen_mem_entry (g, "usage", &st->memory.usage);
  gen_mem_entry (g, "swap", &st->memory.swap);
  gen_mem_entry (g, "kernel", &st->memory.kernel);
  gen_mem_entry (g, "kernelTCP", &st->memory.kernel_tcp);
  if (st->memory.n_raw > 0)
    {
      ab_gen_key (g, "raw");
      ab_gen_obj_open (g);
      for (size_t i = 0; i < st->memory.n_raw; i++)
        ab_gen_kv_u64 (g, st->memory.raw[i].key, st->memory.raw[i].value);
      ab_gen_obj_close (g);
    }
  ab_gen_obj_close (g);

  ab_gen_key (g, "pids");
  ab_gen_obj_open (g);
  opt_u64 (g, "current", st->pids.current);
  opt_u64 (g, "limit", st->pids.limit);
  ab_gen_obj_close (g);
}

/* blkio's lists under runc's names (enum ab_cgroup_blkio_kind order), and
   hugetlb by page size. */
static void
gen_io (struct ab_gen *g, const struct ab_cgroup_counters *st)
{
  static const char *const names[AB_CGROUP_BLKIO_KINDS] = {
    "ioServiceBytesRecursive", "ioServicedRecursive", "ioQueueRecursive", "ioServiceTimeRecursive",
    "ioWaitTimeRecursive",     "ioMergedRecursive",   "ioTimeRecursive",  "sectorsRecursive",
  };

  ab_gen_key (g, "blkio");
  ab_gen_obj_open (g);
  for (size_t k = 0; k < AB_CGROUP_BLKIO_KINDS; k++)
    {
      if (st->blkio[k].n == 0)
        continue;
      ab_gen_key (g, names[k]);
      ab_gen_arr_open (g);
      for (size_t i = 0; i < st->blkio[k].n; i++)
        {
          const struct ab_cgroup_blkio_entry *e = &st->blkio[k].v[i];
          ab_gen_obj_open (g);
          opt_u64 (g, "major", e->major);
          opt_u64 (g, "minor", e->minor);
          if (e->op[0])
            ab_gen_kv_str (g, "op", e->op);
          opt_u64 (g, "value", e->value);
          ab_gen_obj_close (g);
        }
      ab_gen_arr_close (g);
    }
  ab_gen_obj_close (g);

  ab_gen_key (g, "hugetlb");
  ab_gen_obj_open (g);
  for (size_t i = 0; i < st->n_hugetlb; i++)
    {
      ab_gen_key (g, st->hugetlb[i].size);
      ab_gen_obj_open (g);
      opt_u64 (g, "usage", st->hugetlb[i].usage);
      opt_u64 (g, "max", st->hugetlb[i].max);
      ab_gen_kv_u64 (g, "failcnt", st->hugetlb[i].failcnt);
      ab_gen_obj_close (g);
    }
  ab_gen_obj_close (g);
}

/* One event line: {"type":TYPE,"id":ID} with `data` when st is given.
   -1 with errno when stdout took it not. */
static int
print_event (const char *type, const char *id, const struct ab_cgroup_counters *st)
{
  _cleanup_gen_ struct ab_gen *g = ab_gen_new (false);
  _cleanup_free_ char *line = NULL;
  size_t len;

  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "type", type);
  ab_gen_kv_str (g, "id", id);
  if (st)
    {
      ab_gen_key (g, "data");
      ab_gen_obj_open (g);
      gen_cpu (g, st);
      gen_memory (g, st);
      gen_io (g, st);
      /* runc's last two members: Intel RDT (never configured here) and
         the network interfaces (runc fills them only for a network it
         set up, which it never does). */
      ab_gen_key (g, "intel_rdt");
      ab_gen_obj_open (g);
      ab_gen_obj_close (g);
      ab_gen_key (g, "network_interfaces");
      ab_gen_null (g);
      ab_gen_obj_close (g);
    }
  ab_gen_obj_close (g);
  /* One write per line: a reader never sees half an event. */
  line = ab_gen_steal (g, true, &len);
  return ab_write_all (1, line, len) < 0 ? -1 : 0;
}

/* ---- the two modes --------------------------------------------------------------- */

/* Read and print a stats line.  1: the counters could not be read (said
   on stderr); -1: stdout failed. */
static int
print_stats (struct ab_container *c)
{
  struct ab_cgroup_counters st;
  ab_error_t err = { 0 };
  int r;

  if (ab_cgroup_counters (c->cg, &st, &err) < 0)
    {
      ab_error_prefix (&err, "statistics of container `%s`", c->id);
      ab_log_error (&err);
      ab_cgroup_counters_free (&st);
      return 1;
    }
  r = print_event ("stats", c->id, &st);
  ab_cgroup_counters_free (&st);
  return r;
}

/* An oom line for each kill counted since *kills. */
static int
print_ooms (struct ab_container *c, uint64_t *kills, uint64_t *settle)
{
  uint64_t now;

  if (ab_cgroup_oom_kills (c->cg, &now) < 0 || now == *kills)
    return 0;
  for (; *kills < now; ++*kills)
    if (print_event ("oom", c->id, NULL) < 0)
      return -1;
  *kills = now; /* (a counter that went down: from here) */
  *settle = 0;
  return 0;
}

/* Without --stats: a stats line every interval, the first one interval
   after the start (runc's ticker), and the OOM kills as they come, until
   the container's init exits (its pidfd); then the kills that ended it,
   counted before the kernel sent the signal, and exit 0.  The OOM watch
   wakes us when the memory controller meets an OOM; without one, kills
   are seen at the next stats line. */
static int
stream (struct ab_container *c, uint64_t interval)
{
  short oom_events = 0;
  _cleanup_close_ int oomfd = ab_cgroup_oom_watch (c->cg, &oom_events);
  struct pollfd p[2] = { { .fd = c->pidfd, .events = POLLIN }, { .fd = oomfd, .events = oom_events } };
  uint64_t kills = 0, settle = 0, next = ab_now_monotonic_ns () + interval;
  bool counted = ab_cgroup_oom_kills (c->cg, &kills) == 0;

  for (;;)
    {
      uint64_t now = ab_now_monotonic_ns (), nap;
      struct timespec ts;

      if (now >= next)
        {
          if (print_stats (c) < 0)
            return AB_EXIT_FAILURE;
          /* Ticks missed while we were held up are dropped, as Go's are. */
          next = next + interval > now ? next + interval : now + interval;
        }
      nap = next - now;
      if (settle > now && nap > SETTLE_STEP_NS)
        nap = SETTLE_STEP_NS;
      ts = (struct timespec){ .tv_sec = (time_t)(nap / NS_PER_S), .tv_nsec = (long)(nap % NS_PER_S) };
      if (ppoll (p, 2, &ts, NULL) < 0 && errno != EINTR)
        {
          ab_error_t err = { 0 };
          ab_error_set (&err, errno, "events of container `%s`: poll", c->id);
          return ab_cmd_fail (&err);
        }
      if (p[1].revents)
        {
          if (ab_cgroup_oom_rearm (p[1].fd, oom_events) < 0)
            p[1].fd = -1;
          settle = now + SETTLE_NS;
        }
      if (counted && print_ooms (c, &kills, &settle) < 0)
        return AB_EXIT_FAILURE;
      if (p[0].revents)
        return AB_EXIT_OK;
    }
}

int
ab_cmd_events (struct ab_global *g, int argc, char **argv)
{
  static const struct option opts[] = {
    { "stats", no_argument, NULL, 's' },
    { "interval", required_argument, NULL, 'i' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  struct ab_container *c = NULL;
  uint64_t interval = DEFAULT_INTERVAL_NS;
  ab_error_t err = { 0 };
  bool once = false;
  int opt, r;

  while ((opt = getopt_long (argc, argv, "h", opts, NULL)) != -1)
    switch (opt)
      {
      case 's':
        once = true;
        break;
      case 'i':
        if (parse_interval (optarg, &interval) < 0)
          return ab_cmd_usage_error ("events", "--interval: `%s` is not a duration (5s, 500ms, 1m30s)",
                                     optarg);
        if (interval == 0)
          return ab_cmd_usage_error ("events", "--interval: the interval must be greater than 0");
        break;
      case 'h':
        printf ("Usage: agentbox events [--stats] [--interval DURATION] ID\n\n"
                "Print the statistics of a container's cgroup as JSON lines, runc's\n"
                "{\"type\":\"stats\",\"id\":ID,\"data\":{...}}, every --interval (default 5s), and\n"
                "{\"type\":\"oom\",\"id\":ID} for each OOM kill, until the container stops.\n"
                "--stats prints one stats line and exits.\n");
        return AB_EXIT_OK;
      default:
        return ab_cmd_usage_error ("events", "unknown option `%s`", argv[optind - 1]);
      }
  if ((r = ab_cmd_positionals ("events", argc, argv, 1, 1, "container ID")) != 0)
    return r;
  if (ab_container_open_events (g->root, argv[optind], &c, &err) < 0)
    return ab_cmd_fail (&err);
  if (once)
    {
      r = print_stats (c);
      r = r == 0 ? AB_EXIT_OK : AB_EXIT_FAILURE;
    }
  else
    r = stream (c, interval);
  ab_container_free (c);
  return r;
}
