#!/bin/bash
# Overlay workspaces (--workspace-mode overlay, dev.agentbox.workspace.mode):
# the host directory is untouched while the tool runs; the record lists every
# change; `workspace discard` leaves the directory byte-identical; `workspace
# apply` makes it what the tool saw (a symlink as a symlink, no set-uid, no
# file capability, no fifo), refuses a path the host changed since the run
# started, never follows a symlink the host put in a parent's place, and an
# apply killed at any system call is resumed or rolled back.  Everything is
# checked from the host: manifests (type, mode, owner, size, times, inode,
# content hash) of the directory before and after.
. "$(dirname "$0")/lib.sh"
require_runtime_commands run state delete workspace
plan_later
is_agentbox || skip_all "overlay workspaces are agentbox's"

# manifest DIR [--content]: one line per entry below DIR, sorted.  Full:
# type, mode, owner, size, mtime, ctime, inode, sha256 or link target (what
# "byte-identical, untouched" means).  --content: only what a tool can see
# and set (type, permission bits, size, sha256 or link target).
cat >"$T/manifest.py" <<'EOF'
import hashlib, os, stat, sys
top, content = sys.argv[1], len(sys.argv) > 2
lines = []
for d, dirs, files in os.walk(top):
    for n in dirs + files:
        p = os.path.join(d, n)
        st = os.lstat(p)
        rel = os.path.relpath(p, top)
        if stat.S_ISREG(st.st_mode):
            what = hashlib.sha256(open(p, "rb").read()).hexdigest()
        elif stat.S_ISLNK(st.st_mode):
            what = "-> " + os.readlink(p)
        else:
            what = ""
        kind = stat.filemode(st.st_mode)[0]
        if content:
            size = st.st_size if not stat.S_ISDIR(st.st_mode) else 0
            lines.append("%s %s %o %d %s" % (rel, kind, st.st_mode & 0o7777 if kind != "l" else 0, size, what))
        else:
            lines.append("%s %s %o %d:%d %d %d %d %d %s" % (rel, kind, st.st_mode & 0o7777, st.st_uid, st.st_gid,
                         st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, what))
print("\n".join(sorted(lines)))
EOF
manifest () { "$PYTHON3" "$T/manifest.py" "$@"; }

# jq-less JSON: jsonpy FILE EXPR prints the Python expression on the parsed
# structuredContent `r` (or the whole document `d`).
jsonpy ()
{
  "$PYTHON3" -c '
import json, sys
d = json.loads(open(sys.argv[1]).read().splitlines()[0])
r = d.get("result", {}).get("structuredContent", d)
print(eval(sys.argv[2]))' "$@"
}

# The tool's own view of /workspace, printed from inside: the same script
# (in the environment) run by the host's python3 the sandbox shows.
VIEW='python3 -c "$VIEWPY" /workspace --content'
ovl () { rt run --default --env "VIEWPY=$(cat "$T/manifest.py")" --workspace "$ws" --workspace-mode overlay "$@"; }

# make_ws DIR OWNER: a workspace with something of every kind to change.
# (No pause before the run: a host change made before the run is never a
# conflict, even in the same tick of the clock as the run's start.)
make_ws ()
{
  rm -rf "$1"
  mkdir -p "$1/sub" "$1/olddir/deep" "$1/keepdir"
  printf 'alpha\n' >"$1/a.txt"
  printf 'bravo\n' >"$1/b.txt"
  printf 'charlie\n' >"$1/sub/c"
  printf '#!/bin/sh\n' >"$1/m.sh"
  printf 'old one\n' >"$1/olddir/o1"
  printf 'deep\n' >"$1/olddir/deep/d"
  printf 'keep\n' >"$1/keepdir/k"
  chmod 0644 "$1/m.sh"
  chown -R "$2" "$1"
}

# The tool: creates, modifies, deletes, renames, chmods, plants a symlink to
# /etc, replaces a directory, tries a set-uid bit, then prints its view.
TOOL='cd /workspace && echo new >new.txt && echo more >>a.txt && rm b.txt && mv sub/c sub/d &&
  chmod 755 m.sh && ln -s /etc link && rm -rf olddir && mkdir olddir && echo y >olddir/y &&
  mkdir -p fresh/inner && echo z >fresh/inner/z && { chmod 4755 new.txt 2>/dev/null; true; } && '"$VIEW"

ws=$T/ws
make_ws "$ws" 1234:1234
before=$(manifest "$ws")
id=$(new_id)
ovl --no-stream --record "$T/r1.json" "$id" -- /bin/sh -c "$TOOL" </dev/null 2>"$T/r1.err"
is $? 0 "an overlay run exits 0"
tool_view=$(jsonpy "$T/r1.json" 'r["stdout"]')
is "$(manifest "$ws")" "$before" "the host directory is untouched after the run (every inode, time and byte)"
like "$tool_view" '^new.txt - 644 4 ' "... while the tool saw its own new.txt"

