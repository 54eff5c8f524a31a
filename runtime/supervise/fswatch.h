/* What the supervisor sees of the sandbox's filesystem limits from
 * outside: whether a bounded tmpfs filled up (ENOSPC), and whether a file
 * was cut at RLIMIT_FSIZE (EFBIG).
 *
 * The mounts are opened while the container waits for `start` (its mounts
 * are made, nothing of the program has run), through /proc/PID/root with
 * the container's root pinned, every path resolved beneath it: an O_PATH
 * fd of each keeps its filesystem for a look after the run, when the
 * container's mount namespace is gone.
 *
 * A full tmpfs: fstatfs says less than 64 KiB of room or no inode left when
 * the command ended (a write that failed with ENOSPC leaves less than a page
 * or two); a failed allocation that left room, or files removed before the
 * end, are not seen.  A file cut at the file-size limit: the kernel writes
 * up to the limit, then fails the write (SIGXFSZ, or EFBIG where the signal
 * is ignored -- Python ignores it -- or withheld -- the init of a PID
 * namespace gets none), so the file is left exactly the limit long; after
 * a failed command the writable mounts are searched for one (at most
 * FSWATCH_SCAN_MAX entries).  EMFILE at RLIMIT_NOFILE leaves no trace the
 * kernel keeps: not detected. */
#ifndef AB_RUNTIME_SUPERVISE_FSWATCH_H
#define AB_RUNTIME_SUPERVISE_FSWATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/util.h"
#include "runtime/plan/plan.h"

struct ab_fswatch_mount
{
  char *destination;
  int fd;     /* O_PATH of the mount's root, or -1 */
  bool tmpfs; /* a tmpfs with a size= bound */
};

struct ab_fswatch
{
  struct ab_fswatch_mount *m;
  size_t n;
  uint64_t file_size; /* RLIMIT_FSIZE of the process (0: none) */
};

/* Open the writable mounts of plan p in the container whose process is pid
   (created, not started).  Never fails: what cannot be opened is not
   watched. */
void ab_fswatch_open (struct ab_fswatch *w, pid_t pid, const struct ab_plan *p);

/* The destinations of the bounded tmpfs mounts that are full, added to
   *full; their number. */
size_t ab_fswatch_full (const struct ab_fswatch *w, struct ab_strv *full);

/* Whether a regular file exactly file_size long is on a watched mount. */
bool ab_fswatch_cut_file (const struct ab_fswatch *w);

void ab_fswatch_close (struct ab_fswatch *w);

#endif
