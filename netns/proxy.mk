# netns/egress*: the domain-allowlist egress proxy and DNS stub (supervisor side).
libagentbox_a_SOURCES += \
	netns/egress.h netns/egress-internal.h \
	netns/egress-ep.c \
	netns/egress-addr.c \
	netns/egress-dns.c \
	netns/egress-tls.c \
	netns/egress-http.c \
	netns/egress-record.c \
	netns/egress-resolve.c \
	netns/egress-dnsserve.c \
	netns/egress-proxy.c \
	netns/egress-relay.c \
	netns/egress-head.c \
	netns/egress-loop.c \
	netns/egress-daemon.c
