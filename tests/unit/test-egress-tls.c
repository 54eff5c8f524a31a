/* The ClientHello SNI parser against hostile hellos: split records, two
   names, bad lengths, every truncation. */
#include "config.h"

#include "netns/egress-internal.h"
#include "tests/unit/tap.h"

struct hello_opts
{
  const char *names[3]; /* host_name entries of one server_name extension */
  int n_sni_ext;        /* server_name extensions (default 1 when names[0]) */
  bool no_extensions;
  int ext_len_delta; /* corrupt the extensions length */
  int sid_len;       /* legacy_session_id length byte */
};

static void
put16 (uint8_t *p, size_t v)
{
  p[0] = (uint8_t)(v >> 8);
  p[1] = (uint8_t)v;
}

/* The handshake message (type 1, 24-bit length, body). */
static size_t
hello_msg (uint8_t *m, const struct hello_opts *o)
{
  size_t n = 4, ext_start, sni_count = o->n_sni_ext ? (size_t)o->n_sni_ext : (o->names[0] ? 1 : 0);

  m[n++] = 3, m[n++] = 3;   /* legacy_version */
  memset (m + n, 0x42, 32); /* random */
  n += 32;
  m[n++] = (uint8_t)o->sid_len;
  memset (m + n, 0, o->sid_len > 32 ? 0 : (size_t)o->sid_len);
  n += o->sid_len > 32 ? 0 : (size_t)o->sid_len;
  put16 (m + n, 2), n += 2;
  m[n++] = 0x13, m[n++] = 0x01; /* TLS_AES_128_GCM_SHA256 */
  m[n++] = 1, m[n++] = 0;       /* compression: null */
  if (!o->no_extensions)
    {
      ext_start = n;
      n += 2;
      /* a harmless extension first: supported_versions */
      put16 (m + n, 43), put16 (m + n + 2, 3), m[n + 4] = 2, m[n + 5] = 3, m[n + 6] = 4;
      n += 7;
      for (size_t s = 0; s < sni_count; s++)
        {
          size_t ext = n, list;
          put16 (m + n, 0);
          n += 4;
          list = n;
          n += 2;
          for (int i = 0; i < 3 && o->names[i]; i++)
            {
              size_t l = strlen (o->names[i]);
              m[n++] = 0;
              put16 (m + n, l), n += 2;
              memcpy (m + n, o->names[i], l), n += l;
            }
          put16 (m + list, n - list - 2);
          put16 (m + ext + 2, n - ext - 4);
        }
      put16 (m + ext_start, (size_t)((int)(n - ext_start - 2) + o->ext_len_delta));
    }
  m[0] = 1;
  m[1] = 0, put16 (m + 2, n - 4);
  return n;
}

/* Wrap a handshake message in records of at most frag bytes each. */
static size_t
records (uint8_t *out, const uint8_t *m, size_t n, size_t frag)
{
  size_t o = 0;

  for (size_t i = 0; i < n; i += frag)
    {
      size_t l = n - i < frag ? n - i : frag;
      out[o++] = 22, out[o++] = 3, out[o++] = 1;
      put16 (out + o, l), o += 2;
      memcpy (out + o, m + i, l), o += l;
    }
  return o;
}

static int
sni_of (const struct hello_opts *o, size_t frag, char *sni)
{
  uint8_t m[4096], r[8192];
  size_t n = hello_msg (m, o), rn = records (r, m, n, frag);
  return ab_tls_client_hello_sni (r, rn, sni);
}

