/* MCP server: the tools, their schemas, and the checking of their
 * arguments into a worker command line.
 *
 * Arguments come from the model and may have been steered by whatever it
 * read: each one is checked for type and range, named by its JSON path when
 * it is wrong (a tool result with isError, so that the model can fix it),
 * and put on the worker's command line only in a position where it cannot
 * be taken for an option. */
#include "config.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "runtime/mcp/mcp-internal.h"
#include "runtime/supervise/supervise.h"
#include "base/util.h"

/* docs/result-schema.json, made into a C string at build time (runtime/mcp.mk). */
static const char result_schema_text[] =
#include "runtime/mcp/mcp-schema.inc"
    ;

#define DEFAULT_TIMEOUT_MS 60000u
#define MAX_TIMEOUT_MS (24u * 3600u * 1000u)
#define DEFAULT_MAX_OUTPUT AB_SUPERVISE_MAX_OUTPUT_DEFAULT /* run's and exec's */
#define MAX_MAX_OUTPUT (4u << 20)
/* execve: one argument is at most MAX_ARG_STRLEN (32 pages). */
#define MAX_ARG_BYTES (128u << 10)
#define MAX_ARGS_TOTAL (1u << 20)

/* ------------------------------------------------------------------ */
/* Schemas */

static void
prop (struct ab_gen *g, const char *name, const char *type, const char *desc)
{
  ab_gen_key (g, name);
  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "type", type);
  ab_gen_kv_str (g, "description", desc);
}

static void
prop_int (struct ab_gen *g, const char *name, uint64_t min, uint64_t max, const char *desc)
{
  prop (g, name, "integer", desc);
  ab_gen_kv_u64 (g, "minimum", min);
  ab_gen_kv_u64 (g, "maximum", max);
  ab_gen_obj_close (g);
}

static void
prop_str (struct ab_gen *g, const char *name, const char *pattern, const char *desc)
{
  prop (g, name, "string", desc);
  if (pattern)
    ab_gen_kv_str (g, "pattern", pattern);
  ab_gen_obj_close (g);
}

static void
prop_strs (struct ab_gen *g, const char *name, size_t min, const char *item_pattern, const char *desc)
{
  prop (g, name, "array", desc);
  ab_gen_key (g, "items");
  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "type", "string");
  if (item_pattern)
    ab_gen_kv_str (g, "pattern", item_pattern);
  ab_gen_obj_close (g);
  if (min)
    ab_gen_kv_u64 (g, "minItems", min);
  ab_gen_obj_close (g);
}

#define HANDLE_PATTERN "^sbx_[0-9a-f]{32}$"
#define DOMAIN_PATTERN "^[A-Za-z0-9]([A-Za-z0-9-]{0,62})(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}))*$"

static void
argv_props (struct ab_gen *g)
{
  prop_strs (g, "argv", 1, NULL,
             "the program and its arguments, e.g. [\"sh\", \"-c\", \"make test\"]; no shell is added");
  prop_str (g, "cwd", "^/", "working directory inside the sandbox (default /workspace)");
  prop (g, "env", "object", "extra environment variables");
  ab_gen_key (g, "propertyNames");
  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "pattern", "^[A-Za-z_][A-Za-z0-9_]*$");
  ab_gen_obj_close (g);
  ab_gen_key (g, "additionalProperties");
  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "type", "string");
  ab_gen_obj_close (g);
  ab_gen_obj_close (g);
}

static void
io_props (struct ab_gen *g)
{
  prop_str (g, "stdin", NULL, "text written to the program's standard input (default: none)");
  prop_int (g, "timeout_ms", 1, MAX_TIMEOUT_MS,
            "wall-clock limit: the call's processes get SIGTERM, and are killed timeout_grace_ms later "
            "(default 60000)");
  prop_int (g, "timeout_grace_ms", 0, MAX_TIMEOUT_MS,
            "time between SIGTERM and SIGKILL at the limit, for cleanup (default 5000; 0: killed at once)");
  prop_int (g, "max_output_bytes", 1, MAX_MAX_OUTPUT,
            "bytes of stdout and of stderr returned; the rest is counted, not kept (default 1048576)");
}

static void
background_prop (struct ab_gen *g)
{
  prop (g, "background", "boolean",
        "true: start it and return at once (structuredContent.reason \"background\", background.pid and "
        "background.log); it runs until it ends or sandbox_destroy, its stdout and stderr go to the log file "
        "in the sandbox, its stdin is empty; it takes no stdin, timeout_ms or max_output_bytes. Default false: "
        "the call waits for the command, and whatever it leaves running (`&`, setsid) is killed when it ends");
  ab_gen_obj_close (g);
}

