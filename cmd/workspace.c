/* agentbox workspace diff|apply|discard ID: the change set an overlay-mode
 * workspace kept (runtime/lifecycle/workspace.h). */
#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "cmd/cmd.h"
#include "base/log.h"
#include "base/util.h"
#include "runtime/lifecycle/workspace.h"
#include "base/gen.h"

/* apply: the change set was refused (conflicts, refused paths); nothing
   changed. */
#define EXIT_REFUSED 3

static void
usage (FILE *f)
{
  fprintf (f, "Usage: agentbox workspace diff [--format text|json] ID\n"
              "       agentbox workspace apply [--overwrite] [--partial] [--format text|json] ID\n"
              "       agentbox workspace discard [--format text|json] ID\n\n"
              "The change set of a run with --workspace-mode overlay (or the annotation\n"
              "dev.agentbox.workspace.mode=overlay), kept under the container's id until it is applied\n"
              "to the workspace or discarded.\n"
              "  diff       list the changes: A created, M modified, D deleted, R replaced directory,\n"
              "             T type changed, P permissions changed\n"
              "  apply      make the workspace what the container saw; refused (exit 3, nothing\n"
              "             changed) when a path changed on the host since the run started or cannot\n"
              "             be applied; an interrupted apply is resumed\n"
              "      --overwrite  apply over paths changed on the host\n"
              "      --partial    apply the rest, leaving those paths out\n"
              "  discard    throw the change set away (an interrupted apply is rolled back; one whose\n"
              "             run was killed while it was made is removed)\n");
}

/* A path from the change set on a terminal: no control characters. */
static void
print_line (FILE *f, const char *prefix, const char *line)
{
  const unsigned char *p;

  fputs (prefix, f);
  for (p = (const unsigned char *)line; *p; p++)
    fputc (*p < 0x20 || *p == 0x7f ? '?' : *p, f);
  fputc ('\n', f);
}

static int
emit_json (struct ab_gen *g)
{
  size_t len;
  const char *buf;

  ab_gen_obj_close (g);
  buf = ab_gen_buf (g, &len);
  fwrite (buf, 1, len, stdout);
  putchar ('\n');
  return fflush (stdout) == 0 ? 0 : -1;
}

static int
do_diff (struct ab_global *g, const char *id, bool json)
{
  struct ab_changeset *cs = NULL;
  struct ab_ws_changes ch;
  ab_error_t err = { 0 };
  char line[8192];
  size_t i;
  int r = AB_EXIT_OK;

  if (ab_workspace_diff (g->root, id, &cs, &ch, &err) < 0)
    {
      ab_changeset_free (cs);
      return ab_cmd_fail (&err);
    }
  if (json)
    {
      _cleanup_gen_ struct ab_gen *gen = ab_gen_new (false);
      ab_gen_obj_open (gen);
      ab_changeset_gen (gen, cs, &ch, NULL, UINT64_MAX);
      if (emit_json (gen) < 0)
        r = AB_EXIT_FAILURE;
    }
  else
    for (i = 0; i < ch.n; i++)
      {
        ab_ws_change_line (&ch.v[i], line, sizeof line);
        print_line (stdout, "", line);
      }
  ab_ws_changes_free (&ch);
  ab_changeset_free (cs);
  return r;
}

static void
print_problems (const char *id, const struct ab_ws_report *rep, const char *what)
{
  size_t i;
  char prefix[256];

  for (i = 0; i < rep->n; i++)
    {
      snprintf (prefix, sizeof prefix, "agentbox: workspace apply %s: %s%s: ", id, what,
                ab_ws_problem_name (rep->v[i].kind));
      fputs (prefix, stderr);
      print_line (stderr, "", rep->v[i].path);
      fprintf (stderr, "    %s\n", rep->v[i].reason);
    }
}

