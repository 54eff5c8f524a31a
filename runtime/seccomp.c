/* linux.seccomp -> a classic BPF program (libseccomp), compiled in the parent
 * and installed by the child with a single seccomp(2) call.
 *
 * Why compile in the parent: libseccomp allocates, probes the kernel and can
 * fail in many ways.  All of that happens before clone, where an error is an
 * ordinary error.  The child, which has already dropped its privileges and is
 * about to execve the untrusted program, is left with one syscall that takes a
 * ready array of instructions.
 *
 * Semantics follow runc, the reference for what existing profiles expect:
 * SCMP_ACT_KILL is KILL_THREAD, a rule whose action equals the default action
 * is skipped, a syscall name libseccomp does not know is skipped (and
 * reported), and arguments sharing an index are OR-ed as separate rules.
 * Unlike runc, an unknown name in a rule that would stop a syscall the
 * default action lets through is refused by validation (spec/validate.c):
 * skipping it would allow what the author denied.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/seccomp.h"
#include "runtime/seccomp-internal.h"
#include "spec/tables.h"
#include "base/util.h"

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

/* The largest errno the kernel returns as is; larger values are clamped. */
#define AB_MAX_ERRNO 4095

static const enum scmp_compare op_tokens[AB_SCMP_CMP__COUNT] = {
  [AB_SCMP_CMP_NE] = SCMP_CMP_NE,
  [AB_SCMP_CMP_LT] = SCMP_CMP_LT,
  [AB_SCMP_CMP_LE] = SCMP_CMP_LE,
  [AB_SCMP_CMP_EQ] = SCMP_CMP_EQ,
  [AB_SCMP_CMP_GE] = SCMP_CMP_GE,
  [AB_SCMP_CMP_GT] = SCMP_CMP_GT,
  [AB_SCMP_CMP_MASKED_EQ] = SCMP_CMP_MASKED_EQ,
};

struct flag_entry
{
  unsigned ab;
  unsigned long kernel;
  const char *name;
};

static const struct flag_entry flag_table[] = {
  { AB_SECCOMP_FLAG_TSYNC, SECCOMP_FILTER_FLAG_TSYNC, "SECCOMP_FILTER_FLAG_TSYNC" },
  { AB_SECCOMP_FLAG_LOG, SECCOMP_FILTER_FLAG_LOG, "SECCOMP_FILTER_FLAG_LOG" },
  { AB_SECCOMP_FLAG_SPEC_ALLOW, SECCOMP_FILTER_FLAG_SPEC_ALLOW, "SECCOMP_FILTER_FLAG_SPEC_ALLOW" },
  { AB_SECCOMP_FLAG_WAIT_KILLABLE_RECV, SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV,
    "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV" },
};

/* An architecture this libseccomp does not know maps to token 0 and is
   refused by name: it cannot be filtered, so it must not be silently let
   through by the bad-architecture action either. */
struct arch_entry
{
  const char *name;
  uint32_t token;
};

