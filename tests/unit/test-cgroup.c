/* The cgroup driver's pure parts: mountinfo and /proc/self/cgroup parsing,
 * mode detection, path rules, device rule checks, the device eBPF program
 * (run here by a small interpreter of the instructions it uses), state
 * round trip.  No root needed. */
#include "config.h"

#include <fcntl.h>
#include <linux/bpf.h>

#include "runtime/cgroup/cgroup-internal.h"
/* The units under test, whole: their parsers and conversions are static. */
#include "runtime/cgroup/cgroup-devices.c"
#include "runtime/cgroup/cgroup-host.c"
#include "runtime/cgroup/cgroup-res.c"
#include "base/gen.h"
#include "base/json.h"
#include "tests/unit/tap.h"

static const char hybrid_mountinfo[]
    = "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
      "23 22 0:21 / /sys rw,nosuid,nodev,noexec,relatime shared:2 - sysfs sysfs rw\n"
      "31 23 0:28 / /sys/fs/cgroup rw,relatime shared:3 - tmpfs tmpfs rw,mode=755\n"
      "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:4 - cgroup cgroup rw,cpu,cpuacct\n"
      "35 31 0:32 /process_api/abc /sys/fs/cgroup/memory rw,relatime shared:5 master:9 - cgroup cgroup "
      "rw,memory\n"
      "36 31 0:33 / /sys/fs/cgroup/devices rw,relatime - cgroup cgroup rw,devices\n"
      "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd\n"
      "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw,nsdelegate\n";

static const char hybrid_cgroup[] = "9:name=systemd:/\n"
                                    "5:devices:/\n"
                                    "4:memory:/process_api/abc/inner:with:colons\n"
                                    "2:cpu,cpuacct:/\n"
                                    "0::/user.slice\n";

static void
test_parse (void)
{
  struct ab_cg_host h = { 0 };
  ab_error_t err = { 0 };

  ok (ab_cg_parse_mountinfo (hybrid_mountinfo, &h, &err) == 0, "mountinfo with optional fields parses");
  is_int (h.n_mounts, 5, "only the cgroup and cgroup2 mounts are kept");
  is_str (h.mounts[0].controllers, "cpu,cpuacct", "a co-mounted hierarchy lists both controllers");
  is_str (h.mounts[1].root, "/process_api/abc", "the mount root (field 4) is kept");
  is_str (h.mounts[3].controllers, "name=systemd", "a named hierarchy keeps its name, not its mount flags");
  ok (h.mounts[4].v2 && strcmp (h.mounts[4].mountpoint, "/sys/fs/cgroup/unified") == 0,
      "the cgroup2 mount is found");
  is_int (ab_cg_host_mode_of (&h), AB_CGROUP_HYBRID, "v1 controllers plus cgroup2 elsewhere is hybrid");
  ok (ab_cg_parse_proc_cgroup (hybrid_cgroup, &h, &err) == 0, "/proc/self/cgroup parses");
  is_int (h.n_own, 5, "every line of /proc/self/cgroup is kept");
  is_str (h.own[2].path, "/process_api/abc/inner:with:colons", "a cgroup path may contain ':'");
  ok (h.own[4].v2 && strcmp (h.own[4].path, "/user.slice") == 0, "the 0:: line is the v2 cgroup");
  is_str (h.own[3].controllers, "cpu,cpuacct", "a v1 line keeps its controller list");
  ab_cg_host_free (&h);

  ok (ab_cg_parse_mountinfo ("31 23 0:28 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", &h, &err) == 0
          && ab_cg_host_mode_of (&h) == AB_CGROUP_V2,
      "cgroup2 on /sys/fs/cgroup is pure v2");
  ab_cg_host_free (&h);
  ok (ab_cg_parse_mountinfo ("32 31 0:29 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n", &h, &err) == 0
          && ab_cg_host_mode_of (&h) == AB_CGROUP_V1,
      "v1 controllers and no cgroup2 is pure v1");
  ab_cg_host_free (&h);
  ok (ab_cg_parse_mountinfo ("32 31 0:29 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,name=systemd\n"
                             "22 1 254:0 / / rw - ext4 /dev/vda rw\n",
                             &h, &err)
              == 0
          && ab_cg_host_mode_of (&h) == AB_CGROUP_NONE,
      "a named hierarchy alone (no controller) is no cgroup support");
  ab_cg_host_free (&h);

  ok (ab_cg_parse_mountinfo ("50 31 0:40 / /mnt/my\\040cg\\134x rw - cgroup2 cgroup2 rw\n", &h, &err) == 0
          && strcmp (h.mounts[0].mountpoint, "/mnt/my cg\\x") == 0,
      "octal escapes in mount points are decoded");
  ab_cg_host_free (&h);

  ok (ab_cg_parse_mountinfo ("32 31 0:29 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n"
                             "60 23 0:50 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n"
                             "61 60 0:29 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n",
                             &h, &err)
              == 0
          && h.n_mounts == 1 && strcmp (h.mounts[0].mountpoint, "/sys/fs/cgroup/pids") == 0,
      "a mount hidden by a later tmpfs over /sys/fs/cgroup is dropped, the fresh one kept");
  ab_cg_host_free (&h);

  ok (ab_cg_parse_mountinfo ("32 31 0:29 / /sys/fs/cgroup/pids rw cgroup cgroup rw,pids\n", &h, &err) < 0
          && strstr (err.msg, "line 1 is malformed") != NULL,
      "a mountinfo line without the \"-\" separator is an error naming the line");
  ab_cg_host_free (&h);
  ok (ab_cg_parse_proc_cgroup ("4:memory\n", &h, &err) < 0,
      "a /proc/self/cgroup line without a path is an error");
  ab_cg_host_free (&h);
}

