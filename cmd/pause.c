/* agentbox pause ID */
#include "config.h"

#include "cmd/cmd.h"
#include "runtime/lifecycle/container.h"

int
ab_cmd_pause (struct ab_global *g, int argc, char **argv)
{
  return ab_cmd_on_id (g, argc, argv, "pause",
                       "Freeze every process of a running container (the cgroup freezer); its status\n"
                       "becomes `paused` until `agentbox resume ID`.  A paused container can be\n"
                       "killed and deleted with --force; exec into it is refused.",
                       ab_container_pause);
}
