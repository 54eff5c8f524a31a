#!/usr/bin/python3
"""`agentbox mcp` running real sandboxes: records checked against
docs/result-schema.json, concurrency, cancellation and EOF cleanup checked
from the host (no process, no cgroup directory, no state directory left),
progress notifications, persistent sandboxes and their handles, and host
workspaces.  Needs root and a working `agentbox run --default`."""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcplib import (AGENTBOX, WAIT, Server, Tap, cgroup_dirs, need_sandboxes, processes_with, sc, tool_error,  # noqa: E402
                    valid_record, wait_until)

t = Tap()
need_sandboxes(t, "sandbox_run, sandbox_create/exec/destroy against real containers")


def containers_in(server):
    try:
        return sorted(e for e in os.listdir(server.state_root) if not e.startswith("."))
    except OSError:
        return []


def gone(server, cid, marker=None):
    """Problems if anything of container cid is left on the host."""
    left = []
    if marker and processes_with(marker):
        left.append("processes %s" % processes_with(marker))
    if cgroup_dirs(cid):
        left.append("cgroups %s" % cgroup_dirs(cid))
    if os.path.exists(os.path.join(server.state_root, cid)):
        left.append("state directory")
    return left


s = Server()

# ------------------------------------------------------------------ records

f, raw = s.tool("sandbox_run", {"argv": ["sh", "-c", "echo hello; echo oops >&2"]})
r = sc(f)
t.ok(r.get("exitCode") == 0 and r.get("reason") == "exited" and r.get("stdout") == "hello\n"
     and r.get("stderr") == "oops\n" and f["result"]["isError"] is False and r.get("error") is None,
     "sandbox_run: exit 0 with its stdout and stderr, isError false", f)
valid_record(t, raw, "exit 0")
m = f["result"].get("_meta", {}) if f else {}
t.ok(m.get("io.modelcontextprotocol/serverInfo", {}).get("name") == "agentbox"
     and str(m.get("dev.agentbox/containerId", "")).startswith("mcp-%d-" % s.proc.pid),
     "the record's _meta has the server's identity and the container id", m)

f, raw = s.tool("sandbox_run", {"argv": ["sh", "-c", "exit 42"]})
t.ok(sc(f).get("exitCode") == 42 and f["result"]["isError"] is True
     and sc(f)["error"]["code"] == "exit_nonzero", "exit 42: isError with error.code exit_nonzero", f)
valid_record(t, raw, "exit 42")

f, raw = s.tool("sandbox_run", {"argv": ["cat"], "stdin": "line one\nline two\n"})
t.ok(sc(f).get("stdout") == "line one\nline two\n", "the stdin argument reaches the program, then EOF", f)

f, raw = s.tool("sandbox_run", {"argv": ["sh", "-c", "echo \"$GREETING\"; pwd"], "env": {"GREETING": "hi there"},
                                "cwd": "/tmp"})
t.ok(sc(f).get("stdout") == "hi there\n/tmp\n", "env and cwd are applied", f)

f, raw = s.tool("sandbox_run", {"argv": ["sleep", "30"], "timeout_ms": 300})
t.ok(sc(f).get("reason") == "timeout" and "timeout" in sc(f).get("limitsHit", []) and sc(f).get("exitCode") is None
     and sc(f)["error"]["suggested_action"] == "increase_timeout_ms",
     "timeout_ms: the command is killed, reason timeout, limitsHit has timeout", f)
valid_record(t, raw, "timeout")
f, raw = s.tool("sandbox_run", {"argv": ["sh", "-c", "trap 'echo cleanup; exit 3' TERM; sleep 30 & wait"],
                                "timeout_ms": 300})
t.ok(sc(f).get("exitCode") == 3 and sc(f).get("stdout") == "cleanup\n"
     and (sc(f).get("timeout") or {}).get("ended") == "terminated",
     "timeout_ms: SIGTERM first, the TERM trap runs and its exit status is reported, timeout.ended terminated", f)
valid_record(t, raw, "timeout with a TERM trap")
f, raw = s.tool("sandbox_run", {"argv": ["sh", "-c", "trap 'echo cleanup; exit 3' TERM; sleep 30 & wait"],
                                "timeout_ms": 300, "timeout_grace_ms": 0})
