# The CLI: one file per subcommand.
agentbox_SOURCES += \
	cmd/cmd.h \
	cmd/main.c \
	cmd/common.c \
	cmd/create-opts.h cmd/create-opts.c \
	cmd/create.c \
	cmd/start.c \
	cmd/run.c \
	cmd/exec.c \
	cmd/kill.c \
	cmd/delete.c \
	cmd/pause.c \
	cmd/resume.c \
	cmd/ps.c \
	cmd/events.c \
	cmd/update.c \
	cmd/state.c \
	cmd/list.c \
	cmd/spec.c \
	cmd/features.c \
	cmd/userns-holder.c \
	cmd/validate.c \
	cmd/audit.c \
	cmd/workspace.c \
	cmd/mcp.c
