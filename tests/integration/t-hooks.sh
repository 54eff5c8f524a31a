#!/bin/bash
# OCI hooks (config.md "POSIX-platform Hooks", runtime.md "Lifecycle"): all
# six kinds, in order, each with the state on stdin, its own args and env,
# in the namespace the spec gives it; failures and timeouts of create-time
# hooks undo the create; a failing poststop hook is only a warning.
#
# One recording hook script serves every kind: it saves its stdin, argv
# (/proc/$$/cmdline), environment (/proc/$$/environ: exactly what execve
# got), mount namespace, mount table and root, and appends its kind to a
# shared order file.  The host-side hooks run it from the host, the
# startContainer hook from inside the container (the same script, copied
# into the rootfs), all writing to the bundle's out directory (/out inside).
. "$(dirname "$0")/lib.sh"
require_runtime_commands create start state kill delete
plan_later

cat >"$T/hook.sh" <<'EOF'
#!/bin/sh
# hook.sh KIND OUTDIR [EXTRA...]: record what this hook sees.  The files of
# /proc/self are opened by the shell's forked child before it execs cat:
# same argv, environment and namespaces as the hook itself.  (Not
# /proc/$$: before pivot_root a createContainer hook sees the host's /proc,
# where its pid in the container's pid namespace is someone else's.)
kind=$1
out=$2
/bin/cat >"$out/$kind.state"
/bin/cat </proc/self/cmdline >"$out/$kind.cmdline"
/bin/cat </proc/self/environ >"$out/$kind.environ"
/bin/readlink /proc/self/ns/mnt >"$out/$kind.mntns"
/bin/cat </proc/self/mountinfo >"$out/$kind.mountinfo"
/bin/stat -L -c %d:%i / >"$out/$kind.root"
echo "$kind" >>"$out/order"
EOF
chmod 0755 "$T/hook.sh"

# hook_json KIND DIR: the hook entry that runs hook.sh for KIND, writing to DIR.
hook_json ()
{
  local script=$T/hook.sh
  [ "$1" = startContainer ] && script=/hook.sh
  printf '[{"path":"/bin/sh","args":["sh","%s","%s","%s","two words"],"env":["HOOKVAR=%s-value"],"timeout":20}]' \
    "$script" "$1" "$2" "$1"
}

make_bundle --out "$T/b" 'process.args=["/bin/abtest","sleep-forever"]'
cp "$T/hook.sh" "$T/b/rootfs/hook.sh"
o=$T/b/out
cfg "$T/b/config.json" \
  "hooks.prestart=$(hook_json prestart "$o")" \
  "hooks.createRuntime=$(hook_json createRuntime "$o")" \
  "hooks.createContainer=$(hook_json createContainer "$o")" \
  "hooks.startContainer=$(hook_json startContainer /out)" \
  "hooks.poststart=$(hook_json poststart "$o")" \
  "hooks.poststop=$(hook_json poststop "$o")"

id=$(new_id)
rt create --bundle "$T/b" "$id" </dev/null >"$T/b/stdout" 2>"$T/b/stderr"
ok $? "create with all six kinds of hooks succeeds"
pid=$(pid_of "$id")
is "$(cat "$o/order" 2>/dev/null | tr '\n' ' ')" "prestart createRuntime createContainer " \
  "create runs prestart, createRuntime and createContainer, in that order"
rt start "$id"
ok $? "start succeeds"
wait_for_file "$o/poststart.state" 10
is "$(cat "$o/order" 2>/dev/null | tr '\n' ' ')" "prestart createRuntime createContainer startContainer poststart " \
  "start runs startContainer, then poststart"
cmask=$(readlink "/proc/$pid/ns/mnt")
rt kill "$id" KILL && wait_for_status "$id" stopped
rt delete "$id"
ok $? "delete of the stopped container succeeds"
is "$(cat "$o/order" 2>/dev/null | tr '\n' ' ')" \
  "prestart createRuntime createContainer startContainer poststart poststop " "delete runs poststop last"

# ---- the state on stdin --------------------------------------------------------------------

