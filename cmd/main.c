/* agentbox: an OCI runtime for the tool calls of AI agents.
 *
 * main() parses the runc-compatible global options (which come before the
 * subcommand) and dispatches through one table. */
#include "config.h"

#include <getopt.h>
#include <malloc.h>
#include <seccomp.h>
#include <stdio.h>
#include <strings.h>

#include "cmd/cmd.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/exe.h"
#include "base/log.h"
#include "base/util.h"
#include "spec/model.h"

/* a number macro as a string literal */
#define AB_LIBC_STR1(x) #x
#define AB_LIBC_STR(x) AB_LIBC_STR1 (x)

/* Commands that keep state need the state root; spec, features, validate
   and audit (of a bundle) work without one. */
static const struct ab_cmd commands[] = {
  { "create", ab_cmd_create, "create a container (its process waits for start)", false, true },
  { "start", ab_cmd_start, "run the user program of a created container", false, true },
  { "run", ab_cmd_run, "create and start a container; in the foreground, wait for it", false, true },
  { "exec", ab_cmd_exec, "run a new process inside a running container", false, true },
  { "kill", ab_cmd_kill, "send a signal to a container", false, true },
  { "delete", ab_cmd_delete, "delete a container and everything it used", false, true },
  { "pause", ab_cmd_pause, "freeze every process of a container", false, true },
  { "resume", ab_cmd_resume, "thaw a paused container", false, true },
  { "ps", ab_cmd_ps, "list the processes of a container", false, true },
  { "events", ab_cmd_events, "print a container's statistics and OOM kills as JSON lines", false, true },
  { "update", ab_cmd_update, "change the resource limits of a container", false, true },
  { "state", ab_cmd_state, "print the OCI state of a container", false, true },
  { "list", ab_cmd_list, "list containers", false, true },
  { "spec", ab_cmd_spec, "write a config.json (the hardened agent profile by default)", false, false },
  { "features", ab_cmd_features, "print the OCI features.json of this build", false, false },
  { "validate", ab_cmd_validate, "check a bundle's config.json the way create does", false, false },
  { "workspace", ab_cmd_workspace, "show, apply or discard the change set of an overlay workspace", false, true },
  { "audit", ab_cmd_audit, "show what a config does to the kernel and what is dangerous in it", false, false },
  { "mcp", ab_cmd_mcp, "serve MCP over stdio (sandbox_run, sandbox_create/exec/destroy)", true, true },
  /* internal, not listed: the warm user namespace's holder (runtime/warm.h) */
  { "_userns-holder", ab_cmd_userns_holder, NULL, false, false },
  { NULL, NULL, NULL, false, false },
};

static void
usage (FILE *f)
{
  size_t i;

  fprintf (f, "Usage: agentbox [GLOBAL OPTIONS] COMMAND [OPTIONS] [ARGS]\n\n"
              "Global options (before COMMAND):\n"
              "  --root DIR              state directory (default " AB_DEFAULT_ROOT " for root,\n"
              "                          $XDG_RUNTIME_DIR/agentbox for any other user)\n"
              "  --log FILE              append log entries to FILE\n"
              "  --log-format text|json  format of --log entries (default text)\n"
              "  --debug                 verbose logging\n"
              "  --cgroup-manager cgroupfs|systemd\n"
              "                          the cgroup driver (crun's option): only cgroupfs is supported\n"
              "  --systemd-cgroup        accepted for runc compatibility; not supported\n"
              "  --rootless true|false|auto\n"
              "                          run without host privileges (default auto: when not root,\n"
              "                          or root without CAP_SYS_ADMIN)\n"
              "  --cgroup-parent PATH    rootless: make containers' cgroups below this delegated\n"
              "                          cgroup v2 directory (a path of /proc/self/cgroup's form)\n"
              "  --help, -v, --version\n\n"
              "Commands:\n");
  for (i = 0; commands[i].name != NULL; i++)
    if (commands[i].summary != NULL)
      fprintf (f, "  %-10s %s\n", commands[i].name, commands[i].summary);
  fprintf (f, "\nSee agentbox(8) for exit statuses and details.\n");
}

