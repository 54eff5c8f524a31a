#include "config.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/resource.h>

#include "base/util.h"
#include "runtime/plan/plan-internal.h"
#include "runtime/plan/plan.h"
#include "spec/annotations.h"
#include "spec/tables.h"

/* What the plan owns; everything else it points at is the model's. */
struct ab_plan_storage
{
  struct ab_process process;  /* a shallow copy of the model's, with owned replacements below */
  struct ab_strv env;         /* process.env, when changed */
  struct ab_strv args;        /* process.args, when changed */
  char *cwd;                  /* process.cwd, when changed */
  char *apparmor, *label;     /* process.apparmorProfile and selinuxLabel, when changed */
  uint32_t *gids;             /* process.user.additionalGids, when changed */
  struct ab_spec *process_doc; /* exec --process: the parsed document holding the process */
  struct ab_mount *mounts;    /* the model's (shallow) and the derived ones */
  struct ab_resources resources;
  struct ab_device_rule *devices;
  struct ab_rlimit *rlimits;  /* process.rlimits with a derived RLIMIT_NPROC */
  struct ab_kv *unified;      /* resources.unified without the keys of unenforced controllers (shallow) */
  char *hosts;                /* the generated /etc/hosts */
};

/* ---- the process --------------------------------------------------------- */

/* Set NAME=VALUE in env: replace NAME's entry, or append one.  keep: the
   existing entry wins (the config's own value over a derived one). */
static void
env_set (struct ab_strv *env, const char *entry, bool keep)
{
  const char *eq = strchr (entry, '=');
  size_t nl = eq ? (size_t)(eq - entry) : strlen (entry);

  for (size_t k = 0; k < env->n; k++)
    if (strncmp (env->v[k], entry, nl) == 0 && env->v[k][nl] == '=')
      {
        if (!keep)
          {
            free (env->v[k]);
            env->v[k] = xstrdup (entry);
          }
        return;
      }
  ab_strv_push (env, entry);
}

static void
own_env (struct ab_plan_storage *st)
{
  if (st->process.env.v == st->env.v && st->env.v != NULL)
    return;
  for (size_t i = 0; i < st->process.env.n; i++)
    ab_strv_push (&st->env, st->process.env.v[i]);
  st->process.env = st->env;
}

/* exec --process FILE: the process object goes through the config parser,
   with all its checks. */
static int
process_from_file (struct ab_plan_storage *st, const char *path, ab_error_t *err)
{
  _cleanup_free_ char *buf = NULL, *doc = NULL;
  size_t len;

  if (ab_read_file_at (AT_FDCWD, path, AB_CONFIG_MAX_BYTES, &buf, &len, err) < 0)
    return ab_error_prefix (err, "--process");
  doc = xasprintf ("{\"ociVersion\":\"%s\",\"root\":{\"path\":\"/\"},\"process\":%s\n}", AB_OCI_VERSION, buf);
  st->process_doc = ab_spec_parse (doc, strlen (doc), err);
  if (st->process_doc == NULL)
    return ab_error_prefix (err, "--process `%s`", path);
  if (st->process_doc->process == NULL)
    return ab_error_setc (err, AB_EC_CONFIG, 0, "--process `%s`: not a process object", path);
  st->process = *st->process_doc->process;
  return 0;
}

