/* The floor under the egress proxy's figures (tests/bench/proxy.sh): two
 * relays that do nothing a proxy must do (no parsing, no decision, no
 * records), in the engine's place, so that the benchmark can show what any
 * relay costs on the machine, whatever its engine does.
 *
 *   relaybound MODE NETNS LPORT ADDR PORT
 *       Listens on 127.0.0.1:LPORT inside the network namespace NETNS (a
 *       /proc/PID/ns/net path), as the engine does, and connects each
 *       client to ADDR:PORT from the caller's own namespace, one connection
 *       at a time; prints "ready".  The first bytes a client sends are read
 *       before the upstream connect (where a proxy decides), then:
 *         splice   a blocking relay: poll, then splice(2) socket -> pipe ->
 *                  socket each way (what netns/egress-relay.c does once a
 *                  connection is decided, without its bookkeeping)
 *         sockmap  no process on the data path: both sockets go into a
 *                  BPF sockmap whose sk_skb verdict program sends each
 *                  one's bytes out of the other; the relay only waits for
 *                  the upstream, then the client, to hang up (sockmap does
 *                  not pass a FIN on, and the bench's client closes once
 *                  it has the body).  Needs CAP_BPF and CAP_NET_ADMIN.
 *       Not hardened: a benchmark's tool, never on agentbox's run path.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PIPE_BYTES (256 * 1024)

static int
bpf (int cmd, union bpf_attr *attr)
{
  return (int)syscall (SYS_bpf, cmd, attr, sizeof *attr);
}

static void
die (const char *what)
{
  fprintf (stderr, "relaybound: %s: %s\n", what, strerror (errno));
  exit (1);
}

/* A two-slot sockmap (0: the client's socket, 1: the upstream's) with a
   verdict program that redirects what arrives on a socket whose local port
   is LPORT (the client's side) to slot 1's send side, and the rest to
   slot 0's. */
static int
sockmap_new (int lport)
{
  union bpf_attr a;
  static char log[16384];
  int map, prog;

  memset (&a, 0, sizeof a);
  a.map_type = BPF_MAP_TYPE_SOCKMAP;
  a.key_size = 4;
  a.value_size = 4;
  a.max_entries = 2;
  map = bpf (BPF_MAP_CREATE, &a);
  if (map < 0)
    die ("BPF_MAP_CREATE");
  struct bpf_insn insns[] = {
    { .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 6, .src_reg = 1 }, /* r6 = skb */
    { .code = BPF_LDX | BPF_W | BPF_MEM, .dst_reg = 2, .src_reg = 1,
      .off = offsetof (struct __sk_buff, local_port) }, /* host byte order */
    { .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 3, .imm = 1 },
    { .code = BPF_JMP | BPF_JEQ | BPF_K, .dst_reg = 2, .off = 1, .imm = lport },
    { .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 3, .imm = 0 },
    { .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = 2, .src_reg = BPF_PSEUDO_MAP_FD, .imm = map },
    { 0 },
    { .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 1, .src_reg = 6 },
    { .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 4, .imm = 0 }, /* to the send side */
    { .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_sk_redirect_map },
    { .code = BPF_JMP | BPF_EXIT },
  };
  memset (&a, 0, sizeof a);
  a.prog_type = BPF_PROG_TYPE_SK_SKB;
  a.insns = (unsigned long)insns;
  a.insn_cnt = sizeof insns / sizeof insns[0];
  a.license = (unsigned long)"GPL";
  a.log_buf = (unsigned long)log;
  a.log_size = sizeof log;
  a.log_level = 1;
  prog = bpf (BPF_PROG_LOAD, &a);
  if (prog < 0)
    {
      fputs (log, stderr);
      die ("BPF_PROG_LOAD");
    }
  memset (&a, 0, sizeof a);
  a.target_fd = (unsigned)map;
  a.attach_bpf_fd = (unsigned)prog;
  a.attach_type = BPF_SK_SKB_VERDICT;
  if (bpf (BPF_PROG_ATTACH, &a) < 0)
    die ("BPF_PROG_ATTACH");
  return map;
}

static int
sockmap_set (int map, unsigned key, int fd, int cmd)
{
  union bpf_attr a;

  memset (&a, 0, sizeof a);
  a.map_fd = (unsigned)map;
  a.key = (unsigned long)&key;
  a.value = (unsigned long)&fd;
  return bpf (cmd, &a);
}

static void
wait_hangup (int fd, int ms)
{
  struct pollfd p = { .fd = fd, .events = POLLRDHUP };
  poll (&p, 1, ms);
}

