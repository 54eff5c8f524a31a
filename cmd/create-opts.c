#include "config.h"

#include <fcntl.h>
#include <stdio.h>

#include "cmd/create-opts.h"
#include "base/util.h"
#include "spec/annotations.h"

/* Handle one of the shared options: 1 handled, 0 not a shared option,
   or an exit status (> 1) for a usage error. */
static int
ab_create_opt (const char *cmd, int c, const char *arg, struct ab_create_opts *o)
{
  switch (c)
    {
    case AB_OPT_BUNDLE:
      o->bundle = arg;
      return 1;
    case AB_OPT_PID_FILE:
      o->pid_file = arg;
      return ab_cmd_check_pid_file (cmd, arg) ?: 1;
    case AB_OPT_CONSOLE_SOCKET:
      o->console_socket = arg;
      return 1;
    case AB_OPT_PIDFD_SOCKET:
      o->pidfd_socket = arg;
      return 1;
    case AB_OPT_PRESERVE_FDS:
      if (ab_parse_int (arg, &o->preserve_fds) < 0 || o->preserve_fds < 0 || o->preserve_fds > 65536)
        return ab_cmd_usage_error (cmd, "--preserve-fds: expected a number, got `%s`", arg);
      return 1;
    case AB_OPT_NO_NEW_KEYRING:
      o->no_new_keyring = true;
      return 1;
    case AB_OPT_EGRESS_POLICY:
      o->egress_policy = arg;
      return 1;
    case AB_OPT_ACCEPT_DEGRADED:
      o->accept_degraded = true;
      return 1;
    case AB_OPT_NO_PIVOT:
      return ab_cmd_usage_error (cmd, "--no-pivot is not supported: agentbox always uses pivot_root");
    default:
      return 0;
    }
}

/* Common checks after parsing (systemd cgroup driver, ...). */
static int
ab_create_opts_finish (const char *cmd, struct ab_global *g, struct ab_create_opts *o)
{
  o->root = g->root;
  o->rootless = g->rootless;
  o->cgroup_parent = g->cgroup_parent;
  if (g->systemd_cgroup)
    return ab_cmd_usage_error (cmd, "%s: the systemd cgroup driver is not supported (use cgroupfs)",
                               g->systemd_cgroup);
  return 0;
}

int
ab_parse_create_opts (const char *cmd, struct ab_global *g, int argc, char **argv, struct ab_create_opts *o)
{
  static const struct option opts[] = { AB_CREATE_LONG_OPTIONS, { NULL, 0, NULL, 0 } };
  int c, r;

  o->bundle = ".";
  while ((c = getopt_long (argc, argv, "b:h", opts, NULL)) != -1)
    {
      if (c == 'h' || c == AB_OPT_HELP)
        {
          printf ("Usage: agentbox %s [OPTIONS] ID\n\n" AB_CREATE_HELP, cmd);
          return -1;
        }
      r = ab_create_opt (cmd, c, optarg, o);
      if (r > 1)
        return r;
      if (r == 0)
        return ab_cmd_usage_error (cmd, "unknown option `%s`", argv[optind - 1]);
    }
  if ((r = ab_create_opts_finish (cmd, g, o)) != 0)
    return r;
  if ((r = ab_cmd_positionals (cmd, argc, argv, 1, 1, "container ID")) != 0)
    return r;
  o->id = argv[optind];
  if ((r = ab_cmd_listen_fds (cmd, &o->listen_fds)) != 0)
    return r;
  return ab_cmd_check_preserve_fds (cmd, o->listen_fds, o->preserve_fds, -1);
}

enum
{
  OPT_KEEP = AB_OPT__CREATE_LAST,
  OPT_DEFAULT,
  OPT_WORKSPACE,
  OPT_WORKSPACE_MODE,
  OPT_WORKSPACE_SIZE,
  OPT_WORKSPACE_CHANGES,
  OPT_TIMEOUT,
  OPT_TIMEOUT_GRACE,
  OPT_MAX_OUTPUT,
  OPT_MEMORY,
  OPT_PIDS,
  OPT_RO_BIND,
  OPT_BIND,
  OPT_ENV_PASS,
  OPT_FILE_SIZE,
  OPT_OPEN_FILES,
  OPT_TMP_SIZE,
  OPT_SHM_SIZE,
  OPT_HOME_SIZE,
  OPT_CWD,
  OPT_ENV,
  OPT_ALLOW_DOMAIN,
  OPT_ANNOTATION,
  OPT_RECORD,
  OPT_RECORD_FD,
  OPT_RECORD_ID,
  OPT_NO_STREAM,
  OPT_DIE_WITH_PARENT,
  OPT_FALLBACK,
  OPT_NO_SUBREAPER,
  OPT_TTY,
};

