/* Landlock: the policy annotation's parser (spec/landlock.c), the rules a
 * config derives (runtime/plan/landlock.c), the fit to each ABI, and the
 * mechanism (runtime/landlock.c) on this kernel: a forked child restricts
 * itself and the test looks at what it can still do, from outside. */
#include "config.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <signal.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "runtime/plan/landlock.h"
#include "runtime/landlock.h"
#include "spec/spec.h"
#include "tests/unit/tap.h"

/* ---- the annotation ----------------------------------------------------------- */

static const char *
parse_err (const char *value)
{
  static ab_error_t err;
  struct ab_landlock_policy p = { 0 };

  memset (&err, 0, sizeof err);
  if (ab_landlock_policy_parse (value, "A", &p, &err) == 0)
    {
      ab_landlock_policy_free (&p);
      return NULL;
    }
  return err.msg;
}

static void
test_parse (void)
{
  struct ab_landlock_policy p = { 0 };
  ab_error_t err = { 0 };

  ok (ab_landlock_policy_parse ("off", "A", &p, &err) == 0 && p.mode == AB_LL_MODE_OFF, "\"off\" parses");
  ok (ab_landlock_policy_parse ("auto", "A", &p, &err) == 0 && p.mode == AB_LL_MODE_AUTO, "\"auto\" parses");
  ok (ab_landlock_policy_parse ("{\"abi\":3,\"pathBeneath\":[{\"paths\":[\"/usr\",\"/etc\"],"
                                "\"allowedAccess\":[\"read_file\",\"read_dir\"]}]}",
                                "A", &p, &err)
          == 0,
      "a policy of ABI 3 parses");
  is_int (p.mode, AB_LL_MODE_POLICY, "... as a policy");
  is_int (p.handled[AB_LL_KIND_FS], (1 << 15) - 1, "... handling every filesystem right of ABI 3 by default");
  is_int (p.handled[AB_LL_KIND_NET], 0, "... and no network right (ABI 3 has none)");
  is_int (p.n_paths, 2, "... one rule per path");
  ok (p.paths[1].access == (AB_LL_FS_READ_FILE | AB_LL_FS_READ_DIR) && strcmp (p.paths[1].path, "/etc") == 0,
      "... with the rule's rights");
  ok (p.best_effort && !p.with_auto, "... best effort, without the auto rules, by default");
  ab_landlock_policy_free (&p);

  ok (ab_landlock_policy_parse (
          "{\"abi\":4,\"handledAccessFs\":12,\"handledAccessNet\":[\"connect_tcp\"],"
          "\"netPort\":[{\"ports\":[443,8080],\"allowedAccess\":2}],\"bestEffort\":false,"
          "\"auto\":true}",
          "A", &p, &err)
          == 0,
      "numeric rights (the kernel's encoding) and network rules parse: %s", err.msg);
  ok (p.handled[AB_LL_KIND_FS] == 12 && p.handled[AB_LL_KIND_NET] == AB_LL_NET_CONNECT_TCP && p.n_ports == 2
          && p.ports[1].port == 8080 && !p.best_effort && p.with_auto,
      "... as given");
  ab_landlock_policy_free (&p);

  is_str (parse_err ("{\"abi\":3,\"pathBeneath\":[{\"paths\":[\"/\"],\"allowedAccess\":[\"read_fle\"]}]}"),
          "A: pathBeneath[0].allowedAccess[0]: \"read_fle\" is not a landlock filesystem right",
          "an unknown right is named with its JSON path");
  is_str (parse_err ("{\"abi\":3,\"pathBeneath\":[{\"paths\":[\"/\"],\"allowedAccess\":[\"ioctl_dev\"]}]}"),
          "A: pathBeneath[0].allowedAccess[0]: \"ioctl_dev\" needs landlock ABI 5, but the policy says "
          "\"abi\": 3",
          "a right newer than the policy's ABI is refused");
  is_str (
      parse_err ("{\"abi\":2,\"pathBeneath\":[{\"paths\":[\"/\"],\"allowedAccess\":16384}]}"),
      "A: pathBeneath[0].allowedAccess: filesystem rights of landlock ABI 2 are 0x3fff; 0x4000 (truncate) is "
      "not among them",
      "a numeric right beyond the ABI is refused, by name");
  is_str (parse_err ("{\"abi\":3,\"handledAccessFs\":[\"read_file\"],\"pathBeneath\":[{\"paths\":[\"/\"],"
                     "\"allowedAccess\":[\"read_file\",\"write_file\"]}]}"),
          "A: pathBeneath[0].allowedAccess: write_file: not in the ruleset's handled filesystem rights",
          "a rule may only allow handled rights (the kernel's EINVAL)");
  is_str (parse_err ("{\"abi\":3,\"pathBeneath\":[{\"paths\":[\"/\"]}]}"),
          "A: pathBeneath[0].allowedAccess: required", "a rule without rights is refused");
  is_str (parse_err ("{\"abi\":3,\"pathBeneath\":[{\"paths\":[\"/usr/../etc\"],\"allowedAccess\":1}]}"),
          "A: pathBeneath[0].paths[0]: \"/usr/../etc\" is not a clean absolute path",
          "a path with .. is refused");
  is_str (parse_err ("{\"abi\":3,\"pathBeneath\":[{\"paths\":[],\"allowedAccess\":1}]}"),
          "A: pathBeneath[0].paths: empty: a rule grants its rights beneath at least one path",
          "an empty path list");
  is_str (parse_err ("{\"abi\":4,\"netPort\":[{\"ports\":[70000],\"allowedAccess\":[\"bind_tcp\"]}]}"),
          "A: netPort[0].ports[0]: 70000 is out of range (maximum 65535)", "a port above 65535");
  is_str (
      parse_err ("{\"abi\":3,\"netPort\":[{\"ports\":[80],\"allowedAccess\":[\"connect_tcp\"]}]}"),
      "A: netPort[0].allowedAccess[0]: \"connect_tcp\" needs landlock ABI 4, but the policy says \"abi\": 3",
      "network rights on ABI 3 are refused");
  is_str (parse_err ("{\"abi\":8}"), "A: abi: 8: agentbox knows landlock ABI 1 to 7", "an unknown ABI");
  is_str (parse_err ("{\"pathBeneath\":[]}"), "A: abi: required",
          "the ABI is required (the policy's version)");
  is_str (parse_err ("{\"abi\":3,\"pathBenaeth\":[]}"), "A: pathBenaeth: unknown member",
          "a misspelt member is refused, not ignored");
  is_str (parse_err ("{\"abi\":3,\"handledAccessFs\":0}"),
          "A: handles no right: the ruleset would restrict nothing (say \"off\")",
          "a ruleset that handles nothing");
  is_str (parse_err ("no"), "A: must be \"off\", \"auto\" or a JSON policy object, not \"no\"", "a word");
  is_str (parse_err ("{\"abi\":3,"), "A: invalid JSON near byte 9: parse error: premature EOF",
          "broken JSON is named");
}