state_field () { json_get "$2" <"$o/$1.state" 2>/dev/null; }
for kind in prestart createRuntime createContainer startContainer poststart poststop; do
  is "$(state_field $kind id)" "$id" "the $kind hook gets the OCI state on stdin (id $id)"
done
# runtime.md: "creating" is step 2 of the lifecycle; these hooks are steps
# 3 to 5, after the environment is created.
is "$(state_field prestart status)" created "prestart sees status created (runtime.md: after step 2)"
is "$(state_field createRuntime status)" created "createRuntime sees status created"
is "$(state_field createContainer status)" created "createContainer sees status created"
is "$(state_field startContainer status)" created "startContainer sees status created (start was called, the program not yet run)"
is "$(state_field poststart status)" running "poststart sees status running"
is "$(state_field poststop status)" stopped "poststop sees status stopped"
is "$(state_field prestart bundle)" "$T/b" "the state names the bundle"
for kind in prestart createRuntime poststart; do
  is "$(state_field $kind pid)" "$pid" "$kind (runtime namespace) gets the pid as the host sees it ($pid)"
done
for kind in createContainer startContainer; do
  is "$(state_field $kind pid)" 1 "$kind (container namespace) gets the pid as the container sees it (1)"
done

# ---- args and env ------------------------------------------------------------------------------

for kind in createRuntime createContainer startContainer poststop; do
  dir=$o
  [ $kind = startContainer ] && dir=/out
  script=$T/hook.sh
  [ $kind = startContainer ] && script=/hook.sh
  is "$(tr '\0' '|' <"$o/$kind.cmdline" 2>/dev/null)" "sh|$script|$kind|$dir|two words|" \
    "the $kind hook runs with exactly its configured args"
  is "$(tr '\0' '|' <"$o/$kind.environ" 2>/dev/null)" "HOOKVAR=$kind-value|" \
    "the $kind hook gets exactly its configured env (nothing of the runtime's)"
done

# ---- namespaces ----------------------------------------------------------------------------------

hostmnt=$(readlink /proc/self/ns/mnt)
for kind in prestart createRuntime poststart poststop; do
  if [ "$AB_CGROUP_WRAP" = 1 ]; then
    skip "the runtime runs in the cgroup wrapper's private mount namespace, not the host's"
    continue
  fi
  is "$(cat "$o/$kind.mntns" 2>/dev/null)" "$hostmnt" "the $kind hook runs in the host's mount namespace"
done
[ -n "$cmask" ] && [ "$cmask" != "$hostmnt" ]
ok $? "the container had a mount namespace of its own ($cmask)"
is "$(cat "$o/createContainer.mntns" 2>/dev/null)" "$cmask" "the createContainer hook runs in the container's mount namespace"
like "$(cat "$o/createContainer.mountinfo" 2>/dev/null)" "^[0-9]+ [0-9]+ [0-9:]+ [^ ]+ $T/b/rootfs/proc " \
  "... before pivot_root: it sees the container's /proc mounted at $T/b/rootfs/proc"
is "$(cat "$o/startContainer.mntns" 2>/dev/null)" "$cmask" "the startContainer hook runs in the container's mount namespace"
is "$(cat "$o/startContainer.root" 2>/dev/null)" "$(stat -c %d:%i "$T/b/rootfs")" \
  "... inside the container's root: its / is the bundle's rootfs"
mpoints=$(awk '{ print $5 }' "$o/startContainer.mountinfo" 2>/dev/null)
like "$mpoints" '^/$' "... after pivot_root: its mount table has the root at /"
unlike "$mpoints" "^$T" "... and no mount point under the host's $T"
is "$(cat "$o/createRuntime.root" 2>/dev/null)" "$(stat -c %d:%i /)" "the createRuntime hook's / is the host's"

# ---- hooks without env --------------------------------------------------------------------------

