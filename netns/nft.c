/* The egress wall: routes of last resort and one nftables table.
 *
 * Routing.  In a namespace with only lo and no routes, connect() fails in
 * the route lookup with ENETUNREACH, before any netfilter hook: the attempt
 * is stopped, but nobody sees it.  rtnl.c therefore adds
 *
 *     default dev lo src 127.0.0.1 metric 4294967295
 *     default dev lo src ::1 metric 4294967295
 *
 * so every destination routes, reaches the output hook, and is judged and
 * recorded there.  What IPv4 lets through such a route leaves on lo and
 * dies on the way back in (not a local address, no forwarding).  IPv6 turns
 * a route via lo into a reject route (fib6_is_reject), but of type unicast:
 * the lookup succeeds, the output hook runs, and the dst discards the packet
 * only after it, answering ICMPv6 no-route.  lo stays the only device; the
 * metric puts these routes behind any other, so an allowed destination
 * reaches the world only through a real link (a netDevices veth, or the
 * links of a joined namespace), whose more specific or better routes win.
 *
 * The table `inet agentbox`, in the order a locally generated packet meets
 * its chains (nft-rules.c builds it, the text and this batch render it):
 *
 *   metadata    filter, hook output, priority raw (-300): cloud metadata
 *               addresses `goto deny`.  Ahead of conntrack, of the proxy
 *               redirect and of every accept, so that neither an allow entry
 *               nor an established flow nor the proxy can reach them.  Left
 *               out where it guards nothing: the container's own namespace
 *               with lo alone (no linux.netDevices, no hook before the
 *               program), no allow entries, no proxy
 *               (ab_nft_has_metadata_chain says why).
 *   nat_output  (with a proxy only) nat, output, -100: TCP to the redirect
 *               ports of a non-local destination goes to 127.0.0.1:http_port
 *               (IPv6 to [::1]:http_port): the only way out for that TCP.
 *   output      filter, output, 0, policy drop:
 *               ct state established,related accept (with allow entries
 *                 only: nothing else can have such a flow, nft-rules.c):
 *                 replies and ICMP errors of flows let out (conntrack checks
 *                 the outer address of ICMP errors against the flow);
 *               fib daddr type local accept: the namespace's own addresses
 *                 only (loopback, the proxy's listeners).  Not oif "lo": with
 *                 the routes above every unrouted destination leaves via lo,
 *                 and after a NAT redirect the hook still reports the device
 *                 of the route taken before it;
 *               the allow entries, TCP and UDP only;
 *               ICMPv6 from user sockets goto deny; the kernel's neighbour
 *                 discovery when an IPv6 entry needs it; the kernel's
 *                 link-scope multicast chatter dropped unrecorded;
 *               goto deny.
 *   deny        records the destination in the dynamic sets denied4/denied6
 *               (daddr . l4proto . th dport, TCP and UDP) or denied4_proto /
 *               denied6_proto (daddr . l4proto), one counter per element, then
 *               rejects TCP with a reset and drops everything else.
 *   input       policy drop: lo, established/related (with allow entries),
 *               neighbour discovery (with IPv6 allow entries).
 *   forward     policy drop, no rules: the namespace is useless as a router.
 *
 * What the program sees: sendmsg() of UDP, ICMP and raw packets fails with
 * EPERM, the verdict of the hook.  TCP cannot see that EPERM (tcp_connect()
 * ignores the transmit error of its SYN and retries for two minutes), hence
 * the reset: connect() fails at once with ECONNREFUSED.  Both are counted.
 *
 * One batch (NFNL_MSG_BATCH_BEGIN .. END) creates the table exclusively; if
 * the namespace has one already, a second batch adds, deletes and re-creates
 * it, so a previous agentbox table is replaced atomically: all of the new
 * ruleset is in force, or nothing changed.  ab_netns_apply runs in the
 * target namespace (and denied.c opens its socket there from a helper
 * thread): no socket of the wall ever talks to the host's netfilter.
 *
 * The wall holds against processes without CAP_NET_ADMIN over the
 * namespace; one that has it can delete the table.  Dropping that
 * capability (and CAP_NET_RAW, which the ICMPv6 guard above only limits) is
 * the part of the capability setup, not of this file.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/batch.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_nat.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "netns/netns.h"
#include "netns/nft-rules.h"
#include "netns/nl.h"
#include "base/util.h"

/* nft's datatype numbers, combined as it does for concatenations. */
#define NFT_TYPE_IPADDR 7
#define NFT_TYPE_IP6ADDR 8
#define NFT_TYPE_INET_PROTOCOL 12
#define NFT_TYPE_INET_SERVICE 13
#define NFT_TYPE_BITS 6

