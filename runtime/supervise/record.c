/* The result record (runtime/supervise/record.h, docs/result-record.md). */
#include "config.h"

#include <signal.h>
#include <string.h>

#include "runtime/supervise/record.h"
#include "base/util.h"
#include "base/gen.h"
#include "base/json.h"

/* The version of the record's shape, in _meta; bumped on incompatible change. */
#define RECORD_VERSION 1

static int
ab_record_error_code (int cls)
{
  if (cls < 0 || cls >= AB_EC__COUNT)
    cls = AB_EC_INTERNAL;
  return AB_RECORD_CODE_BASE - cls;
}

/* Errors that say "not now" rather than "not like this". */
static bool
errno_transient (int e)
{
  return e == EAGAIN || e == ENOMEM || e == EBUSY || e == EINTR || e == ETIMEDOUT || e == ENOSPC
         || e == EMFILE || e == ENFILE;
}

static bool
errno_permission (int e)
{
  return e == EPERM || e == EACCES || e == EROFS;
}

/* Whether a setup error is worth retrying unchanged, and what to do
   instead ("retry", "fix_arguments", "stop_and_request_human", ...). */
static bool
ab_record_error_retryable (const ab_error_t *e)
{
  if (errno_transient (e->errnum))
    return true;
  if (errno_permission (e->errnum))
    return false;
  switch (e->cls)
    {
    case AB_EC_INTERNAL:
    case AB_EC_EXISTS:
      return true;
    default:
      return false;
    }
}

static const char *
ab_record_error_action (const ab_error_t *e)
{
  if (errno_transient (e->errnum))
    return "retry_later";
  /* A working directory that does not exist in the sandbox: the call
     named it, the host is fine. */
  if (strcmp (e->step, "cwd") == 0)
    return "fix_arguments";
  switch (e->cls)
    {
    case AB_EC_USAGE:
    case AB_EC_CONFIG:
      return "fix_arguments";
    case AB_EC_NOTFOUND:
    case AB_EC_STATE:
      return "create_new_sandbox";
    case AB_EC_EXISTS:
      return "retry";
    case AB_EC_EXEC:
      return "fix_command";
    case AB_EC_RESOURCE:
      return "reduce_limits";
    case AB_EC_INTERNAL:
      return "retry_once_then_report";
    default:
      /* setup, hooks, permissions: the host must change, not the call */
      return "stop_and_request_human";
    }
}

/* Standard base64 (RFC 4648, with padding), NUL-terminated. */
static char *
ab_base64 (const void *data, size_t len, size_t *out_len)
{
  static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const unsigned char *p = data;
  size_t n = (len + 2) / 3 * 4, i, o = 0;
  char *out = xmalloc (n + 1);

  for (i = 0; i + 2 < len; i += 3)
    {
      unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];
      out[o++] = tab[v >> 18 & 63];
      out[o++] = tab[v >> 12 & 63];
      out[o++] = tab[v >> 6 & 63];
      out[o++] = tab[v & 63];
    }
  if (i < len)
    {
      unsigned v = (unsigned)p[i] << 16 | (i + 1 < len ? (unsigned)p[i + 1] << 8 : 0);
      out[o++] = tab[v >> 18 & 63];
      out[o++] = tab[v >> 12 & 63];
      out[o++] = i + 1 < len ? tab[v >> 6 & 63] : '=';
      out[o++] = '=';
    }
  out[o] = '\0';
  if (out_len)
    *out_len = o;
  return out;
}

/* The frame's "id": id_json when it is a JSON integer or string, else
   null.  It is parsed and generated again rather than copied: a malformed
   --record-id must not make the frame invalid JSON, and whitespace around a
   valid one (" 7\n") must not split the frame's single line. */
static void
gen_id (struct ab_gen *g, const char *id_json)
{
  static const struct ab_json_limits lim = {
    .max_bytes = 64u << 10,
    .max_depth = 1,
    .max_string = 64u << 10,
    .max_items = 1,
    .max_nodes = 1,
  };
  ab_error_t err = { 0 };
  struct ab_json *j;
  bool ok;

  ab_gen_key (g, "id");
  j = id_json ? ab_json_parse (id_json, strlen (id_json), &lim, "id", &err) : NULL;
  ok = j != NULL && (j->type == AB_J_STRING || (j->type == AB_J_NUMBER && strpbrk (j->u.num, ".eE") == NULL));
  if (ok)
    ab_gen_json (g, j);
  else
    ab_gen_null (g);
  ab_json_free (j);
}

