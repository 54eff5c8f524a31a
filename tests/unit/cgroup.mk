# The cgroup driver's tests.  test-cgroup needs nothing; test-cgroup-live
# needs root and makes cgroups below the caller's own; the .sh tests run it
# again inside a cgroup + mount namespace with /sys/fs/cgroup remounted
# (absolute paths, pure v2 layout, pure v1 layout).
check_PROGRAMS += tests/unit/test-cgroup
tests_unit_test_cgroup_SOURCES = tests/unit/test-cgroup.c
tests_unit_test_cgroup_LDADD = libagentbox.a $(AB_LIBS)
TESTS += tests/unit/test-cgroup

check_PROGRAMS += tests/unit/test-cgroup-live
tests_unit_test_cgroup_live_SOURCES = tests/unit/test-cgroup-live.c \
	tests/unit/test-cgroup-util.c tests/unit/test-cgroup-util.h
tests_unit_test_cgroup_live_LDADD = libagentbox.a $(AB_LIBS)
TESTS += tests/unit/test-cgroup-live

check_PROGRAMS += tests/unit/test-cgroup-res
tests_unit_test_cgroup_res_SOURCES = tests/unit/test-cgroup-res.c \
	tests/unit/test-cgroup-util.c tests/unit/test-cgroup-util.h
tests_unit_test_cgroup_res_LDADD = libagentbox.a $(AB_LIBS)
TESTS += tests/unit/test-cgroup-res

TESTS += tests/unit/cgroup-ns.sh
EXTRA_DIST += tests/unit/cgroup-ns.sh

# A benchmark, not a test: how long each cgroup.procs write takes, and
# whether a thread per hierarchy overlaps them.  Run it by hand.
check_PROGRAMS += tests/unit/test-cgroup-bench
tests_unit_test_cgroup_bench_SOURCES = tests/unit/test-cgroup-bench.c
tests_unit_test_cgroup_bench_LDADD = libagentbox.a $(AB_LIBS)
