# The result record and the MCP server (docs/result-record.md).
libagentbox_a_SOURCES += \
	runtime/record.h runtime/record.c \
	runtime/mcp.h runtime/mcp-internal.h \
	runtime/mcp.c runtime/mcp-frame.c runtime/mcp-lifecycle.c \
	runtime/mcp-tools.c runtime/mcp-jobs.c runtime/mcp-worker.c \
	runtime/mcp-workspace.c

# The tools' outputSchema is docs/result-schema.json, compiled in as a C
# string so that the published schema and the served one cannot differ.
runtime/mcp-schema.inc: $(top_srcdir)/docs/result-schema.json
	$(AM_V_GEN)$(MKDIR_P) runtime && \
	sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $(top_srcdir)/docs/result-schema.json > $@.tmp && \
	mv $@.tmp $@
runtime/mcp-tools.$(OBJEXT): runtime/mcp-schema.inc
CLEANFILES += runtime/mcp-schema.inc
