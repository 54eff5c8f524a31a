/* DNS wire format for the stub: parse one hostile query, build the reply.
 * Pure functions over byte buffers (the serving side is egress-dnsserve.c). */
#include "config.h"

#include <arpa/inet.h>
#include <sys/socket.h>

#include "netns/egress-internal.h"

#define DNS_HEADER 12
#define DNS_F_QR 0x8000
#define DNS_F_RD 0x0100
#define DNS_F_RA 0x0080
#define DNS_F_TC 0x0200
#define DNS_MAX_WIRE_NAME 255

static uint16_t
get16 (const uint8_t *p)
{
  return (uint16_t)(p[0] << 8 | p[1]);
}

static void
put16 (uint8_t *p, uint16_t v)
{
  p[0] = (uint8_t)(v >> 8);
  p[1] = (uint8_t)v;
}

static bool
ldh (uint8_t ch)
{
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-'
         || ch == '_';
}

/* Append one label byte to the display form, escaped like a zone file so a
   hostile name cannot forge structure in the record ("a.b" inside one label
   stays "a\.b"; control bytes become \DDD). */
static size_t
display_byte (char *d, size_t n, uint8_t ch)
{
  if (ldh (ch))
    d[n++] = (char)ch;
  else if (ch == '.' || ch == '\\')
    {
      d[n++] = '\\';
      d[n++] = (char)ch;
    }
  else
    n += (size_t)snprintf (d + n, 5, "\\%03u", ch);
  return n;
}

int
ab_dns_parse_query (const uint8_t *buf, size_t len, struct ab_dns_query *q)
{
  char text[DNS_MAX_WIRE_NAME + 1];
  size_t off = DNS_HEADER, wire = 0, tn = 0, dn = 0;
  bool plain = true;

  memset (q, 0, sizeof *q);
  if (len < DNS_HEADER)
    return -1; /* not even an id to answer to */
  q->id = get16 (buf);
  q->flags = get16 (buf + 2);
  snprintf (q->display, sizeof q->display, "?");
  /* Never answer a response: two stubs (or a spoofed source) would loop. */
  if (q->flags & DNS_F_QR)
    return -1;
  if (((q->flags >> 11) & 0xf) != 0)
    return AB_DNS_RCODE_NOTIMP; /* only QUERY */
  if (get16 (buf + 4) != 1 || get16 (buf + 6) != 0 || get16 (buf + 8) != 0 || get16 (buf + 10) > 1)
    return AB_DNS_RCODE_FORMERR; /* one question; an OPT record at most */

  for (;;)
    {
      uint8_t l;

      if (off >= len)
        return AB_DNS_RCODE_FORMERR;
      l = buf[off];
      /* A question's name can only be compressed against the 12-byte header
         before it, which holds no name: a real client never does that, and
         refusing every pointer makes pointer loops impossible. */
      if (l & 0xc0)
        return AB_DNS_RCODE_FORMERR;
      wire += (size_t)l + 1;
      if (wire > DNS_MAX_WIRE_NAME)
        return AB_DNS_RCODE_FORMERR;
      off++;
      if (l == 0)
        break;
      if (off + l > len)
        return AB_DNS_RCODE_FORMERR;
      if (tn > 0)
        {
          text[tn++] = '.';
          q->display[dn++] = '.';
        }
      for (size_t i = 0; i < l; i++)
        {
          uint8_t ch = buf[off + i];
          if (!ldh (ch))
            plain = false;
          text[tn++] = (char)ch;
          dn = display_byte (q->display, dn, ch);
        }
      off += l;
    }
  if (dn == 0)
    q->display[dn++] = '.';
  q->display[dn] = '\0';
  text[tn] = '\0';
  if (off + 4 > len)
    return AB_DNS_RCODE_FORMERR;
  q->qtype = get16 (buf + off);
  q->qclass = get16 (buf + off + 2);
  q->question_end = off + 4;
  q->name_valid = plain && tn > 0 && ab_egress_name_normalize (text, tn, q->name) == 0;
  return AB_DNS_RCODE_NOERROR;
}

size_t
ab_dns_build_reply (const uint8_t *buf, const struct ab_dns_query *q, int rcode,
                    const struct ab_egress_addr *addrs, size_t n_addrs, uint32_t ttl, uint8_t *out,
                    size_t cap)
{
  size_t off = DNS_HEADER, qlen = q->question_end > DNS_HEADER ? q->question_end - DNS_HEADER : 0;
  uint16_t flags = (uint16_t)(DNS_F_QR | DNS_F_RA | (q->flags & DNS_F_RD) | (rcode & 0xf));
  uint16_t ancount = 0;
  int family = q->qtype == AB_DNS_T_A ? AF_INET : q->qtype == AB_DNS_T_AAAA ? AF_INET6 : 0;
  size_t i;

  if (cap < DNS_HEADER + qlen)
    return 0;
  memset (out, 0, DNS_HEADER);
  put16 (out, q->id);
  if (qlen > 0)
    {
      memcpy (out + off, buf + DNS_HEADER, qlen);
      off += qlen;
      put16 (out + 4, 1);
    }
  for (i = 0; rcode == AB_DNS_RCODE_NOERROR && qlen > 0 && i < n_addrs; i++)
    {
      size_t rdlen = addrs[i].family == AF_INET ? 4 : 16;

      if (addrs[i].family != family)
        continue;
      if (off + 12 + rdlen > cap)
        {
          flags |= DNS_F_TC;
          break;
        }
      put16 (out + off, 0xc000 | DNS_HEADER); /* owner: the question's name */
      put16 (out + off + 2, q->qtype);
      put16 (out + off + 4, AB_DNS_C_IN);
      put16 (out + off + 6, (uint16_t)(ttl >> 16));
      put16 (out + off + 8, (uint16_t)ttl);
      put16 (out + off + 10, (uint16_t)rdlen);
      memcpy (out + off + 12, addrs[i].addr, rdlen);
      off += 12 + rdlen;
      ancount++;
    }
  put16 (out + 2, flags);
  put16 (out + 6, ancount);
  return off;
}

void
ab_dns_type_name (uint16_t qtype, char *buf, size_t len)
{
  static const struct
  {
    uint16_t t;
    const char *name;
  } names[] = {
    { 1, "A" },     { 2, "NS" },     { 5, "CNAME" }, { 6, "SOA" },   { 12, "PTR" },
    { 15, "MX" },   { 16, "TXT" },   { 28, "AAAA" }, { 33, "SRV" },  { 35, "NAPTR" },
    { 64, "SVCB" }, { 65, "HTTPS" }, { 255, "ANY" }, { 257, "CAA" },
  };
  size_t i;

  for (i = 0; i < AB_ARRAY_SIZE (names); i++)
    if (names[i].t == qtype)
      {
        snprintf (buf, len, "%s", names[i].name);
        return;
      }
  snprintf (buf, len, "TYPE%u", qtype);
}
