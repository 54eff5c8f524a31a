# audit/: `agentbox audit`, the engine (the CLI is cmd/audit.c).  Built into
# libagentbox.a so that other front ends (the MCP server) can call it.
libagentbox_a_SOURCES += \
	audit/audit.h audit/audit-internal.h \
	audit/report.c \
	audit/input.c \
	audit/facts.c \
	audit/seccomp-eval.c \
	audit/map-host.c audit/map-fs.c audit/map-process.c audit/map-landlock.c \
	audit/rules-table.c audit/rules-ns.c audit/rules-fs.c audit/rules-priv.c audit/rules-rootless.c \
	audit/live.c audit/live-mounts.c audit/live-cgroup.c audit/live-nft.c \
	audit/diff.c \
	audit/render-text.c audit/render-json.c audit/render-sarif.c audit/render-man.c
