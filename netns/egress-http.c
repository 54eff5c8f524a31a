/* HTTP/1.x request heads for the proxy (RFC 9112): the request line, the
 * target's host, the Host header, and the origin-form rewrite.  Strict on
 * purpose: anything two parsers could read differently (bare LF, folded
 * lines, whitespace before ':', two Host headers, userinfo in the
 * authority) is refused rather than guessed. */
#include "config.h"

#include <ctype.h>
#include <strings.h>
#include <sys/socket.h>

#include "netns/egress-internal.h"

#define HTTP_MAX_HEADERS 128

static bool
tchar (unsigned char c)
{
  return isalnum (c) || strchr ("!#$%&'*+-.^_`|~", c) != NULL;
}

/* Parse "host[:port]" / "[v6][:port]"; the host normalised (names) or
   canonical (literals) into host.  Returns 0 or -1. */
static int
ab_http_parse_authority (const char *s, size_t len, char *host, size_t host_len, uint16_t *port,
                         bool *port_given)
{
  char name[AB_EGRESS_NAME_MAX + 1];
  struct ab_egress_addr a;
  size_t hl;

  *port = 0;
  *port_given = false;
  if (len == 0)
    return -1;
  if (s[0] == '[')
    {
      const char *close = memchr (s, ']', len);
      if (close == NULL)
        return -1;
      hl = (size_t)(close - s) + 1;
      if (ab_egress_ip_parse (s, hl, &a) < 0 || a.family != AF_INET6)
        return -1;
    }
  else
    {
      const char *colon = memchr (s, ':', len);
      hl = colon ? (size_t)(colon - s) : len;
      if (ab_egress_ip_parse (s, hl, &a) < 0)
        {
          if (ab_egress_name_normalize (s, hl, name) < 0)
            return -1;
          a.family = 0;
        }
      else if (a.family != AF_INET)
        return -1;
    }
  if (hl < len)
    {
      uint32_t v = 0;
      size_t i;

      if (s[hl] != ':' || len - hl - 1 == 0 || len - hl - 1 > 5)
        return -1;
      for (i = hl + 1; i < len; i++)
        {
          if (!isdigit ((unsigned char)s[i]))
            return -1;
          v = v * 10 + (uint32_t)(s[i] - '0');
        }
      if (v == 0 || v > 65535)
        return -1;
      *port = (uint16_t)v;
      *port_given = true;
    }
  if (a.family == 0)
    snprintf (host, host_len, "%s", name);
  else
    ab_egress_addr_pattern (&a, host, host_len);
  return 0;
}

/* Target bytes: visible ASCII only, no '#' (a fragment never travels). */
static bool
target_ok (const char *s, size_t len)
{
  for (size_t i = 0; i < len; i++)
    if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f || s[i] == '#')
      return false;
  return true;
}

static int
parse_target (const char *t, size_t len, size_t t_off, struct ab_http_head *h, const char **why)
{
  bool port_given;
  size_t skip, alen;

  if (!target_ok (t, len))
    return (*why = "invalid request target"), AB_HTTP_BAD;
  if (strcmp (h->method, "CONNECT") == 0)
    {
      h->form = AB_HTTP_AUTHORITY;
      if (ab_http_parse_authority (t, len, h->host, sizeof h->host, &h->port, &port_given) < 0 || !port_given)
        return (*why = "CONNECT needs host:port"), AB_HTTP_BAD;
      return AB_HTTP_OK;
    }
  if (t[0] == '/')
    {
      h->form = AB_HTTP_ORIGIN;
      h->path_off = t_off;
      h->path_len = len;
      return AB_HTTP_OK;
    }
  if (len == 1 && t[0] == '*')
    {
      h->form = AB_HTTP_ASTERISK;
      return AB_HTTP_OK;
    }
  if (len > 7 && strncasecmp (t, "http://", 7) == 0)
    skip = 7;
  else if (len > 8 && strncasecmp (t, "https://", 8) == 0)
    skip = 8, h->https_scheme = true;
  else
    return (*why = "unsupported request target"), AB_HTTP_BAD;
  h->form = AB_HTTP_ABSOLUTE;
  for (alen = 0; skip + alen < len && t[skip + alen] != '/' && t[skip + alen] != '?'; alen++)
    /* "http://allowed.example@evil.example/": which host is meant depends on
       the parser; refuse credentials in the authority outright. */
    if (t[skip + alen] == '@')
      return (*why = "userinfo in the request target"), AB_HTTP_BAD;
  if (ab_http_parse_authority (t + skip, alen, h->host, sizeof h->host, &h->port, &port_given) < 0)
    return (*why = "invalid host in the request target"), AB_HTTP_BAD;
  if (!port_given)
    h->port = h->https_scheme ? 443 : 80;
  h->path_off = t_off + skip + alen;
  h->path_len = len - skip - alen;
  return AB_HTTP_OK;
}

