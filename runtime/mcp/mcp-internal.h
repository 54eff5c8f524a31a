/* Internals of the MCP server, shared by its parts:
 *   mcp.c            the server: lines in, the pool, the end
 *   mcp-dispatch.c   the JSON-RPC envelope of frames in, and dispatch
 *   mcp-lifecycle.c  the two protocol eras and their version negotiation
 *   mcp-tools.c      the tools, their schemas, and argument checking
 *   mcp-jobs.c       jobs, the pool, sandbox handles, responses, cleanup
 *   mcp-shell.c      sandbox_shell's session and background processes: the scripts, the
 *                    session's status, the records amended
 *   mcp-worker.c     the worker processes: spawn, supervise, progress
 *   mcp-workspace.c  workspace_apply and workspace_discard: change sets of overlay workspaces
 *   mcp-frame.c      frames out: one write per frame, the envelopes
 * Each file uses only the files listed below it. */
#ifndef AB_RUNTIME_MCP_INTERNAL_H
#define AB_RUNTIME_MCP_INTERNAL_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "runtime/mcp/mcp.h"
#include "base/gen.h"
#include "base/json.h"

#define AB_MCP_MODERN_VERSION "2026-07-28"
#define AB_MCP_LEGACY_VERSION "2025-11-25"
#define AB_MCP_META_VERSION "io.modelcontextprotocol/protocolVersion"
#define AB_MCP_META_CAPS "io.modelcontextprotocol/clientCapabilities"
#define AB_MCP_META_CLIENT "io.modelcontextprotocol/clientInfo"
#define AB_MCP_META_SERVER "io.modelcontextprotocol/serverInfo"

/* A protocol line: longer ones are answered with a parse error and skipped
   without being buffered. */
#define AB_MCP_MAX_LINE (4u << 20)
/* Tool calls waiting for a worker slot, and the stdin they hold; beyond
   that a call is refused (-31100) rather than buffered without bound. */
#define AB_MCP_MAX_QUEUED 256
#define AB_MCP_MAX_QUEUED_BYTES (64u << 20)

/* JSON-RPC and MCP error codes. */
enum
{
  AB_RPC_PARSE_ERROR = -32700,
  AB_RPC_INVALID_REQUEST = -32600,
  AB_RPC_METHOD_NOT_FOUND = -32601,
  AB_RPC_INVALID_PARAMS = -32602,
  AB_RPC_INTERNAL_ERROR = -32603,
  AB_MCP_UNSUPPORTED_VERSION = -32022,
  /* ours, outside the reserved range (docs/result-record.md) */
  AB_MCP_BUSY = -31100,
};

enum ab_mcp_tool
{
  AB_TOOL_RUN,
  AB_TOOL_CREATE,
  AB_TOOL_EXEC,
  AB_TOOL_SHELL,
  AB_TOOL_DESTROY,
  AB_TOOL_WS_APPLY,
  AB_TOOL_WS_DISCARD,
};

/* One tools/call, from parsing to its response. */
struct ab_mcp_job
{
  struct ab_mcp_job *next;        /* in the queue */
  struct ab_mcp_job *next_active; /* in the table of requests in flight */
  enum ab_mcp_tool tool;
  char *id_json;       /* the request id as JSON text */
  char *progress_json; /* _meta.progressToken as JSON text, or NULL */
  bool modern;         /* answer in the 2026-07-28 shape */
  uint64_t seq;        /* record id given to the worker */
  char *container_id;  /* run, create: the container the worker makes */
  char *handle;        /* exec, destroy: the handle the call names */
  bool overwrite, partial; /* workspace_apply (the change set is container_id) */
  bool background;     /* exec, shell: started detached, alive until it ends or sandbox_destroy */
  struct ab_strv args; /* the worker's command line after the binary */
  struct ab_strv prog; /* exec: the program, put after the container id; shell: the command line */
  char *stdin_data;    /* NULL: /dev/null */
  size_t stdin_len;
  uint64_t max_record; /* bytes of record accepted from the worker */
  /* under srv->lock */
  pid_t pid;
  int pidfd;
  bool running, canceled, responding;
};

struct ab_mcp_handle
{
  char handle[48];
  char *container_id;
  bool busy_destroying;
  /* the shell session (runtime/mcp-shell.c) */
  int shell_slot;  /* the state slot to load, -1: none yet */
  bool shell_busy; /* a call (or a background start) of the session runs */
};

struct ab_mcp_server
{
  const struct ab_mcp_opts *o;
  int out_fd;
  pthread_mutex_t out_lock;
  bool out_broken;

