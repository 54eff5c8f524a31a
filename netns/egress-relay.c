/* The relay of a decided proxy connection.  Bytes go from one socket to the
 * other through a pipe with splice(2): the kernel hands the pages over and
 * nothing is copied through user space.  Bytes the proxy must read pass
 * through bounded buffers instead.  Which is which, and why:
 *
 *   upstream -> client   always spliced.  What the upstream answers goes
 *                        only to the client that asked.
 *   client -> upstream   spliced where the bytes cannot name another host:
 *                        TLS after its ClientHello (decided on the SNI), a
 *                        CONNECT tunnel whose first bytes are not HTTP (the
 *                        CONNECT decision is for the whole stream), and
 *                        HTTP request bodies of a Content-Length.  Plain HTTP
 *                        is read request by request: every head is parsed
 *                        and must name the host the connection was decided
 *                        for, or nothing more goes upstream on it and the
 *                        refusal is recorded.  A blind relay after the first head would
 *                        let a kept-alive connection carry a second request
 *                        for another site to the same address (virtual
 *                        hosting), so the proxy finds where each body ends
 *                        (egress-http.c refuses framing that two parsers
 *                        could read differently) and checks the next head.
 *                        An HTTP_PROXY client's connection carries one
 *                        request (the rewrite asks the upstream to close):
 *                        what the client sends after it is dropped.
 *
 * Ends: an EOF on one side shuts down the other's write side once its
 * bytes went out (a half-close passes through).  A reset passes through as
 * a reset, so that a close-delimited body or a tunnel cut short does not
 * look complete: an upstream's after the bytes that came before it, a
 * client's at once (nothing more can reach it).
 *
 * Order: each direction has a buffer and a pipe.  Bytes enter the pipe only
 * while the buffer is empty, and bytes enter the buffer only after the
 * pipe's were moved into it (pipe_to_buf), so the buffer's bytes are always
 * the older ones and are written first (flush).  Backpressure: a side is read
 * only while its direction has room (level-triggered epoll, as the rest of
 * the engine); a pipe holds at most RELAY_PIPE bytes. */
#include "config.h"

#include <fcntl.h>
#include <linux/sockios.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "netns/egress-internal.h"

/* A pipe starts at the kernel's default size (64 KiB) and grows to
   RELAY_PIPE the first time it holds more than RELAY_PIPE_GROW bytes (the
   reader is behind: a bulk transfer), for at most AB_EGRESS_BIG_PIPES
   pipes of the engine at once.  Fewer, larger splices cut the proxy's CPU
   per byte by a quarter; the budget keeps the kernel memory that full
   pipes can pin at 512 connections x 2 x 64 KiB + 64 x 256 KiB. */
#define RELAY_PIPE (256 * 1024)
#define RELAY_PIPE_GROW (32 * 1024)

/* Drop the first n bytes of the client's unframed bytes. */
static void
head_consume (struct ab_egress_buf *h, size_t n)
{
  memmove (h->d, h->d + n, h->len - n);
  h->len -= n;
}

/* ---- pipes ------------------------------------------------------------ */

/* A pipe from the pool, or a new one.  False when none can be had (past
   the engine's fd budget, out of file descriptors, or copy_relay): the
   direction copies instead. */
static bool
pipe_get (struct ab_egress *e, struct ab_egress_pipe *p)
{
  int fds[2];

  if (p->rd >= 0)
    return true;
  if (e->opt.copy_relay)
    return false;
  if (e->n_pipes > 0)
    {
      *p = e->pipes[--e->n_pipes];
      return true;
    }
  if (e->n_pipes_open >= e->pipes_max || pipe2 (fds, O_NONBLOCK | O_CLOEXEC) < 0)
    return false;
  e->n_pipes_open++;
  *p = (struct ab_egress_pipe){ .rd = fds[0], .wr = fds[1] };
  return true;
}

