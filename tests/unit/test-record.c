/* The result record: every outcome class gives the documented frame, one
 * line of valid JSON; each frame is also checked against
 * docs/result-schema.json by tests/mcp/check_record.py. */
#include "config.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "runtime/supervise/record.h"
/* The unit under test, whole: the frame, its base64 and codes are static. */
#include "runtime/supervise/record.c"
#include "base/util.h"
#include "base/json.h"
#include "tests/unit/tap.h"

static const struct ab_json_limits lim = {
  .max_bytes = 64u << 20,
  .max_depth = 32,
  .max_string = 64u << 20,
  .max_items = 1u << 16,
  .max_nodes = 1u << 20,
};

static char tmpdir[] = "/tmp/test-record-XXXXXX";
static struct ab_strv frames_written;

/* Keep the frame for the schema check at the end. */
static void
save (const char *name, const char *frame, size_t len)
{
  char *path = xasprintf ("%s/%s.json", tmpdir, name);
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

  if (fd < 0 || ab_write_all (fd, frame, len) < 0)
    {
      printf ("# cannot write %s\n", path);
      exit (1);
    }
  close (fd);
  ab_strv_push_owned (&frames_written, path);
}

/* Follow a dotted path ("result.structuredContent.exitCode", "a.b[1]"). */
static struct ab_json *
at (struct ab_json *j, const char *path)
{
  char buf[256], *p, *save_p = NULL;

  snprintf (buf, sizeof buf, "%s", path);
  for (p = strtok_r (buf, ".", &save_p); p && j; p = strtok_r (NULL, ".", &save_p))
    {
      char *br = strchr (p, '[');
      if (br)
        *br = '\0';
      if (*p)
        j = ab_json_member (j, p);
      while (br && j)
        {
          size_t i = strtoul (br + 1, NULL, 10);
          j = j->type == AB_J_ARRAY && i < j->u.arr.n ? j->u.arr.items[i] : NULL;
          br = strchr (br + 1, '[');
        }
    }
  return j;
}

static const char *
str_at (struct ab_json *j, const char *path)
{
  struct ab_json *v = at (j, path);
  return v && v->type == AB_J_STRING ? v->u.str.s : NULL;
}

static const char *
num_at (struct ab_json *j, const char *path)
{
  struct ab_json *v = at (j, path);
  return v && v->type == AB_J_NUMBER ? v->u.num : NULL;
}

static int
bool_at (struct ab_json *j, const char *path)
{
  struct ab_json *v = at (j, path);
  return v && v->type == AB_J_BOOL ? v->u.b : -1;
}

static bool
null_at (struct ab_json *j, const char *path)
{
  struct ab_json *v = at (j, path);
  return v && v->type == AB_J_NULL;
}

/* "a,b" for an array of strings */
static char *
strs_at (struct ab_json *j, const char *path)
{
  struct ab_json *v = at (j, path);
  char *out = xstrdup ("");
  size_t i;

  if (v == NULL || v->type != AB_J_ARRAY)
    {
      free (out);
      return xstrdup ("(not an array)");
    }
  for (i = 0; i < v->u.arr.n; i++)
    {
      char *n = xasprintf ("%s%s%s", out, i ? "," : "",
                           v->u.arr.items[i]->type == AB_J_STRING ? v->u.arr.items[i]->u.str.s : "?");
      free (out);
      out = n;
    }
  return out;
}

/* Frame o, check the line discipline, parse it. */
static struct ab_json *
frame_of (const char *name, const struct ab_outcome *o, const char *id_json)
{
  size_t len;
  _cleanup_free_ char *f = ab_record_frame (o, id_json, &len);
  ab_error_t err = { 0 };
  struct ab_json *j;

  ok (len > 0 && f[len - 1] == '\n' && memchr (f, '\n', len - 1) == NULL && strlen (f) == len,
      "%s: the frame is one line ending in LF", name);
  j = ab_json_parse (f, len, &lim, name, &err);
  ok (j != NULL, "%s: the frame parses as JSON%s%s", name, j ? "" : ": ", j ? "" : err.msg);
  save (name, f, len);
  return j;
}