static int
do_apply (struct ab_global *g, const char *id, bool json, bool overwrite, bool partial)
{
  struct ab_workspace_result res;
  ab_error_t err = { 0 };
  int r = ab_workspace_apply (g->root, id, overwrite, partial, &res, &err);
  const char *ws = res.workspace ? res.workspace : "the workspace";
  int status = r == 0 ? AB_EXIT_OK : r == 1 ? EXIT_REFUSED : ab_cmd_fail (&err);

  if (r >= 0 && json)
    {
      _cleanup_gen_ struct ab_gen *gen = ab_gen_new (false);
      ab_gen_obj_open (gen);
      ab_workspace_result_gen (gen, id, &res, true, r);
      if (emit_json (gen) < 0)
        status = AB_EXIT_FAILURE;
    }
  else if (r == 1)
    {
      print_problems (id, &res.rep, "");
      fprintf (stderr,
               "agentbox: workspace apply %s: nothing applied (%zu problem%s; --overwrite applies over host "
               "changes, --partial leaves the paths out)\n",
               id, res.rep.n, res.rep.n == 1 ? "" : "s");
    }
  else if (r == 0)
    {
      print_problems (id, &res.rep, "left out: ");
      printf ("%s%zu change%s applied to %s", res.rep.resumed ? "an interrupted apply resumed: " : "", res.rep.applied,
              res.rep.applied == 1 ? "" : "s", ws);
      if (res.rep.skipped)
        printf (", %zu left out", res.rep.skipped);
      printf ("\n");
    }
  ab_workspace_result_free (&res);
  return status;
}

static int
do_discard (struct ab_global *g, const char *id, bool json)
{
  struct ab_workspace_result res;
  ab_error_t err = { 0 };
  int status = AB_EXIT_OK;
  const char *ws;

  if (ab_workspace_discard (g->root, id, &res, &err) < 0)
    {
      ab_workspace_result_free (&res);
      return ab_cmd_fail (&err);
    }
  ws = res.workspace ? res.workspace : "the workspace";
  if (json)
    {
      _cleanup_gen_ struct ab_gen *gen = ab_gen_new (false);
      ab_gen_obj_open (gen);
      ab_workspace_result_gen (gen, id, &res, false, 0);
      if (emit_json (gen) < 0)
        status = AB_EXIT_FAILURE;
    }
  else if (res.finished)
    printf ("an interrupted apply of %s had put everything in place: finished it (%s holds the changes)\n", id, ws);
  else if (res.unfinished)
    printf ("the change set %s held no change (its run was killed while it was made, or its tmpfs was gone): "
            "removed\n",
            id);
  else
    printf ("%s%s discarded (%s is as it was)\n", res.rolled_back ? "an interrupted apply rolled back; " : "", id, ws);
  ab_workspace_result_free (&res);
  return status;
}

int
ab_cmd_workspace (struct ab_global *g, int argc, char **argv)
{
  static const struct option opts[] = {
    { "format", required_argument, NULL, 'f' }, { "overwrite", no_argument, NULL, 'o' },
    { "partial", no_argument, NULL, 'p' },      { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  bool json = false, overwrite = false, partial = false;
  const char *sub;
  int c;

  if (argc < 2 || strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0)
    {
      usage (argc < 2 ? stderr : stdout);
      return argc < 2 ? AB_EXIT_USAGE : AB_EXIT_OK;
    }
  sub = argv[1];
  if (strcmp (sub, "diff") && strcmp (sub, "apply") && strcmp (sub, "discard"))
    return ab_cmd_usage_error ("workspace", "unknown subcommand `%s` (diff, apply or discard)", sub);
  argc--;
  argv++;
  while ((c = getopt_long (argc, argv, "f:h", opts, NULL)) != -1)
    switch (c)
      {
      case 'f':
        if ((c = ab_cmd_parse_format ("workspace", optarg, &json)) != 0)
          return c;
        break;
      case 'o':
      case 'p':
        if (strcmp (sub, "apply") != 0)
          return ab_cmd_usage_error ("workspace", "%s is an option of `workspace apply`", argv[optind - 1]);
        if (c == 'o')
          overwrite = true;
        else
          partial = true;
        break;
      case 'h':
        usage (stdout);
        return AB_EXIT_OK;
      default:
        return ab_cmd_usage_error ("workspace", "unknown option `%s`", argv[optind - 1]);
      }
  if ((c = ab_cmd_positionals ("workspace", argc, argv, 1, 1, "change set ID")) != 0)
    return c;
  if (strcmp (sub, "diff") == 0)
    return do_diff (g, argv[optind], json);
  if (strcmp (sub, "apply") == 0)
    return do_apply (g, argv[optind], json, overwrite, partial);
  return do_discard (g, argv[optind], json);
}
