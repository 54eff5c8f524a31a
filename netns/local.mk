# netns/: rtnetlink (libmnl), nftables (libnftnl), egress policy, proxy and DNS stub.
include netns/proxy.mk