/* ---- the table and the fit ------------------------------------------------------ */

static void
test_table (void)
{
  static const uint64_t fs[] = { 0, 0x1fff, 0x3fff, 0x7fff, 0x7fff, 0xffff, 0xffff, 0xffff };
  for (unsigned abi = 0; abi <= AB_LL_ABI_MAX; abi++)
    ok (ab_ll_known (AB_LL_KIND_FS, abi) == fs[abi], "ABI %u knows filesystem rights %#llx", abi,
        (unsigned long long)fs[abi]);
  ok (ab_ll_known (AB_LL_KIND_NET, 3) == 0 && ab_ll_known (AB_LL_KIND_NET, 4) == 3, "network rights: ABI 4");
  ok (ab_ll_known (AB_LL_KIND_SCOPE, 5) == 0 && ab_ll_known (AB_LL_KIND_SCOPE, 6) == 3, "scopes: ABI 6");
  {
    _cleanup_free_ char *t
        = ab_ll_rights_text (AB_LL_KIND_FS, AB_LL_FS_EXECUTE | AB_LL_FS_TRUNCATE | (1ull << 40));
    is_str (t, "execute,truncate,bit 40", "rights are written by name");
  }
}

static void
want_all (struct ab_ll_ruleset *w)
{
  memset (w, 0, sizeof *w);
  w->abi = AB_LL_ABI_MAX;
  w->best_effort = true;
  w->handled[AB_LL_KIND_FS] = ab_ll_known (AB_LL_KIND_FS, AB_LL_ABI_MAX);
  w->handled[AB_LL_KIND_NET] = AB_LL_NET_BIND_TCP | AB_LL_NET_CONNECT_TCP;
  w->handled[AB_LL_KIND_SCOPE] = AB_LL_SCOPE_SIGNAL;
  ab_ll_ruleset_add_path (w, "/", AB_LL_AUTO_RO, false, false, "root");
  ab_ll_ruleset_add_path (w, "/tmp", AB_LL_AUTO_RW, false, false, "mounts[0]");
  ab_ll_ruleset_add_path (w, "/dev", AB_LL_FS_IOCTL_DEV, false, false, "mounts[1]");
  ab_ll_ruleset_add_port (w, 443, AB_LL_NET_CONNECT_TCP);
}

