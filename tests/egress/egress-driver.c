/* A stand-in supervisor for the egress tests: starts the engine (or the
 * daemon) for a container netns, prints its ports as one JSON line, then
 * obeys commands on stdin:
 *
 *   decisions   print the decision record (one JSON array line)
 *   stop        stop the engine, print {"threads":N,"fds":N,"fds_before":N}
 *               and the record, exit
 *
 *   egress-driver run    --netns PATH [--baseline FILE] [--resolv FILE] [--idle-ms N] [--head-ms N]
 *                        [--copy] [KEY=VALUE...]
 *
 * --copy relays through user-space buffers (ab_egress_options.copy_relay),
 * the path taken when no pipe can be had.
 *   egress-driver daemon --netns PATH --cgroup DIR --record FILE [KEY=VALUE...]
 *
 * KEY=VALUE are annotations (dev.agentbox.net.allow-domains=...).
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <libgen.h>

#include "netns/egress.h"
#include "runtime/plan/plan.h"

static size_t
count_dir (const char *path)
{
  DIR *d = opendir (path);
  struct dirent *de;
  size_t n = 0;

  if (d == NULL)
    return 0;
  while ((de = readdir (d)) != NULL)
    if (de->d_name[0] != '.')
      n++;
  closedir (d);
  return n;
}

static void
print_decisions (struct ab_egress *e)
{
  _cleanup_gen_ struct ab_gen *g = ab_gen_new (false);
  size_t len;

  ab_egress_decisions_gen (e, g);
  printf ("%s\n", ab_gen_buf (g, &len));
  fflush (stdout);
}

static int
die (const ab_error_t *err)
{
  fprintf (stderr, "egress-driver: %s\n", err->msg);
  return 1;
}

int
main (int argc, char **argv)
{
  struct ab_kvlist annots = { 0 };
  struct ab_egress_policy base = { 0 }, pol = { 0 };
  struct ab_egress_options opt = { 0 };
  const char *netns = NULL, *baseline = NULL, *cgroup = NULL, *record = NULL, *resolv = NULL;
  bool daemon_mode;
  ab_error_t err = { 0 };
  char line[256];
  int i;

  if (argc < 2)
    return 2;
  daemon_mode = strcmp (argv[1], "daemon") == 0;
  for (i = 2; i < argc; i++)
    {
      const char *a = argv[i];
      if (strcmp (a, "--netns") == 0 && i + 1 < argc)
        netns = argv[++i];
      else if (strcmp (a, "--baseline") == 0 && i + 1 < argc)
        baseline = argv[++i];
      else if (strcmp (a, "--cgroup") == 0 && i + 1 < argc)
        cgroup = argv[++i];
      else if (strcmp (a, "--resolv") == 0 && i + 1 < argc)
        resolv = argv[++i];
      else if (strcmp (a, "--record") == 0 && i + 1 < argc)
        record = argv[++i];
      else if (strcmp (a, "--idle-ms") == 0 && i + 1 < argc)
        opt.idle_timeout_ms = (unsigned)atoi (argv[++i]);
      else if (strcmp (a, "--head-ms") == 0 && i + 1 < argc)
        opt.head_timeout_ms = (unsigned)atoi (argv[++i]);
      else if (strcmp (a, "--copy") == 0)
        opt.copy_relay = true;
      else if (strchr (a, '=') != NULL)
        {
          const char *eq = strchr (a, '=');
          annots.v = xreallocarray (annots.v, annots.n + 1, sizeof *annots.v);
          annots.v[annots.n].key = xstrndup (a, (size_t)(eq - a));
          annots.v[annots.n].value = xstrdup (eq + 1);
          annots.n++;
        }
      else
        {
          fprintf (stderr, "egress-driver: unknown argument %s\n", a);
          return 2;
        }
    }
  if (netns == NULL)
    return 2;
  if (baseline && ab_egress_baseline_load (AT_FDCWD, baseline, &base, &err) < 0)
    return die (&err);
  {
    /* as the plan makes the effective policy (runtime/plan/plan.c) */
    struct ab_egress_policy run = { 0 };
    if (ab_egress_policy_parse (&annots, &run, &err) < 0
        || ab_egress_policy_narrow (baseline ? &base : NULL, &run, &pol, &err) < 0)
      return die (&err);
    ab_egress_policy_free (&run);
  }

  _cleanup_close_ int nsfd = open (netns, O_RDONLY | O_CLOEXEC);
  if (nsfd < 0)
    {
      perror (netns);
      return 1;
    }

  int ret = 0;
  if (daemon_mode)
    {
      struct ab_egress_daemon d;
      _cleanup_free_ char *rdir = xstrdup (record), *rname = xstrdup (record);
      _cleanup_close_ int cgfd = open (cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      _cleanup_close_ int rfd = open (dirname (rdir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (cgfd < 0 || rfd < 0)
        {
          perror ("open cgroup or record dir");
          ret = 1;
        }
      else if (ab_egress_daemon_spawn (&pol, nsfd, cgfd, -1, rfd, basename (rname), &opt, &d, &err) < 0)
        ret = die (&err);
      else
        printf ("{\"pid\":%d,\"http_port\":%u,\"dns_port\":%u}\n", (int)d.pid, d.http_port, d.dns_port);
      goto out;
    }

  size_t fds_before = count_dir ("/proc/self/fd");
  struct ab_egress *e;
  if (ab_egress_start (&pol, nsfd, &opt, &e, &err) < 0)
    {
      ret = die (&err);
      goto out;
    }
  uint16_t http, dns;
  ab_egress_ports (e, &http, &dns);
  {
    uint16_t ports[64];
    size_t np = ab_egress_policy_ports (&pol, ports, 64);
    printf ("{\"http_port\":%u,\"dns_port\":%u,\"pid\":%d,\"redirect\":[", http, dns, (int)getpid ());
    for (size_t k = 0; k < np && k < 64; k++)
      printf ("%s%u", k ? "," : "", ports[k]);
    printf ("]}\n");
    /* the /etc/resolv.conf the runtime mounts in the container */
    if (resolv != NULL)
      {
        FILE *f = fopen (resolv, "we");
        if (f == NULL || fputs (AB_PLAN_RESOLV_CONF, f) < 0 || fclose (f) != 0)
          {
            perror (resolv);
            return 1;
          }
      }
  }
  fflush (stdout);
  while (fgets (line, sizeof line, stdin) != NULL)
    {
      if (strncmp (line, "decisions", 9) == 0)
        print_decisions (e);
      else if (strncmp (line, "stop", 4) == 0)
        break;
    }
  ab_egress_stop (e);
  printf ("{\"threads\":%zu,\"fds\":%zu,\"fds_before\":%zu}\n", count_dir ("/proc/self/task"),
          count_dir ("/proc/self/fd"), fds_before);
  print_decisions (e);
  ab_egress_free (e);
out:
  ab_egress_policy_free (&pol);
  ab_egress_policy_free (&base);
  for (size_t k = 0; k < annots.n; k++)
    free (annots.v[k].key), free (annots.v[k].value);
  free (annots.v);
  return ret;
}
