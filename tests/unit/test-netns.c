/* Unit tests of the egress wall: the policy grammar with its exact error
 * messages, the rule description and its nft text, the denied-record JSON,
 * and the socket-in-netns helper's errors.  No privileges needed. */
#include "config.h"

#include <arpa/inet.h>
#include <linux/netfilter.h>
#include <netinet/in.h>

#include "netns/netns.h"
#include "netns/nft-rules.h"
#include "netns/nl.h"
#include "base/util.h"
#include "base/gen.h"
#include "tests/unit/tap.h"

#define PFX "annotations.dev.agentbox.net.allow: "

static const char *
parse_error (const char *value)
{
  static ab_error_t err;
  struct ab_net_policy p;

  memset (&err, 0, sizeof err);
  if (ab_net_policy_parse (value, &p, &err) == 0)
    {
      ab_net_policy_free (&p);
      return "(accepted)";
    }
  if (err.cls != AB_EC_CONFIG)
    return "(wrong error class)";
  return err.msg;
}

static const char *
entry_text (const struct ab_net_allow *a)
{
  static char buf[128];
  char addr[INET6_ADDRSTRLEN];

  inet_ntop (a->family, a->addr, addr, sizeof addr);
  snprintf (buf, sizeof buf, "%s %s/%u port %u proto %d", a->family == AF_INET ? "v4" : "v6", addr, a->prefix,
            a->port, a->proto);
  return buf;
}

static void
test_grammar (void)
{
  static const struct
  {
    const char *value;
    const char *entries; /* entry_text of each, joined with "; " */
  } good[] = {
    { "192.0.2.1", "v4 192.0.2.1/32 port 0 proto 0" },
    { "192.0.2.0/24:53/udp", "v4 192.0.2.0/24 port 53 proto 17" },
    { "192.0.2.1/tcp", "v4 192.0.2.1/32 port 0 proto 6" },
    { "192.0.2.1:1,192.0.2.1:65535", "v4 192.0.2.1/32 port 1 proto 0; v4 192.0.2.1/32 port 65535 proto 0" },
    { "  192.0.2.1:8080/tcp ,\t[2001:db8::1]:443/tcp  ",
      "v4 192.0.2.1/32 port 8080 proto 6; v6 2001:db8::1/128 port 443 proto 6" },
    { "[2001:db8::/32]", "v6 2001:db8::/32 port 0 proto 0" },
    { "[2001:db8::1]/udp", "v6 2001:db8::1/128 port 0 proto 17" },
    { "0.0.0.0/0:443", "v4 0.0.0.0/0 port 443 proto 0" },
    { "[::/0]", "v6 ::/0 port 0 proto 0" },
    { "10.0.0.0/12", "v4 10.0.0.0/12 port 0 proto 0" },
  };
  struct ab_net_policy p;
  ab_error_t err = { 0 };

  for (size_t i = 0; i < AB_ARRAY_SIZE (good); i++)
    {
      char joined[512] = "";

      if (ab_net_policy_parse (good[i].value, &p, &err) < 0)
        {
          ok (0, "policy \"%s\" is accepted (%s)", good[i].value, err.msg);
          continue;
        }
      for (size_t j = 0; j < p.n_allow; j++)
        {
          if (j > 0)
            strcat (joined, "; ");
          strcat (joined, entry_text (&p.allow[j]));
        }
      is_str (joined, good[i].entries, "policy \"%s\" parses to its entries", good[i].value);
      ok (p.present, "policy \"%s\" is present", good[i].value);
      ab_net_policy_free (&p);
    }

  ok (ab_net_policy_parse ("", &p, &err) == 0 && p.present && p.n_allow == 0,
      "the empty value is a present policy with no entries (no egress)");
  ab_net_policy_free (&p);
  ok (ab_net_policy_parse (" \t ", &p, &err) == 0 && p.present && p.n_allow == 0,
      "a value of blanks is the empty policy");
  ab_net_policy_free (&p);
}

