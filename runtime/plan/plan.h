/* The plan: everything a container's creation (or an exec) derives from
 * the validated model and the command line, built once, before anything
 * is made, and read -- never changed -- by the mechanisms, the lifecycle
 * and `audit`.
 *
 *   model (spec/, validated)  ─┐
 *   command-line options      ─┴─▶ ab_plan_build ─▶ struct ab_plan ─▶ create, exec, audit
 *
 * The model stays what the user wrote (the state directory keeps its
 * bytes); what agentbox adds lives here: the read-only /etc/resolv.conf of
 * the egress stub and the proxy variables, the device rules that let the
 * container make its linux.devices, exec's changes to the process (--cap,
 * --env, --user, ...), the effective network policy (the admin baseline
 * narrowed by the annotations), the wall-clock limit.  After validation
 * nothing edits the config. */
#ifndef AB_RUNTIME_PLAN_H
#define AB_RUNTIME_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "runtime/plan/landlock.h"
#include "spec/model.h"
#include "spec/spec.h"

/* Where the egress proxy listens inside the container's netns (127.0.0.1,
   [::1]): the HTTP/CONNECT proxy and the DNS stub. */
#define AB_NET_PROXY_HTTP_PORT 3128
#define AB_NET_PROXY_DNS_PORT 53

/* The /etc/resolv.conf mounted read-only in a container whose names
   resolve through the DNS stub (on AB_NET_PROXY_DNS_PORT): one server, no search list expansion
   (ndots:0: a name is asked as written, once), one attempt, short timeout. */
#define AB_PLAN_RESOLV_CONF                                                                                      \
  "# written by agentbox: names resolve only through its egress policy\n"                                         \
  "nameserver 127.0.0.1\noptions ndots:0 attempts:1 timeout:2\n"

/* The grace between SIGTERM and SIGKILL at the wall-clock limit when
   neither --timeout-grace nor dev.agentbox.timeout.grace says. */
#define AB_PLAN_GRACE_DEFAULT_MS 5000

/* exec: what the command line changes in the container's process. */
struct ab_process_change
{
  const char *process_file;       /* --process: a config.md process object instead of the container's */
  const struct ab_strv *args;     /* the program (when no process file) */
  const char *cwd;                /* NULL: the container's */
  const struct ab_strv *env;      /* NAME=VALUE added or replacing */
  bool user_set;
  uint32_t uid;
  uint32_t gid;
  bool gid_set;
  const uint32_t *add_gids;       /* --additional-gids: after the config's additionalGids */
  size_t n_add_gids;
  const struct ab_strv *add_caps; /* --cap names: raised in bounding, effective and permitted */
  bool tty;
  unsigned tty_rows, tty_cols;    /* the caller's terminal size (0: none), for the pty */
  bool no_new_privs;              /* force no_new_privs on */
  const char *apparmor_profile;   /* --apparmor: replaces process.apparmorProfile (NULL: the config's) */
  const char *selinux_label;      /* --process-label: replaces process.selinuxLabel (NULL: the config's) */
};

/* How the user namespace a container makes gets its maps (plan->ids). */
enum ab_idmap_how
{
  AB_IDMAP_NONE = 0, /* no new user namespace */
  AB_IDMAP_KERNEL,   /* written by agentbox, which holds CAP_SETUID and CAP_SETGID (root) */
  AB_IDMAP_SINGLE,   /* rootless: the caller's own uid and gid alone, setgroups denied */
  AB_IDMAP_HELPER,   /* rootless: with subordinate ids, written by newuidmap and newgidmap */
};
/* "none", "privileged", "single-id", "subordinate-ids": the record's and
   state's name of the mapping. */
const char *ab_idmap_how_name (int how);

struct ab_plan_ids
{
  int how;                           /* enum ab_idmap_how */
  bool setgroups;                    /* setgroups(2) stays allowed in the namespace */
  const char *newuidmap, *newgidmap; /* AB_IDMAP_HELPER: the helpers, absolute paths */
};

/* What the host's cgroups allow a rootless container, found by the
   lifecycle (runtime/cgroup/) before the plan is built. */
struct ab_plan_cgroups
{
  bool usable;                    /* a cgroup of the container's own can be made */
  const char *parent;             /* rootless: the delegated cgroup v2 it is made in (a cgroup path) */
  const struct ab_strv *unenforced; /* "JSON-PATH\tCONTROLLER\tWHY" of every limit it cannot enforce */
  const char *fix;                /* what would enforce them */
};

