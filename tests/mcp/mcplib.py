"""Helpers of the `agentbox mcp` test suites: a raw-frame client, TAP, and
host-side checks that a container is really gone.

The client keeps every line the server writes on stdout, raw; the suites
check that each one is a JSON object on its own line, so a single stray
byte on the protocol stream fails them.
"""

import glob
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
AGENTBOX = os.environ.get("AGENTBOX") or os.path.join(os.environ.get("AB_TOP_BUILDDIR", "."), "agentbox")
TOP_SRCDIR = os.environ.get("AB_TOP_SRCDIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
WAIT = 120  # seconds: a bound on waiting, never an assertion about speed

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_record  # noqa: E402


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, cond, name, diag=None):
        self.n += 1
        if not cond:
            self.failed += 1
        print("%sok %d - %s" % ("" if cond else "not ", self.n, name))
        if not cond and diag is not None:
            for line in str(diag).splitlines()[:40]:
                print("#   " + line)
        sys.stdout.flush()
        return cond

    def todo(self, cond, name, reason):
        """A check of work not done yet: TAP TODO.  automake counts a
        failing one as XFAIL and a passing one as XPASS, which fails the
        suite, so whoever makes it pass must turn it into a plain check."""
        self.n += 1
        print("%sok %d - %s # TODO %s" % ("" if cond else "not ", self.n, name, reason))
        sys.stdout.flush()
        return cond

    def skip(self, name, reason):
        self.n += 1
        print("ok %d - %s # SKIP %s" % (self.n, name, reason))
        sys.stdout.flush()

    def done(self):
        print("1..%d" % self.n)
        return 1 if self.failed else 0


def meta(version=MODERN, caps=True, **extra):
    m = {"io.modelcontextprotocol/protocolVersion": version,
         "io.modelcontextprotocol/clientInfo": {"name": "agentbox-tests", "version": "1"}}
    if caps:
        m["io.modelcontextprotocol/clientCapabilities"] = {}
    m.update(extra)
    return m