static void
test_fit (void)
{
  struct ab_ll_ruleset want, fit;
  struct ab_strv dropped = { 0 };
  ab_error_t err = { 0 };

  want_all (&want);
  ok (ab_landlock_fit (&want, 7, &fit, &dropped, &err) == 0 && dropped.n == 0 && fit.n_paths == 3
          && fit.n_ports == 1,
      "ABI 7 enforces all of it, nothing dropped");
  ab_ll_ruleset_free (&fit);

  ok (ab_landlock_fit (&want, 3, &fit, &dropped, &err) == 0, "ABI 3: best effort");
  ok (fit.handled[AB_LL_KIND_FS] == 0x7fff && fit.handled[AB_LL_KIND_NET] == 0
          && fit.handled[AB_LL_KIND_SCOPE] == 0,
      "... handles what ABI 3 knows");
  is_int (fit.n_paths, 2, "... a rule left with no right (ioctl_dev on /dev) is dropped");
  is_int (fit.n_ports, 0, "... and the port rules");
  is_int (dropped.n, 4, "... each right given up is one degraded line");
  is_str (dropped.v[0],
          "landlock: filesystem right `ioctl_dev` (ABI 5) is not restricted: this kernel has landlock ABI 3",
          "... naming the right, its ABI and the kernel's");
  is_str (dropped.v[3],
          "landlock: scope right `signal` (ABI 6) is not restricted: this kernel has landlock ABI 3",
          "... scopes too");
  ab_ll_ruleset_free (&fit);
  ab_strv_free (&dropped);

  ok (ab_landlock_fit (&want, 1, &fit, &dropped, &err) == 0, "ABI 1");
  is_str (
      dropped.v[dropped.n - 1],
      "landlock: ABI 1 refuses every rename or link into another directory (the `refer` right needs ABI 2)",
      "... says what the missing `refer` does");
  ab_ll_ruleset_free (&fit);
  ab_strv_free (&dropped);

  ok (ab_landlock_fit (&want, 0, &fit, &dropped, &err) == 0 && !ab_landlock_enforces (&fit) && dropped.n == 1
          && strncmp (dropped.v[0], "landlock: not available (", 25) == 0,
      "ABI 0: nothing is enforced, one line says so");
  ab_ll_ruleset_free (&fit);
  ab_strv_free (&dropped);

  want.best_effort = false;
  ok (ab_landlock_fit (&want, 4, &fit, &dropped, &err) < 0
          && strcmp (err.msg,
                     "\"bestEffort\" is false, and this kernel's landlock ABI 4 lacks filesystem ioctl_dev, "
                     "network none, scope signal: Operation not supported")
                 == 0,
      "a strict policy the kernel cannot honour is refused, naming what it lacks: %s", err.msg);
  ab_ll_ruleset_free (&want);
}

/* ---- the rules of a config ------------------------------------------------------- */