static const struct arch_entry arch_table[] = {
  { "SCMP_ARCH_X86", SCMP_ARCH_X86 },
  { "SCMP_ARCH_X86_64", SCMP_ARCH_X86_64 },
  { "SCMP_ARCH_X32", SCMP_ARCH_X32 },
  { "SCMP_ARCH_ARM", SCMP_ARCH_ARM },
  { "SCMP_ARCH_AARCH64", SCMP_ARCH_AARCH64 },
  { "SCMP_ARCH_MIPS", SCMP_ARCH_MIPS },
  { "SCMP_ARCH_MIPS64", SCMP_ARCH_MIPS64 },
  { "SCMP_ARCH_MIPS64N32", SCMP_ARCH_MIPS64N32 },
  { "SCMP_ARCH_MIPSEL", SCMP_ARCH_MIPSEL },
  { "SCMP_ARCH_MIPSEL64", SCMP_ARCH_MIPSEL64 },
  { "SCMP_ARCH_MIPSEL64N32", SCMP_ARCH_MIPSEL64N32 },
  { "SCMP_ARCH_PPC", SCMP_ARCH_PPC },
  { "SCMP_ARCH_PPC64", SCMP_ARCH_PPC64 },
  { "SCMP_ARCH_PPC64LE", SCMP_ARCH_PPC64LE },
  { "SCMP_ARCH_S390", SCMP_ARCH_S390 },
  { "SCMP_ARCH_S390X", SCMP_ARCH_S390X },
  { "SCMP_ARCH_PARISC", SCMP_ARCH_PARISC },
  { "SCMP_ARCH_PARISC64", SCMP_ARCH_PARISC64 },
  { "SCMP_ARCH_RISCV64", SCMP_ARCH_RISCV64 },
#ifdef SCMP_ARCH_LOONGARCH64
  { "SCMP_ARCH_LOONGARCH64", SCMP_ARCH_LOONGARCH64 },
#else
  { "SCMP_ARCH_LOONGARCH64", 0 },
#endif
#ifdef SCMP_ARCH_M68K
  { "SCMP_ARCH_M68K", SCMP_ARCH_M68K },
#else
  { "SCMP_ARCH_M68K", 0 },
#endif
#ifdef SCMP_ARCH_SH
  { "SCMP_ARCH_SH", SCMP_ARCH_SH },
#else
  { "SCMP_ARCH_SH", 0 },
#endif
#ifdef SCMP_ARCH_SHEB
  { "SCMP_ARCH_SHEB", SCMP_ARCH_SHEB },
#else
  { "SCMP_ARCH_SHEB", 0 },
#endif
};

static inline void
scmp_ctx_releasep (scmp_filter_ctx *ctx)
{
  if (*ctx != NULL)
    seccomp_release (*ctx);
}
#define _cleanup_scmp_ctx_ _cleanup_ (scmp_ctx_releasep)

static void
prog_freep (struct ab_seccomp_prog *p)
{
  ab_seccomp_prog_free (p);
}

static const char *
action_name (int action)
{
  const char *name = ab_seccomp_action_name (action);
  return name ? name : "(invalid action)";
}

/* Map one action of the model to libseccomp's encoding.  `path` names the
   object ("linux.seccomp.syscalls[2]" or "linux.seccomp") for errors, and
   `what` the member holding the action ("action" or "defaultAction"). */
