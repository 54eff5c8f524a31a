/* process.capabilities: a forked child (root, as the runtime's child is)
   applies a configuration and then waits on a pipe, or execs a shell that
   waits; the PARENT reads the five sets from /proc/<pid>/status, which is the
   kernel's view, not the child's report. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <signal.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/caps.h"
#include "tests/unit/tap.h"

#define UNPRIV 1000 /* uid and gid the tests switch to */

/* The test's own sets: what the child starts from (the machine may withhold
   some capabilities even from root). */
static struct status self;

struct status
{
  char name[32];
  unsigned uid;
  uint64_t inh, prm, eff, bnd, amb;
};

static bool
read_status (pid_t pid, struct status *st)
{
  char path[64], line[256];
  _cleanup_fclose_ FILE *f = NULL;
  int found = 0;

  memset (st, 0, sizeof *st);
  snprintf (path, sizeof path, "/proc/%d/status", (int)pid);
  f = fopen (path, "re");
  if (f == NULL)
    return false;
  while (fgets (line, sizeof line, f) != NULL)
    {
      found += sscanf (line, "Name:\t%31s", st->name);
      found += sscanf (line, "Uid:\t%u", &st->uid);
      found += sscanf (line, "CapInh:\t%" SCNx64, &st->inh);
      found += sscanf (line, "CapPrm:\t%" SCNx64, &st->prm);
      found += sscanf (line, "CapEff:\t%" SCNx64, &st->eff);
      found += sscanf (line, "CapBnd:\t%" SCNx64, &st->bnd);
      found += sscanf (line, "CapAmb:\t%" SCNx64, &st->amb);
    }
  return found == 7;
}

static void
print_status (const struct status *st)
{
  printf ("#   %s uid %u: CapInh %016" PRIx64 " CapPrm %016" PRIx64 " CapEff %016" PRIx64
          " CapBnd %016" PRIx64 " CapAmb %016" PRIx64 "\n",
          st->name, st->uid, st->inh, st->prm, st->eff, st->bnd, st->amb);
}

static bool
status_is (const struct status *st, uint64_t inh, uint64_t prm, uint64_t eff, uint64_t bnd, uint64_t amb)
{
  if (st->inh == inh && st->prm == prm && st->eff == eff && st->bnd == bnd && st->amb == amb)
    return true;
  print_status (st);
  return false;
}

/* One configuration: which sets are present and what they hold. */
static struct ab_capabilities
caps_all_sets (uint64_t mask)
{
  struct ab_capabilities c;
  int i;

  memset (&c, 0, sizeof c);
  for (i = 0; i < AB_CAP__SETS; i++)
    {
      c.set[i] = true;
      c.mask[i] = mask;
    }
  return c;
}

/* What the child does before it is observed; returns -1 with *err set. */
typedef int (*setup_fn) (const struct ab_capabilities *c, ab_error_t *err);

struct observed
{
  bool ready;               /* the child (or the shell it exec'd) got to the waiting point */
  char msg[AB_ERR_MSG_MAX]; /* the child's error when not ready */
  struct status st;         /* read by us while it waits */
  siginfo_t si;
};

/* The shell run by the exec tests: it says it is there (so the exec has
   completed, credentials included), then waits for us. */
static const char wait_script[] = "echo R >&3; read x <&4";