static void
base_outcome (struct ab_outcome *o, const char *id)
{
  memset (o, 0, sizeof *o);
  o->id = xstrdup (id);
  o->duration_ns = 1234567890;
  o->stats_known = true;
  o->cpu_user_usec = 1500;
  o->cpu_system_usec = 250;
  o->memory_peak = 4096;
}

static void
set_stream (struct ab_stream *s, const char *data, size_t len, uint64_t total, bool truncated)
{
  free (s->data);
  s->data = xmalloc (len + 1);
  memcpy (s->data, data, len);
  s->data[len] = '\0';
  s->len = len;
  s->total = total;
  s->truncated = truncated;
}

static void
test_exit0 (void)
{
  struct ab_outcome o;
  struct ab_json *j;
  size_t len;
  char *f;

  base_outcome (&o, "c0");
  o.reason = AB_REASON_EXITED;
  o.exited = true;
  set_stream (&o.out, "hi\n", 3, 3, false);
  f = ab_record_frame (&o, "7", &len);
  is_str (
      f,
      "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"resultType\":\"complete\",\"content\":[{\"type\":\"text\","
      "\"text\":\"{\\\"exitCode\\\":0,\\\"signal\\\":null,\\\"coreDumped\\\":false,\\\"reason\\\":"
      "\\\"exited\\\","
      "\\\"limitsHit\\\":[],\\\"durationMs\\\":1234,\\\"stdout\\\":\\\"hi\\\\n\\\",\\\"stdoutBytes\\\":3,"
      "\\\"stdoutTruncated\\\":false,\\\"stdoutBinary\\\":false,\\\"stderr\\\":\\\"\\\",\\\"stderrBytes\\\":"
      "0,"
      "\\\"stderrTruncated\\\":false,\\\"stderrBinary\\\":false,\\\"cpuUserUs\\\":1500,\\\"cpuSystemUs\\\":"
      "250,"
      "\\\"memoryPeakBytes\\\":4096,\\\"violations\\\":[],\\\"degraded\\\":[],\\\"error\\\":null}\"}],"
      "\"structuredContent\":{\"exitCode\":0,\"signal\":null,\"coreDumped\":false,\"reason\":\"exited\","
      "\"limitsHit\":[],\"durationMs\":1234,\"stdout\":\"hi\\n\",\"stdoutBytes\":3,\"stdoutTruncated\":false,"
      "\"stdoutBinary\":false,\"stderr\":\"\",\"stderrBytes\":0,\"stderrTruncated\":false,\"stderrBinary\":"
      "false,"
      "\"cpuUserUs\":1500,\"cpuSystemUs\":250,\"memoryPeakBytes\":4096,\"violations\":[],\"degraded\":[],"
      "\"error\":null},\"isError\":false,\"_meta\":{\"dev.agentbox/recordVersion\":1,"
      "\"dev.agentbox/containerId\":\"c0\",\"dev.agentbox/exitStatus\":0}}}\n",
      "exit 0: the exact frame (text block mirrors structuredContent, isError false, vendor _meta)");
  free (f);
  j = frame_of ("exit0", &o, "7");
  is_str (num_at (j, "id"), "7", "exit 0: the integer id is kept");
  ab_json_free (j);
  ab_outcome_free (&o);
}

