/* The hardened default profile (see spec/defaults.h).  Each value carries
 * the reason it is what it is; the member order follows config.md so the
 * document reads like the specification. */
#include "config.h"

#include "base/util.h"
#include "spec/annotations.h"
#include "spec/defaults.h"
#include "spec/model.h"
#include "spec/seccomp_default.h"
#include "spec/tables.h"

/* Host IDs of the container's user namespace when agentbox runs as root:
   the conventional first subordinate range (/etc/subuid), 65536 IDs so that
   package managers find every ID they chown to.  Container root is host
   100000, a user that owns nothing on the host. */
#define HOST_ID_BASE 100000
#define HOST_ID_COUNT 65536

struct mount_entry
{
  const char *destination;
  const char *type;
  const char *source;
  const char *options[8];
};

/* The mounts every program expects, each as tight as it can be and still
   work (nosuid everywhere; noexec and nodev wherever nothing is run or no
   device lives). */
static const struct mount_entry mounts[] = {
  /* The container's own PID namespace; masked and read-only paths below. */
  { "/proc", "proc", "proc", { "nosuid", "noexec", "nodev" } },
  /* A private /dev on tmpfs: only the device nodes the runtime creates
     (null, zero, full, random, urandom, tty, ptmx), never the host's. */
  { "/dev", "tmpfs", "tmpfs", { "nosuid", "strictatime", "mode=755", "size=65536k" } },
  /* A new devpts instance, so no pty of the host is reachable. */
  { "/dev/pts", "devpts", "devpts", { "nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620" } },
  /* POSIX shared memory, bounded (size= from the options: 64 MiB); the
     sticky bit as on any host. */
  { "/dev/shm", "tmpfs", "shm", { "nosuid", "noexec", "nodev", "mode=1777", NULL } },
  /* POSIX message queues of the container's IPC namespace. */
  { "/dev/mqueue", "mqueue", "mqueue", { "nosuid", "noexec", "nodev" } },
  /* sysfs of the container's network namespace, read-only. */
  { "/sys", "sysfs", "sysfs", { "nosuid", "noexec", "nodev", "ro" } },
  /* The one writable scratch place on a read-only root: 256 MiB (size=
     from the options), and executable because build tools and test suites
     run what they compile. */
  { "/tmp", "tmpfs", "tmpfs", { "nosuid", "nodev", "mode=1777", NULL } },
};

/* runc's default list: files that leak host information (kcore, keys,
   timer and scheduler internals) or reach hardware and firmware. */
static const char *const masked_paths[] = {
  "/proc/acpi",        "/proc/asound",        "/proc/interrupts", "/proc/kcore",
  "/proc/keys",        "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats",
  "/proc/sched_debug", "/proc/scsi",          "/sys/firmware",    "/sys/devices/virtual/powercap",
};

/* Kernel knobs that are global or write to hardware: visible, not writable. */
static const char *const readonly_paths[] = {
  "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger",
};

const char *const *
ab_default_masked_paths (size_t *n)
{
  *n = AB_ARRAY_SIZE (masked_paths);
  return masked_paths;
}

const char *const *
ab_default_readonly_paths (size_t *n)
{
  *n = AB_ARRAY_SIZE (readonly_paths);
  return readonly_paths;
}

static void
gen_strings (struct ab_gen *g, const char *key, const char *const *v, size_t n)
{
  ab_gen_kv_strv (g, key, (char *const *)v, n);
}