static struct ab_spec *
spec_with (const char *landlock, bool ro_root)
{
  ab_error_t err = { 0 };
  _cleanup_free_ char *json = NULL, *esc = xstrdup (landlock), *q = NULL;
  size_t n = 0;
  struct ab_spec *s;

  /* the annotation's value is a JSON string: escape its quotes */
  q = xzalloc (2 * strlen (esc) + 1);
  for (char *p = esc; *p; p++)
    {
      if (*p == '"')
        q[n++] = '\\';
      q[n++] = *p;
    }
  json = xasprintf (
      "{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"rootfs\",\"readonly\":%s},"
      "\"process\":{\"cwd\":\"/\",\"args\":[\"sh\"]},"
      "\"mounts\":[{\"destination\":\"/data\",\"type\":\"bind\",\"source\":\"/"
      "srv\",\"options\":[\"rbind\",\"rw\"]},"
      "{\"destination\":\"/usr\",\"type\":\"bind\",\"source\":\"/usr\",\"options\":[\"rbind\",\"rro\"]},"
      "{\"destination\":\"/tmp\",\"type\":\"tmpfs\",\"source\":\"tmpfs\",\"options\":[\"noexec\"]},"
      "{\"destination\":\"/data\",\"type\":\"bind\",\"source\":\"/"
      "data\",\"options\":[\"remount\",\"bind\",\"ro\"]}],"
      "\"annotations\":{\"dev.agentbox.landlock\":\"%s\"}}",
      ro_root ? "true" : "false", q);
  s = ab_spec_parse (json, strlen (json), &err);
  if (s == NULL)
    printf ("# %s\n", err.msg);
  return s;
}

static const struct ab_ll_rule *
rule_at (const struct ab_ll_ruleset *rs, const char *path)
{
  const struct ab_ll_rule *r = NULL;
  for (size_t i = 0; i < rs->n_paths; i++)
    if (strcmp (rs->paths[i].path, path) == 0)
      r = &rs->paths[i];
  return r;
}

static void
test_rules (void)
{
  struct ab_spec *s = spec_with ("auto", true);
  struct ab_ll_ruleset rs;
  struct ab_ll_net net = { .shared = true };
  const struct ab_ll_rule *r;

  ok (s != NULL, "a config with \"auto\" parses");
  if (s == NULL)
    return;
  net.ports[net.n_ports++] = 3128;
  net.ports[net.n_ports++] = 443;
  ab_landlock_rules (s, s->mounts, s->n_mounts, &net, &rs);
  is_int (rs.handled[AB_LL_KIND_FS], 0xffff, "auto handles every filesystem right");
  ok ((r = rule_at (&rs, "/")) && r->access == AB_LL_AUTO_RO, "a read-only root: read and execute beneath /");
  ok ((r = rule_at (&rs, "/usr")) && r->access == AB_LL_AUTO_RO, "an rro bind: read and execute");
  ok ((r = rule_at (&rs, "/tmp")) && r->access == (AB_LL_AUTO_RW & ~AB_LL_FS_EXECUTE),
      "a noexec tmpfs: read-write, no execute");
  ok ((r = rule_at (&rs, "/data")) && r->access == AB_LL_AUTO_RO && strcmp (r->origin, "mounts[3]") == 0,
      "a bind remounted read-only: the last mount at the destination counts (read only)");
  ok (!(AB_LL_AUTO_RW & (AB_LL_FS_MAKE_CHAR | AB_LL_FS_MAKE_BLOCK)), "device nodes are made nowhere");
  ok (rs.handled[AB_LL_KIND_NET] == (AB_LL_NET_BIND_TCP | AB_LL_NET_CONNECT_TCP) && rs.n_ports == 2
          && rs.ports[0].access == AB_LL_NET_CONNECT_TCP,
      "a shared namespace under the wall: no bind, connect to the egress ports only");
  is_int (rs.handled[AB_LL_KIND_SCOPE], 0, "no scope (the namespaces isolate signals and abstract sockets)");
  ab_ll_ruleset_free (&rs);

  net.connect_any = true;
  ab_landlock_rules (s, s->mounts, s->n_mounts, &net, &rs);
  ok (rs.handled[AB_LL_KIND_NET] == AB_LL_NET_BIND_TCP,
      "an allowed destination on every port: connect unhandled");
  ab_ll_ruleset_free (&rs);
  ab_landlock_rules (s, s->mounts, s->n_mounts, NULL, &rs);
  is_int (rs.handled[AB_LL_KIND_NET], 0, "no shared namespace under our wall: no network rule");
  ab_ll_ruleset_free (&rs);
  ab_spec_free (s);

  s = spec_with ("{\"abi\":2,\"auto\":true,\"pathBeneath\":[{\"paths\":[\"/"
                 "data\"],\"allowedAccess\":[\"write_file\"]}]}",
                 false);
  ok (s != NULL, "a policy with \"auto\": true parses");
  if (s == NULL)
    return;
  ab_landlock_rules (s, s->mounts, s->n_mounts, NULL, &rs);
  ok ((r = rule_at (&rs, "/")) && r->access == AB_LL_AUTO_RW, "a writable root: read-write beneath /");
  ok ((r = rule_at (&rs, "/data")) && r->access == AB_LL_FS_WRITE_FILE && r->nofollow,
      "the policy's own rule follows the auto ones, resolved without symlinks");
  is_int (rs.handled[AB_LL_KIND_FS], 0xffff, "handled: the union of auto's and the policy's");
  ab_ll_ruleset_free (&rs);
  ab_spec_free (s);

  s = spec_with ("off", true);
  ab_landlock_rules (s, s->mounts, s->n_mounts, NULL, &rs);
  ok (!ab_landlock_enforces (&rs) && rs.n_paths == 0, "\"off\": nothing");
  ab_ll_ruleset_free (&rs);
  ab_spec_free (s);
}

