#!/usr/bin/python3
"""`agentbox mcp` at the protocol level, with raw frames: the version
negotiation of both eras, the tool list, and every kind of hostile input.
No sandbox is started (argument errors are found before any worker runs),
so this suite runs without root."""

import json
import os
import sys

import jsonschema

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcplib import LEGACY, MODERN, Server, Tap, meta, tool_error  # noqa: E402

t = Tap()


def code(frame):
    return frame and frame.get("error", {}).get("code")


def fresh():
    return Server()


# ------------------------------------------------------------------ legacy era

s = fresh()
r = s.call("ping", modern=False)
t.ok(r and r.get("result") == {}, "legacy: ping before initialize is answered with {}", r)
r = s.call("tools/list", modern=False)
t.ok(code(r) == -32602 and "initialize" in r["error"]["message"],
     "legacy: tools/list without _meta before initialize is -32602 and says to initialize", r)
r = s.initialize()
res = r and r.get("result", {})
t.ok(res.get("protocolVersion") == LEGACY and res.get("capabilities", {}).get("tools") == {"listChanged": False}
     and res.get("serverInfo", {}).get("name") == "agentbox" and "resultType" not in res,
     "legacy: initialize 2025-11-25 answers 2025-11-25 with the tools capability and serverInfo", r)
r = s.call("tools/list", modern=False)
names = [x["name"] for x in r["result"]["tools"]] if r and "result" in r else []
t.ok(names == ["sandbox_run", "sandbox_create", "sandbox_exec", "sandbox_shell", "sandbox_destroy",
              "workspace_apply", "workspace_discard"] and "resultType" not in r["result"],
     "legacy: after initialize, tools/list without _meta lists the seven tools (2025 shape)", r)
r = s.call("initialize", {"protocolVersion": LEGACY, "capabilities": {}}, modern=False)
t.ok(code(r) == -32600, "legacy: a second initialize on the connection is -32600", r)
r = s.call("server/discover", modern=False)
t.ok(code(r) == -32601, "legacy: server/discover without _meta in a legacy session is -32601 (a modern-only method)", r)
r = s.call("server/discover")
t.ok(r and r.get("result", {}).get("supportedVersions") == [MODERN],
     "a modern request is served by its own _meta even on a legacy connection", r)
t.ok(s.close() == 0, "legacy: EOF on stdin ends the server with status 0")
t.ok(not s.bad_lines, "legacy: every stdout line is one JSON object", s.bad_lines)
s.cleanup()

for asked, answered, why in (("2025-06-18", "2025-06-18", "a legacy version it speaks is echoed"),
                             ("1999-01-01", LEGACY, "an unknown version is answered with its latest legacy one"),
                             (MODERN, LEGACY, "2026-07-28 has no initialize: the answer is a legacy version")):
    s = fresh()
    r = s.initialize(asked)
    t.ok(r and r.get("result", {}).get("protocolVersion") == answered,
         "legacy: initialize %s -> %s (%s)" % (asked, answered, why), r)
    s.cleanup()

s = fresh()
r = s.call("initialize", {"capabilities": {}}, modern=False)
t.ok(code(r) == -32602, "legacy: initialize without protocolVersion is -32602", r)
r = s.call("initialize", {"protocolVersion": 20251125}, modern=False)
t.ok(code(r) == -32602, "legacy: a protocolVersion that is not a string is -32602", r)
s.cleanup()

# ------------------------------------------------------------------ modern era

s = fresh()
r = s.call("server/discover")
res = r and r.get("result", {})
t.ok(res.get("resultType") == "complete" and res.get("supportedVersions") == [MODERN]
     and res.get("capabilities", {}).get("tools") is not None and isinstance(res.get("ttlMs"), int)
     and res.get("cacheScope") in ("public", "private")
     and res.get("_meta", {}).get("io.modelcontextprotocol/serverInfo", {}).get("name") == "agentbox",
     "modern: server/discover (no handshake) gives versions, capabilities, ttlMs/cacheScope and serverInfo in _meta",
     r)
for bad, why in (("2099-01-01", "an unknown version"), (LEGACY, "a legacy version sent the modern way")):
    r = s.call("tools/list", {"_meta": {"io.modelcontextprotocol/protocolVersion": bad}})
    t.ok(code(r) == -32022 and r["error"].get("data", {}).get("supported") == [MODERN]
         and r["error"]["data"].get("requested") == bad,
         "modern: %s is -32022 with data.supported and data.requested" % why, r)
