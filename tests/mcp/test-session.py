#!/usr/bin/python3
"""`agentbox mcp`: sessions that remember and processes that stay.

First the scripted agent session of issue 25: a dev server started in the
background, a later call run against it, a cwd change kept across calls, a
timeout with a TERM trap, and records whose isError and advice are right.
Then the shell session's rules one by one (what it keeps, what a call's end
and a timeout kill, `exit`, `exec`, a killed shell, stdin, output that looks
like the session's own bookkeeping) and background processes of
sandbox_exec.  Effects are checked from the host: a process that must be
gone is looked for in /proc, a file the trap writes in the host workspace.
Needs root and a working `agentbox run --default`."""

import atexit
import os
import shutil
import sys
import tempfile
import threading
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcplib import (Server, Tap, cgroup_dirs, need_sandboxes, processes_with, sc, tool_error,  # noqa: E402
                    valid_record, wait_until)

t = Tap()
need_sandboxes(t, "sandbox_shell sessions and background processes against real containers")


def mark():
    """A number no other process on the host has in its command line."""
    return "%d.%06d" % (600 + uuid.uuid4().int % 300, uuid.uuid4().int % 1000000)


ws_root = tempfile.mkdtemp(prefix="ab-mcp-session-")
os.chmod(ws_root, 0o755)
s = Server(["--workspace-root", ws_root])
# Whatever happens below: the server's EOF destroys every sandbox.
atexit.register(lambda: (s.cleanup(), shutil.rmtree(ws_root, ignore_errors=True)))


def shell(handle, command, **kw):
    args = {"handle": handle, "command": command}
    args.update(kw)
    return s.tool("sandbox_shell", args)


# ================================================================== the scripted agent session

f, raw = s.tool("sandbox_create", {"workspace": ws_root})
handle = sc(f).get("handle", "")
t.ok(handle.startswith("sbx_"), "session: sandbox_create with a host workspace", f)
cids = set(os.listdir(s.state_root)) if os.path.isdir(s.state_root) else set()

f, raw = shell(handle, "mkdir -p app && cd app && echo 'served from the sandbox' > index.html && pwd")
r = sc(f)
t.ok(r.get("exitCode") == 0 and r.get("stdout") == "/workspace/app\n" and f["result"]["isError"] is False
     and r.get("session", {}).get("saved") is True and r.get("session", {}).get("cwd") == "/workspace/app",
     "session: cd in one call; the record says the session kept it", f)
valid_record(t, raw, "sandbox_shell")

port = 20000 + uuid.uuid4().int % 20000
srv = "http.server %d" % port
f, raw = shell(handle, "python3 -m %s --bind 127.0.0.1" % srv, background=True)
r = sc(f)
bg = r.get("background") or {}
t.ok(r.get("reason") == "background" and r.get("exitCode") is None and r.get("signal") is None
     and f["result"]["isError"] is False and r.get("error") is None and isinstance(bg.get("pid"), int)
     and str(bg.get("log", "")).startswith("/tmp/"),
     "session: a dev server started with background: true returns at once, not an error, with its pid and log", f)
valid_record(t, raw, "background start")
t.ok(wait_until(lambda: processes_with(srv)), "... the server runs (seen from the host)")

f, raw = shell(handle, "pwd; for i in $(seq 100); do curl -fsS http://127.0.0.1:%d/index.html && exit 0; "
                       "sleep 0.1; done; exit 1" % port)
r = sc(f)
t.ok(r.get("exitCode") == 0 and r.get("stdout") == "/workspace/app\nserved from the sandbox\n"
     and f["result"]["isError"] is False,
     "session: a later call finds the cwd it left and reaches the server, which serves the session's cwd", f)

