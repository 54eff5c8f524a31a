/* The nftables wall of a running container, read back from the kernel and
 * compared with what agentbox installs for the config.
 *
 * A forked child joins the container's network namespace (setns moves only
 * that process; ours never changes), dumps the chains and rules of table
 * inet agentbox through libmnl/libnftnl, and writes one line per chain and
 * rule to a pipe.  Each rule is reduced to a signature: its expressions
 * with the fields that decide the verdict (compared data, payload offsets,
 * meta keys, verdicts and jump targets, set names).  The expected rules
 * are the runtime's own (netns/nft-rules.c builds them, nft.c turns them
 * into the very libnftnl objects it sends), reduced the same way, so a
 * difference is a difference in what the kernel does. */
#include "config.h"

#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/wait.h>

#include "audit/audit-internal.h"
#include "netns/nft-rules.h"
#include "netns/nl.h"
#include "base/util.h"

/* ---- signatures --------------------------------------------------------------- */

struct sb
{
  char *s;
  size_t len, cap;
};

static void __attribute__ ((format (printf, 2, 3))) sb_printf (struct sb *b, const char *fmt, ...)
{
  va_list ap;
  int n;

  va_start (ap, fmt);
  n = vsnprintf (NULL, 0, fmt, ap);
  va_end (ap);
  if (b->len + (size_t)n + 1 > b->cap)
    {
      b->cap = (b->len + (size_t)n + 1) * 2;
      b->s = xrealloc (b->s, b->cap);
    }
  va_start (ap, fmt);
  vsnprintf (b->s + b->len, b->cap - b->len, fmt, ap);
  va_end (ap);
  b->len += (size_t)n;
}

static void
sb_hex (struct sb *b, const struct nftnl_expr *e, uint16_t attr)
{
  uint32_t len = 0;
  const uint8_t *d = nftnl_expr_is_set (e, attr) ? nftnl_expr_get (e, attr, &len) : NULL;

  sb_printf (b, "=");
  for (uint32_t i = 0; d && i < len; i++)
    sb_printf (b, "%02x", d[i]);
}

static void
expr_sig (struct sb *b, const struct nftnl_expr *e)
{
  const char *name = nftnl_expr_get_str (e, NFTNL_EXPR_NAME);

  sb_printf (b, " %s", name);
  if (strcmp (name, "cmp") == 0)
    {
      sb_printf (b, ":%u", nftnl_expr_get_u32 (e, NFTNL_EXPR_CMP_OP));
      sb_hex (b, e, NFTNL_EXPR_CMP_DATA);
    }
  else if (strcmp (name, "meta") == 0)
    sb_printf (b, ":%u", nftnl_expr_get_u32 (e, NFTNL_EXPR_META_KEY));
  else if (strcmp (name, "payload") == 0)
    sb_printf (b, ":%u:%u:%u", nftnl_expr_get_u32 (e, NFTNL_EXPR_PAYLOAD_BASE),
               nftnl_expr_get_u32 (e, NFTNL_EXPR_PAYLOAD_OFFSET),
               nftnl_expr_get_u32 (e, NFTNL_EXPR_PAYLOAD_LEN));
  else if (strcmp (name, "bitwise") == 0)
    {
      sb_hex (b, e, NFTNL_EXPR_BITWISE_MASK);
      sb_hex (b, e, NFTNL_EXPR_BITWISE_XOR);
    }
  else if (strcmp (name, "immediate") == 0)
    {
      if (nftnl_expr_is_set (e, NFTNL_EXPR_IMM_VERDICT))
        sb_printf (b, ":%d", (int32_t)nftnl_expr_get_u32 (e, NFTNL_EXPR_IMM_VERDICT));
      if (nftnl_expr_is_set (e, NFTNL_EXPR_IMM_CHAIN))
        sb_printf (b, ":%s", nftnl_expr_get_str (e, NFTNL_EXPR_IMM_CHAIN));
      if (nftnl_expr_is_set (e, NFTNL_EXPR_IMM_DATA))
        sb_hex (b, e, NFTNL_EXPR_IMM_DATA);
    }
  else if (strcmp (name, "ct") == 0)
    sb_printf (b, ":%u", nftnl_expr_get_u32 (e, NFTNL_EXPR_CT_KEY));
  else if (strcmp (name, "fib") == 0)
    sb_printf (b, ":%u:%u", nftnl_expr_get_u32 (e, NFTNL_EXPR_FIB_FLAGS),
               nftnl_expr_get_u32 (e, NFTNL_EXPR_FIB_RESULT));
  else if (strcmp (name, "reject") == 0)
    sb_printf (b, ":%u", nftnl_expr_get_u32 (e, NFTNL_EXPR_REJECT_TYPE));
  else if (strcmp (name, "dynset") == 0 && nftnl_expr_is_set (e, NFTNL_EXPR_DYNSET_SET_NAME))
    sb_printf (b, ":%u:%s", nftnl_expr_get_u32 (e, NFTNL_EXPR_DYNSET_OP),
               nftnl_expr_get_str (e, NFTNL_EXPR_DYNSET_SET_NAME));
}

