/* The HTTP/CONNECT proxy and the transparent capture, one connection at a
 * time: read the head (request or ClientHello), decide on the name, connect
 * from the host netns to a pinned and checked address, then hand the
 * connection to the relay (egress-relay.c).  The invariant every path
 * keeps: bytes from the container only ever reach an address that is
 * pinned for a name the policy allows (or a literal it lists), and that is
 * not private, local or metadata.
 *
 * Per connection the work is kept to what the decision needs: the head is
 * read as soon as the connection is accepted (it has usually arrived), the
 * upstream connect is checked for completion at once (over a veth it has
 * usually completed), what is read is written in the same turn, and the
 * host-local probe of an address is reused for a second (AB_EGRESS_PROBE_MS). */
#include "config.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "netns/egress-internal.h"

/* From <linux/netfilter_ipv4.h> and <linux/netfilter_ipv6/ip6_tables.h>,
   which clash with <netinet/in.h>. */
#ifndef SO_ORIGINAL_DST
#define SO_ORIGINAL_DST 80
#endif
#ifndef IP6T_SO_ORIGINAL_DST
#define IP6T_SO_ORIGINAL_DST 80
#endif

static void
conn_free (struct ab_egress *e, struct ab_egress_conn *c)
{
  if (c->prev)
    c->prev->next = c->next;
  else
    e->conns = c->next;
  if (c->next)
    c->next->prev = c->prev;
  e->n_conns--;
  ab_egress_buf_free (&c->head);
  ab_egress_buf_free (&c->c2u);
  ab_egress_buf_free (&c->u2c);
  ab_egress_relay_release (e, c);
  free (c->rewritten);
  free (c);
}

/* ---- upstream --------------------------------------------------------- */

/* The SSRF check, plus one the range table cannot know: an address that is
   configured on the host itself (its public IP reaches host services).  A
   UDP socket "connected" there shows it: the route to a local address is in
   the local table, whose preferred source is that address.  (A bind() probe
   would lie under net.ipv4.ip_nonlocal_bind.)  The loop thread is in the
   host netns, so this asks the host's routing. */
