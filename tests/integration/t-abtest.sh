#!/bin/bash
# The abtest helper on the host, checked against what the host says (so the
# container suites can trust what it prints).  Needs no runtime; namespaces
# come from unshare(1).
AB_NO_RUNTIME=1
. "$(dirname "$0")/lib.sh"
plan_later

A=$ABTEST
[ -x "$A" ] || bail_out "abtest not built"

# ---- exit statuses -----------------------------------------------------------------

"$A" true
is $? 0 "true exits 0"
"$A" false
is $? 1 "false exits 1"
"$A" exit 42
is $? 42 "exit 42 exits 42"
"$A" kill-self TERM
is $? 143 "kill-self TERM dies of SIGTERM"
"$A" nosuchcommand 2>/dev/null
is $? 2 "an unknown command is a usage error (2)"
"$A" exit 2>/dev/null
is $? 2 "a missing argument is a usage error (2)"
unshare --pid --fork "$A" kill-self SEGV
is $? 139 "kill-self SEGV kills even pid 1 of a pid namespace (a real fault)"
out=$(unshare --pid --fork "$A" kill-self TERM)
is "$?:$out" "1:survived" "kill-self TERM as pid 1: the kernel ignores it, abtest says survived and exits 1"

# ---- files ------------------------------------------------------------------------

is "$("$A" echo a 'b c')" "a b c" "echo joins its arguments"
is "$("$A" write "$T/f" hello)" "ok" "write reports ok"
is "$("$A" cat "$T/f")" "hello" "cat prints what write wrote"
is "$("$A" cat "$T/missing"; echo "rc=$?")" "$(printf 'ENOENT\nrc=1')" "cat of a missing file prints ENOENT and exits 1"
st=$("$A" stat /dev/null)
like "$st" '^type=char$' "stat: /dev/null is a char device"
like "$st" '^rdev=1:3$' "stat: /dev/null is 1:3"
like "$st" "^ino=$(stat -c %i /dev/null)$" "stat: the inode matches stat(1)"
like "$("$A" stat "$T")" "^mode=$(stat -c %04a "$T")$" "stat: the mode matches stat(1)"
mkdir "$T/d" && touch "$T/d/b" "$T/d/a" "$T/d/c"
is "$("$A" ls "$T/d")" "$(printf 'a\nb\nc')" "ls lists names sorted, without . and .."
ln -s /target/x "$T/l"
is "$("$A" readlink "$T/l")" "/target/x" "readlink prints the target"
is "$("$A" mkdir "$T/m" 0700)" "ok" "mkdir reports ok"
is "$(stat -c %a "$T/m")" "700" "mkdir honours the mode"
is "$("$A" mkdir "$T/m")" "EEXIST" "mkdir of an existing directory prints EEXIST"
"$A" touch "$T/t" >/dev/null && [ -f "$T/t" ]
ok $? "touch creates the file"

# ---- byte streams --------------------------------------------------------------

is "$("$A" write-bytes 100000 | wc -c)" "100000" "write-bytes writes exactly N bytes"
"$A" write-bytes 70000 binary >"$T/b1"
"$A" write-bytes 70000 binary >"$T/b2"
cmp -s "$T/b1" "$T/b2"
ok $? "write-bytes binary is deterministic (tests can regenerate it)"
is "$(tr -d '\000' <"$T/b1" | wc -c | awk '{ print ($1 < 70000) }')" "1" "write-bytes binary includes NUL bytes"
is "$("$A" stderr-bytes 1234 2>&1 >/dev/null | wc -c)" "1234" "stderr-bytes writes N bytes to stderr"
is "$("$A" stderr-bytes 1234 2>/dev/null | wc -c)" "0" "stderr-bytes writes nothing to stdout"
is "$(head -c 300000 /dev/zero | "$A" read-stdin)" "bytes=300000" "read-stdin counts its input"

# ---- process view ------------------------------------------------------------------

status=$("$A" status)
for k in Uid Gid Groups CapInh CapPrm CapEff CapBnd CapAmb NoNewPrivs Seccomp; do
  like "$status" "^$k=" "status reports $k"
done
like "$status" "^CapBnd=$(awk '$1 == "CapBnd:" { print $2 }' /proc/self/status)$" "status: CapBnd matches the host's"
is "$(setpriv --no-new-privs "$A" status | sed -n 's/^NoNewPrivs=//p')" "1" "status: NoNewPrivs shows no_new_privs"
ns=$("$A" ns)
like "$ns" "^net=$(stat -L -c %i /proc/self/ns/net)$" "ns: net matches the host's net namespace inode"
ns2=$(unshare --net --uts "$A" ns)
like "$ns2" '^net=[0-9]+$' "ns: prints the net inode in a new namespace too"
unlike "$ns2" "^(net=$(stat -L -c %i /proc/self/ns/net)|uts=$(stat -L -c %i /proc/self/ns/uts))$" \
  "ns: unshare --net --uts shows new net and uts inodes"