static void
run_help (void)
{
  printf ("Usage: agentbox run [OPTIONS] ID\n"
          "       agentbox run --default [OPTIONS] ID -- PROGRAM [ARGS...]\n\n" AB_CREATE_HELP
          "  -d, --detach             do not wait for the container\n"
          "      --keep               keep the container's state after it exits\n"
          "      --no-subreaper       the container's orphans go to the host's reaper, not to agentbox (needs\n"
          "                           a pid namespace or a cgroup, which ends them with the run)\n"
          "      --timeout DUR        wall-clock limit (30s, 1500ms, 2m; default none): SIGTERM to every process,\n"
          "                           then the whole container is killed after the grace\n"
          "      --timeout-grace DUR  between SIGTERM and SIGKILL at the limit (default 5s; 0: kill at once)\n"
          "      --max-output BYTES   capture at most BYTES per stream for the record (default 1M; streaming\n"
          "                           goes on; limitsHit output)\n"
          "      --record FILE        write the outcome as an MCP tools/call result frame to FILE\n"
          "      --record-fd N        ... to file descriptor N\n"
          "      --record-id JSON     the JSON-RPC id to put in the frame (default null)\n"
          "      --no-stream          do not copy the program's output to ours (with --record)\n"
          "      --die-with-parent PID  cancel (the whole container) when process PID, our parent, dies\n"
          "      --fallback landlock  where no user namespace can be made, run without namespaces under\n"
          "                           landlock, seccomp and rlimits (a bundle's config must opt in with\n"
          "                           annotations dev.agentbox.fallback=landlock; docs/landlock.md)\n"
          "  The built-in sandbox (--default): a read-only view of the host's /usr and /etc, the\n"
          "  hardened profile of `agentbox spec`, a tmpfs /workspace unless --workspace is given:\n"
          "      --default            run PROGRAM in the built-in sandbox\n"
          "      --workspace DIR      bind DIR read-write at /workspace\n"
          "      --workspace-mode overlay  show DIR through an overlay: DIR is untouched, what changes is\n"
          "                           kept as a change set (agentbox workspace diff|apply|discard ID)\n"
          "      --workspace-size SIZE  the tmpfs /workspace (without --workspace), or the most an overlay's\n"
          "                           change set may hold (default 1G; limitsHit workspace)\n"
          "      --workspace-changes D  keep the change set in the empty directory D (not in --root)\n"
          "      --cwd DIR            working directory (default /workspace)\n"
          "  -t, --tty                a terminal of the sandbox's own, relayed to ours (without it the\n"
          "                           program's stdio are pipes, ours copied: never our terminal itself)\n"
          "      --env NAME=VALUE     add to the environment (repeatable); USER and LOGNAME are root, HOME /root\n"
          "      --env-pass NAME      pass our variable NAME through, when it is set (repeatable)\n"
          "      --ro-bind SRC[:DST]  show the host's SRC (a directory or file) read-only at DST (default: at SRC);\n"
          "                           SRC is resolved once, then opened refusing any symlink (repeatable)\n"
          "      --bind SRC[:DST]     the same, read-write (files land owned by SRC's owner)\n"
          "                           (the host's /var/lib is shown read-only: its package managers' state only)\n"
          "  Its limits (the record's limitsHit names the one a command ran into; docs/result-record.md):\n"
          "      --memory BYTES       memory limit, no swap (default 1G; limitsHit memory)\n"
          "      --pids N             processes and threads (default 512; limitsHit pids)\n"
          "      --file-size SIZE     largest file a process may write, RLIMIT_FSIZE (default 1G; SIGXFSZ or\n"
          "                           EFBIG beyond it; limitsHit file_size)\n"
          "      --open-files N       open files per process, RLIMIT_NOFILE (default 1024; EMFILE beyond it,\n"
          "                           which is not seen from outside: not in limitsHit)\n"
          "      --tmp-size SIZE      /tmp, a tmpfs (default 256M; ENOSPC when full; limitsHit tmpfs)\n"
          "      --home-size SIZE     /root, HOME, a tmpfs (default 256M; limitsHit tmpfs)\n"
          "      --shm-size SIZE      /dev/shm (default 64M; limitsHit tmpfs)\n"
          "                           fixed: /run 16M, /dev 64M; no CPU-time limit; --timeout none unless given\n"
          "                           (agentbox mcp: 60 s); --max-output 1M (above)\n"
          "      --allow-domain NAME  let the program reach NAME through the egress proxy (repeatable)\n"
          "      --annotation K=V     an annotation of the sandbox's config, e.g. dev.agentbox.net.pins\n");
}

