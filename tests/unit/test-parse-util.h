/* Shared helpers of the config.json parser tests. */
#ifndef AB_TEST_PARSE_UTIL_H
#define AB_TEST_PARSE_UTIL_H

#include <fcntl.h>
#include <stdlib.h>

#include "base/util.h"
#include "spec/spec.h"
#include "tests/unit/tap.h"

#define TEST_HELPER static __attribute__ ((unused))

/* JSON written with single quotes, for readable tests: every ' becomes ".
   (A literal quote inside a value can be written \u0027.) */
TEST_HELPER char *
dq (const char *s)
{
  char *r = xstrdup (s), *p;

  for (p = r; *p; p++)
    if (*p == '\'')
      *p = '"';
  return r;
}

/* A minimal valid document with extra top-level members. */
TEST_HELPER char *
doc (const char *members)
{
  _cleanup_free_ char *m = dq (members);
  return xasprintf ("{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"rootfs\"}%s%s}", m[0] ? "," : "", m);
}

/* ... with a minimal valid process with extra members. */
TEST_HELPER char *
proc (const char *members)
{
  _cleanup_free_ char *m = dq (members);
  return xasprintf ("{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"rootfs\"},"
                    "\"process\":{\"cwd\":\"/\",\"args\":[\"sh\"]%s%s}}",
                    m[0] ? "," : "", m);
}

/* ... with a `linux` object holding these members. */
TEST_HELPER char *
lnx (const char *members)
{
  _cleanup_free_ char *m = dq (members);
  return xasprintf ("{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"rootfs\"},\"linux\":{%s}}", m);
}

/* Parse and return the error message, or NULL when the document parsed.
   Takes ownership of text (so calls nest: perr (proc ("..."))). */
TEST_HELPER const char *
perr_len (char *text, size_t len)
{
  static ab_error_t err;
  struct ab_spec *s;

  memset (&err, 0, sizeof err);
  s = ab_spec_parse (text, len, &err);
  free (text);
  if (s != NULL)
    {
      ab_spec_free (s);
      return NULL;
    }
  if (err.cls != AB_EC_CONFIG)
    return "error of the wrong class";
  return err.msg;
}

TEST_HELPER const char *
perr (char *text)
{
  return perr_len (text, strlen (text));
}

/* Parse a document that must be valid; NULL (and a diagnostic) if not. */
TEST_HELPER struct ab_spec *
parse_ok (char *text)
{
  ab_error_t err = { 0 };
  struct ab_spec *s = ab_spec_parse (text, strlen (text), &err);

  if (s == NULL)
    printf ("# unexpected error: %s\n", err.msg);
  free (text);
  return s;
}

/* A fixture of tests/unit/data, NUL-terminated. */
TEST_HELPER char *
fixture (const char *name, size_t *len)
{
  const char *top = getenv ("AB_TOP_SRCDIR");
  _cleanup_free_ char *path = xasprintf ("%s/tests/unit/data/%s", top ? top : ".", name);
  ab_error_t err = { 0 };
  char *buf = NULL;

  if (ab_read_file_at (AT_FDCWD, path, 8u << 20, &buf, len, &err) < 0)
    {
      printf ("Bail out! cannot read fixture: %s\n", err.msg);
      exit (1);
    }
  return buf;
}

#endif
