#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/stat.h>

#include "runtime/plan/landlock.h"
#include "spec/netpolicy.h"
#include "runtime/sandbox/fallback.h"
#include "runtime/sandbox/sandbox.h"
#include "spec/annotations.h"

#define FILE_RO (AB_LL_FS_READ_FILE | AB_LL_FS_READ_DIR)
#define VIEW_RO (FILE_RO | AB_LL_FS_EXECUTE)
#define DEV_RW (AB_LL_FS_READ_FILE | AB_LL_FS_WRITE_FILE | AB_LL_FS_TRUNCATE | AB_LL_FS_IOCTL_DEV)

/* ---- the host's filesystem, with the masked paths left out -------------------- */

/* path is masked, or lies below a masked path. */
static bool
is_masked (const struct ab_strv *masked, const char *path)
{
  for (size_t i = 0; i < masked->n; i++)
    {
      size_t l = strlen (masked->v[i]);
      if (strncmp (path, masked->v[i], l) == 0 && (path[l] == '\0' || path[l] == '/'))
        return true;
    }
  return false;
}

/* A masked path lies strictly below dir. */
static bool
masks_below (const struct ab_strv *masked, const char *dir)
{
  size_t l = strlen (dir);

  for (size_t i = 0; i < masked->n; i++)
    if (strncmp (masked->v[i], dir, l) == 0 && masked->v[i][l] == '/')
      return true;
  return false;
}

/* `access` beneath dir but nowhere at or below a masked path.  Landlock
   grants beneath a rule's directory and cannot take a right back below
   it, so a directory with a masked path inside gets only read_dir, and
   each of its entries its own rule, down to the masked one, which gets
   none.  Entries that are symlinks get none either: a rule follows its
   path's links (ours are opened without them: nofollow), and a link of
   /etc to /etc/shadow must not carry /etc's rights to the secret. */