t.ok(sc(f).get("signal") == "SIGKILL" and sc(f).get("stdout") == ""
     and (sc(f).get("timeout") or {}) == {"limitMs": 300, "graceMs": 0, "ended": "killed"},
     "timeout_grace_ms 0: killed at the limit, the trap never runs", f)

f, raw = s.tool("sandbox_run", {"argv": ["sh", "-c", "head -c 100000 /dev/zero | tr '\\0' a"],
                                "max_output_bytes": 100})
r = sc(f)
t.ok(r.get("stdoutTruncated") is True and r.get("stdoutBytes") == 100000 and len(r.get("stdout", "")) == 100
     and "output" in r.get("limitsHit", []), "max_output_bytes: 100 bytes kept, 100000 counted, limit output", f)
valid_record(t, raw, "truncated output")

f, raw = s.tool("sandbox_run", {"argv": ["printf", "\\377\\376ok\\001"]})
r = sc(f)
t.ok(r.get("stdoutBinary") is True and len(f["result"]["content"]) == 2
     and f["result"]["content"][1]["resource"]["blob"] == "//5vawE=",
     "output that is not UTF-8: U+FFFD in stdout, the exact bytes as a base64 resource", f)
valid_record(t, raw, "binary output")

f, raw = s.tool("sandbox_run", {"argv": ["head", "-c", "3000000", "/dev/urandom"], "max_output_bytes": 4 << 20})
r = sc(f)
t.ok(r.get("stdoutBytes") == 3000000 and r.get("stdoutBinary") is True and raw is not None and len(raw) > 4000000,
     "3 MB of random bytes arrive as one frame of %d bytes" % (len(raw) if raw else 0), r.get("error"))
valid_record(t, raw, "3 MB binary output")

f, raw = s.tool("sandbox_run", {"argv": ["/no/such/program"]})
t.ok(sc(f).get("exitCode") == 127 and f["result"]["isError"] is True,
     "a program that does not exist: exit 127 with isError, not a protocol error", f)

# A missing cwd is made (as runc does), but not in the shared read-only
# skeleton of the sandbox's root: the container's root may not write there.
f, raw = s.tool("sandbox_run", {"argv": ["true"], "cwd": "/no/such/dir"})
err = f.get("error", {}) if f else {}
t.ok(err.get("code") == -31007 and err.get("data", {}).get("step") == "cwd"
     and err["data"].get("errnoName") == "EACCES" and err["data"].get("suggested_action") == "fix_arguments"
     and "`/no/such/dir` is missing and cannot be made" in err.get("message", ""),
     "a sandbox that cannot be set up (a cwd missing in the skeleton) is a JSON-RPC error with step, errno and "
     "what to do", f)
valid_record(t, raw, "setup failure")
f, raw = s.tool("sandbox_run", {"argv": ["sh", "-c", "pwd"], "cwd": "/tmp/made/here"})
t.ok(sc(f).get("stdout") == "/tmp/made/here\n", "a cwd missing in the sandbox's /tmp is made there", f)

f, raw = s.tool("sandbox_run", {"argv": ["sh", "-c", "for i in 1 2 3 4 5 6 7 8; do sleep 1 & done; wait"],
                                "pids_limit": 3})
t.ok("pids" in sc(f).get("limitsHit", []) and sc(f)["error"]["suggested_action"] == "increase_pids_limit",
     "pids_limit: forks fail, limitsHit has pids, the suggestion is increase_pids_limit", f)
valid_record(t, raw, "pids limit")

f, raw = s.tool("sandbox_run", {"argv": ["sh", "-c", "kill -SEGV $$; sleep 1"], "pids_limit": 64})
t.ok(sc(f).get("signal") in ("SIGSEGV", None) and raw is not None, "a signal-killed shell gives a valid record", f)
valid_record(t, raw, "signal")

# ------------------------------------------------------------------ concurrency

marker = "ab-long-" + uuid.uuid4().hex
long_id = s.request("tools/call", {"name": "sandbox_run", "arguments": {"argv": ["sh", "-c", "sleep 600; : " + marker]}})
t.ok(wait_until(lambda: processes_with(marker)), "a long sandbox_run is running (seen from the host)")
shorts = [s.request("tools/call", {"name": "sandbox_run", "arguments": {"argv": ["echo", str(i)]}}) for i in range(3)]
order = []
for rid in shorts:
    f, raw = s.response(rid)
    order.append(sc(f).get("stdout"))
