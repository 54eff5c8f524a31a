/* Valid configurations: the fixtures real tools write parse, and a maximal
   config touching every member of the model parses into exactly the values
   it holds. */
#include "config.h"

#include <sys/mount.h>
#include <sys/resource.h>

#include "spec/tables.h"
#include "tests/unit/test-parse-util.h"

static struct ab_spec *
load (const char *name)
{
  ab_error_t err = { 0 };
  struct ab_spec *s;
  size_t len;
  char *buf = fixture (name, &len);

  s = ab_spec_parse (buf, len, &err);
  free (buf);
  if (s == NULL)
    printf ("# %s: %s\n", name, err.msg);
  return s;
}

static void
test_fixtures (void)
{
  static const char *const names[] = {
    "runc-spec.json", "crun-spec.json", "podman-style.json", "agent-sandbox.json", "maximal.json",
  };
  size_t i;

  for (i = 0; i < AB_ARRAY_SIZE (names); i++)
    {
      struct ab_spec *s = load (names[i]);
      ok (s != NULL && s->unknown.n == 0 && s->warnings.n == 0,
          "%s parses with no unknown property and no warning", names[i]);
      ab_spec_free (s);
    }
}

static void
test_runc_spec (void)
{
  struct ab_spec *s = load ("runc-spec.json");

  if (s == NULL)
    {
      ok (0, "runc spec parses");
      return;
    }
  is_str (s->oci_version, "1.0.2-dev", "runc's pre-release ociVersion is accepted as written");
  ok (s->process && s->process->terminal && s->process->args.n == 1
          && strcmp (s->process->args.v[0], "sh") == 0,
      "runc spec: terminal sh");
  ok (s->process->caps.mask[AB_CAP_BOUNDING]
          == ((UINT64_C (1) << 29) | (UINT64_C (1) << 5) | (UINT64_C (1) << 10)),
      "runc spec: bounding set is AUDIT_WRITE, KILL, NET_BIND_SERVICE");
  ok (s->process->n_rlimits == 1 && s->process->rlimits[0].resource == RLIMIT_NOFILE
          && s->process->rlimits[0].soft == 1024,
      "runc spec: RLIMIT_NOFILE 1024");
  ok (s->linux_ && s->linux_->ns[AB_NS_PID].present && s->linux_->ns[AB_NS_NET].present
          && s->linux_->ns[AB_NS_MOUNT].present && !s->linux_->ns[AB_NS_USER].present,
      "runc spec: pid, network, mount namespaces, no user namespace");
  ok (s->n_mounts == 7 && strcmp (s->mounts[6].destination, "/sys/fs/cgroup") == 0
          && (s->mounts[6].flags & (MS_RDONLY | MS_NOSUID | MS_NOEXEC | MS_NODEV | MS_RELATIME))
                 == (MS_RDONLY | MS_NOSUID | MS_NOEXEC | MS_NODEV | MS_RELATIME),
      "runc spec: /sys/fs/cgroup is mounted ro,nosuid,noexec,nodev,relatime");
  is_str (s->mounts[2].data, "newinstance,ptmxmode=0666,mode=0620,gid=5",
          "runc spec: devpts data options are joined");
  ab_spec_free (s);
}

