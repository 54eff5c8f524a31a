#!/usr/bin/env python3
"""Edit an OCI config.json with dotted-path assignments (used by lib.sh).

    cfg.py FILE EDIT...          apply the edits to FILE in place
    cfg.py FILE --get PATH       print the value at PATH (strings bare, others as JSON)
    cfg.py --default FILE        write a runc-like default config (for runtimes without `spec`)

A PATH is dotted keys with optional list selectors:
    process.args  linux.namespaces[0].type  linux.namespaces[type=network].path

EDIT forms:
    PATH=JSON      set (the value must be JSON: 'process.args=["/bin/abtest","true"]',
                   'hostname="box"', 'process.terminal=false'); missing objects are created
    PATH:=TEXT     set to the string TEXT, no JSON quoting needed (hostname:=box)
    PATH+=JSON     append to a list (created if missing)
    PATH-=VALUE    remove from a list every element equal to VALUE (JSON, or a bare
                   string); for a list of objects with a "type" key (namespaces),
                   remove those whose type is VALUE: linux.namespaces-=network
    !PATH          delete the key or list element
For a list of objects with a "type" key, PATH+=NAME with a bare (non-JSON)
NAME appends {"type": NAME}: linux.namespaces+=user.
Exit status 2 on a malformed edit, with a message naming it.
"""

import json
import os
import re
import sys
import tempfile

DEFAULT = {
    "ociVersion": "1.0.2-dev",
    "process": {
        "terminal": False,
        "user": {"uid": 0, "gid": 0},
        "args": ["/bin/abtest", "true"],
        "env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm"],
        "cwd": "/",
        "capabilities": {
            k: ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"]
            for k in ("bounding", "effective", "permitted", "ambient")
        },
        "rlimits": [{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024}],
        "noNewPrivileges": True,
    },
    "root": {"path": "rootfs", "readonly": True},
    "hostname": "runc",
    "mounts": [
        {"destination": "/proc", "type": "proc", "source": "proc"},
        {"destination": "/dev", "type": "tmpfs", "source": "tmpfs",
         "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]},
        {"destination": "/dev/pts", "type": "devpts", "source": "devpts",
         "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"]},
        {"destination": "/dev/shm", "type": "tmpfs", "source": "shm",
         "options": ["nosuid", "noexec", "nodev", "mode=1777", "size=65536k"]},
        {"destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue",
         "options": ["nosuid", "noexec", "nodev"]},
        {"destination": "/sys", "type": "sysfs", "source": "sysfs",
         "options": ["nosuid", "noexec", "nodev", "ro"]},
        {"destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup",
         "options": ["nosuid", "noexec", "nodev", "relatime", "ro"]},
    ],
    "linux": {
        "resources": {"devices": [{"allow": False, "access": "rwm"}]},
        "namespaces": [{"type": t} for t in ("pid", "network", "ipc", "uts", "mount")],
        "maskedPaths": ["/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
                        "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware",
                        "/proc/scsi"],
        "readonlyPaths": ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"],
    },
}


class EditError(Exception):
    pass


TOKEN = re.compile(r"([^.\[\]]+)|\[([^\]]*)\]")


def parse_path(path):
    """'a.b[0].c[type=x]' -> ['a', 'b', 0, 'c', ('type', 'x')]"""
    steps, pos = [], 0
    while pos < len(path):
        if path[pos] == ".":
            pos += 1
            continue
        m = TOKEN.match(path, pos)
        if not m:
            raise EditError(f"bad path `{path}` at offset {pos}")
        key, sel = m.group(1), m.group(2)
        if key is not None:
            steps.append(int(key) if key.isdigit() and steps else key)
        elif "=" in sel:
            k, v = sel.split("=", 1)
            steps.append((k, v))
        elif re.fullmatch(r"-?\d+", sel):
            steps.append(int(sel))
        else:
            raise EditError(f"bad selector `[{sel}]` in `{path}`")
        pos = m.end()
    if not steps:
        raise EditError("empty path")
    return steps