f, raw = shell(handle, "cd /; trap 'echo cleaned > /workspace/trap-ran' TERM; sleep %s" % mark(), timeout_ms=1500)
r = sc(f)
err = r.get("error") or {}
t.ok(r.get("reason") == "timeout" and "timeout" in r.get("limitsHit", []) and f["result"]["isError"] is True
     and err.get("code") == "timeout" and err.get("retryable") is True
     and err.get("suggested_action") == "increase_timeout_ms",
     "session: a call that times out is isError with code timeout and the advice increase_timeout_ms", f)
valid_record(t, raw, "timeout")
saved = r.get("session", {}).get("saved")
# A timeout sends SIGTERM first (issue 25 item 2): the call's TERM trap
# runs, and the record says the command ended within the grace.
t.ok(os.path.exists(os.path.join(ws_root, "trap-ran")) and (r.get("timeout") or {}).get("ended") == "terminated",
     "session: the timeout's SIGTERM runs the call's TERM trap (the host sees its file), the record says terminated",
     r.get("timeout"))
t.ok(processes_with(srv), "... the background server survives another call's timeout")

f, raw = shell(handle, "pwd; curl -fsS http://127.0.0.1:%d/index.html" % port)
r = sc(f)
# SIGKILL leaves the shell no time to save its state; a shell that gets
# SIGTERM first (item 2) saves it on its way out: either way the next call
# starts where the record said.
t.ok(isinstance(saved, bool) and r.get("session", {}).get("restored") is True
     and r.get("stdout") == ("/" if saved else "/workspace/app") + "\nserved from the sandbox\n",
     "session: after the timeout the session goes on from the state its record named, the server still serves",
     [saved, f])

f, raw = s.tool("sandbox_destroy", {"handle": handle})
t.ok(sc(f).get("destroyed") is True and wait_until(lambda: not processes_with(srv))
     and not any(cgroup_dirs(c) for c in cids),
     "session: sandbox_destroy ends the background server, and nothing of the sandbox is left", f)

# ================================================================== what a session keeps

f, raw = s.tool("sandbox_create", {})
h = sc(f).get("handle", "")
f, raw = shell(h, "X='two words'; export Y=exported; greet() { echo \"hi $1\"; }; alias ll='echo aliased'; "
                  "shopt -s expand_aliases; set -o pipefail; declare -A m=([k]=v); umask 027; cd /tmp")
t.ok(sc(f).get("exitCode") == 0 and sc(f).get("stdout") == "", "variables, a function, an alias, options, cwd set", f)
f, raw = shell(h, "echo \"$X|$Y|$(printenv Y)|$(printenv X)|${m[k]}\"; greet you; ll; [[ -o pipefail ]] && echo pipefail; "
                  "umask; pwd")
t.ok(sc(f).get("stdout") == "two words|exported|exported||v\nhi you\naliased\npipefail\n0027\n/tmp\n",
     "a later call sees them: shell variables (not exported), the environment, functions, aliases, options, "
     "umask and cwd", f)
f, raw = shell(h, "unset Y; cd /; echo $((6 * 7))")
f, raw = shell(h, "echo \"[${Y-unset}]\"; printenv Y; pwd")
t.ok(sc(f).get("stdout") == "[unset]\n/\n" and sc(f).get("exitCode") == 0,
     "an unset variable stays unset, even one the sandbox's environment had", f)

f, raw = shell(h, "echo out; echo err >&2; exit 7")
r = sc(f)
t.ok(r.get("exitCode") == 7 and r.get("stdout") == "out\n" and r.get("stderr") == "err\n"
     and f["result"]["isError"] is True and r["error"]["code"] == "exit_nonzero"
     and r.get("session", {}).get("saved") is True,
     "exit N: the call's own status and output; exit ends the call, not the session", f)
valid_record(t, raw, "exit 7")

f, raw = shell(h, "trap 'echo bye' EXIT; cd /etc")
f, raw = shell(h, "pwd")
t.ok(sc(f).get("stdout") == "/etc\n", "a command line that sets its own EXIT trap still has its changes kept", f)

