/* agentbox update [--resources FILE|-] [--memory N] [--pids-limit N] ... ID
 *
 * New resource limits for a live container, as runc's update: either a
 * LinuxResources JSON document (--resources, what containerd and podman
 * pass, "-" for stdin) or the individual flags, which are turned into such
 * a document here.  Both go through the parser and checks of
 * linux.resources, so `update` accepts exactly what config.json would. */
#include "config.h"

#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd/cmd.h"
#include "cmd/create-opts.h"
#include "runtime/lifecycle/container.h"
#include "base/util.h"
#include "base/gen.h"
#include "spec/spec.h"

enum
{
  OPT_RESOURCES = 'r',
  OPT_MEMORY = 256,
  OPT_MEMORY_RESERVATION,
  OPT_MEMORY_SWAP,
  OPT_CPU_SHARES,
  OPT_CPU_QUOTA,
  OPT_CPU_PERIOD,
  OPT_CPU_RT_PERIOD,
  OPT_CPU_RT_RUNTIME,
  OPT_CPUSET_CPUS,
  OPT_CPUSET_MEMS,
  OPT_PIDS_LIMIT,
  OPT_BLKIO_WEIGHT,
  OPT_CPU_IDLE,
  OPT_CPU_BURST,
  OPT_REFUSED,
};

/* Flag -> member of the document: object, key, and how the value reads. */
enum value_kind
{
  V_SIZE,   /* bytes with an optional k/m/g suffix, or -1 */
  V_INT,    /* a signed integer */
  V_STRING, /* a CPU or node list */
};

static const struct flag
{
  int opt;
  const char *object, *key;
  enum value_kind kind;
} flags[] = {
  { OPT_MEMORY, "memory", "limit", V_SIZE },
  { OPT_MEMORY_RESERVATION, "memory", "reservation", V_SIZE },
  { OPT_MEMORY_SWAP, "memory", "swap", V_SIZE },
  { OPT_CPU_SHARES, "cpu", "shares", V_INT },
  { OPT_CPU_QUOTA, "cpu", "quota", V_INT },
  { OPT_CPU_PERIOD, "cpu", "period", V_INT },
  { OPT_CPU_RT_PERIOD, "cpu", "realtimePeriod", V_INT },
  { OPT_CPU_RT_RUNTIME, "cpu", "realtimeRuntime", V_INT },
  { OPT_CPUSET_CPUS, "cpu", "cpus", V_STRING },
  { OPT_CPUSET_MEMS, "cpu", "mems", V_STRING },
  { OPT_PIDS_LIMIT, "pids", "limit", V_INT },
  { OPT_BLKIO_WEIGHT, "blockIO", "weight", V_INT },
  { OPT_CPU_IDLE, "cpu", "idle", V_INT },
  { OPT_CPU_BURST, "cpu", "burst", V_INT },
};
#define N_FLAGS (sizeof flags / sizeof flags[0])

static const char usage[] =
  "Usage: agentbox update [--resources FILE|-] [OPTION...] ID\n\n"
  "Change the resource limits of a created, running or paused container.\n"
  "  -r, --resources FILE       a LinuxResources JSON object (config-linux.md); - reads stdin\n"
  "      --memory N             memory limit in bytes (k, m, g suffixes)\n"
  "      --memory-reservation N soft limit\n"
  "      --memory-swap N        memory + swap; -1 for unlimited\n"
  "      --cpu-shares N         relative weight (also --cpu-share)\n"
  "      --cpu-quota N          microseconds per period; --cpu-period N\n"
  "      --cpu-burst N          microseconds the quota may be exceeded by; --cpu-idle 0|1 (SCHED_IDLE)\n"
  "      --cpu-rt-period N, --cpu-rt-runtime N\n"
  "      --cpuset-cpus LIST, --cpuset-mems LIST\n"
  "      --pids-limit N         -1 for unlimited\n"
  "      --blkio-weight N       10..1000\n"
  "--resources and the other options are exclusive.\n";

/* The value of one flag, as the JSON number or string its member takes;
   a malformed value is a usage error naming the option. */
static int
emit_value (struct ab_gen *g, const struct flag *f, const char *opt, const char *arg)
{
  uint64_t u;
  int64_t i;

  switch (f->kind)
    {
    case V_SIZE:
      if (strcmp (arg, "-1") == 0)
        ab_gen_i64 (g, -1);
      else if (ab_parse_size (arg, &u) == 0 && u <= INT64_MAX)
        ab_gen_i64 (g, (int64_t) u);
      else
        return ab_cmd_usage_error ("update", "--%s: expected a size in bytes (k, m, g suffixes) or -1, got `%s`",
                                   opt, arg);
      return 0;
    case V_INT:
      if (ab_parse_i64 (arg, &i) < 0)
        return ab_cmd_usage_error ("update", "--%s: expected an integer, got `%s`", opt, arg);
      ab_gen_i64 (g, i);
      return 0;
    case V_STRING:
      ab_gen_str (g, arg);
      return 0;
    }
  return 0;
}

/* The flags given (values[k] for flags[k], NULL when absent) as one
   LinuxResources document, members grouped by object in table order. */