static void
sandbox_props (struct ab_gen *g)
{
  prop_int (g, "memory_bytes", 1u << 20, UINT64_C (1) << 40, "memory limit of the sandbox");
  prop_int (g, "pids_limit", 1, 65536, "limit on processes and threads in the sandbox");
  prop_str (g, "workspace", "^/",
            "host directory mounted read-write at /workspace (must be inside a directory the server "
            "was started with --workspace-root); default: an empty tmpfs");
  prop (g, "workspace_mode", "string",
        "\"bind\" (default): the workspace is changed as the command runs; \"overlay\": the workspace is left "
        "as it is, the result's workspaceChanges lists what the command changed, and workspace_apply or "
        "workspace_discard decides (needs workspace)");
  ab_gen_key (g, "enum");
  ab_gen_arr_open (g);
  ab_gen_str (g, "bind");
  ab_gen_str (g, "overlay");
  ab_gen_arr_close (g);
  ab_gen_obj_close (g);
  prop_strs (g, "allow_domains", 0, DOMAIN_PATTERN,
             "host names the sandbox may reach through the egress proxy; default: no network");
}

static void
schema_open (struct ab_gen *g, const char *key)
{
  ab_gen_key (g, key);
  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "type", "object");
  ab_gen_key (g, "properties");
  ab_gen_obj_open (g);
}

static void
schema_close (struct ab_gen *g, const char *const *required, size_t n)
{
  ab_gen_obj_close (g);
  ab_gen_kv_strv (g, "required", (char *const *)required, n);
  ab_gen_kv_bool (g, "additionalProperties", false);
  ab_gen_obj_close (g);
}

static void
annotations (struct ab_gen *g, const char *title, bool destructive, bool idempotent, bool open_world)
{
  ab_gen_key (g, "annotations");
  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "title", title);
  ab_gen_kv_bool (g, "readOnlyHint", false);
  ab_gen_kv_bool (g, "destructiveHint", destructive);
  ab_gen_kv_bool (g, "idempotentHint", idempotent);
  ab_gen_kv_bool (g, "openWorldHint", open_world);
  ab_gen_obj_close (g);
}

static void
tool_open (struct ab_gen *g, const char *name, const char *title, const char *desc)
{
  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "name", name);
  ab_gen_kv_str (g, "title", title);
  ab_gen_kv_str (g, "description", desc);
}

static void
result_schema (struct ab_gen *g)
{
  static const struct ab_json_limits lim = {
    .max_bytes = 1u << 20,
    .max_depth = 32,
    .max_string = 1u << 16,
    .max_items = 1024,
    .max_nodes = 1u << 16,
  };
  ab_error_t err = { 0 };
  struct ab_json *j
      = ab_json_parse (result_schema_text, strlen (result_schema_text), &lim, "result-schema.json", &err);

  /* Compiled in from docs/result-schema.json: a failure is a build bug. */
  if (j == NULL)
    {
      fprintf (stderr, "agentbox: internal error: %s\n", err.msg);
      abort ();
    }
  ab_gen_key (g, "outputSchema");
  ab_gen_json (g, j);
  ab_json_free (j);
}

/* The end of a tool that runs a command: its required arguments, the
   record as its outputSchema, its annotations. */
static void
command_tool_close (struct ab_gen *g, const char *const *required, size_t n, const char *title)
{
  schema_close (g, required, n);
  result_schema (g);
  annotations (g, title, true, false, true);
  ab_gen_obj_close (g);
}

static void
handle_prop (struct ab_gen *g)
{
  prop_str (g, "handle", HANDLE_PATTERN, "the handle sandbox_create returned");
}