static void
push_annotation (struct ab_kvlist *l, const char *key, const char *value)
{
  l->v = xreallocarray (l->v, l->n + 1, sizeof *l->v);
  l->v[l->n].key = xstrdup (key);
  l->v[l->n].value = xstrdup (value);
  l->n++;
}

/* The overlay workspace of the built-in sandbox: the annotations a bundle
   would carry (spec/annotations.h), checked there with the rest of the
   config; only what the command line alone can tell is checked here. */
static int
workspace_opt (const char *cmd, struct ab_run_cli *cli, int c, const char *arg)
{
  _cleanup_free_ char *real = NULL;
  uint64_t size;

  switch (c)
    {
    case OPT_WORKSPACE_MODE:
      if (strcmp (arg, "bind") != 0 && strcmp (arg, "overlay") != 0)
        return ab_cmd_usage_error (cmd, "--workspace-mode: expected bind or overlay, got `%s`", arg);
      push_annotation (&cli->sb.annotations, AB_ANNOT_WS_MODE, arg);
      cli->ws_overlay = strcmp (arg, "overlay") == 0;
      return 0;
    case OPT_WORKSPACE_SIZE:
      /* an overlay's change set (the annotation), or the tmpfs /workspace:
         which one is known when the whole command line is read */
      if (ab_parse_size (arg, &size) < 0 || size < (1u << 20))
        return ab_cmd_usage_error (cmd, "--workspace-size: expected a size of at least 1M like 512M, got `%s`",
                                   arg);
      cli->ws_size = arg;
      cli->sb.workspace_size = size;
      return 0;
    default:
      /* absolute: the annotation is read where the run started from is unknown */
      if (arg[0] != '/')
        {
          char cwd[4096];
          if (getcwd (cwd, sizeof cwd) == NULL)
            return ab_cmd_usage_error (cmd, "--workspace-changes: `%s`: %s", arg, strerror (errno));
          real = xasprintf ("%s/%s", cwd, arg);
        }
      push_annotation (&cli->sb.annotations, AB_ANNOT_WS_CHANGES, real ? real : arg);
      cli->ws_opts = true;
      return 0;
    }
}

/* A limit of the built-in sandbox (spec/defaults.h has the defaults). */
static int
limit_opt (const char *cmd, struct ab_sandbox_opts *sb, int c, const char *arg)
{
  static const struct
  {
    int opt;
    const char *name;
    uint64_t min;
  } spec[] = {
    { OPT_FILE_SIZE, "--file-size", 1 }, { OPT_OPEN_FILES, "--open-files", 16 },
    { OPT_TMP_SIZE, "--tmp-size", 1u << 20 }, { OPT_SHM_SIZE, "--shm-size", 1u << 20 },
    { OPT_HOME_SIZE, "--home-size", 1u << 20 },
  };
  uint64_t *dst[] = { &sb->file_size, &sb->open_files, &sb->tmp_size, &sb->shm_size, &sb->home_size };
  size_t i = 0;
  uint64_t v;
  int r;

  while (spec[i].opt != c)
    i++;
  r = c == OPT_OPEN_FILES ? ab_parse_u64 (arg, &v) : ab_parse_size (arg, &v);
  if (r < 0 || v < spec[i].min || (c == OPT_OPEN_FILES && v > (1u << 20)))
    return ab_cmd_usage_error (cmd, "%s: expected %s, got `%s`", spec[i].name,
                               c == OPT_OPEN_FILES ? "a number from 16 to 1048576"
                               : spec[i].min > 1   ? "a size of at least 1M like 512M"
                                                   : "a size like 2G",
                               arg);
  *dst[i] = v;
  return 0;
}