int
ab_seccomp_map_action (int action, bool errno_set, uint32_t errno_ret, const char *path, const char *what,
                       const char *errno_what, uint32_t *out, ab_error_t *err)
{
  if (action < 0 || action >= AB_SCMP_ACT__COUNT)
    return ab_error_setc (err, AB_EC_CONFIG, 0, "%s.%s: invalid seccomp action %d", path, what, action);

  if (errno_set && action != AB_SCMP_ACT_ERRNO && action != AB_SCMP_ACT_TRACE)
    return ab_error_setc (err, AB_EC_CONFIG, 0,
                          "%s.%s: %s does not take an errno (only SCMP_ACT_ERRNO and SCMP_ACT_TRACE do)",
                          path, errno_what, action_name (action));

  switch (action)
    {
    case AB_SCMP_ACT_KILL:
    case AB_SCMP_ACT_KILL_THREAD:
      /* As in runc and libseccomp: plain KILL is KILL_THREAD.  A profile
         that wants the whole process gone says KILL_PROCESS. */
      *out = SCMP_ACT_KILL_THREAD;
      return 0;
    case AB_SCMP_ACT_KILL_PROCESS:
      *out = SCMP_ACT_KILL_PROCESS;
      return 0;
    case AB_SCMP_ACT_TRAP:
      *out = SCMP_ACT_TRAP;
      return 0;
    case AB_SCMP_ACT_ALLOW:
      *out = SCMP_ACT_ALLOW;
      return 0;
    case AB_SCMP_ACT_LOG:
      *out = SCMP_ACT_LOG;
      return 0;
    case AB_SCMP_ACT_ERRNO:
      /* The kernel clamps the return data to MAX_ERRNO; refuse a value that
         would silently become another errno than the one configured. */
      if (errno_set && errno_ret > AB_MAX_ERRNO)
        return ab_error_setc (err, AB_EC_CONFIG, 0, "%s.%s: errno %u is out of range (0..%d)", path,
                              errno_what, errno_ret, AB_MAX_ERRNO);
      *out = SCMP_ACT_ERRNO (errno_set ? errno_ret : EPERM);
      return 0;
    case AB_SCMP_ACT_TRACE:
      /* For TRACE the value is the message the tracer reads with
         PTRACE_GETEVENTMSG: the 16 bits of SECCOMP_RET_DATA. */
      if (errno_set && errno_ret > 0xffff)
        return ab_error_setc (err, AB_EC_CONFIG, 0, "%s.%s: trace message %u is out of range (0..65535)",
                              path, errno_what, errno_ret);
      *out = SCMP_ACT_TRACE (errno_set ? errno_ret : EPERM);
      return 0;
    case AB_SCMP_ACT_NOTIFY:
      /* The listener fd this creates goes to linux.seccomp.listenerPath
         (runtime/seccomp-notify.h).  As the default, every syscall the
         runtime makes between loading the filter and handing the fd over
         (the handover's own sendmsg) would wait for an agent that does not
         have it yet. */
      if (strcmp (what, "defaultAction") == 0)
        return ab_error_setc (err, AB_EC_CONFIG, 0, "%s.%s: SCMP_ACT_NOTIFY cannot be the default action",
                              path, what);
      *out = SCMP_ACT_NOTIFY;
      return 0;
    default:
      return ab_error_setc (err, AB_EC_CONFIG, 0, "%s.%s: invalid seccomp action %d", path, what, action);
    }
}

uint32_t
ab_seccomp_arch_token (const char *name)
{
  for (size_t j = 0; j < AB_ARRAY_SIZE (arch_table); j++)
    if (strcmp (arch_table[j].name, name) == 0)
      return arch_table[j].token;
  return 0;
}

static int
add_architectures (scmp_filter_ctx ctx, const struct ab_strv *archs, ab_error_t *err)
{
  size_t i, j;

  for (i = 0; i < archs->n; i++)
    {
      const char *name = archs->v[i];
      const struct arch_entry *a = NULL;
      int r;

      for (j = 0; j < AB_ARRAY_SIZE (arch_table); j++)
        if (strcmp (arch_table[j].name, name) == 0)
          {
            a = &arch_table[j];
            break;
          }
      if (a == NULL)
        return ab_error_setc (err, AB_EC_CONFIG, 0,
                              "linux.seccomp.architectures[%zu]: unknown architecture `%s`", i, name);
      if (a->token == 0)
        return ab_error_setc (
            err, AB_EC_CONFIG, 0,
            "linux.seccomp.architectures[%zu]: `%s` is not supported by this libseccomp (%u.%u.%u)", i, name,
            SCMP_VER_MAJOR, SCMP_VER_MINOR, SCMP_VER_MICRO);

      /* The native architecture is already in the filter (seccomp_init). */
      r = seccomp_arch_add (ctx, a->token);
      if (r < 0 && r != -EEXIST)
        return ab_error_setc (err, AB_EC_CONFIG, -r,
                              "linux.seccomp.architectures[%zu]: seccomp_arch_add `%s`", i, name);
    }
  return 0;
}

/* The profile has SCMP_ACT_NOTIFY rules: the program creates a listener. */
static bool
notifies (const struct ab_seccomp *s)
{
  for (size_t i = 0; i < s->n_syscalls; i++)
    if (s->syscalls[i].action == AB_SCMP_ACT_NOTIFY)
      return true;
  return false;
}

/* Translate the configured flags to SECCOMP_FILTER_FLAG_* and check that the
   running kernel takes them, here in the parent, rather than failing in the
   child at the last step. */
