/* Static validation of config.json: for every rule, the smallest document
   that breaks it is refused with exactly one line naming the JSON path, by
   the parser (per-field rules) or by ab_spec_validate (cross-field rules),
   as `agentbox create` loads it; and valid documents, among them the
   default profile, pass.

   Documents are written with ' for " to stay readable. */
#include "config.h"

#include "spec/defaults.h"
#include "spec/spec.h"
#include "tests/unit/tap.h"

/* The document with ' turned into ", parsed and validated: NULL when valid,
   else the error message (a class other than "config" is flagged). */
static const char *
load (const char *sq)
{
  static char msg[AB_ERR_MSG_MAX + 32];
  _cleanup_free_ char *doc = xstrdup (sq);
  ab_error_t err = { 0 };
  struct ab_spec *s;
  int r;

  for (char *p = doc; *p; p++)
    if (*p == '\'')
      *p = '"';
  s = ab_spec_parse (doc, strlen (doc), &err);
  r = s != NULL ? ab_spec_validate (s, &err) : -1;
  ab_spec_free (s);
  if (r == 0)
    return NULL;
  if (err.cls != AB_EC_CONFIG)
    snprintf (msg, sizeof msg, "%s [class %s]", err.msg, ab_error_class_name (err.cls));
  else
    snprintf (msg, sizeof msg, "%s", err.msg);
  return msg;
}

struct vcase
{
  const char *doc;
  const char *want; /* NULL: the document is valid */
  const char *name;
};

static void
run (const struct vcase *c, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      const char *got = load (c[i].doc);
      if (c[i].want != NULL && strncmp (c[i].want, "PREFIX:", 7) == 0)
        {
          ok (got != NULL && strncmp (got, c[i].want + 7, strlen (c[i].want + 7)) == 0, "%s", c[i].name);
          if (got == NULL || strncmp (got, c[i].want + 7, strlen (c[i].want + 7)) != 0)
            printf ("#   got: %s\n", got ? got : "(valid)");
        }
      else if (c[i].want != NULL)
        is_str (got, c[i].want, "%s", c[i].name);
      else
        {
          ok (got == NULL, "%s", c[i].name);
          if (got != NULL)
            printf ("#   error: %s\n", got);
        }
    }
}
#define RUN(cases) run (cases, AB_ARRAY_SIZE (cases))

#define DOC(...) "{'ociVersion':'1.3.0','root':{'path':'rootfs'}," __VA_ARGS__ "}"
#define PROC(...) "'process':{'cwd':'/','args':['sh']" __VA_ARGS__ "}"
#define USER(uid, gid, ...) ",'user':{'uid':" #uid ",'gid':" #gid __VA_ARGS__ "}"
#define MAP "[{'containerID':0,'hostID':100000,'size':65536}]"
#define MAPS "'uidMappings':" MAP ",'gidMappings':" MAP
#define LINUX_NS(ns, ...) "'linux':{'namespaces':[" ns "]" __VA_ARGS__ "}"
#define USERNS "{'type':'user'}"
#define NETNS "{'type':'network'}"
#define RES(...) "'linux':{'resources':{" __VA_ARGS__ "}}"
#define FUSE "'path':'/dev/fuse','type':'c','major':10,'minor':229"

/* clang-format off */

static const struct vcase user_namespace[] = {
  { DOC ("'linux':{" MAPS "}"),
    "config.json: linux.uidMappings: requires a user namespace in linux.namespaces",
    "uidMappings without a user namespace are refused" },
  { DOC ("'linux':{'gidMappings':" MAP "}"),
    "config.json: linux.gidMappings: requires a user namespace in linux.namespaces",
    "gidMappings alone without a user namespace are refused" },
  { DOC (LINUX_NS ("{'type':'user','path':'/proc/1/ns/user'}", "," MAPS)),
    "config.json: linux.uidMappings: cannot be set when joining an existing user namespace (its mappings are fixed)",
    "mappings for a joined user namespace are refused" },
  { DOC (LINUX_NS (USERNS)),
    "config.json: linux.uidMappings: required when a new user namespace is created",
    "a new user namespace without mappings is refused" },
  { DOC (LINUX_NS (USERNS, ",'uidMappings':" MAP)),
    "config.json: linux.gidMappings: required when a new user namespace is created",
    "a new user namespace without gidMappings is refused" },
  { DOC (LINUX_NS ("{'type':'user','path':'/proc/1/ns/user'}")), NULL,
    "a joined user namespace needs no mappings" },
  { DOC (LINUX_NS (USERNS, ",'uidMappings':[{'containerID':0,'hostID':100000,'size':10},"
                           "{'containerID':5,'hostID':200000,'size':10}],'gidMappings':" MAP)),
    "config.json: linux.uidMappings[1]: container IDs 5-14 overlap entry [0] (0-9)",
    "overlapping container ranges are refused" },
  { DOC (LINUX_NS (USERNS, ",'uidMappings':" MAP ",'gidMappings':[{'containerID':0,'hostID':100000,'size':10},"
                           "{'containerID':10,'hostID':100009,'size':10}]")),
    "config.json: linux.gidMappings[1]: host IDs 100009-100018 overlap entry [0] (100000-100009)",
    "overlapping host ranges are refused" },
  { DOC (LINUX_NS (USERNS, ",'uidMappings':[{'containerID':0,'hostID':100000,'size':10},"
                           "{'containerID':10,'hostID':100010,'size':10}],'gidMappings':" MAP)), NULL,
    "adjacent ranges are not an overlap" },
  { DOC (LINUX_NS (USERNS, ",'uidMappings':[{'containerID':0,'hostID':1,'size':0}],'gidMappings':" MAP)),
    "config.json: linux.uidMappings[0]: size must not be zero",
    "a mapping of size 0 is refused" },
  { DOC (LINUX_NS (USERNS, ",'uidMappings':[{'containerID':4294967295,'hostID':1,'size':1}],'gidMappings':" MAP)),
    "config.json: linux.uidMappings[0]: containerID 4294967295 + size 1 runs past the last ID, 4294967294",
    "a container range past the 32-bit ID space is refused" },
  { DOC (LINUX_NS (USERNS, ",'uidMappings':[{'containerID':0,'hostID':4294967290,'size':10}],'gidMappings':" MAP)),
    "config.json: linux.uidMappings[0]: hostID 4294967290 + size 10 runs past the last ID, 4294967294",
    "a host range past the 32-bit ID space is refused" },
  { DOC ("'linux':{'namespaces':[{'type':'pid'},{'type':'pid'}]}"),
    "config.json: linux.namespaces[1].type: duplicate namespace \"pid\"",
    "a duplicate namespace type is refused" },
};

