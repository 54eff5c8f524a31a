/* Device access: linux.resources.devices, then the OCI default devices.
 *
 * v1 (and hybrid, where devices is a v1 controller): "a" to devices.deny,
 * then each rule in order to devices.allow / devices.deny, then the
 * defaults.  v2 has no devices controller: the same policy is an eBPF
 * program of type BPF_PROG_TYPE_CGROUP_DEVICE attached to the cgroup, which
 * the kernel runs on every open(2) and mknod(2) of a device node.
 *
 * The defaults come after the user's rules so that a config cannot take
 * /dev/null away from the container; they are allowed rw, and m (mknod)
 * only for the nodes the container's /dev is populated with by mknod: the
 * pty slaves (136:*) are made by devpts, never by mknod, so they get rw.
 */
#include "config.h"

#include <inttypes.h>
#include <linux/bpf.h>
#include <sys/syscall.h>

#include "runtime/cgroup/cgroup-internal.h"
#include "base/util.h"

#define DEV_MAJOR_MAX 4095u            /* 12 bits of major in dev_t */
#define DEV_MINOR_MAX ((1u << 20) - 1) /* MINORBITS */

#define RULE(maj, min, acc)                                                                                  \
  {                                                                                                          \
    .allow = true, .type = 'c', .major = { true, maj }, .minor = { min >= 0, min }, .access = acc            \
  }
static const struct ab_device_rule default_rules[] = {
  RULE (1, 3, "rwm"),   /* null */
  RULE (1, 5, "rwm"),   /* zero */
  RULE (1, 7, "rwm"),   /* full */
  RULE (1, 8, "rwm"),   /* random */
  RULE (1, 9, "rwm"),   /* urandom */
  RULE (5, 0, "rwm"),   /* tty */
  RULE (5, 2, "rwm"),   /* ptmx */
  RULE (136, -1, "rw"), /* pts: made by devpts, not mknod */
};
#undef RULE

static unsigned
access_mask (const char *access)
{
  unsigned m = 0;

  for (; *access; access++)
    m |= *access == 'r'   ? AB_CG_DEV_READ
         : *access == 'w' ? AB_CG_DEV_WRITE
         : *access == 'm' ? AB_CG_DEV_MKNOD
                          : 0;
  return m ? m : AB_CG_DEV_READ | AB_CG_DEV_WRITE | AB_CG_DEV_MKNOD; /* "" = all */
}

/* A major or minor: unset or -1 means any. */
static bool
wildcard (const ab_opt_i64 *v)
{
  return !v->set || v->v == -1;
}

int
ab_cg_devices_check (const struct ab_device_rule *rules, size_t n, ab_error_t *err)
{
  size_t i;

  for (i = 0; i < n; i++)
    {
      const struct ab_device_rule *d = &rules[i];
      const char *what = "linux.resources.devices";

      if (d->type != 'a' && d->type != 'c' && d->type != 'b')
        return ab_error_setc (err, AB_EC_CONFIG, 0, "%s[%zu].type: must be a, c or b", what, i);
      if (!wildcard (&d->major) && (d->major.v < 0 || d->major.v > DEV_MAJOR_MAX))
        return ab_error_setc (err, AB_EC_CONFIG, 0,
                              "%s[%zu].major: %" PRId64 " is not a device major (0 to %u)", what, i,
                              d->major.v, DEV_MAJOR_MAX);
      if (!wildcard (&d->minor) && (d->minor.v < 0 || d->minor.v > DEV_MINOR_MAX))
        return ab_error_setc (err, AB_EC_CONFIG, 0,
                              "%s[%zu].minor: %" PRId64 " is not a device minor (0 to %u)", what, i,
                              d->minor.v, DEV_MINOR_MAX);
      if (strnlen (d->access, sizeof d->access) == sizeof d->access
          || strspn (d->access, "rwm") != strlen (d->access))
        return ab_error_setc (err, AB_EC_CONFIG, 0, "%s[%zu].access: only r, w and m", what, i);
    }
  return 0;
}

/* ---- v1 ------------------------------------------------------------------- */

