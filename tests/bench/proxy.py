#!/usr/bin/env python3
"""The driver of tests/bench/proxy.sh: what the egress proxy costs an HTTP
client, against the same client talking to the server directly.

The world is the one of tests/egress/test-egress.py, built inside a network
namespace of this driver's own (re-exec under `unshare --net --mount`), so
nothing touches the machine's network and everything dies with it:

  the server     tests/egress/httpbench serve, in a netns behind a veth, on
                 192.0.2.10:80 (pinned for bench.test)
  the container  new user+net+mount namespaces with only lo and the egress
                 wall's rules (nftables: TCP to 80/443 redirected to the
                 proxy, everything else dropped)
  the proxy      tests/egress/egress-driver: the engine the supervisor runs,
                 listening inside the container, connecting from this netns

Contenders (the same client, tests/egress/httpbench get):
  direct       from this netns straight to 192.0.2.10:80 (veth)
  proxy        inside the container, absolute-URI GET to 127.0.0.1:3128
  connect      inside the container, CONNECT bench.test:80 then GET in the tunnel
  transparent  inside the container, GET to 192.0.2.10:80, captured by the wall
and the floor under the three: relays with no engine at all (no parsing,
no decision, no records) in the engine's place, so the figure shows what
relaying costs on the machine whatever the engine does (tests/egress/relaybound):
  splice       inside the container, GET to 127.0.0.1:3129: a bare poll+splice loop
  sockmap      inside the container, GET to 127.0.0.1:3130: no process on the data
               path, a BPF sockmap verdict moves the bytes (skipped where BPF is refused)

Metrics: `throughput` (MB/s of one SIZE-MB body, each run a new connection),
`latency` (microseconds of a small request on a new connection, connect
to the last body byte), and for the three proxied ways `proxy_cpu` (the
engine's CPU time during a throughput run, all threads, from schedstat, in
ms per GB relayed).  Interleaved: run r of every contender before run
r+1 of any, the order rotated each run.  Printed with tests/bench/bench.py's
Report (result, ratio vs_direct, target lines) and its CpuMeter (machine).

Then, with --strace K, the proxy's syscalls per small request (strace -c
on the engine's threads, K requests per proxied contender, untimed):
  syscalls fig=proxy contender=C per_request=X top=NAME:X,...

    proxy.py --builddir B --runs N [--size-mb 200] [--latency-batch 50] [--strace K] [--driver EXE]
             [--target SPEC]...
"""
import argparse
import importlib.util
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


bench = load("bench", os.path.join(HERE, "bench.py"))
world = load("egress_test", os.path.join(SRC, "tests", "egress", "test-egress.py"))

NAME = "bench.test"
ADDR = "192.0.2.10"
PROXIED = ("proxy", "connect", "transparent")
FLOORS = {"splice": 3129, "sockmap": 3130}  # contender: its relay's port inside the container
# What the client inside the container speaks to which address and port, by contender.
INSIDE = dict({"proxy": ("proxy", "127.0.0.1", world.HTTP_PORT),
               "connect": ("connect", "127.0.0.1", world.HTTP_PORT),
               "transparent": ("direct", ADDR, 80)},
              **{m: ("direct", "127.0.0.1", port) for m, port in FLOORS.items()})


