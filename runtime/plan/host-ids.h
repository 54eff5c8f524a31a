/* Who runs agentbox, as far as user namespaces care: the effective ids,
 * the capabilities that let it write any id map, whether it is root of the
 * initial user namespace, the subordinate ids /etc/subuid and /etc/subgid
 * give it and the set-uid helpers that may write them (newuidmap and
 * newgidmap, the one exception to "no helper programs on the run path":
 * the kernel gives an unprivileged user no other way to map more than its
 * own id).  Read by the plan (rootless or not, how the maps are written),
 * by `agentbox spec --rootless` and by the built-in sandbox (which mapping
 * to write into a config). */
#ifndef AB_RUNTIME_PLAN_HOST_IDS_H
#define AB_RUNTIME_PLAN_HOST_IDS_H

#include <stdbool.h>
#include <sys/types.h>

#include "base/error.h"
#include "spec/model.h"

/* The helpers, by absolute path only (never through PATH: a set-uid
   program found by a search path the caller controls is not the one the
   administrator installed). */
#define AB_NEWUIDMAP_PATHS { "/usr/bin/newuidmap", "/usr/sbin/newuidmap", "/bin/newuidmap" }
#define AB_NEWGIDMAP_PATHS { "/usr/bin/newgidmap", "/usr/sbin/newgidmap", "/bin/newgidmap" }

struct ab_host_ids
{
  uid_t uid;               /* effective */
  gid_t gid;
  bool cap_setuid, cap_setgid; /* effective, in our own user namespace: any map of ids we have */
  bool cap_sys_admin;
  bool initial_userns;     /* our user namespace is the host's (uid_map is the identity) */
  /* Filled by ab_host_ids_subids (lazily: two files and passwd). */
  bool subids_read;
  struct ab_idmaps subuid; /* host_id = first id, size = count (container_id unused) */
  struct ab_idmaps subgid;
  const char *newuidmap, *newgidmap; /* NULL when not installed (set-uid root, executable) */
};

/* The ids, capabilities and user namespace of this process (no file but
   /proc/self/uid_map is read). */
void ab_host_ids_read (struct ab_host_ids *h);
/* /etc/subuid, /etc/subgid (entries of the user's name or uid) and the
   helpers.  Never fails: what cannot be read gives no range. */
void ab_host_ids_subids (struct ab_host_ids *h);
void ab_host_ids_free (struct ab_host_ids *h);

/* The name of uid in /etc/passwd (files only: no NSS module runs in the
   runtime), or NULL.  Malloc'ed. */
char *ab_user_name (uid_t uid);

/* --rootless (-1 auto, 0, 1) against the host: auto is rootless unless
   agentbox is root of the initial user namespace with CAP_SYS_ADMIN. */
bool ab_host_rootless (const struct ab_host_ids *h, int opt);

/* The mapping a config made for this caller should carry when rootless:
   container 0 is the caller's own uid (gid); with subordinate ids and both
   helpers installed, container 1.. are the first subordinate range (as
   much of it as fits below 65536 ids in all, or the whole range if
   smaller).  *full says which (the caller frees the maps). */
void ab_host_rootless_maps (struct ab_host_ids *h, struct ab_idmaps *uids, struct ab_idmaps *gids, bool *full);

#endif
