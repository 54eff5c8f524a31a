# Static validation, the default profile and its seccomp allowlist, and the
# check of that profile against the OCI JSON schema.
check_PROGRAMS += tests/unit/test-validate tests/unit/test-defaults
tests_unit_test_validate_SOURCES = tests/unit/test-validate.c
tests_unit_test_validate_LDADD = libagentbox.a $(AB_LIBS)
tests_unit_test_defaults_SOURCES = tests/unit/test-defaults.c
tests_unit_test_defaults_LDADD = libagentbox.a $(AB_LIBS)
TESTS += tests/unit/test-validate tests/unit/test-defaults tests/schema/test-default-schema.py

EXTRA_DIST += tests/schema/check.py tests/schema/test-default-schema.py \
	tests/schema/oci/LICENSE tests/schema/oci/README \
	tests/schema/oci/config-schema.json tests/schema/oci/config-linux.json \
	tests/schema/oci/config-freebsd.json tests/schema/oci/config-solaris.json \
	tests/schema/oci/config-vm.json tests/schema/oci/config-windows.json \
	tests/schema/oci/config-zos.json tests/schema/oci/defs.json \
	tests/schema/oci/defs-freebsd.json tests/schema/oci/defs-linux.json \
	tests/schema/oci/defs-vm.json tests/schema/oci/defs-windows.json \
	tests/schema/oci/defs-zos.json tests/schema/oci/features-schema.json \
	tests/schema/oci/features-linux.json tests/schema/oci/state-schema.json