int
main (void)
{
  char sni[AB_EGRESS_NAME_MAX + 1];
  uint8_t m[4096], r[8192];
  size_t n, rn;
  int bad;

  ok (sni_of (&(struct hello_opts){ .names = { "Allowed.Test" } }, 16384, sni) == AB_TLS_HELLO
          && strcmp (sni, "allowed.test") == 0,
      "the SNI of a one-record hello is found and normalised: %s", sni);
  ok (sni_of (&(struct hello_opts){ .names = { "allowed.test" } }, 7, sni) == AB_TLS_HELLO
          && strcmp (sni, "allowed.test") == 0,
      "a hello split into 7-byte records is reassembled: the name cannot hide in a later record");
  ok (sni_of (&(struct hello_opts){ 0 }, 16384, sni) == AB_TLS_HELLO && sni[0] == '\0',
      "a hello without server_name has no SNI");
  ok (sni_of (&(struct hello_opts){ .no_extensions = true }, 16384, sni) == AB_TLS_HELLO && sni[0] == '\0',
      "a hello without any extension has no SNI");
  is_int (sni_of (&(struct hello_opts){ .names = { "a.test", "b.test" } }, 16384, sni), AB_TLS_MALFORMED,
          "two host names in one server_name extension are refused");
  is_int (sni_of (&(struct hello_opts){ .names = { "a.test" }, .n_sni_ext = 2 }, 16384, sni),
          AB_TLS_MALFORMED, "two server_name extensions are refused");
  is_int (sni_of (&(struct hello_opts){ .names = { "a.test" }, .ext_len_delta = 1 }, 16384, sni),
          AB_TLS_MALFORMED, "an extensions length past the hello is refused");
  is_int (sni_of (&(struct hello_opts){ .names = { "a.test" }, .ext_len_delta = -1 }, 16384, sni),
          AB_TLS_MALFORMED, "an extensions length short of the hello is refused");
  is_int (sni_of (&(struct hello_opts){ .names = { "a.test" }, .sid_len = 33 }, 16384, sni), AB_TLS_MALFORMED,
          "a session id over 32 bytes is refused");
  is_int (sni_of (&(struct hello_opts){ .names = { "192.0.2.1" } }, 16384, sni), AB_TLS_MALFORMED,
          "an IP address as SNI is not a name");
  is_int (sni_of (&(struct hello_opts){ .names = { "a\001b.test" } }, 16384, sni), AB_TLS_MALFORMED,
          "control bytes in the SNI are refused");

  n = hello_msg (m, &(struct hello_opts){ .names = { "allowed.test" } });
  rn = records (r, m, n, 16384);
  bad = 0;
  for (size_t l = 0; l < rn; l++)
    if (ab_tls_client_hello_sni (r, l, sni) != AB_TLS_MORE)
      bad++;
  is_int (bad, 0, "every truncation of a hello asks for more bytes, never decides");

  r[0] = 'G';
  is_int (ab_tls_client_hello_sni (r, rn, sni), AB_TLS_NOT_TLS, "HTTP is not TLS");
  r[0] = 22, r[1] = 2;
  is_int (ab_tls_client_hello_sni (r, rn, sni), AB_TLS_NOT_TLS, "SSL 2 framing is not TLS");
  r[1] = 3;
  rn = records (r, m, n, 20);
  r[25] = 21; /* the second record is an alert */
  is_int (ab_tls_client_hello_sni (r, rn, sni), AB_TLS_MALFORMED, "a non-handshake record inside the hello");
  rn = records (r, m, n, 16384);
  r[5] = 2; /* ServerHello */
  is_int (ab_tls_client_hello_sni (r, rn, sni), AB_TLS_MALFORMED, "a handshake that is not a ClientHello");
  rn = records (r, m, n, 16384);
  put16 (r + 3, 16385);
  is_int (ab_tls_client_hello_sni (r, rn, sni), AB_TLS_MALFORMED, "a record over 2^14 bytes is refused");
  rn = records (r, m, n, 16384);
  put16 (r + 3, 0);
  is_int (ab_tls_client_hello_sni (r, rn, sni), AB_TLS_MALFORMED, "an empty record is refused");

  /* flip every byte of the hello body: no crash, and never a different name */
  rn = records (r, m, n, 16384);
  bad = 0;
  for (size_t i = 5; i < rn; i++)
    for (int v = 0; v < 256; v += 51)
      {
        uint8_t c[8192];
        memcpy (c, r, rn);
        c[i] = (uint8_t)v;
        if (ab_tls_client_hello_sni (c, rn, sni) == AB_TLS_HELLO && sni[0] != '\0' && strlen (sni) != 12)
          bad++;
      }
  is_int (bad, 0, "byte flips never yield an SNI of another length");
  return tap_done ();
}
