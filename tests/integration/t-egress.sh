#!/bin/bash
# The egress proxy and DNS stub of real agentbox containers: a domain
# allowlist, proven from the upstream's side (its access log) and from the
# record (violations, and every decision in _meta "dev.agentbox/egress").
#
# The "internet" is a network namespace of the test ($U) behind a veth from
# the host namespace, where the proxy runs and connects from: net/upstream.py
# serves HTTP, TLS (self-signed; the SNI is logged), a TCP logger on 22 and
# a UDP logger on 53, on
#
#   allowed.test  203.0.113.10  2001:db8:e::10    (listed)
#   other.test    203.0.113.11  2001:db8:e::11    (pinned, never listed)
#   host end of the veth: 203.0.113.254/24  2001:db8:e::fe/64
#
# Names come from static pins (dev.agentbox.net.pins, or the admin baseline
# of --egress-policy for `run --default`), never from the host's resolver.
# The sandboxes are the built-in one (`run --default --allow-domain`, whose
# view of the host's /usr brings curl and python3) and bundles with the
# annotations that show the host's /usr and /etc the same way.
. "$(dirname "$0")/lib.sh"
. "$AB_LIBDIR/net/net.sh"
require_runtime_commands create start run state delete
net_require curl openssl ss
plan_later

# The host end of the veth has one fixed address: two runs of this file at
# once (its rootless twin in the same `make check`, another checkout's
# suite) would share it and see each other's upstream.  One at a time.
exec 8>/tmp/agentbox-t-egress.lock
flock -w 900 8 || diag "waited 15 min for another run of t-egress.sh; going on"

U=ab-$$-up
UL=ab$$u0
host_rules_before=$(nft list ruleset)
host_routes_before=$(ip route; ip -6 route)
EV="$PYTHON3 $AB_NETDIR/events.py"

# ---- the upstream ----------------------------------------------------------------------------

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$T/key.pem" \
  -out "$T/cert.pem" -subj /CN=upstream.test -days 2 >/dev/null 2>&1 &&
  net_ns_add "$U" &&
  net_veth "$UL" u1 "$U" &&
  ip addr add 203.0.113.254/24 dev "$UL" &&
  ip addr add 2001:db8:e::fe/64 dev "$UL" nodad &&
  ip link set "$UL" up &&
  ip -n "$U" addr add 203.0.113.10/24 dev u1 &&
  ip -n "$U" addr add 203.0.113.11/24 dev u1 &&
  ip -n "$U" addr add 2001:db8:e::10/64 dev u1 nodad &&
  ip -n "$U" addr add 2001:db8:e::11/64 dev u1 nodad &&
  : >"$T/up.log" &&
  net_daemon "$T/up.ready" ip netns exec "$U" "$PYTHON3" "$AB_NETDIR/upstream.py" "$T/up.log" \
    "$T/cert.pem" "$T/key.pem" "$T/up.ready"
ok $? "the upstream namespace $U serves 203.0.113.10-11 and 2001:db8:e::10-11 behind a veth"
[ "$(curl -s --noproxy '*' --max-time 10 http://203.0.113.10/host-probe)" = "upstream 203.0.113.10:80 /host-probe" ] &&
  [ "$(curl -s --noproxy '*' --max-time 10 -g 'http://[2001:db8:e::10]/host-probe6')" = "upstream 2001:db8:e::10:80 /host-probe6" ]
ok $? "the upstream answers the host namespace (where the proxy connects from) over IPv4 and IPv6"

# all_in TEXT LINE...: every LINE is a line of TEXT; prints those that are not.
all_in ()
{
  local text=$1 l r=0
  shift
  for l in "$@"; do
    grep -qxF -- "$l" <<<"$text" || { echo "missing: $l"; r=1; }
  done
  return $r
}

mark () { wc -l <"$T/up.log"; }
events () { $EV "$T/up.log" "$1"; }

# The sandbox's workspace: the clients and the probe script.
mkdir -p "$T/ws" && chmod 0755 "$T/ws" &&
  cp "$AB_TOP_SRCDIR/tests/egress/client.py" "$AB_NETDIR/probes.sh" "$AB_NETDIR/relay.py" "$T/ws/"
