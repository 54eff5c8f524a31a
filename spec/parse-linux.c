/* config.json `linux` object -> struct ab_linux (config-linux.md).
 *
 * Same conventions as parse.c: schema types are enforced, enumerations
 * must be known names, and values the kernel would refuse or silently
 * truncate are refused here with their JSON path.  Strings that the runtime
 * turns into file names (sysctl keys, intelRdt.closID) are
 * checked so that they cannot name a file outside the directory they are
 * meant for. */
#include "config.h"

#include "spec/parse-internal.h"
#include "spec/spec.h"
#include "spec/tables.h"

#define NSEC_PER_SEC 1000000000u
#define ERRNO_MAX 4095      /* MAX_ERRNO: the kernel caps SCMP_ACT_ERRNO data here */
#define TRACE_MSG_MAX 65535 /* SCMP_ACT_TRACE carries 16 bits */

/* ---- namespaces, id mappings, time offsets ---------------------------- */

static int
parse_namespaces (struct ab_jctx *c, struct ab_json *lo, struct ab_linux *l)
{
  struct ab_json *a;
  size_t mark, i;
  int r = ab_jenter (c, lo, "namespaces", AB_J_ARRAY, AB_OPTIONAL, &a, &mark);

  if (r <= 0)
    return r;
  for (i = 0; i < a->u.arr.n; i++)
    {
      char q[AB_QUOTE_SIZE];
      _cleanup_free_ char *type = NULL;
      struct ab_json *e;
      size_t im, tm;
      int t;

      if (ab_parse_enter_item (c, a, i, &e, &im) < 0 || ab_jget_str (c, e, "type", AB_REQUIRED, &type) < 0)
        return -1;
      tm = ab_jpush_key (c, "type");
      t = ab_ns_from_name (type);
      if (t < 0)
        return ab_jerr (c, "unknown namespace %s", ab_quote (q, type));
      /* config-linux.md: duplicated types MUST be an error. */
      if (l->ns[t].present)
        return ab_jerr (c, "duplicate namespace %s", ab_quote (q, type));
      l->ns[t].present = true;
      l->ns[t].index = (unsigned) i;
      ab_jpop (c, tm);
      if (ab_parse_get_path (c, e, "path", AB_OPTIONAL, &l->ns[t].path) < 0)
        return -1;
      ab_jpop (c, im);
    }
  ab_jpop (c, mark);
  return 1;
}

static int
parse_time_offsets (struct ab_jctx *c, struct ab_json *lo, struct ab_linux *l)
{
  struct ab_json *o;
  size_t mark, i;
  int r = ab_jenter (c, lo, "timeOffsets", AB_J_OBJECT, AB_OPTIONAL, &o, &mark);

  if (r <= 0)
    return r;
  for (i = 0; i < o->u.obj.n; i++)
    {
      char q[AB_QUOTE_SIZE];
      struct ab_json_member *m = &o->u.obj.m[i];
      struct ab_time_offset *t;
      uint64_t ns = 0;
      size_t km;

      m->used = true;
      km = ab_parse_push_user_key (c, m->key);
      /* time_namespaces(7): only these two clocks can be offset. */
      if (strcmp (m->key, "monotonic") == 0)
        t = &l->time_monotonic;
      else if (strcmp (m->key, "boottime") == 0)
        t = &l->time_boottime;
      else
        return ab_jerr (c, "unknown clock %s (only monotonic and boottime have offsets)",
                        ab_quote (q, m->key));
      if (m->val->type != AB_J_OBJECT)
        return ab_jerr (c, "must be an object, not %s", ab_jtype_name (m->val->type));
      if (ab_jget_i64 (c, m->val, "secs", AB_OPTIONAL, INT64_MIN, INT64_MAX, &t->secs) < 0
          || ab_jget_u64 (c, m->val, "nanosecs", AB_OPTIONAL, NSEC_PER_SEC - 1, &ns) < 0)
        return -1;
      t->nanosecs = (uint32_t)ns;
      t->set = true;
      ab_jpop (c, km);
    }
  ab_jpop (c, mark);
  return 1;
}

/* ---- devices, network devices ----------------------------------------- */