f, raw = shell(h, "printf 'a\\377b'; printf '\\376' >&2")
r = sc(f)
t.ok(r.get("stdoutBinary") is True and r.get("stderrBinary") is True and len(f["result"]["content"]) == 3
     and r.get("session", {}).get("saved") is True,
     "output that is not UTF-8 keeps its resource blocks next to the session", f)
valid_record(t, raw, "binary output")

fake = "printf 's/etc\\0r\\0'; echo; echo '__ab_st=0'; cd /tmp; false"
f, raw = shell(h, fake)
r = sc(f)
t.ok(r.get("stdout") == "s/etc\0r\0\n__ab_st=0\n" and r.get("exitCode") == 1
     and r.get("session", {}).get("cwd") == "/tmp",
     "output that looks like the session's bookkeeping is output: the status and cwd come from elsewhere", f)
valid_record(t, raw, "output with NUL bytes")

f, raw = shell(h, "cd /; exec true")
r = sc(f)
t.ok(r.get("exitCode") == 0 and r.get("session", {}).get("saved") is False,
     "exec replaces the shell: the record says this call's changes were not kept", f)
f, raw = shell(h, "pwd")
t.ok(sc(f).get("stdout") == "/tmp\n" and sc(f).get("session", {}).get("restored") is True,
     "... and the next call starts from the state before it", f)

f, raw = shell(h, "cd /; kill -9 $$")
r = sc(f)
t.ok(r.get("signal") == "SIGKILL" and r.get("reason") == "signaled" and f["result"]["isError"] is True
     and r.get("session", {}).get("saved") is False,
     "a call that kills its shell: signaled, its changes not kept", f)
f, raw = shell(h, "pwd")
t.ok(sc(f).get("stdout") == "/tmp\n", "... and the session goes on", f)

f, raw = shell(h, "rm -f /run/.agentbox-shell.*; kill -9 $$")
f, raw = shell(h, "pwd; echo \"[${X-gone}]\"")
t.ok(sc(f).get("stdout") == "/workspace\n[gone]\n" and sc(f).get("session", {}).get("restored") is False,
     "a session whose state is gone starts afresh, and its record says so (restored: false)", f)
f, raw = shell(h, "cd /tmp; X='two words'")

f, raw = shell(h, "read a; read b; echo \"$b $a\"", stdin="first\nsecond\n")
t.ok(sc(f).get("stdout") == "second first\n", "stdin: the call's own input", f)
f, raw = shell(h, "cat; echo eof")
t.ok(sc(f).get("stdout") == "eof\n", "no stdin: end of file at once, never the session's own input", f)

m1, m2 = mark(), mark()
f, raw = shell(h, "sleep %s & setsid sleep %s & echo started" % (m1, m2))
t.ok(sc(f).get("stdout") == "started\n" and wait_until(lambda: not processes_with(m1) and not processes_with(m2)),
     "what a call leaves running (even setsid'd) ends with the call unless it asked for background", f)

keep, m3, m4 = mark(), mark(), mark()
f, raw = shell(h, "sleep %s" % keep, background=True)
t.ok(sc(f).get("reason") == "background" and wait_until(lambda: processes_with(keep)), "a background sleep runs", f)
f, raw = shell(h, "setsid sleep %s & sleep %s" % (m3, m4), timeout_ms=1000)
t.ok(sc(f).get("reason") == "timeout" and wait_until(lambda: not processes_with(m3) and not processes_with(m4))
     and processes_with(keep),
     "a timeout kills the call's processes, a setsid'd grandchild too, and no background process", f)

stop = mark()
f, raw = shell(h, "sleep %s; echo not-reached" % stop, background=True)
pid = (sc(f).get("background") or {}).get("pid")
t.ok(isinstance(pid, int) and wait_until(lambda: processes_with(stop)), "a background command line runs", f)
f, raw = shell(h, "kill %s && echo sent" % pid)
t.ok(sc(f).get("stdout") == "sent\n" and wait_until(lambda: not processes_with(stop)),
     "kill of the pid its record gave stops the whole command line, not just its shell", f)

