# agentbox audit: every rule both ways on the fixtures, the contract of the
# command (schemas, exit statuses, unreadable input, --diff), and golden
# reports.  The live audit of running containers is
# tests/integration/t-audit-live.sh.  Regenerate fixtures, goldens and the
# man page's generated sections with tests/audit/regen.sh.
TESTS += tests/audit/t-audit-rules.py tests/audit/t-audit-golden.py
EXTRA_DIST += \
	tests/audit/t-audit-rules.py tests/audit/t-audit-golden.py \
	tests/audit/README tests/audit/fixtures.py tests/audit/cases.txt tests/audit/capture.sh tests/audit/regen.sh \
	tests/audit/fixtures tests/audit/golden \
	docs/audit-schema.json \
	tests/schema/README tests/schema/sarif/README tests/schema/sarif/sarif-schema-2.1.0.json
