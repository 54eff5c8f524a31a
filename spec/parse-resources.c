/* config.json `linux.resources` -> struct ab_resources (config-linux.md,
 * "Control groups").  Values are checked against their schema type and
 * the range the cgroup files accept; names the runtime writes into cgroup
 * files (unified keys, interface and RDMA device names, page sizes) are
 * checked so that they cannot name another file or inject another line. */
#include "config.h"

#include "spec/parse-internal.h"
#include "spec/spec.h"

static int
parse_device_rules (struct ab_jctx *c, struct ab_json *ro, struct ab_resources *res)
{
  struct ab_json *a;
  size_t mark, i;
  int r = ab_jenter (c, ro, "devices", AB_J_ARRAY, AB_OPTIONAL, &a, &mark);

  if (r <= 0)
    return r;
  res->devices = xcalloc (a->u.arr.n, sizeof *res->devices);
  res->n_devices = a->u.arr.n;
  for (i = 0; i < a->u.arr.n; i++)
    {
      char q[AB_QUOTE_SIZE];
      _cleanup_free_ char *type = NULL, *access = NULL;
      struct ab_device_rule *d = &res->devices[i];
      struct ab_json *e;
      size_t im, k;

      if (ab_parse_enter_item (c, a, i, &e, &im) < 0
          || ab_jget_bool (c, e, "allow", AB_REQUIRED, &d->allow) < 0)
        return -1;
      r = ab_jget_str (c, e, "type", AB_OPTIONAL, &type);
      if (r < 0)
        return -1;
      d->type = r > 0 ? type[0] : 'a';
      if (r > 0 && (strlen (type) != 1 || strchr ("acb", type[0]) == NULL))
        {
          ab_jpush_key (c, "type");
          return ab_jerr (c, "unknown device type %s (a, c or b)", ab_quote (q, type));
        }
      /* An unset number means "all" ('*').  -1, the wildcard runtimes use
         internally, is accepted as the same so that a config written from
         that representation keeps its meaning. */
      if (ab_parse_get_opt_i64 (c, e, "major", -1, AB_DEV_MAJOR_MAX, &d->major) < 0
          || ab_parse_get_opt_i64 (c, e, "minor", -1, AB_DEV_MINOR_MAX, &d->minor) < 0)
        return -1;
      d->major.set = d->major.set && d->major.v >= 0;
      d->minor.set = d->minor.set && d->minor.v >= 0;
      r = ab_jget_str (c, e, "access", AB_OPTIONAL, &access);
      if (r < 0)
        return -1;
      for (k = 0; r > 0 && access[k]; k++)
        if (k >= 3 || strchr ("rwm", access[k]) == NULL || strchr (access + k + 1, access[k]) != NULL)
          {
            ab_jpush_key (c, "access");
            return ab_jerr (c, "invalid access %s (a combination of r, w and m)", ab_quote (q, access));
          }
      if (r > 0)
        memcpy (d->access, access, k + 1);
      ab_jpop (c, im);
    }
  ab_jpop (c, mark);
  return 1;
}

static int
parse_memory (struct ab_jctx *c, struct ab_json *ro, struct ab_resources *res)
{
  struct ab_memory *m = &res->memory;
  struct ab_json *o;
  size_t mark;
  int r = ab_jenter (c, ro, "memory", AB_J_OBJECT, AB_OPTIONAL, &o, &mark);

  if (r <= 0)
    return r;
  res->memory_set = true;
  /* Limits are bytes, or -1 for unlimited. */
  if (ab_parse_get_opt_i64 (c, o, "limit", -1, INT64_MAX, &m->limit) < 0
      || ab_parse_get_opt_i64 (c, o, "reservation", -1, INT64_MAX, &m->reservation) < 0
      || ab_parse_get_opt_i64 (c, o, "swap", -1, INT64_MAX, &m->swap) < 0
      || ab_parse_get_opt_i64 (c, o, "kernel", -1, INT64_MAX, &m->kernel) < 0
      || ab_parse_get_opt_i64 (c, o, "kernelTCP", -1, INT64_MAX, &m->kernel_tcp) < 0
      || ab_parse_get_opt_u64 (c, o, "swappiness", 100, &m->swappiness) < 0
      || ab_parse_get_opt_bool (c, o, "disableOOMKiller", &m->disable_oom_killer) < 0
      || ab_parse_get_opt_bool (c, o, "useHierarchy", &m->use_hierarchy) < 0
      || ab_parse_get_opt_bool (c, o, "checkBeforeUpdate", &m->check_before_update) < 0)
    return -1;
  ab_jpop (c, mark);
  return 1;
}