/* ---- the network as the rules see it ------------------------------------------------ */

static bool
has_port (const struct ab_ll_net *n, uint16_t port)
{
  for (size_t i = 0; i < n->n_ports; i++)
    if (n->ports[i] == port)
      return true;
  return false;
}

static void
test_net_view (void)
{
  ab_error_t err = { 0 };
  const char *json = "{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"rootfs\"},\"annotations\":{"
                     "\"dev.agentbox.net.allow\":\"10.0.0.1:8080/tcp,10.0.0.2:5353/udp\","
                     "\"dev.agentbox.net.allow-domains\":\"example.org:8443\"}}";
  struct ab_spec *s = ab_spec_parse (json, strlen (json), &err);
  struct ab_ll_net net;

  ok (s != NULL && s->agentbox.error == NULL, "a config with net.allow and allow-domains parses: %s",
      s && s->agentbox.error ? s->agentbox.error : err.msg);
  if (s == NULL)
    return;
  ab_ll_net_view (true, &s->agentbox.net, &s->agentbox.egress, &net);
  ok (net.shared && !net.connect_any,
      "shared, behind the wall, with ports on every entry: connect restricted");
  ok (has_port (&net, 8080) && !has_port (&net, 5353),
      "a net.allow entry's TCP port is granted, a UDP one is not");
  ok (has_port (&net, 3128) && has_port (&net, 53), "the proxy and the DNS stub are granted");
  ok (has_port (&net, 8443),
      "... and the ports the wall captures for the proxy (connect names the original port)");
  ab_ll_net_view (false, &s->agentbox.net, &s->agentbox.egress, &net);
  ok (!net.shared && net.n_ports == 0, "not shared (a namespace of its own, or no wall): no network view");
  ab_spec_free (s);
  json = "{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"rootfs\"},\"annotations\":{"
         "\"dev.agentbox.net.allow\":\"10.0.0.3/tcp\"}}";
  s = ab_spec_parse (json, strlen (json), &err);
  if (s == NULL)
    return;
  ab_ll_net_view (true, &s->agentbox.net, &s->agentbox.egress, &net);
  ok (net.connect_any, "an entry for every TCP port of an address: connect cannot be restricted by port");
  ab_spec_free (s);
}

/* ---- the mechanism, on this kernel --------------------------------------------------- */

/* Run fn in a child restricted by rs; its exit status. */
static int
in_child (const struct ab_ll_ruleset *rs, int (*fn) (void *), void *arg)
{
  int st;
  pid_t pid = fork ();

  if (pid == 0)
    {
      ab_error_t err = { 0 };
      int fd = ab_landlock_build (rs, ab_landlock_abi (NULL), -1, 3, &err);
      if (fd < 0 || prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || ab_landlock_restrict (fd, &err) < 0)
        {
          printf ("# child: %s\n", err.msg);
          _exit (99);
        }
      _exit (fn (arg));
    }
  waitpid (pid, &st, 0);
  return WIFEXITED (st) ? WEXITSTATUS (st) : 98;
}

static int
write_file (void *path)
{
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return errno == EACCES ? 13 : 1;
  return write (fd, "x", 1) == 1 ? 0 : 2;
}

