/* The HTTP/CONNECT proxy and the transparent capture, one connection at a
 * time: read the head (request or ClientHello), decide on the name, connect
 * from the host netns to a pinned and checked address, relay with bounded
 * buffers.  The invariant every path keeps: bytes from the container only
 * ever reach an address that is pinned for a name the policy allows (or a
 * literal it lists), and that is not private, local or metadata. */
#include "config.h"

#include <netinet/in.h>
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

/* Read from fd into b while it has room below max.  Returns bytes read, 0 on
   EOF, -1 on EAGAIN, -2 on error. */
static ssize_t
buf_read (struct ab_egress_buf *b, int fd, size_t max)
{
  uint8_t tmp[16384];
  size_t room;
  ssize_t r;

  /* Slide the unsent bytes to the front when the tail is short: interest
     is computed from the pending bytes, so a buffer that has room must
     really take a read (or level-triggered epoll spins). */
  if (b->off > 0 && (b->off == b->len || b->len + sizeof tmp > max))
    {
      memmove (b->d, b->d + b->off, b->len - b->off);
      b->len -= b->off;
      b->off = 0;
    }
  room = max > b->len ? max - b->len : 0;
  if (room == 0)
    return -1;
  r = recv (fd, tmp, room < sizeof tmp ? room : sizeof tmp, 0);
  if (r < 0)
    return errno == EAGAIN || errno == EINTR ? -1 : -2;
  if (r > 0)
    ab_egress_buf_append (b, tmp, (size_t)r);
  return r;
}

static ssize_t
buf_write (struct ab_egress_buf *b, int fd)
{
  ssize_t w = send (fd, b->d + b->off, b->len - b->off, MSG_NOSIGNAL);

  if (w < 0)
    return errno == EAGAIN || errno == EINTR ? 0 : -1;
  b->off += (size_t)w;
  return w;
}

/* ---- life ------------------------------------------------------------- */

static void
conn_close (struct ab_egress *e, struct ab_egress_conn *c)
{
  if (c->dead)
    return;
  c->dead = true;
  e->reap_pending = true;
  if (c->state == AB_CS_RESOLVING)
    ab_egress_name_cancel (e, c);
  if (c->cep.fd >= 0)
    {
      ab_egress_ep_remove (e, &c->cep);
      close (c->cep.fd);
      c->cep.fd = -1;
    }
  if (c->uep.fd >= 0)
    {
      ab_egress_ep_remove (e, &c->uep);
      close (c->uep.fd);
      c->uep.fd = -1;
    }
}

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
  free (c->rewritten);
  free (c);
}

/* Recompute both sockets' epoll interest from the state and the buffers
   (level-triggered: a side is read only while its buffer has room, which
   is the backpressure). */
static void
conn_update (struct ab_egress *e, struct ab_egress_conn *c)
{
  uint32_t cev = 0, uev = 0;

  if (c->dead)
    return;
  switch (c->state)
    {
    case AB_CS_HEAD:
      cev = EPOLLIN;
      break;
    case AB_CS_RESOLVING:
      break;
    case AB_CS_CONNECTING:
      uev = EPOLLOUT;
      break;
    case AB_CS_INSPECT:
      cev = EPOLLIN;
      if (!c->u_eof && ab_egress_buf_pending (&c->u2c) < RELAY_BUF)
        uev |= EPOLLIN;
      break;
    case AB_CS_RELAY:
      if (!c->c_eof && ab_egress_buf_pending (&c->c2u) < RELAY_BUF)
        cev |= EPOLLIN;
      if (!c->u_eof && ab_egress_buf_pending (&c->u2c) < RELAY_BUF)
        uev |= EPOLLIN;
      if (ab_egress_buf_pending (&c->c2u) > 0)
        uev |= EPOLLOUT;
      break;
    case AB_CS_CLOSING:
      cev = ab_egress_buf_pending (&c->u2c) > 0 ? 0 : EPOLLIN;
      break;
    }
  if (ab_egress_buf_pending (&c->u2c) > 0 && !c->c_wshut)
    cev |= EPOLLOUT;
  if ((c->cep.fd >= 0 && ab_egress_ep_update (e, &c->cep, cev) < 0)
      || (c->uep.fd >= 0 && ab_egress_ep_update (e, &c->uep, uev) < 0))
    conn_close (e, c);
}

/* Refuse: record the decision (when rule is set), send what the client can
   understand (HTTP status, TLS alert, or nothing inside a tunnel), and close
   once it is flushed. */