static const struct vcase mapped_ids[] = {
  { DOC (PROC (USER (65536, 0)) "," LINUX_NS (USERNS, "," MAPS)),
    "config.json: process.user.uid: 65536 is not mapped by linux.uidMappings",
    "an unmapped process uid in a new user namespace is refused" },
  { DOC (PROC (USER (65535, 65535)) "," LINUX_NS (USERNS, "," MAPS)), NULL,
    "the last mapped uid and gid pass" },
  { DOC (PROC (USER (0, 70000)) "," LINUX_NS (USERNS, "," MAPS)),
    "config.json: process.user.gid: 70000 is not mapped by linux.gidMappings",
    "an unmapped process gid is refused" },
  { DOC (PROC (USER (0, 0, ",'additionalGids':[5,65536]")) "," LINUX_NS (USERNS, "," MAPS)),
    "config.json: process.user.additionalGids[1]: 65536 is not mapped by linux.gidMappings",
    "an unmapped additional gid is refused" },
  { DOC (PROC (USER (1000, 1000))), NULL,
    "without a user namespace any uid is the host's own and passes" },
  { DOC (PROC (USER (4294967295, 0))),
    "config.json: process.user.uid: 4294967295 is not an ID: it is (uid_t) -1, \"unchanged\"",
    "uid 4294967295, which setresuid reads as \"unchanged\" (stay root), is refused" },
  { DOC (PROC (USER (0, 0, ",'additionalGids':[4294967295]"))),
    "config.json: process.user.additionalGids[0]: 4294967295 is not an ID: it is (gid_t) -1, \"unchanged\"",
    "additional gid 4294967295 is refused" },
  { DOC ("'linux':{'devices':[{" FUSE ",'gid':4294967295}]}"),
    "config.json: linux.devices[0].gid: 4294967295 is not an ID: it is (gid_t) -1, \"unchanged\"",
    "a device group 4294967295 is refused" },
  { DOC (LINUX_NS (USERNS, "," MAPS ",'devices':[{" FUSE ",'uid':70000}]")),
    "config.json: linux.devices[0].uid: 70000 is not mapped by linux.uidMappings",
    "an unmapped device owner is refused" },
  { DOC (LINUX_NS (USERNS, "," MAPS ",'devices':[{" FUSE ",'gid':65536}]")),
    "config.json: linux.devices[0].gid: 65536 is not mapped by linux.gidMappings",
    "an unmapped device group is refused" },
};

static const struct vcase mounts[] = {
  { DOC ("'mounts':[{'destination':'/data','source':'/srv','options':['bind','idmap']}]"),
    "config.json: mounts[0].options: idmap needs uidMappings and gidMappings on the mount, or a user namespace",
    "an idmap mount without mappings or user namespace is refused" },
  { DOC ("'mounts':[{'destination':'/data','type':'none','source':'/srv','options':['rbind','ridmap']}]"),
    "config.json: mounts[0].options: ridmap needs uidMappings and gidMappings on the mount, or a user namespace",
    "a ridmap mount without mappings or user namespace is refused" },
  { DOC ("'mounts':[{'destination':'/data','source':'/srv','options':['bind','idmap']}],"
         LINUX_NS (USERNS, "," MAPS)), NULL,
    "an idmap mount takes the container's user namespace" },
  { DOC ("'mounts':[{'destination':'/data','source':'/srv','options':['bind','idmap'],"
         "'uidMappings':" MAP ",'gidMappings':" MAP "}]"), NULL,
    "an idmap mount with its own mappings needs no user namespace" },
  { DOC ("'mounts':[{'destination':'/data','source':'/srv','options':['bind','idmap'],'uidMappings':" MAP "}]"),
    "config.json: mounts[0]: uidMappings and gidMappings must be specified together",
    "mount uidMappings without gidMappings are refused" },
  { DOC ("'mounts':[{'destination':'/data','source':'/srv','options':['bind','idmap'],"
         "'uidMappings':[{'containerID':0,'hostID':0,'size':10},{'containerID':9,'hostID':50,'size':1}],"
         "'gidMappings':" MAP "}]"),
    "config.json: mounts[0].uidMappings[1]: container IDs 9-9 overlap entry [0] (0-9)",
    "overlapping mount mappings are refused" },
  { DOC ("'mounts':[{'destination':'/data','options':['rbind']}]"),
    "config.json: mounts[0].source: required for a bind mount",
    "a bind mount without source is refused" },
  { DOC ("'mounts':[{'destination':'/data','source':'tmpfs'}]"),
    "config.json: mounts[0].type: required unless the mount is a bind mount",
    "a mount that is neither bind nor typed is refused" },
  { DOC ("'mounts':[{'destination':'/data','options':['remount','ro']}]"), NULL,
    "a remount needs no type or source" },
  { DOC ("'mounts':[{'destination':'/a/../etc','type':'tmpfs','source':'tmpfs'}]"),
    "config.json: mounts[0].destination: must not contain a \"..\" component: \"/a/../etc\"",
    "a mount destination with \"..\" is refused" },
  { DOC ("'mounts':[{'destination':'/data','type':'bind','source':'/srv','options':['rbind','readonly']}]"),
    "config.json: mounts[0].options[1]: unknown mount option \"readonly\" (a bind mount takes no filesystem options)",
    "a typo in a bind mount's options is refused, not dropped (the bind would stay writable)" },
  { DOC ("'mounts':[{'destination':'/data','source':'/srv','options':['bind','nosuid','nosuidd']}]"),
    "config.json: mounts[0].options[2]: unknown mount option \"nosuidd\" (a bind mount takes no filesystem options)",
    "the bind option makes it a bind mount too" },
  { DOC ("'mounts':[{'destination':'/data','source':'/srv','options':['bind','nosuid','mode=755','size=1k']}]"),
    NULL, "a bind mount's key=value filesystem options are accepted (ignored with a warning), as runc does" },
  { DOC ("'mounts':[{'destination':'/data','options':['remount','ro','size=1m']}]"),
    "config.json: mounts[0].options[2]: unknown mount option \"size=1m\" (a remount takes no filesystem options)",
    "a remount's filesystem options are refused: the remount would not apply them" },
  { DOC ("'mounts':[{'destination':'/data','type':'bind','source':'/srv',"
         "'options':['rbind','ro','nosuid','nodev','noexec','rprivate','x-podman.relabel']}]"), NULL,
    "known bind options and mount(8)'s x- options pass" },
  { DOC ("'mounts':[{'destination':'/data','type':'tmpfs','source':'tmpfs','options':['size=1m','mode=700']}]"), NULL,
    "a filesystem mount keeps its filesystem options" },
};

