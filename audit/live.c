/* agentbox audit ID: the stored config of a container, and what the host
 * sees applied to its process.
 *
 * Everything is read from the host side, never from inside the container:
 * /proc/PID/status, the links of /proc/PID/ns, /proc/PID/uid_map and gid_map here; the
 * mount table, the cgroup files and the nftables wall in live-*.c.  The pid
 * comes from the state directory and is checked against the start time
 * recorded at create, before and after the reading, so a recycled pid is
 * never audited in the container's place.  Every difference from what the
 * config asks is a high finding (AB-LIVE-*). */
#include "config.h"

#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>

#include "audit/audit-internal.h"
#include "runtime/lifecycle/state.h"
#include "base/util.h"
#include "spec/spec.h"
#include "spec/tables.h"

/* ---- /proc/PID/status ------------------------------------------------------------ */

struct status
{
  uint64_t cap[5]; /* CapInh, CapPrm, CapEff, CapBnd, CapAmb */
  int nnp;         /* -1 unknown */
  int seccomp;
  int filters;
};

static void
read_status (pid_t pid, struct status *st)
{
  static const char *const keys[] = { "CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:" };
  char path[64], line[256];
  _cleanup_fclose_ FILE *f = NULL;

  memset (st, 0, sizeof *st);
  st->nnp = st->seccomp = st->filters = -1;
  snprintf (path, sizeof path, "/proc/%d/status", (int)pid);
  f = fopen (path, "re");
  if (f == NULL)
    return;
  while (fgets (line, sizeof line, f))
    {
      for (size_t k = 0; k < AB_ARRAY_SIZE (keys); k++)
        if (ab_str_has_prefix (line, keys[k]))
          st->cap[k] = strtoull (line + strlen (keys[k]), NULL, 16);
      if (ab_str_has_prefix (line, "NoNewPrivs:"))
        st->nnp = atoi (line + 11);
      else if (ab_str_has_prefix (line, "Seccomp:"))
        st->seccomp = atoi (line + 8);
      else if (ab_str_has_prefix (line, "Seccomp_filters:"))
        st->filters = atoi (line + 16);
    }
}

static uint64_t
kernel_caps (void)
{
  char buf[16] = "";
  int fd = open ("/proc/sys/kernel/cap_last_cap", O_RDONLY | O_CLOEXEC);
  int last = 40;

  if (fd >= 0)
    {
      if (read (fd, buf, sizeof buf - 1) > 0)
        last = atoi (buf);
      close (fd);
    }
  return last >= 63 ? UINT64_MAX : (UINT64_C (1) << (last + 1)) - 1;
}

static void
compare_cap (struct ab_live *lv, const char *name, const char *path, uint64_t want, uint64_t have)
{
  _cleanup_free_ char *w = ab_audit_caps_text (want), *h = ab_audit_caps_text (have);

  if (want == have)
    {
      ab_audit_add (lv->a, AB_AUDIT_S_LIVE, name, path, 0, "%s, as the config and execve give", h);
      return;
    }
  ab_audit_add (lv->a, AB_AUDIT_S_LIVE, name, path, AB_AUDIT_L_WEAK, "%s, the config gives %s", h, w);
  ab_audit_find (lv->a, "AB-LIVE-001", path, "%s is %s, the config and execve give %s", name, h, w);
}

static void
live_caps (struct ab_live *lv, const struct status *st)
{
  const struct ab_audit_facts *f = &lv->a->f;
  uint64_t known = kernel_caps ();
  uint64_t amb = f->caps[AB_CAP_AMBIENT] & f->caps[AB_CAP_PERMITTED] & f->caps[AB_CAP_INHERITABLE];

  compare_cap (lv, "CapEff", "process.capabilities.effective", f->caps_exec & known, st->cap[2]);
  compare_cap (lv, "CapPrm", "process.capabilities.permitted", f->caps_exec & known, st->cap[1]);
  compare_cap (lv, "CapInh", "process.capabilities.inheritable", f->caps[AB_CAP_INHERITABLE] & known,
               st->cap[0]);
  compare_cap (lv, "CapBnd", "process.capabilities.bounding", f->caps[AB_CAP_BOUNDING] & known, st->cap[3]);
  compare_cap (lv, "CapAmb", "process.capabilities.ambient", amb & known, st->cap[4]);
}