static void
test_exit42 (void)
{
  struct ab_outcome o;
  struct ab_json *j;

  base_outcome (&o, "c42");
  o.reason = AB_REASON_EXITED;
  o.exited = true;
  o.exit_code = o.exit_status = 42;
  set_stream (&o.err, "boom\n", 5, 5, false);
  j = frame_of ("exit42", &o, "\"req-1\"");
  is_str (str_at (j, "id"), "req-1", "exit 42: the string id is kept");
  is_str (num_at (j, "result.structuredContent.exitCode"), "42", "exit 42: exitCode 42");
  ok (bool_at (j, "result.isError") == 1, "exit 42: isError is true");
  is_str (str_at (j, "result.structuredContent.error.code"), "exit_nonzero",
          "exit 42: error code exit_nonzero");
  ok (strstr (str_at (j, "result.structuredContent.error.message") ?: "", "status 42") != NULL,
      "exit 42: the message names the status");
  ok (bool_at (j, "result.structuredContent.error.retryable") == 0, "exit 42: not retryable unchanged");
  is_str (str_at (j, "result.structuredContent.stderr"), "boom\n", "exit 42: stderr is carried");
  ab_json_free (j);
  ab_outcome_free (&o);
}

static void
test_segv (void)
{
  struct ab_outcome o;
  struct ab_json *j;

  base_outcome (&o, "cs");
  o.reason = AB_REASON_SIGNALED;
  o.signal = SIGSEGV;
  o.core_dumped = true;
  o.exit_status = 128 + SIGSEGV;
  j = frame_of ("segv", &o, "3");
  ok (null_at (j, "result.structuredContent.exitCode"), "SIGSEGV: exitCode is null");
  is_str (str_at (j, "result.structuredContent.signal"), "SIGSEGV", "SIGSEGV: the signal by name");
  ok (bool_at (j, "result.structuredContent.coreDumped") == 1, "SIGSEGV: coreDumped is true");
  is_str (str_at (j, "result.structuredContent.reason"), "signaled", "SIGSEGV: reason signaled");
  ok (strstr (str_at (j, "result.structuredContent.error.message") ?: "", "SIGSEGV (core dumped)") != NULL,
      "SIGSEGV: the message says core dumped");
  {
    struct ab_json *m = ab_json_member (at (j, "result._meta"), "dev.agentbox/exitStatus");
    ok (m && m->type == AB_J_NUMBER && strcmp (m->u.num, "139") == 0,
        "SIGSEGV: _meta dev.agentbox/exitStatus 139");
  }
  ab_json_free (j);
  ab_outcome_free (&o);
}

static void
test_timeout (void)
{
  struct ab_outcome o;
  struct ab_json *j;
  char *s;

  base_outcome (&o, "ct");
  o.reason = AB_REASON_TIMEOUT;
  o.signal = SIGKILL;
  o.limits_hit = AB_LIMIT_TIMEOUT;
  o.exit_status = 137;
  o.timeout_ms = 2000;
  o.grace_ms = 5000;
  o.timeout_killed = true;
  j = frame_of ("timeout", &o, "4");
  is_str (str_at (j, "result.structuredContent.timeout.ended"), "killed", "timeout: ended killed (after the grace)");
  {
    /* A fork bomb: the pids limit first, then the timeout. */
    struct ab_outcome f = o;
    struct ab_json *k;
    f.limits_hit = AB_LIMIT_TIMEOUT | AB_LIMIT_PIDS;
    f.limits_before_timeout = AB_LIMIT_PIDS;
    f.pids_max = 32;
    f.id = NULL;
    k = frame_of ("timeout-after-pids", &f, "41");
    is_str (str_at (k, "result.structuredContent.error.suggested_action"), "increase_pids_limit",
            "pids limit hit before the timeout: the advice follows the pids limit");
    ok (strstr (str_at (k, "result.structuredContent.error.message") ?: "", "pids_limit 32") != NULL,
        "... and the message names the limit and its value");
    ab_json_free (k);
    f.limits_before_timeout = 0;
    k = frame_of ("timeout-then-pids", &f, "42");
    is_str (str_at (k, "result.structuredContent.error.suggested_action"), "increase_timeout_ms",
            "pids limit hit only during the grace: the advice stays the timeout's");
    ab_json_free (k);
    f.reason = AB_REASON_SIGNALED;
    f.signal = SIGABRT;
    f.limits_hit = AB_LIMIT_PIDS;
    k = frame_of ("abort-after-pids", &f, "43");
    is_str (str_at (k, "result.structuredContent.error.code"), "limit_exceeded",
            "SIGABRT after the pids limit was hit: limit_exceeded, the likely cause named");
    ab_json_free (k);
  }
  ok (strstr (str_at (j, "result.structuredContent.error.message") ?: "", "killed when the grace") != NULL,
      "timeout: the message says SIGTERM came first and the grace ran out");
  is_str (str_at (j, "result.structuredContent.reason"), "timeout", "timeout: reason timeout");
  is_str ((s = strs_at (j, "result.structuredContent.limitsHit")), "timeout", "timeout: limitsHit [timeout]");
  free (s);
  is_str (str_at (j, "result.structuredContent.signal"), "SIGKILL", "timeout: killed by SIGKILL");
  is_str (str_at (j, "result.structuredContent.error.code"), "timeout", "timeout: error code timeout");
  ok (bool_at (j, "result.structuredContent.error.retryable") == 1, "timeout: retryable");
  is_str (str_at (j, "result.structuredContent.error.suggested_action"), "increase_timeout_ms",
          "timeout: suggests increase_timeout_ms");
  ok (strstr (str_at (j, "result.structuredContent.error.message") ?: "", "1234 ms") != NULL,
      "timeout: the message says how long it ran");
  ab_json_free (j);
  ab_outcome_free (&o);
}