static bool
header_is (const char *line, const char *colon, const char *name)
{
  return (size_t)(colon - line) == strlen (name) && strncasecmp (line, name, strlen (name)) == 0;
}

/* Content-Length: digits only; a repeated header must repeat the value. */
static int
parse_length (const char *v, size_t len, struct ab_http_head *h, const char **why)
{
  uint64_t n = 0;

  if (len == 0 || len > 18)
    return (*why = "invalid Content-Length"), AB_HTTP_BAD;
  for (size_t i = 0; i < len; i++)
    {
      if (!isdigit ((unsigned char)v[i]))
        return (*why = "invalid Content-Length"), AB_HTTP_BAD;
      n = n * 10 + (uint64_t)(v[i] - '0');
    }
  if (h->has_length && h->content_length != n)
    return (*why = "conflicting Content-Length headers"), AB_HTTP_BAD;
  h->has_length = true;
  h->content_length = n;
  return AB_HTTP_OK;
}

static int
parse_header (const char *line, size_t len, struct ab_http_head *h, const char **why)
{
  const char *colon = memchr (line, ':', len);
  const char *v, *end = line + len;
  bool port_given;

  if (len > 0 && (line[0] == ' ' || line[0] == '\t'))
    return (*why = "obsolete line folding"), AB_HTTP_BAD;
  if (colon == NULL || colon == line)
    return (*why = "malformed header line"), AB_HTTP_BAD;
  for (const char *p = line; p < colon; p++)
    if (!tchar ((unsigned char)*p))
      return (*why = "malformed header name"), AB_HTTP_BAD;
  for (const char *p = colon + 1; p < end; p++)
    if ((unsigned char)*p < 0x20 && *p != '\t')
      return (*why = "control byte in a header value"), AB_HTTP_BAD;
  for (v = colon + 1; v < end && (*v == ' ' || *v == '\t'); v++)
    ;
  while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
    end--;
  if (header_is (line, colon, "content-length"))
    return parse_length (v, (size_t)(end - v), h, why);
  if (header_is (line, colon, "transfer-encoding"))
    {
      /* Only "chunked" alone: with another coding before it the upstream
         may or may not decode, and the body would end elsewhere for it. */
      if (h->chunked || (size_t)(end - v) != 7 || strncasecmp (v, "chunked", 7) != 0)
        return (*why = "unsupported transfer coding"), AB_HTTP_BAD;
      h->chunked = true;
      return AB_HTTP_OK;
    }
  if (header_is (line, colon, "upgrade"))
    h->upgrade = true;
  if (!header_is (line, colon, "host"))
    return AB_HTTP_OK;
  if (h->has_host)
    return (*why = "more than one Host header"), AB_HTTP_BAD;
  h->has_host = true;
  if (ab_http_parse_authority (v, (size_t)(end - v), h->host_hdr, sizeof h->host_hdr, &h->host_hdr_port,
                               &port_given)
      < 0)
    return (*why = "invalid Host header"), AB_HTTP_BAD;
  return AB_HTTP_OK;
}