int
ab_parse_run_cli (const char *cmd, struct ab_global *g, int argc, char **argv, struct ab_run_cli *cli)
{
  static const struct option opts[] = {
    AB_CREATE_LONG_OPTIONS,
    { "detach", no_argument, NULL, AB_OPT_DETACH },
    { "keep", no_argument, NULL, OPT_KEEP },
    { "default", no_argument, NULL, OPT_DEFAULT },
    { "workspace", required_argument, NULL, OPT_WORKSPACE },
    { "workspace-mode", required_argument, NULL, OPT_WORKSPACE_MODE },
    { "workspace-size", required_argument, NULL, OPT_WORKSPACE_SIZE },
    { "workspace-changes", required_argument, NULL, OPT_WORKSPACE_CHANGES },
    { "timeout", required_argument, NULL, OPT_TIMEOUT },
    { "timeout-grace", required_argument, NULL, OPT_TIMEOUT_GRACE },
    { "max-output", required_argument, NULL, OPT_MAX_OUTPUT },
    { "memory", required_argument, NULL, OPT_MEMORY },
    { "pids", required_argument, NULL, OPT_PIDS },
    { "ro-bind", required_argument, NULL, OPT_RO_BIND },
    { "bind", required_argument, NULL, OPT_BIND },
    { "env-pass", required_argument, NULL, OPT_ENV_PASS },
    { "file-size", required_argument, NULL, OPT_FILE_SIZE },
    { "open-files", required_argument, NULL, OPT_OPEN_FILES },
    { "tmp-size", required_argument, NULL, OPT_TMP_SIZE },
    { "shm-size", required_argument, NULL, OPT_SHM_SIZE },
    { "home-size", required_argument, NULL, OPT_HOME_SIZE },
    { "cwd", required_argument, NULL, OPT_CWD },
    { "env", required_argument, NULL, OPT_ENV },
    { "allow-domain", required_argument, NULL, OPT_ALLOW_DOMAIN },
    { "annotation", required_argument, NULL, OPT_ANNOTATION },
    { "record", required_argument, NULL, OPT_RECORD },
    { "record-fd", required_argument, NULL, OPT_RECORD_FD },
    { "record-id", required_argument, NULL, OPT_RECORD_ID },
    { "no-stream", no_argument, NULL, OPT_NO_STREAM },
    { "die-with-parent", required_argument, NULL, OPT_DIE_WITH_PARENT },
    { "fallback", required_argument, NULL, OPT_FALLBACK },
    { "no-subreaper", no_argument, NULL, OPT_NO_SUBREAPER },
    { "tty", no_argument, NULL, OPT_TTY },
    { NULL, 0, NULL, 0 },
  };
  int c, r, n;
  uint64_t u;

  memset (cli, 0, sizeof *cli);
  ab_create_opts_init (&cli->co);
  ab_supervise_opts_init (&cli->so);
  cli->co.bundle = ".";
  cli->record_fd = -1;
  cli->record_id = "null";
  cli->sb.root = g->root;
  cli->sb.rootless = g->rootless;
  /* '+': the program's own arguments after the id are not ours. */
  while ((c = getopt_long (argc, argv, "+b:dht", opts, NULL)) != -1)
    {
      r = ab_create_opt (cmd, c, optarg, &cli->co);
      if (r > 1)
        return r;
      if (r == 1)
        continue;
      switch (c)
        {
        case 'h':
        case AB_OPT_HELP:
          run_help ();
          return -1;
        case AB_OPT_DETACH:
          cli->detach = true;
          break;
        case OPT_KEEP:
          cli->so.keep = true;
          break;
        case OPT_NO_SUBREAPER:
          cli->so.no_subreaper = true;
          break;
        case 't':
        case OPT_TTY:
          cli->sb.terminal = true;
          break;
        case OPT_DEFAULT:
          cli->sandbox = true;
          break;
        case OPT_WORKSPACE:
          cli->sb.workspace = optarg;
          break;
        case OPT_WORKSPACE_MODE:
        case OPT_WORKSPACE_SIZE:
        case OPT_WORKSPACE_CHANGES:
          if ((r = workspace_opt (cmd, cli, c, optarg)) != 0)
            return r;
          break;
        case OPT_TIMEOUT:
          if (ab_parse_duration_ms (optarg, &cli->so.timeout_ms) < 0 || cli->so.timeout_ms == 0)
            return ab_cmd_usage_error (cmd, "--timeout: expected a duration like 30s or 1500ms, got `%s`", optarg);
          break;
        case OPT_TIMEOUT_GRACE:
          if (ab_parse_duration_ms (optarg, &cli->so.grace_ms) < 0)
            return ab_cmd_usage_error (cmd, "--timeout-grace: expected a duration like 5s or 0, got `%s`", optarg);
          cli->so.grace_set = true;
          break;
        case OPT_MAX_OUTPUT:
          if (ab_parse_size (optarg, &cli->so.max_output) < 0 || cli->so.max_output == 0)
            return ab_cmd_usage_error (cmd, "--max-output: expected a size of at least 1 byte, got `%s`", optarg);
          cli->so.capture = true;
          break;
        case OPT_MEMORY:
          if (ab_parse_size (optarg, &cli->sb.memory) < 0 || cli->sb.memory == 0)
            return ab_cmd_usage_error (cmd, "--memory: expected a size like 512M, got `%s`", optarg);
          break;
        case OPT_RO_BIND:
        case OPT_BIND:
          cli->sb.binds.v = xreallocarray (cli->sb.binds.v, cli->sb.binds.n + 1, sizeof *cli->sb.binds.v);
          cli->sb.binds.v[cli->sb.binds.n++] = (struct ab_sandbox_bind){ optarg, c == OPT_BIND };
          cli->limit_opts = true;
          break;
        case OPT_ENV_PASS:
          {
            const char *v = getenv (optarg);
            if (optarg[0] == '\0' || strchr (optarg, '=') != NULL)
              return ab_cmd_usage_error (cmd, "--env-pass: expected a variable's NAME, got `%s`", optarg);
            if (v != NULL)
              ab_strv_push_owned (&cli->sb.env, xasprintf ("%s=%s", optarg, v));
            cli->limit_opts = true;
            break;
          }
        case OPT_FILE_SIZE:
        case OPT_OPEN_FILES:
        case OPT_TMP_SIZE:
        case OPT_SHM_SIZE:
        case OPT_HOME_SIZE:
          if ((r = limit_opt (cmd, &cli->sb, c, optarg)) != 0)
            return r;
          cli->limit_opts = true;
          break;
        case OPT_PIDS:
          if (ab_parse_u64 (optarg, &u) < 0 || u == 0 || u > INT32_MAX)
            return ab_cmd_usage_error (cmd, "--pids: expected a positive number, got `%s`", optarg);
          cli->sb.pids = (int64_t) u;
          break;
        case OPT_CWD:
          if (optarg[0] != '/')
            return ab_cmd_usage_error (cmd, "--cwd: expected an absolute path, got `%s`", optarg);
          cli->sb.cwd = optarg;
          break;
        case OPT_ENV:
          if (strchr (optarg, '=') == NULL || optarg[0] == '=')
            return ab_cmd_usage_error (cmd, "--env: expected NAME=VALUE, got `%s`", optarg);
          ab_strv_push (&cli->sb.env, optarg);
          break;
        case OPT_ANNOTATION:
          {
            const char *eq = strchr (optarg, '=');
            _cleanup_free_ char *key = NULL;
            if (eq == NULL || eq == optarg)
              return ab_cmd_usage_error (cmd, "--annotation: expected KEY=VALUE, got `%s`", optarg);
            key = xstrndup (optarg, (size_t) (eq - optarg));
            push_annotation (&cli->sb.annotations, key, eq + 1);
            break;
          }
        case OPT_ALLOW_DOMAIN:
          ab_strv_push (&cli->sb.allow_domains, optarg);
          break;
        case OPT_RECORD:
          if (cli->record_fd > 2)
            close (cli->record_fd);
          cli->record_fd = ab_open_record (optarg);
          if (cli->record_fd < 0)
            return ab_cmd_usage_error (cmd, "--record: cannot open `%s`: %s", optarg, strerror (errno));
          cli->so.capture = true;
          break;
        case OPT_RECORD_FD:
          if (ab_parse_int (optarg, &n) < 0 || n < 0 || fcntl (n, F_GETFD) < 0)
            return ab_cmd_usage_error (cmd, "--record-fd: `%s` is not an open file descriptor", optarg);
          /* close-on-exec only after the re-exec from the sealed copy (run.c) */
          cli->record_fd = n;
          cli->so.capture = true;
          break;
        case OPT_RECORD_ID:
          cli->record_id = optarg;
          break;
        case OPT_NO_STREAM:
          cli->so.passthrough = false;
          break;
        case OPT_DIE_WITH_PARENT:
          if ((r = ab_die_with_parent (cmd, optarg)) != 0)
            return r;
          break;
        case OPT_FALLBACK:
          if (strcmp (optarg, "landlock") != 0 && strcmp (optarg, "none") != 0)
            return ab_cmd_usage_error (cmd, "--fallback: expected landlock or none, got `%s`", optarg);
          cli->fallback = strcmp (optarg, "landlock") == 0;
          break;
        default:
          return ab_cmd_usage_error (cmd, "unknown option `%s`", argv[optind - 1]);
        }
    }
  if ((r = ab_create_opts_finish (cmd, g, &cli->co)) != 0)
    return r;
  if (optind >= argc)
    return ab_cmd_usage_error (cmd, "missing container ID");
  cli->co.id = argv[optind++];
  cli->sb.id = cli->co.id;
  if (optind < argc && strcmp (argv[optind], "--") == 0)
    optind++;
  else if (cli->sandbox && optind < argc && argv[optind][0] == '-')
    /* `run --default ID --timeout 1s -- sh`: not a program named
       "--timeout" (which would fail as exec `--timeout`, 127) */
    return ab_cmd_usage_error (cmd, "`%s` after the ID: options go before it (run --default [OPTIONS] ID -- "
                                    "PROGRAM...)", argv[optind]);
  if (cli->sandbox)
    {
      cli->sb.argv = argv + optind;
      cli->sb.argc = (size_t) (argc - optind);
      if (cli->detach)
        cli->sb.init = cli->sb.argc == 0;
      else if (cli->sb.argc == 0)
        return ab_cmd_usage_error (cmd, "--default: missing the program to run (after `--`)");
    }
  else if (optind < argc)
    return ab_cmd_usage_error (cmd, "unexpected argument `%s` (program arguments need --default)", argv[optind]);
  if (!cli->so.passthrough && cli->record_fd < 0)
    return ab_cmd_usage_error (cmd, "--no-stream without --record would discard the output");
  if ((cli->ws_overlay || cli->ws_opts || cli->ws_size) && !cli->sandbox)
    return ab_cmd_usage_error (cmd, "--workspace-mode, --workspace-size and --workspace-changes are options of "
                                    "--default (a bundle says it with the dev.agentbox.workspace.* annotations)");
  if (cli->limit_opts && !cli->sandbox)
    return ab_cmd_usage_error (cmd, "--file-size, --open-files, --tmp-size, --shm-size, --home-size, --ro-bind, "
                                    "--bind and --env-pass are options of --default (a bundle sets its own "
                                    "rlimits, mounts and environment)");
  if (cli->ws_size && cli->ws_overlay)
    {
      push_annotation (&cli->sb.annotations, AB_ANNOT_WS_SIZE, cli->ws_size);
      cli->sb.workspace_size = 0;
    }
  else if (cli->ws_size && cli->sb.workspace)
    return ab_cmd_usage_error (cmd, "--workspace-size sizes the tmpfs /workspace or an overlay's change set, not "
                                    "a bound --workspace DIR (bounded by its filesystem)");
  if (cli->sb.terminal && !cli->sandbox)
    return ab_cmd_usage_error (cmd, "--tty is an option of --default (a bundle's config says process.terminal)");
  if (cli->sb.terminal && cli->fallback)
    return ab_cmd_usage_error (cmd, "--tty: the sandbox without namespaces (--fallback landlock) has no terminal "
                                    "of its own to give");
  if (cli->fallback && cli->detach)
    return ab_cmd_usage_error (cmd, "--fallback landlock runs in the foreground only (its supervisor kills what "
                                    "the program leaves behind)");
  /* The built-in sandbox's config opts in for itself. */
  if (cli->fallback && cli->sandbox)
    push_annotation (&cli->sb.annotations, AB_ANNOT_FALLBACK, "landlock");
  if (cli->ws_overlay && cli->sb.workspace == NULL)
    return ab_cmd_usage_error (cmd, "--workspace-mode overlay needs --workspace DIR (the directory it shows)");
  if ((r = ab_cmd_listen_fds (cmd, &cli->co.listen_fds)) != 0)
    return r;
  return ab_cmd_check_preserve_fds (cmd, cli->co.listen_fds, cli->co.preserve_fds, cli->record_fd);
}

void
ab_run_cli_free (struct ab_run_cli *cli)
{
  size_t i;

  for (i = 0; i < cli->sb.annotations.n; i++)
    {
      free (cli->sb.annotations.v[i].key);
      free (cli->sb.annotations.v[i].value);
    }
  free (cli->sb.annotations.v);
  memset (&cli->sb.annotations, 0, sizeof cli->sb.annotations);
  ab_strv_free (&cli->sb.env);
  free (cli->sb.binds.v);
  memset (&cli->sb.binds, 0, sizeof cli->sb.binds);
  ab_strv_free (&cli->sb.allow_domains);
  if (cli->record_fd > 2)
    close (cli->record_fd);
  cli->record_fd = -1;
}
