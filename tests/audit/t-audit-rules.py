#!/usr/bin/python3
"""TAP: every rule of `agentbox audit`, both ways, and the audit's contract.

For each row of tests/audit/cases.txt the audit of the first fixture must
report the rule and the audit of the second must not (fixtures from
tests/audit/fixtures.py, written afresh into a temporary directory, with
the symlinks some of them need; the copies in tests/audit/fixtures/ must be
this output).  Every rule of the catalogue must have a row, and the man page
must document each of them.  Every JSON report validates against
docs/audit-schema.json, every SARIF report against the SARIF 2.1.0 schema
vendored in tests/schema/sarif.  Also: the exit statuses of --fail-on,
unreadable input (exit 2 with the field path, a FIFO does not block), and
--diff.

No root needed: only config files are audited here (running containers are
tests/integration/t-audit-live.sh's).
"""

import json
import os
import subprocess
import sys
import tempfile
import warnings

import jsonschema

SRCDIR = os.environ.get("AB_TOP_SRCDIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
AGENTBOX = os.environ.get("AGENTBOX") or os.path.join(os.environ.get("AB_TOP_BUILDDIR", "."), "agentbox")
HERE = os.path.join(SRCDIR, "tests", "audit")
sys.path.insert(0, HERE)
import fixtures  # noqa: E402
sys.path.insert(0, os.path.join(SRCDIR, "tests", "helper"))
from tap import ok, plan, exit_status  # noqa: E402


def audit(*args, timeout=30):
    p = subprocess.run([AGENTBOX, "audit"] + list(args), capture_output=True, timeout=timeout,
                       env=dict(os.environ, NO_COLOR="1"))
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def schema_validator(path, draft):
    with open(path, encoding="utf-8") as f:
        schema = json.load(f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return draft(schema)


AUDIT_SCHEMA = schema_validator(os.path.join(SRCDIR, "docs", "audit-schema.json"), jsonschema.Draft7Validator)
SARIF_SCHEMA = schema_validator(os.path.join(SRCDIR, "tests", "schema", "sarif", "sarif-schema-2.1.0.json"),
                                jsonschema.Draft4Validator)


def problems(validator, doc):
    return ["%s: %s" % ("/".join(str(p) for p in e.absolute_path), e.message)
            for e in sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))]


def read_cases():
    rows = []
    with open(os.path.join(HERE, "cases.txt"), encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].split()
            if line:
                rows.append(tuple(line))
    return rows