static int
map_flags (unsigned flags, bool notify, unsigned *out, ab_error_t *err)
{
  unsigned known = 0;
  size_t i;

  *out = 0;
  for (i = 0; i < AB_ARRAY_SIZE (flag_table); i++)
    {
      known |= flag_table[i].ab;
      if ((flags & flag_table[i].ab) == 0)
        continue;
      if (flag_table[i].ab == AB_SECCOMP_FLAG_WAIT_KILLABLE_RECV && !notify)
        /* The kernel only takes it together with NEW_LISTENER (EINVAL
           otherwise), and NEW_LISTENER comes with SCMP_ACT_NOTIFY rules. */
        return ab_error_setc (err, AB_EC_CONFIG, 0,
                              "linux.seccomp.flags: %s needs a seccomp notification listener (an "
                              "SCMP_ACT_NOTIFY rule)",
                              flag_table[i].name);
      if (!ab_seccomp_flag_supported (flag_table[i].ab))
        return ab_error_setc (err, AB_EC_CONFIG, 0,
                              "linux.seccomp.flags: %s is not supported by the running kernel",
                              flag_table[i].name);
      *out |= (unsigned)flag_table[i].kernel;
    }
  if (flags & ~known)
    return ab_error_setc (err, AB_EC_CONFIG, 0, "linux.seccomp.flags: unknown flag bits 0x%x",
                          flags & ~known);
  if (notify)
    {
      /* The listener: seccomp(2) returns its fd. */
      *out |= (unsigned)SECCOMP_FILTER_FLAG_NEW_LISTENER;
      /* TSYNC reports a thread it could not synchronise through the return
         value, which is the listener's fd now: the kernel takes the two only
         with TSYNC_ESRCH (Linux 5.7).  The process is single-threaded here,
         so no thread is ever reported. */
      if (*out & SECCOMP_FILTER_FLAG_TSYNC)
        *out |= (unsigned)SECCOMP_FILTER_FLAG_TSYNC_ESRCH;
    }
  return 0;
}

/* The conditions of one syscalls[] entry, checked once for all its names
   (and also when the entry is skipped).  *same_index tells whether two
   conditions test the same argument. */
static int
make_conditions (const struct ab_seccomp_rule *rule, const char *path, struct scmp_arg_cmp **out,
                 bool *same_index, ab_error_t *err)
{
  _cleanup_free_ struct scmp_arg_cmp *c = NULL;
  unsigned count[6] = { 0 };
  size_t k;

  *out = NULL;
  *same_index = false;
  if (rule->n_args == 0)
    return 0;

  c = xcalloc (rule->n_args, sizeof *c);
  for (k = 0; k < rule->n_args; k++)
    {
      const struct ab_seccomp_arg *a = &rule->args[k];

      /* seccomp_data carries six arguments. */
      if (a->index >= AB_ARRAY_SIZE (count))
        return ab_error_setc (err, AB_EC_CONFIG, 0, "%s.args[%zu].index: %u is out of range (0..5)", path, k,
                              a->index);
      if (a->op < 0 || a->op >= AB_SCMP_CMP__COUNT)
        return ab_error_setc (err, AB_EC_CONFIG, 0, "%s.args[%zu].op: invalid operator %d", path, k, a->op);

      /* MASKED_EQ: (arg & value) == valueTwo, the order runc and libseccomp
         use (datum_a is the mask).  The other operators ignore valueTwo. */
      c[k].arg = a->index;
      c[k].op = op_tokens[a->op];
      c[k].datum_a = a->value;
      c[k].datum_b = a->value_two;
      if (++count[a->index] > 1)
        *same_index = true;
    }
  *out = ab_steal_ptr (&c);
  return 0;
}

