#!/usr/bin/env python3
"""The test "internet" of t-egress.sh: the servers of tests/egress/upstream.py
(HTTP on 80 and 8080, TLS with the SNI logged on 443 and 8443, a TCP logger
on 22, a UDP logger on 53, on every address of the namespace it runs in),
logging one JSON object per event to LOG, run as a daemon of the test:

    upstream.py LOG CERT KEY READY

READY gets our pid once every socket is bound; SIGTERM ends us.
"""
import os
import signal
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "egress"))
import upstream  # noqa: E402  (tests/egress/upstream.py)


def main():
    log, cert, key, ready = sys.argv[1:5]
    sys.argv = [sys.argv[0], log, cert, key]  # upstream.log() writes to sys.argv[1]
    ctx = upstream.tls_context(cert, key)
    servers = []
    for fam in (upstream.socket.AF_INET, upstream.socket.AF_INET6):
        servers += [upstream.Server(fam, 80), upstream.Server(fam, 8080), upstream.Server(fam, 443, ctx),
                    upstream.Server(fam, 8443, ctx)]
        upstream.tcp_logger(fam, 22)
        upstream.udp_logger(fam, 53)
    for s in servers:
        threading.Thread(target=s.serve_forever, daemon=True).start()
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    with open(ready + ".tmp", "w") as f:
        f.write("%d\n" % os.getpid())
    os.rename(ready + ".tmp", ready)
    while True:
        signal.pause()


if __name__ == "__main__":
    main()
