/* The container's processes: list, freeze, signal, wait, statistics.
 *
 * The container may hold CAP_SYS_ADMIN over a cgroup namespace and make
 * sub-cgroups of its own, so every walk covers the whole subtree below the
 * container's cgroup.
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>

#include "runtime/cgroup/cgroup-internal.h"
#include "base/util.h"

#define FREEZE_TIMEOUT_MS 5000
#define KILL_ROUNDS 100
#define SUBTREE_DEPTH_MAX 32

struct ab_cg_hier *
ab_cg_tracking (struct ab_cgroup *cg)
{
  struct ab_cg_hier *h;

  if (ab_cg_v2 (cg))
    return cg->v2;
  if ((h = ab_cg_v1 (cg, "freezer")) != NULL || (h = ab_cg_v1 (cg, "pids")) != NULL)
    return h;
  for (size_t i = 0; i < cg->n; i++)
    if (ab_cg_live (&cg->h[i]))
      return &cg->h[i];
  return cg->v2 ? cg->v2 : &cg->h[0];
}

static void
msleep (long ms)
{
  nanosleep (&(struct timespec){ ms / 1000, (ms % 1000) * 1000000 }, NULL);
}

/* ---- process lists ----------------------------------------------------------- */

struct pidv
{
  pid_t *v;
  size_t n;
};