static void
gen_tools (struct ab_gen *g)
{
  static const char *const req_argv[] = { "argv" };
  static const char *const req_handle[] = { "handle" };
  static const char *const req_exec[] = { "handle", "argv" };
  static const char *const req_shell[] = { "handle", "command" };

  ab_gen_key (g, "tools");
  ab_gen_arr_open (g);

  tool_open (
      g, "sandbox_run", "Run a command in a fresh sandbox",
      "Run one command in a new, isolated Linux container that is destroyed afterwards. Returns the exit "
      "code or the signal, the captured stdout and stderr, and which limits (memory, pids, output, "
      "timeout, cpu) the command hit. A command that fails, times out or is killed is reported with "
      "isError and a suggested next step; nothing it does reaches the host outside /workspace.");
  schema_open (g, "inputSchema");
  argv_props (g);
  io_props (g);
  sandbox_props (g);
  command_tool_close (g, req_argv, 1, "Run a command in a fresh sandbox");

  tool_open (g, "sandbox_create", "Create a persistent sandbox",
             "Create a sandbox that stays alive between sandbox_exec and sandbox_shell calls (files written in "
             "it persist, and so does its shell session) and return its handle. Destroy it with "
             "sandbox_destroy when done; all sandboxes are destroyed when the server exits.");
  schema_open (g, "inputSchema");
  sandbox_props (g);
  schema_close (g, NULL, 0);
  schema_open (g, "outputSchema");
  prop_str (g, "handle", HANDLE_PATTERN, "pass it to sandbox_exec, sandbox_shell and sandbox_destroy");
  schema_close (g, req_handle, 1);
  annotations (g, "Create a persistent sandbox", false, false, true);
  ab_gen_obj_close (g);

  tool_open (g, "sandbox_exec", "Run a command in a persistent sandbox",
             "Run one command in a sandbox made by sandbox_create and return the same result as sandbox_run. "
             "Each call is a fresh process: use sandbox_shell for a shell whose cwd, variables and functions "
             "carry over. With background: true the command keeps running (a dev server, a database) until it "
             "ends or sandbox_destroy.");
  schema_open (g, "inputSchema");
  handle_prop (g);
  argv_props (g);
  io_props (g);
  background_prop (g);
  command_tool_close (g, req_exec, 2, "Run a command in a persistent sandbox");

  tool_open (
      g, "sandbox_shell", "Run a shell command line in the sandbox's shell session",
      "Run a bash command line in the shell session of a sandbox made by sandbox_create, like typing it in a "
      "terminal: the working directory, shell and environment variables, functions, aliases, shell options, "
      "umask and traps a call leaves are there in the next call (`cd`, `export`, `source venv/bin/activate` "
      "carry over). Returns the same result as sandbox_run, with the call's own exit status, stdout and stderr, "
      "plus session: whether the call started from the session's state (restored) and whether its changes were "
      "kept (saved: false when the shell did not finish the call -- `exec`, a signal, the timeout -- and the next "
      "call then starts from the state before it; `exit N` ends the call, not the session). The timeout kills "
      "only this call's processes. Processes a call leaves running end with it unless it is started with "
      "background: true.");
  schema_open (g, "inputSchema");
  handle_prop (g);
  prop_str (g, "command", NULL, "the command line, e.g. \"cd app && npm test\" (bash syntax)");
  io_props (g);
  background_prop (g);
  command_tool_close (g, req_shell, 2, "Run a shell command line in the sandbox's shell session");

  tool_open (g, "sandbox_destroy", "Destroy a persistent sandbox",
             "Kill everything running in a sandbox made by sandbox_create and remove it with everything it "
             "created (its /workspace too, unless it is a host directory).");
  schema_open (g, "inputSchema");
  handle_prop (g);
  schema_close (g, req_handle, 1);
  schema_open (g, "outputSchema");
  prop (g, "destroyed", "boolean", "true");
  ab_gen_obj_close (g);
  schema_close (g, NULL, 0);
  annotations (g, "Destroy a persistent sandbox", true, true, false);
  ab_gen_obj_close (g);

  ab_mcp_workspace_tools (g);
  ab_gen_arr_close (g);
}

void
ab_mcp_tools_list (struct ab_mcp_server *s, struct ab_mcp_request *r)
{
  _cleanup_gen_ struct ab_gen *g = NULL;
  struct ab_json *cursor = r->params ? ab_json_member (r->params, "cursor") : NULL;

  if (cursor && cursor->type != AB_J_NULL)
    {
      /* The list fits in one page: no cursor was ever handed out. */
      ab_mcp_send_error (s, r->id_json, AB_RPC_INVALID_PARAMS, "Invalid params: unknown cursor", NULL);
      return;
    }
  g = ab_mcp_result_begin (r->id_json, r->modern);
  gen_tools (g);
  if (r->modern)
    {
      ab_gen_kv_u64 (g, "ttlMs", 3600000);
      ab_gen_kv_str (g, "cacheScope", "public");
    }
  ab_mcp_result_end (g, r->modern);
  ab_mcp_send_gen (s, g);
}

/* ------------------------------------------------------------------ */
/* Arguments */

static void
job_freep (struct ab_mcp_job **j)
{
  ab_mcp_job_free (*j);
}

/* The checked arguments of one call. */
struct call_args
{
  struct ab_strv argv, env, domains;
  char *cwd, *stdin_data, *workspace, *handle, *command;
  size_t stdin_len;
  uint64_t timeout_ms, grace_ms, max_output, memory, pids;
  bool timeout_given, grace_given, max_output_given;
  bool overlay;    /* workspace_mode "overlay" */
  bool background; /* exec, shell */
};

static void
call_args_free (struct call_args *a)
{
  ab_strv_free (&a->argv);
  ab_strv_free (&a->env);
  ab_strv_free (&a->domains);
  free (a->cwd);
  free (a->stdin_data);
  free (a->workspace);
  free (a->handle);
  free (a->command);
}

