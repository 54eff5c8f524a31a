/* Loading a bundle: canonical directory, a bounded read of a regular
   config.json only (a FIFO or device neither blocks nor is read), parse,
   validate, and root.path resolved to a directory. */
#include "config.h"

#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>

#include "runtime/idmap.h"
#include "spec/bundle-links.h"
#include "tests/unit/test-parse-util.h"

static char base[4096];

static char *
at (const char *rel)
{
  return xasprintf ("%s/%s", base, rel);
}

static void
write_file (const char *rel, const char *data)
{
  _cleanup_free_ char *p = at (rel);
  ab_error_t err = { 0 };
  int fd = open (p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

  if (fd < 0 || ab_write_all (fd, data, strlen (data)) < 0)
    {
      printf ("Bail out! cannot write %s: %s\n", p, strerror (errno));
      exit (1);
    }
  close (fd);
  (void)err;
}

static void
make_dir (const char *rel)
{
  _cleanup_free_ char *p = at (rel);
  if (mkdir (p, 0755) < 0)
    {
      printf ("Bail out! mkdir %s: %s\n", p, strerror (errno));
      exit (1);
    }
}

/* Load bundle `rel` and return the error message, or NULL on success. */
static const char *
load_err (const char *rel)
{
  static ab_error_t err;
  _cleanup_free_ char *p = at (rel);
  struct ab_bundle *b = NULL;

  memset (&err, 0, sizeof err);
  if (ab_bundle_load (p, NULL, &b, &err) == 0)
    {
      ab_bundle_free (b);
      return NULL;
    }
  return err.msg;
}

static const char *config_ok = "{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"rootfs\"},"
                               "\"process\":{\"cwd\":\"/\",\"args\":[\"sh\"]}}";

static void
test_load (void)
{
  _cleanup_free_ char *odd = xasprintf ("%s//ok/./", base);
  _cleanup_free_ char *dir = at ("ok"), *rootfs = at ("ok/rootfs");
  ab_error_t err = { 0 };
  struct ab_bundle *b = NULL;

  make_dir ("ok");
  make_dir ("ok/rootfs");
  write_file ("ok/config.json", config_ok);
  ok (ab_bundle_load (odd, NULL, &b, &err) == 0, "a bundle loads: %s", err.msg);
  if (b == NULL)
    return;
  is_str (b->dir, dir, "the bundle directory is made canonical");
  is_str (b->rootfs, rootfs, "root.path is resolved against the bundle");
  ok (b->config_len == strlen (config_ok) && memcmp (b->config, config_ok, b->config_len) == 0
          && b->config[b->config_len] == '\0',
      "the bytes of config.json are kept as read, NUL-terminated");
  ok (b->spec && b->spec->process && strcmp (b->spec->process->args.v[0], "sh") == 0, "the spec is parsed");
  ab_bundle_free (b);
}

static void
test_rootfs (void)
{
  _cleanup_free_ char *msg = NULL, *abs = NULL, *real = at ("ok/rootfs");
  ab_error_t err = { 0 };
  struct ab_bundle *b = NULL;

  make_dir ("norootfs");
  write_file ("norootfs/config.json", config_ok);
  msg = xasprintf (
      "config.json: root.path: `%s/norootfs/rootfs` is not a directory: No such file or directory", base);
  is_str (load_err ("norootfs"), msg, "a missing root filesystem is named with the resolved path");

  make_dir ("filerootfs");
  write_file ("filerootfs/config.json", config_ok);
  write_file ("filerootfs/rootfs", "not a directory");
  free (msg);
  msg = xasprintf ("config.json: root.path: `%s/filerootfs/rootfs` is not a directory", base);
  is_str (load_err ("filerootfs"), msg, "a root filesystem that is a file is refused");

  make_dir ("abs");
  abs = xasprintf ("{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"%s\"}}", real);
  write_file ("abs/config.json", abs);
  {
    _cleanup_free_ char *p = at ("abs");
    ok (ab_bundle_load (p, NULL, &b, &err) == 0 && strcmp (b->rootfs, real) == 0,
        "an absolute root.path is used as is");
    ab_bundle_free (b);
    b = NULL;
  }

  make_dir ("link");
  make_dir ("link/img");
  make_dir ("link/img/rootfs");
  write_file ("link/config.json", config_ok);
  {
    _cleanup_free_ char *p = at ("link"), *l = at ("link/rootfs"), *want = at ("link/img/rootfs");
    if (symlink ("img/rootfs", l) < 0)
      printf ("# symlink: %s\n", strerror (errno));
    ok (ab_bundle_load (p, NULL, &b, &err) == 0 && strcmp (b->rootfs, want) == 0,
        "a root filesystem linked inside the bundle is recorded as the directory it names");
    ab_bundle_free (b);
    b = NULL;
  }

  /* A link of the bundle that leads out: the host directory it names would
     become the container's root.  An absolute root.path says so plainly. */
  make_dir ("outlink");
  write_file ("outlink/config.json", config_ok);
  {
    _cleanup_free_ char *l = at ("outlink/rootfs");
    if (symlink (real, l) < 0)
      printf ("# symlink: %s\n", strerror (errno));
    free (msg);
    msg = xasprintf ("config.json: root.path `rootfs` passes through the symlink `%s/outlink/rootfs` -> `%s` inside "
                     "`%s/outlink`, which leads out of it (name the target itself, or remove the link)",
                     base, real, base);
    is_str (load_err ("outlink"), msg, "a root filesystem linked out of the bundle is refused, naming the link");
  }
}

/* The audit's question (spec/bundle-links.h): does a source pass through a
   symlink of the bundle? */
static void
test_source_link (void)
{
  _cleanup_free_ char *bdir = at ("sl"), *host = at ("sl-host"), *src = NULL, *lp = NULL, *lt = NULL;
  ab_error_t err = { 0 };
  char *want;

  make_dir ("sl");
  make_dir ("sl/rootfs");
  make_dir ("sl/rootfs/usr");
  make_dir ("sl/rootfs/usr/lib");
  make_dir ("sl-host");
  {
    _cleanup_free_ char *a = at ("sl/rootfs/srcvol"), *c = at ("sl/rootfs/lib");
    if (symlink (host, a) < 0 || symlink ("usr/lib", c) < 0)
      printf ("# symlink: %s\n", strerror (errno));
  }
  src = xasprintf ("%s/rootfs/srcvol/x", bdir);
  want = xasprintf ("%s/rootfs/srcvol", bdir);
  ok (ab_bundle_source_link (bdir, src, &lp, &lt, &err) == 1 && lp && strcmp (lp, want) == 0 && lt
          && strcmp (lt, host) == 0,
      "a source through rootfs/srcvol -> the host: 1, the link and its target (%s -> %s)", lp ? lp : "-",
      lt ? lt : "-");
  free (want);
  free (lp);
  free (lt);
  ok (ab_bundle_source_link (bdir, "rootfs/lib/x", &lp, &lt, &err) == 1 && lp && strstr (lp, "/rootfs/lib")
          && strcmp (lt, "usr/lib") == 0,
      "a relative source is relative to the bundle; a link that stays inside counts too");
  free (lp);
  free (lt);
  ok (ab_bundle_source_link (bdir, "rootfs/usr/lib", &lp, &lt, &err) == 0 && lp == NULL,
      "a source without a link: 0");
  ok (ab_bundle_source_link (bdir, host, &lp, &lt, &err) == 0, "a source outside the bundle: 0");
  ok (ab_bundle_source_link (bdir, "rootfs/missing/x", &lp, &lt, &err) == 0,
      "a missing component ends the walk: 0 (the mount reports it)");
  {
    _cleanup_free_ char *gone = at ("no-such-bundle");
    ok (ab_bundle_source_link (gone, "rootfs/x", &lp, &lt, &err) == -1 && strstr (err.msg, "no-such-bundle"),
        "a bundle that cannot be opened: -1 (%s)", err.msg);
  }
}

static void
test_config_file (void)
{
  _cleanup_free_ char *msg = NULL, *fifo = NULL, *zero = NULL, *big = NULL;
  int fd;

  make_dir ("empty");
  msg = xasprintf ("bundle `%s/empty`: open config.json: No such file or directory", base);
  is_str (load_err ("empty"), msg, "a missing config.json is named with the bundle");
  free (msg);
  msg = xasprintf ("bundle `%s/absent`: No such file or directory", base);
  is_str (load_err ("absent"), msg, "a missing bundle directory is named");
  free (msg);
  write_file ("plainfile", "x");
  msg = xasprintf ("bundle `%s/plainfile`: Not a directory", base);
  is_str (load_err ("plainfile"), msg, "a bundle that is a file is refused");

  make_dir ("fifo");
  fifo = at ("fifo/config.json");
  mkfifo (fifo, 0644);
  free (msg);
  msg = xasprintf ("bundle `%s/fifo`: config.json is not a regular file", base);
  alarm (20); /* a blocking open would hang the test: fail it instead */
  is_str (load_err ("fifo"), msg, "a FIFO as config.json neither blocks nor is read");
  alarm (0);

  make_dir ("dev");
  zero = at ("dev/config.json");
  if (symlink ("/dev/zero", zero) < 0)
    printf ("# symlink: %s\n", strerror (errno));
  free (msg);
  msg = xasprintf ("bundle `%s/dev`: config.json is not a regular file", base);
  is_str (load_err ("dev"), msg, "a device as config.json is not read (/dev/zero would never end)");

  make_dir ("dir");
  make_dir ("dir/config.json");
  free (msg);
  msg = xasprintf ("bundle `%s/dir`: config.json is not a regular file", base);
  is_str (load_err ("dir"), msg, "a directory as config.json is refused");

  make_dir ("big");
  make_dir ("big/rootfs");
  big = at ("big/config.json");
  fd = open (big, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0 || ftruncate (fd, (off_t)AB_CONFIG_MAX_BYTES + 1) < 0)
    printf ("# big file: %s\n", strerror (errno));
  if (fd >= 0)
    close (fd);
  free (msg);
  msg = xasprintf ("bundle `%s/big`: config.json: larger than 4194304 bytes: File too large", base);
  is_str (load_err ("big"), msg, "an oversize config.json is refused before it is read");

  make_dir ("bad");
  make_dir ("bad/rootfs");
  write_file ("bad/config.json", "{\"root\":{\"path\":\"rootfs\"}}");
  is_str (load_err ("bad"), "config.json: ociVersion: required",
          "a parse error is reported as the parser words it");
}

/* Load bundle `rel` with config.json `cfg` under `guard`: the error
   message, or NULL on success. */
static const char *
load_cfg_err (const char *rel, const char *cfg, const struct ab_bundle_guard *guard)
{
  static ab_error_t err;
  _cleanup_free_ char *p = at (rel), *file = xasprintf ("%s/config.json", rel);
  struct ab_bundle *b = NULL;

  write_file (file, cfg);
  memset (&err, 0, sizeof err);
  if (ab_bundle_load (p, guard, &b, &err) == 0)
    {
      ab_bundle_free (b);
      return NULL;
    }
  return err.msg;
}

/* Load bundle `rel`, its root.path set to `root`, under `guard`. */
static const char *
load_root_err (const char *rel, const char *root, const struct ab_bundle_guard *guard)
{
  _cleanup_free_ char *cfg = xasprintf ("{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"%s\"},"
                                        "\"process\":{\"cwd\":\"/\",\"args\":[\"sh\"]}}",
                                        root);
  return load_cfg_err (rel, cfg, guard);
}

/* root.path is a root of its own: never the host's /, however it is named,
   never the state root or the cache or a directory above them.  Compared by
   device and inode of what the load opened, so every spelling is caught. */
static void
test_root_identity (void)
{
  _cleanup_free_ char *dotdot = NULL, *slash = at ("slash"), *msg = NULL;
  _cleanup_free_ char *g = at ("ident/g"), *state = at ("ident/g/run/agentbox"), *cache = at ("ident/g/cache");
  _cleanup_free_ char *sib = at ("ident/g/img");
  struct ab_bundle_guard guard = { .state_root = state, .cache = cache };
  struct ab_bundle_guard none = { 0 };
  const char *e;

  make_dir ("ident");
  make_dir ("ident/g");
  make_dir ("ident/g/run");
  make_dir ("ident/g/run/agentbox");
  make_dir ("ident/g/cache");
  make_dir ("ident/g/img");
  e = load_root_err ("ident", "/", NULL);
  is_str (e, "config.json: root.path: `/` is the host's root directory; a container needs a root filesystem of "
             "its own",
          "root.path / is refused, naming root.path");
  dotdot = xasprintf ("%s/../../../../../../../..", base);
  e = load_root_err ("ident", dotdot, &none);
  ok (e && strstr (e, "is the host's root directory"), "a path that climbs to / with .. is refused too: %s",
      e ? e : "(loaded)");
  if (symlink ("/", slash) < 0)
    printf ("# symlink: %s\n", strerror (errno));
  e = load_root_err ("ident", slash, NULL);
  ok (e && strstr (e, "is the host's root directory"), "a symlink to / (outside the bundle) is refused too: %s",
      e ? e : "(loaded)");
  e = load_root_err ("ident", "/proc/self/root", NULL);
  ok (e && strstr (e, "is the host's root directory"), "/proc/self/root is refused too: %s", e ? e : "(loaded)");

  msg = xasprintf ("config.json: root.path: `%s` is or contains agentbox's state root `%s` (--root); the "
                   "container could rewrite it",
                   g, state);
  is_str (load_root_err ("ident", g, &guard), msg, "a directory above the state root is refused");
  e = load_root_err ("ident", state, &guard);
  ok (e && strstr (e, "is or contains agentbox's state root"), "the state root itself is refused: %s",
      e ? e : "(loaded)");
  {
    /* A state root not made yet is checked where create would make it. */
    _cleanup_free_ char *later = at ("ident/g/run/not/yet");
    struct ab_bundle_guard gl = { .state_root = later };
    _cleanup_free_ char *run = at ("ident/g/run");
    e = load_root_err ("ident", run, &gl);
    ok (e && strstr (e, "is or contains agentbox's state root"), "... also before the state root exists: %s",
        e ? e : "(loaded)");
  }
  e = load_root_err ("ident", cache, &guard);
  ok (e && strstr (e, "is or contains agentbox's cache") && strstr (e, "AGENTBOX_CACHE_DIR"),
      "the cache directory is refused: %s", e ? e : "(loaded)");
  ok (load_root_err ("ident", sib, &guard) == NULL, "a sibling of the state root and the cache loads");
  ok (load_root_err ("ident", g, NULL) == NULL, "(without a guard the same directory loads)");
}

/* Load bundle `rel` (root.path `rootfs`, which exists) with one bind mount
   of `source` under `guard`. */
static const char *
load_bind_err (const char *rel, const char *source, const struct ab_bundle_guard *guard)
{
  _cleanup_free_ char *cfg = xasprintf ("{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"rootfs\"},"
                                        "\"process\":{\"cwd\":\"/\",\"args\":[\"sh\"]},"
                                        "\"mounts\":[{\"destination\":\"/w\",\"type\":\"bind\","
                                        "\"source\":\"%s\",\"options\":[\"rbind\",\"rw\"]}]}",
                                        source);
  return load_cfg_err (rel, cfg, guard);
}

/* A bind source neither is, contains, nor lies inside the state root or
   the cache: a container given one could rewrite a state directory's
   config.json (whose hooks a later delete runs on the host) or the seccomp
   programs other containers load.  By device and inode, every spelling. */
static void
test_bind_fence (void)
{
  _cleanup_free_ char *g = at ("fence/g"), *state = at ("fence/g/run/agentbox"), *cache = at ("fence/g/cache");
  _cleanup_free_ char *inner = at ("fence/g/run/agentbox/ctr"), *file = at ("fence/g/run/agentbox/ctr/config.json");
  _cleanup_free_ char *cinner = at ("fence/g/cache/seccomp"), *sib = at ("fence/g/work"), *msg = NULL;
  _cleanup_free_ char *dotted = NULL, *link = at ("fence-links/to-state");
  struct ab_bundle_guard guard = { .state_root = state, .cache = cache };

  make_dir ("fence");
  make_dir ("fence/rootfs");
  make_dir ("fence/g");
  make_dir ("fence/g/run");
  make_dir ("fence/g/run/agentbox");
  make_dir ("fence/g/run/agentbox/ctr");
  write_file ("fence/g/run/agentbox/ctr/config.json", "{}");
  make_dir ("fence/g/cache");
  make_dir ("fence/g/cache/seccomp");
  make_dir ("fence/g/work");
  make_dir ("fence-links");
  if (symlink (state, link) < 0)
    printf ("# symlink: %s\n", strerror (errno));

  msg = xasprintf ("config.json: mounts[0] (/w): source `%s` is or contains agentbox's state root `%s` (--root); "
                   "the container could rewrite it",
                   g, state);
  is_str (load_bind_err ("fence", g, &guard), msg, "a bind of a directory above the state root is refused");
  dotted = xasprintf ("%s/../run/./agentbox/ctr/..", sib);
  {
    const struct
    {
      const char *source, *want, *name;
    } refused[] = {
      { state, "is or contains agentbox's state root", "a bind of the state root itself" },
      { inner, "lies inside agentbox's state root", "a bind of a container's state directory" },
      { file, "lies inside agentbox's state root", "a bind of a file in a state directory" },
      { link, "is or contains agentbox's state root", "a symlink (outside the bundle) to the state root" },
      { dotted, "is or contains agentbox's state root", "a spelling with .. and ." },
      { cinner, "lies inside agentbox's cache `", "a bind of the cache's seccomp programs" },
      { "/", "is or contains agentbox's state root", "a bind of /" },
    };
    for (size_t i = 0; i < AB_ARRAY_SIZE (refused); i++)
      {
        const char *e = load_bind_err ("fence", refused[i].source, &guard);
        ok (e && strstr (e, refused[i].want), "%s: %s", refused[i].name, e ? e : "(loaded)");
      }
  }
  ok (load_bind_err ("fence", sib, &guard) == NULL, "a sibling of the state root and the cache loads");
  ok (load_bind_err ("fence", g, NULL) == NULL, "(without a guard the same directory loads)");
}

/* create clones the root from the fd the load opened and checked
   (ab_rootfs_tree), never from root.path again: a rootfs swapped for a link
   to another directory after the load changes nothing. */
static void
test_root_tree_from_loaded_fd (void)
{
  _cleanup_free_ char *p = at ("swap"), *rootfs = at ("swap/rootfs"), *moved = at ("swap/rootfs.checked");
  _cleanup_close_ int tree = -1;
  ab_error_t err = { 0 };
  struct ab_bundle *b = NULL;

  if (geteuid () != 0)
    {
      printf ("ok %d - # SKIP open_tree needs root\n", ++tap_count);
      return;
    }
  make_dir ("swap");
  make_dir ("swap/rootfs");
  make_dir ("swap/other");
  write_file ("swap/rootfs/checked", "");
  write_file ("swap/other/swapped-in", "");
  write_file ("swap/config.json", config_ok);
  ok (ab_bundle_load (p, NULL, &b, &err) == 0, "(the bundle loads: %s)", err.msg);
  if (b == NULL)
    return;
  if (rename (rootfs, moved) < 0 || symlink ("other", rootfs) < 0)
    printf ("# swap: %s\n", strerror (errno));
  tree = ab_rootfs_tree (b, 0, false, false, &err);
  ok (tree >= 0 && faccessat (tree, "checked", F_OK, 0) == 0 && faccessat (tree, "swapped-in", F_OK, 0) < 0,
      "the root is cloned from the directory the load checked, not from what root.path names now (%s)",
      tree < 0 ? err.msg : "cloned");
  ab_bundle_free (b);

  /* Rootless, the tree is cloned in the container's mount namespace (a
     copy of ours), from the checked directory opened again there by the
     path the kernel gives its fd: the same swap leads there too. */
  b = NULL;
  if (unlink (rootfs) < 0 || rename (moved, rootfs) < 0)
    printf ("# unswap: %s\n", strerror (errno));
  ok (ab_bundle_load (p, NULL, &b, &err) == 0, "(the bundle loads again: %s)", err.msg);
  if (b == NULL)
    return;
  if (rename (rootfs, moved) < 0 || symlink ("other", rootfs) < 0)
    printf ("# swap: %s\n", strerror (errno));
  ab_closep_now (&tree);
  tree = ab_rootfs_tree (b, 0, false, true, &err);
  ok (tree >= 0 && faccessat (tree, "checked", F_OK, 0) == 0 && faccessat (tree, "swapped-in", F_OK, 0) < 0,
      "... and opened again elsewhere (the rootless path), it is still the checked directory (%s)",
      tree < 0 ? err.msg : "cloned");
  ab_bundle_free (b);
}

static void
test_validate_and_bytes (void)
{
  _cleanup_free_ char *dir = at ("ok");
  /* hostname without a UTS namespace: valid JSON, invalid container. */
  static const char invalid[] = "{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"rootfs\"},\"hostname\":\"h\","
                                "\"linux\":{\"namespaces\":[{\"type\":\"pid\"}]}}";
  ab_error_t err = { 0 }, verr = { 0 };
  struct ab_bundle *b = NULL;
  struct ab_spec *s;
  char *copy;

  s = ab_spec_parse (invalid, strlen (invalid), &err);
  ok (s != NULL && ab_spec_validate (s, &verr) < 0, "(the fixture parses and fails validation: %s)",
      verr.msg);
  ab_spec_free (s);
  ok (ab_bundle_from_bytes (dir, NULL, invalid, strlen (invalid), &b, &err) < 0 && strcmp (err.msg, verr.msg) == 0,
      "loading validates: the validator's error is returned");
  copy = xstrdup (config_ok);
  memset (&err, 0, sizeof err);
  ok (ab_bundle_from_bytes (dir, NULL, copy, strlen (copy), &b, &err) == 0, "a bundle loads from bytes: %s",
      err.msg);
  memset (copy, 'x', strlen (copy));
  free (copy);
  ok (b && memcmp (b->config, config_ok, strlen (config_ok)) == 0 && b->spec->process != NULL,
      "from_bytes keeps its own copy of the bytes");
  ab_bundle_free (b);
  b = NULL;
  ok (ab_bundle_from_bytes ("", NULL, config_ok, strlen (config_ok), &b, &err) < 0 && err.cls == AB_EC_USAGE,
      "an empty bundle path is a usage error");
}

static int
rm_entry (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
  (void)st;
  (void)flag;
  (void)ftw;
  return remove (path) < 0 ? -1 : 0;
}

int
main (void)
{
  const char *tmp = getenv ("TMPDIR");
  char real[PATH_MAX];

  snprintf (base, sizeof base, "%s/ab-test-bundle-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
  if (mkdtemp (base) == NULL || realpath (base, real) == NULL)
    {
      printf ("Bail out! mkdtemp: %s\n", strerror (errno));
      return 1;
    }
  snprintf (base, sizeof base, "%s", real);
  test_load ();
  test_rootfs ();
  test_source_link ();
  test_config_file ();
  test_validate_and_bytes ();
  test_root_identity ();
  test_bind_fence ();
  test_root_tree_from_loaded_fd ();
  /* FTW_PHYS: remove the symlinks the tests made, never what they name. */
  if (nftw (base, rm_entry, 16, FTW_DEPTH | FTW_PHYS) < 0)
    printf ("# cleanup of %s failed: %s\n", base, strerror (errno));
  return tap_done ();
}
