/* The lowest layer of the egress engine: its clock, the epoll
 * registrations of its sockets and the byte buffers of its connections.
 * Every other file of the engine uses these; they use none of them. */
#include "config.h"

#include <sys/epoll.h>

#include "netns/egress-internal.h"

uint64_t
ab_egress_now_ms (void)
{
  return ab_now_monotonic_ns () / 1000000;
}

int
ab_egress_ep_update (struct ab_egress *e, struct ab_egress_ep *ep, uint32_t events)
{
  struct epoll_event ev = { .events = events, .data.ptr = ep };

  if (ep->removed || (ep->registered && ep->events == events))
    return 0;
  if (epoll_ctl (e->epfd, ep->registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, ep->fd, &ev) < 0)
    return -1;
  ep->registered = true;
  ep->events = events;
  return 0;
}

void
ab_egress_ep_remove (struct ab_egress *e, struct ab_egress_ep *ep)
{
  if (ep->registered && !ep->removed)
    epoll_ctl (e->epfd, EPOLL_CTL_DEL, ep->fd, NULL);
  ep->removed = true;
}

/* ---- buffers ------------------------------------------------------------ */

size_t
ab_egress_buf_pending (const struct ab_egress_buf *b)
{
  return b->len - b->off;
}

void
ab_egress_buf_append (struct ab_egress_buf *b, const void *p, size_t n)
{
  if (n == 0)
    return;
  if (b->off > 0 && b->off == b->len)
    b->off = b->len = 0;
  if (b->len + n > b->cap)
    {
      size_t cap = b->cap ? b->cap : 4096;
      while (cap < b->len + n)
        cap *= 2;
      b->d = xrealloc (b->d, cap);
      b->cap = cap;
    }
  memcpy (b->d + b->len, p, n);
  b->len += n;
}

void
ab_egress_buf_free (struct ab_egress_buf *b)
{
  free (b->d);
  memset (b, 0, sizeof *b);
}

/* The protocol a connection turned out to speak, for its record. */
void
ab_egress_conn_set_protocol (struct ab_egress_conn *c, int proto, const char *text)
{
  c->proto = proto;
  snprintf (c->protocol, sizeof c->protocol, "%s", text);
}
