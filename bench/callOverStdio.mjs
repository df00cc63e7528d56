// One call of a one-step prompt through the real CLI over stdio, as a host
// makes it, against a bare SDK v2 server making the same `openai` call
// (bench/bare-model-server.mjs). Calls alternate between the servers, so
// noise on a shared machine falls on all alike. File and memory stores.
import path from 'node:path';
import { callsInTurn } from './stdioCalls.mjs';
import { ROOT, fakeModelServer, fmt, median, removeDir, tempDir } from './support.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 300);
const WARMUP = 50;

export async function run() {
  const model = await fakeModelServer();
  const env = { ...process.env, OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'bench' };
  const dataDir = tempDir('agentport-bench-');
  const servers = {
    bare: [path.join(ROOT, 'bench', 'bare-model-server.mjs')],
    file: [
      path.join(ROOT, 'dist', 'cli', 'main.js'),
      'serve',
      '--dir',
      path.join(ROOT, 'bench', 'fixtures', 'loop'),
      '--store',
      'file',
      '--data-dir',
      dataDir,
    ],
    memory: [
      path.join(ROOT, 'dist', 'cli', 'main.js'),
      'serve',
      '--dir',
      path.join(ROOT, 'bench', 'fixtures', 'loop'),
      '--store',
      'memory',
    ],
  };
  const samples = await callsInTurn(servers, { env, model, runs: RUNS, warmup: WARMUP });
  await model.stop();
  removeDir(dataDir);
  const bare = median(samples.bare);
  const row = (label, name, target) =>
    `| ${label} | ${fmt(median(samples[name]))} | ${(median(samples[name]) / bare).toFixed(2)} | ${target} |`;
  return [
    '## One call over stdio, against a bare SDK server',
    '',
    `${RUNS} calls to each server after ${WARMUP} warm-up rounds, alternating; each call is one tools/call of a one-step`,
    'prompt through the real MCP client and the built CLI, answered by the scripted model server.',
    '',
    '| server | median ms | ratio to bare | target |',
    '|---|---|---|---|',
    row('bare SDK v2 server, same `openai` call', 'bare', ''),
    row('agentport, file store', 'file', '<= 1.2'),
    row('agentport, memory store', 'memory', '<= 1.1'),
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await run());