static void
live_nnp_seccomp (struct ab_live *lv, const struct status *st)
{
  bool want_nnp = lv->a->f.nnp, want_filter = lv->a->f.sc.present;

  if (st->nnp < 0 || (st->nnp == 1) == want_nnp)
    ab_audit_add (lv->a, AB_AUDIT_S_LIVE, "NoNewPrivs", "process.noNewPrivileges", 0,
                  "%d, as the config asks", st->nnp);
  else
    {
      ab_audit_add (lv->a, AB_AUDIT_S_LIVE, "NoNewPrivs", "process.noNewPrivileges", AB_AUDIT_L_WEAK,
                    "%d, the config asks %d", st->nnp, want_nnp);
      ab_audit_find (lv->a, "AB-LIVE-002", "process.noNewPrivileges", "NoNewPrivs is %d, the config asks %d",
                     st->nnp, want_nnp);
    }
  if (st->seccomp < 0 || (st->seccomp == 2 && st->filters > 0) == want_filter)
    ab_audit_add (lv->a, AB_AUDIT_S_LIVE, "Seccomp", "linux.seccomp", 0,
                  "mode %d, %d filter%s, as the config asks", st->seccomp, st->filters,
                  st->filters == 1 ? "" : "s");
  else
    {
      ab_audit_add (lv->a, AB_AUDIT_S_LIVE, "Seccomp", "linux.seccomp", AB_AUDIT_L_WEAK,
                    "mode %d with %d filters, the config asks %s", st->seccomp, st->filters,
                    want_filter ? "a filter" : "none");
      ab_audit_find (lv->a, "AB-LIVE-003", "linux.seccomp",
                     "Seccomp mode %d with %d filters where the config asks %s", st->seccomp, st->filters,
                     want_filter ? "a filter" : "none");
    }
}

/* ---- namespaces ---------------------------------------------------------------------- */

static bool
ns_stat (const char *path, struct stat *st)
{
  return stat (path, st) == 0;
}

static void
live_ns_one (struct ab_live *lv, int t)
{
  const struct ab_audit_facts *f = &lv->a->f;
  const struct ab_namespace *ns = lv->s->linux_ ? &lv->s->linux_->ns[t] : NULL;
  char mine[64], host[64];
  struct stat sm, sh, sj;
  const char *ref = "the host's";
  bool same_host;

  snprintf (mine, sizeof mine, "/proc/%d/ns/%s", (int)lv->pid, ab_ns_proc_name (t));
  if (!ns_stat (mine, &sm))
    return; /* the kernel has no such namespace */
  /* The host's namespaces are those of PID 1; where its links are out of
     reach (a nested host), agentbox's own, which the container shares for
     every namespace the config leaves out. */
  snprintf (host, sizeof host, "/proc/1/ns/%s", ab_ns_proc_name (t));
  if (!ns_stat (host, &sh))
    {
      snprintf (host, sizeof host, "/proc/self/ns/%s", ab_ns_proc_name (t));
      if (!ns_stat (host, &sh))
        return;
      ref = "agentbox's own";
    }
  same_host = sm.st_ino == sh.st_ino && sm.st_dev == sh.st_dev;
  if (f->ns_new[t] && same_host)
    {
      ab_audit_add (lv->a, AB_AUDIT_S_LIVE, ab_ns_name (t), "linux.namespaces",
                    AB_AUDIT_L_HOST | AB_AUDIT_L_WEAK,
                    "%s (inode %" PRIu64 "), the config asks for a new one", ref, (uint64_t)sm.st_ino);
      ab_audit_find (lv->a, "AB-LIVE-004", "linux.namespaces", "the %s namespace is %s, not a new one",
                     ab_ns_name (t), ref);
    }
  else if (ns && ns->present && ns->path)
    {
      bool same = ns_stat (ns->path, &sj) && sj.st_ino == sm.st_ino && sj.st_dev == sm.st_dev;
      ab_audit_add (lv->a, AB_AUDIT_S_LIVE, ab_ns_name (t), "linux.namespaces", same ? 0 : AB_AUDIT_L_WEAK,
                    "inode %" PRIu64 ", %s %s", (uint64_t)sm.st_ino, same ? "the one at" : "not the one at",
                    ns->path);
      if (!same)
        ab_audit_find (lv->a, "AB-LIVE-004", "linux.namespaces", "the %s namespace is not the one at %s",
                       ab_ns_name (t), ns->path);
    }
  else if (f->ns_new[t])
    ab_audit_add (lv->a, AB_AUDIT_S_LIVE, ab_ns_name (t), "linux.namespaces", 0,
                  "inode %" PRIu64 ", not %s: new, as the config asks", (uint64_t)sm.st_ino, ref);
  else
    ab_audit_add (lv->a, AB_AUDIT_S_LIVE, ab_ns_name (t), "linux.namespaces", same_host ? AB_AUDIT_L_HOST : 0,
                  "inode %" PRIu64 ", %s%s", (uint64_t)sm.st_ino, same_host ? ref : "not ",
                  same_host ? ", as the config leaves it" : ref);
}

