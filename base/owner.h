/* Whose a directory is: the checks agentbox makes of every directory it
 * keeps state in (the state root, the cache), so that another local user
 * can neither have made it, nor swap it for another, nor read it. */
#ifndef AB_BASE_OWNER_H
#define AB_BASE_OWNER_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "base/error.h"

/* Who could replace `path` (given absolute) with a directory of their own:
   0 when no one but root and `uid` can -- every directory above it belongs
   to root or `uid`, and one that others may write has the sticky bit (/tmp:
   there, only the owner of an entry may rename or remove it) -- else -1
   and *err names the directory and its owner.  Symlinks on the way are
   resolved (realpath) and the directories they lead to are checked; a
   path that does not exist yet is checked from its deepest existing
   ancestor.  `what` names the path in the message ("state directory"). */
int ab_path_owner_check (const char *path, uid_t uid, const char *what, ab_error_t *err);

/* The directory fd (path for the message) belongs to `uid`, and neither
   its group nor anyone else may write or list it (mode & 066 == 0; 0711
   and 0700 pass).  -1 and *err otherwise. */
int ab_dir_private_check (int fd, const char *path, uid_t uid, const char *what, ab_error_t *err);

#endif
