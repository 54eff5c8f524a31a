/* Symlinks inside a bundle on the way to a bind mount's source.
 *
 * A bind source is opened by path (open_tree follows symlinks), so a
 * symlink inside the bundle decides at create time which host path the
 * container gets; whoever can write the bundle between review and create
 * can point it anywhere. */
#ifndef AB_SPEC_BUNDLE_LINKS_H
#define AB_SPEC_BUNDLE_LINKS_H

#include "runtime/error.h"

/* Whether `source` (relative to bundle_dir, or absolute below it) passes
   through a symlink inside the bundle: 1 with *link_path (the symlink, as
   a path) and *link_target (what it points to) set, caller frees; 0 when
   it does not (also when the source lies outside the bundle or a component
   is missing); -1 with *err on an error other than a missing component. */
int ab_bundle_source_link (const char *bundle_dir, const char *source, char **link_path, char **link_target,
                           ab_error_t *err);

#endif
