/* Rootless cgroups: the cgroup v2 directory delegated to the caller, and
 * what a container below it can be limited by (runtime/cgroup/cgroup.h).
 *
 * A user who is not root may make cgroups only where the administrator or
 * systemd delegated a cgroup v2 subtree to it: a directory whose
 * cgroup.procs and cgroup.subtree_control belong to the user (systemd's
 * Delegate=yes, or a chown).  cgroup v1 hierarchies are root's, always.
 * Two more kernel rules decide what can be done there:
 *   - moving a process needs write access to the cgroup.procs of the
 *     nearest common ancestor of its old and new cgroup (cgroup v2
 *     delegation containment): the container, cloned from agentbox's own
 *     cgroup straight into its leaf, must stay inside the delegated
 *     subtree agentbox itself runs in;
 *   - no internal processes: only a cgroup without processes of its own
 *     can enable controllers for its children, so below agentbox's own
 *     cgroup (which holds agentbox) a leaf gets no controller at all --
 *     tracking, cgroup.kill and the freezer, but no limit.  --cgroup-parent
 *     names a delegated cgroup without processes for the limits. */
#include "config.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "runtime/cgroup/cgroup-internal.h"
#include "base/util.h"

void
ab_cgroup_deleg_free (struct ab_cgroup_deleg *d)
{
  free (d->parent);
  free (d->dir);
  free (d->controllers);
  memset (d, 0, sizeof *d);
}

/* The cgroup2 mount that shows our own cgroup, and that cgroup. */
static const struct ab_cg_mount *
v2_mount (const struct ab_cg_host *host, const char **own)
{
  const struct ab_cg_mount *best = NULL;

  *own = NULL;
  for (size_t i = 0; i < host->n_own; i++)
    if (host->own[i].v2)
      *own = host->own[i].path;
  for (size_t i = 0; *own && i < host->n_mounts; i++)
    if (host->mounts[i].v2 && ab_cg_path_covers (host->mounts[i].root, *own)
        && (best == NULL || strcmp (host->mounts[i].mountpoint, "/sys/fs/cgroup") == 0))
      best = &host->mounts[i];
  return best;
}

/* v2_mount of the cgroup2 mount at its usual place alone where that shows
   our cgroup (ab_cg_host_read_v2), else of the whole host, read into
   host. */
static int
find_v2_mount (struct ab_cg_host *host, const struct ab_cg_mount **m, const char **own, ab_error_t *err)
{
  int quick = ab_cg_host_read_v2 (host, err);

  if (quick < 0)
    return -1;
  if (quick > 0 && (*m = v2_mount (host, own)) != NULL)
    return 0;
  ab_cg_host_free (host);
  if (ab_cg_host_read (host, err) < 0)
    return -1;
  *m = v2_mount (host, own);
  return 0;
}

/* Whether the host has v1 hierarchies with a controller (our
   /proc/self/cgroup lists every hierarchy the kernel has). */
static bool
any_v1 (const struct ab_cg_host *host)
{
  for (size_t i = 0; i < host->n_own; i++)
    if (!host->own[i].v2 && ab_cg_has_real_v1_controller (host->own[i].controllers))
      return true;
  return false;
}

/* Whether `dir` is delegated to uid: the directory, its cgroup.procs and
   cgroup.subtree_control belong to it, and cgroup.procs may be written (a
   read-only mount, as in many containers, says no).  why gets the reason
   when not. */
