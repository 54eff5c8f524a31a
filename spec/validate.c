/* Cross-field validation of config.json (ab_spec_validate, spec/spec.h).
 *
 * The parser (spec/parse.c, spec/parse-linux.c) checks each field on its
 * own: types, ranges, enumeration names, clean absolute paths, file names
 * that must not escape their directory.  This file checks what needs more
 * than one field, or knowledge of what the kernel will refuse, so that an
 * invalid bundle fails at `agentbox validate` / `create` with one line that
 * names the JSON path, not half-way through container setup with an errno:
 *
 *     config.json: linux.uidMappings[1]: container IDs 10-19 overlap entry [0] (0-65535)
 *
 * The rules come from the MUSTs of config.md, config-linux.md and runtime.md
 * and from the kernel's own checks (map_write, dev_alloc_name,
 * set_mempolicy, sched_setattr, ...).  Checks are made in document order and
 * the first violation wins, except that the user namespace comes first: the
 * IDs used elsewhere are checked against its mappings.
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/un.h>

#include <inttypes.h>
#include <limits.h>
#include <seccomp.h>
#include <stdarg.h>
#include <sys/mount.h>

#include "base/json.h"
#include "base/text.h"
#include "spec/model.h"
#include "spec/annotations.h"
#include "spec/parse-internal.h"
#include "spec/spec.h"
#include "spec/tables.h"

/* The kernel's limit on the lines of uid_map/gid_map (UID_GID_MAP_MAX_EXTENTS). */
#define IDMAP_MAX_EXTENTS 340

/* ---- messages ----------------------------------------------------------- */

/* A user string for a message: quoted, dangerous code points escaped (the
   error must stay one honest line), cut after about 96 bytes. */
#define QUOTE_SIZE 112
#define q(buf, s) ab_escape ((buf), QUOTE_SIZE, (s), (size_t)-1, AB_ESC_QUOTE)
#define Q(s) q ((char[QUOTE_SIZE]){ 0 }, (s))


/* Push a map key taken from the document (sysctl, netDevices, rdma, ...):
   raw when plain ASCII, quoted and escaped otherwise, so the path stays one
   honest line (as the parser pushes them). */
static const char *
key_name (char buf[static QUOTE_SIZE], const char *key)
{
  for (const unsigned char *p = (const unsigned char *)key; *p; p++)
    if (*p < 0x20 || *p >= 0x7f || *p == '"' || *p == '\\')
      return q (buf, key);
  return key;
}

static size_t
push_name (struct ab_jctx *c, const char *key)
{
  char buf[QUOTE_SIZE];

  return ab_jpush_key (c, key_name (buf, key));
}

/* ---- small syntax checks ------------------------------------------------ */

/* A decimal number without sign, at most INT32_MAX; advances *p past it. */
static bool
parse_num (const char **p, uint32_t *out)
{
  const char *s = *p;
  uint64_t v = 0;

  if (*s < '0' || *s > '9')
    return false;
  for (; *s >= '0' && *s <= '9'; s++)
    {
      v = v * 10 + (uint64_t)(*s - '0');
      if (v > INT32_MAX)
        return false;
    }
  *out = (uint32_t)v;
  *p = s;
  return true;
}

/* A CPU or node list as the kernel's bitmap_parselist() reads it: regions
   "N" or "N-M" with N <= M, separated by commas or spaces, at least one.
   (The parser has already limited the characters to digits, ',', '-' and
   ' '.) */
static bool
list_valid (const char *s)
{
  bool any = false;

  for (;;)
    {
      uint32_t a, b;

      while (*s == ',' || *s == ' ')
        s++;
      if (*s == '\0')
        return any;
      if (!parse_num (&s, &a))
        return false;
      if (*s == '-')
        {
          s++;
          if (!parse_num (&s, &b) || b < a)
            return false;
        }
      if (*s != '\0' && *s != ',' && *s != ' ')
        return false;
      any = true;
    }
}

static int
check_list (struct ab_jctx *c, const char *key, const char *list, const char *what)
{
  /* "" is no list: the runtime leaves the setting alone. */
  if (list == NULL || list[0] == '\0' || list_valid (list))
    return 0;
  return ab_jerr_at (c, key, "%s is not a %s list like \"0-3,7\"", Q (list), what);
}

static int
check_env (struct ab_jctx *c, const char *key, const struct ab_strv *env)
{
  size_t mark = ab_jpush_key (c, key);

  for (size_t i = 0; i < env->n; i++)
    {
      const char *eq = strchr (env->v[i], '=');
      size_t im = ab_jpush_index (c, i);
      /* execve() passes anything, but a variable without '=' or with an
         empty name is invisible to getenv() and breaks env(1) and shells. */
      if (eq == NULL)
        return ab_jerr_at (c, NULL, "%s is not NAME=VALUE", Q (env->v[i]));
      if (eq == env->v[i])
        return ab_jerr_at (c, NULL, "%s has an empty variable name", Q (env->v[i]));
      ab_jpop (c, im);
    }
  ab_jpop (c, mark);
  return 0;
}

/* The key of an array entry, to find duplicates. */
struct dkey
{
  uint64_t num;
  const char *str; /* NULL: the entry takes no part */
  size_t idx;
};

static int
dkey_cmp (const void *a, const void *b)
{
  const struct dkey *x = a, *y = b;
  int r = (x->num > y->num) - (x->num < y->num);

  if (r == 0)
    r = strcmp (x->str, y->str);
  return r != 0 ? r : (x->idx > y->idx) - (x->idx < y->idx);
}

/* The earliest entry, in document order, whose key repeats an earlier
   one's: its index in *dup and the first entry with that key in *orig;
   *dup is SIZE_MAX when all keys differ.  Sorting keeps this O(n log n):
   a hostile document may list 65536 entries.  Reorders k. */
static void
find_duplicate (struct dkey *k, size_t n, size_t *dup, size_t *orig)
{
  size_t m = 0, start = 0;

  for (size_t i = 0; i < n; i++)
    if (k[i].str != NULL)
      k[m++] = k[i];
  qsort (k, m, sizeof *k, dkey_cmp);
  *dup = SIZE_MAX;
  *orig = 0;
  for (size_t i = 1; i < m; i++)
    {
      if (k[i].num != k[i - 1].num || strcmp (k[i].str, k[i - 1].str) != 0)
        start = i;
      else if (i == start + 1 && k[i].idx < *dup)
        {
          *dup = k[i].idx;
          *orig = k[start].idx;
        }
    }
}

/* ---- namespaces and ID mappings ----------------------------------------- */

static bool
ns_present (const struct ab_spec *s, int type)
{
  return s->linux_ != NULL && s->linux_->ns[type].present;
}

static bool
ns_new (const struct ab_spec *s, int type)
{
  return ns_present (s, type) && s->linux_->ns[type].path == NULL;
}