static void
grant_except (struct ab_ll_ruleset *rs, const char *dir, uint64_t access, const struct ab_strv *masked,
              int depth)
{
  DIR *d;
  struct dirent *e;

  if (is_masked (masked, dir))
    return;
  if (!masks_below (masked, dir) || depth == 0)
    {
      ab_ll_ruleset_add_path (rs, dir, access, true, true, "host");
      return;
    }
  ab_ll_ruleset_add_path (rs, dir, access & AB_LL_FS_READ_DIR, true, true, "host");
  d = opendir (dir);
  if (d == NULL)
    return;
  while ((e = readdir (d)) != NULL)
    {
      _cleanup_free_ char *child = NULL;
      struct stat st;
      if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
        continue;
      child = xasprintf ("%s/%s", strcmp (dir, "/") ? dir : "", e->d_name);
      if (fstatat (dirfd (d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || S_ISLNK (st.st_mode))
        continue;
      grant_except (rs, child, access, masked, depth - 1);
    }
  closedir (d);
}

static void
host_rules (struct ab_ll_ruleset *rs, const struct ab_strv *masked)
{
  static const char *const devs[]
      = { "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty" };
  size_t n;
  const char *const *view = ab_sandbox_host_view (&n);

  /* Nothing on "/" itself: a right there holds beneath it all (even
     read_dir would list every directory of the host). */
  for (size_t i = 0; i < n; i++)
    {
      struct stat st;
      /* a usr-merged /bin is a link into /usr: /usr's rule covers it */
      if (lstat (view[i], &st) == 0 && S_ISDIR (st.st_mode))
        grant_except (rs, view[i], strcmp (view[i], "/etc") == 0 ? FILE_RO : VIEW_RO, masked, 8);
    }
  /* /proc lists a directory per process, made as processes start: it
     cannot be cut into rules, so it is readable whole (a process outside
     the sandbox is still guarded: ptrace-mode access crosses no landlock
     domain). */
  ab_ll_ruleset_add_path (rs, "/proc", FILE_RO, true, true, "host");
  grant_except (rs, "/sys", FILE_RO, masked, 8);
  for (size_t i = 0; i < AB_ARRAY_SIZE (devs); i++)
    ab_ll_ruleset_add_path (rs, devs[i], DEV_RW, true, true, "host");
}

/* ---- the workspace and the private directory --------------------------------- */

static const char *
ws_destination (const struct ab_spec *s)
{
  return s->workspace.destination ? s->workspace.destination : AB_WS_DEFAULT_DESTINATION;
}

/* The host directory of the bind at the workspace's destination; NULL for
   anything else there (a tmpfs: the private one stands in). */
static char *
ws_host_dir (const struct ab_bundle *b)
{
  const struct ab_spec *s = b->spec;
  const char *dest = ws_destination (s);

  for (size_t i = s->n_mounts; i-- > 0;)
    if (strcmp (s->mounts[i].destination, dest) == 0)
      {
        _cleanup_free_ char *src = NULL;
        if (!ab_mount_is_bind (&s->mounts[i]) || s->mounts[i].source == NULL)
          return NULL;
        src = s->mounts[i].source[0] == '/' ? xstrdup (s->mounts[i].source)
                                            : xasprintf ("%s/%s", b->dir, s->mounts[i].source);
        return realpath (src, NULL);
      }
  return NULL;
}

static int
make_private_dir (struct ab_sandbox_fallback *f, ab_error_t *err)
{
  const char *tmp = getenv ("TMPDIR");
  static const char *const subs[] = { "home", "tmp", "workspace" };

  f->private_dir = xasprintf ("%s/agentbox-fallback-XXXXXX", tmp && *tmp == '/' ? tmp : "/tmp");
  if (mkdtemp (f->private_dir) == NULL)
    {
      int e = errno;
      free (f->private_dir);
      f->private_dir = NULL;
      return ab_error_set (err, e, "the fallback's private directory: mkdtemp");
    }
  for (size_t i = 0; i < AB_ARRAY_SIZE (subs); i++)
    {
      _cleanup_free_ char *p = xasprintf ("%s/%s", f->private_dir, subs[i]);
      if (mkdir (p, 0700) < 0)
        return ab_error_set (err, errno, "mkdir `%s`", p);
    }
  return 0;
}

static void
env_set (struct ab_strv *env, const char *name, const char *value)
{
  size_t nl = strlen (name);

  for (size_t i = 0; i < env->n; i++)
    if (strncmp (env->v[i], name, nl) == 0 && env->v[i][nl] == '=')
      {
        free (env->v[i]);
        env->v[i] = xasprintf ("%s=%s", name, value);
        return;
      }
  ab_strv_push_owned (env, xasprintf ("%s=%s", name, value));
}

/* process.cwd on the host: below the workspace's destination, below the
   workspace; any other directory as it is (read-only). */
static int
map_cwd (const struct ab_spec *s, struct ab_sandbox_fallback *f, ab_error_t *err)
{
  const char *cwd = s->process->cwd ? s->process->cwd : "/";
  const char *dest = ws_destination (s);
  size_t l = strlen (dest);
  struct stat st;

  if (strncmp (cwd, dest, l) == 0 && (cwd[l] == '\0' || cwd[l] == '/'))
    f->cwd = xasprintf ("%s%s", f->workspace, cwd + l);
  else
    f->cwd = xstrdup (cwd);
  if (stat (f->cwd, &st) < 0 || !S_ISDIR (st.st_mode))
    return ab_error_setc (
        err, AB_EC_CONFIG, errno ? errno : ENOTDIR,
        "process.cwd: `%s` is no directory of this host (the fallback has no mount namespace)", f->cwd);
  return 0;
}

/* ---- the network -------------------------------------------------------------- */

static void
net_rules (const struct ab_spec *s, struct ab_ll_ruleset *rs, struct ab_strv *degraded)
{
  const struct ab_net_policy *p = &s->agentbox.net;
  bool any = false;

  rs->handled[AB_LL_KIND_NET] = AB_LL_NET_BIND_TCP | AB_LL_NET_CONNECT_TCP;
  for (size_t i = 0; i < p->n_allow; i++)
    if (p->allow[i].proto != IPPROTO_UDP)
      {
        any = any || p->allow[i].port == 0;
        if (p->allow[i].port)
          ab_ll_ruleset_add_port (rs, p->allow[i].port, AB_LL_NET_CONNECT_TCP);
      }
  /* An entry for every port of an address: landlock knows ports, not
     addresses, so TCP connect stays open. */
  if (any)
    rs->handled[AB_LL_KIND_NET] &= ~AB_LL_NET_CONNECT_TCP;
  ab_strv_push_owned (
      degraded, xasprintf ("network: no network namespace; landlock refuses TCP bind%s, by port only (it "
                           "knows no addresses); UDP, ICMP and Unix sockets are not governed",
                           any           ? ""
                           : rs->n_ports ? " and TCP connect but to the ports of dev.agentbox.net.allow"
                                         : " and every TCP connect"));
  if (s->agentbox.egress.enabled)
    ab_strv_push (degraded, "network: " AB_ANNOT_NET_ALLOW_DOMAINS ": no egress proxy without a network "
                            "namespace: the names are not reachable through it");
}

/* ---- the whole ------------------------------------------------------------------- */

static void
list_degraded (const struct ab_spec *s, const struct ab_sandbox_fallback *f, const char *refusal,
               struct ab_strv *d)
{
  ab_strv_push_owned (d,
                      xasprintf ("namespaces: none (%s): the program shares the host's pid, mount, network, "
                                 "ipc, uts, cgroup and time namespaces",
                                 refusal));
  ab_strv_push_owned (d, xasprintf ("pid: the program sees the host's processes%s",
                                    f->landlock.handled[AB_LL_KIND_SCOPE] & AB_LL_SCOPE_SIGNAL
                                        ? "; landlock refuses it signals to those outside the sandbox"
                                        : " and may signal those of its own user (landlock ABI below 6)"));
  ab_strv_push_owned (d,
                      xasprintf ("mounts: none; the host's /usr, /etc, /bin, /sbin, /lib* are read-only "
                                 "through landlock, linux.maskedPaths unreadable but below /proc (readable "
                                 "whole); the workspace is `%s`, not %s; HOME and TMPDIR are in `%s`",
                                 f->workspace, ws_destination (s), f->private_dir));
  ab_strv_push (d, "cgroup: no memory, pids or CPU limit of its own; rlimits only (RLIMIT_NPROC counts every "
                   "process of the user); no cgroup statistics");
  ab_strv_push (d, "unix sockets: landlock does not govern connect(2) to a named socket the host's readable "
                   "directories show");
  if (s->process->user.uid != getuid ())
    ab_strv_push_owned (d,
                        xasprintf ("process.user: the program runs as uid %u (the caller), not %u of a user "
                                   "namespace",
                                   (unsigned)getuid (), (unsigned)s->process->user.uid));
}

int
ab_sandbox_fallback (const struct ab_bundle *b, const char *refusal, struct ab_sandbox_fallback *out,
                     ab_error_t *err)
{
  const struct ab_spec *s = b->spec;
  const struct ab_linux *l = s->linux_;
  struct ab_strv no_masks = { 0 };
  _cleanup_strv_ struct ab_strv net_degraded = { 0 };
  struct ab_ll_ruleset want = { .abi = AB_LL_ABI_MAX, .best_effort = true };
  const char *why;
  unsigned abi = ab_landlock_abi (&why);
  int r;

  memset (out, 0, sizeof *out);
  ab_set_step ("fallback");
  if (s->process == NULL)
    return ab_error_setc (err, AB_EC_CONFIG, 0,
                          "config.json: process: required (the container has nothing to run)");
  if (abi == 0)
    return ab_error_setc (err, AB_EC_SETUP, EOPNOTSUPP,
                          "%s, and the fallback needs landlock, which is not available either: %s", refusal,
                          why);
  if (s->workspace.mode == AB_WS_MODE_OVERLAY)
    return ab_error_setc (err, AB_EC_CONFIG, 0,
                          "config.json: annotations." AB_ANNOT_WS_MODE ": an overlay workspace needs a mount "
                          "namespace, which the fallback does not have");
  if (make_private_dir (out, err) < 0)
    return -1;
  out->workspace = ws_host_dir (b);
  if (out->workspace == NULL)
    out->workspace = xasprintf ("%s/workspace", out->private_dir);

  want.handled[AB_LL_KIND_FS] = ab_ll_known (AB_LL_KIND_FS, AB_LL_ABI_MAX);
  want.handled[AB_LL_KIND_SCOPE] = AB_LL_SCOPE_ABSTRACT_UNIX_SOCKET | AB_LL_SCOPE_SIGNAL;
  host_rules (&want, l ? &l->masked_paths : &no_masks);
  ab_ll_ruleset_add_path (&want, out->workspace, AB_LL_AUTO_RW, false, false, "workspace");
  ab_ll_ruleset_add_path (&want, out->private_dir, AB_LL_AUTO_RW, true, false, "private directory");
  net_rules (s, &want, &net_degraded);
  r = ab_landlock_fit (&want, abi, &out->landlock, &out->degraded, err);
  ab_ll_ruleset_free (&want);
  if (r < 0 || map_cwd (s, out, err) < 0)
    return -1;
  if (l && l->seccomp)
    {
      if (ab_seccomp_compile_cached (l->seccomp, &out->seccomp, err) < 0)
        return -1;
      out->have_seccomp = true;
    }
  for (size_t i = 0; i < s->process->env.n; i++)
    ab_strv_push (&out->env, s->process->env.v[i]);
  {
    _cleanup_free_ char *home = xasprintf ("%s/home", out->private_dir);
    _cleanup_free_ char *tmp = xasprintf ("%s/tmp", out->private_dir);
    env_set (&out->env, "HOME", home);
    env_set (&out->env, "TMPDIR", tmp);
    env_set (&out->env, "AGENTBOX_WORKSPACE", out->workspace);
  }
  list_degraded (s, out, refusal, &out->degraded);
  for (size_t i = 0; i < net_degraded.n; i++)
    ab_strv_push (&out->degraded, net_degraded.v[i]);
  out->run = (struct ab_fallback){
    .argv = s->process->args.v,
    .envp = out->env.v,
    .cwd = out->cwd,
    .process = s->process,
    .nproc = l && l->resources && l->resources->pids_set && l->resources->pids_limit.set
                     && l->resources->pids_limit.v > 0
                 ? (uint64_t)l->resources->pids_limit.v
                 : 0,
    .seccomp = out->have_seccomp ? &out->seccomp : NULL,
    .landlock = &out->landlock,
    .stdio = { -1, -1, -1 },
  };
  return 0;
}

void
ab_sandbox_fallback_free (struct ab_sandbox_fallback *f)
{
  if (f->private_dir)
    {
      /* What the program left there is its own: never follow its links. */
      char *slash = strrchr (f->private_dir, '/');
      _cleanup_close_ int parent = -1;
      *slash = '\0';
      parent = open (*f->private_dir ? f->private_dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (parent >= 0)
        ab_rm_tree_at (parent, slash + 1, 64);
      *slash = '/';
    }
  ab_ll_ruleset_free (&f->landlock);
  if (f->have_seccomp)
    ab_seccomp_prog_free (&f->seccomp);
  free (f->private_dir);
  free (f->workspace);
  free (f->cwd);
  ab_strv_free (&f->env);
  ab_strv_free (&f->degraded);
  memset (f, 0, sizeof *f);
}