# As runc: a hook on the host without "env" gets the runtime's own
# environment; one in the container's namespaces gets the container
# process's (process.env), never the caller's variables.  "env": [] is an
# empty environment anywhere.
b=$T/noenv
make_bundle --out "$b" 'process.args=["/bin/abtest","sleep-forever"]'
cp "$T/hook.sh" "$b/rootfs/hook.sh"
o2=$b/out
for kind in prestart createRuntime createContainer startContainer poststart poststop; do
  dir=$o2 script=$T/hook.sh
  [ $kind = startContainer ] && dir=/out script=/hook.sh
  cfg "$b/config.json" "hooks.$kind=[{\"path\":\"/bin/sh\",\"args\":[\"sh\",\"$script\",\"$kind\",\"$dir\"]}]"
done
probe="AB_HOOK_PROBE=from-the-runtime-$$"
id=$(new_id)
env "$probe" "$RUNTIME" --root "$AB_STATE" create --bundle "$b" "$id" </dev/null >/dev/null 2>&1 7>&- &&
  env "$probe" "$RUNTIME" --root "$AB_STATE" start "$id" 7>&-
wait_for_file "$o2/poststart.state" 10
rt kill "$id" KILL && wait_for_status "$id" stopped
env "$probe" "$RUNTIME" --root "$AB_STATE" delete "$id" 7>&-
for kind in prestart createRuntime poststart poststop; do
  environ=$(tr '\0' '\n' <"$o2/$kind.environ" 2>/dev/null)
  like "$environ" "^$probe\$" "the $kind hook without env gets the runtime's environment"
  if is_agentbox; then
    unlike "$environ" '^AGENTBOX_EXE=' "... less what agentbox set for itself"
  fi
done
for kind in createContainer startContainer; do
  environ=$(tr '\0' '\n' <"$o2/$kind.environ" 2>/dev/null)
  like "$environ" "^$(cfg "$b/config.json" --get process.env | json_get 0)\$" "the $kind hook without env gets process.env"
  unlike "$environ" "^AB_HOOK_PROBE=" "... and nothing of the caller's"
done
cfg "$b/config.json" 'hooks.createRuntime[0].env=[]' '!hooks.prestart' '!hooks.createContainer' '!hooks.startContainer' \
  '!hooks.poststart' '!hooks.poststop'
rm -f "$o2/createRuntime.environ"
id=$(new_id)
env "$probe" "$RUNTIME" --root "$AB_STATE" create --bundle "$b" "$id" </dev/null >/dev/null 2>&1 7>&-
is "$(tr '\0' '|' <"$o2/createRuntime.environ" 2>&1)" "" "a hook with \"env\": [] gets an empty environment"
rt delete --force "$id"

# ---- failing and hanging create-time hooks ----------------------------------------------------------

# nothing_of ID BUNDLE: no state, no cgroup, no process in the bundle's rootfs.
nothing_of ()
{
  local p
  rt state "$1" >/dev/null 2>&1 && return 1
  [ -n "$(find /sys/fs/cgroup -name "*$1*" -print -quit 2>/dev/null)" ] && return 1
  for p in /proc/[0-9]*; do
    [ "$(stat -L -c %d:%i "$p/root" 2>/dev/null)" = "$(stat -c %d:%i "$2/rootfs")" ] && return 1
  done
  return 0
}

make_bundle "$T/fail" 'process.args=["/bin/abtest","sleep-forever"]' \
  'hooks.createRuntime=[{"path":"/bin/sh","args":["sh","-c","echo hook refuses on purpose >&2; exit 3"]}]'
id=$(new_id)
err=$(rt create --bundle "$T/fail" "$id" </dev/null 2>&1 >/dev/null)
isnt $? 0 "a failing createRuntime hook fails create"
if agentbox_only 3; then
  like "$err" 'createRuntime' "the error names the createRuntime hook"
  like "$err" 'hooks\.createRuntime\[0\].*status 3' "... by index, with its exit status"
  like "$err" 'hook refuses on purpose' "... and the last line of its stderr"
fi
nothing_of "$id" "$T/fail"
ok $? "the failed create leaves no state, cgroup or process behind"

mkdir -p "$T/hang"
make_bundle "$T/hang" 'process.args=["/bin/abtest","sleep-forever"]' \
  "hooks.createRuntime=[{\"path\":\"/bin/sh\",\"args\":[\"sh\",\"-c\",\"sleep 1000 & echo \$! >$T/hang/child.pid; exec sleep 1000\"],\"timeout\":1}]"