static void
gen_process (struct ab_gen *g, const struct ab_default_opts *o)
{
  static const char *const sh[] = { "sh", NULL };
  /* A PATH that finds the tools of every common distribution; HOME for
     root; TERM for programs that look at it even without a terminal;
     LANG so Python and friends speak UTF-8. */
  static const char *const env[] = {
    "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "HOME=/root",
    "TERM=xterm",
    "LANG=C.UTF-8",
  };
  const char *const *args = o->args != NULL && o->args[0] != NULL ? o->args : sh;
  size_t nargs = 0;
  _cleanup_strv_ struct ab_strv envs = { 0 };

  while (args[nargs] != NULL)
    nargs++;
  for (size_t i = 0; i < AB_ARRAY_SIZE (env); i++)
    ab_strv_push (&envs, env[i]);
  for (size_t i = 0; o->env && i < o->env->n; i++)
    {
      /* a later NAME= replaces the earlier one in place */
      const char *e = o->env->v[i], *eq = strchr (e, '=');
      size_t nl = eq ? (size_t)(eq - e) : strlen (e), k;
      for (k = 0; k < envs.n; k++)
        if (strncmp (envs.v[k], e, nl) == 0 && envs.v[k][nl] == '=')
          break;
      if (k == envs.n)
        ab_strv_push (&envs, e);
      else
        {
          free (envs.v[k]);
          envs.v[k] = xstrdup (e);
        }
    }
  ab_gen_key (g, "process");
  ab_gen_obj_open (g);
  /* A tool call is driven through pipes and returns a record; a terminal
     would also hand the process a tty to play with.  A person at one asks
     for it (run --default --tty). */
  ab_gen_kv_bool (g, "terminal", o && o->terminal);
  /* Root inside the user namespace only: it owns the container's files and
     nothing on the host (container 0 is host 100000, or the invoking user
     when rootless). */
  ab_gen_key (g, "user");
  ab_gen_obj_open (g);
  ab_gen_kv_u64 (g, "uid", 0);
  ab_gen_kv_u64 (g, "gid", 0);
  ab_gen_obj_close (g);
  gen_strings (g, "args", args, nargs);
  gen_strings (g, "env", (const char *const *)envs.v, envs.n);
  ab_gen_kv_str (g, "cwd", o->cwd ? o->cwd : "/");
  /* All five sets present and empty: an omitted set would mean "inherit",
     and a non-empty bounding set lets a later exec of a file with
     capabilities get them back. */
  ab_gen_key (g, "capabilities");
  ab_gen_obj_open (g);
  for (int k = 0; k < AB_CAP__SETS; k++)
    gen_strings (g, ab_capset_name (k), NULL, 0);
  ab_gen_obj_close (g);
  ab_gen_key (g, "rlimits");
  ab_gen_arr_open (g);
  {
    /* NOFILE 1024: what select() can handle and plenty for build tools.
       CORE 0: a crash leaves no file behind that could fill the disk or
       leak memory.  FSIZE 1 GiB: one runaway write cannot fill the disk.
       (NOFILE and FSIZE: the caller's values when it gives them.)
       No NPROC: it counts per host uid across containers; the pids cgroup
       limits the container instead. */
    const struct
    {
      const char *type;
      uint64_t limit;
    } rl[] = { { "RLIMIT_NOFILE", o->open_files ? o->open_files : AB_DEFAULT_OPEN_FILES },
               { "RLIMIT_CORE", 0 },
               { "RLIMIT_FSIZE", o->file_size ? o->file_size : AB_DEFAULT_FILE_SIZE } };
    for (size_t i = 0; i < AB_ARRAY_SIZE (rl); i++)
      {
        ab_gen_obj_open (g);
        ab_gen_kv_str (g, "type", rl[i].type);
        ab_gen_kv_u64 (g, "hard", rl[i].limit);
        ab_gen_kv_u64 (g, "soft", rl[i].limit);
        ab_gen_obj_close (g);
      }
  }
  ab_gen_arr_close (g);
  /* No setuid binary or file capability can raise privileges after exec;
     also what lets seccomp be installed without CAP_SYS_ADMIN. */
  ab_gen_kv_bool (g, "noNewPrivileges", true);
  ab_gen_obj_close (g);
}

