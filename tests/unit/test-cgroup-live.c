/* The cgroup driver on the real kernel: paths, create / destroy, kill,
 * freeze, devices, state, statistics.  Needs root; every cgroup is made
 * below the caller's own and removed again, also when a test fails.
 *
 *   test-cgroup-live [--mode=hybrid|v1|v2] [--ns]
 *
 * The cgroup-*.sh wrappers run it inside a cgroup + mount namespace with
 * /sys/fs/cgroup remounted, so that absolute paths and the v1 and v2
 * layouts can be tested on this host without leaving our own cgroup. */
#include "config.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include "base/gen.h"
#include "base/kernel-compat.h"
#include "base/json.h"
#include "tests/unit/tap.h"
#include "tests/unit/test-cgroup-util.h"

static int
child_sleep (void *arg)
{
  (void)arg;
  for (;;)
    pause ();
  return 0;
}

/* The directory the container's cgroup must have in each hierarchy, from
   our own cgroups (read independently of the driver) and the name. */
static bool
all_exist (const char *rel, bool want)
{
  const char *const *d;
  bool all = true;

  for (d = t_own_dirs (); *d; d++)
    {
      _cleanup_free_ char *p = xasprintf ("%s/%s", *d, rel);
      if (t_exists (p) != want)
        {
          printf ("#   %s %s\n", p, want ? "missing" : "still there");
          all = false;
        }
    }
  return all;
}

static void
test_lifecycle (void)
{
  _cleanup_free_ char *before = t_snapshot (), *after = NULL, *mid = NULL, *name = NULL;
  struct ab_cgroup *cg = NULL;
  ab_error_t err = { 0 };
  int r;

  r = t_create (NULL, NULL, &cg, &err);
  ok (r == 0, "create with no cgroupsPath and no resources succeeds%s%s", r ? ": " : "", r ? err.msg : "");
  if (r < 0)
    return;
  name = xasprintf ("agentbox-%s-%d", t_prefix, 1);
  ok (all_exist (name, true), "the default cgroup <own>/agentbox-<id> exists in every hierarchy");
  mid = t_snapshot ();
  ok (strcmp (before, mid) != 0, "the listing shows the new cgroups");
  ok (ab_cgroup_populated (cg, &err) == 0, "a new cgroup is not populated");
  ok (ab_cgroup_destroy (cg, &err) == 0, "destroy succeeds");
  after = t_snapshot ();
  is_str (after, before, "after destroy the directory listings are as before");
  ok (ab_cgroup_destroy (cg, &err) == 0, "destroy is idempotent");
  ab_cgroup_free (cg);
}

/* Cgroups the container made below its own (a nested runtime, systemd in
   the container) go with it, in every hierarchy, and an existing leaf is
   taken as it is (EEXIST: the walk, not the one-directory shortcut). */
static void
test_children_removed (void)
{
  _cleanup_free_ char *name = NULL, *sub = NULL, *deep = NULL;
  struct ab_cgroup *cg = NULL, *again = NULL;
  ab_error_t err = { 0 };
  const char *const *d;
  int r;

  name = xasprintf ("%s-kids", t_prefix);
  r = t_create (name, NULL, &cg, &err);
  ok (r == 0, "create a cgroup%s%s", r ? ": " : "", r ? err.msg : "");
  if (r < 0)
    return;
  sub = xasprintf ("%s/sub", name);
  deep = xasprintf ("%s/sub/deeper", name);
  for (d = t_own_dirs (); *d; d++)
    {
      _cleanup_free_ char *p1 = xasprintf ("%s/%s", *d, sub), *p2 = xasprintf ("%s/%s", *d, deep);
      mkdir (p1, 0755);
      mkdir (p2, 0755);
    }
  ok (all_exist (deep, true), "the container's own cgroups below its leaf exist in every hierarchy");
  ok (ab_cgroup_destroy (cg, &err) == 0 && all_exist (name, false),
      "destroy removes them with the leaf, deepest first%s%s", err.msg[0] ? ": " : "", err.msg);
  ab_cgroup_free (cg);

  for (d = t_own_dirs (); *d; d++)
    {
      _cleanup_free_ char *p = xasprintf ("%s/%s", *d, name);
      mkdir (p, 0755);
      if (ab_str_has_prefix (*d, "/sys/fs/cgroup/cpuset"))
        {
          _cleanup_free_ char *cpus = t_read (*d, "cpuset.cpus"), *mems = t_read (*d, "cpuset.mems");
          t_write (p, "cpuset.cpus", cpus ? cpus : "0");
          t_write (p, "cpuset.mems", mems ? mems : "0");
        }
    }
  r = t_create (name, NULL, &again, &err);
  ok (r == 0 && all_exist (name, true), "an existing empty leaf is taken%s%s", r ? ": " : "",
      r ? err.msg : "");
  if (again)
    {
      ok (ab_cgroup_destroy (again, &err) == 0 && all_exist (name, true),
          "and destroy leaves it: the runtime did not make it");
      ab_cgroup_free (again);
    }
  for (d = t_own_dirs (); *d; d++)
    {
      _cleanup_free_ char *p = xasprintf ("%s/%s", *d, name);
      rmdir (p);
    }
}