# Rootless (AB_ROOTLESS=1), the workspace is the user's: its files are
# the container root's there.
[ "$AB_ROOTLESS" = 1 ] && chown -R "$AB_RL_UID:$AB_RL_GID" "$T/ws"
out=$T/ws/out
code () { cat "$out/$1.code" 2>/dev/null; }
field () { json_get "$2" <"$out/$1.json" 2>/dev/null; }

# ---- run --default --allow-domain: every way in and out ------------------------------------------

# The admin baseline: the names the test knows and their pins.  The run's
# --allow-domain narrows it; other.test is pinned and in the baseline, but
# not allowed by the run.
cat >"$T/policy.json" <<'EOF'
{
  "dev.agentbox.net.allow-domains": ["allowed.test", "other.test", "private.test", "loop.test", "meta.test",
                                     "hostlocal.test"],
  "dev.agentbox.net.pins": ["allowed.test=203.0.113.10", "allowed.test=2001:db8:e::10", "other.test=203.0.113.11",
                            "other.test=2001:db8:e::11", "private.test=10.0.0.5", "loop.test=127.0.0.1",
                            "meta.test=169.254.169.254", "hostlocal.test=203.0.113.254"]
}
EOF
m=$(mark)
id=$(new_id)
rt run --default --egress-policy "$T/policy.json" --allow-domain allowed.test --allow-domain private.test \
  --allow-domain loop.test --allow-domain meta.test --allow-domain hostlocal.test --workspace "$T/ws" \
  --record "$T/main.rec" --no-stream "$id" -- sh /workspace/probes.sh main </dev/null >/dev/null 2>"$T/main.err"
is $? 0 "run --default --allow-domain ... runs the probes (curl and python3 from the host's /usr)"
events "$m" >"$T/main.events"

is "$(code connect-ok)" "200 200 0" "CONNECT: curl through the proxy (HTTPS_PROXY) fetches https://allowed.test/"
grep -qxF "sni 203.0.113.10:443 allowed.test" "$T/main.events" &&
  grep -qxF "http 203.0.113.10:443 GET /a-connect allowed.test tls" "$T/main.events"
ok $? "... the upstream saw the TLS handshake with SNI allowed.test and the request, on its pinned address"
is "$(code http-ok)" "200 000 0" "plain HTTP: curl through the proxy (HTTP_PROXY) fetches http://allowed.test/"
grep -qxF "http 203.0.113.10:80 GET /a-http allowed.test plain" "$T/main.events"
ok $? "... the upstream served it in origin form with Host allowed.test"
is "$(code capture-ok) / $(code capture-tls-ok)" "200 000 0 / 200 000 0" \
  "a client that ignores the proxy (--noproxy '*') is captured and served, over HTTP and TLS"
grep -qxF "http 203.0.113.10:80 GET /a-capture allowed.test plain" "$T/main.events" &&
  grep -qxF "http 203.0.113.10:443 GET /a-capture-tls allowed.test tls" "$T/main.events"
ok $? "... and the upstream saw both"

is "$(field dns-other rcode) $(field dns-other answers)" "3 []" "a name that is not listed gets NXDOMAIN from the DNS stub"
like "$(cat "$out/getent-other")" '^exit 2$' "... and the container's resolver (getent) finds nothing"
like "$(code connect-other)" '^000 403 ' "CONNECT to a name that is not listed is refused with 403"
like "$(code http-other)" '^403 ' "an absolute-URI GET to a name that is not listed is refused with 403"
like "$(code capture-other)" '^403 ' "transparent HTTP to a name that is not listed (address known) is refused with 403"
is "$(code capture-tls-other)" "000 000 35" "transparent TLS to a name that is not listed is cut in the handshake"

is "$(field direct-22 error) / $(field direct-8080 error)" "[Errno 111] Connection refused / [Errno 111] Connection refused" \
  "a raw TCP connect to a port that is not captured (22, 8080) is reset by the wall"
like "$(code raw-ip)" '^403 ' "HTTP to a raw IP address (captured, no name) is refused with 403"
is "$(field udp-resolver error) / $(field udp-resolver6 error)" \
  "[Errno 1] Operation not permitted / [Errno 1] Operation not permitted" \
  "a DNS query to another resolver over UDP is dropped by the wall (EPERM), over IPv4 and IPv6"
