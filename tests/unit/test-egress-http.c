/* HTTP request heads (request line, target forms, Host) and the origin-form
   rewrite, against the smuggling and confusion classics. */
#include "config.h"

#include "netns/egress-internal.h"
#include "tests/unit/tap.h"

static int
parse (const char *s, struct ab_http_head *h)
{
  const char *why;
  return ab_http_parse_head (s, strlen (s), h, &why);
}

static void
test_forms (void)
{
  struct ab_http_head h;

  is_int (parse ("CONNECT pypi.org:443 HTTP/1.1\r\nHost: pypi.org:443\r\n\r\n", &h), AB_HTTP_OK,
          "CONNECT parses");
  ok (h.form == AB_HTTP_AUTHORITY && strcmp (h.host, "pypi.org") == 0 && h.port == 443,
      "CONNECT authority: host and port");
  is_int (parse ("CONNECT pypi.org HTTP/1.1\r\n\r\n", &h), AB_HTTP_BAD, "CONNECT without a port is refused");
  is_int (parse ("CONNECT [2001:db8::1]:443 HTTP/1.1\r\n\r\n", &h), AB_HTTP_OK, "CONNECT to an IPv6 literal");
  is_str (h.host, "[2001:db8::1]", "IPv6 literal kept bracketed and canonical");
  is_int (parse ("GET HTTP://Files.Example.COM:8080/a/b?c=d HTTP/1.0\r\n\r\n", &h), AB_HTTP_OK,
          "absolute URI parses (scheme case-insensitive)");
  ok (h.form == AB_HTTP_ABSOLUTE && strcmp (h.host, "files.example.com") == 0 && h.port == 8080
          && h.minor == 0,
      "absolute URI: host normalised, port, version");
  ok (h.path_len == 8
          && memcmp ("GET HTTP://Files.Example.COM:8080/a/b?c=d" + h.path_off, "/a/b?c=d", 8) == 0,
      "absolute URI: the path");
  is_int (parse ("GET http://a.test HTTP/1.1\r\n\r\n", &h), AB_HTTP_OK, "absolute URI without a path");
  ok (h.port == 80 && h.path_len == 0, "default port 80, empty path");
  is_int (parse ("GET https://a.test/ HTTP/1.1\r\n\r\n", &h), AB_HTTP_OK, "https:// parses ...");
  ok (h.https_scheme && h.port == 443, "... and is flagged (the proxy refuses it: no TLS origination)");
  is_int (parse ("GET /x HTTP/1.1\r\nHost: a.test:8080\r\n\r\n", &h), AB_HTTP_OK, "origin form parses");
  ok (h.form == AB_HTTP_ORIGIN && h.has_host && strcmp (h.host_hdr, "a.test") == 0 && h.host_hdr_port == 8080,
      "the Host header's host and port");
  is_int (parse ("GET /x HTTP/1.1\r\nHost: a.test\r\n", &h), AB_HTTP_MORE,
          "an unfinished head asks for more");
}

