/* The container's cgroup limits as the host sees them: the process's cgroup
 * in every hierarchy (/proc/PID/cgroup), the hierarchies' mounts in our
 * /proc/self/mountinfo, and the limit files there.  v1, v2 and hybrid hosts
 * alike: a controller mounted as v1 holds the limit, else the cgroup2 tree
 * does (as runtime/cgroup/cgroup-res.c decides). */
#include "config.h"

#include <fcntl.h>
#include <inttypes.h>
#include <unistd.h>

#include "audit/audit-internal.h"
#include "base/util.h"

struct hier
{
  bool v2;
  char *controllers; /* v1: the super options of the mount; v2: "" */
  char *root, *mountpoint;
};

struct cg
{
  struct hier *mounts;
  size_t n_mounts;
  char *v1_paths[16][2]; /* controllers, path */
  size_t n_v1;
  char *v2_path;
};

static void
cg_free (struct cg *c)
{
  for (size_t i = 0; i < c->n_mounts; i++)
    {
      free (c->mounts[i].controllers);
      free (c->mounts[i].root);
      free (c->mounts[i].mountpoint);
    }
  free (c->mounts);
  for (size_t i = 0; i < c->n_v1; i++)
    {
      free (c->v1_paths[i][0]);
      free (c->v1_paths[i][1]);
    }
  free (c->v2_path);
}

static bool
list_has (const char *list, const char *item)
{
  size_t n = strlen (item);

  for (const char *p = list; p && *p;)
    {
      if (strncmp (p, item, n) == 0 && (p[n] == ',' || p[n] == '\0'))
        return true;
      p = strchr (p, ',');
      p = p ? p + 1 : NULL;
    }
  return false;
}

static void
read_mounts (struct cg *c)
{
  _cleanup_fclose_ FILE *f = fopen ("/proc/self/mountinfo", "re");
  char line[4096];

  while (f && fgets (line, sizeof line, f))
    {
      char root[1024], mp[1024], type[32], src[256], opts[1024];
      char *sep = strstr (line, " - ");
      struct hier h = { 0 };

      if (sep == NULL || sscanf (line, "%*d %*d %*s %1023s %1023s", root, mp) != 2
          || sscanf (sep + 3, "%31s %255s %1023s", type, src, opts) != 3)
        continue;
      if (strcmp (type, "cgroup") != 0 && strcmp (type, "cgroup2") != 0)
        continue;
      h.v2 = strcmp (type, "cgroup2") == 0;
      h.controllers = xstrdup (h.v2 ? "" : opts);
      h.root = xstrdup (root);
      h.mountpoint = xstrdup (mp);
      c->mounts = xreallocarray (c->mounts, c->n_mounts + 1, sizeof *c->mounts);
      c->mounts[c->n_mounts++] = h;
    }
}

static void
read_own (struct cg *c, pid_t pid)
{
  char path[64], line[4096];
  _cleanup_fclose_ FILE *f = NULL;

  snprintf (path, sizeof path, "/proc/%d/cgroup", (int)pid);
  f = fopen (path, "re");
  while (f && fgets (line, sizeof line, f))
    {
      char *a = strchr (line, ':'), *b = a ? strchr (a + 1, ':') : NULL;
      if (b == NULL)
        continue;
      *b = '\0';
      b[1 + strcspn (b + 1, "\n")] = '\0';
      if (strcmp (line, "0") == 0 && a[1] == '\0')
        c->v2_path = xstrdup (b + 1);
      else if (c->n_v1 < AB_ARRAY_SIZE (c->v1_paths))
        {
          c->v1_paths[c->n_v1][0] = xstrdup (a + 1);
          c->v1_paths[c->n_v1][1] = xstrdup (b + 1);
          c->n_v1++;
        }
    }
}

/* mountpoint + (path - root), or NULL when the mount shows another part. */
static char *
dir_of (const struct hier *h, const char *path)
{
  size_t rl = strlen (h->root);

  if (strcmp (h->root, "/") == 0)
    return xasprintf ("%s%s", h->mountpoint, path);
  if (strncmp (path, h->root, rl) == 0 && (path[rl] == '/' || path[rl] == '\0'))
    return xasprintf ("%s%s", h->mountpoint, path + rl);
  return NULL;
}

/* The directory holding `controller`'s files for the process: its v1
   hierarchy, else the cgroup2 tree.  *v2 tells which. */
static char *
controller_dir (const struct cg *c, const char *controller, bool *v2)
{
  for (size_t i = 0; i < c->n_v1; i++)
    if (list_has (c->v1_paths[i][0], controller))
      for (size_t k = 0; k < c->n_mounts; k++)
        if (!c->mounts[k].v2 && list_has (c->mounts[k].controllers, controller))
          {
            *v2 = false;
            return dir_of (&c->mounts[k], c->v1_paths[i][1]);
          }
  for (size_t k = 0; c->v2_path && k < c->n_mounts; k++)
    if (c->mounts[k].v2)
      {
        *v2 = true;
        return dir_of (&c->mounts[k], c->v2_path);
      }
  return NULL;
}