int
ab_http_parse_head (const char *buf, size_t len, struct ab_http_head *h, const char **why)
{
  const char *sp1, *sp2, *eol;
  size_t scan = len < AB_HTTP_MAX_HEAD ? len : AB_HTTP_MAX_HEAD, off, n_headers = 0;
  const char *end = NULL;

  memset (h, 0, sizeof *h);
  *why = NULL;
  for (size_t i = 0; i + 3 < scan; i++)
    if (buf[i] == '\r' && buf[i + 1] == '\n' && buf[i + 2] == '\r' && buf[i + 3] == '\n')
      {
        end = buf + i;
        break;
      }
  /* A lone LF or NUL anywhere in the head: some parsers end lines there,
     others do not; refuse before anyone disagrees. */
  for (size_t i = 0; i < (end ? (size_t)(end - buf) + 4 : scan); i++)
    if ((buf[i] == '\n' && (i == 0 || buf[i - 1] != '\r')) || buf[i] == '\0'
        || (buf[i] == '\r' && i + 1 < scan && buf[i + 1] != '\n'))
      return (*why = "bare CR or LF, or NUL, in the head"), AB_HTTP_BAD;
  if (end == NULL)
    return len >= AB_HTTP_MAX_HEAD ? AB_HTTP_TOO_BIG : AB_HTTP_MORE;
  h->head_len = (size_t)(end - buf) + 4;

  eol = memchr (buf, '\r', h->head_len);
  h->line_end = (size_t)(eol - buf) + 2;
  sp1 = memchr (buf, ' ', (size_t)(eol - buf));
  if (sp1 == NULL || sp1 == buf || (size_t)(sp1 - buf) >= sizeof h->method)
    return (*why = "malformed request line"), AB_HTTP_BAD;
  for (const char *p = buf; p < sp1; p++)
    if (!tchar ((unsigned char)*p))
      return (*why = "malformed method"), AB_HTTP_BAD;
  memcpy (h->method, buf, (size_t)(sp1 - buf));
  sp2 = memchr (sp1 + 1, ' ', (size_t)(eol - sp1 - 1));
  if (sp2 == NULL || sp2 == sp1 + 1 || eol - sp2 != 9 || memcmp (sp2 + 1, "HTTP/1.", 7) != 0
      || (sp2[8] != '0' && sp2[8] != '1'))
    return (*why = "malformed request line"), AB_HTTP_BAD;
  h->minor = sp2[8] - '0';
  if (parse_target (sp1 + 1, (size_t)(sp2 - sp1 - 1), (size_t)(sp1 + 1 - buf), h, why) != AB_HTTP_OK)
    return AB_HTTP_BAD;

  for (off = h->line_end; off < h->head_len - 2;)
    {
      const char *line = buf + off;
      const char *cr = memchr (line, '\r', h->head_len - off);
      if (++n_headers > HTTP_MAX_HEADERS)
        return (*why = "too many headers"), AB_HTTP_BAD;
      if (parse_header (line, (size_t)(cr - line), h, why) != AB_HTTP_OK)
        return AB_HTTP_BAD;
      off = (size_t)(cr - buf) + 2;
    }
  /* RFC 9112 6.1: a request with both is an attack or a broken client; an
     HTTP/1.0 server knows no chunked coding at all. */
  if (h->chunked && (h->has_length || h->minor == 0))
    return (*why = "Transfer-Encoding with Content-Length or in HTTP/1.0"), AB_HTTP_BAD;
  return AB_HTTP_OK;
}

/* ---- chunked bodies --------------------------------------------------- */

enum
{
  CH_SIZE,    /* hex digits of the chunk size */
  CH_EXT,     /* ";name=value" up to the CR */
  CH_SIZE_LF, /* the LF after the size line */
  CH_DATA,    /* `left` data bytes */
  CH_DATA_CR, /* the CRLF after the data */
  CH_DATA_LF,
  CH_TRAILER, /* start of a trailer line, or the final CRLF */
  CH_TRAILER_LINE,
  CH_TRAILER_LF,
  CH_FINAL_LF,
};

static int
hexval (uint8_t c)
{
  return c >= '0' && c <= '9'   ? c - '0'
         : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                : -1;
}

