#!/usr/bin/env python3
"""Clients the egress tests run INSIDE the container (only lo, the DNS stub,
the proxy).  Each subcommand prints one JSON object on stdout.

  dns NAME TYPE [tcp]              query the stub (127.0.0.1:53)
  dnsraw HEX [tcp]                 send raw bytes to the stub
  connect HOST PORT [DATA]         plain TCP, optional bytes to send
  udp HOST PORT                    one datagram, wait for any reply
  tls HOST PORT SNI                TLS handshake (no verification) + GET /
  tunnel PROXYPORT AUTHORITY SNI   CONNECT through the proxy, then TLS with SNI
  http PROXYPORT RAW               send RAW (\\r\\n escapes) to the proxy, print the status line
  relay-proxy PROXYPORT AUTH SNI   the same as tunnel, through a forwarder inside the container
  relay-direct IP PORT SNI         TLS with SNI through a forwarder to IP:PORT
  parallel PROXYPORT URL...        one absolute-URI GET per URL, all at once
  halfclose PROXYPORT RAW          send RAW, shut down our write side, read to EOF
  idle PROXYPORT [AUTHORITY]       connect (and CONNECT), then send nothing: wait for EOF
  stall PROXYPORT URL SECONDS      send an absolute-URI GET, then read nothing for SECONDS

The relay tests (bytes from tests/egress/pattern.py, checked by SHA-256):
  xfer WAY DIR N [STALL]           WAY: proxy (absolute URI to the proxy), connect (CONNECT
                                   allowed.test:80, HTTP inside), transparent (192.0.2.10:80),
                                   tls-connect, tls-transparent (the same over TLS to :443);
                                   DIR: down (GET /rand), up, up-chunked (POST /sink); STALL
                                   (down): read 1 MiB, then nothing for STALL seconds
  raw WAY DATA [DATA2]             send DATA on a plain HTTP connection (WAY as above), read the
                                   answer's head, send DATA2, shut down our write side, read to EOF
  body-then WAY N RAW              POST /sink of N bytes with Expect: 100-continue (the body
                                   follows the 100 answer, so the proxy splices it), then RAW
  raw-sink N                       CONNECT raw.test:7000, "sink" and N bytes, shut down our write
                                   side, read the service's "N SHA" answer
  raw-source N M                   CONNECT raw.test:7000, "source N": read to EOF, then send M bytes
                                   and shut down
  tunnel-pipelined AUTHORITY SNI   CONNECT and the ClientHello in one write, then GET /tls
  hold N SECONDS                   open N connections to the proxy and send nothing: print how
                                   many connected, then keep them SECONDS
  reset URL KEEP                   absolute-URI GET, read KEEP body bytes, then reset (RST)
  get URL                          absolute-URI GET, read to EOF or error: what arrived
"""
import errno
import hashlib
import json
import os
import random
import re
import socket
import ssl
import struct
import sys
import threading
import time


class _Pattern:
    """tests/egress/pattern.py, imported on first use: the other commands
    work from a copy of this file alone (tests/integration/t-egress.sh)."""

    def __getattr__(self, name):
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import pattern as mod
        return getattr(mod, name)


pattern = _Pattern()

PROXY = ("127.0.0.1", 3128)
UPSTREAM = "192.0.2.10"

TYPES = {"A": 1, "AAAA": 28, "MX": 15, "TXT": 16, "ANY": 255}


def out(**kw):
    print(json.dumps(kw), flush=True)


def dns_query(name, qtype, tcp=False, raw=None):
    if raw is None:
        q = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0)
        for label in name.rstrip(".").split("."):
            q += bytes([len(label)]) + label.encode()
        q += b"\0" + struct.pack(">HH", TYPES[qtype], 1)
    else:
        q = raw
    try:
        if tcp:
            s = socket.create_connection(("127.0.0.1", 53), timeout=3)
            s.sendall(struct.pack(">H", len(q)) + q)
            hdr = s.recv(2)
            if len(hdr) < 2:
                return {"closed": True}
            n = struct.unpack(">H", hdr)[0]
            r = b""
            while len(r) < n:
                chunk = s.recv(n - len(r))
                if not chunk:
                    break
                r += chunk
        else:
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.settimeout(2)
            s.sendto(q, ("127.0.0.1", 53))
            r, _ = s.recvfrom(4096)
    except socket.timeout:
        return {"timeout": True}
    except OSError as e:
        return {"error": str(e)}
    return parse_reply(r)