static void
conn_refuse (struct ab_egress *e, struct ab_egress_conn *c, int status, const char *rule,
                       const struct ab_egress_addr *addr)
{
  static const uint8_t tls_alert[] = { 0x15, 0x03, 0x01, 0x00, 0x02, 0x02, 0x31 }; /* fatal access_denied */
  const char *reason = status == 403   ? "Forbidden"
                       : status == 400 ? "Bad Request"
                       : status == 408 ? "Request Timeout"
                       : status == 431 ? "Request Header Fields Too Large"
                       : status == 502 ? "Bad Gateway"
                       : status == 503 ? "Service Unavailable"
                                       : "Gateway Timeout";
  char body[AB_EGRESS_NAME_MAX + 128], msg[AB_EGRESS_NAME_MAX + 512];
  int bl, ml;

  if (rule != NULL)
    ab_egress_record_add (&e->record, c->proto, c->protocol, c->name, addr, c->port, false, rule);
  if (c->state == AB_CS_RESOLVING)
    ab_egress_name_cancel (e, c);
  if (c->uep.fd >= 0)
    {
      ab_egress_ep_remove (e, &c->uep);
      close (c->uep.fd);
      c->uep.fd = -1;
    }
  ab_egress_buf_free (&c->u2c);
  if (c->tls)
    ab_egress_buf_append (&c->u2c, tls_alert, sizeof tls_alert);
  else if (c->state == AB_CS_INSPECT)
    ; /* inside a tunnel that is not TLS: just close */
  else
    {
      bl = snprintf (body, sizeof body, "agentbox egress: %s %s\n", rule ? rule : reason, c->name);
      ml = snprintf (
          msg, sizeof msg,
          "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n"
          "X-Agentbox-Egress: %s\r\n\r\n%s",
          status, reason, bl, rule ? rule : reason, body);
      ab_egress_buf_append (&c->u2c, msg, (size_t)ml);
    }
  c->state = AB_CS_CLOSING;
  c->deadline = ab_egress_now_ms () + CLOSE_LINGER_MS;
  conn_update (e, c);
}

/* ---- upstream --------------------------------------------------------- */

static void conn_connect_next (struct ab_egress *e, struct ab_egress_conn *c);

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
      conn_update (e, c);
      return;
    }
  if (c->rewritten)
    ab_egress_buf_append (&c->c2u, c->rewritten, c->rewritten_len);
  ab_egress_buf_append (&c->c2u, c->head.d + c->forward_from, c->head.len - c->forward_from);
  ab_egress_buf_free (&c->head);
  c->state = AB_CS_RELAY;
  conn_update (e, c);
}

static void
conn_connect_next (struct ab_egress *e, struct ab_egress_conn *c)
{
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
      ab_egress_addr_to_sockaddr (a, c->port, &ss, &sl);
      c->uep.fd = fd;
      c->uep.events = 0;
      if (connect (fd, (struct sockaddr *)&ss, sl) == 0)
        {
          conn_connected (e, c);
          return;
        }
      if (errno == EINPROGRESS)
        {
          c->state = AB_CS_CONNECTING;
          c->deadline = ab_egress_now_ms () + e->opt.connect_timeout_ms;
          conn_update (e, c);
          return;
        }
    }
  conn_refuse (e, c, 502, NULL, NULL);
}

/* The name's addresses are known: pick the candidates and connect. */
static void
conn_have_addrs (struct ab_egress *e, struct ab_egress_conn *c, const struct ab_egress_name *n,
                 const char *rule)
{
  const char *refusal = NULL;
  const struct ab_egress_addr *first = NULL;

  c->n_cand = c->i_cand = 0;
  if (c->transparent)
    {
      /* The client connected to an address of its own choosing: it must be
         one the name is pinned to, or an allowed SNI would carry the bytes
         to any host. */
      if (!c->literal && !ab_egress_name_has_addr (n, &c->odst))
        {
          conn_refuse (e, c, 403, "not-pinned", &c->odst);
          return;
        }
      refusal = candidate_refusal (&c->odst);
      if (refusal != NULL)
        {
          conn_refuse (e, c, 403, refusal, &c->odst);
          return;
        }
      c->cand[c->n_cand++] = c->odst;
    }
  else
    for (size_t i = 0; i < n->n_addrs; i++)
      {
        const char *r = candidate_refusal (&n->addrs[i]);
        if (r == NULL)
          c->cand[c->n_cand++] = n->addrs[i];
        else if (refusal == NULL)
          refusal = r, first = &n->addrs[i];
      }
  if (c->n_cand == 0)
    {
      conn_refuse (e, c, 403, refusal, first);
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
      conn_refuse (e, c, 502, n->refusal ? n->refusal : "resolve-failed", NULL);
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
      conn_refuse (e, c, 403, rule, c->transparent ? &c->odst : NULL);
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
          conn_refuse (e, c, 403, "not-pinned", &c->odst);
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
      conn_update (e, c);
      return;
    }
  c->state = AB_CS_HEAD;
  if (n->state != AB_NAME_RESOLVED)
    {
      conn_refuse (e, c, 502, n->refusal ? n->refusal : "resolve-failed", NULL);
      return;
    }
  conn_have_addrs (e, c, n, rule);
}