static void
observe (setup_fn setup, const struct ab_capabilities *c, bool exec_shell, struct observed *o)
{
  int ready[2], go[2];
  char buf[AB_ERR_MSG_MAX + 1];
  ssize_t n;
  pid_t pid;

  memset (o, 0, sizeof *o);
  if (pipe2 (ready, O_CLOEXEC) < 0 || pipe2 (go, O_CLOEXEC) < 0)
    {
      snprintf (o->msg, sizeof o->msg, "pipe: %s", strerror (errno));
      return;
    }
  fflush (stdout);
  pid = fork ();
  if (pid == 0)
    {
      ab_error_t err = { 0 };
      char c1;

      if (setup (c, &err) < 0)
        {
          /* One write (below PIPE_BUF), so that our single read gets it all. */
          snprintf (buf, sizeof buf, "E%s", err.msg);
          ab_write_all (ready[1], buf, strlen (buf));
          _exit (1);
        }
      if (exec_shell)
        {
          /* dup2 clears close-on-exec on the copies. */
          if (dup2 (ready[1], 3) < 0 || dup2 (go[0], 4) < 0)
            _exit (2);
          execl ("/bin/sh", "sh", "-c", wait_script, (char *)NULL);
          ab_write_all (ready[1], "Eexec /bin/sh failed", 20);
          _exit (1);
        }
      ab_write_all (ready[1], "R", 1);
      _exit (read (go[0], &c1, 1) < 0 ? 3 : 0);
    }
  close (ready[1]);
  close (go[0]);
  n = pid < 0 ? -1 : read (ready[0], buf, sizeof buf - 1);
  if (n > 0 && buf[0] == 'R')
    o->ready = read_status (pid, &o->st);
  else if (n > 1)
    snprintf (o->msg, sizeof o->msg, "%.*s", (int)(n - 1), buf + 1);
  /* Release it; a child that failed is gone already (and writing to it
     would raise SIGPIPE here). */
  if (n > 0 && buf[0] == 'R')
    ab_write_all (go[1], "\n", 1);
  close (go[1]);
  close (ready[0]);
  if (pid > 0)
    waitid (P_PID, (id_t)pid, &o->si, WEXITED);
}

/* ---- setups (run in the child) ------------------------------------------ */

/* The runtime's order: bounding while privileged, then the uid change with
   KEEPCAPS, then the sets. */
static int
setup_full (const struct ab_capabilities *c, ab_error_t *err)
{
  return ab_caps_drop_bounding (c, err) < 0 ? -1 : ab_caps_apply (c, err);
}

static int
setup_full_as_user (const struct ab_capabilities *c, ab_error_t *err)
{
  if (ab_caps_drop_bounding (c, err) < 0)
    return -1;
  if (ab_caps_keep_across_setuid () < 0 || setgroups (0, NULL) < 0 || setresgid (UNPRIV, UNPRIV, UNPRIV) < 0
      || setresuid (UNPRIV, UNPRIV, UNPRIV) < 0)
    return ab_error_set (err, errno, "switch to uid %d", UNPRIV);
  return ab_caps_apply (c, err);
}

static int
setup_bounding_only (const struct ab_capabilities *c, ab_error_t *err)
{
  return ab_caps_drop_bounding (c, err);
}

static int
setup_apply_only (const struct ab_capabilities *c, ab_error_t *err)
{
  return ab_caps_apply (c, err);
}

/* apply() must clear the KEEPCAPS set for the uid change: a later setuid
   then drops everything. */
static int
setup_apply_then_setuid (const struct ab_capabilities *c, ab_error_t *err)
{
  if (ab_caps_keep_across_setuid () < 0)
    return ab_error_set (err, errno, "prctl(PR_SET_KEEPCAPS)");
  if (c != NULL && ab_caps_apply (c, err) < 0)
    return -1;
  if (setresuid (UNPRIV, UNPRIV, UNPRIV) < 0)
    return ab_error_set (err, errno, "setresuid");
  return 0;
}

static int
setup_keepcaps_then_setuid (const struct ab_capabilities *c AB_UNUSED, ab_error_t *err)
{
  return setup_apply_then_setuid (NULL, err);
}

/* The runtime itself holds an ambient capability; apply() with an absent
   ambient set must not let it through. */
static int
setup_inherited_ambient (const struct ab_capabilities *c, ab_error_t *err)
{
  cap_value_t v = CAP_NET_BIND_SERVICE;
  cap_t cur = cap_get_proc ();
  int r;

  if (cur == NULL)
    return ab_error_set (err, errno, "cap_get_proc");
  cap_set_flag (cur, CAP_INHERITABLE, 1, &v, CAP_SET);
  r = cap_set_proc (cur);
  cap_free (cur);
  if (r < 0 || cap_set_ambient (v, CAP_SET) < 0)
    return ab_error_set (err, errno, "raise an ambient capability in the test child");
  return ab_caps_apply (c, err);
}