static const struct vcase process[] = {
  { DOC (PROC (",'env':['A=1','FOO']")),
    "config.json: process.env[1]: \"FOO\" is not NAME=VALUE",
    "an env entry without '=' is refused" },
  { DOC (PROC (",'env':['=x']")),
    "config.json: process.env[0]: \"=x\" has an empty variable name",
    "an env entry with an empty name is refused" },
  { DOC (PROC (",'env':['A=','B==c']")), NULL,
    "empty values and '=' in values pass" },
  { DOC ("'hooks':{'poststop':[{'path':'/bin/true','env':['X']}]}"),
    "config.json: hooks.poststop[0].env[0]: \"X\" is not NAME=VALUE",
    "a hook env entry without '=' is refused" },
  { DOC ("'hooks':{'createRuntime':[{'path':'/bin/true','timeout':0}]}"),
    "config.json: hooks.createRuntime[0].timeout: 0 is out of range (1 to 2147483647)",
    "a hook timeout of 0 is refused" },
  { DOC ("'hooks':{'prestart':[{'path':'true'}]}"),
    "config.json: hooks.prestart[0].path: must be an absolute path, not \"true\"",
    "a relative hook path is refused" },
  { DOC ("'process':{'cwd':'/','args':[]}"),
    "config.json: process.args: must contain at least one entry (the program to run)",
    "a process without args is refused" },
  { DOC ("'process':{'cwd':'tmp','args':['sh']}"),
    "config.json: process.cwd: must be an absolute path, not \"tmp\"",
    "a relative cwd is refused" },
  { DOC (PROC (USER (0, 0, ",'umask':512"))),
    "config.json: process.user.umask: 512 (octal 1000) has bits outside 0777",
    "a umask above 0777 is refused" },
  { DOC (PROC (",'ioPriority':{'class':'IOPRIO_CLASS_BE','priority':8}")),
    "config.json: process.ioPriority.priority: 8 is out of range (0 to 7)",
    "ioPriority 8 is refused" },
  { DOC (PROC (",'oomScoreAdj':-1001")),
    "config.json: process.oomScoreAdj: -1001 is out of range (-1000 to 1000)",
    "oomScoreAdj -1001 is refused" },
  { DOC (PROC (",'rlimits':[{'type':'RLIMIT_NOFILE','soft':1,'hard':1},{'type':'RLIMIT_NOFILE','soft':2,'hard':2}]")),
    "config.json: process.rlimits[1].type: duplicate rlimit \"RLIMIT_NOFILE\"",
    "a duplicate rlimit is refused" },
  { DOC (PROC (",'scheduler':{'policy':'SCHED_OTHER','nice':20}")),
    "config.json: process.scheduler.nice: 20 is out of range (-20 to 19)",
    "nice 20 is refused" },
  { DOC (PROC (",'scheduler':{'policy':'SCHED_FIFO'}")),
    "config.json: process.scheduler.priority: 0 is out of range for SCHED_FIFO (1 to 99)",
    "SCHED_FIFO without a priority is refused" },
  { DOC (PROC (",'scheduler':{'policy':'SCHED_RR','priority':100}")),
    "config.json: process.scheduler.priority: 100 is out of range for SCHED_RR (1 to 99)",
    "SCHED_RR priority 100 is refused" },
  { DOC (PROC (",'scheduler':{'policy':'SCHED_BATCH','priority':5}")),
    "config.json: process.scheduler.priority: must be 0 unless the policy is SCHED_FIFO or SCHED_RR",
    "a static priority for SCHED_BATCH is refused" },
  { DOC (PROC (",'scheduler':{'policy':'SCHED_DEADLINE','deadline':1000000}")),
    "config.json: process.scheduler: SCHED_DEADLINE needs a runtime and a deadline greater than 0",
    "SCHED_DEADLINE without runtime is refused" },
  { DOC (PROC (",'scheduler':{'policy':'SCHED_DEADLINE','runtime':2000000,'deadline':1000000,'period':3000000}")),
    "config.json: process.scheduler: SCHED_DEADLINE needs runtime <= deadline <= period (2000000, 1000000, 3000000)",
    "SCHED_DEADLINE with runtime > deadline is refused" },
  { DOC (PROC (",'scheduler':{'policy':'SCHED_DEADLINE','runtime':1000,'deadline':3000000,'period':2000000}")),
    "config.json: process.scheduler: SCHED_DEADLINE needs runtime <= deadline <= period (1000, 3000000, 2000000)",
    "SCHED_DEADLINE with deadline > period is refused" },
  { DOC (PROC (",'scheduler':{'policy':'SCHED_DEADLINE','runtime':100000,'deadline':1000000}")), NULL,
    "SCHED_DEADLINE with period 0 (= deadline) passes" },
  { DOC (PROC (",'scheduler':{'policy':'SCHED_ISO'}")),
    "config.json: process.scheduler.policy: SCHED_ISO is not implemented by Linux",
    "SCHED_ISO is refused" },
  { DOC (PROC (",'execCPUAffinity':{'initial':'0-'}")),
    "config.json: process.execCPUAffinity.initial: \"0-\" is not a CPU list like \"0-3,7\"",
    "a truncated CPU range is refused" },
  { DOC (PROC (",'execCPUAffinity':{'final':'3-1'}")),
    "config.json: process.execCPUAffinity.final: \"3-1\" is not a CPU list like \"0-3,7\"",
    "a reversed CPU range is refused" },
  { DOC (PROC (",'execCPUAffinity':{'initial':'0-3, 7','final':''}")), NULL,
    "a CPU list with a space, and an empty final, pass" },
  { DOC (PROC (",'terminal':false,'consoleSize':{'height':25,'width':80}")), NULL,
    "consoleSize without terminal is ignored, not refused" },
};

