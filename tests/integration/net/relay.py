#!/usr/bin/env python3
"""A relay inside the sandbox, as a program trying to get around the egress
policy would build one: a TCP forwarder on a loopback port of the container,
and a client that goes through it.  One JSON object on stdout.

    relay.py proxy PROXYPORT AUTHORITY SNI   forwarder -> 127.0.0.1:PROXYPORT (the proxy);
                                             CONNECT AUTHORITY through it, then TLS with SNI
    relay.py direct ADDRESS PORT SNI         forwarder -> ADDRESS:PORT; TLS with SNI through it

Needs tests/egress/client.py next to it (the sandbox's /workspace).
"""
import os
import socket
import ssl
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import client  # noqa: E402


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


def forwarder(target):
    """Listen on an ephemeral loopback port; relay one connection to target."""
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", 0))
    ls.listen(1)

    def run():
        c, _ = ls.accept()
        try:
            u = socket.create_connection(target, timeout=5)
        except OSError as e:
            print("forwarder: %s" % e, file=sys.stderr)
            c.close()
            return
        threading.Thread(target=pipe, args=(c, u), daemon=True).start()
        pipe(u, c)

    threading.Thread(target=run, daemon=True).start()
    return ls.getsockname()[1]


def main(argv):
    try:
        if argv[1] == "proxy":
            port = forwarder(("127.0.0.1", int(argv[2])))
            client.out(**client.tunnel(port, argv[3], argv[4]))
        elif argv[1] == "direct":
            port = forwarder((argv[2], int(argv[3])))
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            client.out(ok=True, body=client.tls_get(s, argv[4]))
        else:
            sys.exit(__doc__)
    except (OSError, ssl.SSLError) as e:
        client.out(error=str(e) or type(e).__name__)


if __name__ == "__main__":
    main(sys.argv)
