#include "config.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>

#include "base/log.h"
#include "base/util.h"
#include "base/gen.h"

static int log_fd = -1;
static int log_format = AB_LOG_TEXT;
static bool log_debug = false;

int
ab_log_init (const char *path, int format, bool debug, ab_error_t *err)
{
  log_format = format;
  log_debug = debug;
  if (path != NULL && *path)
    {
      int fd = open (path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);
      if (fd < 0)
        return ab_error_setc (err, AB_EC_USAGE, errno, "open log file `%s`", path);
      log_fd = fd;
    }
  return 0;
}

void
ab_log_close (void)
{
  if (log_fd >= 0)
    close (log_fd);
  log_fd = -1;
}

bool
ab_log_debug_enabled (void)
{
  return log_debug;
}

int
ab_log_fd (void)
{
  return log_fd;
}

static const char *
level_name (int level)
{
  switch (level)
    {
    case AB_LOG_DEBUG:
      return "debug";
    case AB_LOG_INFO:
      return "info";
    case AB_LOG_WARN:
      return "warning";
    default:
      return "error";
    }
}

static void
write_entry (int level, const char *msg)
{
  char ts[64];
  _cleanup_free_ char *line = NULL;
  size_t len;

  if (log_fd < 0)
    return;
  ab_format_time_rfc3339 (ab_now_realtime_ns (), ts, sizeof ts);
  if (log_format == AB_LOG_JSON)
    {
      _cleanup_gen_ struct ab_gen *g = ab_gen_new (false);
      ab_gen_obj_open (g);
      ab_gen_kv_str (g, "level", level_name (level));
      ab_gen_key (g, "msg");
      ab_gen_bytes (g, msg, strlen (msg));
      ab_gen_kv_str (g, "time", ts);
      ab_gen_obj_close (g);
      line = ab_gen_steal (g, true, &len);
    }
  else
    {
      /* logfmt: quote and escape the message */
      size_t i, o = 0, n = strlen (msg);
      _cleanup_free_ char *q = xmalloc (n * 2 + 1);
      for (i = 0; i < n; i++)
        {
          if (msg[i] == '"' || msg[i] == '\\')
            q[o++] = '\\';
          q[o++] = msg[i] == '\n' ? ' ' : msg[i];
        }
      q[o] = '\0';
      line = xasprintf ("time=\"%s\" level=%s msg=\"%s\"\n", ts, level_name (level), q);
      len = strlen (line);
    }
  if (ab_write_all (log_fd, line, len) < 0)
    {
      /* nowhere left to report it */
    }
}

void
ab_log (int level, const char *fmt, ...)
{
  _cleanup_free_ char *msg = NULL;
  va_list ap;

  if (level == AB_LOG_DEBUG && !log_debug)
    return;
  va_start (ap, fmt);
  /* On the heap: a long entry (the nftables rules at --debug) is not cut. */
  if (vasprintf (&msg, fmt, ap) < 0)
    msg = NULL;
  va_end (ap);
  if (msg == NULL)
    return;
  write_entry (level, msg);
  /* With --log, as runc: the file alone (go-runc parses `state` and `ps`
     from stdout and stderr together).  Without: debug and info go to
     stderr only with --debug, never to stdout, which belongs to the
     container or to the MCP protocol.  Errors go to both (ab_log_error). */
  if (log_fd < 0 && (level >= AB_LOG_WARN || log_debug))
    {
      char *line = xasprintf ("agentbox: %s%s\n", level == AB_LOG_WARN ? "warning: " : "", msg);
      ab_write_all (2, line, strlen (line));
      free (line);
    }
}

void
ab_log_error (const ab_error_t *err)
{
  char *line;

  write_entry (AB_LOG_ERROR, err->msg);
  line = xasprintf ("agentbox: %s\n", err->msg);
  ab_write_all (2, line, strlen (line));
  free (line);
}

void
ab_trace (const char *what)
{
  static uint64_t t0;
  uint64_t now = ab_now_monotonic_ns ();

  if (t0 == 0)
    t0 = now;
  if (log_debug)
    ab_log (AB_LOG_DEBUG, "+%.3f ms %s", (double) (now - t0) / 1e6, what);
}
