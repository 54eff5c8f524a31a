#!/bin/bash
# process.terminal without --console-socket ("foreground" in runc's
# terminals.md): a foreground `run` and `exec --tty` allocate the pty in the
# container and relay it to their own stdio.  The caller's terminal here is
# a pty this test owns (pty-drive.py): the runtime is a session leader in
# its foreground group, as under a shell.  Checked from the caller's side:
# output arrives, typed input reaches the program, the program's `stty size`
# follows a resize (TIOCSWINSZ + SIGWINCH to the runtime), ^C reaches the
# program's line discipline, exit statuses pass through, and the caller's
# terminal modes are what they were.  Detached, a console socket is needed.
. "$(dirname "$0")/lib.sh"
require_runtime_commands run exec state delete
plan_later

# drive [--stdin-null] STEP... -- ARGS...: the runtime (this file's state root)
# under a fresh pty of ours; prints pty-drive.py's JSON.  Not through rt's
# timeout(1), which would put the runtime in a process group of its own,
# away from the terminal's foreground (pty-drive.py bounds every wait).
# Rootless, as rt: the runtime runs as the user (setpriv and env exec in
# place, so it stays in the terminal's foreground group).
drive ()
{
  local steps=()
  while [ "$1" != -- ]; do steps+=("$1"); shift; done
  shift
  if [ "$AB_CGROUP_WRAP" = 1 ]; then
    "$PYTHON3" "$AB_LIBDIR/pty-drive.py" "${steps[@]}" -- /usr/bin/unshare --cgroup --mount --propagation private \
      -- /bin/sh -c "$_AB_CGROOT_SH" with_own_cgroup_root "${_ab_as[@]}" "$RUNTIME" --root "$AB_STATE" "$@" 7>&-
  else
    "$PYTHON3" "$AB_LIBDIR/pty-drive.py" "${steps[@]}" -- "${_ab_as[@]}" "$RUNTIME" --root "$AB_STATE" "$@" 7>&-
  fi
}

