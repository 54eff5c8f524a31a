/* agentbox exec [OPTIONS] ID [--] PROGRAM [ARGS...]
 *   --process FILE  a process object (config.md) instead of PROGRAM and the flags
 * Foreground: waits and exits with the process's status; 255 when the exec
 * itself failed.  Output capture and --record as with run. */
#include "config.h"

#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>

#include "cmd/cmd.h"
#include "cmd/create-opts.h"
#include "runtime/exe.h"
#include "runtime/lifecycle/exec.h"
#include "base/log.h"
#include "runtime/supervise/record.h"
#include "runtime/supervise/supervise.h"
#include "base/util.h"
#include "spec/annotations.h"
#include "spec/tables.h"

enum
{
  OPT_PROCESS = 256,
  OPT_CONSOLE_SOCKET,
  OPT_PID_FILE,
  OPT_CWD,
  OPT_ENV,
  OPT_USER,
  OPT_PRESERVE_FDS,
  OPT_NO_NEW_PRIVS,
  OPT_TIMEOUT,
  OPT_TIMEOUT_GRACE,
  OPT_MAX_OUTPUT,
  OPT_RECORD,
  OPT_RECORD_FD,
  OPT_RECORD_ID,
  OPT_NO_STREAM,
  OPT_DIE_WITH_PARENT,
  OPT_IGNORE_PAUSED,
  OPT_APPARMOR,
  OPT_PROCESS_LABEL,
  OPT_CGROUP,
  OPT_PIDFD_SOCKET,
  OPT_HELP,
};

static void
help (void)
{
  printf ("Usage: agentbox exec [OPTIONS] ID [--] PROGRAM [ARGS...]\n\n"
          "      --process FILE       the process (a config.md process object) instead of PROGRAM\n"
          "  -d, --detach             do not wait for the process\n"
          "  -t, --tty                allocate a pty: relayed to our stdio (raw mode, window size),\n"
          "                           or its master sent to --console-socket (needed with --detach)\n"
          "      --console-socket S   send the pty master to the Unix socket S\n"
          "      --pidfd-socket S     send a pidfd of the process to the Unix socket S once it runs\n"
          "      --pid-file FILE      write the process's pid to FILE\n"
          "      --cwd DIR            working directory inside the container\n"
          "  -e, --env NAME=VALUE     add to the environment (repeatable)\n"
          "  -u, --user UID[:GID]     run as this user of the container\n"
          "  -g, --additional-gids GID  a supplementary group after the config's (repeatable, or\n"
          "                           comma-separated)\n"
          "  -c, --cap CAP            add CAP (e.g. CAP_KILL) to the bounding, effective and\n"
          "                           permitted sets, as runc (repeatable)\n"
          "      --preserve-fds N     pass fds 3..3+N-1\n"
          "      --no-new-privs       set no_new_privs even if the config does not\n"
          "      --apparmor PROFILE   the AppArmor profile of the process (instead of the config's)\n"
          "      --process-label L    the SELinux label of the process (instead of the config's)\n"
          "      --ignore-paused      exec into a paused container: the process waits, frozen, for resume\n"
          "      --cgroup [CTL:]PATH  run in the existing cgroup PATH below the container's (CTL: only the\n"
          "                           v1 hierarchies of these comma-separated controllers; repeatable)\n"
          "      --timeout DUR        wall-clock limit: SIGTERM to the process and what it started, killed\n"
          "                           after the grace\n"
          "      --timeout-grace DUR  between SIGTERM and SIGKILL at the limit (default 5s; 0: kill at once)\n"
          "      --max-output BYTES   capture at most BYTES per stream for the record (default 1M)\n"
          "      --record FILE | --record-fd N [--record-id JSON] [--no-stream]\n"
          "      --die-with-parent PID  kill the process (and what it started) when PID, our parent, dies\n");
}

