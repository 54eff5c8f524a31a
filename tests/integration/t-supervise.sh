#!/bin/bash
# The foreground supervisor, seen from the host: agentbox stays the parent
# and the subreaper of the container, forwards the signals it gets (INT,
# TERM, HUP, QUIT, USR2, ALRM, PWR, TSTP, CONT, a real-time one) at any time (also while the container is being created, and with the
# egress proxy's threads running inside it), survives a reader of its
# stdout that goes away, kills the whole container on the deadline (the
# smaller of --timeout and dev.agentbox.timeout), and caps what it captures
# while the stream still flows in full.  Every pid checked here is a host
# pid; every "gone" is checked with kill -0 and /proc from the host.
. "$(dirname "$0")/lib.sh"
is_agentbox || skip_all "agentbox's supervisor (run --record, --timeout, --max-output)"
require_runtime_commands run exec state delete
plan_later

# agentbox_proc SUBCMD ID: the agentbox process (not its `timeout` wrapper)
# running `agentbox --root $AB_STATE SUBCMD ... ID`, found in /proc by its
# argv, so that a test can signal it directly.  Waits for it a while.
agentbox_proc ()
{
  local i p argv
  for ((i = 0; i < 100; i++)); do
    for p in /proc/[0-9]*; do
      argv=$(tr '\0' '\n' <"$p/cmdline" 2>/dev/null) || continue
      [ "$(head -n 1 <<<"$argv")" = "$RUNTIME" ] || continue
      grep -qxF -- "$AB_STATE" <<<"$argv" && grep -qxF -- "$1" <<<"$argv" && grep -qxF -- "$2" <<<"$argv" ||
        continue
      echo "${p#/proc/}"
      return 0
    done
    sleep 0.1
  done
  return 1
}

# rec FILE KEY: a member of the record's structuredContent (json_get form).
rec () { json_get "result.structuredContent.$2" <"$1"; }

# rec_check FILE PYEXPR [ARG...]: PYEXPR holds for the frame in FILE; it sees
# f (the frame), sc (structuredContent), blob(name) (the decoded resource
# of a stream, or None) and the ARGs in a.
rec_check ()
{
  "$PYTHON3" - "$@" <<'EOF'
import base64, json, sys
f = json.loads(open(sys.argv[1], "rb").read())
sc = f["result"]["structuredContent"]
a = sys.argv[3:]
def blob(name):
    for b in f["result"]["content"][1:]:
        if b["resource"]["uri"].endswith("/" + name):
            return base64.b64decode(b["resource"]["blob"])
    return None
sys.exit(0 if eval(sys.argv[2]) else 1)
EOF
}

# cgroups_of ID: the cgroup directories of container ID on the host, if any.
cgroups_of () { find /sys/fs/cgroup -type d -name "*$1" 2>/dev/null; }

# The daemonizing workload: a setsid'd, double-forked worker (its pid in
# /out/pid), then the program itself sleeps.
DAEMONIZE='["/bin/sh","-c","/bin/abtest setsid-sleeper >/out/pid && exec /bin/abtest sleep-forever"]'

# NOPIDNS: the config edits for a container in the host's pid namespace.
# Rootless, the /proc of a pid namespace the user does not own cannot be
# mounted (agentbox refuses that naming /proc): the host's is bound instead.
NOPIDNS=('linux.namespaces-=pid')
[ "$AB_ROOTLESS" = 1 ] &&
  NOPIDNS+=('mounts[destination=/proc]={"destination":"/proc","type":"bind","source":"/proc","options":["rbind","nosuid","noexec","nodev"]}')

# ---- parent and subreaper --------------------------------------------------------
# Without a pid namespace the orphan is reparented on the host, where the
# nearest subreaper among its ancestors must be agentbox.