/* The path part of an ab_jerr message ("arguments: argv[1]: ..."). */
static char *
error_path (const char *msg)
{
  const char *p = ab_str_has_prefix (msg, "arguments: ") ? msg + strlen ("arguments: ") : msg;
  const char *colon = strstr (p, ": ");

  return colon ? xstrndup (p, (size_t)(colon - p)) : NULL;
}

static bool
valid_env_name (const char *k)
{
  if (!((*k >= 'A' && *k <= 'Z') || (*k >= 'a' && *k <= 'z') || *k == '_'))
    return false;
  for (k++; *k; k++)
    if (!((*k >= 'A' && *k <= 'Z') || (*k >= 'a' && *k <= 'z') || (*k >= '0' && *k <= '9') || *k == '_'))
      return false;
  return true;
}

static bool
valid_domain (const char *d)
{
  size_t label = 0, n = strlen (d);

  if (n == 0 || n > 253)
    return false;
  for (; *d; d++)
    {
      if (*d == '.')
        {
          if (label == 0)
            return false;
          label = 0;
          continue;
        }
      if (!((*d >= 'a' && *d <= 'z') || (*d >= 'A' && *d <= 'Z') || (*d >= '0' && *d <= '9')
            || (*d == '-' && label > 0)))
        return false;
      if (++label > 63)
        return false;
    }
  return label > 0;
}

/* A workspace is a host directory the sandbox can write: only inside a root
   the operator allowed.  The canonical path (no symlink, no "..") is what
   the worker mounts, so a link planted in a workspace by an earlier
   sandbox cannot point a later one elsewhere. */
static int
check_workspace (struct ab_mcp_server *s, struct ab_jctx *c, const char *path, char **out)
{
  _cleanup_free_ char *real = NULL;
  struct stat st;
  size_t i;

  if (s->o->workspace_roots.n == 0)
    return ab_jerr (c, "host workspaces are not enabled on this server (start it with --workspace-root DIR)");
  if (path[0] != '/')
    return ab_jerr (c, "must be an absolute path, not `%s`", path);
  real = realpath (path, NULL);
  if (real == NULL)
    return ab_jerr (c, "`%s`: %s", path, strerror (errno));
  if (stat (real, &st) < 0 || !S_ISDIR (st.st_mode))
    return ab_jerr (c, "`%s` is not a directory", path);
  for (i = 0; i < s->o->workspace_roots.n; i++)
    {
      const char *root = s->o->workspace_roots.v[i];
      size_t n = strlen (root);
      if (strncmp (real, root, n) == 0 && (real[n] == '/' || real[n] == '\0' || (n == 1 && root[0] == '/')))
        {
          *out = ab_steal_ptr (&real);
          return 0;
        }
    }
  return ab_jerr (c, "`%s` is outside every --workspace-root of this server", path);
}

enum
{
  WANT_ARGV = 1u << 0,       /* argv, cwd, env */
  WANT_IO = 1u << 1,         /* stdin, timeout_ms, max_output_bytes */
  WANT_SANDBOX = 1u << 2,    /* memory_bytes, pids_limit, workspace, allow_domains */
  WANT_HANDLE = 1u << 3,
  WANT_LINE = 1u << 4,       /* command */
  WANT_BACKGROUND = 1u << 5, /* background */
};

static int
parse_env (struct ab_jctx *c, struct ab_json *args, struct ab_strv *env)
{
  struct ab_json *e;
  size_t mark, i;
  int r = ab_jenter (c, args, "env", AB_J_OBJECT, AB_OPTIONAL, &e, &mark);

  if (r <= 0)
    return r;
  for (i = 0; i < e->u.obj.n; i++)
    {
      struct ab_json_member *m = &e->u.obj.m[i];
      size_t k = ab_jpush_key (c, m->key);
      m->used = true;
      if (!valid_env_name (m->key))
        return ab_jerr (c, "not a valid variable name (letters, digits and _, not starting with a digit)");
      if (m->val->type != AB_J_STRING)
        return ab_jerr (c, "must be a string, not %s", ab_jtype_name (m->val->type));
      ab_strv_push_owned (env, xasprintf ("%s=%s", m->key, m->val->u.str.s));
      ab_jpop (c, k);
    }
  ab_jpop (c, mark);
  return 0;
}

static int
parse_workspace_mode (struct ab_jctx *c, struct ab_json *args, struct call_args *a)
{
  _cleanup_free_ char *mode = NULL;

  if (ab_jget_str (c, args, "workspace_mode", AB_OPTIONAL, &mode) < 0)
    return -1;
  if (mode && strcmp (mode, "bind") != 0 && strcmp (mode, "overlay") != 0)
    return ab_jerr_at (c, "workspace_mode", "must be \"bind\" or \"overlay\", not `%.100s`", mode);
  a->overlay = mode && strcmp (mode, "overlay") == 0;
  if (a->overlay && a->workspace == NULL)
    return ab_jerr_at (c, "workspace_mode", "overlay needs a workspace (the host directory it shows)");
  return 0;
}

