/* Minimal TAP producer for the C unit tests (run by automake's tap-driver).
 *
 *   ok (x == 1, "parser accepts %s", name);
 *   is_str (err.msg, "config.json: root: required", "missing root is named");
 *   return tap_done ();
 */
#ifndef AB_TAP_H
#define AB_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_count, tap_failures;

static void __attribute__ ((format (printf, 4, 5), unused))
tap_ok (int pass, const char *file, int line, const char *fmt, ...)
{
  va_list ap;

  tap_count++;
  if (!pass)
    tap_failures++;
  printf ("%sok %d - ", pass ? "" : "not ", tap_count);
  va_start (ap, fmt);
  vprintf (fmt, ap);
  va_end (ap);
  printf ("\n");
  if (!pass)
    printf ("#   failed at %s:%d\n", file, line);
  fflush (stdout);
}

#define ok(cond, ...) tap_ok (!!(cond), __FILE__, __LINE__, __VA_ARGS__)

#define is_str(got, want, ...)                                                                                     \
  do                                                                                                               \
    {                                                                                                              \
      const char *g_ = (got), *w_ = (want);                                                                        \
      int p_ = (g_ == NULL && w_ == NULL) || (g_ && w_ && strcmp (g_, w_) == 0);                                   \
      tap_ok (p_, __FILE__, __LINE__, __VA_ARGS__);                                                                \
      if (!p_)                                                                                                     \
        printf ("#   got:      %s\n#   expected: %s\n", g_ ? g_ : "(null)", w_ ? w_ : "(null)");                   \
    }                                                                                                              \
  while (0)

#define is_int(got, want, ...)                                                                                     \
  do                                                                                                               \
    {                                                                                                              \
      long long g_ = (long long) (got), w_ = (long long) (want);                                                   \
      tap_ok (g_ == w_, __FILE__, __LINE__, __VA_ARGS__);                                                          \
      if (g_ != w_)                                                                                                \
        printf ("#   got:      %lld\n#   expected: %lld\n", g_, w_);                                               \
    }                                                                                                              \
  while (0)

static int __attribute__ ((unused))
tap_done (void)
{
  printf ("1..%d\n", tap_count);
  return tap_failures ? 1 : 0;
}

#endif
