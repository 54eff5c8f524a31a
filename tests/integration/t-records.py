#!/usr/bin/python3
"""The result records of real runs: `agentbox run --record` and `exec --record`.

Every frame is checked against docs/result-schema.json with python3-jsonschema
(tests/mcp/check_record.py: one LF-terminated line of UTF-8 JSON, the text
block mirroring structuredContent, blobs only for bytes that are not UTF-8),
and then for what the run really did: exit codes, signals and the core flag,
the OOM killer, pids.max and RLIMIT_CPU, output bytes, setup failures as
JSON-RPC errors, ids, and egress the nftables wall denied.  Where the effect
exists outside the sandbox (a core file, a process, agentbox's exit status),
it is checked from the host.

Needs root and the abtest helper; skipped for runtimes other than agentbox.
Knobs as for the shell suites: RUNTIME or AGENTBOX, ABTEST, BUSYBOX,
AB_RT_TIMEOUT (seconds before a hung call is killed).
"""

import base64
import copy
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

TOP_SRCDIR = os.environ.get("AB_TOP_SRCDIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
TOP_BUILDDIR = os.environ.get("AB_TOP_BUILDDIR") or os.getcwd()
RUNTIME = os.environ.get("RUNTIME") or os.environ.get("AGENTBOX") or os.path.join(TOP_BUILDDIR, "agentbox")
ABTEST = os.environ.get("ABTEST") or os.path.join(TOP_BUILDDIR, "tests", "helper", "abtest")
BUSYBOX = os.environ.get("BUSYBOX", "/bin/busybox")
RT_TIMEOUT = int(os.environ.get("AB_RT_TIMEOUT", "60"))
LIBDIR = os.path.join(TOP_SRCDIR, "tests", "integration")
APPLETS = "sh cat echo env false kill ls mkdir sleep test true".split()
MiB = 1 << 20

sys.path.insert(0, LIBDIR)
sys.path.insert(0, os.path.join(TOP_SRCDIR, "tests", "mcp"))
import cfg  # noqa: E402


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, cond, name, diag=None):
        self.n += 1
        cond = bool(cond)
        if not cond:
            self.failed += 1
        print("%sok %d - %s" % ("" if cond else "not ", self.n, name))
        if not cond and diag is not None:
            for line in str(diag).splitlines()[:30]:
                print("#   " + line)
        sys.stdout.flush()
        return cond

    def is_(self, got, want, name):
        return self.ok(got == want, name, "got:      %r\nexpected: %r" % (got, want))

    def skip(self, name, reason):
        self.n += 1
        print("ok %d - %s # SKIP %s" % (self.n, name, reason))
        sys.stdout.flush()

    def diag(self, text):
        for line in str(text).splitlines():
            print("# " + line)

    def done(self):
        print("1..%d" % self.n)
        return 1 if self.failed else 0


def skip_all(reason):
    print("1..0 # SKIP %s" % reason)
    sys.exit(0)


class Run:
    """One agentbox invocation: exit status, output, the raw record and the frame."""

    def __init__(self, rc, out, err, raw):
        self.rc, self.out, self.err, self.raw = rc, out, err, raw
        try:
            self.frame = json.loads(raw.decode("utf-8"))
        except ValueError:
            self.frame = None

    @property
    def result(self):
        return (self.frame or {}).get("result") or {}

    @property
    def sc(self):
        return self.result.get("structuredContent") or {}

    @property
    def error(self):
        return (self.frame or {}).get("error") or {}

    def __repr__(self):
        return "rc=%s\nstderr=%r\nrecord=%s" % (self.rc, self.err[-400:], self.raw[:1500].decode("utf-8", "replace"))