static void
test_oom (void)
{
  struct ab_outcome o;
  struct ab_json *j;
  char *s;

  base_outcome (&o, "cm");
  o.reason = AB_REASON_OOM;
  o.signal = SIGKILL;
  o.limits_hit = AB_LIMIT_MEMORY;
  o.memory_peak = 64u << 20;
  j = frame_of ("oom", &o, "5");
  is_str (str_at (j, "result.structuredContent.reason"), "oom_killed", "OOM: reason oom_killed");
  is_str ((s = strs_at (j, "result.structuredContent.limitsHit")), "memory", "OOM: limitsHit [memory]");
  free (s);
  is_str (num_at (j, "result.structuredContent.memoryPeakBytes"), "67108864", "OOM: memoryPeakBytes");
  is_str (str_at (j, "result.structuredContent.error.suggested_action"), "increase_memory_bytes",
          "OOM: suggests increase_memory_bytes");
  ab_json_free (j);
  ab_outcome_free (&o);
}

static void
test_pids (void)
{
  struct ab_outcome o;
  struct ab_json *j;
  char *s;

  base_outcome (&o, "cp");
  o.reason = AB_REASON_EXITED;
  o.exited = true;
  o.limits_hit = AB_LIMIT_PIDS;
  o.stats_known = false;
  j = frame_of ("pids", &o, "6");
  is_str ((s = strs_at (j, "result.structuredContent.limitsHit")), "pids", "pids: limitsHit [pids]");
  free (s);
  ok (bool_at (j, "result.isError") == 1, "pids: a limit hit is an error even with exit 0");
  is_str (str_at (j, "result.structuredContent.error.code"), "limit_exceeded",
          "pids: error code limit_exceeded");
  ok (null_at (j, "result.structuredContent.cpuUserUs")
          && null_at (j, "result.structuredContent.memoryPeakBytes"),
      "pids: unknown statistics are null");
  ab_json_free (j);

  o.exit_code = o.exit_status = 2;
  j = frame_of ("pids-exit2", &o, "16");
  is_str (str_at (j, "result.structuredContent.error.code"), "limit_exceeded",
          "pids with exit 2: the limit, not the exit status, is named as the cause");
  is_str (str_at (j, "result.structuredContent.error.suggested_action"), "increase_pids_limit",
          "pids with exit 2: suggests increase_pids_limit");
  ok (strstr (str_at (j, "result.structuredContent.error.message") ?: "", "status 2") != NULL,
      "pids with exit 2: the message still gives the status");
  ab_json_free (j);
  ab_outcome_free (&o);
}