static void
test_errors (void)
{
  static const struct
  {
    const char *value, *msg;
  } bad[] = {
    { "300.1.2.3:80", PFX "entry \"300.1.2.3:80\": invalid IPv4 address" },
    { "010.0.0.1", PFX "entry \"010.0.0.1\": invalid IPv4 address" },
    { "example.com:443", PFX "entry \"example.com:443\": invalid IPv4 address" },
    { "192.0.2.1 80", PFX "entry \"192.0.2.1 80\": invalid IPv4 address" },
    { "[gg::1]:80", PFX "entry \"[gg::1]:80\": invalid IPv6 address" },
    { "[]", PFX "entry \"[]\": missing address" },
    { "2001:db8::1", PFX "entry \"2001:db8::1\": an IPv6 address goes in brackets, e.g. [2001:db8::1]:443" },
    { "[2001:db8::1", PFX "entry \"[2001:db8::1\": missing ']' after the IPv6 address" },
    { "[2001:db8::]/32",
      PFX "entry \"[2001:db8::]/32\": the prefix length goes inside the brackets, e.g. [2001:db8::/32]" },
    { "[::ffff:192.0.2.1]:80",
      PFX "entry \"[::ffff:192.0.2.1]:80\": IPv4-mapped IPv6 address: write the IPv4 address 192.0.2.1" },
    { "192.0.2.1:0", PFX "entry \"192.0.2.1:0\": port 0 out of range 1..65535" },
    { "192.0.2.1:65536", PFX "entry \"192.0.2.1:65536\": port 65536 out of range 1..65535" },
    { "192.0.2.1:", PFX "entry \"192.0.2.1:\": missing port after ':'" },
    { "192.0.2.1:http", PFX "entry \"192.0.2.1:http\": invalid port \"http\"" },
    { "192.0.2.1:-1", PFX "entry \"192.0.2.1:-1\": invalid port \"-1\"" },
    { "192.0.2.1:80x", PFX "entry \"192.0.2.1:80x\": invalid port \"80x\"" },
    { "192.0.2.1:99999999999", PFX "entry \"192.0.2.1:99999999999\": invalid port \"99999999999\"" },
    { "192.0.2.0/33", PFX "entry \"192.0.2.0/33\": prefix length 33 out of range 0..32" },
    { "[2001:db8::/129]", PFX "entry \"[2001:db8::/129]\": prefix length 129 out of range 0..128" },
    { "192.0.2.1/", PFX "entry \"192.0.2.1/\": missing prefix length after '/'" },
    { "192.0.2.0/2x", PFX "entry \"192.0.2.0/2x\": invalid prefix length \"2x\"" },
    { "[2001:db8::/]", PFX "entry \"[2001:db8::/]\": missing prefix length after '/'" },
    { "192.0.2.1/24", PFX "entry \"192.0.2.1/24\": host bits set beyond /24 (the network is 192.0.2.0/24)" },
    { "10.1.0.0/12:80",
      PFX "entry \"10.1.0.0/12:80\": host bits set beyond /12 (the network is 10.0.0.0/12)" },
    { "[2001:db8::1/32]",
      PFX "entry \"[2001:db8::1/32]\": host bits set beyond /32 (the network is [2001:db8::/32])" },
    { "192.0.2.1:80/icmp", PFX "entry \"192.0.2.1:80/icmp\": unknown protocol \"icmp\" (tcp or udp)" },
    { "192.0.2.1:80/TCP", PFX "entry \"192.0.2.1:80/TCP\": unknown protocol \"TCP\" (tcp or udp)" },
    { "192.0.2.1:80/", PFX "entry \"192.0.2.1:80/\": missing protocol after '/' (tcp or udp)" },
    { "[2001:db8::1]x", PFX "entry \"[2001:db8::1]x\": unexpected \"x\" after the address" },
    { "192.0.2.1,,192.0.2.2", PFX "entry 2 is empty" },
    { "192.0.2.1,", PFX "entry 2 is empty" },
    { ", 192.0.2.1", PFX "entry 1 is empty" },
    { "1.2.3.4\n", PFX "entry \"1.2.3.4\\x0a\": invalid IPv4 address" },
    { "\"x\\y\"", PFX "entry \"\\\"x\\\\y\\\"\": invalid IPv4 address" },
    { "192.0.2.1:80,300.0.0.1", PFX "entry \"300.0.0.1\": invalid IPv4 address" },
  };

  for (size_t i = 0; i < AB_ARRAY_SIZE (bad); i++)
    is_str (parse_error (bad[i].value), bad[i].msg, "policy error names the entry and the reason: %s",
            bad[i].msg + strlen (PFX));
}

