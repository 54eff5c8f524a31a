# runtime/lifecycle/: floor 4, create, start, exec, kill, delete, state,
# pause/resume/update over the mechanisms.
libagentbox_a_SOURCES += \
	runtime/lifecycle/state.h runtime/lifecycle/state.c \
	runtime/lifecycle/container.h runtime/lifecycle/lifecycle-internal.h \
	runtime/lifecycle/create.c runtime/lifecycle/lifecycle.c runtime/lifecycle/control.c \
	runtime/lifecycle/network.h runtime/lifecycle/network.c \
	runtime/lifecycle/exec.h runtime/lifecycle/exec.c \
	runtime/lifecycle/wsstore.h runtime/lifecycle/wsstore.c \
	runtime/lifecycle/workspace.h runtime/lifecycle/workspace.c
