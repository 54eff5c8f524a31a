#!/usr/bin/env python3
"""The measuring core of tests/bench/lib.sh: spawns the contenders'
commands interleaved, times them, and prints one `result` line per
contender and metric.  The figure scripts call it through lib.sh
(bench_drive), never directly.

    bench.py [COMMON] latency    --cmd TEMPLATE [--setup T] [--teardown T] [--before T] [--after T]
                                 [--minus NAME=REF]...
    bench.py [COMMON] throughput --cmd TEMPLATE --concurrency C --rounds R --batch K --expect TEXT
    bench.py [COMMON] footprint  --cmd TEMPLATE --strace-runs S
    bench.py [COMMON] mcp        --agentbox EXE --argv JSON
    bench.py [COMMON] profile    --cmd TEMPLATE --trace-cmd TEMPLATE [--strace EXE]

COMMON: --fig NAME --runs N --dir DIR --prefix P [--contender NAME=EXE]...
[--target SPEC]... [--crun-ns] [--gap-ms MS]

A TEMPLATE is one command line, split like a shell would (shlex), with
{rt} the contender's executable, {root} its state root (DIR/state-NAME),
{id} a fresh container id per run, {cid} one id per contender (the
container that --setup starts and --teardown removes), {bundle} the bundle
(DIR/bundle-NAME if the contender has one of its own, else DIR/bundle).
Every contender runs the same template, so the numbers differ only by the
runtime (or, with bundles of their own, only by the config).  --before and
--after run untimed around every run (warm-up runs too) with that run's
{id}: what a timed command needs made first (a change set to apply) or
removed after it (the change set a run left).  --minus NAME=REF prints the
difference of the medians, NAME's minus REF's, as minus_REF (a target can
name it).

Interleaving: run r of every contender happens before run r+1 of any, in
an order drawn anew for every round (round_order), so drift in the
machine's load, and what one contender's run leaves behind for the next,
hit all of them alike.  Children are started with posix_spawn (a
vfork: the driver's own size does not enter the cost) and reaped with
wait4.  The peak RSS (footprint) is taken through GNU time instead, see
Bench.footprint.

crun (1.8 on this hybrid host) refuses a cgroup2 hierarchy with
controllers next to the v1 ones, so with --crun-ns the driver keeps a
second private mount namespace where /sys/fs/cgroup/unified is unmounted
(crun then sees a v1-only host) and enters it with setns(2) around each
crun spawn, outside the timed interval.  That is why the driver never uses
threads: setns of a mount namespace needs a single-threaded caller.

Output lines (the smoke test tests/bench/smoke.sh parses them):
  result fig=F contender=C metric=M unit=U n=N fail=K median=X p95=X min=X max=X
  ratio fig=F contender=C metric=M [vs_runc=R] [vs_crun=R] [vs_bwrap=R]
  target fig=F contender=C metric=M want=FIELD<=V got=X met=yes|no
  machine fig=F wall_s=S cpus=C busy_pct=P ours_pct=P others_pct=P steal_pct=P
  note fig=F ...free text...
vs_X is the ratio of the medians, this contender's over X's.
"""

import argparse
import ctypes
import errno
import json
import math
import os
import random
import re
import shlex
import statistics
import sys
import time

CLONE_NEWNS = 0x00020000
MNT_DETACH = 2
libc = ctypes.CDLL(None, use_errno=True)


def die(msg):
    print("bench.py: " + msg, file=sys.stderr)
    sys.exit(2)


# ---------------------------------------------------------------- namespaces