make_bundle --out "$T/reap" "process.args=$DAEMONIZE" "${NOPIDNS[@]}"
id=$(new_id)
rt run --bundle "$T/reap" --record "$T/reap/rec" "$id" </dev/null >/dev/null 2>&1 &
bg=$!
wait_for_file "$T/reap/out/pid"
init=$(pid_of "$id")
sup=$(agentbox_proc run "$id")
orphan=$(sed -n 's/^pid=//p' "$T/reap/out/pid")
[ -n "$sup" ] && [ "$(ppid_of "$init")" = "$sup" ]
ok $? "a foreground run: the container's init (host pid ${init:-none}) is a child of agentbox (${sup:-not found})"
[ -n "$sup" ] && [ "$(ppid_of "$orphan")" = "$sup" ]
ok $? "agentbox is the subreaper: the setsid'd double-forked orphan is reparented to it, not to the host's init"
kill -TERM "$sup"
wait "$bg"
is $? 143 "SIGTERM to agentbox ends a program that does not handle it: run exits 128+15"
is "$(rec "$T/reap/rec" signal)" SIGTERM "... and the record says SIGTERM"
[ -n "$orphan" ] && ! alive "$orphan"
ok $? "... and the orphan does not outlive the run (host pid ${orphan:-none} gone once run returned)"

# ---- signals sent to agentbox reach the container --------------------------------

# (as runc: every signal but CHLD, WINCH and URG; USR1 is agentbox's cancel)
make_bundle "$T/wait" \
  'process.args=["/bin/abtest","wait-signal","INT","TERM","HUP","QUIT","USR2","ALRM","PWR","TSTP","CONT","40"]'
for sig in INT TERM HUP QUIT USR2 ALRM PWR TSTP CONT 40; do
  id=$(new_id)
  rm -f "$T/wait/out"
  rt run --bundle "$T/wait" "$id" </dev/null >"$T/wait/out" 2>/dev/null &
  bg=$!
  wait_for_file "$T/wait/out" # "ready": the signals are blocked and awaited
  kill -"$sig" "$(agentbox_proc run "$id")"
  wait "$bg"
  rc=$?
  want=SIG$sig
  [[ $sig =~ ^[0-9]+$ ]] && want=$sig
  like "$(cat "$T/wait/out")" "^signal=$want\$" "signal $sig sent to agentbox reaches the container's process"
  is "$rc" 0 "... and agentbox stays in charge: it exits with the program's status, 0"
done

# The same through a signalfd (catatonit's way): the signals are blocked,
# and read, not dropped; agentbox must pass them on, not end the init.
make_bundle "$T/waitfd" 'process.args=["/bin/abtest","wait-signalfd","INT","TERM"]'
for sig in INT TERM; do
  id=$(new_id)
  rm -f "$T/waitfd/out"
  rt run --bundle "$T/waitfd" "$id" </dev/null >"$T/waitfd/out" 2>/dev/null &
  bg=$!
  for ((i = 0; i < 200; i++)); do grep -q ready "$T/waitfd/out" 2>/dev/null && break; sleep 0.05; done
  kill -"$sig" "$(agentbox_proc run "$id")"
  wait "$bg"
  rc=$?
  is "$rc:$(sed -n 's/^signal=//p' "$T/waitfd/out")" "0:SIG$sig" \
    "signal $sig to agentbox, its init reading it from a signalfd: the init gets it and exits 0"
done

# An init that leaves a signal to its default action (no handler, not
# ignored, not blocked) never gets it from the kernel: a Ctrl-C to `run --
# sleep 9` would do nothing.  agentbox applies the default action: the
# container ends, the run exits 128 + the signal, and the record says it.
make_bundle "$T/plain" 'process.args=["/bin/abtest","sleep-forever"]'
for sig in INT TERM HUP; do
  id=$(new_id)
  rt run --bundle "$T/plain" --record "$T/plain/rec" "$id" </dev/null >/dev/null 2>&1 &
  bg=$!
  wait_for_status "$id" running
  kill -"$sig" "$(agentbox_proc run "$id")"
  wait "$bg"
  is "$?:$(rec "$T/plain/rec" signal):$(rec "$T/plain/rec" reason)" "$((128 + $(kill -l "$sig"))):SIG$sig:signaled" \
    "SIG$sig to agentbox, its init program with no handler for it: ended by it, as a shell's child would be"
  rt state "$id" >/dev/null 2>&1
  isnt $? 0 "... and the container is gone"