static bool
ranges_overlap (uint32_t a, uint32_t n, uint32_t b, uint32_t m)
{
  return (uint64_t)a < (uint64_t)b + m && (uint64_t)b < (uint64_t)a + n;
}

/* What map_write() in kernel/user_namespace.c refuses beyond the single
   entry (whose size and range the parser checked): more than 340 lines,
   and two lines whose container or host ranges overlap. */
static int
check_idmaps (struct ab_jctx *c, const char *key, const struct ab_idmaps *m)
{
  size_t mark = ab_jpush_key (c, key);

  if (m->n > IDMAP_MAX_EXTENTS)
    return ab_jerr_at (c, NULL, "%zu entries exceed the kernel limit of %d", m->n, IDMAP_MAX_EXTENTS);
  for (size_t i = 0; i < m->n; i++)
    {
      const struct ab_idmap *e = &m->v[i];
      size_t im = ab_jpush_index (c, i);

      for (size_t j = 0; j < i; j++)
        {
          const struct ab_idmap *o = &m->v[j];
          if (ranges_overlap (e->container_id, e->size, o->container_id, o->size))
            return ab_jerr_at (c, NULL,
                         "container IDs %" PRIu32 "-%" PRIu32 " overlap entry [%zu] (%" PRIu32 "-%" PRIu32
                         ")",
                         e->container_id, e->container_id + e->size - 1, j, o->container_id,
                         o->container_id + o->size - 1);
          if (ranges_overlap (e->host_id, e->size, o->host_id, o->size))
            return ab_jerr_at (c, NULL,
                         "host IDs %" PRIu32 "-%" PRIu32 " overlap entry [%zu] (%" PRIu32 "-%" PRIu32 ")",
                         e->host_id, e->host_id + e->size - 1, j, o->host_id, o->host_id + o->size - 1);
        }
      ab_jpop (c, im);
    }
  ab_jpop (c, mark);
  return 0;
}

/* uidMappings and gidMappings exist if and only if a new user namespace is
   created: the kernel takes one write of each map, before any process of
   the namespace runs, so a joined namespace already has its own. */
static int
check_user_namespace (struct ab_jctx *c, const struct ab_spec *s)
{
  const struct ab_linux *l = s->linux_;
  const char *key;
  size_t mark;

  if (l == NULL)
    return 0;
  key = l->uid_mappings.n ? "uidMappings" : l->gid_mappings.n ? "gidMappings" : NULL;
  mark = ab_jpush_key (c, "linux");
  if (key != NULL && !ns_present (s, AB_NS_USER))
    return ab_jerr_at (c, key, "requires a user namespace in linux.namespaces");
  if (key != NULL && !ns_new (s, AB_NS_USER))
    return ab_jerr_at (c, key, "cannot be set when joining an existing user namespace (its mappings are fixed)");
  if (ns_new (s, AB_NS_USER) && l->uid_mappings.n == 0)
    return ab_jerr_at (c, "uidMappings", "required when a new user namespace is created");
  if (ns_new (s, AB_NS_USER) && l->gid_mappings.n == 0)
    return ab_jerr_at (c, "gidMappings", "required when a new user namespace is created");
  if (check_idmaps (c, "uidMappings", &l->uid_mappings) < 0
      || check_idmaps (c, "gidMappings", &l->gid_mappings) < 0)
    return -1;
  ab_jpop (c, mark);
  return 0;
}

/* An ID the process or a device node gets.  4294967295 is (uid_t) -1,
   which setresuid(), setresgid() and fchown() read as "leave unchanged":
   the process would keep the runtime's IDs, root on the host.  Inside a new
   user namespace the ID must be mapped, or those calls fail with EINVAL in
   the child. */
static int
check_mapped (struct ab_jctx *c, const char *key, uint32_t id, const struct ab_spec *s, bool gid)
{
  const struct ab_idmaps *m;

  if (id == UINT32_MAX)
    return ab_jerr_at (c, key, "4294967295 is not an ID: it is (%s) -1, \"unchanged\"", gid ? "gid_t" : "uid_t");
  if (!ns_new (s, AB_NS_USER))
    return 0;
  m = gid ? &s->linux_->gid_mappings : &s->linux_->uid_mappings;
  for (size_t i = 0; i < m->n; i++)
    if (id >= m->v[i].container_id && (uint64_t)id < (uint64_t)m->v[i].container_id + m->v[i].size)
      return 0;
  return ab_jerr_at (c, key, "%" PRIu32 " is not mapped by linux.%s", id, gid ? "gidMappings" : "uidMappings");
}

/* ---- mounts ------------------------------------------------------------- */

static int
check_mount (struct ab_jctx *c, const struct ab_spec *s, const struct ab_mount *m)
{
  bool maps = m->uid_mappings.n > 0 || m->gid_mappings.n > 0;
  bool bind = m->bind || (m->type && strcmp (m->type, "bind") == 0);

  /* An option we do not know is passed to the filesystem as data, which a
     bind mount or a remount never reads: a typo there ("readonly",
     "nosuidd") would be dropped without a word and leave the mount
     writable or set-uid capable.  mount(8)'s userspace options (x-...) are
     ignored as mount(8) ignores them.  A bind mount's key=value options
     are a filesystem's (mode=, size=: config.md says unknown options are
     filesystem data, and runc and mount(8) pass them to a bind, which
     ignores them): no flag is spelt so, so they are accepted with a
     warning at mount time (do_bind), as generators such as the OCI
     conformance suite write them. */
  if ((bind || (m->flags & MS_REMOUNT)) && m->data != NULL)
    for (size_t k = 0; k < m->options.n; k++)
      {
        char buf[QUOTE_SIZE];
        const char *o = m->options.v[k];
        if (ab_mount_option_lookup (o) != NULL || strncmp (o, "x-", 2) == 0)
          continue;
        if (bind && !(m->flags & MS_REMOUNT) && strchr (o, '=') != NULL)
          continue;
        ab_jpush_key (c, "options");
        ab_jpush_index (c, k);
        return ab_jerr (c, "unknown mount option %s (a %s takes no filesystem options)", q (buf, o),
                        bind ? "bind mount" : "remount");
      }

  if (m->bind && (m->source == NULL || m->source[0] == '\0'))
    return ab_jerr_at (c, "source", "required for a bind mount");
  /* mount(2) needs a filesystem type, except to bind or to remount. */
  if (!m->bind && !(m->flags & MS_REMOUNT) && (m->type == NULL || m->type[0] == '\0'))
    return ab_jerr_at (c, "type", "required unless the mount is a bind mount");
  if (check_idmaps (c, "uidMappings", &m->uid_mappings) < 0
      || check_idmaps (c, "gidMappings", &m->gid_mappings) < 0)
    return -1;
  /* config.md: without mappings of its own, an idmapped mount takes the
     container's user namespace; without one either, it is an error. */
  if (m->idmap && !maps && !ns_present (s, AB_NS_USER))
    return ab_jerr_at (c, "options", "%s needs uidMappings and gidMappings on the mount, or a user namespace",
                 m->idmap_recursive ? "ridmap" : "idmap");
  return 0;
}

