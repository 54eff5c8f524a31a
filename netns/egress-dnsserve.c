/* The DNS stub: 127.0.0.1:53 inside the container, UDP and TCP.  It answers
 * A/AAAA for allowed names only, from the pin table, and never forwards a
 * query anywhere (a forwarded query is an exfiltration channel:
 * <secret>.attacker.example reaches the attacker's name server). */
#include "config.h"

#include <sys/epoll.h>
#include <sys/socket.h>

#include "netns/egress-internal.h"

#define DNS_TTL 300
#define DNS_MAX_PENDING_UDP 256
#define DNS_MAX_TCP_CONNS 64
#define DNS_TCP_IDLE_MS 10000
#define DNS_RESOLVE_WAIT_MS 10000

struct ab_egress_udpq
{
  struct ab_egress_udpq *next;
  struct sockaddr_storage peer;
  socklen_t peer_len;
  struct ab_dns_query q;
  uint8_t buf[AB_DNS_MAX_MSG];
  uint64_t deadline;
};

struct ab_egress_dnsconn
{
  struct ab_egress_dnsconn *next;
  struct ab_egress_ep ep;
  uint8_t in[2 + AB_DNS_MAX_MSG];
  size_t in_len;
  uint8_t out[2 + AB_DNS_MAX_MSG];
  size_t out_len, out_off;
  struct ab_dns_query q;
  bool waiting; /* for the resolver */
  bool dead;
  uint64_t deadline;
};

static void
protocol_of (const struct ab_dns_query *q, char *buf, size_t len)
{
  char t[16];

  ab_dns_type_name (q->qtype, t, sizeof t);
  snprintf (buf, len, "dns-%s", t);
}

/* The reply once the name's addresses are known. */
static size_t
dns_finish (struct ab_egress *e, const uint8_t *buf, const struct ab_dns_query *q, const char *rule,
            struct ab_egress_name *n, uint8_t *out, size_t cap)
{
  struct ab_egress_addr good[AB_EGRESS_MAX_ADDRS];
  const char *refusal = NULL;
  size_t n_good = 0, first_of_type = SIZE_MAX;
  char protocol[24];
  int family = q->qtype == AB_DNS_T_A ? AF_INET : AF_INET6;

  protocol_of (q, protocol, sizeof protocol);
  if (n->state != AB_NAME_RESOLVED)
    {
      ab_egress_record_add (&e->record, AB_EGRESS_P_DNS, protocol, q->name, NULL, 0, false,
                            n->refusal ? n->refusal : "resolve-failed");
      return ab_dns_build_reply (buf, q, AB_DNS_RCODE_SERVFAIL, NULL, 0, 0, out, cap);
    }
  /* Addresses the proxy would refuse are never handed out either: a client
     must not learn (and then try) 127.0.0.1 for an allowed name. */
  for (size_t i = 0; i < n->n_addrs; i++)
    {
      const char *r = ab_egress_addr_refusal (n->addrs[i].family, n->addrs[i].addr);
      if (r != NULL)
        {
          refusal = refusal ? refusal : r;
          continue;
        }
      if (n->addrs[i].family == family && first_of_type == SIZE_MAX)
        first_of_type = n_good;
      good[n_good++] = n->addrs[i];
    }
  if (n_good == 0)
    {
      ab_egress_record_add (&e->record, AB_EGRESS_P_DNS, protocol, q->name, &n->addrs[0], 0, false, refusal);
      return ab_dns_build_reply (buf, q, AB_DNS_RCODE_NXDOMAIN, NULL, 0, 0, out, cap);
    }
  ab_egress_record_add (&e->record, AB_EGRESS_P_DNS, protocol, q->name,
                        first_of_type == SIZE_MAX ? NULL : &good[first_of_type], 0, true, rule);
  return ab_dns_build_reply (buf, q, AB_DNS_RCODE_NOERROR, good, n_good, DNS_TTL, out, cap);
}

/* Answer a parsed query now (returns the reply length; 0 drops it), or
   register (kind, ptr) as a waiter for the resolver and return -1. */
