# The result record and the MCP server (docs/result-record.md).
libagentbox_a_SOURCES += \
	runtime/record.h runtime/record.c \
	runtime/mcp.h runtime/mcp-internal.h \
	runtime/mcp.c runtime/mcp-frame.c runtime/mcp-lifecycle.c \
	runtime/mcp-tools.c runtime/mcp-jobs.c runtime/mcp-shell.c runtime/mcp-worker.c \
	runtime/mcp-workspace.c

# The tools' outputSchema is docs/result-schema.json, compiled in as a C
# string so that the published schema and the served one cannot differ.
runtime/mcp-schema.inc: $(top_srcdir)/docs/result-schema.json
	$(AM_V_GEN)$(MKDIR_P) runtime && \
	sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $(top_srcdir)/docs/result-schema.json > $@.tmp && \
	mv $@.tmp $@
runtime/mcp-tools.$(OBJEXT): runtime/mcp-schema.inc
CLEANFILES += runtime/mcp-schema.inc

# The shell session's script (runtime/mcp-session.sh), the same way: one
# source for what runs in the sandbox and what the docs describe.  Full-line
# comments and blank lines are dropped; they would only lengthen bash's
# command line.
runtime/mcp-session.inc: $(top_srcdir)/runtime/mcp-session.sh
	$(AM_V_GEN)$(MKDIR_P) runtime && \
	sed -e '/^[[:space:]]*#/d' -e '/^[[:space:]]*$$/d' \
	    -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $(top_srcdir)/runtime/mcp-session.sh > $@.tmp && \
	mv $@.tmp $@
runtime/mcp-shell.$(OBJEXT): runtime/mcp-session.inc
CLEANFILES += runtime/mcp-session.inc
EXTRA_DIST += runtime/mcp-session.sh
