#!/bin/bash
# The egress wall, witnessed from outside.
#
# Test hosts are network namespaces of their own (h1: 192.0.2.0/24 and
# 2001:db8:1::/64; h2: 169.254.0.0/16 with 169.254.169.254 itself, and
# fd00:ec2::/64 with fd00:ec2::254), each running listener.py, whose log of
# what arrived is the evidence.  The "container" is netns-driver in new user
# and network namespaces: it applies the policy and makes the connections.
# Its links are veth ends created in a staging namespace and handed over
# with ab_netdev_move, so nothing of the test ever exists in the host's own
# network namespace.
set -u
. "${AB_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/netns/lib.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root"
for tool in ip nft unshare nsenter python3; do
	command -v "$tool" >/dev/null || skip_all "needs $tool (Debian packages iproute2, nftables, util-linux, python3)"
done
unshare --user --map-root-user --net true 2>/dev/null || skip_all "cannot create user namespaces"

SRC=${AB_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
DRIVER=${AB_TOP_BUILDDIR:-.}/tests/netns/netns-driver
LISTENER=$SRC/tests/netns/listener.py
PY=${PYTHON3:-python3}
TAG=ab$$
ST=$TAG-st H1=$TAG-h1 H2=$TAG-h2 J=$TAG-j
WORK=$(mktemp -d /tmp/ab-netns.XXXXXX)
CTPID= NSFD= LPIDS=

host_rules_before=$(nft list ruleset)

cleanup () {
	if [ -n "$CTPID" ] && kill -0 "$CTPID" 2>/dev/null; then
		kill "$CTPID" 2>/dev/null
		wait "$CTPID" 2>/dev/null
	fi
	CTPID=
	for pid in $LPIDS; do
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	LPIDS=
	if [ -n "$NSFD" ]; then
		exec {NSFD}<&-
		NSFD=
	fi
	for ns in "$ST" "$H1" "$H2" "$J"; do
		ip netns del "$ns" 2>/dev/null
	done
	rm -rf "$WORK"
}
trap cleanup EXIT

# ct COMMAND...: one command to the container, its one-line reply.
ct () {
	local reply
	echo "$*" >&"${CT[1]}"
	IFS= read -r -t 60 reply <&"${CT[0]}" || reply="(no reply)"
	echo "$reply"
}

in_ct () {
	nsenter --net="/proc/$CTPID/ns/net" "$@"
}

# listen NAME COMMAND...: start a listener; it writes its own pid (the
# pid of python, whatever ip-netns-exec or nsenter ran it) to NAME.ready.
listen () {
	local name=$1
	shift
	"$@" --log "$WORK/$name.log" --ready "$WORK/$name.ready" </dev/null >/dev/null 2>&1 &
	wait_for 10 test -s "$WORK/$name.ready" || return 1
	LPIDS="$LPIDS $(cat "$WORK/$name.ready")"
}

logged () { # LOG "kind peer local port": the listener saw exactly that
	grep -qxF "$2" "$WORK/$1.log"
}

denied () {
	"$DRIVER" denied "/proc/$CTPID/ns/net" 2>>"$DERR"
}

move () { # HOST NEW: ab_netdev_move from the staging namespace
	ip netns exec "$ST" "$DRIVER" move "$1" "$2" "/proc/$CTPID/ns/net" 2>>"$DERR"
}

# ---- test hosts -------------------------------------------------------------

setup () {
	set -e
	for ns in "$ST" "$H1" "$H2" "$J"; do
		ip netns add "$ns"
		ip -n "$ns" link set lo up
	done
	ip -n "$ST" link add c1 type veth peer name h1 netns "$H1"
	ip -n "$ST" link add c2 type veth peer name h2 netns "$H2"
	ip -n "$ST" link add c3 type veth peer name c3p
	ip -n "$H1" addr add 192.0.2.1/24 dev h1
	ip -n "$H1" addr add 192.0.2.3/24 dev h1
	ip -n "$H1" addr add 2001:db8:1::1/64 dev h1 nodad
	ip -n "$H1" addr add 2001:db8:1::3/64 dev h1 nodad
	ip -n "$H2" addr add 169.254.1.1/16 dev h2
	ip -n "$H2" addr add 169.254.169.254/16 dev h2
	ip -n "$H2" addr add fd00:ec2::1/64 dev h2 nodad
	ip -n "$H2" addr add fd00:ec2::254/64 dev h2 nodad
	ip -n "$H1" link set h1 up
	ip -n "$H2" link set h2 up
	ip -n "$ST" addr add 192.0.2.2/24 dev c1
	ip -n "$ST" addr add 2001:db8:1::2/64 dev c1 nodad
	ip -n "$ST" addr add 169.254.1.2/16 dev c2
	ip -n "$ST" addr add fd00:ec2::2/64 dev c2 nodad
	# J stands for a namespace set up by someone else (podman, containerd):
	# its own address and default route via h1.
	ip -n "$J" link add j0 type veth peer name jh1 netns "$H1"
	ip -n "$H1" addr add 198.51.100.1/24 dev jh1
	ip -n "$H1" link set jh1 up
	ip -n "$J" addr add 198.51.100.2/24 dev j0
	ip -n "$J" link set j0 up
	ip -n "$J" route add default via 198.51.100.1
	listen h1 ip netns exec "$H1" "$PY" "$LISTENER" --tcp 80,8080,8081 --udp 53,5353,8080 --icmp
	listen h2 ip netns exec "$H2" "$PY" "$LISTENER" --tcp 80 --udp 53 --icmp
	set +e
}
( setup ) >"$WORK/setup.log" 2>&1
ok $? "test hosts, links and listeners are set up"
# setup ran in a subshell: collect the listeners' pids from their files.
LPIDS="$(cat "$WORK"/h1.ready "$WORK"/h2.ready 2>/dev/null | tr '\n' ' ')"

# Everything the driver writes to stderr (sanitizer and leak reports
# included) goes to driver.err, which must stay empty.
DERR=$WORK/driver.err
: >"$DERR"
coproc CT { exec unshare --user --map-root-user --net "$DRIVER" serve 2>>"$DERR"; }
CTPID=$CT_PID

# ---- no policy: nothing leaves ---------------------------------------------

is "$(ct apply -)" "ok" "the container applies an empty policy in its own user+network namespaces"
routes=$(in_ct ip route; in_ct ip -6 route)
echo "$routes" | grep -q "^default dev lo proto static scope link src 127.0.0.1 metric 4294967295" &&
	echo "$routes" | grep -q "^default dev lo proto static src ::1 metric 4294967295"
ok $? "every IPv4 and IPv6 destination is routed via lo, behind any other route"
in_ct ip link show lo | grep -q "state UNKNOWN\|,UP"
ok $? "lo is up"

is "$(move c1 eth0)" "ok" "netDevices: c1 moves into the container as eth0"
addrs=$(in_ct ip -o addr show dev eth0 | awk '{print $4}' | sort | tr '\n' ' ')
case $addrs in *192.0.2.2/24*2001:db8:1::2/64*) r=0 ;; *) r=1 ;; esac
ok $r "netDevices: eth0 keeps its permanent global addresses 192.0.2.2/24 and 2001:db8:1::2/64"
in_ct ip link show eth0 | grep -q "state UP"
ok $? "netDevices: eth0 is up in the container"
ip -n "$ST" link show c1 >/dev/null 2>&1
ok $((!$?)) "netDevices: c1 is gone from the namespace it came from"
is "$(move c2 'net%d')" "ok" "netDevices: a net%d template lets the kernel pick the name"
in_ct ip -o addr show dev net0 | grep -q "169.254.1.2/16"
ok $? "netDevices: the template gave net0, with its address 169.254.1.2/16"
is "$(move c3 eth0)" \
	"error: interface \`c3\`: the container's network namespace has an interface \`eth0\` already: File exists" \
	"netDevices: a name taken in the container is an error, not a rename"
