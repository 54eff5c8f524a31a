/* The overlay of an overlay-mode workspace: a mount mechanism, like the
 * id-mapped binds of runtime/idmap.h.  The parent (root in the initial user
 * namespace: the overlay's mounter, whose credentials the kernel uses for
 * copy-up) builds it as a detached mount and sends it to the child in
 * place of the workspace's bind tree:
 *   lower  the tree the plain bind would have been (id-mapped the same
 *          way, so the container sees the same owners), made read-only;
 *   upper  <layer>/upper and <layer>/work, NOT id-mapped: the mounter must
 *          create work/work and copy-up temporaries as itself, which an
 *          id mapping without host root would refuse (EOVERFLOW).  The
 *          upper keeps host ids (the container's root is host 100000
 *          there); applying maps them back (runtime/wsapply.h).
 * Options: redirect_dir, metacopy and index off, so that every upper entry
 * is complete in itself (runtime/wsdiff.h reads it without the overlay). */
#ifndef AB_RUNTIME_MOUNT_OVERLAY_H
#define AB_RUNTIME_MOUNT_OVERLAY_H

#include "base/error.h"

/* A detached overlay mount (an fd for move_mount) of lower_tree (a
   detached or attached tree; made read-only here) under the upper/ and
   work/ directories of layer_fd, whose path (in our mount namespace) is
   layer_path.  `what` names the mount in messages. */
int ab_overlay_tree (int lower_tree, int layer_fd, const char *layer_path, const char *what, ab_error_t *err);

#endif
