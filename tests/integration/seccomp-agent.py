#!/usr/bin/python3
"""A seccomp agent (config-linux.md, linux.seccomp.listenerPath) for the tests.

    seccomp-agent.py SOCKET OUTDIR [--stall]

Listens on the unix socket SOCKET (SOCK_STREAM).  For each connection: one
container process state (JSON) and its seccompFd (SCM_RIGHTS), saved as
OUTDIR/state-N.json (plus "fds_received": how many fds came with it); then
it answers the notifications of that fd (SECCOMP_IOCTL_NOTIF_RECV/SEND),
appending one line per notification to OUTDIR/notifications:
"<pid> <syscall nr> <path>".  The answer is decided by the path argument of
mkdir/mkdirat, read from the caller's memory:

    .../denied*   error EMLINK (the directory is not made)
    .../faked*    success, value 0, without making the directory
    anything else SECCOMP_USER_NOTIF_FLAG_CONTINUE: the kernel runs the call

--stall: listen with a backlog of 0, fill it with a connection of our own
and never accept: a listener that does not take connections.

OUTDIR/ready is created once the socket listens.  The agent runs until it
is killed (SIGTERM).
"""

import ctypes
import errno
import json
import os
import socket
import struct
import sys
import threading

SECCOMP_IOCTL_NOTIF_RECV = 0xC0502100  # _IOWR('!', 0, struct seccomp_notif): 80 bytes
SECCOMP_IOCTL_NOTIF_SEND = 0xC0182101  # _IOWR('!', 1, struct seccomp_notif_resp): 24 bytes
SECCOMP_IOCTL_NOTIF_ID_VALID = 0x40082102  # _IOW('!', 2, __u64)
SECCOMP_USER_NOTIF_FLAG_CONTINUE = 1
NR_MKDIR, NR_MKDIRAT = 83, 258  # x86_64

libc = ctypes.CDLL(None, use_errno=True)
libc.ioctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p]


def ioctl(fd, req, buf):
    if libc.ioctl(fd, req, buf) < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def read_path(pid, addr):
    try:
        with open("/proc/%d/mem" % pid, "rb", buffering=0) as f:
            f.seek(addr)
            return f.read(4096).split(b"\0", 1)[0].decode("utf-8", "replace")
    except OSError:
        return ""


def serve(fd, outdir, lock):
    while True:
        notif = ctypes.create_string_buffer(80)
        try:
            ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, notif)
        except OSError as e:
            if e.errno == errno.EINTR:
                continue
            return  # ENOENT: the target is gone; EBADF etc.
        nid, pid, _flags, nr, _arch, _ip = struct.unpack_from("=QIIiIQ", notif.raw, 0)
        args = struct.unpack_from("=6Q", notif.raw, 32)
        path = read_path(pid, args[0] if nr == NR_MKDIR else args[1])
        # The path was read from a process that may have changed it: the
        # answer only counts if the notification is still the same one.
        try:
            ioctl(fd, SECCOMP_IOCTL_NOTIF_ID_VALID, ctypes.byref(ctypes.c_uint64(nid)))
        except OSError:
            continue
        name = path.rsplit("/", 1)[-1]
        if name.startswith("denied"):
            val, err, flags = 0, -errno.EMLINK, 0
        elif name.startswith("faked"):
            val, err, flags = 0, 0, 0
        else:
            val, err, flags = 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE
        with lock:
            with open(os.path.join(outdir, "notifications"), "a") as f:
                f.write("%d %d %s\n" % (pid, nr, path))
        resp = ctypes.create_string_buffer(struct.pack("=QqiI", nid, val, err, flags), 24)
        try:
            ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, resp)
        except OSError:
            pass


def main(argv):
    path, outdir = argv[0], argv[1]
    stall = "--stall" in argv[2:]
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    lock = threading.Lock()
    if stall:
        srv.listen(0)
        filler = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        filler.connect(path)  # the one place a backlog of 0 has
        with open(os.path.join(outdir, "ready"), "w") as f:
            f.write("stalled\n")
        threading.Event().wait()
    srv.listen(16)
    with open(os.path.join(outdir, "ready"), "w") as f:
        f.write("listening\n")
    n = 0
    while True:
        conn, _ = srv.accept()
        n += 1
        data = b""
        fds = []
        while True:
            msg, got, _flags, _addr = socket.recv_fds(conn, 65536, 4)
            fds += got
            if not msg:
                break
            data += msg
        conn.close()
        try:
            state = json.loads(data.decode("utf-8"))
        except ValueError:
            state = {"unparsed": data.decode("utf-8", "replace")}
        state["fds_received"] = len(fds)
        with open(os.path.join(outdir, "state-%d.json" % n), "w") as f:
            json.dump(state, f)
        for fd in fds[:1]:
            threading.Thread(target=serve, args=(fd, outdir, lock), daemon=True).start()
        for fd in fds[1:]:
            os.close(fd)


if __name__ == "__main__":
    main(sys.argv[1:])
