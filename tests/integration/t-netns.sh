#!/bin/bash
# The nftables egress wall of real agentbox containers, witnessed from the
# test hosts' side.
#
# A test host is a network namespace of its own ($H1) running listener.py,
# whose log of what arrived is the evidence, and an nftables "witness"
# table whose counters see every packet that reaches it, whatever its
# destination.  Each container gets its path out through linux.netDevices:
# a fresh veth pair, one end in $H1 and the other in the host namespace (down,
# with the container's addresses) for agentbox to move into the container's
# namespace.  A veth dies with the namespace of either end, so each container
# needs its own pair, and the peer's disappearance from $H1 proves, from
# outside, that the container's namespace is gone.
#
#   container eth0  198.51.100.2/24  2001:db8::2/64
#   $H1             198.51.100.1/24  198.51.100.3/24  2001:db8::1/64  2001:db8::3/64
#   $J (a namespace the test prepares, joined by path)  203.0.113.2/24
#   $H1 (its link to $J)                                203.0.113.1/24
. "$(dirname "$0")/lib.sh"
. "$AB_LIBDIR/net/net.sh"
require_runtime_commands create start run state delete
net_require
plan_later

H1=ab-$$-h1
J=ab-$$-j
host_rules_before=$(nft list ruleset)
# ICMP echo needs a ping socket: the container has no CAP_NET_RAW, and a new
# network namespace allows ping sockets to no group.
PING='"net.ipv4.ping_group_range":"0 2147483647"'

# ---- test hosts -----------------------------------------------------------------------

net_ns_add "$H1" &&
  net_listen h1 "$H1" --tcp 80,8080,8081 --udp 53,5353,8080 --icmp &&
  ip netns exec "$H1" nft -f - <<'EOF'
table inet witness {
  counter meta4 { }
  counter meta6 { }
  counter other4 { }
  counter other6 { }
  chain pre {
    type filter hook prerouting priority raw; policy accept;
    ip daddr { 169.254.169.254, 169.254.170.2 } counter name meta4
    ip6 daddr fd00:ec2::254 counter name meta6
    ip daddr 203.0.113.77 counter name other4
    ip6 daddr 2001:db8:77::1 counter name other6
  }
}
EOF
ok $? "test host $H1: a listener on TCP 80, 8080, 8081, UDP 53, 5353, 8080, ICMP echo, and a witness table"

# witness NAME: packets the test host's counter NAME saw.
witness ()
{
  ip netns exec "$H1" nft list counter inet witness "$1" | sed -n 's/.*packets \([0-9]*\).*/\1/p'
}

# new_link: a fresh veth pair for one container; sets $link (host end, to
# be named in linux.netDevices) and $peer (its end in $H1).
nlinks=0
new_link ()
{
  nlinks=$((nlinks + 1))
  link=ab$$c$nlinks peer=h1l$nlinks
  net_veth "$link" "$peer" "$H1" &&
    ip -n "$H1" addr add 198.51.100.1/24 dev "$peer" &&
    ip -n "$H1" addr add 198.51.100.3/24 dev "$peer" &&
    ip -n "$H1" addr add 2001:db8::1/64 dev "$peer" nodad &&
    ip -n "$H1" addr add 2001:db8::3/64 dev "$peer" nodad &&
    ip addr add 198.51.100.2/24 dev "$link" &&
    ip addr add 2001:db8::2/64 dev "$link" nodad
}

# probes_bundle DIR POLICY PROBE...: a bundle whose process runs
# `abtest PROBE` for each PROBE (one result line each), with $link as eth0
# and POLICY (- for none) as dev.agentbox.net.allow.
probes_bundle ()
{
  local dir=$1 policy=$2 script="" p ann
  shift 2
  for p in "$@"; do script+="/bin/abtest $p; "; done
  ann='annotations={}'
  [ "$policy" != - ] && ann="annotations={\"dev.agentbox.net.allow\":\"$policy\"}"
  make_bundle "$dir" "process.args=[\"/bin/sh\",\"-c\",\"$script\"]" \
    "linux.netDevices={\"$link\":{\"name\":\"eth0\"}}" "linux.sysctl={$PING}" "$ann"
}