static void
gen_idmap (struct ab_gen *g, const char *key, uint64_t container, uint64_t host, uint64_t size)
{
  ab_gen_key (g, key);
  ab_gen_arr_open (g);
  ab_gen_obj_open (g);
  ab_gen_kv_u64 (g, "containerID", container);
  ab_gen_kv_u64 (g, "hostID", host);
  ab_gen_kv_u64 (g, "size", size);
  ab_gen_obj_close (g);
  ab_gen_arr_close (g);
}

void
ab_gen_idmaps (struct ab_gen *g, const char *key, const struct ab_idmaps *m)
{
  ab_gen_key (g, key);
  ab_gen_arr_open (g);
  for (size_t i = 0; i < m->n; i++)
    {
      ab_gen_obj_open (g);
      ab_gen_kv_u64 (g, "containerID", m->v[i].container_id);
      ab_gen_kv_u64 (g, "hostID", m->v[i].host_id);
      ab_gen_kv_u64 (g, "size", m->v[i].size);
      ab_gen_obj_close (g);
    }
  ab_gen_arr_close (g);
}

static void
gen_mount (struct ab_gen *g, const char *dest, const char *type, const char *source, const char *const *opts,
           size_t n)
{
  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "destination", dest);
  ab_gen_kv_str (g, "type", type);
  ab_gen_kv_str (g, "source", source);
  gen_strings (g, "options", opts, n);
}

/* The host id the container's root is (linux.uidMappings' and
   gidMappings' containerID 0, as gen_linux writes them). */
static uint64_t
root_host_id (const struct ab_default_opts *o, bool gid)
{
  if (o->rootless)
    return gid ? (uint64_t)o->gid : (uint64_t)o->uid;
  return HOST_ID_BASE;
}

static void
gen_mounts (struct ab_gen *g, const struct ab_default_opts *o)
{
  ab_gen_key (g, "mounts");
  ab_gen_arr_open (g);
  for (size_t i = 0; i < AB_ARRAY_SIZE (mounts); i++)
    {
      const char *opts[AB_ARRAY_SIZE (mounts[i].options) + 1];
      _cleanup_free_ char *size = NULL;
      size_t n = 0;
      while (n < AB_ARRAY_SIZE (mounts[i].options) && mounts[i].options[n] != NULL)
        {
          opts[n] = mounts[i].options[n];
          n++;
        }
      /* the two bounded scratch places take their size from the options */
      if (strcmp (mounts[i].destination, "/tmp") == 0)
        size = xasprintf ("size=%llu", (unsigned long long)(o->tmp_size ? o->tmp_size : AB_DEFAULT_TMP_SIZE));
      else if (strcmp (mounts[i].destination, "/dev/shm") == 0)
        size = o->shm_size ? xasprintf ("size=%llu", (unsigned long long)o->shm_size)
                           : xasprintf ("size=%lluk", (unsigned long long)(AB_DEFAULT_SHM_SIZE >> 10));
      if (size)
        opts[n++] = size;
      gen_mount (g, mounts[i].destination, mounts[i].type, mounts[i].source, opts, n);
      ab_gen_obj_close (g);
    }
  for (size_t i = 0; i < o->n_mounts; i++)
    {
      const struct ab_default_mount *m = &o->mounts[i];
      gen_mount (g, m->destination, m->type, m->source, m->options, m->n_options);
      if (m->map_owner)
        {
          gen_idmap (g, "uidMappings", m->owner_uid, root_host_id (o, false), 1);
          gen_idmap (g, "gidMappings", m->owner_gid, root_host_id (o, true), 1);
        }
      ab_gen_obj_close (g);
    }
  ab_gen_arr_close (g);
}

static void
gen_memory (struct ab_gen *g, uint64_t bytes)
{
  ab_gen_key (g, "memory");
  ab_gen_obj_open (g);
  ab_gen_kv_i64 (g, "limit", (int64_t)bytes);
  ab_gen_kv_i64 (g, "swap", (int64_t)bytes);
  ab_gen_obj_close (g);
}