/* Drop every capability first, then try again: the runtime no longer holds
   what the configuration asks for. */
static int
setup_after_dropping_all (const struct ab_capabilities *c, ab_error_t *err)
{
  struct ab_capabilities none;

  memset (&none, 0, sizeof none);
  if (ab_caps_apply (&none, err) < 0)
    return -1;
  return ab_caps_apply (c, err);
}

static int
setup_bounding_after_dropping_all (const struct ab_capabilities *c, ab_error_t *err)
{
  struct ab_capabilities none;

  memset (&none, 0, sizeof none);
  if (ab_caps_apply (&none, err) < 0)
    return -1;
  return ab_caps_drop_bounding (c, err);
}

/* ---- tests -------------------------------------------------------------- */

static bool
exited_ok (const struct observed *o)
{
  return o->si.si_code == CLD_EXITED && o->si.si_status == 0;
}

static void
test_last_cap (void)
{
  char *text = NULL;
  size_t len;
  int v = -1;

  if (ab_read_file_at (AT_FDCWD, "/proc/sys/kernel/cap_last_cap", 64, &text, &len, NULL) == 0)
    v = atoi (text);
  free (text);
  is_int (ab_caps_last_cap (), v, "ab_caps_last_cap is /proc/sys/kernel/cap_last_cap (%d)", v);
  ok (ab_caps_last_cap () == ab_caps_last_cap (), "ab_caps_last_cap is stable (cached)");
}

static void
test_empty (void)
{
  struct ab_capabilities none, empty = caps_all_sets (0);
  struct observed o;

  memset (&none, 0, sizeof none);
  observe (setup_full, &none, false, &o);
  ok (o.ready && status_is (&o.st, 0, 0, 0, 0, 0) && exited_ok (&o),
      "no sets configured: CapInh/CapPrm/CapEff/CapBnd/CapAmb of the root child are all zero %s", o.msg);

  observe (setup_full, &empty, false, &o);
  ok (o.ready && status_is (&o.st, 0, 0, 0, 0, 0), "five empty sets: all five are zero %s", o.msg);

  observe (setup_full, &empty, true, &o);
  ok (o.ready && strcmp (o.st.name, "sh") == 0 && o.st.uid == 0 && status_is (&o.st, 0, 0, 0, 0, 0),
      "a root shell exec'd after an empty configuration gets no capability back %s", o.msg);
}

static void
test_ambient_as_user (void)
{
  const uint64_t nbs = UINT64_C (1) << CAP_NET_BIND_SERVICE;
  struct ab_capabilities c = caps_all_sets (nbs);
  struct observed o;

  observe (setup_full_as_user, &c, true, &o);
  ok (o.ready && strcmp (o.st.name, "sh") == 0 && o.st.uid == UNPRIV,
      "the child switched to uid %d with KEEPCAPS and exec'd /bin/sh %s", UNPRIV, o.msg);
  ok (o.ready && status_is (&o.st, nbs, nbs, nbs, nbs, nbs),
      "after exec as uid %d, CAP_NET_BIND_SERVICE and nothing else is in all five sets, CapEff and CapAmb "
      "included",
      UNPRIV);
  ok (exited_ok (&o), "the shell exits normally when released");

  /* Without the ambient set the capability does not survive execve as a
     non-root user: the ambient set is what carries it. */
  c.set[AB_CAP_AMBIENT] = false;
  observe (setup_full_as_user, &c, true, &o);
  ok (o.ready && status_is (&o.st, nbs, 0, 0, nbs, 0),
      "without ambient, the exec'd uid %d shell keeps CAP_NET_BIND_SERVICE only as inheritable %s", UNPRIV,
      o.msg);
}