t.ok(order == ["0\n", "1\n", "2\n"], "three more calls complete while the long one is still in flight", order)
dup = s.call("ping", id=long_id)
t.ok(dup and dup.get("error", {}).get("code") == -32600 and dup.get("id") == long_id,
     "a request reusing the id of one in flight is -32600 (and leaves the original alone)", dup)
t.ok(processes_with(marker), "... the original is still running")

# ------------------------------------------------------------------ cancellation

running = containers_in(s)
long_cid = running[0] if len(running) == 1 else None  # the shorts are done and deleted
s.notify("notifications/cancelled", {"requestId": long_id, "reason": "test"})
t.ok(wait_until(lambda: not processes_with(marker)), "notifications/cancelled kills the container's processes")
t.ok(long_cid is not None and wait_until(lambda: not gone(s, long_cid)),
     "... and its cgroup and state directory are removed", long_cid and gone(s, long_cid))
f = s.call("ping")
extra = s.response(long_id, timeout=2)[0]
t.ok(f is not None and extra is None, "a cancelled request gets no response", extra)

# ------------------------------------------------------------------ progress

keep = []
rid = s.request("tools/call", {"name": "sandbox_run", "arguments": {"argv": ["sleep", "2.5"]},
                               "_meta": {"progressToken": "tok-1"}})
f, raw = s.response(rid, keep=keep)
s.pending = []  # what came before the response is in keep
prog = [x["params"] for x in keep if x.get("method") == "notifications/progress"]
values = [p["progress"] for p in prog]
t.ok(len(prog) >= 2 and all(p["progressToken"] == "tok-1" for p in prog),
     "progressToken: notifications/progress arrive while the call runs", keep)
t.ok(values == sorted(set(values)) and all(isinstance(v, (int, float)) for v in values),
     "progress values increase strictly", values)
late = s.next_frame(timeout=2)
t.ok(late is None, "no progress notification after the response", late and late[0])

# ------------------------------------------------------------------ legacy era

legacy = Server()
legacy.initialize()
f, raw = legacy.tool("sandbox_run", {"argv": ["echo", "legacy"]}, modern=False)
t.ok(sc(f).get("stdout") == "legacy\n" and "io.modelcontextprotocol/serverInfo" not in f["result"]["_meta"],
     "a 2025-11-25 session runs sandbox_run too (the record without the modern serverInfo)", f)
valid_record(t, raw, "legacy")
legacy.cleanup()

# ------------------------------------------------------------------ persistent sandboxes

f, raw = s.tool("sandbox_create", {"memory_bytes": 256 << 20, "pids_limit": 128})
handle = sc(f).get("handle", "")
t.ok(handle.startswith("sbx_") and len(handle) == 36 and f["result"]["isError"] is False,
     "sandbox_create returns a 128-bit handle", f)
f, raw = s.tool("sandbox_exec", {"handle": handle, "argv": ["sh", "-c", "echo kept > /workspace/note; echo done"]})
t.ok(sc(f).get("stdout") == "done\n", "sandbox_exec runs in it", f)
valid_record(t, raw, "sandbox_exec")
f, raw = s.tool("sandbox_exec", {"handle": handle, "argv": ["cat", "/workspace/note"]})
t.ok(sc(f).get("stdout") == "kept\n", "files persist between sandbox_exec calls", f)
f, raw = s.tool("sandbox_exec", {"handle": handle, "argv": ["sleep", "30"], "timeout_ms": 300})
t.ok(sc(f).get("reason") == "timeout", "sandbox_exec honours timeout_ms", f)
emarker = "ab-exec-" + uuid.uuid4().hex
rid = s.request("tools/call", {"name": "sandbox_exec", "arguments": {"handle": handle,
                                                                      "argv": ["sh", "-c", "sleep 600; : " + emarker]}})
