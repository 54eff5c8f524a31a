/* The engine: listeners created inside the container's netns, one epoll
 * loop thread in the host netns, start and stop.  The top of the engine:
 * it dispatches to the DNS stub, the proxy and the resolver. */
#include "config.h"

#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "netns/egress-internal.h"
#include "netns/nl.h"

#define DEFAULT_HTTP_PORT 3128
#define SWEEP_MS 250

static void
accept_resume (struct ab_egress *e)
{
  struct ab_egress_ep *eps[] = { &e->listen_http4, &e->listen_http6, &e->listen_dns_tcp };

  for (size_t i = 0; i < AB_ARRAY_SIZE (eps); i++)
    if (eps[i]->fd >= 0)
      ab_egress_ep_update (e, eps[i], EPOLLIN);
  e->accept_paused = false;
}

/* ---- listeners, made inside the container's netns --------------------- */

/* The sockets are made in the container's netns (netns/nl.h, by a thread
   or, rootless, a helper that enters it); binding them, lo's ioctl and
   listen are done from here: each is checked against the namespace's
   owner, the container's user namespace, in which we hold every
   capability (port 53 needs CAP_NET_BIND_SERVICE there). */
enum
{
  SOCK_LO,
  SOCK_HTTP4,
  SOCK_HTTP6,
  SOCK_DNS_UDP,
  SOCK_DNS_TCP,
  SOCK__N
};

struct mk_listeners
{
  struct ab_sock_req s[SOCK__N];
  uint16_t http_port, dns_port;
  bool http_port_fixed;
  int errnum;
  char what[96];
};

/* Bind (and listen on) socket k at loopback:port; on failure record
   errno and what, and leave the socket to the caller. */
