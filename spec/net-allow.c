/* dev.agentbox.net.allow, typed (spec/netpolicy.h): the address grammar of the wall.
 *
 *   value  := "" | entry ("," entry)*          spaces and tabs around entries
 *   entry  := ADDR4 ["/" PREFIX] [":" PORT] ["/" PROTO]
 *           | "[" ADDR6 ["/" PREFIX] "]" [":" PORT] ["/" PROTO]
 *   PORT   := 1..65535        PROTO := "tcp" | "udp"   (absent: both)
 *
 * Decisions, each for a reason an operator can rely on:
 *   - A prefix with host bits set ("192.0.2.1/24") is refused, not silently
 *     widened: the writer meant one of two different things and the policy
 *     must not guess which.
 *   - IPv4 is the strict dotted quad of inet_pton: no octal, hex or short
 *     forms, which are the classic way to smuggle an address past a reader.
 *   - IPv4-mapped IPv6 addresses are refused: the kernel sends such traffic
 *     as IPv4, so an IPv6 rule would never match and the entry would lie.
 *   - An entry allows TCP and UDP only (never ICMP or other protocols).
 *   - The empty value is a present policy with no entries: no egress.
 */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdarg.h>

#include "base/text.h"
#include "base/util.h"
#include "spec/netpolicy.h"

#define AB_NET_ALLOW_MAX 256
#define ANNOT_PATH "annotations." AB_ANNOT_NET_ALLOW

struct entry_ctx
{
  const char *s; /* the trimmed entry, not NUL-terminated */
  size_t len;
  ab_error_t *err;
};

static int __attribute__ ((format (printf, 2, 3))) entry_error (struct entry_ctx *c, const char *fmt, ...)
{
  char quoted[AB_QUOTE_FRAGMENT_SIZE];
  char reason[512];
  va_list ap;

  ab_quote_fragment (quoted, c->s, c->len);
  va_start (ap, fmt);
  vsnprintf (reason, sizeof reason, fmt, ap);
  va_end (ap);
  return ab_error_setc (c->err, AB_EC_CONFIG, 0, ANNOT_PATH ": entry %s: %s", quoted, reason);
}

/* Decimal digits only, no sign, at most 10 of them. */
static bool
parse_decimal (const char *s, size_t len, unsigned long *out)
{
  unsigned long v = 0;

  if (len == 0 || len > 10)
    return false;
  for (size_t i = 0; i < len; i++)
    {
      if (!isdigit ((unsigned char)s[i]))
        return false;
      v = v * 10 + (unsigned long)(s[i] - '0');
    }
  *out = v;
  return true;
}

static size_t
span_until (const char *s, size_t len, const char *stops)
{
  size_t i = 0;

  while (i < len && strchr (stops, s[i]) == NULL)
    i++;
  return i;
}

static int
parse_prefix (struct entry_ctx *c, const char *s, size_t len, unsigned max, uint8_t *out)
{
  unsigned long v;
  char tok[AB_QUOTE_FRAGMENT_SIZE];

  if (len == 0)
    return entry_error (c, "missing prefix length after '/'");
  if (!parse_decimal (s, len, &v))
    return entry_error (c, "invalid prefix length %s", ab_quote_fragment (tok, s, len));
  if (v > max)
    return entry_error (c, "prefix length %lu out of range 0..%u", v, max);
  *out = (uint8_t)v;
  return 0;
}

static int
parse_address (struct entry_ctx *c, int family, const char *s, size_t len, uint8_t addr[16])
{
  char buf[INET6_ADDRSTRLEN + 1];
  static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

  if (len == 0)
    return entry_error (c, "missing address");
  if (len >= sizeof buf)
    return entry_error (c, family == AF_INET ? "invalid IPv4 address" : "invalid IPv6 address");
  memcpy (buf, s, len);
  buf[len] = '\0';
  memset (addr, 0, 16);
  if (inet_pton (family, buf, addr) != 1)
    return entry_error (c, family == AF_INET ? "invalid IPv4 address" : "invalid IPv6 address");
  if (family == AF_INET6 && memcmp (addr, mapped, sizeof mapped) == 0)
    {
      char v4[INET_ADDRSTRLEN];

      inet_ntop (AF_INET, addr + 12, v4, sizeof v4);
      return entry_error (c, "IPv4-mapped IPv6 address: write the IPv4 address %s", v4);
    }
  return 0;
}

/* Refuse host bits beyond the prefix, naming the network the writer may
   have meant. */
static int
check_host_bits (struct entry_ctx *c, const struct ab_net_allow *a)
{
  size_t alen = a->family == AF_INET ? 4 : 16;
  uint8_t net[16];
  char text[INET6_ADDRSTRLEN];

  memcpy (net, a->addr, sizeof net);
  for (size_t i = 0; i < alen; i++)
    {
      unsigned bit = (unsigned)i * 8;

      if (bit >= a->prefix)
        net[i] = 0;
      else if (bit + 8 > a->prefix)
        net[i] &= (uint8_t)(0xff << (8 - (a->prefix - bit)));
    }
  if (memcmp (net, a->addr, alen) == 0)
    return 0;
  inet_ntop (a->family, net, text, sizeof text);
  if (a->family == AF_INET)
    return entry_error (c, "host bits set beyond /%u (the network is %s/%u)", a->prefix, text, a->prefix);
  return entry_error (c, "host bits set beyond /%u (the network is [%s/%u])", a->prefix, text, a->prefix);
}

