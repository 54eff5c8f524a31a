# runtime/sandbox/: a front end (floor 5), the built-in sandbox of
# `run --default` and its PID 1.
libagentbox_a_SOURCES += runtime/sandbox/sandbox.h runtime/sandbox/sandbox.c \
	runtime/sandbox/fallback.h runtime/sandbox/fallback.c \
	runtime/sandbox/binds.h runtime/sandbox/binds.c

# PID 1 of persistent sandboxes: static, so it runs in any rootfs.
pkglibexec_PROGRAMS = agentbox-init
agentbox_init_SOURCES = runtime/sandbox/agentbox-init.c
agentbox_init_CFLAGS = -std=gnu17 $(WARN_CFLAGS)
agentbox_init_LDFLAGS = -static
