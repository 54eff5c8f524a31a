/* A warm user namespace: a rootless container's subordinate-id mapping
 * without a set-uid helper run on every start.
 *
 * newuidmap and newgidmap (the only way an unprivileged user maps more
 * than its own id) are two set-uid execs: about 2.4 ms of every rootless
 * start with /etc/subuid ranges, more than all the rest of it.  So the
 * first such run leaves a holder behind: a process of the user's own (no
 * privilege, a session of its own, no fd of the caller's, cwd /) that had
 * the helpers map a user namespace U exactly as the config maps the
 * container, keeps U open, and hands an fd of it to the user's later runs
 * over an abstract unix socket named after the user and the maps.  It
 * exits after AB_WARM_IDLE_MS without a caller.
 *
 * A run that gets U makes the container's user namespace inside it, a
 * namespace of its own per container as before: an intermediate process
 * enters U (we created it: every capability there) and clones the
 * container (runtime/ns.c), then maps each of the config's ranges onto the
 * same ids of U, which maps them to the host's -- the same host ids as the
 * helpers would have written.  What differs is only the view from inside:
 * the container's /proc/self/uid_map reads "0 0 1" where it read
 * "0 <uid> 1", its parent namespace being U.
 *
 * What is checked before U is used (anything wrong is a miss: the run
 * maps with the helpers, as without a holder):
 *   - the socket's peer (SO_PEERCRED) is the caller's own uid: another
 *     user may take the name first (abstract names are anyone's), never
 *     answer in its place;
 *   - the fd is a user namespace (NS_GET_NSTYPE), owned by the caller's
 *     uid (NS_GET_OWNER_UID), whose parent is the caller's own user
 *     namespace (NS_GET_PARENT): a namespace made inside a container
 *     cannot pass;
 *   - the holder says which maps it made, and they are the config's.
 * A process of the same user could pass all three with a namespace mapped
 * as it likes within the user's own ranges, which it can do without us.
 *
 * AGENTBOX_WARM_USERNS=0 turns it off (no holder used or started);
 * AGENTBOX_WARM_USERNS_IDLE_MS sets the holder's idle time. */
#ifndef AB_RUNTIME_WARM_H
#define AB_RUNTIME_WARM_H

#include "spec/model.h"

#define AB_WARM_IDLE_MS 60000

struct ab_plan_ids;

/* The user's warm user namespace mapped as l says, in two steps so that
   the holder answers while the caller works: ask its holder (a socket
   connected to it, its peer checked, and the answer it must give; sock -1:
   none, or off); then the namespace's fd (close-on-exec) from its answer,
   once that passed the checks above, or -1 (closes ask->sock; none asked
   gives -1). */
struct ab_warm_ask
{
  int sock;
  char want[400];
};
void ab_warm_userns_connect (const struct ab_linux *l, struct ab_warm_ask *ask);
int ab_warm_userns_receive (struct ab_warm_ask *ask);

/* Start a holder of l's maps in the background, made by ids's helpers (a
   process of its own; nothing waits for it).  Nothing when off. */
void ab_warm_userns_start (const struct ab_linux *l, const struct ab_plan_ids *ids);

/* The holder itself (`agentbox _userns-holder`): make the namespace with
   the helpers, then serve it until idle.  The maps are "C:H:N,..." as
   ab_warm_userns_start passes them.  An exit status. */
int ab_warm_userns_serve (const char *newuidmap, const char *newgidmap, const char *uid_maps,
                          const char *gid_maps);

#endif
