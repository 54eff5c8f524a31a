#!/bin/sh
# Run the live cgroup tests again inside a cgroup + mount namespace, with
# /sys/fs/cgroup remounted so that "/" of every hierarchy is our own cgroup:
#
#   abs     the host's hybrid layout: absolute cgroupsPath values
#   v1      the v1 hierarchies only (no cgroup2 mount): freezer-based kill,
#           cgroup.procs tracking, v1 devices
#   v2      cgroup2 alone on /sys/fs/cgroup: cgroup.kill, cgroup.freeze,
#           the device eBPF program, the errors of missing v2 controllers
#
# Nothing leaves the namespace: the mounts vanish with it, and every cgroup
# is made below our own and removed by the tests.  One TAP stream, numbered
# across the runs.
set -u
build=${AB_TOP_BUILDDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
live=$build/tests/unit/test-cgroup-live
res=$build/tests/unit/test-cgroup-res

if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null 2>&1; then
	echo "1..0 # SKIP needs root and unshare(1)"
	exit 0
fi
if ! grep -q ' - cgroup cgroup ' /proc/self/mountinfo || ! grep -q ' - cgroup2 ' /proc/self/mountinfo; then
	echo "1..0 # SKIP the host is not hybrid (v1 controllers + cgroup2)"
	exit 0
fi

# "mountpoint fstype superoptions" of each cgroup mount; the optional fields
# before " - " vary in number.
mounts=$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i+1) ~ /^cgroup2?$/) print $5, $(i+1), $(i+3); break } }' /proc/self/mountinfo)

# The script run inside the namespace: $1 = layout, then the command.
inner='
set -e
layout=$1; shift
if [ "$layout" = v2 ]; then
	mount -t cgroup2 cgroup2 /sys/fs/cgroup
else
	mount -t tmpfs -o mode=755 agentbox-test /sys/fs/cgroup
	echo "$MOUNTS" | while read -r mp fs opts; do
		case $mp in /sys/fs/cgroup/*) ;; *) continue ;; esac
		mkdir -p "$mp"
		if [ "$fs" = cgroup2 ]; then
			[ "$layout" = v1 ] || mount -t cgroup2 cgroup2 "$mp"
		else
			mount -t cgroup -o "${opts#rw,}" cgroup "$mp"
		fi
	done
fi
set +e
exec "$@"
'

total=0
run() {
	layout=$1
	shift
	out=$(MOUNTS=$mounts unshare --cgroup --mount --propagation private sh -c "$inner" inner "$layout" "$@" 2>&1)
	status=$?
	# Renumber "ok N - ..." lines into one plan; pass comments through.
	printf '%s\n' "$out" | awk -v base="$total" -v tag="$layout" '
		/^(not )?ok [0-9]+/ {
			n++; not = ($1 == "not")
			sub(/^(not )?ok [0-9]+ */, ""); sub(/^- */, "")
			printf "%sok %d - [%s] %s\n", not ? "not " : "", base + n, tag, $0; next }
		/^1\.\.0/ { n++; sub(/^1\.\.0 *# *SKIP */, ""); printf "ok %d - [%s] # SKIP %s\n", base + n, tag, $0; next }
		/^1\.\./ { next }
		{ print "# " $0 }
		END { print n > "/dev/stderr" }' 2>"${TMPDIR:-/tmp}/cgroup-ns.$$"
	n=$(cat "${TMPDIR:-/tmp}/cgroup-ns.$$")
	rm -f "${TMPDIR:-/tmp}/cgroup-ns.$$"
	total=$((total + ${n:-0}))
	if [ "$status" != 0 ] && [ "${n:-0}" = 0 ]; then
		total=$((total + 1))
		echo "not ok $total - [$layout] $(basename "$1") ran (exit $status)"
	fi
}

run abs "$live" --mode=hybrid --ns
run abs "$res" --mode=hybrid --ns
run v1 "$live" --mode=v1 --ns
run v1 "$res" --mode=v1 --ns
run v2 "$live" --mode=v2 --ns
run v2 "$res" --mode=v2 --ns
echo "1..$total"