static void
gen_signal (struct ab_gen *g, int sig)
{
  const char *abbrev = sig > 0 ? sigabbrev_np (sig) : NULL;
  char buf[32];

  if (abbrev == NULL)
    snprintf (buf, sizeof buf, "SIG%d", sig);
  else
    snprintf (buf, sizeof buf, "SIG%s", abbrev);
  ab_gen_str (g, buf);
}

static void
gen_limits (struct ab_gen *g, unsigned limits)
{
  static const struct
  {
    unsigned bit;
    const char *name;
  } names[] = {
    { AB_LIMIT_MEMORY, "memory" },   { AB_LIMIT_PIDS, "pids" }, { AB_LIMIT_OUTPUT, "output" },
    { AB_LIMIT_TIMEOUT, "timeout" }, { AB_LIMIT_CPU, "cpu" }, { AB_LIMIT_WORKSPACE, "workspace" },
    { AB_LIMIT_FILE_SIZE, "file_size" }, { AB_LIMIT_TMPFS, "tmpfs" },
  };
  size_t i;

  ab_gen_arr_open (g);
  for (i = 0; i < AB_ARRAY_SIZE (names); i++)
    if (limits & names[i].bit)
      ab_gen_str (g, names[i].name);
  ab_gen_arr_close (g);
}

/* violations_json comes from another module: re-emit it only when it is a
   JSON array of objects, so that the frame stays valid whatever it holds. */
static void
gen_violations (struct ab_gen *g, const char *violations_json, bool *bad)
{
  static const struct ab_json_limits lim = {
    .max_bytes = 1u << 20,
    .max_depth = 16,
    .max_string = 64u << 10,
    .max_items = 4096,
    .max_nodes = 1u << 16,
  };
  ab_error_t err = { 0 };
  struct ab_json *j = NULL;
  size_t i;

  *bad = false;
  if (violations_json != NULL)
    {
      j = ab_json_parse (violations_json, strlen (violations_json), &lim, "violations", &err);
      if (j == NULL || j->type != AB_J_ARRAY)
        *bad = true;
      for (i = 0; !*bad && i < j->u.arr.n; i++)
        if (j->u.arr.items[i]->type != AB_J_OBJECT)
          *bad = true;
    }
  if (j == NULL || *bad)
    {
      ab_gen_arr_open (g);
      ab_gen_arr_close (g);
    }
  else
    ab_gen_json (g, j);
  ab_json_free (j);
}

/* JSON text another module made, re-emitted under key only when it parses
   within lim as a value of type t (an array: of objects only), so that the
   frame stays valid whatever it holds. */
static void
gen_checked (struct ab_gen *g, const char *key, const char *text, const struct ab_json_limits *lim,
             enum ab_jtype t, const char *what)
{
  ab_error_t err = { 0 };
  struct ab_json *j;
  size_t i;

  if (text == NULL)
    return;
  j = ab_json_parse (text, strlen (text), lim, what, &err);
  if (j == NULL)
    return;
  for (i = 0; j->type == AB_J_ARRAY && i < j->u.arr.n; i++)
    if (j->u.arr.items[i]->type != AB_J_OBJECT)
      break;
  if (j->type == t && (t != AB_J_ARRAY || i == j->u.arr.n))
    {
      ab_gen_key (g, key);
      ab_gen_json (g, j);
    }
  ab_json_free (j);
}

/* _meta "dev.agentbox/egress": every decision of the egress proxy, allowed
   or refused, when the run had one.  Like the violations, re-emitted only
   when it is a JSON array of objects; the bounds fit the engine's own cap
   on the record (max_decisions, 10000 by default). */
static void
gen_egress (struct ab_gen *g, const char *egress_json)
{
  static const struct ab_json_limits lim = {
    .max_bytes = 16u << 20,
    .max_depth = 2,
    .max_string = 64u << 10,
    .max_items = 1u << 16,
    .max_nodes = 1u << 20,
  };

  gen_checked (g, "dev.agentbox/egress", egress_json, &lim, AB_J_ARRAY, "egress decisions");
}