  pthread_mutex_t lock; /* everything below */
  pthread_cond_t cond;         /* the queue */
  pthread_cond_t session_cond; /* a shell session's turn (mcp-jobs.c) */
  struct ab_mcp_job *queue, *queue_tail;
  size_t queued, queued_bytes;
  struct ab_mcp_job *active; /* queued and running */
  bool stopping;
  uint64_t next_container, next_seq;
  struct ab_mcp_handle *handles;
  size_t nhandles;
  bool legacy_session; /* an initialize was answered */
  char legacy_version[16];

  pthread_t *threads;
  unsigned nthreads;
};

/* mcp-frame.c */
/* Write one frame (a complete line) with one write under the output lock. */
void ab_mcp_send (struct ab_mcp_server *s, const char *frame, size_t len);
/* Send a generator's document as one frame. */
void ab_mcp_send_gen (struct ab_mcp_server *s, struct ab_gen *g);
/* {"jsonrpc":"2.0","id":ID,"error":{"code":C,"message":M[,"data":DATA]}};
   data_json is raw JSON text or NULL. */
void ab_mcp_send_error (struct ab_mcp_server *s, const char *id_json, int code, const char *message,
                        const char *data_json);
/* Open {"jsonrpc":"2.0","id":ID,"result":{ -- the caller adds members and
   ends with ab_mcp_result_end. */
struct ab_gen *ab_mcp_result_begin (const char *id_json, bool modern);
void ab_mcp_result_end (struct ab_gen *g, bool modern);
/* JSON text of a value (for ids and progress tokens). */
char *ab_mcp_json_text (const struct ab_json *v);
/* The server, as serverInfo and _meta name it. */
void ab_mcp_gen_server_info (struct ab_gen *g);
/* A tool result with isError and a text block, for failures the model can
   fix (bad arguments, an unknown handle).  path may be NULL. */
void ab_mcp_send_tool_error (struct ab_mcp_server *s, const char *id_json, bool modern, const char *code,
                             const char *path, const char *message, bool retryable, const char *action);
/* A tool result of one text block (JSON text), also as structuredContent
   when structured. */
void ab_mcp_send_text_result (struct ab_mcp_server *s, const char *id_json, bool modern, const char *text,
                              bool structured, bool is_error);

/* Claim the right to respond to j: false when it was canceled (then no
   response may be sent, ever). */
struct ab_mcp_job;
bool ab_mcp_claim_response (struct ab_mcp_server *s, struct ab_mcp_job *j);

/* mcp-dispatch.c */
/* Handle one line of input (without its LF). */
void ab_mcp_handle_line (struct ab_mcp_server *s, const char *line, size_t len);

/* mcp-lifecycle.c */
struct ab_mcp_request
{
  const char *method;
  const char *id_json;    /* NULL for a notification */
  struct ab_json *params; /* an object, or NULL */
  bool modern;
};
/* Decide the era of a request and check its _meta: 0 to go on, -1 after
   an error response was sent. */
int ab_mcp_check_era (struct ab_mcp_server *s, struct ab_mcp_request *r);
void ab_mcp_initialize (struct ab_mcp_server *s, struct ab_mcp_request *r);
void ab_mcp_discover (struct ab_mcp_server *s, struct ab_mcp_request *r);
void ab_mcp_ping (struct ab_mcp_server *s, struct ab_mcp_request *r);

/* mcp-tools.c */
void ab_mcp_tools_list (struct ab_mcp_server *s, struct ab_mcp_request *r);
/* Parse a tools/call into a job (returns it), or answer it and return NULL. */
struct ab_mcp_job *ab_mcp_tools_call (struct ab_mcp_server *s, struct ab_mcp_request *r);

/* mcp-worker.c */
struct ab_mcp_worker
{
  pid_t pid;
  int pidfd;
  int in_w, log_r, rec_r, status_r; /* -1 when absent */
};

/* The worker's output lines, the last "agentbox: " error line kept. */
struct ab_mcp_logbuf
{
  char buf[4096];
  size_t len;
  char last_error[AB_ERR_MSG_MAX];
};

struct ab_mcp_outcome
{
  siginfo_t info; /* waitid */
  char *rec;      /* the record, NUL-terminated, or NULL */
  size_t rec_len;
  bool overflow; /* more than the job's max_record */
  struct ab_mcp_logbuf log;
  char status[8192]; /* what came on the status pipe (the first bytes) */
  size_t status_len;
};

/* Spawn `exe args...` with the pipes described in runtime/mcp/mcp-worker.c. */
int ab_mcp_spawn (struct ab_mcp_server *s, char *const *args, bool with_stdin, bool with_record,
                  bool with_status, struct ab_mcp_worker *w, ab_error_t *err);
