"""TAP for the Python tests: ok() prints one test line (and, when it failed,
its detail as diagnostics); plan() prints the plan at the end, exit_status()
is what the test exits with."""

import sys

count = 0
failed = 0


def ok(cond, name, detail=()):
    """One test: `ok N - name`, or `not ok N - name` and up to 40 lines of
    detail (a string or a list of lines).  Returns cond."""
    global count, failed
    count += 1
    if not cond:
        failed += 1
    print("%sok %d - %s" % ("" if cond else "not ", count, name))
    if not cond:
        lines = detail.splitlines() if isinstance(detail, str) else list(detail)
        for line in lines[:40]:
            print("#   %s" % str(line).rstrip("\n"))
    sys.stdout.flush()
    return cond


def plan():
    print("1..%d" % count)


def exit_status():
    return 1 if failed else 0
