/* Test driver for the egress wall: the "container" side and the host-side
 * helpers of tests/netns/egress.sh.
 *
 *   netns-driver text [POLICY] [--proxy HTTP DNS PORT,...]
 *   netns-driver serve              commands on stdin, one reply line each:
 *       apply POLICY...             ab_netns_apply in this netns ("-": empty)
 *       proxy HTTP DNS PORT,...     proxy for the next apply
 *       tcp ADDR PORT               connect, send a marker; "ok" or errno name
 *       udp ADDR PORT               sendto a marker; "ok" or errno name
 *       icmp ADDR                   one echo request on a raw socket
 *       udp-range ADDR FROM TO      one datagram to each port; "<errno> <count>"
 *       exit
 *   netns-driver move HOST NEW|- NSFILE     ab_netdev_move
 *   netns-driver denied NSFILE              ab_netns_read_denied
 *   netns-driver bench N                    time ab_netns_apply in N fresh netns
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "netns/netns.h"
#include "netns/nl.h"
#include "base/util.h"
#include "base/gen.h"

static uint16_t proxy_ports[16];
static struct ab_netns_proxy proxy;

static int
parse_proxy (const char *http, const char *dns, const char *ports)
{
  _cleanup_free_ char *copy = xstrdup (ports);
  char *save = NULL;

  memset (&proxy, 0, sizeof proxy);
  proxy.enabled = true;
  proxy.http_port = (uint16_t)atoi (http);
  proxy.dns_port = (uint16_t)atoi (dns);
  proxy.redirect_ports = proxy_ports;
  for (char *t = strtok_r (copy, ",", &save); t != NULL && proxy.n_redirect_ports < 16;
       t = strtok_r (NULL, ",", &save))
    proxy_ports[proxy.n_redirect_ports++] = (uint16_t)atoi (t);
  return 0;
}

static const char *
errname (int e)
{
  const char *n = strerrorname_np (e);
  return n != NULL ? n : "E?";
}

static int
parse_sockaddr (const char *addr, int port, struct sockaddr_storage *ss, socklen_t *len)
{
  struct sockaddr_in *in = (struct sockaddr_in *)ss;
  struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

  memset (ss, 0, sizeof *ss);
  if (inet_pton (AF_INET, addr, &in->sin_addr) == 1)
    {
      in->sin_family = AF_INET;
      in->sin_port = htons ((uint16_t)port);
      *len = sizeof *in;
      return AF_INET;
    }
  if (inet_pton (AF_INET6, addr, &in6->sin6_addr) == 1)
    {
      in6->sin6_family = AF_INET6;
      in6->sin6_port = htons ((uint16_t)port);
      *len = sizeof *in6;
      return AF_INET6;
    }
  return -1;
}

/* Connect with a 10 s bound (a drop without reset would hang for two
   minutes; the bound only turns that into ETIMEDOUT). */