t.ok(wait_until(lambda: processes_with(emarker)), "a long sandbox_exec runs")
s.notify("notifications/cancelled", {"requestId": rid})
t.ok(wait_until(lambda: not processes_with(emarker)), "cancelling a sandbox_exec kills its processes")
f, raw = s.tool("sandbox_exec", {"handle": handle, "argv": ["echo", "still here"]})
t.ok(sc(f).get("stdout") == "still here\n", "... and the sandbox lives on", f)

other = Server()
f, raw = other.tool("sandbox_exec", {"handle": handle, "argv": ["true"]})
e = tool_error(f)
t.ok(f["result"]["isError"] is True and e and e["code"] == "unknown_handle",
     "a handle of another server process is refused", f)
other.cleanup()
f, raw = s.tool("sandbox_exec", {"handle": "sbx_" + "0" * 32, "argv": ["true"]})
t.ok(tool_error(f) and tool_error(f)["code"] == "unknown_handle", "a guessed handle is refused", f)
sandbox_cids = set(containers_in(s))
f, raw = s.tool("sandbox_destroy", {"handle": handle})
t.ok(sc(f).get("destroyed") is True, "sandbox_destroy destroys it", f)
t.ok(all(not gone(s, c) for c in sandbox_cids) and not containers_in(s),
     "... leaving no process, cgroup or state directory", [gone(s, c) for c in sandbox_cids])
f, raw = s.tool("sandbox_exec", {"handle": handle, "argv": ["true"]})
t.ok(tool_error(f) and tool_error(f)["code"] == "unknown_handle", "a destroyed handle is refused", f)
f, raw = s.tool("sandbox_destroy", {"handle": handle})
t.ok(tool_error(f) and tool_error(f)["code"] == "unknown_handle", "destroying twice is an isError, not a crash", f)

t.ok(not s.bad_lines, "every stdout line so far is one JSON object", s.bad_lines)
t.ok(s.close() == 0 and not os.path.exists(s.state_root), "EOF: exit 0, state root removed")
s.cleanup()

# ------------------------------------------------------------------ queueing

q = Server(["--max-concurrency", "1"])
qmarker = "ab-queue-" + uuid.uuid4().hex
a = q.request("tools/call", {"name": "sandbox_run", "arguments": {"argv": ["sh", "-c", "sleep 600; : " + qmarker]}})
t.ok(wait_until(lambda: processes_with(qmarker)), "--max-concurrency 1: the first call runs")
b = q.request("tools/call", {"name": "sandbox_run", "arguments": {"argv": ["echo", "b"]}})
c = q.request("tools/call", {"name": "sandbox_run", "arguments": {"argv": ["echo", "c"]}})
q.notify("notifications/cancelled", {"requestId": b})
early = q.response(c, timeout=2)[0]
t.ok(early is None, "... the next ones wait in the queue", early)
q.notify("notifications/cancelled", {"requestId": a})
f, raw = q.response(c)
t.ok(sc(f).get("stdout") == "c\n", "when the slot frees, the queued call runs", f)
t.ok(q.response(b, timeout=1)[0] is None and q.response(a, timeout=1)[0] is None,
     "a call cancelled in the queue and one cancelled while running get no response")
q.cleanup()

# ------------------------------------------------------------------ EOF cleanup

e = Server()
f, raw = e.tool("sandbox_create", {})
h = sc(f).get("handle")
emark = "ab-eof-" + uuid.uuid4().hex
run_id = e.request("tools/call", {"name": "sandbox_run", "arguments": {"argv": ["sh", "-c", "sleep 600; : " + emark]}})
exec_id = e.request("tools/call", {"name": "sandbox_exec",
                                   "arguments": {"handle": h, "argv": ["sh", "-c", "sleep 600; : " + emark + "x"]}})
