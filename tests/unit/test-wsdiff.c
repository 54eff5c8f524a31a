/* The change list (runtime/wsdiff.h) of upper layers made by hand, as an
 * overlay mounted by a mounter without CAP_SYS_ADMIN (userxattr) or a
 * hostile tool would leave them: whiteouts, opaque directories with the
 * trusted.* and the user.* xattr, origin marks, a fifo, symlinks leading in
 * and out, a redirect agentbox's overlay never makes.  Needs root (mknod of
 * a whiteout, trusted.* xattrs). */
#include "config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "base/util.h"
#include "runtime/wsdiff.c" /* ws_kind_name is static */
#include "base/gen.h"
#include "tests/unit/tap.h"

static char top[64];

static void
put (const char *rel, const char *data)
{
  char p[256];
  int fd;

  snprintf (p, sizeof p, "%s/%s", top, rel);
  fd = open (p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || write (fd, data, strlen (data)) < 0)
    abort ();
  close (fd);
}

static void
dir (const char *rel)
{
  char p[256];

  snprintf (p, sizeof p, "%s/%s", top, rel);
  if (mkdir (p, 0755) < 0)
    abort ();
}

static int
xattr (const char *rel, const char *key, const char *value)
{
  char p[256];

  snprintf (p, sizeof p, "%s/%s", top, rel);
  return lsetxattr (p, key, value, strlen (value), 0);
}

static void
whiteout (const char *rel)
{
  char p[256];

  snprintf (p, sizeof p, "%s/%s", top, rel);
  if (mknod (p, S_IFCHR | 0, makedev (0, 0)) < 0)
    abort ();
}

/* "kind path type [target outside]" lines of the list. */
static char *
lines (const struct ab_ws_changes *c)
{
  size_t cap = 4096, len = 0, i;
  char *out = xzalloc (cap);

  for (i = 0; i < c->n; i++)
    {
      const struct ab_ws_change *ch = &c->v[i];
      char line[512];
      int n = snprintf (line, sizeof line, "%s %s %s%s%s%s%s%s\n", ws_kind_name (ch->kind), ch->path,
                        ab_ws_type_name (ch->type), ch->target ? " -> " : "", ch->target ? ch->target : "",
                        ch->target && ch->outside ? " (out)" : "", ch->refused ? " refused" : "",
                        ch->inner ? " inner" : "");
      if (len + (size_t)n + 1 > cap)
        out = xrealloc (out, cap *= 2);
      memcpy (out + len, line, (size_t)n + 1);
      len += (size_t)n;
    }
  return out;
}

