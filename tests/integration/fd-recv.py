#!/usr/bin/python3
"""Receive file descriptors on a Unix socket, as an orchestrator does with
runc's --pidfd-socket (and --console-socket).

    fd-recv.py SOCKET LOG [--kill SIGNAL]

Listens on SOCKET (made here) and writes its pid to LOG.pid once ready.
For each connection, each fd received (SCM_RIGHTS) appends one line to
LOG: `pidfd PID` for a pidfd (the pid its /proc fdinfo names), else
`other TARGET` (its /proc/self/fd link).  With --kill, each pidfd is then
sent SIGNAL with pidfd_send_signal, as containerd's shim would.  Runs
until killed.
"""

import array
import os
import signal
import socket
import sys


def describe(fd):
    target = os.readlink("/proc/self/fd/%d" % fd)
    if target != "anon_inode:[pidfd]":
        return "other " + target
    with open("/proc/self/fdinfo/%d" % fd) as f:
        for line in f:
            if line.startswith("Pid:"):
                return "pidfd " + line.split()[1]
    return "pidfd ?"


def main(argv):
    path, log = argv[0], argv[1]
    sig = None
    if len(argv) > 3 and argv[2] == "--kill":
        sig = getattr(signal, argv[3])
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    os.chmod(path, 0o666)  # the runtime may be another user (rootless)
    srv.listen(8)
    with open(log + ".pid", "w") as f:
        f.write("%d\n" % os.getpid())
    while True:
        conn, _ = srv.accept()
        fds = array.array("i")
        _, anc, _, _ = conn.recvmsg(64, socket.CMSG_SPACE(16 * fds.itemsize))
        for level, kind, data in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(data[: len(data) - (len(data) % fds.itemsize)])
        for fd in fds:
            line = describe(fd)
            with open(log, "a") as f:
                f.write(line + "\n")
            if sig is not None and line.startswith("pidfd"):
                signal.pidfd_send_signal(fd, sig)
            os.close(fd)
        conn.close()


if __name__ == "__main__":
    main(sys.argv[1:])