static const struct vcase namespaced[] = {
  { DOC ("'hostname':'box'"),
    "config.json: hostname: requires a UTS namespace (a \"uts\" entry in linux.namespaces)",
    "hostname without a UTS namespace is refused" },
  { DOC ("'domainname':'example.org'"),
    "config.json: domainname: requires a UTS namespace (a \"uts\" entry in linux.namespaces)",
    "domainname without a UTS namespace is refused" },
  { DOC ("'domainname':'example.org'," LINUX_NS ("{'type':'uts','path':'/proc/1/ns/uts'}")), NULL,
    "domainname for a joined UTS namespace (a pod's) is accepted, as runc does" },
  { DOC ("'hostname':''"), NULL,
    "an empty hostname needs no UTS namespace" },
  { DOC ("'linux':{'timeOffsets':{'monotonic':{'secs':10}}}"),
    "config.json: linux.timeOffsets: requires a new time namespace (a \"time\" entry without path in linux.namespaces)",
    "timeOffsets without a time namespace are refused" },
  { DOC (LINUX_NS ("{'type':'time'}", ",'timeOffsets':{'boottime':{'secs':4611686019}}")),
    "config.json: linux.timeOffsets.boottime.secs: 4611686019 is out of range (-9223372036 to 4611686018)",
    "a time offset the kernel refuses is refused" },
  { DOC (LINUX_NS ("{'type':'time'}", ",'timeOffsets':{'monotonic':{'secs':-86400,'nanosecs':5}}")), NULL,
    "timeOffsets with a new time namespace pass" },
  { DOC ("'linux':{'devices':[{" FUSE ",'fileMode':2541}]}"),
    "config.json: linux.devices[0].fileMode: 2541 (octal 4755) has bits outside 0777",
    "a setuid device mode is refused" },
  { DOC ("'linux':{'devices':[{" FUSE ",'fileMode':8624}]}"), NULL,
    "fileMode 020660, the type bits of a character device with its permissions (podman), passes" },
  { DOC ("'linux':{'devices':[{" FUSE ",'fileMode':25008}]}"),
    "config.json: linux.devices[0].fileMode: octal 60660 has file type bits 060000 that are not those of type c",
    "fileMode with the type bits of a block device on a character device is refused" },
  { DOC ("'linux':{'devices':[{'path':'/dev/fifo','type':'p','fileMode':4534}]}"), NULL,
    "a FIFO's fileMode 010666 passes" },
  { DOC ("'linux':{'devices':[{" FUSE "},{'path':'/dev/fuse','type':'c','major':10,'minor':230}]}"),
    "config.json: linux.devices[1].path: \"/dev/fuse\" is already created by linux.devices[0]",
    "a duplicate device path is refused" },
  { DOC ("'linux':{'devices':[{'path':'/dev/x','type':'s','major':1,'minor':3}]}"),
    "config.json: linux.devices[0].type: unknown device type \"s\" (c, b, u or p)",
    "an unknown device type is refused" },
  { DOC ("'linux':{'devices':[{'path':'/dev/x','type':'c','minor':3}]}"),
    "config.json: linux.devices[0].major: required",
    "a character device without major is refused" },
  { DOC ("'linux':{'devices':[{'path':'/dev/fifo','type':'p','fileMode':438}]}"), NULL,
    "a FIFO needs no major or minor" },
  { DOC ("'linux':{'devices':[{'path':'/dev/x','type':'c','major':4097,'minor':3}]}"),
    "config.json: linux.devices[0].major: 4097 is out of range (0 to 4095)",
    "a major number that dev_t would truncate is refused" },
  { DOC ("'linux':{'netDevices':{'eth0':{}}}"),
    "config.json: linux.netDevices: requires a network namespace in linux.namespaces",
    "netDevices without a network namespace are refused" },
  { DOC (LINUX_NS (NETNS, ",'netDevices':{'eth%d':{}}")),
    "config.json: linux.netDevices.eth%d: an existing device's name has no '%' (a %d template goes in name)",
    "a template in the host device name is refused" },
  { DOC (LINUX_NS (NETNS, ",'netDevices':{'lo':{}}")),
    "config.json: linux.netDevices.lo: the loopback device cannot move to another network namespace",
    "moving lo is refused" },
  { DOC (LINUX_NS (NETNS, ",'netDevices':{'eth0':{'name':'c%d%d'}}")),
    "config.json: linux.netDevices.eth0.name: \"c%d%d\" may hold one %d template and no other '%'",
    "two templates in a name are refused" },
  { DOC (LINUX_NS (NETNS, ",'netDevices':{'eth0':{'name':'c%s'}}")),
    "config.json: linux.netDevices.eth0.name: \"c%s\" may hold one %d template and no other '%'",
    "a template other than %d is refused" },
  { DOC (LINUX_NS (NETNS, ",'netDevices':{'eth0':{'name':'net0'},'eth1':{'name':'net0'}}")),
    "config.json: linux.netDevices.eth1.name: \"net0\" is also the name of linux.netDevices.eth0 in the container",
    "two devices with the same name inside are refused" },
  { DOC (LINUX_NS (NETNS, ",'netDevices':{'eth0':{},'eth1':{'name':'eth0'}}")),
    "config.json: linux.netDevices.eth1.name: \"eth0\" is also the name of linux.netDevices.eth0 in the container",
    "a rename onto another device's kept name is refused" },
  { DOC (LINUX_NS (NETNS, ",'netDevices':{'eth0':{'name':'a:b'}}")),
    "config.json: linux.netDevices.eth0.name: invalid network interface name \"a:b\" "
    "(1 to 15 bytes, no '/', ':' or white space)",
    "an interface name with ':' is refused" },
  { DOC (LINUX_NS ("{'type':'network','path':'/var/run/netns/x'}",
                   ",'netDevices':{'eth0':{'name':'c%d'},'eth1':{'name':'c%d'}}")), NULL,
    "two %d templates into a joined network namespace pass" },
};

static const struct vcase sysctl[] = {
  { DOC (LINUX_NS (NETNS ",{'type':'ipc'},{'type':'uts'}", ",'sysctl':{'kernel.core_pattern':'|/x'}")),
    "config.json: linux.sysctl.kernel.core_pattern: not a namespaced sysctl: setting it would change the host",
    "a global sysctl is refused" },
  { DOC (LINUX_NS (NETNS, ",'sysctl':{'vm/overcommit_memory':'1'}")),
    "config.json: linux.sysctl.vm/overcommit_memory: not a namespaced sysctl: setting it would change the host",
    "a global sysctl in slash form is refused" },
  { DOC ("'linux':{'sysctl':{'net.ipv4.ip_forward':'1'}}"),
    "config.json: linux.sysctl.net.ipv4.ip_forward: requires a network namespace in linux.namespaces",
    "net.* without a network namespace is refused" },
  { DOC (LINUX_NS (NETNS, ",'sysctl':{'net.core.somaxconn':'256','kernel.shmmax':'1'}")),
    "config.json: linux.sysctl.kernel.shmmax: requires an IPC namespace in linux.namespaces",
    "kernel.shmmax without an IPC namespace is refused" },
  { DOC ("'linux':{'sysctl':{'fs.mqueue.msg_max':'20'}}"),
    "config.json: linux.sysctl.fs.mqueue.msg_max: requires an IPC namespace in linux.namespaces",
    "fs.mqueue.* without an IPC namespace is refused" },
  { DOC ("'linux':{'sysctl':{'kernel.domainname':'x'}}"),
    "config.json: linux.sysctl.kernel.domainname: requires a UTS namespace in linux.namespaces",
    "kernel.domainname without a UTS namespace is refused" },
  { DOC (LINUX_NS ("{'type':'ipc'}", ",'sysctl':{'kernel.shmmaxx':'1'}")),
    "config.json: linux.sysctl.kernel.shmmaxx: not a namespaced sysctl: setting it would change the host",
    "a near-miss of an IPC sysctl is refused" },
  { DOC (LINUX_NS (NETNS, ",'sysctl':{'net/../../kernel/core_pattern':'x'}")),
    "config.json: linux.sysctl.net/../../kernel/core_pattern: invalid sysctl name \"net/../../kernel/core_pattern\"",
    "a sysctl key that climbs out of its directory is refused" },
  { DOC (LINUX_NS (NETNS ",{'type':'ipc'},{'type':'uts'}",
                   ",'sysctl':{'net.ipv4.ip_forward':'1','net/ipv4/conf/all/forwarding':'1','kernel.msgmax':'8192',"
                   "'kernel.sem':'250 32000 32 128','fs.mqueue.queues_max':'64','kernel.hostname':'x'}")), NULL,
    "namespaced sysctls with their namespaces pass" },
  { DOC (LINUX_NS ("{'type':'network','path':'/var/run/netns/x'}", ",'sysctl':{'net.core.somaxconn':'1024'}")), NULL,
    "net.* in a joined network namespace passes" },
};

