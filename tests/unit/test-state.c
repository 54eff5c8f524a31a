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