done

# The egress proxy of a foreground run lives in the supervisor as threads:
# they must not take (and die of) a signal meant for the container.
mkdir -p "$T/ws"
install -m 0755 "$ABTEST" "$T/ws/abtest"
# Rootless, the workspace is the user's (bound straight: the container's root is its owner).
[ "$AB_ROOTLESS" = 1 ] && chown -R "$AB_RL_UID:$AB_RL_GID" "$T/ws"
id=$(new_id)
rt run --default --workspace "$T/ws" --allow-domain example.invalid --record "$T/egress.rec" "$id" \
  -- /workspace/abtest wait-signal TERM </dev/null >"$T/egress.out" 2>/dev/null &
bg=$!
wait_for_file "$T/egress.out"
kill -TERM "$(agentbox_proc run "$id")"
wait "$bg"
rc=$?
like "$(cat "$T/egress.out")" '^signal=SIGTERM$' "with the egress proxy running in the supervisor, SIGTERM still reaches the container"
is "$rc" 0 "... and does not kill agentbox itself (it exits with the program's status, 0)"
is "$(rec "$T/egress.rec" exitCode)" 0 "... which writes the record"

# A signal while the container is being created (here: during a slow
# createRuntime hook) is not lost, and does not kill agentbox half-way,
# which would leave the container's state and cgroups behind: it reaches
# the program once it runs.
make_bundle "$T/slow" 'process.args=["/bin/abtest","sleep-forever"]' "${NOPIDNS[@]}" \
  "hooks={\"createRuntime\":[{\"path\":\"/bin/sh\",\"args\":[\"sh\",\"-c\",\"echo \$PPID >$T/slow/hook.ppid; sleep 2\"]}]}"
id=$(new_id)
rt run --bundle "$T/slow" --record "$T/slow/rec" "$id" </dev/null >/dev/null 2>&1 &
bg=$!
wait_for_file "$T/slow/hook.ppid"
sup=$(cat "$T/slow/hook.ppid")
[ -n "$sup" ] && [ "$sup" = "$(agentbox_proc run "$id")" ]
ok $? "the createRuntime hook runs as a child of agentbox (pid ${sup:-none})"
kill -TERM "$sup"
wait "$bg"
is $? 143 "SIGTERM to agentbox during create is forwarded once the program runs: run exits 128+15"
is "$(rec "$T/slow/rec" signal)" SIGTERM "... agentbox survived to write the record, which says SIGTERM"
rt state "$id" >/dev/null 2>&1
isnt $? 0 "... and deleted the container"
is "$(cgroups_of "$id")" "" "... and its cgroups"

# ---- the deadline kills the whole container --------------------------------------

# timeout_run BUNDLE ARGS...: run the daemonizing bundle with ARGS; sets rc,
# orphan (host pid of the worker) and init; the record is BUNDLE/rec.
timeout_run ()
{
  local b=$1
  shift
  id=$(new_id)
  rm -f "$b/out/pid" "$b/rec"
  rt run "$@" --bundle "$b" --record "$b/rec" "$id" </dev/null >/dev/null 2>&1 &
  bg=$!
  wait_for_file "$b/out/pid"
  init=$(pid_of "$id")
  orphan=$(host_pid_of "$init" "$(sed -n 's/^pid=//p' "$b/out/pid")")
  wait "$bg"
  rc=$?
}

make_bundle --out "$T/to" "process.args=$DAEMONIZE"
timeout_run "$T/to" --timeout 2s --timeout-grace 0
is "$rc" 137 "--timeout 2s: run exits 137"
is "$(rec "$T/to/rec" reason)" timeout "... the record's reason is timeout"
is "$(rec "$T/to/rec" limitsHit)" '["timeout"]' "... limitsHit is [\"timeout\"]"
is "$(rec "$T/to/rec" signal)" SIGKILL "... the program died of SIGKILL"
[ -n "$orphan" ] && ! alive "$orphan" && ! alive "$init"
ok $? "... and the whole container is gone: the init and the setsid'd grandchild (host pid ${orphan:-none})"