class Host:
    """The test directory, a private state root, bundles, and the clean-up."""

    def __init__(self, tap):
        self.tap = tap
        self.T = tempfile.mkdtemp(prefix="abtest.", dir=os.environ.get("TMPDIR", "/tmp"))
        # agentbox's cache in the test directory, as lib.sh does
        os.environ["AGENTBOX_CACHE_DIR"] = os.path.join(self.T, "cache")
        os.chmod(self.T, 0o711)  # traversable by the uids a user namespace maps to
        self.state = os.path.join(self.T, "state")
        self.ids = []
        self.rootfs_list = os.path.join(self.T, "rootfs-list")
        open(self.rootfs_list, "w").close()
        self.snapshot = os.path.join(self.T, "snapshot.json")
        subprocess.run([sys.executable, os.path.join(LIBDIR, "leftovers.py"), "snapshot", self.snapshot], check=True)
        self.base = None
        self.ws = None
        self.frames = []  # every record of the file, for checks across all of them

    def new_id(self):
        self.ids.append("ab-%d-%d" % (os.getpid(), len(self.ids) + 1))
        return self.ids[-1]

    def _rootfs(self, d):
        for sub in ("bin", "proc", "sys", "dev", "tmp", "etc", "root"):
            os.makedirs(os.path.join(d, sub), mode=0o755, exist_ok=True)
        for src, name in ((ABTEST, "abtest"), (BUSYBOX, "busybox")):
            shutil.copyfile(src, os.path.join(d, "bin", name))
            os.chmod(os.path.join(d, "bin", name), 0o755)
        for a in APPLETS:
            os.symlink("busybox", os.path.join(d, "bin", a))
        with open(os.path.join(d, "etc", "passwd"), "w") as f:
            f.write("root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n")
        with open(os.path.join(d, "etc", "group"), "w") as f:
            f.write("root:x:0:\nnogroup:x:65534:\n")

    def bundle(self, name, *edits, out=False):
        """name/config.json (cfg.py's runc-like default, `abtest true`, then
        EDITS in cfg.py's syntax) and name/rootfs.  out: the host directory
        name/out bound read-write at /out."""
        if self.base is None:
            self.base = os.path.join(self.T, "base-rootfs")
            self._rootfs(self.base)
        d = os.path.join(self.T, name)
        os.makedirs(d)
        shutil.copytree(self.base, os.path.join(d, "rootfs"), symlinks=True)
        try:
            listed = (os.path.join(d, "rootfs") + "\n").encode("utf-8")
        except UnicodeEncodeError:
            listed = b""  # leftovers.py reads the list as text: such a bundle must not outlive its test
        with open(self.rootfs_list, "ab") as f:
            f.write(listed)
        doc = copy.deepcopy(cfg.DEFAULT)
        doc["process"]["args"] = ["/bin/abtest", "true"]
        if out:
            os.makedirs(os.path.join(d, "out"))
            os.makedirs(os.path.join(d, "rootfs", "out"))
            doc["mounts"].append({"destination": "/out", "type": "bind", "source": os.path.join(d, "out"),
                                  "options": ["rbind", "rw"]})
        for e in edits:
            cfg.apply(doc, e)
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(doc, f, indent=2)
        return d

    def workspace(self):
        """A host directory holding abtest, for --default --workspace."""
        if self.ws is None:
            self.ws = os.path.join(self.T, "ws")
            os.makedirs(self.ws)
            shutil.copyfile(ABTEST, os.path.join(self.ws, "abtest"))
            os.chmod(os.path.join(self.ws, "abtest"), 0o755)
        return self.ws

    def agentbox(self, *args, pass_fds=(), capture=True):
        """agentbox --root STATE ARGS with stdin from /dev/null: (rc, stdout, stderr).
        capture=False: stdout and stderr to /dev/null (a detached container
        keeps the stdio it was given, and would hold our pipes open)."""
        stdio = subprocess.PIPE if capture else subprocess.DEVNULL
        p = subprocess.Popen([RUNTIME, "--root", self.state] + list(args), stdin=subprocess.DEVNULL,
                             stdout=stdio, stderr=stdio, pass_fds=pass_fds)
        try:
            out, err = p.communicate(timeout=RT_TIMEOUT)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            return 124, out, err
        return p.returncode, out, err

    def record(self, sub, *args):
        """agentbox SUB --record FILE ARGS: the Run, its frame kept for later checks."""
        path = os.path.join(self.T, "rec-%d" % len(self.frames))
        rc, out, err = self.agentbox(sub, "--record", path, *args)
        try:
            with open(path, "rb") as f:
                raw = f.read()
        except OSError:
            raw = b""
        r = Run(rc, out, err, raw)
        self.frames.append(r)
        return r

    def record_fd(self, sub, *args):
        """agentbox SUB --record-fd N ARGS, N the write end of a pipe read
        once agentbox is done: the Run."""
        rfd, wfd = os.pipe()
        rc, out, err = self.agentbox(sub, "--record-fd", str(wfd), *args, pass_fds=(wfd,))
        os.close(wfd)
        with os.fdopen(rfd, "rb") as f:
            r = Run(rc, out, err, f.read())
        self.frames.append(r)
        return r

    def run(self, bundle, *opts):
        return self.record("run", *opts, "--bundle", bundle, self.new_id())

    def sandbox(self, *opts_and_program):
        """run --default --workspace WS [OPTS] ID -- PROGRAM..."""
        i = opts_and_program.index("--")
        return self.record("run", "--default", "--workspace", self.workspace(), *opts_and_program[:i],
                           self.new_id(), *opts_and_program[i:])

    def killed_from_host(self, bundle):
        """run --record BUNDLE in the background, SIGKILL its container's
        init from the host once it runs the program (its command line is the
        bundle's, not the runtime's: killed earlier, it is a setup failure),
        and return the Run."""
        cid = self.new_id()
        path = os.path.join(self.T, "rec-%d" % len(self.frames))
        p = subprocess.Popen([RUNTIME, "--root", self.state, "run", "--record", path, "--bundle", bundle, cid],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):  # a bounded wait for the container to run, not a timing assertion
            rc, out, _err = self.agentbox("state", cid)
            pid = json.loads(out).get("pid") if rc == 0 else 0
            try:
                with open("/proc/%d/cmdline" % pid, "rb") as f:
                    execed = pid and b"/bin/abtest" in f.read()
            except OSError:
                execed = False
            if execed:
                os.kill(pid, signal.SIGKILL)
                break
            time.sleep(0.1)
        try:
            rc = p.wait(timeout=RT_TIMEOUT)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = p.wait()
        with open(path, "rb") as f:
            r = Run(rc, b"", b"", f.read())
        self.frames.append(r)
        return r

    def finish(self):
        for i in self.ids:
            self.agentbox("delete", "--force", i)
        p = subprocess.run([sys.executable, os.path.join(LIBDIR, "leftovers.py"), "check", self.snapshot,
                            "--shell-pid", str(os.getpid()), "--dir", self.T, "--state", self.state,
                            "--id-prefix", "ab-%d-" % os.getpid(), "--rootfs-list", self.rootfs_list],
                           stdout=subprocess.PIPE, text=True)
        bad = [l for l in p.stdout.splitlines() if l and not l.startswith("note:")]
        self.tap.ok(p.returncode == 0 and not bad, "nothing left behind (processes, mounts, cgroups, state, netns, links)",
                    "\n".join(bad))
        shutil.rmtree(self.T, ignore_errors=True)