static void
test_podman_style (void)
{
  struct ab_spec *s = load ("podman-style.json");
  struct ab_linux *l;

  if (s == NULL)
    {
      ok (0, "podman-style config parses");
      return;
    }
  l = s->linux_;
  is_str (l->cgroups_path, "machine.slice:libpod:3f0e6b1f6d4a",
          "systemd-style cgroupsPath is kept as written");
  ok (l->seccomp && l->seccomp->default_action == AB_SCMP_ACT_ERRNO && l->seccomp->default_errno_ret_set
          && l->seccomp->default_errno_ret == 38,
      "podman: default action ERRNO with defaultErrnoRet 38 (ENOSYS)");
  ok (l->seccomp->n_syscalls == 9 && l->seccomp->syscalls[5].n_args == 1
          && l->seccomp->syscalls[5].args[0].op == AB_SCMP_CMP_MASKED_EQ
          && l->seccomp->syscalls[5].args[0].value == 2114060288,
      "podman: clone rule with a MASKED_EQ argument");
  ok (s->mounts[11].tmpcopyup && s->mounts[11].propagation == AB_PROP_PRIVATE
          && s->mounts[11].propagation_recursive && s->mounts[11].data == NULL,
      "podman: /tmp tmpfs with tmpcopyup and rprivate, no data");
  ok (l->ns[AB_NS_NET].present && l->ns[AB_NS_NET].path
          && strcmp (l->ns[AB_NS_NET].path, "/run/netns/netns-1b2c3d4e-5f60-7182-93a4-b5c6d7e8f901") == 0,
      "podman: the network namespace is joined by path");
  is_str (ab_kvlist_get (&s->annotations, "io.container.manager"), "libpod",
          "annotations are looked up by key");
  ok (ab_kvlist_get (&s->annotations, "absent") == NULL, "an absent annotation is NULL");
  ab_spec_free (s);
}

static void
test_maximal_process (const struct ab_spec *s)
{
  const struct ab_process *p = s->process;

  ok (p->terminal && p->console_size_set && p->console_height == 25 && p->console_width == 80,
      "terminal with a 25x80 console");
  is_str (p->cwd, "/workspace", "cwd");
  ok (p->env.n == 3 && strcmp (p->env.v[2], "LANG=C.UTF-8") == 0 && p->env.v[3] == NULL, "env in order");
  ok (p->args.n == 2 && strcmp (p->args.v[1], "/workspace/main.py") == 0, "args in order");
  ok (p->user.uid == 65534 && p->user.gid == 65533 && p->user.umask_set && p->user.umask == 18
          && p->user.n_additional_gids == 2 && p->user.additional_gids[1] == 4294967295u,
      "user: uid, gid, umask and additionalGids up to the uint32 maximum");
  ok (p->n_rlimits == 3 && p->rlimits[0].resource == RLIMIT_CPU && p->rlimits[0].soft == 2
          && p->rlimits[0].hard == 3 && p->rlimits[2].resource == RLIMIT_FSIZE
          && p->rlimits[2].hard == UINT64_MAX && strcmp (p->rlimits[2].type, "RLIMIT_FSIZE") == 0,
      "rlimits map to RLIMIT_* with uint64 limits");
  ok (p->capabilities_set && p->caps.set[AB_CAP_BOUNDING] && p->caps.set[AB_CAP_INHERITABLE]
          && p->caps.mask[AB_CAP_INHERITABLE] == 0
          && p->caps.mask[AB_CAP_BOUNDING]
                 == ((UINT64_C (1) << 0) | (UINT64_C (1) << 5) | (UINT64_C (1) << 40))
          && p->caps.mask[AB_CAP_EFFECTIVE] == (UINT64_C (1) << 5)
          && p->caps.mask[AB_CAP_PERMITTED] == ((UINT64_C (1) << 5) | (UINT64_C (1) << 10))
          && p->caps.mask[AB_CAP_AMBIENT] == (UINT64_C (1) << 10),
      "capability sets become kernel-numbered masks; an empty set is present and empty");
  ok (p->no_new_privileges && p->oom_score_adj_set && p->oom_score_adj == -1000,
      "noNewPrivileges and oomScoreAdj");
  is_str (p->apparmor_profile, "agentbox-default", "apparmorProfile");
  is_str (p->selinux_label, "system_u:system_r:container_t:s0:c1,c2", "selinuxLabel");
  ok (p->scheduler && p->scheduler->policy == AB_SCHED_DEADLINE && p->scheduler->nice == -20
          && p->scheduler->priority == INT32_MAX && p->scheduler->flags == (0x01 | 0x40)
          && p->scheduler->runtime == 10000000 && p->scheduler->deadline == 20000000
          && p->scheduler->period == 30000000,
      "scheduler: policy, nice, priority, kernel flag bits, deadline parameters");
  ok (p->io_priority && p->io_priority->klass == AB_IOPRIO_IDLE && p->io_priority->priority == 7,
      "ioPriority class and level");
  ok (p->exec_cpu_affinity_initial && strcmp (p->exec_cpu_affinity_initial, "7") == 0
          && strcmp (p->exec_cpu_affinity_final, "0-3, 7") == 0,
      "execCPUAffinity");
}

