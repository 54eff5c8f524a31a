/* agentbox features: the OCI features.json (features.md, features-linux.md)
 * of this build.  Everything listed is parsed by the same tables and has an
 * effect; what agentbox refuses is left out. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "cmd/cmd.h"
#include "runtime/landlock.h"
#include "base/log.h"
#include "runtime/seccomp.h"
#include "base/util.h"
#include "spec/annotations.h"
#include "base/gen.h"
#include "spec/model.h"
#include "spec/tables.h"

static int
cmp_name (const void *a, const void *b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

static void
gen_features (struct ab_gen *g)
{
  const char *namespaces[AB_NS__COUNT], *hooks[AB_HOOK__KINDS];
  const struct ab_mount_option *mo;
  const struct ab_annotation_info *a;
  size_t i, n;
  unsigned bit;

  for (i = 0; i < AB_NS__COUNT; i++)
    namespaces[i] = ab_ns_name ((int) i);
  qsort (namespaces, AB_NS__COUNT, sizeof *namespaces, cmp_name);
  for (i = 0; i < AB_HOOK__KINDS; i++)
    hooks[i] = ab_hook_kind_name ((int) i);
  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "ociVersionMin", AB_OCI_VERSION_MIN);
  ab_gen_kv_str (g, "ociVersionMax", AB_OCI_VERSION);
  ab_gen_kv_strv (g, "hooks", (char *const *) hooks, AB_ARRAY_SIZE (hooks));
  ab_gen_key (g, "mountOptions");
  ab_gen_arr_open (g);
  mo = ab_mount_options (&n);
  for (i = 0; i < n; i++)
    ab_gen_str (g, mo[i].name);
  ab_gen_arr_close (g);

  ab_gen_key (g, "linux");
  ab_gen_obj_open (g);
  ab_gen_kv_strv (g, "namespaces", (char *const *) namespaces, AB_ARRAY_SIZE (namespaces));
  ab_gen_key (g, "capabilities");
  ab_gen_arr_open (g);
  for (i = 0; i < (size_t) ab_cap_count (); i++)
    ab_gen_str (g, ab_cap_name ((int) i));
  ab_gen_arr_close (g);

  ab_gen_key (g, "cgroup");
  ab_gen_obj_open (g);
  ab_gen_kv_bool (g, "v1", true);
  ab_gen_kv_bool (g, "v2", true);
  ab_gen_kv_bool (g, "systemd", false);
  ab_gen_kv_bool (g, "systemdUser", false);
  ab_gen_kv_bool (g, "rdma", true);
  ab_gen_obj_close (g);

  ab_gen_key (g, "seccomp");
  ab_gen_obj_open (g);
  ab_gen_kv_bool (g, "enabled", true);
  ab_gen_key (g, "actions");
  ab_gen_arr_open (g);
  for (i = 0; i < AB_SCMP_ACT__COUNT; i++)
    ab_gen_str (g, ab_seccomp_action_name ((int) i));
  ab_gen_arr_close (g);
  ab_gen_key (g, "operators");
  ab_gen_arr_open (g);
  for (i = 0; i < AB_SCMP_CMP__COUNT; i++)
    ab_gen_str (g, ab_seccomp_op_name ((int) i));
  ab_gen_arr_close (g);
  ab_gen_key (g, "archs");
  ab_gen_arr_open (g);
  for (i = 0; i < (size_t) ab_seccomp_arch_count (); i++)
    ab_gen_str (g, ab_seccomp_arch_name ((int) i));
  ab_gen_arr_close (g);
  ab_gen_key (g, "knownFlags");
  ab_gen_arr_open (g);
  for (bit = 1; bit <= AB_SECCOMP_FLAG_WAIT_KILLABLE_RECV; bit <<= 1)
    ab_gen_str (g, ab_seccomp_flag_name (bit));
  ab_gen_arr_close (g);
  ab_gen_key (g, "supportedFlags");
  ab_gen_arr_open (g);
  for (bit = 1; bit <= AB_SECCOMP_FLAG_WAIT_KILLABLE_RECV; bit <<= 1)
    if (ab_seccomp_flag_supported (bit))
      ab_gen_str (g, ab_seccomp_flag_name (bit));
  ab_gen_arr_close (g);
  ab_gen_obj_close (g);

  ab_gen_key (g, "apparmor");
  ab_gen_obj_open (g);
  ab_gen_kv_bool (g, "enabled", true);
  ab_gen_obj_close (g);
  ab_gen_key (g, "selinux");
  ab_gen_obj_open (g);
  ab_gen_kv_bool (g, "enabled", false);
  ab_gen_obj_close (g);

  ab_gen_key (g, "memoryPolicy");
  ab_gen_obj_open (g);
  ab_gen_key (g, "modes");
  ab_gen_arr_open (g);
  for (i = 0; i <= AB_MPOL_WEIGHTED_INTERLEAVE; i++)
    ab_gen_str (g, ab_mpol_mode_name ((int) i));
  ab_gen_arr_close (g);
  ab_gen_key (g, "flags");
  ab_gen_arr_open (g);
  for (i = 0; ab_mpol_flag_name_at (i); i++)
    ab_gen_str (g, ab_mpol_flag_name_at (i));
  ab_gen_arr_close (g);
  ab_gen_obj_close (g);

  ab_gen_key (g, "intelRdt");
  ab_gen_obj_open (g);
  ab_gen_kv_bool (g, "enabled", false);
  ab_gen_obj_close (g);

  /* mounts[].uidMappings/gidMappings (id-mapped binds) and
     linux.netDevices are implemented: say so (features-linux.md). */
  ab_gen_key (g, "mountExtensions");
  ab_gen_obj_open (g);
  ab_gen_key (g, "idmap");
  ab_gen_obj_open (g);
  ab_gen_kv_bool (g, "enabled", true);
  ab_gen_obj_close (g);
  ab_gen_obj_close (g);
  ab_gen_key (g, "netDevices");
  ab_gen_obj_open (g);
  ab_gen_kv_bool (g, "enabled", true);
  ab_gen_obj_close (g);
  ab_gen_obj_close (g); /* linux */

  ab_gen_key (g, "annotations");
  ab_gen_obj_open (g);
  ab_gen_kv_str (g, "dev.agentbox.version", PACKAGE_VERSION);
  {
    /* The landlock ABI of this kernel: what dev.agentbox.landlock gets
       here (0: none, and the log says why). */
    const char *why;
    char abi[16];
    snprintf (abi, sizeof abi, "%u", ab_landlock_abi (&why));
    if (strcmp (abi, "0") == 0)
      ab_log (AB_LOG_WARN, "landlock is not available: %s", why);
    ab_gen_kv_str (g, "dev.agentbox.landlock.abi", abi);
  }
  for (a = ab_annotations_known (); a->key; a++)
    ab_gen_kv_str (g, a->key, a->doc);
  ab_gen_obj_close (g);
  ab_gen_key (g, "potentiallyUnsafeConfigAnnotations");
  ab_gen_arr_open (g);
  ab_gen_str (g, AB_ANNOT_PREFIX);
  ab_gen_arr_close (g);
  ab_gen_obj_close (g);
}

int
ab_cmd_features (struct ab_global *g, int argc, char **argv)
{
  static const struct option opts[] = { { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
  _cleanup_gen_ struct ab_gen *gen = ab_gen_new (true);
  _cleanup_free_ char *json = NULL;
  size_t len;
  int c;

  (void) g;
  while ((c = getopt_long (argc, argv, "h", opts, NULL)) != -1)
    {
      if (c == 'h')
        {
          printf ("Usage: agentbox features\n\nPrint the OCI features structure of this build as JSON.\n");
          return AB_EXIT_OK;
        }
      return ab_cmd_usage_error ("features", "unknown option `%s`", argv[optind - 1]);
    }
  if ((c = ab_cmd_positionals ("features", argc, argv, 0, 0, "")) != 0)
    return c;
  gen_features (gen);
  json = ab_gen_steal (gen, true, &len);
  return ab_write_all (1, json, len) < 0 ? AB_EXIT_FAILURE : AB_EXIT_OK;
}
