/* Internals of the egress engine shared by netns/egress-*.c and the unit
 * tests: the pure parsers for hostile input (DNS, TLS ClientHello, HTTP
 * request heads), the name matcher, the address classifier, and the engine
 * state.  Nothing here is part of the runtime's API (that is egress.h). */
#ifndef AB_NETNS_EGRESS_INTERNAL_H
#define AB_NETNS_EGRESS_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "netns/egress.h"

/* ---- addresses (egress-addr.c) --------------------------------------- */

/* ab_egress_addr_refusal (egress.h): embedded IPv4 (mapped, compatible,
   NAT64, 6to4) is classified as the IPv4 it carries. */
void ab_egress_addr_to_sockaddr (const struct ab_egress_addr *a, uint16_t port, struct sockaddr_storage *ss,
                                 socklen_t *len);
int ab_egress_addr_from_sockaddr (const struct sockaddr *sa, struct ab_egress_addr *a, uint16_t *port);

/* ---- DNS (egress-dns.c) ---------------------------------------------- */

#define AB_DNS_MAX_UDP 512      /* answers are kept under this without EDNS */
#define AB_DNS_MAX_MSG 4096     /* largest query read over UDP or TCP */
#define AB_DNS_DISPLAY_MAX 1100 /* escaped presentation form of any wire name */

enum
{
  AB_DNS_RCODE_NOERROR = 0,
  AB_DNS_RCODE_FORMERR = 1,
  AB_DNS_RCODE_SERVFAIL = 2,
  AB_DNS_RCODE_NXDOMAIN = 3,
  AB_DNS_RCODE_NOTIMP = 4,
  AB_DNS_RCODE_REFUSED = 5,
};

enum
{
  AB_DNS_T_A = 1,
  AB_DNS_T_AAAA = 28,
  AB_DNS_C_IN = 1,
};

struct ab_dns_query
{
  uint16_t id;
  uint16_t flags; /* as received */
  uint16_t qtype;
  uint16_t qclass;
  size_t question_end; /* offset just past the question */
  bool name_valid;     /* `name` holds a normalised host name */
  char name[AB_EGRESS_NAME_MAX + 1];
  char display[AB_DNS_DISPLAY_MAX]; /* for the record, always set when parse returned >= 0 */
};

/* Parse one query.  Returns AB_DNS_RCODE_NOERROR when the question can be
   answered, AB_DNS_RCODE_FORMERR / AB_DNS_RCODE_NOTIMP when the reply must be
   that error (q->id and q->flags are valid), -1 when the packet must be
   dropped (too short for a header, or a response: never answer answers). */
int ab_dns_parse_query (const uint8_t *buf, size_t len, struct ab_dns_query *q);
/* Build the reply to a parsed query: header, the question copied from buf,
   and one A/AAAA record per address of the query's type (compressed owner
   name, ttl seconds).  Answers that do not fit in cap set TC.  For an error
   rcode with q->question_end == 0 only the header is sent.  Returns the
   length. */
size_t ab_dns_build_reply (const uint8_t *buf, const struct ab_dns_query *q, int rcode,
                           const struct ab_egress_addr *addrs, size_t n_addrs, uint32_t ttl, uint8_t *out,
                           size_t cap);
/* "A", "AAAA", "MX", ... or "TYPE<n>". */
void ab_dns_type_name (uint16_t qtype, char *buf, size_t len);

/* ---- TLS (egress-tls.c) ---------------------------------------------- */

enum
{
  AB_TLS_MORE = 0,       /* a ClientHello so far: read more */
  AB_TLS_HELLO = 1,      /* a complete ClientHello; sni is set ("" when it has none) */
  AB_TLS_NOT_TLS = -1,   /* the first byte is not a TLS handshake record */
  AB_TLS_MALFORMED = -2, /* TLS, but not a well-formed ClientHello */
};