/* --rootless VALUE as runc reads it (parseBoolOrAuto): "" and "auto" in
   any case are auto, then Go's strconv.ParseBool words. */
static int
parse_tristate (const char *s, int *out)
{
  static const char *const yes[] = { "1", "t", "T", "TRUE", "true", "True" };
  static const char *const no[] = { "0", "f", "F", "FALSE", "false", "False" };

  if (*s == '\0' || strcasecmp (s, "auto") == 0)
    return *out = -1, 0;
  for (size_t i = 0; i < AB_ARRAY_SIZE (yes); i++)
    {
      if (strcmp (s, yes[i]) == 0)
        return *out = 1, 0;
      if (strcmp (s, no[i]) == 0)
        return *out = 0, 0;
    }
  return -1;
}

/* The state root when --root is not given: runc's choice, /run/agentbox for
   root and $XDG_RUNTIME_DIR/agentbox for anyone else (a directory of the
   user's own, made by the login manager, 0700).  Without XDG_RUNTIME_DIR
   there is no place only this user can write that we could guess, so
   commands that keep state refuse to run (main, needs_root). */
static const char *
default_root (char **owned)
{
  const char *xdg = getenv ("XDG_RUNTIME_DIR");

  if (geteuid () == 0)
    return AB_DEFAULT_ROOT;
  if (xdg == NULL || xdg[0] != '/')
    return NULL;
  return *owned = xasprintf ("%s/agentbox", xdg);
}

enum
{
  OPT_ROOT = 256,
  OPT_LOG,
  OPT_LOG_FORMAT,
  OPT_DEBUG,
  OPT_SYSTEMD_CGROUP,
  OPT_CGROUP_MANAGER,
  OPT_ROOTLESS,
  OPT_CGROUP_PARENT,
  OPT_HELP,
  OPT_VERSION,
  OPT_CRIU,
};

