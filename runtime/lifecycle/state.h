/* Container state on disk: <root>/<id>/ holds state.json (written
 * atomically), config.json (the snapshot taken at create: later edits of the
 * bundle do not affect the container), and, while the container is
 * `created`, start.sock.  Commands serialise on flock(2) of the container
 * directory.  A truncated or corrupt state.json is an error, never a crash. */
#ifndef AB_RUNTIME_STATE_H
#define AB_RUNTIME_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"
#include "base/json.h"
#include "spec/model.h"

enum ab_status
{
  AB_STATUS_CREATING,
  AB_STATUS_CREATED,
  AB_STATUS_RUNNING,
  AB_STATUS_STOPPED,
  AB_STATUS_PAUSED,
};
const char *ab_status_name (int status);

#define AB_ID_MAX 1024

/* ^[A-Za-z0-9][A-Za-z0-9_.+-]{0,1023}$ -- checked before touching disk. */
int ab_id_validate (const char *id, ab_error_t *err);

struct ab_state
{
  char *id;
  char *bundle;
  char *rootfs;
  uint64_t created_ns;   /* CLOCK_REALTIME */
  int status;            /* as last recorded (see ab_state_status for the live one) */
  pid_t pid;             /* container init, host pid namespace; 0 = none yet */
  uint64_t pid_start;    /* /proc/<pid>/stat starttime: a recycled pid never matches */
  bool netns_held;       /* <dir>/netns is a bind mount of the container's netns */
  bool own_netns;        /* agentbox created the network namespace */
  pid_t helper_pid;      /* per-container egress daemon, 0 = none */
  uint64_t helper_start;
  struct ab_json *cgroup; /* serialised struct ab_cgroup (owned), or NULL */
  struct ab_kvlist annotations;
  char *rules_text;      /* the nftables rules installed, for reviewers */
  bool rootless;         /* made without host privileges */
  char *id_mapping;      /* how its user namespace was mapped (ab_idmap_how_name), or NULL */
  struct ab_strv degraded; /* what this host could not enforce for it */
};

void ab_state_free (struct ab_state *s);
static inline void
ab_state_freep (struct ab_state **s)
{
  if (*s)
    ab_state_free (*s);
}
#define _cleanup_state_ __attribute__ ((cleanup (ab_state_freep)))

/* Open <root> (created 0700 if missing) as a directory fd. */
int ab_state_root_open (const char *root, bool create, ab_error_t *err);

/* Create <root>/<id> exclusively (class AB_EC_EXISTS if it exists) and
   return its fd, locked exclusively. */
int ab_state_dir_create (int rootfd, const char *id, ab_error_t *err);
/* Open an existing container directory (class AB_EC_NOTFOUND with
   "container `id` does not exist"), locked shared or exclusive. */
int ab_state_dir_open (int rootfd, const char *id, bool exclusive, ab_error_t *err);
/* A directory of id without state.json (a create killed before its first
   state write, a removal cut short after it), or the hidden one a create
   makes first, if no live process holds its lock: removed with whatever is
   in it, a mount included; returns how many, or -1 with *err set when one
   could not be removed, or is an MCP server's state root
   (AB_SERVER_RECORD), never removed so. */
int ab_state_dir_remove_orphan (int rootfd, const char *id, ab_error_t *err);
/* The private rootfs skeleton of `run --default` for container `id`,
   <root>/.rootfs@<id> (the cache's is shared: runtime/sandbox/sandbox.c): made if
   missing (*made), opened and locked exclusively for the caller, who
   builds it; class AB_EC_EXISTS if another holds the lock. */
#define AB_PRIVATE_ROOTFS_PREFIX ".rootfs@"
int ab_state_private_rootfs_open (int rootfd, const char *id, bool *made, ab_error_t *err);
/* Remove it (nothing there is success); with if_unlocked only when no
   run holds its lock.  The owner of the id calls it without: the
   container that used it is gone.  -1 with errno. */
int ab_state_private_rootfs_remove (int rootfd, const char *id, bool if_unlocked);
/* Remove the container directory and its contents (a file mounted on is
   unmounted first), by its fd, already open (and locked): it is closed. */
int ab_state_dir_remove_fd (int rootfd, const char *id, int dirfd, ab_error_t *err);

/* A write in the state directory of container id under root (NULL id: in
   root itself) failed, *err saying what ("write `config.json`: No space
   left on device"): name the directory, as a full or read-only --root
   would otherwise read like a file of the bundle.  Step "state": such a
   failure says nothing of the host's namespaces.  Returns -1. */
int ab_state_dir_failed (ab_error_t *err, const char *root, const char *id);

/* Replace state.json atomically: a new file renamed over the old one. */
int ab_state_write (int dirfd, const struct ab_state *s, ab_error_t *err);

/* state.json kept open by a writer that holds the directory's exclusive
   lock (fd -1: not open yet; len: the file's size; absent: the directory
   is new and has no state.json yet, so the first write need not look). */
struct ab_state_file
{
  int fd;
  size_t len;
  bool absent;
};
#define AB_STATE_FILE_INIT                                                                                   \
  {                                                                                                          \
    .fd = -1, .len = 0, .absent = false                                                                      \
  }

/* ab_state_write for a caller holding the exclusive lock of dirfd: one
   pwrite over the open file instead of a new file and a rename (which on
   ext4 costs a block allocation and a flush, 0.1-0.3 ms, for each of the
   six writes of a run), when the text fits one page; else ab_state_write. */
int ab_state_write_locked (int dirfd, struct ab_state_file *f, const struct ab_state *s, ab_error_t *err);
void ab_state_file_close (struct ab_state_file *f);
int ab_state_read (int dirfd, const char *id, struct ab_state **out, ab_error_t *err);

/* The live status: the recorded one corrected by whether the process still
   exists (same pid and start time, not a zombie) and whether start.sock is
   still there. */
int ab_state_status (int dirfd, const struct ab_state *s);

/* starttime (field 22) of /proc/<pid>/stat; 0 if the process is gone.
   *zombie is set for state Z (or X). */
uint64_t ab_proc_start_time (pid_t pid, bool *zombie);

/* A pidfd for s->pid that is guaranteed to be the container's process (the
   start time is checked after opening), or -1 with errno ESRCH. */
int ab_state_pidfd (const struct ab_state *s);

/* OCI state JSON (runtime.md; plus runc's rootfs/created/owner). */
char *ab_state_oci_json (const struct ab_state *s, int status, bool pretty, size_t *len);
/* "annotations": {...} of the state object, when it has any (`state`, `list`). */
struct ab_gen;
void ab_state_gen_annotations (struct ab_gen *g, const struct ab_state *s);
/* The container process state of config-linux.md (for a seccomp agent):
   ociVersion, fds ["seccompFd"], pid, metadata (when not NULL), state. */
char *ab_state_process_json (const struct ab_state *s, int status, pid_t pid, const char *metadata, size_t *len);

/* All container ids under root, sorted. */
int ab_state_list (int rootfd, struct ab_strv *ids, ab_error_t *err);

#define AB_STATE_FILE "state.json"
#define AB_CONFIG_FILE "config.json"
#define AB_START_SOCK "start.sock"
#define AB_NETNS_FILE "netns"
/* In a directory of the state root: it is no container's but the state
   root of the `agentbox mcp` server recorded there (its pid and start
   time; runtime/mcp/mcp.c), which only that server, or the next one on
   this root once it is gone, removes. */
#define AB_SERVER_RECORD ".mcp-server"

#endif
