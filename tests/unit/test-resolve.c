/* base/resolve.c: ab_mkpath_in_root creates mount points inside a root,
 * never outside it, with openat2 and with the O_NOFOLLOW fallback walk. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/resolve.h"
#include "base/util.h"
#include "tests/unit/tap.h"

static char top[64];

static bool
is_type (const char *rel, mode_t type)
{
  char p[256];
  struct stat st;

  snprintf (p, sizeof p, "%s/%s", top, rel);
  return lstat (p, &st) == 0 && (st.st_mode & S_IFMT) == type;
}

static int
mk (int rootfd, const char *path, int last)
{
  ab_error_t err = { 0 };
  int fd = ab_mkpath_in_root (rootfd, path, last, &err);

  if (fd < 0)
    return -1;
  close (fd);
  return 0;
}

static void
run (bool fallback)
{
  const char *how = fallback ? "fallback" : "openat2";
  char sub[128], outside[128];
  int rootfd;

  ab_resolve_force_fallback = fallback;
  snprintf (sub, sizeof sub, "%s/%s", top, how);
  mkdir (sub, 0755);
  rootfd = open (sub, O_PATH | O_DIRECTORY | O_CLOEXEC);
  ok (rootfd >= 0, "%s: a root to make paths in", how);

  char rel[160];
  ok (mk (rootfd, "/dev", AB_LAST_DIR) == 0, "%s: a missing directory below the root is made", how);
  snprintf (rel, sizeof rel, "%s/dev", how);
  ok (is_type (rel, S_IFDIR), "%s: ... and is a directory", how);
  ok (mk (rootfd, "/dev/pts/", AB_LAST_DIR) == 0, "%s: the last component in an existing directory", how);
  snprintf (rel, sizeof rel, "%s/dev/pts", how);
  ok (is_type (rel, S_IFDIR), "%s: ... is made there (a trailing slash is ignored)", how);
  ok (mk (rootfd, "/a/b/c", AB_LAST_DIR) == 0, "%s: several missing levels are made", how);
  snprintf (rel, sizeof rel, "%s/a/b/c", how);
  ok (is_type (rel, S_IFDIR), "%s: ... down to the last", how);
  ok (mk (rootfd, "/dev/null", AB_LAST_FILE) == 0, "%s: a file mount point", how);
  snprintf (rel, sizeof rel, "%s/dev/null", how);
  ok (is_type (rel, S_IFREG), "%s: ... is an empty regular file", how);
  ok (mk (rootfd, "/dev/pts", AB_LAST_DIR) == 0, "%s: an existing directory is fine", how);
  ok (mk (rootfd, "/nope", AB_LAST_ANY) < 0, "%s: a missing path that must exist is an error", how);
  ok (mk (rootfd, "/a/../../x", AB_LAST_DIR) < 0, "%s: a `..` component is refused", how);

  /* An absolute symlink in the rootfs resolves inside the root. */
  snprintf (outside, sizeof outside, "%s/outside-%s", top, how);
  mkdir (outside, 0755);
  snprintf (rel, sizeof rel, "%s/link", sub);
  symlink (outside + strlen (top), rel); /* "/outside-HOW": absolute, inside the root it is missing */
  ok (mk (rootfd, "/link/new", AB_LAST_DIR) < 0, "%s: a symlink to a directory missing in the root fails",
      how);
  snprintf (rel, sizeof rel, "outside-%s/new", how);
  ok (!is_type (rel, S_IFDIR), "%s: ... and nothing is made outside the root", how);
  snprintf (rel, sizeof rel, "%s/outside-%s", sub, how);
  mkdir (rel, 0755);
  if (fallback)
    {
      /* the walk without openat2 follows no symlink at all */
      ok (mk (rootfd, "/link/new", AB_LAST_DIR) < 0, "%s: a symlink on the way is refused", how);
      snprintf (rel, sizeof rel, "%s/outside-%s/new", how, how);
      ok (!is_type (rel, S_IFDIR), "%s: ... and nothing is made inside the root", how);
    }
  else
    {
      ok (mk (rootfd, "/link/new", AB_LAST_DIR) == 0,
          "%s: with the target in the root, the symlink is followed there", how);
      snprintf (rel, sizeof rel, "%s/outside-%s/new", how, how);
      ok (is_type (rel, S_IFDIR), "%s: ... and the directory is made inside the root", how);
    }
  snprintf (rel, sizeof rel, "outside-%s/new", how);
  ok (!is_type (rel, S_IFDIR), "%s: ... not in the host directory of the same name", how);
  close (rootfd);
}

int
main (void)
{
  char cmd[128];

  snprintf (top, sizeof top, "/tmp/test-resolve.XXXXXX");
  if (mkdtemp (top) == NULL)
    {
      printf ("Bail out! mkdtemp: %s\n", strerror (errno));
      return 1;
    }
  run (false);
  run (true);
  snprintf (cmd, sizeof cmd, "rm -rf '%s'", top);
  if (system (cmd) != 0)
    printf ("# could not remove %s\n", top);
  return tap_done ();
}