static const struct vcase resources[] = {
  { DOC (RES ("'memory':{'limit':2000,'swap':1000}")),
    "config.json: linux.resources.memory.swap: 1000 is lower than limit 2000 (swap limits memory+swap)",
    "swap below the memory limit is refused" },
  { DOC (RES ("'memory':{'limit':2000,'swap':-1,'reservation':2000}")), NULL,
    "unlimited swap passes" },
  { DOC (RES ("'memory':{'limit':2000,'reservation':3000}")),
    "config.json: linux.resources.memory.reservation: 3000 exceeds limit 2000",
    "a reservation above the limit is refused" },
  { DOC (RES ("'memory':{'limit':-2}")),
    "config.json: linux.resources.memory.limit: -2 is out of range (-1 to 9223372036854775807)",
    "a memory limit below -1 is refused" },
  { DOC (RES ("'cpu':{'quota':100000,'burst':200000}")),
    "config.json: linux.resources.cpu.burst: 200000 exceeds quota 100000",
    "a burst above the quota is refused" },
  { DOC (RES ("'cpu':{'quota':-1,'burst':200000,'period':100000}")), NULL,
    "a burst with unlimited quota passes" },
  { DOC (RES ("'cpu':{'quota':500}")),
    "config.json: linux.resources.cpu.quota: 500 is below the kernel's minimum of 1000",
    "a quota under 1 ms is refused" },
  { DOC (RES ("'cpu':{'period':100}")),
    "config.json: linux.resources.cpu.period: 100 is out of range (1000 to 1000000)",
    "a period under 1 ms is refused" },
  { DOC (RES ("'cpu':{'cpus':'1-0'}")),
    "config.json: linux.resources.cpu.cpus: \"1-0\" is not a CPU list like \"0-3,7\"",
    "a reversed cpus range is refused" },
  { DOC (RES ("'cpu':{'mems':'0--1'}")),
    "config.json: linux.resources.cpu.mems: \"0--1\" is not a memory node list like \"0-3,7\"",
    "a malformed mems list is refused" },
  { DOC (RES ("'cpu':{'cpus':'0-3;7'}")),
    "config.json: linux.resources.cpu.cpus: \"0-3;7\" is not a list like \"0-3,7\"",
    "a cpus list with a foreign character is refused" },
  { DOC (RES ("'cpu':{'idle':2}")),
    "config.json: linux.resources.cpu.idle: 2 is out of range (0 to 1)",
    "cpu idle 2 is refused" },
  { DOC (RES ("'pids':{'limit':-2}")),
    "config.json: linux.resources.pids.limit: -2 is out of range (-1 to 9223372036854775807)",
    "a pids limit below -1 is refused" },
  { DOC (RES ("'blockIO':{'weight':5}")),
    "config.json: linux.resources.blockIO.weight: 5 is out of range (10 to 1000)",
    "blkio weight 5 is refused" },
  { DOC (RES ("'blockIO':{'leafWeight':1001}")),
    "config.json: linux.resources.blockIO.leafWeight: 1001 is out of range (10 to 1000)",
    "blkio leafWeight 1001 is refused" },
  { DOC (RES ("'blockIO':{'weightDevice':[{'major':8,'minor':0,'weight':2000}]}")),
    "config.json: linux.resources.blockIO.weightDevice[0].weight: 2000 is out of range (10 to 1000)",
    "a per-device weight out of range is refused" },
  { DOC (RES ("'blockIO':{'weightDevice':[{'major':8,'minor':0}]}")),
    "config.json: linux.resources.blockIO.weightDevice[0]: at least one of weight and leafWeight is required",
    "a weightDevice without weights is refused" },
  { DOC (RES ("'hugepageLimits':[{'pageSize':'3MB','limit':1}]")),
    "config.json: linux.resources.hugepageLimits[0].pageSize: \"3MB\" is not a power-of-two size",
    "a page size that is not a power of two is refused" },
  { DOC (RES ("'hugepageLimits':[{'pageSize':'2MB','limit':1},{'pageSize':'2048KB','limit':2}]")),
    "config.json: linux.resources.hugepageLimits[1].pageSize: \"2048KB\" is already limited by hugepageLimits[0]",
    "the same page size twice is refused" },
  { DOC (RES ("'hugepageLimits':[{'pageSize':'2M','limit':1}]")),
    "config.json: linux.resources.hugepageLimits[0].pageSize: invalid page size \"2M\" (like \"2MB\" or \"1GB\")",
    "a page size without B is refused" },
  { DOC (RES ("'rdma':{'mlx5_1':{}}")),
    "config.json: linux.resources.rdma.mlx5_1: at least one of hcaHandles and hcaObjects is required",
    "an rdma entry without limits is refused" },
  { DOC (RES ("'unified':{'memorymax':'1'}")),
    "config.json: linux.resources.unified.memorymax: not a cgroup file name like \"memory.max\" (<controller>.<file>)",
    "a unified key without a controller is refused" },
  { DOC (RES ("'unified':{'.max':'1'}")),
    "config.json: linux.resources.unified..max: not a cgroup file name like \"memory.max\" (<controller>.<file>)",
    "a unified key with an empty controller is refused" },
  { DOC (RES ("'unified':{'../cgroup.procs':'1'}")),
    "config.json: linux.resources.unified.../cgroup.procs: invalid cgroup file name \"../cgroup.procs\"",
    "a unified key with a path is refused" },
  { DOC (RES ("'unified':{'memory.max':'1G','io.max':'8:0 rbps=1','hugetlb.2MB.max':'0'}")), NULL,
    "<controller>.<file> unified keys pass" },
};

