/* Address checks: which upstream addresses the proxy must never connect to,
 * whatever name led there (SSRF, DNS rebinding), and strict IP literals. */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "netns/egress-internal.h"

struct v4net
{
  uint8_t net[4];
  unsigned prefix;
  const char *reason;
};

/* Cloud metadata services first, so that the record names them as such
   (most of them are also link-local, CGNAT or ULA; Azure's is public). */
static const struct v4net v4_refused[] = {
  { { 169, 254, 169, 254 }, 32, "ssrf:metadata" }, /* AWS, GCP, Azure IMDS, OpenStack, ... */
  { { 169, 254, 170, 2 }, 32, "ssrf:metadata" },   /* AWS ECS task credentials */
  { { 169, 254, 170, 23 }, 32, "ssrf:metadata" },  /* AWS EKS pod identity */
  { { 100, 100, 100, 200 }, 32, "ssrf:metadata" }, /* Alibaba Cloud */
  { { 168, 63, 129, 16 }, 32, "ssrf:metadata" },   /* Azure wireserver */
  { { 192, 0, 0, 192 }, 32, "ssrf:metadata" },     /* Oracle Cloud */
  { { 0, 0, 0, 0 }, 8, "ssrf:unspecified" },       /* "this network"; 0.0.0.0 reaches the host itself */
  { { 127, 0, 0, 0 }, 8, "ssrf:loopback" },         { { 10, 0, 0, 0 }, 8, "ssrf:rfc1918" },
  { { 172, 16, 0, 0 }, 12, "ssrf:rfc1918" },        { { 192, 168, 0, 0 }, 16, "ssrf:rfc1918" },
  { { 100, 64, 0, 0 }, 10, "ssrf:cgnat" },          { { 169, 254, 0, 0 }, 16, "ssrf:link-local" },
  { { 192, 0, 0, 0 }, 24, "ssrf:reserved" },  /* IETF protocol assignments */
  { { 198, 18, 0, 0 }, 15, "ssrf:reserved" }, /* benchmarking, often lab-internal */
  { { 255, 255, 255, 255 }, 32, "ssrf:broadcast" }, { { 224, 0, 0, 0 }, 4, "ssrf:multicast" },
  { { 240, 0, 0, 0 }, 4, "ssrf:reserved" },
};

struct v6net
{
  uint8_t net[16];
  unsigned prefix;
  const char *reason;
};

static const struct v6net v6_refused[] = {
  { { 0xfd, 0x00, 0x0e, 0xc2, [15] = 0x54, [14] = 0x02 }, 128, "ssrf:metadata" }, /* AWS fd00:ec2::254 */
  { { 0xfd, 0x20, 0x00, 0xce, [15] = 0x54, [14] = 0x02 }, 128, "ssrf:metadata" }, /* GCP fd20:ce::254 */
  { { 0x00, 0x64, 0xff, 0x9b, 0x00, 0x01 }, 48, "ssrf:reserved" },                /* local-use NAT64 */
  { { 0x01, 0x00 }, 64, "ssrf:reserved" },                                        /* discard-only */
  { { 0x20, 0x01, 0x00, 0x00 }, 32, "ssrf:reserved" },             /* Teredo: tunnels to an embedded IPv4 */
  { { 0x20, 0x01, 0x00, 0x02, 0x00, 0x00 }, 48, "ssrf:reserved" }, /* benchmarking */
  { { 0xfc }, 7, "ssrf:ula" },
  { { 0xfe, 0x80 }, 10, "ssrf:link-local" },
  { { 0xfe, 0xc0 }, 10, "ssrf:site-local" },
  { { 0xff }, 8, "ssrf:multicast" },
};

static bool
prefix_match (const uint8_t *addr, const uint8_t *net, unsigned prefix)
{
  unsigned full = prefix / 8, rest = prefix % 8;

  if (memcmp (addr, net, full) != 0)
    return false;
  if (rest == 0)
    return true;
  return ((addr[full] ^ net[full]) & (uint8_t)(0xff << (8 - rest))) == 0;
}

static const char *
v4_refusal (const uint8_t *a)
{
  size_t i;

  for (i = 0; i < AB_ARRAY_SIZE (v4_refused); i++)
    if (prefix_match (a, v4_refused[i].net, v4_refused[i].prefix))
      return v4_refused[i].reason;
  return NULL;
}

const char *
ab_egress_addr_refusal (int family, const uint8_t *a)
{
  static const uint8_t zero[16];
  static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
  static const uint8_t nat64[12] = { 0x00, 0x64, 0xff, 0x9b };
  size_t i;

  if (family == AF_INET)
    return v4_refusal (a);
  if (family != AF_INET6)
    return "ssrf:family";

  if (memcmp (a, zero, 16) == 0)
    return "ssrf:unspecified";
  if (memcmp (a, zero, 15) == 0 && a[15] == 1)
    return "ssrf:loopback";
  /* An IPv6 address that carries an IPv4 one reaches that IPv4 address
     (mapped: the host stack; compatible: old tunnels; NAT64: the gateway;
     6to4: the relay), so it is judged as that address.  Everything else in
     ::/8 is reserved. */
  if (memcmp (a, mapped, 12) == 0 || memcmp (a, zero, 12) == 0 || memcmp (a, nat64, 12) == 0)
    {
      const char *r = v4_refusal (a + 12);
      if (r != NULL)
        return r;
      /* IPv4-compatible addresses are deprecated: nothing public uses them. */
      return memcmp (a, zero, 12) == 0 ? "ssrf:reserved" : NULL;
    }
  if (a[0] == 0x20 && a[1] == 0x02)
    return v4_refusal (a + 2);
  if (a[0] == 0)
    return "ssrf:reserved";
  for (i = 0; i < AB_ARRAY_SIZE (v6_refused); i++)
    if (prefix_match (a, v6_refused[i].net, v6_refused[i].prefix))
      return v6_refused[i].reason;
  return NULL;
}

void
ab_egress_addr_to_sockaddr (const struct ab_egress_addr *a, uint16_t port, struct sockaddr_storage *ss,
                            socklen_t *len)
{
  memset (ss, 0, sizeof *ss);
  if (a->family == AF_INET)
    {
      struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
      s4->sin_family = AF_INET;
      s4->sin_port = htons (port);
      memcpy (&s4->sin_addr, a->addr, 4);
      *len = sizeof *s4;
    }
  else
    {
      struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
      s6->sin6_family = AF_INET6;
      s6->sin6_port = htons (port);
      memcpy (&s6->sin6_addr, a->addr, 16);
      *len = sizeof *s6;
    }
}

int
ab_egress_addr_from_sockaddr (const struct sockaddr *sa, struct ab_egress_addr *a, uint16_t *port)
{
  memset (a, 0, sizeof *a);
  if (sa->sa_family == AF_INET)
    {
      const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
      a->family = AF_INET;
      memcpy (a->addr, &s4->sin_addr, 4);
      *port = ntohs (s4->sin_port);
      return 0;
    }
  if (sa->sa_family == AF_INET6)
    {
      const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
      a->family = AF_INET6;
      memcpy (a->addr, &s6->sin6_addr, 16);
      *port = ntohs (s6->sin6_port);
      return 0;
    }
  return -1;
}