/* --detach: start the process and leave it to the container. */
static int
exec_detached (const struct ab_exec_opts *o)
{
  /* ab_exec_start leaves our children's pid namespace at the container's:
     take ours back, so that nothing we fork from now on (LeakSanitizer's
     tracer at exit) is born in there. */
  _cleanup_close_ int own_pidns = open ("/proc/self/ns/pid_for_children", O_RDONLY | O_CLOEXEC);
  struct ab_exec *x = NULL;
  ab_error_t err = { 0 };
  int r = ab_exec_start (o, &x, &err);

  if (own_pidns >= 0)
    setns (own_pidns, CLONE_NEWPID);
  if (r < 0)
    {
      ab_log_error (&err);
      return AB_EXIT_EXEC_FAILED;
    }
  ab_exec_free (x);
  return AB_EXIT_OK;
}

/* --additional-gids GID[,GID...]: appended to o's; -1 on a bad number. */
static int
add_gids (struct ab_exec_opts *o, const char *arg)
{
  _cleanup_free_ char *copy = xstrdup (arg);
  char *save = NULL;
  size_t before = o->n_add_gids;

  for (char *t = strtok_r (copy, ",", &save); t; t = strtok_r (NULL, ",", &save))
    {
      uint64_t id;
      if (ab_parse_u64 (t, &id) < 0 || id >= UINT32_MAX)
        return -1;
      o->add_gids = xreallocarray (o->add_gids, o->n_add_gids + 1, sizeof *o->add_gids);
      o->add_gids[o->n_add_gids++] = (uint32_t)id;
    }
  return o->n_add_gids > before ? 0 : -1;
}

/* The command line of exec: 0 to go on, -1 when --help was printed, or
   the exit status of a usage error. */
