# spec/ sources maintained with the CLI: agentbox's own annotations.
libagentbox_a_SOURCES += spec/annotations.h spec/annotations.c spec/landlock.h spec/landlock.c