static char *
flags_document (const char *const *values, const char *const *names, size_t *len)
{
  _cleanup_gen_ struct ab_gen *g = ab_gen_new (false);
  const char *open = NULL;
  size_t k;

  ab_gen_obj_open (g);
  for (k = 0; k < N_FLAGS; k++)
    {
      if (values[k] == NULL)
        continue;
      if (open == NULL || strcmp (open, flags[k].object) != 0)
        {
          if (open != NULL)
            ab_gen_obj_close (g);
          ab_gen_key (g, flags[k].object);
          ab_gen_obj_open (g);
          open = flags[k].object;
        }
      ab_gen_key (g, flags[k].key);
      if (emit_value (g, &flags[k], names[k], values[k]) != 0)
        return NULL;
    }
  if (open != NULL)
    ab_gen_obj_close (g);
  ab_gen_obj_close (g);
  return ab_gen_steal (g, false, len);
}

static int
read_resources (const char *path, char **buf, size_t *len, ab_error_t *err)
{
  if (strcmp (path, "-") == 0)
    {
      if (ab_read_fd (0, AB_CONFIG_MAX_BYTES, buf, len, err) < 0)
        return ab_error_prefix (err, "--resources: standard input");
      return 0;
    }
  if (ab_read_file_at (AT_FDCWD, path, AB_CONFIG_MAX_BYTES, buf, len, err) < 0)
    return ab_error_prefix (err, "--resources %s", path);
  return 0;
}

int
ab_cmd_update (struct ab_global *g, int argc, char **argv)
{
  static const struct option opts[] = {
    { "resources", required_argument, NULL, OPT_RESOURCES },
    { "memory", required_argument, NULL, OPT_MEMORY },
    { "memory-reservation", required_argument, NULL, OPT_MEMORY_RESERVATION },
    { "memory-swap", required_argument, NULL, OPT_MEMORY_SWAP },
    { "cpu-share", required_argument, NULL, OPT_CPU_SHARES },
    { "cpu-shares", required_argument, NULL, OPT_CPU_SHARES },
    { "cpu-quota", required_argument, NULL, OPT_CPU_QUOTA },
    { "cpu-period", required_argument, NULL, OPT_CPU_PERIOD },
    { "cpu-rt-period", required_argument, NULL, OPT_CPU_RT_PERIOD },
    { "cpu-rt-runtime", required_argument, NULL, OPT_CPU_RT_RUNTIME },
    { "cpuset-cpus", required_argument, NULL, OPT_CPUSET_CPUS },
    { "cpuset-mems", required_argument, NULL, OPT_CPUSET_MEMS },
    { "pids-limit", required_argument, NULL, OPT_PIDS_LIMIT },
    { "blkio-weight", required_argument, NULL, OPT_BLKIO_WEIGHT },
    { "cpu-idle", required_argument, NULL, OPT_CPU_IDLE },
    { "cpu-burst", required_argument, NULL, OPT_CPU_BURST },
    { "kernel-memory", required_argument, NULL, OPT_REFUSED },
    { "kernel-memory-tcp", required_argument, NULL, OPT_REFUSED },
    { "l3-cache-schema", required_argument, NULL, OPT_REFUSED },
    { "mem-bw-schema", required_argument, NULL, OPT_REFUSED },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  const char *values[N_FLAGS] = { NULL }, *names[N_FLAGS] = { NULL };
  _cleanup_free_ char *doc = NULL;
  struct ab_resources *res;
  const char *file = NULL, *source;
  ab_error_t err = { 0 };
  bool any_flag = false;
  int c, idx, r;
  size_t len, k;

  while ((c = getopt_long (argc, argv, "r:h", opts, &idx)) != -1)
    switch (c)
      {
      case OPT_RESOURCES:
        file = optarg;
        break;
      case OPT_REFUSED:
        return ab_cmd_usage_error ("update", "--%s is not supported (%s)", opts[idx].name,
                                   opts[idx].name[0] == 'k' ? "kernel memory limits are gone from cgroup v2"
                                                            : "linux.intelRdt is refused");
      case 'h':
        fputs (usage, stdout);
        return AB_EXIT_OK;
      default:
        for (k = 0; k < N_FLAGS; k++)
          if (flags[k].opt == c)
            {
              values[k] = optarg;
              names[k] = opts[idx].name;
              any_flag = true;
              break;
            }
        if (k == N_FLAGS)
          return ab_cmd_usage_error ("update", "unknown option `%s`", argv[optind - 1]);
      }
  if ((c = ab_cmd_positionals ("update", argc, argv, 1, 1, "container ID")) != 0)
    return c;
  if (file != NULL && any_flag)
    return ab_cmd_usage_error ("update", "--resources and the individual limit options are exclusive");
  if (file == NULL && !any_flag)
    return ab_cmd_usage_error ("update", "nothing to update: give --resources FILE or a limit option");

  if (file != NULL)
    {
      if (read_resources (file, &doc, &len, &err) < 0)
        return ab_cmd_fail (&err);
      source = strcmp (file, "-") == 0 ? "resources (stdin)" : file;
    }
  else
    {
      doc = flags_document (values, names, &len);
      if (doc == NULL)
        return AB_EXIT_USAGE;
      source = "update";
    }
  res = ab_resources_parse (doc, len, source, &err);
  if (res == NULL)
    return ab_cmd_fail (&err);
  r = ab_container_update (g->root, argv[optind], res, &err);
  ab_resources_free (res);
  return r < 0 ? ab_cmd_fail (&err) : AB_EXIT_OK;
}