static int
parse_cpu (struct ab_jctx *c, struct ab_json *ro, struct ab_resources *res)
{
  struct ab_cpu *cpu = &res->cpu;
  struct ab_json *o;
  size_t mark;
  int r = ab_jenter (c, ro, "cpu", AB_J_OBJECT, AB_OPTIONAL, &o, &mark);

  if (r <= 0)
    return r;
  res->cpu_set = true;
  /* quota and realtimeRuntime: microseconds, or -1 for unlimited;
     idle: 0 (default) or 1 (SCHED_IDLE), as cpu.idle takes. */
  if (ab_parse_get_opt_u64 (c, o, "shares", UINT64_MAX, &cpu->shares) < 0
      || ab_parse_get_opt_i64 (c, o, "quota", -1, INT64_MAX, &cpu->quota) < 0
      || ab_parse_get_opt_u64 (c, o, "burst", UINT64_MAX, &cpu->burst) < 0
      || ab_parse_get_opt_u64 (c, o, "period", UINT64_MAX, &cpu->period) < 0
      || ab_parse_get_opt_i64 (c, o, "realtimeRuntime", -1, INT64_MAX, &cpu->realtime_runtime) < 0
      || ab_parse_get_opt_u64 (c, o, "realtimePeriod", UINT64_MAX, &cpu->realtime_period) < 0
      || ab_parse_get_cpu_list (c, o, "cpus", &cpu->cpus) < 0
      || ab_parse_get_cpu_list (c, o, "mems", &cpu->mems) < 0
      || ab_parse_get_opt_i64 (c, o, "idle", 0, 1, &cpu->idle) < 0)
    return -1;
  ab_jpop (c, mark);
  return 1;
}

static int
parse_weight_devices (struct ab_jctx *c, struct ab_json *bo, struct ab_blkio *b)
{
  struct ab_json *a;
  size_t mark, i;
  int r = ab_jenter (c, bo, "weightDevice", AB_J_ARRAY, AB_OPTIONAL, &a, &mark);

  if (r <= 0)
    return r;
  b->weight_device = xcalloc (a->u.arr.n, sizeof *b->weight_device);
  b->n_weight_device = a->u.arr.n;
  for (i = 0; i < a->u.arr.n; i++)
    {
      struct ab_blkio_weight_device *w = &b->weight_device[i];
      struct ab_json *e;
      size_t im;

      if (ab_parse_enter_item (c, a, i, &e, &im) < 0
          || ab_parse_dev_numbers (c, e, AB_REQUIRED, &w->major, &w->minor) < 0
          || ab_parse_get_opt_u64 (c, e, "weight", UINT16_MAX, &w->weight) < 0
          || ab_parse_get_opt_u64 (c, e, "leafWeight", UINT16_MAX, &w->leaf_weight) < 0)
        return -1;
      if (!w->weight.set && !w->leaf_weight.set)
        return ab_jerr (c, "at least one of weight and leafWeight is required");
      ab_jpop (c, im);
    }
  ab_jpop (c, mark);
  return 1;
}