static void
test_output_cap (void)
{
  struct ab_outcome o;
  struct ab_json *j;
  char *s;

  base_outcome (&o, "co");
  o.reason = AB_REASON_EXITED;
  o.exited = true;
  o.exit_code = 1;
  o.limits_hit = AB_LIMIT_OUTPUT;
  set_stream (&o.out, "0123456789", 10, 1000000, true);
  /* cut in the middle of "é" (c3 a9): still text, not binary */
  set_stream (&o.err, "abc\xc3", 4, 50, true);
  j = frame_of ("output", &o, "8");
  ok (bool_at (j, "result.structuredContent.stdoutTruncated") == 1, "output cap: stdoutTruncated");
  is_str (num_at (j, "result.structuredContent.stdoutBytes"), "1000000",
          "output cap: stdoutBytes counts all");
  is_str ((s = strs_at (j, "result.structuredContent.limitsHit")), "output",
          "output cap: limitsHit [output]");
  free (s);
  ok (bool_at (j, "result.structuredContent.stderrBinary") == 0,
      "a character split by the cap is not binary");
  is_str (str_at (j, "result.structuredContent.stderr"), "abc", "the split character is dropped");
  ok (at (j, "result.content[1]") == NULL, "output cap: no resource block for text output");
  ok (strstr (str_at (j, "result.structuredContent.error.message") ?: "", "truncated") != NULL,
      "output cap: the exit message also says the output was truncated");
  ab_json_free (j);
  ab_outcome_free (&o);
}

static void
test_binary (void)
{
  static const char raw[] = "ok\xff\xfe\x01z";
  struct ab_outcome o;
  struct ab_json *j;
  size_t n, len;
  char *b64, *f;

  base_outcome (&o, "cb");
  o.reason = AB_REASON_EXITED;
  o.exited = true;
  set_stream (&o.out, raw, sizeof raw - 1, sizeof raw - 1, false);
  j = frame_of ("binary", &o, "9");
  ok (bool_at (j, "result.structuredContent.stdoutBinary") == 1, "non-UTF-8: stdoutBinary");
  is_str (str_at (j, "result.structuredContent.stdout"), "ok\xef\xbf\xbd\xef\xbf\xbd\x01z",
          "non-UTF-8: each invalid byte becomes U+FFFD");
  is_str (str_at (j, "result.content[1].type"), "resource", "non-UTF-8: a resource block");
  is_str (str_at (j, "result.content[1].resource.uri"), "agentbox://cb/stdout",
          "non-UTF-8: named by container and stream");
  b64 = ab_base64 (raw, sizeof raw - 1, &n);
  is_str (str_at (j, "result.content[1].resource.blob"), b64, "non-UTF-8: the exact bytes in base64");
  free (b64);
  ab_json_free (j);

  /* A NUL is valid UTF-8 and valid JSON (escaped); our own bounded reader
     refuses NULs, so this frame is checked as text and by the schema. */
  set_stream (&o.out, "a\0b", 3, 3, false);
  f = ab_record_frame (&o, "15", &len);
  ok (strlen (f) == len && strstr (f, "\"stdout\":\"a\\u0000b\"") != NULL,
      "a NUL byte is escaped as \\u0000");
  save ("nul", f, len);
  free (f);
  ab_outcome_free (&o);
}

