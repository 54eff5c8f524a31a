/* Symlinks inside a bundle on the way to a bind source (spec/bundle-links.h).
 *
 * A minimal lstat walk of the source's components below the bundle
 * directory, one component at a time with O_NOFOLLOW semantics: nothing is
 * followed, so the walk itself cannot be led out of the bundle. */
#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include "runtime/util.h"
#include "spec/bundle-links.h"

/* The part of source below bundle_dir ("" for the bundle itself), or NULL
   when the source lies outside. */
static const char *
below_bundle (const char *bundle_dir, const char *source)
{
  size_t n = strlen (bundle_dir);

  if (source[0] != '/')
    return source;
  while (n > 1 && bundle_dir[n - 1] == '/')
    n--;
  if (strncmp (source, bundle_dir, n) != 0 || (source[n] != '/' && source[n] != '\0'))
    return NULL;
  return source + n;
}

int
ab_bundle_source_link (const char *bundle_dir, const char *source, char **link_path, char **link_target,
                       ab_error_t *err)
{
  _cleanup_close_ int dirfd = -1;
  _cleanup_free_ char *rest = NULL, *walked = NULL;
  const char *rel;
  char *comp, *save = NULL;

  *link_path = *link_target = NULL;
  if (bundle_dir == NULL || source == NULL || (rel = below_bundle (bundle_dir, source)) == NULL)
    return 0;
  dirfd = open (bundle_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0)
    return ab_error_setc (err, AB_EC_CONFIG, errno, "bundle `%s`", bundle_dir);
  rest = xstrdup (rel);
  walked = xstrdup (bundle_dir);
  for (comp = strtok_r (rest, "/", &save); comp != NULL; comp = strtok_r (NULL, "/", &save))
    {
      struct stat st;
      char *next;
      int fd;

      /* ".." would leave the walk's directory: the source then lies (or may
         lie) outside the bundle, which is not this function's question. */
      if (strcmp (comp, ".") == 0)
        continue;
      if (strcmp (comp, "..") == 0)
        return 0;
      if (fstatat (dirfd, comp, &st, AT_SYMLINK_NOFOLLOW) < 0)
        {
          if (errno == ENOENT || errno == ENOTDIR)
            return 0;
          return ab_error_setc (err, AB_EC_CONFIG, errno, "bind source `%s`: stat `%s/%s`", source, walked,
                                comp);
        }
      next = xasprintf ("%s/%s", strcmp (walked, "/") == 0 ? "" : walked, comp);
      free (walked);
      walked = next;
      if (S_ISLNK (st.st_mode))
        {
          char target[PATH_MAX];
          ssize_t n = readlinkat (dirfd, comp, target, sizeof target - 1);
          if (n < 0)
            return ab_error_setc (err, AB_EC_CONFIG, errno, "bind source `%s`: readlink `%s`", source,
                                  walked);
          target[n] = '\0';
          *link_path = ab_steal_ptr (&walked);
          *link_target = xstrdup (target);
          return 1;
        }
      if (!S_ISDIR (st.st_mode))
        return 0;
      fd = openat (dirfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0)
        return ab_error_setc (err, AB_EC_CONFIG, errno, "bind source `%s`: open `%s`", source, walked);
      close (dirfd);
      dirfd = fd;
    }
  return 0;
}
