# spec/: cross-field validation, the hardened default profile and its
# seccomp allowlist (`agentbox spec`).
libagentbox_a_SOURCES += \
	spec/validate.c \
	spec/defaults.h spec/defaults.c \
	spec/seccomp_default.h spec/seccomp_default.c