static int
parse_argv (struct ab_jctx *c, struct ab_json *args, struct call_args *a, size_t *total)
{
  size_t i;

  if (ab_jget_strv (c, args, "argv", AB_REQUIRED, &a->argv) < 0)
    return -1;
  if (a->argv.n == 0)
    return ab_jerr_at (c, "argv", "must name a program (an empty array runs nothing)");
  for (i = 0; i < a->argv.n; i++)
    {
      size_t n = strlen (a->argv.v[i]);
      *total += n + 1;
      if (n >= MAX_ARG_BYTES)
        {
          ab_jpush_key (c, "argv");
          ab_jpush_index (c, i);
          return ab_jerr (c, "longer than %u bytes (pass large data through stdin)", MAX_ARG_BYTES - 1);
        }
    }
  if (ab_jget_str (c, args, "cwd", AB_OPTIONAL, &a->cwd) < 0)
    return -1;
  if (a->cwd && a->cwd[0] != '/')
    return ab_jerr_at (c, "cwd", "must be an absolute path inside the sandbox, not `%.200s`", a->cwd);
  if (parse_env (c, args, &a->env) < 0)
    return -1;
  for (i = 0; i < a->env.n; i++)
    *total += strlen (a->env.v[i]) + 1;
  return 0;
}

static int
parse_line (struct ab_jctx *c, struct ab_json *args, struct call_args *a, size_t *total)
{
  if (ab_jget_str (c, args, "command", AB_REQUIRED, &a->command) < 0)
    return -1;
  /* one argument of bash's: execve's bound on a single string */
  if (strlen (a->command) >= MAX_ARG_BYTES)
    return ab_jerr_at (c, "command", "longer than %u bytes (pass large data through stdin)", MAX_ARG_BYTES - 1);
  *total += strlen (a->command) + 1;
  return 0;
}

static int
parse_io (struct ab_jctx *c, struct ab_json *args, struct call_args *a)
{
  struct ab_json *in;
  int r;

  if ((in = ab_json_member (args, "stdin")) != NULL && in->type != AB_J_NULL)
    {
      if (in->type != AB_J_STRING)
        return ab_jerr_at (c, "stdin", "must be a string, not %s", ab_jtype_name (in->type));
      a->stdin_data = xmalloc (in->u.str.len + 1);
      memcpy (a->stdin_data, in->u.str.s, in->u.str.len + 1);
      a->stdin_len = in->u.str.len;
    }
  if ((r = ab_jget_u64 (c, args, "timeout_ms", AB_OPTIONAL, MAX_TIMEOUT_MS, &a->timeout_ms)) < 0)
    return -1;
  if (r > 0 && a->timeout_ms == 0)
    return ab_jerr_at (c, "timeout_ms", "must be at least 1");
  a->timeout_given = r > 0;
  if ((r = ab_jget_u64 (c, args, "timeout_grace_ms", AB_OPTIONAL, MAX_TIMEOUT_MS, &a->grace_ms)) < 0)
    return -1;
  a->grace_given = r > 0;
  if ((r = ab_jget_u64 (c, args, "max_output_bytes", AB_OPTIONAL, MAX_MAX_OUTPUT, &a->max_output)) < 0)
    return -1;
  if (r > 0 && a->max_output == 0)
    return ab_jerr_at (c, "max_output_bytes", "must be at least 1");
  a->max_output_given = r > 0;
  return 0;
}

/* A background process runs until it ends or the sandbox does, reads
   nothing and writes to its log: the arguments about waiting for it and
   about its output have nothing to apply to. */
static int
parse_background (struct ab_jctx *c, struct ab_json *args, struct call_args *a)
{
  if (ab_jget_bool (c, args, "background", AB_OPTIONAL, &a->background) < 0)
    return -1;
  if (!a->background)
    return 0;
  if (a->timeout_given || a->grace_given)
    return ab_jerr_at (c, a->timeout_given ? "timeout_ms" : "timeout_grace_ms",
                       "does not apply with background: true (a background process runs until "
                       "it ends or sandbox_destroy)");
  if (a->stdin_data)
    return ab_jerr_at (c, "stdin", "does not apply with background: true (its stdin is empty)");
  if (a->max_output_given)
    return ab_jerr_at (c, "max_output_bytes",
                    "does not apply with background: true (its output goes to its log file in the sandbox)");
  return 0;
}