# ---- what every frame must be -------------------------------------------------------


def problems(r):
    """check_record's verdict on the raw frame, plus what the issue asks of
    every frame beyond the schema."""
    found = check_record.frame_problems(r.raw)
    if found or r.frame is None:
        return found or ["no frame"]
    if "result" in r.frame:
        foreign = [k for k in r.result["_meta"] if not k.startswith("dev.agentbox/")]
        if foreign:
            found.append("_meta keys outside dev.agentbox/: %s" % foreign)
    else:
        if -32768 <= r.error["code"] <= -32000:
            found.append("error code %d is in the range JSON-RPC reserves" % r.error["code"])
    return found


def frame_ok(t, r, what):
    p = problems(r)
    return t.ok(not p, "%s: the record is one LF-terminated line of UTF-8 JSON, valid against the schema" % what,
                "\n".join(p) + "\n" + repr(r))


def expected_bytes(*args, stream="stdout"):
    """What `abtest write-bytes ARGS` (or stderr-bytes) writes, produced on the host."""
    p = subprocess.run([ABTEST] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True)
    return p.stdout if stream == "stdout" else p.stderr


def blob(r, name):
    for b in r.result.get("content", [])[1:]:
        if b["resource"]["uri"].endswith("/" + name):
            return base64.b64decode(b["resource"]["blob"])
    return None


# ---- the tests ----------------------------------------------------------------------


def test_checker(t, h):
    """The checker itself must be able to say no."""
    r = h.run(h.bundle("exit0", 'process.args=["/bin/abtest","exit","0"]'))
    good = r.raw
    broken = json.loads(good)
    del broken["result"]["structuredContent"]["reason"]
    t.ok(check_record.frame_problems(json.dumps(broken).encode() + b"\n"),
         "the checker rejects a frame whose structuredContent lacks `reason` (it is not vacuous)")
    t.ok(check_record.frame_problems(good.replace(b',"result"', b',\n"result"', 1)),
         "the checker rejects a frame split over two lines")