/* workspaceChanges: an overlay workspace's change set (runtime/lifecycle/wsstore.h),
   a JSON object; deletions are never capped, hence the bounds. */
static void
gen_workspace (struct ab_gen *g, const char *workspace_json)
{
  static const struct ab_json_limits lim = {
    .max_bytes = 64u << 20,
    .max_depth = 4,
    .max_string = 64u << 10,
    .max_items = 1u << 22,
    .max_nodes = 1u << 24,
  };

  gen_checked (g, "workspaceChanges", workspace_json, &lim, AB_J_OBJECT, "workspace changes");
}

/* What the refused attempts of violations_json look like (the rule of
   docs/result-record.md, "Violations and the outcome"). */
struct refusals
{
  size_t n;             /* entries */
  size_t escape;        /* of them, ones that look like an escape */
  char first_escape[160]; /* what the first of those was, for the message */
};

/* Addresses no program of a sandbox has a reason to reach: link-local
   (169.254.0.0/16, fe80::/10: the cloud metadata services that hand out the
   host's credentials, and services of the host's own segment) and AWS's
   IPv6 metadata address. */
static bool
address_escape_like (const char *a)
{
  return ab_str_has_prefix (a, "169.254.") || strncasecmp (a, "fe8", 3) == 0 || strncasecmp (a, "fe9", 3) == 0
         || strncasecmp (a, "fea", 3) == 0 || strncasecmp (a, "feb", 3) == 0
         || strcasecmp (a, "fd00:ec2::254") == 0;
}

static const char *
member_str (struct ab_json *o, const char *key)
{
  for (size_t i = 0; i < o->u.obj.n; i++)
    if (strcmp (o->u.obj.m[i].key, key) == 0 && o->u.obj.m[i].val->type == AB_J_STRING)
      return o->u.obj.m[i].val->u.str.s;
  return NULL;
}

/* A refused attempt looks like an escape when it went for a link-local or
   metadata address, or when there were more refused destinations than the
   record lists (the wall's 256 per address family, the proxy's 2000: a
   scan, not a program that wanted one host).  Everything else -- a DNS
   query of a sandbox without network, a connection to a host the policy
   does not allow -- is an ordinary refusal. */
static void
classify_refusals (const char *violations_json, struct refusals *r)
{
  static const struct ab_json_limits lim = {
    .max_bytes = 1u << 20, .max_depth = 16, .max_string = 64u << 10, .max_items = 4096, .max_nodes = 1u << 16,
  };
  ab_error_t err = { 0 };
  _cleanup_json_ struct ab_json *j = NULL;

  memset (r, 0, sizeof *r);
  if (violations_json == NULL)
    return;
  j = ab_json_parse (violations_json, strlen (violations_json), &lim, "violations", &err);
  if (j == NULL || j->type != AB_J_ARRAY)
    return;
  for (size_t i = 0; i < j->u.arr.n; i++)
    {
      struct ab_json *v = j->u.arr.items[i];
      const char *type, *addr;
      if (v->type != AB_J_OBJECT)
        continue;
      r->n++;
      type = member_str (v, "type");
      addr = member_str (v, "address");
      if (type && ab_str_has_suffix (type, "-omitted"))
        {
          if (r->escape++ == 0)
            snprintf (r->first_escape, sizeof r->first_escape, "more refused destinations than the record lists");
        }
      else if (addr && address_escape_like (addr) && r->escape++ == 0)
        snprintf (r->first_escape, sizeof r->first_escape, "a connection to the link-local address %s", addr);
    }
}

/* What went wrong, for the model: a machine code, a sentence, whether the
   same call may succeed again, and what to change.  NULL code: success. */
struct verdict
{
  const char *code;
  char message[512];
  bool retryable;
  const char *action;
};

/* A limit the command hit, the likely cause of its failure whatever its
   exit status (a failed fork, allocation or write); the first of this
   order when it hit several.  `what` names the limit and takes its value
   (a size or a count) when the record knows it. */
