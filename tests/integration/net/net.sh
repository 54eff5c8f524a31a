# tests/integration/net/net.sh: test hosts for the network suites, sourced
# after lib.sh (bash).
#
#   . "$(dirname "$0")/lib.sh"
#   . "$AB_LIBDIR/net/net.sh"
#   net_require
#   net_ns_add "$H1"
#   net_veth "ab$$c1" h1a "$H1"
#   net_listen h1 "$H1" --tcp 80 --udp 53 --icmp
#   ...
#   net_cleanup
#   done_testing
#
# Every namespace, host link and listener made here is remembered and
# removed by net_cleanup, which also runs on every way out of the file,
# before lib.sh's leftover check (see _ab_finish below).  Names carry
# the shell's pid ($$): lib.sh's leftover check reports a netns or link with
# that pid in its name that outlives the file.
#
# Addresses: only documentation ranges, and only on links these helpers
# create.  The host's own uplink lives on 192.0.2.0/24 here, so the suites use
# 198.51.100.0/24, 203.0.113.0/24 and 2001:db8::/32 for anything that touches
# the host namespace.

AB_NETDIR=$AB_LIBDIR/net
AB_LISTENER=$AB_TOP_SRCDIR/tests/netns/listener.py
_net_ns=()
_net_links=()
_net_pids=()

# net_require TOOL...: skip the file unless the runtime is agentbox (the wall
# and the annotations are agentbox's) and the tools exist.
net_require ()
{
  local t
  is_agentbox || skip_all "the egress wall is agentbox-specific; $AB_RUNTIME_KIND has none"
  for t in ip nft nsenter "$@"; do
    command -v "$t" >/dev/null || skip_all "needs $t (Debian packages iproute2, nftables, util-linux)"
  done
}

# net_ns_add NAME: a network namespace with lo up.
net_ns_add ()
{
  ip netns add "$1" || return 1
  _net_ns+=("$1")
  ip -n "$1" link set lo up
}

# net_veth HOSTLINK PEER NS: a veth pair, HOSTLINK in the host namespace
# (down: linux.netDevices moves it), PEER in NS (up).
net_veth ()
{
  ip link add "$1" type veth peer name "$2" netns "$3" || return 1
  _net_links+=("$1")
  ip -n "$3" link set "$2" up
}

# net_daemon READY CMD...: start CMD in the background (remembered for
# net_cleanup, which kills it by pid) and wait until it writes its pid to
# READY.  CMD must write its own pid: `ip netns exec` execs, so it is $!.
net_daemon ()
{
  local ready=$1 i
  shift
  "$@" </dev/null >/dev/null 2>"$ready.err" 7>&- &
  _net_pids+=($!)
  for ((i = 0; i < 100; i++)); do
    [ -s "$ready" ] && return 0
    sleep 0.1
  done
  return 1
}

# net_listen NAME NS ARGS...: listener.py in NS (one log line per connection,
# datagram or echo request it receives: $T/NAME.log); waits until it is bound.
net_listen ()
{
  local name=$1 ns=$2
  shift 2
  : >"$T/$name.log"
  net_daemon "$T/$name.ready" ip netns exec "$ns" "$PYTHON3" "$AB_LISTENER" --log "$T/$name.log" \
    --ready "$T/$name.ready" "$@"
}

# Every way out of a test file (done_testing, bail_out, the exit trap) goes
# through lib.sh's _ab_finish, which deletes the containers and then checks
# for leftovers: the test hosts are removed first, so that the check sees
# what agentbox left, not what the test made.
eval "_net_ab_finish () $(declare -f _ab_finish | sed 1d)"
_ab_finish () { net_cleanup; _net_ab_finish; }

# net_cleanup: listeners, host links, namespaces; idempotent.
net_cleanup ()
{
  local p l n
  for p in "${_net_pids[@]}"; do
    kill "$p" 2>/dev/null
    wait "$p" 2>/dev/null
  done
  _net_pids=()
  for l in "${_net_links[@]}"; do
    [ -e "/sys/class/net/$l" ] && ip link del "$l" 2>/dev/null
  done
  _net_links=()
  for n in "${_net_ns[@]}"; do
    ip netns del "$n" 2>/dev/null
  done
  _net_ns=()
}

# net_gone_link NS LINK [SECS]: until LINK no longer exists in NS.  A veth
# dies with the namespace of either end, and a namespace is freed only when
# nothing holds it any more (no process, no mount, no open fd, no socket):
# the peer's disappearance is the host-side proof that the container's
# namespace is gone.  The kernel frees namespaces from a work queue, hence
# the (bounded) wait.
net_gone_link ()
{
  local i
  for ((i = 0; i < ${3:-20} * 10; i++)); do
    ip -n "$1" link show "$2" >/dev/null 2>&1 || return 0
    sleep 0.1
  done
  return 1
}

# net_record CMD FILE...: read result records (net/record.py).
net_record () { "$PYTHON3" "$AB_NETDIR/record.py" "$@"; }

# net_no_sanitizer_reports: passes when no stderr the file kept from agentbox
# ($T/*.err, and the debug and stderr files of bundles) holds an
# AddressSanitizer, LeakSanitizer or UBSan report (a --enable-sanitizers
# build); names the files otherwise.
net_no_sanitizer_reports ()
{
  local bad
  bad=$(grep -rlE 'Sanitizer|runtime error: ' "$T" --include='*.err' --include=debug --include=stderr 2>/dev/null)
  [ -z "$bad" ] && return 0
  diag "sanitizer reports in: $bad"
  return 1
}
