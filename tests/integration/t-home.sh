#!/bin/bash
# runc's defaults for the container's process that configs leave out:
#   - HOME: when process.env has none (or an empty one), the home directory
#     of process.user.uid in the container's /etc/passwd, else "/", for run,
#     create/start and exec.  The passwd file is the image's and is read
#     inside the container's root: a link out of it, a FIFO or a device in
#     its place never reach the host or block the runtime;
#   - umask 022 unless process.user.umask is set, never the caller's.
. "$(dirname "$0")/lib.sh"
require_runtime_commands create start run exec state delete
plan_later

# home_of OUTPUT: the value of HOME in `abtest env` output ("-" if unset).
home_of () { printf '%s\n' "$1" | sed -n 's/^HOME=//p' | grep . || echo -; }

b=$T/b
make_bundle "$b" 'process.args=["/bin/abtest","env"]' 'process.env=["PATH=/bin","TERM=xterm"]'
echo 'user1234:x:1234:1234::/home/u1234:/bin/sh' >>"$b/rootfs/etc/passwd"
out=$(rt run --bundle "$b" "$(new_id)" </dev/null 2>&1)
is "$(home_of "$out")" /root "run: no HOME in process.env: root's home from the container's /etc/passwd"
cfg "$b/config.json" 'process.user={"uid":1234,"gid":1234}'
is "$(home_of "$(rt run --bundle "$b" "$(new_id)" </dev/null 2>&1)")" /home/u1234 "... for uid 1234, its entry's home"
cfg "$b/config.json" 'process.user={"uid":4321,"gid":4321}'
is "$(home_of "$(rt run --bundle "$b" "$(new_id)" </dev/null 2>&1)")" / "... for a uid without an entry, /"
cfg "$b/config.json" 'process.user={"uid":0,"gid":0}' 'process.env=["PATH=/bin","HOME=/custom"]'
is "$(home_of "$(rt run --bundle "$b" "$(new_id)" </dev/null 2>&1)")" /custom "a HOME in process.env is kept"
cfg "$b/config.json" 'process.env=["PATH=/bin","HOME="]'
out=$(rt run --bundle "$b" "$(new_id)" </dev/null 2>&1)
is "$(printf '%s\n' "$out" | grep -c '^HOME=') $(home_of "$out")" "1 /root" "an empty HOME is replaced, not doubled"
cfg "$b/config.json" 'process.env=["PATH=/bin"]'

# create + start: the same child path, the output on the container's stdout.
id=$(new_id)
rt create --bundle "$b" "$id" </dev/null >"$T/created.out" 2>&1 && rt start "$id" && wait_for_status "$id" stopped
is "$(home_of "$(cat "$T/created.out")")" /root "create + start: HOME from /etc/passwd too"
rt delete "$id"

# exec, as the container's user and as another.
cfg "$b/config.json" 'process.args=["/bin/abtest","sleep-forever"]'
id=$(new_id)
start_bg "$id" "$b"
is "$(home_of "$(rt exec "$id" /bin/abtest env </dev/null 2>&1)")" /root "exec: HOME from /etc/passwd"
is "$(home_of "$(rt exec --user 65534:65534 "$id" /bin/abtest env </dev/null 2>&1)")" /nonexistent \
  "exec --user 65534: the home of nobody's entry"
is "$(home_of "$(rt exec --env HOME=/given "$id" /bin/abtest env </dev/null 2>&1)")" /given "exec --env HOME= wins"
rt delete --force "$id"

# ---- a hostile /etc/passwd ---------------------------------------------------------------

cfg "$b/config.json" 'process.args=["/bin/abtest","env"]'
printf 'root:x:0:0:root:/HOST-HOME:/bin/sh\n' >"$T/host-passwd"
mv "$b/rootfs/etc/passwd" "$b/rootfs/etc/passwd.real"
kinds="abs-link climb-link"
is_agentbox && kinds="$kinds fifo device" # (runc 1.1 blocks on the FIFO and fails on /dev/zero)
for kind in $kinds; do
  rm -f "$b/rootfs/etc/passwd"
  case $kind in
    abs-link) ln -s "$T/host-passwd" "$b/rootfs/etc/passwd" ;;
    climb-link) ln -s "../../../../../../../../..$T/host-passwd" "$b/rootfs/etc/passwd" ;;
    fifo) mkfifo "$b/rootfs/etc/passwd" ;;
    device) ln -s /dev/zero "$b/rootfs/etc/passwd" ;;
  esac
  out=$(rt run --bundle "$b" "$(new_id)" </dev/null 2>&1)
  is "$? $(home_of "$out")" "0 /" "/etc/passwd as a $kind: the run works, HOME is / (the host's passwd is never read)"
done
rm -f "$b/rootfs/etc/passwd"
mv "$b/rootfs/etc/passwd.real" "$b/rootfs/etc/passwd"

# ---- umask ----------------------------------------------------------------------------------

b=$T/umask
make_bundle --out "$b" 'process.args=["/bin/sh","-c","umask; mkdir /out/made"]'
mkdir -p "$b/rootfs/newdir-parent"
cfg "$b/config.json" 'mounts+={"destination":"/newdir-parent/mnt","type":"tmpfs","source":"tmpfs"}'
out=$(umask 000 && rt run --bundle "$b" "$(new_id)" </dev/null 2>&1)
is "$out $(stat -c %a "$b/out/made" "$b/rootfs/newdir-parent/mnt" 2>&1 | tr '\n' ' ')" "0022 755 755 " \
  "a caller's umask 000 does not reach the container: 022, as runc (and the mount point it made is 755)"
rmdir "$b/out/made" "$b/rootfs/newdir-parent/mnt"
cfg "$b/config.json" 'process.user.umask=63'
out=$(umask 000 && rt run --bundle "$b" "$(new_id)" </dev/null 2>&1)
is "$out $(stat -c %a "$b/out/made" 2>&1)" "0077 700" "process.user.umask 077 is what the process gets"

# ---- the built-in sandbox ------------------------------------------------------------------

if agentbox_only; then
  # Its profile sets HOME=/root, where it mounts a tmpfs of its own.
  out=$(rt run --default "$(new_id)" -- /usr/bin/env </dev/null 2>&1)
  is "$(home_of "$out")" /root "run --default: HOME is /root, the sandbox's own tmpfs"
fi

done_testing