static void
v1_rule_text (const struct ab_device_rule *d, char *buf, size_t len)
{
  char maj[16] = "*", min[16] = "*", acc[4] = "";
  unsigned m = access_mask (d->access);

  if (d->type == 'a')
    {
      /* v1 reads "a" as every device with every access, whatever follows. */
      snprintf (buf, len, "a");
      return;
    }
  if (!wildcard (&d->major))
    snprintf (maj, sizeof maj, "%" PRId64, d->major.v);
  if (!wildcard (&d->minor))
    snprintf (min, sizeof min, "%" PRId64, d->minor.v);
  snprintf (acc, sizeof acc, "%s%s%s", m & AB_CG_DEV_READ ? "r" : "", m & AB_CG_DEV_WRITE ? "w" : "",
            m & AB_CG_DEV_MKNOD ? "m" : "");
  snprintf (buf, len, "%c %s:%s %s", d->type, maj, min, acc);
}

static int
v1_apply (struct ab_cg_hier *h, const struct ab_device_rule *rules, size_t n, ab_error_t *err)
{
  static const char *const file[2] = { "devices.deny", "devices.allow" };
  _cleanup_close_ int deny_fd = -1, allow_fd = -1;
  char text[64], what[64];
  size_t i;

  /* Each file is opened once and every rule is one write(2) to it: the
     kernel (devcgroup_access_write) parses a write as exactly one rule and
     applies it then, so the rules still take effect one by one, in order,
     as with an open per rule. */
  deny_fd = ab_cg_open_w (h, file[0], "linux.resources.devices", err);
  if (deny_fd < 0)
    return -1;
  /* Start from nothing: whatever the parent allowed is not inherited. */
  if (ab_cg_write_fd (h, deny_fd, file[0], "a", "linux.resources.devices", err) < 0)
    return -1;
  for (i = 0; i < n + AB_ARRAY_SIZE (default_rules); i++)
    {
      const struct ab_device_rule *d = i < n ? &rules[i] : &default_rules[i - n];
      int *fd = d->allow ? &allow_fd : &deny_fd;

      if (i < n)
        snprintf (what, sizeof what, "linux.resources.devices[%zu]", i);
      else
        snprintf (what, sizeof what, "default device rule %zu", i - n);
      v1_rule_text (d, text, sizeof text);
      /* A config's leading deny-all (runc's and agentbox's defaults start
         so) repeats the write above: nothing was allowed in between. */
      if (i == 0 && !d->allow && strcmp (text, "a") == 0)
        continue;
      if (*fd < 0 && (*fd = ab_cg_open_w (h, file[d->allow], what, err)) < 0)
        return -1;
      if (ab_cg_write_fd (h, *fd, file[d->allow], text, what, err) < 0)
        return -1;
    }
  return 0;
}

/* ---- v2: the eBPF program --------------------------------------------------- */

#define INSN(c, d, s, o, i)                                                                                  \
  (struct bpf_insn)                                                                                          \
  {                                                                                                          \
    .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i)                                      \
  }
#define LDX_W(dst, src, o) INSN (BPF_LDX | BPF_W | BPF_MEM, dst, src, o, 0)
#define MOV32_REG(dst, src) INSN (BPF_ALU | BPF_MOV | BPF_X, dst, src, 0, 0)
#define AND32_IMM(dst, i) INSN (BPF_ALU | BPF_AND | BPF_K, dst, 0, 0, i)
#define RSH32_IMM(dst, i) INSN (BPF_ALU | BPF_RSH | BPF_K, dst, 0, 0, i)
#define MOV64_IMM(dst, i) INSN (BPF_ALU64 | BPF_MOV | BPF_K, dst, 0, 0, i)
#define JNE_IMM(dst, i) INSN (BPF_JMP | BPF_JNE | BPF_K, dst, 0, 0, i) /* offset patched */
#define JEQ_IMM(dst, i) INSN (BPF_JMP | BPF_JEQ | BPF_K, dst, 0, 0, i)
#define EXIT_INSN() INSN (BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

/* Registers: r1 the context (struct bpf_cgroup_dev_ctx), r3 the device type,
   r4 the requested access, r5 the major, r6 the minor, r7 scratch. */
enum
{
  R0,
  R1,
  R2,
  R3,
  R4,
  R5,
  R6,
  R7
};

struct emitter
{
  struct bpf_insn *v;
  size_t n, cap;
  size_t jumps[4]; /* the rule's jumps to its end */
  size_t n_jumps;
};