def parse_reply(r):
    if len(r) < 12:
        return {"short": len(r)}
    rid, flags, qd, an, ns, ar = struct.unpack(">HHHHHH", r[:12])
    off = 12
    for _ in range(qd):
        while r[off] != 0:
            off += r[off] + 1
        off += 5
    answers = []
    for _ in range(an):
        if r[off] & 0xC0 == 0xC0:
            off += 2
        else:
            while r[off] != 0:
                off += r[off] + 1
            off += 1
        t, c, ttl, rdlen = struct.unpack(">HHIH", r[off:off + 10])
        off += 10
        rd = r[off:off + rdlen]
        off += rdlen
        if t == 1:
            answers.append(socket.inet_ntop(socket.AF_INET, rd))
        elif t == 28:
            answers.append(socket.inet_ntop(socket.AF_INET6, rd))
    return {"id": rid, "rcode": flags & 0xF, "tc": bool(flags & 0x200), "answers": answers}


def tls_get(sock, sni):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    t = ctx.wrap_socket(sock, server_hostname=sni)
    t.sendall(("GET /tls HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % sni).encode())
    data = b""
    while True:
        chunk = t.recv(4096)
        if not chunk:
            break
        data += chunk
    return data.decode(errors="replace")


def read_status(s):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    line = data.split(b"\r\n", 1)[0].decode(errors="replace")
    return line, data


def tunnel(port, authority, sni, host="127.0.0.1"):
    s = socket.create_connection((host, port), timeout=5)
    s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (authority, authority)).encode())
    line, _ = read_status(s)
    if " 200 " not in line + " ":
        return {"status": line}
    try:
        return {"status": line, "body": tls_get(s, sni)}
    except (OSError, ssl.SSLError) as e:
        return {"status": line, "error": str(e)}


def forwarder(target):
    """A TCP relay inside the container: 127.0.0.1:<port> -> target."""
    ls = socket.socket()
    ls.bind(("127.0.0.1", 9001))
    ls.listen(4)

    def pipe(a, b):
        try:
            while True:
                d = a.recv(65536)
                if not d:
                    break
                b.sendall(d)
        except OSError:
            pass
        finally:
            try:
                b.shutdown(socket.SHUT_WR)
            except OSError:
                pass

    def run():
        c, _ = ls.accept()
        try:
            u = socket.create_connection(target, timeout=5)
        except OSError:
            c.close()
            return
        threading.Thread(target=pipe, args=(c, u), daemon=True).start()
        pipe(u, c)

    threading.Thread(target=run, daemon=True).start()
    return 9001


def tls_wrap(sock, sni):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx.wrap_socket(sock, server_hostname=sni)


def open_way(way, authority=None):
    """A connection to allowed.test (or CONNECT to authority) the given way;
    (socket, request target prefix)."""
    if way in ("proxy",):
        return socket.create_connection(PROXY, timeout=30), "http://allowed.test"
    if way in ("connect", "tls-connect"):
        s = socket.create_connection(PROXY, timeout=30)
        auth = authority or "allowed.test:%d" % (443 if way == "tls-connect" else 80)
        s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (auth, auth)).encode())
        line, data = read_status(s)
        if " 200 " not in line + " " or not data.endswith(b"\r\n\r\n"):
            raise OSError("CONNECT answered %r" % line)
        return (tls_wrap(s, "allowed.test") if way == "tls-connect" else s), ""
    s = socket.create_connection((UPSTREAM, 443 if way == "tls-transparent" else 80), timeout=30)
    return (tls_wrap(s, "allowed.test") if way == "tls-transparent" else s), ""


def read_head(s):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            raise OSError("EOF before the end of the head: %r" % data[:200])
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    fields = {}
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        fields[k.strip().lower().decode()] = v.strip().decode()
    return head.split(b"\r\n")[0].decode(), fields, rest


