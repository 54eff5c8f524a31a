# Tests of the config.json parser (spec/tables.c, spec/parse*.c, spec/bundle.c).
EXTRA_DIST += tests/unit/test-parse-util.h \
	tests/unit/data/runc-spec.json tests/unit/data/crun-spec.json \
	tests/unit/data/podman-style.json tests/unit/data/maximal.json \
	tests/unit/data/agent-sandbox.json

check_PROGRAMS += tests/unit/test-parse
tests_unit_test_parse_SOURCES = tests/unit/test-parse.c
tests_unit_test_parse_LDADD = libagentbox.a $(AB_LIBS)
TESTS += tests/unit/test-parse

check_PROGRAMS += tests/unit/test-parse-errors
tests_unit_test_parse_errors_SOURCES = tests/unit/test-parse-errors.c
tests_unit_test_parse_errors_LDADD = libagentbox.a $(AB_LIBS)
TESTS += tests/unit/test-parse-errors

check_PROGRAMS += tests/unit/test-parse-hostile
tests_unit_test_parse_hostile_SOURCES = tests/unit/test-parse-hostile.c
tests_unit_test_parse_hostile_LDADD = libagentbox.a $(AB_LIBS)
TESTS += tests/unit/test-parse-hostile

check_PROGRAMS += tests/unit/test-parse-tables
tests_unit_test_parse_tables_SOURCES = tests/unit/test-parse-tables.c
tests_unit_test_parse_tables_LDADD = libagentbox.a $(AB_LIBS)
TESTS += tests/unit/test-parse-tables

check_PROGRAMS += tests/unit/test-parse-bundle
tests_unit_test_parse_bundle_SOURCES = tests/unit/test-parse-bundle.c
tests_unit_test_parse_bundle_LDADD = libagentbox.a $(AB_LIBS)
TESTS += tests/unit/test-parse-bundle