def main():
    tmp = tempfile.mkdtemp(prefix="agentbox-audit-")
    fixtures.write(tmp)

    # ---- the fixtures in the tree are the generator's -------------------------------
    stale = []
    for name in fixtures.CASES:
        with open(os.path.join(tmp, name, "config.json"), "rb") as f:
            fresh = f.read()
        try:
            with open(os.path.join(HERE, "fixtures", name, "config.json"), "rb") as f:
                kept = f.read()
        except OSError:
            kept = None
        if kept != fresh:
            stale.append(name)
    ok(not stale, "tests/audit/fixtures holds fixtures.py's output (regenerate: fixtures.py tests/audit/fixtures)",
       ["stale or missing: " + ", ".join(stale)])

    # ---- every rule has a case and a man page entry ----------------------------------
    rc, out, err = audit("--rules", "--format", "json")
    catalogue = json.loads(out)
    ok(rc == 0 and not problems(AUDIT_SCHEMA, catalogue), "audit --rules --format json validates",
       problems(AUDIT_SCHEMA, catalogue))
    ids = [r["id"] for r in catalogue["rules"]]
    ok(len(ids) >= 40 and ids == sorted(ids) and len(set(ids)) == len(ids),
       "%d rules, sorted, each id once" % len(ids))
    rows = read_cases()
    covered = {r[0] for r in rows}
    ok(set(ids) <= covered, "every rule has a row in cases.txt", sorted(set(ids) - covered))
    ok(covered <= set(ids), "every row of cases.txt names a rule", sorted(covered - set(ids)))
    with open(os.path.join(SRCDIR, "man", "agentbox-audit.8"), encoding="utf-8") as f:
        man = f.read()
    rc, rules_man, _ = audit("--rules", "--format", "man")
    ok(rules_man and rules_man in man, "man/agentbox-audit.8 holds the catalogue as `audit --rules --format man` "
                                       "prints it (regenerate its RULES section)")
    undocumented = [i for i in ids if ("\n.B " + i.replace("-", "\\-") + " ") not in man]
    ok(not undocumented, "agentbox-audit(8) documents every rule", undocumented)

    # ---- each rule both ways ---------------------------------------------------------------
    reports = {}

    def report(name):
        if name not in reports:
            rc, out, err = audit("--bundle", os.path.join(tmp, name), "--format", "json")
            try:
                reports[name] = (rc, json.loads(out), err)
            except ValueError:
                reports[name] = (rc, None, err)
        return reports[name]

    for rule, present, absent in rows:
        if present in ("live", "rootless"):
            continue  # t-audit-live.sh, t-rootless.sh
        rc, doc, err = report(present)
        got = doc and [f for f in doc["findings"] if f["id"] == rule]
        ok(bool(got), "%s: %s triggers it" % (rule, present), err or json.dumps(doc and doc["findings"])[:2000])
        rc, doc, err = report(absent)
        got = doc and [f for f in doc["findings"] if f["id"] == rule]
        ok(doc is not None and not got, "%s: %s does not" % (rule, absent), err or json.dumps(got)[:2000])
    ok(report("clean")[1] is not None and report("clean")[1]["findings"] == [], "the clean fixture has no finding",
       json.dumps(report("clean")[1])[:2000])

    # ---- every report validates -------------------------------------------------------------
    bad = []
    for name in fixtures.CASES:
        rc, doc, err = report(name)
        if doc is None or problems(AUDIT_SCHEMA, doc):
            bad.append("%s: %s" % (name, err or problems(AUDIT_SCHEMA, doc)[:3]))
    ok(not bad, "the JSON report of every fixture validates against docs/audit-schema.json", bad)
    bad = []
    for name in ("clean", "cap-all", "bind-host-root", "no-seccomp", "devices-allow-all", "hook-writable"):
        rc, out, err = audit("--bundle", os.path.join(tmp, name), "--format", "sarif")
        try:
            doc = json.loads(out)
        except ValueError:
            bad.append(name + ": not JSON: " + err)
            continue
        p = problems(SARIF_SCHEMA, doc)
        results = doc["runs"][0]["results"]
        rules = doc["runs"][0]["tool"]["driver"]["rules"]
        if p or len(rules) != len(ids) or len(results) != len(report(name)[1]["findings"]):
            bad.append("%s: %s (%d rules, %d results)" % (name, p[:3], len(rules), len(results)))
        elif any(rules[r["ruleIndex"]]["id"] != r["ruleId"] for r in results):
            bad.append(name + ": a ruleIndex does not point at its ruleId")
    ok(not bad, "SARIF reports validate against the SARIF 2.1.0 schema, rules and results consistent", bad)

    # ---- exit statuses ---------------------------------------------------------------------
    b = lambda n: os.path.join(tmp, n)  # noqa: E731
    ok(audit("--bundle", b("clean"))[0] == 0, "no finding: exit 0")
    ok(audit("--bundle", b("no-seccomp"))[0] == 1, "a high finding: exit 1 (--fail-on defaults to high)")
    ok(audit("--bundle", b("no-pids-limit"))[0] == 0, "only a medium finding: exit 0 by default")
    ok(audit("--bundle", b("no-pids-limit"), "--fail-on", "medium")[0] == 1, "--fail-on medium: exit 1 for it")
    ok(audit("--bundle", b("no-cpu-limit"), "--fail-on", "medium")[0] == 0, "--fail-on medium: a low one passes")
    ok(audit("--bundle", b("no-cpu-limit"), "--fail-on", "low")[0] == 1, "--fail-on low: exit 1 for a low one")
    ok(audit("--config", os.path.join(b("no-seccomp"), "config.json"))[0] == 1, "--config FILE audits a file")
    rc, out, err = audit("--bundle", b("clean"), "--fail-on", "severe")
    ok(rc == 2 and "--fail-on" in err, "a wrong --fail-on: exit 2 naming it", err)

    # ---- unreadable input: exit 2 with the field path, nothing hangs -----------------------
    bad_dir = os.path.join(tmp, "bad")
    os.makedirs(bad_dir)
    cases = [
        ('{"ociVersion": "1.3.0", "root": {"path": "r"}, "process": {"cwd": "/", "args": "sh"}}',
         "process.args", "a wrong type"),
        ('{"ociVersion": "1.3.0", "root": {"path": "r"}, "root": {"path": "s"}}', "root", "a duplicate key"),
        ('{"ociVersion": "1.3.0", "root": {"path": "r"}, "linux": {"namespaces": [{"type": "nett"}]}}',
         "linux.namespaces[0].type", "an unknown namespace"),
        ('{"ociVersion": "1.3.0", "root": ', "config.json", "truncated JSON"),
    ]
    for text, path, what in cases:
        with open(os.path.join(bad_dir, "config.json"), "w") as f:
            f.write(text)
        rc, out, err = audit("--bundle", bad_dir)
        ok(rc == 2 and path in err and out == "", "%s: exit 2, the message names %s" % (what, path),
           "exit %d: %s" % (rc, err))
    os.unlink(os.path.join(bad_dir, "config.json"))
    os.mkfifo(os.path.join(bad_dir, "config.json"))
    try:
        rc, out, err = audit("--bundle", bad_dir, timeout=10)
        ok(rc == 2 and "regular file" in err, "a FIFO as config.json is refused at once (exit 2)", err)
    except subprocess.TimeoutExpired:
        ok(False, "a FIFO as config.json is refused at once (exit 2)", ["audit blocked on the FIFO"])
    rc, out, err = audit("--bundle", os.path.join(tmp, "no-such-bundle"))
    ok(rc == 2 and "no-such-bundle" in err, "a missing bundle: exit 2 naming it", err)
    rc, out, err = audit("ab-no-such-container-%d" % os.getpid(), "--format", "json")
    ok(rc == 2 and "does not exist" in err, "a container that does not exist: exit 2", err)

    # ---- hostile strings do not reach the terminal raw ---------------------------------------
    hostile = json.loads(json.dumps(fixtures.CLEAN))
    hostile["hostname"] = "box\u001b]0;pwned\u0007"
    hostile["mounts"].append({"destination": "/data\u001b[2J", "type": "bind", "source": "/srv/\u202egpj.exe",
                              "options": ["rbind", "ro", "rro"]})
    hostile["annotations"] = {"run.oci.x\u009b": "\u001b[31mred"}
    hd = os.path.join(tmp, "hostile")
    os.makedirs(hd)
    with open(os.path.join(hd, "config.json"), "w") as f:
        json.dump(hostile, f)
    rc, out, err = audit("--bundle", hd)
    raw = [c for c in ("\x1b", "\x07", "\u202e", "\u009b") if c in out]
    ok(rc in (0, 1) and "/data\\x1b[2J" in out and not raw,
       "control characters and bidi overrides of the config are escaped in the text report", raw or err)
    rc, out, err = audit("--bundle", hd, "--format", "json")
    doc = json.loads(out) if out else None
    ok(doc is not None and not problems(AUDIT_SCHEMA, doc) and any(
        i["name"] == "mounts[6] /data\u001b[2J" for s_ in doc["mechanisms"] for i in s_["items"]),
       "the JSON report carries them as JSON escapes", err)

    # ---- a config agentbox refuses is still audited -----------------------------------------
    rc, doc, err = report("sysctl-global")
    ok(doc and not doc["accepted"] and "kernel.core_pattern" in (doc["refusal"] or ""),
       "a config validation refuses is audited all the same, with the reason", json.dumps(doc)[:1000])

    # ---- --diff ---------------------------------------------------------------------------
    rc, out, err = audit("--bundle", b("clean"), "--diff", b("no-pid-ns"), "--format", "json")
    d = json.loads(out) if out else {}
    ok(rc == 0 and not problems(AUDIT_SCHEMA, d), "--diff --format json validates", err or problems(AUDIT_SCHEMA, d))
    changes = d.get("diff", {}).get("changes", [])
    ok([(c["section"], c["name"]) for c in changes] == [("namespaces", "pid")]
       and changes[0]["a"]["value"] == "new" and changes[0]["b"]["value"] == "absent",
       "--diff names exactly the mechanism that differs (the pid namespace)", json.dumps(changes)[:2000])
    ok([f["id"] for f in d["diff"]["onlyInB"]] == ["AB-NS-001"] and d["diff"]["onlyInA"] == [],
       "--diff names the finding only the other config has", json.dumps(d.get("diff"))[:2000])
    rc, out, err = audit("--bundle", b("clean"), "--diff", b("bind-data"))
    ok(rc == 0 and "mounts[6] /data" in out and "(not there)" in out,
       "--diff text shows a mount only one side has", out[-2000:])
    rc, out, err = audit("--bundle", b("clean"), "--diff", "hardened", "--format", "json")
    d = json.loads(out) if out else {}
    names = [c["name"] for c in d.get("diff", {}).get("changes", [])]
    ok(rc == 0 and "cpu.quota" in names and d["diff"]["b"]["kind"] == "profile",
       "--diff hardened compares with agentbox spec's profile", json.dumps(names))
    rc, out, err = audit("--bundle", b("clean"), "--diff", "sarif-nonsense-%d" % os.getpid())
    ok(rc == 2, "--diff with an unreadable OTHER: exit 2", err)

    plan()
    subprocess.run(["rm", "-rf", "--one-file-system", tmp])
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
