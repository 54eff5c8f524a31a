/* linux.resources on the real kernel: each limit read back from its
 * interface file from outside, the limits enforced on children (OOM kill,
 * fork bomb), the errors for what this host cannot do.  Needs root.
 *
 *   test-cgroup-res [--mode=hybrid|v1|v2] [--ns]
 */
#include "config.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "tests/unit/tap.h"
#include "spec/spec.h"
#include "tests/unit/test-cgroup-util.h"

#define MiB (1024 * 1024)

static bool
has (const char *ctrl)
{
  return t_mode != AB_CGROUP_V2 && t_own_dir (ctrl) != NULL;
}

/* Whether our own cgroup in ctrl's hierarchy has this interface file. */
static bool
own_has (const char *ctrl, const char *file)
{
  const char *own = t_own_dir (ctrl);
  _cleanup_free_ char *p = own ? xasprintf ("%s/%s", own, file) : NULL;
  return p && t_exists (p);
}

/* The container's directory in the hierarchy of ctrl ("" for v2), built
   from our own cgroup and the default name, not asked from the driver. */
static char *
cdir (const char *ctrl, const char *id)
{
  const char *own = t_own_dir (ctrl);
  return own ? xasprintf ("%s/agentbox-%s", own, id) : NULL;
}

static bool
file_is (const char *ctrl, const char *id, const char *file, const char *want)
{
  _cleanup_free_ char *d = cdir (ctrl, id), *got = d ? t_read (d, file) : NULL;

  if (got && strcmp (got, want) == 0)
    return true;
  printf ("#   %s/%s: got `%s`, expected `%s`\n", d ? d : "?", file, got ? got : "(unreadable)", want);
  return false;
}

/* Create with resources; on failure print why and return NULL. */
static struct ab_cgroup *
make (const struct ab_resources *r, char *id, size_t idlen)
{
  struct ab_cgroup *cg = NULL;
  ab_error_t err = { 0 };
  const char *i = t_id ();

  snprintf (id, idlen, "%s", i);
  if (t_cgroup_create (NULL, id, r, &cg, &err) < 0)
    {
      printf ("#   create: %s\n", err.msg);
      return NULL;
    }
  return cg;
}

static void
drop (struct ab_cgroup *cg)
{
  ab_error_t err;

  if (cg == NULL)
    return;
  ab_cgroup_kill (cg, SIGKILL, &err);
  ab_cgroup_wait_empty (cg, 10000, &err);
  if (ab_cgroup_destroy (cg, &err) < 0)
    printf ("#   destroy: %s\n", err.msg);
  ab_cgroup_free (cg);
}

/* The error a create fails with; "" when it succeeded (and was undone). */
static char *
create_error (const struct ab_resources *r)
{
  struct ab_cgroup *cg = NULL;
  ab_error_t err = { 0 };

  if (t_cgroup_create (NULL, t_id (), r, &cg, &err) == 0)
    {
      drop (cg);
      return xstrdup ("");
    }
  return xstrdup (err.msg);
}

