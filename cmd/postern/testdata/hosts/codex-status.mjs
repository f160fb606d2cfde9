#!/usr/bin/env node
// Asks `codex app-server` (JSON-RPC, one object per line) which MCP servers
// start, and prints one line per server: "NAME connected" or "NAME failed: why".
// Usage: node codex-status.mjs   (codex on PATH). Exit 2 after 60 s without an answer.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const codex = spawn('codex', ['app-server'], { stdio: ['pipe', 'pipe', 'ignore'] });
const send = (msg) => codex.stdin.write(JSON.stringify(msg) + '\n');
const timer = setTimeout(() => { console.log('no answer from codex app-server'); codex.kill(); process.exit(2); }, 60000);
createInterface({ input: codex.stdout }).on('line', (line) => {
  let msg;
  try { msg = JSON.parse(line); } catch { return; }
  if (msg.id === 1) {
    send({ method: 'initialized' });
    send({ id: 2, method: 'mcpServerStatus/list', params: {} });
  } else if (msg.id === 2) {
    for (const s of msg.result?.data ?? []) {
      const ok = s.serverInfo && !s.toolsError;
      console.log(ok ? `${s.name} connected tools=${Object.keys(s.tools ?? {}).length}` : `${s.name} failed: ${String(s.toolsError).slice(0, 200)}`);
    }
    clearTimeout(timer);
    codex.kill();
    process.exit(msg.error ? 1 : 0);
  }
});
send({ id: 1, method: 'initialize', params: { clientInfo: { name: 'postern-test', version: '0' } } });
