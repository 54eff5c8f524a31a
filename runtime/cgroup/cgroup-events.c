/* The counters of `agentbox events`: runc's statistics of a container's
 * cgroup (what libcontainer reads for `runc events`), and its OOM kills
 * with a way to be woken when they may have moved.
 *
 * A controller is read in the container's v1 hierarchy when there is one:
 * that is where runc's fs manager reads on a v1 or hybrid host, and there
 * the v2 cgroup holds no controller but what the kernel keeps in every
 * cgroup (cpu.stat's usage).  Otherwise the v2 cgroup.  A file that is
 * missing (a controller the host does not have, a v1 file a kernel option
 * removed) leaves its counters 0, as runc leaves them; the cgroup is a
 * container's, so what it holds is read, never trusted to be well-formed:
 * a line that does not parse is skipped. */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>

#include "runtime/cgroup/cgroup-internal.h"
#include "base/util.h"

/* The most numbers a list of ids (cpuset.cpus: "0-3,8") may expand to:
   runc keeps them as uint16. */
#define ID_LIST_MAX 65536

/* ---- reading ------------------------------------------------------------------- */

static char *
get_text (struct ab_cg_hier *h, const char *file)
{
  char *text = NULL;
  ab_error_t err;

  if (h == NULL || ab_cg_read (h, file, &text, &err) < 0)
    return NULL;
  return text;
}

static void
push (struct ab_cgroup_u64s *l, uint64_t v)
{
  l->v = xreallocarray (l->v, l->n + 1, sizeof *l->v);
  l->v[l->n++] = v;
}

/* The hierarchy to read `controller` in: its v1 one, else the v2 cgroup
   when it has `probe` (a file only that controller makes). */
static struct ab_cg_hier *
controller (struct ab_cgroup *cg, const char *name, const char *probe)
{
  struct ab_cg_hier *h = ab_cg_v1 (cg, name), *v2 = ab_cg_v2 (cg);

  if (h)
    return h;
  return v2 && ab_cg_has_file (v2, probe) ? v2 : NULL;
}

/* ---- cpu, cpuset --------------------------------------------------------------- */

/* cpuacct.stat counts clock ticks (USER_HZ); runc reports nanoseconds. */
static uint64_t
ticks_to_ns (uint64_t ticks)
{
  long hz = sysconf (_SC_CLK_TCK);

  if (hz <= 0)
    hz = 100;
  return ticks / (uint64_t)hz * 1000000000u + ticks % (uint64_t)hz * 1000000000u / (uint64_t)hz;
}

/* v1 cpuacct: the total, per cpu (usage_percpu; usage_all's user and
   system columns), and by mode. */
static void
cpu_v1 (struct ab_cg_hier *acct, struct ab_cgroup_counters *st)
{
  _cleanup_free_ char *percpu = get_text (acct, "cpuacct.usage_percpu");
  _cleanup_free_ char *all = get_text (acct, "cpuacct.usage_all");
  _cleanup_free_ char *stat = get_text (acct, "cpuacct.stat");
  char *p, *end, *line, *save = NULL;
  uint64_t v;

  ab_cg_read_u64 (acct, "cpuacct.usage", &st->cpu.total);
  for (p = percpu; p; p = end)
    {
      v = strtoull (p, &end, 10);
      if (end == p)
        break;
      push (&st->cpu.percpu, v);
    }
  /* "cpu user system" then one line per cpu; the header does not parse. */
  for (line = all ? strtok_r (all, "\n", &save) : NULL; line; line = strtok_r (NULL, "\n", &save))
    {
      unsigned long long cpu, user, sys;
      if (sscanf (line, "%llu %llu %llu", &cpu, &user, &sys) != 3)
        continue;
      push (&st->cpu.percpu_user, user);
      push (&st->cpu.percpu_kernel, sys);
    }
  if (stat && ab_cg_key_value (stat, "user", &v) == 0)
    st->cpu.user = ticks_to_ns (v);
  if (stat && ab_cg_key_value (stat, "system", &v) == 0)
    st->cpu.kernel = ticks_to_ns (v);
}

/* cpu.stat: v1's cpu controller has the throttling counters (time in ns);
   a v2 cgroup has the usage always, the throttling with the cpu
   controller (times in us). */