static void
test_v1_values (void)
{
  struct ab_resources r = { 0 };
  struct ab_cgroup *cg;
  char id[48];

  if (!has ("memory"))
    return;
  r.memory_set = true;
  r.memory.limit = (ab_opt_i64){ true, 64 * MiB };
  r.memory.reservation = (ab_opt_i64){ true, 32 * MiB };
  r.memory.swap = (ab_opt_i64){ true, 128 * MiB };
  r.memory.swappiness = (ab_opt_u64){ true, 10 };
  r.memory.kernel = (ab_opt_i64){ true, -1 };
  r.memory.kernel_tcp = (ab_opt_i64){ true, 16 * MiB };
  r.cpu_set = true;
  r.cpu.shares = (ab_opt_u64){ true, 512 };
  r.cpu.quota = (ab_opt_i64){ true, 50000 };
  r.cpu.period = (ab_opt_u64){ true, 200000 };
  r.cpu.burst = (ab_opt_u64){ true, 1000 };
  r.cpu.idle = (ab_opt_i64){ true, 0 };
  r.cpu.realtime_period = (ab_opt_u64){ true, 1000000 };
  r.cpu.realtime_runtime = (ab_opt_i64){ true, 1000 };
  r.cpu.cpus = (char *)"0";
  r.cpu.mems = (char *)"0";
  r.pids_set = true;
  r.pids_limit = (ab_opt_i64){ true, 0 };
  cg = make (&r, id, sizeof id);
  ok (cg != NULL, "create with memory, cpu, cpuset and pids limits");
  if (cg == NULL)
    return;
  ok (file_is ("memory", id, "memory.limit_in_bytes", "67108864"),
      "memory.limit lands in memory.limit_in_bytes");
  ok (file_is ("memory", id, "memory.soft_limit_in_bytes", "33554432"),
      "memory.reservation lands in memory.soft_limit_in_bytes");
  ok (file_is ("memory", id, "memory.memsw.limit_in_bytes", "134217728"),
      "memory.swap lands in memory.memsw.limit_in_bytes");
  ok (file_is ("memory", id, "memory.swappiness", "10"), "memory.swappiness lands in memory.swappiness");
  ok (file_is ("memory", id, "memory.kmem.tcp.limit_in_bytes", "16777216"),
      "memory.kernelTCP lands in memory.kmem.tcp.limit_in_bytes");
  ok (file_is ("cpu", id, "cpu.shares", "512"), "cpu.shares lands in cpu.shares");
  ok (file_is ("cpu", id, "cpu.cfs_quota_us", "50000") && file_is ("cpu", id, "cpu.cfs_period_us", "200000"),
      "cpu.quota and cpu.period land in cpu.cfs_quota_us and cpu.cfs_period_us");
  ok (file_is ("cpu", id, "cpu.cfs_burst_us", "1000"), "cpu.burst lands in cpu.cfs_burst_us");
  ok (file_is ("cpu", id, "cpu.idle", "0"), "cpu.idle lands in cpu.idle");
  ok (file_is ("cpu", id, "cpu.rt_period_us", "1000000") && file_is ("cpu", id, "cpu.rt_runtime_us", "1000"),
      "cpu.realtimePeriod and realtimeRuntime land in cpu.rt_period_us and cpu.rt_runtime_us");
  ok (file_is ("cpuset", id, "cpuset.cpus", "0") && file_is ("cpuset", id, "cpuset.mems", "0"),
      "cpu.cpus and cpu.mems land in cpuset.cpus and cpuset.mems");
  ok (file_is ("pids", id, "pids.max", "0"), "pids.limit 0 is a valid limit and lands in pids.max");
  drop (cg);

  memset (&r, 0, sizeof r);
  r.memory_set = true;
  r.memory.disable_oom_killer = (ab_opt_bool){ true, true };
  cg = make (&r, id, sizeof id);
  {
    _cleanup_free_ char *d = cdir ("memory", id), *oc = d ? t_read (d, "memory.oom_control") : NULL;
    ok (oc && strstr (oc, "oom_kill_disable 1"), "disableOOMKiller lands in memory.oom_control");
  }
  {
    const char *own = t_own_dir ("cpuset");
    _cleanup_free_ char *d = cdir ("cpuset", id), *cpus = d ? t_read (d, "cpuset.cpus") : NULL;
    _cleanup_free_ char *mems = d ? t_read (d, "cpuset.mems") : NULL;
    _cleanup_free_ char *pc = own ? t_read (own, "cpuset.cpus") : NULL,
                        *pm = own ? t_read (own, "cpuset.mems") : NULL;
    ok (own == NULL
            || (cpus && pc && mems && pm && cpus[0] && strcmp (cpus, pc) == 0 && strcmp (mems, pm) == 0),
        "a new v1 cpuset starts with its parent's cpus and mems (else tasks could not join)");
  }
  drop (cg);
}

