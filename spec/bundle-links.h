/* Paths of config.json that the runtime opens on the host, against symlinks
 * of the bundle (spec/bundle-links.c).
 *
 * The bundle's content -- above all the rootfs, an image -- is not the
 * config author's: a symlink in it must not take a bind source (or
 * root.path) out of the bundle.  Paths inside the bundle are resolved
 * beneath it; paths outside are the author's and resolved as given; either
 * way once, into an fd the runtime then uses (never the path again). */
#ifndef AB_SPEC_BUNDLE_LINKS_H
#define AB_SPEC_BUNDLE_LINKS_H

#include "base/error.h"

/* Does `source` (absolute, or relative to bundle_dir) pass through a
   symlink inside the bundle?  1: yes, with the link's host path and its
   target in *link_path and *link_target (free them); when several do, the
   first one that leads out of the bundle, else the first one.  0: no
   (also when the path is outside the bundle, or ends early: a missing
   component is for the mount to report).  -1: the bundle cannot be opened
   (*err).  For `agentbox audit` and `validate`. */
int ab_bundle_source_link (const char *bundle_dir, const char *source, char **link_path, char **link_target,
                           ab_error_t *err);

/* Open `path` (absolute, or relative to bundle_dir) O_PATH, following
   symlinks as a bind mount would, except that from the moment the walk
   enters the bundle or the rootfs (either may be NULL) the rest resolves
   beneath it (openat2 RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS): a symlink
   that leads out of it is refused with an error (class config) naming
   `what`, the path and the link.  Returns the fd or -1. */
int ab_bundle_open_path (const char *bundle_dir, const char *rootfs, const char *path, const char *what,
                         ab_error_t *err);
/* The same without its first try, one openat2 of the path as written
   (ab_open_canonical): for a caller that has made that try itself. */
int ab_bundle_walk_path (const char *bundle_dir, const char *rootfs, const char *path, const char *what,
                         ab_error_t *err);

/* Open `path` (absolute) with open(2) flags: beneath the bundle or the
   rootfs (RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS) when its text lies inside
   one of them, as given otherwise -- where it may well be a magic link such
   as /proc/PID/ns/net, the author's to name.  For paths that are no bind
   source: namespace files, the pid file's directory. */
int ab_bundle_open_file (const char *bundle_dir, const char *rootfs, const char *path, int flags, const char *what,
                         ab_error_t *err);

#endif