# The workers (`agentbox run|exec ...`) carry the marker in their arguments
# too: wait for the programs themselves, the ones that run `sh`.
def cmdline_of(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read()
    except OSError:
        return b""


def in_sandboxes(marker):
    return [p for p in processes_with(marker) if cmdline_of(p).startswith(b"sh\0")]


t.ok(wait_until(lambda: len(in_sandboxes(emark)) >= 2 and len(containers_in(e)) == 2),
     "before EOF: a run and an exec are running, a sandbox exists", (in_sandboxes(emark), containers_in(e)))
ids = containers_in(e)
rc = e.close()
left = [(c, gone(e, c)) for c in ids if gone(e, c)]
t.ok(rc == 0, "EOF with calls in flight: the server exits 0", e.stderr()[-2000:])
t.ok(not processes_with(emark) and not left and not os.path.exists(e.state_root) and len(ids) == 2,
     "EOF: no container process, cgroup or state directory is left, the state root is gone",
     (ids, left, processes_with(emark), os.path.exists(e.state_root)))
answered = []
while True:
    got = e.next_frame(timeout=0.2)
    if got is None:
        break
    if got[0].get("id") in (run_id, exec_id):
        answered.append(got[0])
t.ok(not answered, "EOF: the killed calls got no response", answered)
e.cleanup()

# ------------------------------------------------------------------ a killed server

# SIGKILL (no EOF clean-up): its sandbox's processes die, but the held
# network namespace (a mount in its state directory) and its cgroups stay.
# The next server on the same --root removes what a dead server left: it
# holds its own state root's lock for as long as it lives, so a root whose
# lock is free is a dead server's.
k = Server()
f, raw = k.tool("sandbox_create", {})
kroot = k.state_root
kids = containers_in(k)
t.ok(f and "result" in f and len(kids) == 1, "killed server: it made a sandbox", f)
live = Server(root=k.root)  # a live neighbour, which the sweep must leave alone
f, raw = live.tool("sandbox_create", {})
lids = containers_in(live)
k.proc.kill()
k.proc.wait()


def mounts_below(path):
    with open("/proc/self/mountinfo") as fh:
        return [ln.split()[4] for ln in fh if ln.split()[4].startswith(path + "/")]


t.ok(mounts_below(kroot) and os.path.isdir(kroot), "killed server: its state root and netns mount are left",
     (kroot, mounts_below(kroot)))

# What the sweep must not take for a dead server's root, beside it: a
# container whose id looks like one (`mcp-<digits>`: runc allows any such
# id, orchestrators choose theirs), and roots whose recorded server still
# runs (this test, by pid and start time) or whose record cannot be read.
def agentbox(root, *args):
    """The finished command, or None when it had not ended within the bound (WAIT)."""
    try:
        return subprocess.run([AGENTBOX, "--root", root] + list(args), stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=WAIT)
    except subprocess.TimeoutExpired:
        return None


def run_detached(root, cid, mark):
    """A detached sleeper whose command line holds mark; (exit status, stderr).  Its container keeps the stdio
    it is given: a file, not a pipe this would wait on for EOF."""
    with tempfile.TemporaryFile() as err:
        rc = subprocess.call([AGENTBOX, "--root", root, "run", "--default", "--detach", cid, "--", "sh", "-c",
                              "sleep 1000; : " + mark], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=err, timeout=120)
        err.seek(0)
        return rc, err.read()


def start_time(pid):
    with open("/proc/%d/stat" % pid) as fh:
        return int(fh.read().rsplit(")", 1)[1].split()[19])


def fake_root(name, record):
    d = os.path.join(k.root, name)
    os.makedirs(os.path.join(d, "x"))
    with open(os.path.join(d, ".mcp-server"), "w") as fh:
        fh.write(record)
    return d


# (ids above the largest pid, 4194304, and this test's own: no server's, and no other run's)
lookalike, lmark = "mcp-%d" % (4194304 + os.getpid()), "ab-lookalike-" + uuid.uuid4().hex[:8]
rc, err = run_detached(k.root, lookalike, lmark)
t.ok(rc == 0 and processes_with(lmark), "a container called %s runs in the same --root" % lookalike, err)
alive_root = fake_root("mcp-%d" % (2 * 4194304 + os.getpid()),
                       json.dumps({"pid": os.getpid(), "startTime": start_time(os.getpid())}))
unknown_root = fake_root("mcp-%d" % (3 * 4194304 + os.getpid()), "{not json")
p = agentbox(k.root, "delete", "--force", os.path.basename(kroot))
t.ok(p and p.returncode != 0 and p.stderr.count(b"\n") == 1 and b"state directory of an MCP server" in p.stderr
     and os.path.isfile(os.path.join(kroot, ".mcp-server")) and containers_in(k) == kids,
     "delete --force of the dead server's root, as if a container: refused in one line, the root untouched",
     (p and p.stderr, containers_in(k)))
n = Server(root=k.root)
t.ok(n.call("ping") is not None, "the next server on the same root starts", n.stderr()[-2000:])
t.ok(not os.path.exists(kroot) and not mounts_below(kroot) and not any(cgroup_dirs(c) for c in kids),
     "... and removes what the killed one left: its state root, the netns mount, the cgroups",
     (os.path.exists(kroot), mounts_below(kroot), [cgroup_dirs(c) for c in kids], n.stderr()[-2000:]))
t.ok(os.path.isdir(live.state_root) and containers_in(live) == lids and all(cgroup_dirs(c) for c in lids),
     "... and leaves a live server's alone", (containers_in(live), lids))
p, ls = agentbox(k.root, "state", lookalike), agentbox(k.root, "list", "--quiet")
t.ok(p and p.returncode == 0 and json.loads(p.stdout).get("status") == "running" and processes_with(lmark)
     and ls and ls.stdout.decode().split() == [lookalike] and "%s/%s" % (k.root, lookalike) not in n.stderr(),
     "... and leaves the container %s alone: listed (alone: no server's root is), running, its process alive"
     % lookalike, (p and (p.returncode, p.stdout, p.stderr), ls and ls.stdout, n.stderr()[-2000:]))
p = agentbox(k.root, "state", os.path.basename(live.state_root))
t.ok(p and p.returncode != 0 and p.stderr.count(b"\n") == 1 and b"an MCP server's state" in p.stderr,
     "`state` of a live server's root, as if a container: one line, without waiting for the server's end",
     p and p.stderr)
t.ok(os.path.isdir(os.path.join(alive_root, "x")) and os.path.isdir(os.path.join(unknown_root, "x")),
     "... and roots whose recorded server runs, or whose record cannot be read", n.stderr()[-2000:])
p = agentbox(k.root, "delete", "--force", lookalike)
t.ok(p and p.returncode == 0 and wait_until(lambda: not processes_with(lmark)) and not cgroup_dirs(lookalike)
     and not os.path.exists(os.path.join(k.root, lookalike)),
     "delete --force %s then kills its process (from the host) and removes its cgroups and state" % lookalike,
     (p and p.stderr, processes_with(lmark), cgroup_dirs(lookalike)))
shutil.rmtree(alive_root)
shutil.rmtree(unknown_root)
n.close()
live.close()
t.ok(not os.path.exists(live.state_root) and not any(cgroup_dirs(c) for c in lids),
     "the live one cleans up after itself at EOF", containers_in(live))
n.cleanup()
live.cleanup()
k.cleanup()

# A server whose own root's name is a container's (`mcp-<its pid>`: the
# container is made while the server, its pid known, waits stopped before
# its exec) does not start, rather than use that container's directory as
# its root (and remove it at its end).
tmp = tempfile.mkdtemp(prefix="ab-mcp-test-")
os.chmod(tmp, 0o711)
root2, omark = os.path.join(tmp, "root"), "ab-ownroot-" + uuid.uuid4().hex[:8]
q = subprocess.Popen(["sh", "-c", 'kill -STOP $$; exec "$0" --root "$1" mcp', AGENTBOX, root2],
                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
cid = "mcp-%d" % q.pid


def stopped(pid):
    with open("/proc/%d/stat" % pid) as fh:
        return fh.read().rsplit(")", 1)[1].split()[0] == "T"


rc, err = run_detached(root2, cid, omark) if wait_until(lambda: stopped(q.pid)) else (None, b"never stopped")
os.kill(q.pid, signal.SIGCONT)
try:
    qout, qerr = q.communicate(timeout=WAIT)
except subprocess.TimeoutExpired:
    q.kill()
    qout, qerr = q.communicate()
st = agentbox(root2, "state", cid)
t.ok(rc == 0 and q.returncode != 0 and qerr.count(b"\n") == 1 and b"exists and is not an MCP server's" in qerr
     and st and st.returncode == 0 and json.loads(st.stdout).get("status") == "running" and processes_with(omark),
     "a server whose own root would be the container %s refuses in one line; the container runs on" % cid,
     (rc, err, q.returncode, qerr, st and (st.stdout, st.stderr)))
p = agentbox(root2, "delete", "--force", cid)
t.ok(p and p.returncode == 0 and wait_until(lambda: not processes_with(omark)) and not cgroup_dirs(cid)
     and os.listdir(root2) == [], "... and delete --force removes it: no process, cgroup or state left",
     (p and p.stderr, processes_with(omark), os.listdir(root2)))
shutil.rmtree(tmp, ignore_errors=True)

# ------------------------------------------------------------------ workspaces

ws_root = tempfile.mkdtemp(prefix="ab-mcp-ws-")
os.chmod(ws_root, 0o755)
inside = os.path.join(ws_root, "project")
os.mkdir(inside)
os.symlink("/etc", os.path.join(ws_root, "escape"))
w = Server(["--workspace-root", ws_root])
f, raw = w.tool("sandbox_run", {"argv": ["sh", "-c", "echo from-sandbox > /workspace/out.txt"], "workspace": inside})
t.ok(f and "result" in f and sc(f).get("exitCode") == 0, "workspace: the call succeeds", f)
try:
    with open(os.path.join(inside, "out.txt")) as fh:
        content = fh.read()
except OSError as ex:
    content = str(ex)
t.ok(content == "from-sandbox\n", "workspace: the file it wrote is on the host (checked from outside)", content)
f, raw = w.tool("sandbox_run", {"argv": ["true"], "workspace": os.path.join(ws_root, "escape")})
t.ok(tool_error(f) and tool_error(f)["path"] == "workspace",
     "workspace: a symlink inside the root that points outside it is refused", f)
f, raw = w.tool("sandbox_run", {"argv": ["true"], "workspace": "/tmp"})
t.ok(tool_error(f) and tool_error(f)["path"] == "workspace", "workspace: a directory outside every root is refused", f)
f, raw = w.tool("sandbox_run", {"argv": ["true"], "workspace": inside + "/../../"})
t.ok(tool_error(f) and tool_error(f)["path"] == "workspace", "workspace: .. out of the root is refused", f)

# workspace_mode overlay: the host directory is untouched; the result lists
# the changes; workspace_apply and workspace_discard decide.


def listing(d):
    out = {}
    for dirpath, _, files in os.walk(d):
        for n in files:
            p = os.path.join(dirpath, n)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, d)] = fh.read()
    return out