def xfer(way, direction, n, stall):
    s, prefix = open_way(way)
    if direction == "down":
        if stall:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        s.sendall(("GET %s/rand?n=%d HTTP/1.1\r\nHost: allowed.test\r\n\r\n" % (prefix, n)).encode())
        line, fields, rest = read_head(s)
        h, got, window = hashlib.sha256(rest), len(rest), None
        while got < int(fields.get("content-length", "0")):
            if stall and window is None and got >= 1 << 20:
                t0 = time.time()
                time.sleep(stall)
                window = (t0, time.time())
            chunk = s.recv(1 << 20)
            if not chunk:
                break
            h.update(chunk)
            got += len(chunk)
        return {"status": line, "n": got, "sha_ok": got == n and h.hexdigest() == pattern.sha(n), "stall": window}
    chunked = direction == "up-chunked"
    head = "POST %s/sink HTTP/1.1\r\nHost: allowed.test\r\n%s\r\n" % (
        prefix, "Transfer-Encoding: chunked\r\n" if chunked else "Content-Length: %d\r\n" % n)
    s.sendall(head.encode())
    rnd = random.Random(n)
    for c in pattern.chunks(n):
        if not chunked:
            s.sendall(c)
            continue
        while c:  # chunks of odd sizes, some with an extension
            k = min(len(c), rnd.randint(1, 100000))
            s.sendall(b"%x%s\r\n" % (k, b";x=1" if k % 3 == 0 else b"") + c[:k] + b"\r\n")
            c = c[k:]
    if chunked:
        s.sendall(b"0\r\nX-Trailer: t\r\n\r\n")
    line, fields, rest = read_head(s)
    while len(rest) < int(fields.get("content-length", "0")):
        chunk = s.recv(65536)
        if not chunk:
            break
        rest += chunk
    try:
        answer = json.loads(rest)
    except ValueError:
        answer = {}
    return {"status": line, "n": answer.get("n"), "sha_ok": answer.get("n") == n and answer.get("sha") == pattern.sha(n)}


def read_all(s):
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except OSError as e:
        return data, str(e) or type(e).__name__
    return data, None


def unescape(text):
    return text.encode().decode("unicode_escape").encode("latin-1")


def chaos(seed):
    """One relay chaos case (pattern.chaos_plan) through a CONNECT tunnel to
    raw.test:7000 (captured, it would be refused: bytes that are neither
    HTTP nor TLS name no host), from the client's side: what it read,
    whether that is the stream's prefix, and how its connection ended."""
    plan = pattern.chaos_plan(seed)
    s, _ = open_way("connect", "raw.test:7000")
    if plan["c_mode"] == "slow":  # a small window, read after a pause
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32768)
    s.settimeout(20)
    s.sendall(b"chaos %d\n" % seed)

    sent_err = []

    def send():
        try:
            for chunk in pattern.chunks(plan["c_n"], 1 << 16):
                s.sendall(chunk)
            if plan["c_mode"] == "halfclose-first":
                s.shutdown(socket.SHUT_WR)
        except OSError as e:  # a reset is reported once: to this thread's call, or to recv
            sent_err.append(e.errno)

    t = threading.Thread(target=send, daemon=True)
    t.start()
    if plan["c_mode"] == "slow":
        time.sleep(0.3)
    cut = {"reset-early": int(plan["c_cut"] * plan["up_n"]), "reset-at-end": plan["up_n"]}.get(plan["c_mode"])
    h, n, end = hashlib.sha256(), 0, "eof"
    try:
        while cut is None or n < cut:
            data = s.recv(1 << 16 if cut is None else min(1 << 16, cut - n))
            if not data:
                break
            h.update(data)
            n += len(data)
    except socket.timeout:
        end = "timeout"
    except OSError as e:
        end = "reset" if e.errno == errno.ECONNRESET else "error: %s" % e
    if cut is not None:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        end = "cut"
    else:
        t.join(20)
        if end == "eof" and set(sent_err) & {errno.ECONNRESET, errno.EPIPE, errno.ENOTCONN}:
            end = "reset"
        try:
            s.shutdown(socket.SHUT_WR)
        except OSError:
            pass
    s.close()
    return dict(seed=seed, n=n, prefix_ok=h.hexdigest() == pattern.sha(n), end=end)