/* ---- the ruleset as libnftnl objects ----------------------------------- */

struct emit
{
  struct nftnl_rule *r;
  int nfproto; /* dependency already matched in this rule, 0 if none */
  int l4proto;
};

static struct nftnl_expr *
put (struct emit *e, const char *name)
{
  struct nftnl_expr *x = nftnl_expr_alloc (name);

  if (x == NULL)
    abort ();
  nftnl_rule_add_expr (e->r, x);
  return x;
}

static void
put_meta (struct emit *e, uint32_t key, uint32_t dreg)
{
  struct nftnl_expr *x = put (e, "meta");

  nftnl_expr_set_u32 (x, NFTNL_EXPR_META_KEY, key);
  nftnl_expr_set_u32 (x, NFTNL_EXPR_META_DREG, dreg);
}

static void
put_cmp (struct emit *e, uint32_t op, const void *data, uint32_t len)
{
  struct nftnl_expr *x = put (e, "cmp");

  nftnl_expr_set_u32 (x, NFTNL_EXPR_CMP_SREG, NFT_REG_1);
  nftnl_expr_set_u32 (x, NFTNL_EXPR_CMP_OP, op);
  nftnl_expr_set (x, NFTNL_EXPR_CMP_DATA, data, len);
}

static void
put_cmp_u8 (struct emit *e, uint8_t v)
{
  put_cmp (e, NFT_CMP_EQ, &v, sizeof v);
}

static void
put_cmp_u32 (struct emit *e, uint32_t op, uint32_t v)
{
  put_cmp (e, op, &v, sizeof v);
}

static void
put_payload (struct emit *e, uint32_t base, uint32_t offset, uint32_t len, uint32_t dreg)
{
  struct nftnl_expr *x = put (e, "payload");

  nftnl_expr_set_u32 (x, NFTNL_EXPR_PAYLOAD_BASE, base);
  nftnl_expr_set_u32 (x, NFTNL_EXPR_PAYLOAD_OFFSET, offset);
  nftnl_expr_set_u32 (x, NFTNL_EXPR_PAYLOAD_LEN, len);
  nftnl_expr_set_u32 (x, NFTNL_EXPR_PAYLOAD_DREG, dreg);
}

static void
put_bitwise (struct emit *e, const void *mask, uint32_t len)
{
  static const uint8_t zero[16];
  struct nftnl_expr *x = put (e, "bitwise");

  nftnl_expr_set_u32 (x, NFTNL_EXPR_BITWISE_SREG, NFT_REG_1);
  nftnl_expr_set_u32 (x, NFTNL_EXPR_BITWISE_DREG, NFT_REG_1);
  nftnl_expr_set_u32 (x, NFTNL_EXPR_BITWISE_LEN, len);
  nftnl_expr_set (x, NFTNL_EXPR_BITWISE_MASK, mask, len);
  nftnl_expr_set (x, NFTNL_EXPR_BITWISE_XOR, zero, len);
}

static void
need_nfproto (struct emit *e, int family)
{
  if (e->nfproto == family)
    return;
  put_meta (e, NFT_META_NFPROTO, NFT_REG_1);
  put_cmp_u8 (e, family == AF_INET ? NFPROTO_IPV4 : NFPROTO_IPV6);
  e->nfproto = family;
}

static void
need_l4proto (struct emit *e, int proto)
{
  if (e->l4proto == proto)
    return;
  put_meta (e, NFT_META_L4PROTO, NFT_REG_1);
  put_cmp_u8 (e, (uint8_t)proto);
  e->l4proto = proto;
}