static void
gen_pids (struct ab_gen *g, int64_t limit)
{
  ab_gen_key (g, "pids");
  ab_gen_obj_open (g);
  ab_gen_kv_i64 (g, "limit", limit);
  ab_gen_obj_close (g);
}

static void
gen_resources (struct ab_gen *g, const struct ab_default_opts *o)
{
  ab_gen_key (g, "resources");
  ab_gen_obj_open (g);
  if (o->rootless)
    {
      /* only the limits the caller asked for (gen_linux) */
      if (o->memory)
        gen_memory (g, o->memory);
      if (o->pids)
        gen_pids (g, o->pids);
      ab_gen_obj_close (g);
      return;
    }
  /* Deny every device, then the runtime allows only the default nodes it
     creates itself: no raw disk or /dev/mem even if one shows up. */
  ab_gen_key (g, "devices");
  ab_gen_arr_open (g);
  ab_gen_obj_open (g);
  ab_gen_kv_bool (g, "allow", false);
  ab_gen_kv_str (g, "access", "rwm");
  ab_gen_obj_close (g);
  ab_gen_arr_close (g);
  /* 1 GiB, and swap equal to the limit (memory+swap), i.e. no swap: a
     runaway allocation is OOM-killed in the container instead of pushing
     the host into swap. */
  gen_memory (g, o->memory ? o->memory : AB_DEFAULT_MEMORY);
  /* 512 tasks: enough for make -j and a test runner's workers; a fork bomb
     stops here and the host keeps running. */
  gen_pids (g, o->pids ? o->pids : AB_DEFAULT_PIDS);
  ab_gen_obj_close (g);
}

static void
gen_linux (struct ab_gen *g, const struct ab_default_opts *o)
{
  /* Every namespace new: nothing of the host's processes, network, IPC,
     hostname, mounts, users, cgroup tree or clocks is shared. */
  static const int ns[] = { AB_NS_PID, AB_NS_NET, AB_NS_IPC, AB_NS_UTS, AB_NS_MOUNT, AB_NS_USER, AB_NS_CGROUP, AB_NS_TIME };

  ab_gen_key (g, "linux");
  ab_gen_obj_open (g);
  ab_gen_key (g, "namespaces");
  ab_gen_arr_open (g);
  for (size_t i = 0; i < AB_ARRAY_SIZE (ns); i++)
    {
      ab_gen_obj_open (g);
      ab_gen_kv_str (g, "type", ab_ns_name (ns[i]));
      ab_gen_obj_close (g);
    }
  ab_gen_arr_close (g);
  /* Rootless: an unprivileged user may map only itself (one ID) without
     setuid helpers, and with newuidmap/newgidmap its subordinate ranges
     after it (the caller says which: uid_map, gid_map); as root: the
     conventional subordinate range. */
  if (o->rootless && o->uid_map && o->gid_map)
    {
      ab_gen_idmaps (g, "uidMappings", o->uid_map);
      ab_gen_idmaps (g, "gidMappings", o->gid_map);
    }
  else if (o->rootless)
    {
      gen_idmap (g, "uidMappings", 0, (uint64_t)o->uid, 1);
      gen_idmap (g, "gidMappings", 0, (uint64_t)o->gid, 1);
    }
  else
    {
      gen_idmap (g, "uidMappings", 0, HOST_ID_BASE, HOST_ID_COUNT);
      gen_idmap (g, "gidMappings", 0, HOST_ID_BASE, HOST_ID_COUNT);
    }
  /* Rootless gets no resources (but the limits a caller asks for): on
     cgroup v1 an unprivileged user cannot create or limit cgroups, and the
     spec says to omit what cannot apply. */
  if (!o->rootless || o->memory || o->pids)
    gen_resources (g, o);
  ab_gen_key (g, "maskedPaths");
  ab_gen_arr_open (g);
  for (size_t i = 0; i < AB_ARRAY_SIZE (masked_paths); i++)
    ab_gen_str (g, masked_paths[i]);
  for (size_t i = 0; i < o->n_masked; i++)
    ab_gen_str (g, o->masked[i]);
  ab_gen_arr_close (g);
  gen_strings (g, "readonlyPaths", readonly_paths, AB_ARRAY_SIZE (readonly_paths));
  ab_gen_key (g, "seccomp");
  ab_seccomp_default_gen (g);
  ab_gen_obj_close (g);
}