# debug_rules FILE ID: the rules that `--debug create ID` logged to FILE.
debug_rules ()
{
  # the main thread's phase lines (+N ms ...) may come between them
  sed -n "/^agentbox: nftables rules of \`$2\`:\$/,/^agentbox: }\$/p" "$1" |
    sed -e 1d -e '/^agentbox: +[0-9.]* ms /d' -e 's/^agentbox: //'
}

# h1_log_since MARK: what $H1 logged after line MARK.
h1_log_since () { tail -n "+$(($1 + 1))" "$T/h1.log"; }
h1_mark () { wc -l <"$T/h1.log"; }

# ---- one allow entry: exactly that succeeds -----------------------------------------------

new_link
ok $? "a veth pair for the container, its host end carrying 198.51.100.2/24 and 2001:db8::2/64"
allow='198.51.100.1:8080/tcp,[2001:db8::1]:8080/tcp,198.51.100.1:53/udp'
probes_bundle "$T/allow" "$allow" \
  "connect tcp 198.51.100.1 8080" "connect tcp 198.51.100.1 8081" "connect tcp 198.51.100.3 8080" \
  "connect udp 198.51.100.1 8080" "connect tcp 2001:db8::1 8080" "connect tcp 2001:db8::1 8081" \
  "connect tcp 2001:db8::3 8080" "connect udp 198.51.100.1 53" "ping4 198.51.100.1"
mark=$(h1_mark)
id=$(new_id)
out=$(rt run --record "$T/allow.rec" --bundle "$T/allow" "$id" </dev/null 2>"$T/allow.err" | tr '\n' ' ')
is "$out" "ok ECONNREFUSED ECONNREFUSED EPERM ok ECONNREFUSED ECONNREFUSED ok EPERM " \
  "allow $allow: those three succeed; the neighbouring port, the neighbouring address, UDP to the TCP port and ICMP fail"
for ((i = 0; i < 50; i++)); do
  [ "$(h1_log_since "$mark" | wc -l)" -ge 3 ] && break
  sleep 0.1
done
is "$(h1_log_since "$mark" | sort)" "$(printf '%s\n' 'tcp 198.51.100.2 198.51.100.1 8080' \
  'tcp 2001:db8::2 2001:db8::1 8080' 'udp 198.51.100.2 198.51.100.1 53')" \
  "the test host received exactly the three allowed flows, and nothing else"
is "$(net_record violations "$T/allow.rec")" "$(printf '%s\n' \
  'denied icmp 198.51.100.1 0 1' 'denied tcp 198.51.100.1 8081 1' 'denied tcp 198.51.100.3 8080 1' \
  'denied tcp 2001:db8::1 8081 1' 'denied tcp 2001:db8::3 8080 1' 'denied udp 198.51.100.1 8080 1')" \
  "the record's violations list each refused destination once, with its packet count"
net_gone_link "$H1" "$peer"
ok $? "after the foreground run its network namespace is gone (the veth peer in the test host went with it)"

# ---- no policy: nothing leaves -------------------------------------------------------------

new_link
probes_bundle "$T/none" - \
  "ls /sys/class/net" "connect tcp 198.51.100.1 80" "connect tcp 198.51.100.1 80" "connect udp 198.51.100.1 5353" \
  "ping4 198.51.100.1" "connect tcp 2001:db8::1 80" "connect udp 2001:db8::1 5353" "ping6 2001:db8::1"
mark=$(h1_mark)
id=$(new_id)
out=$(rt run --record "$T/none.rec" --bundle "$T/none" "$id" </dev/null 2>"$T/none.err")
rc=$?
is "$(head -2 <<<"$out" | tr '\n' ' ')" "eth0 lo " "linux.netDevices: the container has the moved veth as eth0, and lo"
is "$(sed -n 3,5p <<<"$out" | tr '\n' ' ')" "ECONNREFUSED ECONNREFUSED EPERM " \
  "no policy: TCP to the test host is reset by the wall (twice), UDP fails with EPERM"
