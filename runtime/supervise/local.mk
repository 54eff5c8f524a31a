# runtime/supervise/: a front end (floor 5), the foreground supervisor and
# the result record it writes (docs/result-record.md).
libagentbox_a_SOURCES += \
	runtime/supervise/supervise.h runtime/supervise/supervise.c \
	runtime/supervise/record.h runtime/supervise/record.c \
	runtime/supervise/fswatch.h runtime/supervise/fswatch.c
