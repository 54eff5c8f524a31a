#include "config.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "runtime/lsm.h"
#include "runtime/paths.h"
#include "base/util.h"

static bool
ab_lsm_apparmor_enabled (void)
{
  char buf[4] = { 0 };
  int fd = open ("/sys/module/apparmor/parameters/enabled", O_RDONLY | O_CLOEXEC);

  if (fd < 0)
    return false;
  if (read (fd, buf, sizeof buf - 1) <= 0)
    buf[0] = 'N';
  close (fd);
  return buf[0] == 'Y';
}

static bool
ab_lsm_selinux_enabled (void)
{
  struct stat st;
  return stat ("/sys/fs/selinux/enforce", &st) == 0;
}

int
ab_lsm_check (const struct ab_process *p, ab_error_t *err)
{
  if (p && p->apparmor_profile && *p->apparmor_profile && !ab_lsm_apparmor_enabled ())
    return ab_error_setc (err, AB_EC_CONFIG, ENOTSUP,
                          "process.apparmorProfile: `%s` requested but AppArmor is not enabled on this host",
                          p->apparmor_profile);
  if (p && p->selinux_label && *p->selinux_label && !ab_lsm_selinux_enabled ())
    return ab_error_setc (err, AB_EC_CONFIG, ENOTSUP,
                          "process.selinuxLabel: `%s` requested but SELinux is not enabled on this host",
                          p->selinux_label);
  return 0;
}

/* data to /proc/thread-self/attr/<name>, through ab_proc_open: a mount
   over the attr file (or any directory on its way) must not take the
   label elsewhere and leave the process unconfined (CVE-2025-52881). */
static int
write_attr (int procfd, const char *name, const char *data, ab_error_t *err)
{
  _cleanup_free_ char *rel = xasprintf ("thread-self/attr/%s", name);
  _cleanup_close_now_ int fd = ab_proc_open (procfd, rel, O_WRONLY | O_NOFOLLOW, err);

  if (fd < 0)
    return -1;
  if (ab_write_all (fd, data, strlen (data)) < 0)
    return ab_error_set (err, errno, "write /proc/%s", rel);
  return 0;
}

int
ab_lsm_apply_exec (const struct ab_process *p, ab_error_t *err)
{
  _cleanup_close_ int procfd = -1;
  bool aa = p->apparmor_profile && *p->apparmor_profile;
  bool se = p->selinux_label && *p->selinux_label;

  if (!aa && !se)
    return 0;
  procfd = ab_proc_root (err);
  if (procfd < 0)
    return ab_error_prefix (err, aa ? "process.apparmorProfile" : "process.selinuxLabel");
  if (aa)
    {
      _cleanup_free_ char *v = xasprintf ("exec %s", p->apparmor_profile);
      /* The AppArmor directory of a kernel with LSM stacking, else the
         shared file; only a missing file sends us to the other. */
      int r = write_attr (procfd, "apparmor/exec", v, err);
      if (r < 0 && err && err->errnum == ENOENT)
        {
          ab_error_clear (err);
          r = write_attr (procfd, "exec", v, err);
        }
      if (r < 0)
        return ab_error_prefix (err, "process.apparmorProfile");
    }
  if (se && write_attr (procfd, "exec", p->selinux_label, err) < 0)
    return ab_error_prefix (err, "process.selinuxLabel");
  return 0;
}
