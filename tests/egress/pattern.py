"""The bytes the relay tests move: a random block of a prime length (so no
buffer or pipe boundary lines up with it) repeated, so that a lost,
doubled or reordered piece changes the SHA-256.  Shared by upstream.py
and client.py."""
import hashlib
import random

BLOCK = random.Random(20251206).randbytes(65521)
_RUN = BLOCK * 17  # any piece of up to 16 blocks, from any offset in a block


def chunks(n, size=1 << 20):
    """The first n bytes of the stream, in pieces of at most size bytes."""
    off = 0
    while off < n:
        start = off % len(BLOCK)
        k = min(size, n - off, len(BLOCK) * 16 - start)
        yield _RUN[start:start + k]
        off += k


def sha(n):
    h = hashlib.sha256()
    for c in chunks(n):
        h.update(c)
    return h.hexdigest()


def chaos_plan(seed):
    """Both ends' behaviour in one relay chaos case, drawn from the seed
    (upstream.py and client.py each draw it): how much each side sends,
    how the upstream ends, how the client reads and ends."""
    rng = random.Random(seed)
    return {"up_n": rng.choice([0, 1, 1000, 65536, 300000, 2 << 20]),
            "up_end": rng.choice(["fin", "fin", "rst"]),
            "c_n": rng.choice([0, 5000, 200000]),
            "c_mode": rng.choice(["read-all", "halfclose-first", "slow", "reset-early", "reset-at-end"]),
            "c_cut": rng.random()}


def http_chaos_plan(seed):
    """The requests of one HTTP framing chaos case, drawn from the seed: a
    kept-alive connection's requests (GETs, POSTs with a Content-Length or
    chunked body of random chunk sizes, extensions and trailers), maybe one
    for another host at some place, and how the client cuts its bytes into
    writes.  Each request is (path, host, bytes, body length)."""
    rng = random.Random(seed)
    reqs = []
    for i in range(rng.randint(1, 5)):
        path = "/sink?s=%d&i=%d" % (seed, i)
        kind = rng.choice(["get", "length", "chunked"])
        if kind == "get":
            path = "/g?s=%d&i=%d" % (seed, i)
            head, body, n = "GET %s HTTP/1.1\r\nHost: allowed.test\r\n\r\n" % path, b"", 0
        else:
            n = rng.choice([0, 1, 17, 4096, 65536, 150001])
            data = b"".join(chunks(n))
            if kind == "length":
                head = "POST %s HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: %d\r\n\r\n" % (path, n)
                body = data
            else:
                head = "POST %s HTTP/1.1\r\nHost: allowed.test\r\nTransfer-Encoding: chunked\r\n\r\n" % path
                body, off = b"", 0
                while off < n:
                    k = min(n - off, rng.choice([1, 5, 100, 4093, 65536]))
                    ext = rng.choice([b"", b";x=1"])
                    body += b"%x%s\r\n%s\r\n" % (k, ext, data[off:off + k])
                    off += k
                body += b"0\r\n" + rng.choice([b"", b"X-Trailer: 1\r\n"]) + b"\r\n"
        reqs.append((path, "allowed.test", head.encode() + body, n))
    if rng.random() < 0.4:
        path = "/o?s=%d&x=1" % seed
        at = rng.randint(0, len(reqs))
        reqs.insert(at, (path, "other.test", ("GET %s HTTP/1.1\r\nHost: other.test\r\n\r\n" % path).encode(), 0))
    return {"reqs": reqs, "way": rng.choice(["transparent", "connect"]),
            "pieces": rng.choice([1, 7, 100, 4096, 65536]), "pause": rng.random() < 0.3}