static void
test_setup_failure (void)
{
  struct ab_outcome o;
  struct ab_json *j;

  base_outcome (&o, "cf");
  o.reason = AB_REASON_SETUP_FAILED;
  o.exit_status = 125;
  o.setup_error.cls = AB_EC_SETUP;
  o.setup_error.errnum = EPERM;
  snprintf (o.setup_error.step, sizeof o.setup_error.step, "mount");
  snprintf (o.setup_error.msg, sizeof o.setup_error.msg, "mount proc on `/proc`: Operation not permitted");
  j = frame_of ("setup", &o, "10");
  ok (at (j, "result") == NULL && at (j, "error") != NULL, "setup failure: a JSON-RPC error, not a result");
  is_str (num_at (j, "error.code"), "-31007", "setup failure: code -31007 for class setup");
  is_str (str_at (j, "error.message"), "mount proc on `/proc`: Operation not permitted",
          "setup failure: the message");
  is_str (str_at (j, "error.data.step"), "mount", "setup failure: data.step");
  is_str (num_at (j, "error.data.errno"), "1", "setup failure: data.errno is a number");
  is_str (str_at (j, "error.data.errnoName"), "EPERM", "setup failure: data.errnoName");
  is_str (str_at (j, "error.data.class"), "setup", "setup failure: data.class");
  ok (bool_at (j, "error.data.retryable") == 0, "setup failure: EPERM is not retryable");
  is_str (str_at (j, "error.data.suggested_action"), "stop_and_request_human", "setup failure: ask a human");
  ab_json_free (j);

  o.setup_error.cls = AB_EC_RESOURCE;
  o.setup_error.errnum = EAGAIN;
  j = frame_of ("setup-eagain", &o, "11");
  is_str (num_at (j, "error.code"), "-31010", "resource failure: code -31010");
  ok (bool_at (j, "error.data.retryable") == 1, "EAGAIN is retryable");
  ab_json_free (j);

  o.setup_error.cls = AB_EC_SETUP;
  o.setup_error.errnum = ENOENT;
  snprintf (o.setup_error.step, sizeof o.setup_error.step, "cwd");
  j = frame_of ("setup-cwd", &o, "17");
  is_str (str_at (j, "error.data.suggested_action"), "fix_arguments",
          "a missing working directory: fix the arguments");
  ab_json_free (j);

  o.setup_error.errnum = 0;
  j = frame_of ("setup-noerrno", &o, "12");
  ok (null_at (j, "error.data.errnoName"), "no errno: errnoName is null");
  ab_json_free (j);
  ab_outcome_free (&o);

  for (int c = 0; c < AB_EC__COUNT; c++)
    if (ab_record_error_code (c) > -31000 || ab_record_error_code (c) < -31099)
      ok (0, "class %d has a code outside -31099..-31000", c);
  ok (ab_record_error_code (AB_EC_INTERNAL) == -31001 && ab_record_error_code (99) == -31001,
      "codes: internal is -31001, unknown classes count as internal");
}