static int
parse_devices (struct ab_jctx *c, struct ab_json *lo, struct ab_linux *l)
{
  struct ab_json *a;
  size_t mark, i;
  int r = ab_jenter (c, lo, "devices", AB_J_ARRAY, AB_OPTIONAL, &a, &mark);

  if (r <= 0)
    return r;
  l->devices = xcalloc (a->u.arr.n, sizeof *l->devices);
  l->n_devices = a->u.arr.n;
  for (i = 0; i < a->u.arr.n; i++)
    {
      char q[AB_QUOTE_SIZE];
      _cleanup_free_ char *type = NULL;
      struct ab_device *d = &l->devices[i];
      struct ab_json *e;
      size_t im;

      if (ab_parse_enter_item (c, a, i, &e, &im) < 0 || ab_jget_str (c, e, "type", AB_REQUIRED, &type) < 0)
        return -1;
      if (strlen (type) != 1 || strchr ("cbup", type[0]) == NULL)
        {
          ab_jpush_key (c, "type");
          return ab_jerr (c, "unknown device type %s (c, b, u or p)", ab_quote (q, type));
        }
      d->type = type[0];
      /* major and minor are REQUIRED unless the device is a FIFO. */
      if (ab_parse_get_path (c, e, "path", AB_REQUIRED, &d->path) < 0
          || ab_parse_dev_numbers (c, e, d->type != 'p', &d->major, &d->minor) < 0)
        return -1;
      if ((r = ab_parse_get_u32 (c, e, "fileMode", AB_OPTIONAL, &d->file_mode)) < 0)
        return -1;
      d->file_mode_set = r > 0;
      if ((r = ab_parse_get_u32 (c, e, "uid", AB_OPTIONAL, &d->uid)) < 0)
        return -1;
      d->uid_set = r > 0;
      if ((r = ab_parse_get_u32 (c, e, "gid", AB_OPTIONAL, &d->gid)) < 0)
        return -1;
      d->gid_set = r > 0;
      ab_jpop (c, im);
    }
  ab_jpop (c, mark);
  return 1;
}

static int
parse_net_devices (struct ab_jctx *c, struct ab_json *lo, struct ab_linux *l)
{
  struct ab_json *o;
  size_t mark, i;
  int r = ab_jenter (c, lo, "netDevices", AB_J_OBJECT, AB_OPTIONAL, &o, &mark);

  if (r <= 0)
    return r;
  l->net_devices = xcalloc (o->u.obj.n, sizeof *l->net_devices);
  for (i = 0; i < o->u.obj.n; i++)
    {
      struct ab_json_member *m = &o->u.obj.m[i];
      struct ab_net_device *d = &l->net_devices[l->n_net_devices];
      size_t km, nm;

      m->used = true;
      km = ab_parse_push_user_key (c, m->key);
      if (ab_parse_check_ifname (c, m->key) < 0)
        return -1;
      if (m->val->type != AB_J_OBJECT)
        return ab_jerr (c, "must be an object, not %s", ab_jtype_name (m->val->type));
      d->host_name = xstrdup (m->key);
      l->n_net_devices++;
      r = ab_jget_str (c, m->val, "name", AB_OPTIONAL, &d->name);
      if (r < 0)
        return -1;
      nm = ab_jpush_key (c, "name");
      if (r > 0 && ab_parse_check_ifname (c, d->name) < 0)
        return -1;
      ab_jpop (c, nm);
      ab_jpop (c, km);
    }
  ab_jpop (c, mark);
  return 1;
}

/* ---- intelRdt, sysctl ------------------------------------------------- */

static int
check_no_newline (struct ab_jctx *c, const char *s)
{
  /* Each value is one line of the resctrl schemata file. */
  if (strpbrk (s, "\r\n") != NULL)
    return ab_jerr (c, "must not contain a newline");
  return 0;
}

