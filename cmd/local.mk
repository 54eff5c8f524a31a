# The CLI: one file per subcommand.
agentbox_SOURCES += \
	cmd/cmd.h \
	cmd/main.c