static void
test_paths (void)
{
  ab_error_t err = { 0 };
  char *p = NULL, *d;

  d = ab_cg_path_to_dir ("/sys/fs/cgroup/memory", "/", "/a/b");
  is_str (d, "/sys/fs/cgroup/memory/a/b", "root \"/\": the path is appended to the mount point");
  free (d);
  d = ab_cg_path_to_dir ("/sys/fs/cgroup/memory", "/docker/x", "/docker/x/y");
  is_str (d, "/sys/fs/cgroup/memory/y", "a mount of a subtree: the mount root is taken off the path");
  free (d);
  d = ab_cg_path_to_dir ("/sys/fs/cgroup/memory", "/docker/x", "/docker/x");
  is_str (d, "/sys/fs/cgroup/memory", "the mount root itself is the mount point");
  free (d);
  ok (ab_cg_path_to_dir ("/m", "/docker/x", "/docker/xy") == NULL,
      "/docker/xy is not below the root /docker/x");
  ok (ab_cg_path_to_dir ("/m", "/..", "/user.slice") == NULL,
      "a mount from outside our cgroup namespace is unusable");

  ok (ab_cg_container_path ("/myRuntime/c1", "c1", "/", "/own", &p, &err) == 0
          && strcmp (p, "/myRuntime/c1") == 0,
      "an absolute cgroupsPath is taken from the hierarchy's root");
  free (p);
  ok (ab_cg_container_path ("/myRuntime/c1", "c1", "/ns/root", "/ns/root/own", &p, &err) == 0
          && strcmp (p, "/ns/root/myRuntime/c1") == 0,
      "an absolute cgroupsPath is relative to the mount root, not to our own cgroup");
  free (p);
  ok (ab_cg_container_path ("box//c1/", "c1", "/", "/process_api/abc", &p, &err) == 0
          && strcmp (p, "/process_api/abc/box/c1") == 0,
      "a relative cgroupsPath goes below our own cgroup, empty components dropped");
  free (p);
  ok (ab_cg_container_path (NULL, "c1", "/", "/process_api/abc", &p, &err) == 0
          && strcmp (p, "/process_api/abc/agentbox-c1") == 0,
      "no cgroupsPath: <own>/agentbox-<id>");
  free (p);
  p = NULL;
  ok (ab_cg_container_path ("a/../../escape", "c1", "/", "/own", &p, &err) < 0 && err.cls == AB_EC_CONFIG
          && strstr (err.msg, "linux.cgroupsPath") && p == NULL,
      "\"..\" in cgroupsPath is refused, naming linux.cgroupsPath");
  ok (ab_cg_container_path ("/a/./b", "c1", "/", "/own", &p, &err) < 0, "\".\" in cgroupsPath is refused");
  ok (ab_cg_container_path ("/", "c1", "/", "/own", &p, &err) < 0 && strstr (err.msg, "root"),
      "cgroupsPath \"/\" (the hierarchy root) is refused");
  ok (ab_cg_container_path ("a\nb", "c1", "/", "/own", &p, &err) < 0, "control characters are refused");
  ok (ab_cg_container_path (NULL, "../x", "/", "/own", &p, &err) < 0,
      "an id with '/' cannot name the default cgroup");
  is_int (ab_cg_shares_to_weight (1024), 39, "cpu.shares 1024 is cpu.weight 39");
  is_int (ab_cg_shares_to_weight (2), 1, "cpu.shares 2 is cpu.weight 1");
  is_int (ab_cg_shares_to_weight (262144), 10000, "cpu.shares 262144 is cpu.weight 10000");
  is_int (ab_cg_blkio_to_io_weight (500), 4950, "blkio weight 500 is io.weight 4950");
}

