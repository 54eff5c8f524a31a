# runtime/: the library the CLI, the supervisor and the MCP server call.
libagentbox_a_SOURCES += \
	runtime/error.h runtime/error.c \
	runtime/util.h runtime/util.c \
	runtime/log.h runtime/log.c
include runtime/seccomp.mk
include runtime/cgroup.mk
include runtime/mcp.mk