static int
connect_port (void *port)
{
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons (*(uint16_t *)port) };
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

  a.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  if (connect (fd, (struct sockaddr *)&a, sizeof a) == 0)
    return 0;
  return errno == EACCES ? 13 : 1;
}

static int
listener (uint16_t *port)
{
  struct sockaddr_in a = { .sin_family = AF_INET };
  socklen_t len = sizeof a;
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

  a.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  if (fd < 0 || bind (fd, (struct sockaddr *)&a, sizeof a) < 0 || listen (fd, 4) < 0
      || getsockname (fd, (struct sockaddr *)&a, &len) < 0)
    return -1;
  *port = ntohs (a.sin_port);
  return fd;
}

static void
test_mechanism (void)
{
  const char *why;
  unsigned abi = ab_landlock_abi (&why);
  char dir[] = "/tmp/ab-landlock-XXXXXX";
  _cleanup_free_ char *ro = NULL, *rw = NULL, *file = NULL, *ro_file = NULL, *rw_file = NULL;
  struct ab_ll_ruleset want, rs;
  struct ab_strv dropped = { 0 };
  ab_error_t err = { 0 };
  struct stat st;

  if (abi == 0)
    {
      printf ("ok %d # SKIP landlock is not available: %s\n", ++tap_count, why);
      return;
    }
  printf ("# this kernel's landlock ABI: %u\n", abi);
  if (mkdtemp (dir) == NULL)
    return;
  ro = xasprintf ("%s/ro", dir);
  rw = xasprintf ("%s/rw", dir);
  file = xasprintf ("%s/file", dir);
  ro_file = xasprintf ("%s/ro/f", dir);
  rw_file = xasprintf ("%s/rw/f", dir);
  mkdir (ro, 0755);
  mkdir (rw, 0755);
  close (open (file, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));

  memset (&want, 0, sizeof want);
  want.best_effort = true;
  want.handled[AB_LL_KIND_FS] = ab_ll_known (AB_LL_KIND_FS, AB_LL_ABI_MAX);
  ab_ll_ruleset_add_path (&want, "/", AB_LL_AUTO_RO, false, false, "root");
  ab_ll_ruleset_add_path (&want, ro, AB_LL_AUTO_RO, false, false, "ro");
  ab_ll_ruleset_add_path (&want, rw, AB_LL_AUTO_RW, false, false, "rw");
  /* a rule on a file with directory rights: kept to the file's */
  ab_ll_ruleset_add_path (&want, file, AB_LL_AUTO_RW, true, false, "file");
  ab_ll_ruleset_add_path (&want, "/nonexistent-ab", AB_LL_AUTO_RW, true, true, "optional");
  ok (ab_landlock_fit (&want, abi, &rs, &dropped, &err) == 0, "fit to this kernel");
  is_int (in_child (&rs, write_file, rw_file), 0, "restricted: a file is written beneath a read-write rule");
  is_int (in_child (&rs, write_file, ro_file), 13, "... not beneath a read-only one (EACCES)");
  ok (stat (ro_file, &st) < 0 && errno == ENOENT, "... and the host shows no file there");
  is_int (in_child (&rs, write_file, file), 0, "a rule on a file grants the file's rights (no EINVAL)");
  ab_ll_ruleset_free (&rs);

  ab_ll_ruleset_add_path (&want, "/nonexistent-ab", AB_LL_AUTO_RW, true, false, "pathBeneath");
  ab_landlock_fit (&want, abi, &rs, &dropped, &err);
  ok (ab_landlock_build (&rs, abi, -1, 3, &err) < 0
          && strcmp (err.msg, "landlock: pathBeneath: open `/nonexistent-ab`: No such file or directory")
                 == 0,
      "a missing path of a policy is an error naming it: %s", err.msg);
  ab_ll_ruleset_free (&rs);
  {
    int fd;
    ab_landlock_fit (&want, abi, &rs, &dropped, &err);
    rs.paths[rs.n_paths - 1].optional = true;
    fd = ab_landlock_build (&rs, abi, -1, 50, &err);
    ok (fd >= 50 && (fcntl (fd, F_GETFD) & FD_CLOEXEC),
        "the ruleset fd is close-on-exec, at or above min_fd (%d)", fd);
    if (fd >= 0)
      close (fd);
    ab_ll_ruleset_free (&rs);
  }
  ab_ll_ruleset_free (&want);

  if (abi >= 4)
    {
      uint16_t allowed, other;
      int a = listener (&allowed), b = listener (&other);
      memset (&want, 0, sizeof want);
      want.best_effort = true;
      want.handled[AB_LL_KIND_NET] = AB_LL_NET_BIND_TCP | AB_LL_NET_CONNECT_TCP;
      ab_ll_ruleset_add_port (&want, allowed, AB_LL_NET_CONNECT_TCP);
      ab_landlock_fit (&want, abi, &rs, &dropped, &err);
      is_int (in_child (&rs, connect_port, &allowed), 0, "TCP connect to the rule's port works");
      is_int (in_child (&rs, connect_port, &other), 13, "... to another listening port fails with EACCES");
      ab_ll_ruleset_free (&rs);
      ab_ll_ruleset_free (&want);
      close (a);
      close (b);
    }
  else
    printf ("ok %d # SKIP landlock ABI %u has no network rules\n", ++tap_count, abi);
  unlink (file);
  unlink (rw_file);
  rmdir (ro);
  rmdir (rw);
  rmdir (dir);
  ab_strv_free (&dropped);
}