class BenchWorld(world.World):
    """test-egress.py's world with httpbench as the only server."""

    def __init__(self, httpbench, relaybound):
        super().__init__()
        self.httpbench = httpbench
        self.relaybound = relaybound

    def start(self):
        world.run(["ip", "link", "set", "lo", "up"])
        self.hosts = os.path.join(self.tmp, "hosts")
        self.set_hosts("")
        world.run(["mount", "--bind", self.hosts, "/etc/hosts"])
        self.up = subprocess.Popen(["unshare", "--net", "--", self.httpbench, "serve", "80"],
                                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)
        self.procs.append(self.up)
        if self.up.stdout.readline().strip() != "ready":
            raise RuntimeError("httpbench serve did not start")
        upid = str(self.up.pid)
        world.run(["ip", "link", "add", "abpb0", "type", "veth", "peer", "name", "abpb1", "netns", upid])
        world.run(["ip", "addr", "add", "192.0.2.254/24", "dev", "abpb0"])
        world.run(["ip", "link", "set", "abpb0", "up"])
        ns = ["nsenter", "-t", upid, "-n"]
        world.run(ns + ["ip", "link", "set", "lo", "up"])
        world.run(ns + ["ip", "addr", "add", ADDR + "/24", "dev", "abpb1"])
        world.run(ns + ["ip", "link", "set", "abpb1", "up"])
        self.cpid = self.container()
        ns = ["nsenter", "-t", self.cpid, "-n"]
        for port in FLOORS.values():
            world.run(ns + ["nft", "add", "rule", "inet", "abegress", "out",
                            "ip", "daddr", "127.0.0.1", "tcp", "dport", str(port), "accept"])

    def floor(self, mode):
        """Start relaybound MODE in the engine's place; False if it cannot run here."""
        cmd = [self.relaybound, mode, "/proc/%s/ns/net" % self.cpid, str(FLOORS[mode]), ADDR, "80"]
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        self.procs.append(p)
        if p.stdout.readline().strip() == "ready":
            return True
        print("note fig=proxy contender=%s skipped: %s" % (mode, p.stderr.read().strip()[-200:]), flush=True)
        return False


def client(w, who, path, runs):
    """One httpbench get process; its per-request (microseconds, bytes) and failures."""
    if who == "direct":
        cmd = [w.httpbench, "get", "direct", ADDR, "80", NAME, path, str(runs)]
    else:
        mode, addr, port = INSIDE[who]
        cmd = ["nsenter", "-t", w.cpid, "-U", "-n", "-m", "--", w.httpbench, "get", mode, addr, str(port), NAME,
               path, str(runs)]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
    ok, fails = [], []
    for line in r.stdout.splitlines():
        f = line.split()
        if f and f[0] == "fail":
            fails.append(" ".join(f[1:]))
        elif len(f) == 2:
            ok.append((int(f[0]), int(f[1])))
    fails += ["exit %d: %s" % (r.returncode, r.stderr.strip()[-200:])] * max(0, runs - len(ok) - len(fails))
    return ok, fails


def cpu_ns(pid):
    """CPU time of every thread of pid so far (schedstat: nanoseconds, not ticks)."""
    total = 0
    for t in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, t)) as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total


def strace_counts(path):
    """{syscall: calls} of an `strace -c` summary."""
    counts = {}
    with open(path) as f:
        for line in f:
            fl = line.split()
            if len(fl) >= 5 and fl[-1] != "total" and fl[3].isdigit():
                counts[fl[-1]] = int(fl[3])
    return counts


