/* The agentbox ruleset as one description (see nft-rules.h and the design
 * comment at the top of nft.c), and its rendering in nft syntax. */
#include "config.h"

#include <arpa/inet.h>
#include <linux/netfilter.h>
#include <netinet/in.h>
#include <stdarg.h>

#include "netns/nft-rules.h"
#include "base/util.h"

/* Dropped ahead of every accept, whatever the allow entries say: these
   services hand out instance credentials to whoever asks from the host. */
const struct ab_nft_metadata_addr ab_nft_metadata_addrs[] = {
  { AF_INET, "169.254.169.254", "AWS, GCP, Azure, OpenStack, Oracle and most clouds: instance metadata" },
  { AF_INET, "169.254.170.2", "AWS ECS task metadata and credentials" },
  { AF_INET, "169.254.170.23", "AWS EKS Pod Identity agent" },
  { AF_INET, "100.100.100.200", "Alibaba Cloud metadata" },
  { AF_INET, "168.63.129.16", "Azure WireServer" },
  { AF_INET, "169.254.0.23", "Tencent Cloud metadata" },
  { AF_INET, "169.254.42.42", "Scaleway metadata" },
  { AF_INET, "192.0.0.192", "Oracle Cloud legacy metadata" },
  { AF_INET6, "fd00:ec2::254", "AWS instance metadata over IPv6" },
  { AF_INET6, "fd00:ec2::23", "AWS EKS Pod Identity agent over IPv6" },
  { AF_INET6, "fd20:ce::254", "GCP metadata over IPv6" },
  { AF_INET6, "64:ff9b::a9fe:a9fe", "169.254.169.254 through a NAT64 gateway" },
};
const size_t ab_nft_n_metadata_addrs = AB_ARRAY_SIZE (ab_nft_metadata_addrs);

/* ---- building ---------------------------------------------------------- */

static struct ab_nft_chain *
add_chain (struct ab_nft_ruleset *r, const char *name, const char *type, int hook, int prio, int policy)
{
  struct ab_nft_chain *c = &r->chains[r->n_chains++];

  c->name = name;
  c->type = type;
  c->hook = hook;
  c->prio = prio;
  c->policy = policy;
  return c;
}

static struct ab_nft_rule *
add_rule (struct ab_nft_chain *c, enum ab_nft_verdict verdict)
{
  struct ab_nft_rule *rule;

  c->rules = xreallocarray (c->rules, c->n_rules + 1, sizeof *c->rules);
  rule = &c->rules[c->n_rules++];
  memset (rule, 0, sizeof *rule);
  rule->verdict = verdict;
  return rule;
}

static struct ab_nft_match *
add_match (struct ab_nft_rule *rule, enum ab_nft_match_kind kind)
{
  struct ab_nft_match *m = &rule->match[rule->n_match++];

  m->kind = kind;
  return m;
}

/* `ip daddr A/P`, or `meta nfproto ipv4` for /0, which matches every
   address of the family. */
static void
add_daddr (struct ab_nft_rule *rule, int family, const uint8_t addr[16], uint8_t prefix)
{
  struct ab_nft_match *m;

  if (prefix == 0)
    {
      add_match (rule, AB_NFT_M_NFPROTO)->family = family;
      return;
    }
  m = add_match (rule, AB_NFT_M_DADDR);
  m->family = family;
  memcpy (m->addr, addr, sizeof m->addr);
  m->prefix = prefix;
}

static void
add_daddr_text (struct ab_nft_rule *rule, int family, const char *text, uint8_t prefix)
{
  uint8_t addr[16] = { 0 };

  if (inet_pton (family, text, addr) != 1)
    abort (); /* a constant of this file */
  add_daddr (rule, family, addr, prefix);
}

static void
add_goto (struct ab_nft_chain *c, struct ab_nft_rule **out, const char *chain)
{
  struct ab_nft_rule *rule = add_rule (c, AB_NFT_V_GOTO);

  rule->chain = chain;
  if (out != NULL)
    *out = rule;
}

static void
add_nd_accepts (struct ab_nft_chain *c)
{
  static const uint8_t types[] = { 135 /* nd-neighbor-solicit */, 136 /* nd-neighbor-advert */ };

  for (size_t i = 0; i < AB_ARRAY_SIZE (types); i++)
    {
      struct ab_nft_rule *rule = add_rule (c, AB_NFT_V_ACCEPT);

      add_match (rule, AB_NFT_M_ICMPV6_TYPE)->value = types[i];
      add_match (rule, AB_NFT_M_HOPLIMIT)->value = 255;
    }
}

