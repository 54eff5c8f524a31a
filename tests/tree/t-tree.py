#!/usr/bin/env python3
"""The shape of the tree (docs/architecture.md), checked by
scripts/check-tree.py: the real tree passes every check, and each check
fails, naming the file, on a violation planted in a small tree of its own
(so that a checker that passes everything is caught too)."""

import atexit
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.environ["AB_TOP_SRCDIR"], "tests", "helper"))
import tap  # noqa: E402

SRC = os.environ["AB_TOP_SRCDIR"]
BUILD = os.environ["AB_TOP_BUILDDIR"]
CHECK = os.path.join(SRC, "scripts", "check-tree.py")
PY = os.environ.get("PYTHON3", sys.executable)


def run(*args):
    p = subprocess.run([PY, CHECK, *args], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


# ---- the real tree ------------------------------------------------------

rc, out = run("includes", "--srcdir", SRC)
tap.ok(rc == 0 and out == "", "every #include goes to its own room, a lower floor or a declared edge", out)
rc, out = run("links", "--srcdir", SRC, "--builddir", BUILD)
tap.ok(rc == 0 and out == "", "every call goes the same way, and no room's files call one another in a cycle", out)
rc, out = run("exports", "--srcdir", SRC, "--builddir", BUILD)
tap.ok(rc == 0 and out == "", "every exported function is called by another object of the runtime, not only by tests", out)
rc, out = run("lengths", "--srcdir", SRC)
tap.ok(rc == 0 and out == "", "no function below the front ends is over 100 lines, but the listed ones", out)

# ---- planted violations ---------------------------------------------------

LAYERS = """room 0 base base/
room 1 spec spec/
room 3 mech runtime/
room 3 net netns/
room 5 cmd cmd/
"""


def tree(files, layers=LAYERS):
    d = tempfile.mkdtemp(prefix="ab-tree-")
    atexit.register(shutil.rmtree, d, True)
    os.makedirs(os.path.join(d, "scripts"))
    with open(os.path.join(d, "scripts", "layers.conf"), "w") as f:
        f.write(layers)
    for path, text in files.items():
        os.makedirs(os.path.join(d, os.path.dirname(path)), exist_ok=True)
        with open(os.path.join(d, path), "w") as f:
            f.write(text)
    return d


def build(d):
    """Compile every .c of the small tree to <d>/_b/<path>.o."""
    b = os.path.join(d, "_b")
    for top, _, files in os.walk(d):
        for f in files:
            if f.endswith(".c"):
                rel = os.path.relpath(os.path.join(top, f), d)
                obj = os.path.join(b, rel[:-2] + ".o")
                os.makedirs(os.path.dirname(obj), exist_ok=True)
                subprocess.run(["cc", "-c", "-I", d, "-o", obj, os.path.join(d, rel)], check=True)
    return b


clean = tree({
    "base/util.h": "int ab_util (void);\n",
    "base/util.c": '#include "base/util.h"\nint ab_util (void) { return 1; }\n',
    "spec/model.h": '#include "base/util.h"\nint ab_model (void);\n',
    "spec/model.c": '#include "spec/model.h"\nint ab_model (void) { return ab_util (); }\n',
    "runtime/mount.c": '#include "config.h"\n#include "spec/model.h"\nint ab_mount (void) { return ab_model (); }\n',
})
rc, out = run("includes", "--srcdir", clean)
tap.ok(rc == 0 and out == "", "includes: a tree that only looks down passes", out)

up = tree({
    "spec/model.h": "int ab_model (void);\n",
    "runtime/mount.h": "int ab_mount (void);\n",
    "spec/parse.c": '#include "spec/model.h"\n\n#include "runtime/mount.h"\nint x;\n',
})
rc, out = run("includes", "--srcdir", up)
tap.ok(rc == 1 and 'spec/parse.c:3: includes "runtime/mount.h": room mech is on floor 3, above spec\'s floor 1' in out,
       "includes: a spec file that includes a mechanism's header fails, naming file, line and header", out)

side = tree({
    "netns/nl.h": "int ab_nl (void);\n",
    "runtime/ns.c": '#include "netns/nl.h"\n',
})
rc, out = run("includes", "--srcdir", side)
tap.ok(rc == 1 and 'runtime/ns.c:1: includes "netns/nl.h": room mech has no edge to net (both on floor 3)' in out,
       "includes: a room that includes a room of its own floor without an edge fails", out)

homeless = tree({"attic/old.c": "int x;\n", "cmd/main.c": '#include "attic/old.h"\n'})
rc, out = run("includes", "--srcdir", homeless)
tap.ok(rc == 1 and "attic/old.c: in no room" in out and 'cmd/main.c:1: includes "attic/old.h", which is in no room' in out,
       "includes: a file or header outside every room fails", out)

loop = tree({"cmd/main.c": "int x;\n"}, LAYERS + "edge mech net\nedge net mech\n")
rc, out = run("includes", "--srcdir", loop)
tap.ok(rc == 1 and "the edges make a cycle: mech -> net -> mech" in out,
       "layers.conf: edges that make a cycle are refused", out)

hidden = tree({
    "runtime/mount.c": "int ab_mount (void) { return 3; }\n",
    "spec/parse.c": "int ab_mount (void);\nint ab_parse (void) { return ab_mount (); }\n",
})
rc, out = run("links", "--srcdir", hidden, "--builddir", build(hidden))
tap.ok(rc == 1 and "spec/parse.c: uses ab_mount of runtime/mount.c: room mech is on floor 3, above spec's floor 1" in out,
       "links: a call up a floor through a local declaration fails, naming the function", out)

ring = tree({
    "runtime/a.c": "int ab_b (int);\nint ab_a (int n) { return n ? ab_b (n - 1) : 0; }\n",
    "runtime/b.c": "int ab_a (int);\nint ab_b (int n) { return n ? ab_a (n - 1) : 1; }\n",
    "runtime/c.c": "int ab_a (int);\nint ab_c (void) { return ab_a (3); }\n",
})
rc, out = run("links", "--srcdir", ring, "--builddir", build(ring))
tap.ok(rc == 1 and "the files of room mech call one another in a cycle: runtime/a.c (ab_b) -> runtime/b.c (ab_a) -> runtime/a.c" in out
       and "runtime/c.c" not in out,
       "links: two files of one room that call each other fail, and a third that only calls one does not", out)

lonely = tree({
    "spec/a.c": "int ab_used (void) { return 1; }\nint ab_tested (void) { return 2; }\n"
                "int ab_dead (void) { return 3; }\nstatic int ab_own (void) { return 4; }\n"
                "int ab_self (void) { return ab_own (); }\nint ab_calls_self (void) { return ab_self (); }\n",
    "runtime/b.c": "int ab_used (void);\nint ab_calls_self (void);\nint main (void) { return ab_used () + ab_calls_self (); }\n",
    "tests/unit/t.c": "int ab_tested (void);\nint t (void) { return ab_tested (); }\n",
})
rc, out = run("exports", "--srcdir", lonely, "--builddir", build(lonely))
lines = out.splitlines()
tap.ok(rc == 1 and "spec/a.c: ab_tested is exported but only tests call it: make it static, or move or remove it" in lines
       and "spec/a.c: ab_dead is exported but no other object calls it: make it static, or move or remove it" in lines
       and "spec/a.c: ab_self is exported but no other object calls it: make it static, or move or remove it" in lines
       and len(lines) == 3,
       "exports: a function only a test calls, one nothing calls and one only its own file calls fail; "
       "one another file calls, main and static ones do not", out)

def body(n):
    return "{\n" + "  x++;\n" * (n - 2) + "}\n"


LONG = LAYERS + "long runtime/listed.c:ab_listed a table of one entry per kind, kept whole\n" \
    "long runtime/listed.c:ab_short it was long once\n"
longs = tree({
    "runtime/exec.c": "static int x;\nint\nab_exec_start (void)\n" + body(99) + "\nint\nab_ok (void)\n" + body(98),
    "runtime/listed.c": "static int x;\nint\nab_listed (void)\n" + body(150) + "\nint\nab_short (void)\n" + body(10),
    "cmd/main.c": "static int x;\nint\nmain (void)\n" + body(300),
}, LONG)
rc, out = run("lengths", "--srcdir", longs)
lines = out.splitlines()
tap.ok(rc == 1 and "runtime/exec.c:2: ab_exec_start is 101 lines (more than 100): split it, "
       "or list it in layers.conf with a reason" in lines
       and "layers.conf: long runtime/listed.c:ab_short: no such function over 100 lines below the top floor" in lines
       and len(lines) == 2,
       "lengths: a function over 100 lines below the front ends fails, naming file, line and length; "
       "a listed one and the front ends' do not; a stale listing fails", out)

tap.plan()
sys.exit(tap.exit_status())
