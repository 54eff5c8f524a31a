/* The seccomp program's layout does not change its verdicts.
 *
 * The runtime installs libseccomp's binary-tree layout because the kernel
 * prepares a filter in time proportional to the path through it
 * (runtime/seccomp.c, ab_seccomp_compile).  Every test here compiles one
 * profile twice, as a tree and as libseccomp's plain linear list, and runs
 * both programs through a classic-BPF interpreter over the same inputs: every
 * syscall number 0..1023 for x86_64, x86 and x32, numbers at the edges
 * (-1, 2^30 - 1, 2^31 - 1), a foreign architecture, and for each syscall a
 * rule names with arguments, a spread of argument values made from the
 * profile's own constants on every argument index.  The two verdicts (the
 * whole 32-bit return value: action and errno) must be equal for each input,
 * and the tree must be what ab_seccomp_compile returns.  The interpreter
 * itself is checked against the kernel: a child installs the tree and makes
 * real syscalls whose outcome the interpreter predicts.
 */
#include "config.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/seccomp.h"
/* The units under test, whole: the ranges are forced through a static function. */
#include "runtime/seccomp.c"
#include "runtime/seccomp-ranges.c"
#include "spec/defaults.h"
#include "spec/spec.h"
#include "tests/unit/tap.h"

#define X32_BIT 0x40000000u
#define VERDICT_BAD 0xdeadbeefu /* the interpreter met an instruction it does not know */

/* ---- a classic BPF interpreter over struct seccomp_data ----------------- */

static uint32_t
load_word (const struct seccomp_data *d, uint32_t k, bool *bad)
{
  uint32_t w;

  if (k % 4 != 0 || k + 4 > sizeof *d)
    {
      *bad = true;
      return 0;
    }
  memcpy (&w, (const char *)d + k, 4);
  return w;
}

static bool
jump_taken (uint16_t code, uint32_t a, uint32_t operand)
{
  switch (BPF_OP (code))
    {
    case BPF_JEQ:
      return a == operand;
    case BPF_JGT:
      return a > operand;
    case BPF_JGE:
      return a >= operand;
    case BPF_JSET:
      return (a & operand) != 0;
    default:
      return false;
    }
}

static bool
alu (uint16_t code, uint32_t *a, uint32_t operand)
{
  switch (BPF_OP (code))
    {
    case BPF_AND:
      *a &= operand;
      return true;
    case BPF_OR:
      *a |= operand;
      return true;
    case BPF_ADD:
      *a += operand;
      return true;
    case BPF_SUB:
      *a -= operand;
      return true;
    case BPF_XOR:
      *a ^= operand;
      return true;
    case BPF_LSH:
      *a = operand < 32 ? *a << operand : 0;
      return true;
    case BPF_RSH:
      *a = operand < 32 ? *a >> operand : 0;
      return true;
    default:
      return false;
    }
}