/* ---- events ----------------------------------------------------------- */

static void
client_readable (struct ab_egress *e, struct ab_egress_conn *c)
{
  ssize_t r;

  switch (c->state)
    {
    case AB_CS_HEAD:
    case AB_CS_INSPECT:
      r = buf_read (&c->head, c->cep.fd,
                    c->transparent || c->state == AB_CS_INSPECT ? HEAD_MAX : AB_HTTP_MAX_HEAD);
      if (r == -1 && c->head.len < (c->state == AB_CS_HEAD && !c->transparent ? AB_HTTP_MAX_HEAD : HEAD_MAX))
        return;
      if (r == 0 || r == -2)
        {
          conn_close (e, c);
          return;
        }
      {
        struct ab_egress_head_refusal v = { 0 };
        int next = c->state == AB_CS_INSPECT ? ab_egress_head_tunnel (e, c, &v)
                   : c->transparent          ? ab_egress_head_transparent (c, &v)
                                             : ab_egress_head_explicit (c, &v);
        if (next == AB_HEAD_REFUSE)
          conn_refuse (e, c, v.status, v.rule, v.addr);
        else if (next == AB_HEAD_DECIDE)
          conn_decide (e, c);
        else
          conn_update (e, c);
      }
      return;
    case AB_CS_RELAY:
      r = buf_read (&c->c2u, c->cep.fd, RELAY_BUF);
      if (r == 0)
        c->c_eof = true;
      else if (r == -2)
        {
          conn_close (e, c);
          return;
        }
      c->last_io = ab_egress_now_ms ();
      break;
    case AB_CS_CLOSING:
      {
        uint8_t sink[4096];
        r = recv (c->cep.fd, sink, sizeof sink, 0);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
          {
            conn_close (e, c);
            return;
          }
      }
      break;
    }
}

/* Move data along and propagate half-closes; close when both ways are done. */
static void
conn_pump (struct ab_egress *e, struct ab_egress_conn *c)
{
  if (c->dead)
    return;
  if (c->state == AB_CS_CLOSING)
    {
      if (ab_egress_buf_pending (&c->u2c) == 0 && !c->c_wshut)
        {
          shutdown (c->cep.fd, SHUT_WR);
          c->c_wshut = true;
        }
      conn_update (e, c);
      return;
    }
  if (c->state != AB_CS_RELAY && c->state != AB_CS_INSPECT)
    {
      conn_update (e, c);
      return;
    }
  if (c->c_eof && ab_egress_buf_pending (&c->c2u) == 0 && !c->u_wshut)
    {
      shutdown (c->uep.fd, SHUT_WR);
      c->u_wshut = true;
    }
  if (c->u_eof && ab_egress_buf_pending (&c->u2c) == 0 && !c->c_wshut)
    {
      shutdown (c->cep.fd, SHUT_WR);
      c->c_wshut = true;
    }
  if (c->c_wshut && c->u_wshut)
    {
      conn_close (e, c);
      return;
    }
  if (c->state == AB_CS_INSPECT && c->u_wshut == false && c->u_eof && ab_egress_buf_pending (&c->u2c) == 0)
    {
      conn_close (e, c);
      return;
    }
  conn_update (e, c);
}

/* A socket that hung up (both directions over, or reset) stays readable
   for epoll forever: take what it still holds, stop watching it, and finish
   the other direction. */
static void
side_hup (struct ab_egress *e, struct ab_egress_conn *c, bool client)
{
  struct ab_egress_ep *ep = client ? &c->cep : &c->uep;
  struct ab_egress_buf *in = client ? &c->c2u : &c->u2c, *out = client ? &c->u2c : &c->c2u;

  while (buf_read (in, ep->fd, SIZE_MAX) > 0)
    ;
  ab_egress_ep_remove (e, ep);
  ab_egress_buf_free (out); /* nobody left to deliver it to */
  if (client)
    c->c_eof = c->c_wshut = true;
  else
    c->u_eof = c->u_wshut = true;
}