static int
parse_intel_rdt (struct ab_jctx *c, struct ab_json *lo, struct ab_linux *l)
{
  char q[AB_QUOTE_SIZE];
  struct ab_intel_rdt *rdt;
  struct ab_json *o;
  size_t mark, m, i;
  int r = ab_jenter (c, lo, "intelRdt", AB_J_OBJECT, AB_OPTIONAL, &o, &mark);

  if (r <= 0)
    return r;
  rdt = l->intel_rdt = xzalloc (sizeof *rdt);
  if ((r = ab_jget_str (c, o, "closID", AB_OPTIONAL, &rdt->clos_id)) < 0)
    return -1;
  /* closID names a directory of the resctrl filesystem ("/" is its root):
     anything else with a '/' or a dot-name would name another group's. */
  m = ab_jpush_key (c, "closID");
  if (r > 0 && strcmp (rdt->clos_id, "/") != 0
      && (rdt->clos_id[0] == '\0' || strchr (rdt->clos_id, '/') != NULL || strcmp (rdt->clos_id, ".") == 0
          || strcmp (rdt->clos_id, "..") == 0 || strpbrk (rdt->clos_id, "\r\n") != NULL))
    return ab_jerr (c, "invalid CLOS name %s (a directory name, or \"/\")", ab_quote (q, rdt->clos_id));
  ab_jpop (c, m);
  if ((r = ab_jget_str (c, o, "l3CacheSchema", AB_OPTIONAL, &rdt->l3_cache_schema)) < 0)
    return -1;
  m = ab_jpush_key (c, "l3CacheSchema");
  if (r > 0 && check_no_newline (c, rdt->l3_cache_schema) < 0)
    return -1;
  ab_jpop (c, m);
  if ((r = ab_jget_str (c, o, "memBwSchema", AB_OPTIONAL, &rdt->mem_bw_schema)) < 0)
    return -1;
  m = ab_jpush_key (c, "memBwSchema");
  if (r > 0 && !ab_str_has_prefix (rdt->mem_bw_schema, "MB:"))
    return ab_jerr (c, "must start with \"MB:\"");
  if (r > 0 && check_no_newline (c, rdt->mem_bw_schema) < 0)
    return -1;
  ab_jpop (c, m);
  if ((r = ab_jget_strv (c, o, "schemata", AB_OPTIONAL, &rdt->schemata)) < 0)
    return -1;
  rdt->schemata_set = r > 0;
  m = ab_jpush_key (c, "schemata");
  for (i = 0; i < rdt->schemata.n; i++)
    {
      size_t im = ab_jpush_index (c, i);
      if (check_no_newline (c, rdt->schemata.v[i]) < 0)
        return -1;
      ab_jpop (c, im);
    }
  ab_jpop (c, m);
  if (ab_jget_bool (c, o, "enableMonitoring", AB_OPTIONAL, &rdt->enable_monitoring) < 0)
    return -1;
  ab_jpop (c, mark);
  return 1;
}

/* A sysctl key becomes a path under /proc/sys (dots or slashes separate
   its components, as in sysctl(8)): no ".." and no leading separator, or
   the key could name any file of /proc. */
static int
check_sysctl_key (struct ab_jctx *c, const char *key)
{
  char q[AB_QUOTE_SIZE];

  if (key[0] == '.' || key[0] == '/' || strstr (key, "..") != NULL)
    return ab_jerr (c, "invalid sysctl name %s", ab_quote (q, key));
  return 0;
}

/* ---- seccomp ---------------------------------------------------------- */

static int64_t
seccomp_flag_bit (const char *name)
{
  return ab_seccomp_flag_from_name (name);
}

/* config-linux.md: errnoRet is only meaningful with SCMP_ACT_ERRNO and
   SCMP_ACT_TRACE; with any other action the runtime MUST fail.  The value
   must also fit the action's data: libseccomp keeps 16 bits and the kernel
   caps an errno at MAX_ERRNO, so 65536 would become "return 0", a silent
   success instead of the denial the user wrote. */
static int
get_errno_ret (struct ab_jctx *c, struct ab_json *o, const char *key, int action, bool *set, uint32_t *out)
{
  struct ab_json *v = ab_json_member (o, key);
  uint64_t max = action == AB_SCMP_ACT_TRACE ? TRACE_MSG_MAX : ERRNO_MAX;
  uint64_t e;
  size_t mark;

  if (v == NULL || v->type == AB_J_NULL)
    return 0;
  mark = ab_jpush_key (c, key);
  if (action != AB_SCMP_ACT_ERRNO && action != AB_SCMP_ACT_TRACE)
    return ab_jerr (c, "only valid with SCMP_ACT_ERRNO or SCMP_ACT_TRACE, not %s",
                    ab_seccomp_action_name (action));
  if (ab_jval_u64 (c, v, max, &e) < 0)
    return -1;
  *set = true;
  *out = (uint32_t)e;
  ab_jpop (c, mark);
  return 1;
}

static int
get_action (struct ab_jctx *c, struct ab_json *o, const char *key, int *out)
{
  char q[AB_QUOTE_SIZE];
  _cleanup_free_ char *name = NULL;

  if (ab_jget_str (c, o, key, AB_REQUIRED, &name) < 0)
    return -1;
  *out = ab_seccomp_action_from_name (name);
  if (*out < 0)
    {
      ab_jpush_key (c, key);
      return ab_jerr (c, "unknown seccomp action %s", ab_quote (q, name));
    }
  return 1;
}