def test_exits(t, h):
    for code in (0, 42, 255):
        r = h.run(h.bundle("exit-%d" % code, 'process.args=["/bin/abtest","exit","%d"]' % code))
        frame_ok(t, r, "exit %d" % code)
        t.ok(r.rc == code and r.sc.get("exitCode") == code and r.sc.get("signal") is None
             and r.sc.get("reason") == "exited" and r.result.get("_meta", {}).get("dev.agentbox/exitStatus") == code,
             "exit %d: exitCode %d, no signal, reason exited; run and _meta exitStatus say %d" % (code, code, code), r)
        if code == 0:
            t.ok(r.result.get("isError") is False and r.sc.get("error") is None,
                 "exit 0: isError false, error null", r)
        else:
            t.ok(r.result.get("isError") is True and (r.sc.get("error") or {}).get("code") == "exit_nonzero",
                 "exit %d: isError true, error.code exit_nonzero" % code, r)
    text = r.result["content"][0]
    t.ok(text.get("type") == "text" and json.loads(text.get("text", "null")) == r.sc,
         "the text block is structuredContent serialized (for clients that read only content)", r)
    meta = r.result.get("_meta", {})
    t.ok(meta and all(k.startswith("dev.agentbox/") for k in meta) and meta.get("dev.agentbox/containerId") == h.ids[-1],
         "_meta: every key is under dev.agentbox/, containerId is the container's id", meta)


def core_files(rootfs):
    return sorted(n for n in os.listdir(rootfs) if n == "core" or n.startswith("core."))


def test_signals(t, h):
    r = h.run(h.bundle("segv", 'process.args=["/bin/abtest","kill-self","SEGV"]'))
    frame_ok(t, r, "SIGSEGV")
    t.ok(r.rc == 139 and r.sc.get("exitCode") is None and r.sc.get("signal") == "SIGSEGV"
         and r.sc.get("reason") == "signaled" and r.result.get("isError") is True,
         "SIGSEGV: signal SIGSEGV, exitCode null, reason signaled, isError; run exits 128+11", r)

    # The core flag is the kernel's: a core is written (and the flag set) only
    # with RLIMIT_CORE raised.  core_pattern "core" puts the file in the
    # program's cwd, the rootfs's / here, where the host can see it.  A shell
    # that is not pid 1 (no pid namespace) dies of the signal it sends itself.
    pattern = open("/proc/sys/kernel/core_pattern").read().strip()
    if pattern.startswith("|") or "/" in pattern or not pattern.startswith("core"):
        for name in ("with RLIMIT_CORE raised: coreDumped true and a core file on the host",
                     "with RLIMIT_CORE 0: coreDumped false and no core file"):
            t.skip("SIGSEGV " + name, "core_pattern is %r, not a file name in the cwd" % pattern)
        return
    for limit, dumped in ((1 << 30, True), (0, False)):
        b = h.bundle("core-%d" % limit, 'process.args=["/bin/sh","-c","kill -SEGV $$"]', "linux.namespaces-=pid",
                     "root.readonly=false",
                     'process.rlimits=[{"type":"RLIMIT_CORE","soft":%d,"hard":%d}]' % (limit, limit))
        r = h.run(b)
        cores = core_files(os.path.join(b, "rootfs"))
        t.ok(r.rc == 139 and r.sc.get("signal") == "SIGSEGV" and r.sc.get("coreDumped") is dumped
             and bool(cores) is dumped and (" (core dumped)" in (r.sc.get("error") or {}).get("message", "")) is dumped,
             "SIGSEGV with RLIMIT_CORE %s: coreDumped %s, %s core file in the rootfs on the host, run exits 139"
             % ("raised" if dumped else "0", str(dumped).lower(), "a" if dumped else "no"), "%r\ncores: %s" % (r, cores))