def mounts_of(path):
    with open("/proc/self/mountinfo") as fh:
        return [l for l in fh if path in l]


before = listing(inside)
f, raw = w.tool("sandbox_run", {"argv": ["sh", "-c", "echo overlay > /workspace/ov.txt; rm /workspace/out.txt"],
                                "workspace": inside, "workspace_mode": "overlay"})
valid_record(t, raw, "overlay")
wc = sc(f).get("workspaceChanges", {})
t.ok(listing(inside) == before, "overlay: the host directory is untouched by the call (checked from outside)")
t.ok(sorted((c["change"], c["path"]) for c in wc.get("changes", [])) == [("created", "ov.txt"), ("deleted", "out.txt")]
     and wc.get("workspace") == inside and str(wc.get("id", "")).startswith("mcp-%d-" % w.proc.pid),
     "overlay: the result's workspaceChanges lists the created and the deleted file", wc)
f, raw = w.tool("workspace_apply", {"id": wc.get("id", "")})
r = sc(f)
t.ok(f and f["result"].get("isError") is False and r.get("result") == "applied" and r.get("applied") == 2,
     "workspace_apply applies the change set", f)
t.ok(listing(inside) == {"ov.txt": b"overlay\n"}, "... the host directory is what the sandbox saw", listing(inside))
f, raw = w.tool("workspace_apply", {"id": wc.get("id", "")})
t.ok(tool_error(f) and tool_error(f)["code"] == "unknown_change_set", "... and the change set is spent", f)