static int
check_mounts (struct ab_jctx *c, const struct ab_spec *s)
{
  size_t mark = ab_jpush_key (c, "mounts");

  for (size_t i = 0; i < s->n_mounts; i++)
    {
      size_t im = ab_jpush_index (c, i);
      if (check_mount (c, s, &s->mounts[i]) < 0)
        return -1;
      ab_jpop (c, im);
    }
  ab_jpop (c, mark);
  return 0;
}

/* A mount namespace joined by path is the caller's, with the mounts it
   has: agentbox makes none in it (no bind of root.path, no pivot_root,
   nothing in mounts, no masks, no read-only root; runtime/child.c), since
   every one would change the namespace for the processes already in it
   and outlive the container.  What the config would have it do there is
   refused (runtime.md: a property the runtime cannot apply is an error),
   each by its JSON path.  root.path must be the namespace's root (checked
   at create, where the namespace is entered). */
static int
check_joined_mount_ns (struct ab_jctx *c, const struct ab_spec *s)
{
  const struct ab_linux *l = s->linux_;
  const char *why;
  size_t mark;

  if (!ns_present (s, AB_NS_MOUNT) || ns_new (s, AB_NS_MOUNT))
    return 0;
  why = "agentbox makes no mount in a mount namespace joined by path (linux.namespaces: mount)";
  if (s->n_mounts > 0)
    return ab_jerr_at (c, "mounts", "%s: its mounts are its own", why);
  if (s->root.readonly)
    {
      ab_jpush_key (c, "root");
      return ab_jerr_at (c, "readonly", "%s: the read-only root would be the namespace's", why);
    }
  mark = ab_jpush_key (c, "linux");
  if (l->rootfs_propagation != AB_PROP_NONE)
    return ab_jerr_at (c, "rootfsPropagation", "%s: its propagation is its own", why);
  if (l->masked_paths.n > 0)
    return ab_jerr_at (c, "maskedPaths", "%s: the masks would be the namespace's", why);
  if (l->readonly_paths.n > 0)
    return ab_jerr_at (c, "readonlyPaths", "%s: the read-only binds would be the namespace's", why);
  if (l->n_devices > 0)
    return ab_jerr_at (c, "devices", "%s: its /dev is its own", why);
  ab_jpop (c, mark);
  return 0;
}

/* ---- process ------------------------------------------------------------ */

static int
check_user (struct ab_jctx *c, const struct ab_spec *s)
{
  const struct ab_user *u = &s->process->user;
  size_t mark = ab_jpush_key (c, "user");

  /* The kernel keeps umask & 0777: other bits are a mistake. */
  if (u->umask_set && u->umask > 0777)
    return ab_jerr_at (c, "umask", "%" PRIu32 " (octal %" PRIo32 ") has bits outside 0777", u->umask, u->umask);
  if (check_mapped (c, "uid", u->uid, s, false) < 0 || check_mapped (c, "gid", u->gid, s, true) < 0)
    return -1;
  for (size_t i = 0; i < u->n_additional_gids; i++)
    {
      size_t im = ab_jpush_key (c, "additionalGids");
      ab_jpush_index (c, i);
      if (check_mapped (c, NULL, u->additional_gids[i], s, true) < 0)
        return -1;
      ab_jpop (c, im);
    }
  ab_jpop (c, mark);
  return 0;
}

/* What sched_setattr(2) accepts: nice -20..19; a static priority of 1..99
   for SCHED_FIFO and SCHED_RR and 0 for the others; for SCHED_DEADLINE
   0 < runtime <= deadline <= period, where period 0 means "= deadline". */
static int
check_scheduler (struct ab_jctx *c, const struct ab_scheduler *sc)
{
  bool rt = sc->policy == AB_SCHED_FIFO || sc->policy == AB_SCHED_RR;
  size_t mark = ab_jpush_key (c, "scheduler");

  /* SCHED_ISO was proposed but never merged: Linux refuses policy 4. */
  if (sc->policy == AB_SCHED_ISO)
    return ab_jerr_at (c, "policy", "SCHED_ISO is not implemented by Linux");
  if (sc->nice < -20 || sc->nice > 19)
    return ab_jerr_at (c, "nice", "%" PRId32 " is out of range (-20 to 19)", sc->nice);
  if (rt && (sc->priority < 1 || sc->priority > 99))
    return ab_jerr_at (c, "priority", "%" PRId32 " is out of range for %s (1 to 99)", sc->priority,
                 sc->policy == AB_SCHED_FIFO ? "SCHED_FIFO" : "SCHED_RR");
  if (!rt && sc->priority != 0)
    return ab_jerr_at (c, "priority", "must be 0 unless the policy is SCHED_FIFO or SCHED_RR");
  if (sc->policy == AB_SCHED_DEADLINE)
    {
      uint64_t period = sc->period ? sc->period : sc->deadline;
      if (sc->runtime == 0 || sc->deadline == 0)
        return ab_jerr_at (c, NULL, "SCHED_DEADLINE needs a runtime and a deadline greater than 0");
      if (sc->runtime > sc->deadline || sc->deadline > period)
        return ab_jerr_at (c, NULL,
                     "SCHED_DEADLINE needs runtime <= deadline <= period (%" PRIu64 ", %" PRIu64 ", %" PRIu64
                     ")",
                     sc->runtime, sc->deadline, sc->period);
    }
  ab_jpop (c, mark);
  return 0;
}

static int
check_process (struct ab_jctx *c, const struct ab_spec *s)
{
  const struct ab_process *p = s->process;
  size_t mark;

  if (p == NULL)
    return 0;
  mark = ab_jpush_key (c, "process");
  if (check_env (c, "env", &p->env) < 0 || check_user (c, s) < 0)
    return -1;
  if (p->scheduler != NULL && check_scheduler (c, p->scheduler) < 0)
    return -1;
  if (check_list (c, "execCPUAffinity.initial", p->exec_cpu_affinity_initial, "CPU") < 0
      || check_list (c, "execCPUAffinity.final", p->exec_cpu_affinity_final, "CPU") < 0)
    return -1;
  /* consoleSize without terminal is ignored, as config.md requires. */
  ab_jpop (c, mark);
  return 0;
}

/* ---- hostname, hooks ---------------------------------------------------- */