static void
cpu_stat (struct ab_cg_hier *h, bool usage, struct ab_cgroup_counters *st)
{
  _cleanup_free_ char *text = get_text (h, "cpu.stat");
  uint64_t v;

  if (text == NULL)
    return;
  if (usage && ab_cg_key_value (text, "usage_usec", &v) == 0)
    st->cpu.total = v * 1000;
  if (usage && ab_cg_key_value (text, "user_usec", &v) == 0)
    st->cpu.user = v * 1000;
  if (usage && ab_cg_key_value (text, "system_usec", &v) == 0)
    st->cpu.kernel = v * 1000;
  ab_cg_key_value (text, "nr_periods", &st->cpu.periods);
  ab_cg_key_value (text, "nr_throttled", &st->cpu.throttled_periods);
  if (ab_cg_key_value (text, "throttled_time", &v) == 0)
    st->cpu.throttled_time = v;
  else if (ab_cg_key_value (text, "throttled_usec", &v) == 0)
    st->cpu.throttled_time = v * 1000;
}

/* "0-3,8" as 0 1 2 3 8. */
static void
id_list (struct ab_cg_hier *h, const char *file, struct ab_cgroup_u64s *out)
{
  _cleanup_free_ char *text = get_text (h, file);
  char *tok, *save = NULL;

  for (tok = text ? strtok_r (text, ",\n", &save) : NULL; tok; tok = strtok_r (NULL, ",\n", &save))
    {
      unsigned long a, b;
      int n = sscanf (tok, "%lu-%lu", &a, &b);

      if (n == 1)
        b = a;
      else if (n != 2 || b < a)
        continue;
      for (; a <= b && out->n < ID_LIST_MAX; a++)
        push (out, a);
    }
}

static void
cpuset_v1 (struct ab_cg_hier *h, struct ab_cgroup_counters *st)
{
  static const struct
  {
    const char *file;
    size_t off;
  } flags[] = {
#define FLAG(name) { "cpuset." #name, offsetof (struct ab_cgroup_counters, cpuset.name) }
    FLAG (cpu_exclusive),      FLAG (mem_hardwall),       FLAG (mem_exclusive),   FLAG (memory_migrate),
    FLAG (memory_spread_page), FLAG (memory_spread_slab), FLAG (memory_pressure), FLAG (sched_load_balance),
#undef FLAG
  };
  _cleanup_free_ char *level = get_text (h, "cpuset.sched_relax_domain_level");

  id_list (h, "cpuset.cpus", &st->cpuset.cpus);
  id_list (h, "cpuset.mems", &st->cpuset.mems);
  for (size_t i = 0; i < AB_ARRAY_SIZE (flags); i++)
    ab_cg_read_u64 (h, flags[i].file, (uint64_t *)((char *)st + flags[i].off));
  if (level)
    {
      level[strcspn (level, "\n")] = '\0';
      ab_parse_i64 (level, &st->cpuset.sched_relax_domain_level);
    }
}

/* ---- memory, pids ---------------------------------------------------------------- */

static int
cmp_kv (const void *a, const void *b)
{
  return strcmp (((const struct ab_cgroup_kv *)a)->key, ((const struct ab_cgroup_kv *)b)->key);
}

/* memory.stat as runc's `raw` map; the value of `cache_key` ("cache" in
   v1, "file" in v2) is the cache. */
static void
memory_stat (struct ab_cg_hier *h, const char *cache_key, struct ab_cgroup_counters *st)
{
  _cleanup_free_ char *text = get_text (h, "memory.stat");
  char *line, *save = NULL;

  for (line = text ? strtok_r (text, "\n", &save) : NULL; line; line = strtok_r (NULL, "\n", &save))
    {
      char *sp = strchr (line, ' ');
      uint64_t v;

      if (sp == NULL || ab_parse_u64 (sp + 1, &v) < 0)
        continue;
      *sp = '\0';
      if (strcmp (line, cache_key) == 0)
        st->memory.cache = v;
      st->memory.raw = xreallocarray (st->memory.raw, st->memory.n_raw + 1, sizeof *st->memory.raw);
      st->memory.raw[st->memory.n_raw++] = (struct ab_cgroup_kv){ xstrdup (line), v };
    }
  if (st->memory.n_raw > 1)
    qsort (st->memory.raw, st->memory.n_raw, sizeof *st->memory.raw, cmp_kv);
}