is "$(sed -n 6p <<<"$out")" EPERM "no policy: ICMP echo fails with EPERM"
is "$(sed -n 7,8p <<<"$out" | tr '\n' ' ')" "ECONNREFUSED EPERM " "no policy: TCP and UDP over IPv6 fail the same way"
# The kernel's IPv6 ping socket drops the error of a filtered echo (ping.c
# ignores icmpv6_push_pending_frames' status): the call "succeeds" and no
# reply comes.  The record and the listener below show the wall dropped it.
like "$(sed -n 9p <<<"$out")" '^(EPERM|timeout)$' "no policy: ICMPv6 echo gets no reply"
is "$rc" 1 "the run exits with the last probe's failure"
sleep 0.5 # a datagram that got out would be logged by now (the allowed one above was)
is "$(h1_log_since "$mark")" "" "no policy: the test host received nothing at all (its listener's log)"
is "$(net_record violations "$T/none.rec")" "$(printf '%s\n' \
  'denied icmp 198.51.100.1 0 1' 'denied icmpv6 2001:db8::1 0 1' 'denied tcp 198.51.100.1 80 2' \
  'denied tcp 2001:db8::1 80 1' 'denied udp 198.51.100.1 5353 1' 'denied udp 2001:db8::1 5353 1')" \
  "run --record: structuredContent.violations lists every destination tried, with counts (TCP port 80 twice)"
is "$(net_record error "$T/none.rec")" network_denied "the record's error says network_denied (the command failed)"
net_gone_link "$H1" "$peer"
ok $? "after the run the container's network namespace is gone"

# ---- metadata addresses, whatever the policy says ----------------------------------------------
#
# A detached container, so that the test can give it a default route via the
# test host (from outside, between create and start): without the wall a
# packet to any address, metadata included, reaches the witness.

new_link
meta_allow='169.254.169.254:80/tcp,[fd00:ec2::254]:80/tcp,0.0.0.0/0,[::/0]'
probes_bundle "$T/meta" "$meta_allow" \
  "connect tcp 169.254.169.254 80" "connect udp 169.254.169.254 53" "connect tcp 169.254.170.2 80" \
  "connect tcp fd00:ec2::254 80" "connect tcp 203.0.113.77 80" "connect tcp 2001:db8:77::1 80" \
  "connect tcp 198.51.100.1 8081"
id=$(new_id)
rt --debug create --bundle "$T/meta" "$id" </dev/null >"$T/meta/stdout" 2>"$T/meta/debug"
ok $? "create a container whose allow entries name the metadata addresses and cover everything"
pid=$(pid_of "$id")
nsenter --net="/proc/$pid/ns/net" ip route add default via 198.51.100.1 &&
  nsenter --net="/proc/$pid/ns/net" ip -6 route add default via 2001:db8::1
ok $? "the test gives the created container a default route via the test host"

debug_rules "$T/meta/debug" "$id" >"$T/meta/debug.nft"
nsenter --net="/proc/$pid/ns/net" nft list table inet agentbox >"$T/meta/installed.nft"
[ -s "$T/meta/debug.nft" ] && cmp -s "$T/meta/debug.nft" "$T/meta/installed.nft"
ok $? "--debug shows the rules, byte for byte what nft lists in the container's namespace" ||
  diag "$(diff "$T/meta/debug.nft" "$T/meta/installed.nft")"
like "$(cat "$T/meta/installed.nft")" '^[[:space:]]*ip daddr 169\.254\.169\.254 goto deny$' \
  "the installed table sends 169.254.169.254 to the deny chain"

rt start "$id" && wait_for_status "$id" stopped 30
ok $? "the container runs its probes and stops"
is "$(head -4 "$T/meta/stdout" | tr '\n' ' ')" "ECONNREFUSED EPERM ECONNREFUSED ECONNREFUSED " \
  "allowed, yet refused at once: 169.254.169.254 over TCP and UDP, 169.254.170.2, fd00:ec2::254"
# The test host neither serves nor forwards these: it drops (timeout) or
# answers unreachable, but the wall did not refuse them.
like "$(sed -n 5,6p "$T/meta/stdout" | tr '\n' ' ')" '^(ETIMEDOUT|EHOSTUNREACH|ENETUNREACH) (ETIMEDOUT|EHOSTUNREACH|ENETUNREACH) $' \
  "... while allowed destinations on the same route leave (the test host does not serve them)"
