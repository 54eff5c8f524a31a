/* The container's mount table as the host sees it (/proc/PID/mountinfo),
 * against what the config asks.
 *
 * Paths are never resolved by string inside the container's root, which the
 * container controls: each one is opened below /proc/PID/root with
 * openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS) and the mount it lands
 * on is identified by its mount id (statx STATX_MNT_ID), then looked up in
 * mountinfo.  So a symlink inside the container can neither hide a mount
 * nor lead the audit to a host file. */
#include "config.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>

#include "base/kernel-compat.h"
#include "audit/audit-internal.h"
#include "base/resolve.h"
#include "base/util.h"
#include "spec/defaults.h"

#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x00001000U
#endif
#ifndef STATX_ATTR_MOUNT_ROOT
#define STATX_ATTR_MOUNT_ROOT 0x00002000
#endif

struct minfo
{
  uint64_t id;
  char *point; /* as the container sees it */
  char *opts;  /* per-mount options: "ro,nosuid,nodev,relatime" */
  bool shared; /* optional field shared:N */
  char *fstype;
  bool asked;   /* a path of the config or of agentbox lands on it */
  bool subtree; /* its submounts are expected too (a recursive bind, sysfs) */
};

struct mtab
{
  struct minfo *v;
  size_t n;
};

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static char *
unescape (const char *s)
{
  char *o = xmalloc (strlen (s) + 1), *p = o;

  while (*s)
    {
      if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0'
          && s[3] <= '7')
        {
          *p++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
          s += 4;
        }
      else
        *p++ = *s++;
    }
  *p = '\0';
  return o;
}

static void
mtab_free (struct mtab *t)
{
  for (size_t i = 0; i < t->n; i++)
    {
      free (t->v[i].point);
      free (t->v[i].opts);
      free (t->v[i].fstype);
    }
  free (t->v);
}