#define AB_TLS_MAX_HELLO 65536 /* reassembled ClientHello bytes we accept */

/* Find the server_name of a ClientHello split over any number of handshake
   records.  sni needs AB_EGRESS_NAME_MAX + 1 bytes; it gets the normalised
   name, and a ClientHello whose host_name is not a valid name is MALFORMED. */
int ab_tls_client_hello_sni (const uint8_t *buf, size_t len, char *sni);

/* ---- HTTP (egress-http.c) -------------------------------------------- */

#define AB_HTTP_MAX_HEAD 16384

enum ab_http_form
{
  AB_HTTP_ORIGIN,    /* GET /path */
  AB_HTTP_ABSOLUTE,  /* GET http://host/path */
  AB_HTTP_AUTHORITY, /* CONNECT host:port */
  AB_HTTP_ASTERISK,  /* OPTIONS * */
};

struct ab_http_head
{
  char method[24];
  int form;                          /* enum ab_http_form */
  bool https_scheme;                 /* absolute form with https:// (refused: we do not originate TLS) */
  char host[AB_EGRESS_NAME_MAX + 3]; /* URI/authority host: a normalised name, "1.2.3.4" or "[v6]" */
  uint16_t port;                     /* URI/authority port, default from the scheme (80) */
  size_t path_off; /* origin-form target inside the buffer (absolute form: after the authority) */
  size_t path_len; /* 0 means "/" */
  int minor;       /* HTTP/1.<minor> */
  size_t line_end; /* offset just past the request line's CRLF */
  size_t head_len; /* offset just past the blank line */
  bool has_host;
  char host_hdr[AB_EGRESS_NAME_MAX + 3]; /* Host header's host, normalised like `host` */
  uint16_t host_hdr_port;                /* 0 when the header had no port */
  /* Where the body ends (RFC 9112 6.3, requests): a chunked body, else
     Content-Length bytes, else none.  Framing two parsers could read
     differently (both headers, two lengths, a coding other than chunked)
     is refused, so the proxy and the upstream agree on where the next
     request starts. */
  bool chunked;
  bool has_length; /* a Content-Length header */
  uint64_t content_length;
  bool upgrade; /* an Upgrade header: the connection may stop being HTTP */
};

enum
{
  AB_HTTP_MORE = 0,
  AB_HTTP_OK = 1,
  AB_HTTP_BAD = -1,     /* malformed: 400 */
  AB_HTTP_TOO_BIG = -2, /* head over AB_HTTP_MAX_HEAD: 431 */
};

/* Parse a request head.  *why gets a short reason on AB_HTTP_BAD. */
int ab_http_parse_head (const char *buf, size_t len, struct ab_http_head *h, const char **why);

/* A chunked request body read as it streams by (RFC 9112 7.1), strictly:
   CRLF only, hex sizes of at most 15 digits, trailer lines without bare CR
   or LF.  Zero-initialise, then feed it the bytes in order. */
struct ab_http_chunked
{
  int state;
  uint64_t left; /* data bytes of the current chunk still to come */
  unsigned digits;
};
/* How many of the n bytes belong to the body (all, or up to its last
   byte: *done is then set), or -1 when they cannot be a chunked body. */
ssize_t ab_http_chunked_scan (struct ab_http_chunked *s, const uint8_t *p, size_t n, bool *done);
/* The head to send upstream for an absolute-form request: origin-form
   request line, the client's headers minus Proxy-* and Connection/Keep-Alive,
   Host added when the client sent none, and "Connection: close" (one request
   per connection: a second request on the same connection could name another
   host).  Returns a new buffer. */
char *ab_http_rewrite_origin (const char *buf, const struct ab_http_head *h, size_t *out_len);

/* ---- the record (egress-record.c) ------------------------------------ */

struct ab_egress_record
{
  pthread_mutex_t lock;
  struct ab_egress_decision *v;
  size_t n, cap, max;
  uint64_t dropped;
};

