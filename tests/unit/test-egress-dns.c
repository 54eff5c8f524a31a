/* The DNS stub's wire parser and reply builder against hostile packets. */
#include "config.h"

#include <arpa/inet.h>
#include <sys/socket.h>

#include "netns/egress-internal.h"
#include "tests/unit/tap.h"

/* A query for name (presentation form, "" = root) of type t. */
static size_t
query (uint8_t *b, const char *name, uint16_t t, uint16_t qd)
{
  size_t n = 12;
  const char *p = name;

  memset (b, 0, 12);
  b[0] = 0xab, b[1] = 0xcd, b[2] = 0x01; /* id, RD */
  b[5] = (uint8_t)qd;
  while (*p)
    {
      const char *dot = strchr (p, '.');
      size_t l = dot ? (size_t)(dot - p) : strlen (p);
      b[n++] = (uint8_t)l;
      memcpy (b + n, p, l);
      n += l;
      p += l + (dot ? 1 : 0);
    }
  b[n++] = 0;
  b[n++] = (uint8_t)(t >> 8), b[n++] = (uint8_t)t;
  b[n++] = 0, b[n++] = 1;
  return n;
}

static void
test_good (void)
{
  uint8_t b[600], out[600];
  struct ab_dns_query q;
  struct ab_egress_addr a[2]
      = { { AF_INET, { 192, 0, 2, 1 } }, { AF_INET6, { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 } } };
  size_t n = query (b, "WWW.Example.COM", AB_DNS_T_A, 1), r;

  is_int (ab_dns_parse_query (b, n, &q), AB_DNS_RCODE_NOERROR, "a plain A query parses");
  ok (q.name_valid && strcmp (q.name, "www.example.com") == 0, "its name is normalised: %s", q.name);
  is_int (q.qtype, AB_DNS_T_A, "type A");
  is_int (q.question_end, n, "the question ends where the packet does");
  r = ab_dns_build_reply (b, &q, AB_DNS_RCODE_NOERROR, a, 2, 300, out, sizeof out);
  is_int (r, n + 16, "one A record for an A query (the AAAA is not mixed in)");
  ok (out[0] == 0xab && out[1] == 0xcd && (out[2] & 0x80) && (out[2] & 0x01) && (out[3] & 0x0f) == 0,
      "reply keeps the id and RD, sets QR, rcode 0");
  ok (out[7] == 1 && out[n] == 0xc0 && out[n + 1] == 12 && memcmp (out + n + 12, a[0].addr, 4) == 0,
      "ANCOUNT 1, owner compressed to the question, rdata is the address");
  r = ab_dns_build_reply (b, &q, AB_DNS_RCODE_NOERROR, a, 2, 300, out, n + 10);
  ok (r == n && (out[2] & 0x02) && out[7] == 0, "an answer that does not fit sets TC");
  r = ab_dns_build_reply (b, &q, AB_DNS_RCODE_NXDOMAIN, a, 2, 300, out, sizeof out);
  ok (r == n && (out[3] & 0x0f) == 3 && out[7] == 0, "NXDOMAIN carries the question and no answer");
}

