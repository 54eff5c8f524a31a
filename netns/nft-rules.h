/* The one description of the agentbox nftables ruleset (netns/, and
 * `agentbox audit`, which shows and checks exactly what would be installed).
 *
 * ab_nft_ruleset_build turns a policy into this description and decides
 * everything; two renderers only read it: ab_nft_ruleset_text (nft syntax,
 * byte for byte what `nft list table inet agentbox` prints for it) and the
 * libnftnl batch of nft.c.  Neither renderer knows about policies, so the
 * text shown to users cannot drift from the rules installed.
 *
 * Each match renders as the expressions nft itself generates for it,
 * including the implicit dependencies (`ip daddr` needs `meta nfproto
 * ipv4`, `tcp dport` needs `meta l4proto tcp`), emitted once per rule. */
#ifndef AB_NETNS_NFT_RULES_H
#define AB_NETNS_NFT_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "netns/netns.h"

#define AB_NFT_TABLE "agentbox"
/* Elements per denied-destination set: a bound on the kernel memory a
   scanning process can make us spend (about 128 bytes each).  Once a set is
   full, further destinations are recorded without port in the _proto sets,
   and once those are full, not at all; the verdict never changes (t-netns
   scans 340 ports).  The kernel sizes each set's hash table from this hint
   when the table is made, zeroes it, and walks every bucket to list and to
   destroy it: 4096 made the wall's commit 0.34 ms, 256 makes it 0.25 ms
   (strace -T), and is plenty for a record a model reads. */
#define AB_NFT_DENIED_SIZE 256

enum ab_nft_match_kind
{
  AB_NFT_M_NFPROTO,     /* meta nfproto ipv4 */
  AB_NFT_M_DADDR,       /* ip daddr 192.0.2.0/24 */
  AB_NFT_M_L4PROTO,     /* meta l4proto tcp */
  AB_NFT_M_DPORT,       /* tcp dport 443 */
  AB_NFT_M_CT_STATE,    /* ct state established,related */
  AB_NFT_M_IIF_LO,      /* iif "lo" */
  AB_NFT_M_FIB_LOCAL,   /* fib daddr type local */
  AB_NFT_M_SKUID_ANY,   /* meta skuid 0-4294967295: sent by a user socket */
  AB_NFT_M_ICMPV6_TYPE, /* icmpv6 type nd-neighbor-solicit */
  AB_NFT_M_HOPLIMIT,    /* ip6 hoplimit 255 */
};

struct ab_nft_match
{
  enum ab_nft_match_kind kind;
  int family;       /* NFPROTO, DADDR: AF_INET or AF_INET6 */
  uint8_t addr[16]; /* DADDR, network byte order, host bits zero */
  uint8_t prefix;   /* DADDR, 1..32 / 1..128 */
  uint8_t value;    /* L4PROTO, DPORT: IPPROTO_*; ICMPV6_TYPE; HOPLIMIT */
  uint16_t port;    /* DPORT, host byte order */
};

enum ab_nft_verdict
{
  AB_NFT_V_NONE, /* continue with the next rule */
  AB_NFT_V_ACCEPT,
  AB_NFT_V_DROP,
  AB_NFT_V_RETURN,
  AB_NFT_V_GOTO,       /* goto <chain> */
  AB_NFT_V_REJECT_RST, /* reject with tcp reset (after a tcp match) */
  AB_NFT_V_REDIRECT,   /* redirect to :<port> */
};

/* A dynamic set recording denied destinations, one counter per element:
   daddr . l4proto . th dport, or daddr . l4proto for the _proto sets. */
struct ab_nft_set
{
  const char *name;
  int family;
  bool with_port;
};

struct ab_nft_rule
{
  struct ab_nft_match match[3];
  size_t n_match;
  const struct ab_nft_set *record; /* add @set { key } after the matches */
  int record_proto;                /* with_port sets: the protocol of the dport key */
  enum ab_nft_verdict verdict;
  const char *chain; /* AB_NFT_V_GOTO */
  uint16_t port;     /* AB_NFT_V_REDIRECT */
};

struct ab_nft_chain
{
  const char *name;
  const char *type; /* "filter", "nat"; NULL: a regular chain */
  int hook;         /* NF_INET_* for base chains */
  int prio;
  int policy; /* NF_ACCEPT or NF_DROP for base chains */
  struct ab_nft_rule *rules;
  size_t n_rules;
};

#define AB_NFT_MAX_SETS 4
#define AB_NFT_MAX_CHAINS 6

struct ab_nft_ruleset
{
  struct ab_nft_set sets[AB_NFT_MAX_SETS];
  size_t n_sets;
  struct ab_nft_chain chains[AB_NFT_MAX_CHAINS];
  size_t n_chains;
};

/* The ruleset for a policy (NULL: no entries) and a proxy (NULL: none) in
   a namespace that is the container's own with lo alone (lo_only: made by
   agentbox, no linux.netDevices) or not. */
struct ab_nft_ruleset *ab_nft_ruleset_build (const struct ab_net_policy *p, const struct ab_netns_proxy *proxy,
                                             bool lo_only);

/* Whether that ruleset has the metadata chain: unless nothing can be let
   out (no allow entries, no proxy) of a namespace with lo alone. */
bool ab_nft_has_metadata_chain (const struct ab_net_policy *p, const struct ab_netns_proxy *proxy, bool lo_only);
void ab_nft_ruleset_free (struct ab_nft_ruleset *r);
static inline void
ab_nft_ruleset_freep (struct ab_nft_ruleset **r)
{
  ab_nft_ruleset_free (*r);
}
#define _cleanup_nft_ruleset_ __attribute__ ((cleanup (ab_nft_ruleset_freep)))

/* Whether a proxy description can be installed. */
int ab_nft_proxy_check (const struct ab_netns_proxy *proxy, ab_error_t *err);

/* The libnftnl object of one rule of rs, exactly as the batch of nft.c sends
   it (agentbox audit compares it with the rules read back from the kernel);
   the caller frees it with nftnl_rule_free. */
struct nftnl_rule;
struct nftnl_rule *ab_nft_rule_nftnl (const struct ab_nft_ruleset *rs, const struct ab_nft_chain *c,
                                      const struct ab_nft_rule *rule);

/* One rule, as a line of that text without indentation (for messages). */
char *ab_nft_rule_text (const struct ab_nft_rule *rule);

/* The addresses dropped ahead of every accept (cloud metadata services). */
struct ab_nft_metadata_addr
{
  int family;
  const char *addr;
  const char *what;
};
extern const struct ab_nft_metadata_addr ab_nft_metadata_addrs[];
extern const size_t ab_nft_n_metadata_addrs;

#endif