/* ---- the device program, run by an interpreter of its instruction subset ---- */

static int
bpf_run (const struct ab_cg_bpf *p, unsigned type, unsigned access, unsigned major, unsigned minor, int *bad)
{
  uint32_t ctx[3] = { (access << 16) | type, major, minor };
  uint64_t r[11] = { 0 };
  size_t pc = 0, steps = 0;

  while (pc < p->n && steps++ < 100000)
    {
      const struct bpf_insn *i = &p->insns[pc++];
      uint64_t *d = &r[i->dst_reg], s = r[i->src_reg], k = (uint64_t)(int64_t)i->imm;

      switch (i->code)
        {
        case BPF_LDX | BPF_W | BPF_MEM:
          *d = ctx[i->off / 4];
          break;
        case BPF_ALU | BPF_MOV | BPF_X:
          *d = (uint32_t)s;
          break;
        case BPF_ALU | BPF_AND | BPF_K:
          *d = (uint32_t)(*d & k);
          break;
        case BPF_ALU | BPF_RSH | BPF_K:
          *d = (uint32_t)*d >> (k & 31);
          break;
        case BPF_ALU64 | BPF_MOV | BPF_K:
          *d = k;
          break;
        case BPF_JMP | BPF_JNE | BPF_K:
          if (*d != k)
            pc += (size_t)i->off;
          break;
        case BPF_JMP | BPF_JEQ | BPF_K:
          if (*d == k)
            pc += (size_t)i->off;
          break;
        case BPF_JMP | BPF_EXIT:
          return (int)r[0];
        default:
          *bad = 1;
          return -1;
        }
    }
  *bad = 1;
  return -1;
}

/* Whether every instruction can be reached from the first (the kernel's
   verifier refuses a program with one that cannot: "unreachable insn"). */
static bool
bpf_all_reachable (const struct ab_cg_bpf *p)
{
  bool *seen = xcalloc (p->n + 1, sizeof *seen);
  bool all = true;
  size_t pc;

  seen[0] = true;
  for (pc = 0; pc < p->n; pc++)
    {
      const struct bpf_insn *i = &p->insns[pc];
      if (!seen[pc])
        continue;
      if (BPF_CLASS (i->code) == BPF_JMP && BPF_OP (i->code) != BPF_EXIT)
        {
          size_t to = pc + 1 + (size_t)i->off;
          if (to < p->n)
            seen[to] = true;
        }
      if (!(BPF_CLASS (i->code) == BPF_JMP && (BPF_OP (i->code) == BPF_EXIT || BPF_OP (i->code) == BPF_JA)))
        seen[pc + 1] = true;
    }
  for (pc = 0; pc < p->n; pc++)
    all = all && seen[pc];
  free (seen);
  return all;
}

#define C BPF_DEVCG_DEV_CHAR
#define B BPF_DEVCG_DEV_BLOCK
#define R BPF_DEVCG_ACC_READ
#define W BPF_DEVCG_ACC_WRITE
#define M BPF_DEVCG_ACC_MKNOD