id=$(new_id)
err=$(rt create --bundle "$T/hang" "$id" </dev/null 2>&1 >/dev/null)
isnt $? 0 "a createRuntime hook that hangs past its 1 s timeout fails create"
like "$err" 'timed out|timeout' "the error says the hook timed out"
if agentbox_only; then
  like "$err" 'hooks\.createRuntime\[0\].*timed out after 1 s' "... naming the hook and its timeout"
fi
child=$(cat "$T/hang/child.pid" 2>/dev/null)
wait_gone "$child" 10
ok $? "the hook's own child process (host pid ${child:-none}) is killed too"
nothing_of "$id" "$T/hang"
ok $? "the timed-out create leaves no state, cgroup or process behind"

# A child the hook moved out of its process group (setsid) is no escape:
# on a timeout or a failure, what the hook started and left is killed too.
if agentbox_only 5; then
  mkdir -p "$T/setsid"
  make_bundle "$T/setsid" 'process.args=["/bin/abtest","sleep-forever"]' \
    "hooks.createRuntime=[{\"path\":\"/bin/sh\",\"args\":[\"sh\",\"-c\",\"setsid sh -c 'echo \$\$ >$T/setsid/child.pid; exec sleep 1001' & sleep 1002\"],\"timeout\":2}]"
  id=$(new_id)
  err=$(rt create --bundle "$T/setsid" "$id" </dev/null 2>&1 >/dev/null)
  is "$?:$err" "1:agentbox: hooks.createRuntime[0] (/bin/sh): timed out after 2 s" \
    "a hook that hangs after a setsid child fails create, one line without an errno's text"
  child=$(cat "$T/setsid/child.pid" 2>/dev/null)
  [ -n "$child" ] && wait_gone "$child" 10
  ok $? "... and the setsid child (host pid ${child:-none}), out of the hook's process group, is killed too"
  nothing_of "$id" "$T/setsid"
  ok $? "... leaving nothing behind"
  rm -f "$T/setsid/child.pid"
  cfg "$T/setsid/config.json" \
    "hooks.createRuntime[0].args=[\"sh\",\"-c\",\"setsid sh -c 'echo \$\$ >$T/setsid/child.pid; exec sleep 1001' & sleep 0.3; exit 4\"]"
  id=$(new_id)
  rt create --bundle "$T/setsid" "$id" </dev/null >/dev/null 2>&1
  child=$(cat "$T/setsid/child.pid" 2>/dev/null)
  [ -n "$child" ] && wait_gone "$child" 10
  ok $? "a hook that fails (exit 4) leaves no setsid child either (host pid ${child:-none})"
fi

make_bundle "$T/nohook" 'process.args=["/bin/abtest","sleep-forever"]' \
  'hooks.prestart=[{"path":"/nonexistent/hook"}]'
id=$(new_id)
err=$(rt create --bundle "$T/nohook" "$id" </dev/null 2>&1 >/dev/null)
isnt $? 0 "a prestart hook that does not exist fails create"
if agentbox_only; then
  like "$err" 'hooks\.prestart\[0\].*/nonexistent/hook.*No such file' "... naming the hook, its path and ENOENT"
fi
nothing_of "$id" "$T/nohook"
ok $? "... leaving nothing behind"

# create killed with SIGKILL while its createRuntime hook runs: the hook
# must not outlive it, and delete --force removes what create had made.
mkdir -p "$T/killed"
make_bundle "$T/killed" 'process.args=["/bin/abtest","sleep-forever"]' \
  "hooks.createRuntime=[{\"path\":\"/bin/sh\",\"args\":[\"sh\",\"-c\",\"echo \$\$ >$T/killed/hook.pid; exec sleep 1000\"]}]"
id=$(new_id)
rt create --bundle "$T/killed" "$id" </dev/null >/dev/null 2>&1 &
wait_for_file "$T/killed/hook.pid"
hook=$(cat "$T/killed/hook.pid" 2>/dev/null)
runtime_pid=$(ppid_of "$hook")
ok "$([ -n "$runtime_pid" ] && kill -KILL "$runtime_pid"; echo $?)" "create is killed with SIGKILL during its hook (runtime pid ${runtime_pid:-none})"
wait
if agentbox_only; then
  wait_gone "$hook" 10
  ok $? "the hook (host pid ${hook:-none}) dies with it"