ssize_t
ab_http_chunked_scan (struct ab_http_chunked *s, const uint8_t *p, size_t n, bool *done)
{
  size_t i = 0;

  *done = false;
  while (i < n)
    {
      uint8_t c = p[i];
      switch (s->state)
        {
        case CH_SIZE:
          if (hexval (c) >= 0 && s->digits < 15)
            {
              s->left = s->left * 16 + (uint64_t)hexval (c);
              s->digits++;
              break;
            }
          if (s->digits == 0 || (c != ';' && c != '\r'))
            return -1;
          s->state = c == ';' ? CH_EXT : CH_SIZE_LF;
          break;
        case CH_EXT:
          if (c == '\r')
            s->state = CH_SIZE_LF;
          else if (c == '\n' || (c < 0x20 && c != '\t') || c == 0x7f)
            return -1;
          break;
        case CH_SIZE_LF:
          if (c != '\n')
            return -1;
          s->state = s->left > 0 ? CH_DATA : CH_TRAILER;
          break;
        case CH_DATA:
          {
            size_t k = n - i < s->left ? n - i : (size_t)s->left;
            s->left -= k;
            i += k;
            if (s->left == 0)
              s->state = CH_DATA_CR;
            continue;
          }
        case CH_DATA_CR:
        case CH_TRAILER_LF:
          if (c != (s->state == CH_DATA_CR ? '\r' : '\n'))
            return -1;
          s->state = s->state == CH_DATA_CR ? CH_DATA_LF : CH_TRAILER;
          break;
        case CH_DATA_LF:
          if (c != '\n')
            return -1;
          s->state = CH_SIZE;
          s->digits = 0;
          break;
        case CH_TRAILER:
          s->state = c == '\r' ? CH_FINAL_LF : CH_TRAILER_LINE;
          if (c == '\n' || c == ' ' || c == '\t')
            return -1;
          break;
        case CH_TRAILER_LINE:
          if (c == '\r')
            s->state = CH_TRAILER_LF;
          else if (c == '\n' || c == '\0')
            return -1;
          break;
        case CH_FINAL_LF:
          if (c != '\n')
            return -1;
          *done = true;
          return (ssize_t)i + 1;
        }
      i++;
    }
  return (ssize_t)i;
}

static bool
hop_by_hop (const char *line, size_t name_len)
{
  static const char *const names[]
      = { "connection",         "keep-alive", "proxy-connection", "proxy-authorization",
          "proxy-authenticate", "te",         "upgrade" };
  for (size_t i = 0; i < AB_ARRAY_SIZE (names); i++)
    if (strlen (names[i]) == name_len && strncasecmp (line, names[i], name_len) == 0)
      return true;
  return false;
}

char *
ab_http_rewrite_origin (const char *buf, const struct ab_http_head *h, size_t *out_len)
{
  size_t cap = h->head_len + AB_EGRESS_NAME_MAX + 64, n = 0, off;
  char *out = xmalloc (cap);
  const char *path = h->path_len ? buf + h->path_off : "/";
  size_t plen = h->path_len ? h->path_len : 1;

  n += (size_t)snprintf (out + n, cap - n, "%s %s", h->method, path[0] == '?' ? "/" : "");
  memcpy (out + n, path, plen);
  n += plen;
  n += (size_t)snprintf (out + n, cap - n, " HTTP/1.%d\r\n", h->minor);
  for (off = h->line_end; off < h->head_len - 2;)
    {
      const char *line = buf + off;
      const char *cr = memchr (line, '\r', h->head_len - off);
      const char *colon = memchr (line, ':', (size_t)(cr - line));
      if (!hop_by_hop (line, (size_t)(colon - line)))
        {
          memcpy (out + n, line, (size_t)(cr - line) + 2);
          n += (size_t)(cr - line) + 2;
        }
      off = (size_t)(cr - buf) + 2;
    }
  if (!h->has_host)
    {
      if (h->port == 80)
        n += (size_t)snprintf (out + n, cap - n, "Host: %s\r\n", h->host);
      else
        n += (size_t)snprintf (out + n, cap - n, "Host: %s:%u\r\n", h->host, h->port);
    }
  n += (size_t)snprintf (out + n, cap - n, "Connection: close\r\n\r\n");
  *out_len = n;
  return out;
}