/* After the address: [":" PORT] ["/" PROTO] and nothing else. */
static int
parse_port_proto (struct entry_ctx *c, const char *p, size_t len, struct ab_net_allow *a)
{
  char tok[AB_QUOTE_FRAGMENT_SIZE];
  size_t n;

  if (len > 0 && *p == ':')
    {
      unsigned long v;

      p++, len--;
      n = span_until (p, len, "/");
      if (n == 0)
        return entry_error (c, "missing port after ':'");
      if (!parse_decimal (p, n, &v))
        return entry_error (c, "invalid port %s", ab_quote_fragment (tok, p, n));
      if (v < 1 || v > 65535)
        return entry_error (c, "port %lu out of range 1..65535", v);
      a->port = (uint16_t)v;
      p += n, len -= n;
    }
  if (len > 0 && *p == '/')
    {
      p++, len--;
      if (len == 3 && memcmp (p, "tcp", 3) == 0)
        a->proto = IPPROTO_TCP;
      else if (len == 3 && memcmp (p, "udp", 3) == 0)
        a->proto = IPPROTO_UDP;
      else if (len == 0)
        return entry_error (c, "missing protocol after '/' (tcp or udp)");
      else
        return entry_error (c, "unknown protocol %s (tcp or udp)", ab_quote_fragment (tok, p, len));
      return 0;
    }
  if (len > 0)
    return entry_error (c, "unexpected %s after the address", ab_quote_fragment (tok, p, len));
  return 0;
}

static int
parse_entry6 (struct entry_ctx *c, struct ab_net_allow *a)
{
  const char *s = c->s + 1;
  size_t len = c->len - 1;
  const char *rb = memchr (s, ']', len);
  size_t inner, n;

  if (rb == NULL)
    return entry_error (c, "missing ']' after the IPv6 address");
  inner = (size_t)(rb - s);
  n = span_until (s, inner, "/");
  a->family = AF_INET6;
  if (parse_address (c, AF_INET6, s, n, a->addr) < 0)
    return -1;
  a->prefix = 128;
  if (n < inner && parse_prefix (c, s + n + 1, inner - n - 1, 128, &a->prefix) < 0)
    return -1;
  s = rb + 1;
  len = c->len - 1 - inner - 1;
  if (len > 1 && s[0] == '/' && isdigit ((unsigned char)s[1]))
    return entry_error (c, "the prefix length goes inside the brackets, e.g. [2001:db8::/32]");
  if (check_host_bits (c, a) < 0)
    return -1;
  return parse_port_proto (c, s, len, a);
}

static int
parse_entry4 (struct entry_ctx *c, struct ab_net_allow *a)
{
  const char *s = c->s;
  size_t len = c->len;
  size_t n = span_until (s, len, "/:");

  if (memchr (s, ':', len) != memrchr (s, ':', len))
    return entry_error (c, "an IPv6 address goes in brackets, e.g. [2001:db8::1]:443");
  a->family = AF_INET;
  if (parse_address (c, AF_INET, s, n, a->addr) < 0)
    return -1;
  a->prefix = 32;
  s += n, len -= n;
  if (len > 0 && *s == '/' && (len == 1 || isdigit ((unsigned char)s[1])))
    {
      n = span_until (s + 1, len - 1, "/:");
      if (parse_prefix (c, s + 1, n, 32, &a->prefix) < 0)
        return -1;
      s += 1 + n, len -= 1 + n;
    }
  if (check_host_bits (c, a) < 0)
    return -1;
  return parse_port_proto (c, s, len, a);
}

static bool
is_blank (char ch)
{
  return ch == ' ' || ch == '\t';
}

static bool
all_blank (const char *s)
{
  while (is_blank (*s))
    s++;
  return *s == '\0';
}

int
ab_net_policy_parse (const char *value, struct ab_net_policy *out, ab_error_t *err)
{
  _cleanup_free_ struct ab_net_allow *allow = NULL;
  size_t n = 0, index = 0;
  const char *p = value;

  memset (out, 0, sizeof *out);
  if (all_blank (value))
    {
      out->present = true;
      return 0;
    }
  for (;;)
    {
      const char *end = strchr (p, ',');
      size_t len = end != NULL ? (size_t)(end - p) : strlen (p);
      struct entry_ctx c = { .err = err };
      struct ab_net_allow a = { 0 };

      index++;
      c.s = p;
      c.len = len;
      while (c.len > 0 && is_blank (c.s[0]))
        c.s++, c.len--;
      while (c.len > 0 && is_blank (c.s[c.len - 1]))
        c.len--;
      if (c.len == 0)
        return ab_error_setc (err, AB_EC_CONFIG, 0, ANNOT_PATH ": entry %zu is empty", index);
      if (n == AB_NET_ALLOW_MAX)
        return ab_error_setc (err, AB_EC_CONFIG, 0, ANNOT_PATH ": more than %d entries", AB_NET_ALLOW_MAX);
      if ((c.s[0] == '[' ? parse_entry6 (&c, &a) : parse_entry4 (&c, &a)) < 0)
        return -1;
      allow = xreallocarray (allow, n + 1, sizeof *allow);
      allow[n++] = a;
      if (end == NULL)
        break;
      p = end + 1;
    }
  out->present = true;
  out->allow = ab_steal_ptr (&allow);
  out->n_allow = n;
  return 0;
}

void
ab_net_policy_free (struct ab_net_policy *p)
{
  if (p == NULL)
    return;
  free (p->allow);
  memset (p, 0, sizeof *p);
}
