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
sys.path.insert(0, os.path.join(SRCDIR, "tests", "helper"))
from tap import ok, plan, exit_status  # noqa: E402


names = [l.split("#")[0].strip() for l in open(os.path.join(HERE, "golden", "LIST"))]
work = tempfile.mkdtemp(prefix="agentbox-audit-", dir="/tmp")
try:
    for name in filter(None, names):
        d = os.path.join(work, name)
        shutil.copytree(os.path.join(HERE, "fixtures", name), d, symlinks=True)
        for fmt, ext in (("text", "txt"), ("json", "json")):
            p = subprocess.run([AGENTBOX, "audit", "--landlock-abi", "7", "--bundle", d, "--format", fmt], capture_output=True,
                               env=dict(os.environ, NO_COLOR="1"))
            got = p.stdout.decode().replace(work, "@DIR@")
            with open(os.path.join(HERE, "golden", "%s.%s" % (name, ext)), encoding="utf-8") as f:
                want = f.read()
            ok(p.returncode in (0, 1) and got == want, "%s: the %s report is the golden one" % (name, fmt),
               [p.stderr.decode()] + list(difflib.unified_diff(want.splitlines(True), got.splitlines(True),
                                                               "golden", "now", n=1)))
finally:
    shutil.rmtree(work)
plan()
sys.exit(exit_status())