def http_chaos(seed):
    """One HTTP framing chaos case (pattern.http_chaos_plan): its requests
    on one kept-alive connection, written in pieces of the plan's size
    while the answers are read; the status lines of the answers."""
    plan = pattern.http_chaos_plan(seed)
    s, _ = open_way(plan["way"])
    s.settimeout(20)
    data = b"".join(r[2] for r in plan["reqs"])

    def send():
        try:
            for off in range(0, len(data), plan["pieces"]):
                s.sendall(data[off:off + plan["pieces"]])
                if plan["pause"] and off % 5 == 0:
                    time.sleep(0.001)
            s.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    t = threading.Thread(target=send, daemon=True)
    t.start()
    got, err = read_all(s)
    t.join(20)
    # (the answers' bodies end with no CRLF and hold no status line)
    statuses = [x.decode() for x in re.findall(rb"HTTP/1\.1 (\d{3}) ", got)]
    return dict(seed=seed, statuses=statuses, error=err)


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    try:
        if cmd == "dns":
            out(**dns_query(args[0], args[1], tcp=len(args) > 2))
        elif cmd == "dnsraw":
            out(**dns_query(None, None, tcp=len(args) > 1, raw=bytes.fromhex(args[0])))
        elif cmd == "connect":
            s = socket.create_connection((args[0], int(args[1])), timeout=3)
            if len(args) > 2:
                s.sendall(args[2].encode().decode("unicode_escape").encode("latin-1"))
            data = s.recv(4096)
            out(ok=True, data=data.decode(errors="replace"))
        elif cmd == "udp":
            s = socket.socket(socket.AF_INET6 if ":" in args[0] else socket.AF_INET, socket.SOCK_DGRAM)
            s.settimeout(1)
            s.sendto(b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x03foo\x04test\x00\x00\x01\x00\x01",
                     (args[0], int(args[1])))
            data, _ = s.recvfrom(4096)
            out(ok=True, size=len(data))
        elif cmd == "tls":
            s = socket.create_connection((args[0], int(args[1])), timeout=5)
            out(ok=True, body=tls_get(s, args[2]))
        elif cmd == "tunnel":
            out(**tunnel(int(args[0]), args[1], args[2]))
        elif cmd == "http":
            s = socket.create_connection(("127.0.0.1", int(args[0])), timeout=5)
            s.sendall(args[1].encode().decode("unicode_escape").encode("latin-1"))
            line, data = read_status(s)
            rest = b""
            try:
                while True:
                    chunk = s.recv(4096)
                    if not chunk:
                        break
                    rest += chunk
            except OSError:
                pass
            out(status=line, head=data.decode(errors="replace"), body=rest.decode(errors="replace"))
        elif cmd == "relay-proxy":
            port = forwarder(("127.0.0.1", int(args[0])))
            out(**tunnel(port, args[1], args[2]))
        elif cmd == "relay-direct":
            port = forwarder((args[0], int(args[1])))
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            out(ok=True, body=tls_get(s, args[2]))
        elif cmd == "parallel":
            port = int(args[0])
            results = [None] * len(args[1:])

            def fetch(i, url):
                try:
                    s = socket.create_connection(("127.0.0.1", port), timeout=20)
                    s.sendall(("GET %s HTTP/1.1\r\nConnection: close\r\n\r\n" % url).encode())
                    line, _ = read_status(s)
                    results[i] = line.split(" ")[1] if " " in line else "none"
                except OSError as e:
                    results[i] = "error:" + str(e)

            threads = [threading.Thread(target=fetch, args=(i, u)) for i, u in enumerate(args[1:])]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            out(results=results)
        elif cmd == "halfclose":
            s = socket.create_connection(("127.0.0.1", int(args[0])), timeout=10)
            s.sendall(args[1].encode().decode("unicode_escape").encode("latin-1"))
            s.shutdown(socket.SHUT_WR)
            data = b""
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
            out(data=data.decode(errors="replace"))
        elif cmd == "stall":
            s = socket.create_connection(("127.0.0.1", int(args[0])), timeout=30)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.sendall(("GET %s HTTP/1.1\r\n\r\n" % args[1]).encode())
            print(json.dumps({"sent": True}), flush=True)
            time.sleep(float(args[2]))
            out(done=True)
        elif cmd == "idle":
            s = socket.create_connection(("127.0.0.1", int(args[0])), timeout=20)
            status = None
            if len(args) > 1:
                s.sendall(("CONNECT %s HTTP/1.1\r\n\r\n" % args[1]).encode())
                status, _ = read_status(s)
            data = b""
            try:
                while True:
                    chunk = s.recv(4096)
                    if not chunk:
                        break
                    data += chunk
                out(eof=True, status=status, data=data.decode(errors="replace"))
            except socket.timeout:
                out(timeout=True, status=status)
        elif cmd == "xfer":
            out(**xfer(args[0], args[1], int(args[2]), float(args[3]) if len(args) > 3 else 0))
        elif cmd == "raw":
            s, _ = open_way(args[0])
            s.sendall(unescape(args[1]))
            data = b""
            if len(args) > 2:
                line, _, _ = read_head(s)
                data = line.encode() + b"\r\n"
                s.sendall(unescape(args[2]))
                time.sleep(0.3)
            s.shutdown(socket.SHUT_WR)
            more, err = read_all(s)
            out(data=(data + more).decode(errors="replace"), error=err)
        elif cmd == "body-then":
            s, prefix = open_way(args[0])
            s.sendall(("POST %s/sink HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: %s\r\n"
                       "Expect: 100-continue\r\n\r\n" % (prefix, args[1])).encode())
            line, _, _ = read_head(s)
            for c in pattern.chunks(int(args[1])):
                s.sendall(c)
            s.sendall(unescape(args[2]))
            s.shutdown(socket.SHUT_WR)
            data, err = read_all(s)
            out(continue_=line, data=data.decode(errors="replace"), error=err)
        elif cmd == "raw-sink":
            s, _ = open_way("connect", "raw.test:7000")
            s.sendall(b"sink\n")
            for c in pattern.chunks(int(args[0])):
                s.sendall(c)
            s.shutdown(socket.SHUT_WR)
            data, err = read_all(s)
            out(answer=data.decode(errors="replace").strip(), want="%s %s" % (args[0], pattern.sha(int(args[0]))),
                error=err)
        elif cmd == "raw-source":
            s, _ = open_way("connect", "raw.test:7000")
            s.sendall(("source %s\n" % args[0]).encode())
            data, err = read_all(s)
            for c in pattern.chunks(int(args[1])):
                s.sendall(c)
            s.shutdown(socket.SHUT_WR)
            time.sleep(0.5)
            out(n=len(data), sha_ok=hashlib.sha256(data).hexdigest() == pattern.sha(int(args[0])), error=err)
        elif cmd == "tunnel-pipelined":
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            inc, outg = ssl.MemoryBIO(), ssl.MemoryBIO()
            t = ctx.wrap_bio(inc, outg, server_hostname=args[1])
            try:
                t.do_handshake()
            except ssl.SSLWantReadError:
                pass
            s = socket.create_connection(PROXY, timeout=5)
            s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (args[0], args[0])).encode() + outg.read())
            line, data = read_status(s)
            inc.write(data.partition(b"\r\n\r\n")[2])

            def pump(op):
                while True:
                    try:
                        return op()
                    except ssl.SSLWantReadError:
                        s.sendall(outg.read())
                        chunk = s.recv(65536)
                        if not chunk:
                            raise ConnectionError("EOF from the proxy")
                        inc.write(chunk)
            body, err = b"", None
            try:
                pump(t.do_handshake)
                pump(lambda: t.write(("GET /tls HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n"
                                      % args[1]).encode()))
                s.sendall(outg.read())
                while True:
                    chunk = pump(lambda: t.read(65536))
                    if not chunk:
                        break
                    body += chunk
            except (ssl.SSLError, OSError) as e:
                err = str(e) or type(e).__name__
            out(status=line, body=body.decode(errors="replace"), error=err)
        elif cmd == "hold":
            held = []
            for _ in range(int(args[0])):
                try:
                    held.append(socket.create_connection(PROXY, timeout=5))
                except OSError:
                    break
            print(json.dumps({"held": len(held)}), flush=True)
            time.sleep(float(args[1]))
            out(held=len(held))
        elif cmd == "reset":
            s, prefix = open_way("proxy")
            s.sendall(("GET %s%s HTTP/1.1\r\nHost: allowed.test\r\n\r\n" % (prefix, args[0])).encode())
            line, fields, rest = read_head(s)
            while len(rest) < int(args[1]):
                chunk = s.recv(65536)
                if not chunk:
                    break
                rest += chunk
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()
            out(status=line, n=len(rest))
        elif cmd == "chaos":
            out(**chaos(int(args[0])))
        elif cmd == "http-chaos":
            out(**http_chaos(int(args[0])))
        elif cmd == "get":
            s, prefix = open_way("proxy")
            s.sendall(("GET %s%s HTTP/1.1\r\nHost: allowed.test\r\n\r\n" % (prefix, args[0])).encode())
            data, err = read_all(s)
            head, _, body = data.partition(b"\r\n\r\n")
            out(status=head.split(b"\r\n")[0].decode(errors="replace"), n=len(body), error=err)
        else:
            out(error="unknown command " + cmd)
    except (OSError, ssl.SSLError) as e:
        out(error=str(e) or type(e).__name__)


if __name__ == "__main__":
    main()