static void
test_violations (void)
{
  struct ab_outcome o;
  struct ab_json *j;

  base_outcome (&o, "cv");
  o.reason = AB_REASON_EXITED;
  o.exited = true;
  o.violations_json = xstrdup ("[{\"kind\":\"egress\",\"destination\":\"203.0.113.7:443\"}]");
  ab_strv_push (&o.degraded, "seccomp: notify unavailable");
  j = frame_of ("violations", &o, "13");
  is_str (str_at (j, "result.structuredContent.violations[0].destination"), "203.0.113.7:443",
          "violations: carried as objects");
  ok (str_at (j, "result.structuredContent.error.code") == NULL && bool_at (j, "result.isError") == 0,
      "violations of a command that exits 0: no error, isError false");
  is_str (str_at (j, "result.structuredContent.degraded[0]"), "seccomp: notify unavailable",
          "degraded: carried");
  ab_json_free (j);

  /* The verdict follows what the command did (docs/result-record.md). */
  free (o.violations_json);
  o.violations_json = xstrdup ("[{\"type\":\"egress-denied\",\"address\":\"10.255.255.53\",\"port\":53}]");
  o.exit_code = 6;
  j = frame_of ("violations-failed", &o, "15");
  is_str (str_at (j, "result.structuredContent.error.code"), "network_denied",
          "a refused DNS query and exit 6: network_denied");
  is_str (str_at (j, "result.structuredContent.error.suggested_action"), "add_allow_domains",
          "... suggesting allow_domains");
  ab_json_free (j);
  free (o.violations_json);
  o.violations_json = xstrdup ("[{\"type\":\"egress-refused\",\"address\":\"169.254.169.254\",\"port\":80}]");
  o.exit_code = 0;
  j = frame_of ("violations-metadata", &o, "16");
  is_str (str_at (j, "result.structuredContent.error.suggested_action"), "stop_and_request_human",
          "the metadata address, exit 0: an escape attempt, stop_and_request_human");
  ab_json_free (j);
  free (o.violations_json);
  o.violations_json = xstrdup ("[{\"type\":\"egress-denied\",\"address\":\"fe80::1\",\"port\":22}]");
  j = frame_of ("violations-linklocal6", &o, "17");
  is_str (str_at (j, "result.structuredContent.error.code"), "policy_violation", "fe80::1: policy_violation");
  ab_json_free (j);
  free (o.violations_json);
  o.violations_json = xstrdup ("[{\"type\":\"egress-denied\",\"address\":\"192.0.2.1\",\"port\":1},"
                               "{\"type\":\"egress-denied-omitted\",\"entries\":900,\"count\":900}]");
  j = frame_of ("violations-scan", &o, "18");
  is_str (str_at (j, "result.structuredContent.error.code"), "policy_violation",
          "more refused destinations than listed (a scan), exit 0: policy_violation");
  ab_json_free (j);

  free (o.violations_json);
  o.violations_json = xstrdup ("[{\"kind\":\"egress\"}, 7, {]");
  j = frame_of ("violations-bad", &o, "14");
  ok (at (j, "result.structuredContent.violations") != NULL
          && at (j, "result.structuredContent.violations")->u.arr.n == 0,
      "malformed violations: an empty array, the frame stays valid");
  ok (strstr (str_at (j, "result.structuredContent.degraded[1]") ?: "", "malformed") != NULL,
      "malformed violations: said in degraded");
  ab_json_free (j);
  ab_outcome_free (&o);
}

static void
test_ids (void)
{
  struct ab_outcome o;
  struct ab_json *j;

  base_outcome (&o, "ci");
  o.reason = AB_REASON_EXITED;
  o.exited = true;
  j = frame_of ("id-bad", &o, "7,\"x\":1");
  ok (null_at (j, "id") && at (j, "x") == NULL,
      "an id that is not one JSON value becomes null (no injection)");
  ab_json_free (j);
  j = frame_of ("id-float", &o, "1.5");
  ok (null_at (j, "id"), "a fractional id becomes null");
  ab_json_free (j);
  j = frame_of ("id-null", &o, NULL);
  ok (null_at (j, "id"), "no id: null");
  ab_json_free (j);
  ab_outcome_free (&o);
}

static void
test_write (void)
{
  struct ab_outcome o;
  int p[2];
  char buf[8192];
  ssize_t n;
  size_t len;
  char *f;
  ab_error_t err = { 0 };

  base_outcome (&o, "cw");
  o.reason = AB_REASON_EXITED;
  o.exited = true;
  f = ab_record_frame (&o, "1", &len);
  if (pipe2 (p, O_CLOEXEC) < 0)
    return;
  ok (ab_record_write (p[1], &o, "1", &err) == 0, "ab_record_write succeeds on a pipe");
  close (p[1]);
  n = ab_read_all (p[0], buf, sizeof buf);
  close (p[0]);
  ok (n == (ssize_t)len && memcmp (buf, f, len) == 0, "ab_record_write writes exactly the frame");
  ok (ab_record_write (-1, &o, "1", &err) < 0 && err.errnum == EBADF, "a write error is reported (EBADF)");
  free (f);
  ab_outcome_free (&o);
}

/* A frame far over the writer's 64 KiB buffer, with strings longer than it
   (300000 control bytes are 1.8 MB of escapes in structuredContent, more in
   its text copy; binary stderr adds a blob): written as it is made, it is
   still exactly the frame. */
