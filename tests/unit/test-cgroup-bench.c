/* How long joining the container's cgroup takes (a benchmark: it prints
 * numbers and asserts nothing).  Needs root.
 *
 *   test-cgroup-bench [rounds]
 *
 * Per round: a fresh child of ours (forked, so in none of the container's
 * hierarchies) is moved in with one cgroup.procs write per hierarchy, timed
 * one by one; then two more children are moved with ab_cgroup_enter, one
 * with the writes in sequence and one with a thread per hierarchy.
 */
#include "config.h"

#include <signal.h>
#include <sys/wait.h>

#include "runtime/cgroup-internal.h"

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
  uint64_t *per[32] = { 0 }, *seq, *par;

  snprintf (id, sizeof id, "bench%d", (int)getpid ());
  if (ab_cgroup_create (NULL, id, NULL, &cg, &err) < 0)
    {
      fprintf (stderr, "create: %s\n", err.msg);
      return 1;
    }
  seq = xcalloc (rounds, sizeof *seq);
  par = xcalloc (rounds, sizeof *par);
  for (i = 0; i < cg->n && i < 32; i++)
    per[i] = xcalloc (rounds, sizeof *per[i]);

  for (r = 0; r < rounds; r++)
    {
      pid_t a = idle_child (), b = idle_child (), c = idle_child ();
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
      ab_cg_enter_parallel = false;
      t = ab_now_monotonic_ns ();
      if (ab_cgroup_enter (cg, b, false, false, &err) < 0)
        fprintf (stderr, "%s\n", err.msg);
      seq[r] = ab_now_monotonic_ns () - t;
      ab_cg_enter_parallel = true;
      t = ab_now_monotonic_ns ();
      if (ab_cgroup_enter (cg, c, false, false, &err) < 0)
        fprintf (stderr, "%s\n", err.msg);
      par[r] = ab_now_monotonic_ns () - t;
      reap (a);
      reap (b);
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
  report ("ab_cgroup_enter, one thread per hierarchy", par, rounds);

  ab_cgroup_wait_empty (cg, 5000, &err);
  if (ab_cgroup_destroy (cg, &err) < 0)
    fprintf (stderr, "destroy: %s\n", err.msg);
  ab_cgroup_free (cg);
  for (i = 0; i < 32; i++)
    free (per[i]);
  free (seq);
  free (par);
  return 0;
}
