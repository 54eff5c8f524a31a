#!/usr/bin/env python3
"""Benchmark (prints numbers, asserts nothing): relay throughput of the
egress proxy and the supervisor's CPU time per transfer, in the same world
as test-egress.py.  Run as root:  AB_TOP_BUILDDIR=BUILD python3 bench-relay.py [MiB]
"""
import importlib.util
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("egress_test", os.path.join(HERE, "test-egress.py"))
t = importlib.util.module_from_spec(spec)
spec.loader.exec_module(t)


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    mib = int(sys.argv[1]) if len(sys.argv) > 1 else 256
    w = t.World()
    try:
        w.start()
        p, _ = w.driver(t.POLICY)
        n = mib * 1024 * 1024
        for label, url, extra in (("http (absolute URI)", "http://allowed.test/big?n=%d" % n, []),
                                  ("https (CONNECT tunnel)", "https://allowed.test/big?n=%d" % n, ["-k"])):
            c0, t0 = cpu_seconds(p.pid), time.time()
            r = w.inside(["curl", "-s", "-o", "/dev/null", "-w", "%{size_download}", "-x",
                          "http://127.0.0.1:%d" % t.HTTP_PORT] + extra + [url], timeout=600)
            dt, dc = time.time() - t0, cpu_seconds(p.pid) - c0
            print("%-24s %6d MiB  %7.1f MiB/s  supervisor cpu %.2f s (%.1f ms/MiB)  [%s bytes]"
                  % (label, mib, mib / dt, dc, 1000 * dc / mib, r.stdout))
        p.stdin.write("stop\n")
        p.stdin.flush()
        p.communicate()
    finally:
        w.stop()


if __name__ == "__main__":
    if os.environ.get("AB_EGRESS_INNER") != "1":
        env = dict(os.environ, AB_EGRESS_INNER="1")
        sys.exit(subprocess.run(["unshare", "--net", "--mount", "--fork", "--kill-child", sys.executable,
                                 os.path.abspath(__file__)] + sys.argv[1:], env=env).returncode)
    main()