"$PYTHON3" "$AB_TOP_SRCDIR/tests/mcp/check_record.py" "$T/r1.json"
ok $? "the record matches docs/result-schema.json"
changes=$(jsonpy "$T/r1.json" '"\n".join("%s %s %s%s" % (c["change"], c["path"], c["type"], (" -> %s outside=%s" % (c["target"], c["targetOutside"])) if "target" in c else (" %s>%s" % (c["oldMode"], c["mode"]) if "oldMode" in c else "")) for c in r["workspaceChanges"]["changes"])')
is "$changes" "deleted b.txt file
replaced olddir directory
deleted sub/c file
modified a.txt file
created fresh directory
created fresh/inner directory
created fresh/inner/z file
created link symlink -> /etc outside=True
mode-changed m.sh file 0644>0755
created new.txt file
created olddir/y file
created sub/d file" "the record lists every change, deletions and the replaced directory first"
is "$(jsonpy "$T/r1.json" 'sorted(r["workspaceChanges"]["totals"].items())')" \
  "[('created', 7), ('deleted', 2), ('modeChanged', 1), ('modified', 1), ('replaced', 1), ('typeChanged', 0)]" \
  "... with totals per kind"
is "$(jsonpy "$T/r1.json" 'r["workspaceChanges"]["id"], r["workspaceChanges"]["workspace"], r["workspaceChanges"]["truncated"]')" \
  "('$id', '$ws', False)" "... the change set's id and workspace, not truncated"

# ---- diff, list, state ----------------------------------------------------------------------------

out=$(rt workspace diff "$id" 2>&1)
is "$out" "M  a.txt
D  b.txt
A  fresh/
A  fresh/inner/
A  fresh/inner/z
A  link -> /etc (outside the workspace)
P  m.sh (0644 -> 0755)
A  new.txt
R  olddir/
A  olddir/y
D  sub/c
A  sub/d" "workspace diff lists the same changes"
out=$(rt workspace diff --format json "$id" 2>&1)
is "$("$PYTHON3" -c 'import json,sys; d=json.loads(sys.stdin.read()); print(len(d["changes"]), d["totals"]["created"])' <<<"$out")" "12 7" \
  "workspace diff --format json is the record's object"
like "$(rt list 2>&1)" "^$id +0 +changes +$ws " "list shows the pending change set of the deleted container"
out=$(rt state "$id" 2>&1)
st=$?
like "$out" "container \`$id\` does not exist; its workspace change set of \`$ws\` is pending" \
  "state says the container is gone and its change set is pending"
is "$st" 1 "... and exits 1 (no such container)"

# ---- apply -----------------------------------------------------------------------------------------

rt workspace apply "$id" </dev/null >"$T/apply.out" 2>&1
is $? 0 "workspace apply exits 0"
is "$(manifest "$ws" --content)" "$tool_view" "after apply the directory is what the tool saw (types, modes, sizes, contents, links)"
[ -L "$ws/link" ] && [ "$(readlink "$ws/link")" = /etc ]
ok $? "... the symlink to /etc is a symlink, not followed"
is "$(find "$ws" -perm /6000)" "" "... no set-uid or set-gid file"
is "$(find "$ws" ! -user 1234 -o ! -group 1234)" "" "... every entry owned by the directory's owner, 1234:1234"
is "$(find "$ws" -name '.agentbox-apply-*')" "" "... no temporary left"
rt workspace diff "$id" >/dev/null 2>"$T/gone.err"
is $? 1 "the applied change set is gone (diff: exit 1)"
is "$(cat "$T/gone.err")" "agentbox: no workspace change set \`$id\` (a run with --workspace-mode overlay keeps one under its id)" \
  "... with one line naming it"
is "$(ls -A "$AB_STATE")" "" "... and the state root is as create found it"

# ---- discard ---------------------------------------------------------------------------------------

make_ws "$ws" 1234:1234
before=$(manifest "$ws")
id=$(new_id)
ovl "$id" -- /bin/sh -c "$TOOL" </dev/null >/dev/null 2>&1
rt workspace discard "$id" >"$T/discard.out" 2>&1
is $? 0 "workspace discard exits 0"
is "$(manifest "$ws")" "$before" "after discard the directory is byte-identical (every inode, time and byte)"
like "$(cat "$T/discard.out")" "$id discarded" "... and says so"
is "$(ls -A "$AB_STATE"; grep -c "$AB_STATE" /proc/self/mountinfo)" "0" "... its storage is unmounted and removed"

# ---- a root-owned workspace: ids through the container's own mapping --------------------------------