rid = s.request("tools/list", modern=False, id="no-caps")
s.send({"jsonrpc": "2.0", "id": "no-caps2", "method": "tools/list",
        "params": {"_meta": meta(caps=False)}})
r = s.response("no-caps")[0]
t.ok(code(r) == -32602 and "_meta" in r["error"]["message"], "modern: a request without _meta is -32602", r)
r = s.response("no-caps2")[0]
t.ok(code(r) == -32602 and "clientCapabilities" in r["error"]["message"],
     "modern: _meta without clientCapabilities is -32602", r)
r = s.call("tools/list", {"_meta": {"io.modelcontextprotocol/protocolVersion": 20260728}})
t.ok(code(r) == -32602, "modern: a protocolVersion that is not a string is -32602", r)
s.send({"jsonrpc": "2.0", "id": "meta-str", "method": "tools/list", "params": {"_meta": "2026-07-28"}})
r = s.response("meta-str")[0]
t.ok(code(r) == -32602, "modern: a _meta that is not an object is -32602", r)
s.send({"jsonrpc": "2.0", "id": "bad-info", "method": "tools/list",
        "params": {"_meta": dict(meta(), **{"io.modelcontextprotocol/clientInfo": "me"})}})
r = s.response("bad-info")[0]
t.ok(code(r) == -32602, "modern: a clientInfo that is not an object is -32602", r)

r = s.call("tools/list")
res = r and r.get("result", {})
tools = {x["name"]: x for x in res.get("tools", [])}
t.ok(res.get("resultType") == "complete" and isinstance(res.get("ttlMs"), int) and res.get("cacheScope") == "public",
     "modern: tools/list carries resultType, ttlMs and cacheScope", r)
t.ok(sorted(tools) == ["sandbox_create", "sandbox_destroy", "sandbox_exec", "sandbox_run", "sandbox_shell",
                      "workspace_apply", "workspace_discard"]
     and all(x.get("title") and x.get("description") and x.get("annotations") for x in tools.values()),
     "tools/list: seven tools, each with a title, a description and annotations")
with open(os.path.join(os.environ.get("AB_TOP_SRCDIR", "."), "docs", "result-schema.json")) as f:
    published = json.load(f)
t.ok(tools.get("sandbox_run", {}).get("outputSchema") == published
     and tools.get("sandbox_exec", {}).get("outputSchema") == published
     and tools.get("sandbox_shell", {}).get("outputSchema") == published,
     "sandbox_run, sandbox_exec and sandbox_shell publish docs/result-schema.json as their outputSchema")
problems = []
for name, x in tools.items():
    for key in ("inputSchema", "outputSchema"):
        try:
            jsonschema.Draft202012Validator.check_schema(x[key])
        except (KeyError, jsonschema.SchemaError) as e:
            problems.append("%s.%s: %s" % (name, key, e))
        if x.get(key, {}).get("type") != "object":
            problems.append("%s.%s is not an object schema" % (name, key))
    if x["inputSchema"].get("additionalProperties") is not False:
        problems.append("%s.inputSchema admits unknown arguments" % name)
t.ok(not problems, "every inputSchema and outputSchema is a valid Draft 2020-12 object schema, closed to extras",
     problems)
run_in = tools["sandbox_run"]["inputSchema"]
t.ok(run_in.get("required") == ["argv"] and set(run_in["properties"]) == {
    "argv", "cwd", "env", "stdin", "timeout_ms", "timeout_grace_ms", "max_output_bytes", "memory_bytes",
    "pids_limit", "workspace", "workspace_mode", "allow_domains"} and run_in["properties"]["workspace_mode"].get("enum") == ["bind", "overlay"],
    "sandbox_run takes argv (required), cwd, env, stdin, timeout_ms, timeout_grace_ms, max_output_bytes, "
    "memory_bytes, pids_limit, workspace, workspace_mode (bind or overlay) and allow_domains", run_in)
