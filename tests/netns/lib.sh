# TAP helpers for the shell tests of tests/netns (sourced, bash).

TAP_N=0
TAP_FAILED=0

# ok COND-EXIT-STATUS DESCRIPTION: `cmd; ok $? "name"`
ok () {
	TAP_N=$((TAP_N + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $TAP_N - $2"
	else
		TAP_FAILED=$((TAP_FAILED + 1))
		echo "not ok $TAP_N - $2"
	fi
}

# is GOT WANT DESCRIPTION
is () {
	if [ "$1" = "$2" ]; then
		ok 0 "$3"
	else
		ok 1 "$3"
		printf '#   got:      %s\n#   expected: %s\n' "$1" "$2"
	fi
}

diag () {
	printf '# %s\n' "$@"
}

skip_all () {
	echo "1..0 # SKIP $*"
	exit 0
}

done_testing () {
	echo "1..$TAP_N"
	[ "$TAP_FAILED" -eq 0 ]
}

# wait_for SECONDS CMD...: poll CMD until it succeeds (a bound, not a
# measurement: no test asserts how long anything takes).
wait_for () {
	local limit=$(($1 * 10)) i=0
	shift
	while ! "$@" >/dev/null 2>&1; do
		i=$((i + 1))
		[ "$i" -ge "$limit" ] && return 1
		sleep 0.1
	done
	return 0
}