static int
parse_exec_cli (struct ab_global *g, int argc, char **argv, struct ab_exec_opts *o, struct ab_supervise_opts *so,
                int *record_fd, const char **record_id)
{
  static const struct option opts[] = {
    { "process", required_argument, NULL, OPT_PROCESS },
    { "detach", no_argument, NULL, 'd' },
    { "tty", no_argument, NULL, 't' },
    { "console-socket", required_argument, NULL, OPT_CONSOLE_SOCKET },
    { "pid-file", required_argument, NULL, OPT_PID_FILE },
    { "cwd", required_argument, NULL, OPT_CWD },
    { "env", required_argument, NULL, 'e' },
    { "additional-gids", required_argument, NULL, 'g' },
    { "user", required_argument, NULL, 'u' },
    { "cap", required_argument, NULL, 'c' },
    { "preserve-fds", required_argument, NULL, OPT_PRESERVE_FDS },
    { "no-new-privs", no_argument, NULL, OPT_NO_NEW_PRIVS },
    { "timeout", required_argument, NULL, OPT_TIMEOUT },
    { "timeout-grace", required_argument, NULL, OPT_TIMEOUT_GRACE },
    { "max-output", required_argument, NULL, OPT_MAX_OUTPUT },
    { "record", required_argument, NULL, OPT_RECORD },
    { "record-fd", required_argument, NULL, OPT_RECORD_FD },
    { "record-id", required_argument, NULL, OPT_RECORD_ID },
    { "no-stream", no_argument, NULL, OPT_NO_STREAM },
    { "die-with-parent", required_argument, NULL, OPT_DIE_WITH_PARENT },
    { "ignore-paused", no_argument, NULL, OPT_IGNORE_PAUSED },
    { "apparmor", required_argument, NULL, OPT_APPARMOR },
    { "process-label", required_argument, NULL, OPT_PROCESS_LABEL },
    { "cgroup", required_argument, NULL, OPT_CGROUP },
    { "pidfd-socket", required_argument, NULL, OPT_PIDFD_SOCKET },
    { "help", no_argument, NULL, OPT_HELP },
    { NULL, 0, NULL, 0 },
  };
  int c, n;
  uint64_t u;

  /* '+': the program's options are its own. */
  while ((c = getopt_long (argc, argv, "+dte:u:g:c:h", opts, NULL)) != -1)
    switch (c)
      {
      case OPT_PROCESS:
        o->process_file = optarg;
        break;
      case 'd':
        o->detach = true;
        break;
      case 't':
        o->tty = true;
        break;
      case OPT_CONSOLE_SOCKET:
        o->console_socket = optarg;
        break;
      case OPT_PID_FILE:
        o->pid_file = optarg;
        if ((n = ab_cmd_check_pid_file ("exec", optarg)) != 0)
          return n;
        break;
      case OPT_CWD:
        if (optarg[0] != '/')
          return ab_cmd_usage_error ("exec", "--cwd: expected an absolute path, got `%s`", optarg);
        o->cwd = optarg;
        break;
      case 'g':
        if (add_gids (o, optarg) < 0)
          return ab_cmd_usage_error ("exec", "--additional-gids: expected GID[,GID...] (numbers), got `%s`", optarg);
        break;
      case 'e':
        if (strchr (optarg, '=') == NULL || optarg[0] == '=')
          return ab_cmd_usage_error ("exec", "--env: expected NAME=VALUE, got `%s`", optarg);
        ab_strv_push (&o->env, optarg);
        break;
      case 'u':
        {
          /* A copy: argv stays as given, for the sealed re-exec
             (ab_exe_seal_unless_safe), which parses it again. */
          _cleanup_free_ char *uid = xstrdup (optarg);
          char *colon = strchr (uid, ':');
          uint64_t id;
          if (colon)
            *colon = '\0';
          if (ab_parse_u64 (uid, &id) < 0 || id >= UINT32_MAX)
            return ab_cmd_usage_error ("exec", "--user: expected UID[:GID] (numbers), got `%s`", uid);
          o->uid = (uid_t) id;
          o->user_set = true;
          if (colon)
            {
              if (ab_parse_u64 (colon + 1, &id) < 0 || id >= UINT32_MAX)
                return ab_cmd_usage_error ("exec", "--user: expected UID[:GID] (numbers), got `%s`", colon + 1);
              o->gid = (gid_t) id;
              o->gid_set = true;
            }
          break;
        }
      case 'c': /* --cap, and runc's -c */
        /* Checked here, before anything runs: a usage error, not exec's
           255 for a process that could not be started. */
        if (ab_cap_from_name (optarg) < 0)
          return ab_cmd_usage_error ("exec", "--cap: unknown capability `%s` (capabilities(7) names, such as "
                                             "CAP_KILL)",
                                     optarg);
        ab_strv_push (&o->add_caps, optarg);
        break;
      case OPT_PRESERVE_FDS:
        if (ab_parse_int (optarg, &o->preserve_fds) < 0 || o->preserve_fds < 0 || o->preserve_fds > 65536)
          return ab_cmd_usage_error ("exec", "--preserve-fds: expected a number, got `%s`", optarg);
        break;
      case OPT_NO_NEW_PRIVS:
        o->no_new_privs = true;
        break;
      case OPT_IGNORE_PAUSED:
        o->ignore_paused = true;
        break;
      case OPT_APPARMOR:
        o->apparmor_profile = optarg;
        break;
      case OPT_PROCESS_LABEL:
        o->selinux_label = optarg;
        break;
      case OPT_CGROUP:
        ab_strv_push (&o->cgroups, optarg);
        break;
      case OPT_PIDFD_SOCKET:
        o->pidfd_socket = optarg;
        break;
      case OPT_TIMEOUT:
        if (ab_parse_duration_ms (optarg, &so->timeout_ms) < 0 || so->timeout_ms == 0)
          return ab_cmd_usage_error ("exec", "--timeout: expected a duration like 30s, got `%s`", optarg);
        break;
      case OPT_TIMEOUT_GRACE:
        if (ab_parse_duration_ms (optarg, &so->grace_ms) < 0)
          return ab_cmd_usage_error ("exec", "--timeout-grace: expected a duration like 5s or 0, got `%s`", optarg);
        so->grace_set = true;
        break;
      case OPT_MAX_OUTPUT:
        if (ab_parse_size (optarg, &u) < 0 || u == 0)
          return ab_cmd_usage_error ("exec", "--max-output: expected a size of at least 1 byte, got `%s`", optarg);
        so->max_output = u;
        so->capture = true;
        break;
      case OPT_RECORD:
        if (*record_fd > 2)
          close (*record_fd);
        *record_fd = ab_open_record (optarg);
        if (*record_fd < 0)
          return ab_cmd_usage_error ("exec", "--record: cannot open `%s`: %s", optarg, strerror (errno));
        so->capture = true;
        break;
      case OPT_RECORD_FD:
        if (ab_parse_int (optarg, &n) < 0 || n < 0 || fcntl (n, F_GETFD) < 0)
          return ab_cmd_usage_error ("exec", "--record-fd: `%s` is not an open file descriptor", optarg);
        *record_fd = n; /* close-on-exec after the sealed re-exec, below */
        so->capture = true;
        break;
      case OPT_RECORD_ID:
        *record_id = optarg;
        break;
      case OPT_NO_STREAM:
        so->passthrough = false;
        break;
      case OPT_DIE_WITH_PARENT:
        if ((n = ab_die_with_parent ("exec", optarg)) != 0)
          return n;
        break;
      case 'h':
      case OPT_HELP:
        help ();
        return -1;
      default:
        return ab_cmd_usage_error ("exec", "unknown option `%s`", argv[optind - 1]);
      }
  if (optind >= argc)
    return ab_cmd_usage_error ("exec", "missing container ID");
  o->id = argv[optind++];
  if (optind < argc && strcmp (argv[optind], "--") == 0)
    optind++;
  for (; optind < argc; optind++)
    ab_strv_push (&o->args, argv[optind]);
  if (o->process_file == NULL && o->args.n == 0)
    return ab_cmd_usage_error ("exec", "missing the program to run (or --process FILE)");
  if (o->process_file && o->args.n)
    return ab_cmd_usage_error ("exec", "give either --process FILE or a program, not both");
  if (g->systemd_cgroup)
    return ab_cmd_usage_error ("exec", "%s: the systemd cgroup driver is not supported (use cgroupfs)",
                               g->systemd_cgroup);
  if ((n = ab_cmd_check_preserve_fds ("exec", 0, o->preserve_fds, *record_fd)) != 0)
    return n;

  return 0;
}