static void
test_relative_and_parent (void)
{
  _cleanup_free_ char *rel = xasprintf ("%s-rel/inner", t_prefix), *top = xasprintf ("%s-rel", t_prefix);
  _cleanup_free_ char *keep = xasprintf ("%s-keep", t_prefix), *keepc = xasprintf ("%s-keep/c", t_prefix);
  struct ab_cgroup *cg = NULL;
  const char *const *d;
  ab_error_t err = { 0 };
  int r;

  ok (t_create (rel, NULL, &cg, &err) == 0 && all_exist (rel, true),
      "a relative cgroupsPath lands below our own cgroup in every hierarchy");
  if (cg)
    {
      ok (ab_cgroup_destroy (cg, &err) == 0 && all_exist (top, false),
          "destroy removes both directories it created, deepest first");
      ab_cgroup_free (cg);
    }

  for (d = t_own_dirs (); *d; d++)
    {
      _cleanup_free_ char *p = xasprintf ("%s/%s", *d, keep);
      mkdir (p, 0755);
      if (ab_str_has_prefix (*d, "/sys/fs/cgroup/cpuset"))
        {
          _cleanup_free_ char *cpus = t_read (*d, "cpuset.cpus"), *mems = t_read (*d, "cpuset.mems");
          t_write (p, "cpuset.cpus", cpus ? cpus : "0");
          t_write (p, "cpuset.mems", mems ? mems : "0");
        }
    }
  cg = NULL;
  r = t_create (keepc, NULL, &cg, &err);
  ok (r == 0, "create below an existing parent%s%s", r ? ": " : "", r ? err.msg : "");
  if (cg)
    {
      ok (ab_cgroup_destroy (cg, &err) == 0 && all_exist (keepc, false) && all_exist (keep, true),
          "destroy removes only what it made: the existing parent stays");
      ab_cgroup_free (cg);
    }
  for (d = t_own_dirs (); *d; d++)
    {
      _cleanup_free_ char *p = xasprintf ("%s/%s", *d, keep);
      rmdir (p);
    }
}

static void
test_busy_refused (void)
{
  _cleanup_free_ char *busy = xasprintf ("%s-busy", t_prefix), *before = NULL, *path = NULL;
  struct ab_cgroup *cg = NULL, *other = NULL;
  ab_error_t err = { 0 };
  pid_t pid;

  if (t_create (busy, NULL, &other, &err) < 0)
    {
      ok (0, "prepare a busy cgroup: %s", err.msg);
      return;
    }
  pid = t_spawn (other, child_sleep, NULL);
  before = t_snapshot ();
  ok (pid > 0 && t_create (busy, NULL, &cg, &err) < 0 && err.cls == AB_EC_STATE
          && strstr (err.msg, "already has processes") != NULL,
      "an existing cgroup with processes is refused (%s)", err.msg);
  path = t_snapshot ();
  is_str (path, before, "refusing it removes nothing");
  ab_cgroup_kill (other, SIGKILL, &err);
  t_wait (pid);
  ab_cgroup_wait_empty (other, 5000, &err);
  ab_cgroup_destroy (other, &err);
  ab_cgroup_free (other);
}