static const struct limit_verdict
{
  unsigned flag;
  const char *what;   /* the limit */
  const char *option; /* what sets it */
  const char *effect; /* what hitting it did */
  bool retryable;
  const char *action;
} limit_verdicts[] = {
  { AB_LIMIT_PIDS, "the process limit", "pids_limit", ": some forks failed", true, "increase_pids_limit" },
  { AB_LIMIT_MEMORY, "the memory limit", "memory_bytes", ": some allocations failed", true,
    "increase_memory_bytes" },
  { AB_LIMIT_CPU, "its CPU time limit", "RLIMIT_CPU", "", false, "reduce_work" },
  { AB_LIMIT_WORKSPACE, "the workspace's size", "workspace_size",
    ": its changes filled their storage and some writes failed with ENOSPC", true, "increase_workspace_size" },
  { AB_LIMIT_FILE_SIZE, "the file size limit", "RLIMIT_FSIZE, --file-size",
    ": a write past it failed (SIGXFSZ or EFBIG, \"File too large\")", true, "increase_file_size" },
  { AB_LIMIT_TMPFS, "the size of", "", ": it filled up and writes failed with ENOSPC", true,
    "free_space_or_increase_tmpfs_size" },
};

static const struct limit_verdict *
limit_hit (unsigned hits)
{
  for (size_t i = 0; i < AB_ARRAY_SIZE (limit_verdicts); i++)
    if (hits & limit_verdicts[i].flag)
      return &limit_verdicts[i];
  return NULL;
}

/* "the process limit (pids_limit 32): some forks failed" */
static void
limit_sentence (const struct ab_outcome *o, const struct limit_verdict *hit, char *buf, size_t n)
{
  char value[48] = "";

  if (hit->flag == AB_LIMIT_TMPFS)
    {
      /* the mounts that filled, each with the option that sizes it */
      size_t len = (size_t)snprintf (buf, n, "%s", hit->what);
      for (size_t i = 0; i < o->full_mounts.n && len < n; i++)
        {
          const char *d = o->full_mounts.v[i];
          const char *opt = strcmp (d, "/tmp") == 0         ? " (--tmp-size)"
                            : strcmp (d, "/root") == 0      ? " (--home-size)"
                            : strcmp (d, "/dev/shm") == 0   ? " (--shm-size)"
                            : strcmp (d, "/workspace") == 0 ? " (--workspace-size)"
                                                            : "";
          len += (size_t)snprintf (buf + len, n - len, "%s %s%s", i ? "," : "", d, opt);
        }
      if (len < n)
        snprintf (buf + len, n - len, "%s", hit->effect);
      return;
    }
  if (hit->flag == AB_LIMIT_PIDS && o->pids_max > 0)
    snprintf (value, sizeof value, " %lld", (long long)o->pids_max);
  else if (hit->flag == AB_LIMIT_MEMORY && o->memory_max > 0)
    snprintf (value, sizeof value, " %llu", (unsigned long long)o->memory_max);
  else if (hit->flag == AB_LIMIT_FILE_SIZE && o->file_size_max > 0)
    snprintf (value, sizeof value, " %llu bytes", (unsigned long long)o->file_size_max);
  snprintf (buf, n, "%s (%s%s)%s", hit->what, hit->option, value, hit->effect);
}

/* The verdict of a limit hit, the likely cause of how the command ended
   (`how`: "exited with status 1", "was killed by signal SIGABRT", ...). */
static void
judge_limit (const struct ab_outcome *o, const struct limit_verdict *hit, const char *how, struct verdict *v)
{
  char what[256];

  limit_sentence (o, hit, what, sizeof what);
  v->code = "limit_exceeded";
  snprintf (v->message, sizeof v->message, "the command %s after hitting %s", how, what);
  v->retryable = hit->retryable;
  v->action = hit->action;
}

/* An attempt that looks like an escape: whatever the command's fate, a
   person should look before the agent goes on. */
static bool
judge_escape (const struct refusals *r, struct verdict *v)
{
  if (r->escape == 0)
    return false;
  v->code = "policy_violation";
  snprintf (v->message, sizeof v->message,
            "the command attempted something that looks like an escape from the sandbox (%s; see violations); "
            "the denied operations did not happen",
            r->first_escape);
  v->action = "stop_and_request_human";
  return true;
}

/* The timeout: a limit hit before the deadline is why the command never
   finished (a fork bomb stuck at pids_limit): the advice follows it. */
