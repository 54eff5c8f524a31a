/* The supervisor of a foreground run: agentbox stays the parent (and
 * subreaper) of the container, forwards the signals it gets to it, as runc
 * (SIGUSR1 means cancel: kill the whole container, report nothing; during
 * the setup, stop it), enforces the wall-clock limit, tees and caps the
 * output, decodes the
 * end with waitid on a pidfd, reads the cgroup's OOM and pids events before
 * removing it, and describes the outcome (runtime/supervise/record.h turns it into an
 * MCP result frame). */
#ifndef AB_RUNTIME_SUPERVISE_H
#define AB_RUNTIME_SUPERVISE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/lifecycle/container.h"
#include "base/error.h"
#include "runtime/lifecycle/exec.h"

/* What is captured of each stream when the caller names no bound (run and
   exec without --max-output; agentbox mcp's max_output_bytes): the
   supervisor runs on the host, outside the sandbox's memory limit, so what
   it holds of a program's output is always bounded. */
#define AB_SUPERVISE_MAX_OUTPUT_DEFAULT (1u << 20)

struct ab_supervise_opts
{
  bool keep;          /* keep the state after exit (run --keep) */
  uint64_t timeout_ms; /* 0 = none */
  bool grace_set;     /* --timeout-grace given: SIGTERM at the deadline, SIGKILL grace_ms later */
  uint64_t grace_ms;  /* (else the plan's: dev.agentbox.timeout.grace, or AB_PLAN_GRACE_DEFAULT_MS) */
  bool capture;       /* pipe stdout/stderr through the supervisor */
  uint64_t max_output; /* bytes captured per stream (at least 1); streaming goes on */
  bool passthrough;   /* also write captured output to our own stdout/stderr */
  const char *stdin_data; /* NULL: the container's stdin is ours (or /dev/null if capture) */
  size_t stdin_len;
  bool no_violations; /* run, exec: no record: neither the wall's denials nor a change list are gathered */
  bool relay_tty;     /* process.terminal without --console-socket: relay the pty to our stdio */
  bool no_subreaper;  /* run --no-subreaper: the container's orphans are not ours to reap */
};
void ab_supervise_opts_init (struct ab_supervise_opts *o);

enum ab_reason
{
  AB_REASON_EXITED,
  AB_REASON_SIGNALED,
  AB_REASON_TIMEOUT,
  AB_REASON_OOM,
  AB_REASON_SETUP_FAILED,
};
const char *ab_reason_name (int reason);

enum
{
  AB_LIMIT_MEMORY = 1u << 0,
  AB_LIMIT_PIDS = 1u << 1,
  AB_LIMIT_OUTPUT = 1u << 2,
  AB_LIMIT_TIMEOUT = 1u << 3,
  AB_LIMIT_CPU = 1u << 4,
  AB_LIMIT_WORKSPACE = 1u << 5, /* an overlay workspace's change set filled its storage */
  AB_LIMIT_FILE_SIZE = 1u << 6, /* RLIMIT_FSIZE: SIGXFSZ, or a file left cut at the limit */
  AB_LIMIT_TMPFS = 1u << 7,     /* a bounded tmpfs (/tmp, /root, /dev/shm, a tmpfs /workspace) filled up */
};

struct ab_stream
{
  char *data; /* captured bytes (up to max_output) */
  size_t len;
  size_t size; /* allocated for data */
  uint64_t total; /* bytes the program wrote */
  bool truncated;
};

struct ab_outcome
{
  int reason;      /* enum ab_reason */
  int exit_status; /* what `run` exits with: code, 128+signal, or 125/126/127 */
  bool exited;
  int exit_code;   /* valid when exited */
  int signal;      /* valid when !exited and reason != setup_failed */
  bool core_dumped;
  unsigned limits_hit;
  uint64_t duration_ns;
  uint64_t cpu_user_usec, cpu_system_usec;
  uint64_t memory_peak;
  bool stats_known;
  struct ab_stream out, err;
  ab_error_t setup_error; /* reason == setup_failed */
  struct ab_strv degraded;
  char *violations_json;  /* a JSON array value, or NULL */
  char *id;
  bool canceled;          /* SIGUSR1: the caller gave up on it; no record is written */
  char *egress_json;      /* every decision of the egress proxy (a JSON array value), or NULL */
  char *workspace_json;   /* an overlay workspace's change set (a JSON object value), or NULL */
  /* Rootless (the record's `rootless`): how the user namespace was mapped
     and where the cgroup is ("none" without one). */
  bool rootless;
  const char *id_mapping; /* ab_idmap_how_name: static */
  char *cgroup;           /* "none", or the cgroup path of a delegated one */
  /* reason == timeout: the limit, the grace after SIGTERM, and whether the
     program was still running at its end (then killed) */
  uint64_t timeout_ms, grace_ms;
  bool timeout_killed;
  int init_signal;        /* the program, an init that left this signal to its default action (which the
                             kernel withholds from an init), was ended for it: `signal` says this one */
  unsigned limits_before_timeout; /* reason == timeout: the limits hit before the deadline */
  /* The limits in force, to name the one that was hit (0: unknown or none). */
  int64_t pids_max;
  uint64_t memory_max;
  uint64_t file_size_max;
  struct ab_strv full_mounts; /* the bounded tmpfs mounts found full (AB_LIMIT_TMPFS) */
};
void ab_outcome_free (struct ab_outcome *o);

/* create + start + supervise + delete.  Returns 0 with *out filled when the
   program ran (whatever its fate), -1 when the sandbox could not be set up
   (*err, and *out describes the setup failure). */
int ab_supervise_run (const struct ab_create_opts *co, const struct ab_supervise_opts *so, struct ab_outcome *out,
                      ab_error_t *err);

/* The same for a process exec'd into a running container; the stats are
   the container's, as deltas over the exec's lifetime.  exit_status 255
   when agentbox could not run the process (runc's convention). */
int ab_supervise_exec (const struct ab_exec_opts *eo, const struct ab_supervise_opts *so, struct ab_outcome *out,
                       ab_error_t *err);

/* The same for a program run without namespaces (runtime/fallback.h):
   no container, no cgroup; the timeout, the output caps and the end are the
   supervisor's as above, and what the program started (its session, and
   every descendant that was orphaned to us: we are its subreaper) is killed
   when it ends or times out. */
struct ab_fallback;
int ab_supervise_fallback (const struct ab_fallback *f, const char *id, const struct ab_supervise_opts *so,
                           struct ab_outcome *out, ab_error_t *err);

#endif