static int
mk_bind (struct mk_listeners *m, int k, uint16_t port, const char *what)
{
  struct ab_sock_req *r = &m->s[k];
  struct sockaddr_storage ss;
  struct ab_egress_addr a = { .family = r->domain };
  socklen_t sl;
  int one = 1;

  if (r->domain == AF_INET)
    a.addr[0] = 127, a.addr[3] = 1;
  else
    a.addr[15] = 1;
  if (r->fd < 0)
    {
      errno = r->errnum;
      goto fail;
    }
  /* No SO_REUSEADDR on UDP and no SO_REUSEPORT at all: either would let a
     process in the container bind the same port and take our traffic. */
  if ((r->type & SOCK_STREAM) && setsockopt (r->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0)
    goto fail;
  /* Accepted sockets inherit it: the relay writes what it has at once. */
  if ((r->type & SOCK_STREAM) && setsockopt (r->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0)
    goto fail;
  if (r->domain == AF_INET6 && setsockopt (r->fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) < 0)
    goto fail;
  ab_egress_addr_to_sockaddr (&a, port, &ss, &sl);
  if (bind (r->fd, (struct sockaddr *)&ss, sl) < 0)
    goto fail;
  if ((r->type & SOCK_STREAM) && listen (r->fd, 512) < 0)
    goto fail;
  return r->fd;

fail:
  m->errnum = errno;
  snprintf (m->what, sizeof m->what, "%s", what);
  return -1;
}

static uint16_t
local_port (int fd)
{
  struct sockaddr_storage ss;
  socklen_t sl = sizeof ss;
  struct ab_egress_addr a;
  uint16_t port = 0;

  if (getsockname (fd, (struct sockaddr *)&ss, &sl) == 0)
    ab_egress_addr_from_sockaddr ((struct sockaddr *)&ss, &a, &port);
  return port;
}

/* 127.0.0.1 exists only once lo is up, and a new netns has it down. */
static int
lo_up (int fd)
{
  struct ifreq ifr = { 0 };

  if (fd < 0)
    return -1;
  snprintf (ifr.ifr_name, sizeof ifr.ifr_name, "lo");
  if (ioctl (fd, SIOCGIFFLAGS, &ifr) < 0)
    return -1;
  if (ifr.ifr_flags & IFF_UP)
    return 0;
  ifr.ifr_flags |= IFF_UP;
  return ioctl (fd, SIOCSIFFLAGS, &ifr);
}

/* The listeners; -1 with m->errnum and m->what on failure. */
static int
bind_listeners (struct mk_listeners *m)
{
  if (lo_up (m->s[SOCK_LO].fd) < 0)
    {
      m->errnum = m->s[SOCK_LO].fd < 0 ? m->s[SOCK_LO].errnum : errno;
      snprintf (m->what, sizeof m->what, "bring up lo in the container netns");
      return -1;
    }
  if (mk_bind (m, SOCK_HTTP4, m->http_port, "listen on 127.0.0.1 (proxy)") < 0)
    {
      /* taken (a joined namespace): any port, unless the caller fixed it */
      if (m->errnum != EADDRINUSE || m->http_port_fixed)
        return -1;
      m->errnum = 0;
      if (mk_bind (m, SOCK_HTTP4, 0, "listen on 127.0.0.1 (proxy)") < 0)
        return -1;
    }
  m->http_port = local_port (m->s[SOCK_HTTP4].fd);
  /* [::1] too, for IPv6 connections the netns redirects; optional, since
     IPv6 may be disabled in the namespace. */
  if (mk_bind (m, SOCK_HTTP6, m->http_port, "listen on [::1] (proxy)") < 0)
    {
      ab_closep_now (&m->s[SOCK_HTTP6].fd);
      m->errnum = 0;
    }
  if (mk_bind (m, SOCK_DNS_UDP, m->dns_port, "bind 127.0.0.1 udp (DNS)") < 0)
    return -1;
  return mk_bind (m, SOCK_DNS_TCP, m->dns_port, "listen on 127.0.0.1 tcp (DNS)");
}

static int
make_listeners (struct ab_egress *e, int netns_fd, ab_error_t *err)
{
  struct mk_listeners m = { .http_port = e->opt.http_port ? e->opt.http_port : DEFAULT_HTTP_PORT,
                            .http_port_fixed = e->opt.http_port != 0,
                            .dns_port = e->opt.dns_port ? e->opt.dns_port : 53 };
  static const int kinds[SOCK__N][2] = { [SOCK_LO] = { AF_INET, SOCK_DGRAM },
                                         [SOCK_HTTP4] = { AF_INET, SOCK_STREAM },
                                         [SOCK_HTTP6] = { AF_INET6, SOCK_STREAM },
                                         [SOCK_DNS_UDP] = { AF_INET, SOCK_DGRAM },
                                         [SOCK_DNS_TCP] = { AF_INET, SOCK_STREAM } };
  int r;

  for (int k = 0; k < SOCK__N; k++)
    m.s[k] = (struct ab_sock_req){ .domain = kinds[k][0],
                                   .type = kinds[k][1] | (k == SOCK_LO ? 0 : SOCK_NONBLOCK) };
  if (ab_netns_sockets (netns_fd, m.s, SOCK__N, err) < 0)
    return ab_error_prefix (err, "egress");
  r = bind_listeners (&m);
  ab_closep_now (&m.s[SOCK_LO].fd);
  if (r < 0)
    {
      for (int k = 0; k < SOCK__N; k++)
        ab_closep_now (&m.s[k].fd);
      return ab_error_set (err, m.errnum, "egress: %s", m.what);
    }
  e->listen_http4 = (struct ab_egress_ep){ .kind = AB_EP_LISTEN_HTTP, .fd = m.s[SOCK_HTTP4].fd };
  e->listen_http6 = (struct ab_egress_ep){ .kind = AB_EP_LISTEN_HTTP, .fd = m.s[SOCK_HTTP6].fd };
  e->dns_udp = (struct ab_egress_ep){ .kind = AB_EP_DNS_UDP, .fd = m.s[SOCK_DNS_UDP].fd };
  e->listen_dns_tcp = (struct ab_egress_ep){ .kind = AB_EP_LISTEN_DNS_TCP, .fd = m.s[SOCK_DNS_TCP].fd };
  e->http_port = m.http_port;
  e->dns_port = m.dns_port;
  return 0;
}

/* ---- the loop --------------------------------------------------------- */

static void *
loop_main (void *arg)
{
  struct ab_egress *e = arg;
  struct epoll_event evs[64];
  uint64_t last_sweep = ab_egress_now_ms ();
  sigset_t pipe_sig;

  /* splice(2) to a socket whose peer is gone raises SIGPIPE (it has no
     MSG_NOSIGNAL): blocked here, it stays pending on this thread, and the
     write fails with EPIPE as it should. */
  sigemptyset (&pipe_sig);
  sigaddset (&pipe_sig, SIGPIPE);
  pthread_sigmask (SIG_BLOCK, &pipe_sig, NULL);

  while (!e->stopping)
    {
      int n = epoll_wait (e->epfd, evs, AB_ARRAY_SIZE (evs), SWEEP_MS);
      uint64_t now;

      for (int i = 0; i < n; i++)
        {
          struct ab_egress_ep *ep = evs[i].data.ptr;
          switch (ep->kind)
            {
            case AB_EP_WAKE:
              {
                uint64_t v;
                if (read (e->wake_fd, &v, sizeof v) < 0 && errno != EAGAIN)
                  abort ();
                if (__atomic_load_n (&e->stop_requested, __ATOMIC_ACQUIRE))
                  e->stopping = true;
                ab_egress_resolver_collect (e);
              }
              break;
            case AB_EP_LISTEN_HTTP:
              ab_egress_proxy_accept (e, ep);
              break;
            case AB_EP_LISTEN_DNS_TCP:
              ab_egress_dns_tcp_accept (e);
              break;
            case AB_EP_DNS_UDP:
              ab_egress_dns_udp_ready (e);
              break;
            case AB_EP_CLIENT:
            case AB_EP_UPSTREAM:
              ab_egress_proxy_event (e, ep, evs[i].events);
              break;
            case AB_EP_DNS_TCP:
              ab_egress_dns_tcp_event (e, ep, evs[i].events);
              break;
            }
        }
      /* Connections closed in this batch are freed here, after it: a later
         event of the same batch may still point at them. */
      now = ab_egress_now_ms ();
      if (e->reap_pending || now - last_sweep >= SWEEP_MS || n == 0)
        {
          ab_egress_proxy_sweep (e, now, false);
          ab_egress_dns_sweep (e, now, false);
          e->reap_pending = false; /* the sweeps freed what they closed too */
          last_sweep = now;
          if (e->accept_paused)
            accept_resume (e);
        }
    }
  ab_egress_proxy_sweep (e, ab_egress_now_ms (), true);
  ab_egress_dns_sweep (e, ab_egress_now_ms (), true);
  return NULL;
}

static void
close_ep (struct ab_egress *e, struct ab_egress_ep *ep)
{
  if (ep->fd < 0)
    return;
  ab_egress_ep_remove (e, ep);
  close (ep->fd);
  ep->fd = -1;
}

void
ab_egress_stop (struct ab_egress *e)
{
  uint64_t one = 1;

  if (e == NULL)
    return;
  if (e->loop_started)
    {
      __atomic_store_n (&e->stop_requested, 1, __ATOMIC_RELEASE);
      if (write (e->wake_fd, &one, sizeof one) < 0)
        abort (); /* the loop could never be told to stop */
      pthread_join (e->loop_thread, NULL);
      e->loop_started = false;
    }
  if (e->n_workers > 0 || e->jobs_lock_ready)
    {
      ab_egress_resolver_stop (e);
      e->jobs_lock_ready = false;
    }
  close_ep (e, &e->listen_http4);
  close_ep (e, &e->listen_http6);
  close_ep (e, &e->listen_dns_tcp);
  close_ep (e, &e->dns_udp);
  close_ep (e, &e->wake);
  e->wake_fd = -1;
  ab_egress_pipes_free (e);
  if (e->epfd >= 0)
    close (e->epfd);
  e->epfd = -1;
  ab_egress_names_free (e);
}

void
ab_egress_free (struct ab_egress *e)
{
  if (e == NULL)
    return;
  ab_egress_stop (e);
  ab_egress_policy_free (&e->policy);
  ab_egress_record_destroy (&e->record);
  free (e);
}

static void
egress_freep (struct ab_egress **e)
{
  ab_egress_free (*e);
}

/* A name a waiter waits on is resolved: the DNS stub's waiters and the
   proxy's connections each go back to their own file. */
static void
on_resolved (struct ab_egress *e, int kind, void *ptr, struct ab_egress_name *n)
{
  if (kind == AB_WAIT_CONN)
    ab_egress_proxy_resolved (e, ptr, n);
  else
    ab_egress_dns_resolved (e, kind, ptr, n);
}

int
ab_egress_start (const struct ab_egress_policy *p, int netns_fd, const struct ab_egress_options *opt,
                 struct ab_egress **out, ab_error_t *err)
{
  _cleanup_ (egress_freep) struct ab_egress *e = xzalloc (sizeof *e);
  struct ab_egress_ep *eps[5];
  struct rlimit nofile;
  int r;

  e->epfd = e->wake_fd = -1;
  e->listen_http4.fd = e->listen_http6.fd = e->listen_dns_tcp.fd = e->dns_udp.fd = e->wake.fd = -1;
  if (opt != NULL)
    e->opt = *opt;
  if (e->opt.head_timeout_ms == 0)
    e->opt.head_timeout_ms = 10000;
  if (e->opt.connect_timeout_ms == 0)
    e->opt.connect_timeout_ms = 10000;
  if (e->opt.idle_timeout_ms == 0)
    e->opt.idle_timeout_ms = 300000;
  if (e->opt.max_connections == 0)
    e->opt.max_connections = 512;
  if (e->opt.max_decisions == 0)
    e->opt.max_decisions = 10000;
  ab_egress_policy_copy (&e->policy, p);
  ab_egress_record_init (&e->record, e->opt.max_decisions);
  /* Pipes may take a quarter of the process's file descriptors (the engine
     shares them with the supervisor); past that the relay copies. */
  e->pipes_max = getrlimit (RLIMIT_NOFILE, &nofile) < 0 || nofile.rlim_cur == RLIM_INFINITY
                     ? SIZE_MAX
                     : (size_t)nofile.rlim_cur / 8;

  e->epfd = epoll_create1 (EPOLL_CLOEXEC);
  if (e->epfd < 0)
    return ab_error_set (err, errno, "egress: epoll_create1");
  e->wake_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (e->wake_fd < 0)
    return ab_error_set (err, errno, "egress: eventfd");
  e->wake = (struct ab_egress_ep){ .kind = AB_EP_WAKE, .fd = e->wake_fd };
  if (make_listeners (e, netns_fd, err) < 0)
    return -1;
  eps[0] = &e->wake, eps[1] = &e->listen_http4, eps[2] = &e->listen_http6, eps[3] = &e->dns_udp;
  eps[4] = &e->listen_dns_tcp;
  for (size_t i = 0; i < AB_ARRAY_SIZE (eps); i++)
    if (eps[i]->fd >= 0 && ab_egress_ep_update (e, eps[i], EPOLLIN) < 0)
      return ab_error_set (err, errno, "egress: epoll_ctl");

  e->jobs_lock_ready = true;
  e->resolved = on_resolved;
  if (ab_egress_resolver_start (e, err) < 0)
    return -1;
  r = pthread_create (&e->loop_thread, NULL, loop_main, e);
  if (r != 0)
    return ab_error_set (err, r, "egress: start the event loop thread");
  e->loop_started = true;
  *out = ab_steal_ptr (&e);
  return 0;
}

void
ab_egress_ports (const struct ab_egress *e, uint16_t *http_port, uint16_t *dns_port)
{
  if (http_port)
    *http_port = e->http_port;
  if (dns_port)
    *dns_port = e->dns_port;
}

