# Egress proxy and DNS stub: C unit tests for the parsers and the policy,
# and the end-to-end suite (namespaces, veth, upstream servers, clients).
check_PROGRAMS += tests/unit/test-egress-policy
tests_unit_test_egress_policy_SOURCES = tests/unit/test-egress-policy.c
tests_unit_test_egress_policy_LDADD = libagentbox.a $(AB_LIBS)
TESTS += tests/unit/test-egress-policy

check_PROGRAMS += tests/unit/test-egress-dns
tests_unit_test_egress_dns_SOURCES = tests/unit/test-egress-dns.c
tests_unit_test_egress_dns_LDADD = libagentbox.a $(AB_LIBS)
TESTS += tests/unit/test-egress-dns

check_PROGRAMS += tests/unit/test-egress-tls
tests_unit_test_egress_tls_SOURCES = tests/unit/test-egress-tls.c
tests_unit_test_egress_tls_LDADD = libagentbox.a $(AB_LIBS)
TESTS += tests/unit/test-egress-tls

check_PROGRAMS += tests/unit/test-egress-http
tests_unit_test_egress_http_SOURCES = tests/unit/test-egress-http.c
tests_unit_test_egress_http_LDADD = libagentbox.a $(AB_LIBS)
TESTS += tests/unit/test-egress-http

check_PROGRAMS += tests/unit/test-egress-addr
tests_unit_test_egress_addr_SOURCES = tests/unit/test-egress-addr.c
tests_unit_test_egress_addr_LDADD = libagentbox.a $(AB_LIBS)
TESTS += tests/unit/test-egress-addr

check_PROGRAMS += tests/egress/egress-driver
tests_egress_egress_driver_SOURCES = tests/egress/egress-driver.c
tests_egress_egress_driver_LDADD = libagentbox.a $(AB_LIBS)

# The two ends of the proxy benchmark (tests/bench/proxy.sh), plain C: no
# libagentbox, no sanitizers in what it measures.
check_PROGRAMS += tests/egress/httpbench
tests_egress_httpbench_SOURCES = tests/egress/httpbench.c
tests_egress_httpbench_CFLAGS = -std=gnu17 $(WARN_CFLAGS) -O2 -pthread
tests_egress_httpbench_LDFLAGS = -pthread
# The floor under the proxy's figures: relays with no engine (splice, sockmap).
check_PROGRAMS += tests/egress/relaybound
tests_egress_relaybound_SOURCES = tests/egress/relaybound.c
tests_egress_relaybound_CFLAGS = -std=gnu17 $(WARN_CFLAGS) -O2

TESTS += tests/egress/test-egress.py
EXTRA_DIST += tests/egress/test-egress.py tests/egress/upstream.py tests/egress/client.py \
	tests/egress/pattern.py tests/egress/bench-relay.py
