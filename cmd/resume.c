/* agentbox resume ID */
#include "config.h"

#include "cmd/cmd.h"
#include "runtime/lifecycle/container.h"

int
ab_cmd_resume (struct ab_global *g, int argc, char **argv)
{
  return ab_cmd_on_id (g, argc, argv, "resume", "Thaw a paused container; its status becomes `running` again.",
                       ab_container_resume);
}
