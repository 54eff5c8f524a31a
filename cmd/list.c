/* agentbox list [--format table|json] [--quiet]: the containers, then the
 * pending workspace change sets of containers that are gone (status
 * "changes", the workspace in the BUNDLE column). */
#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "cmd/cmd.h"
#include "runtime/lifecycle/container.h"
#include "runtime/plan/host-ids.h"
#include "runtime/lifecycle/wsstore.h"
#include "base/util.h"
#include "base/gen.h"

int
ab_cmd_list (struct ab_global *g, int argc, char **argv)
{
  static const struct option opts[] = {
    { "format", required_argument, NULL, 'f' },
    { "quiet", no_argument, NULL, 'q' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  _cleanup_strv_ struct ab_strv ids = { 0 };
  _cleanup_gen_ struct ab_gen *gen = NULL;
  bool json = false, quiet = false;
  ab_error_t err = { 0 };
  int c, rootfd;
  size_t i;
  /* runc's OWNER: the user the state belongs to, which is ours (the state
     root is checked to be) */
  _cleanup_free_ char *name = ab_user_name (geteuid ());
  char uidbuf[16];
  const char *owner = name;

  if (owner == NULL)
    owner = (snprintf (uidbuf, sizeof uidbuf, "%u", (unsigned) geteuid ()), uidbuf);

  while ((c = getopt_long (argc, argv, "f:qh", opts, NULL)) != -1)
    switch (c)
      {
      case 'f':
        if ((c = ab_cmd_parse_format ("list", optarg, &json)) != 0)
          return c;
        break;
      case 'q':
        quiet = true;
        break;
      case 'h':
        printf ("Usage: agentbox list [--format table|json] [--quiet]\n");
        return AB_EXIT_OK;
      default:
        return ab_cmd_usage_error ("list", "unknown option `%s`", argv[optind - 1]);
      }
  if ((c = ab_cmd_positionals ("list", argc, argv, 0, 0, "")) != 0)
    return c;
  rootfd = ab_state_root_open (g->root, false, &err);
  if (rootfd >= 0)
    {
      int r = ab_state_list (rootfd, &ids, &err);
      close (rootfd);
      if (r < 0)
        return ab_cmd_fail (&err);
    }
  else if (err.cls != AB_EC_NOTFOUND)
    return ab_cmd_fail (&err);

  if (json)
    {
      gen = ab_gen_new (false);
      ab_gen_arr_open (gen);
    }
  else if (!quiet)
    printf ("%-20s %-8s %-10s %-40s %-30s %s\n", "ID", "PID", "STATUS", "BUNDLE", "CREATED", "OWNER");
  for (i = 0; i < ids.n; i++)
    {
      _cleanup_state_ struct ab_state *s = NULL;
      ab_error_t e = { 0 };
      int status;
      char ts[64];

      /* A container deleted meanwhile, or a corrupt one, is skipped here;
         `state` reports the reason. */
      if (ab_container_state (g->root, ids.v[i], &s, &status, &e) < 0)
        continue;
      ab_format_time_rfc3339 (s->created_ns, ts, sizeof ts);
      if (json)
        {
          ab_gen_obj_open (gen);
          ab_gen_kv_str (gen, "ociVersion", "1.3.0");
          ab_gen_kv_str (gen, "id", s->id);
          ab_gen_kv_i64 (gen, "pid", status == AB_STATUS_STOPPED ? 0 : s->pid);
          ab_gen_kv_str (gen, "status", ab_status_name (status));
          ab_gen_kv_str (gen, "bundle", s->bundle);
          ab_gen_kv_str (gen, "rootfs", s->rootfs ? s->rootfs : "");
          ab_gen_kv_str (gen, "created", ts);
          ab_gen_kv_str (gen, "owner", owner);
          ab_state_gen_annotations (gen, s); /* as runc's list */
          ab_gen_obj_close (gen);
        }
      else if (quiet)
        printf ("%s\n", s->id);
      else
        printf ("%-20s %-8d %-10s %-40s %-30s %s\n", s->id, status == AB_STATUS_STOPPED ? 0 : (int) s->pid,
                ab_status_name (status), s->bundle, ts, owner);
    }
  /* Change sets whose container is gone: still pending, and shown. */
  {
    _cleanup_strv_ struct ab_strv sets = { 0 };
    ab_changeset_list (g->root, &sets, &err);
    for (i = 0; i < sets.n; i++)
      {
        struct ab_changeset *cs = NULL;
        ab_error_t e = { 0 };
        char ts[64];
        if (ab_strv_contains (&ids, sets.v[i]) || ab_changeset_open (g->root, sets.v[i], &cs, &e) < 0)
          continue;
        if (cs->kind != AB_CS_PENDING)
          {
            /* what a killed create, apply or discard left: nothing pending */
            ab_changeset_free (cs);
            continue;
          }
        ab_format_time_rfc3339 (cs->m.created_ns, ts, sizeof ts);
        if (json)
          {
            ab_gen_obj_open (gen);
            ab_gen_kv_str (gen, "ociVersion", "1.3.0");
            ab_gen_kv_str (gen, "id", cs->id);
            ab_gen_kv_i64 (gen, "pid", 0);
            ab_gen_kv_str (gen, "status", "changes");
            ab_gen_kv_str (gen, "bundle", "");
            ab_gen_kv_str (gen, "rootfs", "");
            ab_gen_kv_str (gen, "created", ts);
            ab_gen_kv_str (gen, "owner", owner);
            ab_gen_kv_str (gen, "workspace", cs->m.workspace);
            ab_gen_obj_close (gen);
          }
        else if (quiet)
          printf ("%s\n", cs->id);
        else
          printf ("%-20s %-8d %-10s %-40s %-30s %s\n", cs->id, 0, "changes", cs->m.workspace, ts, owner);
        ab_changeset_free (cs);
      }
  }
  if (json)
    {
      size_t len;
      ab_gen_arr_close (gen);
      const char *buf = ab_gen_buf (gen, &len);
      fwrite (buf, 1, len, stdout);
      putchar ('\n');
    }
  return AB_EXIT_OK;
}