static void
build_metadata (struct ab_nft_ruleset *r)
{
  struct ab_nft_chain *c = add_chain (r, "metadata", "filter", NF_INET_LOCAL_OUT, -300, NF_ACCEPT);

  for (size_t i = 0; i < ab_nft_n_metadata_addrs; i++)
    {
      const struct ab_nft_metadata_addr *m = &ab_nft_metadata_addrs[i];
      struct ab_nft_rule *rule;

      add_goto (c, &rule, "deny");
      add_daddr_text (rule, m->family, m->addr, m->family == AF_INET ? 32 : 128);
    }
}

static void
build_allow (struct ab_nft_chain *c, const struct ab_net_allow *a)
{
  static const int both[] = { IPPROTO_TCP, IPPROTO_UDP };

  for (size_t i = 0; i < AB_ARRAY_SIZE (both); i++)
    {
      struct ab_nft_rule *rule;
      struct ab_nft_match *m;

      if (a->proto != 0 && a->proto != both[i])
        continue;
      rule = add_rule (c, AB_NFT_V_ACCEPT);
      add_daddr (rule, a->family, a->addr, a->prefix);
      m = add_match (rule, a->port != 0 ? AB_NFT_M_DPORT : AB_NFT_M_L4PROTO);
      m->value = (uint8_t)both[i];
      m->port = a->port;
    }
}

/* `ct state established,related accept` (output and input) matches only
   flows an allow entry let out: their replies, and the ICMP errors about
   them.  Without an allow entry nothing leaves but to the namespace's own
   addresses (accepted as local on output, via lo on input), and input
   drops every new flow from outside, so no such flow can exist and the
   rule would match nothing.  It would still cost: a ct expression makes
   the kernel start conntrack in the namespace, whose hooks (prerouting,
   input, output, postrouting, defragmentation; both families) are set up
   with the namespace and torn down with it, and where no other namespace
   of the host has them, each first one patches the kernel's text (a static
   key): 0.6 ms of a hardened start on the bench VM (docs/benchmarks.md).
   A flow that existed before the wall (a joined namespace) is dropped
   either way once it has no allow entry: stricter, as default-deny says.
   NAT (the proxy redirect) starts conntrack by itself; the redirected flow
   is local after it and needs no ct match either. */
static bool
needs_ct (const struct ab_net_policy *p)
{
  return p != NULL && p->n_allow > 0;
}

static void
build_output (struct ab_nft_ruleset *r, const struct ab_net_policy *p, bool v6_allowed)
{
  static const uint8_t ff02[16] = { 0xff, 0x02 };
  struct ab_nft_chain *c = add_chain (r, "output", "filter", NF_INET_LOCAL_OUT, 0, NF_DROP);
  struct ab_nft_rule *rule;

  if (needs_ct (p))
    add_match (add_rule (c, AB_NFT_V_ACCEPT), AB_NFT_M_CT_STATE);
  /* The namespace's own addresses, loopback and the proxy's listeners
     among them.  Not `oif "lo"`: with the routes of last resort every
     unrouted destination leaves via lo, and after the proxy redirect the
     hook still reports the device of the route before NAT. */
  add_match (add_rule (c, AB_NFT_V_ACCEPT), AB_NFT_M_FIB_LOCAL);
  for (size_t i = 0; p != NULL && i < p->n_allow; i++)
    build_allow (c, &p->allow[i]);

  /* ICMPv6 from a user socket is denied here, before the neighbour
     discovery accepts: those exist for the kernel's own ND, and a process
     with CAP_NET_RAW must not use ND-typed packets as a way out. */
  add_goto (c, &rule, "deny");
  add_match (rule, AB_NFT_M_L4PROTO)->value = IPPROTO_ICMPV6;
  add_match (rule, AB_NFT_M_SKUID_ANY);
  if (v6_allowed)
    add_nd_accepts (c);
  /* What is left to link-scope multicast is the kernel's chatter (MLD
     reports, router and DAD solicitations): dropped without a record. */
  rule = add_rule (c, AB_NFT_V_DROP);
  add_daddr (rule, AF_INET6, ff02, 16);
  add_match (rule, AB_NFT_M_L4PROTO)->value = IPPROTO_ICMPV6;
  add_goto (c, NULL, "deny");
}