/* exec: the command line's changes to the container's process. */
static int
change_process (struct ab_plan_storage *st, const struct ab_spec *s, const struct ab_process_change *x,
                ab_error_t *err)
{
  if (x->process_file)
    return process_from_file (st, x->process_file, err);
  if (s->process == NULL)
    return ab_error_setc (err, AB_EC_CONFIG, 0, "the container's config has no process to take defaults from");
  if (x->args == NULL || x->args->n == 0)
    return ab_error_setc (err, AB_EC_USAGE, 0, "exec: missing the program to run");
  st->process = *s->process;
  for (size_t i = 0; i < x->args->n; i++)
    ab_strv_push (&st->args, x->args->v[i]);
  st->process.args = st->args;
  if (x->cwd)
    st->process.cwd = st->cwd = xstrdup (x->cwd);
  if (x->env && x->env->n)
    {
      own_env (st);
      for (size_t i = 0; i < x->env->n; i++)
        env_set (&st->env, x->env->v[i], false);
      st->process.env = st->env;
    }
  /* --user UID[:GID], as runc: a gid not given stays the config's, and so
     do its additionalGids. */
  if (x->user_set)
    {
      st->process.user.uid = x->uid;
      if (x->gid_set)
        st->process.user.gid = x->gid;
    }
  /* --additional-gids, as runc: after the config's own. */
  if (x->n_add_gids)
    {
      size_t n = st->process.user.n_additional_gids;
      st->gids = xcalloc (n + x->n_add_gids, sizeof *st->gids);
      if (n)
        memcpy (st->gids, st->process.user.additional_gids, n * sizeof *st->gids);
      memcpy (st->gids + n, x->add_gids, x->n_add_gids * sizeof *st->gids);
      st->process.user.additional_gids = st->gids;
      st->process.user.n_additional_gids = n + x->n_add_gids;
    }
  for (size_t i = 0; x->add_caps && i < x->add_caps->n; i++)
    {
      /* Bounding, effective and permitted, as runc and crun: never
         inheritable or ambient, which would carry the capability across
         execve into programs that were never meant to hold it. */
      static const int sets[] = { AB_CAP_BOUNDING, AB_CAP_EFFECTIVE, AB_CAP_PERMITTED };
      int cap = ab_cap_from_name (x->add_caps->v[i]);
      if (cap < 0)
        return ab_error_setc (err, AB_EC_USAGE, 0, "exec: --cap: unknown capability `%s`", x->add_caps->v[i]);
      for (size_t k = 0; k < AB_ARRAY_SIZE (sets); k++)
        {
          st->process.caps.set[sets[k]] = true;
          st->process.caps.mask[sets[k]] |= 1ull << cap;
        }
    }
  if (x->no_new_privs)
    st->process.no_new_privileges = true;
  if (x->apparmor_profile)
    st->process.apparmor_profile = st->apparmor = xstrdup (x->apparmor_profile);
  if (x->selinux_label)
    st->process.selinux_label = st->label = xstrdup (x->selinux_label);
  st->process.terminal = x->tty;
  return 0;
}

/* ---- the network ----------------------------------------------------------- */

static int
plan_network (struct ab_plan *p, const struct ab_spec *s, const struct ab_plan_opts *o, ab_error_t *err)
{
  const struct ab_linux *l = s->linux_;
  struct ab_plan_net *n = &p->net;
  struct ab_egress_policy baseline = { 0 };
  int r;

  n->netns = l && l->ns[AB_NS_NET].present;
  n->own_ns = n->netns && l->ns[AB_NS_NET].path == NULL;
  /* Lo alone: nothing moved in, and no hook that runs before the program
     (prestart, createRuntime, createContainer, startContainer) that could
     add a link or a table to the namespace, as a CNI plugin run from a hook
     does. */
  n->lo_only = n->own_ns && l->n_net_devices == 0;
  for (int k = AB_HOOK_PRESTART; k <= AB_HOOK_START_CONTAINER; k++)
    n->lo_only = n->lo_only && s->hooks[k].n == 0;
  n->allow = &s->agentbox.net;
  /* A netns we create gets the wall unless the config turns it off (for
     an orchestrator's own links); a joined one (podman, containerd) only
     when the config asks with the annotation. */
  n->wall = (n->own_ns && !s->agentbox.wall_off) || (n->netns && s->agentbox.net.present);
  n->proxy_here = o->foreground;
  /* The administrator's baseline is enforced through the wall: a config
     may not take it away. */
  if (s->agentbox.wall_off && o->egress_baseline)
    return ab_error_setc (err, AB_EC_CONFIG, 0,
                          "config.json: annotations." AB_ANNOT_NET_WALL
                          ": \"off\" is refused under --egress-policy (the administrator's baseline holds "
                          "through the wall)");
  if (o->egress_baseline == NULL)
    ab_egress_policy_copy (&n->egress, &s->agentbox.egress);
  else
    {
      if (ab_egress_baseline_load (AT_FDCWD, o->egress_baseline, &baseline, err) < 0)
        return ab_error_prefix (err, "--egress-policy");
      r = ab_egress_policy_narrow (&baseline, &s->agentbox.egress, &n->egress, err);
      ab_egress_policy_free (&baseline);
      if (r < 0)
        return ab_error_prefix (err, "config.json");
      /* The validator saw the config's own policy; the baseline's may need
         a network namespace the config does not have. */
      if (ab_spec_check_egress_netns (s, &n->egress, err) < 0)
        return -1;
    }
  if (!n->egress.enabled)
    return 0;
  n->n_redirect = ab_egress_policy_ports (&n->egress, n->redirect, AB_ARRAY_SIZE (n->redirect));
  n->resolv_conf = AB_PLAN_RESOLV_CONF;
  n->resolv_file = xasprintf ("%s/%s/resolv.conf", o->root ? o->root : "", o->id ? o->id : "");
  return 0;
}