static char *
read_value (const char *dir, const char *file)
{
  _cleanup_free_ char *path = xasprintf ("%s/%s", dir, file);
  char *text = NULL;
  ab_error_t err = { 0 };

  if (ab_read_file_at (AT_FDCWD, path, 4096, &text, NULL, &err) < 0)
    return NULL;
  text[strcspn (text, "\n")] = '\0';
  return text;
}

/* A limit of the config against the live file; `want` is the value the
   kernel keeps ("max", or a number), NULL when the config sets none. */
static void
compare (struct ab_live *lv, const char *name, const char *path, const char *dir, const char *file,
         const char *want)
{
  _cleanup_free_ char *have = dir ? read_value (dir, file) : NULL;

  if (have == NULL)
    return;
  if (want == NULL || strcmp (have, want) == 0)
    {
      ab_audit_add (lv->a, AB_AUDIT_S_LIVE, name, path, 0, "%s/%s = %s%s", dir, file, have,
                    want ? ", as the config asks" : " (the config sets none)");
      return;
    }
  ab_audit_add (lv->a, AB_AUDIT_S_LIVE, name, path, AB_AUDIT_L_WEAK, "%s/%s = %s, the config asks %s", dir,
                file, have, want);
  ab_audit_find (lv->a, "AB-LIVE-009", path, "%s/%s is %s, the config asks %s", dir, file, have, want);
}

/* v1 reads "unlimited" as the largest page-aligned long. */
#define V1_UNLIMITED "9223372036854771712"

void
ab_live_cgroups (struct ab_live *lv)
{
  const struct ab_resources *r = lv->s->linux_ ? lv->s->linux_->resources : NULL;
  struct cg c = { 0 };
  _cleanup_free_ char *pids_dir = NULL, *mem_dir = NULL, *cpu_dir = NULL;
  bool pids_v2 = false, mem_v2 = false, cpu_v2 = false;
  char want[64];
  long page = sysconf (_SC_PAGESIZE);

  read_mounts (&c);
  read_own (&c, lv->pid);
  pids_dir = controller_dir (&c, "pids", &pids_v2);
  mem_dir = controller_dir (&c, "memory", &mem_v2);
  cpu_dir = controller_dir (&c, "cpu", &cpu_v2);

  if (r && r->pids_set && r->pids_limit.set)
    snprintf (want, sizeof want, r->pids_limit.v < 0 ? "max" : "%" PRId64, r->pids_limit.v);
  compare (lv, "pids.max", "linux.resources.pids.limit", pids_dir, "pids.max",
           r && r->pids_set && r->pids_limit.set ? want : NULL);

  if (r && r->memory_set && r->memory.limit.set)
    {
      /* The kernel keeps whole pages. */
      int64_t v = r->memory.limit.v;
      if (v < 0)
        snprintf (want, sizeof want, "%s", mem_v2 ? "max" : V1_UNLIMITED);
      else
        snprintf (want, sizeof want, "%" PRId64, v / page * page);
    }
  compare (lv, "memory limit", "linux.resources.memory.limit", mem_dir,
           mem_v2 ? "memory.max" : "memory.limit_in_bytes",
           r && r->memory_set && r->memory.limit.set ? want : NULL);

  if (r && r->cpu_set && r->cpu.quota.set && !cpu_v2)
    {
      snprintf (want, sizeof want, "%" PRId64, r->cpu.quota.v > 0 ? r->cpu.quota.v : -1);
      compare (lv, "cpu quota", "linux.resources.cpu.quota", cpu_dir, "cpu.cfs_quota_us", want);
    }
  else if (r && r->cpu_set && r->cpu.quota.set)
    {
      _cleanup_free_ char *have = cpu_dir ? read_value (cpu_dir, "cpu.max") : NULL;
      snprintf (want, sizeof want, r->cpu.quota.v > 0 ? "%" PRId64 : "max", r->cpu.quota.v);
      /* cpu.max is "QUOTA PERIOD": compare the quota. */
      if (have)
        {
          have[strcspn (have, " ")] = '\0';
          if (strcmp (have, want) != 0)
            {
              ab_audit_add (lv->a, AB_AUDIT_S_LIVE, "cpu quota", "linux.resources.cpu.quota", AB_AUDIT_L_WEAK,
                            "%s/cpu.max quota %s, the config asks %s", cpu_dir, have, want);
              ab_audit_find (lv->a, "AB-LIVE-009", "linux.resources.cpu.quota",
                             "%s/cpu.max quota is %s, the config asks %s", cpu_dir, have, want);
            }
          else
            ab_audit_add (lv->a, AB_AUDIT_S_LIVE, "cpu quota", "linux.resources.cpu.quota", 0,
                          "%s/cpu.max quota %s, as the config asks", cpu_dir, have);
        }
    }
  else if (cpu_dir)
    compare (lv, "cpu quota", "linux.resources.cpu.quota", cpu_dir, cpu_v2 ? "cpu.max" : "cpu.cfs_quota_us",
             NULL);
  cg_free (&c);
}