int
main (int argc, char **argv)
{
  static const struct option opts[] = {
    { "root", required_argument, NULL, OPT_ROOT },
    { "log", required_argument, NULL, OPT_LOG },
    { "log-format", required_argument, NULL, OPT_LOG_FORMAT },
    { "debug", no_argument, NULL, OPT_DEBUG },
    { "systemd-cgroup", no_argument, NULL, OPT_SYSTEMD_CGROUP },
    { "cgroup-manager", required_argument, NULL, OPT_CGROUP_MANAGER },
    { "rootless", required_argument, NULL, OPT_ROOTLESS },
    { "cgroup-parent", required_argument, NULL, OPT_CGROUP_PARENT },
    { "criu", required_argument, NULL, OPT_CRIU },
    { "help", no_argument, NULL, OPT_HELP },
    { "version", no_argument, NULL, OPT_VERSION },
    { NULL, 0, NULL, 0 },
  };
  struct ab_global g = { .root = NULL, .rootless = -1, .argv0 = argv[0], .argv_all = argv };
  _cleanup_free_ char *root_owned = NULL;
  ab_error_t err = { 0 };
  const char *cmd;
  size_t i;
  int c;

  /* One malloc arena for every thread: the short-lived threads of create
     (cgroup move, network) would otherwise each reserve and trim a 64 MiB
     arena (mmap, munmap, mprotect) for a few small allocations.  Only where memory comes from changes; the
     MCP server's worker threads contend on one lock, for allocations that are a small part of their work. */
  mallopt (M_ARENA_MAX, 1);

  /* '+': stop at the subcommand; its options are its own. */
  opterr = 0;
  while ((c = getopt_long (argc, argv, "+hv", opts, NULL)) != -1)
    {
      switch (c)
        {
        case OPT_ROOT:
          g.root = optarg;
          break;
        case OPT_LOG:
          g.log_path = optarg;
          break;
        case OPT_LOG_FORMAT:
          if (strcmp (optarg, "json") == 0)
            g.log_format = AB_LOG_JSON;
          else if (strcmp (optarg, "text") == 0)
            g.log_format = AB_LOG_TEXT;
          else
            return ab_cmd_usage_error (NULL, "--log-format: expected text or json, got `%s`", optarg);
          break;
        case OPT_DEBUG:
          g.debug = true;
          break;
        case OPT_SYSTEMD_CGROUP:
          g.systemd_cgroup = "--systemd-cgroup";
          break;
        case OPT_CGROUP_MANAGER:
          /* crun's spelling of the cgroup driver choice */
          if (strcmp (optarg, "systemd") == 0)
            g.systemd_cgroup = "--cgroup-manager systemd";
          else if (strcmp (optarg, "cgroupfs") == 0)
            g.systemd_cgroup = NULL;
          else
            return ab_cmd_usage_error (NULL, "--cgroup-manager: expected cgroupfs or systemd, got `%s`", optarg);
          break;
        case OPT_ROOTLESS:
          if (parse_tristate (optarg, &g.rootless) < 0)
            return ab_cmd_usage_error (NULL, "--rootless: expected true, false or auto, got `%s`", optarg);
          break;
        case OPT_CGROUP_PARENT:
          if (optarg[0] != '/')
            return ab_cmd_usage_error (NULL, "--cgroup-parent: expected a cgroup path like /user.slice/x, got `%s`",
                                       optarg);
          g.cgroup_parent = optarg;
          break;
        case OPT_CRIU:
          /* accepted and ignored, as containerd passes it; checkpoint is not supported */
          break;
        case 'h':
        case OPT_HELP:
          usage (stdout);
          return AB_EXIT_OK;
        case 'v': /* runc's short form */
        case OPT_VERSION:
          {
            const struct scmp_version *v = seccomp_version ();

            /* runc prints the libseccomp line too; `static:` names the
               libraries linked in from their archives (configure.ac),
               `libc:` the C library (base/libc-compat.h is musl's). */
            printf ("agentbox version %s\nspec: %s\nlibseccomp: %u.%u.%u\nstatic: %s\nlibc: %s\n", PACKAGE_VERSION,
                    AB_OCI_VERSION, v ? v->major : 0, v ? v->minor : 0, v ? v->micro : 0, AB_LINKED_STATIC,
#ifdef AB_LIBC_COMPAT
                    "musl"
#else
                    "glibc " AB_LIBC_STR (__GLIBC__) "." AB_LIBC_STR (__GLIBC_MINOR__)
#endif
            );
          }
          return AB_EXIT_OK;
        default:
          return ab_cmd_usage_error (NULL, "unknown global option `%s`", argv[optind - 1]);
        }
    }

  if (ab_log_init (g.log_path, g.log_format, g.debug, &err) < 0)
    return ab_cmd_fail (&err);
  ab_trace ("start");
  ab_cgroup_host_view ();

  if (optind >= argc)
    {
      usage (stderr);
      return AB_EXIT_USAGE;
    }
  if (g.root == NULL)
    g.root = default_root (&root_owned);
  cmd = argv[optind];
  for (i = 0; commands[i].name != NULL; i++)
    if (strcmp (commands[i].name, cmd) == 0)
      {
        /* The subcommand sees argv[0] = its name and parses with a fresh getopt. */
        int sub_argc = argc - optind;
        char **sub_argv = argv + optind;
        int rc;
        if (commands[i].needs_root && g.root == NULL)
          {
            ab_error_setc (&err, AB_EC_USAGE, 0,
                           "%s: no state directory: XDG_RUNTIME_DIR is not set and agentbox runs as uid %u, "
                           "not root; give one with --root DIR (a directory of yours that no other user can write)",
                           cmd, (unsigned) geteuid ());
            return ab_cmd_fail (&err);
          }
        if (commands[i].sealed && ab_exe_ensure_sealed (argv, &err) < 0)
          return ab_cmd_fail (&err);
        optind = 0;
        opterr = 0;
        rc = commands[i].run (&g, sub_argc, sub_argv);
        ab_log_close ();
        return rc;
      }
  return ab_cmd_usage_error (NULL, "unknown command `%s`", cmd);
}