make_ws "$ws" 0:0
id=$(new_id)
rt run --default --workspace "$ws" --workspace-mode overlay "$id" -- /bin/sh -c 'echo r >/workspace/by-root' </dev/null >/dev/null 2>&1
rt workspace apply "$id" >/dev/null 2>&1
is "$(stat -c %u:%g "$ws/by-root" 2>&1)" "0:0" "in a root-owned workspace the applied file is host root's, as a bound one would be"

# ---- conflicts ------------------------------------------------------------------------------------

make_ws "$ws" 1234:1234
id=$(new_id)
rt run --default --workspace "$ws" --workspace-mode overlay "$id" -- /bin/sh -c \
  'echo tool >>/workspace/a.txt; echo n >/workspace/n.txt' </dev/null >/dev/null 2>&1
echo host >>"$ws/a.txt"
after_host=$(manifest "$ws")
rt workspace apply "$id" >"$T/c.out" 2>"$T/c.err"
is $? 3 "apply refuses a change set with a path the host changed since the run (exit 3)"
like "$(cat "$T/c.err")" "^agentbox: workspace apply $id: conflict: a.txt$" "... one line naming the path"
is "$(manifest "$ws")" "$after_host" "... and nothing is applied, not even the path without a conflict"
rt workspace apply --partial "$id" >/dev/null 2>&1
is "$?:$(cat "$ws/a.txt" | tr '\n' ' '):$(cat "$ws/n.txt" 2>&1)" "0:alpha host :n" \
  "--partial applies the rest and leaves the host's edit alone"

make_ws "$ws" 1234:1234
id=$(new_id)
rt run --default --workspace "$ws" --workspace-mode overlay "$id" -- /bin/sh -c 'echo tool >/workspace/a.txt' </dev/null >/dev/null 2>&1
echo host >"$ws/a.txt"
rt workspace apply --overwrite "$id" >/dev/null 2>&1
is "$?:$(cat "$ws/a.txt")" "0:tool" "--overwrite applies over the host's edit"

# A file the run modified and the host deleted since is a conflict too.
make_ws "$ws" 1234:1234
id=$(new_id)
rt run --default --workspace "$ws" --workspace-mode overlay "$id" -- /bin/sh -c 'echo tool >>/workspace/sub/c' </dev/null >/dev/null 2>&1
rm "$ws/sub/c"
rt workspace apply "$id" >/dev/null 2>"$T/d.err"
is "$?:$(ls "$ws/sub")" "3:" "a file the host deleted after the run modified it is a conflict, not recreated"
like "$(cat "$T/d.err")" "deleted on the host since the run started" "... and says why"
rt workspace discard "$id" >/dev/null 2>&1