/* ---- ID maps --------------------------------------------------------------------------- */

static size_t
read_map (pid_t pid, const char *file, struct ab_idmap *v, size_t max)
{
  char path[64];
  _cleanup_fclose_ FILE *f = NULL;
  size_t n = 0;
  unsigned long a, b, c;

  snprintf (path, sizeof path, "/proc/%d/%s", (int)pid, file);
  f = fopen (path, "re");
  while (f && n < max && fscanf (f, "%lu %lu %lu", &a, &b, &c) == 3)
    v[n++] = (struct ab_idmap){ (uint32_t)a, (uint32_t)b, (uint32_t)c };
  return n;
}

static bool
map_equal (const struct ab_idmap *v, size_t n, const struct ab_idmaps *want)
{
  if (n != want->n)
    return false;
  for (size_t i = 0; i < n; i++)
    {
      bool found = false;
      for (size_t j = 0; j < n && !found; j++)
        found = v[i].container_id == want->v[j].container_id && v[i].host_id == want->v[j].host_id
                && v[i].size == want->v[j].size;
      if (!found)
        return false;
    }
  return true;
}

static void
live_map (struct ab_live *lv, const char *file, const char *key, const struct ab_idmaps *cfg)
{
  static const struct ab_idmap all = { 0, 0, UINT32_MAX };
  struct ab_idmap v[340];
  size_t n = read_map (lv->pid, file, v, AB_ARRAY_SIZE (v));
  struct ab_idmaps host = { .v = (struct ab_idmap *)&all, .n = 1 };
  const struct ab_idmaps *want = lv->a->f.userns ? cfg : lv->a->f.ns_present[AB_NS_USER] ? NULL : &host;
  char text[128], path[32];

  snprintf (path, sizeof path, "linux.%s", key);
  snprintf (text, sizeof text, n ? "%u %u %u%s" : "empty", n ? v[0].container_id : 0, n ? v[0].host_id : 0,
            n ? v[0].size : 0, n > 1 ? ", ..." : "");
  if (want == NULL || map_equal (v, n, want))
    {
      ab_audit_add (lv->a, AB_AUDIT_S_LIVE, file, path, 0, "%s%s", text,
                    want ? ", as the config asks" : " (a joined user namespace)");
      return;
    }
  ab_audit_add (lv->a, AB_AUDIT_S_LIVE, file, path, AB_AUDIT_L_WEAK, "%s, not what the config asks", text);
  ab_audit_find (lv->a, "AB-LIVE-008", path, "/proc/%d/%s is %s", (int)lv->pid, file, text);
}

/* caps, no_new_privs, seccomp, namespaces, id maps */
static void
ab_live_process (struct ab_live *lv)
{
  struct status st;
  static const int order[]
      = { AB_NS_USER, AB_NS_MOUNT, AB_NS_PID, AB_NS_NET, AB_NS_IPC, AB_NS_UTS, AB_NS_CGROUP, AB_NS_TIME };

  read_status (lv->pid, &st);
  if (lv->status == AB_STATUS_CREATED)
    ab_audit_add (lv->a, AB_AUDIT_S_LIVE, "process", NULL, 0,
                  "created, not started: capabilities, no_new_privs and seccomp are applied at start");
  else
    {
      live_caps (lv, &st);
      live_nnp_seccomp (lv, &st);
    }
  for (size_t i = 0; i < AB_ARRAY_SIZE (order); i++)
    live_ns_one (lv, order[i]);
  if (lv->s->linux_)
    {
      live_map (lv, "uid_map", "uidMappings", &lv->s->linux_->uid_mappings);
      live_map (lv, "gid_map", "gidMappings", &lv->s->linux_->gid_mappings);
    }
}