static void
test_maximal_mounts (const struct ab_spec *s)
{
  const struct ab_mount *m;

  ok (s->root_set && strcmp (s->root.path, "rootfs") == 0 && s->root.readonly, "root path and readonly");
  ok (s->n_mounts == 4, "four mounts");
  m = &s->mounts[1];
  ok (m->flags == (MS_NOSUID | MS_NODEV | MS_NOEXEC) && m->clear_flags == 0 && m->tmpcopyup && !m->bind
          && strcmp (m->data, "size=64m,mode=1777") == 0,
      "tmpfs: MS_* flags, tmpcopyup, filesystem options joined into data");
  m = &s->mounts[2];
  is_str (m->destination, "/workspace", "a relative destination is made absolute");
  ok (m->bind && m->recursive && (m->flags & (MS_BIND | MS_REC)) == (MS_BIND | MS_REC),
      "rbind is a recursive bind");
  ok (!(m->flags & MS_RDONLY) && (m->clear_flags & MS_RDONLY), "\"ro\" then \"rw\": the later option wins");
  ok (m->propagation == AB_PROP_SHARED && m->propagation_recursive, "rshared: shared, recursively");
  ok (m->attr_set == (MOUNT_ATTR_NOATIME | MOUNT_ATTR_NOSUID)
          && m->attr_clr == (MOUNT_ATTR__ATIME | MOUNT_ATTR_RDONLY),
      "recursive attributes: rro undone by rrw, rnoatime sets the atime mode with the whole mask cleared");
  ok (m->idmap && m->idmap_recursive, "ridmap after idmap: recursive idmapping");
  ok (m->data == NULL, "\"defaults\" is accepted and adds nothing");
  ok (m->uid_mappings.n == 1 && m->uid_mappings.v[0].host_id == 100000 && m->gid_mappings.n == 1
          && m->gid_mappings.v[0].host_id == 200000 && m->gid_mappings.v[0].size == 1000,
      "mount uidMappings and gidMappings");
  m = &s->mounts[3];
  ok (m->bind && !m->recursive && m->propagation == AB_PROP_PRIVATE && !m->propagation_recursive
          && (m->flags & (MS_BIND | MS_STRICTATIME | MS_REMOUNT)) == (MS_BIND | MS_STRICTATIME | MS_REMOUNT)
          && !(m->flags & MS_NODEV) && (m->clear_flags & MS_NODEV) && m->type == NULL,
      "bind, private, nodev undone by dev, strictatime, remount; type absent");
}

static void
test_maximal_hooks (const struct ab_spec *s)
{
  ok (s->hooks[AB_HOOK_PRESTART].n == 1 && s->hooks[AB_HOOK_PRESTART].v[0].args.n == 2
          && strcmp (s->hooks[AB_HOOK_PRESTART].v[0].env.v[0], "key1=value1") == 0,
      "prestart hook with args and env");
  ok (s->hooks[AB_HOOK_CREATE_RUNTIME].n == 1 && s->hooks[AB_HOOK_CREATE_RUNTIME].v[0].timeout_set
          && s->hooks[AB_HOOK_CREATE_RUNTIME].v[0].timeout == 5,
      "createRuntime hook with a timeout");
  ok (s->hooks[AB_HOOK_CREATE_CONTAINER].n == 1 && s->hooks[AB_HOOK_START_CONTAINER].n == 1
          && !s->hooks[AB_HOOK_START_CONTAINER].v[0].timeout_set,
      "createContainer and startContainer hooks");
  ok (s->hooks[AB_HOOK_POSTSTART].v[0].timeout == INT32_MAX && s->hooks[AB_HOOK_POSTSTOP].n == 2
          && strcmp (s->hooks[AB_HOOK_POSTSTOP].v[1].path, "/usr/bin/agent-hook") == 0,
      "poststart and poststop hooks in order");
  ok (s->annotations.n == 3 && strcmp (s->annotations.v[0].key, "org.example.agent.run_id") == 0
          && strcmp (s->annotations.v[1].value, "") == 0
          && strcmp (s->annotations.v[2].key, "com.example.z") == 0,
      "annotations keep document order and allow empty values");
  is_str (s->hostname, "sandbox-7f", "hostname");
  is_str (s->domainname, "agents.example", "domainname");
}