/* One v1 account: memory, memory.memsw (memory + swap), memory.kmem or
   memory.kmem.tcp.  The last three are optional in the kernel: absent,
   the entry stays 0. */
static void
mem_entry_v1 (struct ab_cg_hier *h, const char *account, struct ab_cgroup_mem_entry *e)
{
  char f[64];

  snprintf (f, sizeof f, "%s.usage_in_bytes", account);
  if (!ab_cg_read_u64 (h, f, &e->usage))
    return;
  snprintf (f, sizeof f, "%s.max_usage_in_bytes", account);
  ab_cg_read_u64 (h, f, &e->max);
  snprintf (f, sizeof f, "%s.failcnt", account);
  ab_cg_read_u64 (h, f, &e->failcnt);
  snprintf (f, sizeof f, "%s.limit_in_bytes", account);
  ab_cg_read_u64 (h, f, &e->limit);
}

/* v2: memory.current, .max and .peak; failcnt is memory.events' max (the
   times usage was about to pass the limit, v1's failcnt); swap is reported
   as memory + swap, as v1 counts it and runc converts it. */
static void
memory_v2 (struct ab_cg_hier *h, struct ab_cgroup_counters *st)
{
  struct ab_cgroup_mem_entry *u = &st->memory.usage, *s = &st->memory.swap;

  memory_stat (h, "file", st);
  if (!ab_cg_read_u64 (h, "memory.current", &u->usage))
    return;
  ab_cg_read_u64 (h, "memory.max", &u->limit);
  ab_cg_read_u64 (h, "memory.peak", &u->max);
  ab_cg_read_key (h, "memory.events", "max", &u->failcnt);
  if (!ab_cg_read_u64 (h, "memory.swap.current", &s->usage))
    return;
  s->usage += u->usage;
  ab_cg_read_u64 (h, "memory.swap.max", &s->limit);
  if (s->limit != UINT64_MAX)
    s->limit = u->limit > UINT64_MAX - s->limit ? UINT64_MAX : s->limit + u->limit;
}

static void
read_memory (struct ab_cgroup *cg, struct ab_cgroup_counters *st)
{
  struct ab_cg_hier *h = ab_cg_v1 (cg, "memory");

  if (h == NULL)
    {
      if ((h = controller (cg, "memory", "memory.current")) != NULL)
        memory_v2 (h, st);
      return;
    }
  memory_stat (h, "cache", st);
  mem_entry_v1 (h, "memory", &st->memory.usage);
  mem_entry_v1 (h, "memory.memsw", &st->memory.swap);
  mem_entry_v1 (h, "memory.kmem", &st->memory.kernel);
  mem_entry_v1 (h, "memory.kmem.tcp", &st->memory.kernel_tcp);
}

/* pids.current counts tasks.  Without a pids controller (a v2 cgroup that
   was not given one) the processes of the cgroup are counted instead, its
   whole subtree (runc counts its cgroup.procs alone). */
static void
read_pids (struct ab_cgroup *cg, struct ab_cgroup_counters *st)
{
  struct ab_cg_hier *h = controller (cg, "pids", "pids.current");
  _cleanup_free_ pid_t *list = NULL;
  size_t n = 0;
  ab_error_t err;

  if (h)
    {
      ab_cg_read_u64 (h, "pids.current", &st->pids.current);
      if (ab_cg_read_u64 (h, "pids.max", &st->pids.limit) && st->pids.limit == UINT64_MAX)
        st->pids.limit = 0; /* no limit: runc's 0 */
      return;
    }
  if (ab_cgroup_pids (cg, &list, &n, &err) == 0)
    st->pids.current = n;
}

/* ---- blkio, hugetlb -------------------------------------------------------------- */

static void
blkio_push (struct ab_cgroup_counters *st, int kind, uint64_t major, uint64_t minor, const char *op,
            uint64_t value)
{
  struct ab_cgroup_blkio_entry *e;

  st->blkio[kind].v = xreallocarray (st->blkio[kind].v, st->blkio[kind].n + 1, sizeof *e);
  e = &st->blkio[kind].v[st->blkio[kind].n++];
  *e = (struct ab_cgroup_blkio_entry){ .major = major, .minor = minor, .value = value };
  snprintf (e->op, sizeof e->op, "%s", op);
}

/* One v1 blkio file: "MAJ:MIN OP VALUE" lines, or "MAJ:MIN VALUE" (sectors,
   time), and a "Total N" line, which runc leaves out.  How many entries. */
