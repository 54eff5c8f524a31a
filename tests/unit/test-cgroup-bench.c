/* How long joining the container's cgroup takes (a benchmark: it prints
 * numbers and asserts nothing).  Needs root.
 *
 *   test-cgroup-bench [rounds]
 *
 * Per round: a fresh child of ours (forked, so in none of the container's
 * hierarchies) is moved in with one cgroup.procs write per hierarchy, timed
 * one by one; a second one with ab_cgroup_enter (the writes in sequence);
 * a third joins the v1 hierarchies itself, as the run path's child does
 * (ab_cgroup_selfjoin: "0" to each `tasks` fd we opened), timed by that
 * child from its first write to its last.
 */
#include "config.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/cgroup/cgroup-internal.h"
#include "tests/unit/test-cgroup-util.h"

static pid_t
idle_child (void)
{
  pid_t p = fork ();

  if (p == 0)
    {
      for (;;)
        pause ();
    }
  return p;
}

/* A child that joins the v1 hierarchies of cg itself; its time, or 0. */
static uint64_t
selfjoin_child (struct ab_cgroup *cg, pid_t *out)
{
  struct ab_cgroup_selfjoin *j = NULL;
  size_t n = 0;
  uint64_t t = 0;
  ab_error_t err;
  int pfd[2];
  pid_t p;

  if (pipe (pfd) < 0 || ab_cgroup_selfjoin_open (cg, &j, &n, &err) < 0)
    return 0;
  p = fork ();
  if (p == 0)
    {
      uint64_t t0 = ab_now_monotonic_ns ();
      if (ab_cgroup_selfjoin (j, n, &err) == 0)
        t = ab_now_monotonic_ns () - t0;
      if (write (pfd[1], &t, sizeof t) != (ssize_t)sizeof t)
        _exit (1);
      for (;;)
        pause ();
    }
  ab_cgroup_selfjoin_free (&j, &n);
  close (pfd[1]);
  if (p < 0 || read (pfd[0], &t, sizeof t) != (ssize_t)sizeof t)
    t = 0;
  close (pfd[0]);
  *out = p;
  return t;
}

static void
reap (pid_t p)
{
  kill (p, SIGKILL);
  waitpid (p, NULL, 0);
}

static int
cmp_u64 (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static void
report (const char *what, uint64_t *v, size_t n)
{
  uint64_t sum = 0;
  size_t i;

  qsort (v, n, sizeof *v, cmp_u64);
  for (i = 0; i < n; i++)
    sum += v[i];
  printf ("%-44s median %8.3f ms  mean %8.3f ms  min %8.3f  max %8.3f\n", what, v[n / 2] / 1e6,
          (double)sum / (double)n / 1e6, v[0] / 1e6, v[n - 1] / 1e6);
}

int
main (int argc, char **argv)
{
  size_t rounds = argc > 1 ? (size_t)atoi (argv[1]) : 20, r, i;
  struct ab_cgroup *cg = NULL;
  ab_error_t err;
  char id[32];
  uint64_t *per[32] = { 0 }, *seq, *self;

  snprintf (id, sizeof id, "bench%d", (int)getpid ());
  if (t_cgroup_create (NULL, id, NULL, &cg, &err) < 0)
    {
      fprintf (stderr, "create: %s\n", err.msg);
      return 1;
    }
  seq = xcalloc (rounds, sizeof *seq);
  self = xcalloc (rounds, sizeof *self);
  for (i = 0; i < cg->n && i < 32; i++)
    per[i] = xcalloc (rounds, sizeof *per[i]);

  for (r = 0; r < rounds; r++)
    {
      pid_t a = idle_child (), b = idle_child (), c = -1;
      char pid[16];
      uint64_t t;

      snprintf (pid, sizeof pid, "%d", (int)a);
      for (i = 0; i < cg->n && i < 32; i++)
        {
          t = ab_now_monotonic_ns ();
          if (ab_cg_write (&cg->h[i], "cgroup.procs", pid, "bench", &err) < 0)
            fprintf (stderr, "%s\n", err.msg);
          per[i][r] = ab_now_monotonic_ns () - t;
        }
      t = ab_now_monotonic_ns ();
      if (ab_cgroup_enter (cg, b, false, false, &err) < 0)
        fprintf (stderr, "%s\n", err.msg);
      seq[r] = ab_now_monotonic_ns () - t;
      self[r] = selfjoin_child (cg, &c);
      reap (a);
      reap (b);
      if (c > 0)
        reap (c);
    }

  printf ("%zu rounds, %zu hierarchies\n", rounds, cg->n);
  for (i = 0; i < cg->n && i < 32; i++)
    {
      char what[64];
      snprintf (what, sizeof what, "cgroup.procs write, %s", cg->h[i].v2 ? "cgroup2" : cg->h[i].controllers);
      report (what, per[i], rounds);
    }
  report ("ab_cgroup_enter, writes in sequence", seq, rounds);
  report ("the child's own v1 join (ab_cgroup_selfjoin)", self, rounds);

  ab_cgroup_wait_empty (cg, 5000, &err);
  if (ab_cgroup_destroy (cg, &err) < 0)
    fprintf (stderr, "destroy: %s\n", err.msg);
  ab_cgroup_free (cg);
  for (i = 0; i < 32; i++)
    free (per[i]);
  free (seq);
  free (self);
  return 0;
}