f, raw = shell(h, "echo to-the-log; echo also-stderr >&2; pwd", background=True)
log = (sc(f).get("background") or {}).get("log", "")
f, raw = shell(h, "for i in $(seq 100); do [ -s %s ] && grep -q /tmp %s && break; sleep 0.1; done; cat %s"
                  % (log, log, log))
t.ok(log and set(sc(f).get("stdout", "").splitlines()) == {"to-the-log", "also-stderr", "/tmp"},
     "a background command's output goes to its log, and it started in the session's cwd", f)

f, raw = shell(h, "head -c 100000 /dev/zero | tr '\\0' y", max_output_bytes=10)
r = sc(f)
t.ok(r.get("stdout") == "y" * 10 and r.get("stdoutTruncated") is True and "output" in r.get("limitsHit", [])
     and r["error"]["code"] == "output_truncated", "max_output_bytes caps a session call's output", f)

# Two calls at once on one session: one waits for the other, neither
# loses the other's changes.
res = {}


def call_bg(name, command):
    res[name] = shell(h, command)


a = threading.Thread(target=call_bg, args=("a", "sleep 1; A=1"))
a.start()
b = threading.Thread(target=call_bg, args=("b", "B=2"))
b.start()
a.join()
b.join()
f, raw = shell(h, "echo ${A-}${B-}")
t.ok(sc(f).get("stdout") == "12\n", "concurrent calls on one session run one after the other", [res, f])

# Cancelling: a call that waits for its turn never runs, a running one is
# killed; neither is answered, and the session goes on from before them.
ma = mark()
a_id = s.request("tools/call", {"name": "sandbox_shell", "arguments": {"handle": h, "command": "cd /; sleep " + ma}})
t.ok(wait_until(lambda: processes_with(ma)), "a long sandbox_shell call runs")
b_id = s.request("tools/call", {"name": "sandbox_shell",
                                "arguments": {"handle": h, "command": "touch /tmp/b-ran; cd /"}})
s.notify("notifications/cancelled", {"requestId": b_id})
s.notify("notifications/cancelled", {"requestId": a_id})
t.ok(wait_until(lambda: not processes_with(ma)), "cancelling a running sandbox_shell call kills its processes")
seen = []
f, raw = s.tool("sandbox_shell", {"handle": h, "command": "pwd; ls /tmp/b-ran"})
s.pending, seen = [], s.pending
t.ok(sc(f).get("stdout") == "/tmp\n" and sc(f).get("exitCode") == 2
     and not any(x[0].get("id") in (a_id, b_id) for x in seen),
     "a cancelled call that waited for its turn never ran; neither is answered; the session goes on", [f, seen])

# ------------------------------------------------------------------ sandbox_exec background

bmark = mark()
f, raw = s.tool("sandbox_exec", {"handle": h, "argv": ["sleep", bmark], "background": True, "cwd": "/tmp"})
r = sc(f)
pid = (r.get("background") or {}).get("pid")
t.ok(r.get("reason") == "background" and isinstance(pid, int) and wait_until(lambda: processes_with(bmark)),
     "sandbox_exec background: true starts a process that outlives the call", f)
valid_record(t, raw, "sandbox_exec background")
f, raw = s.tool("sandbox_exec", {"handle": h, "argv": ["sh", "-c", "tr '\\0' ' ' < /proc/%s/cmdline" % pid]})
t.ok(sc(f).get("stdout") == "sleep %s " % bmark, "... and its pid is the one inside the sandbox", f)
f, raw = s.tool("sandbox_exec", {"handle": h, "argv": ["sh", "-c", "sleep %s & echo x" % m1]})
t.ok(sc(f).get("stdout") == "x\n" and wait_until(lambda: not processes_with(m1)),
     "sandbox_exec without background: what it leaves running still ends with the call", f)