# The smaller of the two limits applies: the other one is an hour, and the
# harness would end a run that waited for it (status 124).
make_bundle --out "$T/to-ann" "process.args=$DAEMONIZE" 'annotations={"dev.agentbox.timeout":"2s"}'
timeout_run "$T/to-ann" --timeout 1h --timeout-grace 0
is "$rc" 137 "dev.agentbox.timeout 2s with --timeout 1h: the annotation's deadline kills the run (137)"
is "$(rec "$T/to-ann/rec" reason)" timeout "... the record's reason is timeout"
[ -n "$orphan" ] && ! alive "$orphan"
ok $? "... and the setsid'd grandchild is gone (host pid ${orphan:-none})"
make_bundle --out "$T/to-long" "process.args=$DAEMONIZE" 'annotations={"dev.agentbox.timeout":"1h"}'
timeout_run "$T/to-long" --timeout 2s --timeout-grace 0
is "$rc" 137 "--timeout 2s with dev.agentbox.timeout 1h: --timeout's deadline kills the run (137)"
is "$(rec "$T/to-long/rec" limitsHit)" '["timeout"]' "... limitsHit is [\"timeout\"]"

# Without a pid namespace of its own, the program's end is not the end of
# what it left: with a grace, those processes have the rest of it (a TERM
# trap runs to its end), as in a container whose init waits stopped; one
# that ignores SIGTERM is killed when the grace runs out, and the record
# says killed.  Before, the program's end killed them at once.
make_bundle --out "$T/to-left" 'process.args=["/bin/sh","/out/left.sh"]' "${NOPIDNS[@]}"
cat >"$T/to-left/out/left.sh" <<'EOF'
(trap 'trap "" TERM; sleep 1; echo cleaned >/out/cleaned; exit 1' TERM; sleep 1000 & wait) &
sleep 1000
EOF
id=$(new_id)
rt run --timeout 2s --timeout-grace 20s --bundle "$T/to-left" --record "$T/to-left/rec" "$id" \
  </dev/null >/dev/null 2>&1
is "$?/$(cat "$T/to-left/out/cleaned" 2>&1)/$(rec "$T/to-left/rec" timeout.ended)" "143/cleaned/terminated" \
  "no pid namespace: the TERM trap of a process the program left runs to its end within the grace"
make_bundle --out "$T/to-left-k" 'process.args=["/bin/sh","/out/left.sh"]' "${NOPIDNS[@]}"
cat >"$T/to-left-k/out/left.sh" <<'EOF'
(trap "" TERM; exec sleep 1000) &
echo $! >/out/leftpid
sleep 1000
EOF
id=$(new_id)
rt run --timeout 1s --timeout-grace 2s --bundle "$T/to-left-k" --record "$T/to-left-k/rec" "$id" \
  </dev/null >/dev/null 2>&1
is "$?/$(rec "$T/to-left-k/rec" timeout.ended)" "143/killed" \
  "... one that ignores SIGTERM is killed when the grace runs out: the record says killed"
left=$(cat "$T/to-left-k/out/leftpid" 2>/dev/null)
[ -n "$left" ] && ! alive "$left"
ok $? "... and it (pid ${left:-none}) is gone once run returned"

# A deadline centuries away is no deadline: 18446744073710 ms in ns is just
# above 2^64, and must not wrap around to "now".
make_bundle "$T/far" 'process.args=["/bin/abtest","sleep","1"]'
id=$(new_id)
rt run --timeout 18446744073710ms --bundle "$T/far" --record "$T/far/rec" "$id" </dev/null >/dev/null 2>&1
is $? 0 "--timeout 18446744073710ms (584542 years) does not kill a program that sleeps 1 s"
is "$(rec "$T/far/rec" reason)" exited "... the record's reason is exited"

# ---- output: captured up to --max-output, streamed in full -------------------------