t.ok(set(tools["sandbox_exec"]["inputSchema"]["properties"]) == {
    "handle", "argv", "cwd", "env", "stdin", "timeout_ms", "timeout_grace_ms", "max_output_bytes", "background"}
    and tools["sandbox_exec"]["inputSchema"]["properties"]["background"].get("type") == "boolean"
    and set(tools["sandbox_shell"]["inputSchema"]["properties"]) == {
    "handle", "command", "stdin", "timeout_ms", "timeout_grace_ms", "max_output_bytes", "background"}
    and tools["sandbox_shell"]["inputSchema"].get("required") == ["handle", "command"]
    and set(tools["sandbox_create"]["inputSchema"]["properties"]) == {
    "memory_bytes", "pids_limit", "workspace", "workspace_mode", "allow_domains"}
    and tools["sandbox_destroy"]["inputSchema"].get("required") == ["handle"],
    "sandbox_create/exec/shell/destroy take the documented arguments")
t.ok(set(tools["workspace_apply"]["inputSchema"]["properties"]) == {"id", "overwrite", "partial"}
     and tools["workspace_apply"]["inputSchema"].get("required") == ["id"]
     and set(tools["workspace_discard"]["inputSchema"]["properties"]) == {"id"}
     and tools["workspace_discard"]["inputSchema"].get("required") == ["id"],
     "workspace_apply takes id (required), overwrite and partial; workspace_discard takes id")
r = s.call("tools/list", {"cursor": "next"})
t.ok(code(r) == -32602, "tools/list with a cursor it never handed out is -32602", r)
r = s.call("ping")
t.ok(r and r.get("result", {}).get("resultType") == "complete", "modern: ping with _meta is answered", r)
t.ok(s.close() == 0 and not os.path.exists(s.state_root), "modern: EOF ends the server (0), its state root removed")
t.ok(not s.bad_lines, "modern: every stdout line is one JSON object", s.bad_lines)
s.cleanup()

# ------------------------------------------------------------------ hostile input

s = fresh()


def raw_error(data, want, name):
    s.send_raw(data)
    got = s.next_frame()
    f = got and got[0]
    t.ok(f is not None and code(f) == want and f.get("id", "absent") is None, name, f)


raw_error(b"this is not json\n", -32700, "garbage is -32700 with id null")
raw_error(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"\n", -32700, "a truncated object is -32700")
raw_error(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffing\"}\n", -32700, "invalid UTF-8 is -32700")
raw_error(b"[" * 100000 + b"]" * 100000 + b"\n", -32700, "100000 levels of nesting are -32700 (bounded depth)")
raw_error(b"{\"a\":" * 5000 + b"1" + b"}" * 5000 + b"\n", -32700, "deeply nested objects are -32700")
raw_error(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"ping\"}\n", -32700, "duplicate keys are refused (-32700)")
raw_error(b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}]\n",
          -32600, "a batch is -32600 with id null, answered once")
raw_error(b"[]\n", -32600, "an empty batch is -32600")
raw_error(b"42\n", -32600, "a bare number is -32600")
raw_error(b"{\"jsonrpc\":\"2.0\",\"id\":{\"x\":1},\"method\":\"ping\"}\n", -32600, "an object id is -32600 with id null")
raw_error(b"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}\n", -32600, "a null id is -32600 (MCP forbids it)")
raw_error(b"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}\n", -32600, "a fractional id is -32600")
s.send_raw(b"x" * (5 << 20))
s.send_raw(b"\n")
got = s.next_frame()
t.ok(got and code(got[0]) == -32700 and "longer" in got[0]["error"]["message"],
     "a 5 MiB line is -32700 (message too long)", got and got[0])
got = s.next_frame(timeout=2)
t.ok(got is None, "... answered once, and its bytes are not parsed as further messages", got and got[0])
s.send_raw(b"y" * (6 << 20) + b"{\"jsonrpc\":\"2.0\",\"id\":\"hidden\",\"method\":\"ping\"}\n")
got = s.next_frame()
t.ok(got and code(got[0]) == -32700, "a request hidden at the end of an oversized line is not executed",
     got and got[0])


def reply(msg, name, want_code=None, want_id=None):
    s.send(msg)
    got = s.next_frame()
    f = got and got[0]
    cond = f is not None and (code(f) == want_code if want_code else "result" in f)
    if want_id is not None:
        cond = cond and f.get("id") == want_id
    t.ok(cond, name, f)
    return f


