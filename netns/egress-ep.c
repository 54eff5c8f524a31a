/* The lowest layer of the egress engine: its clock, the epoll
 * registrations of its sockets and the byte buffers of its connections.
 * Every other file of the engine uses these; they use none of them. */
#include "config.h"

#include <sys/epoll.h>
#include <sys/socket.h>

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
ab_egress_buf_reserve (struct ab_egress_buf *b, size_t n)
{
  size_t cap = b->cap ? b->cap : 4096;

  if (b->off > 0 && b->off == b->len)
    b->off = b->len = 0;
  if (b->len + n <= b->cap)
    return;
  while (cap < b->len + n)
    cap *= 2;
  b->d = xrealloc (b->d, cap);
  b->cap = cap;
}

void
ab_egress_buf_append (struct ab_egress_buf *b, const void *p, size_t n)
{
  if (n == 0)
    return;
  ab_egress_buf_reserve (b, n);
  memcpy (b->d + b->len, p, n);
  b->len += n;
}

void
ab_egress_buf_free (struct ab_egress_buf *b)
{
  free (b->d);
  memset (b, 0, sizeof *b);
}

ssize_t
ab_egress_buf_read (struct ab_egress_buf *b, int fd, size_t max)
{
  size_t room, want;
  ssize_t r;

  /* Slide the unsent bytes to the front when the tail is short: interest
     is computed from the pending bytes, so a buffer that has room must
     really take a read (or level-triggered epoll spins). */
  if (b->off > 0 && (b->off == b->len || b->len + 16384 > max))
    {
      memmove (b->d, b->d + b->off, b->len - b->off);
      b->len -= b->off;
      b->off = 0;
    }
  room = max > b->len ? max - b->len : 0;
  if (room == 0)
    return -1;
  want = room < 65536 ? room : 65536;
  ab_egress_buf_reserve (b, want);
  r = recv (fd, b->d + b->len, want, 0);
  if (r < 0)
    return errno == EAGAIN || errno == EINTR ? -1 : -2;
  b->len += (size_t)r;
  return r;
}


/* The protocol a connection turned out to speak, for its record. */
void
ab_egress_conn_set_protocol (struct ab_egress_conn *c, int proto, const char *text)
{
  c->proto = proto;
  snprintf (c->protocol, sizeof c->protocol, "%s", text);
}

/* accept4 failed for want of a file descriptor (or of memory): the
   listener stays readable, and level-triggered epoll would wake the loop
   for it again at once, forever.  Stop watching the listeners until the
   next sweep (a connection was closed, or SWEEP_MS passed); the kernel
   keeps the clients in the listen backlog meanwhile. */
void
ab_egress_accept_failed (struct ab_egress *e, int errnum)
{
  struct ab_egress_ep *eps[] = { &e->listen_http4, &e->listen_http6, &e->listen_dns_tcp };

  if (errnum != EMFILE && errnum != ENFILE && errnum != ENOBUFS && errnum != ENOMEM)
    return;
  for (size_t i = 0; i < AB_ARRAY_SIZE (eps); i++)
    if (eps[i]->fd >= 0)
      ab_egress_ep_update (e, eps[i], 0);
  e->accept_paused = true;
}
