/* The address classifier: every private, local and metadata form the proxy
   must refuse, in IPv4 and every IPv6 spelling, and the documentation
   ranges it must not. */
#include "config.h"

#include <arpa/inet.h>
#include <sys/socket.h>

#include "netns/egress-internal.h"
#include "tests/unit/tap.h"

static const char *
classify (const char *text)
{
  struct ab_egress_addr a;

  if (ab_egress_ip_parse (text, strlen (text), &a) < 0)
    return "unparsable";
  return ab_egress_addr_refusal (a.family, a.addr);
}

int
main (void)
{
  static const struct
  {
    const char *addr, *want;
  } cases[] = {
    { "127.0.0.1", "ssrf:loopback" },
    { "127.255.0.9", "ssrf:loopback" },
    { "0.0.0.0", "ssrf:unspecified" },
    { "0.1.2.3", "ssrf:unspecified" },
    { "10.1.2.3", "ssrf:rfc1918" },
    { "172.16.0.1", "ssrf:rfc1918" },
    { "172.31.255.255", "ssrf:rfc1918" },
    { "192.168.1.1", "ssrf:rfc1918" },
    { "100.64.0.1", "ssrf:cgnat" },
    { "100.127.255.255", "ssrf:cgnat" },
    { "169.254.1.1", "ssrf:link-local" },
    { "169.254.169.254", "ssrf:metadata" },
    { "169.254.170.2", "ssrf:metadata" },
    { "100.100.100.200", "ssrf:metadata" },
    { "168.63.129.16", "ssrf:metadata" },
    { "224.0.0.1", "ssrf:multicast" },
    { "239.255.255.250", "ssrf:multicast" },
    { "255.255.255.255", "ssrf:broadcast" },
    { "240.0.0.1", "ssrf:reserved" },
    { "198.18.0.1", "ssrf:reserved" },
    { "::1", "ssrf:loopback" },
    { "::", "ssrf:unspecified" },
    { "::ffff:127.0.0.1", "ssrf:loopback" },
    { "::ffff:169.254.169.254", "ssrf:metadata" },
    { "::ffff:10.0.0.1", "ssrf:rfc1918" },
    { "::127.0.0.1", "ssrf:loopback" },
    { "::10.0.0.1", "ssrf:rfc1918" },
    { "::8.8.8.8", "ssrf:reserved" },
    { "64:ff9b::7f00:1", "ssrf:loopback" },
    { "64:ff9b::a9fe:a9fe", "ssrf:metadata" },
    { "64:ff9b:1::1", "ssrf:reserved" },
    { "2002:7f00:1::", "ssrf:loopback" },
    { "2002:c0a8:101::1", "ssrf:rfc1918" },
    { "2001:0:4136:e378:8000:63bf:3fff:fdd2", "ssrf:reserved" },
    { "fc00::1", "ssrf:ula" },
    { "fdff::1", "ssrf:ula" },
    { "fd00:ec2::254", "ssrf:metadata" },
    { "fe80::1", "ssrf:link-local" },
    { "febf::1", "ssrf:link-local" },
    { "fec0::1", "ssrf:site-local" },
    { "ff02::1", "ssrf:multicast" },
    { "100::1", "ssrf:reserved" },
    /* what tests use as "the internet", and real public addresses */
    { "192.0.2.10", NULL },
    { "198.51.100.1", NULL },
    { "203.0.113.7", NULL },
    { "2001:db8::10", NULL },
    { "8.8.8.8", NULL },
    { "172.32.0.1", NULL },
    { "100.128.0.1", NULL },
    { "::ffff:192.0.2.1", NULL },
    { "64:ff9b::c000:20a", NULL },
    { "2002:c000:20a::1", NULL },
    { "2606:4700::1111", NULL },
  };

  for (size_t i = 0; i < AB_ARRAY_SIZE (cases); i++)
    is_str (classify (cases[i].addr), cases[i].want, "%s is %s", cases[i].addr,
            cases[i].want ? cases[i].want : "public");

  is_str (classify ("010.0.0.1"), "unparsable", "a leading zero is not a literal (octal or decimal?)");
  is_str (classify ("127.1"), "unparsable", "a short dotted form is not a literal");
  is_str (classify ("0x7f.0.0.1"), "unparsable", "a hex part is not a literal");
  is_str (classify ("[::1]"), "ssrf:loopback", "brackets are accepted around IPv6");
  is_str (classify ("fe80::1%eth0"), "unparsable", "a zone index is not a literal");
  is_str (ab_egress_addr_refusal (AF_UNIX, (const uint8_t *)"xxxxxxxxxxxxxxxx"), "ssrf:family",
          "an unknown family is refused");
  return tap_done ();
}
