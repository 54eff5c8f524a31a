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

  /* A symlink of the rootfs, absolute or climbing with `..`, dangling or
     not, is followed inside the root: the missing target is made there
     (as runc's securejoin), never on the host. */
  snprintf (outside, sizeof outside, "%s/outside-%s", top, how);
  mkdir (outside, 0755);
  snprintf (rel, sizeof rel, "%s/link", sub);
  symlink (outside + strlen (top), rel); /* "/outside-HOW": absolute, missing in the root */
  ok (mk (rootfd, "/link/new", AB_LAST_DIR) == 0, "%s: a path through a dangling absolute symlink is made", how);
  snprintf (rel, sizeof rel, "%s/outside-%s/new", how, how);
  ok (is_type (rel, S_IFDIR), "%s: ... where the link points inside the root", how);
  snprintf (rel, sizeof rel, "outside-%s/new", how);
  ok (!is_type (rel, S_IFDIR), "%s: ... not in the host directory of the same name", how);
  ok (mk (rootfd, "/link/new", AB_LAST_DIR) == 0, "%s: the link, now leading to a directory, is followed again",
      how);

  /* The mount destination itself a dangling link: ../../.. climbs no
     higher than the root. */
  snprintf (rel, sizeof rel, "%s/a/up", sub);
  symlink ("../../../../../outside-up", rel);
  ok (mk (rootfd, "/a/up", AB_LAST_DIR) == 0, "%s: a dangling ../../.. symlink as the last component is made", how);
  snprintf (rel, sizeof rel, "%s/outside-up", how);
  ok (is_type (rel, S_IFDIR), "%s: ... as a directory at the root's top, where the climb stops", how);
  ok (!is_type ("outside-up", S_IFDIR), "%s: ... and nothing above the root", how);
  snprintf (rel, sizeof rel, "%s/a/file-link", sub);
  symlink ("/etc/made-file", rel);
  snprintf (rel, sizeof rel, "%s/etc", sub);
  mkdir (rel, 0755);
  ok (mk (rootfd, "/a/file-link", AB_LAST_FILE) == 0, "%s: a file mount point behind an absolute dangling link", how);
  snprintf (rel, sizeof rel, "%s/etc/made-file", how);
  ok (is_type (rel, S_IFREG), "%s: ... is an empty file at the target inside the root", how);
  ok (access ("/etc/made-file", F_OK) != 0, "%s: ... and not on the host", how);

  /* A loop of links ends with ELOOP, and a link inside a link's target
     is resolved the same way. */
  snprintf (rel, sizeof rel, "%s/loop1", sub);
  symlink ("loop2", rel);
  snprintf (rel, sizeof rel, "%s/loop2", sub);
  symlink ("/loop1", rel);
  {
    ab_error_t err = { 0 };
    int fd = ab_mkpath_in_root (rootfd, "/loop1/x", AB_LAST_DIR, &err);
    ok (fd < 0 && err.errnum == ELOOP, "%s: a loop of symlinks fails with ELOOP", how);
    if (fd >= 0)
      close (fd);
  }
  snprintf (rel, sizeof rel, "%s/chain", sub);
  symlink ("link/../a/up/deeper", rel); /* link -> /outside-HOW; .. of it is the root */
  ok (mk (rootfd, "/chain", AB_LAST_DIR) == 0, "%s: a chain of links with `..` between them", how);
  snprintf (rel, sizeof rel, "%s/outside-up/deeper", how);
  ok (is_type (rel, S_IFDIR), "%s: ... resolves as the kernel would inside the root", how);
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