is "$(sed -n 7p "$T/meta/stdout")" ok "... and the test host's own port is reached"
is "$(witness meta4) $(witness meta6)" "0 0" "the test host, on the container's route, saw no packet for a metadata address"
[ "$(witness other4)" -ge 1 ] && [ "$(witness other6)" -ge 1 ]
ok $? "... while it saw the allowed packets to 203.0.113.77 and 2001:db8:77::1 on the same route"
netns_file=$AB_STATE/$id/netns
is "$(net_record nft-denied "$netns_file" | grep -E '169\.254|fd00')" "$(printf '%s\n' \
  'tcp 169.254.169.254 80 1' 'tcp 169.254.170.2 80 1' 'tcp fd00:ec2::254 80 1' 'udp 169.254.169.254 53 1')" \
  "the denied record, read from the host in the held namespace, counts each metadata attempt"
rt delete "$id"
ok $? "delete the stopped container"
net_gone_link "$H1" "$peer"
ok $? "after delete the container's network namespace is gone (no mount or process holds it)"

# ---- the container's own namespace with lo alone, nothing allowed ------------------------------
#
# There the metadata chain guards nothing and is left out (netns/nft-rules.c,
# ab_nft_has_metadata_chain): no allow entry, no proxy, no link, no other
# table.  What it guarded must hold without it: a metadata address is refused
# at once and recorded like any other destination.

make_bundle "$T/lo" "process.args=[\"/bin/sh\",\"-c\",\"/bin/abtest connect tcp 169.254.169.254 80; \
/bin/abtest connect udp 169.254.169.254 53; /bin/abtest connect tcp 169.254.170.2 80; \
/bin/abtest connect tcp fd00:ec2::254 80\"]" 'annotations={}'
id=$(new_id)
rt --debug create --bundle "$T/lo" "$id" </dev/null >"$T/lo/stdout" 2>"$T/lo/debug"
ok $? "create a container with a network namespace of its own, lo alone, no policy"
pid=$(pid_of "$id")
nsenter --net="/proc/$pid/ns/net" nft list table inet agentbox >"$T/lo/installed.nft"
debug_rules "$T/lo/debug" "$id" >"$T/lo/debug.nft"
[ -s "$T/lo/debug.nft" ] && cmp -s "$T/lo/debug.nft" "$T/lo/installed.nft"
ok $? "--debug shows the rules, byte for byte what nft lists in the container's namespace" ||
  diag "$(diff "$T/lo/debug.nft" "$T/lo/installed.nft")"
unlike "$(cat "$T/lo/installed.nft")" 'chain metadata' "the installed table has no metadata chain"
like "$(cat "$T/lo/installed.nft")" 'policy drop;' "... and the output chain's policy drop"
is "$(nsenter --net="/proc/$pid/ns/net" ip -o link show | awk -F': ' '{print $2}')" lo \
  "... in a namespace whose only link is lo"
rt start "$id" && wait_for_status "$id" stopped 30
ok $? "the container runs its probes and stops"
is "$(tr '\n' ' ' <"$T/lo/stdout")" "ECONNREFUSED EPERM ECONNREFUSED ECONNREFUSED " \
  "refused at once without it: 169.254.169.254 over TCP and UDP, 169.254.170.2, fd00:ec2::254"
is "$(net_record nft-denied "$AB_STATE/$id/netns" | grep -E '169\.254|fd00' | sort)" "$(printf '%s\n' \
  'tcp 169.254.169.254 80 1' 'tcp 169.254.170.2 80 1' 'tcp fd00:ec2::254 80 1' 'udp 169.254.169.254 53 1')" \
  "the denied record, read from the host in the held namespace, counts each metadata attempt"
rt delete "$id"
ok $? "delete the stopped container"
# A hook that runs before the program can add a link or a table (a CNI
# plugin run from createRuntime does): then the chain stays.
make_bundle "$T/lohook" 'annotations={}' 'hooks={"createRuntime":[{"path":"/bin/true"}]}'
id=$(new_id)
rt create --bundle "$T/lohook" "$id" </dev/null >/dev/null 2>"$T/lohook/err"
ok $? "create the same with a createRuntime hook"
pid=$(pid_of "$id")
like "$(nsenter --net="/proc/$pid/ns/net" nft list table inet agentbox)" 'chain metadata' \
  "... its table has the metadata chain"
rt delete --force "$id"
ok $? "delete it"