static int
parse_throttles (struct ab_jctx *c, struct ab_json *bo, struct ab_blkio *b)
{
  static const char *const keys[AB_THROTTLE__KINDS] = {
    [AB_THROTTLE_READ_BPS] = "throttleReadBpsDevice",
    [AB_THROTTLE_WRITE_BPS] = "throttleWriteBpsDevice",
    [AB_THROTTLE_READ_IOPS] = "throttleReadIOPSDevice",
    [AB_THROTTLE_WRITE_IOPS] = "throttleWriteIOPSDevice",
  };
  int k;

  for (k = 0; k < AB_THROTTLE__KINDS; k++)
    {
      struct ab_json *a;
      size_t mark, i;
      int r = ab_jenter (c, bo, keys[k], AB_J_ARRAY, AB_OPTIONAL, &a, &mark);

      if (r < 0)
        return -1;
      if (r == 0)
        continue;
      b->throttle[k] = xcalloc (a->u.arr.n, sizeof *b->throttle[k]);
      b->n_throttle[k] = a->u.arr.n;
      for (i = 0; i < a->u.arr.n; i++)
        {
          struct ab_blkio_throttle *t = &b->throttle[k][i];
          struct ab_json *e;
          size_t im;

          if (ab_parse_enter_item (c, a, i, &e, &im) < 0
              || ab_parse_dev_numbers (c, e, AB_REQUIRED, &t->major, &t->minor) < 0
              || ab_jget_u64 (c, e, "rate", AB_REQUIRED, UINT64_MAX, &t->rate) < 0)
            return -1;
          ab_jpop (c, im);
        }
      ab_jpop (c, mark);
    }
  return 0;
}

static int
parse_block_io (struct ab_jctx *c, struct ab_json *ro, struct ab_resources *res)
{
  struct ab_json *o;
  size_t mark;
  int r = ab_jenter (c, ro, "blockIO", AB_J_OBJECT, AB_OPTIONAL, &o, &mark);

  if (r <= 0)
    return r;
  res->blkio_set = true;
  if (ab_parse_get_opt_u64 (c, o, "weight", UINT16_MAX, &res->blkio.weight) < 0
      || ab_parse_get_opt_u64 (c, o, "leafWeight", UINT16_MAX, &res->blkio.leaf_weight) < 0
      || parse_weight_devices (c, o, &res->blkio) < 0 || parse_throttles (c, o, &res->blkio) < 0)
    return -1;
  ab_jpop (c, mark);
  return 1;
}

/* "<size><K|M|G>B" with no leading zero, as the schema's pattern
   "^[1-9][0-9]*[KMG]B$": the runtime builds hugetlb.<pageSize>.* file
   names from it. */
static bool
valid_page_size (const char *s)
{
  size_t digits = strspn (s, "0123456789");

  return digits > 0 && s[0] != '0' && s[digits] != '\0' && strchr ("KMG", s[digits]) != NULL
         && strcmp (s + digits + 1, "B") == 0;
}

static int
parse_hugepages (struct ab_jctx *c, struct ab_json *ro, struct ab_resources *res)
{
  struct ab_json *a;
  size_t mark, i;
  int r = ab_jenter (c, ro, "hugepageLimits", AB_J_ARRAY, AB_OPTIONAL, &a, &mark);

  if (r <= 0)
    return r;
  res->hugepages = xcalloc (a->u.arr.n, sizeof *res->hugepages);
  res->n_hugepages = a->u.arr.n;
  for (i = 0; i < a->u.arr.n; i++)
    {
      char q[AB_QUOTE_SIZE];
      struct ab_hugepage_limit *h = &res->hugepages[i];
      struct ab_json *e;
      size_t im;

      if (ab_parse_enter_item (c, a, i, &e, &im) < 0
          || ab_jget_str (c, e, "pageSize", AB_REQUIRED, &h->page_size) < 0)
        return -1;
      if (!valid_page_size (h->page_size))
        {
          ab_jpush_key (c, "pageSize");
          return ab_jerr (c, "invalid page size %s (like \"2MB\" or \"1GB\")",
                          ab_quote (q, h->page_size));
        }
      if (ab_jget_u64 (c, e, "limit", AB_REQUIRED, UINT64_MAX, &h->limit) < 0)
        return -1;
      ab_jpop (c, im);
    }
  ab_jpop (c, mark);
  return 1;
}