static int
check_uts (struct ab_jctx *c, const struct ab_spec *s)
{
  /* Never the host's: without a UTS namespace of the container the name
     would change for the whole machine.  A joined one is the pod's (podman
     and containerd give every member of a pod the pod's hostname), as runc
     allows. */
  if (s->hostname != NULL && s->hostname[0] != '\0' && !ns_present (s, AB_NS_UTS))
    return ab_jerr_at (c, "hostname", "requires a UTS namespace (a \"uts\" entry in linux.namespaces)");
  if (s->domainname != NULL && s->domainname[0] != '\0' && !ns_present (s, AB_NS_UTS))
    return ab_jerr_at (c, "domainname", "requires a UTS namespace (a \"uts\" entry in linux.namespaces)");
  return 0;
}

static int
check_hooks (struct ab_jctx *c, const struct ab_spec *s)
{
  size_t mark = ab_jpush_key (c, "hooks");

  for (int k = 0; k < AB_HOOK__KINDS; k++)
    for (size_t i = 0; i < s->hooks[k].n; i++)
      {
        size_t im = ab_jpush_key (c, ab_hook_kind_name (k));
        ab_jpush_index (c, i);
        if (check_env (c, "env", &s->hooks[k].v[i].env) < 0)
          return -1;
        ab_jpop (c, im);
      }
  ab_jpop (c, mark);
  return 0;
}

/* ---- linux: time, devices, network devices, sysctl ---------------------- */

static int
check_time_offsets (struct ab_jctx *c, const struct ab_spec *s)
{
  const struct ab_linux *l = s->linux_;
  const struct ab_time_offset *t[] = { &l->time_monotonic, &l->time_boottime };
  static const char *const keys[] = { "timeOffsets.monotonic.secs", "timeOffsets.boottime.secs" };

  /* Offsets can only be written before the first process enters the
     namespace: a joined one already has them. */
  if ((t[0]->set || t[1]->set) && !ns_new (s, AB_NS_TIME))
    return ab_jerr_at (c, "timeOffsets",
                 "requires a new time namespace (a \"time\" entry without path in linux.namespaces)");
  /* proc_timens_set_offset(): |secs| <= KTIME_SEC_MAX, and the clock plus
     the offset must stay in 0..KTIME_SEC_MAX / 2. */
  for (size_t i = 0; i < AB_ARRAY_SIZE (t); i++)
    if (t[i]->set && (t[i]->secs < -9223372036LL || t[i]->secs > 4611686018LL))
      return ab_jerr_at (c, keys[i], "%" PRId64 " is out of range (-9223372036 to 4611686018)", t[i]->secs);
  return 0;
}

/* The S_IFMT bits of a linux.devices[] type: 'c' and 'u' are character
   devices, 'b' block, 'p' a FIFO. */
static uint32_t
device_ifmt (char type)
{
  return type == 'b' ? S_IFBLK : type == 'p' ? S_IFIFO : S_IFCHR;
}

static int
check_devices (struct ab_jctx *c, const struct ab_spec *s)
{
  const struct ab_linux *l = s->linux_;
  _cleanup_free_ struct dkey *keys = xcalloc (l->n_devices ? l->n_devices : 1, sizeof *keys);
  size_t mark = ab_jpush_key (c, "devices"), dup, orig;

  for (size_t i = 0; i < l->n_devices; i++)
    keys[i] = (struct dkey){ 0, l->devices[i].path, i };
  find_duplicate (keys, l->n_devices, &dup, &orig);
  for (size_t i = 0; i < l->n_devices; i++)
    {
      const struct ab_device *d = &l->devices[i];
      size_t im = ab_jpush_index (c, i);

      /* mknod() takes the file type from `type`: setuid, setgid or sticky
         bits on a device node serve no purpose and are refused.  The file
         type bits may be there as well (podman writes 020600 for a
         character device, Go's os.FileMode habit) when they name the very
         type `type` gives; the runtime uses only the permission bits. */
      if (d->file_mode_set && (d->file_mode & ~(uint32_t)S_IFMT) > 0777)
        return ab_jerr_at (c, "fileMode", "%" PRIu32 " (octal %" PRIo32 ") has bits outside 0777", d->file_mode,
                     d->file_mode);
      if (d->file_mode_set && (d->file_mode & S_IFMT) != 0
          && (d->file_mode & S_IFMT) != device_ifmt (d->type))
        return ab_jerr_at (c, "fileMode",
                     "octal %" PRIo32 " has file type bits %06" PRIo32 " that are not those of type %c",
                     d->file_mode, d->file_mode & (uint32_t)S_IFMT, d->type);
      if (i == dup)
        return ab_jerr_at (c, "path", "%s is already created by linux.devices[%zu]", Q (d->path), orig);
      if ((d->uid_set && check_mapped (c, "uid", d->uid, s, false) < 0)
          || (d->gid_set && check_mapped (c, "gid", d->gid, s, true) < 0))
        return -1;
      ab_jpop (c, im);
    }
  ab_jpop (c, mark);
  return 0;
}

/* A name inside the container may end in a template: one "%d", which
   dev_alloc_name() replaces with the first free number.  No existing device
   has a '%' in its name. */
static bool
template_valid (const char *name)
{
  const char *pct = strchr (name, '%');
  return pct == NULL || (pct[1] == 'd' && strchr (pct + 2, '%') == NULL);
}

static int
check_net_devices (struct ab_jctx *c, const struct ab_spec *s)
{
  const struct ab_linux *l = s->linux_;
  _cleanup_free_ struct dkey *keys = xcalloc (l->n_net_devices ? l->n_net_devices : 1, sizeof *keys);
  size_t mark = ab_jpush_key (c, "netDevices"), dup, orig;

  /* Without a network namespace of its own the device would "move" into
     the host's, where it already is. */
  if (l->n_net_devices > 0 && !ns_present (s, AB_NS_NET))
    return ab_jerr_at (c, NULL, "requires a network namespace in linux.namespaces");
  /* Two devices may not end up with the same name inside, unless the
     kernel picks it (a %d template). */
  for (size_t i = 0; i < l->n_net_devices; i++)
    {
      const char *final = l->net_devices[i].name ? l->net_devices[i].name : l->net_devices[i].host_name;
      keys[i] = (struct dkey){ 0, strchr (final, '%') == NULL ? final : NULL, i };
    }
  find_duplicate (keys, l->n_net_devices, &dup, &orig);
  for (size_t i = 0; i < l->n_net_devices; i++)
    {
      const struct ab_net_device *d = &l->net_devices[i];
      const char *final = d->name ? d->name : d->host_name;
      size_t im = push_name (c, d->host_name);

      if (strchr (d->host_name, '%') != NULL)
        return ab_jerr_at (c, NULL, "an existing device's name has no '%%' (a %%d template goes in name)");
      /* The loopback device is local to its namespace (NETIF_F_NETNS_LOCAL). */
      if (strcmp (d->host_name, "lo") == 0)
        return ab_jerr_at (c, NULL, "the loopback device cannot move to another network namespace");
      if (d->name != NULL && !template_valid (d->name))
        return ab_jerr_at (c, "name", "%s may hold one %%d template and no other '%%'", Q (d->name));
      if (i == dup)
        return ab_jerr_at (c, d->name ? "name" : NULL,
                     "%s is also the name of linux.netDevices.%s in the container", Q (final),
                     key_name ((char[QUOTE_SIZE]){ 0 }, l->net_devices[orig].host_name));
      ab_jpop (c, im);
    }
  ab_jpop (c, mark);
  return 0;
}