static void
judge_timeout (const struct ab_outcome *o, struct verdict *v)
{
  unsigned long long ms = (unsigned long long)(o->duration_ns / 1000000u);
  const struct limit_verdict *first = limit_hit (o->limits_before_timeout & ~AB_LIMIT_TIMEOUT);
  char how[320];

  if (o->grace_ms == 0)
    snprintf (how, sizeof how, "did not finish within its time limit and was killed after %llu ms", ms);
  else
    snprintf (how, sizeof how,
              "did not finish within its time limit (%llu ms): it was sent SIGTERM and %s (%llu ms in all)",
              (unsigned long long)o->timeout_ms,
              o->timeout_killed ? "killed when the grace after it ran out" : "ended within the grace", ms);
  if (first)
    {
      char what[256];
      limit_sentence (o, first, what, sizeof what);
      v->code = "limit_exceeded";
      snprintf (v->message, sizeof v->message, "the command hit %s, and then %s", what, how);
      v->retryable = first->retryable;
      v->action = first->action;
      return;
    }
  v->code = "timeout";
  snprintf (v->message, sizeof v->message, "the command %s", how);
  v->retryable = true;
  v->action = "increase_timeout_ms";
}

/* How the command ended, when a signal or agentbox ended it. */
static bool
judge_fate (const struct ab_outcome *o, struct verdict *v)
{
  const char *sig = !o->exited && o->signal > 0 ? sigabbrev_np (o->signal) : NULL;
  const struct limit_verdict *hit = limit_hit (o->limits_hit & ~AB_LIMIT_CPU);
  char how[64];

  if (o->reason == AB_REASON_TIMEOUT)
    judge_timeout (o, v);
  else if (o->reason == AB_REASON_OOM)
    {
      v->code = "oom_killed";
      snprintf (v->message, sizeof v->message,
                "the command ran out of memory and was killed by the OOM killer (memory_bytes limit)");
      v->retryable = true;
      v->action = "increase_memory_bytes";
    }
  else if (!o->exited && !(o->limits_hit & AB_LIMIT_CPU) && hit != NULL)
    {
      /* a crash after a failed fork or allocation (an abort on a failed
         pthread_create): the limit is the likely cause */
      snprintf (how, sizeof how, "was killed by signal SIG%s", sig ? sig : "?");
      judge_limit (o, hit, how, v);
    }
  else if (!o->exited)
    {
      bool cpu = o->limits_hit & AB_LIMIT_CPU;
      v->code = "signaled";
      snprintf (v->message, sizeof v->message, "the command was killed by signal SIG%s%s%s", sig ? sig : "?",
                o->core_dumped ? " (core dumped)" : "",
                cpu ? " on reaching its CPU time limit (RLIMIT_CPU)" : "");
      v->action = cpu ? "reduce_work" : "fix_command";
    }
  return v->code != NULL;
}

/* An exit status other than 0, with what likely caused it. */
static void
judge_exit (const struct ab_outcome *o, const struct refusals *r, struct verdict *v)
{
  const struct limit_verdict *hit = limit_hit (o->limits_hit);

  char how[64];

  if (hit != NULL)
    {
      snprintf (how, sizeof how, "exited with status %d", o->exit_code);
      judge_limit (o, hit, how, v);
    }
  else if (r->n > 0)
    {
      /* It failed, and the sandbox refused network access it tried: the
         likely cause, and one the call can change. */
      v->code = "network_denied";
      snprintf (v->message, sizeof v->message,
                "the command exited with status %d after the sandbox refused network access it attempted (see "
                "violations): name the hosts it needs in allow_domains (--allow-domain), or make it work "
                "offline",
                o->exit_code);
      v->retryable = true;
      v->action = "add_allow_domains";
    }
  else
    {
      v->code = "exit_nonzero";
      snprintf (v->message, sizeof v->message, "the command exited with status %d%s", o->exit_code,
                o->exit_code == 127   ? " (command not found: check argv[0] and PATH)"
                : o->exit_code == 126 ? " (the program could not be executed)"
                                      : "; see stderr");
      v->action = "fix_command";
    }
}