static int
parse_sandbox (struct ab_mcp_server *s, struct ab_jctx *c, struct ab_json *args, struct call_args *a)
{
  _cleanup_free_ char *workspace = NULL;
  size_t i;
  int r;

  if ((r = ab_jget_u64 (c, args, "memory_bytes", AB_OPTIONAL, UINT64_C (1) << 40, &a->memory)) < 0)
    return -1;
  if (r > 0 && a->memory < (1u << 20))
    return ab_jerr_at (c, "memory_bytes", "must be at least 1048576 (1 MiB)");
  if ((r = ab_jget_u64 (c, args, "pids_limit", AB_OPTIONAL, 65536, &a->pids)) < 0)
    return -1;
  if (r > 0 && a->pids == 0)
    return ab_jerr_at (c, "pids_limit", "must be at least 1");
  if (ab_jget_str (c, args, "workspace", AB_OPTIONAL, &workspace) < 0)
    return -1;
  if (workspace)
    {
      size_t m = ab_jpush_key (c, "workspace");
      if (check_workspace (s, c, workspace, &a->workspace) < 0)
        return -1;
      ab_jpop (c, m);
    }
  if (parse_workspace_mode (c, args, a) < 0)
    return -1;
  if (ab_jget_strv (c, args, "allow_domains", AB_OPTIONAL, &a->domains) < 0)
    return -1;
  for (i = 0; i < a->domains.n; i++)
    if (!valid_domain (a->domains.v[i]))
      {
        ab_jpush_key (c, "allow_domains");
        ab_jpush_index (c, i);
        return ab_jerr (c, "`%.100s` is not a host name", a->domains.v[i]);
      }
  return 0;
}

static int
parse_args (struct ab_mcp_server *s, struct ab_jctx *c, struct ab_json *args, unsigned want,
            struct call_args *a)
{
  struct ab_strv unused = { 0 };
  size_t total = 0;

  a->timeout_ms = DEFAULT_TIMEOUT_MS;
  a->max_output = DEFAULT_MAX_OUTPUT;
  if ((want & WANT_HANDLE) && ab_jget_str (c, args, "handle", AB_REQUIRED, &a->handle) < 0)
    return -1;
  if ((want & WANT_ARGV) && parse_argv (c, args, a, &total) < 0)
    return -1;
  if ((want & WANT_LINE) && parse_line (c, args, a, &total) < 0)
    return -1;
  if ((want & WANT_IO) && parse_io (c, args, a) < 0)
    return -1;
  if ((want & WANT_BACKGROUND) && parse_background (c, args, a) < 0)
    return -1;
  if ((want & WANT_SANDBOX) && parse_sandbox (s, c, args, a) < 0)
    return -1;
  if (total > MAX_ARGS_TOTAL)
    return ab_jerr (c, "argv and env together exceed %u bytes (pass large data through stdin)",
                    MAX_ARGS_TOTAL);
  ab_json_collect_unused (args, "", &unused);
  if (unused.n)
    {
      ab_jerr_at (c, unused.v[0], "unknown argument (see the tool's inputSchema)");
      ab_strv_free (&unused);
      return -1;
    }
  return 0;
}

static void
push_num (struct ab_strv *v, const char *opt, uint64_t n, const char *unit)
{
  ab_strv_push (v, opt);
  ab_strv_push_owned (v, xasprintf ("%llu%s", (unsigned long long)n, unit));
}

static void
worker_prefix (struct ab_mcp_server *s, struct ab_strv *v, const char *cmd)
{
  ab_strv_push (v, "--root");
  ab_strv_push (v, s->o->state_root);
  if (s->o->debug)
    ab_strv_push (v, "--debug");
  if (s->o->rootless)
    {
      ab_strv_push (v, "--rootless");
      ab_strv_push (v, s->o->rootless);
    }
  if (s->o->cgroup_parent)
    {
      ab_strv_push (v, "--cgroup-parent");
      ab_strv_push (v, s->o->cgroup_parent);
    }
  ab_strv_push (v, cmd);
}

/* A worker that outlives the server would keep its container: with the
   server's death it cancels (SIGUSR1), killing the whole container. */
static void
die_with_us (struct ab_strv *v)
{
  char pid[24];

  snprintf (pid, sizeof pid, "%ld", (long) getpid ());
  ab_strv_push (v, "--die-with-parent");
  ab_strv_push (v, pid);
}

static void
record_opts (struct ab_strv *v, uint64_t seq, const char *fd)
{
  ab_strv_push (v, "--record-fd");
  ab_strv_push (v, fd);
  /* The worker's record carries our sequence number; the server puts the
     client's id back when it forwards the frame. */
  push_num (v, "--record-id", seq, "");
}

static void
cwd_env_opts (struct ab_strv *v, const struct call_args *a)
{
  size_t i;

  if (a->cwd)
    {
      ab_strv_push (v, "--cwd");
      ab_strv_push (v, a->cwd);
    }
  for (i = 0; i < a->env.n; i++)
    {
      ab_strv_push (v, "--env");
      ab_strv_push (v, a->env.v[i]);
    }
}

