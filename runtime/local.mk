# runtime/: the library the CLI, the supervisor and the MCP server call.
libagentbox_a_SOURCES += \
	runtime/error.h runtime/error.c \
	runtime/util.h runtime/util.c \
	runtime/log.h runtime/log.c \
	runtime/state.h runtime/state.c \
	runtime/sync.h runtime/sync.c \
	runtime/resolve.h runtime/resolve.c \
	runtime/mount.h runtime/mount.c runtime/kernel-compat.h \
	runtime/mount-internal.h runtime/mount-cgroup.c \
	runtime/mount-overlay.h runtime/mount-overlay.c \
	runtime/wsdiff.h runtime/wsdiff.c \
	runtime/wsstore.h runtime/wsstore.c \
	runtime/wsapply.h runtime/wsapply.c \
	runtime/workspace.h runtime/workspace.c \
	runtime/dev.h runtime/dev.c \
	runtime/paths.h runtime/paths.c \
	runtime/process.h runtime/process.c \
	runtime/lsm.h runtime/lsm.c \
	runtime/ns.h runtime/ns.c \
	runtime/console.h runtime/console.c \
	runtime/child.h runtime/child.c \
	runtime/container.h runtime/lifecycle-internal.h \
	runtime/create.c runtime/lifecycle.c runtime/control.c \
	runtime/network.h runtime/network.c \
	runtime/supervise.h runtime/supervise.c \
	runtime/sandbox.h runtime/sandbox.c \
	runtime/sandbox-fallback.h runtime/sandbox-fallback.c \
	runtime/fallback.h runtime/fallback.c \
	runtime/idmap.h runtime/idmap.c \
	runtime/exec.h runtime/exec.c \
	runtime/landlock.h runtime/landlock.c \
	runtime/landlock-rules.h runtime/landlock-rules.c \
	runtime/exe.h runtime/exe.c \
	runtime/caps.h runtime/seccomp.h runtime/cgroup.h
include runtime/seccomp.mk
include runtime/cgroup.mk
include runtime/mcp.mk

# PID 1 of persistent sandboxes: static, so it runs in any rootfs.
pkglibexec_PROGRAMS = agentbox-init
agentbox_init_SOURCES = runtime/agentbox-init.c
agentbox_init_CFLAGS = -std=gnu17 $(WARN_CFLAGS)
agentbox_init_LDFLAGS = -static
