// Interop of `agentbox mcp` with the official MCP TypeScript SDK clients,
// over stdio, printing TAP:
//   @modelcontextprotocol/sdk 1.x     the 2025-11-25 lifecycle (initialize)
//   @modelcontextprotocol/client 2.x  2026-07-28, negotiated by its
//                                     server/discover probe ('auto') and pinned
// Both validate each structuredContent against the tool's outputSchema.
//
//   node interop.mjs AGENTBOX ROOT [--no-sandbox]
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as LegacyStdio } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const [agentbox, root, flag] = process.argv.slice(2);
const sandboxes = flag !== "--no-sandbox";
let n = 0;
let failed = 0;

function ok(cond, name, diag) {
  n++;
  if (!cond) failed++;
  console.log(`${cond ? "" : "not "}ok ${n} - ${name}`);
  if (!cond && diag !== undefined)
    for (const line of JSON.stringify(diag, null, 1)?.split("\n").slice(0, 30) ?? [])
      console.log(`#   ${line}`);
}

function skip(name, why) {
  n++;
  console.log(`ok ${n} - ${name} # SKIP ${why}`);
}

const params = { command: agentbox, args: ["--root", root, "mcp"], stderr: "ignore" };
const names = ["sandbox_run", "sandbox_create", "sandbox_exec", "sandbox_shell", "sandbox_destroy",
               "workspace_apply", "workspace_discard"];

async function exercise(client, era) {
  const { tools } = await client.listTools();
  ok(JSON.stringify(tools.map((t) => t.name)) === JSON.stringify(names), `${era}: listTools gives the seven tools`,
     tools.map((t) => t.name));
  const run = tools.find((t) => t.name === "sandbox_run");
  ok(run?.outputSchema?.properties?.exitCode && run?.annotations?.title, `${era}: sandbox_run has an outputSchema and annotations`);

  const bad = await client.callTool({ name: "sandbox_run", arguments: { argv: ["ls", 7] } });
  ok(bad.isError === true && bad.content?.[0]?.text?.includes("argv[1]"),
     `${era}: invalid arguments come back as isError naming argv[1]`, bad);
  let unknown;
  try {
    await client.callTool({ name: "no_such_tool", arguments: {} });
  } catch (e) {
    unknown = e;
  }
  ok(unknown && String(unknown.code ?? unknown.message).match(/-32602|Unknown tool/),
     `${era}: an unknown tool is a protocol error (-32602)`, String(unknown));

  if (!sandboxes) {
    skip(`${era}: callTool sandbox_run`, "run --default not available");
    return;
  }
  const r = await client.callTool({ name: "sandbox_run", arguments: { argv: ["sh", "-c", "echo interop; exit 3"] } });
  const sc = r.structuredContent ?? {};
  ok(sc.exitCode === 3 && sc.stdout === "interop\n" && sc.reason === "exited" && r.isError === true,
     `${era}: callTool sandbox_run gives the structured result (validated by the SDK against outputSchema)`, r);
  ok(JSON.parse(r.content[0].text).exitCode === 3, `${era}: the text block mirrors structuredContent`);

  const c = await client.callTool({ name: "sandbox_create", arguments: {} });
  const handle = c.structuredContent?.handle;
  ok(/^sbx_[0-9a-f]{32}$/.test(handle ?? ""), `${era}: sandbox_create returns a handle`, c);
  const e = await client.callTool({ name: "sandbox_exec", arguments: { handle, argv: ["echo", "in sandbox"] } });
  ok(e.structuredContent?.stdout === "in sandbox\n" && e.isError === false, `${era}: sandbox_exec runs in it`, e);
  // The session's records carry session and background: the SDK checks
  // them against the outputSchema too.
  const sh = (command, extra = {}) => client.callTool({ name: "sandbox_shell", arguments: { handle, command, ...extra } });
  await sh("cd /tmp && export GREETING=hello");
  const s2 = await sh("echo \"$GREETING from $PWD\"; exit 4");
  ok(s2.structuredContent?.stdout === "hello from /tmp\n" && s2.structuredContent?.exitCode === 4 && s2.isError === true
     && s2.structuredContent?.session?.saved === true && s2.structuredContent?.session?.cwd === "/tmp",
     `${era}: sandbox_shell keeps cwd and environment between calls, each call with its own status`, s2);
  const b = await sh("sleep 600", { background: true });
  ok(b.structuredContent?.reason === "background" && Number.isInteger(b.structuredContent?.background?.pid)
     && b.isError === false, `${era}: sandbox_shell background: true returns at once with the pid`, b);
  const k = await sh(`kill ${b.structuredContent?.background?.pid} && echo stopped`);
  ok(k.structuredContent?.stdout === "stopped\n", `${era}: ... which a later call can stop`, k);
  const d = await client.callTool({ name: "sandbox_destroy", arguments: { handle } });
  ok(d.structuredContent?.destroyed === true, `${era}: sandbox_destroy destroys it`, d);

  const progress = [];
  const opts = { onprogress: (x) => progress.push(x.progress), timeout: 60000 };
  const call = { name: "sandbox_run", arguments: { argv: ["sleep", "2.2"] } };
  // sdk 1.x: callTool(params, resultSchema, options); client 2.x: callTool(params, options)
  const p = await (client instanceof LegacyClient ? client.callTool(call, undefined, opts) : client.callTool(call, opts));
  ok(p.structuredContent?.exitCode === 0 && progress.length >= 1 && progress.every((v, i) => i === 0 || v > progress[i - 1]),
     `${era}: onprogress sees increasing notifications/progress`, progress);
}

async function main() {
  // 2025-11-25: the v1 SDK's initialize handshake.
  {
    const client = new LegacyClient({ name: "agentbox-interop", version: "1.0.0" });
    await client.connect(new LegacyStdio(params));
    ok(client.getServerVersion()?.name === "agentbox", "sdk 1.x: connect (initialize) reaches agentbox",
       client.getServerVersion());
    await exercise(client, "sdk 1.x / 2025-11-25");
    await client.close();
  }
  // 2026-07-28: the v2 client probes with server/discover and goes modern.
  for (const mode of ["auto", { pin: "2026-07-28" }]) {
    const label = typeof mode === "string" ? mode : "pin";
    const client = new Client({ name: "agentbox-interop", version: "2.0.0" }, { versionNegotiation: { mode } });
    await client.connect(new StdioClientTransport(params));
    ok(client.getNegotiatedProtocolVersion() === "2026-07-28" && client.getProtocolEra?.() !== "legacy",
       `client 2.x (${label}): negotiates 2026-07-28 over stdio`,
       { version: client.getNegotiatedProtocolVersion(), era: client.getProtocolEra?.() });
    await exercise(client, `client 2.x ${label} / 2026-07-28`);
    await client.close();
  }
}

try {
  await main();
} catch (e) {
  ok(false, "the interop run completed", String(e?.stack ?? e));
}
console.log(`1..${n}`);
process.exit(failed ? 1 : 0);