/* Both directions through a pipe each until both ends have hung up. */
static void
relay_splice (int c, int u)
{
  int fds[2] = { c, u }, pipes[2][2], open_in = 2;

  for (int i = 0; i < 2; i++)
    {
      if (pipe2 (pipes[i], O_CLOEXEC) < 0)
        die ("pipe2");
      fcntl (pipes[i][0], F_SETPIPE_SZ, PIPE_BYTES);
    }
  struct pollfd p[2] = { { .fd = c, .events = POLLIN }, { .fd = u, .events = POLLIN } };
  while (open_in > 0 && poll (p, 2, -1) > 0)
    for (int i = 0; i < 2; i++)
      {
        if (p[i].fd < 0 || p[i].revents == 0)
          continue;
        ssize_t n = splice (fds[i], NULL, pipes[i][1], NULL, PIPE_BYTES, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
        if (n < 0 && errno == EAGAIN)
          continue;
        if (n < 0)
          goto done;
        for (ssize_t left = n, w; left > 0; left -= w)
          {
            w = splice (pipes[i][0], NULL, fds[1 - i], NULL, (size_t)left, SPLICE_F_MOVE);
            if (w <= 0)
              goto done;
          }
        if (n == 0)
          {
            shutdown (fds[1 - i], SHUT_WR);
            p[i].fd = -1;
            open_in--;
          }
      }
done:
  for (int i = 0; i < 2; i++)
    close (pipes[i][0]), close (pipes[i][1]);
}

static void
relay_one (int c, const struct sockaddr_in *up, int map)
{
  static char first[65536];
  int u = -1, one = 1;
  ssize_t n = recv (c, first, sizeof first, 0);

  if (n <= 0)
    goto out;
  u = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (u < 0)
    die ("socket");
  setsockopt (u, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (connect (u, (const struct sockaddr *)up, sizeof *up) < 0)
    goto out;
  if (map >= 0)
    {
      if (sockmap_set (map, 0, c, BPF_MAP_UPDATE_ELEM) < 0
          || sockmap_set (map, 1, u, BPF_MAP_UPDATE_ELEM) < 0)
        die ("BPF_MAP_UPDATE_ELEM");
      if (send (u, first, (size_t)n, MSG_NOSIGNAL) == n)
        {
          wait_hangup (u, -1);
          wait_hangup (c, 10000);
        }
      sockmap_set (map, 0, -1, BPF_MAP_DELETE_ELEM);
      sockmap_set (map, 1, -1, BPF_MAP_DELETE_ELEM);
    }
  else if (send (u, first, (size_t)n, MSG_NOSIGNAL) == n)
    relay_splice (c, u);
out:
  if (u >= 0)
    close (u);
  close (c);
}

int
main (int argc, char **argv)
{
  struct sockaddr_in up = { .sin_family = AF_INET }, at = { .sin_family = AF_INET };
  int mine, theirs, lfd, one = 1, map = -1;

  if (argc != 6 || (strcmp (argv[1], "splice") != 0 && strcmp (argv[1], "sockmap") != 0)
      || inet_pton (AF_INET, argv[4], &up.sin_addr) != 1)
    {
      fprintf (stderr, "usage: relaybound splice|sockmap NETNS LPORT ADDR PORT\n");
      return 2;
    }
  up.sin_port = htons ((uint16_t)atoi (argv[5]));
  at.sin_port = htons ((uint16_t)atoi (argv[3]));
  at.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  signal (SIGPIPE, SIG_IGN); /* splice(2) has no MSG_NOSIGNAL: a client's reset is an EPIPE */
  if (strcmp (argv[1], "sockmap") == 0)
    map = sockmap_new (atoi (argv[3]));
  mine = open ("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  theirs = open (argv[2], O_RDONLY | O_CLOEXEC);
  if (mine < 0 || theirs < 0 || setns (theirs, CLONE_NEWNET) < 0)
    die (argv[2]);
  lfd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (lfd < 0 || setsockopt (lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0
      || setsockopt (lfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0
      || bind (lfd, (struct sockaddr *)&at, sizeof at) < 0 || listen (lfd, 64) < 0)
    die ("listen");
  if (setns (mine, CLONE_NEWNET) < 0)
    die ("setns back");
  printf ("ready\n");
  fflush (stdout);
  for (;;)
    {
      int c = accept4 (lfd, NULL, NULL, SOCK_CLOEXEC);
      if (c >= 0)
        relay_one (c, &up, map);
    }
}