static ssize_t
dns_answer (struct ab_egress *e, const uint8_t *buf, int rc, const struct ab_dns_query *q, int kind,
            void *ptr, uint8_t *out, size_t cap)
{
  char rule[AB_EGRESS_NAME_MAX + 16], protocol[24];
  struct ab_egress_name *n;

  if (rc < 0)
    return 0;
  protocol_of (q, protocol, sizeof protocol);
  if (rc != AB_DNS_RCODE_NOERROR)
    {
      ab_egress_record_add (&e->record, AB_EGRESS_P_DNS, "dns", q->display, NULL, 0, false, "malformed");
      return (ssize_t)ab_dns_build_reply (buf, q, rc, NULL, 0, 0, out, cap);
    }
  if (!q->name_valid)
    {
      ab_egress_record_add (&e->record, AB_EGRESS_P_DNS, protocol, q->display, NULL, 0, false,
                            "invalid-name");
      return (ssize_t)ab_dns_build_reply (buf, q, AB_DNS_RCODE_NXDOMAIN, NULL, 0, 0, out, cap);
    }
  if (q->qclass != AB_DNS_C_IN)
    {
      ab_egress_record_add (&e->record, AB_EGRESS_P_DNS, protocol, q->name, NULL, 0, false, "not-class-in");
      return (ssize_t)ab_dns_build_reply (buf, q, AB_DNS_RCODE_REFUSED, NULL, 0, 0, out, cap);
    }
  if (!ab_egress_policy_decide (&e->policy, q->name, 0, rule, sizeof rule))
    {
      ab_egress_record_add (&e->record, AB_EGRESS_P_DNS, protocol, q->name, NULL, 0, false, rule);
      return (ssize_t)ab_dns_build_reply (buf, q, AB_DNS_RCODE_NXDOMAIN, NULL, 0, 0, out, cap);
    }
  if (q->qtype != AB_DNS_T_A && q->qtype != AB_DNS_T_AAAA)
    {
      ab_egress_record_add (&e->record, AB_EGRESS_P_DNS, protocol, q->name, NULL, 0, true, rule);
      return (ssize_t)ab_dns_build_reply (buf, q, AB_DNS_RCODE_NOERROR, NULL, 0, 0, out, cap);
    }
  n = ab_egress_name_lookup (e, q->name, kind, ptr);
  if (n == NULL)
    return -1;
  return (ssize_t)dns_finish (e, buf, q, rule, n, out, cap);
}

/* ---- UDP -------------------------------------------------------------- */

static void
udp_send (struct ab_egress *e, const uint8_t *out, size_t len, const struct sockaddr_storage *peer,
          socklen_t peer_len)
{
  /* Best effort: a full socket buffer drops the reply like a lost packet. */
  if (len > 0)
    (void)sendto (e->dns_udp.fd, out, len, MSG_DONTWAIT, (const struct sockaddr *)peer, peer_len);
}

void
ab_egress_dns_udp_ready (struct ab_egress *e)
{
  for (int budget = 0; budget < 64; budget++)
    {
      _cleanup_free_ struct ab_egress_udpq *u = xzalloc (sizeof *u);
      uint8_t out[AB_DNS_MAX_UDP];
      ssize_t len, r;
      int rc;

      u->peer_len = sizeof u->peer;
      len = recvfrom (e->dns_udp.fd, u->buf, sizeof u->buf, MSG_DONTWAIT, (struct sockaddr *)&u->peer,
                      &u->peer_len);
      if (len < 0)
        return; /* EAGAIN, or an ICMP error of an earlier reply */
      rc = ab_dns_parse_query (u->buf, (size_t)len, &u->q);
      if (rc == AB_DNS_RCODE_NOERROR && e->n_udpqs >= DNS_MAX_PENDING_UDP)
        {
          udp_send (e, out,
                    ab_dns_build_reply (u->buf, &u->q, AB_DNS_RCODE_SERVFAIL, NULL, 0, 0, out, sizeof out),
                    &u->peer, u->peer_len);
          continue;
        }
      r = dns_answer (e, u->buf, rc, &u->q, AB_WAIT_UDP, u, out, sizeof out);
      if (r >= 0)
        {
          udp_send (e, out, (size_t)r, &u->peer, u->peer_len);
          continue;
        }
      u->deadline = ab_egress_now_ms () + DNS_RESOLVE_WAIT_MS;
      u->next = e->udpqs;
      e->udpqs = ab_steal_ptr (&u);
      e->n_udpqs++;
    }
}

static void
udpq_unlink (struct ab_egress *e, struct ab_egress_udpq *u)
{
  for (struct ab_egress_udpq **p = &e->udpqs; *p; p = &(*p)->next)
    if (*p == u)
      {
        *p = u->next;
        e->n_udpqs--;
        return;
      }
}

/* ---- TCP -------------------------------------------------------------- */

static void
dnsconn_close (struct ab_egress *e, struct ab_egress_dnsconn *c)
{
  if (c->dead)
    return;
  c->dead = true;
  e->reap_pending = true;
  if (c->waiting)
    ab_egress_name_cancel (e, c);
  ab_egress_ep_remove (e, &c->ep);
  close (c->ep.fd);
  c->ep.fd = -1;
}

static void
dnsconn_update (struct ab_egress *e, struct ab_egress_dnsconn *c)
{
  uint32_t ev = 0;

  if (c->out_off < c->out_len)
    ev |= EPOLLOUT;
  else if (!c->waiting)
    ev |= EPOLLIN;
  if (ab_egress_ep_update (e, &c->ep, ev) < 0)
    dnsconn_close (e, c);
}

static void
dnsconn_reply (struct ab_egress_dnsconn *c, size_t len)
{
  c->out[0] = (uint8_t)(len >> 8);
  c->out[1] = (uint8_t)len;
  c->out_len = len ? len + 2 : 0;
  c->out_off = 0;
}