static void
build_deny (struct ab_nft_ruleset *r)
{
  struct ab_nft_chain *c = add_chain (r, "deny", NULL, 0, 0, 0);
  struct ab_nft_rule *rule;

  /* Record with the port, then answer: a TCP connect() cannot see the
     EPERM of a drop (tcp_connect ignores the transmit error and retries the
     SYN for two minutes), so it gets a reset and fails at once with
     ECONNREFUSED; every other protocol gets EPERM from sendmsg(). */
  for (size_t s = 0; s < 2; s++)
    {
      rule = add_rule (c, AB_NFT_V_REJECT_RST);
      rule->record = &r->sets[s];
      rule->record_proto = IPPROTO_TCP;
      rule = add_rule (c, AB_NFT_V_DROP);
      rule->record = &r->sets[s];
      rule->record_proto = IPPROTO_UDP;
    }
  /* Other protocols, and TCP/UDP once the port sets are full. */
  add_rule (c, AB_NFT_V_NONE)->record = &r->sets[2];
  add_rule (c, AB_NFT_V_NONE)->record = &r->sets[3];
  add_match (add_rule (c, AB_NFT_V_REJECT_RST), AB_NFT_M_L4PROTO)->value = IPPROTO_TCP;
  add_rule (c, AB_NFT_V_DROP);
}

static void
build_input (struct ab_nft_ruleset *r, const struct ab_net_policy *p, bool v6_allowed)
{
  struct ab_nft_chain *c = add_chain (r, "input", "filter", NF_INET_LOCAL_IN, 0, NF_DROP);

  add_match (add_rule (c, AB_NFT_V_ACCEPT), AB_NFT_M_IIF_LO);
  if (needs_ct (p))
    add_match (add_rule (c, AB_NFT_V_ACCEPT), AB_NFT_M_CT_STATE);
  if (v6_allowed)
    add_nd_accepts (c);
}

static void
build_nat (struct ab_nft_ruleset *r, const struct ab_netns_proxy *proxy)
{
  struct ab_nft_chain *c = add_chain (r, "nat_output", "nat", NF_INET_LOCAL_OUT, -100, NF_ACCEPT);

  add_match (add_rule (c, AB_NFT_V_RETURN), AB_NFT_M_FIB_LOCAL);
  for (size_t i = 0; i < proxy->n_redirect_ports; i++)
    {
      uint16_t port = proxy->redirect_ports[i];
      struct ab_nft_rule *rule;
      struct ab_nft_match *m;
      bool seen = false;

      for (size_t j = 0; j < i; j++)
        seen |= proxy->redirect_ports[j] == port;
      if (port == 0 || seen)
        continue;
      rule = add_rule (c, AB_NFT_V_REDIRECT);
      rule->port = proxy->http_port;
      m = add_match (rule, AB_NFT_M_DPORT);
      m->value = IPPROTO_TCP;
      m->port = port;
    }
}

/* The metadata chain guards what the output chain could let out before
   its `goto deny`: an allow entry, the proxy's redirect, an established
   flow, or a destination that is local.  In the container's own namespace
   with lo alone, with no entries and no proxy, there is none of these:
   a metadata address is local there only if the program put it on lo
   itself (it then reaches its own socket), no other table rewrites it
   (a joined namespace, or one a hook adds to, can have a DNAT to a local
   metadata server, which is why the chain stays there: lo_only is false
   for them), and it meets `goto deny` like any other destination,
   recorded the same.  Leaving the chain out saves the kernel
   a base chain and 12 rules, ~0.2 ms of every start here. */
bool
ab_nft_has_metadata_chain (const struct ab_net_policy *p, const struct ab_netns_proxy *proxy, bool lo_only)
{
  return !lo_only || (p != NULL && p->n_allow > 0) || (proxy != NULL && proxy->enabled);
}

struct ab_nft_ruleset *
ab_nft_ruleset_build (const struct ab_net_policy *p, const struct ab_netns_proxy *proxy, bool lo_only)
{
  struct ab_nft_ruleset *r = xzalloc (sizeof *r);
  bool v6_allowed = false;

  for (size_t i = 0; p != NULL && i < p->n_allow; i++)
    v6_allowed |= p->allow[i].family == AF_INET6;

  r->sets[0] = (struct ab_nft_set){ "denied4", AF_INET, true };
  r->sets[1] = (struct ab_nft_set){ "denied6", AF_INET6, true };
  r->sets[2] = (struct ab_nft_set){ "denied4_proto", AF_INET, false };
  r->sets[3] = (struct ab_nft_set){ "denied6_proto", AF_INET6, false };
  r->n_sets = 4;

  if (ab_nft_has_metadata_chain (p, proxy, lo_only))
    build_metadata (r);
  build_output (r, p, v6_allowed);
  build_deny (r);
  build_input (r, p, v6_allowed);
  add_chain (r, "forward", "filter", NF_INET_FORWARD, 0, NF_DROP);
  if (proxy != NULL && proxy->enabled)
    build_nat (r, proxy);
  return r;
}

