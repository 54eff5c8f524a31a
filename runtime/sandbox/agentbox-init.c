/* agentbox-init: PID 1 of a persistent sandbox (run --default --detach).
 *
 * It does nothing but reap: processes started with `agentbox exec` that
 * leave orphans behind are reparented here, and without a reaper their
 * zombies would pile up and count against pids.max.  SIGTERM, SIGINT and
 * SIGHUP end it (and with it the pid namespace).  A separate, static, tiny
 * binary bound read-only into the container: never agentbox itself, whose
 * /proc/<pid>/exe a container process could otherwise open. */
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

int
main (void)
{
  sigset_t all;
  int sig;

  sigfillset (&all);
  sigprocmask (SIG_BLOCK, &all, NULL);
  for (;;)
    {
      if (sigwait (&all, &sig) != 0)
        continue;
      if (sig == SIGCHLD)
        {
          while (waitpid (-1, NULL, WNOHANG) > 0)
            ;
          continue;
        }
      if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP)
        return 0;
    }
}