static int
parse_syscall_args (struct ab_jctx *c, struct ab_json *so, struct ab_seccomp_rule *rule)
{
  struct ab_json *a;
  size_t mark, i;
  int r = ab_jenter (c, so, "args", AB_J_ARRAY, AB_OPTIONAL, &a, &mark);

  if (r <= 0)
    return r;
  rule->args = xcalloc (a->u.arr.n, sizeof *rule->args);
  rule->n_args = a->u.arr.n;
  for (i = 0; i < a->u.arr.n; i++)
    {
      char q[AB_QUOTE_SIZE];
      _cleanup_free_ char *op = NULL;
      struct ab_seccomp_arg *arg = &rule->args[i];
      struct ab_json *e;
      uint64_t index;
      size_t im;

      /* A system call has six arguments, 0 to 5. */
      if (ab_parse_enter_item (c, a, i, &e, &im) < 0
          || ab_jget_u64 (c, e, "index", AB_REQUIRED, 5, &index) < 0
          || ab_jget_u64 (c, e, "value", AB_REQUIRED, UINT64_MAX, &arg->value) < 0
          || ab_jget_u64 (c, e, "valueTwo", AB_OPTIONAL, UINT64_MAX, &arg->value_two) < 0
          || ab_jget_str (c, e, "op", AB_REQUIRED, &op) < 0)
        return -1;
      arg->index = (uint32_t)index;
      arg->op = ab_seccomp_op_from_name (op);
      if (arg->op < 0)
        {
          ab_jpush_key (c, "op");
          return ab_jerr (c, "unknown seccomp operator %s", ab_quote (q, op));
        }
      ab_jpop (c, im);
    }
  ab_jpop (c, mark);
  return 1;
}

static int
parse_syscalls (struct ab_jctx *c, struct ab_json *so, struct ab_seccomp *sc)
{
  struct ab_json *a;
  size_t mark, i;
  int r = ab_jenter (c, so, "syscalls", AB_J_ARRAY, AB_OPTIONAL, &a, &mark);

  if (r <= 0)
    return r;
  sc->syscalls = xcalloc (a->u.arr.n, sizeof *sc->syscalls);
  sc->n_syscalls = a->u.arr.n;
  for (i = 0; i < a->u.arr.n; i++)
    {
      struct ab_seccomp_rule *rule = &sc->syscalls[i];
      struct ab_json *e;
      size_t im, nm, k;

      if (ab_parse_enter_item (c, a, i, &e, &im) < 0
          || ab_jget_strv (c, e, "names", AB_REQUIRED, &rule->names) < 0)
        return -1;
      nm = ab_jpush_key (c, "names");
      if (rule->names.n == 0)
        return ab_jerr (c, "must contain at least one entry");
      for (k = 0; k < rule->names.n; k++)
        if (rule->names.v[k][0] == '\0')
          {
            ab_jpush_index (c, k);
            return ab_jerr (c, "must not be empty");
          }
      ab_jpop (c, nm);
      if (get_action (c, e, "action", &rule->action) < 0
          || get_errno_ret (c, e, "errnoRet", rule->action, &rule->errno_ret_set, &rule->errno_ret) < 0
          || parse_syscall_args (c, e, rule) < 0)
        return -1;
      ab_jpop (c, im);
    }
  ab_jpop (c, mark);
  return 1;
}

static int
parse_seccomp (struct ab_jctx *c, struct ab_json *lo, struct ab_linux *l)
{
  struct ab_seccomp *sc;
  struct ab_json *o;
  uint64_t flags = 0;
  size_t mark, i;
  int r = ab_jenter (c, lo, "seccomp", AB_J_OBJECT, AB_OPTIONAL, &o, &mark);

  if (r <= 0)
    return r;
  sc = l->seccomp = xzalloc (sizeof *sc);
  if (get_action (c, o, "defaultAction", &sc->default_action) < 0
      || get_errno_ret (c, o, "defaultErrnoRet", sc->default_action, &sc->default_errno_ret_set,
                        &sc->default_errno_ret)
             < 0
      || ab_jget_strv (c, o, "architectures", AB_OPTIONAL, &sc->architectures) < 0)
    return -1;
  for (i = 0; i < sc->architectures.n; i++)
    if (ab_seccomp_arch_index (sc->architectures.v[i]) < 0)
      {
        char q[AB_QUOTE_SIZE];
        ab_jpush_key (c, "architectures");
        ab_jpush_index (c, i);
        return ab_jerr (c, "unknown architecture %s", ab_quote (q, sc->architectures.v[i]));
      }
  if (ab_parse_flag_names (c, o, "flags", "seccomp flag", seccomp_flag_bit, &flags) < 0)
    return -1;
  sc->flags = (unsigned)flags;
  if (ab_jget_str (c, o, "listenerPath", AB_OPTIONAL, &sc->listener_path) < 0
      || ab_jget_str (c, o, "listenerMetadata", AB_OPTIONAL, &sc->listener_metadata) < 0)
    return -1;
  if (sc->listener_metadata != NULL && sc->listener_path == NULL)
    {
      ab_jpush_key (c, "listenerMetadata");
      return ab_jerr (c, "must not be set without listenerPath");
    }
  if (parse_syscalls (c, o, sc) < 0)
    return -1;
  ab_jpop (c, mark);
  return 1;
}