static void
do_tcp (const char *addr, int port)
{
  static const char marker[] = "agentbox-netns-test tcp\n";
  struct sockaddr_storage ss;
  socklen_t len;
  int family = parse_sockaddr (addr, port, &ss, &len);
  _cleanup_close_ int fd = -1;
  struct pollfd pfd;
  int e = 0;
  socklen_t elen = sizeof e;

  if (family < 0)
    {
      printf ("EINVAL\n");
      return;
    }
  fd = socket (family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (connect (fd, (struct sockaddr *)&ss, len) < 0 && errno != EINPROGRESS)
    {
      printf ("%s\n", errname (errno));
      return;
    }
  pfd = (struct pollfd){ .fd = fd, .events = POLLOUT };
  if (poll (&pfd, 1, 10000) == 0)
    {
      printf ("ETIMEDOUT\n");
      return;
    }
  getsockopt (fd, SOL_SOCKET, SO_ERROR, &e, &elen);
  if (e != 0)
    {
      printf ("%s\n", errname (e));
      return;
    }
  if (write (fd, marker, sizeof marker - 1) < 0)
    {
      printf ("%s\n", errname (errno));
      return;
    }
  /* Wait for the listener to close, so its log line is written. */
  pfd.events = POLLIN;
  poll (&pfd, 1, 5000);
  printf ("ok\n");
}

static void
do_udp (const char *addr, int port)
{
  static const char marker[] = "agentbox-netns-test udp\n";
  struct sockaddr_storage ss;
  socklen_t len;
  int family = parse_sockaddr (addr, port, &ss, &len);
  _cleanup_close_ int fd = -1;

  if (family < 0)
    {
      printf ("EINVAL\n");
      return;
    }
  fd = socket (family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (sendto (fd, marker, sizeof marker - 1, 0, (struct sockaddr *)&ss, len) < 0)
    printf ("%s\n", errname (errno));
  else
    printf ("ok\n");
}

/* One datagram to each port of FROM..TO: the replies of the same kind are
   counted, e.g. "EPERM 4100". */
static void
do_udp_range (const char *addr, int from, int to)
{
  static const char marker[] = "agentbox-netns-test udp\n";
  struct sockaddr_storage ss;
  socklen_t len;
  int family = parse_sockaddr (addr, from, &ss, &len);
  _cleanup_close_ int fd = -1;
  int first = 0, n = 0;

  if (family < 0 || from > to)
    {
      printf ("EINVAL\n");
      return;
    }
  fd = socket (family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  for (int port = from; port <= to; port++)
    {
      int e = 0;

      if (family == AF_INET)
        ((struct sockaddr_in *)&ss)->sin_port = htons ((uint16_t)port);
      else
        ((struct sockaddr_in6 *)&ss)->sin6_port = htons ((uint16_t)port);
      if (sendto (fd, marker, sizeof marker - 1, 0, (struct sockaddr *)&ss, len) < 0)
        e = errno;
      if (port == from)
        first = e;
      n += e == first;
    }
  printf ("%s %d\n", first == 0 ? "ok" : errname (first), n);
}

static uint16_t
inet_csum (const void *data, size_t len)
{
  const uint8_t *p = data;
  uint32_t sum = 0;

  for (size_t i = 0; i + 1 < len; i += 2)
    sum += (uint32_t)(p[i] << 8 | p[i + 1]);
  if (len & 1)
    sum += (uint32_t)p[len - 1] << 8;
  while (sum >> 16)
    sum = (sum & 0xffff) + (sum >> 16);
  return htons ((uint16_t)~sum);
}

static void
do_icmp (const char *addr)
{
  uint8_t pkt[8 + 24] = { 0 };
  struct sockaddr_storage ss;
  socklen_t len;
  int family = parse_sockaddr (addr, 0, &ss, &len);
  _cleanup_close_ int fd = -1;

  if (family < 0)
    {
      printf ("EINVAL\n");
      return;
    }
  memcpy (pkt + 8, "agentbox-netns-test icmp", 24);
  pkt[0] = family == AF_INET ? ICMP_ECHO : ICMP6_ECHO_REQUEST;
  pkt[4] = 0xab;
  pkt[6] = 1;
  /* The kernel computes the ICMPv6 checksum of raw sockets itself. */
  if (family == AF_INET)
    memcpy (pkt + 2, &(uint16_t){ inet_csum (pkt, sizeof pkt) }, 2);
  fd = socket (family, SOCK_RAW | SOCK_CLOEXEC, family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6);
  if (fd < 0)
    {
      printf ("%s\n", errname (errno));
      return;
    }
  if (sendto (fd, pkt, sizeof pkt, 0, (struct sockaddr *)&ss, len) < 0)
    printf ("%s\n", errname (errno));
  else
    printf ("ok\n");
}

static int
do_apply (const char *value)
{
  struct ab_net_policy p;
  ab_error_t err = { 0 };
  int r;

  if (ab_net_policy_parse (strcmp (value, "-") == 0 ? "" : value, &p, &err) < 0)
    {
      printf ("error: %s\n", err.msg);
      return -1;
    }
  /* (lo_only false: the world of egress.sh has links, and the full table
     is what it checks.) */
  r = ab_netns_apply (-1, &p, proxy.enabled ? &proxy : NULL, false, NULL, &err);
  ab_net_policy_free (&p);
  if (r < 0)
    {
      printf ("error: %s\n", err.msg);
      return -1;
    }
  printf ("ok\n");
  return 0;
}

static int
serve (void)
{
  static char line[65536];

  setvbuf (stdout, NULL, _IOLBF, 0);
  while (fgets (line, sizeof line, stdin) != NULL)
    {
      char a[256] = "", b[256] = "", c[256] = "";
      char *nl = strchr (line, '\n');

      if (nl != NULL)
        *nl = '\0';
      if (strncmp (line, "apply ", 6) == 0)
        do_apply (line + 6);
      else if (sscanf (line, "proxy %255s %255s %255s", a, b, c) == 3)
        {
          parse_proxy (a, b, c);
          printf ("ok\n");
        }
      else if (sscanf (line, "tcp %255s %255s", a, b) == 2)
        do_tcp (a, atoi (b));
      else if (sscanf (line, "udp-range %255s %255s %255s", a, b, c) == 3)
        do_udp_range (a, atoi (b), atoi (c));
      else if (sscanf (line, "udp %255s %255s", a, b) == 2)
        do_udp (a, atoi (b));
      else if (sscanf (line, "icmp %255s", a) == 1)
        do_icmp (a);
      else if (strcmp (line, "exit") == 0)
        return 0;
      else
        printf ("error: unknown command\n");
    }
  return 0;
}

static int
open_ns (const char *path)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);

  if (fd < 0)
    fprintf (stderr, "netns-driver: open %s: %s\n", path, strerror (errno));
  return fd;
}

static int
cmd_move (const char *host, const char *name, const char *nsfile)
{
  _cleanup_close_ int fd = open_ns (nsfile);
  ab_error_t err = { 0 };

  if (fd < 0)
    return 2;
  if (ab_netdev_move (host, strcmp (name, "-") == 0 ? NULL : name, fd, &err) < 0)
    {
      printf ("error: %s\n", err.msg);
      return 1;
    }
  printf ("ok\n");
  return 0;
}

static int
cmd_denied (const char *nsfile)
{
  _cleanup_close_ int fd = open_ns (nsfile);
  _cleanup_free_ struct ab_net_denied *d = NULL;
  ab_error_t err = { 0 };
  size_t n;

  if (fd < 0)
    return 2;
  if (ab_netns_read_denied (fd, &d, &n, &err) < 0)
    {
      printf ("error: %s\n", err.msg);
      return 1;
    }
  for (size_t i = 0; i < n; i++)
    {
      char addr[INET6_ADDRSTRLEN];

      inet_ntop (d[i].family, d[i].addr, addr, sizeof addr);
      printf ("%s %s %d %u %llu\n", d[i].family == AF_INET ? "ipv4" : "ipv6", addr, d[i].proto, d[i].port,
              (unsigned long long)d[i].packets);
    }
  return 0;
}

static int
u64_cmp (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* One sample in a fresh network namespace of a child process. */
static int
bench_one (bool full, uint64_t *ns)
{
  int fds[2];
  pid_t pid;
  int status;

  if (pipe2 (fds, O_CLOEXEC) < 0)
    return -1;
  pid = fork ();
  if (pid == 0)
    {
      struct ab_net_policy p;
      ab_error_t err = { 0 };
      uint64_t t0, t;

      if (unshare (CLONE_NEWNET) < 0
          || ab_net_policy_parse ("192.0.2.1:443/tcp,198.51.100.0/24:53/udp,[2001:db8::/32]:443", &p, &err)
                 < 0)
        _exit (1);
      t0 = ab_now_monotonic_ns ();
      struct mnl_socket *nl;

      if ((full ? ab_netns_apply (-1, &p, NULL, false, NULL, &err)
                : (nl = ab_nl_open (-1, NETLINK_ROUTE, &err)) == NULL ? -1 : ab_netns_setup_routes (nl, &err))
          < 0)
        {
          fprintf (stderr, "bench: %s\n", err.msg);
          _exit (1);
        }
      t = ab_now_monotonic_ns () - t0;
      _exit (write (fds[1], &t, sizeof t) == sizeof t ? 0 : 1);
    }
  close (fds[1]);
  if (pid < 0 || read (fds[0], ns, sizeof *ns) != sizeof *ns)
    {
      close (fds[0]);
      if (pid > 0)
        waitpid (pid, &status, 0);
      return -1;
    }
  close (fds[0]);
  waitpid (pid, &status, 0);
  return WIFEXITED (status) && WEXITSTATUS (status) == 0 ? 0 : -1;
}

static int
cmd_bench (int n)
{
  static const char *const what[]
      = { "ab_netns_apply (nftables batch, lo up, routes)", "lo up + routes only" };

  for (int k = 0; k < 2; k++)
    {
      _cleanup_free_ uint64_t *v = xcalloc ((size_t)n, sizeof *v);

      for (int i = 0; i < n; i++)
        if (bench_one (k == 0, &v[i]) < 0)
          {
            fprintf (stderr, "bench: run %d failed\n", i);
            return 1;
          }
      qsort (v, (size_t)n, sizeof *v, u64_cmp);
      printf ("%-48s runs %d  median %7.1f us  p90 %7.1f us  min %7.1f us  max %7.1f us\n", what[k], n,
              v[n / 2] / 1e3, v[n * 9 / 10] / 1e3, v[0] / 1e3, v[n - 1] / 1e3);
    }
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc >= 2 && strcmp (argv[1], "text") == 0)
    {
      struct ab_net_policy p = { 0 };
      ab_error_t err = { 0 };
      _cleanup_free_ char *text = NULL;
      int i = 2;

      if (argc > i && strcmp (argv[i], "--proxy") != 0)
        {
          if (ab_net_policy_parse (argv[i], &p, &err) < 0)
            {
              fprintf (stderr, "%s\n", err.msg);
              return 1;
            }
          i++;
        }
      if (argc == i + 4 && strcmp (argv[i], "--proxy") == 0)
        parse_proxy (argv[i + 1], argv[i + 2], argv[i + 3]);
      text = ab_netns_rules_text (&p, proxy.enabled ? &proxy : NULL, false);
      fputs (text, stdout);
      ab_net_policy_free (&p);
      return 0;
    }
  if (argc == 2 && strcmp (argv[1], "serve") == 0)
    return serve ();
  if (argc == 5 && strcmp (argv[1], "move") == 0)
    return cmd_move (argv[2], argv[3], argv[4]);
  if ((argc == 3 || argc == 4) && strcmp (argv[1], "denied") == 0)
    return cmd_denied (argv[2]);
  if (argc == 3 && strcmp (argv[1], "bench") == 0)
    return cmd_bench (atoi (argv[2]) > 0 ? atoi (argv[2]) : 100);
  fprintf (stderr, "usage: netns-driver text|serve|move|denied|bench ...\n");
  return 2;
}
