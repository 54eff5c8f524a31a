# The egress wall (netns/): unit tests of the policy grammar and the rule
# text, and integration tests in user+network namespaces against test hosts.
check_PROGRAMS += tests/unit/test-netns
tests_unit_test_netns_SOURCES = tests/unit/test-netns.c
tests_unit_test_netns_LDADD = libagentbox.a $(AB_LIBS)
TESTS += tests/unit/test-netns

check_PROGRAMS += tests/netns/netns-driver
tests_netns_netns_driver_SOURCES = tests/netns/netns-driver.c
tests_netns_netns_driver_LDADD = libagentbox.a $(AB_LIBS)

TESTS += tests/netns/egress.sh
EXTRA_DIST += tests/netns/egress.sh tests/netns/lib.sh tests/netns/listener.py tests/bench/netns-setup.sh
