#include "config.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "base/resolve.h"
#include "runtime/landlock.h"
#include "spec/annotations.h"

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

#define LL_CREATE_RULESET_VERSION (1u << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_RULE_NET_PORT 2

/* The kernel's structures (include/uapi/linux/landlock.h), as of ABI 6:
   the ruleset's attribute grew a field at ABI 4 (net) and 6 (scoped); an
   older kernel takes the shorter size. */
struct ll_ruleset_attr
{
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

struct ll_path_beneath_attr
{
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__ ((packed));

struct ll_net_port_attr
{
  uint64_t allowed_access;
  uint64_t port;
};

/* ---- the probe ------------------------------------------------------------- */

unsigned
ab_landlock_abi (const char **why)
{
  static int abi = -1;
  static const char *reason = "";

  if (abi < 0)
    {
      long v = syscall (SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
      abi = v > 0 ? (int)v : 0;
      if (v <= 0 && errno == EOPNOTSUPP)
        reason
            = "landlock is built into this kernel but not enabled (it is not in the lsm= boot parameter or "
              "CONFIG_LSM)";
      else if (v <= 0 && (errno == ENOSYS || errno == EPERM) && ab_seccomp_filtered ())
        reason = "landlock_create_ruleset is refused (a seccomp filter is installed on this process, "
                 "Seccomp: 2; "
                 "or the kernel lacks CONFIG_SECURITY_LANDLOCK)";
      else if (v <= 0 && errno == ENOSYS)
        reason = "this kernel was built without landlock (CONFIG_SECURITY_LANDLOCK)";
      else if (v <= 0)
        reason = strerror (errno);
    }
  if (why)
    *why = reason;
  return (unsigned)abi;
}

/* ---- fitting a ruleset to an ABI ---------------------------------------------- */

bool
ab_landlock_enforces (const struct ab_ll_ruleset *rs)
{
  return rs->handled[AB_LL_KIND_FS] || rs->handled[AB_LL_KIND_NET] || rs->handled[AB_LL_KIND_SCOPE];
}

int
ab_landlock_fit (const struct ab_ll_ruleset *want, unsigned abi, struct ab_ll_ruleset *out,
                 struct ab_strv *dropped, ab_error_t *err)
{
  uint64_t lost[AB_LL_KIND__COUNT];
  bool any_lost = false, refer_allowed = false;
  size_t n;
  const struct ab_ll_right *r = ab_ll_rights (&n);

  memset (out, 0, sizeof *out);
  out->abi = abi;
  out->best_effort = want->best_effort;
  for (int k = 0; k < AB_LL_KIND__COUNT; k++)
    {
      lost[k] = want->handled[k] & ~ab_ll_known (k, abi);
      out->handled[k] = want->handled[k] & ~lost[k];
      any_lost = any_lost || lost[k];
    }
  if (any_lost && !want->best_effort)
    {
      _cleanup_free_ char *fs = ab_ll_rights_text (AB_LL_KIND_FS, lost[AB_LL_KIND_FS]);
      _cleanup_free_ char *net = ab_ll_rights_text (AB_LL_KIND_NET, lost[AB_LL_KIND_NET]);
      _cleanup_free_ char *sc = ab_ll_rights_text (AB_LL_KIND_SCOPE, lost[AB_LL_KIND_SCOPE]);
      return ab_error_setc (err, AB_EC_SETUP, EOPNOTSUPP,
                            "\"bestEffort\" is false, and this kernel's landlock ABI %u lacks filesystem %s, "
                            "network %s, scope %s",
                            abi, fs, net, sc);
    }
  if (abi == 0 && ab_landlock_enforces (want))
    {
      const char *why;
      ab_landlock_abi (&why);
      ab_strv_push_owned (dropped, xasprintf ("landlock: not available (%s): none of its rules apply", why));
    }
  else
    for (size_t i = 0; i < n; i++)
      if (lost[r[i].kind] & r[i].bit)
        ab_strv_push_owned (dropped, xasprintf ("landlock: %s right `%s` (ABI %u) is not restricted: this "
                                                "kernel has landlock ABI %u",
                                                ab_ll_kind_name (r[i].kind), r[i].name, r[i].abi, abi));
  for (size_t i = 0; i < want->n_paths; i++)
    {
      uint64_t a = want->paths[i].access & out->handled[AB_LL_KIND_FS];
      refer_allowed = refer_allowed || (want->paths[i].access & AB_LL_FS_REFER);
      if (a)
        ab_ll_ruleset_add_path (out, want->paths[i].path, a, want->paths[i].nofollow, want->paths[i].optional,
                                want->paths[i].origin);
    }
  for (size_t i = 0; i < want->n_ports; i++)
    {
      uint64_t a = want->ports[i].access & out->handled[AB_LL_KIND_NET];
      if (a)
        ab_ll_ruleset_add_port (out, want->ports[i].port, a);
    }
  /* ABI 1 cannot grant `refer`, and then refuses every rename or link that
     moves a file to another directory, beneath any rule. */
  if (abi == 1 && refer_allowed && out->handled[AB_LL_KIND_FS])
    ab_strv_push (dropped,
                  "landlock: ABI 1 refuses every rename or link into another directory (the `refer` right "
                  "needs ABI 2)");
  return 0;
}

int
ab_landlock_fit_kernel (const struct ab_ll_ruleset *want, struct ab_ll_ruleset *fit, struct ab_strv *degraded,
                        ab_error_t *err)
{
  memset (fit, 0, sizeof *fit);
  if (!ab_landlock_enforces (want))
    return 0;
  if (ab_landlock_fit (want, ab_landlock_abi (NULL), fit, degraded, err) < 0)
    return ab_error_prefix (err, "config.json: annotations." AB_ANNOT_LANDLOCK);
  return 0;
}

/* ---- building and enforcing ------------------------------------------------------ */

static int
add_path_rule (int ruleset, int rootfd, const struct ab_ll_rule *rule, ab_error_t *err)
{
  unsigned long long resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | (rule->nofollow ? RESOLVE_NO_SYMLINKS : 0);
  struct ll_path_beneath_attr attr = { .allowed_access = rule->access };
  _cleanup_close_ int fd = -1;
  struct stat st;

  /* Beneath the pinned root, never by the process's own view of "/": a
     symlink of the rootfs cannot send a rule to the host, and a policy's
     own paths (nofollow) mean what they say or fail.  ab_openat2 retries
     the EAGAIN a ".." on the way gets whenever anything on the host renames
     or mounts meanwhile (a global seqlock): not a reason to fail a start. */
  fd = ab_openat2 (rootfd, rule->path, O_PATH, 0, resolve);
  if (fd < 0)
    {
      if (rule->optional && errno == ENOENT)
        return 0;
      return ab_error_set (err, errno, "landlock: %s: open `%s`", rule->origin, rule->path);
    }
  if (fstat (fd, &st) < 0)
    return ab_error_set (err, errno, "landlock: stat `%s`", rule->path);
  /* On a file only the rights of files mean anything (the kernel refuses
     the others, EINVAL). */
  if (!S_ISDIR (st.st_mode))
    attr.allowed_access &= AB_LL_FS_FILE_RIGHTS;
  if (attr.allowed_access == 0)
    return 0;
  attr.parent_fd = fd;
  if (syscall (SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &attr, 0) < 0)
    return ab_error_set (err, errno, "landlock: %s: landlock_add_rule `%s`", rule->origin, rule->path);
  return 0;
}

int
ab_landlock_build (const struct ab_ll_ruleset *rs, unsigned abi, int rootfd, int min_fd, ab_error_t *err)
{
  struct ll_ruleset_attr attr = {
    .handled_access_fs = rs->handled[AB_LL_KIND_FS],
    .handled_access_net = rs->handled[AB_LL_KIND_NET],
    .scoped = rs->handled[AB_LL_KIND_SCOPE],
  };
  size_t size = abi >= 6 ? sizeof attr : abi >= 4 ? 2 * sizeof (uint64_t) : sizeof (uint64_t);
  _cleanup_close_ int fd = -1, own_root = -1;

  ab_set_step ("landlock");
  if (rootfd < 0)
    {
      own_root = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (own_root < 0)
        return ab_error_set (err, errno, "landlock: open `/`");
      rootfd = own_root;
    }
  fd = (int)syscall (SYS_landlock_create_ruleset, &attr, size, 0);
  if (fd < 0)
    return ab_error_set (err, errno, "landlock_create_ruleset (ABI %u)", abi);
  for (size_t i = 0; i < rs->n_paths; i++)
    if (add_path_rule (fd, rootfd, &rs->paths[i], err) < 0)
      return -1;
  for (size_t i = 0; i < rs->n_ports; i++)
    {
      struct ll_net_port_attr pa = { .allowed_access = rs->ports[i].access, .port = rs->ports[i].port };
      if (syscall (SYS_landlock_add_rule, fd, LL_RULE_NET_PORT, &pa, 0) < 0)
        return ab_error_set (err, errno, "landlock: landlock_add_rule port %u", (unsigned)rs->ports[i].port);
    }
  if (fd < min_fd)
    {
      int high = fcntl (fd, F_DUPFD_CLOEXEC, min_fd);
      if (high < 0)
        return ab_error_set (err, errno, "landlock: move the ruleset fd above %d", min_fd);
      close (fd);
      fd = high;
    }
  return ab_steal_fd (&fd);
}

int
ab_landlock_restrict (int fd, ab_error_t *err)
{
  long r;

  ab_set_step ("landlock");
  r = syscall (SYS_landlock_restrict_self, fd, 0);
  close (fd);
  if (r < 0)
    return ab_error_set (err, errno, "landlock_restrict_self");
  return 0;
}