is "$(field v6-22 error)" "[Errno 111] Connection refused" "IPv6: a raw connect is reset by the wall"
like "$(field v6-80 data)" '403' "IPv6: captured HTTP with Host other.test is refused with 403"
like "$(code v6-literal)" '^403 ' "IPv6: HTTP to a raw IPv6 literal is refused with 403"
like "$(field relay-proxy status)" ' 403 ' "a relay inside the container to the proxy cannot CONNECT other.test"
like "$(field relay-direct error)" 'ACCESS_DENIED' \
  "a relay inside the container straight to other.test's address (SNI allowed.test) is refused in the handshake"

is "$(field dns-private rcode) $(field dns-loop rcode)" "3 3" \
  "listed names pinned to 10.0.0.5 and 127.0.0.1 are not handed out by DNS"
got=""
for n in private loop meta hostlocal; do
  got+="$(field "connect-$n" head | sed -n 's/^X-Agentbox-Egress: \([^[:space:]]*\).*/\1/p') "
done
is "$got" "ssrf:rfc1918 ssrf:loopback ssrf:metadata ssrf:host-local " \
  "CONNECT to listed names pinned to a private, a loopback, a metadata or the host's own address is refused"

like "$(field host-mismatch status)" ' 403 ' "an absolute URI for allowed.test with Host: other.test is refused"
# (An allowed CONNECT opens the upstream connection before it answers 200;
# what goes up the tunnel is inspected before a byte of it is relayed.)
like "$(field sni-mismatch status) $(field sni-mismatch error)" '^HTTP/1.1 200 Connection established .*ACCESS_DENIED' \
  "CONNECT allowed.test then a ClientHello for other.test: the tunnel is refused in the handshake"
like "$(field capture-sni-mismatch error)" 'ACCESS_DENIED' \
  "transparent TLS to allowed.test's address with SNI other.test is refused in the handshake"
like "$(field capture-host-mismatch data)" '403' "transparent HTTP to allowed.test's address with Host other.test: 403"
like "$(field capture-sni-elsewhere error)" 'ACCESS_DENIED' \
  "transparent TLS with SNI allowed.test to an address not pinned for it is refused in the handshake"

# What reached the upstream: the four allowed fetches, and the connection
# the proxy opened for the CONNECT whose ClientHello named other.test, which
# ended before any ClientHello arrived.  All on allowed.test's address.
is "$(grep -v '^accept ' "$T/main.events" | sort)" "$(printf '%s\n' \
  'http 203.0.113.10:443 GET /a-capture-tls allowed.test tls' 'http 203.0.113.10:443 GET /a-connect allowed.test tls' \
  'http 203.0.113.10:80 GET /a-capture allowed.test plain' 'http 203.0.113.10:80 GET /a-http allowed.test plain' \
  'sni 203.0.113.10:443 allowed.test' 'sni 203.0.113.10:443 allowed.test' 'tls-error')" \
  "the upstream saw only the four allowed requests and one tunnel closed before its ClientHello: no other name, no datagram"
is "$(grep '^accept ' "$T/main.events" | sed 's/:[0-9]*$//' | sort | uniq -c | tr -s ' ')" " 5 accept 203.0.113.10" \
  "... five connections, all to allowed.test's address; none to other.test's or to any IPv6 address"
grep -q '"error": "TLS/SSL connection has been closed (EOF)' "$T/up.log"
ok $? "... the closed tunnel delivered no byte of the ClientHello that named other.test (EOF in the handshake)"

# The record.
rec=$(net_record violations "$T/main.rec")
miss=$(all_in "$rec" 'refused dns-A other.test - 0 default-deny' 'refused CONNECT other.test - 443 default-deny' \
  'refused GET other.test - 80 default-deny' 'refused http-host other.test 203.0.113.11 80 default-deny' \
  'refused tls-sni other.test 203.0.113.11 443 default-deny' 'refused tls-sni other.test 203.0.113.10 443 sni-mismatch' \
  'refused GET allowed.test - 80 host-mismatch' 'refused tls-sni allowed.test 203.0.113.11 443 not-pinned' \
  'refused CONNECT private.test 10.0.0.5 443 ssrf:rfc1918' \
  'refused CONNECT meta.test 169.254.169.254 80 ssrf:metadata' 'denied tcp 203.0.113.11 22 1' 'denied udp 203.0.113.11 53 1' \
  'denied tcp 2001:db8:e::11 22 1' 'denied udp 2001:db8:e::11 53 1')
