#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "tests/unit/test-cgroup-util.h"

int t_mode;
bool t_ns;
char t_prefix[32];

static char *own_dirs[32];
static char *own_ctrls[32];
static size_t n_own;

static void
skip_all (const char *why)
{
  printf ("1..0 # SKIP %s\n", why);
  exit (0);
}

static void
find_own_dirs (void)
{
  struct ab_cg_host h = { 0 };
  ab_error_t err;
  size_t i, j;

  if (ab_cg_host_read (&h, &err) < 0)
    skip_all (err.msg);
  for (i = 0; i < h.n_mounts && n_own < 32; i++)
    {
      const struct ab_cg_mount *m = &h.mounts[i];
      bool dup = false;
      for (j = 0; j < n_own; j++)
        dup |= strcmp (own_ctrls[j], m->v2 ? "" : m->controllers) == 0;
      if (dup || (!m->v2 && ab_str_has_prefix (m->controllers, "name=")))
        continue;
      if ((t_mode == AB_CGROUP_V1 && m->v2) || (t_mode == AB_CGROUP_V2 && !m->v2))
        continue;
      for (j = 0; j < h.n_own; j++)
        {
          const struct ab_cg_own *o = &h.own[j];
          char *d;
          if (m->v2 != o->v2 || (!m->v2 && strcmp (o->controllers, m->controllers) != 0))
            continue;
          d = ab_cg_path_to_dir (m->mountpoint, m->root, o->path);
          if (d == NULL)
            continue;
          own_dirs[n_own] = d;
          own_ctrls[n_own++] = xstrdup (m->v2 ? "" : m->controllers);
          break;
        }
    }
  ab_cg_host_free (&h);
}

/* The cgroup layout of this host, as the driver sees it. */
static int
host_mode (void)
{
  struct ab_cg_host h = { 0 };
  ab_error_t err;
  int mode;

  if (ab_cg_host_read (&h, &err) < 0)
    return AB_CGROUP_NONE;
  mode = ab_cg_host_mode_of (&h);
  ab_cg_host_free (&h);
  return mode;
}

static void
at_exit (void)
{
  t_cleanup ();
}

void
t_init (int argc, char **argv)
{
  const char *want = "hybrid";
  int i;

  for (i = 1; i < argc; i++)
    {
      if (ab_str_has_prefix (argv[i], "--mode="))
        want = argv[i] + 7;
      else if (strcmp (argv[i], "--ns") == 0)
        t_ns = true;
    }
  t_mode = strcmp (want, "v2") == 0   ? AB_CGROUP_V2
           : strcmp (want, "v1") == 0 ? AB_CGROUP_V1
                                      : AB_CGROUP_HYBRID;
  setvbuf (stdout, NULL, _IOLBF, 0);
  if (geteuid () != 0)
    skip_all ("needs root to make cgroups");
  if (host_mode () != t_mode)
    {
      char why[64];
      snprintf (why, sizeof why, "the host's cgroup layout is not %s", want);
      skip_all (why);
    }
  snprintf (t_prefix, sizeof t_prefix, "abt%d", (int)getpid ());
  find_own_dirs ();
  if (n_own == 0)
    skip_all ("no cgroup hierarchy shows our own cgroup");
  atexit (at_exit);
}

const char *
t_id (void)
{
  static char id[48];
  static int n;

  snprintf (id, sizeof id, "%s-%d", t_prefix, ++n);
  return id;
}

const char *
t_own_dir (const char *ctrl)
{
  size_t i;

  for (i = 0; i < n_own; i++)
    if ((ctrl[0] == '\0' && own_ctrls[i][0] == '\0') || (ctrl[0] && ab_cg_list_has (own_ctrls[i], ctrl)))
      return own_dirs[i];
  return NULL;
}

const char *const *
t_own_dirs (void)
{
  return (const char *const *)own_dirs;
}

static void
walk (const char *dir, int depth, bool mine, struct ab_strv *out)
{
  DIR *d = opendir (dir);
  struct dirent *e;

  if (d == NULL)
    return;
  while ((e = readdir (d)) != NULL)
    {
      _cleanup_free_ char *sub = NULL;
      bool m;
      if (e->d_type != DT_DIR || e->d_name[0] == '.')
        continue;
      m = mine || strstr (e->d_name, t_prefix) != NULL;
      sub = xasprintf ("%s/%s", dir, e->d_name);
      if (m)
        ab_strv_push (out, sub);
      if (depth < 4 && (m || depth == 0))
        walk (sub, depth + 1, m, out);
    }
  closedir (d);
}

static int
cmp_str (const void *a, const void *b)
{
  return strcmp (*(char *const *)a, *(char *const *)b);
}

