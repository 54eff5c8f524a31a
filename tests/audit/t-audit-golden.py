#!/usr/bin/python3
"""TAP: the reports of the real-world fixtures (runc spec, podman, agentbox
spec) and a few hand-made ones are what tests/audit/golden/ holds, text and
JSON.  Each fixture is copied to a directory whose name has a fixed length
(the text wraps the same wherever the tree is) and that path is written
@DIR@.  After a deliberate change of the output, regenerate the goldens with
tests/audit/regen.sh and review the diff.
"""

import difflib
import os
import shutil
import subprocess
import sys
import tempfile

SRCDIR = os.environ.get("AB_TOP_SRCDIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
AGENTBOX = os.environ.get("AGENTBOX") or os.path.join(os.environ.get("AB_TOP_BUILDDIR", "."), "agentbox")
HERE = os.path.join(SRCDIR, "tests", "audit")

count = failed = 0


def ok(cond, name, detail=()):
    global count, failed
    count += 1
    failed += not cond
    print("%sok %d - %s" % ("" if cond else "not ", count, name))
    for line in (list(detail)[:40] if not cond else ()):
        print("#   " + line.rstrip("\n"))
    sys.stdout.flush()


names = [l.split("#")[0].strip() for l in open(os.path.join(HERE, "golden", "LIST"))]
work = tempfile.mkdtemp(prefix="agentbox-audit-", dir="/tmp")
try:
    for name in filter(None, names):
        d = os.path.join(work, name)
        shutil.copytree(os.path.join(HERE, "fixtures", name), d, symlinks=True)
        for fmt, ext in (("text", "txt"), ("json", "json")):
            p = subprocess.run([AGENTBOX, "audit", "--bundle", d, "--format", fmt], capture_output=True,
                               env=dict(os.environ, NO_COLOR="1"))
            got = p.stdout.decode().replace(work, "@DIR@")
            with open(os.path.join(HERE, "golden", "%s.%s" % (name, ext)), encoding="utf-8") as f:
                want = f.read()
            ok(p.returncode in (0, 1) and got == want, "%s: the %s report is the golden one" % (name, fmt),
               [p.stderr.decode()] + list(difflib.unified_diff(want.splitlines(True), got.splitlines(True),
                                                               "golden", "now", n=1)))
finally:
    shutil.rmtree(work)
print("1..%d" % count)
sys.exit(1 if failed else 0)
