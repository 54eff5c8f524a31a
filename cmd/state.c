/* agentbox state ID: the OCI state JSON (runtime.md). */
#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "cmd/cmd.h"
#include "runtime/lifecycle/container.h"
#include "runtime/lifecycle/wsstore.h"
#include "base/util.h"
#include "base/gen.h"
#include "base/json.h"
#include "spec/annotations.h"

/* The OCI state; an overlay workspace's pending change set as the extra
   property dev.agentbox/workspaceChanges. */
static char *
state_json (const char *root, const struct ab_state *s, int status, size_t *len)
{
  struct ab_changeset *cs = NULL;
  ab_error_t e = { 0 };
  char *json = ab_state_oci_json (s, status, true, len);
  struct ab_json *j, *w;

  if (ab_ws_mode_of (&s->annotations) != AB_WS_MODE_OVERLAY || ab_changeset_open (root, s->id, &cs, &e) < 0
      || cs->kind != AB_CS_PENDING)
    {
      ab_changeset_free (cs);
      return json;
    }
  j = ab_json_parse (json, *len, &ab_json_config_limits, "state", &e);
  if (j != NULL)
    {
      _cleanup_gen_ struct ab_gen *g = ab_gen_new (true);
      w = ab_json_new (AB_J_OBJECT);
      ab_json_set (w, "state", ab_json_new_str ("pending"));
      ab_json_set (w, "workspace", ab_json_new_str (cs->m.workspace));
      ab_json_set (w, "destination", ab_json_new_str (cs->m.destination));
      ab_json_set (j, "dev.agentbox/workspaceChanges", w);
      ab_gen_json (g, j);
      free (json);
      json = ab_gen_steal (g, true, len);
      ab_json_free (j);
    }
  ab_changeset_free (cs);
  return json;
}

int
ab_cmd_state (struct ab_global *g, int argc, char **argv)
{
  static const struct option opts[] = { { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
  _cleanup_state_ struct ab_state *s = NULL;
  _cleanup_free_ char *json = NULL;
  ab_error_t err = { 0 };
  size_t len;
  int c, status;

  while ((c = getopt_long (argc, argv, "h", opts, NULL)) != -1)
    {
      if (c == 'h')
        {
          printf ("Usage: agentbox state ID\n\nPrint the OCI state of the container as JSON.\n");
          return AB_EXIT_OK;
        }
      return ab_cmd_usage_error ("state", "unknown option `%s`", argv[optind - 1]);
    }
  if ((c = ab_cmd_positionals ("state", argc, argv, 1, 1, "container ID")) != 0)
    return c;
  if (ab_container_state (g->root, argv[optind], &s, &status, &err) < 0)
    {
      struct ab_changeset *cs = NULL;
      ab_error_t e = { 0 };
      if (err.cls == AB_EC_NOTFOUND && ab_changeset_open (g->root, argv[optind], &cs, &e) == 0
          && cs->kind == AB_CS_PENDING)
        ab_error_setc (&err, AB_EC_NOTFOUND, 0,
                       "container `%s` does not exist; its workspace change set of `%s` is pending (agentbox "
                       "workspace diff|apply|discard %s)",
                       argv[optind], cs->m.workspace, argv[optind]);
      ab_changeset_free (cs);
      return ab_cmd_fail (&err);
    }
  json = state_json (g->root, s, status, &len);
  if (ab_write_all (1, json, len) < 0)
    return AB_EXIT_FAILURE;
  return AB_EXIT_OK;
}