char *
t_snapshot (void)
{
  struct ab_strv all = { 0 };
  size_t i, len = 1;
  char *s;

  for (i = 0; i < n_own; i++)
    walk (own_dirs[i], 0, false, &all);
  if (all.n)
    qsort (all.v, all.n, sizeof *all.v, cmp_str);
  for (i = 0; i < all.n; i++)
    len += strlen (all.v[i]) + 1;
  s = xzalloc (len);
  for (i = 0; i < all.n; i++)
    {
      strcat (s, all.v[i]);
      strcat (s, "\n");
    }
  ab_strv_free (&all);
  return s;
}

static void
kill_procs (const char *dir)
{
  _cleanup_free_ char *procs = t_read (dir, "cgroup.procs");
  char *line, *save = NULL;

  for (line = procs ? strtok_r (procs, "\n", &save) : NULL; line; line = strtok_r (NULL, "\n", &save))
    kill (atoi (line), SIGKILL);
}

void
t_cleanup (void)
{
  struct ab_strv all = { 0 };
  size_t i;
  int round;

  for (i = 0; i < n_own; i++)
    walk (own_dirs[i], 0, false, &all);
  /* Deepest first: longer paths sort after their parents. */
  if (all.n)
    qsort (all.v, all.n, sizeof *all.v, cmp_str);
  for (i = all.n; i-- > 0;)
    {
      _cleanup_free_ char *fz = t_read (all.v[i], "freezer.state");
      _cleanup_free_ char *v2fz = t_read (all.v[i], "cgroup.freeze");
      if (fz)
        t_write (all.v[i], "freezer.state", "THAWED");
      if (v2fz)
        t_write (all.v[i], "cgroup.freeze", "0");
      kill_procs (all.v[i]);
    }
  for (i = all.n; i-- > 0;)
    for (round = 0; round < 100 && rmdir (all.v[i]) < 0 && errno == EBUSY; round++)
      {
        kill_procs (all.v[i]);
        nanosleep (&(struct timespec){ 0, 10000000 }, NULL);
      }
  ab_strv_free (&all);
}

char *
t_read (const char *dir, const char *file)
{
  _cleanup_free_ char *path = xasprintf ("%s/%s", dir, file);
  char *text = NULL;
  size_t len;
  ab_error_t err;

  if (ab_read_file_at (AT_FDCWD, path, 1 << 20, &text, &len, &err) < 0)
    return NULL;
  while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' '))
    text[--len] = '\0';
  return text;
}

bool
t_exists (const char *path)
{
  struct stat st;
  return stat (path, &st) == 0;
}

int
t_write (const char *dir, const char *file, const char *value)
{
  _cleanup_free_ char *path = xasprintf ("%s/%s", dir, file);
  ab_error_t err;

  return ab_write_file_at (AT_FDCWD, path, value, strlen (value), &err);
}

pid_t
t_spawn (struct ab_cgroup *cg, int (*fn) (void *), void *arg)
{
  int sync[2], cfd = ab_cgroup_clone_fd (cg);
  struct clone_args a = { .exit_signal = SIGCHLD };
  ab_error_t err;
  pid_t pid;
  char c;

  if (pipe2 (sync, O_CLOEXEC) < 0)
    return -1;
  if (cfd >= 0)
    {
      a.flags = CLONE_INTO_CGROUP;
      a.cgroup = (uint64_t)cfd;
    }
  fflush (stdout);
  pid = (pid_t)syscall (SYS_clone3, &a, sizeof a);
  if (pid < 0 && errno == ENOSYS)
    {
      cfd = -1;
      pid = fork ();
    }
  if (pid < 0)
    {
      close (sync[0]);
      close (sync[1]);
      return -1;
    }
  if (pid == 0)
    {
      close (sync[1]);
      if (read (sync[0], &c, 1) != 1)
        _exit (99);
      close (sync[0]);
      _exit (fn (arg));
    }
  close (sync[0]);
  if (ab_cgroup_enter (cg, pid, cfd >= 0, false, &err) < 0)
    {
      printf ("# enter: %s\n", err.msg);
      kill (pid, SIGKILL);
      close (sync[1]);
      t_wait (pid);
      return -1;
    }
  if (write (sync[1], "g", 1) != 1)
    c = 0;
  close (sync[1]);
  return pid;
}

int
t_wait (pid_t pid)
{
  int st;

  while (waitpid (pid, &st, 0) < 0)
    if (errno != EINTR)
      return -1;
  return st;
}

int
t_create (const char *path, const struct ab_resources *r, struct ab_cgroup **cg, ab_error_t *err)
{
  *cg = NULL;
  return t_cgroup_create (path, t_id (), r, cg, err);
}
