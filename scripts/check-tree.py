#!/usr/bin/env python3
"""Checks of the shape of agentbox's C tree (docs/architecture.md).

  check-tree.py includes [--srcdir DIR]
      every #include "..." of a C source outside tests/ goes to its own
      room, a lower floor, or a room of its own floor it has an edge to
      (scripts/layers.conf); every file and header is in a room.
  check-tree.py links --srcdir DIR --builddir DIR
      the same rule for what the objects link against (nm): a call to a
      function of a higher floor cannot hide behind a local declaration;
      and inside a room the files call one another without a cycle.
  check-tree.py exports --srcdir DIR --builddir DIR
      every function a production object exports is called by another
      production object: one that only tests call (or nothing) is made
      static, moved into the test, or removed.
  check-tree.py lengths [--srcdir DIR] [--max N]
      no function of a C source below the top floor (the front ends) is
      longer than N lines (100), but those listed in scripts/layers.conf
      with a reason.

Each prints one line per violation, naming the file (and line), and exits
1 when there is any; 0 and nothing on stdout when the tree is clean.
"""

import argparse
import os
import re
import subprocess
import sys

INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


class Layers:
    def __init__(self, path):
        self.rooms = []  # (prefix, name, floor)
        self.floor = {}  # room -> floor
        self.edges = {}  # room -> set of rooms
        self.long_ok = {}  # "file:function" -> reason
        errors = []
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                words = line.split("#", 1)[0].split()
                if not words:
                    continue
                kind = words[0]
                if kind == "room" and len(words) >= 4 and words[1].isdigit():
                    name, floor = words[2], int(words[1])
                    if name in self.floor and self.floor[name] != floor:
                        errors.append(f"{path}:{n}: room {name} on two floors")
                    self.floor[name] = floor
                    for prefix in words[3:]:
                        self.rooms.append((prefix, name, floor))
                elif kind == "edge" and len(words) >= 3:
                    self.edges.setdefault(words[1], set()).update(words[2:])
                elif kind == "long" and len(words) >= 3:
                    self.long_ok[words[1]] = " ".join(words[2:])
                else:
                    errors.append(f"{path}:{n}: cannot read `{line.strip()}`")
        self.rooms.sort(key=lambda r: -len(r[0]))
        for src, dsts in self.edges.items():
            for dst in dsts:
                if src not in self.floor or dst not in self.floor:
                    errors.append(f"{path}: edge {src} -> {dst}: no such room")
                elif self.floor[src] != self.floor[dst]:
                    errors.append(f"{path}: edge {src} -> {dst}: an edge joins rooms of one floor "
                                  f"({self.floor[src]} and {self.floor[dst]})")
        cycle = self.edge_cycle()
        if cycle:
            errors.append(f"{path}: the edges make a cycle: {' -> '.join(cycle)}")
        self.errors = errors

    def edge_cycle(self):
        state = {}

        def visit(r, stack):
            state[r] = 1
            for d in sorted(self.edges.get(r, ())):
                if state.get(d) == 1:
                    return stack + [r, d]
                if d not in state:
                    c = visit(d, stack + [r])
                    if c:
                        return c
            state[r] = 2
            return None

        for r in sorted(self.edges):
            if r not in state:
                c = visit(r, [])
                if c:
                    return c[c.index(c[-1]):]
        return None

    def room_of(self, path):
        for prefix, name, floor in self.rooms:
            if path.startswith(prefix):
                return name, floor
        return None

    def allowed(self, src, dst):
        (sr, sf), (dr, df) = src, dst
        return sr == dr or df < sf or (df == sf and dr in self.edges.get(sr, ()))

    def why_not(self, src, dst):
        (sr, sf), (dr, df) = src, dst
        if df > sf:
            return f"room {dr} is on floor {df}, above {sr}'s floor {sf}"
        return f"room {sr} has no edge to {dr} (both on floor {sf})"


