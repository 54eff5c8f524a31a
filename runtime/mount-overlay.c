/* The overlay of an overlay-mode workspace (runtime/mount-overlay.h). */
#include "config.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>

#include "base/kernel-compat.h"
#include "base/log.h"
#include "runtime/mount-overlay.h"
#include "runtime/mount.h"
#include "base/util.h"

/* The overlay filesystem from three layer paths, as a detached mount. */
static int
overlay_fs (const char *lower, const char *upper, const char *work, const char *what, ab_error_t *err)
{
  /* Off, so that the upper layer is complete in itself: no directory
     renamed by redirect (a rename of a lower directory is EXDEV, and
     tools copy instead), no data-less metacopy file, no index. */
  static const char *const off[] = { "redirect_dir", "metacopy", "index" };
  _cleanup_close_ int fsfd = fsopen ("overlay", FSOPEN_CLOEXEC);
  const char *const layers[][2] = { { "lowerdir", lower }, { "upperdir", upper }, { "workdir", work } };
  size_t i;
  int mfd;

  if (fsfd < 0)
    return ab_error_set (err, errno, "%s: filesystem type `overlay`", what);
  for (i = 0; i < AB_ARRAY_SIZE (layers); i++)
    if (fsconfig (fsfd, FSCONFIG_SET_STRING, layers[i][0], layers[i][1], 0) < 0)
      {
        ab_error_set (err, errno, "%s: overlay %s", what, layers[i][0]);
        ab_fs_kernel_message (fsfd, err);
        return -1;
      }
  for (i = 0; i < AB_ARRAY_SIZE (off); i++)
    if (fsconfig (fsfd, FSCONFIG_SET_STRING, off[i], "off", 0) < 0)
      {
        ab_error_set (err, errno, "%s: overlay option `%s=off`", what, off[i]);
        ab_fs_kernel_message (fsfd, err);
        return -1;
      }
  if (fsconfig (fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    {
      ab_error_set (err, errno, "%s: create the overlay filesystem (can its directory be an overlay's lower layer?)",
                    what);
      ab_fs_kernel_message (fsfd, err);
      return -1;
    }
  mfd = fsmount (fsfd, FSMOUNT_CLOEXEC, 0);
  if (mfd < 0)
    return ab_error_set (err, errno, "%s: mount the overlay filesystem", what);
  return mfd;
}

/* Before Linux 6.15 the overlay's layers must be mounts of the caller's
   mount namespace (clone_private_mount refuses a detached tree).  Then a
   thread of ours takes a private copy of our mount namespace, attaches the
   lower tree at <layer>/lower there and builds the overlay from paths; the
   namespace, and the attached tree with it, goes when the thread ends.
   Everything in that copy is made private first: nothing attached there
   may propagate to the host's namespace. */
struct attached_job
{
  int lower_tree;
  const char *layer_path;
  const char *what;
  ab_error_t err;
  int r;
};

static void *
attached_run (void *p)
{
  struct attached_job *j = p;
  _cleanup_free_ char *lower = xasprintf ("%s/lower", j->layer_path);
  _cleanup_free_ char *upper = xasprintf ("%s/upper", j->layer_path);
  _cleanup_free_ char *work = xasprintf ("%s/work", j->layer_path);
  _cleanup_close_ int at = -1;

  j->r = -1;
  if (unshare (CLONE_FS | CLONE_NEWNS) < 0)
    {
      ab_error_set (&j->err, errno, "%s: a private mount namespace for the overlay's layers", j->what);
      return NULL;
    }
  if (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
    {
      ab_error_set (&j->err, errno, "%s: make the overlay's mount namespace private", j->what);
      return NULL;
    }
  at = open (lower, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (at < 0)
    {
      ab_error_set (&j->err, errno, "%s: open `%s`", j->what, lower);
      return NULL;
    }
  if (ab_move_mount_fd (j->lower_tree, at, lower, &j->err) < 0)
    return NULL;
  j->r = overlay_fs (lower, upper, work, j->what, &j->err);
  return NULL;
}

static int
overlay_attached (int lower_tree, const char *layer_path, const char *what, ab_error_t *err)
{
  struct attached_job j = { .lower_tree = lower_tree, .layer_path = layer_path, .what = what };
  pthread_t t;

  ab_debug ("%s: the overlay's layers attached in a private mount namespace", what);
  if (pthread_create (&t, NULL, attached_run, &j) != 0)
    return ab_error_set (err, EAGAIN, "%s: a thread for the overlay", what);
  pthread_join (t, NULL);
  if (j.r < 0 && err)
    *err = j.err;
  return j.r;
}

int
ab_overlay_tree (int lower_tree, int layer_fd, const char *layer_path, const char *what, ab_error_t *err)
{
  struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY };
  char lower[32], upper[32], work[32];
  _cleanup_close_ int up = -1, wk = -1;
  ab_error_t first = { 0 };
  int mfd;

  /* The lower layer is the workspace itself: the overlay never writes
     it, and neither may anything that reaches this tree. */
  if (mount_setattr (lower_tree, "", AT_EMPTY_PATH, &ro, sizeof ro) < 0)
    return ab_error_set (err, errno, "%s: make the workspace read-only under its overlay", what);
  if (getenv ("AGENTBOX_OVERLAY_ATTACHED") == NULL)
    {
      /* Linux 6.15 and later: the layers by fd, the detached lower tree
         as it is (the magic links name these very fds, whatever path
         they once had). */
      up = openat (layer_fd, "upper", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      wk = openat (layer_fd, "work", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (up < 0 || wk < 0)
        return ab_error_set (err, errno, "%s: open the change set's layers in `%s`", what, layer_path);
      snprintf (lower, sizeof lower, "/proc/self/fd/%d", lower_tree);
      snprintf (upper, sizeof upper, "/proc/self/fd/%d", up);
      snprintf (work, sizeof work, "/proc/self/fd/%d", wk);
      mfd = overlay_fs (lower, upper, work, what, &first);
      if (mfd >= 0)
        return mfd;
      ab_debug ("%s; trying again with the layers attached in a private mount namespace", first.msg);
    }
  mfd = overlay_attached (lower_tree, layer_path, what, err);
  return mfd;
}