def test_limits(t, h):
    r = h.sandbox("--memory", "32M", "--", "/workspace/abtest", "memhog", "256")
    frame_ok(t, r, "OOM")
    t.ok(r.rc == 137 and r.sc.get("reason") == "oom_killed" and "memory" in r.sc.get("limitsHit", [])
         and r.sc.get("signal") == "SIGKILL" and r.result.get("isError") is True
         and (r.sc.get("error") or {}).get("code") == "oom_killed",
         "memhog 256 MiB in --memory 32M: reason oom_killed (not a bare SIGKILL), limitsHit has memory, exit 137", r)

    r = h.sandbox("--pids", "16", "--", "/workspace/abtest", "forkbomb")
    frame_ok(t, r, "fork bomb")
    t.ok("pids" in r.sc.get("limitsHit", []) and r.result.get("isError") is True
         and (r.sc.get("error") or {}).get("code") == "limit_exceeded",
         "a fork bomb held by pids.max (--pids 16): limitsHit has pids, isError, error.code limit_exceeded", r)

    spin = 'process.args=["/bin/sh","-c","while :; do :; done"]'
    r = h.run(h.bundle("cpu", spin, "linux.namespaces-=pid",
                       'process.rlimits=[{"type":"RLIMIT_CPU","soft":1,"hard":30}]'))
    frame_ok(t, r, "RLIMIT_CPU")
    t.ok(r.rc == 152 and r.sc.get("signal") == "SIGXCPU" and r.sc.get("limitsHit") == ["cpu"]
         and r.result.get("isError") is True,
         "a busy loop past RLIMIT_CPU's soft limit dies of SIGXCPU: limitsHit [cpu], exit 152", r)
    cpu = (r.sc.get("cpuUserUs") or 0) + (r.sc.get("cpuSystemUs") or 0)
    # The kernel's RLIMIT_CPU clock is tick-sampled and runs ahead of the
    # precise runtime the cgroup reports (by a third under load): a loose bound.
    t.ok(cpu >= 100000, "... and the record's CPU time shows what it burned (%d us user+system)" % cpu, r)

    # As pid 1 of its pid namespace (the usual case) the program never sees
    # SIGXCPU, which the kernel does not deliver to an init without a
    # handler; at the hard limit it sends SIGKILL, which must still read as
    # the CPU limit and not as a bare kill.
    r = h.run(h.bundle("cpu-init", spin, 'process.rlimits=[{"type":"RLIMIT_CPU","soft":1,"hard":1}]'))
    frame_ok(t, r, "RLIMIT_CPU as pid 1")
    t.ok(r.rc == 137 and r.sc.get("signal") == "SIGKILL" and r.sc.get("limitsHit") == ["cpu"]
         and r.sc.get("reason") == "signaled"
         and "CPU time limit" in (r.sc.get("error") or {}).get("message", ""),
         "pid 1 killed at RLIMIT_CPU's hard limit: SIGKILL, limitsHit says cpu, and so does the message", r)

    # ... but a SIGKILL from elsewhere, well below the limit, is not the limit.
    b = h.bundle("cpu-killed", 'process.args=["/bin/abtest","sleep-forever"]',
                 'process.rlimits=[{"type":"RLIMIT_CPU","soft":30,"hard":30}]')
    r = h.killed_from_host(b)
    t.ok(r.rc == 137 and r.sc.get("signal") == "SIGKILL" and r.sc.get("limitsHit") == [],
         "pid 1 with an RLIMIT_CPU, SIGKILLed from the host long before it: limitsHit stays empty", r)


def test_output(t, h):
    want_out = expected_bytes("write-bytes", "1234")
    want_err = expected_bytes("stderr-bytes", "567", stream="stderr")
    r = h.run(h.bundle("bytes", 'process.args=["/bin/sh","-c","/bin/abtest write-bytes 1234 && /bin/abtest stderr-bytes 567"]'))
    frame_ok(t, r, "two streams")
    t.ok(r.sc.get("stdout", "").encode() == want_out and r.sc.get("stdoutBytes") == 1234
         and r.sc.get("stdoutTruncated") is False and r.sc.get("stdoutBinary") is False,
         "stdout: the 1234 bytes the program wrote, stdoutBytes 1234, not truncated, not binary", r)
    t.ok(r.sc.get("stderr", "").encode() == want_err and r.sc.get("stderrBytes") == 567
         and r.sc.get("stderrTruncated") is False,
         "stderr: the 567 bytes the program wrote, stderrBytes 567, kept apart from stdout", r)

    want = expected_bytes("write-bytes", "3000", "binary")
    r = h.run(h.bundle("binary", 'process.args=["/bin/abtest","write-bytes","3000","binary"]'))
    frame_ok(t, r, "binary stdout")
    t.ok(r.sc.get("stdoutBinary") is True and "\ufffd" in r.sc.get("stdout", "") and r.sc.get("stdoutBytes") == 3000,
         "binary stdout: the frame stays UTF-8, the text carries U+FFFD, stdoutBinary true, stdoutBytes 3000", r)
    t.ok(blob(r, "stdout") == want, "... and the resource blob holds the 3000 bytes exactly", r)
    t.ok(r.result.get("isError") is False, "... and binary output is not an error (isError false)", r)


