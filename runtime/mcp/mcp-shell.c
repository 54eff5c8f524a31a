/* MCP server: the shell session of a persistent sandbox (sandbox_shell)
 * and background processes (`background: true`).
 *
 * A session is not a long-lived shell process.  Each call is one
 * `agentbox exec` of bash, supervised like any sandbox_exec: its own
 * sub-cgroup (a timeout or the call's end kills everything the call
 * started, setsid'd grandchildren too, and nothing else), its own stdout
 * and stderr pipes, its own stdin, its own record.  What makes it a
 * session is its state: the call's bash first loads the state the
 * previous call left (cwd, variables with their attributes, the exported
 * environment, functions, aliases, shell options, umask, traps), runs the
 * command line in that shell with `eval`, and on the way out -- after the
 * command, or on `exit` through the EXIT trap -- writes the state back.
 * A long-lived shell would have to be moved between cgroups by pid to tell
 * a call's processes from its own (a race with pid reuse that could move
 * a host process into the sandbox's cgroup), or keep the call's processes
 * in its own cgroup, where a timeout cannot kill them without killing it.
 *
 * The script is runtime/mcp/mcp-session.sh.  The state lives in the sandbox
 * (/run/.agentbox-shell.0 and .1: written in turn, so that a call killed
 * while writing leaves the other intact); the server keeps which of the
 * two is current.  It learns what happened on fd 3 of the call's bash, a
 * pipe of its own that the command line does not get: "r" NUL when the
 * state was loaded, "s" CWD NUL when it was saved.  The call's exit status, output and limits come from the worker's
 * record as for sandbox_exec; nothing is read out of the output stream, so
 * no output can be taken for the session's bookkeeping.  The sandbox's
 * code can write to that pipe through /proc like to any pipe of its own
 * processes: it can only mislead the bookkeeping of its own session.
 *
 * A background process is an `agentbox exec --detach`: it stays in the
 * sandbox's cgroup, not in a call's, and lives until it ends or until
 * sandbox_destroy.  Its output goes to a log file in the sandbox's /tmp.
 * Its record says reason "background", with its pid in the sandbox.
 *
 * docs/protocol.md describes the session's protocol; docs/result-record.md
 * the records. */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <yajl/yajl_parse.h>

#include "base/log.h"
#include "base/util.h"
#include "runtime/mcp/mcp-internal.h"
#include "runtime/supervise/record.h"

/* ------------------------------------------------------------------ */
/* The script: runtime/mcp/mcp-session.sh, made into a C string at build
   time (runtime/mcp/local.mk). */

static const char session_script[] =
#include "runtime/mcp/mcp-session.inc"
    ;

static void
session_program (struct ab_strv *v, const char *mode, int restore, const char *third, const char *command)
{
  ab_strv_push (v, "bash");
  ab_strv_push (v, "--noprofile");
  ab_strv_push (v, "--norc");
  ab_strv_push (v, "-c");
  ab_strv_push (v, session_script);
  ab_strv_push (v, "bash"); /* $0 */
  ab_strv_push (v, mode);
  ab_strv_push_owned (v, restore < 0 ? xstrdup ("") : xasprintf ("%d", restore));
  ab_strv_push (v, third);
  ab_strv_push (v, command);
}

void
ab_mcp_shell_program (struct ab_strv *v, const char *command, int restore, int write)
{
  char w[16];

  snprintf (w, sizeof w, "%d", write);
  session_program (v, "call", restore, w, command);
}

void
ab_mcp_shell_background_program (struct ab_strv *v, const char *command, int restore, const char *log)
{
  session_program (v, "background", restore, log, command);
}

void
ab_mcp_background_program (struct ab_strv *v, const char *log, char *const *argv, size_t argc)
{
  size_t i;

  ab_strv_push (v, "sh");
  ab_strv_push (v, "-c");
  /* exec: the pid agentbox reports is the program's.  A program named -x
     would be an option of bash's exec (sh may be bash): not found, as
     execve would say in the foreground. */
  ab_strv_push (v, "exec </dev/null >>\"$0\" 2>&1 || exit 126\n"
                   "case $1 in -*) echo \"$1: not found\" >&2; exit 127 ;; esac\n"
                   "exec \"$@\"");
  ab_strv_push (v, log);
  for (i = 0; i < argc; i++)
    ab_strv_push (v, argv[i]);
}