static void
test_limits (void)
{
  _cleanup_free_ char *many = xmalloc (257 * 16);
  char long_entry[200];
  size_t o = 0;
  struct ab_net_policy p;
  ab_error_t err = { 0 };

  for (int i = 0; i < 256; i++)
    o += (size_t)sprintf (many + o, "%s192.0.2.%d", i ? "," : "", i);
  ok (ab_net_policy_parse (many, &p, &err) == 0 && p.n_allow == 256, "256 entries are accepted");
  ab_net_policy_free (&p);
  sprintf (many + o, ",192.0.2.1");
  is_str (parse_error (many), PFX "more than 256 entries", "a 257th entry is refused");

  memset (long_entry, '9', sizeof long_entry - 1);
  long_entry[sizeof long_entry - 1] = '\0';
  is_str (
      parse_error (long_entry),
      PFX
      "entry \"9999999999999999999999999999999999999999999999999999999999999999...\": invalid IPv4 address",
      "a long entry is cut in the message");
}

static char *
text_in (const char *policy, const struct ab_netns_proxy *proxy, bool lo_only)
{
  struct ab_net_policy p = { 0 };
  ab_error_t err = { 0 };
  char *t;

  if (policy != NULL && ab_net_policy_parse (policy, &p, &err) < 0)
    return xstrdup (err.msg);
  t = ab_netns_rules_text (policy != NULL ? &p : NULL, proxy, lo_only);
  ab_net_policy_free (&p);
  return t;
}

/* In a namespace with links (joined, or with linux.netDevices). */
static char *
text_of (const char *policy, const struct ab_netns_proxy *proxy)
{
  return text_in (policy, proxy, false);
}

/* The lines of chain `name` in the text, joined with '|'. */
static char *
chain_lines (const char *text, const char *name)
{
  _cleanup_free_ char *head = xasprintf ("\tchain %s {\n", name);
  const char *p = strstr (text, head);
  char *out = xstrdup ("");

  if (p == NULL)
    return out;
  p += strlen (head);
  while (*p != '\0' && strncmp (p, "\t}\n", 3) != 0)
    {
      const char *nl = strchr (p, '\n');
      char *next;

      while (*p == '\t')
        p++;
      next = xasprintf ("%s%s%.*s", out, *out ? "|" : "", (int)(nl - p), p);
      free (out);
      out = next;
      p = nl + 1;
    }
  return out;
}