static int
parse_network (struct ab_jctx *c, struct ab_json *ro, struct ab_resources *res)
{
  struct ab_json *o, *a;
  size_t mark, pm, i;
  int r = ab_jenter (c, ro, "network", AB_J_OBJECT, AB_OPTIONAL, &o, &mark);

  if (r <= 0)
    return r;
  res->network_set = true;
  if (ab_parse_get_opt_u64 (c, o, "classID", UINT32_MAX, &res->net_class_id) < 0)
    return -1;
  r = ab_jenter (c, o, "priorities", AB_J_ARRAY, AB_OPTIONAL, &a, &pm);
  if (r < 0)
    return -1;
  if (r > 0)
    {
      res->net_priorities = xcalloc (a->u.arr.n, sizeof *res->net_priorities);
      res->n_net_priorities = a->u.arr.n;
      for (i = 0; i < a->u.arr.n; i++)
        {
          struct ab_net_priority *p = &res->net_priorities[i];
          struct ab_json *e;
          size_t im, nm;

          if (ab_parse_enter_item (c, a, i, &e, &im) < 0
              || ab_jget_str (c, e, "name", AB_REQUIRED, &p->name) < 0)
            return -1;
          /* Written as "<name> <priority>" lines to net_prio.ifpriomap. */
          nm = ab_jpush_key (c, "name");
          if (ab_parse_check_ifname (c, p->name) < 0)
            return -1;
          ab_jpop (c, nm);
          if (ab_parse_get_u32 (c, e, "priority", AB_REQUIRED, &p->priority) < 0)
            return -1;
          ab_jpop (c, im);
        }
      ab_jpop (c, pm);
    }
  ab_jpop (c, mark);
  return 1;
}

static int
parse_rdma (struct ab_jctx *c, struct ab_json *ro, struct ab_resources *res)
{
  struct ab_json *o;
  size_t mark, i;
  int r = ab_jenter (c, ro, "rdma", AB_J_OBJECT, AB_OPTIONAL, &o, &mark);

  if (r <= 0)
    return r;
  res->rdma = xcalloc (o->u.obj.n, sizeof *res->rdma);
  for (i = 0; i < o->u.obj.n; i++)
    {
      char q[AB_QUOTE_SIZE];
      struct ab_json_member *m = &o->u.obj.m[i];
      struct ab_rdma *d = &res->rdma[res->n_rdma];
      size_t km;

      m->used = true;
      if (m->key[0] == '\0')
        return ab_jerr (c, "keys must not be empty");
      km = ab_parse_push_user_key (c, m->key);
      /* Written as "<device> hca_handle=..." lines to rdma.max. */
      if (strpbrk (m->key, " \t\n\v\f\r") != NULL)
        return ab_jerr (c, "invalid RDMA device name %s", ab_quote (q, m->key));
      if (m->val->type != AB_J_OBJECT)
        return ab_jerr (c, "must be an object, not %s", ab_jtype_name (m->val->type));
      d->device = xstrdup (m->key);
      res->n_rdma++;
      if (ab_parse_get_opt_u64 (c, m->val, "hcaHandles", UINT32_MAX, &d->hca_handles) < 0
          || ab_parse_get_opt_u64 (c, m->val, "hcaObjects", UINT32_MAX, &d->hca_objects) < 0)
        return -1;
      if (!d->hca_handles.set && !d->hca_objects.set)
        return ab_jerr (c, "at least one of hcaHandles and hcaObjects is required");
      ab_jpop (c, km);
    }
  ab_jpop (c, mark);
  return 1;
}

/* A unified key names a file in the container's cgroup directory: a "/"
   or a ".." would let config.json write to a parent's or a sibling's
   limits. */