def sources(srcdir, exts=(".c", ".h", ".inc")):
    """The C files of the tree git knows (all files outside a checkout),
    tests/ excluded: tests may use any floor."""
    try:
        out = subprocess.run(["git", "-C", srcdir, "ls-files", "-co", "--exclude-standard"],
                             capture_output=True, text=True, check=True).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        out = []
        for top, dirs, files in os.walk(srcdir):
            dirs[:] = [d for d in dirs if not d.startswith((".", "_build"))]
            out += [os.path.relpath(os.path.join(top, f), srcdir) for f in files]
    return sorted(p for p in out if p.endswith(exts) and not p.startswith("tests/")
                  and os.path.isfile(os.path.join(srcdir, p)))


def check_includes(layers, srcdir):
    bad = []
    for path in sources(srcdir):
        if "/" not in path:
            continue  # config.h and other generated top-level headers
        src = layers.room_of(path)
        if src is None:
            bad.append(f"{path}: in no room of scripts/layers.conf")
            continue
        with open(os.path.join(srcdir, path), encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                m = INCLUDE_RE.match(line)
                if not m or "/" not in m.group(1):
                    continue  # config.h
                header = m.group(1)
                dst = layers.room_of(header)
                if dst is None:
                    bad.append(f"{path}:{n}: includes \"{header}\", which is in no room")
                elif not layers.allowed(src, dst):
                    bad.append(f"{path}:{n}: includes \"{header}\": {layers.why_not(src, dst)}")
    return bad


def objects(srcdir, builddir):
    """Production objects of the build whose source is in the tree:
    {object path: source path}."""
    objs = {}
    for path in sources(srcdir, (".c",)):
        obj = os.path.join(builddir, path[:-2] + ".o")
        if os.path.isfile(obj):
            objs[obj] = path
    return objs


def test_objects(builddir):
    found = []
    for top, dirs, files in os.walk(os.path.join(builddir, "tests")):
        found += [os.path.join(top, f) for f in files if f.endswith(".o")]
    return found


def nm(obj):
    defined, used = set(), set()
    out = subprocess.run(["nm", "-P", obj], capture_output=True, text=True, check=True).stdout
    for line in out.split("\n"):
        p = line.split()
        if len(p) < 2:
            continue
        if p[1] == "U":
            used.add(p[0])
        elif p[1] in "TDBRC":
            defined.add((p[0], p[1]))
    return defined, used


def file_cycle(graph):
    """One cycle of the graph {node: {node: symbol}}, as a list of
    (node, symbol) steps, or None."""
    state = {}

    def visit(v, path):
        state[v] = 1
        for w in sorted(graph.get(v, ())):
            if state.get(w) == 1:
                steps = path + [(v, graph[v][w])]
                start = [n for n, _ in steps].index(w)
                return steps[start:]
            if w not in state:
                c = visit(w, path + [(v, graph[v][w])])
                if c:
                    return c
        state[v] = 2
        return None

    for v in sorted(graph):
        if v not in state:
            c = visit(v, [])
            if c:
                return c
    return None


def check_links(layers, srcdir, builddir):
    objs = objects(srcdir, builddir)
    table = {obj: nm(obj) for obj in objs}
    owner = {}
    for obj, (defined, _) in table.items():
        for name, _kind in defined:
            owner.setdefault(name, obj)
    bad = []
    within = {}  # room -> {file: {file it uses: a symbol}}
    for obj, (_, used) in sorted(table.items()):
        src = layers.room_of(objs[obj])
        if src is None:
            continue  # reported by `includes`
        for name in sorted(used):
            o = owner.get(name)
            if o is None or o == obj:
                continue
            dst = layers.room_of(objs[o])
            if dst == src:
                within.setdefault(src[0], {}).setdefault(objs[obj], {}).setdefault(objs[o], name)
            elif dst and not layers.allowed(src, dst):
                bad.append(f"{objs[obj]}: uses {name} of {objs[o]}: {layers.why_not(src, dst)}")
    # Inside a room too the files call one way: a file that calls one that
    # calls it back is two halves of one thing, or a layer in the wrong place.
    for room in sorted(within):
        while True:
            cycle = file_cycle(within[room])
            if not cycle:
                break
            ring = " -> ".join(f"{f} ({sym})" for f, sym in cycle) + f" -> {cycle[0][0]}"
            bad.append(f"{cycle[0][0]}: the files of room {room} call one another in a cycle: {ring}")
            del within[room][cycle[-1][0]][cycle[0][0]]  # report each cycle once
    return bad


def check_exports(layers, srcdir, builddir):
    objs = objects(srcdir, builddir)
    table = {obj: nm(obj) for obj in objs}
    used_by = {}
    for obj, (_, used) in table.items():
        for name in used:
            used_by.setdefault(name, set()).add(obj)
    in_tests = set()
    for obj in test_objects(builddir):
        in_tests |= nm(obj)[1]
    bad = []
    for obj, (defined, _) in sorted(table.items()):
        for name, kind in sorted(defined):
            if kind != "T" or name == "main":
                continue
            # base/libc-*.c stand in for the C library (a musl build): what
            # they define is its interface, called by the library's users
            if objs[obj].startswith("base/libc-"):
                continue
            if used_by.get(name, set()) - {obj}:
                continue
            who = "only tests call it" if name in in_tests else "no other object calls it"
            bad.append(f"{objs[obj]}: {name} is exported but {who}: make it static, or move or remove it")
    return bad


def functions(text):
    """(name, first line, last line) of each function of GNU-style C
    (the body's braces in column 0)."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        if lines[i].startswith("{"):
            j = i - 1
            while j >= 0 and lines[j].strip() and not lines[j].startswith(("}", "#")) \
                    and not lines[j].rstrip().endswith((";", "*/")):
                j -= 1
            sig = " ".join(lines[j + 1:i])
            sig = re.sub(r"__attribute__\s*\(\(.*?\)\)", "", sig)
            k = i + 1
            while k < len(lines) and not lines[k].startswith("}"):
                k += 1
            m = re.search(r"(\w+)\s*\(", sig)
            if m and "=" not in sig.split("(")[0]:
                yield m.group(1), j + 2, k + 1
            i = k
        i += 1


def check_lengths(layers, srcdir, limit):
    """Functions longer than `limit` lines in the files below the top floor
    (the front ends': argument parsers and dispatch tables may be long),
    but those listed with `long FILE:FUNCTION REASON`; a listed one that
    is no longer long fails too, so the list stays true."""
    bad = []
    top = max(layers.floor.values(), default=0)
    seen = set()
    for path in sources(srcdir, (".c",)):
        room = layers.room_of(path)
        if room is None or room[1] >= top:
            continue
        with open(os.path.join(srcdir, path), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for name, first, last in functions(text):
            n = last - first + 1
            key = f"{path}:{name}"
            if n > limit and key in layers.long_ok:
                seen.add(key)
            elif n > limit:
                bad.append(f"{path}:{first}: {name} is {n} lines (more than {limit}): split it, "
                           f"or list it in layers.conf with a reason")
    for key in sorted(set(layers.long_ok) - seen):
        bad.append(f"layers.conf: long {key}: no such function over {limit} lines below the top floor")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("check", choices=["includes", "links", "exports", "lengths"])
    ap.add_argument("--srcdir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--builddir")
    ap.add_argument("--layers")
    ap.add_argument("--max", type=int, default=100)
    a = ap.parse_args()
    layers = Layers(a.layers or os.path.join(a.srcdir, "scripts", "layers.conf"))
    bad = list(layers.errors)
    if a.check == "includes":
        bad += check_includes(layers, a.srcdir)
    elif a.check == "lengths":
        bad += check_lengths(layers, a.srcdir, a.max)
    else:
        if not a.builddir:
            ap.error(f"{a.check} needs --builddir")
        bad += (check_links if a.check == "links" else check_exports)(layers, a.srcdir, a.builddir)
    for line in bad:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