int
main (void)
{
  struct ab_ws_changes c;
  ab_error_t err = { 0 };
  _cleanup_close_ int up = -1, low = -1;
  _cleanup_free_ char *got = NULL;
  struct timespec old[2] = { { 1000, 0 }, { 1000, 0 } };
  char p[256];

  if (geteuid () != 0)
    {
      printf ("1..0 # SKIP needs root (whiteouts, trusted.* xattrs)\n");
      return 0;
    }
  snprintf (top, sizeof top, "/tmp/ab-wsdiff.XXXXXX");
  if (mkdtemp (top) == NULL)
    abort ();

  /* the workspace */
  dir ("low");
  put ("low/a.txt", "alpha\n");
  put ("low/b.txt", "bravo\n");
  put ("low/same.txt", "same\n");
  put ("low/chmod.sh", "#!/bin/sh\n");
  dir ("low/t");
  put ("low/t/x", "x\n");
  dir ("low/u");
  put ("low/u/y", "y\n");
  dir ("low/m");
  put ("low/m/keep", "k\n");
  put ("low/f2d", "file\n");
  snprintf (p, sizeof p, "%s/low/same.txt", top);
  utimensat (AT_FDCWD, p, old, 0);

  /* the upper layer */
  dir ("up");
  put ("up/a.txt", "alpha, changed\n");               /* modified */
  whiteout ("up/b.txt");                                /* deleted */
  whiteout ("up/never-there");                          /* deletes nothing */
  put ("up/same.txt", "same\n");                        /* copied up, unchanged: nothing */
  snprintf (p, sizeof p, "%s/up/same.txt", top);
  utimensat (AT_FDCWD, p, old, 0);
  put ("up/chmod.sh", "#!/bin/sh\n");                   /* mode changed */
  snprintf (p, sizeof p, "%s/up/chmod.sh", top);
  chmod (p, 0755);
  snprintf (p, sizeof p, "%s/low/chmod.sh", top);
  {
    struct stat st;
    stat (p, &st);
    snprintf (p, sizeof p, "%s/up/chmod.sh", top);
    struct timespec ts[2] = { st.st_atim, st.st_mtim };
    utimensat (AT_FDCWD, p, ts, 0);
  }
  dir ("up/t");                                         /* replaced (trusted.*) */
  put ("up/t/new", "n\n");
  ok (xattr ("up/t", "trusted.overlay.opaque", "y") == 0, "(trusted.overlay.opaque set)");
  dir ("up/u");                                         /* replaced (user.*, a userxattr overlay) */
  ok (xattr ("up/u", "user.overlay.opaque", "y") == 0, "(user.overlay.opaque set)");
  dir ("up/m");                                         /* merged: only its new file */
  put ("up/m/add", "add\n");
  ok (xattr ("up/m", "trusted.overlay.opaque", "x") == 0, "(opaque \"x\": xwhiteouts, not opaque)");
  dir ("up/f2d");                                       /* a file became a directory */
  put ("up/f2d/in", "in\n");
  dir ("up/newdir");
  dir ("up/newdir/deep");
  put ("up/newdir/deep/z", "z\n");
  whiteout ("up/newdir/ghost");                         /* in a new directory: nothing */
  snprintf (p, sizeof p, "%s/up/fifo", top);
  mkfifo (p, 0644);
  snprintf (p, sizeof p, "%s/up/in", top);
  symlink ("newdir/deep/z", p);
  snprintf (p, sizeof p, "%s/up/newdir/deep/up2", top);
  symlink ("../../a.txt", p);
  snprintf (p, sizeof p, "%s/up/newdir/deep/out", top);
  symlink ("../../../x", p);
  snprintf (p, sizeof p, "%s/up/abs", top);
  symlink ("/etc/passwd", p);

  snprintf (p, sizeof p, "%s/up", top);
  up = open (p, O_RDONLY | O_DIRECTORY);
  snprintf (p, sizeof p, "%s/low", top);
  low = open (p, O_RDONLY | O_DIRECTORY);
  ok (ab_ws_diff (up, low, 0, &c, &err) == 0, "the change list of a hand-made upper layer: %s", err.msg);
  got = lines (&c);
  is_str (got,
          "modified a.txt file\n"
          "created abs symlink -> /etc/passwd (out)\n"
          "deleted b.txt file\n"
          "mode-changed chmod.sh file\n"
          "type-changed f2d directory\n"
          "created f2d/in file inner\n"
          "created fifo fifo refused\n"
          "created in symlink -> newdir/deep/z\n"
          "created m/add file\n"
          "created newdir directory\n"
          "created newdir/deep directory inner\n"
          "created newdir/deep/out symlink -> ../../../x (out) inner\n"
          "created newdir/deep/up2 symlink -> ../../a.txt inner\n"
          "created newdir/deep/z file inner\n"
          "replaced t directory\n"
          "created t/new file inner\n"
          "replaced u directory\n",
          "every kind read right: trusted.* and user.* opaque directories, an \"x\" one merged, whiteouts "
          "only over something, a copied-up file that did not change left out, symlinks read lexically");
  ok (c.totals[AB_WS_CREATED] == 11 && c.totals[AB_WS_DELETED] == 1 && c.totals[AB_WS_REPLACED] == 2
          && c.totals[AB_WS_MODIFIED] == 1 && c.totals[AB_WS_MODE_CHANGED] == 1 && c.totals[AB_WS_TYPE_CHANGED] == 1
          && c.refused == 1,
      "totals per kind, one refused");
  {
    _cleanup_gen_ struct ab_gen *g = ab_gen_new (false);
    const char *json;
    ab_gen_obj_open (g);
    ab_ws_changes_gen (g, &c, 2);
    ab_gen_obj_close (g);
    json = ab_gen_buf (g, NULL);
    ok (strstr (json, "\"listed\":5,\"truncated\":true") != NULL
            && strstr (json, "{\"path\":\"b.txt\",\"change\":\"deleted\"") != NULL
            && strstr (json, "{\"path\":\"t\",\"change\":\"replaced\"") != NULL
            && strstr (json, "{\"path\":\"u\",\"change\":\"replaced\"") != NULL,
        "capped at 2, the deletion and both replaced directories are listed all the same: %s", json);
  }
  ab_ws_changes_free (&c);

  /* A redirect (a directory renamed by an overlay with redirect_dir on)
     cannot be read without the lower layers' layout: refused. */
  ok (xattr ("up/m", "trusted.overlay.redirect", "/elsewhere") == 0, "(a redirect xattr set)");
  ok (ab_ws_diff (up, low, 0, &c, &err) < 0 && strstr (err.msg, "overlay redirect") != NULL,
      "an upper directory with an overlay redirect is refused: %s", err.msg);

  ab_rm_tree_at (AT_FDCWD, top, 64);
  return tap_done ();
}