# ---- an orchestrator's own link: dev.agentbox.net.wall -------------------------------------------
#
# podman with --uidmap and a bridge network lets the runtime make the network
# namespace and adds its veth after create.  The test is that orchestrator
# here: it moves a fresh link in between create and start.  The wall refuses
# what goes out on it; with dev.agentbox.net.wall "off" the namespace has no
# table at all and the test host is reached, as with runc.

# orchestrated BUNDLE ANNOTATIONS: create from BUNDLE (a connect to the test
# host's 8081), move $link in as the orchestrator would, start, wait.
orchestrated ()
{
  make_bundle "$1" 'process.args=["/bin/abtest","connect","tcp","198.51.100.1","8081"]' "$2"
  id=$(new_id)
  rt create --bundle "$1" "$id" </dev/null >"$1/stdout" 2>"$1/err" || return 1
  pid=$(pid_of "$id")
  tables=$(nsenter --net="/proc/$pid/ns/net" nft list tables 2>&1)
  ip link set "$link" netns "/proc/$pid/ns/net" &&
    nsenter --net="/proc/$pid/ns/net" ip addr add 198.51.100.2/24 dev "$link" &&
    nsenter --net="/proc/$pid/ns/net" ip link set "$link" up || return 1
  rt start "$id" && wait_for_status "$id" stopped 30
}

new_link
mark=$(h1_mark)
orchestrated "$T/walled" 'annotations={}'
ok $? "a container whose namespace gets the orchestrator's link between create and start"
is "$tables" "table inet agentbox" "... its namespace holds the wall"
is "$(cat "$T/walled/stdout")" ECONNREFUSED "... which refuses TCP out on the orchestrator's link"
rt delete "$id"
new_link
orchestrated "$T/nowall" 'annotations={"dev.agentbox.net.wall":"off"}'
ok $? "the same with dev.agentbox.net.wall \"off\""
is "$tables" "" "... its namespace holds no nftables table"
is "$(cat "$T/nowall/stdout")" ok "... and the connection to the test host succeeds"
like "$(h1_log_since "$mark")" '^tcp 198\.51\.100\.2 198\.51\.100\.1 8081$' \
  "... which the test host logged (and nothing from the walled one before it)"
is "$(h1_log_since "$mark" | wc -l)" 1 "... once"
rt delete "$id"
cfg "$T/nowall/config.json" 'annotations={"dev.agentbox.net.wall":"off","dev.agentbox.net.allow":"198.51.100.1:8081/tcp"}'
err=$(rt create --bundle "$T/nowall" "$(new_id)" 2>&1 </dev/null)
like "$?:$err" '^1:.*annotations\.dev\.agentbox\.net\.wall: "off" not with dev\.agentbox\.net\.allow' \
  "\"off\" with an allow list is refused (exit 1), naming both"
is "$(wc -l <<<"$err")" 1 "... in one line"

# ---- exec: the violations of one exec, in its record -----------------------------------------
# The wall counts a container's denials over its life; an exec's record holds
# what it added while the exec ran (and an exec without a record skips
# counting them).

new_link
probes_bundle "$T/xv" - "sleep 60"
id=$(new_id)
rt create --bundle "$T/xv" "$id" </dev/null >/dev/null 2>"$T/xv.err" && rt start "$id"
ok $? "a detached container behind the wall, the test host on its link"
out=$(rt exec --record "$T/xv1.rec" "$id" /bin/abtest connect tcp 198.51.100.1 80 2>&1)
is "$out" ECONNREFUSED "exec --record: TCP to the test host is reset by the wall"
is "$(net_record violations "$T/xv1.rec")" 'denied tcp 198.51.100.1 80 1' "... and the exec's record lists that attempt"
out=$(rt exec "$id" /bin/abtest connect tcp 198.51.100.1 81 2>&1)
is "$out" ECONNREFUSED "an exec without a record is refused the same"
rt exec --record "$T/xv2.rec" "$id" /bin/abtest connect udp 198.51.100.1 5353 >/dev/null 2>&1
is "$(net_record violations "$T/xv2.rec")" 'denied udp 198.51.100.1 5353 1' \
  "a later exec's record lists its own attempt only, not the earlier execs'"
rt delete --force "$id"
net_gone_link "$H1" "$peer"
ok $? "after delete that container's network namespace is gone"