static void
emit (struct emitter *e, struct bpf_insn insn)
{
  if (e->n == e->cap)
    {
      e->cap = e->cap ? 2 * e->cap : 64;
      e->v = xreallocarray (e->v, e->cap, sizeof *e->v);
    }
  e->v[e->n++] = insn;
}

static void
emit_jump (struct emitter *e, struct bpf_insn insn)
{
  e->jumps[e->n_jumps++] = e->n;
  emit (e, insn);
}

/* One rule: fall through when the device matches, jump past the rule's
   verdict when it does not. */
static void
emit_rule (struct emitter *e, const struct ab_device_rule *d)
{
  unsigned m = access_mask (d->access), all = AB_CG_DEV_READ | AB_CG_DEV_WRITE | AB_CG_DEV_MKNOD;
  size_t i;

  e->n_jumps = 0;
  if (d->type != 'a')
    {
      emit_jump (e, JNE_IMM (R3, d->type == 'c' ? BPF_DEVCG_DEV_CHAR : BPF_DEVCG_DEV_BLOCK));
      if (!wildcard (&d->major))
        emit_jump (e, JNE_IMM (R5, (int32_t)d->major.v));
      if (!wildcard (&d->minor))
        emit_jump (e, JNE_IMM (R6, (int32_t)d->minor.v));
      if (m != all)
        {
          emit (e, MOV32_REG (R7, R4));
          if (d->allow)
            {
              /* An allow rule covers a request only if it grants every bit. */
              emit (e, AND32_IMM (R7, (int32_t)(~m & all)));
              emit_jump (e, JNE_IMM (R7, 0));
            }
          else
            {
              /* A deny rule catches a request that asks for any bit it
                 denies: asking for "rw" cannot slip past a "w" deny. */
              emit (e, AND32_IMM (R7, (int32_t)m));
              emit_jump (e, JEQ_IMM (R7, 0));
            }
        }
    }
  emit (e, MOV64_IMM (R0, d->allow ? 1 : 0));
  emit (e, EXIT_INSN ());
  for (i = 0; i < e->n_jumps; i++)
    e->v[e->jumps[i]].off = (int16_t)(e->n - e->jumps[i] - 1);
}

static void
ab_cg_devices_bpf (const struct ab_device_rule *rules, size_t n, struct ab_cg_bpf *out)
{
  struct emitter e = { 0 };
  size_t i, total = n + AB_ARRAY_SIZE (default_rules);
  bool decided = false;

  emit (&e, LDX_W (R2, R1, 0)); /* access_type = access << 16 | type */
  emit (&e, MOV32_REG (R3, R2));
  emit (&e, AND32_IMM (R3, 0xffff));
  emit (&e, MOV32_REG (R4, R2));
  emit (&e, RSH32_IMM (R4, 16));
  emit (&e, LDX_W (R5, R1, 4)); /* major */
  emit (&e, LDX_W (R6, R1, 8)); /* minor */
  /* v1 applies rules in order, so the last one that matches decides:
     test them from the last back to the first, the defaults first of all. */
  for (i = total; i-- > 0 && !decided;)
    {
      const struct ab_device_rule *d = i >= n ? &default_rules[i - n] : &rules[i];
      emit_rule (&e, d);
      /* A type "a" rule decides every request, so what it shadows (the
         rules before it, the final deny) is never reached; the verifier
         refuses a program with unreachable instructions ("unreachable
         insn"), which runc's default "deny a" first rule made of every
         config on a cgroup v2 host. */
      decided = d->type == 'a';
    }
  if (!decided)
    {
      emit (&e, MOV64_IMM (R0, 0)); /* what "deny a" leaves: nothing */
      emit (&e, EXIT_INSN ());
    }
  out->insns = e.v;
  out->n = e.n;
}

static int
sys_bpf (int cmd, union bpf_attr *attr)
{
  return (int)syscall (SYS_bpf, cmd, attr, sizeof *attr);
}

/* The ids of the device programs attached to the cgroup itself. */
static int
query_attached (int dfd, uint32_t *ids, uint32_t *n)
{
  union bpf_attr attr;

  memset (&attr, 0, sizeof attr);
  attr.query.target_fd = (uint32_t)dfd;
  attr.query.attach_type = BPF_CGROUP_DEVICE;
  attr.query.prog_ids = (uint64_t)(uintptr_t)ids;
  attr.query.prog_cnt = *n;
  if (sys_bpf (BPF_PROG_QUERY, &attr) < 0)
    return -1;
  *n = attr.query.prog_cnt;
  return 0;
}