static void
pipe_grow (struct ab_egress *e, struct ab_egress_pipe *p)
{
  if (p->big || p->len < RELAY_PIPE_GROW || e->n_big_pipes >= AB_EGRESS_BIG_PIPES)
    return;
  /* Refused past fs.pipe-max-size or the user's pipe quota: a pipe of the
     default size only costs speed. */
  if (fcntl (p->wr, F_SETPIPE_SZ, RELAY_PIPE) < 0)
    return;
  p->big = true;
  p->full = false;
  e->n_big_pipes++;
}

static void
pipe_put (struct ab_egress *e, struct ab_egress_pipe *p)
{
  if (p->rd < 0)
    return;
  if (p->len == 0 && e->n_pipes < AB_EGRESS_PIPE_POOL)
    e->pipes[e->n_pipes++] = (struct ab_egress_pipe){ .rd = p->rd, .wr = p->wr, .big = p->big };
  else
    {
      close (p->rd);
      close (p->wr);
      e->n_big_pipes -= p->big;
      e->n_pipes_open--;
    }
  *p = (struct ab_egress_pipe){ .rd = -1, .wr = -1 };
}

void
ab_egress_pipes_free (struct ab_egress *e)
{
  while (e->n_pipes > 0)
    {
      e->n_pipes--;
      close (e->pipes[e->n_pipes].rd);
      close (e->pipes[e->n_pipes].wr);
      e->n_big_pipes -= e->pipes[e->n_pipes].big;
      e->n_pipes_open--;
    }
}

void
ab_egress_relay_release (struct ab_egress *e, struct ab_egress_conn *c)
{
  pipe_put (e, &c->c2u_pipe);
  pipe_put (e, &c->u2c_pipe);
}

/* Splice what the socket has into the pipe.  Returns bytes moved, 0 at
   EOF, -1 when nothing moved for now, -2 on error. */
static ssize_t
pipe_fill (struct ab_egress *e, struct ab_egress_pipe *p, int from, uint64_t limit)
{
  ssize_t r = splice (from, NULL, p->wr, NULL, limit < RELAY_PIPE ? (size_t)limit : RELAY_PIPE,
                      SPLICE_F_MOVE | SPLICE_F_NONBLOCK);

  if (r > 0)
    {
      p->len += (size_t)r;
      pipe_grow (e, p);
    }
  if (r >= 0)
    return r;
  if (errno != EAGAIN && errno != EINTR)
    return -2;
  /* EAGAIN says "no data" or "no room": with bytes inside, take it as no
     room and read again once some went out, or epoll would spin. */
  p->full = p->len > 0;
  return -1;
}

/* Move the pipe's bytes into the buffer (rare: a buffer append while the
   pipe holds bytes), so that the buffer stays the older of the two.
   False if the pipe would not give them back (the stream is broken). */
static bool
pipe_to_buf (struct ab_egress_pipe *p, struct ab_egress_buf *b)
{
  while (p->rd >= 0 && p->len > 0)
    {
      ssize_t r;

      ab_egress_buf_reserve (b, p->len);
      r = read (p->rd, b->d + b->len, p->len);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        return false;
      b->len += (size_t)r;
      p->len -= (size_t)r;
    }
  p->full = false;
  return true;
}

/* Queue bytes for the upstream behind what its pipe holds; false when the
   connection had to be closed. */
static bool
c2u_queue (struct ab_egress *e, struct ab_egress_conn *c, const void *d, size_t n)
{
  if (n == 0)
    return true;
  if (!pipe_to_buf (&c->c2u_pipe, &c->c2u))
    {
      ab_egress_conn_close (e, c);
      return false;
    }
  ab_egress_buf_append (&c->c2u, d, n);
  return true;
}

/* Write what is queued for `to`: the buffer, then the pipe.  Returns -1 on
   a write error, else whether anything moved. */
