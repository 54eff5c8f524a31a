# abtest: the statically linked multi-call helper that integration tests run
# inside a minimal rootfs (tests/integration/lib.sh copies it to /bin/abtest);
# base/libc-compat.c: what it needs of glibc that musl lacks (empty under glibc).
# Own CFLAGS/LDFLAGS: no sanitizers (they cannot be linked statically), and
# not linked with libagentbox: it plays the workload, not the runtime.
check_PROGRAMS += tests/helper/abtest
tests_helper_abtest_SOURCES = tests/helper/abtest.c base/libc-compat.c
tests_helper_abtest_CFLAGS = -std=gnu17 $(WARN_CFLAGS) -pthread
tests_helper_abtest_LDFLAGS = -static -pthread
EXTRA_DIST += tests/helper/tap.py