static void
test_absolute (void)
{
  _cleanup_free_ char *abs = xasprintf ("/%s-abs/x", t_prefix), *top = xasprintf ("%s-abs", t_prefix);
  struct ab_cgroup *cg = NULL;
  ab_error_t err = { 0 };

  int r;

  if (!t_ns)
    return;
  /* Inside the namespace every mount root is our own cgroup: the absolute
     path is then below each mount point. */
  r = t_create (abs, NULL, &cg, &err);
  ok (r == 0 && all_exist (abs + 1, true),
      "an absolute cgroupsPath lands below each hierarchy's mount root%s%s", r ? ": " : "", r ? err.msg : "");
  if (cg)
    {
      const char *v2 = ab_cgroup_v2_path (cg);
      ok (t_mode == AB_CGROUP_V1 ? v2 == NULL : v2 && strcmp (v2, abs) == 0,
          "the v2 path is the absolute path");
      ok (ab_cgroup_destroy (cg, &err) == 0 && all_exist (top, false), "and is removed again");
      ab_cgroup_free (cg);
    }
}

/* ---- kill ---------------------------------------------------------------- */

static int report_fd = -1;

/* setsid + double fork: the grandchild is in another session, its parent
   gone, and only its cgroup still ties it to the container. */
static int
child_double_fork (void *arg)
{
  pid_t p = fork ();

  (void)arg;
  if (p == 0)
    {
      pid_t parent;
      setsid ();
      parent = getpid ();
      if (fork () == 0)
        {
          pid_t me = getpid ();
          /* Report only once reparented to the test (its subreaper):
             killed while its parent still lived, it would be that
             parent's to reap, and the test's waitpid would race it. */
          while (getppid () == parent)
            usleep (1000);
          if (write (report_fd, &me, sizeof me) != sizeof me)
            _exit (1);
          for (;;)
            pause ();
        }
      _exit (0);
    }
  waitpid (p, NULL, 0);
  for (;;)
    pause ();
  return 0;
}

static void
test_kill_double_fork (int sig)
{
  struct ab_cgroup *cg = NULL;
  ab_error_t err = { 0 };
  int pipefd[2], pidfd, st;
  pid_t pid, gpid = -1;
  struct pollfd p;

  if (t_create (NULL, NULL, &cg, &err) < 0 || pipe2 (pipefd, O_CLOEXEC) < 0)
    {
      ok (0, "prepare: %s", err.msg);
      return;
    }
  /* The grandchild is reparented to us, so we can reap it and see its
     death signal from outside. */
  prctl (PR_SET_CHILD_SUBREAPER, 1);
  report_fd = pipefd[1];
  pid = t_spawn (cg, child_double_fork, NULL);
  close (pipefd[1]);
  if (pid < 0 || read (pipefd[0], &gpid, sizeof gpid) != sizeof gpid)
    {
      ok (0, "the double-forked grandchild started");
      close (pipefd[0]);
      return;
    }
  close (pipefd[0]);
  pidfd = (int)syscall (SYS_pidfd_open, gpid, 0);
  ok (ab_cgroup_kill (cg, sig, &err) == 0, "ab_cgroup_kill (%s) succeeds",
      sig == SIGKILL ? "SIGKILL" : "SIGTERM");
  p = (struct pollfd){ .fd = pidfd, .events = POLLIN };
  ok (pidfd >= 0 && poll (&p, 1, 20000) == 1, "the setsid'd double-forked grandchild (pid %d) is dead",
      (int)gpid);
  st = t_wait (gpid);
  ok (WIFSIGNALED (st) && WTERMSIG (st) == sig, "it died of signal %d", sig);
  st = t_wait (pid);
  ok (WIFSIGNALED (st) && WTERMSIG (st) == sig, "the container's first process died of it too");
  ok (ab_cgroup_wait_empty (cg, 10000, &err) == 0, "the cgroup is empty afterwards");
  ok (ab_cgroup_destroy (cg, &err) == 0, "and can be removed%s%s", err.msg[0] ? ": " : "", err.msg);
  if (pidfd >= 0)
    close (pidfd);
  prctl (PR_SET_CHILD_SUBREAPER, 0);
  ab_cgroup_free (cg);
}