static void
test_bpf (void)
{
  struct ab_device_rule rules[] = {
    { .allow = true, .type = 'c', .major = { true, 10 }, .minor = { true, 200 }, .access = "rw" }, /* tun */
    { .allow = true, .type = 'b', .major = { true, 8 }, .minor = { false, 0 }, .access = "r" },
    { .allow = false, .type = 'b', .major = { true, 8 }, .minor = { true, 1 }, .access = "" },
    { .allow = true, .type = 'c', .major = { true, 1 }, .minor = { true, 11 }, .access = "rw" },
    { .allow = false, .type = 'c', .major = { true, 1 }, .minor = { true, 11 }, .access = "w" },
    { .allow = false,
      .type = 'c',
      .major = { true, 1 },
      .minor = { true, 3 },
      .access = "" }, /* overridden */
  };
  struct ab_cg_bpf p = { 0 };
  int bad = 0, got;

  ab_cg_devices_bpf (rules, AB_ARRAY_SIZE (rules), &p);
  ok (p.n > 0 && p.n < 200, "the device program is small (%zu instructions)", p.n);
  is_int (bpf_run (&p, C, R | W, 10, 200, &bad), 1, "an allowed device opens read-write");
  is_int (bpf_run (&p, C, M, 10, 200, &bad), 0, "an rw rule does not allow mknod");
  is_int (bpf_run (&p, C, R, 10, 201, &bad), 0, "a device no rule names is denied");
  is_int (bpf_run (&p, B, R, 8, 0, &bad), 1, "a wildcard minor matches any minor");
  is_int (bpf_run (&p, B, R, 8, 1, &bad), 0, "a later deny beats an earlier allow");
  is_int (bpf_run (&p, C, R, 8, 0, &bad), 0, "a block rule does not match a char device");
  is_int (bpf_run (&p, C, R, 1, 11, &bad), 1, "allow rw then deny w: read still allowed");
  is_int (bpf_run (&p, C, R | W, 1, 11, &bad), 0, "allow rw then deny w: asking for rw is denied");
  is_int (bpf_run (&p, C, R | W, 1, 3, &bad), 1, "the default /dev/null survives a user deny");
  is_int (bpf_run (&p, C, M, 1, 3, &bad), 1, "the default /dev/null may be made with mknod");
  is_int (bpf_run (&p, C, R | W, 136, 7, &bad), 1, "pty slaves 136:* open read-write");
  is_int (bpf_run (&p, C, M, 136, 7, &bad), 0, "pty slaves cannot be made with mknod");
  is_int (bpf_run (&p, C, R, 1, 1, &bad), 0, "/dev/mem (1:1) is denied by default");
  ok (!bad, "the program uses only the instructions the interpreter knows and always exits");
  ok (bpf_all_reachable (&p), "every instruction of the program can be reached (the verifier's rule)");
  free (p.insns);

  struct ab_device_rule all[] = { { .allow = true, .type = 'a', .access = "rwm" } };
  ab_cg_devices_bpf (all, 1, &p);
  got = bpf_run (&p, B, R | W | M, 7, 7, &bad);
  is_int (got, 1, "an \"allow a\" rule allows every device");
  ok (bpf_all_reachable (&p), "... with no instruction left unreachable behind it");
  free (p.insns);

  /* runc's default: deny everything first, then allow some. */
  struct ab_device_rule runc[] = {
    { .allow = false, .type = 'a', .access = "rwm" },
    { .allow = true, .type = 'c', .major = { true, 10 }, .minor = { true, 200 }, .access = "rwm" },
  };
  ab_cg_devices_bpf (runc, 2, &p);
  ok (bpf_all_reachable (&p), "a leading \"deny a\" (runc's default) leaves no unreachable instruction");
  is_int (bpf_run (&p, C, R | W, 10, 200, &bad), 1, "... the device allowed after it opens");
  is_int (bpf_run (&p, C, R, 1, 1, &bad), 0, "... any other is denied");
  is_int (bpf_run (&p, C, R | W, 1, 3, &bad), 1, "... and the defaults still apply");
  ok (!bad, "... and the program always exits");
  free (p.insns);
}

static void
test_device_checks (void)
{
  ab_error_t err = { 0 };
  struct ab_device_rule r = { .allow = true, .type = 'c', .major = { true, 5000 }, .access = "r" };

  ok (ab_cg_devices_check (&r, 1, &err) < 0 && strstr (err.msg, "linux.resources.devices[0].major"),
      "a major beyond 4095 is refused, naming the JSON path");
  r.major.v = 1;
  r.type = 'x';
  ok (ab_cg_devices_check (&r, 1, &err) < 0 && strstr (err.msg, "devices[0].type"),
      "an unknown type is refused");
  r.type = 'c';
  strcpy (r.access, "rx");
  ok (ab_cg_devices_check (&r, 1, &err) < 0 && strstr (err.msg, "devices[0].access"),
      "access letters other than rwm are refused");
}