/* shell: fd 3 is the session's status pipe, passed on to the shell
   (runtime/mcp-shell.c); the record is on fd 4 then */
static void
command_opts (struct ab_strv *v, const struct call_args *a, uint64_t seq, bool shell)
{
  die_with_us (v);
  push_num (v, "--timeout", a->timeout_ms, "ms");
  if (a->grace_given)
    push_num (v, "--timeout-grace", a->grace_ms, "ms");
  push_num (v, "--max-output", a->max_output, "");
  cwd_env_opts (v, a);
  if (shell)
    {
      ab_strv_push (v, "--preserve-fds");
      ab_strv_push (v, "1");
    }
  record_opts (v, seq, shell ? "4" : "3");
  ab_strv_push (v, "--no-stream");
}

/* exec --detach: the process stays in the sandbox's cgroup, not in a
   sub-cgroup of the call's, so the call's end does not kill it; the pid
   file says which it is. */
static void
background_opts (struct ab_mcp_server *s, struct ab_strv *v, const struct call_args *a, uint64_t seq, bool shell)
{
  ab_strv_push (v, "--detach");
  ab_strv_push (v, "--pid-file");
  ab_strv_push_owned (v, ab_mcp_background_pid_file (s, seq));
  cwd_env_opts (v, a);
  if (shell)
    {
      ab_strv_push (v, "--preserve-fds");
      ab_strv_push (v, "1");
    }
}

static void
sandbox_opts (struct ab_strv *v, const struct call_args *a)
{
  size_t i;

  if (a->workspace)
    {
      ab_strv_push (v, "--workspace");
      ab_strv_push (v, a->workspace);
    }
  if (a->overlay)
    {
      ab_strv_push (v, "--workspace-mode");
      ab_strv_push (v, "overlay");
    }
  if (a->memory)
    push_num (v, "--memory", a->memory, "");
  if (a->pids)
    push_num (v, "--pids", a->pids, "");
  for (i = 0; i < a->domains.n; i++)
    {
      ab_strv_push (v, "--allow-domain");
      ab_strv_push (v, a->domains.v[i]);
    }
}

static void
program (struct ab_strv *v, const char *id, const struct call_args *a)
{
  size_t i;

  ab_strv_push (v, id);
  /* After "--" nothing the model chose can be read as an option. */
  ab_strv_push (v, "--");
  for (i = 0; i < a->argv.n; i++)
    ab_strv_push (v, a->argv.v[i]);
}

static struct ab_mcp_job *
build_job (struct ab_mcp_server *s, enum ab_mcp_tool tool, struct call_args *a)
{
  struct ab_mcp_job *j = xzalloc (sizeof *j);

  j->tool = tool;
  j->pidfd = -1;
  pthread_mutex_lock (&s->lock);
  j->seq = ++s->next_seq;
  pthread_mutex_unlock (&s->lock);
  j->max_record = 40 * a->max_output + (1u << 20);
  /* an overlay's change list (a persistent sandbox's too): deletions are
     never capped */
  if (a->overlay || tool == AB_TOOL_EXEC || tool == AB_TOOL_SHELL)
    j->max_record += 64u << 20;
  if (tool == AB_TOOL_RUN || tool == AB_TOOL_CREATE)
    j->container_id
        = xasprintf ("mcp-%ld-%llu", (long)getpid (), (unsigned long long)ab_mcp_next_container (s));
  switch (tool)
    {
    case AB_TOOL_RUN:
      worker_prefix (s, &j->args, "run");
      ab_strv_push (&j->args, "--default");
      sandbox_opts (&j->args, a);
      command_opts (&j->args, a, j->seq, false);
      program (&j->args, j->container_id, a);
      break;
    case AB_TOOL_CREATE:
      worker_prefix (s, &j->args, "run");
      ab_strv_push (&j->args, "--default");
      ab_strv_push (&j->args, "--detach");
      sandbox_opts (&j->args, a);
      /* a record only if it fails: the class, step and errno of the failure */
      record_opts (&j->args, j->seq, "3");
      ab_strv_push (&j->args, j->container_id);
      break;
    case AB_TOOL_EXEC:
    case AB_TOOL_SHELL:
      worker_prefix (s, &j->args, "exec");
      if (a->background)
        background_opts (s, &j->args, a, j->seq, tool == AB_TOOL_SHELL);
      else
        command_opts (&j->args, a, j->seq, tool == AB_TOOL_SHELL);
      break;
    case AB_TOOL_DESTROY:
    case AB_TOOL_WS_APPLY:
    case AB_TOOL_WS_DISCARD:
      break;
    }
  j->handle = ab_steal_ptr (&a->handle);
  j->stdin_data = ab_steal_ptr (&a->stdin_data);
  j->stdin_len = a->stdin_len;
  j->background = a->background;
  /* the container comes from the handle when the job runs */
  if (tool == AB_TOOL_EXEC)
    {
      j->prog = a->argv;
      memset (&a->argv, 0, sizeof a->argv);
    }
  if (tool == AB_TOOL_SHELL)
    ab_strv_push_owned (&j->prog, ab_steal_ptr (&a->command));
  return j;
}