/* The namespace that owns a sysctl, or -1 for a global one.  Only
   namespaced sysctls may be set: a global one would change the host.  The
   key may use '/' as its separator, as sysctl(8) allows. */
int
ab_sysctl_namespace (const char *key)
{
  /* ipc/ipc_sysctl.c: the System V IPC knobs live in the IPC namespace. */
  static const char *const ipc[] = {
    "kernel.msgmax", "kernel.msgmnb",      "kernel.msgmni",          "kernel.msg_next_id",
    "kernel.sem",    "kernel.sem_next_id", "kernel.shmall",          "kernel.shmmax",
    "kernel.shmmni", "kernel.shm_next_id", "kernel.shm_rmid_forced",
  };
  char k[256];
  size_t n = strlen (key);

  if (n >= sizeof k)
    return -1;
  memcpy (k, key, n + 1);
  if (strchr (k, '/') != NULL)
    for (char *p = k; *p; p++)
      *p = *p == '/' ? '.' : *p;
  if (ab_str_has_prefix (k, "net."))
    return AB_NS_NET;
  if (ab_str_has_prefix (k, "fs.mqueue."))
    return AB_NS_IPC;
  for (size_t i = 0; i < AB_ARRAY_SIZE (ipc); i++)
    if (strcmp (k, ipc[i]) == 0)
      return AB_NS_IPC;
  if (strcmp (k, "kernel.hostname") == 0 || strcmp (k, "kernel.domainname") == 0)
    return AB_NS_UTS;
  return -1;
}

const char *
ab_spec_ns_setting (const struct ab_spec *s, int type, char *buf, size_t size)
{
  const struct ab_kvlist *l = s->linux_ ? &s->linux_->sysctl : NULL;

  for (size_t i = 0; l && i < l->n; i++)
    if (ab_sysctl_namespace (l->v[i].key) == type)
      {
        snprintf (buf, size, "linux.sysctl.%s", key_name ((char[QUOTE_SIZE]){ 0 }, l->v[i].key));
        return buf;
      }
  if (type == AB_NS_UTS && s->hostname != NULL && s->hostname[0] != '\0')
    return "hostname";
  if (type == AB_NS_UTS && s->domainname != NULL && s->domainname[0] != '\0')
    return "domainname";
  return NULL;
}

static int
check_sysctl (struct ab_jctx *c, const struct ab_spec *s)
{
  static const char *const ns_word[AB_NS__COUNT] = {
    [AB_NS_NET] = "a network",
    [AB_NS_IPC] = "an IPC",
    [AB_NS_UTS] = "a UTS",
  };
  const struct ab_kvlist *l = &s->linux_->sysctl;
  size_t mark = ab_jpush_key (c, "sysctl");

  for (size_t i = 0; i < l->n; i++)
    {
      size_t im = push_name (c, l->v[i].key);
      int ns = ab_sysctl_namespace (l->v[i].key);

      if (ns < 0)
        return ab_jerr_at (c, NULL, "not a namespaced sysctl: setting it would change the host");
      if (!ns_present (s, ns))
        return ab_jerr_at (c, NULL, "requires %s namespace in linux.namespaces", ns_word[ns]);
      ab_jpop (c, im);
    }
  ab_jpop (c, mark);
  return 0;
}

/* ---- linux.resources ---------------------------------------------------- */

static int
check_memory (struct ab_jctx *c, const struct ab_memory *m)
{
  size_t mark = ab_jpush_key (c, "memory");

  /* (The parser has refused values below -1.)  swap is the memory+swap limit (memory.memsw.limit_in_bytes; on v2,
     memory.swap.max is swap - limit): it needs a memory limit, and the
     kernel refuses one below it. */
  if (m->swap.set && m->swap.v != -1 && (!m->limit.set || m->limit.v == -1))
    return ab_jerr_at (c, "swap", "a memory+swap limit needs a memory limit (memory.limit)");
  if (m->limit.set && m->swap.set && m->swap.v != -1 && m->swap.v < m->limit.v)
    return ab_jerr_at (c, "swap", "%" PRId64 " is lower than limit %" PRId64 " (swap limits memory+swap)",
                 m->swap.v, m->limit.v);
  if (m->limit.set && m->reservation.set && m->limit.v > 0 && m->reservation.v > m->limit.v)
    return ab_jerr_at (c, "reservation", "%" PRId64 " exceeds limit %" PRId64, m->reservation.v, m->limit.v);
  if (m->swappiness.set && m->swappiness.v > 100)
    return ab_jerr_at (c, "swappiness", "must be 0 to 100");
  ab_jpop (c, mark);
  return 0;
}

static int
check_cpu (struct ab_jctx *c, const struct ab_cpu *cpu)
{
  size_t mark = ab_jpush_key (c, "cpu");

  /* CFS bandwidth: the kernel takes a quota of at least 1 ms and a period
     of 1 ms to 1 s (0 is "not set", as runc treats it). */
  if (cpu->quota.set && cpu->quota.v > 0 && cpu->quota.v < 1000)
    return ab_jerr_at (c, "quota", "%" PRId64 " is below the kernel's minimum of 1000", cpu->quota.v);
  if (cpu->period.set && cpu->period.v != 0 && (cpu->period.v < 1000 || cpu->period.v > 1000000))
    return ab_jerr_at (c, "period", "%" PRIu64 " is out of range (1000 to 1000000)", cpu->period.v);
  if (cpu->burst.set && cpu->quota.set && cpu->quota.v > 0 && cpu->burst.v > (uint64_t)cpu->quota.v)
    return ab_jerr_at (c, "burst", "%" PRIu64 " exceeds quota %" PRId64, cpu->burst.v, cpu->quota.v);
  if (cpu->idle.set && cpu->idle.v != 0 && cpu->idle.v != 1)
    return ab_jerr_at (c, "idle", "must be 0 or 1");
  if (check_list (c, "cpus", cpu->cpus, "CPU") < 0 || check_list (c, "mems", cpu->mems, "memory node") < 0)
    return -1;
  ab_jpop (c, mark);
  return 0;
}