/* What the kernel would return for `d`, or VERDICT_BAD. */
static uint32_t
run_bpf (const struct ab_seccomp_prog *p, const struct seccomp_data *d, unsigned long *steps)
{
  uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 };
  unsigned pc = 0;
  bool bad = false;

  while (pc < p->len && !bad)
    {
      const struct sock_filter *f = &p->insns[pc++];
      uint32_t operand = BPF_SRC (f->code) == BPF_X ? x : f->k;

      ++*steps;
      switch (BPF_CLASS (f->code))
        {
        case BPF_LD:
          if (BPF_MODE (f->code) == BPF_ABS && BPF_SIZE (f->code) == BPF_W)
            a = load_word (d, f->k, &bad);
          else if (BPF_MODE (f->code) == BPF_IMM)
            a = f->k;
          else if (BPF_MODE (f->code) == BPF_MEM && f->k < BPF_MEMWORDS)
            a = mem[f->k];
          else
            bad = true;
          break;
        case BPF_LDX:
          if (BPF_MODE (f->code) == BPF_IMM)
            x = f->k;
          else if (BPF_MODE (f->code) == BPF_MEM && f->k < BPF_MEMWORDS)
            x = mem[f->k];
          else
            bad = true;
          break;
        case BPF_ST:
        case BPF_STX:
          if (f->k >= BPF_MEMWORDS)
            bad = true;
          else
            mem[f->k] = BPF_CLASS (f->code) == BPF_ST ? a : x;
          break;
        case BPF_ALU:
          if (BPF_OP (f->code) == BPF_NEG)
            a = -a;
          else if (!alu (f->code, &a, operand))
            bad = true;
          break;
        case BPF_JMP:
          if (BPF_OP (f->code) == BPF_JA)
            pc += f->k;
          else if (BPF_OP (f->code) == BPF_JEQ || BPF_OP (f->code) == BPF_JGT || BPF_OP (f->code) == BPF_JGE
                   || BPF_OP (f->code) == BPF_JSET)
            pc += jump_taken (f->code, a, operand) ? f->jt : f->jf;
          else
            bad = true;
          break;
        case BPF_RET:
          return BPF_RVAL (f->code) == BPF_A ? a : f->k;
        case BPF_MISC:
          if (BPF_MISCOP (f->code) == BPF_TAX)
            x = a;
          else
            a = x;
          break;
        default:
          bad = true;
        }
    }
  /* Falling off the end is refused by the kernel's checker: never valid. */
  return VERDICT_BAD;
}

/* ---- the inputs --------------------------------------------------------- */

struct values
{
  uint64_t *v;
  size_t n;
};

static void
values_add (struct values *vs, uint64_t v)
{
  size_t i;

  for (i = 0; i < vs->n; i++)
    if (vs->v[i] == v)
      return;
  vs->v = xreallocarray (vs->v, vs->n + 1, sizeof *vs->v);
  vs->v[vs->n++] = v;
}

/* The profile's constants and their neighbours, and the usual edges. */
static void
argument_values (const struct ab_seccomp *s, struct values *vs)
{
  static const uint64_t edges[] = {
    0, 1, 2, 0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ULL, 0x100000001ULL, 1ULL << 63, UINT64_MAX
  };
  size_t i, k;

  for (i = 0; i < AB_ARRAY_SIZE (edges); i++)
    values_add (vs, edges[i]);
  for (i = 0; i < s->n_syscalls; i++)
    for (k = 0; k < s->syscalls[i].n_args; k++)
      {
        const struct ab_seccomp_arg *a = &s->syscalls[i].args[k];
        const uint64_t base[] = { a->value, a->value_two, a->value & a->value_two, a->value | a->value_two };
        size_t b;

        for (b = 0; b < AB_ARRAY_SIZE (base); b++)
          {
            values_add (vs, base[b]);
            values_add (vs, base[b] - 1);
            values_add (vs, base[b] + 1);
            values_add (vs, ~base[b]);
            values_add (vs, base[b] ^ 0xffffffff00000000ULL);
          }
      }
}

/* Does some rule with arguments name syscall `nr` of `arch`? */
static bool
nr_has_arg_rule (const struct ab_seccomp *s, uint32_t arch, int nr)
{
  size_t i, k;

  for (i = 0; i < s->n_syscalls; i++)
    if (s->syscalls[i].n_args > 0)
      for (k = 0; k < s->syscalls[i].names.n; k++)
        if (seccomp_syscall_resolve_name_arch (arch, s->syscalls[i].names.v[k]) == nr)
          return true;
  return false;
}

struct compare
{
  const struct ab_seccomp_prog *a, *b; /* a layout against the linear one */
  unsigned long inputs, mismatches, bad, steps_a, steps_b;
  uint64_t seed;
  struct seccomp_data first; /* the first input the two programs disagree on */
};