static char *
rule_sig (const struct nftnl_rule *r)
{
  struct nftnl_expr_iter *it = nftnl_expr_iter_create (r);
  struct nftnl_expr *e;
  struct sb b = { 0 };

  sb_printf (&b, "%s", "");
  while (it && (e = nftnl_expr_iter_next (it)) != NULL)
    expr_sig (&b, e);
  if (it)
    nftnl_expr_iter_destroy (it);
  return b.s;
}

static char *
chain_head (const char *type, uint32_t hook, int32_t prio, uint32_t policy)
{
  if (type == NULL)
    return xstrdup ("regular");
  return xasprintf ("type %s hook %u priority %d policy %s", type, hook, prio,
                    policy == NF_DROP ? "drop" : "accept");
}

/* ---- the child: dump the table ---------------------------------------------------- */

static int
chain_cb (const struct nlmsghdr *nlh, void *data)
{
  struct nftnl_chain *c = nftnl_chain_alloc ();
  FILE *out = data;

  if (c == NULL)
    abort ();
  if (nftnl_chain_nlmsg_parse (nlh, c) == 0 && nftnl_chain_get_u32 (c, NFTNL_CHAIN_FAMILY) == NFPROTO_INET
      && strcmp (nftnl_chain_get_str (c, NFTNL_CHAIN_TABLE), AB_NFT_TABLE) == 0)
    {
      bool base = nftnl_chain_is_set (c, NFTNL_CHAIN_HOOKNUM);
      _cleanup_free_ char *head = chain_head (base ? nftnl_chain_get_str (c, NFTNL_CHAIN_TYPE) : NULL,
                                              nftnl_chain_get_u32 (c, NFTNL_CHAIN_HOOKNUM),
                                              nftnl_chain_get_s32 (c, NFTNL_CHAIN_PRIO),
                                              nftnl_chain_get_u32 (c, NFTNL_CHAIN_POLICY));
      fprintf (out, "C %s|%s\n", nftnl_chain_get_str (c, NFTNL_CHAIN_NAME), head);
    }
  nftnl_chain_free (c);
  return MNL_CB_OK;
}

static int
rule_cb (const struct nlmsghdr *nlh, void *data)
{
  struct nftnl_rule *r = nftnl_rule_alloc ();
  FILE *out = data;

  if (r == NULL)
    abort ();
  if (nftnl_rule_nlmsg_parse (nlh, r) == 0 && nftnl_rule_get_u32 (r, NFTNL_RULE_FAMILY) == NFPROTO_INET
      && strcmp (nftnl_rule_get_str (r, NFTNL_RULE_TABLE), AB_NFT_TABLE) == 0)
    {
      _cleanup_free_ char *sig = rule_sig (r);
      fprintf (out, "R %s|%s\n", nftnl_rule_get_str (r, NFTNL_RULE_CHAIN), sig);
    }
  nftnl_rule_free (r);
  return MNL_CB_OK;
}