# An apply, then at once a run that changes the same file again, the way
# an agent host chains them (no wrapper between the two): the apply's
# writes came before the run, whatever tick of the coarse clock they share
# with its start, so the second apply has no conflict.  (With the start
# taken as the clock read when the change set was made, about one pair in
# five, 19 of 100 here, was refused: "conflict: a.txt".)
make_ws "$ws" 1234:1234
ids=()
for i in $(seq 1 100); do ids+=("$(new_id)"); done
refused=$(timeout -k 5 300 bash -c '
  rt=$1 root=$2 ws=$3 i=0 refused=0
  shift 3
  for id; do
    i=$((i + 1))
    "$rt" --root "$root" run --default --workspace "$ws" --workspace-mode overlay "$id" -- \
      /bin/sh -c "echo $i >>/workspace/a.txt" </dev/null >/dev/null 2>&1
    if ! "$rt" --root "$root" workspace apply "$id" >/dev/null 2>&1; then
      refused=$((refused + 1))
      "$rt" --root "$root" workspace discard "$id" >/dev/null 2>&1
    fi
  done
  echo "$refused"' _ "$RUNTIME" "$AB_STATE" "$ws" "${ids[@]}" 7>&-)
is "$refused:$(wc -l <"$ws/a.txt")" "0:101" "100 runs each right after the last one's apply: no conflict, every line applied"

# The same with create and start apart (run --detach: the start is settled
# at the end of create), the host writing the file right before each run;
# and the other side of the rule: a host write made right after a detached
# run returned (its program released) is a conflict every time, though it
# falls in the same tick of the clock as the run's start more often than not.
# (With the old start, 13 of 40 of the first kind were refused.)
# detached_pairs WHEN IDS...: WHEN before|after, the host's write to a.txt
# before the run or right after it returned; prints "refused lines".
detached_pairs ()
{
  timeout -k 5 300 bash -c '
    rt=$1 root=$2 ws=$3 when=$4 i=0 refused=0
    shift 4
    for id; do
      i=$((i + 1))
      [ "$when" = before ] && echo "h$i" >>"$ws/a.txt"
      "$rt" --root "$root" run --default --detach --workspace "$ws" --workspace-mode overlay "$id" -- \
        /bin/sh -c "sleep 0.05; echo c$i >>/workspace/a.txt" </dev/null >/dev/null 2>&1
      [ "$when" = after ] && echo "h$i" >>"$ws/a.txt"
      n=0
      until "$rt" --root "$root" state "$id" 2>/dev/null | grep -q "\"status\": *\"stopped\"" || [ $n -ge 500 ]; do
        n=$((n + 1))
        sleep 0.01
      done
      "$rt" --root "$root" delete "$id" >/dev/null 2>&1
      if ! "$rt" --root "$root" workspace apply "$id" >/dev/null 2>&1; then
        refused=$((refused + 1))
        "$rt" --root "$root" workspace discard "$id" >/dev/null 2>&1
      fi
    done
    echo "$refused $(wc -l <"$ws/a.txt")"' _ "$RUNTIME" "$AB_STATE" "$ws" "$@" 7>&-
}
make_ws "$ws" 1234:1234
ids=()
for i in $(seq 1 40); do ids+=("$(new_id)"); done
is "$(detached_pairs before "${ids[@]}")" "0 81" "40 detached runs, the host writing right before each: no conflict, every line applied"
make_ws "$ws" 1234:1234
ids=()
for i in $(seq 1 20); do ids+=("$(new_id)"); done
is "$(detached_pairs after "${ids[@]}")" "20 21" "20 detached runs, the host writing right after each returned: 20 conflicts"

# ---- a hostile change set ---------------------------------------------------------------------------
# The upper layer is edited from the host, as a tool that got past the
# sandbox's checks (a kernel bug) could have left it: apply must still not
# make a set-uid file, a file capability or a device node, nor follow a
# symlink put in the place of a parent directory.

make_ws "$ws" 1234:1234
id=$(new_id)
rt run --default --workspace "$ws" --workspace-mode overlay "$id" -- /bin/sh -c \
  'echo s >/workspace/suid; echo c >/workspace/capped; echo x >/workspace/sub/x; mkfifo /workspace/fifo' </dev/null >/dev/null 2>&1
upper=$AB_STATE/.changesets/$id/upper
chmod 6755 "$upper/suid"
setcap cap_sys_admin+ep "$upper/capped"
is "$(stat -c %a "$upper/suid"):$(getcap "$upper/capped" | grep -c sys_admin)" "6755:1" \
  "the change set now holds a set-uid file and a file with a capability"
rt workspace apply "$id" >/dev/null 2>"$T/h.err"
is $? 3 "apply refuses a change set with a fifo"
like "$(cat "$T/h.err")" "refused: fifo" "... naming it"
# The host swaps its sub/ for a symlink to a directory outside.
mkdir "$T/outside"
mv "$ws/sub" "$ws/sub.moved"
ln -s "$T/outside" "$ws/sub"
rt workspace apply "$id" >/dev/null 2>"$T/h2.err"
like "$(cat "$T/h2.err")" "conflict: sub$" "the host's symlink in the place of sub/ is a conflict"
rt workspace apply --overwrite --partial "$id" >/dev/null 2>"$T/h3.err"
is $? 0 "apply --overwrite --partial applies the rest"
is "$(ls -A "$T/outside")" "" "... nothing is written through the symlink the host put in the place of sub/"
[ -d "$ws/sub" ] && [ ! -L "$ws/sub" ] && [ "$(cat "$ws/sub/x")" = x ]
ok $? "... the symlink itself is replaced by the tool's directory"
is "$(stat -c %a "$ws/suid")" "755" "... the set-uid and set-gid bits are not applied"
is "$(getcap "$ws/capped")" "" "... nor the file capability"
[ ! -e "$ws/fifo" ]
ok $? "... nor the fifo"
rm -rf "$T/outside"

# A mount the host put on a directory the change set writes into is not
# crossed (a private mount namespace of the test holds it).
make_ws "$ws" 1234:1234
id=$(new_id)
rt run --default --workspace "$ws" --workspace-mode overlay "$id" -- /bin/sh -c 'echo x >/workspace/sub/x' </dev/null >/dev/null 2>&1
out=$(/usr/bin/unshare --mount --propagation private -- /bin/sh -c '
  sub=$1/sub
  shift
  mount -t tmpfs -o size=64k ab-sub "$sub" || exit 99
  "$@" </dev/null 2>&1; echo "status=$? in-mount=$(ls -A "$sub")"' sh "$ws" \
  "$RUNTIME" --root "$AB_STATE" workspace apply --partial "$id")
like "$out" "unreachable: sub/x" "a path below a mount the host put in the workspace is unreachable for apply"
like "$out" "status=0 in-mount=$" "... and nothing is written into that mount"
[ ! -e "$ws/sub/x" ]
ok $? "... nor below it"

# An apply killed while it staged (nothing in place yet), then the host
# swaps a directory on the way to the change (olddir of olddir/deep/x) for
# a symlink to a directory outside that has a deep/ too: the next apply,
# which stages again, and a discard refuse to reach through it (the last
# component is opened O_NOFOLLOW anyway; this is about the ones before).
make_ws "$ws" 1234:1234
id=$(new_id)
rt run --default --workspace "$ws" --workspace-mode overlay "$id" -- /bin/sh -c \
  'echo x >/workspace/olddir/deep/x; echo y >/workspace/olddir/deep/y' </dev/null >/dev/null 2>&1
(strace -o /dev/null -qq -e inject=copy_file_range:signal=KILL:when=1 "$RUNTIME" --root "$AB_STATE" workspace apply \
  "$id" >/dev/null 2>&1)
mkdir -p "$T/outside/deep"
mv "$ws/olddir" "$ws/olddir.moved"
ln -s ../outside "$ws/olddir" # relative: on the same mount, so only the symlink rules stop it
rt workspace apply "$id" >/dev/null 2>"$T/r.err"
is "$?:$(ls -A "$T/outside/deep")" "1:" "resuming an apply through a directory that became a symlink fails, writing nothing through it"
like "$(cat "$T/r.err")" "apply: reach the directory of \`olddir/deep/x\`" "... naming the path"
rt workspace discard "$id" >/dev/null 2>&1
is "$?:$(ls -A "$T/outside/deep")" "1:" "... and a discard does not roll back through it either"
rm "$ws/olddir"
mv "$ws/olddir.moved" "$ws/olddir"
rt workspace discard "$id" >/dev/null 2>&1
is "$?:$(ls -A "$ws/olddir/deep")" "0:d" "with the directory back, the discard rolls back: olddir/deep/ as it was"
rm -rf "$T/outside"

# ---- kill -9 at every step of an apply ----------------------------------------------------------------
# Each renameat2, copy_file_range, mkdirat and unlinkat of an apply is in
# turn the point where the apply is killed (strace delivers SIGKILL on entry
# to the Nth call): then every path holds its old or its new contents, never
# a mix; the next apply finishes the job, or a discard puts the directory
# back as it was.

# scenario: a fresh workspace and change set ($id); the manifests $orig and
# $want (content) are what a rollback and an apply must give.
scenario ()
{
  make_ws "$ws" 1234:1234
  orig=$(manifest "$ws" --content)
  id=$(new_id)
  ovl --no-stream --record "$T/k.json" "$id" -- /bin/sh -c "$TOOL" </dev/null 2>/dev/null
  want=$(jsonpy "$T/k.json" 'r["stdout"]')
}
# never_torn: every path is as in $orig or as in $want.
never_torn ()
{
  "$PYTHON3" - "$1" "$2" "$3" <<'EOF'
import sys
def parse(s):
    return {l.split(" ")[0]: l for l in s.splitlines() if l}
orig, want, now = (parse(open(f).read()) for f in sys.argv[1:])
bad = [p for p, l in now.items() if not any(c.startswith(".agentbox-apply-") for c in p.split("/"))
       and l != orig.get(p) and l != want.get(p)]
print(" ".join(bad))
EOF
}

scenario
strace -o "$T/calls" -e trace=renameat2,copy_file_range,mkdirat,unlinkat -qq \
  "$RUNTIME" --root "$AB_STATE" workspace apply "$id" >/dev/null 2>&1
is "$(manifest "$ws" --content)" "$want" "(an apply under strace gives the right result)"
points=$(awk -F'(' '{ print $1 }' "$T/calls" | sort | uniq -c | awk '{ print $2 ":" $1 }')
diag "system calls of one apply: $(echo $points)"
torn="" resumed_bad="" rolled_bad="" n=0
for p in $points; do
  call=${p%:*}
  for ((k = 1; k <= ${p#*:}; k++)); do
    scenario
    (strace -o /dev/null -qq -e inject="$call":signal=KILL:when=$k \
      "$RUNTIME" --root "$AB_STATE" workspace apply "$id" >/dev/null 2>&1)
    manifest "$ws" --content >"$T/now"
    printf '%s\n' "$orig" >"$T/orig"
    printf '%s\n' "$want" >"$T/want"
    bad=$(never_torn "$T/orig" "$T/want" "$T/now")
    [ -n "$bad" ] && torn="$torn $call#$k:$bad"
    n=$((n + 1))
    if ((n % 2)); then
      out=$(rt workspace apply "$id" 2>&1)
      st=$?
      # killed at the very end (the change sets' directory): nothing is left to do
      grep -q 'no workspace change set' <<<"$out" && st=0
      [ "$st:$(manifest "$ws" --content)" = "0:$want" ] || { resumed_bad="$resumed_bad $call#$k"; diag "$call#$k: $out"; }
    else
      out=$(rt workspace discard "$id" 2>&1)
      if grep -Eq 'had put everything in place|no workspace change set' <<<"$out"; then
        [ "$(manifest "$ws" --content)" = "$want" ] || rolled_bad="$rolled_bad $call#$k"
      else
        [ "$(manifest "$ws" --content)" = "$orig" ] || { rolled_bad="$rolled_bad $call#$k"; diag "$call#$k: $out"; }
      fi
    fi
    [ -z "$(find "$ws" -name '.agentbox-apply-*')" ] || resumed_bad="$resumed_bad $call#$k(temporaries left)"
  done
done
diag "killed $n applies"
is "$torn" "" "an apply killed at any of those calls leaves every path old or new, never torn"
is "$resumed_bad" "" "... and the next apply finishes it: the directory is what the tool saw"
is "$rolled_bad" "" "... or a discard puts the directory back as it was (or finishes an apply that had committed)"

# ---- a run killed while its change set is made; a discard killed ---------------------------------------
# A run killed before the change set's tmpfs is mounted, or after but before
# its meta.json (create's last step), leaves a change set that never
# finished: it holds no change (the program never ran on it), and no apply
# or discard ran.  `delete --force` of the container removes it, its tmpfs
# unmounted (what docs/crash-safety.md promises of a killed run), and so
# does `workspace discard`, saying what it was; `apply` refuses it in one
# line.  Checked from the host: mountinfo, the directory.  Which of the two
# a kill point leaves depends on the thread that makes the change set; each
# one left is checked, and both must be seen for each command.

# cs_left ID: what is left of change set ID: pending (meta.json), mounted
# (its tmpfs, no meta.json), dir (neither), none.
cs_left ()
{
  local d=$AB_STATE/.changesets/$1
  if [ -e "$d/meta.json" ]; then
    echo pending
  elif awk -v d="$d" '$5 == d { f = 1 } END { exit !f }' /proc/self/mountinfo; then
    echo mounted
  elif [ -d "$d" ]; then
    echo dir
  else
    echo none
  fi
}

make_ws "$ws" 1234:1234
orig=$(manifest "$ws")
bad="" seen_delete="" seen_discard=""
for how in delete discard; do
  for p in fsopen:1 fsconfig:1 move_mount:1 fchownat:1 fchmodat:1; do
    id=$(new_id)
    (strace -f -o /dev/null -qq -e inject="${p%:*}":signal=KILL:when="${p#*:}" "$RUNTIME" --root "$AB_STATE" run \
      --default --workspace "$ws" --workspace-mode overlay "$id" -- /bin/sh -c 'echo x >/workspace/x' \
      </dev/null >/dev/null 2>&1)
    left=$(cs_left "$id")
    case $how:$left in
    delete:mounted | delete:dir)
      seen_delete+=" $left"
      out=$(rt delete --force "$id" 2>&1)
      st=$?
      [ "$st:$out:$(cs_left "$id")" = "0::none" ] && ! rt list -q | grep -qx "$id" ||
        bad+=" delete-$p($left):$st:$out:$(cs_left "$id")"
      ;;
    discard:mounted | discard:dir)
      seen_discard+=" $left"
      out=$(rt workspace apply "$id" 2>&1)
      st=$?
      [ "$st:$(cs_left "$id"):$out" = "1:$left:agentbox: workspace change set \`$id\` holds no change (its run was killed while it was made, or its tmpfs is gone): \`agentbox workspace discard $id\` or \`agentbox delete --force $id\` removes it" ] ||
        bad+=" apply-$p($left):$st:$out"
      out=$(rt workspace discard "$id" 2>&1)
      st=$?
      [ "$st:$out:$(cs_left "$id")" = "0:the change set $id held no change (its run was killed while it was made, or its tmpfs was gone): removed:none" ] ||
        bad+=" discard-$p($left):$st:$out:$(cs_left "$id")"
      rt delete --force "$id" >/dev/null 2>&1
      ;;
    *)
      diag "$how-$p: left $left (not what this point is for)"
      rt delete --force "$id" >/dev/null 2>&1
      rt workspace discard "$id" >/dev/null 2>&1
      ;;
    esac
  done
done
is "$bad" "" "a run killed while its change set was made: delete --force, or discard (saying so), unmounts its tmpfs and removes it; apply refuses it"
like "$seen_delete" "mounted" "... delete --force: seen with the tmpfs mounted ($seen_delete)"
like "$seen_delete" "dir" "... and before it was mounted"
like "$seen_discard" "mounted" "... discard: seen with the tmpfs mounted ($seen_discard)"
like "$seen_discard" "dir" "... and before it was mounted"
is "$(manifest "$ws"):$(find "$AB_STATE" -mindepth 1)" "$orig:" "... the workspace untouched, nothing left in the state root"

# A discard killed once the tmpfs is unmounted (at its first unlinkat, the
# directory's rmdir) leaves the directory marked with its outcome: the next
# apply refuses it (nothing was applied), the next discard finishes.
id=$(new_id)
ovl "$id" -- /bin/sh -c 'echo new >/workspace/new.txt' </dev/null >/dev/null 2>&1
(strace -o /dev/null -qq -e inject=unlinkat:signal=KILL:when=1 "$RUNTIME" --root "$AB_STATE" workspace discard "$id" \
  >/dev/null 2>&1)
is "$(cs_left "$id")" dir "a discard killed at the rmdir of its change set leaves the directory, unmounted"
out=$(rt workspace apply "$id" 2>&1)
is "$?:$out" "1:agentbox: workspace change set \`$id\` was discarded; only its directory is left (discard removes it)" \
  "... which the next apply refuses in one line (nothing to resume)"
out=$(rt workspace discard "$id" 2>&1)
is "$?:$out:$(cs_left "$id")" "0:$id discarded (the workspace is as it was):none" "... and the next discard removes"
is "$(manifest "$ws"):$(find "$AB_STATE" -mindepth 1)" "$orig:" "... the workspace untouched, nothing left in the state root"

# ---- the size cap, a full disk, bad input -------------------------------------------------------------

make_ws "$ws" 1234:1234
id=$(new_id)
rt run --default --workspace "$ws" --workspace-mode overlay --workspace-size 1M --no-stream --record "$T/full.json" \
  "$id" -- /bin/sh -c 'head -c 3000000 /dev/zero >/workspace/big; echo "dd=$?"' </dev/null 2>/dev/null
like "$(jsonpy "$T/full.json" 'r["stderr"]')" 'No space left on device' "past --workspace-size the tool's writes fail with ENOSPC"
is "$(jsonpy "$T/full.json" 'r["limitsHit"], r["error"]["code"], r["workspaceChanges"]["storage"]["full"]')" \
  "(['workspace'], 'limit_exceeded', True)" "... and the record says limitsHit workspace"
rt workspace discard "$id" >/dev/null 2>&1

# The change set in a directory of the caller's, on a filesystem that is
# full: the tool gets ENOSPC, the record says so (a private mount namespace
# of the test holds the small filesystem).
out=$(/usr/bin/unshare --mount --propagation private -- /bin/sh -c '
  rt=$1 root=$2 small=$3 cid=$4
  shift 4
  mkdir -p "$small" && mount -t tmpfs -o size=256k,mode=0700 ab-small "$small" || exit 99
  "$@" </dev/null >/dev/null 2>&1
  "$rt" --root "$root" workspace discard "$cid" >/dev/null 2>&1
  echo "left=$(ls -A "$small")"' sh "$RUNTIME" "$AB_STATE" "$T/small" "${id}x" \
  "$RUNTIME" --root "$AB_STATE" run --default --workspace "$ws" --workspace-mode overlay --workspace-changes "$T/small/cs" \
  --no-stream --record "$T/disk.json" "${id}x" -- /bin/sh -c 'head -c 1000000 /dev/zero >/workspace/big')
is "$(jsonpy "$T/disk.json" 'r["limitsHit"], r["workspaceChanges"]["storage"]["limitBytes"]')" "(['workspace'], None)" \
  "a change set in a full directory of the caller's: limitsHit workspace"
like "$out" "left=$" "... and discard empties that directory"
rmdir "$T/small"

id=$(new_id)
rt run --default --workspace-mode overlay "$id" -- true </dev/null >/dev/null 2>"$T/e1"
is "$?:$(cat "$T/e1")" "2:agentbox: run: --workspace-mode overlay needs --workspace DIR (the directory it shows) (see \`agentbox run --help\`)" \
  "overlay without a workspace is a usage error"
rt run --default --workspace "$ws" --annotation dev.agentbox.workspace.mode=copy "$id" -- true </dev/null >/dev/null 2>"$T/e2"
is "$?:$(wc -l <"$T/e2")" "125:1" "an unknown mode is refused before anything runs"
like "$(cat "$T/e2")" 'annotations.dev.agentbox.workspace.mode: must be "bind" or "overlay", not "copy"' "... naming the annotation"
rt workspace apply no-such-id >/dev/null 2>"$T/e3"
is "$?:$(cat "$T/e3")" "1:agentbox: no workspace change set \`no-such-id\` (a run with --workspace-mode overlay keeps one under its id)" \
  "an unknown id: one line, exit 1"

# An id whose change set is pending is not reused.
id=$(new_id)
rt run --default --workspace "$ws" --workspace-mode overlay "$id" -- /bin/sh -c 'echo 1 >/workspace/one' </dev/null >/dev/null 2>&1
rt run --default --workspace "$ws" --workspace-mode overlay "$id" -- /bin/sh -c 'echo 2 >/workspace/two' </dev/null >/dev/null 2>"$T/e4"
is "$?" 125 "a second overlay run under an id whose change set is pending is refused"
like "$(cat "$T/e4")" "the workspace change set \`$id\` is pending: apply or discard it first" "... saying why"
is "$(rt workspace diff "$id" 2>&1)" "A  one" "... and the first change set is intact"
rt workspace discard "$id" >/dev/null 2>&1

# A directory on overlayfs (a lower layer that cannot be id-mapped): one
# line, and nothing left behind (checked inside that mount namespace).
out=$(/usr/bin/unshare --mount --propagation private -- /bin/sh -c '
  mkdir -p "$1/ol/l" "$1/ol/u" "$1/ol/w" "$1/ol/m" && echo f >"$1/ol/l/f" &&
  mount -t overlay ab-ovl -o "lowerdir=$1/ol/l,upperdir=$1/ol/u,workdir=$1/ol/w" "$1/ol/m" || exit 99
  t=$1
  shift
  "$@" </dev/null >/dev/null; echo "status=$?"
  echo "mounts=$(grep -c "$t/state/.changesets" /proc/self/mountinfo)"' sh "$T" \
  "$RUNTIME" --root "$AB_STATE" run --default --workspace "$T/ol/m" --workspace-mode overlay "$(new_id)" -- true 2>&1)
like "$out" '^status=125$' "a workspace on overlayfs is refused (exit 125)"
is "$(grep -c '^agentbox: ' <<<"$out")" 1 "... with one line"
like "$out" '^mounts=0$' "... leaving no mount behind"
is "$(find "$AB_STATE" -mindepth 1)" "" "... nor a change set"
rm -rf "$T/ol"

# Apply waits for the container to be gone.
id=$(new_id)
rt run --default --workspace "$ws" --workspace-mode overlay --detach "$id" </dev/null >/dev/null 2>&1
rt exec "$id" -- /bin/sh -c 'echo e >/workspace/e' </dev/null >/dev/null 2>&1
rt workspace apply "$id" >/dev/null 2>"$T/e5"
is "$?" 1 "apply refuses the change set of a running container"
like "$(cat "$T/e5")" "container \`$id\` is running: its change set is not final" "... saying why"
rt delete --force "$id" >/dev/null 2>&1
is "$(rt workspace diff "$id" 2>&1)" "A  e" "delete keeps the change set (what exec wrote)"
rt workspace discard "$id" >/dev/null 2>&1

# ---- a bundle with the annotation, and kernels before 6.15 ------------------------------------------

# (no user namespace and no capability there: a root-owned workspace)
make_ws "$ws" 0:0
make_bundle "$T/b" 'process.args=["/bin/sh","-c","echo bundle >/workspace/from-bundle"]' \
  "mounts+={\"destination\":\"/workspace\",\"type\":\"bind\",\"source\":\"$ws\",\"options\":[\"rbind\",\"rw\"]}" \
  'annotations={"dev.agentbox.workspace.mode":"overlay"}'
id=$(new_id)
rt run --bundle "$T/b" "$id" </dev/null >/dev/null 2>"$T/b.err"
is "$?:$(ls "$ws" | grep -c from-bundle)$(cat "$T/b.err" | grep -v 'kept as change set')" "0:0" "a bundle's workspace mount with the annotation is an overlay: the host directory is untouched"
is "$(rt workspace diff "$id" 2>&1)" "A  from-bundle" "... and its change set holds the file"
rt workspace discard "$id" >/dev/null 2>&1

id=$(new_id)
AGENTBOX_OVERLAY_ATTACHED=1 rt --debug run --default --workspace "$ws" --workspace-mode overlay "$id" -- \
  /bin/sh -c 'echo attached >/workspace/att' </dev/null >/dev/null 2>"$T/att.err"
like "$(cat "$T/att.err")" "layers attached in a private mount namespace" \
  "the way of kernels before 6.15 (layers attached in a private mount namespace) is taken when forced"
is "$(ls "$ws" | grep -c att):$(rt workspace diff "$id" 2>&1)" "0:A  att" "... and gives the same overlay"
rt workspace discard "$id" >/dev/null 2>&1

done_testing