static int
check_unified_key (struct ab_jctx *c, const char *key)
{
  char q[AB_QUOTE_SIZE];

  if (strchr (key, '/') != NULL || strcmp (key, ".") == 0 || strcmp (key, "..") == 0)
    return ab_jerr (c, "invalid cgroup file name %s", ab_quote (q, key));
  return 0;
}

/* The members of a LinuxResources object o, whose path is pushed. */
static int
parse_resources_object (struct ab_jctx *c, struct ab_json *o, struct ab_resources *res)
{
  struct ab_json *pids;
  size_t pm;
  int r;

  if (parse_device_rules (c, o, res) < 0 || parse_memory (c, o, res) < 0 || parse_cpu (c, o, res) < 0)
    return -1;
  r = ab_jenter (c, o, "pids", AB_J_OBJECT, AB_OPTIONAL, &pids, &pm);
  if (r < 0)
    return -1;
  if (r > 0)
    {
      /* -1 is "max"; 0 is a valid limit (config-linux.md). */
      if (ab_parse_get_opt_i64 (c, pids, "limit", -1, INT64_MAX, &res->pids_limit) < 0)
        return -1;
      if (!res->pids_limit.set)
        {
          ab_jpush_key (c, "limit");
          return ab_jerr (c, "required");
        }
      res->pids_set = true;
      ab_jpop (c, pm);
    }
  if (parse_block_io (c, o, res) < 0 || parse_hugepages (c, o, res) < 0 || parse_network (c, o, res) < 0
      || parse_rdma (c, o, res) < 0
      || ab_parse_string_map (c, o, "unified", &res->unified, check_unified_key) < 0)
    return -1;
  return 0;
}

int
ab_parse_resources (struct ab_jctx *c, struct ab_json *lo, struct ab_linux *l)
{
  struct ab_json *o;
  size_t mark;
  int r = ab_jenter (c, lo, "resources", AB_J_OBJECT, AB_OPTIONAL, &o, &mark);

  if (r <= 0)
    return r;
  l->resources = xzalloc (sizeof *l->resources);
  if (parse_resources_object (c, o, l->resources) < 0)
    return -1;
  ab_jpop (c, mark);
  return 1;
}

struct ab_resources *
ab_resources_parse (const char *buf, size_t len, const char *file, ab_error_t *err)
{
  _cleanup_json_ struct ab_json *root = NULL;
  struct ab_resources *res;
  struct ab_jctx c;

  root = ab_json_parse (buf, len, &ab_json_config_limits, file, err);
  if (root == NULL)
    {
      if (err != NULL)
        ab_parse_sanitize (err->msg, sizeof err->msg);
      return NULL;
    }
  ab_jctx_init (&c, file, err);
  if (root->type != AB_J_OBJECT)
    {
      ab_jerr (&c, "must be a JSON object (LinuxResources), not %s", ab_jtype_name (root->type));
      return NULL;
    }
  res = xzalloc (sizeof *res);
  if (parse_resources_object (&c, root, res) < 0 || ab_resources_check (&c, res) < 0)
    {
      ab_resources_free (res);
      return NULL;
    }
  return res;
}

/* ---- freeing ---------------------------------------------------------- */

void
ab_resources_free (struct ab_resources *r)
{
  size_t i;
  int k;

  if (r == NULL)
    return;
  free (r->devices);
  free (r->cpu.cpus);
  free (r->cpu.mems);
  free (r->blkio.weight_device);
  for (k = 0; k < AB_THROTTLE__KINDS; k++)
    free (r->blkio.throttle[k]);
  for (i = 0; i < r->n_hugepages; i++)
    free (r->hugepages[i].page_size);
  free (r->hugepages);
  for (i = 0; i < r->n_net_priorities; i++)
    free (r->net_priorities[i].name);
  free (r->net_priorities);
  for (i = 0; i < r->n_rdma; i++)
    free (r->rdma[i].device);
  free (r->rdma);
  ab_kvlist_free (&r->unified);
  free (r);
}
