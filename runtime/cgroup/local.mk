# runtime/cgroup/: the cgroupfs driver (v2, v1, hybrid), a room of floor 3.
libagentbox_a_SOURCES += \
	runtime/cgroup/cgroup.h runtime/cgroup/cgroup-internal.h \
	runtime/cgroup/cgroup.c \
	runtime/cgroup/cgroup-fs.c \
	runtime/cgroup/cgroup-host.c \
	runtime/cgroup/cgroup-state.c \
	runtime/cgroup/cgroup-res.c \
	runtime/cgroup/cgroup-devices.c \
	runtime/cgroup/cgroup-proc.c \
	runtime/cgroup/cgroup-events.c \
	runtime/cgroup/cgroup-deleg.c
