/* Diagnostics: one line per message to stderr and, with --log FILE, to the
 * log file in the runc-compatible formats orchestrators parse:
 *   json: {"level":"error","msg":"...","time":"2026-12-02T10:00:00.000000000Z"}
 *   text: time="..." level=error msg="..."
 * The last error line is what containerd shows to its user. */
#ifndef AB_LOG_H
#define AB_LOG_H

#include <stdbool.h>

#include "base/error.h"

enum ab_log_level
{
  AB_LOG_DEBUG,
  AB_LOG_INFO,
  AB_LOG_WARN,
  AB_LOG_ERROR,
};

enum ab_log_format
{
  AB_LOG_TEXT,
  AB_LOG_JSON,
};

/* path may be NULL (stderr only).  Returns -1 if the log file cannot be opened. */
int ab_log_init (const char *path, int format, bool debug, ab_error_t *err);
void ab_log_close (void);
bool ab_log_debug_enabled (void);
/* The fd of the log file, or -1 (children inherit it to report errors). */
int ab_log_fd (void);

void ab_log (int level, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
#define ab_debug(...)                                                                                              \
  do                                                                                                               \
    {                                                                                                              \
      if (ab_log_debug_enabled ())                                                                                 \
        ab_log (AB_LOG_DEBUG, __VA_ARGS__);                                                                        \
    }                                                                                                              \
  while (0)
#define ab_warn(...) ab_log (AB_LOG_WARN, __VA_ARGS__)

/* Phase timing for --debug: "agentbox: +1.234 ms <what>" relative to the
   first call (main calls it at start). */
void ab_trace (const char *what);

/* Report an error: "agentbox: <msg>" on stderr and an error entry in the log. */
void ab_log_error (const ab_error_t *err);

#endif
