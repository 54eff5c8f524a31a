/* The annotations agentbox itself reads (all under `dev.agentbox.`): one
 * table of their names, with their documentation for `features`, and the
 * one parser that types them into struct ab_agentbox (spec/model.h) when a
 * config is parsed.  Nothing else reads their text. */
#ifndef AB_SPEC_ANNOTATIONS_H
#define AB_SPEC_ANNOTATIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "spec/model.h"

#define AB_ANNOT_PREFIX "dev.agentbox."
#define AB_ANNOT_TIMEOUT "dev.agentbox.timeout"
#define AB_ANNOT_TIMEOUT_GRACE "dev.agentbox.timeout.grace"
#define AB_ANNOT_ETC_HOSTS "dev.agentbox.etc-hosts"
#define AB_ANNOT_BIND_NOFOLLOW "dev.agentbox.bind-nofollow"
#define AB_ANNOT_ROOTFS_IDMAP "dev.agentbox.rootfs.idmap"
#define AB_ANNOT_DEGRADED "dev.agentbox.degraded"
#define AB_ANNOT_WS_MODE "dev.agentbox.workspace.mode"
#define AB_ANNOT_WS_DESTINATION "dev.agentbox.workspace.destination"
#define AB_ANNOT_WS_SIZE "dev.agentbox.workspace.size"
#define AB_ANNOT_WS_CHANGES "dev.agentbox.workspace.changes"
#define AB_ANNOT_WS_LIST_MAX "dev.agentbox.workspace.list-max"
#define AB_ANNOT_LANDLOCK "dev.agentbox.landlock"
#define AB_ANNOT_FALLBACK "dev.agentbox.fallback"
#define AB_ANNOT_NET_WALL "dev.agentbox.net.wall"
/* AB_ANNOT_NET_ALLOW, AB_ANNOT_NET_ALLOW_DOMAINS, AB_ANNOT_NET_DENY_DOMAINS
   and AB_ANNOT_NET_PINS are in spec/netpolicy.h, with their grammars. */

struct ab_annotation_info
{
  const char *key;
  const char *doc; /* one line, for features.json */
};

/* NULL-terminated. */
const struct ab_annotation_info *ab_annotations_known (void);

/* Type every dev.agentbox.* annotation of s into s->agentbox and
   s->workspace (the parser
   calls it once).  Never fails: what does not parse is kept as an error
   message there, for the validator and `audit`. */
void ab_annotations_type (struct ab_spec *s);
void ab_agentbox_free (struct ab_agentbox *a);

/* The validator's part: the first annotation that did not parse (an
   unknown key under our prefix, a malformed value), and what the typed
   values need from the rest of the config (namespaces, mappings). */
int ab_annotations_validate (const struct ab_spec *s, ab_error_t *err);

/* s->workspace (dev.agentbox.workspace.*, typed by ab_annotations_type
   with the rest: a malformed value, or an overlay without a bind mount at
   its destination, is its error). */
void ab_workspace_free (struct ab_workspace *w);
/* The workspace mode these annotations ask for (enum ab_ws_mode), -1 for
   an unknown one: the grammar type_workspace applies, for a reader of a
   created container's stored annotations (`state`). */
int ab_ws_mode_of (const struct ab_kvlist *annotations);

/* A duration: "30", "30s", "1500ms", "2m", "1h".  Milliseconds. */
int ab_parse_duration_ms (const char *s, uint64_t *out);

#endif
