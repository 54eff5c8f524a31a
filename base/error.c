#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"

__thread const char *ab_current_step = NULL;

static void
vset (ab_error_t *err, int cls, int errnum, const char *fmt, va_list ap)
{
  int n;

  if (err == NULL)
    return;
  err->cls = cls;
  err->errnum = errnum;
  err->where[0] = '\0';
  if (ab_current_step != NULL)
    snprintf (err->step, sizeof err->step, "%s", ab_current_step);
  else
    err->step[0] = '\0';
  n = vsnprintf (err->msg, sizeof err->msg, fmt, ap);
  if (n < 0)
    n = 0;
  if (errnum != 0 && (size_t) n < sizeof err->msg)
    snprintf (err->msg + n, sizeof err->msg - n, ": %s", strerror (errnum));
}

int
ab_error_set (ab_error_t *err, int errnum, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vset (err, AB_EC_SETUP, errnum, fmt, ap);
  va_end (ap);
  return -1;
}

int
ab_error_setc (ab_error_t *err, int cls, int errnum, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vset (err, cls, errnum, fmt, ap);
  va_end (ap);
  return -1;
}

int
ab_error_prefix (ab_error_t *err, const char *fmt, ...)
{
  char prefix[AB_ERR_MSG_MAX];
  char old[AB_ERR_MSG_MAX];
  va_list ap;

  if (err == NULL)
    return -1;
  va_start (ap, fmt);
  vsnprintf (prefix, sizeof prefix, fmt, ap);
  va_end (ap);
  memcpy (old, err->msg, sizeof old);
  snprintf (err->msg, sizeof err->msg, "%s: %s", prefix, old);
  return -1;
}

void
ab_error_clear (ab_error_t *err)
{
  if (err == NULL)
    return;
  memset (err, 0, sizeof *err);
}

const char *
ab_error_class_name (int cls)
{
  static const char *const names[AB_EC__COUNT] = {
    [AB_EC_NONE] = "none",         [AB_EC_INTERNAL] = "internal", [AB_EC_USAGE] = "usage",
    [AB_EC_CONFIG] = "config",     [AB_EC_NOTFOUND] = "not_found", [AB_EC_EXISTS] = "exists",
    [AB_EC_STATE] = "state",       [AB_EC_SETUP] = "setup",       [AB_EC_HOOK] = "hook",
    [AB_EC_EXEC] = "exec",         [AB_EC_RESOURCE] = "resource",
  };
  if (cls < 0 || cls >= AB_EC__COUNT || names[cls] == NULL)
    return "internal";
  return names[cls];
}