/* ---- personality, memory policy, the rest ----------------------------- */

static int
parse_personality (struct ab_jctx *c, struct ab_json *lo, struct ab_linux *l)
{
  char q[AB_QUOTE_SIZE];
  _cleanup_free_ char *domain = NULL;
  _cleanup_strv_ struct ab_strv flags = { 0 };
  struct ab_json *o;
  size_t mark;
  int r = ab_jenter (c, lo, "personality", AB_J_OBJECT, AB_OPTIONAL, &o, &mark);

  if (r <= 0)
    return r;
  if (ab_jget_str (c, o, "domain", AB_REQUIRED, &domain) < 0)
    return -1;
  if (strcmp (domain, "LINUX") == 0)
    l->personality_domain = AB_PERSONA_LINUX;
  else if (strcmp (domain, "LINUX32") == 0)
    l->personality_domain = AB_PERSONA_LINUX32;
  else
    {
      ab_jpush_key (c, "domain");
      return ab_jerr (c, "unknown personality domain %s (LINUX or LINUX32)", ab_quote (q, domain));
    }
  if (ab_jget_strv (c, o, "flags", AB_OPTIONAL, &flags) < 0)
    return -1;
  /* config-linux.md: "Currently no flag values are supported." */
  if (flags.n > 0)
    {
      ab_jpush_key (c, "flags");
      ab_jpush_index (c, 0);
      return ab_jerr (c, "unsupported personality flag %s (none are supported)",
                      ab_quote (q, flags.v[0]));
    }
  l->personality_set = true;
  ab_jpop (c, mark);
  return 1;
}

static int64_t
mpol_flag_bit (const char *name)
{
  return ab_mpol_flag_from_name (name);
}

static int
parse_memory_policy (struct ab_jctx *c, struct ab_json *lo, struct ab_linux *l)
{
  char q[AB_QUOTE_SIZE];
  _cleanup_free_ char *mode = NULL;
  struct ab_memory_policy *mp;
  struct ab_json *o;
  uint64_t flags = 0;
  size_t mark;
  int r = ab_jenter (c, lo, "memoryPolicy", AB_J_OBJECT, AB_OPTIONAL, &o, &mark);

  if (r <= 0)
    return r;
  mp = l->memory_policy = xzalloc (sizeof *mp);
  if (ab_jget_str (c, o, "mode", AB_REQUIRED, &mode) < 0)
    return -1;
  mp->mode = ab_mpol_mode_from_name (mode);
  if (mp->mode < 0)
    {
      ab_jpush_key (c, "mode");
      return ab_jerr (c, "unknown memory policy mode %s", ab_quote (q, mode));
    }
  if (ab_parse_get_cpu_list (c, o, "nodes", &mp->nodes) < 0
      || ab_parse_flag_names (c, o, "flags", "memory policy flag", mpol_flag_bit, &flags) < 0)
    return -1;
  mp->flags = (unsigned)flags;
  ab_jpop (c, mark);
  return 1;
}

static int
parse_rootfs_propagation (struct ab_jctx *c, struct ab_json *lo, struct ab_linux *l)
{
  char q[AB_QUOTE_SIZE];
  _cleanup_free_ char *v = NULL;
  int r = ab_jget_str (c, lo, "rootfsPropagation", AB_OPTIONAL, &v), kind;

  if (r <= 0)
    return r;
  /* The words of the mount options (spec/tables.c), plain or recursive:
     containerd's CRI writes rslave and rshared.  Both forms are applied
     to the whole tree (runtime/mount.c). */
  kind = ab_propagation_from_name (v, NULL);
  if (kind > 0)
    {
      l->rootfs_propagation = kind;
      return 1;
    }
  ab_jpush_key (c, "rootfsPropagation");
  return ab_jerr (c, "unknown propagation %s (shared, slave, private, unbindable, or rshared, rslave, rprivate, "
                     "runbindable)",
                  ab_quote (q, v));
}

