#!/usr/bin/python3
"""Validate an OCI runtime-spec document against the official JSON schemas.

    check.py config|state|features FILE     (FILE "-" reads stdin)

The schemas are the runtime-spec 1.3.0 copies in tests/schema/oci/ (Apache
License 2.0, see oci/LICENSE).  They are draft 4; every "$ref" is resolved
from that directory and nothing is ever fetched from the network.  Exit
status 0 when the document is valid, 1 with one line per error on stderr
when it is not, 2 on wrong use.  Needs Debian's python3-jsonschema.
"""

import json
import os
import sys
import warnings

import jsonschema

SCHEMA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "oci")
KINDS = {
    "config": "config-schema.json",
    "state": "state-schema.json",
    "features": "features-schema.json",
}


def _load_store():
    """Every schema of SCHEMA_DIR keyed by its file:// URI."""
    store = {}
    for name in sorted(os.listdir(SCHEMA_DIR)):
        if name.endswith(".json"):
            path = os.path.join(SCHEMA_DIR, name)
            with open(path, encoding="utf-8") as f:
                store["file://" + path] = json.load(f)
    return store


def _refuse_remote(uri):
    raise jsonschema.RefResolutionError("refusing to fetch %s: schemas are local only" % uri)


def validator(kind):
    """A Draft4Validator for `kind` whose $refs resolve in SCHEMA_DIR only."""
    store = _load_store()
    base = "file://" + os.path.join(SCHEMA_DIR, KINDS[kind])
    with warnings.catch_warnings():
        # Newer jsonschema deprecates RefResolver for the `referencing`
        # package; Debian 12's 4.10 has only RefResolver.
        warnings.simplefilter("ignore", DeprecationWarning)
        resolver = jsonschema.RefResolver(
            base_uri=base,
            referrer=store[base],
            store=store,
            handlers={"http": _refuse_remote, "https": _refuse_remote},
        )
        return jsonschema.Draft4Validator(store[base], resolver=resolver)


def errors(kind, document):
    """Messages for every schema violation of document, sorted by path."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        found = sorted(validator(kind).iter_errors(document), key=lambda e: list(map(str, e.absolute_path)))
        return ["%s: %s" % ("/".join(map(str, e.absolute_path)) or "(document)", e.message) for e in found]


def main(argv):
    if len(argv) != 3 or argv[1] not in KINDS:
        sys.stderr.write("usage: check.py config|state|features FILE\n")
        return 2
    try:
        if argv[2] == "-":
            document = json.load(sys.stdin)
        else:
            with open(argv[2], encoding="utf-8") as f:
                document = json.load(f)
    except (OSError, ValueError) as e:
        sys.stderr.write("check.py: %s: %s\n" % (argv[2], e))
        return 1
    problems = errors(argv[1], document)
    for p in problems:
        sys.stderr.write("%s: %s\n" % (argv[2], p))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
