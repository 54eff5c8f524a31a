/* The two ends of the egress proxy benchmark (tests/bench/proxy.sh), in C so
 * that the figure measures the proxy and not an interpreter.
 *
 *   httpbench serve PORT
 *       HTTP/1.1 on 0.0.0.0:PORT (a pool of threads, blocking I/O); prints
 *       "ready".  GET /big?n=N answers N bytes, any other path a 13-byte
 *       body; every answer has Content-Length and Connection: close.
 *
 *   httpbench get MODE ADDR PORT NAME PATH RUNS
 *       RUNS requests, each on a new connection, one after the other; one
 *       line per request: "<microseconds> <body bytes>", from connect() to
 *       the last body byte (the head's Content-Length is read to the end).
 *       MODE says what the client speaks to ADDR:PORT:
 *         direct   GET PATH, Host NAME (to the server, or captured)
 *         proxy    GET http://NAME/PATH (an HTTP_PROXY client)
 *         connect  CONNECT NAME:80, then GET PATH inside the tunnel
 *       A request that fails prints "fail <reason>" and the client goes on.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (1 << 20)

static char pattern[CHUNK];

static int
send_all (int fd, const char *p, size_t n)
{
  while (n > 0)
    {
      ssize_t w = send (fd, p, n, MSG_NOSIGNAL);
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        return -1;
      p += w, n -= (size_t)w;
    }
  return 0;
}

/* Read a head (up to the blank line) into buf; the bytes after it stay in
   buf[*head_len .. *got].  Returns 0 or -1. */
static int
read_head (int fd, char *buf, size_t cap, size_t *got, size_t *head_len)
{
  *got = 0;
  for (;;)
    {
      char *end;
      ssize_t r;

      buf[*got] = '\0';
      end = strstr (buf, "\r\n\r\n");
      if (end != NULL)
        {
          *head_len = (size_t)(end + 4 - buf);
          return 0;
        }
      if (*got + 1 >= cap)
        return -1;
      r = recv (fd, buf + *got, cap - 1 - *got, 0);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        return -1;
      *got += (size_t)r;
    }
}

static void *
serve_thread (void *arg)
{
  int lfd = *(int *)arg;
  char buf[8192], head[256];

  for (;;)
    {
      int fd = accept (lfd, NULL, NULL), one = 1;
      size_t got, hl;
      unsigned long long n = 0;

      if (fd < 0)
        continue;
      setsockopt (fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      if (read_head (fd, buf, sizeof buf, &got, &hl) == 0)
        {
          const char *p = strstr (buf, " /big?n=");
          if (p != NULL && p < strstr (buf, "\r\n"))
            {
              n = strtoull (p + 8, NULL, 10);
              int hlen = snprintf (head, sizeof head,
                                   "HTTP/1.1 200 OK\r\nContent-Length: %llu\r\nConnection: close\r\n\r\n", n);
              if (send_all (fd, head, (size_t)hlen) == 0)
                while (n > 0)
                  {
                    size_t k = n < CHUNK ? (size_t)n : CHUNK;
                    if (send_all (fd, pattern, k) < 0)
                      break;
                    n -= k;
                  }
            }
          else
            {
              static const char small[] = "HTTP/1.1 200 OK\r\nContent-Length: 13\r\nConnection: close\r\n\r\n"
                                          "hello, bench\n";
              send_all (fd, small, sizeof small - 1);
            }
        }
      close (fd);
    }
  return NULL;
}

static int
serve (int port)
{
  struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons ((uint16_t)port) };
  int lfd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
  pthread_t t;

  for (size_t i = 0; i < sizeof pattern; i++)
    pattern[i] = (char)('a' + i % 26);
  if (lfd < 0 || setsockopt (lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0
      || bind (lfd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen (lfd, 256) < 0)
    {
      perror ("httpbench: listen");
      return 1;
    }
  for (int i = 0; i < 8; i++)
    if (pthread_create (&t, NULL, serve_thread, &lfd) != 0)
      return 1;
  printf ("ready\n");
  fflush (stdout);
  for (;;)
    pause ();
}

static long long
now_us (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

/* One request on a new connection; the body bytes, or -1 with *why set. */
static long long
one_get (const char *mode, const struct sockaddr_in *sa, const char *name, const char *path, const char **why)
{
  static char body[256 * 1024];
  char req[1024], buf[8192];
  size_t got, hl;
  long long want, have;
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1, n;
  const char *cl;

  *why = "connect";
  if (fd < 0 || connect (fd, (const struct sockaddr *)sa, sizeof *sa) < 0)
    goto fail;
  setsockopt (fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (strcmp (mode, "connect") == 0)
    {
      n = snprintf (req, sizeof req, "CONNECT %s:80 HTTP/1.1\r\nHost: %s:80\r\n\r\n", name, name);
      *why = "tunnel";
      if (send_all (fd, req, (size_t)n) < 0 || read_head (fd, buf, sizeof buf, &got, &hl) < 0
          || strncmp (buf, "HTTP/1.1 200", 12) != 0 || got != hl)
        goto fail;
    }
  if (strcmp (mode, "proxy") == 0)
    n = snprintf (req, sizeof req, "GET http://%s%s HTTP/1.1\r\nHost: %s\r\nUser-Agent: httpbench\r\n\r\n",
                  name, path, name);
  else
    n = snprintf (req, sizeof req, "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: httpbench\r\n\r\n", path,
                  name);
  *why = "request";
  if (send_all (fd, req, (size_t)n) < 0 || read_head (fd, buf, sizeof buf, &got, &hl) < 0)
    goto fail;
  *why = "status";
  if (strncmp (buf, "HTTP/1.1 200", 12) != 0 || (cl = strstr (buf, "Content-Length: ")) == NULL)
    goto fail;
  want = strtoll (cl + 16, NULL, 10);
  have = (long long)(got - hl);
  *why = "body";
  while (have < want)
    {
      ssize_t r = recv (fd, body, sizeof body, 0);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        goto fail;
      have += r;
    }
  close (fd);
  return have == want ? have : -1;

fail:
  if (fd >= 0)
    close (fd);
  return -1;
}

int
main (int argc, char **argv)
{
  if (argc == 3 && strcmp (argv[1], "serve") == 0)
    return serve (atoi (argv[2]));
  if (argc == 8 && strcmp (argv[1], "get") == 0)
    {
      struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons ((uint16_t)atoi (argv[4])) };
      int runs = atoi (argv[7]);

      if (inet_pton (AF_INET, argv[3], &sa.sin_addr) != 1)
        return 2;
      for (int i = 0; i < runs; i++)
        {
          const char *why;
          long long t0 = now_us (), n = one_get (argv[2], &sa, argv[5], argv[6], &why), t1 = now_us ();
          if (n < 0)
            printf ("fail %s\n", why);
          else
            printf ("%lld %lld\n", t1 - t0, n);
        }
      return 0;
    }
  fprintf (stderr, "usage: httpbench serve PORT | httpbench get MODE ADDR PORT NAME PATH RUNS\n");
  return 2;
}
