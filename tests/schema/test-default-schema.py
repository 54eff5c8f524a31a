#!/usr/bin/python3
"""TAP: the default profile (`agentbox spec`, as and not as root) is valid
under the OCI runtime-spec 1.3.0 JSON schema, and our own parser loads it
with no error, no warning and no unknown property.

The profile comes from tests/unit/test-defaults --print, which calls
ab_spec_default_json(); --load runs ab_spec_parse() and ab_spec_validate().
"""

import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.environ.get("AB_TOP_SRCDIR", os.path.dirname(__file__) + "/../.."), "tests/schema"))
import check  # noqa: E402
sys.path.insert(0, os.path.join(os.environ.get("AB_TOP_SRCDIR", os.path.dirname(__file__) + "/../.."), "tests/helper"))
from tap import ok, plan, exit_status  # noqa: E402


HELPER = os.path.join(os.environ.get("AB_TOP_BUILDDIR", "."), "tests/unit/test-defaults")
VARIANTS = [("root", []), ("rootless", ["--rootless", "1000", "1000"])]


with tempfile.TemporaryDirectory(prefix="agentbox-schema-") as tmp:
    for name, extra in VARIANTS:
        gen = subprocess.run([HELPER, "--print"] + extra, capture_output=True)
        ok(gen.returncode == 0 and gen.stdout.endswith(b"}\n"), "the %s profile is generated" % name,
           gen.stderr.decode(errors="replace").splitlines())
        try:
            doc = json.loads(gen.stdout)
        except ValueError as e:
            ok(False, "the %s profile is JSON" % name, [str(e)])
            continue
        problems = check.errors("config", doc)
        ok(not problems, "the %s profile validates against config-schema.json" % name, problems)
        path = os.path.join(tmp, name + ".json")
        with open(path, "wb") as f:
            f.write(gen.stdout)
        load = subprocess.run([HELPER, "--load", path], capture_output=True)
        ok(load.returncode == 0 and not load.stderr,
           "the %s profile loads with our parser: no error, warning or unknown property" % name,
           load.stderr.decode(errors="replace").splitlines())

    # The checker must be able to fail: a broken profile is refused.
    gen = subprocess.run([HELPER, "--print"], capture_output=True)
    doc = json.loads(gen.stdout)
    doc["linux"]["namespaces"].append({"type": "nett"})
    doc["process"]["rlimits"][0]["soft"] = -1
    problems = check.errors("config", doc)
    ok(len(problems) == 2, "the schema check refuses a broken profile (unknown namespace, negative rlimit)", problems)

# The other two kinds the checker knows.
state = {"ociVersion": "1.3.0", "id": "c1", "status": "running", "pid": 42, "bundle": "/b"}
ok(not check.errors("state", state), "a running container's state validates against state-schema.json")
state["status"] = "paused"
ok(check.errors("state", state) == ["status: 'paused' is not one of ['creating', 'created', 'running', 'stopped']"],
   "a state with an unknown status is refused")
features = {"ociVersionMin": "1.0.0", "ociVersionMax": "1.3.0", "linux": {"namespaces": ["pid", "user"]}}
ok(not check.errors("features", features), "a features document validates against features-schema.json")
features["linux"]["namespaces"].append("nett")
ok(len(check.errors("features", features)) == 1, "a features document with an unknown namespace is refused")

plan()
sys.exit(exit_status())
