#!/usr/bin/env node
// Minimal @modelcontextprotocol/sdk 1.x stdio client (2025 protocol revisions only).
// usage: node sdk1-client.mjs [--call NAME [--args JSON]]... -- CMD [ARGS...]
// Connects (initialize), pings, lists tools, then makes each call in order.
// stdout: one JSON line {protocolVersion, serverVersion, serverCapabilities, tools,
// calls: [{name, arguments, result}]}; protocolVersion is the one the server chose in initialize.
// Exit 0 when every request got a result (a tool result with isError:true is still a result:
// check it in the JSON); 1 on any protocol or transport error ({"error", "code"} on stderr); 2 usage.
// The server inherits this process's environment and stderr.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const argv = process.argv.slice(2);
const sep = argv.indexOf("--");
if (sep < 0 || sep === argv.length - 1) {
  console.error("usage: sdk1-client.mjs [--call NAME [--args JSON]]... -- CMD [ARGS...]");
  process.exit(2);
}
const [command, ...args] = argv.slice(sep + 1);
const calls = [];
const opts = argv.slice(0, sep);
for (let i = 0; i < opts.length; i++) {
  if (opts[i] === "--call") calls.push({ name: opts[++i], arguments: {} });
  else if (opts[i] === "--args" && calls.length) calls[calls.length - 1].arguments = JSON.parse(opts[++i]);
  else { console.error(`sdk1-client.mjs: unknown option ${opts[i]}`); process.exit(2); }
}

const transport = new StdioClientTransport({
  command, args,
  env: process.env,          // the default would be only HOME/LOGNAME/PATH/SHELL/TERM/USER
  stderr: "inherit",
});
// The 1.x Client has no accessor for the negotiated version; it hands it to the transport.
let protocolVersion;
const setProtocolVersion = transport.setProtocolVersion?.bind(transport);
transport.setProtocolVersion = (v) => { protocolVersion = v; setProtocolVersion?.(v); };
const client = new Client({ name: "postern-sdk1-probe", version: "0.0.1" });
try {
  await client.connect(transport);
  const out = {
    protocolVersion,
    serverVersion: client.getServerVersion(),
    serverCapabilities: client.getServerCapabilities(),
  };
  await client.ping();
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