void
ab_nft_ruleset_free (struct ab_nft_ruleset *r)
{
  if (r == NULL)
    return;
  for (size_t i = 0; i < r->n_chains; i++)
    free (r->chains[i].rules);
  free (r);
}

int
ab_nft_proxy_check (const struct ab_netns_proxy *proxy, ab_error_t *err)
{
  if (proxy == NULL || !proxy->enabled)
    return 0;
  if (proxy->http_port == 0)
    return ab_error_setc (err, AB_EC_INTERNAL, 0, "egress proxy: the HTTP port is 0");
  if (proxy->dns_port == 0)
    return ab_error_setc (err, AB_EC_INTERNAL, 0, "egress proxy: the DNS port is 0");
  if (proxy->n_redirect_ports > 0 && proxy->redirect_ports == NULL)
    return ab_error_setc (err, AB_EC_INTERNAL, 0, "egress proxy: redirect ports missing");
  return 0;
}

/* ---- text -------------------------------------------------------------- */

struct strbuf
{
  char *s;
  size_t len, cap;
};

static void __attribute__ ((format (printf, 2, 3))) sb_printf (struct strbuf *b, const char *fmt, ...)
{
  va_list ap;
  int n;

  for (;;)
    {
      size_t room = b->cap - b->len;

      va_start (ap, fmt);
      n = vsnprintf (b->s != NULL ? b->s + b->len : NULL, room, fmt, ap);
      va_end (ap);
      if (n < 0)
        abort ();
      if ((size_t)n < room)
        break;
      b->cap = b->cap * 2 + (size_t)n + 64;
      b->s = xrealloc (b->s, b->cap);
    }
  b->len += (size_t)n;
}

static const char *
proto_name (int proto)
{
  switch (proto)
    {
    case IPPROTO_TCP:
      return "tcp";
    case IPPROTO_UDP:
      return "udp";
    case IPPROTO_ICMPV6:
      return "ipv6-icmp";
    default:
      abort (); /* the builder uses no other */
    }
}

static void
match_text (struct strbuf *b, const struct ab_nft_match *m)
{
  const char *ip = m->family == AF_INET ? "ip" : "ip6";
  char addr[INET6_ADDRSTRLEN];

  switch (m->kind)
    {
    case AB_NFT_M_NFPROTO:
      sb_printf (b, "meta nfproto %s", m->family == AF_INET ? "ipv4" : "ipv6");
      break;
    case AB_NFT_M_DADDR:
      inet_ntop (m->family, m->addr, addr, sizeof addr);
      if (m->prefix == (m->family == AF_INET ? 32 : 128))
        sb_printf (b, "%s daddr %s", ip, addr);
      else
        sb_printf (b, "%s daddr %s/%u", ip, addr, m->prefix);
      break;
    case AB_NFT_M_L4PROTO:
      sb_printf (b, "meta l4proto %s", proto_name (m->value));
      break;
    case AB_NFT_M_DPORT:
      sb_printf (b, "%s dport %u", proto_name (m->value), m->port);
      break;
    case AB_NFT_M_CT_STATE:
      sb_printf (b, "ct state established,related");
      break;
    case AB_NFT_M_IIF_LO:
      sb_printf (b, "iif \"lo\"");
      break;
    case AB_NFT_M_FIB_LOCAL:
      sb_printf (b, "fib daddr type local");
      break;
    case AB_NFT_M_SKUID_ANY:
      sb_printf (b, "meta skuid 0-4294967295");
      break;
    case AB_NFT_M_ICMPV6_TYPE:
      sb_printf (b, "icmpv6 type %s", m->value == 135 ? "nd-neighbor-solicit" : "nd-neighbor-advert");
      break;
    case AB_NFT_M_HOPLIMIT:
      sb_printf (b, "ip6 hoplimit %u", m->value);
      break;
    }
}

