#!/usr/bin/env python3
""""The internet" for the egress tests: runs in a netns of its own, behind a
veth, with several documentation addresses, and logs everything it
receives (one JSON object per line) so that tests can prove from this side
what reached it and what did not.

    upstream.py LOG CERT KEY

Listens on every address: HTTP on 80 and 8080, TLS (real, self-signed; the
SNI is logged) on 443 and 8443, a bare TCP logger on 22, a UDP logger on 53,
and the raw service of the relay tests on 7000.  Prints "ready" once every
socket is bound.

HTTP paths (keep-alive, the same over TLS):
  /big?n=N       N bytes of "x"
  /rand?n=N      N bytes of pattern.py's stream; logs "progress" every
                 4 MiB sent and "sent" at the end (complete or aborted)
  /reset?n=N     the head of N bytes and half of them, then a reset (RST);
                 with &wait=S, first S seconds of silence, and "reset" is
                 logged once the RST is sent
  /upgrade       101 Switching Protocols, then echoes raw bytes to EOF
  POST /sink[?Q] reads the body (Content-Length or chunked); answers and
                 logs its length and SHA-256
  anything else  "upstream LOCAL PATH"
Raw service on 7000, by its first line:
  "sink"         reads to EOF, answers "N SHA" and closes
  "source N"     sends N pattern bytes, shuts down its write side, reads to
                 EOF and logs "drained" with what it read
  "chaos SEED"   what chaos_plan(SEED) says: reads the client's bytes while
                 it sends N pattern bytes, then ends with a FIN (and waits
                 for the client's end) or a reset; logs "chaos" with what
                 it sent and read, and how the client's side ended
"""
import hashlib
import http.server
import json
import os
import socket
import socketserver
import ssl
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pattern  # noqa: E402

LOG_LOCK = threading.Lock()