/* nft's register for a key component at byte `off`: the 16-byte registers
   on 16-byte boundaries, the 4-byte ones otherwise. */
static uint32_t
reg_at (uint32_t off)
{
  return off % 16 == 0 ? NFT_REG_1 + off / 16 : NFT_REG32_00 + off / 4;
}

/* As nft does: a byte-aligned prefix loads and compares only its bytes,
   another one masks the whole address. */
static void
emit_daddr (struct emit *e, const struct ab_nft_match *m)
{
  uint32_t alen = m->family == AF_INET ? 4 : 16;
  uint32_t off = m->family == AF_INET ? 16 : 24;
  uint8_t mask[16] = { 0 };

  need_nfproto (e, m->family);
  if (m->prefix % 8 == 0)
    {
      put_payload (e, NFT_PAYLOAD_NETWORK_HEADER, off, m->prefix / 8u, NFT_REG_1);
      put_cmp (e, NFT_CMP_EQ, m->addr, m->prefix / 8u);
      return;
    }
  for (unsigned i = 0; i < m->prefix; i++)
    mask[i / 8] |= (uint8_t)(0x80 >> (i % 8));
  put_payload (e, NFT_PAYLOAD_NETWORK_HEADER, off, alen, NFT_REG_1);
  put_bitwise (e, mask, alen);
  put_cmp (e, NFT_CMP_EQ, m->addr, alen);
}

static void
emit_match (struct emit *e, const struct ab_nft_match *m)
{
  uint16_t port = htons (m->port);
  uint32_t v;

  switch (m->kind)
    {
    case AB_NFT_M_NFPROTO:
      e->nfproto = 0;
      need_nfproto (e, m->family);
      break;
    case AB_NFT_M_DADDR:
      emit_daddr (e, m);
      break;
    case AB_NFT_M_L4PROTO:
      e->l4proto = 0;
      need_l4proto (e, m->value);
      break;
    case AB_NFT_M_DPORT:
      need_l4proto (e, m->value);
      put_payload (e, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, NFT_REG_1);
      put_cmp (e, NFT_CMP_EQ, &port, sizeof port);
      break;
    case AB_NFT_M_CT_STATE:
      {
        struct nftnl_expr *x = put (e, "ct");

        nftnl_expr_set_u32 (x, NFTNL_EXPR_CT_KEY, NFT_CT_STATE);
        nftnl_expr_set_u32 (x, NFTNL_EXPR_CT_DREG, NFT_REG_1);
        v = NF_CT_STATE_BIT (IP_CT_ESTABLISHED) | NF_CT_STATE_BIT (IP_CT_RELATED);
        put_bitwise (e, &v, sizeof v);
        put_cmp_u32 (e, NFT_CMP_NEQ, 0);
        break;
      }
    case AB_NFT_M_IIF_LO:
      put_meta (e, NFT_META_IIF, NFT_REG_1);
      put_cmp_u32 (e, NFT_CMP_EQ, 1); /* lo is ifindex 1 in every namespace */
      break;
    case AB_NFT_M_FIB_LOCAL:
      {
        struct nftnl_expr *x = put (e, "fib");

        nftnl_expr_set_u32 (x, NFTNL_EXPR_FIB_FLAGS, NFTA_FIB_F_DADDR);
        nftnl_expr_set_u32 (x, NFTNL_EXPR_FIB_RESULT, NFT_FIB_RESULT_ADDRTYPE);
        nftnl_expr_set_u32 (x, NFTNL_EXPR_FIB_DREG, NFT_REG_1);
        put_cmp_u32 (e, NFT_CMP_EQ, RTN_LOCAL);
        break;
      }
    case AB_NFT_M_SKUID_ANY:
      {
        /* Loading skuid fails (the rule does not match) for packets of the
           kernel's own sockets, which have no file. */
        struct nftnl_expr *x;

        put_meta (e, NFT_META_SKUID, NFT_REG_1);
        x = put (e, "byteorder");
        nftnl_expr_set_u32 (x, NFTNL_EXPR_BYTEORDER_SREG, NFT_REG_1);
        nftnl_expr_set_u32 (x, NFTNL_EXPR_BYTEORDER_DREG, NFT_REG_1);
        nftnl_expr_set_u32 (x, NFTNL_EXPR_BYTEORDER_OP, NFT_BYTEORDER_HTON);
        nftnl_expr_set_u32 (x, NFTNL_EXPR_BYTEORDER_LEN, 4);
        nftnl_expr_set_u32 (x, NFTNL_EXPR_BYTEORDER_SIZE, 4);
        put_cmp_u32 (e, NFT_CMP_GTE, 0);
        put_cmp_u32 (e, NFT_CMP_LTE, UINT32_MAX);
        break;
      }
    case AB_NFT_M_ICMPV6_TYPE:
      need_nfproto (e, AF_INET6);
      need_l4proto (e, IPPROTO_ICMPV6);
      put_payload (e, NFT_PAYLOAD_TRANSPORT_HEADER, 0, 1, NFT_REG_1);
      put_cmp_u8 (e, m->value);
      break;
    case AB_NFT_M_HOPLIMIT:
      need_nfproto (e, AF_INET6);
      put_payload (e, NFT_PAYLOAD_NETWORK_HEADER, 7, 1, NFT_REG_1);
      put_cmp_u8 (e, m->value);
      break;
    }
}