# ---- a scan fills the denied sets; the verdict never changes ---------------------------------
# The sets that record denied destinations hold 256 elements each
# (AB_NFT_DENIED_SIZE, a bound on the kernel memory a scanning process can
# make the wall spend).  Once the with-port set is full, further attempts are
# counted per address and protocol, and refused exactly as before.

new_link
probes_bundle "$T/scan" - "scan udp 198.51.100.1 20000 300" "scan tcp 198.51.100.1 30000 40" \
  "connect tcp 198.51.100.1 8080"
mark=$(h1_mark)
id=$(new_id)
out=$(rt run --record "$T/scan.rec" --bundle "$T/scan" "$id" </dev/null 2>"$T/scan.err" | tr '\n' ' ')
is "$out" "EPERM 300 ECONNREFUSED 40 ECONNREFUSED " \
  "300 UDP ports, 40 TCP ports, then the listener's own port: every attempt refused, before and after the set filled"
sleep 0.5
is "$(h1_log_since "$mark")" "" "... and the test host received none of them"
net_record violations "$T/scan.rec" >"$T/scan.violations"
is "$(grep -c ' [1-9][0-9]* 1$' "$T/scan.violations")" 256 \
  "the record lists 256 destinations with their port, once each: the set's size"
is "$(grep ' 0 [0-9]*$' "$T/scan.violations")" "$(printf '%s\n' 'denied tcp 198.51.100.1 0 41' \
  'denied udp 198.51.100.1 0 44')" "... and counts the rest per protocol and address: 44 UDP, 40 + 1 TCP"
net_gone_link "$H1" "$peer"
ok $? "after the run its network namespace is gone"

# ---- the wall's denials are read only for a record ------------------------------------------
# Reading them takes a thread in the container's namespace and a netlink dump
# of four sets: a run without --record skips it (strace counts the runtime's
# netfilter sockets: the wall's, and the dump's).

if command -v strace >/dev/null; then
  # LeakSanitizer cannot run under ptrace: it stops with a fatal report of
  # its own, not one about agentbox (a --enable-sanitizers build).
  traced_env="ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
  make_bundle "$T/quiet" 'process.args=["/bin/abtest","connect","tcp","198.51.100.1","80"]'
  id=$(new_id)
  env "$traced_env" strace -f -qq -e trace=socket -o "$T/quiet.trace" "$RUNTIME" --root "$AB_STATE" run --bundle "$T/quiet" "$id" \
    </dev/null >"$T/quiet.out" 2>"$T/quiet.err"
  is "$(cat "$T/quiet.out") $(grep -c NETLINK_NETFILTER "$T/quiet.trace")" "ECONNREFUSED 1" \
    "a run without a record is refused the same, with one netfilter socket: the wall's, no dump"
  id=$(new_id)
  env "$traced_env" strace -f -qq -e trace=socket -o "$T/quiet2.trace" "$RUNTIME" --root "$AB_STATE" run --record "$T/quiet.rec" \
    --bundle "$T/quiet" "$id" </dev/null >/dev/null 2>>"$T/quiet.err"
  is "$(grep -c NETLINK_NETFILTER "$T/quiet2.trace") $(net_record violations "$T/quiet.rec")" \
    "2 denied tcp 198.51.100.1 80 1" "with --record the sets are dumped (a second socket) and the attempt is listed"
else
  skip "strace not installed" 2
fi

# ---- a joined namespace -------------------------------------------------------------------------

net_ns_add "$J" &&
  net_veth "ab$$j" jh1 "$H1" &&
  ip link set "ab$$j" netns "$J" &&
  ip -n "$J" addr add 203.0.113.2/24 dev "ab$$j" &&
  ip -n "$J" link set "ab$$j" up &&
  ip -n "$H1" addr add 203.0.113.1/24 dev jh1
ok $? "a namespace prepared by the test ($J), linked to the test host"
# (and a default route of its own, which must keep winning)
ip -n "$J" route add default via 203.0.113.1
j_routes=$(ip -n "$J" route; ip -n "$J" -6 route)
j_rules=$(ip netns exec "$J" nft list ruleset)

make_bundle "$T/join" 'process.args=["/bin/sh","-c","/bin/abtest connect tcp 203.0.113.1 8081; /bin/abtest connect tcp 203.0.113.1 8080"]' \
  "linux.namespaces[type=network].path:=/run/netns/$J"
