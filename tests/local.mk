# Tests: everything runs under `make check` through automake's TAP driver.
LOG_DRIVER = env AM_TAP_AWK='$(AWK)' $(SHELL) $(top_srcdir)/build-aux/tap-driver.sh
TEST_EXTENSIONS = .sh .py
SH_LOG_DRIVER = $(LOG_DRIVER)
PY_LOG_DRIVER = $(LOG_DRIVER)
PY_LOG_COMPILER = $(PYTHON3)
AM_TESTS_ENVIRONMENT = \
	AB_TOP_SRCDIR='$(abs_top_srcdir)' AB_TOP_BUILDDIR='$(abs_top_builddir)' \
	AGENTBOX='$(abs_top_builddir)/agentbox' PYTHON3='$(PYTHON3)'; export AB_TOP_SRCDIR AB_TOP_BUILDDIR AGENTBOX PYTHON3;

EXTRA_DIST += tests/unit/tap.h

# The OCI conformance suite (runtime-tools) driver and its results: run by
# hand, needs a runtime-tools snapshot and Go (docs/conformance.md).
EXTRA_DIST += tests/oci-validation/run.sh docs/conformance.md

check_PROGRAMS += tests/unit/test-json
tests_unit_test_json_SOURCES = tests/unit/test-json.c
tests_unit_test_json_LDADD = libagentbox.a $(AB_LIBS)
TESTS += tests/unit/test-json

check_PROGRAMS += tests/unit/test-util
tests_unit_test_util_SOURCES = tests/unit/test-util.c
tests_unit_test_util_LDADD = libagentbox.a $(AB_LIBS)
TESTS += tests/unit/test-util

check_PROGRAMS += tests/unit/test-wsdiff
tests_unit_test_wsdiff_SOURCES = tests/unit/test-wsdiff.c
tests_unit_test_wsdiff_LDADD = libagentbox.a $(AB_LIBS)
TESTS += tests/unit/test-wsdiff

check_PROGRAMS += tests/unit/test-state
tests_unit_test_state_SOURCES = tests/unit/test-state.c
tests_unit_test_state_LDADD = libagentbox.a $(AB_LIBS)
TESTS += tests/unit/test-state

check_PROGRAMS += tests/unit/test-resolve
tests_unit_test_resolve_SOURCES = tests/unit/test-resolve.c
tests_unit_test_resolve_LDADD = libagentbox.a $(AB_LIBS)
TESTS += tests/unit/test-resolve

check_PROGRAMS += tests/unit/test-procw
tests_unit_test_procw_SOURCES = tests/unit/test-procw.c
tests_unit_test_procw_LDADD = libagentbox.a $(AB_LIBS)
TESTS += tests/unit/test-procw

check_PROGRAMS += tests/unit/test-landlock
tests_unit_test_landlock_SOURCES = tests/unit/test-landlock.c
tests_unit_test_landlock_LDADD = libagentbox.a $(AB_LIBS)
TESTS += tests/unit/test-landlock

include tests/unit/spec.mk
include tests/unit/validate.mk
include tests/unit/seccomp.mk
include tests/unit/cgroup.mk
include tests/netns.mk
include tests/mcp.mk
include tests/proxy.mk
include tests/helper/local.mk
include tests/integration/local.mk
include tests/audit/local.mk
include tests/fuzz/local.mk
include tests/bench.mk
include tests/tree/local.mk

# The musl build's memcpy, memmove and allocator, compiled under glibc here
# (not with the sanitizers, whose runtime brings its own malloc).
check_PROGRAMS += tests/unit/test-libc-mem
tests_unit_test_libc_mem_SOURCES = tests/unit/test-libc-mem.c base/libc-string.c base/libc-malloc.c
tests_unit_test_libc_mem_CPPFLAGS = $(AM_CPPFLAGS) -DAB_LIBC_MEM_TEST
tests_unit_test_libc_mem_CFLAGS = -std=gnu17 $(WARN_CFLAGS)
tests_unit_test_libc_mem_LDFLAGS =
tests_unit_test_libc_mem_LDADD = -lpthread
TESTS += tests/unit/test-libc-mem
