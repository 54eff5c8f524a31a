/* The one error contract of agentbox (docs/errors.md).
 *
 * Every function that can fail takes an `ab_error_t *err` last and returns a
 * negative value on failure after filling *err; 0 (or a non-negative result)
 * on success:
 *
 *     if (ab_mount_masked_paths (c, err) < 0)
 *       return -1;
 *     ...
 *     return ab_error_set (err, errno, "mount tmpfs on masked path `%s`", path);
 *
 * The message names the object (JSON path, file, syscall) and ends with the
 * errno text when errnum != 0, so that one line tells the user what to fix.
 * The class decides the exit status and the MCP error code; the step names
 * the stage of container setup that failed (for the result record).
 */
#ifndef AB_ERROR_H
#define AB_ERROR_H

#include <stddef.h>

enum ab_err_class
{
  AB_EC_NONE = 0,
  AB_EC_INTERNAL, /* a bug or an unexpected failure of agentbox itself */
  AB_EC_USAGE,    /* wrong command-line use */
  AB_EC_CONFIG,   /* config.json is invalid or asks for something unsupported */
  AB_EC_NOTFOUND, /* the container does not exist */
  AB_EC_EXISTS,   /* a container with that id already exists */
  AB_EC_STATE,    /* the operation is not valid in the container's state */
  AB_EC_SETUP,    /* the kernel refused a step of sandbox setup */
  AB_EC_HOOK,     /* an OCI hook failed or timed out */
  AB_EC_EXEC,     /* the user program could not be executed */
  AB_EC_RESOURCE, /* a resource limit could not be applied (rlimit, cgroup) */
  AB_EC__COUNT
};

#define AB_ERR_MSG_MAX 1024
#define AB_ERR_STEP_MAX 32
#define AB_ERR_WHERE_MAX 256

typedef struct ab_error
{
  int cls;    /* enum ab_err_class */
  int errnum; /* errno, or 0 */
  char step[AB_ERR_STEP_MAX];
  char msg[AB_ERR_MSG_MAX];
  /* A path inside the container the error is about, when the parent can
     explain it better than the child (a directory the container's root may
     not write: whose is it on the host?).  Usually empty. */
  char where[AB_ERR_WHERE_MAX];
} ab_error_t;

/* The setup stage the current thread is in; copied into errors it raises.
   Per thread: create's network and cgroup jobs have their own. */
extern __thread const char *ab_current_step;
static inline void
ab_set_step (const char *step)
{
  ab_current_step = step;
}

/* Fill *err (class AB_EC_SETUP) with "<message>: <strerror(errnum)>"; return -1. */
int ab_error_set (ab_error_t *err, int errnum, const char *fmt, ...) __attribute__ ((format (printf, 3, 4)));
/* Same with an explicit class. */
int ab_error_setc (ab_error_t *err, int cls, int errnum, const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));
/* Prepend context: "<prefix>: <old message>"; return -1. */
int ab_error_prefix (ab_error_t *err, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
void ab_error_clear (ab_error_t *err);

/* Name of a class, e.g. "config" (used in JSON logs and records). */
const char *ab_error_class_name (int cls);

#endif