def select(container, step, path, create):
    """Return the key/index in container that step names."""
    if isinstance(step, tuple):
        if not isinstance(container, list):
            raise EditError(f"`{path}`: selector [{step[0]}={step[1]}] on a non-list")
        for i, el in enumerate(container):
            if isinstance(el, dict) and str(el.get(step[0])) == step[1]:
                return i
        if create:
            container.append({step[0]: step[1]})
            return len(container) - 1
        raise EditError(f"`{path}`: no element with {step[0]}={step[1]}")
    if isinstance(step, int):
        if not isinstance(container, list) or not -len(container) <= step < len(container):
            raise EditError(f"`{path}`: index {step} out of range")
        return step
    if not isinstance(container, dict):
        raise EditError(f"`{path}`: key `{step}` on a non-object")
    return step


def walk(doc, steps, path, create):
    """Return (parent, key) for the last step, creating objects on the way if asked."""
    cur = doc
    for i, step in enumerate(steps[:-1]):
        k = select(cur, step, path, create)
        if isinstance(cur, dict) and k not in cur:
            if not create:
                raise EditError(f"`{path}`: `{step}` does not exist")
            cur[k] = [] if isinstance(steps[i + 1], tuple) else {}
        cur = cur[k]
    return cur, select(cur, steps[-1], path, create)


def loads(text, path, bare_ok=False):
    try:
        return json.loads(text)
    except ValueError:
        if bare_ok:
            return text
        raise EditError(f"`{path}`: value `{text}` is not JSON (use PATH:=TEXT for a plain string)")


def typed_list(lst):
    return bool(lst) and all(isinstance(e, dict) and "type" in e for e in lst)


def split_edit(edit):
    """Split at the first operator outside [...] selectors: 'a[type=x].b+=1' -> ('a[type=x].b', '+=', '1')."""
    depth = 0
    for i, c in enumerate(edit):
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
        elif c == "=" and depth == 0:
            if i > 0 and edit[i - 1] in "+-:":
                return edit[: i - 1], edit[i - 1] + "=", edit[i + 1:]
            return edit[:i], "=", edit[i + 1:]
    raise EditError(f"bad edit `{edit}`: expected PATH=JSON, PATH:=TEXT, PATH+=JSON, PATH-=VALUE or !PATH")


def apply(doc, edit):
    if edit.startswith("!"):
        parent, key = walk(doc, parse_path(edit[1:]), edit[1:], False)
        if isinstance(parent, dict) and key not in parent:
            raise EditError(f"`{edit[1:]}` does not exist")
        del parent[key]
        return
    path, op, text = split_edit(edit)
    parent, key = walk(doc, parse_path(path), path, True)
    if op == "=":
        parent[key] = loads(text, path)
    elif op == ":=":
        parent[key] = text
    elif op == "+=":
        lst = parent.setdefault(key, []) if isinstance(parent, dict) else parent[key]
        if not isinstance(lst, list):
            raise EditError(f"`{path}` is not a list")
        value = loads(text, path, bare_ok=typed_list(lst) or not lst)
        if isinstance(value, str) and typed_list(lst) and not text.startswith('"'):
            value = {"type": value}
        lst.append(value)
    else:
        lst = parent.get(key) if isinstance(parent, dict) else parent[key]
        if not isinstance(lst, list):
            raise EditError(f"`{path}` is not a list")
        value = loads(text, path, bare_ok=True)
        keep = [e for e in lst if not (e == value or (isinstance(e, dict) and e.get("type") == value))]
        if len(keep) == len(lst):
            raise EditError(f"`{path}`: no element `{text}` to remove")
        lst[:] = keep


def write_atomic(path, doc):
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".config.", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    os.chmod(tmp, 0o644)
    os.rename(tmp, path)


def main(argv):
    if len(argv) == 3 and argv[1] == "--default":
        write_atomic(argv[2], DEFAULT)
        return 0
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        doc = json.load(f)
    if len(argv) == 4 and argv[2] == "--get":
        parent, key = walk(doc, parse_path(argv[3]), argv[3], False)
        if isinstance(parent, dict) and key not in parent:
            raise EditError(f"`{argv[3]}` does not exist")
        v = parent[key]
        print(v if isinstance(v, str) else json.dumps(v))
        return 0
    for edit in argv[2:]:
        apply(doc, edit)
    write_atomic(argv[1], doc)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except EditError as e:
        print(f"cfg.py: {e}", file=sys.stderr)
        sys.exit(2)