static void
test_write_large (void)
{
  _cleanup_free_ char *out = xmalloc (300000), *errb = xmalloc (100000), *f = NULL, *got = NULL;
  _cleanup_close_ int fd = memfd_create ("record", MFD_CLOEXEC);
  struct ab_outcome o;
  ab_error_t err = { 0 };
  size_t len, got_len = 0;

  memset (out, 1, 300000);
  memset (errb, 0xff, 100000);
  base_outcome (&o, "cl");
  o.reason = AB_REASON_EXITED;
  o.exited = true;
  set_stream (&o.out, out, 300000, 5000000, true);
  set_stream (&o.err, errb, 100000, 100000, false);
  f = ab_record_frame (&o, "2", &len);
  ok (fd >= 0 && ab_record_write (fd, &o, "2", &err) == 0 && lseek (fd, 0, SEEK_SET) == 0
          && ab_read_fd (fd, 64u << 20, &got, &got_len, &err) == 0,
      "ab_record_write writes a %zu-byte frame", len);
  ok (got_len == len && got != NULL && memcmp (got, f, len) == 0 && f[len - 1] == '\n',
      "... byte for byte the frame, ending in its one LF");
  ab_outcome_free (&o);
}

static void
test_base64 (void)
{
  static const struct
  {
    const char *in, *out;
  } v[] = { { "", "" },
            { "f", "Zg==" },
            { "fo", "Zm8=" },
            { "foo", "Zm9v" },
            { "foob", "Zm9vYg==" },
            { "fooba", "Zm9vYmE=" },
            { "foobar", "Zm9vYmFy" } };

  for (size_t i = 0; i < AB_ARRAY_SIZE (v); i++)
    {
      char *b = ab_base64 (v[i].in, strlen (v[i].in), NULL);
      is_str (b, v[i].out, "base64 of \"%s\" (RFC 4648 vector)", v[i].in);
      free (b);
    }
}

/* Every frame against docs/result-schema.json, by the Python checker. */
static void
test_schema (void)
{
  const char *py = getenv ("PYTHON3"), *top = getenv ("AB_TOP_SRCDIR");
  struct ab_strv cmd = { 0 };
  char *script;
  pid_t pid;
  int status = -1;

  if (py == NULL || top == NULL)
    {
      printf ("ok %d - # SKIP PYTHON3/AB_TOP_SRCDIR not set (run through make check)\n", ++tap_count);
      return;
    }
  script = xasprintf ("%s/tests/mcp/check_record.py", top);
  ab_strv_push (&cmd, py);
  ab_strv_push (&cmd, script);
  for (size_t i = 0; i < frames_written.n; i++)
    ab_strv_push (&cmd, frames_written.v[i]);
  fflush (stdout);
  pid = fork ();
  if (pid == 0)
    {
      dup2 (2, 1); /* its diagnostics must not look like TAP */
      execv (py, cmd.v);
      _exit (127);
    }
  waitpid (pid, &status, 0);
  ok (WIFEXITED (status) && WEXITSTATUS (status) == 0,
      "all %zu frames match docs/result-schema.json (Draft 2020-12)", frames_written.n);
  free (script);
  ab_strv_free (&cmd);
}

int
main (void)
{
  if (mkdtemp (tmpdir) == NULL)
    return 1;
  test_exit0 ();
  test_exit42 ();
  test_segv ();
  test_timeout ();
  test_oom ();
  test_pids ();
  test_output_cap ();
  test_binary ();
  test_setup_failure ();
  test_violations ();
  test_ids ();
  test_write ();
  test_write_large ();
  test_base64 ();
  test_schema ();
  for (size_t i = 0; i < frames_written.n; i++)
    unlink (frames_written.v[i]);
  rmdir (tmpdir);
  ab_strv_free (&frames_written);
  return tap_done ();
}