static void
test_state (void)
{
  struct ab_cg_hier hs[2] = {
    { .v2 = false,
      .controllers = (char *)"cpu,cpuacct",
      .mountpoint = (char *)"/nonexistent/cpu",
      .root = (char *)"/",
      .path = (char *)"/own/box/c1",
      .created = 2,
      .dfd = -1 },
    { .v2 = true,
      .controllers = (char *)"",
      .mountpoint = (char *)"/nonexistent/unified",
      .root = (char *)"/ns",
      .path = (char *)"/ns/c1",
      .created = 1,
      .dfd = -1 },
  };
  struct ab_cgroup cg = { .mode = AB_CGROUP_HYBRID, .h = hs, .n = 2, .v2 = &hs[1] };
  _cleanup_gen_ struct ab_gen *g = ab_gen_new (false);
  _cleanup_json_ struct ab_json *j = NULL;
  struct ab_cgroup *back = NULL;
  ab_error_t err = { 0 };
  const char *text;
  size_t len;

  ab_cgroup_gen (&cg, g);
  text = ab_gen_buf (g, &len);
  j = ab_json_parse (text, len, &ab_json_config_limits, "state.json", &err);
  ok (j != NULL, "the state object is valid JSON");
  ok (j && ab_cgroup_load (j, &back, &err) == 0, "the state object loads back");
  if (back)
    {
      ok (back->mode == AB_CGROUP_HYBRID && back->n == 2, "mode and hierarchies round-trip");
      ok (strcmp (back->h[0].controllers, "cpu,cpuacct") == 0 && back->h[0].created == 2
              && strcmp (back->h[0].dir, "/nonexistent/cpu/own/box/c1") == 0,
          "controllers, created count and directory round-trip");
      ok (back->v2 == &back->h[1] && strcmp (ab_cgroup_v2_path (back), "/c1") == 0,
          "the v2 hierarchy and its path relative to the mount root round-trip");
      ok (back->h[0].dfd < 0, "a vanished directory loads as gone, not as an error");
      ab_cgroup_free (back);
    }

  static const char *const bad[] = {
    "{\"mode\":\"v2\",\"hierarchies\":[{\"v2\":true,\"controllers\":\"\",\"mountpoint\":\"/sys/fs/cgroup\","
    "\"root\":\"/\",\"path\":\"/a/../../etc\",\"created\":1}]}",
    "{\"mode\":\"v2\",\"hierarchies\":[{\"v2\":true,\"controllers\":\"\",\"mountpoint\":\"/sys/fs/cgroup\","
    "\"root\":\"/\",\"path\":\"/a\",\"created\":2}]}",
    "{\"mode\":\"v2\",\"hierarchies\":[{\"v2\":true,\"controllers\":\"\",\"mountpoint\":\"/sys/fs/cgroup\","
    "\"root\":\"/x\",\"path\":\"/a\",\"created\":1}]}",
  };
  static const char *const why[]
      = { "a path with \"..\"", "created beyond the path's depth", "a path outside the mount root" };
  for (size_t i = 0; i < AB_ARRAY_SIZE (bad); i++)
    {
      _cleanup_json_ struct ab_json *b
          = ab_json_parse (bad[i], strlen (bad[i]), &ab_json_config_limits, "s", &err);
      back = NULL;
      ok (b && ab_cgroup_load (b, &back, &err) < 0 && back == NULL, "state with %s is refused", why[i]);
    }
}

/* Failures that are not "no such file" are never read as "absent": a
   directory with a regular file in it, where a lookup below the file fails
   with ENOTDIR. */
static char *
lookup_dir (void)
{
  char dir[] = "/tmp/ab-cgroup-test.XXXXXX";
  _cleanup_free_ char *path = NULL;
  int fd;

  if (mkdtemp (dir) == NULL)
    return NULL;
  path = xasprintf ("%s/file", dir);
  fd = open (path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd >= 0)
    close (fd);
  return xstrdup (dir);
}

static void
lookup_dir_remove (char *dir)
{
  _cleanup_free_ char *path = xasprintf ("%s/file", dir);

  unlink (path);
  rmdir (dir);
  free (dir);
}

static void
test_has_file (void)
{
  char *dir = lookup_dir ();
  struct ab_cg_hier h = { .dfd = -1 };

  if (dir == NULL)
    {
      ok (0, "mkdtemp: %s", strerror (errno));
      return;
    }
  h.dfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ok (ab_cg_has_file (&h, "file") && !ab_cg_has_file (&h, "absent"),
      "a limit file that is there is found, one that is absent (ENOENT) is not");
  ok (ab_cg_has_file (&h, "file/below"),
      "a lookup that fails otherwise (ENOTDIR) counts as there: the write is tried and fails loudly, the limit "
      "is never skipped as one the kernel lacks");
  close (h.dfd);
  lookup_dir_remove (dir);
}