/* Handle every complete message in the input buffer, one at a time. */
static void
dnsconn_process (struct ab_egress *e, struct ab_egress_dnsconn *c)
{
  while (!c->waiting && c->out_off >= c->out_len && c->in_len >= 2)
    {
      size_t mlen = (size_t)c->in[0] << 8 | c->in[1];
      ssize_t r;
      int rc;

      if (mlen == 0 || mlen > AB_DNS_MAX_MSG)
        {
          dnsconn_close (e, c);
          return;
        }
      if (c->in_len < mlen + 2)
        break;
      rc = ab_dns_parse_query (c->in + 2, mlen, &c->q);
      r = dns_answer (e, c->in + 2, rc, &c->q, AB_WAIT_TCPDNS, c, c->out + 2, sizeof c->out - 2);
      if (r < 0)
        {
          c->waiting = true;
          c->deadline = ab_egress_now_ms () + DNS_RESOLVE_WAIT_MS;
          break;
        }
      dnsconn_reply (c, (size_t)r);
      memmove (c->in, c->in + mlen + 2, c->in_len - mlen - 2);
      c->in_len -= mlen + 2;
    }
  dnsconn_update (e, c);
}

void
ab_egress_dns_tcp_accept (struct ab_egress *e)
{
  for (int budget = 0; budget < 64; budget++)
    {
      int fd = accept4 (e->listen_dns_tcp.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
      struct ab_egress_dnsconn *c;

      if (fd < 0)
        {
          ab_egress_accept_failed (e, errno);
          return;
        }
      if (e->n_dnsconns >= DNS_MAX_TCP_CONNS)
        {
          close (fd);
          continue;
        }
      c = xzalloc (sizeof *c);
      c->ep.kind = AB_EP_DNS_TCP;
      c->ep.fd = fd;
      c->ep.owner = c;
      c->deadline = ab_egress_now_ms () + DNS_TCP_IDLE_MS;
      c->next = e->dnsconns;
      e->dnsconns = c;
      e->n_dnsconns++;
      dnsconn_update (e, c);
    }
}

void
ab_egress_dns_tcp_event (struct ab_egress *e, struct ab_egress_ep *ep, uint32_t events)
{
  struct ab_egress_dnsconn *c = ep->owner;

  if (c->dead)
    return;
  if (events & EPOLLERR)
    {
      dnsconn_close (e, c);
      return;
    }
  if (events & EPOLLOUT)
    {
      ssize_t w = send (c->ep.fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
      if (w < 0 && errno != EAGAIN && errno != EINTR)
        {
          dnsconn_close (e, c);
          return;
        }
      if (w > 0)
        c->out_off += (size_t)w;
    }
  if ((events & (EPOLLIN | EPOLLHUP)) && !c->waiting && c->out_off >= c->out_len)
    {
      ssize_t r = recv (c->ep.fd, c->in + c->in_len, sizeof c->in - c->in_len, 0);
      if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
        {
          dnsconn_close (e, c);
          return;
        }
      if (r > 0)
        c->in_len += (size_t)r;
    }
  c->deadline = ab_egress_now_ms () + DNS_TCP_IDLE_MS;
  dnsconn_process (e, c);
}

/* ---- resolver completions and timeouts -------------------------------- */

void
ab_egress_dns_resolved (struct ab_egress *e, int kind, void *ptr, struct ab_egress_name *n)
{
  char rule[AB_EGRESS_NAME_MAX + 16];

  if (kind == AB_WAIT_UDP)
    {
      struct ab_egress_udpq *u = ptr;
      uint8_t out[AB_DNS_MAX_UDP];

      ab_egress_policy_decide (&e->policy, u->q.name, 0, rule, sizeof rule);
      udp_send (e, out, dns_finish (e, u->buf, &u->q, rule, n, out, sizeof out), &u->peer, u->peer_len);
      udpq_unlink (e, u);
      free (u);
      return;
    }
  struct ab_egress_dnsconn *c = ptr;
  size_t mlen = (size_t)c->in[0] << 8 | c->in[1];

  ab_egress_policy_decide (&e->policy, c->q.name, 0, rule, sizeof rule);
  dnsconn_reply (c, dns_finish (e, c->in + 2, &c->q, rule, n, c->out + 2, sizeof c->out - 2));
  memmove (c->in, c->in + mlen + 2, c->in_len - mlen - 2);
  c->in_len -= mlen + 2;
  c->waiting = false;
  c->deadline = ab_egress_now_ms () + DNS_TCP_IDLE_MS;
  dnsconn_process (e, c);
}

void
ab_egress_dns_sweep (struct ab_egress *e, uint64_t now, bool all)
{
  for (struct ab_egress_udpq **p = &e->udpqs; *p;)
    {
      struct ab_egress_udpq *u = *p;
      if (!all && now < u->deadline)
        {
          p = &u->next;
          continue;
        }
      /* The host resolver is slow or stuck: the client's own retry will
         find the answer once it arrives. */
      ab_egress_name_cancel (e, u);
      *p = u->next;
      e->n_udpqs--;
      free (u);
    }
  for (struct ab_egress_dnsconn **p = &e->dnsconns; *p;)
    {
      struct ab_egress_dnsconn *c = *p;
      if (!c->dead && (all || now >= c->deadline))
        dnsconn_close (e, c);
      if (c->dead)
        {
          *p = c->next;
          e->n_dnsconns--;
          free (c);
        }
      else
        p = &c->next;
    }
}
