/* One test per rule of the parser: each invalid document is refused with
   exactly this message, naming the JSON path of the offending value. */
#include "config.h"

#include "tests/unit/test-parse-util.h"

struct rule_case
{
  char kind;        /* 'r' raw document, 'd' doc(), 'p' proc(), 'l' lnx() */
  const char *json; /* single-quoted JSON */
  const char *want; /* the exact error */
  const char *name; /* the behaviour */
};

static const struct rule_case cases[] = {
  /* ---- the document ---- */
  { 'r', "[]", "config.json: must be a JSON object, not an array", "the document must be an object" },
  { 'r', "{'root':{'path':'r'}}", "config.json: ociVersion: required", "ociVersion is required" },
  { 'r', "{'ociVersion':1,'root':{'path':'r'}}", "config.json: ociVersion: must be a string, not a number",
    "ociVersion must be a string" },
  { 'r', "{'ociVersion':'1.0','root':{'path':'r'}}",
    "config.json: ociVersion: \"1.0\" is not a SemVer 2.0.0 version", "ociVersion needs major.minor.patch" },
  { 'r', "{'ociVersion':'1.01.0','root':{'path':'r'}}",
    "config.json: ociVersion: \"1.01.0\" is not a SemVer 2.0.0 version", "SemVer forbids leading zeros" },
  { 'r', "{'ociVersion':'1.0.0-01','root':{'path':'r'}}",
    "config.json: ociVersion: \"1.0.0-01\" is not a SemVer 2.0.0 version",
    "SemVer forbids a leading zero in a numeric pre-release identifier" },
  { 'r', "{'ociVersion':'1.0.0-','root':{'path':'r'}}",
    "config.json: ociVersion: \"1.0.0-\" is not a SemVer 2.0.0 version",
    "an empty pre-release is not SemVer" },
  { 'r', "{'ociVersion':'1.0.0+a..b','root':{'path':'r'}}",
    "config.json: ociVersion: \"1.0.0+a..b\" is not a SemVer 2.0.0 version",
    "an empty build identifier is not SemVer" },
  { 'r', "{'ociVersion':'v1.0.0','root':{'path':'r'}}",
    "config.json: ociVersion: \"v1.0.0\" is not a SemVer 2.0.0 version", "a \"v\" prefix is not SemVer" },
  { 'r', "{'ociVersion':'2.0.0','root':{'path':'r'}}",
    "config.json: ociVersion: unsupported version \"2.0.0\" (agentbox supports 1.0.0 to 1.3.x)",
    "another major version is refused, naming the supported range" },
  { 'r', "{'ociVersion':'0.5.0','root':{'path':'r'}}",
    "config.json: ociVersion: unsupported version \"0.5.0\" (agentbox supports 1.0.0 to 1.3.x)",
    "a pre-1.0 version is refused" },
  { 'r', "{'ociVersion':'1.4.0-rc.1','root':{'path':'r'}}",
    "config.json: ociVersion: unsupported version \"1.4.0-rc.1\" (agentbox supports 1.0.0 to 1.3.x)",
    "a version newer than 1.3.x is refused, even as a pre-release" },
  { 'r', "{'ociVersion':'1.99999999999999999999999.0','root':{'path':'r'}}",
    "config.json: ociVersion: unsupported version \"1.99999999999999999999999.0\" (agentbox supports 1.0.0 "
    "to 1.3.x)",
    "a minor version beyond uint64 is newer, not a wrap-around" },
  { 'r', "{'ociVersion':'1.0.0'}", "config.json: root: required", "root is required on Linux" },
  { 'r', "{'ociVersion':'1.0.0','root':null}", "config.json: root: must be an object, not null",
    "root may not be null: it is required" },
  { 'r', "{'ociVersion':'1.0.0','root':{'path':''}}", "config.json: root.path: must not be empty",
    "root.path must not be empty" },
  { 'r', "{'ociVersion':'1.0.0','root':{}}", "config.json: root.path: required", "root.path is required" },
  { 'r', "{'ociVersion':'1.0.0','root':{'path':'r','readonly':1}}",
    "config.json: root.readonly: must be a boolean, not a number", "root.readonly must be a boolean" },
  { 'd', "'windows':{}", "config.json: windows: not supported on Linux", "a windows section is refused" },
  { 'd', "'solaris':{'milestone':'x'}", "config.json: solaris: not supported on Linux",
    "a solaris section is refused" },
  { 'd', "'vm':{}", "config.json: vm: not supported on Linux", "a vm section is refused" },
  { 'd', "'zos':{}", "config.json: zos: not supported on Linux", "a zos section is refused" },
  { 'd', "'freebsd':{}", "config.json: freebsd: not supported on Linux", "a freebsd section is refused" },
  { 'd', "'hostname':'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'",
    "config.json: hostname: longer than 64 bytes", "a hostname longer than HOST_NAME_MAX is refused" },
  { 'd', "'domainname':5", "config.json: domainname: must be a string, not a number",
    "domainname must be a string" },

  /* ---- process ---- */
  { 'd', "'process':[]", "config.json: process: must be an object, not an array",
    "process must be an object" },
  { 'd', "'process':{'args':['sh']}", "config.json: process.cwd: required", "process.cwd is required" },
  { 'd', "'process':{'cwd':'tmp','args':['sh']}",
    "config.json: process.cwd: must be an absolute path, not \"tmp\"", "process.cwd must be absolute" },
  { 'd', "'process':{'cwd':'/a/../b','args':['sh']}",
    "config.json: process.cwd: must not contain a \"..\" component: \"/a/../b\"",
    "process.cwd must not contain .." },
  { 'd', "'process':{'cwd':'/a/./b','args':['sh']}",
    "config.json: process.cwd: must not contain a \".\" component: \"/a/./b\"",
    "process.cwd must not contain ." },
  { 'd', "'process':{'cwd':'/'}", "config.json: process.args: required",
    "process.args is required on Linux" },
  { 'd', "'process':{'cwd':'/','args':[]}",
    "config.json: process.args: must contain at least one entry (the program to run)",
    "process.args needs at least one entry" },
  { 'd', "'process':{'cwd':'/','args':['']}",
    "config.json: process.args[0]: the program to run must not be empty",
    "process.args[0] must not be empty" },
  { 'd', "'process':{'cwd':'/','args':['sh',1]}",
    "config.json: process.args[1]: must be a string, not a number", "process.args entries must be strings" },
  { 'p', "'env':'PATH=/bin'", "config.json: process.env: must be an array of strings, not a string",
    "process.env must be an array" },
  { 'p', "'terminal':'yes'", "config.json: process.terminal: must be a boolean, not a string",
    "process.terminal must be a boolean" },
  { 'p', "'consoleSize':{'height':25}", "config.json: process.consoleSize.width: required",
    "consoleSize needs a width" },
  { 'p', "'commandLine':'cmd.exe /c dir'",
    "config.json: process.commandLine: not supported on Linux (use args)", "process.commandLine is refused" },
  { 'p', "'user':{'username':'containeradministrator'}", "config.json: process.user.uid: required",
    "user.uid is required" },
  { 'p', "'user':{'uid':0,'gid':0,'username':'root'}",
    "config.json: process.user.username: not supported on Linux (use uid and gid)",
    "user.username is refused" },
  { 'p', "'user':{'uid':0}", "config.json: process.user.gid: required", "user.gid is required" },
  { 'p', "'user':{'uid':'0','gid':0}", "config.json: process.user.uid: must be an integer, not a string",
    "user.uid must be a number" },
  { 'p', "'user':{'uid':0,'gid':0,'additionalGids':[1,-2]}",
    "config.json: process.user.additionalGids[1]: must not be negative (-2)",
    "additionalGids must be uint32" },
  { 'p', "'user':{'uid':0,'gid':0,'umask':4294967296}",
    "config.json: process.user.umask: 4294967296 is out of range (maximum 4294967295)", "umask is a uint32" },
  { 'p', "'rlimits':[{'type':'RLIMIT_FOO','soft':1,'hard':1}]",
    "config.json: process.rlimits[0].type: unknown rlimit \"RLIMIT_FOO\"", "an unknown rlimit is refused" },
  { 'p',
    "'rlimits':[{'type':'RLIMIT_NOFILE','soft':1,'hard':1},{'type':'RLIMIT_CORE','soft':0,'hard':0},"
    "{'type':'RLIMIT_NOFILE','soft':2,'hard':2}]",
    "config.json: process.rlimits[2].type: duplicate rlimit \"RLIMIT_NOFILE\"",
    "a duplicate rlimit is refused, naming the second one" },
  { 'p', "'rlimits':[{'type':'RLIMIT_NOFILE','soft':2048,'hard':1024}]",
    "config.json: process.rlimits[0]: soft limit 2048 of RLIMIT_NOFILE is greater than its hard limit 1024",
    "an rlimit with soft > hard is refused, naming it" },
  { 'p', "'rlimits':[{'type':'RLIMIT_NOFILE','hard':1024}]", "config.json: process.rlimits[0].soft: required",
    "rlimit soft is required" },
  { 'p', "'rlimits':[{'soft':1,'hard':1}]", "config.json: process.rlimits[0].type: required",
    "rlimit type is required" },
  { 'p', "'rlimits':['RLIMIT_NOFILE']", "config.json: process.rlimits[0]: must be an object, not a string",
    "rlimits entries must be objects" },
  { 'p', "'capabilities':{'bounding':['CAP_KILL',5]}",
    "config.json: process.capabilities.bounding[1]: must be a string, not a number",
    "capability names must be strings" },
  { 'p', "'capabilities':{'effective':'CAP_KILL'}",
    "config.json: process.capabilities.effective: must be an array, not a string",
    "a capability set must be an array" },
  { 'p', "'noNewPrivileges':1", "config.json: process.noNewPrivileges: must be a boolean, not a number",
    "noNewPrivileges must be a boolean" },
  { 'p', "'oomScoreAdj':1001", "config.json: process.oomScoreAdj: 1001 is out of range (-1000 to 1000)",
    "oomScoreAdj is limited to the kernel's range" },
  { 'p', "'scheduler':{'nice':1}", "config.json: process.scheduler.policy: required",
    "scheduler.policy is required" },
  { 'p', "'scheduler':{'policy':'SCHED_FAST'}",
    "config.json: process.scheduler.policy: unknown scheduler policy \"SCHED_FAST\"",
    "an unknown scheduler policy is refused" },
  { 'p', "'scheduler':{'policy':'SCHED_OTHER','flags':['SCHED_FLAG_RECLAIM','SCHED_FLAG_TURBO']}",
    "config.json: process.scheduler.flags[1]: unknown scheduler flag \"SCHED_FLAG_TURBO\"",
    "an unknown scheduler flag is refused" },
  { 'p', "'scheduler':{'policy':'SCHED_OTHER','priority':2147483648}",
    "config.json: process.scheduler.priority: 2147483648 is out of range (-2147483648 to 2147483647)",
    "scheduler.priority is an int32" },
  { 'p', "'ioPriority':{'class':'IOPRIO_CLASS_NONE'}",
    "config.json: process.ioPriority.class: unknown I/O priority class \"IOPRIO_CLASS_NONE\"",
    "an unknown I/O priority class is refused" },
  { 'p', "'ioPriority':{'class':'IOPRIO_CLASS_BE','priority':8}",
    "config.json: process.ioPriority.priority: 8 is out of range (0 to 7)", "ioPriority.priority is 0 to 7" },
  { 'p', "'execCPUAffinity':{'initial':'0-3;7'}",
    "config.json: process.execCPUAffinity.initial: \"0-3;7\" is not a list like \"0-3,7\"",
    "execCPUAffinity must be a CPU list" },
  { 'p', "'execCPUAffinity':{'final':'all'}",
    "config.json: process.execCPUAffinity.final: \"all\" is not a list like \"0-3,7\"",
    "execCPUAffinity.final must be a CPU list" },

  /* ---- mounts ---- */
  { 'd', "'mounts':{}", "config.json: mounts: must be an array, not an object", "mounts must be an array" },
  { 'd', "'mounts':[{'source':'proc'}]", "config.json: mounts[0].destination: required",
    "mounts[].destination is required" },
  { 'd', "'mounts':[{'destination':'/proc'},{'destination':''}]",
    "config.json: mounts[1].destination: must not be empty",
    "an empty destination is refused (it would be \"/\")" },
  { 'd', "'mounts':[{'destination':'/a/../../etc'}]",
    "config.json: mounts[0].destination: must not contain a \"..\" component: \"/a/../../etc\"",
    "a destination with .. is refused" },
  { 'd', "'mounts':[{'destination':'../etc'}]",
    "config.json: mounts[0].destination: must not contain a \"..\" component: \"../etc\"",
    "a relative destination with .. is refused" },
  { 'd', "'mounts':[{'destination':'/x','options':['ro','']}]",
    "config.json: mounts[0].options[1]: must not be empty", "an empty mount option is refused" },
  { 'd', "'mounts':[{'destination':'/x','options':'ro'}]",
    "config.json: mounts[0].options: must be an array of strings, not a string",
    "mount options must be an array" },
  { 'd', "'mounts':[{'destination':'/x','type':1}]",
    "config.json: mounts[0].type: must be a string, not a number", "mount type must be a string" },
  { 'd',
    "'mounts':[{'destination':'/"
    "x','options':['idmap'],'uidMappings':[{'containerID':0,'hostID':1,'size':1}]}]",
    "config.json: mounts[0]: uidMappings and gidMappings must be specified together",
    "uidMappings without gidMappings is refused" },
  { 'd', "'mounts':[{'destination':'/x','gidMappings':[{'containerID':0,'hostID':1,'size':1}]}]",
    "config.json: mounts[0]: uidMappings and gidMappings must be specified together",
    "gidMappings without uidMappings is refused" },
  { 'd',
    "'mounts':[{'destination':'/x','uidMappings':[{'containerID':0,'hostID':1,'size':0}],'gidMappings':[]}]",
    "config.json: mounts[0].uidMappings[0]: size must not be zero", "an empty ID range is refused" },
  { 'd', "'mounts':[{'destination':'/x','uidMappings':[{'containerID':0,'hostID':1}],'gidMappings':[]}]",
    "config.json: mounts[0].uidMappings[0].size: required", "an ID mapping needs a size" },

  /* ---- hooks ---- */
  { 'd', "'hooks':{'prestart':{}}", "config.json: hooks.prestart: must be an array, not an object",
    "hooks.prestart must be an array" },
  { 'd', "'hooks':{'poststop':[{'path':'cleanup.sh'}]}",
    "config.json: hooks.poststop[0].path: must be an absolute path, not \"cleanup.sh\"",
    "hook paths must be absolute" },
  { 'd', "'hooks':{'createRuntime':[{'path':'/usr/bin/../../tmp/x'}]}",
    "config.json: hooks.createRuntime[0].path: must not contain a \"..\" component: \"/usr/bin/../../tmp/x\"",
    "hook paths must not contain .." },
  { 'd', "'hooks':{'startContainer':[{'args':['x']}]}", "config.json: hooks.startContainer[0].path: required",
    "a hook needs a path" },
  { 'd', "'hooks':{'createContainer':[{'path':'/bin/true','timeout':0}]}",
    "config.json: hooks.createContainer[0].timeout: 0 is out of range (1 to 2147483647)",
    "a hook timeout must be greater than zero" },
  { 'd', "'hooks':{'poststart':[{'path':'/bin/true','timeout':-5}]}",
    "config.json: hooks.poststart[0].timeout: -5 is out of range (1 to 2147483647)",
    "a negative hook timeout" },

  /* ---- annotations ---- */
  { 'd', "'annotations':[]", "config.json: annotations: must be an object, not an array",
    "annotations is a map" },
  { 'd', "'annotations':{'':'x'}", "config.json: annotations: keys must not be empty",
    "annotation keys must not be empty" },
  { 'd', "'annotations':{'com.example.n':5}",
    "config.json: annotations.com.example.n: must be a string, not a number",
    "annotation values must be strings" },
  { 'd', "'annotations':{'com.example.n':null}",
    "config.json: annotations.com.example.n: must be a string, not null",
    "annotation values must not be null" },
  { 'd', "'annotations':{'a\\u001b[31mb':{}}",
    "config.json: annotations.\"a\\u001b[31mb\": must be a string, not an object",
    "a key with an escape sequence is quoted and escaped in the message" },

  /* ---- linux: namespaces, mappings, time, devices ---- */
  { 'l', "'namespaces':[{'type':'pid'},{'type':'mount'},{'type':'ipc'},{'type':'nett'}]",
    "config.json: linux.namespaces[3].type: unknown namespace \"nett\"", "an unknown namespace is refused" },
  { 'l', "'namespaces':[{'type':'pid'},{'type':'pid','path':'/proc/1/ns/pid'}]",
    "config.json: linux.namespaces[1].type: duplicate namespace \"pid\"",
    "a duplicate namespace is refused" },
  { 'l', "'namespaces':[{'type':'network','path':'proc/1/ns/net'}]",
    "config.json: linux.namespaces[0].path: must be an absolute path, not \"proc/1/ns/net\"",
    "namespace paths must be absolute" },
  { 'l', "'namespaces':[{'type':'network','path':'/run/netns/../../proc/1/ns/net'}]",
    "config.json: linux.namespaces[0].path: must not contain a \"..\" component: "
    "\"/run/netns/../../proc/1/ns/net\"",
    "namespace paths must not contain .." },
  { 'l', "'namespaces':[{'path':'/proc/1/ns/net'}]", "config.json: linux.namespaces[0].type: required",
    "a namespace needs a type" },
  { 'l', "'namespaces':['pid']", "config.json: linux.namespaces[0]: must be an object, not a string",
    "namespaces are objects" },
  { 'l', "'uidMappings':[{'hostID':1000,'size':1}]",
    "config.json: linux.uidMappings[0].containerID: required", "an ID mapping needs a containerID" },
  { 'l', "'gidMappings':[{'containerID':0,'hostID':4294967295,'size':1}]",
    "config.json: linux.gidMappings[0]: hostID 4294967295 + size 1 runs past the last ID, 4294967294",
    "an ID range must not wrap around the 32-bit space" },
  { 'l', "'uidMappings':[{'containerID':4294967290,'hostID':0,'size':10}]",
    "config.json: linux.uidMappings[0]: containerID 4294967290 + size 10 runs past the last ID, 4294967294",
    "a container ID range must not wrap around either" },
  { 'l', "'timeOffsets':{'realtime':{'secs':1}}",
    "config.json: linux.timeOffsets.realtime: unknown clock \"realtime\" (only monotonic and boottime have "
    "offsets)",
    "only monotonic and boottime can be offset" },
  { 'l', "'timeOffsets':{'monotonic':{'nanosecs':1000000000}}",
    "config.json: linux.timeOffsets.monotonic.nanosecs: 1000000000 is out of range (maximum 999999999)",
    "nanosecs is below one second" },
  { 'l', "'timeOffsets':{'boottime':5}",
    "config.json: linux.timeOffsets.boottime: must be an object, not a number",
    "a time offset is an object" },
  { 'l', "'devices':[{'type':'x','path':'/dev/x'}]",
    "config.json: linux.devices[0].type: unknown device type \"x\" (c, b, u or p)",
    "an unknown device type is refused" },
  { 'l', "'devices':[{'type':'cb','path':'/dev/x','major':1,'minor':1}]",
    "config.json: linux.devices[0].type: unknown device type \"cb\" (c, b, u or p)",
    "a device type is one letter" },
  { 'l', "'devices':[{'type':'c','path':'/dev/x','minor':1}]",
    "config.json: linux.devices[0].major: required", "a character device needs a major number" },
  { 'l', "'devices':[{'type':'c','path':'dev/x','major':1,'minor':1}]",
    "config.json: linux.devices[0].path: must be an absolute path, not \"dev/x\"",
    "device paths must be absolute" },
  { 'l', "'devices':[{'type':'c','path':'/dev/../etc/shadow','major':1,'minor':1}]",
    "config.json: linux.devices[0].path: must not contain a \"..\" component: \"/dev/../etc/shadow\"",
    "device paths must not contain .." },
  { 'l', "'devices':[{'type':'c','path':'/dev/x','major':4097,'minor':1}]",
    "config.json: linux.devices[0].major: 4097 is out of range (0 to 4095)",
    "a major number the kernel would truncate is refused" },
  { 'l', "'devices':[{'type':'b','path':'/dev/x','major':8,'minor':-1}]",
    "config.json: linux.devices[0].minor: -1 is out of range (0 to 1048575)",
    "a negative minor number is refused" },
  { 'l', "'devices':[{'type':'c','path':'/dev/x','major':1,'minor':3,'fileMode':-1}]",
    "config.json: linux.devices[0].fileMode: must not be negative (-1)", "fileMode is unsigned" },
  { 'l', "'netDevices':{'eth0/x':{}}",
    "config.json: linux.netDevices.eth0/x: invalid network interface name \"eth0/x\" (1 to 15 bytes, no '/', "
    "':' or "
    "white space)",
    "a host interface name with '/' is refused" },
  { 'l', "'netDevices':{'eth0':{'name':'a-very-long-interface'}}",
    "config.json: linux.netDevices.eth0.name: invalid network interface name \"a-very-long-interface\" (1 to "
    "15 "
    "bytes, no '/', ':' or white space)",
    "an interface name longer than IFNAMSIZ is refused" },
  { 'l', "'netDevices':{'eth0':'ctr0'}",
    "config.json: linux.netDevices.eth0: must be an object, not a string",
    "a netDevices entry is an object" },
  { 'l', "'cgroupsPath':'/agentbox/../../system.slice'",
    "config.json: linux.cgroupsPath: must not contain a \"..\" component: \"/agentbox/../../system.slice\"",
    "cgroupsPath must not climb out with .." },

  /* ---- linux.resources ---- */
  { 'l', "'resources':{'devices':[{'access':'rwm'}]}",
    "config.json: linux.resources.devices[0].allow: required", "a device rule needs allow" },
  { 'l', "'resources':{'devices':[{'allow':true,'access':'rwx'}]}",
    "config.json: linux.resources.devices[0].access: invalid access \"rwx\" (a combination of r, w and m)",
    "device access is a combination of r, w and m" },
  { 'l', "'resources':{'devices':[{'allow':true,'access':'rr'}]}",
    "config.json: linux.resources.devices[0].access: invalid access \"rr\" (a combination of r, w and m)",
    "device access letters appear once" },
  { 'l', "'resources':{'devices':[{'allow':true,'type':'p'}]}",
    "config.json: linux.resources.devices[0].type: unknown device type \"p\" (a, c or b)",
    "a device rule type is a, c or b" },
  { 'l', "'resources':{'devices':[{'allow':true,'major':-2}]}",
    "config.json: linux.resources.devices[0].major: -2 is out of range (-1 to 4095)",
    "a device rule number is -1 (all) or a device number" },
  { 'l', "'resources':{'memory':{'limit':-2}}",
    "config.json: linux.resources.memory.limit: -2 is out of range (-1 to 9223372036854775807)",
    "a memory limit is bytes or -1" },
  { 'l', "'resources':{'memory':{'swappiness':101}}",
    "config.json: linux.resources.memory.swappiness: 101 is out of range (maximum 100)",
    "swappiness is 0 to 100" },
  { 'l', "'resources':{'memory':{'disableOOMKiller':'false'}}",
    "config.json: linux.resources.memory.disableOOMKiller: must be a boolean, not a string",
    "disableOOMKiller must be a boolean" },
  { 'l', "'resources':{'cpu':{'idle':2}}",
    "config.json: linux.resources.cpu.idle: 2 is out of range (0 to 1)", "cpu.idle is 0 or 1" },
  { 'l', "'resources':{'cpu':{'cpus':'0-3\\n7'}}",
    "config.json: linux.resources.cpu.cpus: \"0-3\\n7\" is not a list like \"0-3,7\"",
    "cpu.cpus must be a CPU list (and the newline is escaped)" },
  { 'l', "'resources':{'cpu':{'quota':-100}}",
    "config.json: linux.resources.cpu.quota: -100 is out of range (-1 to 9223372036854775807)",
    "cpu.quota is microseconds or -1" },
  { 'l', "'resources':{'pids':{}}", "config.json: linux.resources.pids.limit: required",
    "pids.limit is required" },
  { 'l', "'resources':{'pids':{'limit':-3}}",
    "config.json: linux.resources.pids.limit: -3 is out of range (-1 to 9223372036854775807)",
    "pids.limit is a count or -1" },
  { 'l', "'resources':{'blockIO':{'weightDevice':[{'major':8,'minor':0}]}}",
    "config.json: linux.resources.blockIO.weightDevice[0]: at least one of weight and leafWeight is required",
    "a weightDevice entry needs a weight" },
  { 'l', "'resources':{'blockIO':{'throttleReadBpsDevice':[{'major':8,'minor':0}]}}",
    "config.json: linux.resources.blockIO.throttleReadBpsDevice[0].rate: required",
    "a throttle needs a rate" },
  { 'l', "'resources':{'blockIO':{'throttleWriteIOPSDevice':[{'minor':0,'rate':1}]}}",
    "config.json: linux.resources.blockIO.throttleWriteIOPSDevice[0].major: required",
    "a throttle needs a major number" },
  { 'l', "'resources':{'hugepageLimits':[{'pageSize':'2M','limit':1}]}",
    "config.json: linux.resources.hugepageLimits[0].pageSize: invalid page size \"2M\" (like \"2MB\" or "
    "\"1GB\")",
    "a page size is <size><K|M|G>B" },
  { 'l', "'resources':{'hugepageLimits':[{'pageSize':'../../memory.max','limit':1}]}",
    "config.json: linux.resources.hugepageLimits[0].pageSize: invalid page size \"../../memory.max\" (like "
    "\"2MB\" or "
    "\"1GB\")",
    "a page size cannot name another file" },
  { 'l', "'resources':{'hugepageLimits':[{'pageSize':'2MB'}]}",
    "config.json: linux.resources.hugepageLimits[0].limit: required", "a hugepage limit is required" },
  { 'l', "'resources':{'network':{'priorities':[{'name':'eth0 9\\nlo','priority':1}]}}",
    "config.json: linux.resources.network.priorities[0].name: invalid network interface name \"eth0 9\\nlo\" "
    "(1 to 15 "
    "bytes, no '/', ':' or white space)",
    "a priority interface name cannot inject a line" },
  { 'l', "'resources':{'network':{'priorities':[{'name':'eth0'}]}}",
    "config.json: linux.resources.network.priorities[0].priority: required", "a priority needs a value" },
  { 'l', "'resources':{'rdma':{'mlx5_1':{}}}",
    "config.json: linux.resources.rdma.mlx5_1: at least one of hcaHandles and hcaObjects is required",
    "an rdma entry needs a limit" },
  { 'l', "'resources':{'rdma':{'mlx5_1':{'hcaHandles':4294967296}}}",
    "config.json: linux.resources.rdma.mlx5_1.hcaHandles: 4294967296 is out of range (maximum 4294967295)",
    "hcaHandles is a uint32" },
  { 'l', "'resources':{'unified':{'../cgroup.procs':'1'}}",
    "config.json: linux.resources.unified.../cgroup.procs: invalid cgroup file name \"../cgroup.procs\"",
    "a unified key cannot name a file outside the cgroup" },
  { 'l', "'resources':{'unified':{'memory.max':100}}",
    "config.json: linux.resources.unified.memory.max: must be a string, not a number",
    "unified values are strings" },

  /* ---- linux: intelRdt, sysctl, propagation, paths, personality, policy ---- */
  { 'l', "'intelRdt':{'closID':'../other'}",
    "config.json: linux.intelRdt.closID: invalid CLOS name \"../other\" (a directory name, or \"/\")",
    "closID cannot name another resctrl group" },
  { 'l', "'intelRdt':{'memBwSchema':'L3:0=1'}",
    "config.json: linux.intelRdt.memBwSchema: must start with \"MB:\"", "memBwSchema must start with MB:" },
  { 'l', "'intelRdt':{'l3CacheSchema':'L3:0=1\\nMB:0=100'}",
    "config.json: linux.intelRdt.l3CacheSchema: must not contain a newline", "l3CacheSchema is one line" },
  { 'l', "'intelRdt':{'schemata':['L3:0=1','MB:0=1\\nL2:0=1']}",
    "config.json: linux.intelRdt.schemata[1]: must not contain a newline",
    "schemata entries are single lines" },
  { 'l', "'sysctl':{'kernel/../../../etc/x':'1'}",
    "config.json: linux.sysctl.kernel/../../../etc/x: invalid sysctl name \"kernel/../../../etc/x\"",
    "a sysctl key cannot climb out of /proc/sys" },
  { 'l', "'sysctl':{'/etc/passwd':'1'}",
    "config.json: linux.sysctl./etc/passwd: invalid sysctl name \"/etc/passwd\"",
    "a sysctl key cannot be absolute" },
  { 'l', "'sysctl':{'net.ipv4.ip_forward':1}",
    "config.json: linux.sysctl.net.ipv4.ip_forward: must be a string, not a number",
    "sysctl values are strings" },
  { 'l', "'rootfsPropagation':'rbind'",
    "config.json: linux.rootfsPropagation: unknown propagation \"rbind\" (shared, slave, private, unbindable, "
    "or rshared, rslave, rprivate, runbindable)",
    "rootfsPropagation takes propagation words only, not other mount options" },
  { 'l', "'rootfsPropagation':'RSLAVE'",
    "config.json: linux.rootfsPropagation: unknown propagation \"RSLAVE\" (shared, slave, private, unbindable, "
    "or rshared, rslave, rprivate, runbindable)",
    "rootfsPropagation words are case-sensitive" },
  { 'l', "'maskedPaths':['/proc/kcore','proc/keys']",
    "config.json: linux.maskedPaths[1]: must be an absolute path, not \"proc/keys\"",
    "masked paths must be absolute" },
  { 'l', "'readonlyPaths':['/proc/sys/../../etc']",
    "config.json: linux.readonlyPaths[0]: must not contain a \"..\" component: \"/proc/sys/../../etc\"",
    "readonly paths must not contain .." },
  { 'l', "'maskedPaths':[1]", "config.json: linux.maskedPaths[0]: must be a string, not a number",
    "masked paths are strings" },
  { 'l', "'mountLabel':[]", "config.json: linux.mountLabel: must be a string, not an array",
    "mountLabel must be a string" },
  { 'l', "'personality':{'flags':[]}", "config.json: linux.personality.domain: required",
    "personality.domain is required" },
  { 'l', "'personality':{'domain':'LINUX64'}",
    "config.json: linux.personality.domain: unknown personality domain \"LINUX64\" (LINUX or LINUX32)",
    "an unknown personality domain is refused" },
  { 'l', "'personality':{'domain':'LINUX','flags':['ADDR_NO_RANDOMIZE']}",
    "config.json: linux.personality.flags[0]: unsupported personality flag \"ADDR_NO_RANDOMIZE\" (none are "
    "supported)",
    "personality flags are refused (the spec supports none)" },
  { 'l', "'memoryPolicy':{'nodes':'0'}", "config.json: linux.memoryPolicy.mode: required",
    "memoryPolicy.mode is required" },
  { 'l', "'memoryPolicy':{'mode':'MPOL_RANDOM'}",
    "config.json: linux.memoryPolicy.mode: unknown memory policy mode \"MPOL_RANDOM\"",
    "an unknown memory policy mode is refused" },
  { 'l', "'memoryPolicy':{'mode':'MPOL_BIND','flags':['MPOL_F_ADDR']}",
    "config.json: linux.memoryPolicy.flags[0]: unknown memory policy flag \"MPOL_F_ADDR\"",
    "an unknown memory policy flag is refused" },
  { 'l', "'memoryPolicy':{'mode':'MPOL_BIND','nodes':'0-3:7'}",
    "config.json: linux.memoryPolicy.nodes: \"0-3:7\" is not a list like \"0-3,7\"",
    "memoryPolicy.nodes is a list" },

  /* ---- linux.seccomp ---- */
  { 'l', "'seccomp':{}", "config.json: linux.seccomp.defaultAction: required",
    "seccomp.defaultAction is required" },
  { 'l', "'seccomp':{'defaultAction':'SCMP_ACT_MAYBE'}",
    "config.json: linux.seccomp.defaultAction: unknown seccomp action \"SCMP_ACT_MAYBE\"",
    "an unknown default action is refused" },
  { 'l', "'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','defaultErrnoRet':1}",
    "config.json: linux.seccomp.defaultErrnoRet: only valid with SCMP_ACT_ERRNO or SCMP_ACT_TRACE, not "
    "SCMP_ACT_ALLOW",
    "defaultErrnoRet with an action that returns no errno is refused" },
  { 'l', "'seccomp':{'defaultAction':'SCMP_ACT_ERRNO','defaultErrnoRet':65536}",
    "config.json: linux.seccomp.defaultErrnoRet: 65536 is out of range (maximum 4095)",
    "an errno that libseccomp would truncate to 0 (success) is refused" },
  { 'l',
    "'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['mount'],'action':'SCMP_ACT_KILL',"
    "'errnoRet':1}]}",
    "config.json: linux.seccomp.syscalls[0].errnoRet: only valid with SCMP_ACT_ERRNO or SCMP_ACT_TRACE, not "
    "SCMP_ACT_KILL",
    "errnoRet with SCMP_ACT_KILL is refused" },
  { 'l',
    "'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['ptrace'],'action':'SCMP_ACT_TRACE',"
    "'errnoRet':65536}]}",
    "config.json: linux.seccomp.syscalls[0].errnoRet: 65536 is out of range (maximum 65535)",
    "a trace message beyond 16 bits is refused" },
  { 'l', "'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':[],'action':'SCMP_ACT_ERRNO'}]}",
    "config.json: linux.seccomp.syscalls[0].names: must contain at least one entry",
    "syscall names must not be empty" },
  { 'l',
    "'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['read',''],'action':'SCMP_ACT_ERRNO'}]"
    "}",
    "config.json: linux.seccomp.syscalls[0].names[1]: must not be empty",
    "a syscall name must not be empty" },
  { 'l',
    "'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'name':'mount','action':'SCMP_ACT_ERRNO'}]}",
    "config.json: linux.seccomp.syscalls[0].names: required",
    "a rule with the pre-1.0 'name' member is refused, not silently dropped" },
  { 'l', "'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['mount']}]}",
    "config.json: linux.seccomp.syscalls[0].action: required", "a rule needs an action" },
  { 'l',
    "'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['mount'],'action':'SCMP_ACT_ERRNO',"
    "'args':[{'index':6,'value':0,'op':'SCMP_CMP_EQ'}]}]}",
    "config.json: linux.seccomp.syscalls[0].args[0].index: 6 is out of range (maximum 5)",
    "a syscall argument index is 0 to 5" },
  { 'l',
    "'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['mount'],'action':'SCMP_ACT_ERRNO',"
    "'args':[{'index':0,'value':0,'op':'SCMP_CMP_LIKE'}]}]}",
    "config.json: linux.seccomp.syscalls[0].args[0].op: unknown seccomp operator \"SCMP_CMP_LIKE\"",
    "an unknown operator is refused" },
  { 'l',
    "'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['mount'],'action':'SCMP_ACT_ERRNO',"
    "'args':[{'index':0,'op':'SCMP_CMP_EQ'}]}]}",
    "config.json: linux.seccomp.syscalls[0].args[0].value: required", "an argument needs a value" },
  { 'l', "'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','architectures':['SCMP_ARCH_X86_64','SCMP_ARCH_Z80']}",
    "config.json: linux.seccomp.architectures[1]: unknown architecture \"SCMP_ARCH_Z80\"",
    "an unknown architecture is refused" },
  { 'l', "'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','flags':['SECCOMP_FILTER_FLAG_NEW_LISTENER']}",
    "config.json: linux.seccomp.flags[0]: unknown seccomp flag \"SECCOMP_FILTER_FLAG_NEW_LISTENER\"",
    "an unknown seccomp flag is refused" },
  { 'l', "'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','listenerMetadata':'x'}",
    "config.json: linux.seccomp.listenerMetadata: must not be set without listenerPath",
    "listenerMetadata requires listenerPath" },
};