/* The verdict follows what the command did; refused attempts are listed
   in violations and only decide it when they look like an escape, or when
   the command failed and they are its likely cause
   (docs/result-record.md, "isError and error"). */
static void
judge (const struct ab_outcome *o, struct verdict *v)
{
  struct refusals r;

  memset (v, 0, sizeof *v);
  classify_refusals (o->violations_json, &r);
  if (judge_escape (&r, v) || judge_fate (o, v))
    ;
  else if (o->exit_code != 0 || limit_hit (o->limits_hit) != NULL)
    judge_exit (o, &r, v);
  else if (o->limits_hit & AB_LIMIT_OUTPUT)
    {
      v->code = "output_truncated";
      snprintf (
          v->message, sizeof v->message,
          "the command exited 0 but wrote more than max_output_bytes; the captured output is truncated");
      v->retryable = true;
      v->action = "increase_max_output_bytes_or_filter_output";
    }
  if (v->code && strcmp (v->code, "output_truncated") != 0 && (o->limits_hit & AB_LIMIT_OUTPUT))
    {
      size_t n = strlen (v->message);
      snprintf (v->message + n, sizeof v->message - n, "; output was truncated at max_output_bytes");
    }
}

/* The length of s to carry as text, and whether the bytes are not text.
   A cut at max_output may split the last character: that is truncation,
   not binary output, so an incomplete sequence at the cut is dropped. */
static size_t
stream_text_len (const struct ab_stream *s, bool *binary)
{
  const unsigned char *p = (const unsigned char *)s->data;
  size_t k;

  *binary = false;
  if (p == NULL || ab_utf8_valid (s->data, s->len))
    return p ? s->len : 0;
  if (s->truncated)
    for (k = 1; k <= 3 && k <= s->len; k++)
      if (p[s->len - k] >= 0xc0 && ab_utf8_valid (s->data, s->len - k))
        return s->len - k;
  *binary = true;
  return s->len;
}

static void
gen_stream_fields (struct ab_gen *g, const char *name, const struct ab_stream *s)
{
  char key[32];
  bool binary;
  size_t len = stream_text_len (s, &binary);

  ab_gen_key (g, name);
  ab_gen_bytes (g, s->data ? s->data : "", len);
  snprintf (key, sizeof key, "%sBytes", name);
  ab_gen_kv_u64 (g, key, s->total);
  snprintf (key, sizeof key, "%sTruncated", name);
  ab_gen_kv_bool (g, key, s->truncated);
  snprintf (key, sizeof key, "%sBinary", name);
  ab_gen_kv_bool (g, key, binary);
}

static void
gen_u64_or_null (struct ab_gen *g, const char *key, bool known, uint64_t v)
{
  ab_gen_key (g, key);
  if (known)
    ab_gen_u64 (g, v);
  else
    ab_gen_null (g);
}