is "$(cd "$T/d" && "$A" cwd | head -1)" "cwd=$T/d" "cwd prints getcwd"
like "$(cd "$T/d" && "$A" cwd)" "^ino=$(stat -c %i "$T/d")$" "cwd prints the inode of ."
fds=$("$A" fds </dev/null 2>/dev/null 3<"$T/f" 4>&-)
like "$fds" "^3=$T/f$" "fds lists an inherited fd with its target"
like "$fds" "^0=/dev/null$" "fds lists stdin"
is "$(env -i A=b "$A" env)" "A=b" "env prints exactly the environment"
is "$("$A" getuid | head -1)" "uid=0" "getuid prints the uid"
is "$(unshare --uts sh -c "hostname abtest-uts && '$A' hostname")" "abtest-uts" "hostname prints the UTS nodename"
is "$(unshare --uts sh -c "domainname abtest-dom && '$A' domainname")" "abtest-dom" "domainname prints the NIS domain"
like "$(bash -c "ulimit -n 77; '$A' rlimits")" '^RLIMIT_NOFILE=77:77$' "rlimits prints soft:hard"
like "$(bash -c "ulimit -c unlimited; '$A' rlimits")" '^RLIMIT_CORE=unlimited:unlimited$' "rlimits prints unlimited"
like "$(bash -c "trap '' USR1; exec '$A' sigmask")" '^ignored=.*SIGUSR1' "sigmask reports an ignored signal"
is "$("$A" tty </dev/null | head -1)" "fd0_isatty=0" "tty: /dev/null is not a tty"
pidns=$(unshare --pid --fork "$A" pidns)
like "$pidns" '^pid=1$' "pidns: pid 1 in a new pid namespace"
like "$pidns" '^NSpid=[0-9]+ 1$' "pidns: NSpid shows the host pid and 1"

# ---- processes -------------------------------------------------------------------

out=$(unshare --pid --fork "$A" forkbomb 20)
like "$out" '^forks=20$' "forkbomb forks up to its MAX"
is "$(unshare --pid --fork "$A" threads 8)" "$(printf 'threads=8\nerrno=none')" "threads starts N threads"
is "$("$A" memhog 16)" "touched_mb=16" "memhog touches N MiB"
out=$("$A" setsid-sleeper)
pid=${out#pid=}
[ "$(ps -o sid= -p "$pid" | tr -d ' ')" != "$(ps -o sid= -p $$ | tr -d ' ')" ] &&
  [ "$(ps -o ppid= -p "$pid" | tr -d ' ')" != $$ ]
ok $? "setsid-sleeper leaves a sleeper in another session that is not our child"
like "$(ls -l /proc/"$pid"/fd/)" '-> /dev/null' "the sleeper's stdio is /dev/null (it holds no pipe of the caller)"
kill -KILL "$pid"
wait_gone "$pid"
out=$("$A" orphan-writer "$T/orphan" 300)
pid=${out#pid=}
like "$out" '^pid=[0-9]+$' "orphan-writer returns at once with the worker's pid"
wait_for_file "$T/orphan"
is "$(cat "$T/orphan")" "written" "the orphan writes its file after the caller is gone"
wait_gone "$pid"
mkfifo "$T/fifo"
"$A" wait-signal USR1 >"$T/ws" 2>&1 &
ws=$!
wait_for_file "$T/ws"
kill -USR1 "$ws"
wait "$ws"
is "$?:$(tr '\n' ' ' <"$T/ws")" "0:ready signal=SIGUSR1 sender_pid=$$ " "wait-signal prints the signal and its sender"

# ---- network (in a private network namespace) --------------------------------------

net=$(unshare --net sh -c "ip link set lo up &&
  '$A' connect tcp 127.0.0.1 9; '$A' connect tcp 192.0.2.1 80; '$A' connect udp 127.0.0.1 9;
  '$A' ping4 127.0.0.1; '$A' ping6 ::1; '$A' ping4 192.0.2.1" 2>&1)
is "$net" "$(printf 'ECONNREFUSED\nENETUNREACH\nok\nok\nok\nENETUNREACH')" \
  "connect and ping print ok or the errno name (refused, unreachable, loopback echo)"

# ---- privileged probes --------------------------------------------------------------

is "$(unshare --mount "$A" try-mount /tmp)" "ok" "try-mount succeeds with CAP_SYS_ADMIN"
nocaps=(setpriv --inh-caps=-all --ambient-caps=-all --bounding-set=-all)
is "$("${nocaps[@]}" "$A" try-mount /tmp; echo "rc=$?")" "$(printf 'EPERM\nrc=1')" \
  "try-mount without capabilities prints EPERM and exits 1"
is "$("${nocaps[@]}" "$A" try-sethostname)" "EPERM" "try-sethostname without CAP_SYS_ADMIN is refused"
is "$("${nocaps[@]}" "$A" try-chroot)" "EPERM" "try-chroot without CAP_SYS_CHROOT is refused"
like "$("${nocaps[@]}" "$A" try-unshare)" '^mnt=EPERM$' "try-unshare: a mount namespace needs CAP_SYS_ADMIN"
like "$("${nocaps[@]}" "$A" try-unshare user)" '^user=ok$' "try-unshare: an unprivileged user namespace is allowed here"
like "$("${nocaps[@]}" "$A" try-setns)" '^net=EPERM$' "try-setns: joining a namespace needs CAP_SYS_ADMIN"
is "$("$A" try-ptrace)" "ok" "try-ptrace attaches to its own child as root"
is "$("$A" open-dev /dev/null)" "ok" "open-dev opens /dev/null read-write"
is "$("$A" open-dev /dev/abtest-none)" "ENOENT" "open-dev of a missing node prints ENOENT"
is "$("$A" syscall getpid)" "getpid=ok" "syscall getpid is allowed"
is "$("${nocaps[@]}" "$A" syscall reboot; echo "rc=$?")" "$(printf 'reboot=EPERM\nrc=1')" \
  "syscall reboot without CAP_SYS_BOOT prints EPERM and exits 1"
is "$("$A" syscall reboot)" "reboot=EINVAL" "syscall reboot with CAP_SYS_BOOT reaches the magic check (EINVAL): harmless"
"$A" syscall nosuchcall 2>/dev/null
is $? 2 "syscall of an unknown name is a usage error"
is "$("$A" sysctl kernel.ostype)" "Linux" "sysctl reads /proc/sys"

done_testing