static int
mtab_read (pid_t pid, struct mtab *t)
{
  char path[64];
  _cleanup_free_ char *text = NULL;
  ab_error_t err = { 0 };
  size_t len;
  char *line, *save = NULL;

  snprintf (path, sizeof path, "/proc/%d/mountinfo", (int)pid);
  if (ab_read_file_at (AT_FDCWD, path, 16u << 20, &text, &len, &err) < 0)
    return -1;
  for (line = strtok_r (text, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      char *f[6], *rest, *sep = strstr (line, " - "), *tok, *s2 = NULL;
      struct minfo m = { 0 };
      int k = 0;

      if (sep == NULL)
        continue;
      *sep = '\0';
      for (tok = strtok_r (line, " ", &s2); tok && k < 6; tok = strtok_r (NULL, " ", &s2))
        f[k++] = tok;
      if (k < 6)
        continue;
      m.id = strtoull (f[0], NULL, 10);
      m.point = unescape (f[4]);
      m.opts = xstrdup (f[5]);
      for (; tok; tok = strtok_r (NULL, " ", &s2))
        m.shared |= ab_str_has_prefix (tok, "shared:");
      rest = sep + 3;
      m.fstype = xstrndup (rest, strcspn (rest, " "));
      t->v = xreallocarray (t->v, t->n + 1, sizeof *t->v);
      t->v[t->n++] = m;
    }
  return 0;
}

static bool
has_opt (const char *opts, const char *o)
{
  size_t n = strlen (o);

  for (const char *p = opts; p && *p;)
    {
      if (strncmp (p, o, n) == 0 && (p[n] == ',' || p[n] == '\0'))
        return true;
      p = strchr (p, ',');
      p = p ? p + 1 : NULL;
    }
  return false;
}

/* The mount whose root `path` is inside the container, or NULL when the
   path is missing or no mount point (it then lies on its parent's mount).
   *fd_out gets the O_PATH fd of the path, or -1.  The mount found is
   marked as asked for (check_extra reports the others). */
static struct minfo *
mount_of (int rootfd, struct mtab *t, const char *path, int *fd_out)
{
  struct statx stx;
  int fd = ab_open_in_root (rootfd, path, O_PATH | O_NOFOLLOW, 0, NULL);

  *fd_out = fd;
  if (fd < 0 || statx (fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) < 0 || !(stx.stx_mask & STATX_MNT_ID))
    return NULL;
  if ((stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) && !(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
    return NULL;
  for (size_t i = 0; i < t->n; i++)
    if (t->v[i].id == stx.stx_mnt_id)
      {
        t->v[i].asked = true;
        return &t->v[i];
      }
  return NULL;
}

/* ---- the config's mounts ------------------------------------------------------------ */

struct want
{
  bool ro, nosuid, nodev, noexec, not_shared;
};

static struct want
want_of (const struct ab_mount *m)
{
  struct want w;

  w.ro = (m->flags & MS_RDONLY) || (m->attr_set & MOUNT_ATTR_RDONLY);
  w.nosuid = (m->flags & MS_NOSUID) || (m->attr_set & MOUNT_ATTR_NOSUID);
  w.nodev = (m->flags & MS_NODEV) || (m->attr_set & MOUNT_ATTR_NODEV);
  w.noexec = (m->flags & MS_NOEXEC) || (m->attr_set & MOUNT_ATTR_NOEXEC);
  w.not_shared = m->propagation != AB_PROP_SHARED;
  return w;
}

/* What of `w` the live mount lacks, comma-joined into buf; false when nothing. */
static bool
weaker (const struct minfo *mi, struct want w, char *buf, size_t len)
{
  size_t o = 0;

  buf[0] = '\0';
  if (w.ro && !has_opt (mi->opts, "ro"))
    o += (size_t)snprintf (buf + o, len - o, "%sro", o ? "," : "");
  if (w.nosuid && !has_opt (mi->opts, "nosuid"))
    o += (size_t)snprintf (buf + o, len - o, "%snosuid", o ? "," : "");
  if (w.nodev && !has_opt (mi->opts, "nodev"))
    o += (size_t)snprintf (buf + o, len - o, "%snodev", o ? "," : "");
  if (w.noexec && !has_opt (mi->opts, "noexec"))
    o += (size_t)snprintf (buf + o, len - o, "%snoexec", o ? "," : "");
  if (w.not_shared && mi->shared && o < len)
    o += (size_t)snprintf (buf + o, len - o, "%snot shared", o ? "," : "");
  return o > 0;
}

static void
check_point (struct ab_live *lv, int rootfd, struct mtab *t, const char *dest, const char *path,
             struct want w, bool subtree)
{
  _cleanup_close_ int fd = -1;
  struct minfo *mi = mount_of (rootfd, t, dest, &fd);
  char lacks[64];

  if (mi == NULL)
    {
      ab_audit_add (lv->a, AB_AUDIT_S_LIVE, dest, path, AB_AUDIT_L_WEAK, "not mounted");
      ab_audit_find (lv->a, "AB-LIVE-005", path, "%s is not mounted in the running container", dest);
      return;
    }
  mi->subtree |= subtree;
  if (weaker (mi, w, lacks, sizeof lacks))
    {
      ab_audit_add (lv->a, AB_AUDIT_S_LIVE, dest, path, AB_AUDIT_L_WEAK, "%s %s%s, lacks %s", mi->fstype,
                    mi->opts, mi->shared ? " shared" : "", lacks);
      ab_audit_find (lv->a, "AB-LIVE-005", path, "%s is mounted %s%s: %s missing", dest, mi->opts,
                     mi->shared ? " (shared)" : "", lacks);
      return;
    }
  ab_audit_add (lv->a, AB_AUDIT_S_LIVE, dest, path, 0, "%s %s%s", mi->fstype, mi->opts,
                mi->shared ? " shared" : "");
}

/* ---- masked and read-only paths --------------------------------------------------------- */

static void
check_masked (struct ab_live *lv, int rootfd, struct mtab *t, size_t i, const char *p)
{
  _cleanup_close_ int fd = -1;
  const struct minfo *mi = mount_of (rootfd, t, p, &fd);
  char path[48];
  struct stat st;
  bool masked = false;

  snprintf (path, sizeof path, "linux.maskedPaths[%zu]", i);
  if (fd < 0)
    return; /* absent: the runtime skipped it too */
  if (mi && fstat (fd, &st) == 0)
    {
      struct statfs sf;
      if (S_ISCHR (st.st_mode))
        masked = major (st.st_rdev) == 1 && minor (st.st_rdev) == 3;
      else if (S_ISDIR (st.st_mode))
        {
          /* O_PATH fds cannot fstatfs everywhere: reopen the directory. */
          _cleanup_close_ int dfd = openat (fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
          masked = dfd >= 0 && fstatfs (dfd, &sf) == 0 && sf.f_type == TMPFS_MAGIC && st.st_nlink == 2
                   && has_opt (mi->opts, "ro");
        }
    }
  if (masked)
    return;
  ab_audit_add (lv->a, AB_AUDIT_S_LIVE, p, path, AB_AUDIT_L_WEAK, "visible: not masked");
  ab_audit_find (lv->a, "AB-LIVE-006", path, "%s is not masked in the running container", p);
}

static void
check_readonly (struct ab_live *lv, int rootfd, struct mtab *t, size_t i, const char *p)
{
  _cleanup_close_ int fd = -1;
  const struct minfo *mi = mount_of (rootfd, t, p, &fd);
  char path[48];

  snprintf (path, sizeof path, "linux.readonlyPaths[%zu]", i);
  if (fd < 0 || (mi && has_opt (mi->opts, "ro")))
    return;
  ab_audit_add (lv->a, AB_AUDIT_S_LIVE, p, path, AB_AUDIT_L_WEAK, "writable: %s", mi ? mi->opts : "no mount");
  ab_audit_find (lv->a, "AB-LIVE-006", path, "%s is writable in the running container", p);
}

/* ---- mounts nobody asked for --------------------------------------------------------------- */

/* Mounts nobody asked for: not reached by any path the config or agentbox
   mounts on (marked by mount_of: destinations, masked and read-only paths,
   the device nodes agentbox binds in a user namespace, the resolv.conf of
   the egress proxy), and not below a mount whose submounts come with it (a
   recursive bind brings the source's, sysfs may be a recursive bind of the
   host's).  Matching by mount id, not by path, keeps a destination that
   the runtime resolved through a symlink of the rootfs from looking like
   an extra mount. */
static void
mark_runtime_mounts (struct ab_live *lv, int rootfd, struct mtab *t)
{
  /* /dev/console: the pty slave of process.terminal, bound there. */
  static const char *const nodes[]
      = { "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/console" };
  const struct ab_linux *l = lv->s->linux_;
  int fd;

  for (size_t i = 0; i < AB_ARRAY_SIZE (nodes); i++)
    {
      mount_of (rootfd, t, nodes[i], &fd);
      if (fd >= 0)
        close (fd);
    }
  for (size_t i = 0; l && i < l->n_devices; i++)
    {
      mount_of (rootfd, t, l->devices[i].path, &fd);
      if (fd >= 0)
        close (fd);
    }
  if (lv->a->f.egress.enabled)
    {
      mount_of (rootfd, t, "/etc/resolv.conf", &fd);
      if (fd >= 0)
        close (fd);
    }
}

static bool
below (const char *path, const char *dir)
{
  size_t n = strlen (dir);

  if (strcmp (dir, "/") == 0)
    return true;
  return strncmp (path, dir, n) == 0 && path[n] == '/';
}

static void
check_extra (struct ab_live *lv, const struct mtab *t)
{
  for (size_t i = 0; i < t->n; i++)
    {
      bool ok = t->v[i].asked;
      for (size_t k = 0; k < t->n && !ok; k++)
        ok = t->v[k].subtree && below (t->v[i].point, t->v[k].point);
      if (ok)
        continue;
      ab_audit_add (lv->a, AB_AUDIT_S_LIVE, t->v[i].point, "mounts", AB_AUDIT_L_WEAK,
                    "%s %s: not in the config", t->v[i].fstype, t->v[i].opts);
      ab_audit_find (lv->a, "AB-LIVE-007", "mounts", "%s (%s, %s) is mounted but not in the config",
                     t->v[i].point, t->v[i].fstype, t->v[i].opts);
    }
}

void
ab_live_mounts (struct ab_live *lv)
{
  _cleanup_close_ int rootfd = -1;
  struct mtab t = { 0 };
  char path[64];
  const struct ab_linux *l = lv->s->linux_;

  snprintf (path, sizeof path, "/proc/%d/root", (int)lv->pid);
  rootfd = open (path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0 || mtab_read (lv->pid, &t) < 0)
    {
      ab_audit_add (lv->a, AB_AUDIT_S_LIVE, "mounts", NULL, 0, "cannot read the mount table of pid %d",
                    (int)lv->pid);
      mtab_free (&t);
      return;
    }
  check_point (lv, rootfd, &t, "/", "root.readonly",
               (struct want){ .ro = lv->s->root.readonly, .not_shared = true }, false);
  for (size_t i = 0; i < lv->s->n_mounts; i++)
    {
      const struct ab_mount *m = &lv->s->mounts[i];
      bool subtree = (ab_audit_is_bind (m) && m->recursive) || (m->type && strcmp (m->type, "sysfs") == 0);
      char mp[32];
      snprintf (mp, sizeof mp, "mounts[%zu]", i);
      if (strcmp (m->destination, "/") != 0)
        check_point (lv, rootfd, &t, m->destination, mp, want_of (m), subtree);
    }
  for (size_t i = 0; l && i < l->masked_paths.n; i++)
    check_masked (lv, rootfd, &t, i, l->masked_paths.v[i]);
  for (size_t i = 0; l && i < l->readonly_paths.n; i++)
    check_readonly (lv, rootfd, &t, i, l->readonly_paths.v[i]);
  mark_runtime_mounts (lv, rootfd, &t);
  check_extra (lv, &t);
  mtab_free (&t);
}
