# The cgroupfs driver (v2, v1, hybrid).
libagentbox_a_SOURCES += \
	runtime/cgroup.h runtime/cgroup-internal.h \
	runtime/cgroup.c \
	runtime/cgroup-host.c \
	runtime/cgroup-state.c \
	runtime/cgroup-res.c \
	runtime/cgroup-devices.c \
	runtime/cgroup-proc.c
