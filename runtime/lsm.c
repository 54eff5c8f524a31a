#include "config.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "runtime/lsm.h"
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

int
ab_lsm_apply_exec (const struct ab_process *p, ab_error_t *err)
{
  if (p->apparmor_profile && *p->apparmor_profile)
    {
      _cleanup_free_ char *v = xasprintf ("exec %s", p->apparmor_profile);
      if (ab_write_file_at (AT_FDCWD, "/proc/thread-self/attr/apparmor/exec", v, strlen (v), NULL) < 0
          && ab_write_file_at (AT_FDCWD, "/proc/thread-self/attr/exec", v, strlen (v), err) < 0)
        return ab_error_prefix (err, "process.apparmorProfile");
    }
  if (p->selinux_label && *p->selinux_label
      && ab_write_file_at (AT_FDCWD, "/proc/thread-self/attr/exec", p->selinux_label, strlen (p->selinux_label), err)
             < 0)
    return ab_error_prefix (err, "process.selinuxLabel");
  return 0;
}