static void
compare_one (struct compare *c, const struct seccomp_data *d)
{
  uint32_t t = run_bpf (c->a, d, &c->steps_a), l = run_bpf (c->b, d, &c->steps_b);

  c->inputs++;
  if (t == VERDICT_BAD || l == VERDICT_BAD)
    c->bad++;
  if (t != l && c->mismatches++ == 0)
    c->first = *d;
}

static void
compare_nr (struct compare *c, const struct ab_seccomp *s, const struct values *vs, uint32_t arch,
            uint32_t scmp_arch, uint32_t nr)
{
  struct seccomp_data d = { .nr = (int)nr, .arch = arch, .instruction_pointer = 0x400000 };
  size_t v;
  int i;

  compare_one (c, &d);
  for (i = 0; i < 6; i++)
    d.args[i] = UINT64_MAX;
  compare_one (c, &d);
  /* A few vectors mixing the profile's values across the indexes (a fixed
     linear congruential sequence, so a failure repeats). */
  for (v = 0; v < 8; v++)
    {
      for (i = 0; i < 6; i++)
        {
          c->seed = c->seed * 6364136223846793005ULL + 1442695040888963407ULL;
          d.args[i] = vs->v[(c->seed >> 33) % vs->n];
        }
      compare_one (c, &d);
    }
  if (!nr_has_arg_rule (s, scmp_arch, (int)(nr & ~X32_BIT)))
    return;
  for (v = 0; v < vs->n; v++)
    {
      int j;

      for (j = 0; j < 6; j++)
        d.args[j] = vs->v[v];
      compare_one (c, &d);
      for (i = 0; i < 6; i++)
        {
          for (j = 0; j < 6; j++)
            d.args[j] = j == i ? vs->v[v] : 0;
          compare_one (c, &d);
        }
    }
}

/* Every input of the profile through programs a and b (the linear one). */
static void
compare_programs (const char *what, const char *name, const struct ab_seccomp *s, const struct ab_seccomp_prog *a,
                  const struct ab_seccomp_prog *b)
{
  static const uint32_t edge_nrs[] = { 0xffffffff, 0x3fffffff, 0x7fffffff, 0x40000000 + 1023, 4095 };
  struct values vs = { 0 };
  struct compare c = { .a = a, .b = b, .seed = 1 };
  uint32_t nr;
  size_t i;

  argument_values (s, &vs);
  for (nr = 0; nr < 1024; nr++)
    {
      compare_nr (&c, s, &vs, AUDIT_ARCH_X86_64, SCMP_ARCH_X86_64, nr);
      compare_nr (&c, s, &vs, AUDIT_ARCH_X86_64, SCMP_ARCH_X32, nr | X32_BIT);
      compare_nr (&c, s, &vs, AUDIT_ARCH_I386, SCMP_ARCH_X86, nr);
      compare_nr (&c, s, &vs, AUDIT_ARCH_AARCH64, SCMP_ARCH_AARCH64, nr);
    }
  for (i = 0; i < AB_ARRAY_SIZE (edge_nrs); i++)
    {
      compare_nr (&c, s, &vs, AUDIT_ARCH_X86_64, SCMP_ARCH_X86_64, edge_nrs[i]);
      compare_nr (&c, s, &vs, AUDIT_ARCH_I386, SCMP_ARCH_X86, edge_nrs[i]);
    }
  ok (c.bad == 0, "%s: the interpreter knows every instruction of the %s and the linear program", what, name);
  ok (c.mismatches == 0 && c.inputs > 8 * 1024,
      "%s: %s and linear give the same verdict for all %lu inputs (%zu argument values)", what, name, c.inputs,
      vs.n);
  if (c.mismatches)
    printf ("# %lu differ; first: arch %#x nr %#x args %#llx %#llx %#llx\n", c.mismatches, c.first.arch,
            (unsigned)c.first.nr, (unsigned long long)c.first.args[0], (unsigned long long)c.first.args[1],
            (unsigned long long)c.first.args[2]);
  printf ("# instructions run per input: %s %.1f, linear %.1f\n", name, (double)c.steps_a / (double)c.inputs,
          (double)c.steps_b / (double)c.inputs);
  free (vs.v);
}