def test_stats(t, h):
    r = h.sandbox("--memory", "256M", "--", "/workspace/abtest", "memhog", "64")
    frame_ok(t, r, "memhog 64")
    sc = r.sc
    t.ok(r.rc == 0 and r.result.get("isError") is False, "memhog 64 MiB in --memory 256M exits 0, isError false", r)
    t.ok(isinstance(sc.get("memoryPeakBytes"), int) and sc["memoryPeakBytes"] >= 64 * MiB,
         "memoryPeakBytes is at least the 64 MiB it touched (%s)" % sc.get("memoryPeakBytes"), r)
    t.ok(all(isinstance(sc.get(k), int) and sc[k] >= 0 for k in ("durationMs", "cpuUserUs", "cpuSystemUs")),
         "durationMs, cpuUserUs and cpuSystemUs are present and non-negative", r)


def check_setup_error(t, r, what, cls, step=None, errno_name=None, action=None, names=None):
    frame_ok(t, r, what)
    e, data = r.error, r.error.get("data", {})
    checks = [r.rc == 125, "result" not in (r.frame or {}), data.get("class") == cls,
              isinstance(e.get("code"), int) and not -32768 <= e["code"] <= -32000,
              isinstance(data.get("errno"), int) and data.get("step"),
              isinstance(data.get("retryable"), bool) and data.get("suggested_action")]
    if step:
        checks.append(data.get("step") == step)
    if errno_name:
        checks.append(data.get("errnoName") == errno_name)
    if action:
        checks.append(data.get("suggested_action") == action)
    if names:
        checks.append(names in e.get("message", ""))
    t.ok(all(checks), "%s: a JSON-RPC error (no result), class %s%s, code outside -32768..-32000, data with step, "
         "errno, retryable, suggested_action%s; run exits 125"
         % (what, cls, ", step " + step if step else "", "; the message names " + names if names else ""), r)


def test_setup_errors(t, h):
    b = h.bundle("no-rootfs")
    shutil.rmtree(os.path.join(b, "rootfs"))
    check_setup_error(t, h.run(b), "missing rootfs", "config", errno_name="ENOENT", action="fix_arguments",
                      names=os.path.join(b, "rootfs"))

    # A bundle path that is not UTF-8 ends up in the message: still a UTF-8 frame.
    b = h.bundle("no-rootfs-\udcff\udcfe")
    shutil.rmtree(os.path.join(b, "rootfs"))
    r = h.run(b)
    check_setup_error(t, r, "missing rootfs under a non-UTF-8 path", "config")
    t.ok("\ufffd" in r.error.get("message", ""), "... the path's bad bytes are carried as U+FFFD", r)

    check_setup_error(t, h.run(h.bundle("hostile", 'mounts+={"destination":"/proc/../../etc","type":"tmpfs","source":"tmpfs"}')),
                      "hostile config (a mount destination climbing out with ..)", "config", action="fix_arguments",
                      names="destination")
    check_setup_error(t, h.run(h.bundle("hook", 'hooks={"createRuntime":[{"path":"/bin/false"}]}')),
                      "failing createRuntime hook", "hook", step="hooks", names="hooks.createRuntime[0]")
    # Above fs.nr_open even root cannot raise RLIMIT_NOFILE.
    check_setup_error(t, h.run(h.bundle("rlimit", 'process.rlimits=[{"type":"RLIMIT_NOFILE","soft":1024,"hard":1099511627776}]')),
                      "rlimit above the host's hard limit", "resource", step="rlimits", errno_name="EPERM",
                      action="reduce_limits", names="process.rlimits[0]")
    gone = [i for i in h.ids[-5:] if h.agentbox("state", i)[0] == 0]
    t.ok(not gone, "no failed setup leaves a container behind", gone)

    r = h.run(h.bundle("missing", 'process.args=["/bin/nonexistent"]'))
    frame_ok(t, r, "missing program")
    err = r.sc.get("error") or {}
    t.ok(r.rc == 127 and r.sc.get("exitCode") == 127 and r.sc.get("reason") == "exited" and r.result.get("isError") is True
         and "/bin/nonexistent" in r.sc.get("stderr", "") and "command not found" in err.get("message", "")
         and err.get("suggested_action") == "fix_command",
         "a missing program is a tool error, not a broken sandbox: exit 127, isError, stderr names it, "
         "the message says command not found", r)


