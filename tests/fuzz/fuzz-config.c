/* libFuzzer target: arbitrary bytes as config.json.
 *
 * Parses, validates what parsed, frees.  Beyond the sanitizers' checks it
 * asserts the parser's contract, so a wrong answer is a finding too:
 * every failure is a config error worded "config.json: ...", on one line
 * with no terminal control in it, and every
 * success has the invariants the runtime relies on (root present, paths
 * absolute, enumerations in range).
 *
 *   make fuzz && make fuzz-run FUZZ_SECONDS=60
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "spec/spec.h"

#define CHECK(cond)                                                                                          \
  do                                                                                                         \
    {                                                                                                        \
      if (!(cond))                                                                                           \
        {                                                                                                    \
          fprintf (stderr, "fuzz-config: invariant failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__);        \
          abort ();                                                                                          \
        }                                                                                                    \
    }                                                                                                        \
  while (0)

/* Messages and listed paths are one line without terminal controls. */
static bool
no_control_bytes (const char *s)
{
  for (; *s; s++)
    if ((unsigned char)*s < 0x20 || *s == 0x7f)
      return false;
  return true;
}

static void
check_spec (const struct ab_spec *s)
{
  size_t i;
  int k;

  for (i = 0; i < s->unknown.n; i++)
    CHECK (no_control_bytes (s->unknown.v[i]));
  for (i = 0; i < s->warnings.n; i++)
    CHECK (no_control_bytes (s->warnings.v[i]));
  CHECK (s->oci_version != NULL && s->root_set && s->root.path != NULL && s->root.path[0] != '\0');
  for (i = 0; i < s->n_mounts; i++)
    CHECK (s->mounts[i].destination[0] == '/' && !ab_path_has_dotdot (s->mounts[i].destination));
  for (k = 0; k < AB_HOOK__KINDS; k++)
    for (i = 0; i < s->hooks[k].n; i++)
      CHECK (ab_path_is_clean_absolute (s->hooks[k].v[i].path));
  if (s->process)
    {
      CHECK (ab_path_is_clean_absolute (s->process->cwd) && s->process->args.n > 0);
      for (i = 0; i < s->process->n_rlimits; i++)
        CHECK (s->process->rlimits[i].soft <= s->process->rlimits[i].hard);
    }
  if (s->linux_)
    {
      for (k = 0; k < AB_NS__COUNT; k++)
        CHECK (s->linux_->ns[k].path == NULL || ab_path_is_clean_absolute (s->linux_->ns[k].path));
      for (i = 0; i < s->linux_->n_devices; i++)
        CHECK (ab_path_is_clean_absolute (s->linux_->devices[i].path));
      if (s->linux_->seccomp)
        for (i = 0; i < s->linux_->seccomp->n_syscalls; i++)
          CHECK (s->linux_->seccomp->syscalls[i].names.n > 0 && s->linux_->seccomp->syscalls[i].action >= 0
                 && s->linux_->seccomp->syscalls[i].action < AB_SCMP_ACT__COUNT);
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  ab_error_t err = { 0 };
  struct ab_spec *s = ab_spec_parse ((const char *)data, size, &err);

  if (s == NULL)
    {
      CHECK (err.cls == AB_EC_CONFIG && strncmp (err.msg, "config.json: ", 13) == 0);
      CHECK (no_control_bytes (err.msg));
      return 0;
    }
  check_spec (s);
  if (ab_spec_validate (s, &err) < 0)
    CHECK (err.cls == AB_EC_CONFIG && err.msg[0] != '\0');
  ab_spec_free (s);
  return 0;
}
