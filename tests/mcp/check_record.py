#!/usr/bin/python3
"""Check agentbox result records (MCP tools/call response frames).

    check_record.py FILE...        (FILE "-" reads stdin)

Each FILE holds exactly one frame: one line of UTF-8 JSON ending in LF.  A
frame with "result" must match $defs/toolResultFrame of
docs/result-schema.json, its structuredContent the schema itself, and its
text block must be structuredContent serialized; a frame with "error" must
match $defs/setupErrorFrame.  Blobs must be valid base64 of bytes that are
not UTF-8.  The schema is JSON Schema Draft 2020-12, checked with
Debian's python3-jsonschema; nothing is fetched from the network.  Exit
status 0 when every frame is valid, 1 with one line per problem on stderr.

Also importable: frame_problems(raw_bytes) -> list of messages.
"""

import base64
import json
import os
import sys
import warnings

import jsonschema

SCHEMA_PATH = os.path.join(
    os.environ.get("AB_TOP_SRCDIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."),
    "docs",
    "result-schema.json",
)


def load_schema():
    with open(SCHEMA_PATH, encoding="utf-8") as f:
        return json.load(f)


def _refuse_remote(uri):
    raise jsonschema.RefResolutionError("refusing to fetch %s: the schema is local only" % uri)


def validator(schema, definition=None):
    """A Draft 2020-12 validator for the schema or one of its $defs."""
    target = schema if definition is None else {"$ref": schema["$id"] + "#/$defs/" + definition}
    with warnings.catch_warnings():
        # Newer jsonschema deprecates RefResolver; Debian 12's 4.10 has only it.
        warnings.simplefilter("ignore", DeprecationWarning)
        resolver = jsonschema.RefResolver(
            base_uri=schema["$id"],
            referrer=schema,
            store={schema["$id"]: schema},
            handlers={"http": _refuse_remote, "https": _refuse_remote},
        )
        jsonschema.Draft202012Validator.check_schema(schema)
        return jsonschema.Draft202012Validator(target, resolver=resolver)


def _errors(v, doc, where):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        found = sorted(v.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
        return ["%s%s: %s" % (where, "/".join(map(str, e.absolute_path)) or "(frame)", e.message) for e in found]


def structured_problems(sc, schema=None):
    """Problems of a structuredContent value against the record schema."""
    schema = schema or load_schema()
    return _errors(validator(schema), sc, "structuredContent/")


def frame_problems(raw, schema=None):
    """Problems of one raw frame (bytes)."""
    schema = schema or load_schema()
    if not raw.endswith(b"\n"):
        return ["the frame does not end in LF"]
    if b"\n" in raw[:-1]:
        return ["the frame spans more than one line"]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return ["the frame is not UTF-8: %s" % e]
    try:
        frame = json.loads(text)
    except ValueError as e:
        return ["the frame is not JSON: %s" % e]
    if not isinstance(frame, dict):
        return ["the frame is not a JSON object"]
    if "error" in frame:
        return _errors(validator(schema, "setupErrorFrame"), frame, "")
    problems = _errors(validator(schema, "toolResultFrame"), frame, "")
    if problems:
        return problems
    result = frame["result"]
    try:
        mirrored = json.loads(result["content"][0]["text"])
    except ValueError:
        mirrored = None
    if mirrored != result["structuredContent"]:
        problems.append("content[0].text is not structuredContent serialized")
    sc = result["structuredContent"]
    blobs = {}
    for block in result["content"][1:]:
        name = block["resource"]["uri"].rsplit("/", 1)[1]
        try:
            data = base64.b64decode(block["resource"]["blob"], validate=True)
        except ValueError as e:
            problems.append("%s blob is not base64: %s" % (name, e))
            continue
        blobs[name] = data
        try:
            data.decode("utf-8")
            problems.append("%s blob is valid UTF-8: it should have been text" % name)
        except UnicodeDecodeError:
            pass
    for name in ("stdout", "stderr"):
        if sc[name + "Binary"] != (name in blobs):
            problems.append("%sBinary is %s but a blob is %s" % (name, sc[name + "Binary"], "present" if name in blobs else "absent"))
    if result["isError"] != (sc["error"] is not None):
        problems.append("isError disagrees with structuredContent.error")
    return problems


def main(argv):
    if len(argv) < 2:
        sys.stderr.write("usage: check_record.py FILE...\n")
        return 2
    schema = load_schema()
    bad = 0
    for path in argv[1:]:
        try:
            if path == "-":
                raw = sys.stdin.buffer.read()
            else:
                with open(path, "rb") as f:
                    raw = f.read()
        except OSError as e:
            sys.stderr.write("check_record.py: %s: %s\n" % (path, e))
            bad += 1
            continue
        for p in frame_problems(raw, schema):
            sys.stderr.write("%s: %s\n" % (path, p))
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