static void
test_blkio (void)
{
  struct ab_blkio_throttle th = { 0 };
  struct ab_resources r = { 0 };
  _cleanup_free_ char *dev = t_read ("/sys/block/vda", "dev"), *want = NULL;
  struct ab_cgroup *cg;
  char id[48];
  int maj, min;
  bool weighted;

  if (!has ("blkio") || dev == NULL || sscanf (dev, "%d:%d", &maj, &min) != 2)
    return;
  th = (struct ab_blkio_throttle){ maj, min, MiB };
  r.blkio_set = true;
  /* A weight needs a proportional I/O scheduler: CFQ's blkio.weight is gone
     from current kernels, and BFQ's blkio.bfq.weight exists only with BFQ
     loaded.  Without either, the weight is refused by name. */
  weighted = own_has ("blkio", "blkio.weight") || own_has ("blkio", "blkio.bfq.weight");
  r.blkio.weight = (ab_opt_u64){ true, 200 };
  if (!weighted)
    {
      _cleanup_free_ char *e = create_error (&r);
      ok (strstr (e, "linux.resources.blockIO.weight") != NULL,
          "without a weight file (no BFQ), blockIO.weight is refused by name");
      if (*e)
        printf ("#   %s\n", e);
      r.blkio.weight.set = false;
    }
  r.blkio.throttle[AB_THROTTLE_READ_BPS] = &th;
  r.blkio.n_throttle[AB_THROTTLE_READ_BPS] = 1;
  r.blkio.throttle[AB_THROTTLE_WRITE_IOPS] = &th;
  r.blkio.n_throttle[AB_THROTTLE_WRITE_IOPS] = 1;
  cg = make (&r, id, sizeof id);
  want = xasprintf ("%d:%d %d", maj, min, MiB);
  ok (cg && file_is ("blkio", id, "blkio.throttle.read_bps_device", want)
          && file_is ("blkio", id, "blkio.throttle.write_iops_device", want),
      "throttleReadBpsDevice and throttleWriteIOPSDevice land in blkio.throttle.*_device");
  if (weighted)
    {
      _cleanup_free_ char *d = cdir ("blkio", id), *w = d ? t_read (d, "blkio.weight") : NULL;
      _cleanup_free_ char *b = d && w == NULL ? t_read (d, "blkio.bfq.weight") : NULL;
      ok ((w && strstr (w, "200")) || (b && strstr (b, "200")),
          "blockIO.weight lands in blkio.weight or blkio.bfq.weight");
    }
  drop (cg);
}

static void
test_network (void)
{
  struct ab_net_priority prio[] = { { (char *)"lo", 5 } };
  struct ab_resources r = {
    .network_set = true, .net_class_id = { true, 0x100001 }, .net_priorities = prio, .n_net_priorities = 1
  };
  struct ab_cgroup *cg;
  char id[48];

  if (!has ("net_cls") || !has ("net_prio"))
    return;
  cg = make (&r, id, sizeof id);
  ok (cg && file_is ("net_cls", id, "net_cls.classid", "1048577"),
      "network.classID lands in net_cls.classid");
  {
    _cleanup_free_ char *d = cdir ("net_prio", id), *map = d ? t_read (d, "net_prio.ifpriomap") : NULL;
    ok (map && strstr (map, "lo 5"), "network.priorities land in net_prio.ifpriomap");
  }
  drop (cg);
}

/* hugetlb lives in the v2 tree here; our own v2 cgroup must delegate it,
   and whatever we enable for the test we disable again. */
static void
test_hugetlb (void)
{
  struct ab_hugepage_limit hp = { (char *)"2MB", 4 * MiB };
  struct ab_kv kv[] = { { (char *)"hugetlb.2MB.rsvd.max", (char *)"2097152" },
                        { (char *)"cgroup.max.descendants", (char *)"3" } };
  struct ab_resources r = { .hugepages = &hp, .n_hugepages = 1, .unified = { kv, AB_ARRAY_SIZE (kv) } };
  const char *own = t_own_dir ("");
  _cleanup_free_ char *avail = own ? t_read (own, "cgroup.controllers") : NULL;
  _cleanup_free_ char *enabled = own ? t_read (own, "cgroup.subtree_control") : NULL;
  struct ab_cgroup *cg;
  char id[48];

  if (t_mode == AB_CGROUP_V1 || avail == NULL || strstr (avail, "hugetlb") == NULL
      || !t_exists ("/sys/kernel/mm/hugepages/hugepages-2048kB"))
    return;
  cg = make (&r, id, sizeof id);
  ok (cg && file_is ("", id, "hugetlb.2MB.max", "4194304"),
      "hugepageLimits land in the v2 tree's hugetlb.2MB.max, the controller delegated by the driver");
  ok (cg && file_is ("", id, "hugetlb.2MB.rsvd.max", "2097152"), "a unified hugetlb key lands verbatim");
  ok (cg && file_is ("", id, "cgroup.max.descendants", "3"), "a unified cgroup core key lands verbatim");
  drop (cg);
  if (enabled && strstr (enabled, "hugetlb") == NULL)
    t_write (own, "cgroup.subtree_control", "-hugetlb");
}

static int
child_sleep (void *arg)
{
  (void)arg;
  for (;;)
    pause ();
  return 0;
}