/* `update --resources FILE`: a LinuxResources document of its own goes
   through the same parser and checks, with paths relative to it. */
static const struct
{
  const char *json, *want, *name;
} resource_docs[] = {
  { "[]", "res.json: must be a JSON object (LinuxResources), not an array", "the document must be an object" },
  { "{'memory':{'limit':'lots'}}", "res.json: memory.limit: must be an integer, not a string",
    "a mistyped member is named by its path in the document" },
  { "{'memory':{'limit':2000,'swap':1000}}",
    "res.json: memory.swap: 1000 is lower than limit 2000 (swap limits memory+swap)",
    "the cross-field checks of linux.resources apply" },
  { "{'pids':{}}", "res.json: pids.limit: required", "pids needs a limit" },
  { "{'unified':{'../memory.max':'1'}}", "res.json: unified.../memory.max: invalid cgroup file name \"../memory.max\"",
    "a unified key cannot name another directory" },
  { "{'pids':{'limit':1},'pids':{'limit':2}}", "res.json: duplicate key \"pids\"",
    "duplicate keys are refused" },
  { "{'pids':", "res.json: ", "truncated JSON is refused" },
};

static void
test_resources_document (void)
{
  for (size_t i = 0; i < AB_ARRAY_SIZE (resource_docs); i++)
    {
      _cleanup_free_ char *text = dq (resource_docs[i].json);
      ab_error_t err = { 0 };
      struct ab_resources *r = ab_resources_parse (text, strlen (text), "res.json", &err);
      bool prefix_only = strcmp (resource_docs[i].want, "res.json: ") == 0;

      if (prefix_only)
        ok (r == NULL && err.cls == AB_EC_CONFIG && strncmp (err.msg, "res.json: ", 10) == 0, "%s (%s)",
            resource_docs[i].name, err.msg);
      else
        is_str (r == NULL ? err.msg : NULL, resource_docs[i].want, "%s", resource_docs[i].name);
      ab_resources_free (r);
    }

  _cleanup_free_ char *good = dq ("{'memory':{'limit':67108864},'pids':{'limit':-1},'cpu':{'cpus':'0-1'}}");
  ab_error_t err = { 0 };
  struct ab_resources *r = ab_resources_parse (good, strlen (good), "res.json", &err);
  ok (r != NULL && r->memory_set && r->memory.limit.set && r->memory.limit.v == 67108864 && r->pids_set
          && r->pids_limit.v == -1 && r->cpu_set && strcmp (r->cpu.cpus, "0-1") == 0,
      "a valid document is parsed into the model (%s)", r ? "ok" : err.msg);
  ab_resources_free (r);
}