/* A recorded cgroup directory whose open fails for another reason than
   its absence still loads, to be removed by its path. */
static void
test_load_unopenable (void)
{
  char *dir = lookup_dir ();
  _cleanup_json_ struct ab_json *j = NULL;
  _cleanup_free_ char *state = NULL;
  struct ab_cgroup *back = NULL;
  ab_error_t err = { 0 };

  if (dir == NULL)
    {
      ok (0, "mkdtemp: %s", strerror (errno));
      return;
    }
  state = xasprintf ("{\"mode\":\"v1\",\"hierarchies\":[{\"v2\":false,\"controllers\":\"pids\",\"mountpoint\":"
                     "\"%s\",\"root\":\"/\",\"path\":\"/file/c1\",\"created\":1}]}",
                     dir);
  j = ab_json_parse (state, strlen (state), &ab_json_config_limits, "state.json", &err);
  ok (j && ab_cgroup_load (j, &back, &err) == 0 && back && back->h[0].dfd < 0 && back->h[0].by_path,
      "a cgroup whose open fails with ENOTDIR loads, kept by its path for delete %s", err.msg);
  ab_cgroup_free (back);
  lookup_dir_remove (dir);
}


/* Rootless (cgroup-deleg.c): which limits a container below a delegated
   cgroup, or without one, cannot have, each with the reason. */
static void
test_unenforced (void)
{
  struct ab_resources r = { 0 };
  struct ab_strv out = { 0 };
  struct ab_cgroup_deleg none = { .usable = false }, deleg = { .usable = true, .dir = (char *) "/sys/fs/cgroup/u",
                                                                .controllers = (char *) "memory pids" };
  struct ab_cgroup_deleg busy = deleg, partial = deleg;

  snprintf (none.why, sizeof none.why, "no cgroup is delegated");
  r.memory_set = true;
  r.memory.limit.set = true;
  r.memory.limit.v = 64 << 20;
  r.pids_set = true;
  r.pids_limit.set = true;
  r.pids_limit.v = 20;

  ab_cgroup_unenforced (&deleg, &r, &out);
  is_int (out.n, 0, "a delegated cgroup with the memory and pids controllers enforces both limits");
  ab_strv_free (&out);

  ab_cgroup_unenforced (&none, &r, &out);
  is_int (out.n, 2, "without a delegated cgroup neither is enforced");
  ok (out.n == 2 && strcmp (out.v[0], "linux.resources.memory.limit\tmemory\tno cgroup is delegated") == 0,
      "... each named by its JSON path and controller, with why (%s)", out.n ? out.v[0] : "");
  ab_strv_free (&out);

  busy.busy = true;
  ab_cgroup_unenforced (&busy, &r, &out);
  is_int (out.n, 0, "controllers already enabled below a cgroup holding processes are enough");
  ab_strv_free (&out);
  busy.controllers = (char *) "";
  ab_cgroup_unenforced (&busy, &r, &out);
  ok (out.n == 2 && strstr (out.v[0], "holds processes") && strstr (out.v[0], "without processes"),
      "below a cgroup that holds processes, none: the no-internal-processes rule is the reason given");
  ab_strv_free (&out);

  partial.controllers = (char *) "pids";
  ab_cgroup_unenforced (&partial, &r, &out);
  ok (out.n == 1 && strncmp (out.v[0], "linux.resources.memory.limit\tmemory\t", 36) == 0
          && strstr (out.v[0], "not in `/sys/fs/cgroup/u/cgroup.controllers` (pids)"),
      "a controller the delegated cgroup cannot give is named with what it has (%s)", out.n ? out.v[0] : "");
  ab_strv_free (&out);

  r.network_set = true;
  ab_cgroup_unenforced (&deleg, &r, &out);
  ok (out.n == 1 && strncmp (out.v[0], "linux.resources.network\tnet_cls\t", 32) == 0,
      "net_cls and net_prio (cgroup v1 only) are never enforced rootless (%zu: %s)", out.n, out.n ? out.v[out.n - 1] : "");
  ab_strv_free (&out);
}

int
main (void)
{
  test_has_file ();
  test_load_unopenable ();
  test_parse ();
  test_paths ();
  test_bpf ();
  test_device_checks ();
  test_state ();
  test_unenforced ();
  return tap_done ();
}