ok $? "the record's violations name each refusal: DNS, CONNECT, GET, capture, SSRF pins, and the wall's drops" ||
  diag "$miss" "$rec"
is "$(net_record has-decisions "$T/main.rec")" yes "the record carries every decision in _meta dev.agentbox/egress"
dec=$(net_record decisions "$T/main.rec")
miss=$(all_in "$dec" 'allowed CONNECT allowed.test 203.0.113.10 443 allow:allowed.test' \
  'allowed GET allowed.test 203.0.113.10 80 allow:allowed.test' \
  'allowed http-host allowed.test 203.0.113.10 80 allow:allowed.test' \
  'allowed tls-sni allowed.test 203.0.113.10 443 allow:allowed.test')
ok $? "... the allowed CONNECT, GET and both captures with the address the proxy connected to" || diag "$miss" "$dec"
is "$(grep '^refused ' <<<"$dec")" "$(grep '^refused ' <<<"$rec")" "... and its refusals are exactly the proxy's violations"
is "$(net_record error "$T/main.rec")" policy_violation "the record's verdict is policy_violation"

# ---- a flood of refusals -------------------------------------------------------------------------

cat >"$T/ws/flood.py" <<'EOF'
import socket, struct
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(2)
for i in range(5000):
    q = struct.pack(">HHHHHH", i, 0x0100, 1, 0, 0, 0) + b"\x05n%04d\x04test\x00" % i + struct.pack(">HH", 1, 1)
    s.sendto(q, ("127.0.0.1", 53))
    s.recvfrom(512)
EOF
rt run --default --allow-domain allowed.test --workspace "$T/ws" --record "$T/flood.rec" --no-stream "$(new_id)" \
  -- python3 /workspace/flood.py </dev/null >/dev/null 2>"$T/flood.err"
last=$("$PYTHON3" -c 'import json,sys; v=json.load(open(sys.argv[1]))["result"]["structuredContent"]["violations"]; print(json.dumps(v[-1], sort_keys=True), len(v))' "$T/flood.rec" 2>&1)
is "$last" '{"by": "proxy", "entries": 3000, "notRecorded": 0, "type": "egress-refused-omitted"} 2001' \
  "5000 refused lookups do not empty the record: 2000 are listed and one entry counts the other 3000"

# ---- bundles with the annotations ----------------------------------------------------------------

ANN='annotations={"dev.agentbox.net.allow-domains":"allowed.test","dev.agentbox.net.pins":"allowed.test=203.0.113.10,allowed.test=2001:db8:e::10,other.test=203.0.113.11"}'

# hostview_bundle DIR EDIT...: make_bundle with the host's /usr and /etc
# read-only (curl, python3 and their libraries), $T/ws at /workspace.
hostview_bundle ()
{
  local d=$1
  shift
  make_bundle "$d" \
    'mounts+={"destination":"/usr","type":"bind","source":"/usr","options":["rbind","ro","nosuid","nodev"]}' \
    'mounts+={"destination":"/etc","type":"bind","source":"/etc","options":["rbind","ro","nosuid","nodev"]}' \
    "mounts+={\"destination\":\"/workspace\",\"type\":\"bind\",\"source\":\"$T/ws\",\"options\":[\"rbind\",\"rw\"]}" \
    'process.env=["PATH=/usr/bin:/bin","HOME=/root"]' 'process.cwd="/workspace"' "$@" &&
    mkdir "$d/rootfs/usr" "$d/rootfs/workspace" &&
    ln -s usr/lib "$d/rootfs/lib" && ln -s usr/lib64 "$d/rootfs/lib64"
}

# engine_pids CONTAINER_PID: the processes owning the proxy's and the DNS
# stub's sockets in the container's namespace, read from outside (ss -p).
engine_pids ()
{
  nsenter --net="/proc/$1/ns/net" ss -Hltunp | sed -n 's/.*pid=\([0-9]*\),.*/\1/p' | sort -u
}