reply({"jsonrpc": "1.0", "id": 5, "method": "ping"}, "jsonrpc 1.0 is -32600", -32600, 5)
reply({"id": 6, "method": "ping"}, "a missing jsonrpc is -32600", -32600, 6)
reply({"jsonrpc": "2.0", "id": 7, "method": 7}, "a method that is not a string is -32600", -32600, 7)
reply({"jsonrpc": "2.0", "id": 8}, "a request without method is -32600", -32600, 8)
reply({"jsonrpc": "2.0", "id": 9, "method": "tools/frobnicate", "params": {"_meta": meta()}},
      "an unknown method is -32601", -32601, 9)
reply({"jsonrpc": "2.0", "id": 10, "method": "notifications/cancelled", "params": {"requestId": 1}},
      "a notification sent with an id is -32600", -32600, 10)
reply({"jsonrpc": "2.0", "id": 11, "method": "tools/list", "params": [1, 2]},
      "params that are not an object are -32602", -32602, 11)
reply({"jsonrpc": "2.0", "id": "s-12", "method": "ping", "params": {"_meta": meta()}},
      "a string id is echoed as is", None, "s-12")
s.notify("notifications/frobnicated", {"x": 1})
s.notify("notifications/cancelled", {"requestId": {"not": "an id"}})
s.notify("notifications/cancelled")
s.send({"jsonrpc": "2.0", "id": 99, "result": {}})
s.send_raw(b"\n\r\n   \n")
f = reply({"jsonrpc": "2.0", "id": 13, "method": "ping", "params": {"_meta": meta()}},
          "unknown and malformed notifications, client responses and blank lines get no answer", None, 13)

f = reply({"jsonrpc": "2.0", "id": 14, "method": "tools/call",
           "params": {"name": "rm_rf", "arguments": {}, "_meta": meta()}}, "an unknown tool is -32602", -32602, 14)
reply({"jsonrpc": "2.0", "id": 15, "method": "tools/call", "params": {"arguments": {}, "_meta": meta()}},
      "tools/call without a name is -32602", -32602, 15)
reply({"jsonrpc": "2.0", "id": 16, "method": "tools/call",
       "params": {"name": "sandbox_run", "arguments": ["ls"], "_meta": meta()}},
      "arguments that are not an object are -32602", -32602, 16)


def bad_args(tool, args, path, name, tool_calls=None):
    rid = s.request("tools/call", {"name": tool, "arguments": args})
    f = s.response(rid)[0]
    e = tool_error(f) if f and "result" in f else None
    t.ok(f and f["result"].get("isError") is True and e and e.get("path") == path and path in e.get("message", "")
         and e.get("code") == "invalid_arguments" and e.get("retryable") is True and e.get("suggested_action"),
         "invalid arguments: %s -> isError naming `%s`" % (name, path), f)


bad_args("sandbox_run", {}, "argv", "missing argv")
bad_args("sandbox_run", {"argv": []}, "argv", "empty argv")
bad_args("sandbox_run", {"argv": ["sh", 1]}, "argv[1]", "a number in argv")
bad_args("sandbox_run", {"argv": "ls -l"}, "argv", "argv as a string")
bad_args("sandbox_run", {"argv": ["ls"], "cwd": "tmp"}, "cwd", "a relative cwd")
bad_args("sandbox_run", {"argv": ["ls"], "env": {"A=B": "x"}}, "env.A=B", "an env name with =")
bad_args("sandbox_run", {"argv": ["ls"], "env": {"PATH": 1}}, "env.PATH", "an env value that is not a string")
bad_args("sandbox_run", {"argv": ["ls"], "timeout_ms": 0}, "timeout_ms", "timeout_ms 0")
bad_args("sandbox_run", {"argv": ["ls"], "timeout_ms": -5}, "timeout_ms", "a negative timeout_ms")
bad_args("sandbox_run", {"argv": ["ls"], "timeout_ms": 1.5}, "timeout_ms", "a fractional timeout_ms")
bad_args("sandbox_run", {"argv": ["ls"], "timeout_grace_ms": -1}, "timeout_grace_ms", "a negative timeout_grace_ms")
bad_args("sandbox_run", {"argv": ["ls"], "max_output_bytes": 1 << 40}, "max_output_bytes", "a huge max_output_bytes")
bad_args("sandbox_run", {"argv": ["ls"], "memory_bytes": 1000}, "memory_bytes", "memory_bytes under 1 MiB")
bad_args("sandbox_run", {"argv": ["ls"], "pids_limit": "10"}, "pids_limit", "pids_limit as a string")
bad_args("sandbox_run", {"argv": ["ls"], "workspace": "/etc"}, "workspace",
         "a host workspace on a server without --workspace-root")