void ab_egress_record_init (struct ab_egress_record *r, size_t max);
void ab_egress_record_destroy (struct ab_egress_record *r);
void ab_egress_record_add (struct ab_egress_record *r, int proto, const char *protocol, const char *name,
                           const struct ab_egress_addr *addr, uint16_t port, bool allowed, const char *rule);

/* ---- the engine (egress-loop.c, egress-proxy.c, egress-resolve.c) ------ */

struct ab_egress;
struct ab_egress_conn;
struct ab_egress_name;

/* What the engine (egress-loop.c) runs when a name a waiter of that kind
   (AB_WAIT_*) waits on is resolved: the DNS stub's or the proxy's, so the
   resolver calls neither of them directly. */
typedef void (*ab_egress_resolved_fn) (struct ab_egress *e, int kind, void *ptr, struct ab_egress_name *n);

/* A name's pinned addresses: static pins, or the host resolver's first
   answer (filtered), kept for the engine's life so that a later answer can
   never move a name (DNS rebinding). */
enum ab_egress_name_state
{
  AB_NAME_PENDING,  /* a worker is resolving it */
  AB_NAME_RESOLVED, /* addrs is final */
  AB_NAME_FAILED,   /* the resolver failed: retried on the next query */
};

#define AB_EGRESS_MAX_ADDRS 16
#define AB_EGRESS_MAX_NAMES 4096 /* distinct names looked up per engine */

struct ab_egress_waiter
{
  struct ab_egress_waiter *next;
  int kind; /* AB_WAIT_UDP, AB_WAIT_TCPDNS, AB_WAIT_CONN */
  void *ptr;
};

struct ab_egress_name
{
  struct ab_egress_name *next;
  char *name;
  int state;
  struct ab_egress_addr addrs[AB_EGRESS_MAX_ADDRS];
  size_t n_addrs;
  const char *refusal; /* why a FAILED name failed, when it is not the resolver */
  struct ab_egress_waiter *waiters;
  /* The proxy's SSRF verdict per address (NULL: may be connected to) and
     when it was taken: the host-local probe costs four syscalls an address,
     so a connection reuses a verdict younger than AB_EGRESS_PROBE_MS. */
  const char *verdict[AB_EGRESS_MAX_ADDRS];
  uint64_t verdict_ms; /* 0: never taken */
};

enum
{
  AB_EP_LISTEN_HTTP = 1,
  AB_EP_LISTEN_DNS_TCP,
  AB_EP_DNS_UDP,
  AB_EP_WAKE,
  AB_EP_CLIENT,
  AB_EP_UPSTREAM,
  AB_EP_DNS_TCP,
};

/* What epoll_event.data.ptr points at. */
struct ab_egress_ep
{
  int kind;
  int fd;
  uint32_t events; /* interest currently registered, for cheap updates */
  bool registered; /* added to the epoll set (and not removed since) */
  bool removed;    /* taken out for good: updates are ignored */
  void *owner;
};

struct ab_egress_job
{
  struct ab_egress_job *next;
  char *name;
  int gai_error;
  struct ab_egress_addr addrs[AB_EGRESS_MAX_ADDRS];
  size_t n_addrs;
};

/* A pipe the relay splices through (egress-relay.c); rd < 0: none. */
struct ab_egress_pipe
{
  int rd, wr;
  size_t len; /* bytes inside */
  bool full;  /* the last splice into it found no room (or nothing to read): wait for it to drain */
  bool big;   /* grown past the default size (counted in n_big_pipes) */
};

#define AB_EGRESS_PIPE_POOL 32 /* empty pipes kept for the next connections */
#define AB_EGRESS_BIG_PIPES 64 /* pipes grown for bulk transfers, at once */