static int
add_rule (scmp_filter_ctx ctx, uint32_t action, int nr, const char *name, const struct scmp_arg_cmp *c,
          size_t n, bool same_index, const char *path, ab_error_t *err)
{
  size_t k;
  int r;

  if (!same_index)
    {
      /* No condition, or conditions on distinct arguments: one rule, all
         conditions must hold (AND). */
      r = seccomp_rule_add_array (ctx, action, nr, (unsigned)n, c);
      if (r < 0)
        return ab_error_setc (err, AB_EC_CONFIG, -r, "%s: seccomp_rule_add `%s`", path, name);
      return 0;
    }

  /* Two conditions on the same argument cannot both be part of one libseccomp
     rule, so, as runc does, each condition becomes a rule of its own (OR). */
  for (k = 0; k < n; k++)
    {
      r = seccomp_rule_add_array (ctx, action, nr, 1, &c[k]);
      if (r < 0)
        return ab_error_setc (err, AB_EC_CONFIG, -r, "%s.args[%zu]: seccomp_rule_add `%s`", path, k, name);
    }
  return 0;
}

bool
ab_nr_set_has (const struct ab_nr_set *set, int nr)
{
  return set != NULL && nr >= 0 && nr < AB_SECCOMP_NR_SET_MAX && (set->bits[nr / 64] >> (nr % 64) & 1);
}

void
ab_nr_set_add (struct ab_nr_set *set, int nr)
{
  if (nr >= 0 && nr < AB_SECCOMP_NR_SET_MAX)
    set->bits[nr / 64] |= 1ULL << (nr % 64);
}

/* The rules, but none for a syscall in `exclude` (NULL: none excluded). */
static int
add_syscalls (scmp_filter_ctx ctx, const struct ab_seccomp *s, uint32_t default_action,
              const struct ab_nr_set *exclude, struct ab_strv *skipped, ab_error_t *err)
{
  size_t i, j;

  for (i = 0; i < s->n_syscalls; i++)
    {
      const struct ab_seccomp_rule *rule = &s->syscalls[i];
      _cleanup_free_ struct scmp_arg_cmp *conds = NULL;
      bool same_index;
      char path[64];
      uint32_t action;

      snprintf (path, sizeof path, "linux.seccomp.syscalls[%zu]", i);
      if (rule->names.n == 0)
        return ab_error_setc (err, AB_EC_CONFIG, 0, "%s.names: must contain at least one syscall name", path);
      if (ab_seccomp_map_action (rule->action, rule->errno_ret_set, rule->errno_ret, path, "action",
                                 "errnoRet", &action, err)
          < 0)
        return -1;
      if (make_conditions (rule, path, &conds, &same_index, err) < 0)
        return -1;

      /* libseccomp refuses a rule that repeats the default action; it is a
         no-op anyway, so skip it as runc does (after validating it). */
      if (action == default_action)
        continue;

      for (j = 0; j < rule->names.n; j++)
        {
          const char *name = rule->names.v[j];
          int nr = seccomp_syscall_resolve_name (name);

          if (nr == __NR_SCMP_ERROR)
            {
              /* Unknown to this libseccomp (a newer syscall, or another
                 architecture's): as runc, skip it and let the caller log it.
                 The default action still applies to it. */
              if (!ab_strv_contains (skipped, name))
                ab_strv_push (skipped, name);
              continue;
            }
          if (ab_nr_set_has (exclude, nr))
            continue; /* allowed outright, by the ranges in front (seccomp-ranges.c) */
          if (add_rule (ctx, action, nr, name, conds, rule->n_args, same_index, path, err) < 0)
            return -1;
        }
    }
  return 0;
}

/* Write the program to a memfd and read it back: libseccomp 2.5 can only
   export to a file descriptor. */
