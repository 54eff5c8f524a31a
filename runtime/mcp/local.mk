# runtime/mcp/: a front end (floor 5), the MCP server (docs/protocol.md).
libagentbox_a_SOURCES += \
	runtime/mcp/mcp.h runtime/mcp/mcp-internal.h \
	runtime/mcp/mcp.c runtime/mcp/mcp-dispatch.c runtime/mcp/mcp-frame.c runtime/mcp/mcp-lifecycle.c \
	runtime/mcp/mcp-tools.c runtime/mcp/mcp-jobs.c runtime/mcp/mcp-shell.c runtime/mcp/mcp-worker.c \
	runtime/mcp/mcp-workspace.c

# The tools' outputSchema is docs/result-schema.json, compiled in as a C
# string so that the published schema and the served one cannot differ.
runtime/mcp/mcp-schema.inc: $(top_srcdir)/docs/result-schema.json
	$(AM_V_GEN)$(MKDIR_P) runtime/mcp && \
	sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $(top_srcdir)/docs/result-schema.json > $@.tmp && \
	mv $@.tmp $@
runtime/mcp/mcp-tools.$(OBJEXT): runtime/mcp/mcp-schema.inc
CLEANFILES += runtime/mcp/mcp-schema.inc

# The shell session's script (runtime/mcp/mcp-session.sh), the same way:
# one source for what runs in the sandbox and what the docs describe.
# Full-line comments and blank lines are dropped; they would only lengthen
# bash's command line.
runtime/mcp/mcp-session.inc: $(top_srcdir)/runtime/mcp/mcp-session.sh
	$(AM_V_GEN)$(MKDIR_P) runtime/mcp && \
	sed -e '/^[[:space:]]*#/d' -e '/^[[:space:]]*$$/d' \
	    -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $(top_srcdir)/runtime/mcp/mcp-session.sh > $@.tmp && \
	mv $@.tmp $@
runtime/mcp/mcp-shell.$(OBJEXT): runtime/mcp/mcp-session.inc
CLEANFILES += runtime/mcp/mcp-session.inc
EXTRA_DIST += runtime/mcp/mcp-session.sh