static size_t
blkio_file (struct ab_cg_hier *h, const char *file, int kind, struct ab_cgroup_counters *st)
{
  _cleanup_free_ char *text = get_text (h, file);
  char *line, *save = NULL;
  size_t n = 0;

  for (line = text ? strtok_r (text, "\n", &save) : NULL; line; line = strtok_r (NULL, "\n", &save))
    {
      unsigned long long major, minor, value;
      char op[16];

      if (sscanf (line, "%llu:%llu %15s %llu", &major, &minor, op, &value) == 4)
        blkio_push (st, kind, major, minor, op, value);
      else if (sscanf (line, "%llu:%llu %llu", &major, &minor, &value) == 3)
        blkio_push (st, kind, major, minor, "", value);
      else
        continue;
      n++;
    }
  return n;
}

/* The v1 blkio files of one set: a prefix and, per list, a file name. */
static const char *const full_files[] = {
  "sectors_recursive",     "io_service_time_recursive",  "io_wait_time_recursive",
  "io_merged_recursive",   "io_queued_recursive",        "time_recursive",
  "io_serviced_recursive", "io_service_bytes_recursive",
};
static const int full_kinds[] = {
  AB_CGROUP_BLKIO_SECTORS,  AB_CGROUP_BLKIO_SERVICE_TIME,  AB_CGROUP_BLKIO_WAIT_TIME,
  AB_CGROUP_BLKIO_MERGED,   AB_CGROUP_BLKIO_QUEUED,        AB_CGROUP_BLKIO_TIME,
  AB_CGROUP_BLKIO_SERVICED, AB_CGROUP_BLKIO_SERVICE_BYTES,
};
static const char *const ops_recursive[] = { "io_serviced_recursive", "io_service_bytes_recursive" };
static const char *const ops_local[] = { "io_serviced", "io_service_bytes" };
static const int ops_kinds[] = { AB_CGROUP_BLKIO_SERVICED, AB_CGROUP_BLKIO_SERVICE_BYTES };

/* v1: the statistics of the I/O scheduler when it keeps them (bfq's
   debug set, bfq's, cfq's), else the throttling layer's; runc's order and
   rule: the first set whose first file has an entry, read up to the
   first file without one. */
static void
blkio_v1 (struct ab_cg_hier *h, struct ab_cgroup_counters *st)
{
  static const struct
  {
    const char *prefix;
    const char *const *files;
    const int *kinds;
    size_t n;
  } sets[] = {
    { "blkio.bfq.", full_files, full_kinds, AB_ARRAY_SIZE (full_files) },
    { "blkio.bfq.", ops_recursive, ops_kinds, AB_ARRAY_SIZE (ops_recursive) },
    { "blkio.", full_files, full_kinds, AB_ARRAY_SIZE (full_files) },
    { "blkio.throttle.", ops_recursive, ops_kinds, AB_ARRAY_SIZE (ops_recursive) },
    { "blkio.throttle.", ops_local, ops_kinds, AB_ARRAY_SIZE (ops_local) },
  };

  for (size_t s = 0; s < AB_ARRAY_SIZE (sets); s++)
    for (size_t i = 0; i < sets[s].n; i++)
      {
        char file[64];

        snprintf (file, sizeof file, "%s%s", sets[s].prefix, sets[s].files[i]);
        if (blkio_file (h, file, sets[s].kinds[i], st) == 0)
          {
            if (i == 0)
              break; /* the next set */
            return;
          }
        if (i == sets[s].n - 1)
          return;
      }
}

/* v2 io.stat: "MAJ:MIN rbytes=N wbytes=N rios=N wios=N ..." as v1's bytes
   and operations, Read and Write (what runc maps; the rest has no v1
   list). */