static const char empty_text[]
    = "table inet agentbox {\n"
      "\tset denied4 {\n\t\ttype ipv4_addr . inet_proto . inet_service\n\t\tsize 256\n\t\tflags "
      "dynamic\n\t\tcounter\n\t}\n"
      "\n"
      "\tset denied6 {\n\t\ttype ipv6_addr . inet_proto . inet_service\n\t\tsize 256\n\t\tflags "
      "dynamic\n\t\tcounter\n\t}\n"
      "\n"
      "\tset denied4_proto {\n\t\ttype ipv4_addr . inet_proto\n\t\tsize 256\n\t\tflags "
      "dynamic\n\t\tcounter\n\t}\n"
      "\n"
      "\tset denied6_proto {\n\t\ttype ipv6_addr . inet_proto\n\t\tsize 256\n\t\tflags "
      "dynamic\n\t\tcounter\n\t}\n"
      "\n"
      "\tchain metadata {\n"
      "\t\ttype filter hook output priority raw; policy accept;\n"
      "\t\tip daddr 169.254.169.254 goto deny\n"
      "\t\tip daddr 169.254.170.2 goto deny\n"
      "\t\tip daddr 169.254.170.23 goto deny\n"
      "\t\tip daddr 100.100.100.200 goto deny\n"
      "\t\tip daddr 168.63.129.16 goto deny\n"
      "\t\tip daddr 169.254.0.23 goto deny\n"
      "\t\tip daddr 169.254.42.42 goto deny\n"
      "\t\tip daddr 192.0.0.192 goto deny\n"
      "\t\tip6 daddr fd00:ec2::254 goto deny\n"
      "\t\tip6 daddr fd00:ec2::23 goto deny\n"
      "\t\tip6 daddr fd20:ce::254 goto deny\n"
      "\t\tip6 daddr 64:ff9b::a9fe:a9fe goto deny\n"
      "\t}\n"
      "\n"
      "\tchain output {\n"
      "\t\ttype filter hook output priority filter; policy drop;\n"
      "\t\tfib daddr type local accept\n"
      "\t\tmeta l4proto ipv6-icmp meta skuid 0-4294967295 goto deny\n"
      "\t\tip6 daddr ff02::/16 meta l4proto ipv6-icmp drop\n"
      "\t\tgoto deny\n"
      "\t}\n"
      "\n"
      "\tchain deny {\n"
      "\t\tadd @denied4 { ip daddr . meta l4proto . tcp dport } reject with tcp reset\n"
      "\t\tadd @denied4 { ip daddr . meta l4proto . udp dport } drop\n"
      "\t\tadd @denied6 { ip6 daddr . meta l4proto . tcp dport } reject with tcp reset\n"
      "\t\tadd @denied6 { ip6 daddr . meta l4proto . udp dport } drop\n"
      "\t\tadd @denied4_proto { ip daddr . meta l4proto }\n"
      "\t\tadd @denied6_proto { ip6 daddr . meta l4proto }\n"
      "\t\tmeta l4proto tcp reject with tcp reset\n"
      "\t\tdrop\n"
      "\t}\n"
      "\n"
      "\tchain input {\n"
      "\t\ttype filter hook input priority filter; policy drop;\n"
      "\t\tiif \"lo\" accept\n"
      "\t}\n"
      "\n"
      "\tchain forward {\n"
      "\t\ttype filter hook forward priority filter; policy drop;\n"
      "\t}\n"
      "}\n";