/* The tree and, where the profile allows it (the native architecture
   alone, a default other than allow), the ranges layout, each against
   the linear one; ab_seccomp_compile gives the shorter of the two (the
   tree where the ranges do not apply): its estimate agrees with the
   lengths.  want_ranges: they apply. */
static void
compare_layouts (const char *what, const struct ab_seccomp *s, bool want_ranges)
{
  struct ab_seccomp_prog tree = { 0 }, linear = { 0 }, ranges = { 0 }, dflt = { 0 };
  const struct ab_seccomp_prog *chosen;
  ab_error_t err = { 0 };
  bool have_ranges;

  if (ab_seccomp_compile_libseccomp (s, AB_SECCOMP_TREE, NULL, &tree, &err) < 0
      || ab_seccomp_compile_libseccomp (s, AB_SECCOMP_LINEAR, NULL, &linear, &err) < 0
      || ab_seccomp_compile (s, &dflt, &err) < 0)
    {
      ok (0, "%s: compiles in both layouts (%s)", what, err.msg);
      goto out;
    }
  have_ranges = compile_ranges (s, true, &ranges) == 0;
  ok (have_ranges == want_ranges, "%s: the ranges layout %s", what, want_ranges ? "applies" : "does not apply");
  chosen = have_ranges && ranges.len < tree.len ? &ranges : &tree;
  ok (dflt.len == chosen->len && memcmp (dflt.insns, chosen->insns, chosen->len * sizeof *chosen->insns) == 0,
      "%s: ab_seccomp_compile gives the shorter layout, the %s (%u instructions; tree %u, ranges %u, linear %u)",
      what, chosen == &ranges ? "ranges" : "tree", chosen->len, tree.len, have_ranges ? ranges.len : 0,
      linear.len);
  compare_programs (what, "tree", s, &tree, &linear);
  if (have_ranges)
    compare_programs (what, "ranges", s, &ranges, &linear);
out:
  ab_seccomp_prog_free (&tree);
  ab_seccomp_prog_free (&linear);
  ab_seccomp_prog_free (&ranges);
  ab_seccomp_prog_free (&dflt);
}

/* ---- profiles ----------------------------------------------------------- */

/* A config holding only `seccomp` (a JSON object) as linux.seccomp. */
static struct ab_spec *
spec_with_seccomp (const char *seccomp)
{
  static const char fmt[] = "{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"rootfs\"},"
                            "\"process\":{\"args\":[\"true\"],\"cwd\":\"/\"},\"linux\":{\"seccomp\":%s}}";
  _cleanup_free_ char *doc = NULL;
  ab_error_t err = { 0 };
  struct ab_spec *s;

  if (asprintf (&doc, fmt, seccomp) < 0)
    abort ();
  s = ab_spec_parse (doc, strlen (doc), &err);
  if (s == NULL)
    printf ("# parse error: %s\n", err.msg);
  return s;
}

static void
test_default_profile (void)
{
  _cleanup_free_ char *doc = ab_spec_default_json (NULL, NULL);
  ab_error_t err = { 0 };
  struct ab_spec *s = ab_spec_parse (doc, strlen (doc), &err);

  if (s == NULL || s->linux_ == NULL || s->linux_->seccomp == NULL)
    {
      ok (0, "the default profile parses (%s)", err.msg);
      return;
    }
  compare_layouts ("agentbox's default profile", s->linux_->seccomp,
                   s->linux_->seccomp->architectures.n == 0
                       || (s->linux_->seccomp->architectures.n == 1
                           && strcmp (s->linux_->seccomp->architectures.v[0], "SCMP_ARCH_X86_64") == 0));
  ab_spec_free (s);
}

