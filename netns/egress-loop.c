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

struct mk_listeners
{
  int netns_fd;
  uint16_t http_port, dns_port;
  bool http_port_fixed;
  int http4, http6, dns_udp, dns_tcp;
  int errnum;
  char what[96];
};

static int
mk_socket (struct mk_listeners *m, int family, int type, uint16_t port, const char *what)
{
  struct sockaddr_storage ss;
  struct ab_egress_addr a = { .family = family };
  socklen_t sl;
  int one = 1, fd;

  if (family == AF_INET)
    a.addr[0] = 127, a.addr[3] = 1;
  else
    a.addr[15] = 1;
  fd = socket (family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0)
    goto fail;
  /* No SO_REUSEADDR on UDP and no SO_REUSEPORT at all: either would let a
     process in the container bind the same port and take our traffic. */
  if (type == SOCK_STREAM && setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0)
    goto fail;
  /* Accepted sockets inherit it: the relay writes what it has at once. */
  if (type == SOCK_STREAM && setsockopt (fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0)
    goto fail;
  if (family == AF_INET6 && setsockopt (fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) < 0)
    goto fail;
  ab_egress_addr_to_sockaddr (&a, port, &ss, &sl);
  if (bind (fd, (struct sockaddr *)&ss, sl) < 0)
    goto fail;
  if (type == SOCK_STREAM && listen (fd, 512) < 0)
    goto fail;
  return fd;

fail:
  m->errnum = errno;
  snprintf (m->what, sizeof m->what, "%s", what);
  if (fd >= 0)
    close (fd);
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
lo_up (void)
{
  struct ifreq ifr = { 0 };
  _cleanup_close_ int fd = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

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

/* Runs in a thread of its own that enters the container's netns and exits
   when the sockets exist: the namespace sticks to the sockets, and no
   thread of the supervisor is left inside the container's netns. */
static void *
mk_listeners_main (void *arg)
{
  struct mk_listeners *m = arg;

  if (setns (m->netns_fd, CLONE_NEWNET) < 0)
    {
      m->errnum = errno;
      snprintf (m->what, sizeof m->what, "setns into the container netns");
      return NULL;
    }
  if (lo_up () < 0)
    {
      m->errnum = errno;
      snprintf (m->what, sizeof m->what, "bring up lo in the container netns");
      return NULL;
    }
  m->http4 = mk_socket (m, AF_INET, SOCK_STREAM, m->http_port, "listen on 127.0.0.1 (proxy)");
  if (m->http4 < 0 && m->errnum == EADDRINUSE && !m->http_port_fixed)
    m->http4 = mk_socket (m, AF_INET, SOCK_STREAM, 0, "listen on 127.0.0.1 (proxy)");
  if (m->http4 < 0)
    return NULL;
  m->http_port = local_port (m->http4);
  /* [::1] too, for IPv6 connections the netns redirects; optional, since
     IPv6 may be disabled in the namespace. */
  m->http6 = mk_socket (m, AF_INET6, SOCK_STREAM, m->http_port, "listen on [::1] (proxy)");
  m->errnum = 0;
  m->dns_udp = mk_socket (m, AF_INET, SOCK_DGRAM, m->dns_port, "bind 127.0.0.1 udp (DNS)");
  if (m->dns_udp < 0)
    return NULL;
  m->dns_tcp = mk_socket (m, AF_INET, SOCK_STREAM, m->dns_port, "listen on 127.0.0.1 tcp (DNS)");
  return NULL;
}

static int
make_listeners (struct ab_egress *e, int netns_fd, ab_error_t *err)
{
  struct mk_listeners m = { .netns_fd = netns_fd,
                            .http_port = e->opt.http_port ? e->opt.http_port : DEFAULT_HTTP_PORT,
                            .http_port_fixed = e->opt.http_port != 0,
                            .dns_port = e->opt.dns_port ? e->opt.dns_port : 53,
                            .http4 = -1,
                            .http6 = -1,
                            .dns_udp = -1,
                            .dns_tcp = -1 };
  pthread_t t;
  int r;

  r = pthread_create (&t, NULL, mk_listeners_main, &m);
  if (r != 0)
    return ab_error_set (err, r, "egress: start the listener thread");
  pthread_join (t, NULL);
  e->listen_http4 = (struct ab_egress_ep){ .kind = AB_EP_LISTEN_HTTP, .fd = m.http4 };
  e->listen_http6 = (struct ab_egress_ep){ .kind = AB_EP_LISTEN_HTTP, .fd = m.http6 };
  e->dns_udp = (struct ab_egress_ep){ .kind = AB_EP_DNS_UDP, .fd = m.dns_udp };
  e->listen_dns_tcp = (struct ab_egress_ep){ .kind = AB_EP_LISTEN_DNS_TCP, .fd = m.dns_tcp };
  if (m.errnum != 0)
    return ab_error_set (err, m.errnum, "egress: %s", m.what);
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