char *
ab_mcp_background_log (uint64_t seq)
{
  return xasprintf ("/tmp/agentbox-bg-%llu.log", (unsigned long long)seq);
}

char *
ab_mcp_background_pid_file (struct ab_mcp_server *s, uint64_t seq)
{
  return xasprintf ("%s/.bg-%llu.pid", s->o->state_root, (unsigned long long)seq);
}

/* ------------------------------------------------------------------ */
/* What the call's bash said on fd 3 */

void
ab_mcp_shell_status_parse (const char *buf, size_t len, struct ab_mcp_shell_status *st)
{
  size_t i = 0;

  memset (st, 0, sizeof *st);
  while (i < len)
    {
      const char *m = buf + i, *end = memchr (m, '\0', len - i);
      size_t n;
      if (end == NULL)
        break; /* cut short: not a message */
      n = (size_t)(end - m);
      if (n == 1 && m[0] == 'r')
        st->restored = true;
      else if (n > 1 && m[0] == 's' && m[1] == '/' && n - 1 < sizeof st->cwd)
        {
          /* the last one: the shell's own is written as it exits */
          st->saved = true;
          memcpy (st->cwd, m + 1, n - 1);
          st->cwd[n - 1] = '\0';
        }
      i += n + 1;
    }
}

char *
ab_mcp_session_json (const struct ab_mcp_shell_status *st)
{
  _cleanup_gen_ struct ab_gen *g = ab_gen_new (false);

  ab_gen_obj_open (g);
  ab_gen_kv_bool (g, "restored", st->restored);
  ab_gen_kv_bool (g, "saved", st->saved);
  ab_gen_key (g, "cwd");
  if (st->saved)
    ab_gen_bytes (g, st->cwd, strlen (st->cwd));
  else
    ab_gen_null (g);
  ab_gen_obj_close (g);
  return ab_gen_steal (g, false, NULL);
}

/* ------------------------------------------------------------------ */
/* Background processes: their pid in the sandbox, their record */

pid_t
ab_mcp_sandbox_pid (pid_t host_pid)
{
  _cleanup_free_ char *status = NULL;
  char path[64];
  const char *p;
  long v = -1;
  int n = 0;

  snprintf (path, sizeof path, "/proc/%d/status", (int)host_pid);
  if (ab_read_file_at (AT_FDCWD, path, 1u << 16, &status, NULL, NULL) < 0
      || (p = strstr (status, "\nNSpid:")) == NULL)
    return -1;
  /* "NSpid:\tHOST\t...\tINNERMOST": the last is the pid in the sandbox */
  for (p += strlen ("\nNSpid:");;)
    {
      char *end;
      while (*p == '\t' || *p == ' ')
        p++;
      if (*p < '0' || *p > '9')
        break;
      v = strtol (p, &end, 10), n++, p = end;
    }
  /* one number: not in a pid namespace of its own, not a sandbox process
     (the pid was reused before we looked) */
  return n >= 2 && v > 0 ? (pid_t)v : -1;
}