def test_ids(t, h):
    b = h.bundle("ids", 'process.args=["/bin/abtest","echo","hi"]')
    for given, want in (("7", 7), ('"call-7"', "call-7"), (" 8\n", 8), ('\t"s"\n', "s"), ('{"x":1}', None), ("1.5", None)):
        r = h.record_fd("run", "--record-id", given, "--bundle", b, h.new_id())
        p = problems(r)
        t.ok(not p and r.rc == 0 and r.frame["id"] == want and r.sc.get("stdout") == "hi\n",
             "--record-fd with --record-id %s: one valid frame on the fd, id %s" % (json.dumps(given), json.dumps(want)),
             "\n".join(p) + "\n" + repr(r))
    b = h.bundle("ids-fail")
    shutil.rmtree(os.path.join(b, "rootfs"))
    r = h.record("run", "--record-id", '"setup-1"', "--bundle", b, h.new_id())
    t.ok(not problems(r) and r.frame.get("id") == "setup-1", "a setup error frame carries the --record-id too", r)


def test_violations(t, h):
    r = h.sandbox("--", "/workspace/abtest", "connect", "tcp", "192.0.2.1", "80")
    frame_ok(t, r, "denied egress")
    v = r.sc.get("violations", [])
    t.ok(len(v) == 1 and v[0].get("address") == "192.0.2.1" and v[0].get("port") == 80
         and v[0].get("protocol") == "tcp" and v[0].get("count") == 1,
         "a connect to 192.0.2.1:80 from the default sandbox: one violation with address, port, protocol and count 1", r)
    t.ok(r.result.get("isError") is True and (r.sc.get("error") or {}).get("code") == "network_denied"
         and r.sc["error"].get("suggested_action") == "add_allow_domains",
         "... it failed: isError, error.code network_denied, suggested_action add_allow_domains", r)
    r = h.sandbox("--", "sh", "-c", "/workspace/abtest connect tcp 192.0.2.1 80; exit 0")
    v = r.sc.get("violations", [])
    t.ok(len(v) == 1 and v[0].get("address") == "192.0.2.1" and r.result.get("isError") is False
         and r.sc.get("error") is None,
         "a refused connect by a command that exits 0: listed in violations, isError false, no error", r)
    r = h.sandbox("--", "sh", "-c", "/workspace/abtest connect tcp 169.254.169.254 80; exit 0")
    v = r.sc.get("violations", [])
    t.ok(len(v) == 1 and v[0].get("address") == "169.254.169.254" and r.result.get("isError") is True
         and (r.sc.get("error") or {}).get("code") == "policy_violation"
         and r.sc["error"].get("suggested_action") == "stop_and_request_human"
         and "169.254.169.254" in r.sc["error"].get("message", ""),
         "a connect to the metadata address looks like an escape: policy_violation, stop_and_request_human, "
         "even with exit 0", r)
    r = h.sandbox("--", "/workspace/abtest", "true")
    t.ok(r.sc.get("violations") == [] and r.result.get("isError") is False,
         "a run that reaches for nothing has no violations", r)


