/* agentbox start ID */
#include "config.h"

#include "cmd/cmd.h"
#include "runtime/lifecycle/container.h"

int
ab_cmd_start (struct ab_global *g, int argc, char **argv)
{
  return ab_cmd_on_id (g, argc, argv, "start", "Run the user program of a created container.", ab_container_start);
}