static void
test_destroy_refuses_populated (void)
{
  struct ab_cgroup *cg = NULL;
  ab_error_t err = { 0 };
  pid_t pid;

  if (t_create (NULL, NULL, &cg, &err) < 0)
    {
      ok (0, "prepare: %s", err.msg);
      return;
    }
  pid = t_spawn (cg, child_sleep, NULL);
  ok (pid > 0 && ab_cgroup_populated (cg, &err) == 1, "a cgroup with a process is populated");
  ok (ab_cgroup_destroy (cg, &err) < 0 && err.cls == AB_EC_STATE, "destroy refuses a populated cgroup");
  {
    _cleanup_free_ pid_t *pids = NULL;
    size_t n = 0;
    ok (ab_cgroup_pids (cg, &pids, &n, &err) == 0 && n == 1 && pids[0] == pid,
        "ab_cgroup_pids lists the child");
  }
  ab_cgroup_kill (cg, SIGKILL, &err);
  t_wait (pid);
  ok (ab_cgroup_wait_empty (cg, 10000, &err) == 0 && ab_cgroup_destroy (cg, &err) == 0,
      "after kill it empties and is removed");
  ab_cgroup_free (cg);
}

/* ---- freeze ---------------------------------------------------------------- */

static bool
frozen_outside (struct ab_cgroup *cg, bool want)
{
  _cleanup_free_ char *dir = NULL, *st = NULL;
  const char *own;

  if (t_mode != AB_CGROUP_V1 && (own = t_own_dir ("")) != NULL)
    {
      dir = xasprintf ("%s/agentbox-%s", own, t_prefix);
      (void)dir;
      st = t_read (ab_cg_tracking (cg)->dir, "cgroup.events");
      return st && strstr (st, want ? "frozen 1" : "frozen 0") != NULL;
    }
  st = t_read (ab_cg_v1 (cg, "freezer")->dir, "freezer.state");
  return st && strcmp (st, want ? "FROZEN" : "THAWED") == 0;
}

static void
test_freeze (void)
{
  struct ab_cgroup *cg = NULL;
  ab_error_t err = { 0 };
  pid_t pid;

  if (t_create (NULL, NULL, &cg, &err) < 0)
    {
      ok (0, "prepare: %s", err.msg);
      return;
    }
  pid = t_spawn (cg, child_sleep, NULL);
  ok (ab_cgroup_freeze (cg, true, &err) == 0 && frozen_outside (cg, true),
      "freeze: the kernel reports it frozen");
  ok (ab_cgroup_freeze (cg, false, &err) == 0 && frozen_outside (cg, false),
      "thaw: the kernel reports it thawed");
  ab_cgroup_kill (cg, SIGKILL, &err);
  t_wait (pid);
  ab_cgroup_wait_empty (cg, 10000, &err);
  ab_cgroup_destroy (cg, &err);
  ab_cgroup_free (cg);
}

/* ---- devices ---------------------------------------------------------------- */

static char devdir[64];

enum
{
  OPEN_NULL_RW = 1,
  OPEN_KMSG_R = 2,
  OPEN_KMSG_W = 4,
  OPEN_TUN_R = 8,
  DENIED_EPERM = 16, /* every failure above was EPERM */
};