int
ab_cmd_exec (struct ab_global *g, int argc, char **argv)
{
  struct ab_exec_opts o __attribute__ ((cleanup (ab_exec_opts_clear)));
  struct ab_supervise_opts so;
  struct ab_outcome out;
  const char *record_id = "null";
  int record_fd = -1, r, status;
  ab_error_t err = { 0 };

  ab_exec_opts_init (&o);
  ab_supervise_opts_init (&so);
  o.root = g->root;
  r = parse_exec_cli (g, argc, argv, &o, &so, &record_fd, &record_id);
  if (r != 0)
    return r < 0 ? AB_EXIT_OK : r;

  if (!ab_exe_protected ())
    {
      /* From a protected copy of ourselves unless the container's own user
         namespace cannot write our binary anyway. */
      struct ab_idmaps uids = { 0 }, gids = { 0 };
      bool own = ab_exec_container_maps (g->root, o.id, &uids, &gids) == 0;
      r = ab_exe_seal_unless_safe (g->argv_all, own ? &uids : NULL, own ? &gids : NULL, &err);
      free (uids.v);
      free (gids.v);
      if (r < 0)
        return ab_cmd_fail (&err);
    }
  /* Our record fd stays ours: the container never sees it. */
  if (record_fd > 2)
    ab_set_cloexec (record_fd, true);
  so.no_violations = record_fd < 0; /* only the record reports them */
  so.relay_tty = true;                /* a terminal without --console-socket (foreground only) */
  if (o.detach)
    return exec_detached (&o);
  if (ab_supervise_exec (&o, &so, &out, &err) < 0)
    ab_log_error (&err);
  status = out.canceled ? 128 + SIGUSR1 : out.exit_status;
  if (!out.canceled && record_fd >= 0 && ab_record_write (record_fd, &out, record_id, &err) < 0)
    {
      ab_log_error (&err);
      status = AB_EXIT_EXEC_FAILED;
    }
  ab_outcome_free (&out);
  if (record_fd > 2)
    close (record_fd);
  return status;
}