static void
test_maximal_linux (const struct ab_spec *s)
{
  const struct ab_linux *l = s->linux_;
  int t, all = 1;

  for (t = 0; t < AB_NS__COUNT; t++)
    all = all && l->ns[t].present;
  ok (all && l->ns[AB_NS_NET].path && strcmp (l->ns[AB_NS_NET].path, "/run/netns/agent-7f") == 0
          && l->ns[AB_NS_PID].path == NULL,
      "all eight namespaces, the network one joined by path");
  ok (l->uid_mappings.n == 1 && l->gid_mappings.n == 2 && l->gid_mappings.v[1].host_id == 4294901759u
          && l->gid_mappings.v[1].size == 65535,
      "user namespace mappings up to the last valid ID");
  ok (l->time_monotonic.set && l->time_monotonic.secs == -172800 && l->time_monotonic.nanosecs == 999999999
          && l->time_boottime.set && l->time_boottime.secs == 604800 && l->time_boottime.nanosecs == 0,
      "time offsets for monotonic and boottime");
  ok (l->n_devices == 3 && l->devices[0].type == 'c' && l->devices[0].major == 10
          && l->devices[0].minor == 229 && l->devices[0].file_mode_set && l->devices[0].file_mode == 438
          && l->devices[0].uid_set && l->devices[1].major == 4095 && l->devices[1].minor == 1048575
          && !l->devices[1].file_mode_set && l->devices[2].type == 'p',
      "devices: char, block at the dev_t maximum, FIFO without numbers");
  ok (l->n_net_devices == 2 && strcmp (l->net_devices[0].host_name, "eth0") == 0
          && strcmp (l->net_devices[0].name, "ctr_eth0") == 0 && l->net_devices[1].name == NULL,
      "netDevices in order, the name optional");
  is_str (l->cgroups_path, "/agentbox/run-7f", "cgroupsPath");
  is_int (l->rootfs_propagation, AB_PROP_UNBINDABLE, "rootfsPropagation");
  ok (l->masked_paths.n == 2 && l->readonly_paths.n == 2
          && strcmp (l->readonly_paths.v[1], "/proc/sysrq-trigger") == 0,
      "maskedPaths and readonlyPaths");
  is_str (l->mount_label, "system_u:object_r:container_file_t:s0:c1,c2", "mountLabel");
  ok (l->personality_set && l->personality_domain == AB_PERSONA_LINUX32, "personality LINUX32");
  ok (l->memory_policy && l->memory_policy->mode == AB_MPOL_WEIGHTED_INTERLEAVE
          && strcmp (l->memory_policy->nodes, "0-3,7") == 0
          && l->memory_policy->flags == (AB_MPOL_F_STATIC_NODES | AB_MPOL_F_NUMA_BALANCING),
      "memoryPolicy mode, nodes and kernel flag bits");
  ok (l->sysctl.n == 3 && strcmp (l->sysctl.v[1].key, "net.ipv4.conf.eth0/1.forwarding") == 0
          && strcmp (ab_kvlist_get (&l->sysctl, "kernel.msgmax"), "8192") == 0,
      "sysctl in order, sysctl(8)'s '/' for a dotted interface name allowed");
  ok (l->intel_rdt && strcmp (l->intel_rdt->clos_id, "guaranteed_group") == 0
          && strcmp (l->intel_rdt->mem_bw_schema, "MB:0=20;1=70") == 0 && l->intel_rdt->schemata_set
          && l->intel_rdt->schemata.n == 1 && l->intel_rdt->enable_monitoring,
      "intelRdt");
}

