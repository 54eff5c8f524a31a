#!/usr/bin/env python3
"""Test-host witness for tests/netns: logs what actually arrives.

One line per TCP connection, UDP datagram and ICMP echo request received,
flushed at once:

    tcp  <peer> <local address> <local port>
    udp  <peer> <local address> <local port>
    icmp <peer> <local address> 0

Usage: listener.py --log FILE --ready FILE [--bind ADDR] [--tcp P,P] [--udp P,P] [--icmp]
"""
import argparse
import ipaddress
import os
import select
import signal
import socket
import sys

IPV6_RECVPKTINFO = getattr(socket, "IPV6_RECVPKTINFO", 49)
IPV6_PKTINFO = getattr(socket, "IPV6_PKTINFO", 50)


def plain(addr):
    """'::ffff:192.0.2.2' -> '192.0.2.2'; IPv6 in compressed form."""
    ip = ipaddress.ip_address(addr.split("%")[0])
    if ip.version == 6 and ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ip)


def pktinfo_dst(ancdata):
    for level, kind, data in ancdata:
        if level == socket.IPPROTO_IPV6 and kind == IPV6_PKTINFO and len(data) >= 16:
            return plain(socket.inet_ntop(socket.AF_INET6, data[:16]))
    return "?"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--log", required=True)
    ap.add_argument("--ready", required=True)
    ap.add_argument("--bind", default="::")
    ap.add_argument("--tcp", default="")
    ap.add_argument("--udp", default="")
    ap.add_argument("--icmp", action="store_true")
    a = ap.parse_args()

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    family = socket.AF_INET6 if ":" in a.bind else socket.AF_INET
    log = open(a.log, "a", buffering=1)
    socks = {}

    def bound(kind, port):
        s = socket.socket(family, kind)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            if kind == socket.SOCK_DGRAM:
                s.setsockopt(socket.IPPROTO_IPV6, IPV6_RECVPKTINFO, 1)
        s.bind((a.bind, port))
        return s

    for p in filter(None, a.tcp.split(",")):
        s = bound(socket.SOCK_STREAM, int(p))
        s.listen(16)
        socks[s] = ("tcp", int(p))
    for p in filter(None, a.udp.split(",")):
        socks[bound(socket.SOCK_DGRAM, int(p))] = ("udp", int(p))
    if a.icmp:
        s4 = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
        socks[s4] = ("icmp4", 0)
        s6 = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
        s6.setsockopt(socket.IPPROTO_IPV6, IPV6_RECVPKTINFO, 1)
        socks[s6] = ("icmp6", 0)

    with open(a.ready, "w") as f:
        f.write("%d\n" % os.getpid())

    while True:
        ready, _, _ = select.select(list(socks), [], [])
        for s in ready:
            kind, port = socks[s]
            if kind == "tcp":
                c, peer = s.accept()
                local = c.getsockname()
                c.settimeout(2)
                try:
                    c.recv(256)
                except OSError:
                    pass
                log.write("tcp %s %s %d\n" % (plain(peer[0]), plain(local[0]), port))
                c.close()
            elif kind == "udp":
                data, anc, _, peer = s.recvmsg(2048, socket.CMSG_SPACE(20))
                dst = pktinfo_dst(anc) if family == socket.AF_INET6 else a.bind
                log.write("udp %s %s %d\n" % (plain(peer[0]), dst, port))
            elif kind == "icmp4":
                data, peer = s.recvfrom(2048)
                ihl = (data[0] & 0x0F) * 4
                if len(data) > ihl and data[ihl] == 8:  # echo request
                    dst = socket.inet_ntop(socket.AF_INET, data[16:20])
                    log.write("icmp %s %s 0\n" % (peer[0], dst))
            else:
                data, anc, _, peer = s.recvmsg(2048, socket.CMSG_SPACE(20))
                if data and data[0] == 128:  # echo request
                    log.write("icmp %s %s 0\n" % (plain(peer[0]), pktinfo_dst(anc)))


if __name__ == "__main__":
    main()
