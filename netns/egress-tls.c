/* TLS ClientHello: find the server name a client asks for (RFC 8446 4.1.2,
 * RFC 6066 3), over hostile bytes.  The proxy does not terminate TLS; it only
 * needs the name, and it must see the same name the server will see. */
#include "config.h"

#include "netns/egress-internal.h"

#define TLS_HANDSHAKE 22
#define TLS_MAX_RECORD 16384 /* 2^14: plaintext record limit */
#define HS_CLIENT_HELLO 1
#define EXT_SERVER_NAME 0
#define SNI_HOST_NAME 0

struct reader
{
  const uint8_t *p;
  size_t n;
  bool bad;
};

static uint32_t
rd (struct reader *r, size_t bytes)
{
  uint32_t v = 0;

  if (r->bad || r->n < bytes)
    {
      r->bad = true;
      return 0;
    }
  for (size_t i = 0; i < bytes; i++)
    v = v << 8 | r->p[i];
  r->p += bytes;
  r->n -= bytes;
  return v;
}

/* A sub-reader over the next len bytes (a length-prefixed vector). */
static struct reader
sub (struct reader *r, size_t len)
{
  struct reader s = { r->p, len, r->bad || r->n < len };

  if (!s.bad)
    {
      r->p += len;
      r->n -= len;
    }
  else
    r->bad = true;
  return s;
}

static int
parse_server_name (struct reader ext, char *sni)
{
  struct reader list = sub (&ext, rd (&ext, 2));
  bool seen = false;

  if (ext.bad || ext.n != 0 || list.n == 0)
    return AB_TLS_MALFORMED;
  while (list.n > 0)
    {
      uint32_t type = rd (&list, 1);
      struct reader name = sub (&list, rd (&list, 2));
      if (list.bad)
        return AB_TLS_MALFORMED;
      if (type != SNI_HOST_NAME)
        continue;
      /* RFC 6066 allows one name per type.  Two host names would let a
         server pick one the proxy did not check. */
      if (seen)
        return AB_TLS_MALFORMED;
      seen = true;
      if (name.n == 0 || ab_egress_name_normalize ((const char *)name.p, name.n, sni) < 0)
        return AB_TLS_MALFORMED;
    }
  return AB_TLS_HELLO;
}

static int
parse_hello_body (struct reader b, char *sni)
{
  struct reader exts;
  bool seen_sni = false;
  uint32_t n;

  sni[0] = '\0';
  rd (&b, 2);  /* legacy_version */
  rd (&b, 32); /* random */
  n = rd (&b, 1);
  if (n > 32)
    return AB_TLS_MALFORMED;
  sub (&b, n); /* legacy_session_id */
  n = rd (&b, 2);
  if (n < 2 || n % 2 != 0)
    return AB_TLS_MALFORMED;
  sub (&b, n); /* cipher_suites */
  n = rd (&b, 1);
  if (n < 1)
    return AB_TLS_MALFORMED;
  sub (&b, n); /* legacy_compression_methods */
  if (b.bad)
    return AB_TLS_MALFORMED;
  if (b.n == 0)
    return AB_TLS_HELLO; /* no extensions at all (SSL 3 style) */
  exts = sub (&b, rd (&b, 2));
  if (b.bad || b.n != 0)
    return AB_TLS_MALFORMED;
  while (exts.n > 0)
    {
      uint32_t type = rd (&exts, 2);
      struct reader ext = sub (&exts, rd (&exts, 2));
      if (exts.bad)
        return AB_TLS_MALFORMED;
      if (type != EXT_SERVER_NAME)
        continue;
      if (seen_sni)
        return AB_TLS_MALFORMED; /* duplicate extension: RFC 8446 4.2 */
      seen_sni = true;
      if (parse_server_name (ext, sni) != AB_TLS_HELLO)
        return AB_TLS_MALFORMED;
    }
  return AB_TLS_HELLO;
}

int
ab_tls_client_hello_sni (const uint8_t *buf, size_t len, char *sni)
{
  _cleanup_free_ uint8_t *hs = NULL;
  size_t off = 0, hn = 0, need = 0;

  sni[0] = '\0';
  if (len >= 1 && buf[0] != TLS_HANDSHAKE)
    return AB_TLS_NOT_TLS;
  if (len >= 2 && buf[1] != 3)
    return AB_TLS_NOT_TLS;

  /* A ClientHello may be split over several handshake records (a client is
     allowed to, and one that hides its name in a second record must not
     pass as having none).  Reassemble the fragments. */
  hs = xmalloc (AB_TLS_MAX_HELLO);
  for (;;)
    {
      size_t rl;

      if (len - off < 5)
        return AB_TLS_MORE;
      if (buf[off] != TLS_HANDSHAKE || buf[off + 1] != 3)
        return AB_TLS_MALFORMED; /* an alert or CCS before the hello is complete */
      rl = (size_t)buf[off + 3] << 8 | buf[off + 4];
      if (rl == 0 || rl > TLS_MAX_RECORD)
        return AB_TLS_MALFORMED;
      if (len - off - 5 < rl)
        return AB_TLS_MORE;
      if (hn + rl > AB_TLS_MAX_HELLO)
        return AB_TLS_MALFORMED;
      memcpy (hs + hn, buf + off + 5, rl);
      hn += rl;
      off += 5 + rl;
      if (need == 0 && hn >= 4)
        {
          if (hs[0] != HS_CLIENT_HELLO)
            return AB_TLS_MALFORMED;
          need = 4 + ((size_t)hs[1] << 16 | (size_t)hs[2] << 8 | hs[3]);
          if (need > AB_TLS_MAX_HELLO || need < 4 + 38)
            return AB_TLS_MALFORMED;
        }
      if (need != 0 && hn >= need)
        {
          /* Bytes of another handshake message in the same flight would be
             odd from a client that has not heard the server yet. */
          if (hn != need)
            return AB_TLS_MALFORMED;
          struct reader body = { hs + 4, need - 4, false };
          return parse_hello_body (body, sni);
        }
    }
}