/* cgroup v2's no-internal-process rule: a cgroup with processes of its own
   cannot delegate a controller to a child.  The error must say which
   controller, where, and why. */
static void
test_no_internal_process (void)
{
  struct ab_hugepage_limit hp = { (char *)"2MB", 4 * MiB };
  struct ab_resources r = { .hugepages = &hp, .n_hugepages = 1 };
  const char *own = t_own_dir ("");
  _cleanup_free_ char *avail = own ? t_read (own, "cgroup.controllers") : NULL;
  _cleanup_free_ char *enabled = own ? t_read (own, "cgroup.subtree_control") : NULL;
  _cleanup_free_ char *parent = xasprintf ("%s-nip", t_prefix), *child = xasprintf ("%s-nip/c", t_prefix);
  struct ab_cgroup *p = NULL, *c = NULL;
  ab_error_t err = { 0 };
  pid_t pid;

  if (t_mode == AB_CGROUP_V1 || avail == NULL || strstr (avail, "hugetlb") == NULL)
    return;
  /* Our own cgroup must offer hugetlb to its children for the parent to
     have it at all; undone below. */
  if (enabled && strstr (enabled, "hugetlb") == NULL)
    t_write (own, "cgroup.subtree_control", "+hugetlb");
  if (t_cgroup_create (parent, t_id (), NULL, &p, &err) < 0)
    ok (0, "prepare a parent cgroup: %s", err.msg);
  else
    {
      pid = t_spawn (p, child_sleep, NULL);
      ok (pid > 0 && t_cgroup_create (child, t_id (), &r, &c, &err) < 0
              && strstr (err.msg,
                         "linux.resources.hugepageLimits: cannot enable the `hugetlb` controller in `")
              && strstr (err.msg, "-nip/cgroup.subtree_control`")
              && strstr (err.msg, "has processes of its own") && strstr (err.msg, "Device or resource busy"),
          "a parent with processes of its own cannot delegate: the error names the controller, the file and "
          "the "
          "rule (%s)",
          err.msg);
      drop (c);
      drop (p);
      if (pid > 0)
        t_wait (pid);
    }
  if (enabled && strstr (enabled, "hugetlb") == NULL)
    t_write (own, "cgroup.subtree_control", "-hugetlb");
}

static void
test_errors (void)
{
  struct ab_resources r = { 0 };
  struct ab_rdma rd = { (char *)"mlx5_0", { true, 10 }, { false, 0 } };
  struct ab_kv kv = { (char *)"memory.high", (char *)"1000000" };
  struct ab_kv procs = { (char *)"cgroup.procs", (char *)"1" };
  _cleanup_free_ char *before = t_snapshot (), *after = NULL;
  char *e;

  r.memory_set = true;
  r.memory.kernel = (ab_opt_i64){ true, 1 << 20 };
  e = create_error (&r);
  is_str (e, "", "a kernel memory limit the kernel may not enforce is a warning, not an error (as runc)");
  free (e);
  {
    /* The values the kernel would refuse, the parser refuses first
       (spec/parse-resources.c, for create and update alike). */
    const char doc[] = "{\"memory\":{\"kernel\":-2}}";
    ab_error_t verr = { 0 };
    struct ab_resources *v = ab_resources_parse (doc, sizeof doc - 1, "resources.json", &verr);
    ok (v == NULL && strcmp (verr.msg, "resources.json: memory.kernel: -2 is out of range (-1 to 9223372036854775807)") == 0,
        "a kernel memory limit below -1 is refused (%s)", verr.msg);
    ab_resources_free (v);
  }

  if (!t_own_dir ("net_cls"))
    {
      memset (&r, 0, sizeof r);
      r.network_set = true;
      r.net_class_id = (ab_opt_u64){ true, 0x100001 };
      e = create_error (&r);
      is_str (e,
              "linux.resources.network.classID: the net_cls controller is not available on this host (no "
              "`net_cls.classid`, and cgroup v2 has no equivalent)",
              "network.classID without net_cls names the JSON path and the missing file");
      free (e);
    }
  memset (&r, 0, sizeof r);
  r.rdma = &rd;
  r.n_rdma = 1;
  e = create_error (&r);
  ok (strstr (e, "linux.resources.rdma") && strstr (e, "rdma"),
      "rdma without the rdma controller is an error (%s)", e);
  free (e);

  memset (&r, 0, sizeof r);
  r.unified = (struct ab_kvlist){ &procs, 1 };
  e = create_error (&r);
  ok (strstr (e, "linux.resources.unified.\"cgroup.procs\"") != NULL,
      "unified cannot write cgroup.procs (%s)", e);
  free (e);

  memset (&r, 0, sizeof r);
  r.unified = (struct ab_kvlist){ &kv, 1 };
  e = create_error (&r);
  if (t_mode == AB_CGROUP_HYBRID)
    is_str (e,
            "linux.resources.unified.\"memory.high\": the memory controller is a cgroup v1 controller on "
            "this host, "
            "not in the v2 tree",
            "a unified key of a v1 controller is refused on hybrid");
  else if (t_mode == AB_CGROUP_V1)
    is_str (e, "linux.resources.unified.\"memory.high\": this host has no cgroup v2 hierarchy",
            "unified is refused without cgroup v2");
  else
    ok (strstr (e, "unified.\"memory.high\": the `memory` controller is not available in"),
        "a unified key of a missing v2 controller is refused (%s)", e);
  free (e);

  if (t_mode == AB_CGROUP_V2)
    {
      memset (&r, 0, sizeof r);
      r.memory_set = true;
      r.memory.limit = (ab_opt_i64){ true, 64 * MiB };
      e = create_error (&r);
      ok (strstr (e, "linux.resources.memory.limit: the `memory` controller is not available in `")
              && strstr (e, "/cgroup.controllers`"),
          "memory.limit without the v2 memory controller names the JSON path and the file (%s)", e);
      free (e);
      memset (&r, 0, sizeof r);
      r.cpu_set = true;
      r.cpu.realtime_runtime = (ab_opt_i64){ true, 1000 };
      e = create_error (&r);
      ok (strstr (e, "linux.resources.cpu.realtimeRuntime") != NULL, "realtime limits are refused on v2 (%s)",
          e);
      free (e);
    }
  after = t_snapshot ();
  is_str (after, before, "failed creates leave no directory behind");
}