make_bundle "$T/big" 'process.args=["/bin/sh","-c","/bin/abtest write-bytes 100000 && /bin/abtest stderr-bytes 50000 binary"]'
"$ABTEST" write-bytes 100000 >"$T/big/want.out"
"$ABTEST" stderr-bytes 50000 binary 2>"$T/big/want.err"
id=$(new_id)
rt run --max-output 1000 --bundle "$T/big" --record "$T/big/rec" "$id" </dev/null >"$T/big/got.out" 2>"$T/big/got.err"
is $? 0 "run --max-output 1000 exits with the program's status"
cmp -s "$T/big/got.out" "$T/big/want.out"
ok $? "the program's stdout reaches agentbox's stdout in full (100000 bytes, identical)"
cmp -s "$T/big/got.err" "$T/big/want.err"
ok $? "... and its stderr reaches agentbox's stderr in full (50000 binary bytes, identical)"
rec_check "$T/big/rec" 'sc["stdout"].encode() == open(a[0], "rb").read()[:1000] and sc["stdoutTruncated"]' "$T/big/want.out"
ok $? "the record holds the first 1000 bytes of stdout, stdoutTruncated true"
is "$(rec "$T/big/rec" stdoutBytes)" 100000 "... stdoutBytes is what the program wrote (100000)"
rec_check "$T/big/rec" 'blob("stderr") == open(a[0], "rb").read()[:1000] and sc["stderrTruncated"]' "$T/big/want.err"
ok $? "the record holds the first 1000 bytes of stderr, byte-exact, stderrTruncated true"
is "$(rec "$T/big/rec" stderrBytes)" 50000 "... stderrBytes is what the program wrote (50000)"
like "$(rec "$T/big/rec" limitsHit)" '"output"' "... and limitsHit says output"

# --record /dev/stdout (or -) with stdout redirected to a file: the record
# goes after the streamed output in the same open file, which is not
# truncated first (a second open of /dev/stdout would write at offset 0).
make_bundle "$T/same" 'process.args=["/bin/abtest","write-bytes","5000"]'
echo "first line of the caller" >"$T/same/out"
for path in /dev/stdout -; do
  id=$(new_id)
  rt run --bundle "$T/same" --record "$path" "$id" </dev/null >>"$T/same/out" 2>/dev/null
done
"$PYTHON3" -c '
import json, sys
data = open(sys.argv[1], "rb").read()
head, want = b"first line of the caller\n", open(sys.argv[2], "rb").read()
assert data.startswith(head), data[:40]
rest = data[len(head):]
for _ in range(2):
    assert rest.startswith(want), rest[:40]
    rest = rest[len(want):]
    line, _, rest = rest.partition(b"\n")
    assert json.loads(line)["result"]["structuredContent"]["stdoutBytes"] == 5000
assert rest == b"", rest[:40]' "$T/same/out" <("$ABTEST" write-bytes 5000)
ok $? "--record /dev/stdout and --record - append the record after the streamed output to a redirected stdout"

# A reader of agentbox's stdout that goes away (`| head`) must not kill the
# supervisor with SIGPIPE: that would abandon the container.
make_bundle "$T/flood" 'process.args=["/bin/abtest","write-bytes","10000000"]'
id=$(new_id)
rt run --max-output 1000 --bundle "$T/flood" --record "$T/flood/rec" "$id" </dev/null 2>/dev/null | head -c 10 >/dev/null
is "${PIPESTATUS[0]}" 0 "a reader of agentbox's stdout that goes away does not kill it (exit status the program's, not 141)"
is "$(rec "$T/flood/rec" stdoutBytes)" 10000000 "... the program's output is still drained and counted (stdoutBytes 10000000)"
rt state "$id" >/dev/null 2>&1
isnt $? 0 "... and the container is deleted"

# Without --max-output the capture for the record is bounded all the same (1 MiB a
# stream, as agentbox mcp's): the supervisor runs on the host, outside the sandbox's
# memory limit, and must not hold what a program floods it with (it once held six
# times the output, 2.3 GB for 400 MB), nor copies of its record (control bytes, each
# escaped as 6 characters in structuredContent and 7 in its text copy, are the
# worst case).  Its peak RSS is read from outside: the getrusage of the process we
# waited for (a sanitizer build keeps no quarantine of freed memory for it: that
# would be the sanitizer's, not agentbox's).
make_bundle "$T/huge" \
  'process.args=["/bin/sh","-c","/bin/abtest write-bytes 50000000 control; /bin/abtest stderr-bytes 20000000 control"]'
