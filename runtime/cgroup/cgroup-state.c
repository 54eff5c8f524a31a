/* Entering the container's cgroup, and the state another agentbox process
 * needs to act on it (kill, delete).
 */
#include "config.h"

#include <fcntl.h>
#include <unistd.h>

#include "runtime/cgroup/cgroup-internal.h"
#include "base/util.h"

/* ---- enter -------------------------------------------------------------------- */

/* One cgroup.procs write per hierarchy not yet done.  The run path uses it
   for the v2 tree only when CLONE_INTO_CGROUP could not be used: the v1
   ones the child joins itself (ab_cgroup_selfjoin, below). */
int
ab_cgroup_enter (struct ab_cgroup *cg, pid_t pid, bool v2_done, bool v1_done, ab_error_t *err)
{
  char p[16];

  snprintf (p, sizeof p, "%d", (int)pid);
  for (size_t i = 0; i < cg->n; i++)
    {
      if (cg->h[i].v2 ? v2_done : v1_done)
        continue;
      if (ab_cg_write (&cg->h[i], "cgroup.procs", p, "join cgroup", err) < 0)
        return ab_error_prefix (err, "move pid %d", (int)pid);
    }
  return 0;
}

/* ---- exec --cgroup ---------------------------------------------------------------- */

/* h stands for its sub-cgroup rel from now on.  Opened without following
   a symlink on the whole path: cgroupfs has none, and the directory is
   what a process is moved into. */
static int
descend_one (struct ab_cg_hier *h, const char *rel, ab_error_t *err)
{
  char *dir, *path;
  int fd;

  if (h->sub)
    return strcmp (h->sub, rel) == 0
               ? 0
               : ab_error_setc (err, AB_EC_USAGE, 0,
                                "--cgroup: two paths (`%s`, `%s`) for the hierarchy of %s", h->sub, rel,
                                h->dir);
  dir = xasprintf ("%s/%s", h->dir, rel);
  fd = ab_open_canonical (dir, O_RDONLY | O_DIRECTORY);
  if (fd < 0 && errno == ENOSYS)
    fd = open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    {
      ab_error_setc (err, AB_EC_USAGE, errno, "--cgroup: `%s` is not a cgroup below the container's: `%s`",
                     rel, dir);
      free (dir);
      return -1;
    }
  path = xasprintf ("%s/%s", strcmp (h->path, "/") == 0 ? "" : h->path, rel);
  ab_cg_drop_dir (h);
  h->dfd = fd;
  free (h->dir);
  h->dir = dir;
  free (h->path);
  h->path = path;
  h->created = 0; /* never ours to remove */
  h->sub = xstrdup (rel);
  return 0;
}

int
ab_cgroup_descend (struct ab_cgroup *cg, const char *controllers, const char *sub, ab_error_t *err)
{
  _cleanup_free_ char *abs = xasprintf ("/%s", sub + strspn (sub, "/"));
  _cleanup_free_ char *list = controllers ? xstrdup (controllers) : NULL;
  const char *rel = abs + 1;
  char *save = NULL;

  /* (canonical: no . or .. component, no empty one, no trailing /) */
  if (*rel == '\0' || !ab_path_is_canonical (abs))
    return ab_error_setc (err, AB_EC_USAGE, 0,
                          "--cgroup: expected a path below the container's cgroup, got `%s`", sub);
  if (list == NULL)
    {
      for (size_t i = 0; i < cg->n; i++)
        if (cg->h[i].sub == NULL && ab_cg_live (&cg->h[i]) && descend_one (&cg->h[i], rel, err) < 0)
          return -1;
      return 0;
    }
  for (char *c = strtok_r (list, ",", &save); c; c = strtok_r (NULL, ",", &save))
    {
      struct ab_cg_hier *h = ab_cg_v1 (cg, c);
      if (h == NULL)
        return ab_error_setc (err, AB_EC_USAGE, 0,
                              "--cgroup: the container has no cgroup v1 hierarchy with controller `%s`", c);
      if (descend_one (h, rel, err) < 0)
        return -1;
    }
  return 0;
}

/* ---- the child's own v1 join ---------------------------------------------------- */

