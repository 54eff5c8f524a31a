# base/: floor 0, below everything (docs/architecture.md): the error
# contract, logging, small helpers, kernel constants, the bounded JSON
# reader and the JSON writer, path resolution beneath a pinned root.
libagentbox_a_SOURCES += \
	base/error.h base/error.c \
	base/util.h base/util.c \
	base/log.h base/log.c \
	base/kernel-compat.h \
	base/libc-compat.h base/libc-compat.c base/libc-string.c base/libc-malloc.c \
	base/json.h base/json.c base/json-get.c \
	base/gen.h base/gen.c \
	base/resolve.h base/resolve.c \
	base/text.h base/text.c \
	base/owner.h base/owner.c \
	base/nsenter.h base/nsenter.c