void
ab_egress_proxy_event (struct ab_egress *e, struct ab_egress_ep *ep, uint32_t events)
{
  struct ab_egress_conn *c = ep->owner;
  bool client = ep == &c->cep;
  bool relaying = c->state == AB_CS_RELAY || c->state == AB_CS_INSPECT;

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
  if (events & EPOLLERR)
    {
      conn_close (e, c);
      return;
    }
  if ((events & EPOLLHUP) && !(relaying && (client ? c->state == AB_CS_RELAY : true)))
    {
      conn_close (e, c);
      return;
    }
  if (events & EPOLLHUP)
    {
      side_hup (e, c, client);
      conn_pump (e, c);
      return;
    }
  if (client)
    {
      if ((events & EPOLLOUT) && ab_egress_buf_pending (&c->u2c) > 0 && buf_write (&c->u2c, c->cep.fd) < 0)
        {
          conn_close (e, c);
          return;
        }
      if (events & EPOLLIN)
        client_readable (e, c);
    }
  else
    {
      if ((events & EPOLLOUT) && ab_egress_buf_pending (&c->c2u) > 0 && buf_write (&c->c2u, c->uep.fd) < 0)
        {
          conn_close (e, c);
          return;
        }
      if ((events & EPOLLIN) && !c->u_eof)
        {
          ssize_t r = buf_read (&c->u2c, c->uep.fd, RELAY_BUF);
          if (r == 0)
            c->u_eof = true;
          else if (r == -2)
            {
              conn_close (e, c);
              return;
            }
          c->last_io = ab_egress_now_ms ();
        }
    }
  conn_pump (e, c);
}

/* An original destination differing from the listener's own address means
   the nftables redirect brought the connection here. */
static bool
original_dst (int fd, const struct ab_egress_ep *listener, struct ab_egress_addr *a, uint16_t *port)
{
  struct sockaddr_storage ss, local;
  socklen_t sl = sizeof ss, ll = sizeof local;
  struct ab_egress_addr la;
  uint16_t lport;
  int r;

  if (listener == NULL)
    return false;
  memset (&ss, 0, sizeof ss);
  if (getsockname (fd, (struct sockaddr *)&local, &ll) < 0)
    return false;
  if (local.ss_family == AF_INET)
    r = getsockopt (fd, SOL_IP, SO_ORIGINAL_DST, &ss, &sl);
  else
    r = getsockopt (fd, SOL_IPV6, IP6T_SO_ORIGINAL_DST, &ss, &sl);
  if (r < 0 || ab_egress_addr_from_sockaddr ((struct sockaddr *)&ss, a, port) < 0)
    return false; /* no conntrack entry: nothing was redirected */
  if (ab_egress_addr_from_sockaddr ((struct sockaddr *)&local, &la, &lport) < 0)
    return false;
  return !(ab_egress_addr_equal (a, &la) && *port == lport);
}

void
ab_egress_proxy_accept (struct ab_egress *e, struct ab_egress_ep *listener)
{
  for (int budget = 0; budget < 64; budget++)
    {
      int fd = accept4 (listener->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
      struct ab_egress_conn *c;

      if (fd < 0)
        return;
      if (e->n_conns >= e->opt.max_connections)
        {
          close (fd); /* the client sees a reset: refused, never queued without bound */
          continue;
        }
      c = xzalloc (sizeof *c);
      c->cep = (struct ab_egress_ep){ .kind = AB_EP_CLIENT, .fd = fd, .owner = c };
      c->uep = (struct ab_egress_ep){ .kind = AB_EP_UPSTREAM, .fd = -1, .owner = c };
      c->transparent = original_dst (fd, listener, &c->odst, &c->oport);
      c->state = AB_CS_HEAD;
      c->deadline = ab_egress_now_ms () + e->opt.head_timeout_ms;
      c->last_io = ab_egress_now_ms ();
      ab_egress_conn_set_protocol (c, c->transparent ? AB_EGRESS_P_HTTP_HOST : AB_EGRESS_P_HTTP, "http");
      c->next = e->conns;
      if (e->conns)
        e->conns->prev = c;
      e->conns = c;
      e->n_conns++;
      conn_update (e, c);
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
        conn_close (e, c);
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
                conn_refuse (e, c, 408, NULL, NULL);
              break;
            case AB_CS_RESOLVING:
            case AB_CS_CONNECTING:
              if (now < c->deadline)
                break;
              if (c->state == AB_CS_CONNECTING && c->i_cand < c->n_cand)
                conn_connect_next (e, c);
              else
                conn_refuse (e, c, 504, NULL, NULL);
              break;
            case AB_CS_INSPECT:
              if (c->deadline != 0 && now >= c->deadline)
                conn_close (e, c);
              else if (now - c->last_io >= idle)
                conn_close (e, c);
              break;
            case AB_CS_RELAY:
              if (now - c->last_io >= idle)
                conn_close (e, c);
              break;
            case AB_CS_CLOSING:
              if (now >= c->deadline)
                conn_close (e, c);
              break;
            }
        }
      if (c->dead)
        conn_free (e, c);
    }
}
