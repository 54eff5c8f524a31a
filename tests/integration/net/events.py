#!/usr/bin/env python3
"""What the test upstream (net/upstream.py) logged, one event a line:

    events.py LOG [SINCE]

    accept LOCAL              a TCP connection was accepted on LOCAL (addr:port)
    sni LOCAL NAME            a TLS ClientHello named NAME
    http LOCAL METHOD PATH HOST tls|plain
    udp PORT                  a datagram arrived
    tls-error                 a TLS handshake failed

SINCE skips that many log lines (a mark taken with `wc -l`).
"""
import json
import sys


def line(e):
    k = e.get("kind")
    if k == "accept":
        return "accept %s" % e["local"]
    if k == "sni":
        return "sni %s %s" % (e.get("local") or "-", e.get("name"))
    if k == "http":
        return "http %s %s %s %s %s" % (e["local"], e["method"], e["path"], e.get("host"),
                                        "tls" if e.get("tls") else "plain")
    if k == "udp":
        return "udp %d" % e["port"]
    return k


def main(argv):
    since = int(argv[2]) if len(argv) > 2 else 0
    with open(argv[1]) as f:
        for raw in f.readlines()[since:]:
            print(line(json.loads(raw)))


if __name__ == "__main__":
    main(sys.argv)