/* structuredContent (docs/result-schema.json), members in a fixed order, into g. */
static void
structured_content (struct ab_gen *g, const struct ab_outcome *o, const struct verdict *v)
{
  bool bad_violations;
  size_t i;

  ab_gen_obj_open (g);
  ab_gen_key (g, "exitCode");
  if (o->exited)
    ab_gen_i64 (g, o->exit_code);
  else
    ab_gen_null (g);
  ab_gen_key (g, "signal");
  if (!o->exited && o->signal > 0)
    gen_signal (g, o->signal);
  else
    ab_gen_null (g);
  ab_gen_kv_bool (g, "coreDumped", o->core_dumped);
  ab_gen_kv_str (g, "reason", ab_reason_name (o->reason));
  ab_gen_key (g, "limitsHit");
  gen_limits (g, o->limits_hit);
  ab_gen_kv_u64 (g, "durationMs", o->duration_ns / 1000000u);
  gen_stream_fields (g, "stdout", &o->out);
  gen_stream_fields (g, "stderr", &o->err);
  gen_u64_or_null (g, "cpuUserUs", o->stats_known, o->cpu_user_usec);
  gen_u64_or_null (g, "cpuSystemUs", o->stats_known, o->cpu_system_usec);
  gen_u64_or_null (g, "memoryPeakBytes", o->stats_known, o->memory_peak);
  ab_gen_key (g, "violations");
  gen_violations (g, o->violations_json, &bad_violations);
  ab_gen_key (g, "degraded");
  ab_gen_arr_open (g);
  for (i = 0; i < o->degraded.n; i++)
    ab_gen_str (g, o->degraded.v[i]);
  if (bad_violations)
    ab_gen_str (g, "violations: the record of denied operations was malformed and is omitted");
  ab_gen_arr_close (g);
  if (o->rootless)
    {
      /* what a run without host privileges had: docs/result-record.md */
      ab_gen_key (g, "rootless");
      ab_gen_obj_open (g);
      ab_gen_kv_str (g, "idMapping", o->id_mapping ? o->id_mapping : "none");
      ab_gen_kv_str (g, "cgroup", o->cgroup ? o->cgroup : "none");
      ab_gen_obj_close (g);
    }
  gen_workspace (g, o->workspace_json);
  if (o->full_mounts.n)
    {
      ab_gen_key (g, "fullMounts");
      ab_gen_arr_open (g);
      for (i = 0; i < o->full_mounts.n; i++)
        ab_gen_bytes (g, o->full_mounts.v[i], strlen (o->full_mounts.v[i]));
      ab_gen_arr_close (g);
    }
  if (o->reason == AB_REASON_TIMEOUT)
    {
      /* how the wall-clock limit ended it: SIGTERM, then SIGKILL after the
         grace if it still ran */
      ab_gen_key (g, "timeout");
      ab_gen_obj_open (g);
      ab_gen_kv_u64 (g, "limitMs", o->timeout_ms);
      ab_gen_kv_u64 (g, "graceMs", o->grace_ms);
      ab_gen_kv_str (g, "ended", o->timeout_killed ? "killed" : "terminated");
      ab_gen_obj_close (g);
    }
  ab_gen_key (g, "error");
  if (v->code == NULL)
    ab_gen_null (g);
  else
    {
      ab_gen_obj_open (g);
      ab_gen_kv_str (g, "code", v->code);
      ab_gen_kv_str (g, "message", v->message);
      ab_gen_kv_bool (g, "retryable", v->retryable);
      ab_gen_kv_str (g, "suggested_action", v->action);
      ab_gen_obj_close (g);
    }
  ab_gen_obj_close (g);
}

/* The exact bytes of a stream that is not UTF-8, as an embedded resource. */
static void
gen_blob (struct ab_gen *g, const char *id, const char *name, const struct ab_stream *s)
{
  _cleanup_free_ char *b64 = NULL, *uri = NULL;
  bool binary;

  stream_text_len (s, &binary);
  if (!binary)
    return;
  b64 = ab_base64 (s->data, s->len, NULL);
  uri = xasprintf ("agentbox://%s/%s", id ? id : "run", name);
  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "type", "resource");
  ab_gen_key (g, "resource");
  ab_gen_obj_open (g);
  ab_gen_key (g, "uri");
  ab_gen_bytes (g, uri, strlen (uri));
  ab_gen_kv_str (g, "mimeType", "application/octet-stream");
  ab_gen_kv_str (g, "blob", b64);
  ab_gen_obj_close (g);
  ab_gen_obj_close (g);
}

static void
gen_error_object (struct ab_gen *g, const ab_error_t *e)
{
  const char *ename = e->errnum > 0 ? strerrorname_np (e->errnum) : NULL;

  ab_gen_key (g, "error");
  ab_gen_obj_open (g);
  ab_gen_kv_i64 (g, "code", ab_record_error_code (e->cls));
  ab_gen_key (g, "message");
  ab_gen_bytes (g, e->msg, strnlen (e->msg, sizeof e->msg));
  ab_gen_key (g, "data");
  ab_gen_obj_open (g);
  ab_gen_key (g, "step");
  if (e->step[0])
    ab_gen_bytes (g, e->step, strnlen (e->step, sizeof e->step));
  else
    ab_gen_str (g, "setup");
  ab_gen_kv_i64 (g, "errno", e->errnum);
  ab_gen_key (g, "errnoName");
  if (ename)
    ab_gen_str (g, ename);
  else
    ab_gen_null (g);
  ab_gen_kv_str (g, "class", ab_error_class_name (e->cls));
  ab_gen_kv_bool (g, "retryable", ab_record_error_retryable (e));
  ab_gen_kv_str (g, "suggested_action", ab_record_error_action (e));
  ab_gen_obj_close (g);
  ab_gen_obj_close (g);
}