static int
dump (struct mnl_socket *nl, uint16_t type, mnl_cb_t cb, FILE *out, ab_error_t *err)
{
  char buf[MNL_SOCKET_BUFFER_SIZE];
  struct nlmsghdr *nlh = nftnl_nlmsg_build_hdr (buf, type, NFPROTO_INET, NLM_F_DUMP, 0);
  struct ab_nl_reply r;

  if (ab_nl_talk (nl, nlh, cb, out, &r) < 0)
    return ab_error_set (err, errno, "nftables dump");
  if (r.errnum != 0)
    return ab_error_set (err, r.errnum, "nftables dump");
  return 0;
}

static void __attribute__ ((noreturn)) child (int netns_fd, int out_fd)
{
  FILE *out = fdopen (out_fd, "w");
  ab_error_t err = { 0 };
  struct mnl_socket *nl;

  if (out == NULL || setns (netns_fd, CLONE_NEWNET) < 0)
    _exit (2);
  nl = ab_nl_open (-1, NETLINK_NETFILTER, &err);
  if (nl == NULL || dump (nl, NFT_MSG_GETCHAIN, chain_cb, out, &err) < 0
      || dump (nl, NFT_MSG_GETRULE, rule_cb, out, &err) < 0)
    {
      fprintf (out, "E %s\n", err.msg);
      fclose (out);
      _exit (1);
    }
  fclose (out);
  _exit (0);
}

/* ---- the parent: compare --------------------------------------------------------------- */

struct live_wall
{
  struct ab_strv chains; /* "name|head" */
  struct ab_strv rules;  /* "chain|sig" */
  char *error;
};

static int
read_wall (pid_t pid, struct live_wall *w)
{
  char path[64], line[8192];
  _cleanup_close_ int nsfd = -1;
  int p[2];
  pid_t c;
  FILE *in;
  int st;

  snprintf (path, sizeof path, "/proc/%d/ns/net", (int)pid);
  nsfd = open (path, O_RDONLY | O_CLOEXEC);
  if (nsfd < 0 || pipe2 (p, O_CLOEXEC) < 0)
    return -1;
  c = fork ();
  if (c < 0)
    {
      close (p[0]);
      close (p[1]);
      return -1;
    }
  if (c == 0)
    {
      close (p[0]);
      child (nsfd, p[1]);
    }
  close (p[1]);
  in = fdopen (p[0], "r");
  while (in && fgets (line, sizeof line, in))
    {
      line[strcspn (line, "\n")] = '\0';
      if (line[0] == 'C')
        ab_strv_push (&w->chains, line + 2);
      else if (line[0] == 'R')
        ab_strv_push (&w->rules, line + 2);
      else if (line[0] == 'E' && w->error == NULL)
        w->error = xstrdup (line + 2);
    }
  if (in)
    fclose (in);
  else
    close (p[0]);
  while (waitpid (c, &st, 0) < 0 && errno == EINTR)
    ;
  return WIFEXITED (st) && WEXITSTATUS (st) <= 1 ? 0 : -1;
}

/* The live rules of one chain, in order. */
static size_t
chain_rules (const struct live_wall *w, const char *chain, const char **out, size_t max)
{
  size_t n = 0, cl = strlen (chain);

  for (size_t i = 0; i < w->rules.n && n < max; i++)
    if (strncmp (w->rules.v[i], chain, cl) == 0 && w->rules.v[i][cl] == '|')
      out[n++] = w->rules.v[i] + cl + 1;
  return n;
}

static const char *
live_head (const struct live_wall *w, const char *chain)
{
  size_t cl = strlen (chain);

  for (size_t i = 0; i < w->chains.n; i++)
    if (strncmp (w->chains.v[i], chain, cl) == 0 && w->chains.v[i][cl] == '|')
      return w->chains.v[i] + cl + 1;
  return NULL;
}