static const struct vcase seccomp[] = {
  { DOC ("'linux':{'seccomp':{'defaultAction':'SCMP_ACT_NOTIFY','listenerPath':'/run/agent.sock'}}"),
    "config.json: linux.seccomp.defaultAction: SCMP_ACT_NOTIFY cannot be the default action",
    "NOTIFY as the default action is refused" },
  { DOC ("'linux':{'seccomp':{'defaultAction':'SCMP_ACT_ALLOW',"
         "'syscalls':[{'names':['mount'],'action':'SCMP_ACT_NOTIFY'}]}}"),
    "config.json: linux.seccomp.syscalls[0].action: SCMP_ACT_NOTIFY requires linux.seccomp.listenerPath",
    "a NOTIFY rule without listenerPath is refused" },
  { DOC ("'linux':{'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','flags':['SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV']}}"),
    "config.json: linux.seccomp.flags: SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV requires an SCMP_ACT_NOTIFY rule",
    "WAIT_KILLABLE_RECV without a listener is refused" },
  { DOC ("'linux':{'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','listenerMetadata':'x'}}"),
    "config.json: linux.seccomp.listenerMetadata: must not be set without listenerPath",
    "listenerMetadata without listenerPath is refused" },
  { DOC ("'linux':{'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','listenerPath':'relative/agent.sock',"
         "'syscalls':[{'names':['getpid'],'action':'SCMP_ACT_ERRNO'}]}}"),
    NULL, "listenerPath without a NOTIFY rule is ignored, as config-linux.md says (even a relative one)" },
  { DOC ("'linux':{'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','listenerPath':'run/agent.sock',"
         "'syscalls':[{'names':['mkdir'],'action':'SCMP_ACT_NOTIFY'}]}}"),
    "config.json: linux.seccomp.listenerPath: must be an absolute path, got \"run/agent.sock\"",
    "a relative listenerPath is refused" },
  { DOC ("'linux':{'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','listenerPath':'/run/"
         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',"
         "'syscalls':[{'names':['mkdir'],'action':'SCMP_ACT_NOTIFY'}]}}"),
    "config.json: linux.seccomp.listenerPath: 111 bytes: longer than a unix socket address takes (107)",
    "a listenerPath too long for a unix socket address is refused" },
  { DOC ("'linux':{'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','listenerPath':'/run/agent.sock',"
         "'syscalls':[{'names':['mkdir','sendmsg'],'action':'SCMP_ACT_NOTIFY'}]}}"),
    "config.json: linux.seccomp.syscalls[0].names[1]: SCMP_ACT_NOTIFY cannot apply to sendmsg: agentbox hands the "
    "listener's fd over with it, after the filter is loaded and before any agent has the fd",
    "NOTIFY on sendmsg, the handover's syscall, is refused" },
  { DOC ("'linux':{'seccomp':{'defaultAction':'SCMP_ACT_ERRNO','listenerPath':'/run/agent.sock',"
         "'listenerMetadata':'m','flags':['SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV'],"
         "'syscalls':[{'names':['mkdir','mkdirat'],'action':'SCMP_ACT_NOTIFY'},"
         "{'names':['read','write','exit_group'],'action':'SCMP_ACT_ALLOW'}]}}"),
    NULL, "NOTIFY rules with an absolute listenerPath, metadata and WAIT_KILLABLE_RECV pass" },
  { DOC ("'linux':{'seccomp':{'defaultAction':'SCMP_ACT_KILLL'}}"),
    "config.json: linux.seccomp.defaultAction: unknown seccomp action \"SCMP_ACT_KILLL\"",
    "an unknown default action is refused" },
  { DOC ("'linux':{'seccomp':{'defaultAction':'SCMP_ACT_ALLOW',"
         "'syscalls':[{'names':['ptrace'],'action':'SCMP_ACT_KILL','errnoRet':1}]}}"),
    "config.json: linux.seccomp.syscalls[0].errnoRet: only valid with SCMP_ACT_ERRNO or SCMP_ACT_TRACE, "
    "not SCMP_ACT_KILL",
    "errnoRet with an action that has no errno is refused" },
  { DOC ("'linux':{'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':[],'action':'SCMP_ACT_KILL'}]}}"),
    "config.json: linux.seccomp.syscalls[0].names: must contain at least one entry",
    "a rule without names is refused" },
  { DOC ("'linux':{'seccomp':{'defaultAction':'SCMP_ACT_ERRNO','listenerPath':'/run/agent.sock',"
         "'listenerMetadata':'m','flags':['SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV'],"
         "'syscalls':[{'names':['mount'],'action':'SCMP_ACT_NOTIFY'},{'names':['read'],'action':'SCMP_ACT_ALLOW'}]}}"),
    NULL, "a NOTIFY rule with its listener passes" },
  { DOC ("'linux':{'seccomp':{'defaultAction':'SCMP_ACT_ALLOW',"
         "'syscalls':[{'names':['getpid','no_such_syscall'],'action':'SCMP_ACT_ERRNO'}]}}"),
    "PREFIX:config.json: linux.seccomp.syscalls[0].names[1]: syscall \"no_such_syscall\" is unknown to libseccomp ",
    "an unknown syscall a rule should stop, under a default that allows it, is refused" },
  { DOC ("'linux':{'seccomp':{'defaultAction':'SCMP_ACT_LOG',"
         "'syscalls':[{'names':['no_such_syscall'],'action':'SCMP_ACT_KILL_PROCESS'}]}}"),
    "PREFIX:config.json: linux.seccomp.syscalls[0].names[0]: syscall \"no_such_syscall\" is unknown",
    "SCMP_ACT_LOG lets the call through as well" },
  { DOC ("'linux':{'seccomp':{'defaultAction':'SCMP_ACT_ERRNO',"
         "'syscalls':[{'names':['getpid','no_such_syscall'],'action':'SCMP_ACT_ALLOW'}]}}"), NULL,
    "an unknown syscall in an allow rule under a stopping default is skipped, as runc does (it stays stopped)" },
  { DOC ("'linux':{'seccomp':{'defaultAction':'SCMP_ACT_ALLOW',"
         "'syscalls':[{'names':['no_such_syscall'],'action':'SCMP_ACT_LOG'}]}}"), NULL,
    "an unknown syscall in a rule that does not stop it is skipped" },
};