class Namespaces:
    """The driver's mount namespace, and crun's copy of it without the
    cgroup2 hierarchy (created once, entered per spawn)."""

    def __init__(self, want_crun):
        self.home = os.open("/proc/self/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
        self.crun = None
        if not want_crun:
            return
        if libc.unshare(CLONE_NEWNS) != 0:
            die("unshare(CLONE_NEWNS): " + os.strerror(ctypes.get_errno()))
        # The copy is private: the driver runs under with_own_cgroup_root's
        # `unshare --propagation private`, so this umount stays here.
        # (not a mount point, or absent: a v1-only or v2-only host, nothing to hide)
        if libc.umount2(b"/sys/fs/cgroup/unified", MNT_DETACH) != 0 and ctypes.get_errno() not in (errno.EINVAL,
                                                                                                   errno.ENOENT):
            die("umount /sys/fs/cgroup/unified: " + os.strerror(ctypes.get_errno()))
        self.crun = os.open("/proc/self/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
        self.enter(None)

    def enter(self, contender):
        fd = self.crun if contender == "crun" and self.crun is not None else self.home
        if libc.setns(fd, CLONE_NEWNS) != 0:
            die("setns: " + os.strerror(ctypes.get_errno()))
        os.chdir("/")  # setns resets the cwd to the namespace's root anyway


# ---------------------------------------------------------------- spawning

class Run:
    __slots__ = ("pid", "t0", "ms", "rc", "out", "err")


def round_order(contenders, r, after=None):
    """Round r's order of the contenders: a permutation drawn by a generator
    seeded with r, the same on every run of the bench.  Not a rotation: with
    the order rotated by one each round, the contender first in the list ran
    right after the last one in three rounds of four (runc last: agentbox's
    main figure ran after runc's 24 ms start most of the time, the state
    that leaves behind included).  Drawn anew each round, every contender
    follows every other about as often (tests/bench/smoke.sh checks it).
    `after`, the last one of the round before, does not run first: no
    contender runs right after itself, with the caches (and, for the
    workspace figures, the files) it left just before."""
    order = list(contenders)
    random.Random(r).shuffle(order)
    if after is not None and len(order) > 1 and order[0] == after:
        order[0], order[1] = order[1], order[0]
    return order


def spawn(argv, out, err, fd3=None):
    """posix_spawn argv with stdin /dev/null, stdout and stderr to files."""
    acts = [(os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600),
            (os.POSIX_SPAWN_OPEN, 2, err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)]
    if fd3:
        acts.append((os.POSIX_SPAWN_OPEN, 3, fd3, os.O_WRONLY, 0))
    r = Run()
    r.out, r.err = out, err
    r.t0 = time.perf_counter_ns()
    r.pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=acts)
    return r


def reap(running):
    """Wait for any child of `running` (pid -> Run); the finished Run."""
    pid, status, ru = os.wait4(-1, 0)
    t1 = time.perf_counter_ns()
    r = running.pop(pid, None)
    if r is None:
        return None
    r.ms = (t1 - r.t0) / 1e6
    r.rc = os.waitstatus_to_exitcode(status)
    return r


def read(path, limit=400):
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace").strip()[-limit:]
    except OSError:
        return ""


# ---------------------------------------------------------------- statistics

def p95(v):
    """Nearest rank: the smallest value at or above 95 % of the runs."""
    s = sorted(v)
    return s[max(0, math.ceil(0.95 * len(s)) - 1)]


def fmt(x):
    return "%.3f" % x if abs(x) < 100 else "%.1f" % x


class Report:
    def __init__(self, fig):
        self.fig = fig
        self.medians = {}  # (contender, metric) -> median
        self.got = {}      # (contender, metric, field) -> value

    def note(self, text):
        print("note fig=%s %s" % (self.fig, text), flush=True)

    def result(self, contender, metric, unit, values, fail, ratios=True):
        n = len(values)
        if not n:
            print("result fig=%s contender=%s metric=%s unit=%s n=0 fail=%d" % (self.fig, contender, metric, unit, fail))
            return
        med = statistics.median(values)
        self.medians[(contender, metric)] = med
        fields = {"median": med, "p95": p95(values), "min": min(values), "max": max(values)}
        line = "result fig=%s contender=%s metric=%s unit=%s n=%d fail=%d" % (self.fig, contender, metric, unit, n, fail)
        line += "".join(" %s=%s" % (k, fmt(v)) for k, v in fields.items())
        for k, v in fields.items():
            self.got[(contender, metric, k)] = v
        self.got[(contender, metric, "fail")] = fail
        print(line, flush=True)

    def ratios(self, contenders, metric):
        """Append vs_runc/vs_crun (vs_bwrap, in the rootless figure) for every
        other contender (printed as a line of its own so that result lines
        stay one per measurement)."""
        refs = ("runc", "crun", "bwrap")
        for c in contenders:
            if c in refs or (c, metric) not in self.medians:
                continue
            parts = []
            for ref in refs:
                if (ref, metric) in self.medians and self.medians[(ref, metric)] > 0:
                    q = self.medians[(c, metric)] / self.medians[(ref, metric)]
                    self.got[(c, metric, "vs_" + ref)] = q
                    parts.append(" vs_%s=%.3f" % (ref, q))
            if parts:
                print("ratio fig=%s contender=%s metric=%s%s" % (self.fig, c, metric, "".join(parts)), flush=True)

    def targets(self, specs):
        for spec in specs:
            try:
                who, metric, cond = spec.split(":", 2)
                op = "<=" if "<=" in cond else ">="
                field, want = cond.split(op)
                want = float(want)
            except ValueError:
                die("bad --target %r (CONTENDER:METRIC:FIELD<=VALUE)" % spec)
            got = self.got.get((who, metric, field))
            if got is None:
                met = "unknown"
                shown = "none"
            else:
                met = "yes" if (got <= want if op == "<=" else got >= want) else "no"
                shown = fmt(got)
            print("target fig=%s contender=%s metric=%s want=%s%s%s got=%s met=%s"
                  % (self.fig, who, metric, field, op, fmt(want), shown, met), flush=True)


# ---------------------------------------------------------------- the figures

class Bench:
    def __init__(self, a):
        self.a = a
        self.contenders = []
        for c in a.contender:
            name, _, exe = c.partition("=")
            self.contenders.append((name, exe))
        self.ns = Namespaces(a.crun_ns and any(n == "crun" for n, _ in self.contenders))
        self.last = None  # the contender that ran last (ordered)
        self.rep = Report(a.fig)
        self.logs = os.path.join(a.dir, "logs")
        os.makedirs(self.logs, exist_ok=True)
        self.seq = 0

    def argv(self, template, name, exe, rid=None):
        self.seq += 1
        bundle = os.path.join(self.a.dir, "bundle-" + name)  # a contender's own bundle, if it has one
        if not os.path.isdir(bundle):
            bundle = os.path.join(self.a.dir, "bundle")
        d = {"rt": exe, "root": os.path.join(self.a.dir, "state-" + name), "bundle": bundle,
             "id": rid or "%s%s-%d" % (self.a.prefix, name, self.seq), "cid": "%s%s-c" % (self.a.prefix, name)}
        return [w.format(**d) for w in shlex.split(template)]

    def files(self, name):
        base = os.path.join(self.logs, "%s-%d" % (name, self.seq))
        return base + ".out", base + ".err"

    def one(self, template, name, exe, extra=(), rid=None):
        """Spawn and reap one command of contender name (untimed callers too)."""
        argv = list(extra) + self.argv(template, name, exe, rid)
        out, err = self.files(name)
        self.ns.enter(name)
        r = spawn(argv, out, err)
        running = {r.pid: r}
        while running:
            reap(running)
        self.ns.enter(None)
        return r

    def gap(self):
        """--gap-ms: an idle pause before a timed run (untimed), so that each
        run starts on a quiet machine the way a lone tool call does; the
        kernel state that back-to-back runs keep warm (e.g. the rcu_sync of
        cgroup_threadgroup_rwsem, which spares a v1 attach its RCU grace
        period when another attach went through within about the last grace
        period: docs/benchmarks.md) goes cold."""
        if self.a.gap_ms > 0:
            time.sleep(self.a.gap_ms / 1000.0)

    def ordered(self, r):
        order = round_order(self.contenders, r, self.last)
        self.last = order[-1]
        return order

    def fail_note(self, name, r, what=None):
        self.rep.note("contender=%s first failure (exit %d): %s" % (name, r.rc, what or read(r.err) or read(r.out)))

    def setup(self):
        for name, exe in self.contenders:
            if self.a.setup:
                r = self.one(self.a.setup, name, exe)
                if r.rc != 0:
                    self.fail_note(name, r)
                    die("setup of %s failed" % name)

    def teardown(self):
        for name, exe in self.contenders:
            if self.a.teardown:
                self.one(self.a.teardown, name, exe)

    def around(self, which, name, exe, rid):
        """--before or --after of one run (untimed); a failure is noted."""
        template = getattr(self.a, which, None)
        if template:
            r = self.one(template, name, exe, rid=rid)
            if r.rc != 0:
                self.fail_note(name, r)

    def timed(self, name, exe, extra=()):
        """One run of --cmd between its --before and --after."""
        rid = "%s%s-r%d" % (self.a.prefix, name, self.seq + 1)
        self.around("before", name, exe, rid)
        run = self.one(self.a.cmd, name, exe, extra=extra, rid=rid)
        self.around("after", name, exe, rid)
        return run

    def warmup(self):
        for _ in range(self.a.warmup):
            for name, exe in self.contenders:
                self.timed(name, exe)
                self.last = (name, exe)

    def interleaved(self, runs, wrap=None, measure=None):
        """runs rounds of --cmd, every contender once per round (round_order).
        wrap(name, r) -> an argv prefix (strace, time); measure(name, r, run)
        -> the value to keep, or None for a failed run.  Returns the values
        and the failure counts per contender."""
        got = {n: [] for n, _ in self.contenders}
        fails = {n: 0 for n, _ in self.contenders}
        for r in range(runs):
            for name, exe in self.ordered(r):
                self.gap()
                run = self.timed(name, exe, extra=wrap(name, r) if wrap else ())
                v = measure(name, r, run) if measure else (run.ms if run.rc == 0 else None)
                if v is not None:
                    got[name].append(v)
                else:
                    fails[name] += 1
                    if fails[name] == 1:
                        self.fail_note(name, run)
        return got, fails

    def report(self, metric, unit, got, fails):
        for name, _ in self.contenders:
            self.rep.result(name, metric, unit, got[name], fails[name])
        self.rep.ratios([n for n, _ in self.contenders], metric)

    def latency(self):
        self.setup()
        try:
            self.warmup()
            got, fails = self.interleaved(self.a.runs)
        finally:
            self.teardown()
        self.report("wall", "ms", got, fails)
        med = self.rep.medians
        for spec in self.a.minus:
            name, _, ref = spec.partition("=")
            if (name, "wall") in med and (ref, "wall") in med:
                d = med[(name, "wall")] - med[(ref, "wall")]
                self.rep.got[(name, "wall", "minus_" + ref)] = d
                print("ratio fig=%s contender=%s metric=wall minus_%s=%.3f" % (self.a.fig, name, ref, d), flush=True)

    def footprint(self):
        """Peak RSS through GNU time (-f %M: ru_maxrss of its child, the
        runtime, and of what the runtime reaped).  Not wait4 on our own
        posix_spawn child: a vfork child shares the driver's memory until
        its exec, and the kernel keeps that memory's high-water mark in the
        child's maxrss (exec_mmap), so every runtime would read as big as
        Python.  time forks (a copy of its own small memory), then execs the
        runtime.  The container's program is among what the runtime reaps:
        the `floor` note is that program (the rootfs's busybox) alone."""
        self.warmup()
        def path(name, r):
            return os.path.join(self.logs, "%%s-%s-%d" % (name, r))  # %s: rss or strace

        def kib(f):
            try:
                with open(f) as fh:
                    return int(fh.read().split()[-1])
            except (OSError, ValueError, IndexError):
                return None

        got, fails = self.interleaved(
            self.a.runs, wrap=lambda name, r: (self.a.time, "-f", "%M", "-o", path(name, r) % "rss"),
            measure=lambda name, r, run: kib(path(name, r) % "rss") if run.rc == 0 else None)
        self.report("maxrss", "KiB", got, fails)
        floor = os.path.join(self.logs, "floor")
        run = self.one("%s -f %%M -o %s {bundle}/../rootfs/bin/busybox true" % (self.a.time, floor), "floor", "")
        self.rep.note("floor: the rootfs's busybox true alone reads %s KiB under GNU time" % kib(floor))
        got, fails = self.interleaved(
            self.a.strace_runs, wrap=lambda name, r: (self.a.strace, "-f", "-c", "-o", path(name, r) % "strace"),
            measure=lambda name, r, run: strace_total(path(name, r) % "strace") if run.rc == 0 else None)
        self.report("syscalls", "calls", got, fails)

    def throughput(self):
        """Rounds of one batch per contender (in round_order); a batch is
        --runs commands, --concurrency at a time, each one checked."""
        self.warmup()
        tput = {n: [] for n, _ in self.contenders}
        ms = {n: [] for n, _ in self.contenders}
        fails = {n: 0 for n, _ in self.contenders}
        for r in range(self.a.rounds):
            for name, exe in self.ordered(r):
                self.ns.enter(name)
                todo, running, done = self.a.batch, {}, []
                t0 = time.perf_counter_ns()
                while todo or running:
                    while todo and len(running) < self.a.concurrency:
                        argv = self.argv(self.a.cmd, name, exe)
                        run = spawn(argv, *self.files(name))
                        running[run.pid] = run
                        todo -= 1
                    got = reap(running)
                    if got is not None:
                        done.append(got)
                t1 = time.perf_counter_ns()
                self.ns.enter(None)
                ok = 0
                for run in done:
                    text = open(run.out, "rb").read().decode("utf-8", "replace")
                    if run.rc == 0 and text == self.a.expect.replace("\\n", "\n"):
                        ok += 1
                        ms[name].append(run.ms)
                    else:
                        fails[name] += 1
                        if fails[name] == 1:
                            self.fail_note(name, run, "stdout %r, stderr %r" % (text[:80], read(run.err)))
                tput[name].append(self.a.batch / ((t1 - t0) / 1e9))
        for name, _ in self.contenders:
            self.rep.result(name, "runs_per_s", "1/s", tput[name], fails[name])
        self.rep.ratios([n for n, _ in self.contenders], "runs_per_s")
        for name, _ in self.contenders:
            self.rep.result(name, "wall", "ms", ms[name], fails[name])

    def mcp(self):
        """sandbox_run of --argv through `agentbox mcp` (request written to
        response line read) against the bare `run` the server's worker
        executes (docs/result-record.md), interleaved."""
        a = self.a
        sys.path.insert(0, os.path.join(a.srcdir, "tests", "mcp"))
        sys.dont_write_bytecode = True  # no __pycache__ in the source tree
        import mcplib  # noqa: E402  (MODERN _meta, the record schema check)
        argv = json.loads(a.argv)
        err = open(os.path.join(self.logs, "mcp.err"), "wb")
        p = subprocess_popen([a.agentbox, "--root", os.path.join(a.dir, "state-mcp"), "mcp"], err)
        seq = [0]

        def call():
            seq[0] += 1
            req = {"jsonrpc": "2.0", "id": seq[0], "method": "tools/call",
                   "params": {"name": "sandbox_run", "arguments": {"argv": argv}, "_meta": mcplib.meta()}}
            line = json.dumps(req, separators=(",", ":")).encode() + b"\n"
            t0 = time.perf_counter_ns()
            p.stdin.write(line)
            p.stdin.flush()
            raw = p.stdout.readline()
            t1 = time.perf_counter_ns()
            return raw, (t1 - t0) / 1e6

        bare = ("{rt} --root {root} run --default --timeout 60000ms --max-output 1048576 --record-fd 3 "
                "--record-id 1 --no-stream {id} -- " + " ".join(shlex.quote(w) for w in argv))

        def run_bare():
            args = self.argv(bare, "run", a.agentbox)
            r = spawn(args, *self.files("run"), fd3="/dev/null")
            running = {r.pid: r}
            while running:
                reap(running)
            return r

        def ok_frame(raw):
            try:
                f = json.loads(raw)
                return f["result"]["structuredContent"]["exitCode"] == 0 and not mcplib.record_problems(raw)
            except (ValueError, KeyError, TypeError):
                return False

        times = {"mcp": [], "run": []}
        fails = {"mcp": 0, "run": 0}
        pairs = []
        try:
            for _ in range(a.warmup):
                call()
                run_bare()
            for r in range(a.runs):
                got = {}
                for kind in (("mcp", "run") if r % 2 == 0 else ("run", "mcp")):
                    if kind == "mcp":
                        raw, ms = call()
                        good = ok_frame(raw)
                        what = raw[:300].decode("utf-8", "replace")
                    else:
                        run = run_bare()
                        ms, good, what = run.ms, run.rc == 0, read(run.err)
                    if good:
                        times[kind].append(ms)
                        got[kind] = ms
                    else:
                        fails[kind] += 1
                        if fails[kind] == 1:
                            self.rep.note("contender=%s first failure: %s" % (kind, what))
                if len(got) == 2:
                    pairs.append(got["mcp"] - got["run"])
        finally:
            p.stdin.close()
            rc = p.wait(timeout=120)
            err.close()
            if rc != 0:
                self.rep.note("agentbox mcp exited %d" % rc)
        self.rep.result("mcp", "wall", "ms", times["mcp"], fails["mcp"])
        self.rep.result("run", "wall", "ms", times["run"], fails["run"])
        # the round trip's overhead: per interleaved pair, mcp minus run
        self.rep.result("mcp-minus-run", "wall", "ms", pairs, 0)
        med = self.rep.medians
        if ("mcp", "wall") in med and ("run", "wall") in med:
            q, d = med[("mcp", "wall")] / med[("run", "wall")], med[("mcp", "wall")] - med[("run", "wall")]
            self.rep.got[("mcp", "wall", "vs_run")] = q
            self.rep.got[("mcp", "wall", "minus_run")] = d
            print("ratio fig=%s contender=mcp metric=wall vs_run=%.3f minus_run=%.3f" % (self.a.fig, q, d), flush=True)


    def profile(self):
        """Where the time of one run goes: --runs untraced runs with the
        runtime's --debug phase log (the median offset of each phase; the
        other contenders, if any, run --neighbour-cmd between them, as in an
        interleaved figure, untimed), then
        one run under strace -f -y -tt -T summarised into milestones, and
        the syscall counts of that run by name."""
        name, exe = self.contenders[0]
        for _ in range(self.a.warmup):
            self.one(self.a.cmd, name, exe)
        at, step, order = {}, {}, []
        for r in range(self.a.runs):
            self.gap()
            run = self.one(self.a.cmd, name, exe)
            for other, oexe in self.contenders[1:]:  # neighbours: run between, never timed
                self.one(self.a.neighbour_cmd, other, oexe)
            if run.rc != 0:
                self.fail_note(name, run)
                continue
            prev = 0.0
            with open(run.err, errors="replace") as f:
                for line in f:
                    m = re.match(r"\S+: \+([0-9.]+) ms (.*)$", line.strip())
                    if not m:
                        continue
                    key, t = m.group(2), float(m.group(1))
                    if key not in at:
                        at[key], step[key] = [], []
                        order.append(key)
                    at[key].append(t)
                    step[key].append(t - prev)
                    prev = t
        for key in order:
            print("phase fig=%s at_ms=%.3f step_ms=%.3f step_p95_ms=%.3f step_max_ms=%.3f n=%d what=%s"
                  % (self.a.fig, statistics.median(at[key]), statistics.median(step[key]), p95(step[key]),
                     max(step[key]), len(at[key]), key))
        out = os.path.join(self.logs, "strace-timeline")
        run = self.one(self.a.trace_cmd, name, exe, extra=(self.a.strace, "-f", "-y", "-tt", "-T", "-s", "64", "-o", out))
        if run.rc != 0:
            self.fail_note(name, run)
            return
        for at, dur, what in timeline(out):
            print("milestone fig=%s at_ms=%.3f took_ms=%.3f what=%s" % (self.a.fig, at, dur, what))
        counts = syscall_counts(out)
        print("syscalls fig=%s total=%d top=%s" % (self.a.fig, sum(counts.values()),
                                                   ",".join("%s:%d" % kv for kv in counts.most_common(15))))


CALL = re.compile(r"^(\d+) +(\d+):(\d+):([0-9.]+) (.*)$")


def strace_events(path):
    """(pid, seconds, syscall, text, duration) per call of an strace -f -tt -T
    file; an unfinished call is reported at its start with the duration of
    its resumed half."""
    events, pending = [], {}
    with open(path, errors="replace") as f:
        for line in f:
            m = CALL.match(line.rstrip("\n"))
            if not m:
                continue
            pid, rest = int(m.group(1)), m.group(5)
            t = int(m.group(2)) * 3600 + int(m.group(3)) * 60 + float(m.group(4))
            d = re.search(r"<([0-9.]+)>$", rest)
            dur = float(d.group(1)) if d else 0.0
            if rest.startswith("<... "):
                ev = pending.pop((pid, rest[5:].split(" ", 1)[0]), None)
                if ev is not None:
                    ev[4] = dur
                continue
            if rest.startswith("+++") or rest.startswith("---"):
                events.append([pid, t, rest[:3], rest, 0.0])
                continue
            call = rest.split("(", 1)[0]
            ev = [pid, t, call, rest, dur]
            events.append(ev)
            if rest.endswith("<unfinished ...>"):
                pending[(pid, call)] = ev
    return events


def syscall_counts(path):
    import collections
    return collections.Counter(e[2] for e in strace_events(path) if e[2] not in ("+++", "---"))


MOUNTS = ("mount", "fsopen", "fsconfig", "fsmount", "move_mount", "open_tree", "mount_setattr", "umount2")


def timeline(path):
    """Milestones of a container run, in ms from the runtime's execve."""
    ev = strace_events(path)
    if not ev:
        return []
    t0, first = ev[0][1], ev[0][0]
    out = []

    def add(e, what):
        out.append(((e[1] - t0) * 1000, e[4] * 1000, what))

    def find(pred, last=False):
        hits = [e for e in ev if pred(e)]
        return (hits[-1] if last else hits[0]) if hits else None

    e = find(lambda e: e[2] == "mkdirat" and "/sys/fs/cgroup" in e[3])
    e and add(e, "first_cgroup_mkdir")
    clone = find(lambda e: e[2] in ("clone3", "clone") and ("CLONE_NEWUSER" in e[3] or "CLONE_NEWPID" in e[3]))
    child = None
    if clone:
        add(clone, "clone_container")
        m = re.search(r"= (\d+)", clone[3])
        later = [x for x in ev if x[1] >= clone[1] and x[0] != first]
        child = int(m.group(1)) if m else (later[0][0] if later else None)
    for name in ("uid_map", "gid_map"):
        e = find(lambda e: e[2] == "write" and name + ">" in e[3])
        e and add(e, name + "_written")
    procs = [e for e in ev if e[2] == "write" and "cgroup.procs>" in e[3]]
    for e in procs:
        m = re.search(r"/sys/fs/cgroup/([^/>]+)", e[3])
        add(e, "cgroup_attach_%s" % (m.group(1) if m else "?"))
    e = find(lambda e: e[2] == "socket" and "NETLINK_NETFILTER" in e[3])
    e and add(e, "nftables_socket")
    if child is not None:
        e = find(lambda e: e[0] == child and e[2] in MOUNTS)
        e and add(e, "child_first_mount")
        e = find(lambda e: e[0] == child and e[2] in MOUNTS and e[1] < (find(lambda x: x[0] == child and x[2] == "pivot_root") or [0, 1e18])[1], last=True)
        e and add(e, "child_last_mount_before_pivot")
    for call, what in (("pivot_root", "pivot_root"), ("seccomp", "seccomp_load"), ("execve", "exec_program")):
        e = find(lambda e: e[0] != first and e[2] == call and (call != "execve" or e[1] > ev[0][1]))
        e and add(e, what)
    if child is not None:
        e = find(lambda e: e[0] == child and e[2] == "+++")
        e and add(e, "program_exited")
    e = find(lambda e: e[0] == first and e[2] in ("waitid", "wait4") and "CLD_EXITED" in e[3], last=True)
    e and add(e, "reaped")
    e = find(lambda e: e[2] == "unlinkat" and "AT_REMOVEDIR" in e[3] and "cgroup" in e[3], last=True)
    e = e or find(lambda e: e[2] == "rmdir" and "cgroup" in e[3], last=True)
    e and add(e, "last_cgroup_removed")
    e = find(lambda e: e[0] == first and e[2] == "+++")
    e and add(e, "runtime_exited")
    return sorted(out)


def subprocess_popen(argv, err):
    import subprocess
    return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)