static int
check_weight (struct ab_jctx *c, const char *key, ab_opt_u64 w)
{
  /* blkio.weight and blkio.leaf_weight take 10..1000. */
  if (w.set && (w.v < 10 || w.v > 1000))
    return ab_jerr_at (c, key, "%" PRIu64 " is out of range (10 to 1000)", w.v);
  return 0;
}

static int
check_blkio (struct ab_jctx *c, const struct ab_blkio *b)
{
  size_t mark = ab_jpush_key (c, "blockIO");

  if (check_weight (c, "weight", b->weight) < 0 || check_weight (c, "leafWeight", b->leaf_weight) < 0)
    return -1;
  for (size_t i = 0; i < b->n_weight_device; i++)
    {
      size_t im = ab_jpush_key (c, "weightDevice");
      ab_jpush_index (c, i);
      if (check_weight (c, "weight", b->weight_device[i].weight) < 0
          || check_weight (c, "leafWeight", b->weight_device[i].leaf_weight) < 0)
        return -1;
      ab_jpop (c, im);
    }
  ab_jpop (c, mark);
  return 0;
}

/* The bytes of a "<n>KB|MB|GB" page size (syntax checked by the parser). */
static uint64_t
page_bytes (const char *s)
{
  char *end;
  unsigned long long n = strtoull (s, &end, 10);
  int shift = *end == 'K' ? 10 : *end == 'M' ? 20 : 30;

  return n > (UINT64_MAX >> shift) ? 0 : (uint64_t)n << shift;
}

static int
check_hugepages (struct ab_jctx *c, const struct ab_resources *r)
{
  _cleanup_free_ struct dkey *keys = xcalloc (r->n_hugepages ? r->n_hugepages : 1, sizeof *keys);
  size_t mark = ab_jpush_key (c, "hugepageLimits"), dup, orig;

  for (size_t i = 0; i < r->n_hugepages; i++)
    keys[i] = (struct dkey){ page_bytes (r->hugepages[i].page_size), "", i };
  find_duplicate (keys, r->n_hugepages, &dup, &orig);
  for (size_t i = 0; i < r->n_hugepages; i++)
    {
      uint64_t bytes = page_bytes (r->hugepages[i].page_size);
      size_t im = ab_jpush_index (c, i);

      /* Huge pages are power-of-two sizes (64KB, 2MB, 1GB, ...): anything
         else names a hugetlb.* file that cannot exist. */
      if (bytes == 0 || (bytes & (bytes - 1)) != 0)
        return ab_jerr_at (c, "pageSize", "%s is not a power-of-two size", Q (r->hugepages[i].page_size));
      if (i == dup)
        return ab_jerr_at (c, "pageSize", "%s is already limited by hugepageLimits[%zu]",
                     Q (r->hugepages[i].page_size), orig);
      ab_jpop (c, im);
    }
  ab_jpop (c, mark);
  return 0;
}

/* linux.resources, or a LinuxResources document of its own (`update`):
   the caller has pushed its path. */
/* A name without blanks or control characters, of at most max bytes (an
   interface, an RDMA device). */
static bool
plain_name (const char *s, size_t max)
{
  size_t n;

  if (s == NULL || *s == '\0' || strlen (s) > max)
    return false;
  for (n = 0; s[n]; n++)
    if ((unsigned char)s[n] <= ' ' || s[n] == 0x7f)
      return false;
  return true;
}

/* Keys of unified that are cgroup structure, not limits: writing them
   would move processes or change delegation. */
static const char *const unified_forbidden[] = {
  "cgroup.procs", "cgroup.threads", "cgroup.subtree_control", "cgroup.kill", "cgroup.freeze", "cgroup.type",
};

