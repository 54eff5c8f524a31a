/* runtime/lifecycle/state.c: state.json written in place by the writer that holds
   the directory lock (ab_state_write_locked), read back by ab_state_read. */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/lifecycle/state.h"
#include "base/gen.h"
#include "base/json.h"
#include "base/util.h"
#include "tests/unit/tap.h"

static struct stat
stat_of (int dirfd)
{
  struct stat st;
  memset (&st, 0, sizeof st);
  fstatat (dirfd, AB_STATE_FILE, &st, AT_SYMLINK_NOFOLLOW);
  return st;
}

static char *
read_back (int dirfd, int *status)
{
  struct ab_state *s = NULL;
  ab_error_t err;
  char *rules;

  if (ab_state_read (dirfd, "c1", &s, &err) < 0)
    {
      printf ("# read back: %s\n", err.msg);
      return NULL;
    }
  *status = s->status;
  rules = s->rules_text ? xstrdup (s->rules_text) : xstrdup ("");
  ab_state_free (s);
  return rules;
}

int
main (void)
{
  char dir[] = "/tmp/ab-test-state.XXXXXX";
  struct ab_state s = { 0 };
  struct ab_state_file f = AB_STATE_FILE_INIT;
  ab_error_t err;
  struct stat st1, st2, st3;
  char *got, *big;
  int dirfd, status = -1;

  if (mkdtemp (dir) == NULL || (dirfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
    {
      printf ("Bail out! temporary directory\n");
      return 1;
    }
  s.id = (char *)"c1";
  s.bundle = (char *)"/b";
  s.rootfs = (char *)"/b/rootfs";
  s.status = AB_STATUS_CREATING;
  s.rules_text = (char *)"a long first text, longer than the second one will be";

  is_int (ab_state_write_locked (dirfd, &f, &s, &err), 0, "the first write succeeds");
  ok (f.fd >= 0, "... and keeps state.json open for the next ones");
  st1 = stat_of (dirfd);
  got = read_back (dirfd, &status);
  ok (got && strcmp (got, s.rules_text) == 0 && status == AB_STATUS_CREATING, "... it reads back");
  free (got);

  s.status = AB_STATUS_CREATED;
  s.rules_text = (char *)"short";
  is_int (ab_state_write_locked (dirfd, &f, &s, &err), 0, "a shorter second write succeeds");
  st2 = stat_of (dirfd);
  ok (st2.st_ino == st1.st_ino, "... in place: the same inode, no new file renamed over it");
  ok (st2.st_size == st1.st_size, "... padded to the old length, never truncated");
  got = read_back (dirfd, &status);
  ok (got && strcmp (got, "short") == 0 && status == AB_STATUS_CREATED,
      "... it reads back as the new text only (the padding is JSON whitespace)");
  free (got);

  /* Past one page: a write(2) of it could be cut by a kill, so renamed. */
  big = xmalloc (6000);
  memset (big, 'x', 5999);
  big[5999] = '\0';
  s.rules_text = big;
  s.status = AB_STATUS_RUNNING;
  is_int (ab_state_write_locked (dirfd, &f, &s, &err), 0, "a text longer than a page is written");
  st3 = stat_of (dirfd);
  ok (st3.st_ino != st1.st_ino && (size_t)st3.st_size > 4096, "... by a new file renamed into place");
  ok (f.fd < 0, "... and the old open file is let go");
  got = read_back (dirfd, &status);
  ok (got && strcmp (got, big) == 0 && status == AB_STATUS_RUNNING, "... it reads back");
  free (got);

  s.rules_text = (char *)"short again";
  s.status = AB_STATUS_STOPPED;
  is_int (ab_state_write_locked (dirfd, &f, &s, &err), 0, "a short text after a long one is written");
  got = read_back (dirfd, &status);
  ok (got && strcmp (got, "short again") == 0 && status == AB_STATUS_STOPPED,
      "... and reads back (the file was longer than a page: renamed again)");
  free (got);
  ab_state_file_close (&f);

  /* The cgroup object outlives the document it was read from (whose nodes
     go with it): other parses in between reuse that memory. */
  {
    static const char cg[] = "{\"paths\":{\"memory\":\"/sys/fs/cgroup/memory/ab-c1\",\"pids\":\"/p\"},\"v2\":\"/x\"}";
    struct ab_state *r = NULL;
    char *text = NULL;
    size_t len;

    s.cgroup = ab_json_parse (cg, strlen (cg), &ab_json_config_limits, "cg", &err);
    s.rules_text = (char *)"with a cgroup";
    is_int (ab_state_write_locked (dirfd, &f, &s, &err), 0, "a state with a cgroup object is written");
    ab_state_file_close (&f);
    ab_json_free (s.cgroup);
    s.cgroup = NULL;
    if (ab_state_read (dirfd, "c1", &r, &err) == 0)
      {
        char *doc = xmalloc (400 * 40 + 8), *p = doc;
        *p++ = '[';
        for (int k = 0; k < 400; k++)
          p += sprintf (p, "%s\"%032d\"", k ? "," : "", k);
        strcpy (p, "]");
        for (int k = 0; k < 4; k++)
          ab_json_free (ab_json_parse (doc, strlen (doc), &ab_json_config_limits, "x", &err));
        free (doc);
        if (r->cgroup)
          {
            struct ab_gen *g = ab_gen_new (false);
            ab_gen_json (g, r->cgroup);
            text = ab_gen_steal (g, false, &len);
            ab_gen_free (g);
          }
        ab_state_free (r);
      }
    is_str (text, cg, "... and its cgroup object reads back whole, after other documents were parsed and freed");
    free (text);
  }

  /* A symlink in place of state.json is never written through. */
  unlinkat (dirfd, AB_STATE_FILE, 0);
  symlinkat ("/tmp/ab-test-state-target", dirfd, AB_STATE_FILE);
  ok (ab_state_write_locked (dirfd, &f, &s, &err) < 0, "a symlink as state.json is refused");
  ok (access ("/tmp/ab-test-state-target", F_OK) < 0, "... nothing is written at its target");

  free (big);
  unlinkat (dirfd, AB_STATE_FILE, 0);
  rmdir (dir);
  return tap_done ();
}
