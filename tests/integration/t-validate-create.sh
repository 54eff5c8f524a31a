#!/bin/bash
# `validate` is create's verdict: every config of the project's corpus goes
# through `agentbox validate` and `agentbox create` (then delete), and both
# must agree -- the same refusal, with the same error line, or both accept.
#
# The corpus: the audit fixtures (real-world and hand-made configs, each
# with one change), the parser's fixtures (tests/unit/data) and the
# config fuzzer's seed corpus (tests/fuzz/corpus: mostly refusals, one rule
# each).  Each config is run as written, but for its root.path, which
# names the bundle's rootfs: a copy of the test rootfs with a mount point
# for every mount (what an image would hold).  A config whose
# process.terminal is true gets a console socket, as create requires.
#
# Where create accepts a config but this host cannot give what it names (a
# bind source or a device the host lacks, a hook program, a privilege),
# create fails after `validate` accepted: those configs are listed below
# with the host's reason, and create must fail for exactly it.  (Namespace
# paths are opened by both: a missing one is refused alike.)
. "$(dirname "$0")/lib.sh"

agentbox_only || { done_testing; }
require_runtime_commands validate create delete
[ "$(id -u)" = 0 ] || skip_all "needs root"

# name -> what create must fail with on this host (an ERE of its error line)
declare -A HOST_FAILS=(
  [bind-bundle-dir]='bind source `data-dir/secrets`: No such file or directory'
  [bind-data]='bind source `/srv/data`: No such file or directory'
  [bind-docker-sock]='bind source `/var/run/docker.sock`: No such file or directory'
  [bind-host-home]='bind source `/home/user`: No such file or directory'
  [bind-rbind-ro]='bind source `/srv/data`: No such file or directory'
  [bind-rbind-rro]='bind source `/srv/data`: No such file or directory'
  [bind-rshared]='bind source `/srv/data`: No such file or directory'
  [bind-through-symlink]='bind source `data-link/secrets`: No such file or directory'
  [bind-writable-no-userns]='bind source `/srv/data`: No such file or directory'
  [bind-writable-userns]='bind source `/srv/data`: No such file or directory'
  [hook-writable]='bind source `/srv/hooks`: No such file or directory'
  [device-block]='stat host device `/dev/sda`: No such file or directory'
  [device-mem]='stat host device `/dev/mem`: No such file or directory'
  [device-mem-denied]='stat host device `/dev/mem`: No such file or directory'
  [hook-create-container]='hooks.createContainer\[0\]: run `/usr/libexec/oci/hooks.d/inside`: No such file'
  [hook-create-runtime]='hooks.createRuntime\[0\]: run `/usr/libexec/oci/hooks.d/setup`: No such file'
  [net-device]='interface `eth1` does not exist on the host'
  [no-pid-ns]='mounts\[0\] \(/proc\): create proc filesystem: Operation not permitted'
  [oom-protected]='process.oomScoreAdj: write `/proc/[0-9]+/oom_score_adj`'
  # a real-time policy: refused by sched_setattr, or by the v1 cpu cgroup
  # (no RT budget) when the child joins it, which the parent may see first
  # as the child's early end (its network namespace gone, or the wall's
  # sockets never made)
  [sched-fifo]='sched_setattr: Operation not permitted|cpu/agentbox-[^/]*/tasks`: Invalid argument|open the container.s network namespace|the container.s process ended before it made the wall.s netlink sockets'
)

make_rootfs "$T/base-rootfs" || bail_out "cannot build the base rootfs"

# A console socket for process.terminal: receive each pty master, close it.
"$PYTHON3" - "$T/console.sock" <<'EOF' &
import array, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
s.listen(16)
while True:
    c, _ = s.accept()
    fds = array.array("i")
    try:
        msg, anc, _, _ = c.recvmsg(1024, socket.CMSG_SPACE(16 * fds.itemsize))
        for level, kind, data in anc:
            fds.frombytes(data[: len(data) - len(data) % fds.itemsize])
    finally:
        for fd in fds:
            try:
                __import__("os").close(fd)
            except OSError:
                pass
        c.close()
EOF
console_pid=$!
for _ in $(seq 50); do [ -S "$T/console.sock" ] && break; sleep 0.1; done
[ -S "$T/console.sock" ] || bail_out "the console socket listener did not start"

