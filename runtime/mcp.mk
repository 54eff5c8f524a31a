# The result record and the MCP server (docs/result-record.md).
libagentbox_a_SOURCES += \
	runtime/record.h runtime/record.c