mark=$(h1_mark)
out=$(rt run --bundle "$T/join" "$(new_id)" </dev/null 2>"$T/join.err" | tr '\n' ' ')
is "$out" "ok ok " "joined without the annotation: the namespace is left alone, both ports are reached"
is "$(h1_log_since "$mark" | sort | tr '\n' ';')" "tcp 203.0.113.2 203.0.113.1 8080;tcp 203.0.113.2 203.0.113.1 8081;" \
  "... and the test host logged both"
is "$(ip netns exec "$J" nft list ruleset)" "$j_rules" "... no nftables rule was added to it"
is "$(ip -n "$J" route; ip -n "$J" -6 route)" "$j_routes" "... and its routes are unchanged"

cfg "$T/join/config.json" 'annotations={"dev.agentbox.net.allow":"203.0.113.1:8080/tcp"}'
mark=$(h1_mark)
id=$(new_id)
rt --debug create --bundle "$T/join" "$id" </dev/null >"$T/join/stdout" 2>"$T/join/debug"
ok $? "create a container that joins $J with the annotation 203.0.113.1:8080/tcp"
debug_rules "$T/join/debug" "$id" >"$T/join/debug.nft"
ip netns exec "$J" nft list table inet agentbox >"$T/join/installed.nft" 2>&1
[ -s "$T/join/debug.nft" ] && cmp -s "$T/join/debug.nft" "$T/join/installed.nft"
ok $? "the joined namespace now holds exactly the table --debug showed" ||
  diag "$(diff "$T/join/debug.nft" "$T/join/installed.nft")"
# The same policy in a namespace of the container's own gets the same table.
make_bundle "$T/own" 'annotations={"dev.agentbox.net.allow":"203.0.113.1:8080/tcp"}'
own=$(new_id)
rt --debug create --bundle "$T/own" "$own" </dev/null >/dev/null 2>"$T/own/debug"
debug_rules "$T/own/debug" "$own" >"$T/own/debug.nft"
[ -s "$T/own/debug.nft" ] && cmp -s "$T/own/debug.nft" "$T/join/debug.nft"
ok $? "... the same rules as a new namespace with that policy gets"
rt delete --force "$own"
# Its own routes stay and win; the wall adds only the routes of last resort
# via lo, so that an unrouted destination reaches the output hook and is
# judged and recorded (instead of failing with ENETUNREACH unseen).
j_now=$(ip -n "$J" route; ip -n "$J" -6 route)
comm -23 <(sort <<<"$j_routes") <(sort <<<"$j_now") | grep -q .
ok $((!$?)) "the joined namespace keeps every route it had"
is "$(comm -13 <(sort <<<"$j_routes") <(sort <<<"$j_now"))" "$(printf '%s\n' \
  'default dev lo proto static scope link src 127.0.0.1 metric 4294967295 ' \
  'default dev lo proto static src ::1 metric 4294967295 pref medium')" \
  "... and gains only the IPv4 and IPv6 routes of last resort via lo, behind any route of its own"
rt start "$id" && wait_for_status "$id" stopped 30
is "$(tr '\n' ' ' <"$T/join/stdout")" "ECONNREFUSED ok " \
  "joined with the annotation: the same wall, 8081 refused, 8080 reached"
is "$(h1_log_since "$mark")" "tcp 203.0.113.2 203.0.113.1 8080" "... the test host logged only the allowed connection"
is "$(net_record nft-denied "/run/netns/$J")" "tcp 203.0.113.1 8081 1" "... and the joined namespace's record counts the refused one"
rt delete "$id"
diag "after delete, the joined namespace still has: $(ip netns exec "$J" nft list tables | tr '\n' ' ')$(ip -n "$J" route | grep -c 'dev lo') lo route(s)"

# ---- the host -------------------------------------------------------------------------------

net_no_sanitizer_reports
ok $? "agentbox wrote no sanitizer report (leaks, undefined behaviour) in any run"
net_cleanup
is "$(nft list ruleset)" "$host_rules_before" "the host's nftables ruleset is byte-identical before and after"
ip netns list | grep -q "^ab-$$-"
ok $((!$?)) "no test network namespace is left"
ip -o link | grep -q "ab$$"
ok $((!$?)) "no test veth is left in the host namespace"

done_testing
