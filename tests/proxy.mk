# Egress proxy and DNS stub: C unit tests for the parsers and the policy,
# and the end-to-end suite (namespaces, veth, upstream servers, clients).
check_PROGRAMS += tests/egress/egress-driver
tests_egress_egress_driver_SOURCES = tests/egress/egress-driver.c
tests_egress_egress_driver_LDADD = libagentbox.a $(AB_LIBS)

TESTS += tests/egress/test-egress.py
EXTRA_DIST += tests/egress/test-egress.py tests/egress/upstream.py tests/egress/client.py