/* ---- enforcement -------------------------------------------------------------- */

static int
child_memhog (void *arg)
{
  size_t i;

  (void)arg;
  for (i = 0; i < 256; i++)
    {
      char *p = mmap (NULL, MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED)
        return 2;
      memset (p, 0x5a, MiB);
    }
  return 0;
}

static void
test_oom (void)
{
  struct ab_resources r = { 0 };
  struct ab_cgroup_stats st;
  struct ab_cgroup *cg;
  ab_error_t err;
  char id[48];
  int status;
  pid_t pid;

  if (!has ("memory"))
    return;
  r.memory_set = true;
  r.memory.limit = (ab_opt_i64){ true, 32 * MiB };
  r.memory.swap = (ab_opt_i64){ true, 32 * MiB };
  cg = make (&r, id, sizeof id);
  if (cg == NULL)
    {
      ok (0, "create with a 32 MiB memory limit");
      return;
    }
  pid = t_spawn (cg, child_memhog, NULL);
  status = t_wait (pid);
  ok (WIFSIGNALED (status) && WTERMSIG (status) == SIGKILL,
      "a child allocating 256 MiB over a 32 MiB limit is OOM-killed");
  ok (ab_cgroup_stats (cg, &st, &err) == 0 && st.memory_known && st.oom_killed && st.oom_kills >= 1,
      "stats report the OOM kill");
  ok (st.memory_peak > 16 * MiB && st.memory_peak <= 33 * MiB,
      "stats report a memory peak near the limit (%llu)", (unsigned long long)st.memory_peak);
  drop (cg);
}

static int bomb_fd = -1;

/* Fork until the kernel says no; report how far it got and why it stopped. */
static int
child_forkbomb (void *arg)
{
  int n = 0, e = 0, res[2];

  (void)arg;
  for (n = 0; n < 1000; n++)
    {
      pid_t p = fork ();
      if (p == 0)
        {
          for (;;)
            pause ();
        }
      if (p < 0)
        {
          e = errno;
          break;
        }
    }
  res[0] = n;
  res[1] = e;
  if (write (bomb_fd, res, sizeof res) != sizeof res)
    return 1;
  for (;;)
    pause ();
  return 0;
}