ip -n "$ST" link show c3 >/dev/null 2>&1
ok $? "netDevices: the refused interface stays where it was"
is "$(move nosuch0 -)" \
	"error: interface \`nosuch0\` does not exist on the host" "netDevices: an unknown interface is named in the error"

is "$(ct tcp 192.0.2.1 80) $(ct tcp 192.0.2.1 80)" "ECONNREFUSED ECONNREFUSED" \
	"no policy: TCP to a test host fails at once with ECONNREFUSED (a reset from the wall, not a timeout)"
is "$(ct udp 192.0.2.1 5353) $(ct udp 192.0.2.1 5353) $(ct udp 192.0.2.1 5353)" "EPERM EPERM EPERM" \
	"no policy: UDP to a test host fails with EPERM"
is "$(ct icmp 192.0.2.1)" "EPERM" "no policy: ICMP echo to a test host fails with EPERM"
is "$(ct tcp 2001:db8:1::1 80)" "ECONNREFUSED" "no policy: TCP over IPv6 is refused"
is "$(ct udp 2001:db8:1::1 5353)" "EPERM" "no policy: UDP over IPv6 fails with EPERM"
is "$(ct icmp 2001:db8:1::1)" "EPERM" "no policy: ICMPv6 echo fails with EPERM"
is "$(denied | tr '\n' ';')" \
	"ipv4 192.0.2.1 1 0 1;ipv4 192.0.2.1 6 80 2;ipv4 192.0.2.1 17 5353 3;ipv6 2001:db8:1::1 6 80 1;ipv6 2001:db8:1::1 17 5353 1;ipv6 2001:db8:1::1 58 0 1;" \
	"the denied record, read from the host, lists each destination tried with its packet count"