# prepare SRC DIR: DIR/config.json from SRC (root.path -> the bundle's
# rootfs, with a mount point per mount); prints "terminal" when the config
# asks for one.  A file that is no JSON object is copied as it is.
prepare ()
{
  "$PYTHON3" - "$1" "$2" <<'EOF'
import json, os, sys
src, d = sys.argv[1], sys.argv[2]
raw = open(src, "rb").read()
try:
    cfg = json.loads(raw)
except ValueError:
    cfg = None
if not isinstance(cfg, dict):
    open(os.path.join(d, "config.json"), "wb").write(raw)
    sys.exit(0)
root = cfg.get("root")
if isinstance(root, dict) and isinstance(root.get("path"), str):
    root["path"] = "rootfs"
rootfs = os.path.join(d, "rootfs")
dests = [m.get("destination") for m in cfg.get("mounts", []) if isinstance(m, dict)] \
    if isinstance(cfg.get("mounts"), list) else []
dests.append("/etc/resolv.conf")  # the egress stub's, which create adds
for m in dests:
    if not isinstance(m, str) or not m.startswith("/") or "\0" in m or ".." in m.split("/"):
        continue
    p = os.path.join(rootfs, m.lstrip("/"))
    if os.path.lexists(p):
        continue
    try:
        if m in ("/etc/resolv.conf", "/var/run/docker.sock") or m.endswith((".conf", ".sock")):
            os.makedirs(os.path.dirname(p), exist_ok=True)
            open(p, "w").close()
        else:
            os.makedirs(p, exist_ok=True)
    except OSError:
        pass
json.dump(cfg, open(os.path.join(d, "config.json"), "w"))
proc = cfg.get("process")
if isinstance(proc, dict) and proc.get("terminal") is True:
    print("terminal")
EOF
}

last_line () { printf '%s\n' "$1" | awk 'NF { l = $0 } END { print l }'; }

n_agree=0 n_host=0
for src in "$AB_TOP_SRCDIR"/tests/audit/fixtures/*/config.json "$AB_TOP_SRCDIR"/tests/unit/data/*.json \
  "$AB_TOP_SRCDIR"/tests/fuzz/corpus/*; do
  case $src in
  */tests/audit/fixtures/*) name=$(basename "$(dirname "$src")") ;;
  *) name=$(basename "$(dirname "$src")")/$(basename "$src") ;;
  esac
  b=$T/b/$(printf '%s' "$name" | tr -c 'A-Za-z0-9._-' _)
  mkdir -p "$b" && cp -a "$T/base-rootfs" "$b/rootfs" || bail_out "cannot make the bundle of $name"
  echo "$b/rootfs" >>"$T/rootfs-list"
  term=$(prepare "$src" "$b") || bail_out "cannot prepare $name"
  cs=()
  [ "$term" = terminal ] && cs=(--console-socket "$T/console.sock")

  vout=$(rt validate --bundle "$b" 2>&1 </dev/null)
  vst=$?
  id=$(new_id)
  # (the created container keeps its stdio: a file, not a pipe to wait on)
  rt create --bundle "$b" "${cs[@]}" "$id" </dev/null >/dev/null 2>"$T/create.err"
  cst=$?
  cout=$(cat "$T/create.err")
  rt delete --force "$id" >/dev/null 2>&1 </dev/null
  vline=$(last_line "$vout")
  cline=$(last_line "$cout")

  if [ $vst != 0 ]; then
    # validate refused: create refuses, with the same line
    if [ $cst != 0 ] && [ "$cline" = "$vline" ]; then
      n_agree=$((n_agree + 1))
    else
      ok 1 "$name: validate refused, create must refuse the same way"
      diag "  validate ($vst): $vline" "  create ($cst): $cline"
    fi
  elif [ $cst = 0 ]; then
    n_agree=$((n_agree + 1))
    [ -n "${HOST_FAILS[$name]:-}" ] && diag "note: $name, listed as failing on this host, was created"
  elif [ -n "${HOST_FAILS[$name]:-}" ] && printf '%s\n' "$cline" | grep -Eq -- "${HOST_FAILS[$name]}"; then
    n_host=$((n_host + 1))
  else
    ok 1 "$name: validate accepted, so create must not refuse it"
    diag "  create ($cst): $cline"
  fi
done

ok $((n_agree + n_host > 250 ? 0 : 1)) \
  "validate and create agree on every config of the corpus ($n_agree alike, $n_host failing at create only for what this host lacks)"

kill "$console_pid" 2>/dev/null
wait "$console_pid" 2>/dev/null
done_testing