static void
test_rules_text (void)
{
  static const uint16_t ports[] = { 443, 443, 0, 80 };
  struct ab_netns_proxy proxy = { true, 3128, 53, ports, AB_ARRAY_SIZE (ports) };
  _cleanup_free_ char *empty = text_of ("", NULL);
  _cleanup_free_ char *absent = text_of (NULL, NULL);
  _cleanup_free_ char *v4 = text_of ("192.0.2.1:8080/tcp,10.0.0.0/12,0.0.0.0/0:443/udp", NULL);
  _cleanup_free_ char *v6 = text_of ("[2001:db8::/32],[2001:db8::1]:53/udp", NULL);
  _cleanup_free_ char *px = text_of ("", &proxy);
  _cleanup_free_ char *out4 = chain_lines (v4, "output");
  _cleanup_free_ char *out6 = chain_lines (v6, "output");
  _cleanup_free_ char *in6 = chain_lines (v6, "input");
  _cleanup_free_ char *nat = chain_lines (px, "nat_output");
  _cleanup_free_ char *meta = chain_lines (px, "metadata");
  struct ab_netns_proxy off = proxy;

  is_str (empty, empty_text, "the empty policy renders the whole table: metadata first, then deny-all");
  is_str (absent, empty_text, "an absent policy renders the same table as the empty one");
  is_str (out4,
          "type filter hook output priority filter; policy drop;|ct state established,related accept|"
          "fib daddr type local accept|ip daddr 192.0.2.1 tcp dport 8080 accept|"
          "ip daddr 10.0.0.0/12 meta l4proto tcp accept|ip daddr 10.0.0.0/12 meta l4proto udp accept|"
          "meta nfproto ipv4 udp dport 443 accept|meta l4proto ipv6-icmp meta skuid 0-4294967295 goto deny|"
          "ip6 daddr ff02::/16 meta l4proto ipv6-icmp drop|goto deny",
          "IPv4 entries: one accept per protocol, /32 without prefix, /0 as meta nfproto, no ND");
  is_str (out6,
          "type filter hook output priority filter; policy drop;|ct state established,related accept|"
          "fib daddr type local accept|ip6 daddr 2001:db8::/32 meta l4proto tcp accept|"
          "ip6 daddr 2001:db8::/32 meta l4proto udp accept|ip6 daddr 2001:db8::1 udp dport 53 accept|"
          "meta l4proto ipv6-icmp meta skuid 0-4294967295 goto deny|"
          "icmpv6 type nd-neighbor-solicit ip6 hoplimit 255 accept|"
          "icmpv6 type nd-neighbor-advert ip6 hoplimit 255 accept|"
          "ip6 daddr ff02::/16 meta l4proto ipv6-icmp drop|goto deny",
          "IPv6 entries bring the kernel's neighbour discovery, after the user-ICMPv6 guard");
  is_str (in6,
          "type filter hook input priority filter; policy drop;|iif \"lo\" accept|"
          "ct state established,related accept|icmpv6 type nd-neighbor-solicit ip6 hoplimit 255 accept|"
          "icmpv6 type nd-neighbor-advert ip6 hoplimit 255 accept",
          "IPv6 entries accept neighbour discovery on input too");
  is_str (nat,
          "type nat hook output priority -100; policy accept;|fib daddr type local return|"
          "tcp dport 443 redirect to :3128|tcp dport 80 redirect to :3128",
          "the proxy redirects each listed port once (duplicates and 0 ignored), local destinations exempt");
  ok (strstr (meta, "ip daddr 169.254.169.254 goto deny")
          == meta + strlen ("type filter hook output priority raw; policy accept;|"),
      "the metadata chain comes first and runs before nat (priority raw)");
  ok (strstr (px, "chain metadata") < strstr (px, "chain nat_output"),
      "the metadata chain is listed before nat_output");
  off.enabled = false;
  {
    _cleanup_free_ char *t = text_of ("", &off);
    is_str (t, empty_text, "a disabled proxy adds nothing");
  }
}

/* The container's own namespace with lo alone: the metadata chain only
   where something can be let out. */
static void
test_rules_lo_only (void)
{
  static const uint16_t ports[] = { 443 };
  struct ab_netns_proxy proxy = { true, 3128, 53, ports, AB_ARRAY_SIZE (ports) };
  struct ab_netns_proxy off = { false, 3128, 53, ports, AB_ARRAY_SIZE (ports) };
  _cleanup_free_ char *bare = text_in ("", NULL, true);
  _cleanup_free_ char *absent = text_in (NULL, &off, true);
  _cleanup_free_ char *allow = text_in ("192.0.2.1:443/tcp", NULL, true);
  _cleanup_free_ char *allow_links = text_of ("192.0.2.1:443/tcp", NULL);
  _cleanup_free_ char *px = text_in ("", &proxy, true);
  _cleanup_free_ char *px_links = text_of ("", &proxy);
  const char *m0 = strstr (empty_text, "\tchain metadata {\n"), *m1 = strstr (empty_text, "\tchain output {\n");
  _cleanup_free_ char *want = xasprintf ("%.*s%s", (int)(m0 - empty_text), empty_text, m1);

  is_str (bare, want, "lo alone, nothing allowed: the table without the metadata chain, the rest unchanged");
  is_str (absent, want, "... the same with no policy and a disabled proxy");
  is_str (allow, allow_links, "lo alone with an allow entry: the whole table, metadata chain first");
  is_str (px, px_links, "lo alone with the proxy: the whole table");
  ok (strstr (allow, "\tchain metadata {\n") != NULL && strstr (px, "\tchain metadata {\n") != NULL,
      "... both with the metadata chain");
  ok (!ab_nft_has_metadata_chain (NULL, NULL, true) && ab_nft_has_metadata_chain (NULL, NULL, false),
      "ab_nft_has_metadata_chain: only lo alone with nothing let out goes without");
}

