#!/usr/bin/python3
"""Run a command with a pseudo-terminal of ours as its controlling terminal
and stdio, as a person at a terminal would, and play a dialogue with it.

    pty-drive.py [--size ROWS,COLS] [--stdin-null] STEP... -- COMMAND [ARGS...]

The command is a session leader in the terminal's foreground process group
(so the kernel sends it SIGWINCH on a resize, and it may change the
terminal's modes).  Steps, in order:

    expect=REGEX    wait (bounded by --wait seconds) until the output so far
                    matches REGEX (Python re, DOTALL)
    send=TEXT       type TEXT (backslash escapes: \\r, \\x03, ...)
    resize=R,C      set the terminal's size (TIOCSWINSZ on our side) and
                    send SIGWINCH to the command, as a terminal emulator does
    raw             record whether the terminal is in raw mode now (no
                    ICANON, no ECHO, no ISIG): the command put it there

Then wait for the command to exit (bounded) and print one JSON object:
rc (exit status, or 128+signal), out (all output, lossy UTF-8), raw (the
`raw` step's finding, or null), restored (the terminal's modes at the end
equal those before the command started), failed (the step that timed out,
or null).  A command still running at the end is killed (rc "killed").
"""

import fcntl
import json
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time


def set_size(fd, rows, cols):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


def main(argv):
    wait = 30.0
    size = (24, 80)
    stdin_null = False
    steps = []
    i = 0
    while i < len(argv) and argv[i] != "--":
        a = argv[i]
        if a == "--size":
            i += 1
            size = tuple(int(x) for x in argv[i].split(","))
        elif a == "--wait":
            i += 1
            wait = float(argv[i])
        elif a == "--stdin-null":
            stdin_null = True
        else:
            steps.append(a)
        i += 1
    cmd = argv[i + 1:]
    if not cmd:
        sys.exit("usage: pty-drive.py [--size R,C] STEP... -- COMMAND [ARGS...]")

    master, slave = pty.openpty()
    set_size(master, *size)
    before = termios.tcgetattr(slave)

    def become_session_leader():
        # start_new_session made us one; take the terminal as ours
        fcntl.ioctl(1, termios.TIOCSCTTY, 0)

    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL if stdin_null else slave, stdout=slave, stderr=slave,
                            start_new_session=True, preexec_fn=become_session_leader, close_fds=True)
    out = b""
    result = {"rc": None, "out": "", "raw": None, "restored": None, "failed": None}

    def pump(timeout):
        nonlocal out
        r, _, _ = select.select([master], [], [], timeout)
        if r:
            try:
                data = os.read(master, 65536)
            except OSError:
                data = b""
            out += data
            return bool(data)
        return False

    for step in steps:
        kind, _, arg = step.partition("=")
        if kind == "expect":
            deadline = time.monotonic() + wait
            rx = re.compile(arg.encode(), re.S)
            while not rx.search(out) and time.monotonic() < deadline:
                pump(0.1)
            if not rx.search(out):
                result["failed"] = step
                break
        elif kind == "send":
            os.write(master, arg.encode().decode("unicode_escape").encode("latin-1"))
        elif kind == "resize":
            rows, cols = (int(x) for x in arg.split(","))
            set_size(master, rows, cols)
            os.kill(proc.pid, signal.SIGWINCH)
        elif kind == "raw":
            lflag = termios.tcgetattr(slave)[3]
            result["raw"] = not (lflag & (termios.ICANON | termios.ECHO | termios.ISIG))
        else:
            sys.exit("unknown step %r" % step)

    deadline = time.monotonic() + wait
    while proc.poll() is None and time.monotonic() < deadline:
        pump(0.1)
    if proc.poll() is None:
        proc.kill()
        proc.wait()
        result["rc"] = "killed"
    else:
        result["rc"] = proc.returncode if proc.returncode >= 0 else 128 - proc.returncode
    while pump(0.05):
        pass
    result["out"] = out.decode("utf-8", "replace")
    result["restored"] = termios.tcgetattr(slave) == before
    os.close(master)
    os.close(slave)
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1:])