static const struct vcase memory_policy[] = {
  { DOC ("'linux':{'memoryPolicy':{'mode':'MPOL_DEFAULT','nodes':'0'}}"),
    "config.json: linux.memoryPolicy.nodes: MPOL_DEFAULT takes no nodes",
    "MPOL_DEFAULT with nodes is refused" },
  { DOC ("'linux':{'memoryPolicy':{'mode':'MPOL_LOCAL','nodes':'0-1'}}"),
    "config.json: linux.memoryPolicy.nodes: MPOL_LOCAL takes no nodes",
    "MPOL_LOCAL with nodes is refused" },
  { DOC ("'linux':{'memoryPolicy':{'mode':'MPOL_BIND'}}"),
    "config.json: linux.memoryPolicy.nodes: MPOL_BIND needs at least one node",
    "MPOL_BIND without nodes is refused" },
  { DOC ("'linux':{'memoryPolicy':{'mode':'MPOL_WEIGHTED_INTERLEAVE','nodes':''}}"),
    "config.json: linux.memoryPolicy.nodes: MPOL_WEIGHTED_INTERLEAVE needs at least one node",
    "MPOL_WEIGHTED_INTERLEAVE with empty nodes is refused" },
  { DOC ("'linux':{'memoryPolicy':{'mode':'MPOL_INTERLEAVE','nodes':'2-1'}}"),
    "config.json: linux.memoryPolicy.nodes: \"2-1\" is not a memory node list like \"0-3,7\"",
    "a reversed node range is refused" },
  { DOC ("'linux':{'memoryPolicy':{'mode':'MPOL_BIND','nodes':'0',"
         "'flags':['MPOL_F_STATIC_NODES','MPOL_F_RELATIVE_NODES']}}"),
    "config.json: linux.memoryPolicy.flags: MPOL_F_STATIC_NODES and MPOL_F_RELATIVE_NODES exclude each other",
    "static and relative nodes together are refused" },
  { DOC ("'linux':{'memoryPolicy':{'mode':'MPOL_PREFERRED','flags':['MPOL_F_RELATIVE_NODES']}}"),
    "config.json: linux.memoryPolicy.flags: MPOL_F_STATIC_NODES and MPOL_F_RELATIVE_NODES need nodes",
    "relative nodes without nodes are refused" },
  { DOC ("'linux':{'memoryPolicy':{'mode':'MPOL_INTERLEAVE','nodes':'0','flags':['MPOL_F_NUMA_BALANCING']}}"),
    "config.json: linux.memoryPolicy.flags: MPOL_F_NUMA_BALANCING only goes with MPOL_BIND or MPOL_PREFERRED_MANY",
    "NUMA balancing with interleave is refused" },
  { DOC ("'linux':{'memoryPolicy':{'mode':'MPOL_PREFERRED'}}"), NULL,
    "MPOL_PREFERRED without nodes passes" },
  { DOC ("'linux':{'memoryPolicy':{'mode':'MPOL_BIND','nodes':'0-1,3',"
         "'flags':['MPOL_F_NUMA_BALANCING','MPOL_F_STATIC_NODES']}}"), NULL,
    "MPOL_BIND with nodes and flags passes" },
};

static const struct vcase other_linux[] = {
  { DOC ("'linux':{'intelRdt':{'memBwSchema':'L3:0=ff'}}"),
    "config.json: linux.intelRdt.memBwSchema: must start with \"MB:\"",
    "a memBwSchema without MB: is refused" },
  { DOC ("'linux':{'intelRdt':{'schemata':['L3:0=ff','MB:0=20\\nL3:0=1']}}"),
    "config.json: linux.intelRdt.schemata[1]: must not contain a newline",
    "a line break in schemata is refused" },
  { DOC ("'linux':{'intelRdt':{'closID':'a/b'}}"),
    "config.json: linux.intelRdt.closID: invalid CLOS name \"a/b\" (a directory name, or \"/\")",
    "a closID with '/' is refused" },
  { DOC ("'linux':{'intelRdt':{'closID':'/','l3CacheSchema':'L3:0=ff','memBwSchema':'MB:0=20'}}"), NULL,
    "closID \"/\" (the default CLOS) passes" },
  { DOC ("'linux':{'personality':{'domain':'LINUX','flags':['ADDR_NO_RANDOMIZE']}}"),
    "config.json: linux.personality.flags[0]: unsupported personality flag \"ADDR_NO_RANDOMIZE\" (none are supported)",
    "personality flags are refused" },
  { DOC ("'linux':{'cgroupsPath':'../../escape'}"),
    "config.json: linux.cgroupsPath: must not contain a \"..\" component: \"../../escape\"",
    "a cgroupsPath with \"..\" is refused" },
  { DOC ("'linux':{'maskedPaths':['proc/kcore']}"),
    "config.json: linux.maskedPaths[0]: must be an absolute path, not \"proc/kcore\"",
    "a relative masked path is refused" },
  { "{'ociVersion':'1.3.0','root':{'path':''}}",
    "config.json: root.path: must not be empty",
    "an empty root.path is refused" },
  { "{'ociVersion':'1.3.0'}",
    "config.json: root: required",
    "a document without root is refused" },
};

/* What runc spec writes, trimmed to Linux. */
static const char runc_style[] =
  "{'ociVersion':'1.2.0','root':{'path':'rootfs','readonly':true},'hostname':'runc',"
  " 'process':{'terminal':true,'user':{'uid':0,'gid':0},'args':['sh'],'cwd':'/',"
  "  'env':['PATH=/usr/bin','TERM=xterm'],"
  "  'capabilities':{'bounding':['CAP_AUDIT_WRITE','CAP_KILL'],'effective':['CAP_KILL'],'permitted':['CAP_KILL']},"
  "  'rlimits':[{'type':'RLIMIT_NOFILE','hard':1024,'soft':1024}],'noNewPrivileges':true},"
  " 'mounts':[{'destination':'/proc','type':'proc','source':'proc'},"
  "  {'destination':'/dev','type':'tmpfs','source':'tmpfs','options':['nosuid','strictatime','mode=755','size=65536k']}],"
  " 'linux':{'resources':{'devices':[{'allow':false,'access':'rwm'}]},"
  "  'namespaces':[{'type':'pid'},{'type':'network'},{'type':'ipc'},{'type':'uts'},{'type':'mount'},{'type':'cgroup'}],"
  "  'maskedPaths':['/proc/kcore'],'readonlyPaths':['/proc/sys']}}";