before = listing(inside)
f, raw = w.tool("sandbox_run", {"argv": ["sh", "-c", "echo again >> /workspace/ov.txt"], "workspace": inside,
                                "workspace_mode": "overlay"})
cid = sc(f).get("workspaceChanges", {}).get("id", "")
with open(os.path.join(inside, "ov.txt"), "a") as fh:
    fh.write("host\n")
f, raw = w.tool("workspace_apply", {"id": cid})
r = sc(f)
t.ok(f and f["result"].get("isError") is True and r.get("result") == "refused"
     and [(p["path"], p["problem"]) for p in r.get("problems", [])] == [("ov.txt", "conflict")],
     "workspace_apply refuses a path the host changed since the call started (a conflict, isError)", f)
t.ok(listing(inside) == {"ov.txt": b"overlay\nhost\n"}, "... and changes nothing", listing(inside))
before = listing(inside)
f, raw = w.tool("workspace_discard", {"id": cid})
t.ok(f and sc(f).get("result") == "discarded" and listing(inside) == before
     and not os.path.exists(os.path.join(w.state_root, ".changesets")),
     "workspace_discard throws the change set away, the directory as it was", f)
f, raw = w.tool("workspace_discard", {"id": "mcp-1-1"})
t.ok(tool_error(f) and tool_error(f)["code"] == "unknown_change_set", "workspace_discard: another server's id names nothing", f)