# ---- what is shown is what is installed ------------------------------------

P2='192.0.2.1:8080/tcp,[2001:db8:1::1]:8080/tcp,192.0.2.1:53/udp'
is "$(ct apply "$P2")" "ok" "a second apply replaces the ruleset"
"$DRIVER" text "$P2" >"$WORK/want.nft" 2>>"$DERR"
in_ct nft list table inet agentbox >"$WORK/got.nft"
cmp -s "$WORK/want.nft" "$WORK/got.nft"
ok $? "ab_netns_rules_text is byte for byte what nft lists in the container"
strip_handles () { sed -E 's/^(inet agentbox [a-z_0-9]+) [0-9 ]+$/\1/'; }
unshare --net sh -c "nft -f '$WORK/want.nft' && nft --debug=netlink list table inet agentbox" | strip_handles >"$WORK/want.nl"
in_ct nft --debug=netlink list table inet agentbox | strip_handles >"$WORK/got.nl"
[ -s "$WORK/want.nl" ] && cmp -s "$WORK/want.nl" "$WORK/got.nl"
ok $? "the text, loaded by nft itself, gives exactly the installed expressions"

# The same with every shape of entry (unaligned prefixes, /0, no port) and
# the proxy chain, installed in a scratch user+network namespace.
P3='10.0.0.0/12,0.0.0.0/0:443/udp,[2001:db8:8000::/33]:53,[::/0]:8443/tcp,198.51.100.0/24/tcp'
"$DRIVER" text "$P3" --proxy 3128 53 80,443 >"$WORK/want3.nft" 2>>"$DERR"
unshare --user --map-root-user --net sh -c "printf 'proxy 3128 53 80,443\napply %s\nexit\n' '$P3' | '$DRIVER' serve >/dev/null 2>>'$DERR' &&
	nft list table inet agentbox >'$WORK/got3.nft' && nft --debug=netlink list table inet agentbox" | strip_handles >"$WORK/got3.nl"
unshare --net sh -c "nft -f '$WORK/want3.nft' && nft --debug=netlink list table inet agentbox" | strip_handles >"$WORK/want3.nl"
cmp -s "$WORK/want3.nft" "$WORK/got3.nft" && [ -s "$WORK/want3.nl" ] && cmp -s "$WORK/want3.nl" "$WORK/got3.nl"
ok $? "text and expressions agree for unaligned prefixes, /0, portless entries and the proxy redirect"