/* Most cross-field features, each used correctly. */
static const char kitchen_sink[] =
  "{'ociVersion':'1.3.0','root':{'path':'rootfs'},'hostname':'h','domainname':'d',"
  " 'process':{'cwd':'/','args':['sh'],'user':{'uid':1000,'gid':1000,'additionalGids':[1000,27],'umask':18},"
  "  'scheduler':{'policy':'SCHED_FIFO','priority':10},'ioPriority':{'class':'IOPRIO_CLASS_RT','priority':0},"
  "  'oomScoreAdj':-1000,'execCPUAffinity':{'initial':'0','final':'1-3'}},"
  " 'mounts':[{'destination':'/w','type':'none','source':'/srv/w','options':['rbind','ridmap']}],"
  " 'hooks':{'poststart':[{'path':'/bin/true','env':['A=b'],'timeout':5}]},"
  " 'linux':{'namespaces':[{'type':'user'},{'type':'uts'},{'type':'network'},{'type':'ipc'},{'type':'time'}],"
  "  " MAPS ",'timeOffsets':{'boottime':{'secs':-100}},"
  "  'devices':[{" FUSE ",'fileMode':438,'uid':0,'gid':0}],"
  "  'netDevices':{'eth0':{'name':'c%d'}},"
  "  'sysctl':{'net.ipv4.ping_group_range':'0 0','kernel.shmall':'100'},"
  "  'resources':{'memory':{'limit':1073741824,'reservation':536870912,'swap':2147483648},"
  "   'cpu':{'quota':50000,'burst':50000,'period':100000,'cpus':'0-1','mems':'0'},'pids':{'limit':0},"
  "   'blockIO':{'weight':500,'weightDevice':[{'major':8,'minor':0,'leafWeight':10}]},"
  "   'hugepageLimits':[{'pageSize':'2MB','limit':0},{'pageSize':'1GB','limit':0}],'unified':{'pids.max':'10'}},"
  "  'memoryPolicy':{'mode':'MPOL_PREFERRED_MANY','nodes':'0'}}}";

/* clang-format on */

/* linux.uidMappings with n one-ID entries. */
static char *
n_mappings (size_t n)
{
  size_t cap = 128 + n * 64, o;
  char *buf = xmalloc (cap);

  o = (size_t)snprintf (buf, cap,
                        "{'ociVersion':'1.3.0','root':{'path':'rootfs'},'linux':{'namespaces':[{'type':"
                        "'user'}],'gidMappings':" MAP ",'uidMappings':[");
  for (size_t i = 0; i < n; i++)
    o += (size_t)snprintf (buf + o, cap - o, "%s{'containerID':%zu,'hostID':%zu,'size':1}", i ? "," : "", i,
                           100000 + i);
  snprintf (buf + o, cap - o, "]}}");
  return buf;
}

static void
test_mapping_limit (void)
{
  _cleanup_free_ char *at_limit = n_mappings (340), *over = n_mappings (341);

  ok (load (at_limit) == NULL, "340 mapping entries (the kernel limit) pass");
  is_str (load (over), "config.json: linux.uidMappings: 341 entries exceed the kernel limit of 340",
          "341 mapping entries are refused");
}

/* 65536 FIFOs (the parser's item limit), the last one repeating the path
   of the first: found in O(n log n), and named with both indexes. */
static void
test_many_devices (void)
{
  size_t n = 65536, cap = 128 + n * 48, o;
  _cleanup_free_ char *buf = xmalloc (cap);

  o = (size_t)snprintf (buf, cap, "{'ociVersion':'1.3.0','root':{'path':'rootfs'},'linux':{'devices':[");
  for (size_t i = 0; i < n; i++)
    o += (size_t)snprintf (buf + o, cap - o, "%s{'path':'/dev/f%zu','type':'p'}", i ? "," : "",
                           i + 1 < n ? i : 7);
  snprintf (buf + o, cap - o, "]}}");
  is_str (load (buf),
          "config.json: linux.devices[65535].path: \"/dev/f7\" is already created by linux.devices[7]",
          "a duplicate among 65536 devices is found and named");
}

/* Where a mount destination stands against /proc, however it is spelled:
   ab_spec_check_supported refuses AB_PROC_INSIDE (t-hostile.sh runs it). */
static void
test_proc_place (void)
{
  static const struct
  {
    const char *dest;
    int want;
  } c[] = {
    { "/proc", AB_PROC_ROOT },
    { "//proc/./", AB_PROC_ROOT },
    { "/proc/meminfo", AB_PROC_STAND_IN },
    { "/proc//net/./dev", AB_PROC_STAND_IN },
    { "/proc/sys/kernel/ns_last_pid", AB_PROC_STAND_IN },
    { "/proc/sys", AB_PROC_INSIDE },
    { "/proc/./sys//net/ipv4/ip_forward", AB_PROC_INSIDE },
    { "/proc/self/attr/exec", AB_PROC_INSIDE },
    { "/proc/meminfo/x", AB_PROC_INSIDE },
    { "/proc/net", AB_PROC_INSIDE },
    { "/procfs", AB_PROC_OUTSIDE },
    { "/data/proc/sys", AB_PROC_OUTSIDE },
    { "/", AB_PROC_OUTSIDE },
  };

  for (size_t i = 0; i < AB_ARRAY_SIZE (c); i++)
    is_int (ab_proc_place (c[i].dest), c[i].want, "mount destination %s: place %d against /proc", c[i].dest,
            c[i].want);
}

static void
test_valid (void)
{
  static const char *const args[] = { "python3", "-c", "print(1)", NULL };
  struct ab_default_opts root = { 0 },
                         rootless = { .rootless = true, .uid = 1000, .gid = 1000, .args = args };
  _cleanup_free_ char *d1 = ab_spec_default_json (&root, NULL), *d2 = ab_spec_default_json (&rootless, NULL);
  const struct vcase valid[] = {
    { d1, NULL, "the default profile passes" },
    { d2, NULL, "the rootless default profile passes" },
    { "{'ociVersion':'1.0.0','root':{'path':'rootfs'}}", NULL, "the smallest document passes" },
    { runc_style, NULL, "a runc-style configuration passes" },
    { kitchen_sink, NULL, "a configuration using most cross-field features correctly passes" },
  };

  RUN (valid);
}

int
main (void)
{
  RUN (user_namespace);
  test_mapping_limit ();
  test_many_devices ();
  RUN (mapped_ids);
  RUN (mounts);
  RUN (process);
  RUN (namespaced);
  RUN (sysctl);
  RUN (resources);
  RUN (seccomp);
  RUN (memory_policy);
  RUN (other_linux);
  test_proc_place ();
  test_valid ();
  return tap_done ();
}
