#!/usr/bin/env node
// Minimal @modelcontextprotocol/client (v2, 2026-07-28 capable) stdio client.
// usage: node v2-client.mjs [--era legacy|auto|2026-07-28] [--call NAME [--args JSON]]... -- CMD [ARGS...]
//   --era legacy (default: plain initialize) | auto (server/discover probe in a separate,
//   short-lived child, falling back to initialize) | 2026-07-28 (pin: modern only, no fallback)
// Connects, pings (legacy era only: ping does not exist in 2026-07-28), lists tools, then
// makes each call in order.
// stdout: one JSON line {era, protocolVersion, serverVersion, serverCapabilities, discover, tools,
// calls: [{name, arguments, result}]}. Exit 0 when every request got a result (isError:true
// included: check it in the JSON); 1 on any protocol or transport error; 2 usage.
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const argv = process.argv.slice(2);
const sep = argv.indexOf("--");
if (sep < 0 || sep === argv.length - 1) {
  console.error("usage: v2-client.mjs [--era legacy|auto|2026-07-28] [--call NAME [--args JSON]]... -- CMD [ARGS...]");
  process.exit(2);
}
const [command, ...args] = argv.slice(sep + 1);
let era = "legacy";
const calls = [];
const opts = argv.slice(0, sep);
for (let i = 0; i < opts.length; i++) {
  if (opts[i] === "--era") era = opts[++i];
  else if (opts[i] === "--call") calls.push({ name: opts[++i], arguments: {} });
  else if (opts[i] === "--args" && calls.length) calls[calls.length - 1].arguments = JSON.parse(opts[++i]);
  else { console.error(`v2-client.mjs: unknown option ${opts[i]}`); process.exit(2); }
}
const mode = era === "legacy" || era === "auto" ? era : { pin: era };

const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
const client = new Client(
  { name: "postern-v2-probe", version: "0.0.1" },
  { versionNegotiation: { mode, probe: { timeoutMs: 15000 } } },
);
try {
  await client.connect(transport);
  const out = {
    era: client.getProtocolEra(),
    protocolVersion: client.getNegotiatedProtocolVersion(),
    serverVersion: client.getServerVersion(),
    serverCapabilities: client.getServerCapabilities(),
    discover: client.getDiscoverResult(),
  };
  if (out.era !== "modern") await client.ping();
  out.tools = (await client.listTools()).tools;
  out.calls = [];
  for (const c of calls) out.calls.push({ ...c, result: await client.callTool(c) });
  await client.close();
  // On a pipe, process.exit does not wait for stdout: an answer past the pipe's buffer was cut.
  process.stdout.write(JSON.stringify(out) + "\n", () => process.exit(0));
} catch (e) {
  console.error(JSON.stringify({ error: String(e?.message ?? e), code: e?.code }));
  await client.close().catch(() => {});
  process.exit(1);
}