/* A document cut short (a partial copy, a full disk) is reported where it
   ends, the byte the reader must look at, and a syntax error inside it
   where it is. */
static void
test_truncated (void)
{
  static const size_t cuts[] = { 500, 3000 };
  size_t len;
  _cleanup_free_ char *full = fixture ("maximal.json", &len);

  for (size_t i = 0; i < AB_ARRAY_SIZE (cuts); i++)
    {
      _cleanup_free_ char *want
          = xasprintf ("config.json: invalid JSON near byte %zu: parse error: premature EOF", cuts[i]);
      is_str (perr_len (xstrndup (full, cuts[i]), cuts[i]), want,
              "a config.json cut at byte %zu is reported at byte %zu, its end", cuts[i], cuts[i]);
    }
  is_str (perr (dq ("{'ociVersion':'1.3.0',,'root':{}}")),
          "config.json: invalid JSON near byte 23: parse error: invalid object key (must be a string)",
          "a syntax error inside the document is reported at its byte");
}

int
main (void)
{
  size_t i;

  for (i = 0; i < AB_ARRAY_SIZE (cases); i++)
    {
      const struct rule_case *t = &cases[i];
      char *text;

      switch (t->kind)
        {
        case 'd':
          text = doc (t->json);
          break;
        case 'p':
          text = proc (t->json);
          break;
        case 'l':
          text = lnx (t->json);
          break;
        default:
          text = dq (t->json);
          break;
        }
      is_str (perr (text), t->want, "%s", t->name);
    }
  test_resources_document ();
  test_truncated ();
  return tap_done ();
}
