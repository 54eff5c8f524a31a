# hooks/: the six OCI hook kinds.
libagentbox_a_SOURCES += hooks/hooks.h hooks/hooks.c