static void
rule_text (struct strbuf *b, const struct ab_nft_rule *rule)
{
  const char *sep = "";

  for (size_t i = 0; i < rule->n_match; i++, sep = " ")
    {
      sb_printf (b, "%s", sep);
      match_text (b, &rule->match[i]);
    }
  if (rule->record != NULL)
    {
      const struct ab_nft_set *s = rule->record;

      sb_printf (b, "%sadd @%s { %s daddr . meta l4proto", sep, s->name, s->family == AF_INET ? "ip" : "ip6");
      if (s->with_port)
        sb_printf (b, " . %s dport", proto_name (rule->record_proto));
      sb_printf (b, " }");
      sep = " ";
    }
  switch (rule->verdict)
    {
    case AB_NFT_V_NONE:
      break;
    case AB_NFT_V_ACCEPT:
      sb_printf (b, "%saccept", sep);
      break;
    case AB_NFT_V_DROP:
      sb_printf (b, "%sdrop", sep);
      break;
    case AB_NFT_V_RETURN:
      sb_printf (b, "%sreturn", sep);
      break;
    case AB_NFT_V_GOTO:
      sb_printf (b, "%sgoto %s", sep, rule->chain);
      break;
    case AB_NFT_V_REJECT_RST:
      sb_printf (b, "%sreject with tcp reset", sep);
      break;
    case AB_NFT_V_REDIRECT:
      sb_printf (b, "%sredirect to :%u", sep, rule->port);
      break;
    }
}

char *
ab_nft_rule_text (const struct ab_nft_rule *rule)
{
  struct strbuf b = { 0 };

  sb_printf (&b, "%s", "");
  rule_text (&b, rule);
  return b.s;
}

static const char *
hook_name (int hook)
{
  switch (hook)
    {
    case NF_INET_LOCAL_IN:
      return "input";
    case NF_INET_FORWARD:
      return "forward";
    case NF_INET_LOCAL_OUT:
      return "output";
    default:
      abort ();
    }
}

static void
chain_text (struct strbuf *b, const struct ab_nft_chain *c)
{
  sb_printf (b, "\tchain %s {\n", c->name);
  if (c->type != NULL)
    {
      sb_printf (b, "\t\ttype %s hook %s priority ", c->type, hook_name (c->hook));
      /* nft names the standard filter priorities and prints the others. */
      if (strcmp (c->type, "filter") == 0 && c->prio == 0)
        sb_printf (b, "filter");
      else if (strcmp (c->type, "filter") == 0 && c->prio == -300)
        sb_printf (b, "raw");
      else
        sb_printf (b, "%d", c->prio);
      sb_printf (b, "; policy %s;\n", c->policy == NF_DROP ? "drop" : "accept");
    }
  for (size_t i = 0; i < c->n_rules; i++)
    {
      sb_printf (b, "\t\t");
      rule_text (b, &c->rules[i]);
      sb_printf (b, "\n");
    }
  sb_printf (b, "\t}\n");
}

/* The whole table in nft syntax, as `nft list table inet agentbox` prints it. */
static char *
ab_nft_ruleset_text (const struct ab_nft_ruleset *r)
{
  struct strbuf b = { 0 };
  const char *sep = "";

  sb_printf (&b, "table inet " AB_NFT_TABLE " {\n");
  for (size_t i = 0; i < r->n_sets; i++, sep = "\n")
    {
      const struct ab_nft_set *s = &r->sets[i];

      sb_printf (&b, "%s\tset %s {\n\t\ttype %s . inet_proto%s\n", sep, s->name,
                 s->family == AF_INET ? "ipv4_addr" : "ipv6_addr", s->with_port ? " . inet_service" : "");
      sb_printf (&b, "\t\tsize %d\n\t\tflags dynamic\n\t\tcounter\n\t}\n", AB_NFT_DENIED_SIZE);
    }
  for (size_t i = 0; i < r->n_chains; i++, sep = "\n")
    {
      sb_printf (&b, "%s", sep);
      chain_text (&b, &r->chains[i]);
    }
  sb_printf (&b, "}\n");
  return b.s;
}

char *
ab_netns_rules_text (const struct ab_net_policy *p, const struct ab_netns_proxy *proxy, bool lo_only)
{
  _cleanup_nft_ruleset_ struct ab_nft_ruleset *r = ab_nft_ruleset_build (p, proxy, lo_only);

  return ab_nft_ruleset_text (r);
}