static void
test_maximal_resources (const struct ab_spec *s)
{
  const struct ab_resources *r = s->linux_->resources;

  ok (r->n_devices == 3 && !r->devices[0].allow && r->devices[0].type == 'a' && !r->devices[0].major.set
          && strcmp (r->devices[0].access, "rwm") == 0 && r->devices[1].allow && r->devices[1].type == 'c'
          && r->devices[1].major.set && r->devices[1].major.v == 10
          && strcmp (r->devices[1].access, "rw") == 0,
      "device rules: deny-all first, then char 10:229 rw");
  ok (r->devices[2].type == 'b' && !r->devices[2].major.set && r->devices[2].minor.set
          && r->devices[2].minor.v == 0,
      "a major of -1 means all, like an absent one");
  ok (r->memory_set && r->memory.limit.set && r->memory.limit.v == 268435456 && r->memory.swap.set
          && r->memory.swap.v == 0 && r->memory.kernel.v == -1 && r->memory.swappiness.v == 100
          && r->memory.disable_oom_killer.set && !r->memory.disable_oom_killer.v && r->memory.use_hierarchy.v
          && r->memory.check_before_update.v,
      "memory: a limit of 0 is set, not absent; -1 is unlimited");
  ok (r->cpu_set && r->cpu.shares.v == 1024 && r->cpu.quota.v == 50000 && r->cpu.burst.v == 10000
          && r->cpu.period.v == 100000 && r->cpu.realtime_runtime.v == -1
          && r->cpu.realtime_period.v == 1000000 && strcmp (r->cpu.cpus, "0-1") == 0
          && strcmp (r->cpu.mems, "0") == 0 && r->cpu.idle.v == 1,
      "cpu");
  ok (r->pids_set && r->pids_limit.set && r->pids_limit.v == 64, "pids limit");
  ok (r->blkio_set && r->blkio.weight.v == 10 && r->blkio.leaf_weight.v == 65535
          && r->blkio.n_weight_device == 2 && !r->blkio.weight_device[1].weight.set
          && r->blkio.weight_device[1].leaf_weight.v == 7,
      "blockIO weights");
  ok (r->blkio.n_throttle[AB_THROTTLE_READ_BPS] == 1
          && r->blkio.throttle[AB_THROTTLE_WRITE_BPS][0].rate == 601
          && r->blkio.throttle[AB_THROTTLE_READ_IOPS][0].minor == 2
          && r->blkio.n_throttle[AB_THROTTLE_WRITE_IOPS] == 2
          && r->blkio.throttle[AB_THROTTLE_WRITE_IOPS][1].rate == UINT64_MAX,
      "blockIO throttles of the four kinds");
  ok (r->n_hugepages == 2 && strcmp (r->hugepages[1].page_size, "1GB") == 0 && r->hugepages[1].limit == 0,
      "hugepageLimits");
  ok (r->network_set && r->net_class_id.v == 1048577 && r->n_net_priorities == 2
          && r->net_priorities[1].priority == 4294967295u,
      "network classID and priorities");
  ok (r->n_rdma == 2 && strcmp (r->rdma[0].device, "mlx5_1") == 0 && r->rdma[0].hca_handles.v == 3
          && !r->rdma[1].hca_handles.set && r->rdma[1].hca_objects.v == 10,
      "rdma limits per device");
  ok (r->unified.n == 2 && strcmp (r->unified.v[1].key, "io.max") == 0
          && strchr (r->unified.v[1].value, '\n'),
      "unified keeps multi-line values");
}

