/* agentbox pause ID */
#include "config.h"

#include "cmd/cmd.h"
#include "runtime/lifecycle/container.h"

int
ab_cmd_pause (struct ab_global *g, int argc, char **argv)
{
  return ab_cmd_on_id (g, argc, argv, "pause",
                       "Freeze every process of a running container with every cgroup freezer it\n"
                       "has: cgroup.freeze (v2) and freezer.state (v1), both on a hybrid host; its\n"
                       "status becomes `paused` until `agentbox resume ID`.  Signals other than KILL\n"
                       "wait for the resume; SIGKILL and delete --force thaw it.  exec into it is\n"
                       "refused.",
                       ab_container_pause);
}
