/* The annotations agentbox itself reads (all under `dev.agentbox.`): their
 * documentation for `features` and their validation for `validate` and
 * `create`. */
#ifndef AB_SPEC_ANNOTATIONS_H
#define AB_SPEC_ANNOTATIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/error.h"
#include "spec/model.h"

#define AB_ANNOT_PREFIX "dev.agentbox."
#define AB_ANNOT_TIMEOUT "dev.agentbox.timeout"
#define AB_ANNOT_ROOTFS_IDMAP "dev.agentbox.rootfs.idmap"
#define AB_ANNOT_WS_MODE "dev.agentbox.workspace.mode"
#define AB_ANNOT_WS_DESTINATION "dev.agentbox.workspace.destination"
#define AB_ANNOT_WS_SIZE "dev.agentbox.workspace.size"
#define AB_ANNOT_WS_CHANGES "dev.agentbox.workspace.changes"
#define AB_ANNOT_WS_LIST_MAX "dev.agentbox.workspace.list-max"
#define AB_ANNOT_LANDLOCK "dev.agentbox.landlock"
#define AB_ANNOT_FALLBACK "dev.agentbox.fallback"

struct ab_annotation_info
{
  const char *key;
  const char *doc; /* one line, for features.json */
  int (*validate) (const char *value, ab_error_t *err);
};

/* NULL-terminated. */
const struct ab_annotation_info *ab_annotations_known (void);

/* Check every dev.agentbox.* annotation of s: unknown keys under our prefix
   and malformed values are errors naming the annotation. */
int ab_annotations_validate (const struct ab_spec *s, ab_error_t *err);

/* dev.agentbox.rootfs.idmap is "true": the root filesystem is mounted
   id-mapped through the container's user namespace. */
bool ab_annot_rootfs_idmap (const struct ab_spec *s);

/* Fill s->workspace from the dev.agentbox.workspace.* annotations, once,
   when the config is parsed (mounts[] already are): a malformed value, or
   an overlay without a bind mount at its destination, is an error naming
   the annotation. */
int ab_annot_workspace_parse (struct ab_spec *s, ab_error_t *err);
void ab_workspace_free (struct ab_workspace *w);

/* Fill s->landlock and s->fallback from dev.agentbox.landlock and
   dev.agentbox.fallback, once, when the config is parsed: a malformed
   value is an error naming the annotation and the JSON path in it. */
int ab_annot_landlock_parse (struct ab_spec *s, ab_error_t *err);

/* A duration: "30", "30s", "1500ms", "2m", "1h".  Milliseconds. */
int ab_parse_duration_ms (const char *s, uint64_t *out);

#endif