/* Why a child may move itself, and why that is faster.  A write of a pid
   to a v1 cgroup.procs takes the global cgroup_threadgroup_rwsem for
   writing, and its first down_write in a while waits for an RCU grace
   period: 8-20 ms on this kind of host, the longest step of a start.  A
   write of "0" to `tasks` moves the calling thread alone, and the kernel
   skips that lock for it (kernel/cgroup/cgroup.c, cgroup_procs_write_start:
   `current` cannot exit or exec under the write, cgroup_mutex excludes the
   other writers); it takes ~30 us.  Moving one thread moves the process
   because the child is single-threaded: a fresh clone copies only the
   calling thread, and the child makes no thread.  It writes first thing,
   before it can fork, exec or unshare its cgroup namespace, so nothing it
   starts is ever outside its cgroups.  The permission check uses the
   credentials of the file's opener (of->file->f_cred): the runtime, as it
   was for the cgroup.procs writes; the child's user namespace does not
   matter.  The fds are close-on-exec, and the close_range that follows the
   writes in the child (child.c, exec.c) closes them before anything else
   runs: no program of the container and no hook ever holds one. */
int
ab_cgroup_selfjoin_open (struct ab_cgroup *cg, struct ab_cgroup_selfjoin **out, size_t *n, ab_error_t *err)
{
  struct ab_cgroup_selfjoin *j = xcalloc (cg->n ? cg->n : 1, sizeof *j);
  size_t k = 0;

  for (size_t i = 0; i < cg->n; i++)
    {
      if (cg->h[i].v2)
        continue;
      /* a hierarchy without its cgroup fails here, as the cgroup.procs write did */
      j[k].dir = cg->h[i].dir;
      j[k].fd = ab_cg_open_w (&cg->h[i], "tasks", "join cgroup", err);
      if (j[k].fd < 0)
        {
          ab_cgroup_selfjoin_free (&j, &k);
          return -1;
        }
      k++;
    }
  *out = j;
  *n = k;
  return 0;
}

int
ab_cgroup_selfjoin (struct ab_cgroup_selfjoin *j, size_t n, ab_error_t *err)
{
  for (size_t i = 0; i < n; i++)
    if (write (j[i].fd, "0", 1) != 1)
      return ab_error_setc (err, AB_EC_RESOURCE, errno, "join cgroup: write `0` to `%s/tasks`", j[i].dir);
  return 0;
}

void
ab_cgroup_selfjoin_free (struct ab_cgroup_selfjoin **j, size_t *n)
{
  int *fds;

  if (*j == NULL)
    return;
  fds = xcalloc (*n + 1, sizeof *fds);
  for (size_t i = 0; i < *n; i++)
    fds[i] = (*j)[i].fd;
  ab_close_all (fds, *n); /* opened in a row: one close_range */
  free (fds);
  free (*j);
  *j = NULL;
  *n = 0;
}

/* ---- the container's view ------------------------------------------------------- */

static const char *
base_name (const char *path)
{
  const char *slash = strrchr (path, '/');

  return slash ? slash + 1 : path;
}

size_t
ab_cgroup_views (const struct ab_cgroup *cg, struct ab_cgroup_view *out, size_t max)
{
  size_t n = 0, i;

  if (cg == NULL || cg->mode == AB_CGROUP_V2 || cg->mode == AB_CGROUP_NONE)
    return 0;
  /* v1 first, in the order of the host's mounts; the v2 tree last */
  for (int pass = 0; pass < 2; pass++)
    for (i = 0; i < cg->n && n < max; i++)
      {
        const struct ab_cg_hier *h = &cg->h[i];
        if (h->v2 != (pass == 1) || h->dir == NULL || *base_name (h->mountpoint) == '\0')
          continue;
        out[n++] = (struct ab_cgroup_view){ .name = base_name (h->mountpoint),
                                            .dir = h->dir,
                                            .controllers = h->controllers ? h->controllers : "",
                                            .v2 = h->v2 };
      }
  for (i = 0; i < n; i++)
    if (!out[i].v2)
      return n;
  return 0;
}

const char *
ab_cgroup_v2_dir (const struct ab_cgroup *cg)
{
  return cg && cg->v2 ? cg->v2->dir : NULL;
}

/* ---- state ---------------------------------------------------------------------- */

static const char *const mode_names[] = {
  [AB_CGROUP_NONE] = "none",
  [AB_CGROUP_V1] = "v1",
  [AB_CGROUP_HYBRID] = "hybrid",
  [AB_CGROUP_V2] = "v2",
};

