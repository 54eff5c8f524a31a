# runtime/: seccomp (libseccomp) and capabilities (libcap).
libagentbox_a_SOURCES += \
	runtime/seccomp.h runtime/seccomp-internal.h runtime/seccomp.c runtime/seccomp-ranges.c runtime/seccomp-cache.c runtime/cache.h \
	runtime/seccomp-notify.h runtime/seccomp-notify.c \
	runtime/caps.h runtime/caps.c