/* Load it and attach it to the cgroup directory fd, replacing the programs
   agentbox attached before. */
static int
ab_cg_devices_bpf_attach (int dfd, const struct ab_cg_bpf *prog, const char *dir, ab_error_t *err)
{
  _cleanup_close_ int pfd = -1;
  char log[4096] = "";
  uint32_t old[64], n_old = AB_ARRAY_SIZE (old), i;
  union bpf_attr attr;

  if (query_attached (dfd, old, &n_old) < 0)
    return ab_error_set (err, errno, "BPF_PROG_QUERY on `%s`", dir);

  memset (&attr, 0, sizeof attr);
  attr.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
  attr.insns = (uint64_t)(uintptr_t)prog->insns;
  attr.insn_cnt = (uint32_t)prog->n;
  attr.license = (uint64_t)(uintptr_t) "GPL";
  attr.log_buf = (uint64_t)(uintptr_t)log;
  attr.log_size = sizeof log;
  attr.log_level = 1;
  pfd = sys_bpf (BPF_PROG_LOAD, &attr);
  if (pfd < 0 && errno == ENOSPC) /* log too small; the program may be fine */
    {
      attr.log_buf = 0;
      attr.log_size = 0;
      attr.log_level = 0;
      pfd = sys_bpf (BPF_PROG_LOAD, &attr);
    }
  if (pfd < 0)
    return ab_error_set (err, errno, "load the device filter for `%s` (%zu instructions): %.200s", dir,
                         prog->n, log);
  /* bpf(2) makes every fd close-on-exec already. */

  /* ALLOW_MULTI: programs up the tree still run, and all must allow.  A
     new program goes in before the old ones come out, so there is no
     moment without a filter. */
  memset (&attr, 0, sizeof attr);
  attr.target_fd = (uint32_t)dfd;
  attr.attach_bpf_fd = (uint32_t)pfd;
  attr.attach_type = BPF_CGROUP_DEVICE;
  attr.attach_flags = BPF_F_ALLOW_MULTI;
  if (sys_bpf (BPF_PROG_ATTACH, &attr) < 0)
    return ab_error_set (err, errno, "attach the device filter to `%s`", dir);

  for (i = 0; i < n_old && n_old <= AB_ARRAY_SIZE (old); i++)
    {
      _cleanup_close_ int ofd = -1;
      memset (&attr, 0, sizeof attr);
      attr.prog_id = old[i];
      ofd = sys_bpf (BPF_PROG_GET_FD_BY_ID, &attr);
      if (ofd < 0)
        continue;
      memset (&attr, 0, sizeof attr);
      attr.target_fd = (uint32_t)dfd;
      attr.attach_bpf_fd = (uint32_t)ofd;
      attr.attach_type = BPF_CGROUP_DEVICE;
      if (sys_bpf (BPF_PROG_DETACH, &attr) < 0)
        return ab_error_set (err, errno, "detach the previous device filter from `%s`", dir);
    }
  return 0;
}

int
ab_cg_devices_apply (struct ab_cgroup *cg, const struct ab_device_rule *rules, size_t n, ab_error_t *err)
{
  struct ab_cg_hier *h = ab_cg_v1 (cg, "devices");
  struct ab_cg_bpf prog = { 0 };
  int r;

  if (ab_cg_devices_check (rules, n, err) < 0)
    return -1;
  if (h != NULL)
    return v1_apply (h, rules, n, err);
  /* The kernel runs cgroup device programs whether or not the v1 devices
     controller is mounted, so the v2 tree also covers a v1 host without it. */
  if (cg->v2 == NULL || cg->v2->dfd < 0)
    return ab_error_setc (
        err, AB_EC_RESOURCE, 0,
        "linux.resources.devices: no devices controller and no cgroup v2 tree: device access "
        "cannot be restricted");
  ab_cg_devices_bpf (rules, n, &prog);
  r = ab_cg_devices_bpf_attach (cg->v2->dfd, &prog, cg->v2->dir, err);
  free (prog.insns);
  return r;
}