struct ab_egress
{
  struct ab_egress_policy policy;
  struct ab_egress_options opt;
  uint16_t http_port, dns_port;
  int epfd;
  int wake_fd; /* eventfd: stop requests and resolver completions */
  struct ab_egress_ep listen_http4, listen_http6, listen_dns_tcp, dns_udp, wake;
  pthread_t loop_thread;
  bool loop_started;
  bool stopping; /* set by the loop thread when it sees the stop request */
  volatile int stop_requested;

  /* resolver workers */
  pthread_t workers[2];
  size_t n_workers;
  bool jobs_lock_ready;
  pthread_mutex_t jobs_lock;
  pthread_cond_t jobs_cond;
  struct ab_egress_job *jobs, *jobs_tail, *done;
  bool jobs_quit;

  struct ab_egress_name *names;
  size_t n_names;
  struct ab_egress_name name_overflow; /* handed out once the table is full */
  struct ab_egress_conn *conns;        /* doubly linked */
  size_t n_conns;
  bool reap_pending; /* a connection was closed in this batch: free it after the batch */
  struct ab_egress_dnsconn *dnsconns;
  size_t n_dnsconns;
  struct ab_egress_udpq *udpqs; /* UDP queries waiting for a resolution */
  size_t n_udpqs;

  struct ab_egress_record record;

  struct ab_egress_pipe pipes[AB_EGRESS_PIPE_POOL]; /* empty, ready for reuse */
  size_t n_pipes;
  size_t n_big_pipes;
  size_t n_pipes_open, pipes_max; /* every pipe (in use and pooled), and the fd budget for them */
  bool accept_paused;             /* out of fds: the listeners are not watched until the next sweep */
  ab_egress_resolved_fn resolved; /* set by the engine before the resolver starts */
};

enum
{
  AB_WAIT_UDP = 1,
  AB_WAIT_TCPDNS,
  AB_WAIT_CONN,
};

/* egress-ep.c: epoll registrations, and the listeners' back-off. */
int ab_egress_ep_update (struct ab_egress *e, struct ab_egress_ep *ep, uint32_t events);
void ab_egress_ep_remove (struct ab_egress *e, struct ab_egress_ep *ep);
/* A listener's accept4 failed with errnum. */
void ab_egress_accept_failed (struct ab_egress *e, int errnum);

/* egress-resolve.c: look a name up in the pin table; when it is resolved
   (or pinned) return it, else register the waiter, start a resolution if
   none runs, and return NULL. */
struct ab_egress_name *ab_egress_name_lookup (struct ab_egress *e, const char *name, int kind, void *ptr);
void ab_egress_name_cancel (struct ab_egress *e, void *ptr);
int ab_egress_resolver_start (struct ab_egress *e, ab_error_t *err);
void ab_egress_resolver_stop (struct ab_egress *e);
/* Move finished jobs into the pin table and wake their waiters. */
void ab_egress_resolver_collect (struct ab_egress *e);
void ab_egress_names_free (struct ab_egress *e);

/* egress-dnsserve.c */
void ab_egress_dns_udp_ready (struct ab_egress *e);
void ab_egress_dns_tcp_accept (struct ab_egress *e);
void ab_egress_dns_tcp_event (struct ab_egress *e, struct ab_egress_ep *ep, uint32_t events);
void ab_egress_dns_resolved (struct ab_egress *e, int kind, void *ptr, struct ab_egress_name *n);
void ab_egress_dns_sweep (struct ab_egress *e, uint64_t now_ms, bool all);

/* egress-proxy.c */
void ab_egress_proxy_accept (struct ab_egress *e, struct ab_egress_ep *listener);
void ab_egress_proxy_event (struct ab_egress *e, struct ab_egress_ep *ep, uint32_t events);
void ab_egress_proxy_resolved (struct ab_egress *e, struct ab_egress_conn *c, struct ab_egress_name *n);
void ab_egress_proxy_sweep (struct ab_egress *e, uint64_t now_ms, bool all);

/* ---- proxy connections (egress-proxy.c, egress-head.c, egress-relay.c) - */