# The largest policy: 256 entries, each a prefix, a port and both protocols.
PMAX=$("$PY" -c "print(','.join('[2001:db8:%x::/48]:%d' % (i, 1000 + i) for i in range(256)))")
n=$(unshare --user --map-root-user --net sh -c "printf 'apply %s\nexit\n' '$PMAX' | '$DRIVER' serve >/dev/null 2>>'$DERR' &&
	nft list chain inet agentbox output" | grep -c ' dport ')
is "$n" "512" "the largest policy (256 entries, 512 rules, one batch of about 240 KB) installs"

# ---- one entry allows exactly that ------------------------------------------

is "$(ct tcp 192.0.2.1 8080)" "ok" "allow 192.0.2.1:8080/tcp: that connection succeeds"
logged h1 "tcp 192.0.2.2 192.0.2.1 8080"
ok $? "allow 192.0.2.1:8080/tcp: the test host logged it"
is "$(ct tcp 192.0.2.1 8081)" "ECONNREFUSED" "allow 192.0.2.1:8080/tcp: the neighbouring port is refused"
is "$(ct tcp 192.0.2.3 8080)" "ECONNREFUSED" "allow 192.0.2.1:8080/tcp: the neighbouring address is refused"
is "$(ct udp 192.0.2.1 8080)" "EPERM" "allow 192.0.2.1:8080/tcp: UDP to that port is not allowed"
is "$(ct tcp 2001:db8:1::1 8080)" "ok" "allow [2001:db8:1::1]:8080/tcp: IPv6 succeeds (neighbour discovery works)"
logged h1 "tcp 2001:db8:1::2 2001:db8:1::1 8080"
ok $? "allow [2001:db8:1::1]:8080/tcp: the test host logged it"
is "$(ct tcp 2001:db8:1::3 8080)" "ECONNREFUSED" "allow [2001:db8:1::1]:8080/tcp: the neighbouring IPv6 address is refused"
is "$(ct udp 192.0.2.1 53)" "ok" "allow 192.0.2.1:53/udp: the datagram is sent"
wait_for 10 logged h1 "udp 192.0.2.2 192.0.2.1 53"
ok $? "allow 192.0.2.1:53/udp: the test host received it"

# ---- metadata addresses, whatever the policy says ----------------------------

is "$(ct apply '169.254.0.0/16:80/tcp,[fd00:ec2::/64]:80/tcp')" "ok" "apply an entry covering the metadata addresses"
is "$(ct tcp 169.254.1.1 80)" "ok" "169.254.0.0/16:80/tcp: a link-local test host is reached"
is "$(ct tcp 169.254.169.254 80)" "ECONNREFUSED" "169.254.0.0/16:80/tcp: 169.254.169.254 is refused although covered"
is "$(ct tcp fd00:ec2::1 80)" "ok" "[fd00:ec2::/64]:80/tcp: an IPv6 test host on that prefix is reached"
is "$(ct tcp fd00:ec2::254 80)" "ECONNREFUSED" "[fd00:ec2::/64]:80/tcp: fd00:ec2::254 is refused although covered"
denied | grep -qxF "ipv4 169.254.169.254 6 80 1"
ok $? "the metadata attempt is in the denied record"
is "$(ct apply '0.0.0.0/0,[::/0]')" "ok" "apply an allow-everything policy"
is "$(ct tcp 169.254.169.254 80) $(ct udp 169.254.169.254 53) $(ct tcp fd00:ec2::254 80)" "ECONNREFUSED EPERM ECONNREFUSED" \
	"allow-everything: the metadata addresses stay unreachable"
is "$(ct tcp 169.254.1.1 80)" "ok" "allow-everything: other destinations on the same link are reached"

# ---- unrouted destinations fail at once and are counted ----------------------

is "$(ct apply 192.0.2.1:8080/tcp)" "ok" "apply a one-entry policy"
is "$(ct tcp 203.0.113.77 443) $(ct udp 203.0.113.77 53)" "ECONNREFUSED EPERM" \
	"an unrouted IPv4 address fails at once (TCP reset, UDP EPERM), not with ENETUNREACH or a timeout"
is "$(ct tcp 2001:db8:ffff::77 443) $(ct udp 2001:db8:ffff::77 53)" "ECONNREFUSED EPERM" \
	"an unrouted IPv6 address fails at once (TCP reset, UDP EPERM)"
is "$(denied | tr '\n' ';')" \
	"ipv4 203.0.113.77 6 443 1;ipv4 203.0.113.77 17 53 1;ipv6 2001:db8:ffff::77 6 443 1;ipv6 2001:db8:ffff::77 17 53 1;" \
	"the unrouted attempts are counted"

# ---- full record sets: the verdict stays, the record degrades ---------------

is "$(ct apply -)" "ok" "apply the empty policy (a fresh record)"
is "$(ct udp-range 203.0.113.9 1 300)" "EPERM 300" "300 datagrams to distinct ports all fail with EPERM"
is "$(ct tcp 203.0.113.9 9)" "ECONNREFUSED" "with the port sets full, TCP is still refused at once"
rec=$(denied)
is "$(echo "$rec" | grep -c '^ipv4 203\.0\.113\.9 17 [1-9][0-9]* 1$')" "256" \
	"the port set keeps its 256 destinations, all read back"
is "$(echo "$rec" | grep -v ' 17 [1-9][0-9]* 1$' | tr '\n' ';')" "ipv4 203.0.113.9 6 0 1;ipv4 203.0.113.9 17 0 44;" \
	"past that, destinations are counted per address and protocol, without port"
is "$("$DRIVER" denied "/run/netns/$ST" 2>>"$DERR")" \
	"error: nftables: dump set denied4 of table inet agentbox: No such file or directory" \
	"reading the record of a namespace without the wall says so"

# ---- a joined namespace keeps its own routes ---------------------------------

out=$(printf '%s\n' "apply 198.51.100.1:8080/tcp" "apply 198.51.100.1:8080/tcp" "tcp 198.51.100.1 8080" \
	"tcp 198.51.100.1 8081" "tcp 203.0.113.77 443" "exit" | ip netns exec "$J" "$DRIVER" serve 2>>"$DERR" | tr '\n' ' ')
is "$out" "ok ok ok ECONNREFUSED ECONNREFUSED " \
	"joined namespace: applied twice (the table is replaced), the entry is reached, the rest refused"
logged h1 "tcp 198.51.100.2 198.51.100.1 8080"
ok $? "joined namespace: the test host logged the allowed connection"
is "$(ip -n "$J" route show default | head -1)" "default via 198.51.100.1 dev j0 " \
	"joined namespace: its own default route still wins over the route of last resort"
"$DRIVER" denied "/run/netns/$J" 2>>"$DERR" | grep -qxF "ipv4 203.0.113.77 6 443 1"
ok $? "joined namespace: what its default route would have carried out was judged and recorded"

# ---- the proxy: the only way out for TCP ------------------------------------

listen proxy nsenter --net="/proc/$CTPID/ns/net" "$PY" "$LISTENER" --bind :: --tcp 3128 --udp 53
ok $? "a stand-in proxy listens inside the container on port 3128, its DNS stub on 53"
is "$(ct proxy 3128 53 80,443)" "ok" "configure the proxy"
is "$(ct apply -)" "ok" "apply the empty policy with the proxy"
is "$(ct tcp 192.0.2.1 80)" "ok" "proxy: TCP to port 80 of a test host connects"
logged proxy "tcp 192.0.2.2 127.0.0.1 3128"
ok $? "proxy: it was redirected to 127.0.0.1:3128 (the source stays the address of eth0)"
is "$(ct tcp 192.0.2.1 8081)" "ECONNREFUSED" "proxy: TCP to a port that is not redirected is refused"
is "$(ct udp 127.0.0.1 53)" "ok" "proxy: UDP to the DNS stub is sent"
wait_for 10 logged proxy "udp 127.0.0.1 127.0.0.1 53"
ok $? "proxy: the stub received it"
is "$(ct udp 192.0.2.1 53)" "EPERM" "proxy: UDP to anything but the stub fails with EPERM"
is "$(ct tcp 169.254.169.254 80)" "ECONNREFUSED" "proxy: metadata on a redirected port is refused, not proxied"
is "$(grep -c '^tcp' "$WORK/proxy.log")" "1" "proxy: the metadata attempt never reached the proxy"
is "$(ct tcp 2001:db8:1::1 80)" "ok" "proxy: IPv6 TCP to port 80 connects"
logged proxy "tcp 2001:db8:1::2 ::1 3128"
ok $? "proxy: it was redirected to [::1]:3128"

# ---- what never arrived ------------------------------------------------------

# Checked last: every allowed packet above went over the same links after
# the denied ones, so a denied packet that had slipped out would be here.
! grep -qE " (192\.0\.2\.1 (80|5353|8081)|192\.0\.2\.3 .*|2001:db8:1::3 .*|2001:db8:1::1 (80|5353)|198\.51\.100\.1 8081)$|^udp .* 8080$|^icmp " "$WORK/h1.log"
ok $? "h1 logged nothing that the wall denied (ports 80, 5353, 8081, neighbours, UDP 8080, ICMP)"
! grep -qE " (169\.254\.169\.254|fd00:ec2::254) " "$WORK/h2.log"
ok $? "h2 logged nothing addressed to 169.254.169.254 or fd00:ec2::254"

# ---- the end of the container ------------------------------------------------

# The stand-in proxy holds a socket in the container's netns: stop it first.
pid=$(cat "$WORK/proxy.ready")
kill "$pid"
wait_for 10 sh -c "! kill -0 $pid"

exec {NSFD}<"/proc/$CTPID/ns/net"
echo exit >&"${CT[1]}"
wait "$CTPID"
ok $? "the container exits cleanly"
CTPID=
"$DRIVER" denied "/proc/self/fd/$NSFD" 2>>"$DERR" | grep -qxF "ipv4 169.254.169.254 6 80 1"
ok $? "the denied record is read after the container exited, through a held netns fd"
exec {NSFD}<&-
NSFD=
wait_for 30 sh -c "! ip -n '$H1' link show h1 && ! ip -n '$H2' link show h2"
ok $? "once the fd is closed the netns is freed and the moved veths go with it"

is "$(cat "$DERR")" "" "the driver wrote no diagnostics (no sanitizer or leak report)"

cleanup
trap - EXIT
is "$(nft list ruleset)" "$host_rules_before" "the host's nft ruleset is byte-identical before and after"
! ip netns list | grep -q "^$TAG-"
ok $? "no test network namespace is left"
! ip -o link | grep -qE "(c[123]|c3p|h[12])(@|:)"
ok $? "no test link is left in the host namespace"

done_testing