struct ab_mcp_job *
ab_mcp_tools_call (struct ab_mcp_server *s, struct ab_mcp_request *r)
{
  static const struct
  {
    const char *name;
    enum ab_mcp_tool tool;
    unsigned want;
  } tools[] = {
    { "sandbox_run", AB_TOOL_RUN, WANT_ARGV | WANT_IO | WANT_SANDBOX },
    { "sandbox_create", AB_TOOL_CREATE, WANT_SANDBOX },
    { "sandbox_exec", AB_TOOL_EXEC, WANT_HANDLE | WANT_ARGV | WANT_IO | WANT_BACKGROUND },
    { "sandbox_shell", AB_TOOL_SHELL, WANT_HANDLE | WANT_LINE | WANT_IO | WANT_BACKGROUND },
    { "sandbox_destroy", AB_TOOL_DESTROY, WANT_HANDLE },
    { "workspace_apply", AB_TOOL_WS_APPLY, 0 },
    { "workspace_discard", AB_TOOL_WS_DISCARD, 0 },
  };
  struct ab_json *name = r->params ? ab_json_member (r->params, "name") : NULL;
  struct ab_json *args = r->params ? ab_json_member (r->params, "arguments") : NULL;
  struct ab_json *meta = r->params ? ab_json_member (r->params, "_meta") : NULL;
  struct ab_json *token = meta ? ab_json_member (meta, "progressToken") : NULL;
  struct ab_json empty = { .type = AB_J_OBJECT };
  struct call_args a = { 0 };
  _cleanup_ (job_freep) struct ab_mcp_job *j = NULL;
  ab_error_t err = { 0 };
  struct ab_jctx c;
  size_t i;
  char msg[256];

  if (name == NULL || name->type != AB_J_STRING)
    {
      ab_mcp_send_error (
          s, r->id_json, AB_RPC_INVALID_PARAMS,
          name ? "Invalid params: name must be a string" : "Invalid params: tools/call needs name", NULL);
      return NULL;
    }
  for (i = 0; i < AB_ARRAY_SIZE (tools); i++)
    if (strcmp (name->u.str.s, tools[i].name) == 0)
      break;
  if (i == AB_ARRAY_SIZE (tools))
    {
      snprintf (msg, sizeof msg, "Unknown tool: %.200s", name->u.str.s);
      ab_mcp_send_error (s, r->id_json, AB_RPC_INVALID_PARAMS, msg, NULL);
      return NULL;
    }
  if (args && args->type != AB_J_OBJECT && args->type != AB_J_NULL)
    {
      ab_mcp_send_error (s, r->id_json, AB_RPC_INVALID_PARAMS, "Invalid params: arguments must be an object",
                         NULL);
      return NULL;
    }
  if (token && token->type != AB_J_STRING
      && !(token->type == AB_J_NUMBER && strpbrk (token->u.num, ".eE") == NULL))
    {
      ab_mcp_send_error (s, r->id_json, AB_RPC_INVALID_PARAMS,
                         "Invalid params: _meta.progressToken must be a string or an integer", NULL);
      return NULL;
    }

  ab_jctx_init (&c, "arguments", &err);
  if (tools[i].tool == AB_TOOL_WS_APPLY || tools[i].tool == AB_TOOL_WS_DISCARD)
    {
      j = xzalloc (sizeof *j);
      j->tool = tools[i].tool;
      j->pidfd = -1;
      if (ab_mcp_workspace_args (&c, args && args->type == AB_J_OBJECT ? args : &empty, j) < 0)
        goto invalid;
    }
  else if (parse_args (s, &c, args && args->type == AB_J_OBJECT ? args : &empty, tools[i].want, &a) < 0)
    goto invalid;
  else
    j = build_job (s, tools[i].tool, &a);
  call_args_free (&a);
  j->id_json = xstrdup (r->id_json);
  j->modern = r->modern;
  if (token)
    j->progress_json = ab_mcp_json_text (token);
  return ab_steal_ptr (&j);

invalid:
  {
    _cleanup_free_ char *path = error_path (err.msg);
    ab_mcp_send_tool_error (s, r->id_json, r->modern, "invalid_arguments", path, err.msg, true, "fix_arguments");
    call_args_free (&a);
    return NULL;
  }
}