def test_exec(t, h):
    """sandbox_exec: run --default --detach, then exec --record."""
    cid = h.new_id()
    rc, out, err = h.agentbox("run", "--default", "--detach", "--workspace", h.workspace(), cid, capture=False)
    if not t.ok(rc == 0, "a detached default sandbox to exec into", err):
        return
    r = h.record("exec", "--record-id", "11", cid, "/workspace/abtest", "exit", "42")
    frame_ok(t, r, "exec exit 42")
    t.ok(r.rc == 42 and r.sc.get("exitCode") == 42 and r.result.get("isError") is True and r.frame.get("id") == 11
         and r.result.get("_meta", {}).get("dev.agentbox/containerId") == cid,
         "exec exit 42: exitCode 42, isError, the id, the container's id in _meta; exec exits 42", r)
    r = h.record_fd("exec", "--record-id", '"exec-1"', cid, "/workspace/abtest", "echo", "hi")
    t.ok(not problems(r) and r.rc == 0 and r.frame.get("id") == "exec-1" and r.sc.get("stdout") == "hi\n"
         and r.result.get("isError") is False and isinstance(r.sc.get("cpuUserUs"), int),
         "exec --record-fd echo: the frame on the fd, its string id, stdout captured, isError false, stats present", r)
    r = h.record("exec", cid, "/workspace/abtest", "kill-self", "SEGV")
    t.ok(not problems(r) and r.rc == 139 and r.sc.get("signal") == "SIGSEGV" and r.result.get("isError") is True,
         "exec SIGSEGV: signal SIGSEGV, isError; exec exits 139", r)
    r = h.record("exec", cid, "/workspace/nonexistent")
    t.ok(not problems(r) and r.rc == 255 and r.sc.get("exitCode") == 127 and r.result.get("isError") is True
         and "/workspace/nonexistent" in r.sc.get("stderr", "")
         and r.result.get("_meta", {}).get("dev.agentbox/exitStatus") == 255,
         "exec of a missing program: a tool error with exitCode 127 (exec itself exits 255, runc's convention)", r)
    r = h.record("exec", cid, "/workspace/abtest", "connect", "tcp", "192.0.2.1", "80")
    frame_ok(t, r, "exec denied egress")
    v = r.sc.get("violations", [])
    t.ok(len(v) == 1 and v[0].get("address") == "192.0.2.1" and v[0].get("port") == 80 and v[0].get("count") == 1
         and (r.sc.get("error") or {}).get("code") == "network_denied",
         "exec: a connect to 192.0.2.1:80 is one violation in the exec's record (network_denied)", r)
    r = h.record("exec", cid, "/workspace/abtest", "true")
    t.ok(not problems(r) and r.sc.get("violations") == [],
         "... and the next exec's record does not repeat it (violations are the exec's own)", r)
    h.agentbox("delete", "--force", cid)
    r = h.record("exec", cid, "/workspace/abtest", "true")
    frame_ok(t, r, "exec into a deleted container")
    t.ok(r.rc == 255 and r.error.get("data", {}).get("class") == "not_found"
         and r.error.get("data", {}).get("suggested_action") == "create_new_sandbox",
         "exec into a deleted container: a JSON-RPC error of class not_found, suggesting a new sandbox", r)


def test_degraded(t, h):
    results = [r for r in h.frames if r.frame and "result" in r.frame]
    bad = [r for r in results if r.sc.get("degraded") != []]
    t.ok(len(results) >= 20 and not bad, "degraded is empty in every one of the %d result records" % len(results),
         "\n".join(map(repr, bad[:3])))


def main():
    if os.geteuid() != 0:
        skip_all("integration tests run as root")
    if not os.access(RUNTIME, os.X_OK):
        skip_all("runtime %s not found" % RUNTIME)
    v = subprocess.run([RUNTIME, "--version"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    if not v.stdout.startswith("agentbox"):
        skip_all("agentbox's result records")
    try:
        global check_record
        import check_record
    except ImportError as e:
        skip_all("python3-jsonschema is needed to check the records (%s)" % e)
    if not os.access(ABTEST, os.X_OK) or not os.access(BUSYBOX, os.X_OK):
        print("Bail out! abtest (%s) or busybox (%s) missing" % (ABTEST, BUSYBOX))
        return 1
    t = Tap()
    h = Host(t)
    t.diag("runtime: %s, test dir %s" % (RUNTIME, h.T))
    try:
        for test in (test_checker, test_exits, test_signals, test_limits, test_output, test_stats,
                     test_setup_errors, test_ids, test_violations, test_exec, test_degraded):
            try:
                test(t, h)
            except Exception as e:  # a broken test is a failed test, and the others still run
                t.ok(False, "%s ran to its end" % test.__name__, "%s: %s" % (type(e).__name__, e))
    finally:
        h.finish()
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
