# runtime/: the mechanisms (floor 3: one file per mechanism, cgroup/ its own
# room), and in sub-folders the floors above them: lifecycle/ (floor 4),
# supervise/, sandbox/ and mcp/ (front ends, floor 5).  docs/architecture.md.
libagentbox_a_SOURCES += \
	runtime/sync.h runtime/sync.c \
	runtime/mount.h runtime/mount.c \
	runtime/mount-internal.h runtime/mount-fs.c runtime/mount-cgroup.c \
	runtime/mount-overlay.h runtime/mount-overlay.c \
	runtime/wsdiff.h runtime/wsdiff.c \
	runtime/wsapply.h runtime/wsapply.c \
	runtime/dev.h runtime/dev.c \
	runtime/paths.h runtime/paths.c \
	runtime/process.h runtime/process.c \
	runtime/lsm.h runtime/lsm.c \
	runtime/ns.h runtime/ns.c \
	runtime/warm.h runtime/warm.c \
	runtime/console.h runtime/console.c \
	runtime/child.h runtime/child.c \
	runtime/idmap.h runtime/idmap.c \
	runtime/landlock.h runtime/landlock.c \
	runtime/fallback.h runtime/fallback.c \
	runtime/exe.h runtime/exe.c \
	runtime/caps.h runtime/seccomp.h
include runtime/plan/local.mk
include runtime/seccomp.mk
include runtime/cgroup/local.mk
include runtime/lifecycle/local.mk
include runtime/supervise/local.mk
include runtime/sandbox/local.mk
include runtime/mcp/local.mk