static int
get_cgroups_path (struct ab_jctx *c, struct ab_json *lo, struct ab_linux *l)
{
  char q[AB_QUOTE_SIZE];
  size_t mark;
  int r = ab_jget_str (c, lo, "cgroupsPath", AB_OPTIONAL, &l->cgroups_path);

  if (r <= 0)
    return r;
  /* Relative to the cgroup mount (or our own cgroup): ".." would climb out
     of the subtree agentbox manages. */
  mark = ab_jpush_key (c, "cgroupsPath");
  if (ab_path_has_dotdot (l->cgroups_path))
    return ab_jerr (c, "must not contain a \"..\" component: %s", ab_quote (q, l->cgroups_path));
  ab_jpop (c, mark);
  return 1;
}

int
ab_parse_linux (struct ab_jctx *c, struct ab_json *root, struct ab_spec *s)
{
  struct ab_linux *l;
  struct ab_json *o;
  size_t mark;
  int r = ab_jenter (c, root, "linux", AB_J_OBJECT, AB_OPTIONAL, &o, &mark);

  if (r <= 0)
    return r;
  l = s->linux_ = xzalloc (sizeof *l);
  if (parse_namespaces (c, o, l) < 0 || ab_parse_idmaps (c, o, "uidMappings", &l->uid_mappings) < 0
      || ab_parse_idmaps (c, o, "gidMappings", &l->gid_mappings) < 0 || parse_time_offsets (c, o, l) < 0
      || parse_devices (c, o, l) < 0 || parse_net_devices (c, o, l) < 0 || get_cgroups_path (c, o, l) < 0
      || ab_parse_resources (c, o, l) < 0 || parse_intel_rdt (c, o, l) < 0
      || ab_parse_string_map (c, o, "sysctl", &l->sysctl, check_sysctl_key) < 0 || parse_seccomp (c, o, l) < 0
      || parse_rootfs_propagation (c, o, l) < 0
      || ab_parse_get_paths (c, o, "maskedPaths", &l->masked_paths) < 0
      || ab_parse_get_paths (c, o, "readonlyPaths", &l->readonly_paths) < 0
      || ab_jget_str (c, o, "mountLabel", AB_OPTIONAL, &l->mount_label) < 0 || parse_personality (c, o, l) < 0
      || parse_memory_policy (c, o, l) < 0)
    return -1;
  ab_jpop (c, mark);
  return 1;
}

/* ---- freeing ---------------------------------------------------------- */

static void
seccomp_free (struct ab_seccomp *sc)
{
  size_t i;

  if (sc == NULL)
    return;
  ab_strv_free (&sc->architectures);
  free (sc->listener_path);
  free (sc->listener_metadata);
  for (i = 0; i < sc->n_syscalls; i++)
    {
      ab_strv_free (&sc->syscalls[i].names);
      free (sc->syscalls[i].args);
    }
  free (sc->syscalls);
  free (sc);
}

void
ab_linux_free (struct ab_linux *l)
{
  size_t i;
  int t;

  if (l == NULL)
    return;
  for (t = 0; t < AB_NS__COUNT; t++)
    free (l->ns[t].path);
  free (l->uid_mappings.v);
  free (l->gid_mappings.v);
  for (i = 0; i < l->n_devices; i++)
    free (l->devices[i].path);
  free (l->devices);
  for (i = 0; i < l->n_net_devices; i++)
    {
      free (l->net_devices[i].host_name);
      free (l->net_devices[i].name);
    }
  free (l->net_devices);
  free (l->cgroups_path);
  ab_resources_free (l->resources);
  if (l->intel_rdt)
    {
      free (l->intel_rdt->clos_id);
      free (l->intel_rdt->l3_cache_schema);
      free (l->intel_rdt->mem_bw_schema);
      ab_strv_free (&l->intel_rdt->schemata);
      free (l->intel_rdt);
    }
  ab_kvlist_free (&l->sysctl);
  seccomp_free (l->seccomp);
  ab_strv_free (&l->masked_paths);
  ab_strv_free (&l->readonly_paths);
  free (l->mount_label);
  if (l->memory_policy)
    free (l->memory_policy->nodes);
  free (l->memory_policy);
  free (l);
}