f, raw = w.tool("sandbox_create", {"workspace": inside, "workspace_mode": "overlay"})
handle = sc(f).get("handle", "")
f, raw = w.tool("sandbox_exec", {"handle": handle, "argv": ["sh", "-c", "echo p > /workspace/persist"]})
valid_record(t, raw, "overlay exec")
wc = sc(f).get("workspaceChanges", {})
t.ok([c["path"] for c in wc.get("changes", [])] == ["persist"] and not os.path.exists(os.path.join(inside, "persist")),
     "overlay sandbox_create: sandbox_exec's result carries the change set so far, the host untouched", wc)
f, raw = w.tool("workspace_apply", {"id": wc.get("id", "")})
t.ok(tool_error(f) and tool_error(f)["code"] == "workspace_error"
     and tool_error(f)["suggested_action"] == "destroy_sandbox_first",
     "workspace_apply waits for the sandbox to be destroyed", f)
w.tool("sandbox_destroy", {"handle": handle})
f, raw = w.tool("workspace_apply", {"id": wc.get("id", "")})
t.ok(sc(f).get("result") == "applied" and os.path.exists(os.path.join(inside, "persist")),
     "... then applies what it wrote", f)

# A change set left pending goes with the server, the directory untouched.
before = listing(inside)
f, raw = w.tool("sandbox_run", {"argv": ["sh", "-c", "echo left > /workspace/left"], "workspace": inside,
                                "workspace_mode": "overlay"})
root = w.state_root
t.ok(mounts_of(root + "/.changesets/"), "a pending change set's storage is mounted", mounts_of(root))
t.ok(w.close() == 0 and not os.path.exists(root) and not mounts_of(root) and listing(inside) == before,
     "EOF: the server discards its pending change sets (nothing mounted or left, the directory as it was)")
w.cleanup()

# A killed server's pending change set (a tmpfs mounted in its state root)
# goes with the sweep of the next server on the same --root: discarded,
# the workspace untouched, nothing mounted or left.
before = listing(inside)
k = Server(["--workspace-root", ws_root])
f, raw = k.tool("sandbox_run", {"argv": ["sh", "-c", "echo killed > /workspace/killed"], "workspace": inside,
                                "workspace_mode": "overlay"})
kroot = k.state_root
t.ok(mounts_of(kroot + "/.changesets/"), "killed server: its pending change set's storage is mounted", mounts_of(kroot))
k.proc.kill()
k.proc.wait()
n = Server(["--workspace-root", ws_root], root=k.root)
t.ok(n.call("ping") is not None and not os.path.exists(kroot) and not mounts_of(kroot) and listing(inside) == before,
     "... the next server discards it: no mount, no state root, the workspace as it was",
     (os.path.exists(kroot), mounts_of(kroot), listing(inside), n.stderr()[-2000:]))
n.close()
for line in mounts_of(kroot):  # only when the test failed: leave no mount behind
    subprocess.call(["umount", "-l", line.split()[4]])
n.cleanup()
k.cleanup()
shutil.rmtree(ws_root, ignore_errors=True)

sys.exit(t.done())