#define AB_EGRESS_PROBE_MS 1000
#define RELAY_BUF 65536
#define HEAD_MAX (AB_TLS_MAX_HELLO + 4096) /* a ClientHello split into many records, or an HTTP head */
#define CLOSE_LINGER_MS 2000
#define HALF_OPEN_MS 60000

enum ab_egress_conn_state
{
  AB_CS_HEAD,       /* reading the request head / the first bytes */
  AB_CS_RESOLVING,  /* waiting for the name's addresses */
  AB_CS_CONNECTING, /* upstream connect in progress */
  AB_CS_INSPECT,    /* CONNECT tunnel open: checking the first client bytes */
  AB_CS_RELAY,
  AB_CS_CLOSING, /* flushing a refusal, then draining the client */
};

struct ab_egress_buf
{
  uint8_t *d;
  size_t len, off, cap;
};

/* How the relay reads what the client sends upstream (egress-relay.c). */
enum ab_egress_framing
{
  AB_FR_BLIND,   /* not HTTP (TLS, another protocol in a tunnel): passed as it comes */
  AB_FR_HEAD,    /* the next request head: parsed and checked before it is sent */
  AB_FR_BODY,    /* body_left bytes of the current request */
  AB_FR_CHUNKED, /* a chunked body, read as it passes */
  AB_FR_UPGRADE, /* after an Upgrade request: nothing more until the status (101: blind) */
  AB_FR_DONE,    /* no more requests on this connection: what the client sends is dropped */
};

struct ab_egress_conn
{
  struct ab_egress_conn *prev, *next;
  struct ab_egress_ep cep, uep;
  int state;
  bool dead;
  bool transparent;
  bool tls;                   /* transparent: the head is a ClientHello */
  struct ab_egress_addr odst; /* transparent: the original destination */
  uint16_t oport;
  struct ab_egress_buf head; /* client bytes not yet decided on, then not yet framed (head.off stays 0) */
  struct ab_egress_buf c2u, u2c;
  struct ab_egress_pipe c2u_pipe, u2c_pipe; /* spliced bytes, behind the buffers' */
  bool c2u_nopipe, u2c_nopipe;              /* no pipe to be had: copy through the buffers */
  int fr;                                   /* enum ab_egress_framing of the client's bytes */
  bool fr_keep;                             /* more requests may follow the current one */
  bool fr_upgrade;                          /* the current request has an Upgrade header */
  unsigned n_requests;                      /* requests sent upstream in full */
  uint64_t body_left;
  struct ab_http_chunked chunk;
  char status[12]; /* AB_FR_UPGRADE: the first bytes of the answer */
  size_t status_len;
  size_t forward_from; /* head bytes before this are sent (or replaced by `rewritten`) once connected */
  char *rewritten;     /* absolute-URI request rewritten to origin form */
  size_t rewritten_len;
  char name[AB_EGRESS_NAME_MAX + 3];
  uint16_t port;
  int proto;
  char protocol[24];
  bool literal;
  struct ab_egress_addr cand[AB_EGRESS_MAX_ADDRS];
  size_t n_cand, i_cand;
  bool c_eof, u_eof, u_wshut, c_wshut;
  bool c2u_closed; /* a later request was refused: nothing more goes upstream */
  bool u_reset;    /* the upstream failed (a reset): the client's connection ends with one too */
  uint64_t deadline, last_io;
};

/* egress-ep.c: the clock, buffers and protocol label of a connection. */
uint64_t ab_egress_now_ms (void);
/* Room for n more bytes at the end of b. */
void ab_egress_buf_reserve (struct ab_egress_buf *b, size_t n);
void ab_egress_buf_append (struct ab_egress_buf *b, const void *p, size_t n);
void ab_egress_buf_free (struct ab_egress_buf *b);
size_t ab_egress_buf_pending (const struct ab_egress_buf *b);
/* Read from fd into b while it has room below max.  Returns bytes read, 0 on
   EOF, -1 on EAGAIN, -2 on error. */
