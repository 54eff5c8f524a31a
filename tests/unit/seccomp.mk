# Unit tests of runtime/seccomp.c and runtime/caps.c.
check_PROGRAMS += tests/unit/test-seccomp
tests_unit_test_seccomp_SOURCES = tests/unit/test-seccomp.c
tests_unit_test_seccomp_LDADD = libagentbox.a $(AB_LIBS)
TESTS += tests/unit/test-seccomp

check_PROGRAMS += tests/unit/test-caps
tests_unit_test_caps_SOURCES = tests/unit/test-caps.c
tests_unit_test_caps_LDADD = libagentbox.a $(AB_LIBS)
TESTS += tests/unit/test-caps

check_PROGRAMS += tests/unit/test-seccomp-layout
tests_unit_test_seccomp_layout_SOURCES = tests/unit/test-seccomp-layout.c
tests_unit_test_seccomp_layout_LDADD = libagentbox.a $(AB_LIBS)
TESTS += tests/unit/test-seccomp-layout
