/* The rule catalogue of `agentbox audit`: one entry per rule, in id order.
 *
 * Ids are stable: a rule may be reworded, never renumbered or reused.  The
 * CVE field names only vulnerabilities the rule's condition really enables
 * or was the precondition of; most rules have none.  agentbox(8), the
 * SARIF tool.driver.rules and `audit --rules` are all generated from this
 * table. */
#include "config.h"

#include <string.h>

#include "audit/audit.h"
#include "base/util.h"

#define H AB_AUDIT_HIGH
#define M AB_AUDIT_MEDIUM
#define L AB_AUDIT_LOW

static const struct ab_audit_rule rules[] = {
  /* ---- capabilities ---- */
  { "AB-CAP-001", H, "CAP_SYS_ADMIN is held or reachable",
    "The capability behind most container escapes: mount and remount (uncovering masked paths), new "
    "namespaces, BPF and the filesystem code behind them. The cgroup v1 release_agent escape needed it "
    "(CVE-2022-0492), and the fsconfig heap overflow (CVE-2022-0185) was reached with it inside a user "
    "namespace.",
    "Remove CAP_SYS_ADMIN from every capability set, bounding included.", "CVE-2022-0492, CVE-2022-0185" },
  { "AB-CAP-002", H, "CAP_SYS_PTRACE is held or reachable",
    "Traces any process it can see whatever its uid and reads or writes its memory; with the host's PID "
    "namespace those are host processes, otherwise it still erases the uid separation inside the container.",
    "Remove CAP_SYS_PTRACE from every capability set.", NULL },
  { "AB-CAP-003", H, "CAP_NET_ADMIN is held or reachable",
    "Reconfigures the network stack: in the container's namespace it deletes agentbox's nftables wall and "
    "reaches any destination; in the host's namespace it changes the host's firewall, routes and interfaces.",
    "Remove CAP_NET_ADMIN from every capability set.", NULL },
  { "AB-CAP-004", H, "CAP_DAC_READ_SEARCH is held or reachable",
    "Bypasses read permission checks and allows open_by_handle_at(2): a process opens any file of a mounted "
    "filesystem by its handle, past its mount namespace (the \"shocker\" escape from Docker containers).",
    "Remove CAP_DAC_READ_SEARCH from every capability set.", NULL },
  { "AB-CAP-005", H, "CAP_SYS_MODULE is held or reachable",
    "Loads and unloads kernel modules: arbitrary code in the host's kernel. Only host capabilities count "
    "for it, so it matters most without a user namespace; no agent needs it.",
    "Remove CAP_SYS_MODULE from every capability set.", NULL },
  { "AB-CAP-006", H, "CAP_SYS_RAWIO is held or reachable",
    "Raw I/O: iopl/ioperm, /dev/mem and /dev/port where the device cgroup lets them through, SCSI "
    "passthrough and /proc/kcore: direct access to the host's hardware and memory.",
    "Remove CAP_SYS_RAWIO from every capability set.", NULL },
  { "AB-CAP-007", M, "CAP_NET_RAW is held or reachable",
    "Raw and packet sockets: ARP and DNS spoofing against neighbours on a shared network, and the AF_PACKET "
    "code, where a memory corruption gave root (CVE-2020-14386).",
    "Remove CAP_NET_RAW (ping works without it through ICMP datagram sockets).", "CVE-2020-14386" },
  { "AB-CAP-008", M, "a capability that acts on host-wide kernel state",
    "CAP_SYS_TIME (the clock), CAP_SYS_BOOT (reboot, kexec), CAP_SYSLOG (the kernel log and its addresses), "
    "CAP_SYS_PACCT, CAP_MAC_ADMIN and CAP_MAC_OVERRIDE (LSM policy), CAP_AUDIT_CONTROL, CAP_SYS_NICE and "
    "CAP_SYS_RESOURCE (real-time priorities, limits and quotas), CAP_LINUX_IMMUTABLE, CAP_WAKE_ALARM, "
    "CAP_BLOCK_SUSPEND, CAP_SYS_TTY_CONFIG and CAP_IPC_LOCK act on state the kernel does not namespace.",
    "Remove the capability from every set.", NULL },
  { "AB-CAP-009", H, "CAP_BPF or CAP_PERFMON is held or reachable",
    "Loading BPF programs and opening performance events: the verifier and perf code are a recurring source "
    "of kernel exploits, and perf reads data of the kernel and of other processes.",
    "Remove CAP_BPF and CAP_PERFMON from every set.", NULL },
  { "AB-CAP-010", H, "every capability is granted",
    "The config grants every capability (all, or all but a few: what --privileged and --cap-add ALL produce "
    "on the host that wrote it): nothing of the capability model stands between the agent and the kernel.",
    "Start from no capability at all (agentbox spec) and add the few the workload needs.", NULL },
  { "AB-CAP-011", M, "the bounding set is wider than the capabilities held, and no_new_privs is off",
    "The bounding set, not the permitted set, is the limit: a set-user-ID-root program or one with file "
    "capabilities (and, for uid 0, any program) gets back at execve what the bounding set allows.",
    "Set process.noNewPrivileges to true, or make the bounding set equal to the permitted set.", NULL },
  { "AB-CAP-012", L, "ambient capabilities are set",
    "Ambient capabilities survive execve of any program, even for a user other than root: every tool the "
    "agent starts holds them.",
    "Empty process.capabilities.ambient unless a non-root program needs the capability.", NULL },
  /* ---- cgroups ---- */
  { "AB-CG-001", M, "no pids limit",
    "A fork bomb exhausts the host's process table (pid_max, threads-max): nothing else on the host can "
    "fork until the container is killed.",
    "Set linux.resources.pids.limit (agentbox spec uses 512).", NULL },
  { "AB-CG-002", M, "no memory limit",
    "The container can allocate the host's memory: the OOM killer then chooses among host processes, and "
    "tmpfs mounts fill RAM.",
    "Set linux.resources.memory.limit, and memory.swap to the same value (no swap).", NULL },
  { "AB-CG-003", L, "no CPU limit",
    "Every CPU of the host is the container's: a busy loop slows down every other workload of the host.",
    "Set linux.resources.cpu.quota and period (or cpu.cpus).", NULL },
  { "AB-CG-004", M, "the OOM killer is disabled",
    "With memory.disableOOMKiller the container's tasks hang at the limit instead of being killed, holding "
    "their memory and locks until someone intervenes (cgroup v1 only; agentbox refuses it on v2).",
    "Remove linux.resources.memory.disableOOMKiller.", NULL },
  { "AB-CG-005", L, "absolute cgroupsPath",
    "An absolute path is taken from the root of every hierarchy, outside agentbox's own subtree: it can "
    "name the cgroup of another container or of a host service, whose limits the container then shares "
    "(create fails only when that cgroup already holds processes).",
    "Use a relative linux.cgroupsPath, or none (agentbox-<id> under agentbox's own cgroup).", NULL },
  { "AB-CG-006", L, "swap unlimited",
    "memory.swap -1 with a memory limit lets the container push its memory out to the host's swap, slowing "
    "the host down and filling its swap space.",
    "Set linux.resources.memory.swap equal to memory.limit.", NULL },
  /* ---- devices ---- */
  { "AB-DEV-001", H, "the device cgroup allows every device",
    "An allow rule of type a, or for every block or character device, lets the container open (and with "
    "CAP_MKNOD create) any device node: disks, /dev/mem, the host's consoles.",
    "Remove the rule: agentbox denies every device but its default nodes.", NULL },
  { "AB-DEV-002", H, "/dev/mem, /dev/kmem or /dev/port is reachable",
    "The host's physical memory and I/O ports: with CAP_SYS_RAWIO the container reads and rewrites the "
    "kernel's memory.",
    "Remove the device and the device cgroup rule that allows c 1:1, 1:2 or 1:4.", NULL },
  { "AB-DEV-003", H, "block devices are reachable",
    "Raw access to a disk bypasses every file permission and mount option: the container reads or rewrites "
    "any file of the host's filesystems on it.",
    "Remove block devices from linux.devices and the rules that allow type b.", NULL },
  { "AB-DEV-004", M, "a kernel-facing character device is reachable",
    "/dev/kmsg (the kernel log, writable), /dev/kvm (virtual machines), /dev/fuse (FUSE filesystems), "
    "/dev/net/tun (network tunnels), /dev/uinput (injected input events) and the host's virtual consoles "
    "(4:*) expose kernel code or host state beyond the container.",
    "Remove the device unless the workload needs it.", NULL },
  /* ---- hooks ---- */
  { "AB-HOOK-001", H, "a hook runs a program on the host",
    "prestart, createRuntime, poststart and poststop hooks run as agentbox's user (root) in the host's "
    "namespaces: whoever writes config.json runs code on the host as root.",
    "Remove the hook, or accept configs only from a trusted author, with a root-owned, unwritable program.",
    NULL },
  { "AB-HOOK-002", M, "a createContainer hook runs a host program in the container",
    "createContainer runs a host binary inside the container's namespaces before pivot_root, with the full "
    "capabilities of the container's root and the host's filesystem still beneath the container's mounts.",
    "Remove the hook, or move what it does to a startContainer hook (run from the container's filesystem).",
    NULL },
  { "AB-HOOK-003", H, "a hook's program is writable by the container",
    "The program lies in the container's writable root filesystem or under a writable bind mount: the "
    "container replaces it, and the next run of the hook (poststop, on the host, as root) runs the "
    "container's code.",
    "Point the hook at a root-owned path the container cannot write (not inside its rootfs or binds).",
    NULL },
  { "AB-HOOK-004", L, "a hook runs inline shell code",
    "The hook runs an interpreter with -c: the config carries a script that runs outside the sandbox, "
    "invisible to a review of the host's hook programs.",
    "Put the script in a reviewed, root-owned file and run that.", NULL },
  /* ---- live state ---- */
  { "AB-LIVE-001", H, "live capabilities differ from the config",
    "The container process holds capabilities (CapEff, CapPrm, CapBnd, CapAmb, CapInh in /proc/PID/status) "
    "other than those the config and execve give it: a file capability or set-user-ID program, or a change "
    "made from outside.",
    "Find out what raised them; recreate the container.", NULL },
  { "AB-LIVE-002", H, "live no_new_privs differs from the config",
    "NoNewPrivs of the container process is not what process.noNewPrivileges asks for.",
    "Recreate the container.", NULL },
  { "AB-LIVE-003", H, "live seccomp differs from the config",
    "The Seccomp field of /proc/PID/status shows no filter where linux.seccomp asks for one (or the "
    "reverse).",
    "Recreate the container.", NULL },
  { "AB-LIVE-004", H, "a live namespace differs from the config",
    "The container process is in a namespace other than the config asks: the host's where a new one was "
    "asked for, or not the one at the path it was to join.",
    "Recreate the container.", NULL },
  { "AB-LIVE-005", H, "live mount flags are weaker than the config asks",
    "A mount of the container lacks ro, nosuid, nodev or noexec, or propagates as shared, while the config "
    "asks for them: it was remounted after create, from inside (with CAP_SYS_ADMIN) or from the host.",
    "Recreate the container; drop CAP_SYS_ADMIN and mount from its seccomp profile.", NULL },
  { "AB-LIVE-006", H, "a masked or read-only path is not in force",
    "A path of linux.maskedPaths is visible, or one of linux.readonlyPaths is writable, in the running "
    "container.",
    "Recreate the container.", NULL },
  { "AB-LIVE-007", H, "a live mount is not in the config",
    "The container's mount table holds a mount that neither the config nor agentbox made: mounted after "
    "create from inside the container or into its mount namespace from the host.",
    "Find who mounted it; recreate the container.", NULL },
  { "AB-LIVE-008", H, "live ID maps differ from the config",
    "/proc/PID/uid_map or gid_map of the container is not what linux.uidMappings and gidMappings ask for.",
    "Recreate the container.", NULL },
  { "AB-LIVE-009", H, "a live cgroup limit differs from the config",
    "pids.max, the memory limit or the CPU quota of the container's cgroup is not what linux.resources asks "
    "for: changed with `agentbox update` or written from the host.",
    "Restore the limit (agentbox update) or recreate the container.", NULL },
  { "AB-LIVE-010", H, "the live nftables wall differs from the config",
    "The table inet agentbox in the container's network namespace is missing or its chains and rules are "
    "not those agentbox installs for the config: egress is no longer what the config says.",
    "Recreate the container; drop CAP_NET_ADMIN from it.", NULL },
  /* ---- mounts ---- */
  /* ---- landlock ---- */
  { "AB-LL-001", L, "the landlock policy grants more than the mounts",
    "A pathBeneath rule of dev.agentbox.landlock grants write rights beneath a read-only mount (or execute "
    "beneath a noexec one): the mount refuses them anyway, so the policy does not say what the sandbox does, "
    "and the day the mount changes, landlock no longer holds the line the author meant it to.",
    "Grant beneath each path only what its mount allows (\"auto\": true derives exactly that), or make the "
    "mount writable if writes are meant.",
    NULL },
  { "AB-MNT-001", M, "the root filesystem is writable",
    "The agent can modify the image: replace binaries and libraries that later runs (or the host, if it "
    "uses the same directory) execute, and keep state from one run to the next.",
    "Set root.readonly to true; give the process a tmpfs /tmp and a workspace bind for its writes.", NULL },
  { "AB-MNT-002", H, "the host's root filesystem is bind-mounted",
    "A bind of / gives the container the whole host filesystem (with every submount for rbind): "
    "credentials, the runtime's binaries, other containers' data; writable, it is host root.",
    "Bind only the directories the workload needs, read-only where possible.", NULL },
  { "AB-MNT-003", H, "the host's /proc is bind-mounted",
    "The host's procfs shows every host process and /proc/1/root (the host's root directory), and its "
    "/proc/sys and /proc/sysrq-trigger, past the container's PID namespace and masked paths.",
    "Remove the bind; mount a proc filesystem of the container's own PID namespace.", NULL },
  { "AB-MNT-004", H, "the host's /sys is bind-mounted",
    "The host's sysfs reaches every device and firmware interface, kernel tunables such as "
    "/sys/kernel/uevent_helper (run as root on device events) and the host's cgroup tree.",
    "Remove the bind; mount sysfs read-only (type sysfs, option ro).", NULL },
  { "AB-MNT-005", H, "a container engine socket is mounted",
    "The Docker, containerd, podman or CRI-O API socket lets the container start a privileged container "
    "with the host's / mounted: host root in one request.",
    "Never give an agent an engine socket; remove the bind.", NULL },
  { "AB-MNT-006", H, "the host's /dev is bind-mounted",
    "Every device node of the host: disks (raw read and write past file permissions), /dev/mem, consoles; "
    "only the device cgroup stands in the way.",
    "Remove the bind; agentbox creates the default nodes in a private /dev.", NULL },
  { "AB-MNT-007", H, "the host's /etc is bind-mounted",
    "The host's passwd, shadow, sudoers, SSH and TLS keys: read-only it leaks credentials and password "
    "hashes; writable it lets the container add a root account or a sudo rule to the host.",
    "Bind only the individual files the workload needs (resolv.conf, hosts), read-only.", NULL },
  { "AB-MNT-008", M, "a sensitive host directory is bind-mounted",
    "/root, /home, /boot, /lib/modules, /var/lib/docker, /var/lib/containers, /var/lib/containerd, "
    "/var/lib/kubelet, /var/log and /run hold credentials, kernel images and modules, other containers' "
    "data or runtime sockets.",
    "Bind a dedicated directory instead.", NULL },
  { "AB-MNT-009", H, "a bind source passes through a symlink inside the bundle",
    "The bind follows the symlink when the container is created: whoever can change the bundle between this "
    "review and create (a previous run writing into a shared bundle, another user) points it at any host "
    "path.",
    "Give the real path as source, and keep bundles unwritable by the agent.", NULL },
  { "AB-MNT-010", H, "a path climbs with \"..\"",
    "A \"..\" component makes a mount source or root.path leave the directory it seems to be in: a relative "
    "source \"../../etc\" is the host's /etc, whatever the bundle's layout suggests.",
    "Use a clean absolute path.", NULL },
  { "AB-MNT-011", M, "shared mount propagation",
    "Mount events cross between the container and other mount namespaces: with runc, rootfsPropagation "
    "shared and rshared binds (Kubernetes' Bidirectional) let a mount made in the container appear on the "
    "host. agentbox keeps the container's tree a slave or private copy, so there host mounts still appear "
    "inside, and nested namespaces share the container's.",
    "Use the default (rslave) or private propagation.", NULL },
  { "AB-MNT-012", M, "rbind with ro leaves the submounts writable",
    "ro applies to the top mount of a recursive bind only (mount_setattr without AT_RECURSIVE, as runc "
    "does): every filesystem mounted below the source stays writable inside the container.",
    "Use rro (recursive read-only) instead of, or with, ro.", NULL },
  { "AB-MNT-013", M, "a writable host bind mount while container root is host root",
    "Without a user namespace the container's root owns what it creates in a writable host directory: a "
    "set-user-ID-root binary left there is a root shell for any host user who can reach the directory.",
    "Add a user namespace (or use agentbox run --workspace, which is id-mapped), or mount it ro.", NULL },
  { "AB-MNT-014", H, "sysfs is writable without a user namespace",
    "A writable sysfs as host root changes kernel and device settings of the whole host; "
    "/sys/kernel/uevent_helper, for one, runs a program as root on the next device event.",
    "Add ro to the sysfs mount's options.", NULL },
  { "AB-MNT-015", M, "a cgroup filesystem is writable",
    "On cgroup v1 a writable hierarchy has release_agent, a program the host kernel runs as root when a "
    "cgroup empties (CVE-2022-0492); runc mounts v1 on v1 and hybrid hosts. agentbox mounts cgroup2 "
    "instead, but without a cgroup namespace that is the host's whole tree, in which the container moves "
    "itself out of its limits.",
    "Add ro to the cgroup mount's options and a cgroup namespace.", "CVE-2022-0492" },
  /* ---- network ---- */
  { "AB-NET-001", H, "egress is allowed to every address",
    "An allow entry with prefix /0 accepts every destination: agentbox's wall then stops only the cloud "
    "metadata addresses, and the agent can send anything anywhere.",
    "List the destinations the workload needs in dev.agentbox.net.allow, or use allow-domains.", NULL },
  { "AB-NET-002", H, "egress is allowed to private or local addresses",
    "Allow entries covering loopback, RFC 1918, link-local, CGNAT or unique-local ranges reach the internal "
    "services of the host and the LAN (databases, admin panels, other containers): the network the wall "
    "keeps the agent out of.",
    "Allow only the public addresses the workload needs.", NULL },
  { "AB-NET-003", M, "a joined network namespace without the wall",
    "agentbox installs its nftables wall in a joined network namespace (a pod's) only when "
    "dev.agentbox.net.allow is set: without it, egress is whatever that namespace allows.",
    "Set dev.agentbox.net.allow (an empty value allows nothing), or give the container its own namespace.",
    NULL },
  { "AB-NET-004", M, "a host interface is moved into the container",
    "linux.netDevices moves a host interface into the container: the agent gets a direct link to the host's "
    "network segment (agentbox's wall still filters its output), and the host loses the interface.",
    "Use a veth pair made for the container, or no device.", NULL },
  { "AB-NET-005", M, "a domain wildcard spans a top-level domain",
    "An allow-domains entry such as *.com lets the proxy reach a large part of the Internet: the agent can "
    "exfiltrate to any domain it registers.",
    "Allow the exact names (or second-level wildcards) the workload needs.", NULL },
  { "AB-NET-006", H, "the wall is turned off",
    "dev.agentbox.net.wall is off: the network namespace agentbox makes gets no nftables wall. It holds only "
    "lo at create, but a link an orchestrator or a hook adds to it (a bridge's veth, slirp4netns, pasta) "
    "carries any traffic the agent sends, to any address and port, cloud metadata included.",
    "Remove the annotation; for an orchestrator's network give the container a namespace it made "
    "(linux.namespaces path) and dev.agentbox.net.allow for what the workload needs.", NULL },
  /* ---- namespaces ---- */
  { "AB-NS-001", H, "the PID namespace is the host's",
    "Every host process is visible in /proc; with CAP_SYS_PTRACE, or as the same uid, the container traces "
    "them and reads their memory and environment, and /proc/PID/root of a host process leads into the "
    "host's filesystem.",
    "Add {\"type\": \"pid\"} to linux.namespaces.", NULL },
  { "AB-NS-002", H, "the network namespace is the host's",
    "The container reaches every service on the host's loopback and interfaces, the cloud metadata service "
    "and the whole network, with no agentbox wall; CAP_NET_ADMIN and CAP_NET_RAW act on the host's own "
    "stack.",
    "Add {\"type\": \"network\"} to linux.namespaces, and allow egress with the dev.agentbox.net "
    "annotations.",
    NULL },
  { "AB-NS-003", M, "the IPC namespace is the host's",
    "System V shared memory, semaphores and message queues and the POSIX message queues of host processes "
    "are reachable: a segment with loose permissions is read or corrupted, and the IPC limits are shared.",
    "Add {\"type\": \"ipc\"} to linux.namespaces.", NULL },
  { "AB-NS-004", H, "no mount namespace",
    "Every mount of the container's setup would land in the host's mount table, and masked and read-only "
    "paths could not be applied. agentbox refuses such a config; other runtimes may not.",
    "Add {\"type\": \"mount\"} to linux.namespaces.", NULL },
  { "AB-NS-005", L, "the UTS namespace is the host's",
    "With CAP_SYS_ADMIN the container renames the host (sethostname), which confuses logs and host-based "
    "authentication; the host's name leaks to the agent.",
    "Add {\"type\": \"uts\"} to linux.namespaces and set hostname.", NULL },
  { "AB-NS-006", L, "the cgroup namespace is the host's",
    "/proc/self/cgroup shows the host's cgroup paths, and a cgroup mount shows the host's whole tree "
    "(writable without a user namespace).",
    "Add {\"type\": \"cgroup\"} to linux.namespaces.", NULL },
  { "AB-NS-007", H, "a namespace is joined from the host's init process",
    "A linux.namespaces path under /proc/1/ns/ joins the namespace of the host's PID 1, which is the host's "
    "own: the container is not isolated in it at all.",
    "Remove the path to get a new namespace, or join one made for the container (a pod's).", NULL },
  /* ---- masked and read-only paths ---- */
  { "AB-PROC-001", M, "default masked paths are missing",
    "The paths runc and agentbox mask leak host information or reach hardware: /proc/kcore (the kernel's "
    "memory, readable with CAP_SYS_RAWIO), /proc/keys, /proc/timer_list and /proc/sched_debug (kernel "
    "addresses for exploits), /sys/firmware (ACPI tables, EFI variables).",
    "Add the missing paths to linux.maskedPaths (agentbox spec lists them all).", NULL },
  { "AB-PROC-002", H, "/proc/sys is writable",
    "/proc/sys is not read-only: as host root (no user namespace) the container writes global sysctls, "
    "kernel.core_pattern among them, a program the host kernel runs as root on the next crash. In a user "
    "namespace only the namespaced ones are writable.",
    "Add /proc/sys to linux.readonlyPaths.", NULL },
  { "AB-PROC-003", M, "default read-only paths are missing",
    "/proc/sysrq-trigger (reboot or crash the host), /proc/irq, /proc/bus and /proc/fs are read-only by "
    "default; without that, root in the container writes host interrupt, bus and filesystem settings.",
    "Add the missing paths to linux.readonlyPaths.", NULL },
  /* ---- rlimits ---- */
  { "AB-RL-001", M, "RLIMIT_NOFILE above 1048576",
    "Every open file pins kernel memory: millions of descriptors exhaust the host's fs.file-max for every "
    "other process.",
    "Set RLIMIT_NOFILE to what the workload needs (agentbox spec: 1024).", NULL },
  { "AB-RL-002", M, "RLIMIT_MEMLOCK unlimited or above 64 MiB",
    "Locked memory cannot be swapped out or reclaimed: the container pins host RAM, beyond any memory "
    "limit's reclaim.",
    "Leave RLIMIT_MEMLOCK at the default (8 MiB) or lower.", NULL },
  { "AB-RL-003", L, "core dumps are enabled",
    "A crash dump is written by the host's kernel.core_pattern handler (often a program on the host, such "
    "as systemd-coredump): the agent's memory, its secrets included, lands on the host's disk.",
    "Set RLIMIT_CORE to 0.", NULL },
  { "AB-RL-004", M, "RLIMIT_RTPRIO above 0",
    "The process may switch itself to real-time scheduling without CAP_SYS_NICE: a real-time busy loop "
    "starves the host's CPUs.",
    "Remove RLIMIT_RTPRIO (the default is 0).", NULL },
  /* ---- rootless ---- */
  { "AB-ROOTLESS-001", M, "a resource limit is not enforced (rootless)",
    "agentbox runs without host root and no cgroup v2 subtree is delegated to its user (cgroup v1 "
    "hierarchies are root's alone), so the limit is not applied: the container can use the host's memory, "
    "CPU or I/O without bound. The pids limit becomes RLIMIT_NPROC, which the kernel counts per uid inside "
    "the container's user namespace (Linux 5.14 and later), not the container's processes as a whole.",
    "Delegate a cgroup v2 subtree to the user (systemd-run --user -p Delegate=yes, or an administrator's "
    "chown) and give agentbox --cgroup-parent; or run agentbox as root.",
    NULL },
  { "AB-ROOTLESS-002", M, "the container has no cgroup (rootless)",
    "Without a cgroup agentbox finds and kills the container's processes through its pid namespace: the "
    "kernel ends them all when the init exits, but pause, resume and update are refused and no memory or "
    "CPU use is measured. Without a pid namespace of its own, a daemon of the container survives it.",
    "Give the container a pid namespace of its own (agentbox spec does), and a delegated cgroup "
    "(--cgroup-parent) for the freezer and the limits.",
    NULL },
  { "AB-ROOTLESS-003", L, "the container's root is the user running agentbox",
    "In a rootless user namespace the container's root is the calling user's uid on the host: every file it "
    "writes in a bind mount or workspace is the user's, and whatever of the user's the container can reach "
    "(a bind of the home directory, a socket), it reaches with the user's full rights. With one id mapped, "
    "every uid inside is that user; with subordinate ids, the other uids are shared by every container "
    "the user runs.",
    "Bind only what the agent needs, read-only where it can be; give the user an /etc/subuid range "
    "(package uidmap) and run the agent as a non-root uid of the container.",
    NULL },
  /* ---- privileges ---- */
  { "AB-SEC-001", H, "no_new_privs is off",
    "A set-user-ID or file-capability program in the image (su, ping, newuidmap, ...) gives the agent "
    "privileges at execve, and the seccomp filter must be installed while the process still holds "
    "CAP_SYS_ADMIN.",
    "Set process.noNewPrivileges to true.", NULL },
  { "AB-SEC-002", M, "the container is protected from the OOM killer",
    "agentbox writes a negative oomScoreAdj with host privileges: under memory pressure the kernel kills "
    "host processes before the container (-1000: never the container).",
    "Remove process.oomScoreAdj or set it to 0 or more.", NULL },
  { "AB-SEC-003", M, "real-time scheduling is set from the host",
    "SCHED_FIFO, SCHED_RR, SCHED_DEADLINE or the real-time I/O class, set by the parent with host "
    "privileges: a busy loop in the container starves the host's CPUs or disks.",
    "Remove process.scheduler and process.ioPriority, or use SCHED_OTHER, SCHED_BATCH or SCHED_IDLE.", NULL },
  /* ---- seccomp ---- */
  { "AB-SECCOMP-001", H, "no seccomp filter",
    "Every syscall of every ABI is reachable: io_uring, userfaultfd, bpf, keyctl, unshare and the rest of "
    "the kernel surface behind most container escapes and local root exploits.",
    "Use the allowlist of agentbox spec (linux.seccomp with defaultAction SCMP_ACT_ERRNO).", NULL },
  { "AB-SECCOMP-002", H, "the seccomp default action allows",
    "With defaultAction SCMP_ACT_ALLOW or SCMP_ACT_LOG the profile is a denylist: every syscall it does not "
    "name, including those the kernel adds later, is reachable.",
    "Make defaultAction SCMP_ACT_ERRNO (or SCMP_ACT_KILL_PROCESS) and list what is allowed.", NULL },
  { "AB-SECCOMP-003", H, "a dangerous syscall is reachable without any capability",
    "io_uring, userfaultfd, bpf, perf_event_open, the keyrings, ptrace, clone3 and new user namespaces need "
    "no capability and widen the kernel attack surface: they are the usual entry points of local root "
    "exploits (CVE-2016-0728 in the keyrings, CVE-2019-13272 through ptrace).",
    "Remove the syscall from the allowing rules (under a permissive default, add a rule that refuses it).",
    "CVE-2016-0728, CVE-2019-13272" },
  { "AB-SECCOMP-004", H, "a privileged syscall is reachable and its capability is held",
    "mount, setns, open_by_handle_at, init_module, kexec_load, iopl, swapon or clock_settime passes the "
    "filter and the process holds the capability the kernel checks for it: nothing is left in the way.",
    "Refuse the syscall in linux.seccomp and drop the capability.", NULL },
  { "AB-SECCOMP-005", M, "syscall names libseccomp does not know",
    "A name libseccomp cannot resolve is skipped, as runc does: a rule meant to refuse it does nothing and "
    "the default action applies; a misspelled name is silently ignored.",
    "Correct the names (a newer libseccomp knows newer syscalls).", NULL },
  /* ---- the document ---- */
  { "AB-SPEC-001", L, "a property agentbox does not know",
    "agentbox ignores properties it does not know, as the spec requires, but the same config.json may do "
    "more under another runtime or a newer version that knows them.",
    "Remove it, or check what it does under every runtime that will run this config.", NULL },
  { "AB-SPEC-002", M, "an annotation another runtime acts on",
    "crun's run.oci.* annotations (run.oci.keep_original_groups keeps the caller's supplementary groups, "
    "run.oci.seccomp_bpf_data replaces the seccomp profile with raw BPF) and systemd unit properties "
    "(org.systemd.property.*) change the sandbox under those runtimes; agentbox ignores them.",
    "Remove the annotation unless the config is meant for that runtime, and review it there.", NULL },
  { "AB-SPEC-003", M, "agentbox refuses this config",
    "agentbox validate or create rejects the config (the detail says why); another runtime may run it as "
    "written, with the effects this report describes.",
    "Fix the field named in the detail.", NULL },
  /* ---- sysctl ---- */
  { "AB-SYSCTL-001", H, "a sysctl outside the namespaced set",
    "Only net.*, the IPC knobs (kernel.shm*, kernel.msg*, kernel.sem, fs.mqueue.*) and kernel.hostname and "
    "kernel.domainname belong to a namespace; anything else (kernel.core_pattern, vm.*, fs.*) is global: "
    "writing it changes the host. agentbox and runc refuse it.",
    "Remove the sysctl, or set it on the host deliberately.", NULL },
  { "AB-SYSCTL-002", H, "a sysctl of a namespace the host shares",
    "The sysctl belongs to a namespace the container shares with the host (absent from linux.namespaces, or "
    "joined at /proc/1/ns/): setting it changes the host's network or IPC settings.",
    "Give the container its own namespace of that type, or remove the sysctl.", NULL },
  /* ---- users ---- */
  { "AB-USER-001", H, "no user namespace: container root is host root",
    "Without a user namespace uid 0 in the container is uid 0 on the host: every capability it keeps is a "
    "host capability, any escape ends as host root (CVE-2019-5736 was blocked by user namespaces that did "
    "not map host root), and files written through bind mounts belong to host root.",
    "Add {\"type\": \"user\"} with uidMappings and gidMappings mapping container 0 to an unprivileged host "
    "range (agentbox spec: 100000-165535).",
    "CVE-2019-5736" },
  { "AB-USER-002", H, "host root is mapped into the user namespace",
    "A uidMappings or gidMappings entry with hostID 0 makes a container ID the host's root user or group: "
    "files of host root, on bind mounts or through /proc, are the container's to write, and an escape keeps "
    "root's identity.",
    "Map a host range without 0 (hostID 100000, size 65536).", NULL },
  { "AB-USER-003", L, "the mapped host range includes system accounts",
    "Host IDs 1 to 999 belong to system users and groups (daemon, adm, shadow, ...): a container ID mapped "
    "onto one owns that account's files on any filesystem the container shares with the host.",
    "Map host IDs from 100000 up (a range of /etc/subuid and /etc/subgid).", NULL },
};

#undef H
#undef M
#undef L

const struct ab_audit_rule *
ab_audit_rules (size_t *n)
{
  *n = AB_ARRAY_SIZE (rules);
  return rules;
}

const struct ab_audit_rule *
ab_audit_rule_find (const char *id)
{
  for (size_t i = 0; i < AB_ARRAY_SIZE (rules); i++)
    if (strcmp (rules[i].id, id) == 0)
      return &rules[i];
  return NULL;
}