fi
rt delete --force "$id"
is $? 0 "delete --force of the half-created container succeeds"
nothing_of "$id" "$T/killed"
ok $? "... leaving no state, cgroup or process behind"
[ -n "$hook" ] && kill -KILL "$hook" 2>/dev/null

# The container process killed from outside while its createContainer hook
# runs: run fails as a setup failure that says so, not a socket error.
if agentbox_only 3; then
  # (before pivot_root: the hook sees the host's paths in the new mount namespace)
  mkdir -p "$T/killcc"
  make_bundle "$T/killcc" 'process.args=["/bin/abtest","sleep-forever"]' \
    "hooks.createContainer=[{\"path\":\"/bin/sh\",\"args\":[\"sh\",\"-c\",\"echo x >$T/killcc/hook; exec sleep 1$$\"]}]"
  id=$(new_id)
  rt run --bundle "$T/killcc" "$id" </dev/null >/dev/null 2>"$T/killcc/err" &
  runner=$!
  wait_for_file "$T/killcc/hook"
  # state waits for create's lock: the container process is the hook's parent.
  hookpid=$(pgrep -x -f "sleep 1$$")
  kill -KILL "$(ppid_of "$hookpid")"
  wait "$runner"
  is $? 125 "run exits 125 (setup failed) when the container is killed during its setup"
  like "$(cat "$T/killcc/err")" 'killed by SIGKILL before the program ran' "... and says the container process was killed"
  nothing_of "$id" "$T/killcc"
  ok $? "... leaving nothing behind"
fi

# A createContainer hook runs inside the container's setup: failing there too undoes everything.
make_bundle "$T/failcc" 'process.args=["/bin/abtest","sleep-forever"]' \
  'hooks.createContainer=[{"path":"/bin/false"}]'
id=$(new_id)
err=$(rt create --bundle "$T/failcc" "$id" </dev/null 2>&1 >/dev/null)
isnt $? 0 "a failing createContainer hook fails create"
if agentbox_only; then
  like "$err" 'hooks\.createContainer\[0\]' "... and the error names it"
fi
nothing_of "$id" "$T/failcc"
ok $? "... leaving nothing behind"

# ---- a failing poststop hook ---------------------------------------------------------------------------

mkdir -p "$T/pstop-out"
make_bundle "$T/pstop" 'process.args=["/bin/abtest","sleep-forever"]' \
  "hooks.poststop=[{\"path\":\"/bin/sh\",\"args\":[\"sh\",\"-c\",\"echo poststop complains >&2; exit 1\"]},{\"path\":\"/bin/sh\",\"args\":[\"sh\",\"-c\",\"echo second >$T/pstop-out/second\"]}]"
id=$(new_id)
rt create --bundle "$T/pstop" "$id" </dev/null >/dev/null 2>&1 && rt start "$id"
rt kill "$id" KILL && wait_for_status "$id" stopped
err=$(rt delete "$id" 2>&1)
is $? 0 "a failing poststop hook does not fail delete"
like "$err" 'poststop' "... it is reported as a warning naming the hook"
rt state "$id" >/dev/null 2>&1
isnt $? 0 "... and the container is gone"
is "$(cat "$T/pstop-out/second" 2>/dev/null)" second "... and the poststop hook after it still ran (runtime.md: the remaining hooks continue)"



# ---- a foreground run canceled (SIGUSR1) during its setup -----------------------------------------