/* ---- the container ----------------------------------------------------------------------- */

static int
open_container (const char *root, const char *id, int *dirfd, struct ab_state **st, ab_error_t *err)
{
  _cleanup_close_ int rootfd = -1;

  if (ab_id_validate (id, err) < 0)
    return -1;
  rootfd = ab_state_root_open (root, false, err);
  if (rootfd < 0)
    {
      if (err->cls == AB_EC_NOTFOUND || err->errnum == ENOENT)
        ab_error_setc (err, AB_EC_NOTFOUND, 0, "container `%s` does not exist", id);
      return -1;
    }
  /* Shared lock: delete waits until the audit is done. */
  *dirfd = ab_state_dir_open (rootfd, id, false, err);
  if (*dirfd < 0)
    return -1;
  return ab_state_read (*dirfd, id, st, err);
}

static void
run_live (struct ab_audit_ctx *a, const struct ab_spec *s, const struct ab_state *st, int status)
{
  struct ab_live lv = {
    .pid = st->pid, .status = status, .s = s, .bundle_dir = st->bundle, .a = a, .own_netns = st->own_netns
  };

  ab_live_process (&lv);
  ab_live_mounts (&lv);
  ab_live_cgroups (&lv);
  ab_live_nft (&lv);
}

int
ab_audit_container (const char *root, const char *id, struct ab_audit_report **out, ab_error_t *err)
{
  _cleanup_close_ int dirfd = -1;
  _cleanup_state_ struct ab_state *st = NULL;
  _cleanup_free_ char *buf = NULL;
  _cleanup_audit_report_ struct ab_audit_report *r = xzalloc (sizeof *r);
  struct ab_audit_ctx a = { 0 };
  struct ab_spec *s;
  size_t len;
  int status;

  if (open_container (root, id, &dirfd, &st, err) < 0)
    return -1;
  if (ab_read_file_at (dirfd, AB_CONFIG_FILE, AB_CONFIG_MAX_BYTES, &buf, &len, err) < 0)
    return ab_error_prefix (err, "container `%s`", id);
  s = ab_spec_parse (buf, len, err);
  if (s == NULL)
    return ab_error_prefix (err, "container `%s`: stored", id);
  r->kind = xstrdup ("container");
  r->source = xstrdup (id);
  r->config_path = xasprintf ("%s/%s/%s", root, id, AB_CONFIG_FILE);
  a = (struct ab_audit_ctx){ .s = s, .l = s->linux_, .bundle_dir = st->bundle, .r = r, .rootless = st->rootless };
  ab_audit_passes (&a);
  status = ab_state_status (dirfd, st);
  if ((status == AB_STATUS_RUNNING || status == AB_STATUS_CREATED || status == AB_STATUS_PAUSED)
      && st->pid > 0 && ab_proc_start_time (st->pid, NULL) == st->pid_start)
    {
      r->live = true;
      run_live (&a, s, st, status);
      /* The process we read must still be the container's. */
      if (ab_proc_start_time (st->pid, NULL) != st->pid_start)
        {
          ab_audit_facts_free (&a.f);
          ab_spec_free (s);
          return ab_error_setc (err, AB_EC_STATE, ESRCH, "container `%s` exited during the audit", id);
        }
      r->live_status
          = xasprintf ("%s, pid %d, read from the host side", ab_status_name (status), (int)st->pid);
    }
  else
    r->live_status = xasprintf ("%s: only the stored config was audited", ab_status_name (status));
  ab_audit_facts_free (&a.f);
  ab_spec_free (s);
  ab_audit_report_sort (r);
  *out = ab_steal_ptr (&r);
  return 0;
}