/* Every operator, several indexes, rules sharing a syscall, other actions
   than allow and errno, under three default actions; for three
   architectures (the tree) and for the native one alone, listed or not
   (the ranges, unless the default allows).  The native profiles add a
   syscall allowed outright that an argument rule also names (getpid: not
   a range's) and a rule that repeats the default action (brk: still a
   range's, the rule being a no-op). */
static void
test_operator_profiles (void)
{
  static const char rules[]
      = "\"syscalls\":["
        "{\"names\":[\"read\",\"write\",\"close\",\"exit_group\",\"getpid\",\"brk\",\"mmap\"],"
        "\"action\":\"SCMP_ACT_ALLOW\"},"
        "{\"names\":[\"getppid\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":18,\"args\":["
        "{\"index\":1,\"value\":240,\"valueTwo\":48,\"op\":\"SCMP_CMP_MASKED_EQ\"}]},"
        "{\"names\":[\"personality\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":["
        "{\"index\":0,\"value\":0,\"op\":\"SCMP_CMP_EQ\"},{\"index\":0,\"value\":8,\"op\":\"SCMP_CMP_EQ\"},"
        "{\"index\":0,\"value\":4294967295,\"op\":\"SCMP_CMP_EQ\"}]},"
        "{\"names\":[\"socket\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":["
        "{\"index\":0,\"value\":40,\"op\":\"SCMP_CMP_NE\"}]},"
        "{\"names\":[\"kill\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":1,\"args\":["
        "{\"index\":0,\"value\":10,\"op\":\"SCMP_CMP_LT\"},{\"index\":1,\"value\":9,\"op\":\"SCMP_CMP_LE\"}]}"
        ","
        "{\"names\":[\"tkill\"],\"action\":\"SCMP_ACT_KILL_PROCESS\",\"args\":["
        "{\"index\":2,\"value\":4294967296,\"op\":\"SCMP_CMP_GE\"}]},"
        "{\"names\":[\"tgkill\"],\"action\":\"SCMP_ACT_TRAP\",\"args\":["
        "{\"index\":5,\"value\":9223372036854775808,\"op\":\"SCMP_CMP_GT\"}]},"
        "{\"names\":[\"clone\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":["
        "{\"index\":0,\"value\":2114060288,\"valueTwo\":0,\"op\":\"SCMP_CMP_MASKED_EQ\"}]},"
        "{\"names\":[\"clone3\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":38},"
        "{\"names\":[\"ptrace\"],\"action\":\"SCMP_ACT_KILL\"},"
        "{\"names\":[\"uname\"],\"action\":\"SCMP_ACT_LOG\"}";
  static const char native_rules[]
      = ",{\"names\":[\"getpid\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":5,\"args\":["
        "{\"index\":0,\"value\":3,\"op\":\"SCMP_CMP_EQ\"}]},"
        "{\"names\":[\"brk\"],\"action\":\"SCMP_ACT_ERRNO\"}";
  static const struct
  {
    const char *archs, *extra, *name;
    bool ranges; /* for a default other than allow */
  } variants[] = {
    { "\"architectures\":[\"SCMP_ARCH_X86_64\",\"SCMP_ARCH_X86\",\"SCMP_ARCH_X32\"],", "", "3 architectures", false },
    { "\"architectures\":[\"SCMP_ARCH_X86_64\"],", native_rules, "x86_64 alone", true },
    { "", native_rules, "no architecture listed", true },
  };
  static const char *const defaults[] = { "SCMP_ACT_ERRNO", "SCMP_ACT_ALLOW", "SCMP_ACT_KILL_PROCESS" };
  size_t i, v;

  for (v = 0; v < AB_ARRAY_SIZE (variants); v++)
    for (i = 0; i < AB_ARRAY_SIZE (defaults); i++)
      {
        _cleanup_free_ char *sec = NULL, *what = NULL;
        struct ab_spec *s;

        if (asprintf (&sec, "{\"defaultAction\":\"%s\",%s%s%s]}", defaults[i], variants[v].archs, rules,
                      variants[v].extra)
                < 0
            || asprintf (&what, "operators and actions, %s, default %s", variants[v].name, defaults[i]) < 0)
          abort ();
        s = spec_with_seccomp (sec);
        if (s == NULL || s->linux_ == NULL || s->linux_->seccomp == NULL)
          {
            ok (0, "%s: parses", what);
            continue;
          }
        compare_layouts (what, s->linux_->seccomp, variants[v].ranges && strcmp (defaults[i], "SCMP_ACT_ALLOW") != 0);
        ab_spec_free (s);
      }
}

/* ---- the interpreter against the kernel --------------------------------- */

struct probe
{
  long nr;
  unsigned long a0, a1;
};

/* The program ab_seccomp_compile makes of `profile`, installed in a child:
   each probe's errno (or 0) is what the interpreter predicts from its
   verdict.  The probed syscalls ignore their arguments or succeed with
   them (getppid, getuid, ...), so only the filter decides; clone3 with no
   arguments fails with EINVAL when allowed, never with the rule's ENOSYS.
   The result is the program's layout ("tree", "ranges"), for the caller
   to check. */
static const char *
kernel_matches (const char *what, const char *profile, const struct probe *probes, size_t n)
{
  struct ab_seccomp_prog prog = { 0 }, ranges = { 0 };
  int predicted[16], got[16], fds[2], status, filtered = 0;
  ab_error_t err = { 0 };
  const char *layout = "tree";
  struct ab_spec *s;
  size_t i;
  pid_t pid;

  s = spec_with_seccomp (profile);
  if (s == NULL || n > AB_ARRAY_SIZE (got) || ab_seccomp_compile (s->linux_->seccomp, &prog, &err) < 0)
    {
      ok (0, "%s: the probe profile compiles (%s)", what, err.msg);
      ab_spec_free (s);
      return "";
    }
  if (compile_ranges (s->linux_->seccomp, true, &ranges) == 0
      && ranges.len == prog.len && memcmp (ranges.insns, prog.insns, prog.len * sizeof *prog.insns) == 0)
    layout = "ranges";
  for (i = 0; i < n; i++)
    {
      struct seccomp_data d = { .nr = (int)probes[i].nr, .arch = AUDIT_ARCH_X86_64 };
      unsigned long steps = 0;
      uint32_t v;

      d.args[0] = probes[i].a0;
      d.args[1] = probes[i].a1;
      v = run_bpf (&prog, &d, &steps);
      predicted[i] = (v & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO ? (int)(v & SECCOMP_RET_DATA) : 0;
      filtered += predicted[i] != 0;
    }
  /* The allowed clone3 fails on its own (no arguments): expect that. */
  for (i = 0; i < n; i++)
    if (probes[i].nr == SYS_clone3 && predicted[i] == 0)
      predicted[i] = EINVAL;
  if (pipe (fds) < 0 || (pid = fork ()) < 0)
    abort ();
  if (pid == 0)
    {
      close (fds[0]);
      if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || ab_seccomp_install (&prog, NULL) < 0)
        _exit (3);
      for (i = 0; i < n; i++)
        {
          int e = syscall (probes[i].nr, probes[i].a0, probes[i].a1, 0, 0, 0, 0) < 0 ? errno : 0;

          if (write (fds[1], &e, sizeof e) != sizeof e)
            _exit (4);
        }
      _exit (0);
    }
  close (fds[1]);
  for (i = 0; i < n; i++)
    if (read (fds[0], &got[i], sizeof got[i]) != sizeof got[i])
      got[i] = -1;
  close (fds[0]);
  waitpid (pid, &status, 0);
  for (i = 0; i < n; i++)
    if (predicted[i] != got[i])
      printf ("# probe %zu: nr %ld (%#lx, %#lx): predicted errno %d, kernel %d\n", i, probes[i].nr,
              probes[i].a0, probes[i].a1, predicted[i], got[i]);
  ok (WIFEXITED (status) && WEXITSTATUS (status) == 0 && memcmp (predicted, got, n * sizeof *got) == 0
          && filtered > 0 && (size_t)filtered < n,
      "%s: the interpreter predicts what the kernel does with the installed %s (%zu probes, %d filtered)", what,
      layout, n, filtered);
  ab_seccomp_prog_free (&prog);
  ab_seccomp_prog_free (&ranges);
  ab_spec_free (s);
  return layout;
}

static void
test_interpreter_matches_kernel (void)
{
  static const struct probe probes[] = {
    { SYS_getppid, 0, 0x35 }, { SYS_getppid, 0, 0x45 }, { SYS_getppid, 0, 0x130 }, { SYS_getuid, 3, 9 },
    { SYS_getuid, 3, 10 },    { SYS_getuid, 12, 0 },    { SYS_geteuid, 8, 0 },     { SYS_geteuid, 9, 0 },
    { SYS_getegid, 40, 0 },   { SYS_getegid, 41, 0 },   { SYS_clone3, 0, 0 },
  };
  static const struct probe native[] = {
    { SYS_getppid, 0, 0 }, { SYS_getpid, 7, 7 },   { SYS_getegid, 5, 0 }, { SYS_getegid, 6, 0 },
    { SYS_clone3, 0, 0 },  { SYS_mount, 0, 0 },    { SYS_acct, 0, 0 },    { SYS_getegid, 0, 0 },
    { SYS_umask, 022, 0 }, { SYS_getuid, 1, 2 },
  };
  _cleanup_free_ char *doc = ab_spec_default_json (NULL, NULL), *allow = NULL, *profile = NULL;
  struct ab_spec *dflt = ab_spec_parse (doc, strlen (doc), NULL);
  const char *layout;

  kernel_matches ("a profile allowing by default",
                  "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":["
                  "{\"names\":[\"getppid\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":18,\"args\":["
                  "{\"index\":1,\"value\":240,\"valueTwo\":48,\"op\":\"SCMP_CMP_MASKED_EQ\"}]},"
                  "{\"names\":[\"getuid\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":1,\"args\":["
                  "{\"index\":0,\"value\":10,\"op\":\"SCMP_CMP_LT\"},"
                  "{\"index\":1,\"value\":9,\"op\":\"SCMP_CMP_LE\"}]},"
                  "{\"names\":[\"geteuid\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":22,\"args\":["
                  "{\"index\":0,\"value\":8,\"op\":\"SCMP_CMP_EQ\"}]},"
                  "{\"names\":[\"getegid\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":7,\"args\":["
                  "{\"index\":0,\"value\":40,\"op\":\"SCMP_CMP_NE\"}]},"
                  "{\"names\":[\"clone3\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":38}]}",
                  probes, AB_ARRAY_SIZE (probes));

  /* The default profile's outright allowlist but getegid, which only an
     argument rule allows (its first argument 5), for x86_64 alone, a
     default errno of 77: the ranges in front of the tree, in the kernel. */
  allow = xstrdup ("");
  for (size_t i = 0; dflt && i < dflt->linux_->seccomp->syscalls[0].names.n; i++)
    {
      const char *name = dflt->linux_->seccomp->syscalls[0].names.v[i];
      char *next = NULL;
      if (strcmp (name, "getegid") == 0)
        continue;
      if (asprintf (&next, "%s%s\"%s\"", allow, allow[0] ? "," : "", name) < 0)
        abort ();
      free (allow);
      allow = next;
    }
  if (asprintf (&profile,
                "{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"defaultErrnoRet\":77,\"architectures\":"
                "[\"SCMP_ARCH_X86_64\"],\"syscalls\":[{\"names\":[%s],\"action\":\"SCMP_ACT_ALLOW\"},"
                "{\"names\":[\"getegid\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":["
                "{\"index\":0,\"value\":5,\"op\":\"SCMP_CMP_EQ\"}]},"
                "{\"names\":[\"clone3\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":38}]}",
                allow)
      < 0)
    abort ();
  layout = kernel_matches ("the default allowlist, x86_64 alone", profile, native, AB_ARRAY_SIZE (native));
  is_str (layout, "ranges", "... installed as the ranges layout");
  ab_spec_free (dflt);
}