static const char *
candidate_refusal (const struct ab_egress_addr *a)
{
  const char *r = ab_egress_addr_refusal (a->family, a->addr);
  struct sockaddr_storage ss, local;
  socklen_t sl, ll = sizeof local;
  struct ab_egress_addr la;
  uint16_t lport;
  _cleanup_close_ int fd = -1;

  if (r != NULL)
    return r;
  fd = socket (a->family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return NULL;
  ab_egress_addr_to_sockaddr (a, 9, &ss, &sl);
  if (connect (fd, (struct sockaddr *)&ss, sl) < 0 || getsockname (fd, (struct sockaddr *)&local, &ll) < 0
      || ab_egress_addr_from_sockaddr ((struct sockaddr *)&local, &la, &lport) < 0)
    return NULL; /* no route: the TCP connect will fail on its own */
  return ab_egress_addr_equal (&la, a) ? "ssrf:host-local" : NULL;
}

/* candidate_refusal of a resolved name's i-th address, taken again once the
   verdicts are AB_EGRESS_PROBE_MS old.  A resolved name's addresses never
   change (pinned), so the verdicts stay theirs; the host's own addresses
   may, which is why they age at all. */
static const char *
name_refusal (struct ab_egress_name *n, size_t i, uint64_t now)
{
  if (n->verdict_ms == 0 || now - n->verdict_ms >= AB_EGRESS_PROBE_MS)
    {
      for (size_t k = 0; k < n->n_addrs; k++)
        n->verdict[k] = candidate_refusal (&n->addrs[k]);
      n->verdict_ms = now ? now : 1;
    }
  return n->verdict[i];
}

static void
conn_connected (struct ab_egress *e, struct ab_egress_conn *c)
{
  static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";

  c->last_io = ab_egress_now_ms ();
  if (c->proto == AB_EGRESS_P_CONNECT)
    {
      ab_egress_buf_append (&c->u2c, ok, sizeof ok - 1);
      c->state = AB_CS_INSPECT;
      c->deadline = 0;
      /* Bytes the client pipelined after the CONNECT head are the first
         bytes of the tunnel: inspect them like later ones. */
      memmove (c->head.d, c->head.d + c->forward_from, c->head.len - c->forward_from);
      c->head.len -= c->forward_from;
      c->forward_from = 0;
      if (c->head.len > 0)
        ab_egress_relay_tunnel (e, c);
      if (!c->dead && c->state == AB_CS_INSPECT)
        ab_egress_relay_kick (e, c);
      return;
    }
  /* The decided head (rewritten, or as the client sent it), then what
     follows it, framed by the relay. */
  ab_egress_relay_start (e, c, c->rewritten ? c->rewritten : (const char *)c->head.d,
                         c->rewritten ? c->rewritten_len : c->forward_from, c->forward_from);
}

static void
conn_connect_next (struct ab_egress *e, struct ab_egress_conn *c)
{
  static const int one = 1;

  while (c->i_cand < c->n_cand)
    {
      struct ab_egress_addr *a = &c->cand[c->i_cand++];
      struct sockaddr_storage ss;
      socklen_t sl;
      int fd;

      if (c->uep.fd >= 0)
        {
          ab_egress_ep_remove (e, &c->uep);
          close (c->uep.fd);
          c->uep.fd = -1;
        }
      /* Created by the loop thread, which never left the host netns. */
      fd = socket (a->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (fd < 0)
        continue;
      /* The relay writes what it got as it gets it: without NODELAY the
         tail of a request body waits for the ACK of its head, which a
         server delays while it waits for the body. */
      (void)setsockopt (fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      ab_egress_addr_to_sockaddr (a, c->port, &ss, &sl);
      c->uep = (struct ab_egress_ep){ .kind = AB_EP_UPSTREAM, .fd = fd, .owner = c };
      /* Over a veth the handshake usually completes inside connect(): a
         second connect() says so (0) without an epoll round (EALREADY). */
      if (connect (fd, (struct sockaddr *)&ss, sl) == 0
          || (errno == EINPROGRESS && connect (fd, (struct sockaddr *)&ss, sl) == 0))
        {
          conn_connected (e, c);
          return;
        }
      if (errno == EINPROGRESS || errno == EALREADY)
        {
          c->state = AB_CS_CONNECTING;
          c->deadline = ab_egress_now_ms () + e->opt.connect_timeout_ms;
          ab_egress_conn_update (e, c);
          return;
        }
    }
  ab_egress_conn_refuse (e, c, 502, NULL, NULL);
}

/* The name's addresses are known: pick the candidates and connect. */
static void
conn_have_addrs (struct ab_egress *e, struct ab_egress_conn *c, struct ab_egress_name *n, const char *rule)
{
  const char *refusal = NULL;
  const struct ab_egress_addr *first = NULL;
  uint64_t now = ab_egress_now_ms ();
  size_t i;

  c->n_cand = c->i_cand = 0;
  if (c->transparent)
    {
      /* The client connected to an address of its own choosing: it must be
         one the name is pinned to, or an allowed SNI would carry the bytes
         to any host. */
      for (i = 0; i < n->n_addrs && !ab_egress_addr_equal (&n->addrs[i], &c->odst); i++)
        ;
      if (i == n->n_addrs)
        {
          ab_egress_conn_refuse (e, c, 403, "not-pinned", &c->odst);
          return;
        }
      refusal = name_refusal (n, i, now);
      if (refusal != NULL)
        {
          ab_egress_conn_refuse (e, c, 403, refusal, &c->odst);
          return;
        }
      c->cand[c->n_cand++] = c->odst;
    }
  else
    for (i = 0; i < n->n_addrs; i++)
      {
        const char *r = name_refusal (n, i, now);
        if (r == NULL)
          c->cand[c->n_cand++] = n->addrs[i];
        else if (refusal == NULL)
          refusal = r, first = &n->addrs[i];
      }
  if (c->n_cand == 0)
    {
      ab_egress_conn_refuse (e, c, 403, refusal, first);
      return;
    }
  ab_egress_record_add (&e->record, c->proto, c->protocol, c->name, &c->cand[0], c->port, true, rule);
  conn_connect_next (e, c);
}

void
ab_egress_proxy_resolved (struct ab_egress *e, struct ab_egress_conn *c, struct ab_egress_name *n)
{
  char rule[AB_EGRESS_NAME_MAX + 16];

  if (c->dead || c->state != AB_CS_RESOLVING)
    return;
  c->state = AB_CS_HEAD; /* no longer a waiter */
  if (n->state != AB_NAME_RESOLVED)
    {
      ab_egress_conn_refuse (e, c, 502, n->refusal ? n->refusal : "resolve-failed", NULL);
      return;
    }
  ab_egress_policy_decide (&e->policy, c->name, c->port, rule, sizeof rule);
  conn_have_addrs (e, c, n, rule);
}

/* Decide on (c->name, c->port) and go on to resolution. */
static void
conn_decide (struct ab_egress *e, struct ab_egress_conn *c)
{
  char rule[AB_EGRESS_NAME_MAX + 16];
  struct ab_egress_name *n, lit;

  c->literal = c->name[0] == '[' || ab_egress_ip_parse (c->name, strlen (c->name), &lit.addrs[0]) == 0;
  if (!ab_egress_policy_decide (&e->policy, c->name, c->port, rule, sizeof rule))
    {
      ab_egress_conn_refuse (e, c, 403, rule, c->transparent ? &c->odst : NULL);
      return;
    }
  if (c->literal)
    {
      /* Only a literal the policy lists gets here: its address is the one
         the admin or the run named, not one the client picked. */
      memset (&lit, 0, sizeof lit);
      lit.state = AB_NAME_RESOLVED;
      ab_egress_ip_parse (c->name, strlen (c->name), &lit.addrs[0]);
      lit.n_addrs = 1;
      if (c->transparent && !ab_egress_addr_equal (&lit.addrs[0], &c->odst))
        {
          ab_egress_conn_refuse (e, c, 403, "not-pinned", &c->odst);
          return;
        }
      conn_have_addrs (e, c, &lit, rule);
      return;
    }
  c->state = AB_CS_RESOLVING;
  c->deadline = ab_egress_now_ms () + e->opt.connect_timeout_ms;
  n = ab_egress_name_lookup (e, c->name, AB_WAIT_CONN, c);
  if (n == NULL)
    {
      ab_egress_conn_update (e, c);
      return;
    }
  c->state = AB_CS_HEAD;
  if (n->state != AB_NAME_RESOLVED)
    {
      ab_egress_conn_refuse (e, c, 502, n->refusal ? n->refusal : "resolve-failed", NULL);
      return;
    }
  conn_have_addrs (e, c, n, rule);
}

/* ---- events ----------------------------------------------------------- */

/* The first bytes of a connection not decided yet. */
static void
head_readable (struct ab_egress *e, struct ab_egress_conn *c)
{
  size_t bound = c->transparent ? HEAD_MAX : AB_HTTP_MAX_HEAD;
  ssize_t r = ab_egress_buf_read (&c->head, c->cep.fd, bound);

  if (r == -1 && c->head.len < bound)
    {
      ab_egress_conn_update (e, c);
      return;
    }
  if (r == 0 || r == -2)
    {
      ab_egress_conn_close (e, c);
      return;
    }
  {
    struct ab_egress_head_verdict v = { 0 };
    int next = c->transparent ? ab_egress_head_transparent (c, &v) : ab_egress_head_explicit (c, &v);
    if (next == AB_HEAD_REFUSE)
      ab_egress_conn_refuse (e, c, v.status, v.rule, v.addr);
    else if (next == AB_HEAD_DECIDE)
      {
        if (v.frame)
          ab_egress_relay_request (c, &v.h, v.keep);
        conn_decide (e, c);
      }
    else
      ab_egress_conn_update (e, c);
  }
}

/* A refusal on its way out: send it, drop what the client still sends,
   shut down our side once it is out. */
static void
closing_event (struct ab_egress *e, struct ab_egress_conn *c, uint32_t events)
{
  struct ab_egress_buf *b = &c->u2c;
  uint8_t sink[4096];
  ssize_t r;

  while ((events & EPOLLOUT) && ab_egress_buf_pending (b) > 0)
    {
      r = send (c->cep.fd, b->d + b->off, b->len - b->off, MSG_NOSIGNAL);
      if (r < 0 && errno != EAGAIN && errno != EINTR)
        {
          ab_egress_conn_close (e, c);
          return;
        }
      if (r < 0)
        break;
      b->off += (size_t)r;
    }
  if (events & EPOLLIN)
    {
      r = recv (c->cep.fd, sink, sizeof sink, 0);
      if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
        {
          ab_egress_conn_close (e, c);
          return;
        }
    }
  if (ab_egress_buf_pending (b) == 0 && !c->c_wshut)
    {
      shutdown (c->cep.fd, SHUT_WR);
      c->c_wshut = true;
    }
  ab_egress_conn_update (e, c);
}

void
ab_egress_proxy_event (struct ab_egress *e, struct ab_egress_ep *ep, uint32_t events)
{
  struct ab_egress_conn *c = ep->owner;
  bool client = ep == &c->cep;

  if (c->dead)
    return;
  if (!client && c->state == AB_CS_CONNECTING)
    {
      int soerr = 0;
      socklen_t sl = sizeof soerr;
      if (getsockopt (c->uep.fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 || soerr != 0)
        {
          conn_connect_next (e, c);
          return;
        }
      conn_connected (e, c);
      return;
    }
  if (c->state == AB_CS_INSPECT || c->state == AB_CS_RELAY)
    {
      ab_egress_relay_event (e, c, client, events);
      return;
    }
  if ((events & (EPOLLERR | EPOLLHUP)) || !client)
    {
      ab_egress_conn_close (e, c);
      return;
    }
  if (c->state == AB_CS_CLOSING)
    closing_event (e, c, events);
  else if (c->state == AB_CS_HEAD && (events & EPOLLIN))
    head_readable (e, c);
}

/* An original destination differing from the listener's own address means
   the nftables redirect brought the connection here.  (The listener's
   address is known: no getsockname per connection.) */
static bool
original_dst (struct ab_egress *e, int fd, const struct ab_egress_ep *listener, struct ab_egress_addr *a,
              uint16_t *port)
{
  struct ab_egress_addr la = { .family = listener == &e->listen_http6 ? AF_INET6 : AF_INET };
  struct sockaddr_storage ss;
  socklen_t sl = sizeof ss;
  int r;

  memset (&ss, 0, sizeof ss);
  if (la.family == AF_INET)
    {
      la.addr[0] = 127, la.addr[3] = 1;
      r = getsockopt (fd, SOL_IP, SO_ORIGINAL_DST, &ss, &sl);
    }
  else
    {
      la.addr[15] = 1;
      r = getsockopt (fd, SOL_IPV6, IP6T_SO_ORIGINAL_DST, &ss, &sl);
    }
  if (r < 0 || ab_egress_addr_from_sockaddr ((struct sockaddr *)&ss, a, port) < 0)
    return false; /* no conntrack entry: nothing was redirected */
  return !(ab_egress_addr_equal (a, &la) && *port == e->http_port);
}

void
ab_egress_proxy_accept (struct ab_egress *e, struct ab_egress_ep *listener)
{
  for (int budget = 0; budget < 64; budget++)
    {
      int fd = accept4 (listener->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
      struct ab_egress_conn *c;
      uint64_t now;

      if (fd < 0)
        {
          ab_egress_accept_failed (e, errno);
          return;
        }
      if (e->n_conns >= e->opt.max_connections)
        {
          close (fd); /* the client sees a reset: refused, never queued without bound */
          continue;
        }
      now = ab_egress_now_ms ();
      c = xzalloc (sizeof *c);
      c->cep = (struct ab_egress_ep){ .kind = AB_EP_CLIENT, .fd = fd, .owner = c };
      c->uep = (struct ab_egress_ep){ .kind = AB_EP_UPSTREAM, .fd = -1, .owner = c };
      c->c2u_pipe = c->u2c_pipe = (struct ab_egress_pipe){ .rd = -1, .wr = -1 };
      c->transparent = original_dst (e, fd, listener, &c->odst, &c->oport);
      c->state = AB_CS_HEAD;
      c->deadline = now + e->opt.head_timeout_ms;
      c->last_io = now;
      ab_egress_conn_set_protocol (c, c->transparent ? AB_EGRESS_P_HTTP_HOST : AB_EGRESS_P_HTTP, "http");
      c->next = e->conns;
      if (e->conns)
        e->conns->prev = c;
      e->conns = c;
      e->n_conns++;
      /* The head has usually arrived with the handshake's last ACK: read it
         now rather than after an epoll round. */
      head_readable (e, c);
    }
}

void
ab_egress_proxy_sweep (struct ab_egress *e, uint64_t now, bool all)
{
  struct ab_egress_conn *c, *next;

  for (c = e->conns; c; c = next)
    {
      next = c->next;
      if (!c->dead && all)
        ab_egress_conn_close (e, c);
      if (!c->dead)
        {
          bool half = c->c_eof || c->u_eof;
          uint64_t idle
              = half ? (e->opt.idle_timeout_ms < HALF_OPEN_MS ? e->opt.idle_timeout_ms : HALF_OPEN_MS)
                     : e->opt.idle_timeout_ms;
          switch (c->state)
            {
            case AB_CS_HEAD:
              if (now >= c->deadline)
                ab_egress_conn_refuse (e, c, 408, NULL, NULL);
              break;
            case AB_CS_RESOLVING:
            case AB_CS_CONNECTING:
              if (now < c->deadline)
                break;
              if (c->state == AB_CS_CONNECTING && c->i_cand < c->n_cand)
                conn_connect_next (e, c);
              else
                ab_egress_conn_refuse (e, c, 504, NULL, NULL);
              break;
            case AB_CS_INSPECT:
            case AB_CS_RELAY:
              ab_egress_relay_sweep (e, c, now, idle);
              break;
            case AB_CS_CLOSING:
              if (now >= c->deadline)
                ab_egress_conn_close (e, c);
              break;
            }
        }
      if (c->dead)
        conn_free (e, c);
    }
}
