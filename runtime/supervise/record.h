/* The result record: what one run produced (struct ab_outcome), written as
 * one MCP `tools/call` response frame, i.e. one line of JSON ending in LF
 * (docs/result-record.md; the structuredContent schema is
 * docs/result-schema.json).
 *
 *   a run that happened (whatever its fate):
 *     {"jsonrpc":"2.0","id":ID,"result":{"resultType":"complete",
 *      "content":[{"type":"text","text":"<structuredContent as JSON>"},...],
 *      "structuredContent":{...},"isError":BOOL,"_meta":{"dev.agentbox/...":...}}}
 *   a sandbox that could not be set up (reason setup_failed):
 *     {"jsonrpc":"2.0","id":ID,"error":{"code":-31007,"message":"...",
 *      "data":{"step":...,"errno":...,"errnoName":...,"class":...,
 *              "retryable":...,"suggested_action":...}}}
 *
 * The frame is always valid JSON and valid UTF-8, whatever the program
 * wrote: output that is not UTF-8 is carried with U+FFFD replacements in
 * structuredContent and, byte-exact, as a base64 `resource` blob. */
#ifndef AB_RUNTIME_RECORD_H
#define AB_RUNTIME_RECORD_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "runtime/supervise/supervise.h"

/* JSON-RPC error codes of setup failures: AB_RECORD_CODE_BASE - class
   (-31000 none, -31001 internal, ... -31010 resource), outside the range
   -32768..-32000 that JSON-RPC and MCP reserve. */
#define AB_RECORD_CODE_BASE (-31000)

/* The frame for outcome o, NUL-terminated, one line ending in "\n"; *len
   (may be NULL) is its length without the NUL.  id_json is the raw JSON of
   the request id (an integer or a string); NULL or anything else gives
   null.  The caller frees the result.  (The MCP server makes the record of
   a background start with it.) */
char *ab_record_frame (const struct ab_outcome *o, const char *id_json, size_t *len);

/* Write the frame to fd as it is made (in writes of 64 KiB): it is never
   held whole. */
int ab_record_write (int fd, const struct ab_outcome *o, const char *id_json, ab_error_t *err);

/* A JSON-RPC error frame with the shape of a setup failure, for failures
   outside any outcome (the MCP server's "worker" step): class cls, errnum,
   step and message. */
char *ab_record_error_frame (const char *id_json, const ab_error_t *e, size_t *len);

#endif