void
ab_cgroup_gen (struct ab_cgroup *cg, struct ab_gen *g)
{
  size_t i;

  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "mode", mode_names[cg->mode]);
  if (cg->planned)
    ab_gen_kv_bool (g, "planned", true);
  if (cg->delegated)
    ab_gen_kv_bool (g, "delegated", true);
  ab_gen_key (g, "hierarchies");
  ab_gen_arr_open (g);
  for (i = 0; i < cg->n; i++)
    {
      ab_gen_obj_open (g);
      ab_gen_kv_bool (g, "v2", cg->h[i].v2);
      ab_gen_kv_str (g, "controllers", cg->h[i].controllers);
      ab_gen_kv_str (g, "mountpoint", cg->h[i].mountpoint);
      ab_gen_kv_str (g, "root", cg->h[i].root);
      ab_gen_kv_str (g, "path", cg->h[i].path);
      ab_gen_kv_u64 (g, "created", cg->h[i].created);
      ab_gen_obj_close (g);
    }
  ab_gen_arr_close (g);
  ab_gen_obj_close (g);
}

static bool
clean_absolute (const char *p)
{
  return ab_path_is_clean_absolute (p) && strlen (p) <= CG_PATH_MAX;
}

static int
load_hier (struct ab_jctx *c, struct ab_json *o, struct ab_cg_hier *h)
{
  uint64_t created = 0;

  if (ab_jget_bool (c, o, "v2", AB_REQUIRED, &h->v2) < 0
      || ab_jget_str (c, o, "controllers", AB_REQUIRED, &h->controllers) < 0
      || ab_jget_str (c, o, "mountpoint", AB_REQUIRED, &h->mountpoint) < 0
      || ab_jget_str (c, o, "root", AB_REQUIRED, &h->root) < 0
      || ab_jget_str (c, o, "path", AB_REQUIRED, &h->path) < 0
      || ab_jget_u64 (c, o, "created", AB_REQUIRED, 4096, &created) < 0)
    return -1;
  /* The state file decides what delete removes: hold it to the same rules
     as a fresh plan, so an edited file cannot aim rmdir elsewhere. */
  if (!clean_absolute (h->mountpoint) || !clean_absolute (h->root) || !clean_absolute (h->path)
      || !ab_cg_path_covers (h->root, h->path))
    return ab_jerr (c, "paths must be clean and absolute, the path below the root");
  h->dir = ab_cg_path_to_dir (h->mountpoint, h->root, h->path);
  if (created > ab_cg_path_depth (h))
    return ab_jerr (c, "created: %llu is more than the path has components", (unsigned long long)created);
  h->created = created;
  h->dfd = open (h->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  /* A directory that could not be opened for another reason than its
     absence is still there to remove: by its path (cgroup.c), so that
     `delete --force` is not stopped by one failed open. */
  if (h->dfd < 0 && errno != ENOENT)
    h->by_path = true;
  return 0;
}

int
ab_cgroup_load (struct ab_json *obj, struct ab_cgroup **out, ab_error_t *err)
{
  _cleanup_ (ab_cgroup_freep) struct ab_cgroup *cg = xzalloc (sizeof *cg);
  _cleanup_free_ char *mode = NULL;
  struct ab_jctx c;
  struct ab_json *arr;
  size_t mark, i, k;

  ab_jctx_init (&c, "state.json", err);
  mark = ab_jpush_key (&c, "cgroup");
  if (obj == NULL || obj->type != AB_J_OBJECT)
    return ab_jerr (&c, "must be an object");
  if (ab_jget_str (&c, obj, "mode", AB_REQUIRED, &mode) < 0)
    return -1;
  for (k = 0; k < AB_ARRAY_SIZE (mode_names); k++)
    if (strcmp (mode, mode_names[k]) == 0)
      break;
  if (k == AB_ARRAY_SIZE (mode_names) || k == AB_CGROUP_NONE)
    return ab_jerr (&c, "mode: unknown `%s`", mode);
  cg->mode = (int)k;
  if (ab_jget_bool (&c, obj, "planned", AB_OPTIONAL, &cg->planned) < 0
      || ab_jget_bool (&c, obj, "delegated", AB_OPTIONAL, &cg->delegated) < 0)
    return -1;
  if (ab_jenter (&c, obj, "hierarchies", AB_J_ARRAY, AB_REQUIRED, &arr, &mark) < 0)
    return -1;
  for (i = 0; i < arr->u.arr.n; i++)
    {
      size_t m = ab_jpush_index (&c, i);
      struct ab_json *o = arr->u.arr.items[i];
      if (o->type != AB_J_OBJECT)
        return ab_jerr (&c, "must be an object");
      if (load_hier (&c, o, ab_cg_hier_add (cg)) < 0)
        return -1;
      ab_jpop (&c, m);
    }
  ab_cg_fix_v2 (cg);
  if (cg->n == 0)
    return ab_jerr (&c, "no hierarchy");
  *out = ab_steal_ptr (&cg);
  return 0;
}