static bool
delegated (const char *dir, uid_t uid, char *why, size_t len)
{
  static const char *const files[] = { ".", "cgroup.procs", "cgroup.subtree_control" };
  _cleanup_close_ int fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  struct stat st;

  if (fd < 0)
    return snprintf (why, len, "`%s`: %s", dir, strerror (errno)), false;
  for (size_t i = 0; i < AB_ARRAY_SIZE (files); i++)
    {
      if (fstatat (fd, files[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
        return snprintf (why, len, "`%s/%s`: %s", dir, files[i], strerror (errno)), false;
      if (st.st_uid != uid)
        return snprintf (why, len, "`%s%s%s` belongs to uid %u", dir, i ? "/" : "", i ? files[i] : "",
                         (unsigned) st.st_uid),
               false;
    }
  if (faccessat (fd, "cgroup.procs", W_OK, AT_EACCESS) < 0)
    return snprintf (why, len, "`%s/cgroup.procs` cannot be written: %s", dir, strerror (errno)), false;
  return true;
}

/* What a new leaf below dir can get: the controllers dir may enable for
   its children (all of cgroup.controllers when it holds no process; when
   it does, only those already enabled, which v2 then allows none of). */
static char *
leaf_controllers (const char *dir, bool *busy)
{
  _cleanup_close_ int fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  _cleanup_free_ char *procs = NULL;
  char *text = NULL;

  *busy = false;
  if (fd < 0 || ab_cg_read_at (fd, "cgroup.procs", &procs) < 0)
    return xstrdup ("");
  *busy = procs[0] != '\0';
  if (ab_cg_read_at (fd, *busy ? "cgroup.subtree_control" : "cgroup.controllers", &text) < 0)
    return xstrdup ("");
  text[strcspn (text, "\n")] = '\0';
  return text;
}

static void
fix_text (struct ab_cgroup_deleg *d, uid_t uid)
{
  snprintf (d->fix, sizeof d->fix,
            "run agentbox in a cgroup v2 subtree delegated to uid %u (systemd-run --user --scope -p "
            "Delegate=yes ..., or a directory an administrator chowned to it) and give a delegated cgroup "
            "without processes of that subtree as --cgroup-parent; or run as root",
            (unsigned) uid);
}

int
ab_cgroup_delegation (const char *parent, struct ab_cgroup_deleg *d, ab_error_t *err)
{
  struct ab_cg_host host = { 0 };
  const struct ab_cg_mount *m;
  const char *own;
  uid_t uid = geteuid ();
  char why[400];
  bool v1;

  memset (d, 0, sizeof *d);
  fix_text (d, uid);
  if (find_v2_mount (&host, &m, &own, err) < 0)
    return -1;
  v1 = any_v1 (&host);
  if (m == NULL)
    {
      snprintf (d->why, sizeof d->why,
                "agentbox runs as uid %u, and this host has no cgroup v2 hierarchy showing its cgroup (cgroup v1 "
                "hierarchies are root's alone)",
                (unsigned) uid);
      ab_cg_host_free (&host);
      return 0;
    }
  d->parent = xstrdup (parent ? parent : own);
  d->dir = ab_cg_path_to_dir (m->mountpoint, m->root, d->parent);
  if (d->dir == NULL)
    {
      ab_cg_host_free (&host);
      ab_cgroup_deleg_free (d);
      return ab_error_setc (err, AB_EC_USAGE, 0, "--cgroup-parent `%s` is not below the root `%s` of the cgroup2 "
                            "mount at %s", parent, m->root, m->mountpoint);
    }
  d->usable = delegated (d->dir, uid, why, sizeof why);
  if (!d->usable && parent)
    {
      ab_cg_host_free (&host);
      ab_cgroup_deleg_free (d);
      return ab_error_setc (err, AB_EC_USAGE, 0, "--cgroup-parent `%s`: %s, not to uid %u: not delegated", parent,
                            why, (unsigned) uid);
    }
  if (!d->usable)
    snprintf (d->why, sizeof d->why, "agentbox runs as uid %u and no cgroup is delegated to it: its cgroup %s%s",
              (unsigned) uid, why, v1 ? ", and the v1 hierarchies are root's" : "");
  else
    {
      bool busy;
      d->controllers = leaf_controllers (d->dir, &busy);
      d->busy = busy;
    }
  ab_cg_host_free (&host);
  return 0;
}

/* One line of ab_cgroup_unenforced. */
static void
unenforced (struct ab_strv *out, const char *path, const char *ctrl, const char *why)
{
  ab_strv_push_owned (out, xasprintf ("%s\t%s\t%s", path, ctrl, why));
}

/* Device rules a user namespace does not give by itself: a deny beyond the
   leading deny-all (the container can make no device node, and has only
   the nodes the runtime binds from the host, which the rules allow). */
static bool
devices_beyond_userns (const struct ab_resources *r)
{
  for (size_t i = 0; i < r->n_devices; i++)
    {
      const struct ab_device_rule *d = &r->devices[i];
      bool all = (d->type == 'a' || d->type == 0) && !d->major.set && !d->minor.set;
      if (!d->allow && !(i == 0 && all))
        return true;
    }
  return false;
}

void
ab_cgroup_unenforced (const struct ab_cgroup_deleg *d, const struct ab_resources *r, struct ab_strv *out)
{
  struct ab_cgroup v2only = { .mode = AB_CGROUP_V2 };
  _cleanup_strv_ struct ab_strv ctrls = { 0 }, paths = { 0 };
  char why[600];

  if (r == NULL)
    return;
  /* Every limit a cgroup v2 tree would enforce, with the controller. */
  ab_cg_v2_needed (&v2only, r, &ctrls, &paths);
  for (size_t i = 0; i < ctrls.n; i++)
    {
      if (!d->usable)
        snprintf (why, sizeof why, "%s", d->why);
      else if (ab_word_in (d->controllers, ctrls.v[i]))
        continue;
      else if (d->busy)
        snprintf (why, sizeof why,
                  "its cgroup would be made below `%s`, which holds processes (agentbox's own), and cgroup v2 "
                  "lets only a cgroup without processes give controllers to its children",
                  d->dir);
      else
        snprintf (why, sizeof why, "the `%s` controller is not in `%s/cgroup.controllers` (%s)", ctrls.v[i],
                  d->dir, d->controllers[0] ? d->controllers : "empty");
      unenforced (out, paths.v[i], ctrls.v[i], why);
    }
  if (r->network_set)
    unenforced (out, "linux.resources.network", "net_cls",
                "net_cls and net_prio are cgroup v1 controllers, whose hierarchies are root's");
  if (devices_beyond_userns (r))
    unenforced (out, "linux.resources.devices", "devices",
                "a cgroup device program needs CAP_SYS_ADMIN on the host (bpf); the user namespace already "
                "keeps the container from making device nodes, but not from using the ones it is given");
}