/* A rule's path with a ".." on the way (here inside an image's relative
   symlink, as /usr/lib's often are) while something else on the host
   renames: RESOLVE_IN_ROOT answers EAGAIN whenever the global rename (or
   mount) seqlock moved during the walk, and a build that passed that on
   failed the container's start.  A second process renames as fast as it
   can; every one of the builds must succeed. */
static void
test_rename_race (void)
{
  unsigned abi = ab_landlock_abi (NULL);
  char dir[] = "/tmp/ab-landlock-race-XXXXXX";
  _cleanup_free_ char *a = NULL, *b = NULL, *up = NULL, *x = NULL, *y = NULL;
  _cleanup_close_ int rootfd = -1;
  struct ab_ll_ruleset want = { 0 }, rs;
  struct ab_strv dropped = { 0 };
  ab_error_t err = { 0 };
  int failed = 0, builds = 3000, st;
  pid_t spinner;

  if (abi == 0 || mkdtemp (dir) == NULL)
    {
      printf ("ok %d # SKIP landlock is not available\n", ++tap_count);
      return;
    }
  a = xasprintf ("%s/a", dir);
  b = xasprintf ("%s/b", dir);
  up = xasprintf ("%s/a/up", dir);
  x = xasprintf ("%s/x", dir);
  y = xasprintf ("%s/y", dir);
  mkdir (a, 0755);
  mkdir (b, 0755);
  if (symlink ("../b", up) < 0 || mkdir (x, 0755) < 0)
    printf ("# setup: %s\n", strerror (errno));
  rootfd = open (dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  want.best_effort = true;
  want.handled[AB_LL_KIND_FS] = ab_ll_known (AB_LL_KIND_FS, AB_LL_ABI_MAX);
  ab_ll_ruleset_add_path (&want, "/a/up", AB_LL_AUTO_RO, false, false, "mounts[0]");
  ab_landlock_fit (&want, abi, &rs, &dropped, &err);

  spinner = fork ();
  if (spinner == 0)
    for (;;)
      if (rename (x, y) < 0 || rename (y, x) < 0)
        _exit (1);
  for (int i = 0; i < builds; i++)
    {
      int fd = ab_landlock_build (&rs, abi, rootfd, 3, &err);
      if (fd < 0 && failed++ == 0)
        printf ("# build %d: %s\n", i, err.msg);
      if (fd >= 0)
        close (fd);
    }
  kill (spinner, SIGKILL);
  waitpid (spinner, &st, 0);
  ok (WIFSIGNALED (st), "the renaming process ran throughout");
  is_int (failed, 0, "%d builds of a rule through a \"..\" symlink, renames on the host meanwhile: none fails",
          builds);
  ab_ll_ruleset_free (&rs);
  ab_ll_ruleset_free (&want);
  ab_strv_free (&dropped);
  rmdir (x);
  rmdir (y);
  unlink (up);
  rmdir (a);
  rmdir (b);
  rmdir (dir);
}

int
main (void)
{
  test_parse ();
  test_table ();
  test_fit ();
  test_rules ();
  test_net_view ();
  test_mechanism ();
  test_rename_race ();
  return tap_done ();
}