static int
flush (int to, struct ab_egress_buf *b, struct ab_egress_pipe *p)
{
  int moved = 0;

  while (ab_egress_buf_pending (b) > 0)
    {
      ssize_t w = send (to, b->d + b->off, b->len - b->off, MSG_NOSIGNAL);
      if (w < 0)
        return errno == EAGAIN || errno == EINTR ? moved : -1;
      b->off += (size_t)w;
      moved = 1;
    }
  while (p->len > 0)
    {
      /* SIGPIPE on a reset peer is blocked in the loop thread: splice has
         no MSG_NOSIGNAL. */
      ssize_t w = splice (p->rd, NULL, to, NULL, p->len, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (w < 0)
        return errno == EAGAIN || errno == EINTR ? moved : -1;
      p->len -= (size_t)w;
      p->full = false;
      moved = 1;
    }
  return moved;
}

static size_t
c2u_pending (const struct ab_egress_conn *c)
{
  return ab_egress_buf_pending (&c->c2u) + c->c2u_pipe.len;
}

/* Queued bytes toward the client (buffer and pipe). */
static size_t
ab_egress_relay_u2c_pending (const struct ab_egress_conn *c)
{
  return ab_egress_buf_pending (&c->u2c) + c->u2c_pipe.len;
}

/* ---- the client's requests -------------------------------------------- */

void
ab_egress_relay_request (struct ab_egress_conn *c, const struct ab_http_head *h, bool keep)
{
  c->fr_keep = keep;
  c->fr_upgrade = keep && h->upgrade; /* the origin-form rewrite drops Upgrade */
  if (h->chunked)
    {
      c->fr = AB_FR_CHUNKED;
      memset (&c->chunk, 0, sizeof c->chunk);
    }
  else
    {
      c->fr = AB_FR_BODY;
      c->body_left = h->has_length ? h->content_length : 0;
    }
}

/* The current request went upstream in full. */
static void
request_done (struct ab_egress_conn *c)
{
  c->n_requests++;
  if (!c->fr_keep)
    c->fr = AB_FR_DONE;
  else if (c->fr_upgrade)
    {
      c->fr = AB_FR_UPGRADE;
      c->status_len = 0;
    }
  else
    c->fr = AB_FR_HEAD;
}

/* Why a later request on the connection may not go upstream, or NULL.  The
   same rules as the first head's (egress-head.c), and one more: only the
   first request may ask for an Upgrade, since the answer to a later one
   cannot be told apart from the answers before it. */
static const char *
request_refusal (const struct ab_egress_conn *c, const struct ab_http_head *h)
{
  if (h->form == AB_HTTP_AUTHORITY)
    return "http-malformed";
  if (h->upgrade)
    return "upgrade-not-first";
  if (c->literal)
    return NULL; /* the policy lists the address itself: any site on it */
  if (!h->has_host)
    return "no-host";
  if (strcmp (h->host_hdr, c->name) != 0 || (h->form == AB_HTTP_ABSOLUTE && strcmp (h->host, c->name) != 0))
    return "host-mismatch";
  return NULL;
}

/* A later request was refused: record it, send nothing more upstream (the
   requests before it go out, then the upstream's write side is shut down
   so that it answers them and closes), drop what the client sends.  The
   client gets no answer to the refused request: an honest client never
   asks another host on a connection it opened for this one. */
static void
cut (struct ab_egress *e, struct ab_egress_conn *c, const char *rule, const char *name)
{
  ab_egress_record_add (&e->record, c->proto, "http-host", name ? name : c->name, &c->cand[c->i_cand - 1],
                        c->port, false, rule);
  c->fr = AB_FR_DONE;
  c->c2u_closed = true;
  c->head.len = 0;
}

/* Move the client's unframed bytes (c->head) upstream as far as the
   framing allows. */
static void
frame (struct ab_egress *e, struct ab_egress_conn *c)
{
  while (!c->dead)
    {
      size_t have = c->head.len, k;
      struct ab_http_head h;
      const char *why, *refusal;
      bool done;
      ssize_t n;
      int r;

      switch (c->fr)
        {
        case AB_FR_BLIND:
          if (have == 0)
            return;
          if (!c2u_queue (e, c, c->head.d, have))
            return;
          head_consume (&c->head, have);
          return;
        case AB_FR_BODY:
          if (c->body_left == 0)
            {
              request_done (c);
              continue;
            }
          if (have == 0)
            return;
          k = have < c->body_left ? have : (size_t)c->body_left;
          if (!c2u_queue (e, c, c->head.d, k))
            return;
          head_consume (&c->head, k);
          c->body_left -= k;
          continue;
        case AB_FR_CHUNKED:
          if (have == 0)
            return;
          n = ab_http_chunked_scan (&c->chunk, c->head.d, have, &done);
          if (n < 0)
            {
              cut (e, c, "http-malformed", NULL);
              return;
            }
          if (!c2u_queue (e, c, c->head.d, (size_t)n))
            return;
          head_consume (&c->head, (size_t)n);
          if (!done)
            return;
          request_done (c);
          continue;
        case AB_FR_HEAD:
          if (have == 0)
            return;
          r = ab_http_parse_head ((const char *)c->head.d, have, &h, &why);
          if (r == AB_HTTP_MORE)
            return;
          refusal = r == AB_HTTP_OK ? request_refusal (c, &h) : "http-malformed";
          if (refusal != NULL)
            {
              cut (e, c, refusal, r == AB_HTTP_OK && h.has_host ? h.host_hdr : NULL);
              return;
            }
          if (!c2u_queue (e, c, c->head.d, h.head_len))
            return;
          head_consume (&c->head, h.head_len);
          ab_egress_relay_request (c, &h, true);
          continue;
        case AB_FR_UPGRADE:
          return;
        case AB_FR_DONE:
          head_consume (&c->head, have);
          return;
        }
    }
}

/* After an Upgrade request: the first bytes of the answer say whether the
   connection is still HTTP. */
static void
upgrade_status (struct ab_egress *e, struct ab_egress_conn *c, const uint8_t *p, size_t n, bool eof)
{
  static const char switching[] = "HTTP/1.1 101";
  size_t k = sizeof c->status - c->status_len;

  if (k > n)
    k = n;
  memcpy (c->status + c->status_len, p, k);
  c->status_len += k;
  if (c->status_len < sizeof c->status && !eof)
    return;
  c->fr = c->status_len == sizeof c->status && memcmp (c->status, switching, sizeof c->status) == 0
              ? AB_FR_BLIND /* another protocol now: the upstream reads no more HTTP on it */
              : AB_FR_HEAD;
  frame (e, c);
}

/* ---- moving bytes ----------------------------------------------------- */

static size_t
head_bound (const struct ab_egress_conn *c)
{
  if (c->state == AB_CS_INSPECT)
    return HEAD_MAX;
  return c->fr == AB_FR_HEAD ? AB_HTTP_MAX_HEAD : RELAY_BUF;
}

/* Whether the client's next bytes go straight into the c2u pipe. */
static bool
c2u_spliced (const struct ab_egress_conn *c)
{
  return c->state == AB_CS_RELAY && !c->c2u_nopipe
         && (c->fr == AB_FR_BLIND || (c->fr == AB_FR_BODY && c->body_left > 0)) && c->head.len == 0
         && ab_egress_buf_pending (&c->c2u) == 0;
}

static bool
u2c_spliced (const struct ab_egress_conn *c)
{
  return !c->u2c_nopipe && c->fr != AB_FR_UPGRADE && ab_egress_buf_pending (&c->u2c) == 0;
}

/* Epoll interest of one side in AB_CS_INSPECT or AB_CS_RELAY. */
static uint32_t
ab_egress_relay_interest (const struct ab_egress_conn *c, bool client)
{
  uint32_t ev = 0;

  if (client)
    {
      if (ab_egress_relay_u2c_pending (c) > 0 && !c->c_wshut)
        ev |= EPOLLOUT;
      if (c->c_eof || c->u_reset || (c->state == AB_CS_RELAY && c->fr == AB_FR_UPGRADE))
        return ev;
      if (c->state == AB_CS_RELAY && c->fr == AB_FR_DONE)
        return ev | EPOLLIN;
      if (c2u_spliced (c))
        return ev | (c->c2u_pipe.full ? 0 : EPOLLIN);
      if (c->head.len < head_bound (c) && ab_egress_buf_pending (&c->c2u) < RELAY_BUF)
        ev |= EPOLLIN;
      return ev;
    }
  if (c2u_pending (c) > 0)
    ev |= EPOLLOUT;
  if (c->u_eof)
    return ev;
  if (u2c_spliced (c))
    return ev | (c->u2c_pipe.full ? 0 : EPOLLIN);
  if (ab_egress_buf_pending (&c->u2c) < RELAY_BUF)
    ev |= EPOLLIN;
  return ev;
}

void
ab_egress_relay_tunnel (struct ab_egress *e, struct ab_egress_conn *c)
{
  struct ab_egress_head_verdict v = { 0 };
  int next = ab_egress_head_tunnel (e, c, &v);

  if (next == AB_HEAD_REFUSE)
    ab_egress_conn_refuse (e, c, v.status, v.rule, v.addr);
  else if (next == AB_HEAD_MORE)
    ab_egress_conn_update (e, c);
  else
    {
      if (v.frame)
        ab_egress_relay_request (c, &v.h, v.keep);
      ab_egress_relay_start (e, c, c->head.d, v.frame ? v.h.head_len : 0, v.frame ? v.h.head_len : 0);
    }
}

/* ---- failures ---------------------------------------------------------- */

/* Closing fd sends a reset, not a FIN. */
static void
reset_on_close (int fd)
{
  struct linger lg = { .l_onoff = 1, .l_linger = 0 };

  if (fd >= 0)
    setsockopt (fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
}

static void side_hup (struct ab_egress *e, struct ab_egress_conn *c, bool client);

/* The client's socket failed (a reset, a read or write error): nothing
   more can reach it.  The upstream gets a reset, not a FIN, so that what
   the client sent before does not look like a complete stream. */
static void
client_failed (struct ab_egress *e, struct ab_egress_conn *c)
{
  reset_on_close (c->uep.fd);
  ab_egress_conn_close (e, c);
}

/* The upstream's socket failed: what it still holds goes to the client,
   whose connection then ends with a reset (finish, client_abort); what the
   client sends from now on is dropped. */
static void
upstream_failed (struct ab_egress *e, struct ab_egress_conn *c)
{
  side_hup (e, c, false);
  c->u_reset = true;
}

/* Returns -1 when the connection was closed. */
static int
client_in (struct ab_egress *e, struct ab_egress_conn *c)
{
  ssize_t r;

  if (c->state == AB_CS_RELAY && c->fr == AB_FR_DONE)
    {
      uint8_t sink[4096];
      r = recv (c->cep.fd, sink, sizeof sink, 0);
      if (r < 0)
        r = errno == EAGAIN || errno == EINTR ? -1 : -2;
    }
  else if (c2u_spliced (c) && (pipe_get (e, &c->c2u_pipe) || !(c->c2u_nopipe = true)))
    {
      r = pipe_fill (e, &c->c2u_pipe, c->cep.fd, c->fr == AB_FR_BODY ? c->body_left : UINT64_MAX);
      if (r > 0 && c->fr == AB_FR_BODY)
        c->body_left -= (uint64_t)r;
    }
  else
    r = ab_egress_buf_read (&c->head, c->cep.fd, head_bound (c));
  if (r == -2)
    {
      client_failed (e, c);
      return -1;
    }
  if (r == 0)
    c->c_eof = true;
  if (r > 0)
    c->last_io = ab_egress_now_ms ();
  if (c->state == AB_CS_INSPECT)
    {
      if (r == 0)
        {
          ab_egress_conn_close (e, c);
          return -1;
        }
      if (r > 0)
        ab_egress_relay_tunnel (e, c);
      return c->dead ? -1 : 0;
    }
  frame (e, c);
  return c->dead ? -1 : 0;
}

static int
upstream_in (struct ab_egress *e, struct ab_egress_conn *c)
{
  bool spliced = u2c_spliced (c) && (pipe_get (e, &c->u2c_pipe) || !(c->u2c_nopipe = true));
  ssize_t r;

  if (!spliced && !pipe_to_buf (&c->u2c_pipe, &c->u2c))
    {
      ab_egress_conn_close (e, c);
      return -1;
    }
  r = spliced ? pipe_fill (e, &c->u2c_pipe, c->uep.fd, UINT64_MAX)
              : ab_egress_buf_read (&c->u2c, c->uep.fd, RELAY_BUF);
  if (r == -2)
    {
      upstream_failed (e, c);
      return c->dead ? -1 : 0;
    }
  if (r == 0)
    c->u_eof = true;
  if (r > 0)
    c->last_io = ab_egress_now_ms ();
  /* Not spliced while the status is awaited: the new bytes are the
     buffer's last r. */
  if (c->fr == AB_FR_UPGRADE && c->state == AB_CS_RELAY && !spliced && r >= 0)
    upgrade_status (e, c, c->u2c.d + c->u2c.len - (size_t)r, (size_t)r, r == 0);
  return c->dead ? -1 : 0;
}

/* Write both ways; -1 when the connection was closed. */
static int
flush_both (struct ab_egress *e, struct ab_egress_conn *c)
{
  int a = c2u_pending (c) > 0 ? flush (c->uep.fd, &c->c2u, &c->c2u_pipe) : 0, b;

  if (a < 0)
    {
      upstream_failed (e, c);
      if (c->dead)
        return -1;
      a = 0;
    }
  b = ab_egress_relay_u2c_pending (c) > 0 && !c->c_wshut ? flush (c->cep.fd, &c->u2c, &c->u2c_pipe) : 0;
  if (b < 0)
    {
      client_failed (e, c);
      return -1;
    }
  if (a > 0 || b > 0)
    c->last_io = ab_egress_now_ms ();
  return 0;
}

/* The upstream failed and what came before its failure was handed to the
   kernel: end the client's connection with a reset too, so that a client
   reading to EOF (a close-delimited body, a tunnel) sees an error, not a
   complete stream.  A reset drops what the socket has not sent yet, so it
   waits (the sweep calls again) until the client took every byte, or
   CLOSE_LINGER_MS passed. */
static void
client_abort (struct ab_egress *e, struct ab_egress_conn *c)
{
  uint64_t now = ab_egress_now_ms ();
  int unsent = 0;

  if (ioctl (c->cep.fd, SIOCOUTQ, &unsent) == 0 && unsent > 0)
    {
      if (c->deadline == 0)
        c->deadline = now + CLOSE_LINGER_MS;
      if (now < c->deadline)
        {
          ab_egress_conn_update (e, c);
          return;
        }
    }
  reset_on_close (c->cep.fd);
  ab_egress_conn_close (e, c);
}

/* Propagate half-closes; close when both ways are done. */
static void
finish (struct ab_egress *e, struct ab_egress_conn *c)
{
  if ((c->c_eof || c->c2u_closed) && c2u_pending (c) == 0 && !c->u_wshut)
    {
      shutdown (c->uep.fd, SHUT_WR);
      c->u_wshut = true;
    }
  if (c->u_eof && ab_egress_relay_u2c_pending (c) == 0 && !c->c_wshut)
    {
      if (c->u_reset)
        {
          client_abort (e, c);
          return;
        }
      shutdown (c->cep.fd, SHUT_WR);
      c->c_wshut = true;
    }
  if ((c->c_wshut && c->u_wshut)
      || (c->state == AB_CS_INSPECT && !c->u_wshut && c->u_eof && ab_egress_relay_u2c_pending (c) == 0))
    {
      ab_egress_conn_close (e, c);
      return;
    }
  ab_egress_conn_update (e, c);
}

/* A socket that hung up (both directions over) or failed stays readable
   for epoll forever: take what it still holds, stop watching it, and
   finish the other direction.  What was queued toward it is dropped:
   nobody is left to read it. */
static void
side_hup (struct ab_egress *e, struct ab_egress_conn *c, bool client)
{
  if (client)
    {
      while (ab_egress_buf_read (&c->head, c->cep.fd, SIZE_MAX) > 0)
        ;
      ab_egress_ep_remove (e, &c->cep);
      frame (e, c);
      ab_egress_buf_free (&c->u2c);
      pipe_put (e, &c->u2c_pipe);
      c->c_eof = c->c_wshut = true;
    }
  else
    {
      if (!pipe_to_buf (&c->u2c_pipe, &c->u2c))
        {
          ab_egress_conn_close (e, c);
          return;
        }
      while (ab_egress_buf_read (&c->u2c, c->uep.fd, SIZE_MAX) > 0)
        ;
      ab_egress_ep_remove (e, &c->uep);
      ab_egress_buf_free (&c->c2u);
      pipe_put (e, &c->c2u_pipe);
      c->u_eof = c->u_wshut = true;
    }
}

void
ab_egress_relay_event (struct ab_egress *e, struct ab_egress_conn *c, bool client, uint32_t events)
{
  /* A client in error (a reset) can take nothing more.  An upstream's
     reset still leaves what arrived before it readable, and that goes to
     the client before its connection is reset. */
  if (client && (events & EPOLLERR))
    {
      client_failed (e, c);
      return;
    }
  if (client && (events & EPOLLHUP) && c->state != AB_CS_RELAY)
    {
      ab_egress_conn_close (e, c);
      return;
    }
  if (events & EPOLLERR)
    upstream_failed (e, c);
  else if (events & EPOLLHUP)
    side_hup (e, c, client);
  else if (events & EPOLLIN)
    {
      if ((client ? client_in (e, c) : upstream_in (e, c)) < 0)
        return;
    }
  /* Write both ways at once: what was just read usually goes out in the
     same turn, without waiting for the other socket's EPOLLOUT. */
  ab_egress_relay_kick (e, c);
}

void
ab_egress_relay_kick (struct ab_egress *e, struct ab_egress_conn *c)
{
  if (!c->dead && flush_both (e, c) == 0)
    finish (e, c);
}

void
ab_egress_relay_sweep (struct ab_egress *e, struct ab_egress_conn *c, uint64_t now, uint64_t idle)
{
  if (now - c->last_io >= idle)
    {
      /* A client that stopped reading after the upstream's reset: what it
         has not read must not end in a FIN that passes for a complete stream. */
      if (c->u_reset)
        reset_on_close (c->cep.fd);
      ab_egress_conn_close (e, c);
    }
  else if (c->u_reset)
    ab_egress_relay_kick (e, c); /* the client's reset waits for its last bytes */
  else if (c->state == AB_CS_INSPECT && c->deadline != 0 && now >= c->deadline)
    ab_egress_conn_close (e, c);
}

void
ab_egress_relay_start (struct ab_egress *e, struct ab_egress_conn *c, const void *first, size_t n,
                       size_t consume)
{
  c->state = AB_CS_RELAY;
  c->deadline = 0;
  if (!c2u_queue (e, c, first, n))
    return;
  head_consume (&c->head, consume);
  frame (e, c);
  ab_egress_relay_kick (e, c);
}

/* ---- life ------------------------------------------------------------- */

void
ab_egress_conn_close (struct ab_egress *e, struct ab_egress_conn *c)
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

/* Recompute both sockets' epoll interest from the state and the queues
   (level-triggered: a side is read only while its direction has room,
   which is the backpressure). */
void
ab_egress_conn_update (struct ab_egress *e, struct ab_egress_conn *c)
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
    case AB_CS_RELAY:
      cev = ab_egress_relay_interest (c, true);
      uev = ab_egress_relay_interest (c, false);
      break;
    case AB_CS_CLOSING:
      cev = ab_egress_buf_pending (&c->u2c) > 0 ? 0 : EPOLLIN;
      if (ab_egress_buf_pending (&c->u2c) > 0 && !c->c_wshut)
        cev |= EPOLLOUT;
      break;
    }
  if ((c->cep.fd >= 0 && ab_egress_ep_update (e, &c->cep, cev) < 0)
      || (c->uep.fd >= 0 && ab_egress_ep_update (e, &c->uep, uev) < 0))
    ab_egress_conn_close (e, c);
}

/* Refuse: record the decision (when rule is set), send what the client can
   understand, and close once it is flushed. */
void
ab_egress_conn_refuse (struct ab_egress *e, struct ab_egress_conn *c, int status, const char *rule,
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
  ab_egress_relay_release (e, c);
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
  ab_egress_conn_update (e, c);
}