static void
io_v2 (struct ab_cg_hier *h, struct ab_cgroup_counters *st)
{
  static const struct
  {
    const char *key, *op;
    int kind;
  } map[] = {
    { "rbytes", "Read", AB_CGROUP_BLKIO_SERVICE_BYTES },
    { "wbytes", "Write", AB_CGROUP_BLKIO_SERVICE_BYTES },
    { "rios", "Read", AB_CGROUP_BLKIO_SERVICED },
    { "wios", "Write", AB_CGROUP_BLKIO_SERVICED },
  };
  _cleanup_free_ char *text = get_text (h, "io.stat");
  char *line, *save = NULL;

  for (line = text ? strtok_r (text, "\n", &save) : NULL; line; line = strtok_r (NULL, "\n", &save))
    {
      unsigned long long major, minor;
      char *tok, *save2 = NULL;

      if (sscanf (line, "%llu:%llu", &major, &minor) != 2)
        continue;
      strtok_r (line, " ", &save2);
      while ((tok = strtok_r (NULL, " ", &save2)) != NULL)
        {
          char *eq = strchr (tok, '=');
          uint64_t v;

          if (eq == NULL || ab_parse_u64 (eq + 1, &v) < 0)
            continue;
          *eq = '\0';
          for (size_t i = 0; i < AB_ARRAY_SIZE (map); i++)
            if (strcmp (tok, map[i].key) == 0)
              blkio_push (st, map[i].kind, major, minor, map[i].op, v);
        }
    }
}

static int
cmp_hugetlb (const void *a, const void *b)
{
  return strcmp (((const struct ab_cgroup_hugetlb *)a)->size, ((const struct ab_cgroup_hugetlb *)b)->size);
}

/* One page size: v1 usage_in_bytes, max_usage_in_bytes, failcnt; v2
   current and events' max (v2 keeps no peak). */
static void
hugetlb_size (struct ab_cg_hier *h, const char *size, struct ab_cgroup_counters *st)
{
  struct ab_cgroup_hugetlb *e;
  char f[64];

  st->hugetlb = xreallocarray (st->hugetlb, st->n_hugetlb + 1, sizeof *st->hugetlb);
  e = &st->hugetlb[st->n_hugetlb++];
  memset (e, 0, sizeof *e);
  snprintf (e->size, sizeof e->size, "%s", size);
  snprintf (f, sizeof f, "hugetlb.%s.%s", size, h->v2 ? "current" : "usage_in_bytes");
  ab_cg_read_u64 (h, f, &e->usage);
  if (h->v2)
    {
      snprintf (f, sizeof f, "hugetlb.%s.events", size);
      ab_cg_read_key (h, f, "max", &e->failcnt);
      return;
    }
  snprintf (f, sizeof f, "hugetlb.%s.max_usage_in_bytes", size);
  ab_cg_read_u64 (h, f, &e->max);
  snprintf (f, sizeof f, "hugetlb.%s.failcnt", size);
  ab_cg_read_u64 (h, f, &e->failcnt);
}

/* The page sizes are those the cgroup has files for ("hugetlb.2MB.current"):
   the kernel's own names, which runc's also are. */