static int
collect (int dfd, const char *dir, int depth, struct pidv *out, ab_error_t *err)
{
  _cleanup_free_ char *text = NULL;
  _cleanup_close_ int fd = -1;
  char *line, *save = NULL;
  DIR *d;
  struct dirent *e;

  if (ab_read_file_at (dfd, "cgroup.procs", 1u << 22, &text, NULL, err) < 0)
    {
      if (err->errnum == ENOENT || err->errnum == ENODEV) /* removed while we walked */
        return 0;
      return ab_error_prefix (err, "`%s`", dir);
    }
  for (line = strtok_r (text, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      int pid;
      if (ab_parse_int (line, &pid) < 0 || pid <= 0)
        continue;
      out->v = xreallocarray (out->v, out->n + 1, sizeof *out->v);
      out->v[out->n++] = pid;
    }
  if (depth >= SUBTREE_DEPTH_MAX || (fd = openat (dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
    return 0;
  if ((d = fdopendir (fd)) == NULL)
    return 0;
  fd = -1;
  while ((e = readdir (d)) != NULL)
    {
      _cleanup_close_ int sub = -1;
      if (e->d_type != DT_DIR || e->d_name[0] == '.')
        continue;
      sub = openat (dirfd (d), e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
      if (sub >= 0 && collect (sub, dir, depth + 1, out, err) < 0)
        {
          closedir (d);
          return -1;
        }
    }
  closedir (d);
  return 0;
}

int
ab_cgroup_pids (struct ab_cgroup *cg, pid_t **pids, size_t *n, ab_error_t *err)
{
  struct ab_cg_hier *h = ab_cg_tracking (cg);
  struct pidv v = { 0 };

  *pids = NULL;
  *n = 0;
  if (!ab_cg_live (h) || cg->planned)
    return 0;
  if (ab_cg_dirfd (h) < 0 && errno == ENOENT)
    {
      h->by_path = false; /* gone, and no process with it */
      return 0;
    }
  if (h->dfd < 0)
    return ab_error_set (err, errno, "open cgroup `%s`", h->dir);
  if (collect (h->dfd, h->dir, 0, &v, err) < 0)
    {
      free (v.v);
      return -1;
    }
  *pids = v.v;
  *n = v.n;
  return 0;
}

int
ab_cgroup_populated (struct ab_cgroup *cg, ab_error_t *err)
{
  struct ab_cg_hier *h = ab_cg_tracking (cg);
  _cleanup_free_ pid_t *pids = NULL;
  uint64_t populated;
  size_t n;

  if (!ab_cg_live (h) || cg->planned)
    return 0;
  /* v2 counts the whole subtree for us. */
  if (h->v2 && ab_cg_read_key (h, "cgroup.events", "populated", &populated) == 0)
    return populated > 0;
  if (ab_cgroup_pids (cg, &pids, &n, err) < 0)
    return -1;
  return n > 0;
}

int
ab_cgroup_wait_empty (struct ab_cgroup *cg, int timeout_ms, ab_error_t *err)
{
  struct ab_cg_hier *h = ab_cg_tracking (cg);
  uint64_t deadline = ab_now_monotonic_ns () + (uint64_t)(timeout_ms < 0 ? 0 : timeout_ms) * 1000000u;
  _cleanup_close_ int ev = -1;

  /* cgroup.events signals POLLPRI on every change of "populated". */
  if (h->v2 && h->dfd >= 0)
    ev = openat (h->dfd, "cgroup.events", O_RDONLY | O_CLOEXEC);
  for (;;)
    {
      uint64_t now;
      int r = ab_cgroup_populated (cg, err);
      if (r <= 0)
        return r;
      now = ab_now_monotonic_ns ();
      if (now >= deadline)
        return ab_error_setc (err, AB_EC_STATE, ETIMEDOUT, "cgroup `%s` still has processes after %d ms",
                              h->dir, timeout_ms);
      if (ev >= 0)
        {
          struct pollfd p = { .fd = ev, .events = POLLPRI };
          long left = (long)((deadline - now) / 1000000u) + 1;
          poll (&p, 1, left > 100 ? 100 : (int)left);
        }
      else
        msleep (5);
    }
}

/* ---- freezer --------------------------------------------------------------------- */

static int
wait_state (struct ab_cg_hier *h, bool frozen, ab_error_t *err)
{
  uint64_t deadline = ab_now_monotonic_ns () + FREEZE_TIMEOUT_MS * 1000000ull;
  long nap = 1;

  for (;;)
    {
      if (h->v2)
        {
          uint64_t v;
          if (ab_cg_read_key (h, "cgroup.events", "frozen", &v) == 0 && (v != 0) == frozen)
            return 0;
        }
      else
        {
          _cleanup_free_ char *st = NULL;
          if (ab_cg_read (h, "freezer.state", &st, err) < 0)
            return -1;
          if (ab_str_has_prefix (st, frozen ? "FROZEN" : "THAWED"))
            return 0;
        }
      if (ab_now_monotonic_ns () > deadline)
        return ab_error_setc (err, AB_EC_STATE, ETIMEDOUT, "cgroup `%s` did not %s within %d ms", h->dir,
                              frozen ? "freeze" : "thaw", FREEZE_TIMEOUT_MS);
      msleep (nap);
      nap = nap < 16 ? nap * 2 : nap;
    }
}

/* The freezers of the container's cgroup: the v2 one (cgroup.freeze) and
   the v1 freezer hierarchy, both on a hybrid host where each is there.
   runc freezes through v1 there, and podman, containerd and monitoring
   read v1's freezer.state: it must say FROZEN whenever the container is
   paused, and cgroup.events' frozen (v2) too.  The order matters: a task
   the v1 freezer holds in the refrigerator never reaches the v2 freezer's
   trap, so v2 would wait forever; so v2 freezes first and v1 thaws
   first (`hs` holds v2 first).  Returns how many (0, 1 or 2). */
static size_t
freezers (struct ab_cgroup *cg, struct ab_cg_hier *hs[2])
{
  size_t n = 0;

  if (ab_cg_v2 (cg) && ab_cg_has_file (cg->v2, "cgroup.freeze"))
    hs[n++] = cg->v2;
  if ((hs[n] = ab_cg_v1 (cg, "freezer")) != NULL)
    n++;
  return n;
}

/* v2's thaw is done when cgroup.freeze reads 0: the write wakes every task
   before it returns.  cgroup.events' frozen is only a report, and the
   kernel can leave it at 1 in an empty cgroup after the thaw (seen when a
   killed `exec --ignore-paused` child's frozen exec cgroup was removed
   meanwhile: 1 in 10 runs under load, and `kill KILL` of a paused
   container failed after 5 s).  runc's fs2 freezer reads it back the same
   way, and waits on cgroup.events only to freeze. */
static int
set_state (struct ab_cg_hier *h, bool frozen, ab_error_t *err)
{
  _cleanup_free_ char *st = NULL;

  if (h->v2 ? ab_cg_write (h, "cgroup.freeze", frozen ? "1" : "0", "freeze", err)
            : ab_cg_write (h, "freezer.state", frozen ? "FROZEN" : "THAWED", "freeze", err))
    return -1;
  if (!h->v2 || frozen)
    return wait_state (h, frozen, err);
  if (ab_cg_read (h, "cgroup.freeze", &st, err) < 0)
    return -1;
  if (st[0] != '0')
    return ab_error_setc (err, AB_EC_STATE, 0, "cgroup `%s` did not thaw: cgroup.freeze reads %c", h->dir, st[0]);
  return 0;
}

int
ab_cgroup_freeze (struct ab_cgroup *cg, bool frozen, ab_error_t *err)
{
  struct ab_cg_hier *hs[2];
  size_t n = freezers (cg, hs), i;

  if (n == 0)
    return ab_error_setc (err, AB_EC_RESOURCE, 0, "cannot freeze: no cgroup.freeze (v2) and no v1 freezer");
  for (i = 0; i < n; i++)
    if (set_state (hs[frozen ? i : n - 1 - i], frozen, err) < 0)
      return -1;
  return 0;
}

/* Whether a freezer holds the container now (paused): FROZEN or FREEZING
   in v1, cgroup.freeze 1 in v2. */
static bool
frozen_now (struct ab_cgroup *cg)
{
  struct ab_cg_hier *hs[2];
  size_t n = freezers (cg, hs);

  for (size_t i = 0; i < n; i++)
    {
      _cleanup_free_ char *st = NULL;
      ab_error_t e;
      if (ab_cg_read (hs[i], hs[i]->v2 ? "cgroup.freeze" : "freezer.state", &st, &e) == 0
          && (hs[i]->v2 ? st[0] == '1' : !ab_str_has_prefix (st, "THAWED")))
        return true;
    }
  return false;
}

/* ---- kill ----------------------------------------------------------------------- */

/* Signal through a pidfd when the kernel has them: the pid read from
   cgroup.procs may have been reused by the time kill(2) would run. */
static void
signal_pid (pid_t pid, int sig)
{
  static bool no_pidfd;
  int fd;

  if (!no_pidfd)
    {
      fd = (int)syscall (SYS_pidfd_open, pid, 0);
      if (fd >= 0)
        {
          syscall (SYS_pidfd_send_signal, fd, sig, NULL, 0);
          close (fd);
          return;
        }
      if (errno == ESRCH)
        return; /* gone already */
      if (errno == ENOSYS)
        no_pidfd = true;
    }
  kill (pid, sig);
}

static int
signal_all (struct ab_cgroup *cg, int sig, size_t *n_signalled, ab_error_t *err)
{
  _cleanup_free_ pid_t *pids = NULL;
  size_t n, i;

  if (ab_cgroup_pids (cg, &pids, &n, err) < 0)
    return -1;
  for (i = 0; i < n; i++)
    signal_pid (pids[i], sig);
  *n_signalled = n;
  return 0;
}

int
ab_cgroup_kill (struct ab_cgroup *cg, int sig, ab_error_t *err)
{
  struct ab_cg_hier *hs[2];
  bool fz, paused;
  int round;

  if (cg->planned)
    return 0;
  fz = freezers (cg, hs) > 0;
  /* A paused container stays paused for any signal but SIGKILL: the
     signal waits for `resume`, and `state` still says paused.  SIGKILL
     thaws it, as runc does: a task in the v1 freezer does not die until
     it leaves the refrigerator (the v2 freezer lets SIGKILL through). */
  paused = fz && frozen_now (cg);

  /* cgroup.kill kills the whole subtree at once, and the kernel stops
     forks racing with it from escaping.  Opened without a probe first: a
     kernel before 5.14 has no such file (ENOENT), and then the freezer
     does it. */
  if (sig == SIGKILL && cg->v2)
    {
      ab_error_t e = { 0 };
      _cleanup_close_ int fd = ab_cg_open_w (cg->v2, "cgroup.kill", "kill", &e);
      if (fd >= 0)
        {
          if (ab_cg_write_fd (cg->v2, fd, "cgroup.kill", "1", "kill", err) < 0)
            return -1;
          return paused ? ab_cgroup_freeze (cg, false, err) : 0;
        }
      if (e.errnum != ENOENT)
        {
          if (err)
            *err = e;
          return -1;
        }
    }
  /* Otherwise freeze first: a frozen process cannot fork, so the list we
     signal is the whole of the cgroup. */
  for (round = 0; round < KILL_ROUNDS; round++)
    {
      size_t n = 0;
      int r;

      if (fz && ab_cgroup_freeze (cg, true, err) < 0)
        fz = false; /* signal without it, and repeat until empty */
      r = signal_all (cg, sig, &n, err);
      if (fz && !(paused && sig != SIGKILL) && ab_cgroup_freeze (cg, false, err) < 0)
        return -1;
      if (r < 0)
        return -1;
      if (sig != SIGKILL || n == 0)
        return 0;
      /* Killed frozen tasks die as they thaw; give them a moment. */
      if (ab_cgroup_wait_empty (cg, 100, err) == 0)
        return 0;
    }
  return ab_error_setc (err, AB_EC_STATE, EBUSY, "cgroup `%s` still has processes after %d rounds of SIGKILL",
                        ab_cg_tracking (cg)->dir, KILL_ROUNDS);
}

/* ---- statistics ------------------------------------------------------------------ */

int
ab_cgroup_oom_kills (struct ab_cgroup *cg, uint64_t *out)
{
  struct ab_cg_hier *mem = ab_cg_v1 (cg, "memory"), *v2 = ab_cg_v2 (cg);

  if (mem)
    return ab_cg_read_key (mem, "memory.oom_control", "oom_kill", out);
  if (v2 && ab_cg_has_file (v2, "memory.events"))
    return ab_cg_read_key (v2, "memory.events", "oom_kill", out);
  return -1;
}

int
ab_cgroup_stats (struct ab_cgroup *cg, struct ab_cgroup_stats *st, ab_error_t *err)
{
  struct ab_cg_hier *mem = ab_cg_v1 (cg, "memory"), *pids = ab_cg_v1 (cg, "pids"),
                    *acct = ab_cg_v1 (cg, "cpuacct");
  struct ab_cg_hier *v2 = cg->v2 && cg->v2->dfd >= 0 ? cg->v2 : NULL;
  _cleanup_free_ char *cpu_stat = NULL;
  ab_error_t cerr;
  uint64_t a, b;

  memset (st, 0, sizeof *st);
  st->memory_known = ab_cgroup_oom_kills (cg, &st->oom_kills) == 0;
  if (mem)
    st->memory_known |= ab_cg_read_u64 (mem, "memory.max_usage_in_bytes", &st->memory_peak);
  else if (v2 && ab_cg_has_file (v2, "memory.events"))
    st->memory_known |= ab_cg_read_u64 (v2, "memory.peak", &st->memory_peak);
  st->oom_killed = st->oom_kills > 0;

  if (pids == NULL && v2 && ab_cg_has_file (v2, "pids.events"))
    pids = v2;
  if (pids)
    st->pids_known = ab_cg_read_key (pids, "pids.events", "max", &st->pids_max_events) == 0;
  st->pids_max_hit = st->pids_max_events > 0;

  /* cpu.stat is in every v2 cgroup, with or without the cpu controller;
     both keys come from one read of it. */
  if (v2 && ab_cg_read (v2, "cpu.stat", &cpu_stat, &cerr) == 0
      && ab_cg_key_value (cpu_stat, "user_usec", &a) == 0
      && ab_cg_key_value (cpu_stat, "system_usec", &b) == 0)
    {
      st->cpu_user_usec = a;
      st->cpu_system_usec = b;
      st->cpu_known = true;
    }
  else if (acct && ab_cg_read_u64 (acct, "cpuacct.usage_user", &a)
           && ab_cg_read_u64 (acct, "cpuacct.usage_sys", &b))
    {
      st->cpu_user_usec = a / 1000;
      st->cpu_system_usec = b / 1000;
      st->cpu_known = true;
    }
  (void)err;
  return 0;
}