static int
export_program (scmp_filter_ctx ctx, struct ab_seccomp_prog *prog, ab_error_t *err)
{
  _cleanup_close_ int fd = -1;
  struct stat st;
  size_t size;
  ssize_t n;
  int r;

#ifdef MFD_NOEXEC_SEAL
  fd = memfd_create ("agentbox-seccomp", MFD_CLOEXEC | MFD_NOEXEC_SEAL);
  if (fd < 0 && errno == EINVAL)
#endif
    fd = memfd_create ("agentbox-seccomp", MFD_CLOEXEC);
  if (fd < 0)
    return ab_error_set (err, errno, "linux.seccomp: memfd_create for the BPF program");

  r = seccomp_export_bpf (ctx, fd);
  if (r < 0)
    return ab_error_setc (err, AB_EC_INTERNAL, -r, "linux.seccomp: seccomp_export_bpf");
  if (fstat (fd, &st) < 0)
    return ab_error_set (err, errno, "linux.seccomp: fstat the exported BPF program");

  size = (size_t)st.st_size;
  if (size == 0 || size % sizeof (struct sock_filter) != 0)
    return ab_error_setc (err, AB_EC_INTERNAL, 0, "linux.seccomp: exported BPF program has odd size %zu",
                          size);
  if (size / sizeof (struct sock_filter) > AB_SECCOMP_MAX_INSNS)
    return ab_error_setc (
        err, AB_EC_CONFIG, 0,
        "linux.seccomp: the filter needs %zu BPF instructions, more than the kernel's limit of %d",
        size / sizeof (struct sock_filter), AB_SECCOMP_MAX_INSNS);

  prog->insns = xmalloc (size);
  n = pread (fd, prog->insns, size, 0);
  if (n < 0)
    return ab_error_set (err, errno, "linux.seccomp: read back the exported BPF program");
  if ((size_t)n != size)
    return ab_error_setc (err, AB_EC_INTERNAL, 0, "linux.seccomp: short read of the exported BPF program");
  prog->len = (unsigned short)(size / sizeof (struct sock_filter));
  return 0;
}