# The dialogue: the size the program starts with, a line typed, the size
# after a resize.  The resize is waited for with a bounded loop inside (the
# SIGWINCH travels runtime -> pty -> program); EXIT is the program's status.
dialogue ()
{
  printf '%s' 'stty size; echo READY; read line; echo "got:$line"; i=0;
while [ "$(stty size)" = "31 97" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; stty size; exit '"$1"
}
STEPS=(--size 31,97 'expect=31 97\r\nREADY' raw 'send=hello\r' 'expect=got:hello' 'resize=41,123'
  'expect=got:hello.*41 123')

# check_dialogue WHAT EXIT JSON
check_dialogue ()
{
  local what=$1 want=$2 res=$3
  is "$(json_get failed <<<"$res")" null "$what: the dialogue ran to its end (failed step: none)" ||
    diag "output: $(json_get out <<<"$res")"
  like "$(json_get out <<<"$res")" '^31 97' "$what: the program's terminal starts at the caller's size (31x97)"
  is "$(json_get raw <<<"$res")" true "$what: the caller's terminal is raw while the program runs"
  like "$(json_get out <<<"$res")" 'got:hello' "$what: a typed line reaches the program's stdin"
  like "$(json_get out <<<"$res")" '41 123' "$what: stty size inside follows the caller's resize (41x123)"
  is "$(json_get rc <<<"$res")" "$want" "$what: exit status $want passed through"
  is "$(json_get restored <<<"$res")" true "$what: the caller's terminal modes are restored afterwards"
}

make_bundle "$T/b" process.terminal=true
add_stty () { ln -sf busybox "$1/rootfs/bin/stty"; }
add_stty "$T/b"

# ---- run ---------------------------------------------------------------------------------

for code in 3 0; do
  cfg "$T/b/config.json" "process.args=[\"/bin/sh\",\"-c\",$(printf '%s' "$(dialogue $code)" | "$PYTHON3" -c 'import json,sys; print(json.dumps(sys.stdin.read()))')]"
  id=$(new_id)
  res=$(drive "${STEPS[@]}" -- run --bundle "$T/b" "$id")
  check_dialogue "run (exit $code)" "$code" "$res"
  is "$(state_of "$id")" "" "run (exit $code): the container is gone afterwards"
done

# ^C is a byte in raw mode: the container's own pty turns it into SIGINT
# for its foreground group (the program waits for it with the signal
# blocked: as the init of its pid namespace it would ignore it otherwise).
cfg "$T/b/config.json" 'process.args=["/bin/abtest","wait-signal","INT"]'
res=$(drive 'expect=ready' 'send=\x03' -- run --bundle "$T/b" "$(new_id)")
like "$(json_get out <<<"$res")" 'signal=SIGINT' "run: ^C typed at the caller's terminal is SIGINT for the program"
is "$(json_get rc <<<"$res")" 0 "run: the program went on to exit 0"
is "$(json_get restored <<<"$res")" true "run: the terminal modes are restored"

# /dev/console is the program's own pty: bound from the fd of the pty, never
# from its /dev/pts/N path (which a container sharing /dev could swap).
cfg "$T/b/config.json" 'process.args=["/bin/sh","-c","c=$(stat -L -c %t:%T /dev/console); t=$(stat -L -c %t:%T /proc/self/fd/0); [ -n \"$c\" ] && [ \"$c\" = \"$t\" ] && echo console-is-the-pty || echo console-is-not:$c:$t"]'
res=$(drive 'expect=console-is' -- run --bundle "$T/b" "$(new_id)")
like "$(json_get out <<<"$res")" 'console-is-the-pty' "run: /dev/console is the device of the program's own pty"

# Without a terminal of the caller's, the relay still gives the program one.
make_bundle "$T/nt" process.terminal=true 'process.args=["/bin/sh","-c","/bin/abtest tty; echo to-stderr >&2; exit 4"]'
rt run --bundle "$T/nt" "$(new_id)" </dev/null >"$T/nt.out" 2>"$T/nt.err"
st=$?
if is_agentbox; then
  is "$st" 4 "run without a caller terminal: exit status 4 passed through"
  like "$(cat "$T/nt.out")" '^fd0_isatty=1' "run without a caller terminal: the program's stdin is still a terminal"
  like "$(cat "$T/nt.out")" '^ctty=yes' "run without a caller terminal: it is the program's controlling terminal"
  like "$(cat "$T/nt.out")" 'to-stderr' "run without a caller terminal: the program's stderr arrives on our stdout"
else
  skip "runc needs a terminal of the caller's (open /dev/tty: ENXIO); agentbox relays without one" 4
fi

if agentbox_only 3; then
  rt run --record "$T/rec.json" --max-output 4 --bundle "$T/nt" "$(new_id)" </dev/null >/dev/null 2>&1
  is $? 4 "run --record with a relayed terminal: exit status passed through"
  rec=$(json_get result.structuredContent <"$T/rec.json")
  is "$(json_get stdout <<<"$rec")" "fd0_" "run --record: the terminal's output is captured as stdout, up to --max-output"
  is "$(json_get stdoutTruncated <<<"$rec")" true "run --record: the cap on the terminal's output is reported"
fi

# ---- no terminal asked for, from a terminal -------------------------------------------------

# process.terminal false in the foreground: the program's stdio are pipes
# the runtime copies, as runc gives it, never the caller's terminal itself
# (with it, `stty raw -echo` inside would leave the caller's shell raw and
# silent).  Typed lines reach the program, ^D ends its input, the caller's
# modes are what they were.
PIPES_SH='[ -t 0 ] || echo stdin-not-tty; [ -t 1 ] || echo stdout-not-tty; [ -t 2 ] || echo stderr-not-tty >&2
stty raw -echo 2>/dev/null || echo stty-refused; echo READY; read line; echo "got:$line"; cat; echo cat-ended; exit 4'
PIPES_STEPS=('expect=READY' 'send=hello\r' 'expect=got:hello' 'send=more\r' 'expect=more\r\nmore' 'send=\x04'
  'expect=cat-ended')
# check_pipes WHAT JSON
check_pipes ()
{
  local what=$1 res=$2 out
  out=$(json_get out <<<"$res")
  is "$(json_get failed <<<"$res")" null "$what: the dialogue ran to its end (failed step: none)" || diag "output: $out"
  for w in stdin-not-tty stdout-not-tty stderr-not-tty stty-refused; do
    like "$out" "$w" "$what: the program's stdio are not the caller's terminal ($w)"
  done
  like "$out" 'got:hello' "$what: a typed line reaches the program's stdin through the pipe"
  like "$out" 'cat-ended' "$what: ^D typed at the caller's terminal ends the program's input"
  is "$(json_get rc <<<"$res")" 4 "$what: exit status 4 passed through"
  is "$(json_get restored <<<"$res")" true "$what: the caller's terminal modes are untouched"
}
make_bundle "$T/pipes" process.terminal=false "process.args=[\"/bin/sh\",\"-c\",$(printf '%s' "$PIPES_SH" |
  "$PYTHON3" -c 'import json,sys; print(json.dumps(sys.stdin.read()))')]"
