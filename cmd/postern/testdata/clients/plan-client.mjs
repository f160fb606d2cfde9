#!/usr/bin/env node
// @modelcontextprotocol/sdk 1.x stdio client that runs a plan of tool calls on one connection.
// usage: node plan-client.mjs [--elicit accept|decline|cancel] PLAN.json -- CMD [ARGS...]
// PLAN.json is a list of {name, arguments}; anywhere in arguments, {"$ref": [i, key, ...]}
// stands for the value at key… in the structuredContent of call i (0-based), so that a commit
// takes the token its prepare answered and an undo the action_id of the act it undoes.
// The client lists the tools first, so that the SDK checks every structuredContent against the
// tool's outputSchema (Client.callTool throws when it does not validate).
// --elicit declares form elicitation and answers every elicitation/create with that action
// (accept with empty content); the requests' messages are printed as elicitations.
// stdout: one JSON line {protocolVersion, tools, elicitations, calls: [{name, arguments, result} or
// {name, arguments, error}]}: a call the SDK refused (its answer broke its schema, a $ref that
// does not resolve) has error and no result. Exit 0 when the plan ran to its end (check the
// calls), 1 on a protocol or transport error ({"error"} on stderr), 2 on bad usage.
// The server inherits this process's environment and stderr.
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

let argv = process.argv.slice(2);
let elicit;
if (argv[0] === "--elicit") {
  elicit = argv[1];
  argv = argv.slice(2);
}
const sep = argv.indexOf("--");
if (sep !== 1 || sep === argv.length - 1 || (elicit !== undefined && !["accept", "decline", "cancel"].includes(elicit))) {
  console.error("usage: plan-client.mjs [--elicit accept|decline|cancel] PLAN.json -- CMD [ARGS...]");
  process.exit(2);
}
const plan = JSON.parse(readFileSync(argv[0], "utf8"));
const [command, ...args] = argv.slice(sep + 1);

const results = [];
function resolve(v) {
  if (Array.isArray(v)) return v.map(resolve);
  if (v === null || typeof v !== "object") return v;
  if (Array.isArray(v.$ref)) {
    const [i, ...path] = v.$ref;
    let cur = results[i]?.structuredContent;
    for (const k of path) cur = cur?.[k];
    if (cur === undefined) throw new Error(`$ref ${JSON.stringify(v.$ref)} names nothing in call ${i}'s answer`);
    return cur;
  }
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, resolve(x)]));
}

const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
let protocolVersion;
const setProtocolVersion = transport.setProtocolVersion?.bind(transport);
transport.setProtocolVersion = (v) => { protocolVersion = v; setProtocolVersion?.(v); };
const elicitations = [];
const client = new Client({ name: "postern-plan-client", version: "0.0.1" }, elicit ? { capabilities: { elicitation: {} } } : undefined);
if (elicit) {
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    elicitations.push(req.params.message);
    return elicit === "accept" ? { action: "accept", content: {} } : { action: elicit };
  });
}
try {
  await client.connect(transport);
  const out = { protocolVersion, tools: (await client.listTools()).tools, elicitations, calls: [] };
  for (const step of plan) {
    let a = step.arguments;
    try {
      a = resolve(step.arguments ?? {});
      const result = await client.callTool({ name: step.name, arguments: a });
      results.push(result);
      out.calls.push({ name: step.name, arguments: a, result });
    } catch (e) {
      results.push(undefined);
      out.calls.push({ name: step.name, arguments: a, error: String(e?.message ?? e) });
    }
  }
  await client.close();
  // On a pipe, process.exit does not wait for stdout: an answer past the pipe's buffer was cut.
  process.stdout.write(JSON.stringify(out) + "\n", () => process.exit(0));
} catch (e) {
  console.error(JSON.stringify({ error: String(e?.message ?? e), code: e?.code }));
  await client.close().catch(() => {});
  process.exit(1);
}