int
ab_seccomp_compile_libseccomp (const struct ab_seccomp *s, enum ab_seccomp_layout layout,
                               const struct ab_nr_set *exclude, struct ab_seccomp_prog *out, ab_error_t *err)
{
  _cleanup_ (prog_freep) struct ab_seccomp_prog prog = { 0 };
  _cleanup_scmp_ctx_ scmp_filter_ctx ctx = NULL;
  uint32_t default_action;
  int r;

  memset (out, 0, sizeof *out);

  if (ab_seccomp_map_action (s->default_action, s->default_errno_ret_set, s->default_errno_ret,
                             "linux.seccomp", "defaultAction", "defaultErrnoRet", &default_action, err)
      < 0)
    return -1;
  if (map_flags (s->flags, notifies (s), &prog.flags, err) < 0)
    return -1;

  /* seccomp_init probes the kernel (API level) on first use, so actions the
     kernel lacks (KILL_PROCESS, LOG) are refused here rather than becoming a
     filter the kernel would treat as "kill" at run time. */
  ctx = seccomp_init (default_action);
  if (ctx == NULL)
    return ab_error_setc (err, AB_EC_CONFIG, EINVAL, "linux.seccomp.defaultAction: seccomp_init with %s",
                          action_name (s->default_action));

  /* The runtime sets no_new_privs itself, at its own point in the child's
     setup; the filter attributes that only steer seccomp_load (NNP, TSYNC,
     LOG, SSB) do not change the program, and the flags go to seccomp(2) in
     ab_seccomp_install instead. */
  r = seccomp_attr_set (ctx, SCMP_FLTATR_CTL_NNP, 0);
  if (r < 0)
    return ab_error_setc (err, AB_EC_INTERNAL, -r, "linux.seccomp: seccomp_attr_set SCMP_FLTATR_CTL_NNP");

  /* A syscall made through an ABI the profile does not list (int $0x80 on
     x86_64, x32) is the classic way around a filter: kill the whole process,
     not only the thread, so no sibling thread carries on. */
  r = seccomp_attr_set (ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
  if (r == -EINVAL)
    /* A kernel older than 4.14 has no KILL_PROCESS: keep libseccomp's
       default, KILL_THREAD. */
    r = seccomp_attr_set (ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_THREAD);
  if (r < 0)
    return ab_error_setc (err, AB_EC_INTERNAL, -r, "linux.seccomp: seccomp_attr_set SCMP_FLTATR_ACT_BADARCH");

  r = seccomp_attr_set (ctx, SCMP_FLTATR_CTL_OPTIMIZE, (uint32_t)layout);
  if (r < 0)
    return ab_error_setc (err, AB_EC_INTERNAL, -r,
                          "linux.seccomp: seccomp_attr_set SCMP_FLTATR_CTL_OPTIMIZE %d", (int)layout);

  if (add_architectures (ctx, &s->architectures, err) < 0)
    return -1;
  if (add_syscalls (ctx, s, default_action, exclude, &prog.skipped, err) < 0)
    return -1;
  if (export_program (ctx, &prog, err) < 0)
    return -1;

  *out = prog;
  memset (&prog, 0, sizeof prog);
  return 0;
}

/* seccomp(2) through syscall(2): glibc has no wrapper. */
static long
sys_seccomp (unsigned op, unsigned long flags, void *args)
{
  return syscall (SYS_seccomp, op, flags, args);
}

static const char *
first_unsupported_flag (unsigned kflags)
{
  size_t i;

  for (i = 0; i < AB_ARRAY_SIZE (flag_table); i++)
    if ((kflags & flag_table[i].kernel) && !ab_seccomp_flag_supported (flag_table[i].ab))
      return flag_table[i].name;
  return NULL;
}

/* "SECCOMP_FILTER_FLAG_TSYNC|SECCOMP_FILTER_FLAG_LOG" into buf, without
   allocating (this runs in the child). */
static const char *
format_kernel_flags (unsigned kflags, char *buf, size_t size)
{
  static const struct
  {
    unsigned long bit;
    const char *name;
  } names[] = {
    { SECCOMP_FILTER_FLAG_TSYNC, "SECCOMP_FILTER_FLAG_TSYNC" },
    { SECCOMP_FILTER_FLAG_LOG, "SECCOMP_FILTER_FLAG_LOG" },
    { SECCOMP_FILTER_FLAG_SPEC_ALLOW, "SECCOMP_FILTER_FLAG_SPEC_ALLOW" },
    { SECCOMP_FILTER_FLAG_NEW_LISTENER, "SECCOMP_FILTER_FLAG_NEW_LISTENER" },
    { SECCOMP_FILTER_FLAG_TSYNC_ESRCH, "SECCOMP_FILTER_FLAG_TSYNC_ESRCH" },
    { SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV" },
  };
  size_t i, used = 0;

  buf[0] = '\0';
  for (i = 0; i < AB_ARRAY_SIZE (names); i++)
    if (kflags & names[i].bit)
      {
        size_t len = strlen (names[i].name);

        kflags &= ~(unsigned)names[i].bit;
        if (used + len + 2 > size)
          break;
        if (used > 0)
          buf[used++] = '|';
        memcpy (buf + used, names[i].name, len + 1);
        used += len;
      }
  if (kflags != 0 && used + 14 < size)
    {
      /* Bits without a name: "|0x80000000". */
      static const char hex[] = "0123456789abcdef";
      int shift;

      if (used > 0)
        buf[used++] = '|';
      buf[used++] = '0';
      buf[used++] = 'x';
      for (shift = 28; shift > 0 && (kflags >> shift) == 0; shift -= 4)
        ;
      for (; shift >= 0; shift -= 4)
        buf[used++] = hex[(kflags >> shift) & 0xf];
      buf[used] = '\0';
    }
  return buf;
}

int
ab_seccomp_install (const struct ab_seccomp_prog *p, ab_error_t *err)
{
  struct sock_fprog fprog;
  char flags_buf[256];
  const char *flag;
  long r;
  int e;

  /* Never "succeed" without a filter: that would run the program unconfined. */
  if (p->insns == NULL || p->len == 0)
    return ab_error_setc (err, AB_EC_INTERNAL, EINVAL,
                          "seccomp(SECCOMP_SET_MODE_FILTER): no program was compiled");

  fprog.len = p->len;
  fprog.filter = p->insns;
  r = sys_seccomp (SECCOMP_SET_MODE_FILTER, p->flags, &fprog);
  if (r >= 0 && (p->flags & SECCOMP_FILTER_FLAG_NEW_LISTENER))
    return (int)r; /* the listener's fd (close-on-exec) */
  if (r == 0)
    return 0;
  if (r > 0)
    /* With TSYNC the kernel returns the id of a thread it could not
       synchronise (one that has a diverging filter or no_new_privs state). */
    return ab_error_set (err, 0,
                         "seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC): thread %ld cannot be "
                         "synchronised to the filter",
                         r);

  e = errno;
  switch (e)
    {
    case ENOSYS:
      return ab_error_set (err, e,
                           "seccomp(SECCOMP_SET_MODE_FILTER): the kernel has no seccomp filter support "
                           "(CONFIG_SECCOMP_FILTER)");
    case EINVAL:
      flag = first_unsupported_flag (p->flags);
      if (flag != NULL)
        return ab_error_set (err, e, "seccomp(SECCOMP_SET_MODE_FILTER): the kernel rejects flag %s", flag);
      if (p->flags != 0)
        return ab_error_set (
            err, e,
            "seccomp(SECCOMP_SET_MODE_FILTER): the kernel rejects the flags %s (an unknown flag "
            "or combination) or the BPF program",
            format_kernel_flags (p->flags, flags_buf, sizeof flags_buf));
      return ab_error_set (err, e, "seccomp(SECCOMP_SET_MODE_FILTER): the kernel rejects the BPF program");
    case EACCES:
      return ab_error_set (err, e, "seccomp(SECCOMP_SET_MODE_FILTER): needs no_new_privs or CAP_SYS_ADMIN");
    case ENOMEM:
      return ab_error_set (err, e,
                           "seccomp(SECCOMP_SET_MODE_FILTER): the filters attached to the process "
                           "exceed the kernel's total size limit");
    default:
      return ab_error_set (err, e, "seccomp(SECCOMP_SET_MODE_FILTER)");
    }
}

void
ab_seccomp_prog_free (struct ab_seccomp_prog *p)
{
  free (p->insns);
  p->insns = NULL;
  p->len = 0;
  p->flags = 0;
  ab_strv_free (&p->skipped);
}

/* The kernel validates the flags before it reads the program: with a NULL
   program, a flag it knows yields EFAULT and one it does not know EINVAL.
   Nothing is installed either way. */
static bool
probe_flag (unsigned long kflag)
{
  if (kflag == SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)
    /* Only valid together with NEW_LISTENER. */
    kflag |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
  return sys_seccomp (SECCOMP_SET_MODE_FILTER, kflag, NULL) < 0 && errno == EFAULT;
}

bool
ab_seccomp_flag_supported (unsigned ab_flag)
{
  /* 0: not probed yet, 1: supported, -1: not supported.  Racing probes give
     the same answer, so relaxed atomics are enough. */
  static _Atomic signed char cache[AB_ARRAY_SIZE (flag_table)];
  size_t i;

  for (i = 0; i < AB_ARRAY_SIZE (flag_table); i++)
    if (flag_table[i].ab == ab_flag)
      {
        signed char v = atomic_load_explicit (&cache[i], memory_order_relaxed);

        if (v == 0)
          {
            int saved = errno;

            v = probe_flag (flag_table[i].kernel) ? 1 : -1;
            errno = saved;
            atomic_store_explicit (&cache[i], v, memory_order_relaxed);
          }
        return v > 0;
      }
  return false;
}

bool
ab_seccomp_prog_listens (const struct ab_seccomp_prog *p)
{
  return (p->flags & SECCOMP_FILTER_FLAG_NEW_LISTENER) != 0;
}
