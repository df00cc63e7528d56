// Start-up: spawn to the first tools/list answer, agentport (one exposed
// prompt) against a bare SDK v2 server with one tool, measured alternately
// through the real MCP client. Also tools/list with 10,000 tools.
import path from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { ROOT, fmt, median, removeDir, tempDir } from './support.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 15);

async function timeToList(args, env = {}) {
  const started = performance.now();
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args, env: { ...process.env, ...env }, stderr: 'ignore' }));
  const { tools } = await client.listTools();
  const ms = performance.now() - started;
  await client.close();
  return { ms, tools: tools.length };
}

export async function run() {
  const dataDir = tempDir('agentport-bench-');
  const agentport = [path.join(ROOT, 'dist', 'cli', 'main.js'), 'serve', '--dir', path.join(ROOT, 'bench', 'fixtures', 'one-prompt')];
  const bare = [path.join(ROOT, 'bench', 'bare-server.mjs')];
  // Warm the file system cache (and babel's cache, for files that need it) once.
  await timeToList(agentport, { AGENTPORT_DATA_DIR: dataDir });
  await timeToList(bare);
  const a = [];
  const b = [];
  for (let i = 0; i < RUNS; i++) {
    a.push((await timeToList(agentport, { AGENTPORT_DATA_DIR: dataDir })).ms);
    b.push((await timeToList(bare)).ms);
  }
  removeDir(dataDir);
  const ratio = median(a) / median(b);
  return [
    '## Start-up (spawn to first tools/list)',
    '',
    `Median of ${RUNS} alternating runs through the MCP client over stdio; agentport serves one exposed prompt (caches warm).`,
    '',
    '| server | median ms | ratio |',
    '|---|---|---|',
    `| bare SDK v2 server, one tool | ${fmt(median(b))} | 1.00 |`,
    `| agentport, one exposed prompt | ${fmt(median(a))} | ${ratio.toFixed(2)} (target <= 1.3) |`,
    '',
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await run());