static void
read_hugetlb (struct ab_cgroup *cg, struct ab_cgroup_counters *st)
{
  struct ab_cg_hier *h = ab_cg_v1 (cg, "hugetlb");
  char name[sizeof st->hugetlb->size];
  const char *suffix;
  struct dirent *e;
  int dfd, fd;
  DIR *d;

  if (h == NULL)
    h = ab_cg_v2 (cg);
  if (h == NULL || (dfd = ab_cg_dirfd (h)) < 0)
    return;
  suffix = h->v2 ? ".current" : ".usage_in_bytes";
  if ((fd = openat (dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
    return;
  if ((d = fdopendir (fd)) == NULL)
    {
      close (fd);
      return;
    }
  while ((e = readdir (d)) != NULL)
    {
      const char *size = e->d_name + strlen ("hugetlb.");
      size_t len;

      if (!ab_str_has_prefix (e->d_name, "hugetlb.") || !ab_str_has_suffix (e->d_name, suffix))
        continue;
      len = strlen (size) - strlen (suffix);
      if (len == 0 || len >= sizeof name || memchr (size, '.', len) != NULL)
        continue; /* hugetlb.2MB.rsvd.current: the reservations */
      memcpy (name, size, len);
      name[len] = '\0';
      hugetlb_size (h, name, st);
    }
  closedir (d);
  if (st->n_hugetlb > 1)
    qsort (st->hugetlb, st->n_hugetlb, sizeof *st->hugetlb, cmp_hugetlb);
}

/* ---- the whole ------------------------------------------------------------------- */

int
ab_cgroup_counters (struct ab_cgroup *cg, struct ab_cgroup_counters *st, ab_error_t *err)
{
  struct ab_cg_hier *acct = ab_cg_v1 (cg, "cpuacct"), *cpu = ab_cg_v1 (cg, "cpu"), *v2 = ab_cg_v2 (cg);
  struct ab_cg_hier *h;

  memset (st, 0, sizeof *st);
  if (!ab_cg_live (ab_cg_tracking (cg)))
    return ab_error_setc (err, AB_EC_STATE, ENOENT, "the cgroup `%s` is gone", ab_cg_tracking (cg)->dir);
  if (acct)
    cpu_v1 (acct, st);
  else if (v2)
    cpu_stat (v2, true, st);
  if (cpu)
    cpu_stat (cpu, false, st);
  else if (acct && v2)
    cpu_stat (v2, false, st);
  if ((h = ab_cg_v1 (cg, "cpuset")) != NULL)
    cpuset_v1 (h, st);
  read_memory (cg, st);
  read_pids (cg, st);
  if ((h = ab_cg_v1 (cg, "blkio")) != NULL)
    blkio_v1 (h, st);
  else if ((h = controller (cg, "io", "io.stat")) != NULL)
    io_v2 (h, st);
  read_hugetlb (cg, st);
  return 0;
}

void
ab_cgroup_counters_free (struct ab_cgroup_counters *st)
{
  free (st->cpu.percpu.v);
  free (st->cpu.percpu_kernel.v);
  free (st->cpu.percpu_user.v);
  free (st->cpuset.cpus.v);
  free (st->cpuset.mems.v);
  for (size_t i = 0; i < st->memory.n_raw; i++)
    free (st->memory.raw[i].key);
  free (st->memory.raw);
  for (size_t k = 0; k < AB_CGROUP_BLKIO_KINDS; k++)
    free (st->blkio[k].v);
  free (st->hugetlb);
  memset (st, 0, sizeof *st);
}

/* ---- OOM kills ------------------------------------------------------------------- */

/* v1: an eventfd the kernel signals at every OOM of the memory cgroup,
   registered by writing "<eventfd> <fd of memory.oom_control>" to
   cgroup.event_control (runc's notifier does the same).  The kernel keeps
   the registration until the eventfd is closed or the cgroup removed;
   the file's fd is only needed for the write. */
static int
oom_eventfd (struct ab_cg_hier *mem)
{
  _cleanup_close_ int efd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  _cleanup_close_ int ofd = -1;
  int dfd = ab_cg_dirfd (mem);
  char line[32];
  ab_error_t err;

  if (efd < 0 || dfd < 0)
    return -1;
  ofd = openat (dfd, "memory.oom_control", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (ofd < 0)
    return -1;
  snprintf (line, sizeof line, "%d %d", efd, ofd);
  if (ab_cg_write (mem, "cgroup.event_control", line, "OOM notification", &err) < 0)
    return -1;
  return ab_steal_fd (&efd);
}

int
ab_cgroup_oom_watch (struct ab_cgroup *cg, short *events)
{
  struct ab_cg_hier *mem = ab_cg_v1 (cg, "memory"), *v2 = ab_cg_v2 (cg);
  int dfd, fd;

  if (mem)
    {
      *events = POLLIN;
      return oom_eventfd (mem);
    }
  /* v2: memory.events itself.  kernfs wakes a poll of it (POLLPRI) when a
     counter in it changes after the fd last read it. */
  if (v2 == NULL || (dfd = ab_cg_dirfd (v2)) < 0)
    return -1;
  fd = openat (dfd, "memory.events", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return -1;
  *events = POLLPRI;
  if (ab_cgroup_oom_rearm (fd, POLLPRI) < 0)
    {
      close (fd);
      return -1;
    }
  return fd;
}

int
ab_cgroup_oom_rearm (int fd, short events)
{
  char buf[512];
  uint64_t n;
  ssize_t r;

  if (events == POLLIN) /* the eventfd: reading zeroes its count */
    return read (fd, &n, sizeof n) < 0 && errno != EAGAIN ? -1 : 0;
  /* memory.events: a read from the start is what re-arms the poll; one
     that fails (ENODEV: the cgroup was removed) would have poll report
     POLLERR at once for ever. */
  if (lseek (fd, 0, SEEK_SET) < 0)
    return -1;
  do
    r = read (fd, buf, sizeof buf);
  while (r > 0);
  return r < 0 ? -1 : 0;
}