bad_args("sandbox_run", {"argv": ["ls"], "allow_domains": ["exa mple.com"]}, "allow_domains[0]", "a bad host name")
bad_args("sandbox_run", {"argv": ["ls"], "stdin": 5}, "stdin", "stdin that is not a string")
bad_args("sandbox_run", {"argv": ["ls"], "rm": True}, "rm", "an unknown argument")
bad_args("sandbox_run", {"argv": ["x" * (200 << 10)]}, "argv[0]", "an argument longer than execve takes")
bad_args("sandbox_exec", {"argv": ["ls"]}, "handle", "sandbox_exec without a handle")
bad_args("sandbox_shell", {"command": "ls"}, "handle", "sandbox_shell without a handle")
bad_args("sandbox_shell", {"handle": "sbx_" + "0" * 32, "command": "x" * (200 << 10)}, "command",
         "a command line longer than execve takes")
bad_args("sandbox_shell", {"handle": "sbx_" + "0" * 32, "command": "ls", "argv": ["ls"]}, "argv",
         "sandbox_shell given argv")
bad_args("sandbox_run", {"argv": ["ls"], "background": True}, "background",
         "sandbox_run given background (its sandbox ends with the call)")
bad_args("sandbox_destroy", {"handle": 7}, "handle", "a handle that is not a string")
bad_args("sandbox_create", {"argv": ["ls"]}, "argv", "sandbox_create given argv")
bad_args("sandbox_run", {"argv": ["ls"], "workspace_mode": "copy"}, "workspace_mode", "an unknown workspace_mode")
bad_args("sandbox_run", {"argv": ["ls"], "workspace_mode": "overlay"}, "workspace_mode",
         "workspace_mode overlay without a workspace")
bad_args("workspace_apply", {}, "id", "workspace_apply without an id")
bad_args("workspace_apply", {"id": "mcp-1-1", "overwrite": "yes"}, "overwrite", "overwrite that is not a boolean")
bad_args("workspace_discard", {"id": "mcp-1-1", "partial": True}, "partial", "workspace_discard given partial")

import random  # noqa: E402
rng = random.Random(20261202)
for _ in range(300):
    n = rng.randint(1, 400)
    line = bytes(rng.choice(b'{}[]":,0123456789.-eE tfnrul\\abc\x00\xff\xc3') for _ in range(n))
    s.send_raw(line.replace(b"\n", b" ") + b"\n")
s.send({"jsonrpc": "2.0", "id": "after-fuzz", "method": "ping", "params": {"_meta": meta()}})
before = []
f = s.response("after-fuzz", keep=before)[0]
s.pending = []
t.ok(f is not None and "result" in f and len(before) <= 300
     and all(x.get("id") is None and x.get("error", {}).get("code") in (-32700, -32600) for x in before),
     "300 lines of random JSON-ish bytes: at most one parse/invalid-request error each, then ping is answered",
     [x for x in before if x.get("error", {}).get("code") not in (-32700, -32600)][:5])
t.ok(s.proc.poll() is None, "... and it is still running")

t.ok(s.close() == 0, "after all that the server still ends cleanly on EOF")
t.ok(not s.bad_lines and len(s.raw_lines) > 0, "every one of the %d stdout lines is one JSON object" % len(s.raw_lines),
     s.bad_lines)
s.cleanup()

# SIGTERM ends the server the way EOF does.
s = fresh()
r = s.call("ping")
s.proc.terminate()
try:
    rc = s.proc.wait(timeout=60)
except Exception:
    rc = None
t.ok(r is not None and rc == 0 and not os.path.exists(s.state_root),
     "SIGTERM: the server cleans up and exits 0", s.stderr())
s.cleanup()

sys.exit(t.done())