const char *
ab_unified_key_refusal (const char *k)
{
  const char *dot = strchr (k, '.');

  /* "<controller>.<file>" of the container's own cgroup: a name of the
     interface-file charset, so no '/' can lead out of its directory. */
  if (dot == NULL || dot == k || dot[1] == '\0' || strstr (k, "..") != NULL
      || strspn (k, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") != strlen (k))
    return "not a cgroup file name like \"memory.max\" (<controller>.<file>)";
  for (size_t f = 0; f < AB_ARRAY_SIZE (unified_forbidden); f++)
    if (strcmp (k, unified_forbidden[f]) == 0)
      return "this file controls the cgroup's structure, not its limits";
  return NULL;
}

static int
check_unified (struct ab_jctx *c, const struct ab_kvlist *u)
{
  for (size_t i = 0; i < u->n; i++)
    {
      const char *why = ab_unified_key_refusal (u->v[i].key);
      if (why != NULL)
        {
          ab_jpush_key (c, "unified");
          push_name (c, u->v[i].key);
          return ab_jerr_at (c, NULL, "%s", why);
        }
    }
  return 0;
}

int
ab_resources_check (struct ab_jctx *c, const struct ab_resources *r)
{
  if ((r->memory_set && check_memory (c, &r->memory) < 0) || (r->cpu_set && check_cpu (c, &r->cpu) < 0)
      || (r->blkio_set && check_blkio (c, &r->blkio) < 0) || check_hugepages (c, r) < 0)
    return -1;
  for (size_t i = 0; i < r->n_net_priorities; i++)
    if (!plain_name (r->net_priorities[i].name, 15))
      {
        ab_jpush_key (c, "network");
        ab_jpush_key (c, "priorities");
        ab_jpush_index (c, i);
        return ab_jerr_at (c, "name", "must be an interface name");
      }
  for (size_t i = 0; i < r->n_rdma; i++)
    if (!plain_name (r->rdma[i].device, 64))
      return ab_jerr_at (c, "rdma", "device names must not be empty or contain spaces");
  return check_unified (c, &r->unified);
}

/* ---- linux: seccomp, memoryPolicy --------------------------------------- */

/* Does the action stop the syscall (anything but ALLOW and LOG)? */
static bool
scmp_stops (int action)
{
  return action != AB_SCMP_ACT_ALLOW && action != AB_SCMP_ACT_LOG;
}

/* A syscall name libseccomp does not know cannot get a rule.  The spec says
   nothing; runc skips such names (profiles list syscalls of newer kernels
   and other architectures), and so do we where skipping is safe: the
   default action then applies, and under a default that stops the call a
   skipped allow rule only leaves it stopped.  Under a default that lets the
   call through, a rule meant to stop it cannot be honoured: skipping it
   would allow what the author denied, so it is refused. */
static int
check_seccomp_names (struct ab_jctx *c, const struct ab_seccomp *sc)
{
  if (scmp_stops (sc->default_action))
    return 0;
  for (size_t i = 0; i < sc->n_syscalls; i++)
    {
      const struct ab_seccomp_rule *r = &sc->syscalls[i];
      if (!scmp_stops (r->action))
        continue;
      for (size_t k = 0; k < r->names.n; k++)
        if (seccomp_syscall_resolve_name (r->names.v[k]) == __NR_SCMP_ERROR)
          {
            char buf[QUOTE_SIZE];
            const struct scmp_version *v = seccomp_version ();
            ab_jpush_key (c, "syscalls");
            ab_jpush_index (c, i);
            ab_jpush_key (c, "names");
            ab_jpush_index (c, k);
            return ab_jerr (c,
                            "syscall %s is unknown to libseccomp %u.%u.%u: the rule cannot stop it and the "
                            "default action would allow it",
                            q (buf, r->names.v[k]), v ? v->major : 0, v ? v->minor : 0, v ? v->micro : 0);
          }
    }
  return 0;
}

/* The one syscall the runtime makes between loading a filter with a
   listener and handing the listener's fd over (runtime/process.c): a NOTIFY
   rule on it would wait for an agent that cannot have the fd yet.  (runc
   refuses NOTIFY on write(2), its handover, for the same reason.) */
#define HANDOVER_SYSCALL "sendmsg"

/* linux.seccomp.listenerPath and SCMP_ACT_NOTIFY (config-linux.md): the
   runtime connects to the path and sends the listener's fd there. */
static int
check_seccomp_listener (struct ab_jctx *c, const struct ab_seccomp *sc, bool *notify)
{
  struct sockaddr_un sa;

  *notify = false;
  /* Every syscall would wait for the agent, including the runtime's own
     execve and the sendmsg() that hands the listener fd over. */
  if (sc->default_action == AB_SCMP_ACT_NOTIFY)
    return ab_jerr_at (c, "defaultAction", "SCMP_ACT_NOTIFY cannot be the default action");
  for (size_t i = 0; i < sc->n_syscalls; i++)
    {
      const struct ab_seccomp_rule *r = &sc->syscalls[i];
      if (r->action != AB_SCMP_ACT_NOTIFY)
        continue;
      *notify = true;
      if (sc->listener_path == NULL)
        {
          ab_jpush_key (c, "syscalls");
          ab_jpush_index (c, i);
          return ab_jerr_at (c, "action", "SCMP_ACT_NOTIFY requires linux.seccomp.listenerPath");
        }
      for (size_t k = 0; k < r->names.n; k++)
        if (strcmp (r->names.v[k], HANDOVER_SYSCALL) == 0)
          {
            ab_jpush_key (c, "syscalls");
            ab_jpush_index (c, i);
            ab_jpush_key (c, "names");
            ab_jpush_index (c, k);
            return ab_jerr_at (c, NULL, "SCMP_ACT_NOTIFY cannot apply to " HANDOVER_SYSCALL
                         ": agentbox hands the listener's fd over with it, after the filter is loaded "
                         "and before any agent has the fd");
          }
    }
  if (sc->listener_path == NULL)
    return 0;
  /* config-linux.md: "If the SCMP_ACT_NOTIFY action is not used this value
     is ignored."  So it is, as runc does: nothing connects to it. */
  if (!*notify)
    return 0;
  /* Connected to at start, by whichever process runs it: a relative path
     would depend on its working directory. */
  if (sc->listener_path[0] != '/')
    return ab_jerr_at (c, "listenerPath", "must be an absolute path, got \"%s\"", sc->listener_path);
  if (strlen (sc->listener_path) >= sizeof sa.sun_path)
    return ab_jerr_at (c, "listenerPath", "%zu bytes: longer than a unix socket address takes (%zu)",
                 strlen (sc->listener_path), sizeof sa.sun_path - 1);
  return 0;
}

static int
check_seccomp (struct ab_jctx *c, const struct ab_seccomp *sc)
{
  bool notify;
  size_t mark = ab_jpush_key (c, "seccomp");

  if (check_seccomp_listener (c, sc, &notify) < 0)
    return -1;
  if (check_seccomp_names (c, sc) < 0)
    return -1;
  /* seccomp(2) refuses WAIT_KILLABLE_RECV without a listener. */
  if ((sc->flags & AB_SECCOMP_FLAG_WAIT_KILLABLE_RECV) && !notify)
    return ab_jerr_at (c, "flags", "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV requires an SCMP_ACT_NOTIFY rule");
  ab_jpop (c, mark);
  return 0;
}

/* set_mempolicy(2): DEFAULT and LOCAL take no nodes; BIND, INTERLEAVE,
   PREFERRED_MANY and WEIGHTED_INTERLEAVE need some; PREFERRED takes either
   (none means local).  STATIC_NODES and RELATIVE_NODES exclude each other
   and need nodes; NUMA_BALANCING goes with BIND or PREFERRED_MANY only. */
static int
check_memory_policy (struct ab_jctx *c, const struct ab_memory_policy *mp)
{
  bool nodes = mp->nodes != NULL && mp->nodes[0] != '\0';
  const char *mode = ab_mpol_mode_name (mp->mode);
  size_t mark = ab_jpush_key (c, "memoryPolicy");

  if (check_list (c, "nodes", mp->nodes, "memory node") < 0)
    return -1;
  if (nodes && (mp->mode == AB_MPOL_DEFAULT || mp->mode == AB_MPOL_LOCAL))
    return ab_jerr_at (c, "nodes", "%s takes no nodes", mode);
  if (!nodes && mp->mode != AB_MPOL_DEFAULT && mp->mode != AB_MPOL_LOCAL && mp->mode != AB_MPOL_PREFERRED)
    return ab_jerr_at (c, "nodes", "%s needs at least one node", mode);
  if ((mp->flags & AB_MPOL_F_STATIC_NODES) && (mp->flags & AB_MPOL_F_RELATIVE_NODES))
    return ab_jerr_at (c, "flags", "MPOL_F_STATIC_NODES and MPOL_F_RELATIVE_NODES exclude each other");
  if ((mp->flags & (AB_MPOL_F_STATIC_NODES | AB_MPOL_F_RELATIVE_NODES)) && !nodes)
    return ab_jerr_at (c, "flags", "MPOL_F_STATIC_NODES and MPOL_F_RELATIVE_NODES need nodes");
  if ((mp->flags & AB_MPOL_F_NUMA_BALANCING) && mp->mode != AB_MPOL_BIND
      && mp->mode != AB_MPOL_PREFERRED_MANY)
    return ab_jerr_at (c, "flags", "MPOL_F_NUMA_BALANCING only goes with MPOL_BIND or MPOL_PREFERRED_MANY");
  ab_jpop (c, mark);
  return 0;
}

static int
check_linux (struct ab_jctx *c, const struct ab_spec *s)
{
  const struct ab_linux *l = s->linux_;
  size_t mark;

  if (l == NULL)
    return 0;
  mark = ab_jpush_key (c, "linux");
  if (check_time_offsets (c, s) < 0 || check_devices (c, s) < 0 || check_net_devices (c, s) < 0)
    return -1;
  if (l->resources != NULL)
    {
      size_t rm = ab_jpush_key (c, "resources");
      if (ab_resources_check (c, l->resources) < 0)
        return -1;
      ab_jpop (c, rm);
    }
  if (check_sysctl (c, s) < 0)
    return -1;
  if (l->seccomp != NULL && check_seccomp (c, l->seccomp) < 0)
    return -1;
  if (l->memory_policy != NULL && check_memory_policy (c, l->memory_policy) < 0)
    return -1;
  ab_jpop (c, mark);
  return 0;
}

/* Files of /proc that lxcfs (and its kind) stand in for with a bind of
   their own, so that top, free and the JVM see the container's share; runc
   lets exactly these through too. */
static const char *const proc_stand_ins[] = {
  "cpuinfo", "diskstats", "meminfo", "stat", "swaps", "uptime", "loadavg", "slabinfo",
  "net/dev", "sys/kernel/ns_last_pid", "sys/crypto/fips_enabled",
};

int
ab_proc_place (const char *destination)
{
  char rel[PATH_MAX] = "";
  size_t n = 0;
  const char *p = destination;

  /* The destination as components ("//" and "." dropped: the parser
     refused ".."), and where it stands against /proc. */
  while (*p)
    {
      size_t k;
      while (*p == '/')
        p++;
      k = strcspn (p, "/");
      if (k == 0 || (k == 1 && p[0] == '.'))
        {
          p += k;
          continue;
        }
      if (n + k + 2 > sizeof rel)
        return AB_PROC_INSIDE;
      if (n)
        rel[n++] = '/';
      memcpy (rel + n, p, k);
      n += k;
      rel[n] = '\0';
      p += k;
    }
  if (strcmp (rel, "proc") == 0)
    return AB_PROC_ROOT;
  if (strncmp (rel, "proc/", 5) != 0)
    return AB_PROC_OUTSIDE;
  for (size_t i = 0; i < sizeof proc_stand_ins / sizeof proc_stand_ins[0]; i++)
    if (strcmp (rel + 5, proc_stand_ins[i]) == 0)
      return AB_PROC_STAND_IN;
  return AB_PROC_INSIDE;
}

/* What agentbox needs of every config it runs, beyond the spec's rules. */
static int
check_supported (const struct ab_spec *s, ab_error_t *err)
{
  const struct ab_linux *l = s->linux_;
  struct stat st;

  if (s->process == NULL)
    return ab_error_setc (err, AB_EC_CONFIG, 0,
                          "config.json: process: required (the container has nothing to run)");
  if (l == NULL || !l->ns[AB_NS_MOUNT].present)
    return ab_error_setc (err, AB_EC_CONFIG, 0,
                          "config.json: linux.namespaces: agentbox needs a mount namespace (type \"mount\")");
  /* Refused either way; the message says whether the host could have had it. */
  if (l->intel_rdt && stat ("/sys/fs/resctrl/schemata", &st) < 0)
    return ab_error_setc (err, AB_EC_CONFIG, ENOENT,
                          "config.json: linux.intelRdt: no resctrl filesystem is mounted on this host");
  if (l->intel_rdt)
    return ab_error_setc (err, AB_EC_CONFIG, ENOTSUP, "config.json: linux.intelRdt: not supported by agentbox yet");
  if (l->mount_label && *l->mount_label)
    return ab_error_setc (err, AB_EC_CONFIG, ENOTSUP,
                          "config.json: linux.mountLabel: SELinux mount labels are not supported yet");
  for (size_t i = 0; i < s->n_mounts; i++)
    {
      if (strcmp (s->mounts[i].destination, "/") == 0)
        return ab_error_setc (err, AB_EC_CONFIG, EINVAL,
                              "config.json: mounts[%zu].destination: mounting over / is not supported", i);
      if (ab_proc_place (s->mounts[i].destination) == AB_PROC_INSIDE)
        {
          char q[AB_QUOTE_SIZE];
          return ab_error_setc (err, AB_EC_CONFIG, 0,
                                "config.json: mounts[%zu].destination: %s is inside /proc, where a mount could "
                                "hide or take the runtime's writes (sysctls, LSM labels); only /proc itself and "
                                "the files lxcfs stands in for (/proc/meminfo, /proc/cpuinfo, ...) take one",
                                i, ab_quote (q, s->mounts[i].destination));
        }
    }
  return 0;
}

int
ab_spec_check_egress_netns (const struct ab_spec *s, const struct ab_egress_policy *egress, ab_error_t *err)
{
  const struct ab_linux *l = s->linux_;
  bool netns = l && l->ns[AB_NS_NET].present;

  if ((s->agentbox.net.present || egress->enabled) && !netns)
    return ab_error_setc (err, AB_EC_CONFIG, 0,
                          "config.json: annotations: an egress policy needs a network namespace in linux.namespaces");
  /* The proxy's listeners are made inside the container's network
     namespace: in a joined one they would serve whoever else lives there. */
  if (egress->enabled && l->ns[AB_NS_NET].path != NULL)
    return ab_error_setc (err, AB_EC_CONFIG, 0,
                          "config.json: annotations.%s: the egress proxy needs a new network namespace, not a "
                          "joined one (%s)",
                          AB_ANNOT_NET_ALLOW_DOMAINS, l->ns[AB_NS_NET].path);
  /* Its resolver is a bind on /etc/resolv.conf, and a mount namespace
     joined by path gets no mount from agentbox (runtime/child.c). */
  if (egress->enabled && l->ns[AB_NS_MOUNT].path)
    return ab_error_setc (err, AB_EC_CONFIG, 0,
                          "config.json: annotations.%s: the egress proxy's /etc/resolv.conf cannot be mounted in a "
                          "mount namespace joined by path (%s)",
                          AB_ANNOT_NET_ALLOW_DOMAINS, l->ns[AB_NS_MOUNT].path);
  return 0;
}

int
ab_spec_validate (const struct ab_spec *s, ab_error_t *err)
{
  struct ab_jctx c;

  ab_jctx_init (&c, "config.json", err);
  if (check_user_namespace (&c, s) < 0 || check_mounts (&c, s) < 0 || check_joined_mount_ns (&c, s) < 0
      || check_process (&c, s) < 0
      || check_uts (&c, s) < 0 || check_hooks (&c, s) < 0 || check_linux (&c, s) < 0)
    return -1;
  /* agentbox's own annotations (dev.agentbox.*): what `features` lists. */
  return ab_annotations_validate (s, err);
}

int
ab_spec_check_supported (const struct ab_spec *s, ab_error_t *err)
{
  if (check_supported (s, err) < 0)
    return -1;
  return ab_spec_check_egress_netns (s, &s->agentbox.egress, err);
}