static void
differs (struct ab_live *lv, const char *what, const char *detail)
{
  /* The proxy's redirected ports come from the config's allow-domains; an
     --egress-policy baseline given at create can narrow them, and the
     audit does not know it. */
  const char *hint
      = strstr (what, "nat_output") ? " (an --egress-policy baseline may have narrowed the ports)" : "";

  ab_audit_add (lv->a, AB_AUDIT_S_LIVE, what, "annotations." AB_ANNOT_NET_ALLOW, AB_AUDIT_L_WEAK, "%s%s",
                detail, hint);
  ab_audit_find (lv->a, "AB-LIVE-010", "annotations." AB_ANNOT_NET_ALLOW, "%s: %s%s", what, detail, hint);
}

static void
compare_chain (struct ab_live *lv, const struct live_wall *w, const struct ab_nft_ruleset *rs,
               const struct ab_nft_chain *ch)
{
  _cleanup_free_ char *want = chain_head (ch->type, (uint32_t)ch->hook, ch->prio, (uint32_t)ch->policy);
  const char *have = live_head (w, ch->name);
  const char *live[256];
  size_t n = chain_rules (w, ch->name, live, AB_ARRAY_SIZE (live));
  char what[64];

  snprintf (what, sizeof what, "nft chain %s", ch->name);
  if (have == NULL)
    {
      differs (lv, what, "missing from the kernel");
      return;
    }
  if (strcmp (have, want) != 0)
    {
      _cleanup_free_ char *d = xasprintf ("%s, agentbox installs %s", have, want);
      differs (lv, what, d);
      return;
    }
  for (size_t r = 0; r < ch->n_rules || r < n; r++)
    {
      struct nftnl_rule *exp = r < ch->n_rules ? ab_nft_rule_nftnl (rs, ch, &ch->rules[r]) : NULL;
      _cleanup_free_ char *sig = exp ? rule_sig (exp) : NULL;
      _cleanup_free_ char *text = r < ch->n_rules ? ab_nft_rule_text (&ch->rules[r]) : NULL;
      if (exp)
        nftnl_rule_free (exp);
      if (r < n && sig && strcmp (sig, live[r]) == 0)
        continue;
      {
        _cleanup_free_ char *d
            = r >= n        ? xasprintf ("rule %zu (%s) is missing", r, text)
              : sig == NULL ? xasprintf ("rule %zu is not agentbox's (%zu rules, agentbox installs %zu)", r,
                                         n, ch->n_rules)
                            : xasprintf ("rule %zu is not \"%s\"", r, text);
        differs (lv, what, d);
        return;
      }
    }
  ab_audit_add (lv->a, AB_AUDIT_S_LIVE, what, "annotations." AB_ANNOT_NET_ALLOW, 0,
                "%s, %zu rules, as installed", have, n);
}

void
ab_live_nft (struct ab_live *lv)
{
  struct live_wall w = { 0 };
  struct ab_netns_proxy proxy;
  uint16_t ports[64];
  _cleanup_nft_ruleset_ struct ab_nft_ruleset *rs = NULL;

  if (!lv->a->f.wall || lv->a->f.net_error)
    return;
  if (read_wall (lv->pid, &w) < 0)
    {
      ab_audit_add (lv->a, AB_AUDIT_S_LIVE, "nft", NULL, 0, "cannot read the container's nftables ruleset");
      goto out;
    }
  if (w.error || w.chains.n == 0)
    {
      differs (lv, "nft table inet " AB_NFT_TABLE,
               w.error ? w.error : "missing from the container's namespace");
      goto out;
    }
  rs = ab_audit_expected_wall (&lv->a->f, ports, &proxy);
  for (size_t c = 0; c < rs->n_chains; c++)
    compare_chain (lv, &w, rs, &rs->chains[c]);
  for (size_t i = 0; i < w.chains.n; i++)
    {
      bool known = false;
      for (size_t c = 0; c < rs->n_chains && !known; c++)
        known = ab_str_has_prefix (w.chains.v[i], rs->chains[c].name)
                && w.chains.v[i][strlen (rs->chains[c].name)] == '|';
      if (!known)
        differs (lv, "nft chains", w.chains.v[i]);
    }
out:
  ab_strv_free (&w.chains);
  ab_strv_free (&w.rules);
  free (w.error);
}