/* The frame of a setup failure, into g (without the final LF). */
static void
error_frame (struct ab_gen *g, const char *id_json, const ab_error_t *e)
{
  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "jsonrpc", "2.0");
  gen_id (g, id_json);
  gen_error_object (g, e);
  ab_gen_obj_close (g);
}

char *
ab_record_error_frame (const char *id_json, const ab_error_t *e, size_t *len)
{
  _cleanup_gen_ struct ab_gen *g = ab_gen_new (false);

  error_frame (g, id_json, e);
  return ab_gen_steal (g, true, len);
}

/* The frame of a run that happened, into g (without the final LF).
   structuredContent is made once and kept (it goes in twice); the frame
   goes where g puts it. */
static void
result_frame (struct ab_gen *g, const struct ab_outcome *o, const char *id_json)
{
  _cleanup_gen_ struct ab_gen *sg = ab_gen_new (false);
  struct verdict v;
  const char *sc;
  size_t sc_len;

  judge (o, &v);
  structured_content (sg, o, &v);
  sc = ab_gen_buf (sg, &sc_len);
  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "jsonrpc", "2.0");
  gen_id (g, id_json);
  ab_gen_key (g, "result");
  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "resultType", "complete");
  ab_gen_key (g, "content");
  ab_gen_arr_open (g);
  /* The text block mirrors structuredContent, for clients that read only
     content (MCP tools: "SHOULD also return the serialized JSON"). */
  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "type", "text");
  ab_gen_key (g, "text");
  ab_gen_bytes (g, sc, sc_len);
  ab_gen_obj_close (g);
  gen_blob (g, o->id, "stdout", &o->out);
  gen_blob (g, o->id, "stderr", &o->err);
  ab_gen_arr_close (g);
  ab_gen_key (g, "structuredContent");
  ab_gen_raw (g, sc, sc_len); /* generated above: valid JSON by construction */
  ab_gen_kv_bool (g, "isError", v.code != NULL);
  ab_gen_key (g, "_meta");
  ab_gen_obj_open (g);
  ab_gen_kv_i64 (g, "dev.agentbox/recordVersion", RECORD_VERSION);
  ab_gen_key (g, "dev.agentbox/containerId");
  if (o->id)
    ab_gen_bytes (g, o->id, strlen (o->id));
  else
    ab_gen_null (g);
  ab_gen_kv_i64 (g, "dev.agentbox/exitStatus", o->exit_status);
  gen_egress (g, o->egress_json);
  ab_gen_obj_close (g);
  ab_gen_obj_close (g);
  ab_gen_obj_close (g);
}

/* The frame of outcome o, into g (without the final LF). */
static void
frame (struct ab_gen *g, const struct ab_outcome *o, const char *id_json)
{
  ab_error_t e;

  if (o->reason != AB_REASON_SETUP_FAILED)
    {
      result_frame (g, o, id_json);
      return;
    }
  e = o->setup_error;
  if (e.cls == AB_EC_NONE)
    e.cls = AB_EC_SETUP;
  if (e.msg[0] == '\0')
    snprintf (e.msg, sizeof e.msg, "the sandbox could not be set up");
  error_frame (g, id_json, &e);
}

char *
ab_record_frame (const struct ab_outcome *o, const char *id_json, size_t *len)
{
  _cleanup_gen_ struct ab_gen *g = ab_gen_new (false);

  frame (g, o, id_json);
  return ab_gen_steal (g, true, len);
}

int
ab_record_write (int fd, const struct ab_outcome *o, const char *id_json, ab_error_t *err)
{
  /* Written as it is made: even with the output capped the frame is many
     times the cap (a control byte is 6 characters in structuredContent and
     7 in its text copy), and the supervisor runs on the host, outside the
     sandbox's memory limit. */
  _cleanup_gen_ struct ab_gen *g = ab_gen_new_fd (fd);

  frame (g, o, id_json);
  if (ab_gen_finish_fd (g) < 0)
    {
      if (err)
        return ab_error_setc (err, AB_EC_INTERNAL, errno, "write the result record to fd %d", fd);
      return -1;
    }
  return 0;
}