/* add @set { ip daddr . meta l4proto [. tcp dport] } */
static void
emit_record (struct emit *e, const struct ab_nft_rule *rule, uint32_t set_id)
{
  const struct ab_nft_set *s = rule->record;
  uint32_t alen = s->family == AF_INET ? 4 : 16;
  struct nftnl_expr *x;

  need_nfproto (e, s->family);
  if (s->with_port)
    need_l4proto (e, rule->record_proto);
  put_payload (e, NFT_PAYLOAD_NETWORK_HEADER, s->family == AF_INET ? 16 : 24, alen, NFT_REG_1);
  put_meta (e, NFT_META_L4PROTO, reg_at (alen));
  if (s->with_port)
    put_payload (e, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, reg_at (alen + 4));
  x = put (e, "dynset");
  nftnl_expr_set_u32 (x, NFTNL_EXPR_DYNSET_SREG_KEY, NFT_REG_1);
  nftnl_expr_set_u32 (x, NFTNL_EXPR_DYNSET_OP, NFT_DYNSET_OP_ADD);
  nftnl_expr_set_str (x, NFTNL_EXPR_DYNSET_SET_NAME, s->name);
  nftnl_expr_set_u32 (x, NFTNL_EXPR_DYNSET_SET_ID, set_id);
}