static void
test_bounding (void)
{
  const uint64_t chown = UINT64_C (1) << CAP_CHOWN;
  struct ab_capabilities c;
  struct observed o;

  memset (&c, 0, sizeof c);
  c.set[AB_CAP_BOUNDING] = true;
  c.mask[AB_CAP_BOUNDING] = chown;

  observe (setup_bounding_only, &c, false, &o);
  ok (o.ready && status_is (&o.st, self.inh, self.prm, self.eff, chown, 0),
      "bounding {CAP_CHOWN}: CapBnd is exactly CAP_CHOWN, the other sets are untouched %s", o.msg);

  /* Root's execve grants the bounding set, and nothing more. */
  observe (setup_bounding_only, &c, true, &o);
  ok (o.ready && o.st.uid == 0 && status_is (&o.st, 0, chown, chown, chown, 0),
      "a root shell exec'd under bounding {CAP_CHOWN} holds CAP_CHOWN only %s", o.msg);
}

static void
test_unknown_bits (void)
{
  const uint64_t chown = UINT64_C (1) << CAP_CHOWN;
  uint64_t beyond = UINT64_C (1) << 63;
  struct ab_capabilities c;
  struct observed o;

  if (ab_caps_last_cap () < 62)
    beyond |= UINT64_C (1) << (ab_caps_last_cap () + 1);
  c = caps_all_sets (chown | beyond);
  observe (setup_full, &c, false, &o);
  ok (o.ready && status_is (&o.st, chown, chown, chown, chown, chown),
      "capability numbers past cap_last_cap are skipped silently %s", o.msg);
}

static void
test_keepcaps_cleared (void)
{
  const uint64_t chown = UINT64_C (1) << CAP_CHOWN;
  struct ab_capabilities c;
  struct observed o;

  observe (setup_keepcaps_then_setuid, NULL, false, &o);
  ok (o.ready && o.st.uid == UNPRIV && o.st.prm == self.prm,
      "control: with KEEPCAPS set, setuid(%d) keeps the permitted set", UNPRIV);

  memset (&c, 0, sizeof c);
  c.set[AB_CAP_PERMITTED] = c.set[AB_CAP_EFFECTIVE] = true;
  c.mask[AB_CAP_PERMITTED] = c.mask[AB_CAP_EFFECTIVE] = chown | (UINT64_C (1) << CAP_SETUID);
  observe (setup_apply_then_setuid, &c, false, &o);
  ok (o.ready && o.st.uid == UNPRIV && status_is (&o.st, 0, 0, 0, self.bnd, 0),
      "ab_caps_apply clears KEEPCAPS: a later setuid(%d) drops every capability %s", UNPRIV, o.msg);
}

static void
test_inherited_ambient_cleared (void)
{
  const uint64_t nbs = UINT64_C (1) << CAP_NET_BIND_SERVICE;
  struct ab_capabilities c;
  struct observed o;

  memset (&c, 0, sizeof c);
  c.set[AB_CAP_PERMITTED] = c.set[AB_CAP_INHERITABLE] = c.set[AB_CAP_EFFECTIVE] = true;
  c.mask[AB_CAP_PERMITTED] = c.mask[AB_CAP_INHERITABLE] = c.mask[AB_CAP_EFFECTIVE] = nbs;
  observe (setup_inherited_ambient, &c, false, &o);
  ok (o.ready && status_is (&o.st, nbs, nbs, nbs, self.bnd, 0),
      "an ambient capability the runtime held is cleared when the ambient set is absent %s", o.msg);
}