/* Emit the document object at the current position of g. */
static void
ab_spec_default_gen (struct ab_gen *g, const struct ab_default_opts *o)
{
  static const struct ab_default_opts none = { 0 };

  if (o == NULL)
    o = &none;
  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "ociVersion", AB_OCI_VERSION);
  gen_process (g, o);
  /* The image is read-only: a tool call writes only to /tmp and to the
     mounts its caller adds, so nothing it does survives in the image. */
  ab_gen_key (g, "root");
  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "path", o->root_path ? o->root_path : "rootfs");
  ab_gen_kv_bool (g, "readonly", true);
  ab_gen_obj_close (g);
  /* A fixed name in the container's own UTS namespace: the host's name is
     not leaked to the agent. */
  ab_gen_kv_str (g, "hostname", "agentbox");
  ab_gen_key (g, "annotations");
  ab_gen_obj_open (g);
  /* Landlock from the mount plan (spec/landlock.h): a mount made writable
     by mistake stays read-only for the program, and TCP goes only where
     the egress policy lets it.  An annotation of the caller's says
     otherwise. */
  if (o->annotations == NULL || ab_kvlist_get (o->annotations, AB_ANNOT_LANDLOCK) == NULL)
    ab_gen_kv_str (g, AB_ANNOT_LANDLOCK, "auto");
  /* An image owned by host root, seen owned by the container's root
     through the mapping: it works with nothing chowned.  The root stays
     read-only above, so the container's root cannot change the image's
     files. */
  if (o->idmap_rootfs)
    ab_gen_kv_str (g, AB_ANNOT_ROOTFS_IDMAP, "true");
  for (size_t i = 0; o->annotations && i < o->annotations->n; i++)
    if (!o->idmap_rootfs || strcmp (o->annotations->v[i].key, AB_ANNOT_ROOTFS_IDMAP) != 0)
      ab_gen_kv_str (g, o->annotations->v[i].key, o->annotations->v[i].value);
  ab_gen_obj_close (g);
  gen_mounts (g, o);
  gen_linux (g, o);
  ab_gen_obj_close (g);
}

/* yajl's beautifier writes an empty array as "[", an empty line and the
   indented "]"; the five empty capability sets read better as "[]".  Raw
   newlines only occur between tokens (strings escape theirs), so this
   cannot touch a value. */
static size_t
compact_empty_arrays (char *s, size_t len)
{
  size_t o = 0;

  for (size_t i = 0; i < len; i++)
    {
      s[o++] = s[i];
      if (s[i] == '[' && i + 2 < len && s[i + 1] == '\n' && s[i + 2] == '\n')
        {
          size_t j = i + 3;
          while (j < len && s[j] == ' ')
            j++;
          if (j < len && s[j] == ']')
            {
              s[o++] = ']';
              i = j;
            }
        }
    }
  s[o] = '\0';
  return o;
}

char *
ab_spec_default_json (const struct ab_default_opts *o, size_t *len)
{
  _cleanup_gen_ struct ab_gen *g = ab_gen_new (true);
  const char *buf;
  char *doc;
  size_t n;

  ab_spec_default_gen (g, o);
  /* yajl's beautifier already ends the document with a newline: add one
     only if it did not, so there is exactly one. */
  buf = ab_gen_buf (g, &n);
  doc = ab_gen_steal (g, n == 0 || buf[n - 1] != '\n', &n);
  n = compact_empty_arrays (doc, n);
  if (len != NULL)
    *len = n;
  return doc;
}