# The caller gives up while a prestart hook hangs: the hook is killed, the
# create undone, the program never runs, and run exits 138 (cancel) at
# once, not when the hook's timeout ends.  And when the cancel comes just
# before the start (a hook that sends it, then exits 0), the program
# does not run either.
# during_hook NAME SIG HOOKCMD PROGRAM CMD: the bundle NAME (its out
# directory at /out) runs PROGRAM (JSON args) with HOOKCMD as its prestart
# hook; the runtime's CMD (run or create) of it is sent SIG once the hook
# wrote NAME/hook.pid (none: the hook sends its own) and waited for, 30 s
# at most.  Prints the exit status, or "timeout" (then it is killed);
# NAME/err has its stderr.
during_hook ()
{
  local d=$T/$1 sig=$2 runner st=timeout i
  make_bundle --out "$d" "process.args=$4" \
    "hooks.prestart=[{\"path\":\"/bin/sh\",\"args\":[\"sh\",\"-c\",\"$3\"],\"timeout\":120}]"
  # (the runtime itself, not rt's wrappers: $! is the process signalled)
  "$RUNTIME" --root "$AB_STATE" "$5" --bundle "$d" "$id" </dev/null >/dev/null 2>"$d/err" &
  runner=$!
  wait_for_file "$d/hook.pid"
  [ "$sig" = none ] || kill "-$sig" "$runner" 2>/dev/null
  for ((i = 0; i < 300; i++)); do
    kill -0 "$runner" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$runner" 2>/dev/null; then
    kill -KILL "$runner"
    wait "$runner" 2>/dev/null
  else
    wait "$runner"
    st=$?
  fi
  echo "$st"
}
# run_canceled NAME SIG HOOKCMD: a run of a program that writes /out/ran;
# prints "status ran" or "status not-run".
run_canceled ()
{
  echo "$(during_hook "$1" "$2" "$3" '["/bin/abtest","touch","/out/ran"]' run)" \
    "$([ -e "$T/$1/out/ran" ] && echo ran || echo not-run)"
}
if agentbox_only 6; then
  id=$(new_id)
  is "$(run_canceled cancel USR1 "echo \$\$ >$T/cancel/hook.pid; exec sleep 60")" "138 not-run" \
    "a run canceled while its prestart hook hangs exits 138 at once, and its program never runs"
  hook=$(cat "$T/cancel/hook.pid" 2>/dev/null)
  wait_gone "$hook"
  ok $? "... the hook (host pid ${hook:-none}) is killed"
  is "$(cat "$T/cancel/err")" "" "... and nothing is said on stderr: the caller asked for it"
  nothing_of "$id" "$T/cancel"
  ok $? "... leaving nothing behind"

  id=$(new_id)
  is "$(run_canceled cancel-late none "echo \$\$ >$T/cancel-late/hook.pid; kill -USR1 \$PPID")" "138 not-run" \
    "a run canceled by a hook that then succeeds: its program never runs either"
  nothing_of "$id" "$T/cancel-late"
  ok $? "... leaving nothing behind"
fi


# ---- a detached create interrupted (SIGTERM, SIGINT, SIGHUP) -----------------------------------------

# create told to stop while its prestart hook hangs: the hook is killed,
# the create undone, exit 128 + the signal with one line; and told to stop
# by a hook that then succeeds (the container is made): it is deleted.
create_interrupted () { during_hook "$1" "$2" "$3" '["/bin/abtest","sleep-forever"]' create; }
if agentbox_only 7; then
  id=$(new_id)
  is "$(create_interrupted intr TERM "echo \$\$ >$T/intr/hook.pid; exec sleep 60")" 143 \
    "create sent SIGTERM while its prestart hook hangs exits 143 at once"
  is "$(cat "$T/intr/err")" "agentbox: create \`$id\`: interrupted by SIGTERM; nothing of it is left" \
    "... saying so in one line"
  hook=$(cat "$T/intr/hook.pid" 2>/dev/null)
  wait_gone "$hook"
  ok $? "... the hook (host pid ${hook:-none}) is killed"
  nothing_of "$id" "$T/intr"
  ok $? "... leaving nothing behind"

  id=$(new_id)
  is "$(create_interrupted intr-late none "echo \$\$ >$T/intr-late/hook.pid; kill -INT \$PPID")" 130 \
    "create interrupted (SIGINT) by a hook that then succeeds exits 130"
  rt state "$id" >/dev/null 2>&1
  isnt $? 0 "... and the container it made is deleted"
  nothing_of "$id" "$T/intr-late"
  ok $? "... leaving nothing behind"
fi

done_testing
