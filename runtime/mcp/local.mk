# runtime/mcp/: a front end (floor 5), the MCP server (docs/protocol.md).
libagentbox_a_SOURCES += \
	runtime/mcp/mcp.h runtime/mcp/mcp-internal.h \
	runtime/mcp/mcp.c runtime/mcp/mcp-dispatch.c runtime/mcp/mcp-frame.c runtime/mcp/mcp-lifecycle.c \
	runtime/mcp/mcp-tools.c runtime/mcp/mcp-jobs.c runtime/mcp/mcp-worker.c \
	runtime/mcp/mcp-workspace.c

# The tools' outputSchema is docs/result-schema.json, compiled in as a C
# string so that the published schema and the served one cannot differ.
runtime/mcp/mcp-schema.inc: $(top_srcdir)/docs/result-schema.json
	$(AM_V_GEN)$(MKDIR_P) runtime/mcp && \
	sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $(top_srcdir)/docs/result-schema.json > $@.tmp && \
	mv $@.tmp $@
runtime/mcp/mcp-tools.$(OBJEXT): runtime/mcp/mcp-schema.inc
CLEANFILES += runtime/mcp/mcp-schema.inc