static void
test_hostile (void)
{
  uint8_t b[1200] = { 0 };
  struct ab_dns_query q;
  size_t n;

  is_int (ab_dns_parse_query (b, 11, &q), -1, "shorter than a header: dropped");
  n = query (b, "a.test", 1, 1);
  b[2] |= 0x80;
  is_int (ab_dns_parse_query (b, n, &q), -1, "a response is dropped (no reply loops)");
  n = query (b, "a.test", 1, 1);
  b[2] |= 0x10; /* opcode 2, STATUS */
  is_int (ab_dns_parse_query (b, n, &q), AB_DNS_RCODE_NOTIMP, "opcode other than QUERY: NOTIMP");
  n = query (b, "a.test", 1, 2);
  is_int (ab_dns_parse_query (b, n, &q), AB_DNS_RCODE_FORMERR, "QDCOUNT 2: FORMERR");
  n = query (b, "a.test", 1, 0);
  is_int (ab_dns_parse_query (b, n, &q), AB_DNS_RCODE_FORMERR, "QDCOUNT 0: FORMERR");
  n = query (b, "a.test", 1, 1);
  b[7] = 1;
  is_int (ab_dns_parse_query (b, n, &q), AB_DNS_RCODE_FORMERR, "answers in a query: FORMERR");

  /* the name is a pointer to itself */
  memset (b, 0, 12);
  b[5] = 1;
  b[12] = 0xc0, b[13] = 12, b[14] = 0, b[15] = 1, b[16] = 0, b[17] = 1;
  is_int (ab_dns_parse_query (b, 18, &q), AB_DNS_RCODE_FORMERR, "a compression pointer loop: FORMERR");
  b[12] = 0x03, b[13] = 'a', b[14] = 'b', b[15] = 'c', b[16] = 0xc0, b[17] = 12;
  is_int (ab_dns_parse_query (b, 18, &q), AB_DNS_RCODE_FORMERR, "a pointer after a label: FORMERR");
  b[12] = 0x40;
  is_int (ab_dns_parse_query (b, 18, &q), AB_DNS_RCODE_FORMERR, "extended label type 0x40: FORMERR");
  b[12] = 0x3f; /* a 63-byte label running past the end */
  is_int (ab_dns_parse_query (b, 18, &q), AB_DNS_RCODE_FORMERR, "a label past the end: FORMERR");

  /* 4 labels of 63: 256 wire bytes */
  memset (b + 12, 'a', 1100);
  for (int i = 0; i < 5; i++)
    b[12 + i * 64] = 63;
  b[12 + 256] = 0;
  memset (b + 12 + 257, 0, 4);
  is_int (ab_dns_parse_query (b, 12 + 261, &q), AB_DNS_RCODE_FORMERR, "a name over 255 wire bytes: FORMERR");

  n = query (b, "a.test", 1, 1);
  is_int (ab_dns_parse_query (b, n - 1, &q), AB_DNS_RCODE_FORMERR, "a truncated question: FORMERR");
  n = query (b, "", 1, 1);
  ok (ab_dns_parse_query (b, n, &q) == 0 && !q.name_valid && strcmp (q.display, ".") == 0,
      "the root name parses but is not a host name");

  n = query (b, "a.test", 1, 1);
  b[13] = '.'; /* "a" label now holds a dot: "\.".test */
  ok (ab_dns_parse_query (b, n, &q) == 0 && !q.name_valid && strcmp (q.display, "\\..test") == 0,
      "a dot inside a label is escaped in the record and never matches: %s", q.display);
  n = query (b, "xa.test", 1, 1);
  b[13] = 0x07, b[14] = 0xff;
  ok (ab_dns_parse_query (b, n, &q) == 0 && !q.name_valid && strcmp (q.display, "\\007\\255.test") == 0,
      "control and high bytes are escaped as \\DDD: %s", q.display);
  n = query (b, "2130706433", 1, 1);
  ok (ab_dns_parse_query (b, n, &q) == 0 && !q.name_valid, "a numeric name is not a host name");

  /* every length of a valid query, truncated: never a crash, never NOERROR */
  n = query (b, "www.example.com", 28, 1);
  int bad = 0;
  for (size_t l = 0; l < n; l++)
    if (ab_dns_parse_query (b, l, &q) == AB_DNS_RCODE_NOERROR)
      bad++;
  is_int (bad, 0, "every truncation of a query is refused");
}

static void
test_types (void)
{
  char buf[16];

  ab_dns_type_name (28, buf, sizeof buf);
  is_str (buf, "AAAA", "type names: AAAA");
  ab_dns_type_name (65, buf, sizeof buf);
  is_str (buf, "HTTPS", "type names: HTTPS");
  ab_dns_type_name (4242, buf, sizeof buf);
  is_str (buf, "TYPE4242", "unknown types in RFC 3597 form");
}

int
main (void)
{
  test_good ();
  test_hostile ();
  test_types ();
  return tap_done ();
}