id=$(new_id)
peak=$(ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0 _ab_wrap "$PYTHON3" -c '
import os, subprocess, sys
p = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, status, ru = os.wait4(p.pid, 0)
print(os.waitstatus_to_exitcode(status), ru.ru_maxrss)' \
  "${_ab_as[@]}" "$RUNTIME" --root "$AB_STATE" run --no-stream --bundle "$T/huge" --record "$T/huge/rec" "$id")
is "${peak% *}" 0 "70 MB of control bytes with --record and no --max-output: the run exits 0"
rec_check "$T/huge/rec" '(sc["stdout"] == sc["stderr"] == "\x01" * (1 << 20) and sc["stdoutTruncated"]
  and sc["stderrTruncated"] and (sc["stdoutBytes"], sc["stderrBytes"]) == (50000000, 20000000)
  and "output" in sc["limitsHit"])'
ok $? "... the record holds the first 1 MiB of each stream, marked truncated (limitsHit output), and counts all of it"
[ "${peak#* }" -lt 65536 ]
ok $? "... and agentbox's peak RSS stayed below 64 MiB (${peak#* } KiB)"
[ "$(stat -c %s "$T/huge/rec")" -lt $((41 << 20)) ]
ok $? "... the record is within what agentbox mcp takes from a worker (40 MiB + 1 MiB for 1 MiB of output)"

# Without a pid namespace the program's background child outlives it and
# holds the output pipes open: the run ends with the program all the same.
make_bundle "$T/holder" 'process.args=["/bin/sh","-c","/bin/abtest sleep-forever & echo started"]' \
  "${NOPIDNS[@]}"
id=$(new_id)
rt run --record "$T/holder/rec" --bundle "$T/holder" "$id" </dev/null >/dev/null 2>&1
is $? 0 "a background child holding the output pipes does not keep the run from ending (0, not the harness's 124)"
is "$(rec "$T/holder/rec" stdout)" started "... and the record has the program's output"

# --no-stream keeps the output for the record only; --keep keeps the state.
make_bundle "$T/quiet" 'process.args=["/bin/abtest","echo","quiet"]'
id=$(new_id)
out=$(rt run --no-stream --keep --bundle "$T/quiet" --record "$T/quiet/rec" "$id" </dev/null 2>/dev/null)
is "$out" "" "--no-stream: none of the program's output on agentbox's stdout"
is "$(rec "$T/quiet/rec" stdout)" quiet "... all of it in the record"
is "$(state_of "$id")" stopped "--keep: the container's state outlives the run (status stopped)"
rt delete "$id"

# ---- cancel: SIGUSR1 kills everything and writes no record ---------------------------

make_bundle --out "$T/cancel" "process.args=$DAEMONIZE"
id=$(new_id)
rt run --bundle "$T/cancel" --record "$T/cancel/rec" "$id" </dev/null >/dev/null 2>&1 &
bg=$!
wait_for_file "$T/cancel/out/pid"
orphan=$(host_pid_of "$(pid_of "$id")" "$(sed -n 's/^pid=//p' "$T/cancel/out/pid")")
kill -USR1 "$(agentbox_proc run "$id")"
wait "$bg"
is $? 138 "SIGUSR1 cancels the run: agentbox exits 128+10"
[ -e "$T/cancel/rec" ] && [ ! -s "$T/cancel/rec" ]
ok $? "... and writes no record"
[ -n "$orphan" ] && ! alive "$orphan"
ok $? "... and the setsid'd grandchild is gone (host pid ${orphan:-none})"

# ---- exec: the same supervisor for a process in a running container --------------------