char *
ab_mcp_background_frame (uint64_t seq, const char *container_id, uint64_t duration_ns, pid_t pid,
                         const char *log, size_t *len)
{
  struct ab_outcome o = { 0 };
  _cleanup_free_ char *id = xasprintf ("%llu", (unsigned long long)seq), *frame = NULL, *bg = NULL;
  _cleanup_gen_ struct ab_gen *g = ab_gen_new (false);
  static const char *const keys[] = { "exitCode", "reason" };
  static const char *const values[] = { "null", "\"background\"" };
  struct ab_mcp_amend a = { .set_keys = keys, .set_values = values, .n_set = 2, .add_key = "background" };
  size_t flen;

  /* started: exit 0 is the one outcome that is not an error; exitCode and
     reason are then set to what they are, null and "background" */
  o.reason = AB_REASON_EXITED;
  o.exited = true;
  o.id = (char *)container_id;
  o.duration_ns = duration_ns;
  frame = ab_record_frame (&o, id, &flen);
  ab_gen_obj_open (g);
  ab_gen_key (g, "pid");
  if (pid > 0)
    ab_gen_i64 (g, pid);
  else
    ab_gen_null (g);
  ab_gen_kv_str (g, "log", log);
  ab_gen_obj_close (g);
  bg = ab_gen_steal (g, false, NULL);
  a.add_json = bg;
  return ab_mcp_record_amend (frame, flen, &a, len);
}

/* ------------------------------------------------------------------ */
/* Amending a record: members of structuredContent set or added, in the
   object and in the text block that mirrors it, everything else copied.
   A stream (yajl's parser into our generator), not a document model:
   output may hold any byte, NUL included, and megabytes of it. */

#define AMEND_DEPTH 64

static char *amend (const char *json, size_t len, const struct ab_mcp_amend *a, bool frame, size_t *out_len);

struct amend
{
  struct ab_gen *g;
  const struct ab_mcp_amend *a;
  bool frame; /* a whole frame; else structuredContent alone */
  struct
  {
    bool array, target;
    size_t index;
    char key[32];
  } st[AMEND_DEPTH];
  size_t depth;
  size_t skip;    /* > 0: inside a value being replaced */
  bool skip_next; /* the next value is being replaced */
  bool amended;   /* the target object was seen */
  bool failed;
};

static bool
key_is (const struct amend *c, size_t level, const char *key)
{
  return level < c->depth && !c->st[level].array && strcmp (c->st[level].key, key) == 0;
}

/* Whether the value that starts now is the object to amend. */
static bool
at_target (const struct amend *c)
{
  if (!c->frame)
    return c->depth == 0;
  return c->depth == 2 && key_is (c, 0, "result") && key_is (c, 1, "structuredContent");
}

/* Whether the string that starts now is the text block mirroring it. */
static bool
at_mirror (const struct amend *c)
{
  return c->frame && c->depth == 4 && key_is (c, 0, "result") && key_is (c, 1, "content") && c->st[2].array
         && c->st[2].index == 0 && key_is (c, 3, "text");
}

/* A value is about to start: false when it is dropped (being replaced). */
static bool
value_begins (struct amend *c, bool container)
{
  if (c->skip)
    {
      if (container)
        c->skip++;
      return false;
    }
  if (c->skip_next)
    {
      c->skip_next = false;
      if (container)
        c->skip = 1;
      return false;
    }
  return true;
}

static void
value_ends (struct amend *c)
{
  if (c->depth && c->st[c->depth - 1].array)
    c->st[c->depth - 1].index++;
}

static int
cb_null (void *ctx)
{
  struct amend *c = ctx;
  if (value_begins (c, false))
    ab_gen_null (c->g), value_ends (c);
  return 1;
}

static int
cb_boolean (void *ctx, int b)
{
  struct amend *c = ctx;
  if (value_begins (c, false))
    ab_gen_bool (c->g, b != 0), value_ends (c);
  return 1;
}

static int
cb_number (void *ctx, const char *s, size_t len)
{
  struct amend *c = ctx;
  if (value_begins (c, false))
    {
      _cleanup_free_ char *text = xstrndup (s, len);
      ab_gen_raw_number (c->g, text);
      value_ends (c);
    }
  return 1;
}

static int
cb_string (void *ctx, const unsigned char *s, size_t len)
{
  struct amend *c = ctx;
  if (!value_begins (c, false))
    return 1;
  if (at_mirror (c))
    {
      size_t n;
      /* the text is structuredContent serialized: amended the same way */
      _cleanup_free_ char *text = amend ((const char *)s, len, c->a, false, &n);
      if (text == NULL)
        return c->failed = true, 0;
      ab_gen_bytes (c->g, text, n);
    }
  else
    ab_gen_bytes (c->g, (const char *)s, len);
  value_ends (c);
  return 1;
}

