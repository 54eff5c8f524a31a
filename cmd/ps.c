/* agentbox ps [--format table|json] ID
 *
 * The processes of the container's cgroup, with host pids.  json is runc's
 * format (an array of pids, what containerd reads); table is read from
 * /proc here rather than by running ps(1), so runc's trailing "ps options"
 * are refused.  Command lines come from the container, a hostile source:
 * bytes that could drive the terminal are shown as '?'. */
#include "config.h"

#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd/cmd.h"
#include "runtime/lifecycle/container.h"
#include "base/util.h"
#include "base/gen.h"

#define CMDLINE_MAX 4096

_Static_assert (sizeof (pid_t) == sizeof (int), "pids sort as ints");

/* Up to size bytes of /proc/<pid>/<name> (truncated, not refused: a
   command line may be longer than we show); -1 if the process is gone. */
static ssize_t
read_proc (pid_t pid, const char *name, char *buf, size_t size)
{
  char path[64];
  ssize_t n;
  int fd;

  snprintf (path, sizeof path, "/proc/%d/%s", (int) pid, name);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  n = read (fd, buf, size);
  close (fd);
  return n;
}

static void
print_row (pid_t pid)
{
  char stat[512], cmd[CMDLINE_MAX + 1], state = '?';
  long ppid = 0;
  ssize_t n;
  char *end;

  n = read_proc (pid, "stat", stat, sizeof stat - 1);
  if (n <= 0)
    return; /* exited since the list was read */
  stat[n] = '\0';
  /* "pid (comm) S ppid ...": comm may hold anything, so parse after the last ')'. */
  end = strrchr (stat, ')');
  if (end == NULL || sscanf (end + 1, " %c %ld", &state, &ppid) != 2)
    return;

  n = read_proc (pid, "cmdline", cmd, CMDLINE_MAX);
  if (n < 0)
    n = 0;
  while (n > 0 && cmd[n - 1] == '\0')
    n--;
  for (ssize_t i = 0; i < n; i++)
    if (cmd[i] == '\0')
      cmd[i] = ' ';
    else if ((unsigned char) cmd[i] < 0x20 || (unsigned char) cmd[i] >= 0x7f)
      cmd[i] = '?';
  cmd[n] = '\0';
  printf ("%-8d %-8ld %-4c %s\n", (int) pid, ppid, state, cmd);
}

int
ab_cmd_ps (struct ab_global *g, int argc, char **argv)
{
  static const struct option opts[] = {
    { "format", required_argument, NULL, 'f' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  _cleanup_free_ pid_t *pids = NULL;
  ab_error_t err = { 0 };
  bool json = false;
  size_t n = 0, i;
  int c;

  /* "+": runc passes what follows the id to ps(1); stop there so it is
     reported as such rather than as an unknown option of ours. */
  while ((c = getopt_long (argc, argv, "+f:h", opts, NULL)) != -1)
    switch (c)
      {
      case 'f':
        if ((c = ab_cmd_parse_format ("ps", optarg, &json)) != 0)
          return c;
        break;
      case 'h':
        printf ("Usage: agentbox ps [--format table|json] ID\n\n"
                "List the processes of a container (host pids).  json prints an array of pids.\n");
        return AB_EXIT_OK;
      default:
        return ab_cmd_usage_error ("ps", "unknown option `%s`", argv[optind - 1]);
      }
  if (argc - optind > 1)
    return ab_cmd_usage_error ("ps", "ps(1) options (`%s`) are not supported: the table is read from /proc",
                               argv[optind + 1]);
  if ((c = ab_cmd_positionals ("ps", argc, argv, 1, 1, "container ID")) != 0)
    return c;
  if (ab_container_pids (g->root, argv[optind], &pids, &n, &err) < 0)
    return ab_cmd_fail (&err);
  if (n > 0) /* a stopped container's list may be empty, and NULL */
    qsort (pids, n, sizeof *pids, ab_cmp_int);
  if (json)
    {
      _cleanup_gen_ struct ab_gen *gen = ab_gen_new (false);
      const char *buf;
      size_t len;

      ab_gen_arr_open (gen);
      for (i = 0; i < n; i++)
        ab_gen_i64 (gen, pids[i]);
      ab_gen_arr_close (gen);
      buf = ab_gen_buf (gen, &len);
      fwrite (buf, 1, len, stdout);
      putchar ('\n');
      return AB_EXIT_OK;
    }
  printf ("%-8s %-8s %-4s %s\n", "PID", "PPID", "STAT", "CMD");
  for (i = 0; i < n; i++)
    print_row (pids[i]);
  return AB_EXIT_OK;
}
