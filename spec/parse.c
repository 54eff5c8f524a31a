/* config.json -> struct ab_spec.
 *
 * The bounded reader (base/json.c) has already refused what no config can
 * be: oversize documents, deep nesting, duplicate keys, invalid UTF-8, NUL
 * bytes.  This file checks every member against the schema type of
 * runtime-spec 1.3.0 and the rules of config.md that concern one value,
 * and reports the first violation with its JSON path:
 *
 *     config.json: process.rlimits[2].type: duplicate rlimit "RLIMIT_NOFILE"
 *
 * Rules that relate several members (a hostname needs a UTS namespace, ...)
 * are ab_spec_validate's.  The `linux` object is in parse-linux.c and
 * parse-resources.c; the helpers all of them share in parse-util.c.
 *
 * Ownership: every allocation is attached to the spec as soon as it is made
 * (arrays are zero-filled with their count set), so ab_spec_free can free a
 * half-parsed spec and every error path is a plain return. */
#include "config.h"

#include <limits.h>
#include <sys/mount.h>

#include "spec/annotations.h"
#include "spec/parse-internal.h"
#include "spec/spec.h"
#include "spec/tables.h"

#ifndef MOUNT_ATTR__ATIME
#define MOUNT_ATTR__ATIME 0x00000070
#endif

/* The versions we parse: SemVer major 1, minor 0 to 3 (AB_OCI_VERSION). */
#define OCI_MAJOR 1
#define OCI_MINOR_MAX 3
#define OCI_RANGE AB_OCI_VERSION_MIN " to 1.3.x"

#define HOST_NAME_LIMIT 64 /* HOST_NAME_MAX: sethostname(2) refuses longer */

/* A member that only other platforms define: refused, not ignored, since
   the user asked for something we would silently not do. */
static int
refuse_member (struct ab_jctx *c, struct ab_json *o, const char *key, const char *hint)
{
  struct ab_json *v = ab_json_member (o, key);

  if (v == NULL || v->type == AB_J_NULL)
    return 0;
  ab_jpush_key (c, key);
  return ab_jerr (c, "not supported on Linux%s", hint);
}

/* ---- ociVersion ------------------------------------------------------- */

/* A SemVer numeric identifier: "0" or digits without a leading zero.
   Saturates instead of overflowing: the syntax has no bound. */
static bool
semver_number (const char **p, uint64_t *v)
{
  const char *s = *p;

  if (*s < '0' || *s > '9' || (s[0] == '0' && s[1] >= '0' && s[1] <= '9'))
    return false;
  for (*v = 0; *s >= '0' && *s <= '9'; s++)
    *v = *v > (UINT64_MAX - 9) / 10 ? UINT64_MAX : *v * 10 + (uint64_t)(*s - '0');
  *p = s;
  return true;
}

/* Dot-separated identifiers of [0-9A-Za-z-]; in a pre-release, a purely
   numeric identifier must not have a leading zero. */
