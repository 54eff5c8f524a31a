#!/bin/bash
# Stdio without a terminal ("pass-through" in runc's terminals.md): the fds
# 0-2 the runtime is given become the container's stdio, byte for byte, and
# no other inherited fd reaches the container.
. "$(dirname "$0")/lib.sh"
require_runtime_commands create start run state delete exec
plan_later

echo "host secret" >"$T/secret"

# ---- create: the container gets create's fds 0-2, and nothing else -------------------

make_bundle "$T/fds" 'process.args=["/bin/abtest","fds"]'
id=$(new_id)
rt create --bundle "$T/fds" "$id" <"$T/secret" >"$T/fds/stdout" 2>"$T/fds/stderr" 3<"$T/secret" 4>"$T/fd4"
ok $? "create with an extra inherited fd 3 and 4"
rt start "$id" && wait_for_status "$id" stopped
ok $? "the fds process ran to its end"
fds=$(cat "$T/fds/stdout")
like "$fds" '^0=.*/secret$' "fd 0 given to create is the container's stdin"
like "$fds" '^1=.*/fds/stdout$' "fd 1 given to create is the container's stdout"
like "$fds" '^2=.*/fds/stderr$' "fd 2 given to create is the container's stderr"
is "$(grep -Ev '^[012]=' <<<"$fds")" "" "no fd other than 0, 1 and 2 reaches the container (fds 3 and 4 stay out)"
rt delete "$id"

# The same seen from the host, while the process runs.
make_bundle "$T/host" 'process.args=["/bin/abtest","sleep-forever"]'
id=$(new_id)
rt create --bundle "$T/host" "$id" </dev/null >"$T/host/stdout" 2>"$T/host/stderr" 3<"$T/secret"
rt start "$id"
pid=$(pid_of "$id")
is "$(ls "/proc/$pid/fd" | sort -n | tr '\n' ' ')" "0 1 2 " "from the host: the running process holds fds 0, 1, 2 only"
is "$(stat -L -c %d:%i "/proc/$pid/fd/1")" "$(stat -c %d:%i "$T/host/stdout")" \
  "from the host: the process's fd 1 is the very file given to create"
# runc re-opens a /dev/null stdio fd inside the container (reOpenDevNull), so
# compare the device, not the inode.
is "$(stat -L -c %F:%t:%T "/proc/$pid/fd/0")" "character special file:1:3" \
  "from the host: the process's fd 0 is a null device, as given to create"
rt delete --force "$id"

# ---- run: pipes in, bytes out ------------------------------------------------------------

# run_bundle ARGS_JSON: a fresh bundle running ARGS_JSON, in $b.
run_bundle ()
{
  b=$T/r$((++n))
  make_bundle "$b" "process.args=$1"
}
n=0

run_bundle '["/bin/abtest","read-stdin"]'
out=$(head -c 300000 /dev/zero | rt run --bundle "$b" "$(new_id)" 2>/dev/null)
is "$out" "bytes=300000" "stdin piped into run reaches the process in full"

run_bundle '["/bin/abtest","write-bytes","1048576","binary"]'
rt run --bundle "$b" "$(new_id)" </dev/null >"$T/bin.out" 2>/dev/null
"$ABTEST" write-bytes 1048576 binary >"$T/bin.want"
cmp -s "$T/bin.out" "$T/bin.want"
ok $? "1 MiB of binary stdout (NUL bytes included) comes out of run unchanged"

run_bundle '["/bin/abtest","stderr-bytes","50000"]'
rt run --bundle "$b" "$(new_id)" </dev/null >"$T/e.out" 2>"$T/e.err"
is "$(wc -c <"$T/e.err"):$(wc -c <"$T/e.out")" "50000:0" "stderr stays stderr: 50000 bytes there, none on stdout"

run_bundle '["/bin/abtest","tty"]'
out=$(rt run --bundle "$b" "$(new_id)" </dev/null 2>/dev/null)
like "$out" '^fd0_isatty=0$' "without process.terminal stdin is not a tty"
like "$out" '^fd1_isatty=0$' "without process.terminal stdout is not a tty"
like "$out" '^ctty=ENXIO$' "without process.terminal there is no controlling terminal"

run_bundle '["/bin/abtest","fds"]'
out=$(rt run --bundle "$b" "$(new_id)" </dev/null 2>/dev/null 3<"$T/secret" 5<"$T/secret")
is "$(grep -Ev '^[012]=' <<<"$out")" "" "run passes no inherited fd beyond 2 either"

# ---- exec: its own stdio ---------------------------------------------------------------

id=$(new_id)
rt run --detach --bundle "$T/host" "$id" </dev/null >/dev/null 2>&1
out=$(head -c 123456 /dev/zero | rt exec "$id" /bin/abtest read-stdin 2>/dev/null)
is "$out" "bytes=123456" "stdin piped into exec reaches the exec'd process"
out=$(rt exec "$id" /bin/abtest fds </dev/null 2>/dev/null 3<"$T/secret")
is "$(grep -Ev '^[012]=' <<<"$out")" "" "exec passes no inherited fd beyond 2"
rt exec "$id" /bin/abtest write-bytes 1048576 binary </dev/null >"$T/exec.out" 2>/dev/null
cmp -s "$T/exec.out" "$T/bin.want"
ok $? "1 MiB of binary stdout comes out of exec unchanged"
rt delete --force "$id"

done_testing
