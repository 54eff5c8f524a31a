#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "cmd/create-opts.h"
#include "runtime/util.h"

enum
{
  OPT_BUNDLE = 'b',
  OPT_DETACH = 'd',
  OPT_PID_FILE = 256,
  OPT_CONSOLE_SOCKET,
  OPT_PRESERVE_FDS,
  OPT_NO_NEW_KEYRING,
  OPT_NO_PIVOT,
  OPT_KEEP,
  OPT_HELP,
};

static void
help (const char *cmd, bool run)
{
  printf ("Usage: agentbox %s [OPTIONS] ID\n\n"
          "  -b, --bundle DIR         bundle directory (default: the current directory)\n"
          "      --pid-file FILE      write the container process's pid to FILE\n"
          "      --console-socket S   send the pty master to the Unix socket S (process.terminal)\n"
          "      --preserve-fds N     pass fds 3..3+N-1 to the container\n"
          "      --no-new-keyring     keep the caller's session keyring\n",
          cmd);
  if (run)
    printf ("  -d, --detach             do not wait for the container\n"
            "      --keep               keep the container's state after it exits\n");
}

int
ab_parse_create_opts (const char *cmd, struct ab_global *g, int argc, char **argv, struct ab_create_opts *o,
                      struct ab_run_flags *run)
{
  static const struct option opts[] = {
    { "bundle", required_argument, NULL, OPT_BUNDLE },
    { "pid-file", required_argument, NULL, OPT_PID_FILE },
    { "console-socket", required_argument, NULL, OPT_CONSOLE_SOCKET },
    { "preserve-fds", required_argument, NULL, OPT_PRESERVE_FDS },
    { "no-new-keyring", no_argument, NULL, OPT_NO_NEW_KEYRING },
    { "no-pivot", no_argument, NULL, OPT_NO_PIVOT },
    { "detach", no_argument, NULL, OPT_DETACH },
    { "keep", no_argument, NULL, OPT_KEEP },
    { "help", no_argument, NULL, OPT_HELP },
    { NULL, 0, NULL, 0 },
  };
  int c;

  o->root = g->root;
  o->bundle = ".";
  o->rootless = g->rootless;
  while ((c = getopt_long (argc, argv, run ? "b:dh" : "b:h", opts, NULL)) != -1)
    switch (c)
      {
      case OPT_BUNDLE:
        o->bundle = optarg;
        break;
      case OPT_PID_FILE:
        o->pid_file = optarg;
        break;
      case OPT_CONSOLE_SOCKET:
        o->console_socket = optarg;
        break;
      case OPT_PRESERVE_FDS:
        if (ab_parse_int (optarg, &o->preserve_fds) < 0 || o->preserve_fds < 0 || o->preserve_fds > 65536)
          return ab_cmd_usage_error (cmd, "--preserve-fds: expected a number, got `%s`", optarg);
        break;
      case OPT_NO_NEW_KEYRING:
        o->no_new_keyring = true;
        break;
      case OPT_NO_PIVOT:
        return ab_cmd_usage_error (cmd, "--no-pivot is not supported: agentbox always uses pivot_root");
      case OPT_DETACH:
        if (!run)
          return ab_cmd_usage_error (cmd, "unknown option `-d`");
        run->detach = true;
        break;
      case OPT_KEEP:
        if (!run)
          return ab_cmd_usage_error (cmd, "unknown option `--keep`");
        run->keep = true;
        break;
      case 'h':
      case OPT_HELP:
        help (cmd, run != NULL);
        return -1;
      default:
        return ab_cmd_usage_error (cmd, "unknown option `%s`", argv[optind - 1]);
      }
  if (g->systemd_cgroup)
    return ab_cmd_usage_error (cmd, "--systemd-cgroup: the systemd cgroup driver is not supported (use cgroupfs)");
  if ((c = ab_cmd_positionals (cmd, argc, argv, 1, 1, "container ID")) != 0)
    return c;
  o->id = argv[optind];
  return 0;
}