# listening CONTAINER_PID: "PROTO ADDRESS:PORT" of every socket listening
# (TCP) or bound (UDP) in the container's namespace.
listening ()
{
  nsenter --net="/proc/$1/ns/net" ss -Hltun | awk '{ print $1, $5 }' | sort
}

# hold_netns PID: keeps PID's network namespace alive on fd $netns_fd and
# sets netns_ino to its inode number, until release_netns. The kernel hands
# a freed namespace's inode number to the next namespace made, and the suite
# runs in parallel: without the hold, in_netns could find a process of
# another test's new namespace under the number.
hold_netns ()
{
  exec {netns_fd}<"/proc/$1/ns/net" && netns_ino=$(stat -L -c %i "/proc/$1/ns/net")
}
release_netns () { exec {netns_fd}<&-; }

# in_netns INODE: the pids of host processes in the network namespace INODE.
in_netns ()
{
  local p
  for p in /proc/[0-9]*; do
    [ "$(stat -L -c %i "$p/ns/net" 2>/dev/null)" = "$1" ] && echo "${p#/proc/}"
  done
}

LISTENERS=$(printf '%s\n' 'tcp 127.0.0.1:3128' 'tcp 127.0.0.1:53' 'tcp [::1]:3128' 'udp 127.0.0.1:53')