def log(**ev):
    with LOG_LOCK:
        with open(sys.argv[1], "a") as f:
            f.write(json.dumps(ev) + "\n")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def handle_one(self):
        local = "%s:%d" % self.connection.getsockname()[:2]
        log(kind="http", local=local, method=self.command, path=self.path,
            host=self.headers.get("Host"), tls=isinstance(self.connection, ssl.SSLSocket))
        if self.path.startswith("/redirect"):
            self.send_response(302)
            self.send_header("Location", "http://other.test/")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path.startswith("/rand?n="):
            self.send_rand(int(self.path[8:]))
            return
        if self.path.startswith("/reset?n="):
            n, _, wait = self.path[9:].partition("&wait=")
            n = int(n)
            time.sleep(float(wait or 0))
            self.send_response(200)
            self.send_header("Content-Length", str(n))
            self.end_headers()
            self.wfile.write(next(pattern.chunks(n // 2, n // 2)))
            self.wfile.flush()
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            self.connection.close()
            log(kind="reset", path=self.path)
            return
        if self.path == "/upgrade":
            self.send_response(101)
            self.send_header("Upgrade", "echo")
            self.send_header("Connection", "Upgrade")
            self.end_headers()
            self.wfile.flush()
            while True:
                data = self.connection.recv(65536)
                if not data:
                    break
                log(kind="echo", data=data.decode(errors="replace"))
                self.connection.sendall(data)
            self.close_connection = True
            return
        if self.command == "POST" and (self.path == "/sink" or self.path.startswith("/sink?")):
            n, digest = self.read_body()
            log(kind="sink", n=n, sha=digest, path=self.path)
            body = json.dumps({"n": n, "sha": digest}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if self.path.startswith("/big?n="):
            n = int(self.path[7:])
            self.send_response(200)
            self.send_header("Content-Length", str(n))
            self.end_headers()
            chunk = b"x" * 65536
            while n > 0:
                self.wfile.write(chunk[:min(n, len(chunk))])
                n -= min(n, len(chunk))
            return
        body = ("upstream %s %s\n" % (local, self.path)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    do_GET = do_POST = do_HEAD = do_PUT = handle_one

    def send_rand(self, n):
        self.send_response(200)
        self.send_header("Content-Length", str(n))
        self.end_headers()
        sent = 0
        try:
            for c in pattern.chunks(n, 1 << 18):
                self.wfile.write(c)
                sent += len(c)
                if sent % (4 << 20) < len(c):
                    log(kind="progress", path=self.path, sent=sent, t=time.time())
            log(kind="sent", path=self.path, sent=sent, complete=True, t=time.time())
        except OSError as e:
            log(kind="sent", path=self.path, sent=sent, complete=False, error=str(e))
            self.close_connection = True

    def read_body(self):
        h = hashlib.sha256()
        n = 0
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b""):
                        pass
                    break
                data = self.rfile.read(size)
                h.update(data)
                n += len(data)
                self.rfile.readline()
        else:
            left = int(self.headers.get("Content-Length", "0"))
            while left > 0:
                data = self.rfile.read(min(left, 1 << 20))
                if not data:
                    break
                h.update(data)
                n += len(data)
                left -= len(data)
        return n, h.hexdigest()


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256
    tls_ctx = None

    def __init__(self, family, port, tls_ctx=None):
        self.address_family = family
        self.tls_ctx = tls_ctx
        super().__init__(("::" if family == socket.AF_INET6 else "0.0.0.0", port), Handler)

    def server_bind(self):
        if self.address_family == socket.AF_INET6:
            self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        socketserver.TCPServer.server_bind(self)

    def get_request(self):
        sock, addr = self.socket.accept()
        log(kind="accept", local="%s:%d" % sock.getsockname()[:2], peer="%s:%d" % addr[:2])
        return sock, addr

    def finish_request(self, request, client_address):
        if self.tls_ctx is not None:
            try:
                request = self.tls_ctx.wrap_socket(request, server_side=True)
            except (ssl.SSLError, OSError) as e:
                log(kind="tls-error", error=str(e))
                return
        self.RequestHandlerClass(request, client_address, self)


def tls_context(cert, key):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)

    def sni(sslobj, name, _ctx):
        log(kind="sni", local="%s:%d" % sslobj.getsockname()[:2] if hasattr(sslobj, "getsockname") else "",
            name=name)

    ctx.sni_callback = sni
    return ctx


def tcp_logger(family, port):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if family == socket.AF_INET6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    s.bind(("::" if family == socket.AF_INET6 else "0.0.0.0", port))
    s.listen(64)

    def run():
        while True:
            c, addr = s.accept()
            log(kind="accept", local="%s:%d" % c.getsockname()[:2], peer="%s:%d" % addr[:2])
            c.close()

    threading.Thread(target=run, daemon=True).start()


def chaos(c, seed):
    plan = pattern.chaos_plan(seed)
    got = {"n": 0, "h": hashlib.sha256(), "end": "timeout"}

    def reader():
        try:
            while True:
                data = c.recv(1 << 16)
                if not data:
                    got["end"] = "eof"
                    return
                got["h"].update(data)
                got["n"] += len(data)
        except OSError as e:
            got["end"] = "error: %s" % e

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    sent = 0
    try:
        for chunk in pattern.chunks(plan["up_n"], 1 << 16):
            c.sendall(chunk)
            sent += len(chunk)
        if plan["up_end"] == "fin":
            c.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    if plan["up_end"] == "rst":
        c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        # The reader's recv holds the socket: a close alone would send
        # nothing until it returned.  SHUT_RD wakes it and sends nothing.
        c.shutdown(socket.SHUT_RD)
        c.close()
    t.join(30)
    log(kind="chaos", seed=seed, sent=sent, read=got["n"], read_end=got["end"],
        read_ok=got["h"].hexdigest() == pattern.sha(got["n"]))


def raw_service(port):
    """Half-closes both ways (see the docstring)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port))
    s.listen(16)

    def drain(c, first=b""):
        h, n = hashlib.sha256(first), len(first)
        while True:
            data = c.recv(1 << 20)
            if not data:
                return n, h.hexdigest()
            h.update(data)
            n += len(data)

    def one(c):
        with c:
            line = b""
            while not line.endswith(b"\n"):
                data = c.recv(1)
                if not data:
                    return
                line += data
            words = line.split()
            if words == [b"sink"]:
                n, digest = drain(c)
                log(kind="raw-sink", n=n, sha=digest)
                c.sendall(("%d %s\n" % (n, digest)).encode())
            elif len(words) == 2 and words[0] == b"chaos":
                chaos(c, int(words[1]))
            elif len(words) == 2 and words[0] == b"source":
                for chunk in pattern.chunks(int(words[1])):
                    c.sendall(chunk)
                c.shutdown(socket.SHUT_WR)
                n, digest = drain(c)
                log(kind="drained", n=n, sha=digest)

    def run():
        while True:
            c, _ = s.accept()
            threading.Thread(target=one, args=(c,), daemon=True).start()

    threading.Thread(target=run, daemon=True).start()


def udp_logger(family, port):
    s = socket.socket(family, socket.SOCK_DGRAM)
    if family == socket.AF_INET6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    s.bind(("::" if family == socket.AF_INET6 else "0.0.0.0", port))

    def run():
        while True:
            data, addr = s.recvfrom(4096)
            log(kind="udp", port=port, peer="%s:%d" % addr[:2], size=len(data))

    threading.Thread(target=run, daemon=True).start()


def main():
    ctx = tls_context(sys.argv[2], sys.argv[3])
    servers = []
    for fam in (socket.AF_INET, socket.AF_INET6):
        servers += [Server(fam, 80), Server(fam, 8080), Server(fam, 443, ctx), Server(fam, 8443, ctx)]
        tcp_logger(fam, 22)
        udp_logger(fam, 53)
    raw_service(7000)
    for s in servers:
        threading.Thread(target=s.serve_forever, daemon=True).start()
    print("ready", flush=True)
    sys.stdin.read()  # until the harness closes our stdin


if __name__ == "__main__":
    main()