/* A file the runtime writes into the state directory, bound read-only at
   dest: the stub's /etc/resolv.conf with the egress proxy, the generated
   /etc/hosts.  The state directory is one the container's user cannot
   traverse: the parent opens the file (from_parent). */
static void
plan_state_file_mount (struct ab_plan_storage *st, const char *dest, const char *file, size_t *n)
{
  struct ab_mount *m = &st->mounts[(*n)++];

  memset (m, 0, sizeof *m);
  m->destination = xstrdup (dest);
  m->source = xstrdup (file);
  m->type = xstrdup ("bind");
  m->bind = true;
  m->flags = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;
  m->from_parent = true;
}

/* dev.agentbox.etc-hosts: the loopback names and the container's own
   hostname (Debian's 127.0.1.1 line), so that a program asking its own
   name (socket.getfqdn(), git's ident, a dev server) finds it here instead
   of asking DNS, which the wall refuses.  Mounted over the root's file,
   which is never written: an image's /etc/hosts stays as it is. */
static void
plan_hosts (struct ab_plan *p, struct ab_plan_storage *st, const struct ab_spec *s, const struct ab_plan_opts *o,
            size_t *n)
{
  char host[256] = "";
  const char *name = s->hostname;

  if (name == NULL || *name == '\0')
    {
      /* the host's UTS namespace: its name */
      gethostname (host, sizeof host - 1);
      name = host;
    }
  /* A name that is not one (a space, a newline) gets no line: it could not
     be looked up, and would add lines of its own. */
  if (name[strspn (name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_")] != '\0')
    name = "";
  st->hosts = xasprintf ("# written by agentbox (" AB_ANNOT_ETC_HOSTS ")\n"
                         "127.0.0.1\tlocalhost\n"
                         "::1\tlocalhost ip6-localhost ip6-loopback\n"
                         "%s%s%s",
                         *name ? "127.0.1.1\t" : "", name, *name ? "\n" : "");
  p->hosts = st->hosts;
  p->hosts_file = xasprintf ("%s/%s/hosts", o->root ? o->root : "", o->id ? o->id : "");
  plan_state_file_mount (st, "/etc/hosts", p->hosts_file, n);
}

/* The proxy variables, for clients that do not go through the transparent
   capture (convenience only: nothing depends on them).  The config's own
   values win. */
static void
plan_proxy_env (struct ab_plan_storage *st)
{
  static const char *const vars[] = { "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy" };

  own_env (st);
  for (size_t i = 0; i < AB_ARRAY_SIZE (vars); i++)
    {
      _cleanup_free_ char *e = xasprintf ("%s=http://127.0.0.1:%d", vars[i], AB_NET_PROXY_HTTP_PORT);
      env_set (&st->env, e, true);
    }
  env_set (&st->env, "NO_PROXY=localhost,127.0.0.1,::1", true);
  env_set (&st->env, "no_proxy=localhost,127.0.0.1,::1", true);
  st->process.env = st->env;
}

/* Socket activation as runc passes it on: the process is pid 1 of its
   namespace, and the count is the caller's.  The runtime's values win
   over the config's (which cannot know them). */
static void
plan_listen_env (struct ab_plan_storage *st, int n)
{
  _cleanup_free_ char *e = xasprintf ("LISTEN_FDS=%d", n);

  own_env (st);
  env_set (&st->env, e, false);
  env_set (&st->env, "LISTEN_PID=1", false);
  st->process.env = st->env;
}

/* ---- cgroups ------------------------------------------------------------------ */

/* linux.resources, and one more device rule per linux.devices node: "m",
   so that the child, already in its devices cgroup when it populates /dev
   (ab_cgroup_selfjoin), may mknod the nodes the config says MUST be
   available.  Read and write stay what linux.resources.devices says; the
   rules come after the config's own, as the default devices' do, so a
   config's deny-all cannot make its own linux.devices impossible to
   create (runc allows them rwm). */
static void
plan_devices (struct ab_plan *p, struct ab_plan_storage *st, const struct ab_linux *l)
{
  size_t n;

  p->resources = l ? l->resources : NULL;
  if (l == NULL || l->n_devices == 0)
    return;
  if (l->resources)
    st->resources = *l->resources;
  st->devices = xcalloc (st->resources.n_devices + l->n_devices, sizeof *st->devices);
  if (st->resources.n_devices)
    memcpy (st->devices, st->resources.devices, st->resources.n_devices * sizeof *st->devices);
  n = st->resources.n_devices;
  for (size_t i = 0; i < l->n_devices; i++)
    {
      const struct ab_device *d = &l->devices[i];
      if (d->type == 'p')
        continue; /* a FIFO is no device to the cgroup */
      st->devices[n] = (struct ab_device_rule){ .allow = true, .type = d->type == 'b' ? 'b' : 'c' };
      st->devices[n].major = (ab_opt_i64){ .set = true, .v = d->major };
      st->devices[n].minor = (ab_opt_i64){ .set = true, .v = d->minor };
      snprintf (st->devices[n].access, sizeof st->devices[n].access, "m");
      n++;
    }
  st->resources.devices = st->devices;
  st->resources.n_devices = n;
  p->resources = &st->resources;
}

/* ---- rootless ---------------------------------------------------------------- */

/* RLIMIT_NPROC in place of an unenforced pids.limit (plan-rootless.c says
   why it counts what pids.max would), after the process's own rlimits. */
static void
plan_nproc (struct ab_plan_storage *st, int64_t nproc)
{
  struct ab_process *pr = &st->process;
  struct rlimit cur;
  rlim_t v = (rlim_t) nproc;

  /* Never above our own hard limit, which the child could not raise. */
  if (getrlimit (RLIMIT_NPROC, &cur) == 0 && cur.rlim_max != RLIM_INFINITY && v > cur.rlim_max)
    v = cur.rlim_max;
  st->rlimits = xcalloc (pr->n_rlimits + 1, sizeof *st->rlimits);
  if (pr->n_rlimits)
    memcpy (st->rlimits, pr->rlimits, pr->n_rlimits * sizeof *st->rlimits);
  st->rlimits[pr->n_rlimits] = (struct ab_rlimit){ .resource = RLIMIT_NPROC, .type = (char *) "RLIMIT_NPROC",
                                                    .soft = v, .hard = v };
  pr->rlimits = st->rlimits;
  pr->n_rlimits++;
}

/* Whether the controller of an unenforced limit is ctrl (the lines of
   ab_plan_cgroups.unenforced: "PATH\tCONTROLLER\tWHY"). */
static bool
unenforced_has (const struct ab_strv *u, const char *ctrl)
{
  size_t n = strlen (ctrl);

  for (size_t i = 0; u && i < u->n; i++)
    {
      const char *t = strchr (u->v[i], '\t');
      if (t && strncmp (t + 1, ctrl, n) == 0 && t[1 + n] == '\t')
        return true;
    }
  return false;
}

/* The limits a degraded rootless container keeps: what its delegated
   cgroup can enforce (all of them go when it has none).  The rest were
   refused, or accepted and listed in p->degraded (plan-rootless.c). */
static void
plan_drop_unenforced (struct ab_plan *p, struct ab_plan_storage *st, const struct ab_plan_opts *o)
{
  const struct ab_strv *u = o->cgroups ? o->cgroups->unenforced : NULL;
  struct ab_resources *r = &st->resources;
  size_t n = 0;

  if (!p->cgroup)
    p->resources = NULL;
  if (u == NULL || u->n == 0 || p->resources == NULL)
    return;
  if (p->resources != r)
    *r = *p->resources;
  p->resources = r;
  r->memory_set = r->memory_set && !unenforced_has (u, "memory");
  r->pids_set = r->pids_set && !unenforced_has (u, "pids");
  r->blkio_set = r->blkio_set && !unenforced_has (u, "io");
  r->network_set = r->network_set && !unenforced_has (u, "net_cls");
  r->n_hugepages = unenforced_has (u, "hugetlb") ? 0 : r->n_hugepages;
  r->n_rdma = unenforced_has (u, "rdma") ? 0 : r->n_rdma;
  r->n_devices = unenforced_has (u, "devices") ? 0 : r->n_devices;
  if (unenforced_has (u, "cpu"))
    {
      struct ab_cpu keep = { .cpus = r->cpu.cpus, .mems = r->cpu.mems };
      r->cpu = keep;
    }
  if (unenforced_has (u, "cpuset"))
    r->cpu.cpus = r->cpu.mems = NULL;
  st->unified = xcalloc (r->unified.n + 1, sizeof *st->unified);
  for (size_t i = 0; i < r->unified.n; i++)
    {
      const char *dot = strchr (r->unified.v[i].key, '.');
      _cleanup_free_ char *ctrl = dot ? xstrndup (r->unified.v[i].key, (size_t) (dot - r->unified.v[i].key)) : NULL;
      if (ctrl == NULL || !unenforced_has (u, ctrl))
        st->unified[n++] = r->unified.v[i];
    }
  r->unified.v = st->unified;
  r->unified.n = n;
}

static int
plan_rootless (struct ab_plan *p, struct ab_plan_storage *st, const struct ab_spec *s, const struct ab_plan_opts *o,
               ab_error_t *err)
{
  struct ab_host_ids h;
  int64_t nproc = 0;
  int r;

  ab_host_ids_read (&h);
  p->rootless = ab_host_rootless (&h, o->rootless);
  r = o->exec ? 0 : ab_plan_ids (p, s, &h, err);
  ab_host_ids_free (&h);
  if (r < 0 || o->exec)
    return r;
  p->own_pid_ns = ab_linux_new_ns (s->linux_, AB_NS_PID);
  /* Rootless, cloning a mount tree takes CAP_SYS_ADMIN over the mount
     namespace, which only the child holds (in the ones it was born in):
     it clones its root and bind trees itself, as a helper of ours that
     entered them would, by the same functions.  Not an overlay
     workspace's layers, made after the clone (runtime/lifecycle/create.c). */
  p->trees_by_child = p->rootless && !p->rootfs_idmap && s->workspace.mode != AB_WS_MODE_OVERLAY
                      && ab_linux_new_ns (s->linux_, AB_NS_USER) && ab_linux_new_ns (s->linux_, AB_NS_MOUNT);
  if (ab_plan_cgroups (p, s, o, &nproc, err) < 0)
    return -1;
  if (nproc > 0 && s->process)
    plan_nproc (st, nproc);
  /* Without a cgroup the PID namespace is what ends every process of the
     container with its init (the kernel kills them all when it exits). */
  if (!p->cgroup && !p->own_pid_ns)
    ab_strv_push (&p->degraded, "linux.namespaces: no cgroup and no PID namespace of its own: a process that "
                                "leaves the init's process tree (a daemon) is not killed with the container");
  return 0;
}

/* ---- landlock -------------------------------------------------------------------- */

/* The rules of the final mount list and the network.  exec plans no
   network (the container's is made): its view comes from the config's own
   policies, without create's --egress-policy baseline, which can only
   narrow what the wall passes. */
static void
plan_landlock (struct ab_plan *p, const struct ab_spec *s, bool exec)
{
  const struct ab_linux *l = s->linux_;
  struct ab_ll_net net;

  if (!exec)
    ab_ll_net_view (p->net.wall && !p->net.own_ns, p->net.allow, &p->net.egress, &net);
  else
    {
      bool joined = l && l->ns[AB_NS_NET].present && l->ns[AB_NS_NET].path != NULL;
      ab_ll_net_view (joined && s->agentbox.net.present, &s->agentbox.net, &s->agentbox.egress, &net);
    }
  ab_landlock_rules (s, p->mounts, p->n_mounts, &net, &p->landlock);
}

/* ---- the plan --------------------------------------------------------------- */

void
ab_plan_deadline (const struct ab_agentbox *a, uint64_t timeout_ms, bool grace_set, uint64_t grace_ms,
                  uint64_t *timeout_out, uint64_t *grace_out)
{
  *timeout_out = timeout_ms;
  if (a->timeout_set && (timeout_ms == 0 || a->timeout_ms < timeout_ms))
    *timeout_out = a->timeout_ms;
  *grace_out = grace_set ? grace_ms : AB_PLAN_GRACE_DEFAULT_MS;
  if (a->grace_set && (!grace_set || a->grace_ms < *grace_out))
    *grace_out = a->grace_ms;
}

int
ab_plan_build (const struct ab_spec *s, const struct ab_plan_opts *o, struct ab_plan **out, ab_error_t *err)
{
  _cleanup_plan_ struct ab_plan *p = xzalloc (sizeof *p);
  struct ab_plan_storage *st = p->own = xzalloc (sizeof *p->own);
  size_t n = s->n_mounts;

  p->spec = s;
  p->rootfs_idmap = s->agentbox.rootfs_idmap;
  ab_plan_deadline (&s->agentbox, o->timeout_ms, o->grace_set, o->grace_ms, &p->timeout_ms, &p->grace_ms);
  if (s->process)
    st->process = *s->process;
  if (o->exec && change_process (st, s, o->exec, err) < 0)
    return -1;
  if (plan_rootless (p, st, s, o, err) < 0)
    return -1;
  if (o->exec && st->process.terminal && o->exec->tty_rows && o->exec->tty_cols)
    {
      /* The caller's size, set by the child before the program runs. */
      st->process.console_size_set = true;
      st->process.console_height = o->exec->tty_rows;
      st->process.console_width = o->exec->tty_cols;
    }
  p->process = (s->process || o->exec) ? &st->process : NULL;
  p->n_spec_mounts = s->n_mounts;
  if (o->exec == NULL && plan_network (p, s, o, err) < 0)
    return -1;
  st->mounts = xcalloc (s->n_mounts + 2, sizeof *st->mounts);
  if (s->n_mounts)
    memcpy (st->mounts, s->mounts, s->n_mounts * sizeof *st->mounts);
  for (size_t i = 0; i < s->n_mounts; i++)
    for (size_t k = 0; k < s->agentbox.nofollow.n; k++)
      if (st->mounts[i].bind && st->mounts[i].source
          && strcmp (st->mounts[i].source, s->agentbox.nofollow.v[k]) == 0)
        st->mounts[i].source_nofollow = true;
  if (p->net.resolv_conf)
    plan_state_file_mount (st, "/etc/resolv.conf", p->net.resolv_file, &n);
  if (o->exec == NULL && s->agentbox.etc_hosts)
    plan_hosts (p, st, s, o, &n);
  if (p->net.resolv_conf && p->process)
    plan_proxy_env (st);
  if (o->exec == NULL && o->listen_fds > 0 && p->process)
    plan_listen_env (st, o->listen_fds);
  p->mounts = st->mounts;
  p->n_mounts = n;
  if (o->exec == NULL)
    {
      plan_devices (p, st, s->linux_);
      plan_drop_unenforced (p, st, o);
    }
  plan_landlock (p, s, o->exec != NULL);
  *out = ab_steal_ptr (&p);
  return 0;
}

void
ab_plan_free (struct ab_plan *p)
{
  struct ab_plan_storage *st;

  if (p == NULL)
    return;
  st = p->own;
  if (st)
    {
      for (size_t i = p->n_spec_mounts; i < p->n_mounts; i++)
        {
          free (st->mounts[i].destination);
          free (st->mounts[i].source);
          free (st->mounts[i].type);
        }
      free (st->mounts);
      free (st->devices);
      free (st->rlimits);
      free (st->unified);
      ab_strv_free (&st->env);
      ab_strv_free (&st->args);
      free (st->cwd);
      free (st->apparmor);
      free (st->label);
      free (st->gids);
      free (st->hosts);
      ab_spec_free (st->process_doc);
      free (st);
    }
  ab_egress_policy_free (&p->net.egress);
  ab_ll_ruleset_free (&p->landlock);
  free (p->net.resolv_file);
  ab_strv_free (&p->degraded);
  free (p->cgroup_parent);
  free (p->hosts_file);
  free (p);
}