class Server:
    """`agentbox --root ROOT mcp ARGS` with pipes on all three streams."""

    def __init__(self, args=(), root=None):
        self.tmp = tempfile.mkdtemp(prefix="ab-mcp-test-")
        # the sandboxes' user namespaces traverse the state root's parents
        os.chmod(self.tmp, 0o711)
        self.root = root or os.path.join(self.tmp, "root")
        self.err_path = os.path.join(self.tmp, "stderr")
        self.errf = open(self.err_path, "wb")
        self.proc = subprocess.Popen([AGENTBOX, "--root", self.root, "mcp"] + list(args),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.errf)
        self.raw_lines = []      # every stdout line, bytes
        self.bad_lines = []      # lines that are not one JSON object
        self.frames = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.pending = []
        self.next_id = 1000

    @property
    def state_root(self):
        return os.path.join(self.root, "mcp-%d" % self.proc.pid)

    def _read(self):
        for raw in self.proc.stdout:
            self.raw_lines.append(raw)
            try:
                frame = json.loads(raw.decode("utf-8"))
                if not isinstance(frame, dict) or not raw.endswith(b"\n"):
                    raise ValueError("not an object on its own line")
            except ValueError as e:
                self.bad_lines.append((raw[:200], str(e)))
                continue
            self.frames.put((frame, raw))
        self.frames.put((None, None))

    def send_raw(self, data):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, obj):
        self.send_raw(json.dumps(obj, separators=(",", ":")).encode() + b"\n")

    def request(self, method, params=None, id=None, modern=True):
        if id is None:
            self.next_id += 1
            id = self.next_id
        msg = {"jsonrpc": "2.0", "id": id, "method": method}
        params = dict(params or {})
        if modern:
            params["_meta"] = dict(meta(), **params.get("_meta", {}))
        if params:
            msg["params"] = params
        self.send(msg)
        return id

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    def next_frame(self, timeout=WAIT):
        """The next frame (pending ones first), or None on EOF/timeout."""
        if self.pending:
            return self.pending.pop(0)
        try:
            frame, raw = self.frames.get(timeout=timeout)
        except queue.Empty:
            return None
        if frame is None:
            self.frames.put((None, None))
            return None
        return frame, raw

    def response(self, id, timeout=WAIT, keep=None):
        """The response to id; other frames are kept in order (and appended
        to `keep` when given)."""
        deadline = time.monotonic() + timeout
        skipped = []
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None, None
                got = self.next_frame(left)
                if got is None:
                    return None, None
                frame, raw = got
                if frame.get("id") == id and ("result" in frame or "error" in frame):
                    return frame, raw
                skipped.append(got)
                if keep is not None:
                    keep.append(frame)
        finally:
            self.pending = skipped + self.pending

    def call(self, method, params=None, modern=True, id=None, timeout=WAIT):
        rid = self.request(method, params, id=id, modern=modern)
        return self.response(rid, timeout=timeout)[0]

    def tool(self, name, arguments, modern=True, timeout=WAIT, meta_extra=None, id=None):
        params = {"name": name, "arguments": arguments}
        if meta_extra:
            params["_meta"] = meta_extra
        rid = self.request("tools/call", params, modern=modern, id=id)
        return self.response(rid, timeout=timeout)

    def initialize(self, version=LEGACY):
        r = self.call("initialize", {"protocolVersion": version, "capabilities": {},
                                     "clientInfo": {"name": "agentbox-tests", "version": "1"}}, modern=False)
        self.notify("notifications/initialized")
        return r

    def close(self, timeout=WAIT):
        """Close stdin; the exit status (None if it had to be killed)."""
        try:
            self.proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            rc = None
        self.reader.join(timeout=10)
        self.errf.close()
        return rc

    def stderr(self):
        with open(self.err_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def cleanup(self):
        if self.proc.poll() is None:
            self.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


def text_of(frame):
    return frame["result"]["content"][0]["text"]


def tool_error(frame):
    """The error object of an isError tool result (parsed from its text)."""
    try:
        return json.loads(text_of(frame))["error"]
    except (KeyError, ValueError, TypeError, IndexError):
        return None


def record_problems(raw):
    return check_record.frame_problems(raw)


def sc(frame):
    """structuredContent of a tool result, {} for anything else."""
    return frame["result"]["structuredContent"] if frame and "result" in frame else {}


def valid_record(t, raw, name):
    """A check that the frame matches docs/result-schema.json."""
    p = record_problems(raw) if raw else ["no response"]
    return t.ok(not p, name + ": the frame matches docs/result-schema.json", p)


# ---------------------------------------------------------------- host side

def processes_with(marker):
    """Pids of processes whose command line contains marker."""
    found = []
    me = os.getpid()
    for d in glob.glob("/proc/[0-9]*"):
        try:
            with open(d + "/cmdline", "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        pid = int(d[6:])
        if pid != me and marker.encode() in cmd:
            found.append(pid)
    return found


def cgroup_dirs(container_id):
    """Cgroup directories of a container that still exist (any controller)."""
    name = "agentbox-" + container_id
    found = []
    for pattern in ("/sys/fs/cgroup/%s", "/sys/fs/cgroup/*/%s", "/sys/fs/cgroup/*/*/%s", "/sys/fs/cgroup/*/*/*/%s",
                    "/sys/fs/cgroup/*/*/*/*/%s"):
        found.extend(glob.glob(pattern % name))
    return found


def wait_until(cond, timeout=WAIT, step=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(step)
    return cond()


def containers_work():
    """Why sandboxes cannot run here, or None when they can."""
    if os.geteuid() != 0:
        return "needs root"
    tmp = tempfile.mkdtemp(prefix="ab-mcp-probe-")
    os.chmod(tmp, 0o711)
    try:
        p = subprocess.run([AGENTBOX, "--root", tmp, "run", "--default", "probe", "--", "true"],
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=WAIT)
        if p.returncode != 0:
            return "run --default not available: " + p.stderr.decode("utf-8", "replace").strip()[:200]
        return None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def need_sandboxes(t, what):
    """Skip the rest of the suite (and exit) when sandboxes cannot run here."""
    why = containers_work()
    if why:
        t.skip(what, why)
        sys.exit(t.done())


def exec_works():
    p = subprocess.run([AGENTBOX, "exec", "--help"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    return p.returncode == 0