static bool
semver_identifiers (const char **p, bool prerelease)
{
  const char *s = *p;

  for (;;)
    {
      size_t n = strspn (s, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-");
      size_t digits = strspn (s, "0123456789");
      if (n == 0 || (prerelease && digits == n && n > 1 && s[0] == '0'))
        return false;
      s += n;
      if (*s != '.')
        break;
      s++;
    }
  *p = s;
  return true;
}

static bool
semver_parse (const char *s, uint64_t *major, uint64_t *minor)
{
  uint64_t patch;

  if (!semver_number (&s, major) || *s++ != '.' || !semver_number (&s, minor) || *s++ != '.'
      || !semver_number (&s, &patch))
    return false;
  if (*s == '-' && (s++, !semver_identifiers (&s, true)))
    return false;
  if (*s == '+' && (s++, !semver_identifiers (&s, false)))
    return false;
  return *s == '\0';
}

static int
parse_oci_version (struct ab_jctx *c, struct ab_json *root, struct ab_spec *s)
{
  char q[AB_QUOTE_SIZE];
  uint64_t major, minor;
  size_t mark;

  if (ab_jget_str (c, root, "ociVersion", AB_REQUIRED, &s->oci_version) < 0)
    return -1;
  mark = ab_jpush_key (c, "ociVersion");
  if (!semver_parse (s->oci_version, &major, &minor))
    return ab_jerr (c, "%s is not a SemVer 2.0.0 version", ab_quote (q, s->oci_version));
  /* Within a major version the spec is backward compatible; a minor
     version newer than ours may carry MUSTs we would silently ignore. */
  if (major != OCI_MAJOR || minor > OCI_MINOR_MAX)
    return ab_jerr (c, "unsupported version %s (agentbox supports %s)", ab_quote (q, s->oci_version),
                    OCI_RANGE);
  ab_jpop (c, mark);
  return 0;
}

/* ---- process ---------------------------------------------------------- */

static int
parse_user (struct ab_jctx *c, struct ab_json *po, struct ab_user *u)
{
  struct ab_json *o, *gids;
  size_t mark, gm, i;
  int r = ab_jenter (c, po, "user", AB_J_OBJECT, AB_OPTIONAL, &o, &mark);

  if (r <= 0)
    return r;
  if (ab_parse_get_u32 (c, o, "uid", AB_REQUIRED, &u->uid) < 0
      || ab_parse_get_u32 (c, o, "gid", AB_REQUIRED, &u->gid) < 0)
    return -1;
  r = ab_parse_get_u32 (c, o, "umask", AB_OPTIONAL, &u->umask);
  if (r < 0)
    return -1;
  u->umask_set = r > 0;
  r = ab_jenter (c, o, "additionalGids", AB_J_ARRAY, AB_OPTIONAL, &gids, &gm);
  if (r < 0)
    return -1;
  if (r > 0)
    {
      u->additional_gids = xcalloc (gids->u.arr.n, sizeof *u->additional_gids);
      u->n_additional_gids = gids->u.arr.n;
      for (i = 0; i < gids->u.arr.n; i++)
        {
          size_t im = ab_jpush_index (c, i);
          uint64_t v;
          if (ab_jval_u64 (c, gids->u.arr.items[i], UINT32_MAX, &v) < 0)
            return -1;
          u->additional_gids[i] = (uint32_t)v;
          ab_jpop (c, im);
        }
      ab_jpop (c, gm);
    }
  if (refuse_member (c, o, "username", " (use uid and gid)") < 0)
    return -1;
  ab_jpop (c, mark);
  return 1;
}

static int
parse_rlimits (struct ab_jctx *c, struct ab_json *po, struct ab_process *p)
{
  char q[AB_QUOTE_SIZE];
  struct ab_json *a;
  uint64_t seen = 0; /* bit per RLIMIT_* resource: duplicates are an error */
  size_t mark, i;
  int r = ab_jenter (c, po, "rlimits", AB_J_ARRAY, AB_OPTIONAL, &a, &mark);

  if (r <= 0)
    return r;
  p->rlimits = xcalloc (a->u.arr.n, sizeof *p->rlimits);
  p->n_rlimits = a->u.arr.n;
  for (i = 0; i < a->u.arr.n; i++)
    {
      struct ab_rlimit *rl = &p->rlimits[i];
      struct ab_json *e;
      size_t im, tm;

      if (ab_parse_enter_item (c, a, i, &e, &im) < 0
          || ab_jget_str (c, e, "type", AB_REQUIRED, &rl->type) < 0)
        return -1;
      tm = ab_jpush_key (c, "type");
      rl->resource = ab_rlimit_from_name (rl->type);
      if (rl->resource < 0 || rl->resource >= 64)
        return ab_jerr (c, "unknown rlimit %s", ab_quote (q, rl->type));
      if (seen & (UINT64_C (1) << rl->resource))
        return ab_jerr (c, "duplicate rlimit %s", ab_quote (q, rl->type));
      seen |= UINT64_C (1) << rl->resource;
      ab_jpop (c, tm);
      if (ab_jget_u64 (c, e, "soft", AB_REQUIRED, UINT64_MAX, &rl->soft) < 0
          || ab_jget_u64 (c, e, "hard", AB_REQUIRED, UINT64_MAX, &rl->hard) < 0)
        return -1;
      if (rl->soft > rl->hard)
        return ab_jerr (c, "soft limit %llu of %s is greater than its hard limit %llu",
                        (unsigned long long)rl->soft, rl->type, (unsigned long long)rl->hard);
      ab_jpop (c, im);
    }
  ab_jpop (c, mark);
  return 1;
}

static int
parse_capabilities (struct ab_jctx *c, struct ab_json *po, struct ab_spec *s)
{
  struct ab_capabilities *caps = &s->process->caps;
  struct ab_json *o;
  size_t mark;
  int r = ab_jenter (c, po, "capabilities", AB_J_OBJECT, AB_OPTIONAL, &o, &mark);
  int k;

  if (r <= 0)
    return r;
  s->process->capabilities_set = true;
  for (k = 0; k < AB_CAP__SETS; k++)
    {
      struct ab_json *a;
      size_t sm, i;

      r = ab_jenter (c, o, ab_capset_name (k), AB_J_ARRAY, AB_OPTIONAL, &a, &sm);
      if (r < 0)
        return -1;
      if (r == 0)
        continue;
      caps->set[k] = true;
      for (i = 0; i < a->u.arr.n; i++)
        {
          char q[AB_QUOTE_SIZE];
          size_t im = ab_jpush_index (c, i);
          struct ab_json *e = a->u.arr.items[i];
          int cap;

          if (e->type != AB_J_STRING)
            return ab_jerr (c, "must be a string, not %s", ab_jtype_name (e->type));
          /* config.md: valid values are those of capabilities(7).  A name
             no table knows is a mistake (or a probe) and is refused; a real
             capability this kernel is too old for is mapped here and
             dropped, with a warning and a `degraded` entry, at create. */
          cap = ab_cap_from_name (e->u.str.s);
          if (cap < 0 || cap > AB_CAP_LAST)
            return ab_jerr (c, "unknown capability %s", ab_quote (q, e->u.str.s));
          caps->mask[k] |= UINT64_C (1) << cap;
          ab_jpop (c, im);
        }
      ab_jpop (c, sm);
    }
  ab_jpop (c, mark);
  return 1;
}

static int
parse_scheduler (struct ab_jctx *c, struct ab_json *po, struct ab_process *p)
{
  char q[AB_QUOTE_SIZE];
  _cleanup_free_ char *policy = NULL;
  struct ab_scheduler *sc;
  struct ab_json *o;
  size_t mark;
  int r = ab_jenter (c, po, "scheduler", AB_J_OBJECT, AB_OPTIONAL, &o, &mark);

  if (r <= 0)
    return r;
  sc = p->scheduler = xzalloc (sizeof *sc);
  if (ab_jget_str (c, o, "policy", AB_REQUIRED, &policy) < 0)
    return -1;
  sc->policy = ab_sched_policy_from_name (policy);
  if (sc->policy < 0)
    {
      ab_jpush_key (c, "policy");
      return ab_jerr (c, "unknown scheduler policy %s", ab_quote (q, policy));
    }
  if (ab_parse_get_i32 (c, o, "nice", AB_OPTIONAL, &sc->nice) < 0
      || ab_parse_get_i32 (c, o, "priority", AB_OPTIONAL, &sc->priority) < 0
      || ab_parse_flag_names (c, o, "flags", "scheduler flag", ab_sched_flag_from_name, &sc->flags) < 0
      || ab_jget_u64 (c, o, "runtime", AB_OPTIONAL, UINT64_MAX, &sc->runtime) < 0
      || ab_jget_u64 (c, o, "deadline", AB_OPTIONAL, UINT64_MAX, &sc->deadline) < 0
      || ab_jget_u64 (c, o, "period", AB_OPTIONAL, UINT64_MAX, &sc->period) < 0)
    return -1;
  ab_jpop (c, mark);
  return 1;
}

static int
parse_io_priority (struct ab_jctx *c, struct ab_json *po, struct ab_process *p)
{
  char q[AB_QUOTE_SIZE];
  _cleanup_free_ char *klass = NULL;
  struct ab_json *o;
  int64_t prio = 0;
  size_t mark;
  int r = ab_jenter (c, po, "ioPriority", AB_J_OBJECT, AB_OPTIONAL, &o, &mark);

  if (r <= 0)
    return r;
  p->io_priority = xzalloc (sizeof *p->io_priority);
  if (ab_jget_str (c, o, "class", AB_REQUIRED, &klass) < 0)
    return -1;
  p->io_priority->klass = ab_ioprio_class_from_name (klass);
  if (p->io_priority->klass < 0)
    {
      ab_jpush_key (c, "class");
      return ab_jerr (c, "unknown I/O priority class %s", ab_quote (q, klass));
    }
  /* ioprio_set(2) knows levels 0 (highest) to 7 (lowest). */
  if (ab_jget_i64 (c, o, "priority", AB_OPTIONAL, 0, 7, &prio) < 0)
    return -1;
  p->io_priority->priority = (int32_t)prio;
  ab_jpop (c, mark);
  return 1;
}

static int
parse_cpu_affinity (struct ab_jctx *c, struct ab_json *po, struct ab_process *p)
{
  struct ab_json *o;
  size_t mark, m;
  int r = ab_jenter (c, po, "execCPUAffinity", AB_J_OBJECT, AB_OPTIONAL, &o, &mark);

  if (r <= 0)
    return r;
  r = ab_jget_str (c, o, "initial", AB_OPTIONAL, &p->exec_cpu_affinity_initial);
  if (r < 0)
    return -1;
  m = ab_jpush_key (c, "initial");
  if (r > 0 && ab_parse_check_cpu_list (c, p->exec_cpu_affinity_initial) < 0)
    return -1;
  ab_jpop (c, m);
  r = ab_jget_str (c, o, "final", AB_OPTIONAL, &p->exec_cpu_affinity_final);
  if (r < 0)
    return -1;
  m = ab_jpush_key (c, "final");
  if (r > 0 && ab_parse_check_cpu_list (c, p->exec_cpu_affinity_final) < 0)
    return -1;
  ab_jpop (c, m);
  ab_jpop (c, mark);
  return 1;
}

static int
parse_process (struct ab_jctx *c, struct ab_json *root, struct ab_spec *s)
{
  struct ab_process *p;
  struct ab_json *o, *cs;
  int64_t oom;
  size_t mark, m;
  int r = ab_jenter (c, root, "process", AB_J_OBJECT, AB_OPTIONAL, &o, &mark);

  if (r <= 0)
    return r;
  p = s->process = xzalloc (sizeof *p);
  if (ab_jget_bool (c, o, "terminal", AB_OPTIONAL, &p->terminal) < 0)
    return -1;
  r = ab_jenter (c, o, "consoleSize", AB_J_OBJECT, AB_OPTIONAL, &cs, &m);
  if (r < 0)
    return -1;
  if (r > 0)
    {
      if (ab_jget_u64 (c, cs, "height", AB_REQUIRED, UINT64_MAX, &p->console_height) < 0
          || ab_jget_u64 (c, cs, "width", AB_REQUIRED, UINT64_MAX, &p->console_width) < 0)
        return -1;
      p->console_size_set = true;
      ab_jpop (c, m);
    }
  if (ab_parse_get_path (c, o, "cwd", AB_REQUIRED, &p->cwd) < 0
      || ab_jget_strv (c, o, "env", AB_OPTIONAL, &p->env) < 0
      || ab_jget_strv (c, o, "args", AB_REQUIRED, &p->args) < 0)
    return -1;
  m = ab_jpush_key (c, "args");
  if (p->args.n == 0)
    return ab_jerr (c, "must contain at least one entry (the program to run)");
  if (p->args.v[0][0] == '\0')
    {
      ab_jpush_index (c, 0);
      return ab_jerr (c, "the program to run must not be empty");
    }
  ab_jpop (c, m);
  if (refuse_member (c, o, "commandLine", " (use args)") < 0 || parse_user (c, o, &p->user) < 0
      || parse_rlimits (c, o, p) < 0 || parse_capabilities (c, o, s) < 0
      || ab_jget_bool (c, o, "noNewPrivileges", AB_OPTIONAL, &p->no_new_privileges) < 0)
    return -1;
  /* /proc/PID/oom_score_adj takes -1000 to 1000. */
  r = ab_jget_i64 (c, o, "oomScoreAdj", AB_OPTIONAL, -1000, 1000, &oom);
  if (r < 0)
    return -1;
  p->oom_score_adj_set = r > 0;
  p->oom_score_adj = r > 0 ? (int)oom : 0;
  if (ab_jget_str (c, o, "apparmorProfile", AB_OPTIONAL, &p->apparmor_profile) < 0
      || ab_jget_str (c, o, "selinuxLabel", AB_OPTIONAL, &p->selinux_label) < 0
      || parse_scheduler (c, o, p) < 0 || parse_io_priority (c, o, p) < 0 || parse_cpu_affinity (c, o, p) < 0)
    return -1;
  ab_jpop (c, mark);
  return 1;
}

/* ---- root and mounts -------------------------------------------------- */

static int
parse_root (struct ab_jctx *c, struct ab_json *root, struct ab_spec *s)
{
  struct ab_json *o;
  size_t mark;

  /* config.md: root is REQUIRED on every platform but Windows. */
  if (ab_jenter (c, root, "root", AB_J_OBJECT, AB_REQUIRED, &o, &mark) < 0
      || ab_jget_str (c, o, "path", AB_REQUIRED, &s->root.path) < 0
      || ab_jget_bool (c, o, "readonly", AB_OPTIONAL, &s->root.readonly) < 0)
    return -1;
  if (s->root.path[0] == '\0')
    {
      ab_jpush_key (c, "path");
      return ab_jerr (c, "must not be empty");
    }
  s->root_set = true;
  ab_jpop (c, mark);
  return 1;
}

/* Filesystem-specific options, comma-joined for mount(2)'s data. */
struct strbuf
{
  char *s;
  size_t len, cap;
};

static void
strbuf_append (struct strbuf *b, const char *sep, const char *str)
{
  size_t ls = b->len ? strlen (sep) : 0, n = strlen (str);

  if (b->len + ls + n + 1 > b->cap)
    {
      b->cap = (b->len + ls + n + 1) * 2;
      b->s = xrealloc (b->s, b->cap);
    }
  memcpy (b->s + b->len, sep, ls);
  memcpy (b->s + b->len + ls, str, n + 1);
  b->len += ls + n;
}

/* Fill the derived fields of m from m->options, in order: a later option
   overrides an earlier one ("ro" then "rw" is rw), as mount(8) does. */
static int
derive_mount_options (struct ab_jctx *c, struct ab_mount *m)
{
  struct strbuf data = { 0 };
  size_t i;

  for (i = 0; i < m->options.n; i++)
    {
      const char *name = m->options.v[i];
      const struct ab_mount_option *o;

      if (name[0] == '\0')
        {
          free (data.s);
          ab_jpush_key (c, "options");
          ab_jpush_index (c, i);
          return ab_jerr (c, "must not be empty");
        }
      o = ab_mount_option_lookup (name);
      if (o == NULL)
        {
          strbuf_append (&data, ",", name);
          continue;
        }
      switch (o->kind)
        {
        case AB_MOPT_FLAG:
          m->flags |= o->flag;
          m->clear_flags &= ~o->flag;
          break;
        case AB_MOPT_CLEAR:
          m->clear_flags |= o->flag;
          m->flags &= ~o->flag;
          break;
        case AB_MOPT_ATTR_SET:
          if ((o->attr & ~(uint64_t)MOUNT_ATTR__ATIME) == 0)
            {
              /* An atime mode: the kernel wants the whole mask cleared
                 and exactly one mode set (see spec/tables.c). */
              m->attr_clr |= MOUNT_ATTR__ATIME;
              m->attr_set = (m->attr_set & ~(uint64_t)MOUNT_ATTR__ATIME) | o->attr;
            }
          else
            {
              m->attr_set |= o->attr;
              m->attr_clr &= ~o->attr;
            }
          break;
        case AB_MOPT_ATTR_CLR:
          m->attr_clr |= o->attr;
          m->attr_set &= ~o->attr;
          break;
        case AB_MOPT_BIND:
        case AB_MOPT_RBIND:
          m->bind = true;
          m->recursive = m->recursive || o->value;
          m->flags |= o->flag;
          break;
        case AB_MOPT_PROPAGATION:
          m->propagation = o->value;
          m->propagation_recursive = (o->flag & MS_REC) != 0;
          break;
        case AB_MOPT_IDMAP:
          m->idmap = true;
          m->idmap_recursive = o->value != 0;
          break;
        case AB_MOPT_TMPCOPYUP:
          m->tmpcopyup = true;
          break;
        case AB_MOPT_IGNORE:
          break;
        }
    }
  m->data = data.s;
  return 0;
}

static int
parse_mount (struct ab_jctx *c, struct ab_json *o, struct ab_mount *m)
{
  char q[AB_QUOTE_SIZE];
  size_t mark;
  int ru, rg;

  if (ab_jget_str (c, o, "destination", AB_REQUIRED, &m->destination) < 0)
    return -1;
  mark = ab_jpush_key (c, "destination");
  if (m->destination[0] == '\0')
    return ab_jerr (c, "must not be empty");
  /* The destination is resolved inside the container root; ".." is how a
     mount would land outside it. */
  if (ab_path_has_dotdot (m->destination))
    return ab_jerr (c, "must not contain a \"..\" component: %s", ab_quote (q, m->destination));
  if (m->destination[0] != '/')
    {
      /* config.md: a relative destination is deprecated and relative to "/". */
      char *abs = xasprintf ("/%s", m->destination);
      free (m->destination);
      m->destination = abs;
    }
  if (strlen (m->destination) >= PATH_MAX)
    return ab_jerr (c, "path longer than %d bytes", PATH_MAX - 1);
  ab_jpop (c, mark);
  if (ab_jget_str (c, o, "source", AB_OPTIONAL, &m->source) < 0
      || ab_jget_str (c, o, "type", AB_OPTIONAL, &m->type) < 0
      || ab_jget_strv (c, o, "options", AB_OPTIONAL, &m->options) < 0 || derive_mount_options (c, m) < 0)
    return -1;
  ru = ab_parse_idmaps (c, o, "uidMappings", &m->uid_mappings);
  if (ru < 0)
    return -1;
  rg = ab_parse_idmaps (c, o, "gidMappings", &m->gid_mappings);
  if (rg < 0)
    return -1;
  if (ru != rg)
    return ab_jerr (c, "uidMappings and gidMappings must be specified together");
  return 0;
}

static int
parse_mounts (struct ab_jctx *c, struct ab_json *root, struct ab_spec *s)
{
  struct ab_json *a;
  size_t mark, i;
  int r = ab_jenter (c, root, "mounts", AB_J_ARRAY, AB_OPTIONAL, &a, &mark);

  if (r <= 0)
    return r;
  s->mounts = xcalloc (a->u.arr.n, sizeof *s->mounts);
  s->n_mounts = a->u.arr.n;
  for (i = 0; i < a->u.arr.n; i++)
    {
      struct ab_json *e;
      size_t im;

      if (ab_parse_enter_item (c, a, i, &e, &im) < 0 || parse_mount (c, e, &s->mounts[i]) < 0)
        return -1;
      ab_jpop (c, im);
    }
  ab_jpop (c, mark);
  return 1;
}

/* ---- hooks, hostname, annotations ------------------------------------- */

static int
parse_hooks (struct ab_jctx *c, struct ab_json *root, struct ab_spec *s)
{
  struct ab_json *o;
  size_t mark;
  int r = ab_jenter (c, root, "hooks", AB_J_OBJECT, AB_OPTIONAL, &o, &mark);
  int k;

  if (r <= 0)
    return r;
  /* Deliberately lenient: a hook kind we do not know ("prestartt") is an
     unknown property, and config.md "Extensibility" says runtimes MUST NOT
     generate an error for those but MUST ignore them.  It is kept in
     s->unknown for `agentbox audit`. */
  for (k = 0; k < AB_HOOK__KINDS; k++)
    {
      struct ab_hook_list *l = &s->hooks[k];
      struct ab_json *a;
      size_t km, i;

      r = ab_jenter (c, o, ab_hook_kind_name (k), AB_J_ARRAY, AB_OPTIONAL, &a, &km);
      if (r < 0)
        return -1;
      if (r == 0)
        continue;
      l->v = xcalloc (a->u.arr.n, sizeof *l->v);
      l->n = a->u.arr.n;
      for (i = 0; i < a->u.arr.n; i++)
        {
          struct ab_hook *h = &l->v[i];
          struct ab_json *e;
          int64_t timeout;
          size_t im;

          /* config.md: path MUST be absolute; timeout MUST be > 0. */
          if (ab_parse_enter_item (c, a, i, &e, &im) < 0
              || ab_parse_get_path (c, e, "path", AB_REQUIRED, &h->path) < 0
              || ab_jget_strv (c, e, "args", AB_OPTIONAL, &h->args) < 0)
            return -1;
          r = ab_jget_strv (c, e, "env", AB_OPTIONAL, &h->env);
          if (r < 0)
            return -1;
          h->env_set = r > 0;
          r = ab_jget_i64 (c, e, "timeout", AB_OPTIONAL, 1, INT32_MAX, &timeout);
          if (r < 0)
            return -1;
          h->timeout_set = r > 0;
          h->timeout = r > 0 ? (int)timeout : 0;
          ab_jpop (c, im);
        }
      ab_jpop (c, km);
    }
  ab_jpop (c, mark);
  return 1;
}

static int
get_host_name (struct ab_jctx *c, struct ab_json *root, const char *key, char **out)
{
  size_t mark;
  int r = ab_jget_str (c, root, key, AB_OPTIONAL, out);

  if (r <= 0)
    return r;
  mark = ab_jpush_key (c, key);
  if (strlen (*out) > HOST_NAME_LIMIT)
    return ab_jerr (c, "longer than %d bytes", HOST_NAME_LIMIT);
  ab_jpop (c, mark);
  return 1;
}

/* ---- the document ----------------------------------------------------- */

static int
parse_document (struct ab_jctx *c, struct ab_json *root, struct ab_spec *s)
{
  static const char *const other_platforms[] = { "windows", "solaris", "vm", "zos", "freebsd" };
  size_t i;

  if (parse_oci_version (c, root, s) < 0)
    return -1;
  for (i = 0; i < AB_ARRAY_SIZE (other_platforms); i++)
    if (refuse_member (c, root, other_platforms[i], "") < 0)
      return -1;
  if (parse_root (c, root, s) < 0 || parse_process (c, root, s) < 0 || parse_mounts (c, root, s) < 0
      || get_host_name (c, root, "hostname", &s->hostname) < 0
      || get_host_name (c, root, "domainname", &s->domainname) < 0 || parse_hooks (c, root, s) < 0
      || ab_parse_string_map (c, root, "annotations", &s->annotations, NULL) < 0
      || ab_parse_linux (c, root, s) < 0)
    return -1;
  return 0;
}

static void
spec_freep (struct ab_spec **s)
{
  ab_spec_free (*s);
}

struct ab_spec *
ab_spec_parse (const char *buf, size_t len, ab_error_t *err)
{
  _cleanup_json_ struct ab_json *root = NULL;
  _cleanup_ (spec_freep) struct ab_spec *s = NULL;
  struct ab_jctx c;
  size_t i;

  root = ab_json_parse (buf, len, &ab_json_config_limits, "config.json", err);
  if (root == NULL)
    {
      /* The reader's messages carry keys of the document verbatim: keep
         their escape sequences and newlines off the user's terminal. */
      if (err != NULL)
        ab_parse_sanitize (err->msg, sizeof err->msg);
      return NULL;
    }
  ab_jctx_init (&c, "config.json", err);
  if (root->type != AB_J_OBJECT)
    {
      ab_jerr (&c, "must be a JSON object, not %s", ab_jtype_name (root->type));
      return NULL;
    }
  s = xzalloc (sizeof *s);
  if (parse_document (&c, root, s) < 0)
    return NULL;
  /* after mounts[]: the workspace annotations name one of them */
  ab_annotations_type (s);
  /* config.md "Extensibility": unknown properties MUST be ignored; we keep
     their paths for `agentbox audit`. */
  ab_json_collect_unused (root, NULL, &s->unknown);
  /* Their paths hold keys of the document verbatim: quote the ones that
     could carry escape sequences to whoever lists them. */
  for (i = 0; i < s->unknown.n; i++)
    if (!ab_parse_is_safe (s->unknown.v[i]))
      {
        char q[AB_QUOTE_SIZE];
        char *safe = xstrdup (ab_quote (q, s->unknown.v[i]));
        free (s->unknown.v[i]);
        s->unknown.v[i] = safe;
      }
  return ab_steal_ptr (&s);
}

/* ---- freeing ---------------------------------------------------------- */

static void
process_free (struct ab_process *p)
{
  size_t i;

  if (p == NULL)
    return;
  free (p->cwd);
  ab_strv_free (&p->env);
  ab_strv_free (&p->args);
  free (p->command_line);
  free (p->user.additional_gids);
  free (p->user.username);
  for (i = 0; i < p->n_rlimits; i++)
    free (p->rlimits[i].type);
  free (p->rlimits);
  free (p->apparmor_profile);
  free (p->selinux_label);
  free (p->scheduler);
  free (p->io_priority);
  free (p->exec_cpu_affinity_initial);
  free (p->exec_cpu_affinity_final);
  free (p);
}

static void
mount_free (struct ab_mount *m)
{
  free (m->destination);
  free (m->source);
  free (m->type);
  ab_strv_free (&m->options);
  free (m->uid_mappings.v);
  free (m->gid_mappings.v);
  free (m->data);
}

void
ab_spec_free (struct ab_spec *s)
{
  size_t i;
  int k;

  if (s == NULL)
    return;
  free (s->oci_version);
  free (s->root.path);
  for (i = 0; i < s->n_mounts; i++)
    mount_free (&s->mounts[i]);
  free (s->mounts);
  process_free (s->process);
  free (s->hostname);
  free (s->domainname);
  for (k = 0; k < AB_HOOK__KINDS; k++)
    {
      for (i = 0; i < s->hooks[k].n; i++)
        {
          free (s->hooks[k].v[i].path);
          ab_strv_free (&s->hooks[k].v[i].args);
          ab_strv_free (&s->hooks[k].v[i].env);
        }
      free (s->hooks[k].v);
    }
  ab_kvlist_free (&s->annotations);
  ab_agentbox_free (&s->agentbox);
  ab_workspace_free (&s->workspace);
  ab_linux_free (s->linux_);
  ab_strv_free (&s->unknown);
  ab_strv_free (&s->warnings);
  free (s);
}
