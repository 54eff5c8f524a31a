#include "config.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "base/util.h"
#include "runtime/plan/host-ids.h"

#define ID_FILE_MAX (4u << 20)

void
ab_host_ids_read (struct ab_host_ids *h)
{
  struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
  struct __user_cap_data_struct data[2] = { 0 };
  _cleanup_free_ char *map = NULL;
  unsigned a, b, c;

  memset (h, 0, sizeof *h);
  h->uid = geteuid ();
  h->gid = getegid ();
  if (syscall (SYS_capget, &hdr, data) == 0)
    {
      h->cap_setuid = data[0].effective & (1u << CAP_SETUID);
      h->cap_setgid = data[0].effective & (1u << CAP_SETGID);
      h->cap_sys_admin = data[CAP_SYS_ADMIN / 32].effective & (1u << (CAP_SYS_ADMIN % 32));
    }
  /* The initial user namespace maps every id to itself in one line.  A map
     that cannot be read (ENOMEM, EIO) says nothing: root with
     CAP_SYS_ADMIN then stays rootful, whose every step fails plainly where
     it lacks the privilege, rather than turning rootless on an I/O error. */
  if (ab_read_file_at (AT_FDCWD, "/proc/self/uid_map", 4096, &map, NULL, NULL) < 0)
    h->initial_userns = true;
  else
    h->initial_userns = sscanf (map, "%u %u %u", &a, &b, &c) == 3 && a == 0 && b == 0 && c == 4294967295u
                        && strchr (map, '\n') == strrchr (map, '\n');
}

bool
ab_host_rootless (const struct ab_host_ids *h, int opt)
{
  if (opt >= 0)
    return opt == 1;
  return h->uid != 0 || !h->cap_sys_admin || !h->initial_userns;
}

/* Every "NAME:FIRST:COUNT" or "UID:FIRST:COUNT" line of subuid(5) text
   that is the user's (name may be NULL), appended to out. */
static void
ab_subid_parse (const char *text, const char *name, uid_t uid, struct ab_idmaps *out)
{
  _cleanup_free_ char *copy = xstrdup (text);
  char num[16], *save = NULL, *line;

  snprintf (num, sizeof num, "%u", (unsigned) uid);
  for (line = strtok_r (copy, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      char *c1 = strchr (line, ':'), *c2 = c1 ? strchr (c1 + 1, ':') : NULL;
      uint64_t first, count;

      if (c2 == NULL)
        continue;
      *c1 = *c2 = '\0';
      if (!((name && strcmp (line, name) == 0) || strcmp (line, num) == 0))
        continue;
      if (ab_parse_u64 (c1 + 1, &first) < 0 || ab_parse_u64 (c2 + 1, &count) < 0 || count == 0
          || first + count > UINT32_MAX)
        continue;
      out->v = xreallocarray (out->v, out->n + 1, sizeof *out->v);
      out->v[out->n++] = (struct ab_idmap){ .container_id = 0, .host_id = (uint32_t) first, .size = (uint32_t) count };
    }
}

char *
ab_user_name (uid_t uid)
{
  _cleanup_free_ char *buf = NULL, *copy = NULL;
  char *save = NULL, *line;

  if (ab_read_file_at (AT_FDCWD, "/etc/passwd", ID_FILE_MAX, &buf, NULL, NULL) < 0)
    return NULL;
  copy = xstrdup (buf);
  for (line = strtok_r (copy, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      char *f[4] = { line };
      int k;
      uint64_t id;
      for (k = 1; k < 4 && f[k - 1]; k++)
        {
          f[k] = strchr (f[k - 1], ':');
          if (f[k])
            *f[k]++ = '\0';
        }
      if (f[3] == NULL)
        continue;
      *strchrnul (f[3], ':') = '\0';
      if (ab_parse_u64 (f[2], &id) == 0 && id == uid)
        return xstrdup (f[0]);
    }
  return NULL;
}

/* A helper as the administrator installed it: a regular file of root's,
   set-uid, executable. */
static const char *
find_helper (const char *const *paths, size_t n)
{
  struct stat st;

  for (size_t i = 0; i < n; i++)
    if (stat (paths[i], &st) == 0 && S_ISREG (st.st_mode) && st.st_uid == 0 && (st.st_mode & S_ISUID)
        && (st.st_mode & S_IXOTH))
      return paths[i];
  return NULL;
}

void
ab_host_ids_subids (struct ab_host_ids *h)
{
  static const char *const uidmap[] = AB_NEWUIDMAP_PATHS, *const gidmap[] = AB_NEWGIDMAP_PATHS;
  _cleanup_free_ char *name = NULL, *subuid = NULL, *subgid = NULL;

  if (h->subids_read)
    return;
  h->subids_read = true;
  name = ab_user_name (h->uid);
  if (ab_read_file_at (AT_FDCWD, "/etc/subuid", ID_FILE_MAX, &subuid, NULL, NULL) == 0)
    ab_subid_parse (subuid, name, h->uid, &h->subuid);
  if (ab_read_file_at (AT_FDCWD, "/etc/subgid", ID_FILE_MAX, &subgid, NULL, NULL) == 0)
    ab_subid_parse (subgid, name, h->uid, &h->subgid);
  h->newuidmap = find_helper (uidmap, AB_ARRAY_SIZE (uidmap));
  h->newgidmap = find_helper (gidmap, AB_ARRAY_SIZE (gidmap));
}

void
ab_host_ids_free (struct ab_host_ids *h)
{
  free (h->subuid.v);
  free (h->subgid.v);
  h->subuid = h->subgid = (struct ab_idmaps){ 0 };
}

static void
maps_add (struct ab_idmaps *m, uint32_t container, uint32_t host, uint32_t size)
{
  m->v = xreallocarray (m->v, m->n + 1, sizeof *m->v);
  m->v[m->n++] = (struct ab_idmap){ .container_id = container, .host_id = host, .size = size };
}

/* Container 1.. onto the ranges, in order, up to the 32-bit id space. */
static void
maps_add_ranges (struct ab_idmaps *m, const struct ab_idmaps *ranges)
{
  uint64_t next = 1;

  for (size_t i = 0; i < ranges->n && next < UINT32_MAX; i++)
    {
      uint64_t size = ranges->v[i].size;
      if (next + size > UINT32_MAX)
        size = UINT32_MAX - next;
      maps_add (m, (uint32_t) next, ranges->v[i].host_id, (uint32_t) size);
      next += size;
    }
}

void
ab_host_rootless_maps (struct ab_host_ids *h, struct ab_idmaps *uids, struct ab_idmaps *gids, bool *full)
{
  ab_host_ids_subids (h);
  *uids = *gids = (struct ab_idmaps){ 0 };
  maps_add (uids, 0, h->uid, 1);
  maps_add (gids, 0, h->gid, 1);
  *full = h->newuidmap && h->newgidmap && h->subuid.n > 0 && h->subgid.n > 0;
  if (!*full)
    return;
  maps_add_ranges (uids, &h->subuid);
  maps_add_ranges (gids, &h->subgid);
}