def syscalls(w, drv, runs, fig):
    """The proxy's syscalls per small request (strace -c -f on the engine,
    untimed): where its per-connection cost goes."""
    for who in PROXIED:
        out = os.path.join(w.tmp, "strace-" + who)
        tids = sorted(os.listdir("/proc/%d/task" % drv.pid))
        st = subprocess.Popen(["strace", "-c", "-o", out] + ["-p%s" % t for t in tids],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        st.stderr.readline()  # "strace: Process N attached" for the first thread
        time.sleep(0.5)
        got, _ = client(w, who, "/small", runs)
        time.sleep(0.2)
        st.terminate()
        st.wait()
        counts = strace_counts(out)
        n = max(1, len(got))
        top = sorted(counts.items(), key=lambda kv: -kv[1])
        print("syscalls fig=%s contender=%s per_request=%.1f top=%s" % (
            fig, who, sum(counts.values()) / n, ",".join("%s:%.1f" % (k, v / n) for k, v in top[:12])), flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--builddir", required=True)
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--size-mb", type=int, default=200)
    p.add_argument("--latency-batch", type=int, default=50)
    p.add_argument("--target", action="append", default=[])
    p.add_argument("--strace", type=int, default=0, help="then K small requests per contender under strace -c")
    p.add_argument("--driver", help="another build's egress-driver (to measure an older engine)")
    a = p.parse_args()
    a.builddir = os.path.abspath(a.builddir)
    fig = "proxy"
    httpbench = os.path.join(a.builddir, "tests", "egress", "httpbench")
    relaybound = os.path.join(a.builddir, "tests", "egress", "relaybound")
    world.DRIVER = os.path.abspath(a.driver) if a.driver else os.path.join(a.builddir, "tests", "egress",
                                                                           "egress-driver")
    for exe in (httpbench, relaybound, world.DRIVER):
        if not os.access(exe, os.X_OK):
            bench.die("%s not built (make -C %s %s)" % (exe, a.builddir, os.path.relpath(exe, a.builddir)))
    meter = bench.CpuMeter()
    rep = bench.Report(fig)
    w = BenchWorld(httpbench, relaybound)
    try:
        w.start()
        drv, _ = w.driver({"dev.agentbox.net.allow-domains": NAME, "dev.agentbox.net.pins": NAME + "=" + ADDR})
        contenders = ("direct",) + PROXIED + tuple(m for m in FLOORS if w.floor(m))
        size = a.size_mb * 1000 * 1000
        tput = {c: [] for c in contenders}
        lat = {c: [] for c in contenders}
        fails = {c: [] for c in contenders}
        cpu = {c: [] for c in PROXIED}
        for who in contenders:  # warm-up: the name is resolved, the caches are hot
            client(w, who, "/small", 2)
        for r in range(a.runs):
            order = contenders[r % len(contenders):] + contenders[:r % len(contenders)]
            for who in order:
                c0 = cpu_ns(drv.pid)
                got, bad = client(w, who, "/big?n=%d" % size, 1)
                tput[who] += [n / us for us, n in got if n == size]  # bytes per microsecond = MB/s
                fails[who] += bad + ["short body %d" % n for _, n in got if n != size]
                if who in cpu and got:
                    cpu[who].append((cpu_ns(drv.pid) - c0) / size)  # ns per byte = s per GB = ms per MB

            for who in order:
                got, bad = client(w, who, "/small", a.latency_batch)
                lat[who] += [us for us, _ in got]
                fails[who] += bad
        for who in contenders:
            rep.result(who, "throughput", "MB/s", tput[who], len(fails[who]))
        for who in contenders:
            rep.result(who, "latency", "us", lat[who], 0)
        for who in PROXIED:  # the engine's own CPU time, all its threads, per GB relayed
            rep.result(who, "proxy_cpu", "ms_per_GB", [x * 1000 for x in cpu[who]], 0)
        for metric in ("throughput", "latency"):
            base = rep.medians.get(("direct", metric))
            for who in contenders[1:]:
                if base and (who, metric) in rep.medians:
                    q = rep.medians[(who, metric)] / base
                    rep.got[(who, metric, "vs_direct")] = q
                    extra = "" if metric == "throughput" else " minus_direct=%s" % bench.fmt(
                        rep.medians[(who, metric)] - base)  # what the proxy adds to each new connection
                    print("ratio fig=%s contender=%s metric=%s vs_direct=%.3f%s" % (fig, who, metric, q, extra),
                          flush=True)
        for who in contenders:
            for why in sorted(set(fails[who]))[:3]:
                rep.note("contender=%s failed: %s" % (who, why))
        if a.strace:
            syscalls(w, drv, a.strace, fig)
        drv.stdin.write("stop\n")
        drv.stdin.flush()
        drv.communicate(timeout=30)
    finally:
        w.stop()
    meter.report(fig)
    rep.targets(a.target)
    return 0


if __name__ == "__main__":
    if os.environ.get("AB_EGRESS_INNER") != "1":
        env = dict(os.environ, AB_EGRESS_INNER="1")
        sys.exit(subprocess.run(["unshare", "--net", "--mount", "--fork", "--kill-child", sys.executable,
                                 os.path.abspath(__file__)] + sys.argv[1:], env=env).returncode)
    sys.exit(main())
