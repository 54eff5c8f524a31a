/* agentbox spec [--bundle DIR] [--rootless] [--idmap-rootfs]: write config.json, the hardened
 * agent profile (spec/defaults.c documents every choice). */
#include "config.h"

#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>

#include "cmd/cmd.h"
#include "base/log.h"
#include "base/util.h"
#include "runtime/plan/host-ids.h"
#include "spec/defaults.h"

int
ab_cmd_spec (struct ab_global *g, int argc, char **argv)
{
  static const struct option opts[] = {
    { "bundle", required_argument, NULL, 'b' },
    { "rootless", no_argument, NULL, 'r' },
    { "idmap-rootfs", no_argument, NULL, 'i' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  struct ab_default_opts d = { 0 };
  struct ab_idmaps maps[2] = { { 0 } };
  _cleanup_free_ char *json = NULL;
  _cleanup_close_ int dirfd = -1;
  const char *bundle = ".";
  ab_error_t err = { 0 };
  size_t len;
  int c, fd;

  d.rootless = g->rootless == 1;
  while ((c = getopt_long (argc, argv, "b:h", opts, NULL)) != -1)
    switch (c)
      {
      case 'b':
        bundle = optarg;
        break;
      case 'r':
        d.rootless = true;
        break;
      case 'i':
        d.idmap_rootfs = true;
        break;
      case 'h':
        printf ("Usage: agentbox spec [--bundle DIR] [--rootless] [--idmap-rootfs]\n\n"
                "Write DIR/config.json (default: the current directory) with agentbox's hardened\n"
                "agent profile: every namespace including user, no capabilities, no_new_privs,\n"
                "read-only root, bounded /tmp, rlimits, pids and memory limits, masked paths and a\n"
                "seccomp allowlist.  --rootless writes what the caller may run without root: its\n"
                "own uid and gid as the container's root, then its /etc/subuid and /etc/subgid\n"
                "ranges where newuidmap and newgidmap are installed; no cgroup limits.\n"
                "--idmap-rootfs sets dev.agentbox.rootfs.idmap: a rootfs owned by host root is\n"
                "mounted id-mapped, owned by the container's root, with nothing changed on disk.\n");
        return AB_EXIT_OK;
      default:
        return ab_cmd_usage_error ("spec", "unknown option `%s`", argv[optind - 1]);
      }
  if ((c = ab_cmd_positionals ("spec", argc, argv, 0, 0, "")) != 0)
    return c;
  d.uid = geteuid ();
  d.gid = getegid ();
  if (d.rootless)
    {
      /* What this user may map: its own ids, and its subordinate ranges
         where newuidmap and newgidmap can write them. */
      struct ab_host_ids h;
      bool full;
      ab_host_ids_read (&h);
      ab_host_rootless_maps (&h, &maps[0], &maps[1], &full);
      ab_host_ids_free (&h);
      d.uid_map = &maps[0];
      d.gid_map = &maps[1];
    }
  json = ab_spec_default_json (&d, &len);
  free (maps[0].v);
  free (maps[1].v);
  dirfd = open (bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0)
    {
      ab_error_setc (&err, AB_EC_USAGE, errno, "spec: bundle directory `%s`", bundle);
      return ab_cmd_fail (&err);
    }
  /* Like runc: never overwrite an existing config. */
  fd = openat (dirfd, "config.json", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0)
    {
      if (errno == EEXIST)
        ab_error_setc (&err, AB_EC_EXISTS, 0, "spec: `%s/config.json` exists; remove it first", bundle);
      else
        ab_error_set (&err, errno, "spec: create `%s/config.json`", bundle);
      return ab_cmd_fail (&err);
    }
  if (ab_write_all (fd, json, len) < 0)
    {
      ab_error_set (&err, errno, "spec: write `%s/config.json`", bundle);
      close (fd);
      return ab_cmd_fail (&err);
    }
  close (fd);
  return AB_EXIT_OK;
}