struct ab_plan_opts
{
  const char *root;            /* the state root: derived files live in <root>/<id>/ */
  const char *id;
  const char *egress_baseline; /* --egress-policy FILE: the admin baseline, or NULL */
  bool foreground;             /* the caller supervises (the egress engine runs in it) */
  int rootless;                /* --rootless: -1 auto, 0, 1 */
  uint64_t timeout_ms;         /* --timeout, 0 = none */
  bool grace_set;              /* --timeout-grace given */
  uint64_t grace_ms;
  const struct ab_process_change *exec; /* exec's plan, NULL: create's */
  bool accept_degraded;        /* --accept-degraded: run without the limits the host cannot enforce */
  const struct ab_plan_cgroups *cgroups; /* rootless: what the host's cgroups allow; NULL: everything */
  int listen_fds;              /* systemd socket activation: the first fds passed on are the caller's
                                  LISTEN_FDS, which the process is told (LISTEN_FDS, LISTEN_PID=1) */
};

/* The container's network, as create makes it. */
struct ab_plan_net
{
  bool netns;                     /* linux.namespaces has a network namespace */
  bool own_ns;                    /* a new one, which agentbox makes */
  bool lo_only;                   /* own_ns with lo alone: no linux.netDevices moved in, no hook before
                                     the program that could add a link or a table */
  bool wall;                      /* the nftables wall goes in (always in an own one; in a joined one
                                     only when dev.agentbox.net.allow is set) */
  const struct ab_net_policy *allow; /* dev.agentbox.net.allow */
  struct ab_egress_policy egress; /* the effective domain policy (baseline narrowed by the annotations) */
  uint16_t redirect[64];          /* TCP ports captured for the proxy */
  size_t n_redirect;
  bool proxy_here;                /* the proxy runs in this process (a foreground run), else in a daemon */
  const char *resolv_conf;        /* /etc/resolv.conf of the stub, when the proxy runs; else NULL */
  char *resolv_file;              /* its host path, <root>/<id>/resolv.conf */
};

struct ab_plan
{
  const struct ab_spec *spec;          /* the validated model, as the user wrote it */
  const struct ab_process *process;    /* the process to run: the model's, with the changes below (and,
                                          rootless without a pids cgroup, RLIMIT_NPROC) */
  const struct ab_mount *mounts;       /* the model's mounts, then the derived ones */
  size_t n_mounts;
  size_t n_spec_mounts;                /* mounts[i] for i below this is spec->mounts[i] */
  const struct ab_resources *resources; /* linux.resources with the derived device rules, or NULL */
  struct ab_plan_net net;
  uint64_t timeout_ms;                 /* the smaller of --timeout and dev.agentbox.timeout, 0 = none */
  uint64_t grace_ms;                   /* SIGTERM at timeout_ms, SIGKILL this long after: the smaller of
                                          --timeout-grace and dev.agentbox.timeout.grace, else
                                          AB_PLAN_GRACE_DEFAULT_MS */
  const char *hosts;                   /* dev.agentbox.etc-hosts: the text of the /etc/hosts it mounts, or NULL */
  char *hosts_file;                    /* its host path, <root>/<id>/hosts */
  bool rootless;                       /* agentbox runs without host root (uid/gid maps, setgroups) */
  struct ab_plan_ids ids;              /* how the new user namespace gets its maps */
  bool rootfs_idmap;                   /* the root filesystem is mounted id-mapped */
  bool cgroup;                         /* the container gets a cgroup of its own */
  bool own_pid_ns;                     /* a new PID namespace: its init's end is every member's end */
  bool trees_by_child;                 /* rootless: the child clones its root and bind trees itself */
  char *cgroup_parent;                 /* rootless: the delegated cgroup v2 it is made in, or NULL */
  struct ab_strv degraded;             /* what is not enforced, one line each (the record's `degraded`) */
  struct ab_ll_ruleset landlock;       /* what dev.agentbox.landlock asks for, from the mounts above and the
                                          network (runtime/plan/landlock.h); fitted to a kernel by create and
                                          exec (runtime/landlock.h) */
  struct ab_plan_storage *own;         /* what the plan owns (plan.c) */
};

/* The wall-clock limit and its grace from the command line's and the
   config's (dev.agentbox.timeout, .grace): the smaller timeout of the two
   (0: none); the command line's grace (default AB_PLAN_GRACE_DEFAULT_MS)
   unless the config's is smaller.  The plan's, and the sandbox without
   namespaces' (which has no plan). */
void ab_plan_deadline (const struct ab_agentbox *a, uint64_t timeout_ms, bool grace_set, uint64_t grace_ms,
                       uint64_t *timeout_out, uint64_t *grace_out);

/* Build the plan of a validated model.  Fails only on the command line's
   inputs (the baseline file, an exec change) and on what they make of the
   config (a baseline policy for a config without a network namespace). */
int ab_plan_build (const struct ab_spec *s, const struct ab_plan_opts *o, struct ab_plan **out, ab_error_t *err);
void ab_plan_free (struct ab_plan *p);
static inline void
ab_plan_freep (struct ab_plan **p)
{
  ab_plan_free (*p);
}
#define _cleanup_plan_ __attribute__ ((cleanup (ab_plan_freep)))

#endif