ssize_t ab_egress_buf_read (struct ab_egress_buf *b, int fd, size_t max);
void ab_egress_conn_set_protocol (struct ab_egress_conn *c, int proto, const char *text);

/* egress-head.c: the first bytes of a connection, to the proxy itself,
   redirected, or inside a CONNECT tunnel.  Each returns what its caller
   does next, and fills *v for it. */
enum ab_egress_head_next
{
  AB_HEAD_MORE,   /* update the connection: wait for more bytes */
  AB_HEAD_DECIDE, /* c->name and c->port are read: decide, resolve, connect */
  AB_HEAD_REFUSE, /* refuse as v says */
  AB_HEAD_RELAY,  /* the tunnel's first bytes passed: relay */
};
struct ab_egress_head_verdict
{
  int status;                        /* REFUSE: the HTTP status */
  const char *rule;                  /* REFUSE: recorded when not NULL */
  const struct ab_egress_addr *addr; /* REFUSE: the destination to record, or NULL */
  bool frame;                        /* DECIDE, RELAY: h is a request the relay frames */
  bool keep;                         /* ... with keep-alive (the later requests are read too) */
  struct ab_http_head h;
};
int ab_egress_head_explicit (struct ab_egress_conn *c, struct ab_egress_head_verdict *v);
int ab_egress_head_transparent (struct ab_egress_conn *c, struct ab_egress_head_verdict *v);
int ab_egress_head_tunnel (struct ab_egress *e, struct ab_egress_conn *c, struct ab_egress_head_verdict *v);

/* egress-relay.c: the sockets of a connection (interest, close, refusal)
   and the relay of a decided one. */
void ab_egress_conn_close (struct ab_egress *e, struct ab_egress_conn *c);
/* Recompute both sockets' epoll interest from the state and the queues. */
void ab_egress_conn_update (struct ab_egress *e, struct ab_egress_conn *c);
/* Refuse: record the decision (when rule is set), answer what the client
   understands (HTTP status, TLS alert, or nothing inside a tunnel), close
   once flushed. */
void ab_egress_conn_refuse (struct ab_egress *e, struct ab_egress_conn *c, int status, const char *rule,
                            const struct ab_egress_addr *addr);
/* The framing of a request whose head goes upstream now (the first one at
   the decision, the later ones as the relay reads them). */
void ab_egress_relay_request (struct ab_egress_conn *c, const struct ab_http_head *h, bool keep);
/* Connected: send `first` (n bytes: the decided head, or nothing), drop
   `consume` bytes of c->head, frame the rest as c->fr says; the state
   becomes AB_CS_RELAY. */
void ab_egress_relay_start (struct ab_egress *e, struct ab_egress_conn *c, const void *first, size_t n,
                            size_t consume);
/* Write what is queued both ways, propagate half-closes, update interest. */
/* The first bytes inside a CONNECT tunnel, as egress-head.c judges them:
   wait, refuse, or relay (HTTP framed request by request, anything else
   as it comes). */
void ab_egress_relay_tunnel (struct ab_egress *e, struct ab_egress_conn *c);
void ab_egress_relay_kick (struct ab_egress *e, struct ab_egress_conn *c);
/* The sweep's turn for a connection in AB_CS_INSPECT or AB_CS_RELAY: its
   idle and inspection timeouts, and the reset that waits for its bytes. */
void ab_egress_relay_sweep (struct ab_egress *e, struct ab_egress_conn *c, uint64_t now, uint64_t idle);
void ab_egress_relay_event (struct ab_egress *e, struct ab_egress_conn *c, bool client, uint32_t events);
/* Give back a connection's pipes (to the pool when empty). */
void ab_egress_relay_release (struct ab_egress *e, struct ab_egress_conn *c);
void ab_egress_pipes_free (struct ab_egress *e);

#endif