/* A profile of the first n names of `names`, each allowed only for two
   argument values, for three architectures. */
static struct ab_spec *
arg_heavy_spec (const struct ab_strv *names, size_t n)
{
  _cleanup_free_ char *rules = xstrdup (""), *sec = NULL;
  struct ab_spec *s;
  size_t i;

  for (i = 0; i < n && i < names->n; i++)
    {
      char *next = NULL;

      if (asprintf (&next,
                    "%s%s{\"names\":[\"%s\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":["
                    "{\"index\":0,\"value\":%zu,\"op\":\"SCMP_CMP_EQ\"},"
                    "{\"index\":1,\"value\":%zu,\"op\":\"SCMP_CMP_GT\"}]}",
                    rules, i ? "," : "", names->v[i], i + 1, i + 7)
          < 0)
        abort ();
      free (rules);
      rules = next;
    }
  if (asprintf (
          &sec,
          "{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"architectures\":[\"SCMP_ARCH_X86_64\",\"SCMP_ARCH_X86\","
          "\"SCMP_ARCH_X32\"],\"syscalls\":[%s]}",
          rules)
      < 0)
    abort ();
  s = spec_with_seccomp (sec);
  return s;
}

/* Length of the layout's program for the profile, or 0 if it does not fit. */
static unsigned
layout_len (const struct ab_seccomp *s, enum ab_seccomp_layout layout)
{
  struct ab_seccomp_prog p = { 0 };
  ab_error_t err = { 0 };
  unsigned len;

  if (ab_seccomp_compile_libseccomp (s, layout, NULL, &p, &err) < 0)
    return 0;
  len = p.len;
  ab_seccomp_prog_free (&p);
  return len;
}

/* A profile whose tree passes the kernel's limit but whose linear program
   does not is still accepted: ab_seccomp_compile falls back to linear.
   With libseccomp 2.5.4, 236 such rules for three architectures make a
   tree just past 4096 instructions; the shape is probed, not assumed. */
static void
test_too_big_for_a_tree (void)
{
  _cleanup_free_ char *doc = ab_spec_default_json (NULL, NULL);
  struct ab_spec *dflt = ab_spec_parse (doc, strlen (doc), NULL);
  const struct ab_strv *names = &dflt->linux_->seccomp->syscalls[0].names;
  struct ab_spec *s = arg_heavy_spec (names, 240);
  unsigned tree = layout_len (s->linux_->seccomp, AB_SECCOMP_TREE);
  struct ab_seccomp_prog p = { 0 };
  ab_error_t err = { 0 };
  int r = ab_seccomp_compile (s->linux_->seccomp, &p, &err);

  if (tree != 0)
    printf ("ok %d # SKIP this libseccomp lays 240 argument rules out in %u instructions as a tree\n",
            ++tap_count, tree);
  else
    ok (r == 0 && p.len > 0 && p.len <= 4096,
        "a profile of 240 argument rules for 3 architectures, too long as a tree, compiles linear (%u "
        "instructions)",
        (unsigned)p.len);
  if (r < 0)
    printf ("# %s\n", err.msg);
  ab_seccomp_prog_free (&p);
  ab_spec_free (s);
  ab_spec_free (dflt);
}

int
main (void)
{
  test_default_profile ();
  test_operator_profiles ();
  test_interpreter_matches_kernel ();
  test_too_big_for_a_tree ();
  return tap_done ();
}