# 100 parallel fetches in the foreground; the container then waits for the
# test to look at its listeners from outside.
urls=""
for ((i = 0; i < 50; i++)); do urls+="http://allowed.test/p$i http://other.test/q$i "; done
cat >"$T/ws/parallel.sh" <<EOF
python3 /workspace/client.py parallel 3128 $urls >/workspace/out/parallel.json
echo done >/workspace/out/parallel.done
i=0
while [ ! -e /workspace/out/go ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done
EOF
hostview_bundle "$T/par" 'process.args=["/bin/sh","/workspace/parallel.sh"]' "$ANN"
m=$(mark)
id=$(new_id)
rt run --record "$T/par.rec" --bundle "$T/par" "$id" </dev/null >/dev/null 2>"$T/par.err" &
runner=$!
wait_for_file "$out/parallel.done" 60
ok $? "a bundle with the annotations runs 100 parallel fetches through the proxy"
cpid=$(pid_of "$id")
hold_netns "$cpid"
engine=$(engine_pids "$cpid")
is "$(listening "$cpid")" "$LISTENERS" \
  "while it runs, the container's namespace has the proxy (127.0.0.1:3128, [::1]:3128) and the stub (:53) listening"
# (agentbox re-executes itself from a protected copy (runtime/exe.h): the
# command line is the one the test started.)
[[ $engine =~ ^[0-9]+$ ]] && [[ "$(tr '\0' ' ' <"/proc/$engine/cmdline")" == *" run --record $T/par.rec "* ]] &&
  [ "$(readlink "/proc/$engine/ns/net")" = "$(readlink /proc/self/ns/net)" ]
ok $? "... owned by the \`agentbox run\` supervisor ($engine), which itself stays in the host namespace"
res=$(json_get results <"$out/parallel.json")
is "$("$PYTHON3" -c 'import json,sys; r=json.loads(sys.argv[1]); print(r[0::2].count("200"), r[1::2].count("403"), len(r))' "$res")" \
  "50 50 100" "the 50 fetches of allowed.test all complete (200), the 50 of other.test are all refused (403)"
touch "$out/go"
wait "$runner"
is $? 0 "the run ends once the fetches are done"
events "$m" >"$T/par.events"
is "$(sed -n 's|^http 203\.0\.113\.10:80 GET /p[0-9]* allowed\.test plain$|&|p' "$T/par.events" | sort -u | wc -l) $(grep -c '^http ' "$T/par.events") $(grep -c '/q' "$T/par.events")" \
  "50 50 0" "the upstream served each of the 50 allowed paths once and never saw a request for other.test"
dec=$(net_record decisions "$T/par.rec")
is "$(grep -c '^allowed GET allowed.test 203.0.113.10 80 allow:allowed.test$' <<<"$dec") $(grep -c '^refused GET other.test - 80 default-deny$' <<<"$dec")" \
  "50 50" "the record holds the 100 decisions: 50 allowed, 50 refused"
wait_gone "$engine" 10
ok $? "after the container exits the supervisor that owned the listeners is gone"
is "$(in_netns "$netns_ino")" "" "... and no process is left in the container's network namespace"
release_netns

# ---- detached: create/start and the per-container daemon -------------------------------------------

hostview_bundle "$T/det" 'process.args=["/bin/sh","/workspace/probes.sh","detached"]' "$ANN"
m=$(mark)
id=$(new_id)
rt create --bundle "$T/det" "$id" </dev/null >"$T/det/stdout" 2>"$T/det/stderr"
ok $? "create a container with the annotations (detached)"
cpid=$(pid_of "$id")
hold_netns "$cpid"
daemon=$(engine_pids "$cpid")
[[ $daemon =~ ^[0-9]+$ ]] && alive "$daemon" && [ "$(cat "/proc/$daemon/comm")" = agentbox-egress ] &&
  [ "$(readlink "/proc/$daemon/ns/net")" = "$(readlink /proc/self/ns/net)" ] &&
  [ "$(awk '{ print $4 }' "/proc/$daemon/stat")" != $$ ]
ok $? "an egress daemon ($daemon) owns the listeners, from the host namespace, and outlives create"
is "$(listening "$cpid")" "$LISTENERS" "... listening on the proxy and stub addresses inside the container"
rt start "$id" && wait_for_status "$id" stopped 30
ok $? "start: the container runs its fetches and stops"
is "$(code d-http)" "200 000 0" "detached: http://allowed.test/ is fetched through the daemon"
like "$(code d-other)" '^403 ' "detached: http://other.test/ is refused with 403"
is "$(events "$m" | grep '^http ')" "http 203.0.113.10:80 GET /d-http allowed.test plain" \
  "detached: the upstream served only the allowed fetch"
wait_gone "$daemon" 10
ok $? "the daemon exits once the container's last process is gone"
is "$(net_record decisions "$AB_STATE/$id/egress.json" 2>&1 | grep -E '^(allowed|refused) GET ')" \
  "$(printf '%s\n' 'allowed GET allowed.test 203.0.113.10 80 allow:allowed.test' 'refused GET other.test - 80 default-deny')" \
  "... leaving its record of decisions in the state directory"
rt delete "$id"
ok $? "delete the stopped container"
rt state "$id" >/dev/null 2>&1
isnt $? 0 "... its state (and the daemon's record) is gone"
is "$(in_netns "$netns_ino")" "" "... and no process is left in its network namespace"
release_netns

# A daemon whose container is deleted while it runs.
hostview_bundle "$T/sleep" 'process.args=["/bin/abtest","sleep-forever"]' "$ANN"
id=$(new_id)
rt create --bundle "$T/sleep" "$id" </dev/null >/dev/null 2>&1 && rt start "$id"
cpid=$(pid_of "$id")
daemon=$(engine_pids "$cpid")
[[ $daemon =~ ^[0-9]+$ ]] && alive "$daemon"
ok $? "a running detached container has its daemon ($daemon)"
rt delete --force "$id"
wait_gone "$daemon" 10
ok $? "delete --force of the running container ends its daemon"
# The daemon writes its record while delete removes the state directory
# (delete signals it and does not wait): nothing of it may stay behind.
left=0
for ((i = 0; i < 20; i++)); do
  id=$(new_id)
  rt create --bundle "$T/sleep" "$id" </dev/null >/dev/null 2>&1 && rt start "$id" && rt delete --force "$id" 2>>"$T/race.err"
  [ -e "$AB_STATE/$id" ] && left=$((left + 1))
done
is "$left $(cat "$T/race.err")" "0 " "twenty delete --force racing the daemon's last record write leave no state directory behind"

# ---- the host ----------------------------------------------------------------------------------------

[ -n "${KEEP_WS:-}" ] && cp -a "$T/ws" "$KEEP_WS"
net_no_sanitizer_reports
ok $? "agentbox wrote no sanitizer report (leaks, undefined behaviour) in any run"
net_cleanup
is "$(nft list ruleset)" "$host_rules_before" "the host's nftables ruleset is byte-identical before and after"
is "$(ip route; ip -6 route)" "$host_routes_before" "the host's routes are exactly as they were"
ss -Hltunp | grep -q '"agentbox"'
ok $((!$?)) "nothing of agentbox listens in the host namespace"

done_testing