add_stty "$T/pipes"
add_cat () { ln -sf busybox "$1/rootfs/bin/cat"; }
add_cat "$T/pipes"
id=$(new_id)
res=$(drive "${PIPES_STEPS[@]}" -- run --bundle "$T/pipes" "$id")
check_pipes "run without process.terminal" "$res"
is "$(state_of "$id")" "" "run without process.terminal: the container is gone afterwards"

if agentbox_only 5; then
  # The built-in sandbox: pipes too, unless --tty asks for a terminal of its own.
  res=$(drive "${PIPES_STEPS[@]}" -- run --default "$(new_id)" -- /bin/sh -c "$PIPES_SH")
  is "$(json_get rc <<<"$res"):$(json_get failed <<<"$res")" "4:null" "run --default from a terminal: the dialogue ran, exit 4"
  like "$(json_get out <<<"$res" | tr '\r\n' '  ')" 'stdin-not-tty.*stdout-not-tty.*stty-refused.*got:hello.*cat-ended' \
    "run --default: the program's stdio are pipes, typed input and ^D reach it"
  res=$(drive 'expect=READY' 'send=hello\r' 'expect=got:hello' -- run --default --tty "$(new_id)" -- /bin/sh -c \
    '[ -t 0 ] && [ -t 1 ] && echo stdio-tty; stty size; echo READY; read line; echo "got:$line"')
  is "$(json_get rc <<<"$res"):$(json_get failed <<<"$res")" "0:null" "run --default --tty: the dialogue ran, exit 0"
  like "$(json_get out <<<"$res" | tr '\r\n' '  ')" 'stdio-tty.*24 80' "run --default --tty: the program has a terminal, at the caller's size"
  err=$(rt run --tty --bundle "$T/pipes" "$(new_id)" </dev/null 2>&1)
  like "$?:$err" "^2:.*--tty is an option of --default" "run --tty with a bundle is a usage error (exit 2)"
fi

# ---- detached: a console socket is required (runc refuses the same) ------------------------

id=$(new_id)
err=$(rt run -d --bundle "$T/b" "$id" </dev/null 2>&1 >/dev/null)
isnt $? 0 "run -d with process.terminal and no --console-socket is refused"
like "$err" 'console.socket' "run -d: the error names the console socket"
is "$(state_of "$id")" "" "run -d refused: no container is left"

# ---- exec --tty ----------------------------------------------------------------------------

make_bundle "$T/x" 'process.args=["/bin/abtest","sleep-forever"]'
add_stty "$T/x"; add_cat "$T/x"
cid=$(new_id)
rt run -d --bundle "$T/x" "$cid" </dev/null >/dev/null 2>&1
ok $? "a container to exec into"
pid=$(pid_of "$cid")
consoles=$(grep -c ' /dev/console ' "/proc/$pid/mountinfo")
for code in 5 0; do
  res=$(drive "${STEPS[@]}" -- exec -t "$cid" /bin/sh -c "$(dialogue $code)")
  check_dialogue "exec -t (exit $code)" "$code" "$res"
done
# As runc: only the init's terminal is bound on /dev/console, an exec's is not.
is "$(grep -c ' /dev/console ' "/proc/$pid/mountinfo")" "$consoles" \
  "exec -t stacks no mount on the container's /dev/console (seen in its mountinfo from the host)"
err=$(rt exec -t -d "$cid" /bin/true </dev/null 2>&1 >/dev/null)
isnt $? 0 "exec -t -d without --console-socket is refused"
like "$err" 'console.socket' "exec -t -d: the error names the console socket"
res=$(drive "${PIPES_STEPS[@]}" -- exec "$cid" /bin/sh -c "$PIPES_SH")
check_pipes "exec without --tty" "$res"
rt delete --force "$cid"

done_testing