static int
try_open (const char *name, int flags, int *all_eperm)
{
  _cleanup_free_ char *p = xasprintf ("%s/%s", devdir, name);
  int fd = open (p, flags | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

  if (fd >= 0)
    {
      close (fd);
      return 1;
    }
  if (errno != EPERM)
    *all_eperm = 0;
  return 0;
}

static int
child_devices (void *arg)
{
  int eperm = 1, r = 0;

  (void)arg;
  r |= try_open ("null", O_RDWR, &eperm) ? OPEN_NULL_RW : 0;
  r |= try_open ("kmsg", O_RDONLY, &eperm) ? OPEN_KMSG_R : 0;
  r |= try_open ("kmsg", O_WRONLY, &eperm) ? OPEN_KMSG_W : 0;
  r |= try_open ("tun", O_RDWR, &eperm) ? OPEN_TUN_R : 0;
  return r | (eperm ? DENIED_EPERM : 0);
}

static void
test_devices (void)
{
  struct ab_device_rule rules[] = {
    { .allow = true, .type = 'c', .major = { true, 1 }, .minor = { true, 11 }, .access = "rw" },
    { .allow = false, .type = 'c', .major = { true, 1 }, .minor = { true, 11 }, .access = "w" },
    { .allow = false, .type = 'c', .major = { true, 1 }, .minor = { true, 3 }, .access = "" },
  };
  struct ab_resources res = { .devices = rules, .n_devices = AB_ARRAY_SIZE (rules) };
  struct ab_cgroup *cg = NULL;
  ab_error_t err = { 0 };
  int st, here = 0, eperm = 1;
  pid_t pid;

  snprintf (devdir, sizeof devdir, "/tmp/%s-dev-XXXXXX", t_prefix);
  if (mkdtemp (devdir) == NULL)
    {
      ok (0, "mkdtemp");
      return;
    }
  {
    _cleanup_free_ char *a = xasprintf ("%s/null", devdir), *b = xasprintf ("%s/kmsg", devdir),
                        *c = xasprintf ("%s/tun", devdir);
    mknod (a, S_IFCHR | 0666, makedev (1, 3));
    mknod (b, S_IFCHR | 0600, makedev (1, 11));
    mknod (c, S_IFCHR | 0600, makedev (10, 200));
    here = child_devices (NULL);
    ok ((here & (OPEN_NULL_RW | OPEN_KMSG_R | OPEN_KMSG_W)) == (OPEN_NULL_RW | OPEN_KMSG_R | OPEN_KMSG_W),
        "outside the cgroup the test nodes open");
    (void)eperm;
    if (t_create (NULL, &res, &cg, &err) < 0)
      ok (0, "create with device rules: %s", err.msg);
    else
      {
        pid = t_spawn (cg, child_devices, NULL);
        st = t_wait (pid);
        ok (WIFEXITED (st), "the child ran");
        st = WEXITSTATUS (st);
        ok (st & OPEN_NULL_RW, "the default /dev/null opens read-write despite a user deny");
        ok (st & OPEN_KMSG_R, "an allowed node (1:11, r) opens read-only");
        ok (!(st & OPEN_KMSG_W), "allow rw then deny w: it does not open for writing");
        ok (!(st & OPEN_TUN_R), "a node no rule allows (10:200) does not open");
        ok (st & DENIED_EPERM, "the refusals are EPERM, from the device cgroup");
        ok (ab_cgroup_destroy (cg, &err) == 0, "destroy after the device test");
        ab_cgroup_free (cg);
      }
    unlink (a);
    unlink (b);
    unlink (c);
  }
  rmdir (devdir);
}

/* ---- state, statistics ------------------------------------------------------ */

static int
child_spin (void *arg)
{
  volatile uint64_t x = 0;
  uint64_t end = ab_now_monotonic_ns () + 50 * 1000000ull;

  (void)arg;
  while (ab_now_monotonic_ns () < end)
    x++;
  return 0;
}

static void
test_state_and_stats (void)
{
  struct ab_cgroup *cg = NULL, *back = NULL;
  struct ab_cgroup_stats st;
  _cleanup_gen_ struct ab_gen *g = ab_gen_new (false);
  _cleanup_json_ struct ab_json *j = NULL;
  _cleanup_free_ char *before = t_snapshot (), *after = NULL;
  ab_error_t err = { 0 };
  const char *text;
  size_t len;
  pid_t pid;
  int r;

  if (t_create (NULL, NULL, &cg, &err) < 0)
    {
      ok (0, "prepare: %s", err.msg);
      return;
    }
  pid = t_spawn (cg, child_spin, NULL);
  t_wait (pid);
  memset (&st, 0, sizeof st);
  r = ab_cgroup_stats (cg, &st, &err);
  ok (r == 0 && st.cpu_known && st.cpu_user_usec + st.cpu_system_usec > 0,
      "stats report the CPU time a child spent (%llu us user, %llu us system)",
      (unsigned long long)st.cpu_user_usec, (unsigned long long)st.cpu_system_usec);

  pid = t_spawn (cg, child_sleep, NULL);
  ab_cgroup_gen (cg, g);
  text = ab_gen_buf (g, &len);
  j = ab_json_parse (text, len, &ab_json_config_limits, "state.json", &err);
  ok (j && ab_cgroup_load (j, &back, &err) == 0, "the state of a live cgroup loads back");
  if (back)
    {
      ok (ab_cgroup_populated (back, &err) == 1, "the loaded cgroup sees the running child");
      ok (ab_cgroup_kill (back, SIGKILL, &err) == 0 && WTERMSIG (t_wait (pid)) == SIGKILL,
          "kill through the loaded state kills it");
      ab_cgroup_wait_empty (back, 10000, &err);
      ok (ab_cgroup_destroy (back, &err) == 0, "destroy through the loaded state");
      after = t_snapshot ();
      is_str (after, before, "and removes every directory");
      ab_cgroup_free (back);
    }
  ok (ab_cgroup_destroy (cg, &err) == 0, "destroying the original afterwards is harmless");
  ab_cgroup_free (cg);
}

/* A runtime killed between recording the plan and making the directories
   (or halfway through making them) leaves the planned state: loaded back,
   it kills and lists nothing, and destroy removes exactly what was made --
   with a nested cgroupsPath, every level of it. */
static void
test_planned_state (void)
{
  _cleanup_free_ char *before = t_snapshot (), *after = NULL, *path = NULL;
  struct ab_cgroup *plan = NULL, *back = NULL, *made = NULL;
  _cleanup_gen_ struct ab_gen *g = ab_gen_new (false);
  _cleanup_json_ struct ab_json *j = NULL;
  ab_error_t err = { 0 };
  const char *text;
  pid_t *pids = NULL;
  size_t len, n = 1;

  path = xasprintf ("%s-planned/%s", t_prefix, "leaf");
  if (ab_cgroup_plan (path, t_id (), NULL, &plan, &err) < 0)
    {
      ok (0, "plan: %s", err.msg);
      return;
    }
  after = t_snapshot ();
  is_str (after, before, "planning makes no directory");
  free (after);
  ab_cgroup_gen (plan, g);
  text = ab_gen_buf (g, &len);
  ok (strstr (text, "\"planned\":true") && strstr (text, "\"created\":2"),
      "the recorded plan says planned, with both levels of the path to be made");
  j = ab_json_parse (text, len, &ab_json_config_limits, "state.json", &err);
  ok (j && ab_cgroup_load (j, &back, &err) == 0, "the plan loads back");
  /* The same plan, made now: as if the runtime got that far and died. */
  ok (ab_cgroup_realize (plan, NULL, &err) == 0, "realizing the plan makes the cgroups (%s)", err.msg);
  made = plan;
  if (back)
    {
      ok (ab_cgroup_kill (back, SIGKILL, &err) == 0 && ab_cgroup_pids (back, &pids, &n, &err) == 0 && n == 0,
          "a planned cgroup from the state is neither killed nor listed");
      free (pids);
      ok (ab_cgroup_destroy (back, &err) == 0, "destroy through the recorded plan succeeds (%s)", err.msg);
      after = t_snapshot ();
      is_str (after, before, "and removes every level the realize made");
      ok (ab_cgroup_destroy (back, &err) == 0, "a second destroy is harmless");
      ab_cgroup_free (back);
    }
  ab_cgroup_destroy (made, &err);
  ab_cgroup_free (made);
}

/* The cgroup2 mount read without mountinfo (ab_cg_host_read_v2, every
   rootless start) against the same mount in mountinfo: the same root and
   mount point, the same own cgroups.  1 when they agree, 0 when not, -1
   when the kernel has no statmount(2); what was compared in `what`. */
static int
quick_matches_full (char *what, size_t len)
{
  static const char *const places[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
  struct ab_cg_host quick = { 0 }, full = { 0 };
  ab_error_t err;
  int r = ab_cg_host_read_v2 (&quick, &err), agree = 0;
  const char *want = NULL;

  if (ab_cg_host_read (&full, &err) < 0)
    return snprintf (what, len, "read the host: %s", err.msg), 0;
  /* the mount the quick read must find: the first of its two places that
     holds a cgroup2 mount in mountinfo */
  for (size_t k = 0; k < 2 && want == NULL; k++)
    for (size_t i = 0; i < full.n_mounts; i++)
      if (full.mounts[i].v2 && strcmp (full.mounts[i].mountpoint, places[k]) == 0)
        want = places[k];
  if (r == 0 && want && syscall (SYS_statmount, NULL, NULL, 0, 0) < 0 && errno == ENOSYS)
    agree = -1;
  else if (want == NULL)
    {
      snprintf (what, len, "no cgroup2 mount at either place: the quick read finds none (r=%d)", r);
      agree = r == 0 && quick.n_mounts == 0;
    }
  else if (r != 1 || quick.n_mounts != 1)
    snprintf (what, len, "the cgroup2 mount at %s: the quick read found none (r=%d)", want, r);
  else
    {
      for (size_t i = 0; i < full.n_mounts; i++)
        agree |= full.mounts[i].v2 && strcmp (full.mounts[i].mountpoint, quick.mounts[0].mountpoint) == 0
                 && strcmp (full.mounts[i].root, quick.mounts[0].root) == 0;
      agree &= quick.n_own == full.n_own && quick.n_own > 0
               && strcmp (quick.own[0].path, full.own[0].path) == 0;
      snprintf (what, len, "root `%s` at `%s`, own cgroup `%s`, as in mountinfo", quick.mounts[0].root,
                quick.mounts[0].mountpoint, quick.n_own ? quick.own[0].path : "?");
    }
  ab_cg_host_free (&full);
  ab_cg_host_free (&quick);
  return agree;
}

static void
test_quick_v2_read (void)
{
  _cleanup_free_ char *dir = NULL;
  const char *v2dir = t_own_dir ("");
  char what[600] = "";
  int p[2], r, st = 0;
  pid_t pid;

  r = quick_matches_full (what, sizeof what);
  if (r < 0)
    {
      ok (1, "# SKIP no statmount(2) on this kernel: the whole host is read");
      return;
    }
  ok (r == 1, "the cgroup2 mount without mountinfo: %s", what);
  if (v2dir == NULL)
    return;
  /* In a cgroup namespace rooted below the mount's root, mountinfo shows
     "/.." as the mount's root: so must the quick read, never "/". */
  dir = xasprintf ("%s/%s-quick", v2dir, t_prefix);
  if (pipe (p) < 0 || mkdir (dir, 0755) < 0)
    {
      ok (0, "make %s: %s", dir, strerror (errno));
      return;
    }
  pid = fork ();
  if (pid == 0)
    {
      char me[32];
      close (p[0]);
      snprintf (me, sizeof me, "%d", (int) getpid ());
      if (t_write (dir, "cgroup.procs", me) < 0 || unshare (CLONE_NEWCGROUP) < 0)
        snprintf (what, sizeof what, "enter %s and a cgroup namespace: %s", dir, strerror (errno)), r = 0;
      else
        r = quick_matches_full (what, sizeof what);
      if (write (p[1], what, strlen (what)) < 0)
        _exit (2);
      _exit (r == 1 ? 0 : 1);
    }
  close (p[1]);
  memset (what, 0, sizeof what);
  if (read (p[0], what, sizeof what - 1) < 0)
    what[0] = '\0';
  close (p[0]);
  waitpid (pid, &st, 0);
  ok (WIFEXITED (st) && WEXITSTATUS (st) == 0 && strstr (what, "root `/..`"),
      "in a cgroup namespace below the mount's root: %s", what);
  rmdir (dir);
}

int
main (int argc, char **argv)
{
  t_init (argc, argv);
  ok (1, "the host is in %s mode%s",
      t_mode == AB_CGROUP_V2   ? "v2"
      : t_mode == AB_CGROUP_V1 ? "v1"
                               : "hybrid",
      t_ns ? ", inside a cgroup namespace" : "");
  test_lifecycle ();
  test_children_removed ();
  test_relative_and_parent ();
  test_busy_refused ();
  test_absolute ();
  test_kill_double_fork (SIGKILL);
  test_kill_double_fork (SIGTERM);
  test_destroy_refuses_populated ();
  test_freeze ();
  test_devices ();
  test_state_and_stats ();
  test_planned_state ();
  test_quick_v2_read ();
  {
    _cleanup_free_ char *left = t_snapshot ();
    is_str (left, "", "no test cgroup is left behind");
  }
  return tap_done ();
}