static void
emit_verdict (struct emit *e, const struct ab_nft_rule *rule)
{
  struct nftnl_expr *x;
  int code;

  switch (rule->verdict)
    {
    case AB_NFT_V_NONE:
      return;
    case AB_NFT_V_REJECT_RST:
      x = put (e, "reject");
      nftnl_expr_set_u32 (x, NFTNL_EXPR_REJECT_TYPE, NFT_REJECT_TCP_RST);
      nftnl_expr_set_u8 (x, NFTNL_EXPR_REJECT_CODE, 0);
      return;
    case AB_NFT_V_REDIRECT:
      {
        uint16_t port = htons (rule->port);

        x = put (e, "immediate");
        nftnl_expr_set_u32 (x, NFTNL_EXPR_IMM_DREG, NFT_REG_1);
        nftnl_expr_set (x, NFTNL_EXPR_IMM_DATA, &port, sizeof port);
        x = put (e, "redir");
        nftnl_expr_set_u32 (x, NFTNL_EXPR_REDIR_REG_PROTO_MIN, NFT_REG_1);
        nftnl_expr_set_u32 (x, NFTNL_EXPR_REDIR_REG_PROTO_MAX, NFT_REG_1);
        nftnl_expr_set_u32 (x, NFTNL_EXPR_REDIR_FLAGS, NF_NAT_RANGE_PROTO_SPECIFIED);
        return;
      }
    case AB_NFT_V_ACCEPT:
      code = NF_ACCEPT;
      break;
    case AB_NFT_V_DROP:
      code = NF_DROP;
      break;
    case AB_NFT_V_RETURN:
      code = NFT_RETURN;
      break;
    case AB_NFT_V_GOTO:
      code = NFT_GOTO;
      break;
    default:
      abort ();
    }
  x = put (e, "immediate");
  nftnl_expr_set_u32 (x, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
  nftnl_expr_set_u32 (x, NFTNL_EXPR_IMM_VERDICT, (uint32_t)code);
  if (rule->verdict == AB_NFT_V_GOTO)
    nftnl_expr_set_str (x, NFTNL_EXPR_IMM_CHAIN, rule->chain);
}

static uint32_t
set_id (const struct ab_nft_ruleset *rs, const struct ab_nft_set *s)
{
  return (uint32_t)(s - rs->sets) + 1;
}

static struct nftnl_rule *
rule_new (const struct ab_nft_ruleset *rs, const struct ab_nft_chain *c, const struct ab_nft_rule *rule)
{
  struct emit e = { .r = nftnl_rule_alloc () };

  if (e.r == NULL)
    abort ();
  nftnl_rule_set_u32 (e.r, NFTNL_RULE_FAMILY, NFPROTO_INET);
  nftnl_rule_set_str (e.r, NFTNL_RULE_TABLE, AB_NFT_TABLE);
  nftnl_rule_set_str (e.r, NFTNL_RULE_CHAIN, c->name);
  for (size_t i = 0; i < rule->n_match; i++)
    emit_match (&e, &rule->match[i]);
  if (rule->record != NULL)
    emit_record (&e, rule, set_id (rs, rule->record));
  emit_verdict (&e, rule);
  return e.r;
}

struct nftnl_rule *
ab_nft_rule_nftnl (const struct ab_nft_ruleset *rs, const struct ab_nft_chain *c, const struct ab_nft_rule *rule)
{
  return rule_new (rs, c, rule);
}

static struct nftnl_chain *
chain_new (const struct ab_nft_chain *c)
{
  struct nftnl_chain *ch = nftnl_chain_alloc ();

  if (ch == NULL)
    abort ();
  nftnl_chain_set_u32 (ch, NFTNL_CHAIN_FAMILY, NFPROTO_INET);
  nftnl_chain_set_str (ch, NFTNL_CHAIN_TABLE, AB_NFT_TABLE);
  nftnl_chain_set_str (ch, NFTNL_CHAIN_NAME, c->name);
  if (c->type != NULL)
    {
      nftnl_chain_set_str (ch, NFTNL_CHAIN_TYPE, c->type);
      nftnl_chain_set_u32 (ch, NFTNL_CHAIN_HOOKNUM, (uint32_t)c->hook);
      nftnl_chain_set_s32 (ch, NFTNL_CHAIN_PRIO, c->prio);
      nftnl_chain_set_u32 (ch, NFTNL_CHAIN_POLICY, (uint32_t)c->policy);
    }
  return ch;
}

static struct nftnl_set *
set_new (const struct ab_nft_ruleset *rs, const struct ab_nft_set *s)
{
  uint32_t addr_type = s->family == AF_INET ? NFT_TYPE_IPADDR : NFT_TYPE_IP6ADDR;
  uint32_t type = addr_type << NFT_TYPE_BITS | NFT_TYPE_INET_PROTOCOL;
  uint32_t len = (s->family == AF_INET ? 4 : 16) + 4;
  struct nftnl_set *set = nftnl_set_alloc ();
  struct nftnl_expr *counter = nftnl_expr_alloc ("counter");

  if (set == NULL || counter == NULL)
    abort ();
  if (s->with_port)
    type = type << NFT_TYPE_BITS | NFT_TYPE_INET_SERVICE, len += 4;
  nftnl_set_set_u32 (set, NFTNL_SET_FAMILY, NFPROTO_INET);
  nftnl_set_set_str (set, NFTNL_SET_TABLE, AB_NFT_TABLE);
  nftnl_set_set_str (set, NFTNL_SET_NAME, s->name);
  nftnl_set_set_u32 (set, NFTNL_SET_ID, set_id (rs, s));
  /* NFT_SET_EVAL: filled from the packet path ("flags dynamic"). */
  nftnl_set_set_u32 (set, NFTNL_SET_FLAGS, NFT_SET_EVAL);
  nftnl_set_set_u32 (set, NFTNL_SET_KEY_TYPE, type);
  nftnl_set_set_u32 (set, NFTNL_SET_KEY_LEN, len);
  nftnl_set_set_u32 (set, NFTNL_SET_DESC_SIZE, AB_NFT_DENIED_SIZE);
  /* A counter in every element the rules add. */
  nftnl_set_add_expr (set, counter);
  return set;
}

/* ---- the batch --------------------------------------------------------- */

struct batch
{
  struct nftnl_batch *b;
  uint32_t first_seq, seq;
  struct ab_strv what; /* per message after BATCH_BEGIN, for errors */
};

static void
batch_free (struct batch *b)
{
  if (b->b != NULL)
    nftnl_batch_free (b->b);
  ab_strv_free (&b->what);
}

static struct nlmsghdr *
batch_msg (struct batch *b, uint16_t type, uint16_t flags, char *what)
{
  struct nlmsghdr *nlh
      = nftnl_nlmsg_build_hdr (nftnl_batch_buffer (b->b), type, NFPROTO_INET, flags, b->seq++);

  ab_strv_push_owned (&b->what, what);
  return nlh;
}

static void
batch_next (struct batch *b)
{
  if (nftnl_batch_update (b->b) < 0)
    abort (); /* allocation */
}

static void
batch_table (struct batch *b, uint16_t type, uint16_t flags, const char *verb)
{
  struct nftnl_table *t = nftnl_table_alloc ();

  if (t == NULL)
    abort ();
  nftnl_table_set_u32 (t, NFTNL_TABLE_FAMILY, NFPROTO_INET);
  nftnl_table_set_str (t, NFTNL_TABLE_NAME, AB_NFT_TABLE);
  nftnl_table_nlmsg_build_payload (
      batch_msg (b, type, flags, xasprintf ("%s table inet " AB_NFT_TABLE, verb)), t);
  nftnl_table_free (t);
  batch_next (b);
}

/* replace: add, delete and re-create the table, for a namespace that has
   one already.  Not the default: deleting a table makes the commit wait for
   an RCU grace period, which is most of the cost of the whole batch. */
static void
batch_build (struct batch *b, const struct ab_nft_ruleset *rs, bool replace)
{
  size_t n_rules = 0, k = 0;

  nftnl_batch_begin (nftnl_batch_buffer (b->b), b->seq++);
  batch_next (b);
  b->first_seq = b->seq;
  if (replace)
    {
      batch_table (b, NFT_MSG_NEWTABLE, NLM_F_CREATE, "add");
      batch_table (b, NFT_MSG_DELTABLE, 0, "delete");
    }
  batch_table (b, NFT_MSG_NEWTABLE, NLM_F_CREATE | NLM_F_EXCL, "create");
  for (size_t i = 0; i < rs->n_sets; i++)
    {
      struct nftnl_set *s = set_new (rs, &rs->sets[i]);

      nftnl_set_nlmsg_build_payload (batch_msg (b, NFT_MSG_NEWSET, NLM_F_CREATE | NLM_F_EXCL,
                                                xasprintf ("add set %s", rs->sets[i].name)),
                                     s);
      nftnl_set_free (s);
      batch_next (b);
    }
  for (size_t i = 0; i < rs->n_chains; i++)
    {
      struct nftnl_chain *c = chain_new (&rs->chains[i]);

      nftnl_chain_nlmsg_build_payload (batch_msg (b, NFT_MSG_NEWCHAIN, NLM_F_CREATE | NLM_F_EXCL,
                                                  xasprintf ("add chain %s", rs->chains[i].name)),
                                       c);
      nftnl_chain_free (c);
      batch_next (b);
    }
  for (size_t i = 0; i < rs->n_chains; i++)
    n_rules += rs->chains[i].n_rules;
  for (size_t i = 0; i < rs->n_chains; i++)
    for (size_t j = 0; j < rs->chains[i].n_rules; j++)
      {
        const struct ab_nft_rule *rule = &rs->chains[i].rules[j];
        _cleanup_free_ char *text = ab_nft_rule_text (rule);
        struct nftnl_rule *r = rule_new (rs, &rs->chains[i], rule);
        /* The last message asks for an ack: the kernel reports every
           message's error before it, so that ack closes the exchange. */
        bool last = ++k == n_rules;

        nftnl_rule_nlmsg_build_payload (
            batch_msg (b, NFT_MSG_NEWRULE, NLM_F_CREATE | NLM_F_APPEND | (last ? NLM_F_ACK : 0),
                       xasprintf ("add rule to chain %s: `%s`", rs->chains[i].name, text)),
            r);
        nftnl_rule_free (r);
        batch_next (b);
      }
  nftnl_batch_end (nftnl_batch_buffer (b->b), b->seq++);
  batch_next (b);
}

static int
batch_send (struct mnl_socket *nl, struct batch *b, ab_error_t *err)
{
  int iovlen = nftnl_batch_iovec_len (b->b);
  _cleanup_free_ struct iovec *iov = xcalloc ((size_t)iovlen, sizeof *iov);
  struct sockaddr_nl snl = { .nl_family = AF_NETLINK };
  struct msghdr msg = { .msg_name = &snl, .msg_namelen = sizeof snl };
  size_t total = 0;
  int sndbuf;

  nftnl_batch_iovec (b->b, iov, (uint32_t)iovlen);
  for (int i = 0; i < iovlen; i++)
    total += iov[i].iov_len;
  msg.msg_iov = iov;
  msg.msg_iovlen = (size_t)iovlen;
  if (sendmsg (mnl_socket_get_fd (nl), &msg, 0) >= 0)
    return 0;
  if (errno != EMSGSIZE)
    return ab_error_set (err, errno, "nftables: send the batch of %zu bytes", total);
  /* The whole batch goes in one datagram: one larger than the socket's
     send buffer (net.core.wmem_default, 208 KiB on most hosts) needs room
     made for it (the kernel caps this at net.core.wmem_max). */
  sndbuf = total > INT32_MAX / 2 ? INT32_MAX / 2 : (int)total;
  if (setsockopt (mnl_socket_get_fd (nl), SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf) < 0)
    return ab_error_set (err, errno, "nftables: setsockopt SO_SNDBUF");
  if (sendmsg (mnl_socket_get_fd (nl), &msg, 0) < 0)
    return ab_error_set (err, errno, "nftables: send the batch of %zu bytes", total);
  return 0;
}

/* Read replies until the ack of the last message, or the error of the
   batch itself (a failed commit is reported against BATCH_BEGIN).  On
   failure *failed_at is the index of the first message that failed (-1:
   the commit). */
static int
batch_wait (struct mnl_socket *nl, struct batch *b, long *failed_at, ab_error_t *err)
{
  _cleanup_free_ char *buf = xmalloc (MNL_SOCKET_BUFFER_SIZE * 4);
  uint32_t begin_seq = b->first_seq - 1, last_seq = b->seq - 2;
  bool failed = false;

  for (;;)
    {
      ssize_t n = mnl_socket_recvfrom (nl, buf, MNL_SOCKET_BUFFER_SIZE * 4);
      const struct nlmsghdr *nlh = (const struct nlmsghdr *)buf;
      int len = (int)n;

      if (n < 0)
        return ab_error_set (err, errno, "nftables: read the batch replies");
      for (; mnl_nlmsg_ok (nlh, len); nlh = mnl_nlmsg_next (nlh, &len))
        {
          struct ab_nl_reply r;
          uint32_t seq = nlh->nlmsg_seq;

          if (nlh->nlmsg_type != NLMSG_ERROR || seq < begin_seq || seq > last_seq)
            continue;
          ab_nl_parse_error (nlh, &r);
          if (r.errnum != 0 && !failed)
            {
              const char *what = seq == begin_seq ? "commit the batch" : b->what.v[seq - b->first_seq];

              ab_error_set (err, r.errnum, "nftables: %s%s%s%s", what, ab_nl_extack_sep (&r), r.extack,
                            ab_nl_extack_end (&r));
              *failed_at = seq == begin_seq ? -1 : (long)(seq - b->first_seq);
              failed = true;
            }
          if (seq == last_seq || seq == begin_seq)
            return failed ? -1 : 0;
        }
    }
}

/* One batch on nl, its messages numbered from *seq on (advanced past them,
   so that replies to an earlier batch on the same socket are told apart). */
static int
nft_batch (struct mnl_socket *nl, const struct ab_nft_ruleset *rs, bool replace, uint32_t *seq,
           long *failed_at, ab_error_t *err)
{
  _cleanup_ (batch_free) struct batch b = { 0 };

  b.b = nftnl_batch_alloc (MNL_SOCKET_BUFFER_SIZE, MNL_SOCKET_BUFFER_SIZE);
  if (b.b == NULL)
    abort ();
  b.seq = *seq;
  batch_build (&b, rs, replace);
  *seq = b.seq;
  if (batch_send (nl, &b, err) < 0)
    return -1;
  return batch_wait (nl, &b, failed_at, err);
}

static int
nft_install (struct mnl_socket *nl, const struct ab_nft_ruleset *rs, ab_error_t *err)
{
  ab_error_t first = { 0 };
  uint32_t seq = 1; /* a fresh socket: no replies to anything else */
  long failed_at = -2;

  if (nft_batch (nl, rs, false, &seq, &failed_at, &first) == 0)
    return 0;
  /* The table exists (a joined namespace, a second apply): that batch
     failed as a whole, so nothing changed; replace the table atomically. */
  if (failed_at != 0 || first.errnum != EEXIST)
    {
      if (err != NULL)
        *err = first;
      return -1;
    }
  return nft_batch (nl, rs, true, &seq, &failed_at, err);
}

/* The wall's two sockets (NETLINK_NETFILTER, NETLINK_ROUTE): socks
   adopted (taken, even on error), or made in one entry into the namespace
   (rootless: one helper).  All or none. */
static int
wall_sockets (int netns_fd, int *socks, struct mnl_socket **nl, ab_error_t *err)
{
  static const int bus[2] = { NETLINK_NETFILTER, NETLINK_ROUTE };

  if (socks == NULL)
    return ab_nl_open_n (netns_fd, bus, nl, 2, err);
  nl[0] = ab_nl_adopt (socks[0], bus[0], err);
  nl[1] = ab_nl_adopt (socks[1], bus[1], nl[0] ? err : NULL);
  socks[0] = socks[1] = -1;
  if (nl[0] && nl[1])
    return 0;
  for (int i = 0; i < 2; i++)
    if (nl[i])
      mnl_socket_close (nl[i]);
  return -1;
}

int
ab_netns_apply (int netns_fd, const struct ab_net_policy *p, const struct ab_netns_proxy *proxy, bool lo_only,
                int *socks, ab_error_t *err)
{
  _cleanup_nft_ruleset_ struct ab_nft_ruleset *rs = NULL;
  struct mnl_socket *nl[2];
  int r;

  if (wall_sockets (netns_fd, socks, nl, err) < 0)
    return -1;
  r = ab_nft_proxy_check (proxy, err);
  if (r == 0)
    {
      rs = ab_nft_ruleset_build (p, proxy, lo_only);
      /* Rules first: from the moment lo is up and routes exist, the wall is
         already in place. */
      r = nft_install (nl[0], rs, err) < 0 || ab_netns_setup_routes (nl[1], err) < 0 ? -1 : 0;
    }
  mnl_socket_close (nl[0]);
  mnl_socket_close (nl[1]);
  return r;
}