static void
test_maximal_seccomp (const struct ab_spec *s)
{
  const struct ab_seccomp *sc = s->linux_->seccomp;

  ok (sc->default_action == AB_SCMP_ACT_ERRNO && sc->default_errno_ret == 38 && sc->architectures.n == 3
          && strcmp (sc->architectures.v[2], "SCMP_ARCH_SHEB") == 0,
      "seccomp default action and architectures");
  ok (sc->flags == (AB_SECCOMP_FLAG_LOG | AB_SECCOMP_FLAG_WAIT_KILLABLE_RECV), "seccomp flags");
  ok (strcmp (sc->listener_path, "/run/agentbox/seccomp.sock") == 0
          && strcmp (sc->listener_metadata, "run-7f") == 0,
      "seccomp listener");
  ok (sc->n_syscalls == 5 && sc->syscalls[0].names.n == 2 && sc->syscalls[0].action == AB_SCMP_ACT_ALLOW
          && !sc->syscalls[0].errno_ret_set,
      "syscall rules in order");
  ok (sc->syscalls[1].n_args == 2 && sc->syscalls[1].args[1].index == 5
          && sc->syscalls[1].args[1].value == UINT64_MAX && sc->syscalls[1].args[1].value_two == 4096
          && sc->syscalls[1].args[1].op == AB_SCMP_CMP_MASKED_EQ,
      "syscall arguments: index 5, uint64 values, MASKED_EQ");
  ok (sc->syscalls[2].action == AB_SCMP_ACT_TRACE && sc->syscalls[2].errno_ret == 65535
          && sc->syscalls[3].errno_ret == 1 && sc->syscalls[4].action == AB_SCMP_ACT_NOTIFY,
      "errnoRet with TRACE and ERRNO; NOTIFY");
}

static void
test_maximal (void)
{
  struct ab_spec *s = load ("maximal.json");

  if (s == NULL || s->process == NULL || s->linux_ == NULL || s->linux_->resources == NULL
      || s->linux_->seccomp == NULL)
    {
      ok (0, "maximal config parses");
      ab_spec_free (s);
      return;
    }
  is_str (s->oci_version, "1.3.0", "ociVersion");
  test_maximal_process (s);
  test_maximal_mounts (s);
  test_maximal_hooks (s);
  test_maximal_linux (s);
  test_maximal_resources (s);
  test_maximal_seccomp (s);
  ab_spec_free (s);
}

static void
test_optional_absent (void)
{
  struct ab_spec *s = parse_ok (doc (""));

  ok (s && s->process == NULL && s->linux_ == NULL && s->n_mounts == 0 && s->hostname == NULL,
      "a minimal document: process and linux are absent");
  ab_spec_free (s);
  s = parse_ok (
      doc ("'process':null,'linux':null,'mounts':null,'hooks':null,'annotations':null,'hostname':null"));
  ok (s && s->process == NULL && s->linux_ == NULL && s->n_mounts == 0 && s->annotations.n == 0,
      "null for an optional member means absent");
  ab_spec_free (s);
  s = parse_ok (proc ("'user':{'uid':0,'gid':0,'umask':null},'oomScoreAdj':null"));
  ok (s && !s->process->user.umask_set && !s->process->oom_score_adj_set,
      "null umask and oomScoreAdj leave them unset");
  ab_spec_free (s);
  s = parse_ok (lnx ("'resources':{'memory':{'limit':0},'pids':{'limit':0}}"));
  ok (s && s->linux_->resources->memory.limit.set && s->linux_->resources->memory.limit.v == 0
          && !s->linux_->resources->memory.swap.set && s->linux_->resources->pids_limit.v == 0,
      "zero is a value, not absence (memory.limit 0, pids.limit 0)");
  ab_spec_free (s);
}

static void
test_versions (void)
{
  static const char *const good[] = {
    "1.0.0",      "1.0.2-dev", "1.3.0", "1.3.99", "1.1.0-rc.1", "1.2.0+build.5", "1.0.0-alpha-1.0.x+001",
    "1.0.0-rc.0",
  };
  size_t i;

  for (i = 0; i < AB_ARRAY_SIZE (good); i++)
    {
      _cleanup_free_ char *d = xasprintf ("{\"ociVersion\":\"%s\",\"root\":{\"path\":\"r\"}}", good[i]);
      ok (perr (xstrdup (d)) == NULL, "ociVersion %s is accepted", good[i]);
    }
}

