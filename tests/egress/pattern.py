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