id=$(new_id)
rt run --default --detach --workspace "$T/ws" "$id" </dev/null >/dev/null 2>&1
ok $? "a detached default sandbox to exec into"
init=$(pid_of "$id")
rm -f "$T/ws/gpid"
rt exec --timeout 2s --timeout-grace 0 --record "$T/exec.rec" "$id" \
  /bin/sh -c '/workspace/abtest setsid-sleeper >/workspace/gpid && exec /workspace/abtest sleep-forever' \
  </dev/null >/dev/null 2>&1 &
bg=$!
wait_for_file "$T/ws/gpid"
orphan=$(host_pid_of "$init" "$(sed -n 's/^pid=//p' "$T/ws/gpid")")
wait "$bg"
is $? 137 "exec --timeout 2s exits 137"
is "$(rec "$T/exec.rec" reason)" timeout "... the record's reason is timeout"
if [ "$AB_ROOTLESS" = 1 ]; then
  # Rootless without a cgroup nothing groups an exec's processes: a daemon
  # the exec'd process left (setsid) is the container init's, and lives as
  # long as the container (its pid namespace ends it, below).
  [ -n "$orphan" ] && alive "$orphan"
  ok $? "rootless, no cgroup: the exec'd process's setsid'd grandchild stays in the container (host pid ${orphan:-none})"
else
  [ -n "$orphan" ] && ! alive "$orphan"
  ok $? "... and the exec'd process's setsid'd grandchild is gone (host pid ${orphan:-none})"
fi
[ "$(state_of "$id")" = running ] && alive "$init"
ok $? "... while the container itself keeps running"

# A child the exec'd process started with setsid is out of its process
# group, but still its descendant when the deadline comes: without a
# cgroup too, it gets the SIGTERM and is gone once exec returns.
rm -f "$T/ws/spid"
rt exec --timeout 2s --timeout-grace 5s --record "$T/exec-s.rec" "$id" \
  /bin/sh -c 'setsid /workspace/abtest sleep-forever & echo $! >/workspace/spid; wait' </dev/null >/dev/null 2>&1 &
bg=$!
wait_for_file "$T/ws/spid"
spid=$(host_pid_of "$init" "$(cat "$T/ws/spid")")
wait "$bg"
is "$?/$(rec "$T/exec-s.rec" reason)" 143/timeout "exec --timeout with a grace: the exec'd shell ends of the SIGTERM (143)"
wait_gone "$spid" 10
ok $? "... and the child it started with setsid (host pid ${spid:-none}) got it too: gone"

# A daemon the exec'd process started (setsid) that keeps the exec's output
# pipe open: once the process ended, it is killed (without a cgroup, found
# by the pipe it holds), and exec returns with the output, not when the
# daemon ends (before, rootless: never, here).
rm -f "$T/ws/dpid"
rt exec --no-stream --record "$T/exec-d.rec" "$id" /bin/sh -c \
  'setsid sh -c "echo \$\$ >/workspace/dpid; exec /workspace/abtest sleep-forever" &
   while [ ! -s /workspace/dpid ]; do sleep 0.01; done; echo started' </dev/null >/dev/null 2>&1
is "$?/$(rec "$T/exec-d.rec" stdout)" "0/started" \
  "exec returns once its process ended, though a setsid'd daemon held its output pipe"
dpid=$(cat "$T/ws/dpid" 2>/dev/null)
[ -n "$dpid" ] && [ -z "$(host_pid_of "$init" "$dpid")" ]
ok $? "... and that daemon (pid ${dpid:-none} in the sandbox) is gone"

rm -f "$T/ws/ready"
rt exec "$id" /workspace/abtest wait-signal TERM </dev/null >"$T/ws/ready" 2>/dev/null &
bg=$!
wait_for_file "$T/ws/ready"
kill -TERM "$(agentbox_proc exec "$id")"
wait "$bg"
rc=$?
like "$(cat "$T/ws/ready")" '^signal=SIGTERM$' "SIGTERM sent to agentbox exec reaches the exec'd process"
is "$rc" 0 "... and exec exits with its status, 0"
rt delete --force "$id"
if [ "$AB_ROOTLESS" = 1 ]; then
  wait_gone "$init" && wait_gone "$orphan"
  ok $? "rootless: delete --force ends the container and, with its pid namespace, that grandchild"
fi

done_testing