static void
test_rule_description (void)
{
  struct ab_net_policy p;
  ab_error_t err = { 0 };
  _cleanup_nft_ruleset_ struct ab_nft_ruleset *r = NULL;
  const struct ab_nft_chain *out = NULL;
  size_t accepts = 0;

  ab_net_policy_parse ("192.0.2.1:8080,[2001:db8::1]:443/tcp", &p, &err);
  r = ab_nft_ruleset_build (&p, NULL, false);
  for (size_t i = 0; i < r->n_chains; i++)
    if (strcmp (r->chains[i].name, "output") == 0)
      out = &r->chains[i];
  ok (out != NULL && out->policy == NF_DROP && out->hook == NF_INET_LOCAL_OUT && out->prio == 0,
      "the output chain is a filter on hook output, priority 0, policy drop");
  for (size_t i = 0; out != NULL && i < out->n_rules; i++)
    if (out->rules[i].verdict == AB_NFT_V_ACCEPT && out->rules[i].n_match == 2
        && out->rules[i].match[0].kind == AB_NFT_M_DADDR)
      accepts++;
  is_int (accepts, 3, "192.0.2.1:8080 gives a TCP and a UDP accept, [2001:db8::1]:443/tcp one");
  is_int (r->n_chains, 5, "without a proxy: metadata, output, deny, input, forward");
  ok (r->chains[0].prio == -300 && strcmp (r->chains[0].name, "metadata") == 0,
      "the metadata chain runs at priority -300, ahead of conntrack and nat");
  is_int (r->chains[0].n_rules, ab_nft_n_metadata_addrs, "one metadata rule per address");
  {
    _cleanup_free_ char *t = ab_nft_rule_text (&out->rules[2]);
    is_str (t, "ip daddr 192.0.2.1 tcp dport 8080 accept", "ab_nft_rule_text renders one rule");
  }
  ab_net_policy_free (&p);
}

static void
test_proxy_check (void)
{
  static const uint16_t ports[] = { 80 };
  struct ab_netns_proxy p = { true, 0, 53, ports, 1 };
  ab_error_t err = { 0 };

  ok (ab_nft_proxy_check (NULL, &err) == 0, "no proxy is fine");
  ok (ab_nft_proxy_check (&p, &err) < 0, "a proxy without an HTTP port is refused");
  is_str (err.msg, "egress proxy: the HTTP port is 0", "the error says which port");
  p.http_port = 3128;
  p.dns_port = 0;
  ok (ab_nft_proxy_check (&p, &err) < 0, "a proxy without a DNS port is refused");
  p.dns_port = 53;
  ok (ab_nft_proxy_check (&p, &err) == 0, "a complete proxy passes");
}

static void
test_netns_socket (void)
{
  ab_error_t err = { 0 };

  /* A netlink socket is made in the target namespace by a thread that
     enters it (netns/nl.c): an fd that is no namespace fails there. */
  ok (ab_nl_open (1000, NETLINK_ROUTE, &err) == NULL, "a netlink socket in an invalid netns fd fails");
  is_str (err.msg, "setns into the target network namespace: Bad file descriptor",
          "and says setns failed, and why");
}

int
main (void)
{
  test_grammar ();
  test_errors ();
  test_limits ();
  test_rules_text ();
  test_rules_lo_only ();
  test_rule_description ();
  test_proxy_check ();
  test_netns_socket ();
  return tap_done ();
}