static void
test_errors (void)
{
  struct ab_capabilities c;
  struct observed o;

  memset (&c, 0, sizeof c);
  c.set[AB_CAP_EFFECTIVE] = true;
  c.mask[AB_CAP_EFFECTIVE] = UINT64_C (1) << CAP_SYS_ADMIN;
  observe (setup_apply_only, &c, false, &o);
  is_str (o.msg,
          "process.capabilities.effective: CAP_SYS_ADMIN is not in the permitted set: capset: Operation not "
          "permitted",
          "an effective capability outside permitted is named, with the syscall");

  /* config.md: a capability that cannot be granted is a warning (the
     parent logs it), not a failure: the ambient set simply stays without it,
     as the kernel reports from outside. */
  memset (&c, 0, sizeof c);
  c.set[AB_CAP_PERMITTED] = c.set[AB_CAP_AMBIENT] = true;
  c.mask[AB_CAP_PERMITTED] = c.mask[AB_CAP_AMBIENT] = UINT64_C (1) << CAP_NET_RAW;
  observe (setup_apply_only, &c, false, &o);
  ok (o.ready && o.st.amb == 0 && o.st.prm == (UINT64_C (1) << CAP_NET_RAW),
      "an ambient capability missing from inheritable is not raised, and the rest is applied %s", o.msg);

  memset (&c, 0, sizeof c);
  c.set[AB_CAP_PERMITTED] = true;
  c.mask[AB_CAP_PERMITTED] = UINT64_C (1) << CAP_CHOWN;
  observe (setup_after_dropping_all, &c, false, &o);
  /* config.md: "cannot be granted otherwise MUST be logged as a warning ...
     Runtimes SHOULD NOT fail": dropped (with a warning), the rest applied. */
  ok (o.ready && o.st.prm == 0 && o.st.eff == 0,
      "a permitted capability the process no longer holds is dropped, not a failure %s", o.msg);

  memset (&c, 0, sizeof c);
  observe (setup_bounding_after_dropping_all, &c, false, &o);
  is_str (o.msg, "drop CAP_CHOWN from the bounding set: prctl(PR_CAPBSET_DROP): Operation not permitted",
          "dropping the bounding set without CAP_SETPCAP fails naming the capability and the syscall");
}

/* A real capability newer than the kernel is named, so create can drop it
   with a warning and a `degraded` entry (config.md). */
static void
test_beyond_kernel (void)
{
  char **v = NULL;
  size_t n;

  n = ab_caps_beyond_kernel ((UINT64_C (1) << 5) | (UINT64_C (1) << 39) | (UINT64_C (1) << 40), 38, &v);
  ok (n == 2 && strcmp (v[0], "CAP_BPF") == 0 && strcmp (v[1], "CAP_CHECKPOINT_RESTORE") == 0,
      "capabilities above cap_last_cap 38 are CAP_BPF and CAP_CHECKPOINT_RESTORE");
  while (n > 0)
    free (v[--n]);
  free (v);
  n = ab_caps_beyond_kernel (UINT64_C (1) << 63, 40, &v);
  ok (n == 1 && strcmp (v[0], "capability 63") == 0, "a number no table names is shown as a number");
  free (v[0]);
  free (v);
  n = ab_caps_beyond_kernel (UINT64_MAX >> 23, ab_caps_last_cap (), &v);
  ok (n == 0 && v == NULL, "on this kernel every capability of the table is known (cap_last_cap %d)",
      ab_caps_last_cap ());
}

int
main (void)
{
  const uint64_t needed = (UINT64_C (1) << CAP_SETPCAP) | (UINT64_C (1) << CAP_SETUID)
                          | (UINT64_C (1) << CAP_SETGID) | (UINT64_C (1) << CAP_CHOWN)
                          | (UINT64_C (1) << CAP_NET_BIND_SERVICE);

  if (geteuid () != 0 || !read_status (getpid (), &self) || (self.eff & needed) != needed)
    {
      printf ("1..0 # SKIP the capability tests need root with CAP_SETPCAP, CAP_SETUID, CAP_SETGID, "
              "CAP_CHOWN and "
              "CAP_NET_BIND_SERVICE\n");
      return 0;
    }
  test_beyond_kernel ();
  test_last_cap ();
  test_empty ();
  test_ambient_as_user ();
  test_bounding ();
  test_unknown_bits ();
  test_keepcaps_cleared ();
  test_inherited_ambient_cleared ();
  test_errors ();
  return tap_done ();
}