def strace_total(path):
    """The calls column of strace -c's total line (None if absent)."""
    try:
        with open(path) as f:
            for line in f:
                w = line.split()
                if w and w[-1] == "total":
                    return int(w[3])
    except (OSError, ValueError, IndexError):
        pass
    return None


class CpuMeter:
    """Who used the CPUs while the figure ran: all busy time from
    /proc/stat, ours (the driver and every process it reaped, which
    includes the runtimes and what they reaped) from getrusage, and the
    hypervisor's steal.  others = busy - ours: the other tenants of the
    machine (and kernel threads), the figure's real noise, which the load
    average cannot tell apart from our own runs."""

    HZ = os.sysconf("SC_CLK_TCK")

    def __init__(self):
        self.t0, self.stat0, self.ours0 = time.monotonic(), self.stat(), self.ours()

    @staticmethod
    def stat():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        # user nice system idle iowait irq softirq steal ...
        busy = v[0] + v[1] + v[2] + v[5] + v[6]
        return busy / CpuMeter.HZ, (v[7] if len(v) > 7 else 0) / CpuMeter.HZ

    @staticmethod
    def ours():
        import resource
        a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime

    def report(self, fig):
        wall = time.monotonic() - self.t0
        (busy1, steal1), ours1 = self.stat(), self.ours()
        cap = wall * (os.cpu_count() or 1) / 100.0
        busy, steal, ours = busy1 - self.stat0[0], steal1 - self.stat0[1], ours1 - self.ours0
        print("machine fig=%s wall_s=%.1f cpus=%d busy_pct=%.1f ours_pct=%.1f others_pct=%.1f steal_pct=%.1f"
              % (fig, wall, os.cpu_count() or 1, busy / cap, ours / cap, max(0.0, busy - ours) / cap, steal / cap),
              flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--fig", required=True)
    p.add_argument("--runs", type=int, default=100)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--dir", required=True)
    p.add_argument("--srcdir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    p.add_argument("--prefix", required=True)
    p.add_argument("--contender", action="append", default=[])
    p.add_argument("--target", action="append", default=[])
    p.add_argument("--crun-ns", action="store_true")
    p.add_argument("--gap-ms", type=float, default=0.0)
    sub = p.add_subparsers(dest="what", required=True)
    lat = sub.add_parser("latency")
    lat.add_argument("--cmd", required=True)
    lat.add_argument("--setup")
    lat.add_argument("--teardown")
    lat.add_argument("--before")
    lat.add_argument("--after")
    lat.add_argument("--minus", action="append", default=[])
    tp = sub.add_parser("throughput")
    tp.add_argument("--cmd", required=True)
    tp.add_argument("--concurrency", type=int, default=4)
    tp.add_argument("--rounds", type=int, default=3)
    tp.add_argument("--batch", type=int, default=200)
    tp.add_argument("--expect", default="")
    fp = sub.add_parser("footprint")
    fp.add_argument("--cmd", required=True)
    fp.add_argument("--strace-runs", type=int, default=5)
    fp.add_argument("--strace", default="/usr/bin/strace")
    fp.add_argument("--time", default="/usr/bin/time")
    fp.set_defaults(setup=None, teardown=None)
    pr = sub.add_parser("profile")
    pr.add_argument("--cmd", required=True)
    pr.add_argument("--trace-cmd", required=True)
    pr.add_argument("--neighbour-cmd", help="what the other contenders run between the profiled runs")
    pr.add_argument("--strace", default="/usr/bin/strace")
    pr.set_defaults(setup=None, teardown=None)
    mc = sub.add_parser("mcp")
    mc.add_argument("--agentbox", required=True)
    mc.add_argument("--argv", required=True)
    a = p.parse_args()
    if a.runs < 1:
        die("--runs must be at least 1")
    meter = CpuMeter()
    b = Bench(a)
    getattr(b, a.what)()
    meter.report(a.fig)
    b.rep.targets(a.target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