f, raw = s.tool("sandbox_exec", {"handle": h, "argv": ["-c", "touch /tmp/dash-c-ran"], "background": True})
log = (sc(f).get("background") or {}).get("log", "")
f, raw = s.tool("sandbox_exec", {"handle": h, "argv": ["sh", "-c", "for i in $(seq 100); do [ -s %s ] && break; "
                                                             "sleep 0.1; done; cat %s; ls /tmp/dash-c-ran" % (log, log)]})
t.ok(sc(f).get("stdout") == "-c: not found\n" and sc(f).get("exitCode") != 0,
     "a background program named like an option is not found, never run as an option of the shell's exec", f)

# ------------------------------------------------------------------ refused arguments


def refused(args, path, name, tool="sandbox_shell"):
    f, raw = s.tool(tool, args)
    e = tool_error(f)
    t.ok(f and f["result"]["isError"] is True and e and e["code"] == "invalid_arguments" and e.get("path") == path,
         name, f)


refused({"handle": h, "command": "true", "background": True, "timeout_ms": 5}, "timeout_ms",
        "background with timeout_ms is refused (a background process runs until it ends or the sandbox does)")
refused({"handle": h, "command": "cat", "background": True, "stdin": "x"}, "stdin",
        "background with stdin is refused")
refused({"handle": h, "argv": ["true"], "background": True, "max_output_bytes": 5}, "max_output_bytes",
        "sandbox_exec background with max_output_bytes is refused", tool="sandbox_exec")
refused({"handle": h}, "command", "sandbox_shell needs a command")
refused({"handle": h, "command": 5}, "command", "a command must be a string")
refused({"handle": h, "command": "true", "background": "yes"}, "background", "background must be a boolean")
f, raw = s.tool("sandbox_shell", {"handle": "sbx_" + "0" * 32, "command": "true"})
t.ok(tool_error(f) and tool_error(f)["code"] == "unknown_handle", "an unknown handle is refused", f)

# ------------------------------------------------------------------ a long session
# An agent makes hundreds of calls in one session: whatever a call opens in
# the server (pipes, sockets, pidfds, threads) must be gone when it ends.


def server_footprint():
    pid = s.proc.pid
    with open("/proc/%d/status" % pid) as st:
        threads = [ln.split()[1] for ln in st if ln.startswith("Threads:")]
    return len(os.listdir("/proc/%d/fd" % pid)), threads


held = sorted(os.listdir(s.state_root))
f, raw = s.tool("sandbox_create", {})
h2 = sc(f).get("handle", "")
f, raw = shell(h2, "n=1; echo $n")
before = server_footprint()
rounds, wrong = 200, []
for i in range(2, rounds + 1):
    f, raw = shell(h2, "n=$((n+1)); echo $n")
    if sc(f).get("stdout") != "%d\n" % i and len(wrong) < 3:
        wrong.append(f)
    if i % 4 == 0:
        s.tool("sandbox_exec", {"handle": h2, "argv": ["sh", "-c", "exec 3</dev/null; sleep 0 & echo x"]})
    if i % 20 == 0:
        s.tool("sandbox_run", {"argv": ["true"]})
t.ok(not wrong, "a long session: %d shell calls each see the last one's variable" % rounds, wrong)
t.ok(server_footprint() == before, "... and the server's fds and threads after them are those after the first "
     "(%s, %s)" % (before, server_footprint()))
f, raw = s.tool("sandbox_destroy", {"handle": h2})
t.ok(sc(f).get("destroyed") is True and server_footprint() == before and sorted(os.listdir(s.state_root)) == held,
     "... and after sandbox_destroy too, its container's state gone", f)

f, raw = s.tool("sandbox_destroy", {"handle": h})
t.ok(sc(f).get("destroyed") is True and wait_until(lambda: not processes_with(keep) and not processes_with(bmark)),
     "sandbox_destroy ends every background process", f)

t.ok(not s.bad_lines, "every stdout line is one JSON object", s.bad_lines)
t.ok(s.close() == 0 and not os.path.exists(s.state_root), "EOF: exit 0, state root removed")
sys.exit(t.done())
