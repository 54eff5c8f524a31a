/* The denied-destination record: the elements and counters of the dynamic
 * sets of the deny chain (nft.c), read from inside the namespace, and their
 * JSON form for result records. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h> /* libnftnl/expr.h uses FILE */
#include <libnftnl/common.h>
#include <libnftnl/expr.h>
#include <libnftnl/set.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <netinet/in.h>

#include "netns/netns.h"
#include "netns/nft-rules.h"
#include "netns/nl.h"
#include "base/util.h"
#include "base/gen.h"

struct denied_list
{
  struct ab_net_denied *v;
  size_t n;
};

static int
counter_cb (struct nftnl_expr *x, void *data)
{
  uint64_t *packets = data;

  if (strcmp (nftnl_expr_get_str (x, NFTNL_EXPR_NAME), "counter") == 0)
    *packets += nftnl_expr_get_u64 (x, NFTNL_EXPR_CTR_PACKETS);
  return 0;
}

struct element_ctx
{
  struct denied_list *l;
  const struct ab_nft_set *s;
};

static int
add_element (struct nftnl_set_elem *e, void *data)
{
  struct element_ctx *c = data;
  struct denied_list *l = c->l;
  const struct ab_nft_set *s = c->s;
  uint32_t alen = s->family == AF_INET ? 4 : 16;
  uint32_t klen = 0;
  const uint8_t *key = nftnl_set_elem_get (e, NFTNL_SET_ELEM_KEY, &klen);
  struct ab_net_denied d = { .family = s->family };

  /* Key registers: the address, then the protocol and the port, each
     padded to 4 bytes. */
  if (key == NULL || klen != alen + (s->with_port ? 8 : 4))
    return 0;
  memcpy (d.addr, key, alen);
  d.proto = key[alen];
  if (s->with_port)
    {
      uint16_t port;

      memcpy (&port, key + alen + 4, sizeof port);
      d.port = ntohs (port);
    }
  nftnl_set_elem_expr_foreach (e, counter_cb, &d.packets);
  l->v = xreallocarray (l->v, l->n + 1, sizeof *l->v);
  l->v[l->n++] = d;
  return 0;
}

static int
elems_cb (const struct nlmsghdr *nlh, void *data)
{
  return nftnl_set_elems_nlmsg_parse (nlh, data) < 0 ? MNL_CB_ERROR : MNL_CB_OK;
}

static int
read_set (struct mnl_socket *nl, const struct ab_nft_set *s, struct denied_list *l, ab_error_t *err)
{
  char buf[MNL_SOCKET_BUFFER_SIZE];
  struct nftnl_set *set = nftnl_set_alloc ();
  struct element_ctx ctx = { l, s };
  struct nlmsghdr *nlh;
  struct ab_nl_reply r;
  int ret;

  if (set == NULL)
    abort ();
  nftnl_set_set_str (set, NFTNL_SET_TABLE, AB_NFT_TABLE);
  nftnl_set_set_str (set, NFTNL_SET_NAME, s->name);
  nlh = nftnl_nlmsg_build_hdr (buf, NFT_MSG_GETSETELEM, NFPROTO_INET, NLM_F_DUMP, 0);
  nftnl_set_elems_nlmsg_build_payload (nlh, set);
  ret = ab_nl_talk (nl, nlh, elems_cb, set, &r);
  if (ret < 0)
    ab_error_set (err, errno, "nftables: dump set %s", s->name);
  else if (r.errnum != 0)
    ret = ab_error_set (err, r.errnum, "nftables: dump set %s of table inet " AB_NFT_TABLE, s->name);
  else
    nftnl_set_elem_foreach (set, add_element, &ctx);
  nftnl_set_free (set);
  return ret;
}

static int
denied_cmp (const void *a, const void *b)
{
  const struct ab_net_denied *x = a, *y = b;
  int c;

  if (x->family != y->family)
    return x->family == AF_INET ? -1 : 1;
  c = memcmp (x->addr, y->addr, sizeof x->addr);
  if (c != 0)
    return c;
  if (x->proto != y->proto)
    return x->proto < y->proto ? -1 : 1;
  return x->port < y->port ? -1 : x->port > y->port;
}

int
ab_netns_read_denied (int netns_fd, struct ab_net_denied **out, size_t *n, ab_error_t *err)
{
  _cleanup_nft_ruleset_ struct ab_nft_ruleset *rs = ab_nft_ruleset_build (NULL, NULL, false);
  _cleanup_mnl_ struct mnl_socket *nl = ab_nl_open (netns_fd, NETLINK_NETFILTER, err);
  struct denied_list l = { 0 };

  *out = NULL;
  *n = 0;
  if (nl == NULL)
    return -1;
  for (size_t i = 0; i < rs->n_sets; i++)
    if (read_set (nl, &rs->sets[i], &l, err) < 0)
      {
        free (l.v);
        return -1;
      }
  if (l.n > 1)
    qsort (l.v, l.n, sizeof *l.v, denied_cmp);
  *out = l.v;
  *n = l.n;
  return 0;
}