static void
test_unknown_properties (void)
{
  struct ab_spec *s
      = parse_ok (doc ("'x-top':1,'process':{'cwd':'/','args':['sh'],'x-proc':{'deep':[1]},"
                       "'user':{'uid':0,'gid':0,'x-user':true}},"
                       "'linux':{'resources':{'memory':{'x-mem':1}},'enableCMT':true,"
                       "'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['read'],"
                       "'action':'SCMP_ACT_ALLOW','x-rule':1}]}},'annotations':{'k':'v'}"));

  ok (s != NULL, "unknown properties are not an error");
  if (s == NULL)
    return;
  is_int (s->unknown.n, 6, "every unknown property is remembered, once");
  if (s->unknown.n == 6)
    {
      is_str (s->unknown.v[0], "x-top", "top-level unknown property");
      is_str (s->unknown.v[1], "process.x-proc", "an unknown object is listed, not its contents");
      is_str (s->unknown.v[2], "process.user.x-user", "nested unknown property");
      is_str (s->unknown.v[3], "linux.resources.memory.x-mem", "unknown property deep in linux");
      is_str (s->unknown.v[4], "linux.enableCMT",
              "a property removed from the spec is unknown, not an error");
      is_str (s->unknown.v[5], "linux.seccomp.syscalls[0].x-rule", "unknown property in an array element");
    }
  ab_spec_free (s);
}

static void
test_unknown_capabilities (void)
{
  struct ab_spec *s;

  /* config.md: valid values are those of capabilities(7).  A name that is
     no capability at all is refused with its JSON path (it used to be a
     warning, and the container ran). */
  is_str (perr (proc ("'capabilities':{'bounding':['CAP_BOGUS']}")),
          "config.json: process.capabilities.bounding[0]: unknown capability \"CAP_BOGUS\"",
          "an unknown capability name is refused with the JSON path");
  is_str (perr (proc ("'capabilities':{'bounding':['CAP_KILL'],'ambient':['CAP_KILL','cap_kill']}")),
          "config.json: process.capabilities.ambient[1]: unknown capability \"cap_kill\"",
          "capability names are case-sensitive");
  is_str (perr (proc ("'capabilities':{'effective':['21']}")),
          "config.json: process.capabilities.effective[0]: unknown capability \"21\"",
          "a number is not a capability name (libcap would take it)");
  is_str (perr (proc ("'capabilities':{'permitted':['CAP_']}")),
          "config.json: process.capabilities.permitted[0]: unknown capability \"CAP_\"", "CAP_ alone is no name");
  s = parse_ok (proc ("'capabilities':{'bounding':['CAP_KILL','CAP_CHECKPOINT_RESTORE','CAP_KILL']}"));
  ok (s && s->warnings.n == 0
          && s->process->caps.mask[AB_CAP_BOUNDING] == ((UINT64_C (1) << 5) | (UINT64_C (1) << 40))
          && s->process->caps.mask[AB_CAP_AMBIENT] == 0,
      "known names are granted, the newest in the table too, without a warning");
  ab_spec_free (s);
}

/* linux.rootfsPropagation takes the eight words of the mount options, plain
   and recursive (containerd's CRI writes rslave and rshared); every one is
   applied to the whole tree, so the recursive form parses to the same
   kind as the plain one. */
static void
test_rootfs_propagation_words (void)
{
  static const struct
  {
    const char *word;
    int kind;
  } words[] = {
    { "shared", AB_PROP_SHARED },   { "rshared", AB_PROP_SHARED },         { "slave", AB_PROP_SLAVE },
    { "rslave", AB_PROP_SLAVE },    { "private", AB_PROP_PRIVATE },        { "rprivate", AB_PROP_PRIVATE },
    { "unbindable", AB_PROP_UNBINDABLE }, { "runbindable", AB_PROP_UNBINDABLE },
  };

  for (size_t i = 0; i < AB_ARRAY_SIZE (words); i++)
    {
      _cleanup_free_ char *members = xasprintf ("'rootfsPropagation':'%s'", words[i].word);
      struct ab_spec *s = parse_ok (lnx (members));
      ok (s && s->linux_ && s->linux_->rootfs_propagation == words[i].kind, "rootfsPropagation \"%s\" is accepted",
          words[i].word);
      ab_spec_free (s);
    }
}

int
main (void)
{
  test_fixtures ();
  test_rootfs_propagation_words ();
  test_runc_spec ();
  test_podman_style ();
  test_maximal ();
  test_optional_absent ();
  test_versions ();
  test_unknown_properties ();
  test_unknown_capabilities ();
  return tap_done ();
}
