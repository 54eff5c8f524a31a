# The result record and the MCP server (docs/result-record.md).

# Every outcome class -> its frame; each frame checked against
# docs/result-schema.json by tests/mcp/check_record.py.
check_PROGRAMS += tests/unit/test-record
tests_unit_test_record_SOURCES = tests/unit/test-record.c
tests_unit_test_record_LDADD = libagentbox.a $(AB_LIBS)
TESTS += tests/unit/test-record

# Raw frames against `agentbox mcp`: the protocol (no root needed), then
# real sandboxes (skipped without root), shell sessions and background
# processes (the scripted agent session of issue 25), then the official TypeScript SDK
# clients (skipped unless `npm ci --ignore-scripts` ran in tests/mcp).
TESTS += \
	tests/mcp/test-protocol.py \
	tests/mcp/test-sandbox.py \
	tests/mcp/test-session.py \
	tests/mcp/test-sdk.sh

EXTRA_DIST += \
	docs/result-record.md docs/result-schema.json \
	tests/mcp/check_record.py tests/mcp/mcplib.py \
	tests/mcp/test-protocol.py tests/mcp/test-sandbox.py tests/mcp/test-session.py tests/mcp/test-sdk.sh \
	tests/mcp/interop.mjs tests/mcp/package.json tests/mcp/package-lock.json