static void
test_forkbomb (void)
{
  struct ab_resources r = { .pids_set = true, .pids_limit = { true, 16 } };
  struct ab_cgroup_stats st;
  struct ab_cgroup *cg;
  ab_error_t err;
  int fds[2], res[2] = { -1, -1 }, status, rc;
  char id[48];
  pid_t pid, p;

  if (!has ("pids") || pipe2 (fds, O_CLOEXEC) < 0)
    return;
  cg = make (&r, id, sizeof id);
  if (cg == NULL)
    {
      ok (0, "create with pids.limit 16");
      return;
    }
  bomb_fd = fds[1];
  pid = t_spawn (cg, child_forkbomb, NULL);
  close (fds[1]);
  rc = (int)read (fds[0], res, sizeof res);
  ok (rc == sizeof res && res[1] == EAGAIN && res[0] == 15,
      "a fork bomb stops at pids.limit: fork fails with EAGAIN after 15 children (%d, errno %d)", res[0],
      res[1]);
  close (fds[0]);
  ok (ab_cgroup_stats (cg, &st, &err) == 0 && st.pids_known && st.pids_max_hit,
      "stats report that pids.max was hit");
  ok (ab_cgroup_kill (cg, SIGKILL, &err) == 0 && ab_cgroup_wait_empty (cg, 10000, &err) == 0,
      "the whole bomb is killed");
  t_wait (pid);
  p = fork ();
  if (p == 0)
    _exit (7);
  status = p > 0 ? t_wait (p) : -1;
  ok (WIFEXITED (status) && WEXITSTATUS (status) == 7, "the host keeps running: we can still fork");
  drop (cg);
}

static int hold_fd = -1;

static int
child_hold (void *arg)
{
  char *p = mmap (NULL, 24 * MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

  (void)arg;
  if (p == MAP_FAILED)
    return 1;
  memset (p, 1, 24 * MiB);
  if (write (hold_fd, "r", 1) != 1)
    return 1;
  for (;;)
    pause ();
  return 0;
}

static void
test_update (void)
{
  struct ab_resources r = { 0 };
  struct ab_cgroup *cg;
  ab_error_t err = { 0 };
  const char *ctrl = t_mode == AB_CGROUP_V2 ? "" : "memory";
  int fds[2], rc;
  char id[48], c;
  pid_t pid;

  if (!has ("pids") || !has ("memory") || pipe2 (fds, O_CLOEXEC) < 0)
    return;
  cg = make (NULL, id, sizeof id);
  if (cg == NULL)
    return;
  r.memory_set = true;
  r.memory.limit = (ab_opt_i64){ true, 128 * MiB };
  r.pids_set = true;
  r.pids_limit = (ab_opt_i64){ true, -1 };
  ok (ab_cgroup_update (cg, &r, &err) == 0 && file_is (ctrl, id, "memory.limit_in_bytes", "134217728")
          && file_is ("pids", id, "pids.max", "max"),
      "update writes the new limits (pids.limit -1 is max)");
  hold_fd = fds[1];
  pid = t_spawn (cg, child_hold, NULL);
  close (fds[1]);
  rc = (int)read (fds[0], &c, 1);
  close (fds[0]);
  r.memory.limit = (ab_opt_i64){ true, 8 * MiB };
  r.memory.check_before_update = (ab_opt_bool){ true, true };
  ok (rc == 1 && ab_cgroup_update (cg, &r, &err) < 0 && strstr (err.msg, "memory.limit")
          && strstr (err.msg, "below the current usage")
          && file_is (ctrl, id, "memory.limit_in_bytes", "134217728"),
      "checkBeforeUpdate refuses a limit below the current usage and leaves the old one (%s)", err.msg);
  (void)pid;
  drop (cg);
}

int
main (int argc, char **argv)
{
  const char *v2own;
  int lock = -1;

  t_init (argc, argv);
  test_v1_values ();
  test_blkio ();
  test_network ();
  /* The hugetlb tests switch the controller on in our own v2 cgroup and off
     again: runs in parallel (make -j, the namespaced runs) take turns, on a
     lock on that directory (one kernfs node, whatever the mount). */
  v2own = t_own_dir ("");
  if (v2own && (lock = open (v2own, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0)
    flock (lock, LOCK_EX);
  test_hugetlb ();
  test_no_internal_process ();
  if (lock >= 0)
    close (lock);
  test_errors ();
  test_oom ();
  test_forkbomb ();
  test_update ();
  {
    _cleanup_free_ char *left = t_snapshot ();
    is_str (left, "", "no test cgroup is left behind");
  }
  return tap_done ();
}