static void
test_hostile (void)
{
  static const struct
  {
    const char *req, *what;
  } bad[] = {
    { "GET http://allowed.test@evil.test/ HTTP/1.1\r\n\r\n", "userinfo in the authority" },
    { "GET http://evil.test#@allowed.test/ HTTP/1.1\r\n\r\n", "a fragment in the target" },
    { "GET /x HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\n\r\n", "two Host headers" },
    { "GET /x HTTP/1.1\r\nHost : a.test\r\n\r\n", "whitespace before the colon" },
    { "GET /x HTTP/1.1\r\nX: a\r\n b\r\n\r\n", "obsolete line folding" },
    { "GET /x HTTP/1.1\nHost: a.test\r\n\r\n", "a bare LF" },
    { "GET /x HTTP/1.1\r\nHost: a.test\rX: y\r\n\r\n", "a bare CR" },
    { "GET /x HTTP/1.1\r\nHost: a.test\r\nX: \x01\r\n\r\n", "a control byte in a value" },
    { "GET  /x HTTP/1.1\r\n\r\n", "two spaces in the request line" },
    { "GET /x HTTP/2.0\r\n\r\n", "HTTP/2.0 in the request line" },
    { "GET /x\r\n\r\n", "HTTP/0.9" },
    { "G@T /x HTTP/1.1\r\n\r\n", "a method that is not a token" },
    { "GET ftp://a.test/ HTTP/1.1\r\n\r\n", "another scheme" },
    { "GET http://2130706433/ HTTP/1.1\r\n\r\n", "a decimal IPv4 in disguise" },
    { "GET http://0x7f.1/ HTTP/1.1\r\n\r\n", "a hex IPv4 in disguise" },
    { "GET http://a.test:99999/ HTTP/1.1\r\n\r\n", "a port out of range" },
    { "GET http://a.test:0/ HTTP/1.1\r\n\r\n", "port 0" },
    { "GET http://[::1/ HTTP/1.1\r\n\r\n", "an unclosed IPv6 literal" },
    { "GET http://[fe80::1%25eth0]/ HTTP/1.1\r\n\r\n", "an IPv6 zone" },
    { "GET /x HTTP/1.1\r\nHost: \r\n\r\n", "an empty Host" },
    { "GET /x HTTP/1.1\r\nHost: a.test, b.test\r\n\r\n", "a Host list" },
  };
  struct ab_http_head h;
  char big[AB_HTTP_MAX_HEAD + 64];

  for (size_t i = 0; i < AB_ARRAY_SIZE (bad); i++)
    is_int (parse (bad[i].req, &h), AB_HTTP_BAD, "refused: %s", bad[i].what);
  ok (parse ("GET /x HTTP/1.1\r\nHost: a.test\r\n\0\r\n\r\n", &h) != AB_HTTP_OK,
      "a NUL in the head is refused");
  memset (big, 'a', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  memcpy (big, "GET /", 5);
  is_int (parse (big, &h), AB_HTTP_TOO_BIG, "a head over 16 KiB is refused as too big");
}

static void
test_rewrite (void)
{
  const char *req = "GET http://a.test/p?q=1 HTTP/1.1\r\nUser-Agent: t\r\nProxy-Connection: keep-alive\r\n"
                    "Proxy-Authorization: Basic eA==\r\nConnection: keep-alive\r\nAccept: */*\r\n\r\nBODY";
  struct ab_http_head h;
  size_t n;
  char *out;

  ok (parse (req, &h) == AB_HTTP_OK && !h.has_host, "parse a proxy request without Host");
  out = ab_http_rewrite_origin (req, &h, &n);
  is_str (out,
          "GET /p?q=1 HTTP/1.1\r\nUser-Agent: t\r\nAccept: */*\r\nHost: a.test\r\nConnection: close\r\n\r\n",
          "rewritten to origin form; Proxy-* and Connection dropped; Host added; one request per connection");
  is_int (n, strlen (out), "length matches");
  free (out);

  req = "POST http://a.test:8080?x HTTP/1.0\r\nHost: a.test:8080\r\n\r\n";
  ok (parse (req, &h) == AB_HTTP_OK, "parse a query-only target");
  out = ab_http_rewrite_origin (req, &h, &n);
  is_str (out, "POST /?x HTTP/1.0\r\nHost: a.test:8080\r\nConnection: close\r\n\r\n",
          "a query-only target gets its '/' and the client's Host is kept");
  free (out);
}

/* The authority of a CONNECT target, through the head parser that reads it. */
static void
test_authority (void)
{
  struct ab_http_head h;

  ok (parse ("CONNECT A.Test:8443 HTTP/1.1\r\n\r\n", &h) == AB_HTTP_OK && strcmp (h.host, "a.test") == 0
          && h.port == 8443,
      "authority with a port");
  ok (parse ("GET http://192.0.2.1/ HTTP/1.1\r\n\r\n", &h) == AB_HTTP_OK && strcmp (h.host, "192.0.2.1") == 0
          && h.port == 80,
      "IPv4 authority without a port");
  ok (parse ("CONNECT [2001:DB8:0::1]:80 HTTP/1.1\r\n\r\n", &h) == AB_HTTP_OK
          && strcmp (h.host, "[2001:db8::1]") == 0 && h.port == 80,
      "IPv6 authority is canonicalised");
  is_int (parse ("CONNECT a.test: HTTP/1.1\r\n\r\n", &h), AB_HTTP_BAD, "an empty port is refused");
  is_int (parse ("CONNECT a.test:+80 HTTP/1.1\r\n\r\n", &h), AB_HTTP_BAD, "a signed port is refused");
  is_int (parse ("CONNECT 2001:db8::1 HTTP/1.1\r\n\r\n", &h), AB_HTTP_BAD,
          "an unbracketed IPv6 authority is refused");
}

/* Where a request's body ends: the proxy forwards exactly that much before
   it reads (and checks) the next head. */
static void
test_framing (void)
{
  static const struct
  {
    const char *req, *what;
  } bad[] = {
    { "POST /x HTTP/1.1\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n",
      "Content-Length with Transfer-Encoding (CL.TE)" },
    { "POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n",
      "Transfer-Encoding with Content-Length (TE.CL)" },
    { "POST /x HTTP/1.1\r\nContent-Length: 4\r\nContent-Length: 5\r\n\r\n", "two different lengths" },
    { "POST /x HTTP/1.1\r\nContent-Length: 4, 4\r\n\r\n", "a length list" },
    { "POST /x HTTP/1.1\r\nContent-Length: +4\r\n\r\n", "a signed length" },
    { "POST /x HTTP/1.1\r\nContent-Length: 0x10\r\n\r\n", "a hex length" },
    { "POST /x HTTP/1.1\r\nContent-Length: 9999999999999999999\r\n\r\n", "a length over 18 digits" },
    { "POST /x HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", "a coding before chunked" },
    { "POST /x HTTP/1.1\r\nTransfer-Encoding: chunked, identity\r\n\r\n", "chunked not last" },
    { "POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
      "two Transfer-Encoding headers" },
    { "POST /x HTTP/1.1\r\nTransfer-Encoding: xchunked\r\n\r\n", "a look-alike coding" },
    { "POST /x HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", "chunked in HTTP/1.0" },
  };
  struct ab_http_head h;

  ok (parse ("GET /x HTTP/1.1\r\nHost: a.test\r\n\r\n", &h) == AB_HTTP_OK && !h.chunked && !h.has_length
          && !h.upgrade,
      "a request without Content-Length or Transfer-Encoding has no body");
  ok (parse ("POST /x HTTP/1.1\r\ncontent-length:  1234 \r\nContent-Length: 1234\r\n\r\n", &h) == AB_HTTP_OK
          && h.has_length && h.content_length == 1234 && !h.chunked,
      "Content-Length (any case, padded, repeated with the same value)");
  ok (parse ("POST /x HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n", &h) == AB_HTTP_OK && h.chunked,
      "Transfer-Encoding: chunked");
  ok (parse ("GET /ws HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n", &h) == AB_HTTP_OK
          && h.upgrade,
      "an Upgrade header is flagged");
  for (size_t i = 0; i < AB_ARRAY_SIZE (bad); i++)
    is_int (parse (bad[i].req, &h), AB_HTTP_BAD, "refused framing: %s", bad[i].what);
}

/* Scan s in pieces of `step` bytes; the body's length, or -1. */
static ssize_t
scan (const char *s, size_t step, bool *done)
{
  struct ab_http_chunked c = { 0 };
  size_t n = strlen (s), off = 0;

  *done = false;
  while (off < n && !*done)
    {
      size_t k = n - off < step ? n - off : step;
      ssize_t r = ab_http_chunked_scan (&c, (const uint8_t *)s + off, k, done);
      if (r < 0)
        return -1;
      off += (size_t)r;
      if (!*done && (size_t)r != k)
        return -1; /* a scan that stops early must say done */
    }
  return (ssize_t)off;
}

static void
test_chunked (void)
{
  static const char body[]
      = "5\r\nhello\r\n1A;ext=\"v\"\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nX-T: 1\r\n\r\n";
  static const struct
  {
    const char *body, *what;
  } bad[] = {
    { "5\nhello\r\n0\r\n\r\n", "a bare LF after the size" },
    { "5\r\nhelloX\r\n0\r\n\r\n", "data longer than its size" },
    { "5\r\nhello\n0\r\n\r\n", "a bare LF after the data" },
    { "g\r\n", "a size that is not hex" },
    { "\r\n", "an empty size" },
    { "-5\r\n", "a signed size" },
    { " 5\r\n", "a space before the size" },
    { "1000000000000000\r\n", "a size of 16 hex digits" },
    { "0\r\nX: a\nY: b\r\n\r\n", "a bare LF in a trailer" },
    { "0\r\n folded\r\n\r\n", "a folded trailer" },
    { "5;a\nb\r\nhello\r\n0\r\n\r\n", "a bare LF in a chunk extension" },
  };
  bool done;
  size_t steps[] = { 1, 2, 3, 7, 1000 };

  for (size_t i = 0; i < AB_ARRAY_SIZE (steps); i++)
    ok (scan (body, steps[i], &done) == (ssize_t)strlen (body) && done,
        "a chunked body with an extension and a trailer ends at its last CRLF (fed %zu bytes at a time)",
        steps[i]);
  {
    char both[256];
    snprintf (both, sizeof both, "%sGET /next HTTP/1.1\r\n\r\n", body);
    ok (scan (both, 1000, &done) == (ssize_t)strlen (body) && done,
        "the bytes after the body are not the body's (the next request starts there)");
  }
  ok (scan ("0\r\n\r\n", 1, &done) == 5 && done, "an empty chunked body");
  ok (scan ("5\r\nhel", 1000, &done) == 6 && !done, "a body cut short is not done");
  for (size_t i = 0; i < AB_ARRAY_SIZE (bad); i++)
    is_int (scan (bad[i].body, 1000, &done), -1, "refused chunked body: %s", bad[i].what);
}

int
main (void)
{
  test_forms ();
  test_hostile ();
  test_rewrite ();
  test_authority ();
  test_framing ();
  test_chunked ();
  return tap_done ();
}
