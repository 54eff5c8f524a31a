# netns/: rtnetlink (libmnl), nftables (libnftnl), egress policy, proxy and DNS stub.
include netns/proxy.mk
libagentbox_a_SOURCES += \
	netns/netns.h \
	netns/nl.h netns/nl.c \
	netns/nft-rules.h netns/nft-rules.c \
	netns/nft.c \
	netns/denied.c \
	netns/rtnl.c