static int
open_container (struct amend *c, bool array)
{
  bool target;

  if (!value_begins (c, true))
    return 1;
  if (c->depth == AMEND_DEPTH)
    return c->failed = true, 0;
  target = !array && at_target (c);
  memset (&c->st[c->depth], 0, sizeof c->st[c->depth]);
  c->st[c->depth].array = array;
  c->st[c->depth].target = target;
  c->depth++;
  if (array)
    ab_gen_arr_open (c->g);
  else
    ab_gen_obj_open (c->g);
  return 1;
}

static int
close_container (struct amend *c, bool array)
{
  if (c->skip)
    {
      c->skip--;
      if (c->skip == 0)
        value_ends (c);
      return 1;
    }
  if (c->depth == 0)
    return c->failed = true, 0;
  if (!array && c->st[c->depth - 1].target)
    {
      if (c->a->add_key)
        {
          ab_gen_key (c->g, c->a->add_key);
          ab_gen_raw_number (c->g, c->a->add_json);
        }
      c->amended = true;
    }
  c->depth--;
  if (array)
    ab_gen_arr_close (c->g);
  else
    ab_gen_obj_close (c->g);
  value_ends (c);
  return 1;
}

static int
cb_start_map (void *ctx)
{
  return open_container (ctx, false);
}

static int
cb_end_map (void *ctx)
{
  return close_container (ctx, false);
}

static int
cb_start_array (void *ctx)
{
  return open_container (ctx, true);
}

static int
cb_end_array (void *ctx)
{
  return close_container (ctx, true);
}

static int
cb_map_key (void *ctx, const unsigned char *key, size_t len)
{
  struct amend *c = ctx;
  _cleanup_free_ char *k = NULL;
  size_t i;

  if (c->skip)
    return 1;
  k = xstrndup ((const char *)key, len);
  snprintf (c->st[c->depth - 1].key, sizeof c->st[c->depth - 1].key, "%s", len < 32 ? k : "");
  ab_gen_key (c->g, k);
  if (c->st[c->depth - 1].target)
    for (i = 0; i < c->a->n_set; i++)
      if (strcmp (k, c->a->set_keys[i]) == 0)
        {
          ab_gen_raw_number (c->g, c->a->set_values[i]);
          c->skip_next = true;
        }
  return 1;
}

static const yajl_callbacks amend_callbacks = {
  .yajl_null = cb_null,
  .yajl_boolean = cb_boolean,
  .yajl_number = cb_number,
  .yajl_string = cb_string,
  .yajl_start_map = cb_start_map,
  .yajl_map_key = cb_map_key,
  .yajl_end_map = cb_end_map,
  .yajl_start_array = cb_start_array,
  .yajl_end_array = cb_end_array,
};

static char *
amend (const char *json, size_t len, const struct ab_mcp_amend *a, bool frame, size_t *out_len)
{
  struct amend c = { .a = a, .frame = frame };
  yajl_handle h;
  yajl_status st;
  char *out = NULL;

  c.g = ab_gen_new (false);
  h = yajl_alloc (&amend_callbacks, NULL, &c);
  if (h == NULL)
    abort ();
  st = yajl_parse (h, (const unsigned char *)json, len);
  if (st == yajl_status_ok)
    st = yajl_complete_parse (h);
  yajl_free (h);
  if (st == yajl_status_ok && !c.failed && c.amended && c.depth == 0)
    out = ab_gen_steal (c.g, frame, out_len);
  ab_gen_free (c.g);
  return out;
}

char *
ab_mcp_record_amend (const char *frame, size_t len, const struct ab_mcp_amend *a, size_t *out_len)
{
  /* the frame's line feed is not part of the document */
  if (len && frame[len - 1] == '\n')
    len--;
  return amend (frame, len, a, true, out_len);
}