/* Run a spawned worker to its end (feed stdin, forward logs, collect the
   record and the status, send progress, honour cancellation); closes w's
   fds but status_r.  j may be NULL for helpers. */
void ab_mcp_supervise (struct ab_mcp_server *s, struct ab_mcp_job *j, struct ab_mcp_worker *w,
                       const char *tag, struct ab_mcp_outcome *out);
int ab_mcp_exit_status (const siginfo_t *info);
/* After ab_mcp_supervise: read w's status pipe to its end (bounded in
   time: a shell that keeps it is not waited for) and close it. */
void ab_mcp_status_wait (struct ab_mcp_worker *w, struct ab_mcp_outcome *out);
/* `agentbox --root ROOT CMD [EXTRA] ID`, waited for; its exit status, or -1. */
int ab_mcp_run_helper (struct ab_mcp_server *s, const char *cmd, const char *id, const char *extra,
                       struct ab_mcp_outcome *out);
void ab_mcp_delete_container (struct ab_mcp_server *s, const char *id);

/* mcp-jobs.c */
int ab_mcp_workers_start (struct ab_mcp_server *s, ab_error_t *err);
/* Queue a job (takes it); answers with an error when the queue is full or
   the id is in flight. */
void ab_mcp_submit (struct ab_mcp_server *s, struct ab_mcp_job *j);
/* Whether a request id is in flight (queued or running). */
bool ab_mcp_id_active (struct ab_mcp_server *s, const char *id_json);
/* notifications/cancelled */
void ab_mcp_cancel (struct ab_mcp_server *s, const char *id_json);
/* Stop: cancel everything, wait for the pool, destroy every sandbox. */
void ab_mcp_workers_stop (struct ab_mcp_server *s);
void ab_mcp_job_free (struct ab_mcp_job *j);
/* Mint a handle for a new sandbox (mcp-worker.c keeps the table). */
uint64_t ab_mcp_next_container (struct ab_mcp_server *s);

/* mcp-shell.c */
/* What a session call's shell reported on its status pipe. */
struct ab_mcp_shell_status
{
  bool restored; /* it started from the session's state */
  bool saved;    /* it wrote its state back (cwd is then its cwd) */
  char cwd[4096];
};
/* Append the program of one session call: load slot `restore` (-1: none),
   run `command`, write slot `write`. */
void ab_mcp_shell_program (struct ab_strv *v, const char *command, int restore, int write);
/* ... of a session's command line in the background, its output to log. */
void ab_mcp_shell_background_program (struct ab_strv *v, const char *command, int restore, const char *log);
/* ... of sandbox_exec's argv in the background, its output to log. */
void ab_mcp_background_program (struct ab_strv *v, const char *log, char *const *argv, size_t argc);
/* Where a background process's output goes in the sandbox, and where its
   worker writes its pid on the host. */
char *ab_mcp_background_log (uint64_t seq);
char *ab_mcp_background_pid_file (struct ab_mcp_server *s, uint64_t seq);
void ab_mcp_shell_status_parse (const char *buf, size_t len, struct ab_mcp_shell_status *st);
/* structuredContent.session: {"restored","saved","cwd"} */
char *ab_mcp_session_json (const struct ab_mcp_shell_status *st);
/* The pid in its sandbox of a host pid, or -1. */
pid_t ab_mcp_sandbox_pid (pid_t host_pid);
/* The record of a background start (id: seq, as a worker's). */
char *ab_mcp_background_frame (uint64_t seq, const char *container_id, uint64_t duration_ns, pid_t pid,
                               const char *log, size_t *len);
/* Members of structuredContent to set (key -> JSON text) and one to add. */
struct ab_mcp_amend
{
  const char *const *set_keys;
  const char *const *set_values;
  size_t n_set;
  const char *add_key; /* NULL: none */
  const char *add_json;
};
/* A result frame (a worker's record) amended, structuredContent and the
   text block that mirrors it alike; NULL when the frame is not one. */
char *ab_mcp_record_amend (const char *frame, size_t len, const struct ab_mcp_amend *a, size_t *out_len);

/* mcp-workspace.c */
/* The tools/list entries of workspace_apply and workspace_discard. */
void ab_mcp_workspace_tools (struct ab_gen *g);
/* Their arguments into j (0), or -1 after an error in *c. */
int ab_mcp_workspace_args (struct ab_jctx *c, struct ab_json *args, struct ab_mcp_job *j);
/* Run one (in the pool thread: no container is involved) and respond. */
void ab_mcp_workspace_run (struct ab_mcp_server *s, struct ab_mcp_job *j);
/* Throw away every change set left in a server's state root: ours at
   exit, or one a server killed before its exit left. */
void ab_mcp_workspace_discard_all (const char *root);

#endif
