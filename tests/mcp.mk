# The result record and the MCP server.
check_PROGRAMS += tests/unit/test-record
tests_unit_test_record_SOURCES = tests/unit/test-record.c
tests_unit_test_record_LDADD = libagentbox.a $(AB_LIBS)
TESTS += tests/unit/test-record

EXTRA_DIST += docs/result-record.md docs/result-schema.json tests/mcp/check_record.py

# Raw-frame suites (Python, TAP) and the interop suite with the official
# TypeScript SDK clients (tests/mcp/package.json; `npm ci --ignore-scripts`
# in tests/mcp installs them, the suite skips without them).
TESTS += \
	tests/mcp/test-protocol.py
EXTRA_DIST += tests/mcp/mcplib.py
