// One call of a one-step prompt through the real CLI over stdio, as a host
// makes it, against a bare SDK v2 server making the same `openai` call
// (bench/bare-model-server.mjs). Calls alternate between the servers, so
// noise on a shared machine falls on all alike. File and memory stores.
// The servers are started afresh for each of BENCH_SESSIONS sessions: one
// process start of the same build can differ from another by a few percent
// (code and heap layout), which a single start would count as the build's.
import path from 'node:path';
import { callsInTurn, cpuCell } from './stdioCalls.mjs';
import { ROOT, fakeModelServer, fmt, median, removeDir, tempDir } from './support.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 300);
const WARMUP = 50;
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 3);

export async function run() {
  const model = await fakeModelServer();
  const env = { ...process.env, OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'bench' };
  const serve = (...args) => [
    path.join(ROOT, 'dist', 'cli', 'main.js'),
    'serve',
    '--dir',
    path.join(ROOT, 'bench', 'fixtures', 'loop'),
    ...args,
  ];
  const samples = { bare: [], file: [], memory: [] };
  const cpu = { bare: [], file: [], memory: [] };
  /** Each session's ratio to bare, by store. */
  const sessions = { file: [], memory: [] };
  for (let session = 0; session < SESSIONS; session++) {
    const dataDir = tempDir('agentport-bench-');
    const servers = {
      bare: [path.join(ROOT, 'bench', 'bare-model-server.mjs')],
      file: serve('--store', 'file', '--data-dir', dataDir),
      memory: serve('--store', 'memory'),
    };
    const got = await callsInTurn(servers, { env, model, runs: RUNS, warmup: WARMUP });
    removeDir(dataDir);
    for (const name of Object.keys(samples)) {
      samples[name].push(...got.samples[name]);
      if (got.cpu[name] !== undefined) cpu[name].push(got.cpu[name]);
    }
    for (const name of Object.keys(sessions)) sessions[name].push((median(got.samples[name]) / median(got.samples.bare)).toFixed(2));
  }
  await model.stop();
  const bare = median(samples.bare);
  const mean = (values) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : undefined);
  const bareCpu = mean(cpu.bare);
  const row = (label, name, target) =>
    `| ${label} | ${fmt(median(samples[name]))} | ${(median(samples[name]) / bare).toFixed(2)} | ${sessions[name]?.join(' / ') ?? ''} | ${cpuCell(mean(cpu[name]), bareCpu)} | ${target} |`;
  return [
    '## One call over stdio, against a bare SDK server',
    '',
    `${SESSIONS} sessions, each starting the servers afresh and making ${RUNS} calls to each after ${WARMUP} warm-up rounds,`,
    'alternating; each call is one tools/call of a one-step prompt through the real MCP client and the built CLI,',
    "answered by the scripted model server. Medians over all sessions' calls, and each session's ratio. Server CPU:",
    "the server process's main thread's time on a core per call (Linux schedstat), mean over the sessions, with its ratio",
    'to the bare server; steadier than the times on a shared machine.',
    '',
    '| server | median ms | ratio to bare | ratio by session | server CPU us per call (ratio) | target |',
    '|---|---|---|---|---|---|',
    row('bare SDK v2 server, same `openai` call', 'bare', ''),
    row('agentport, file store', 'file', '<= 1.2'),
    row('agentport, memory store', 'memory', '<= 1.1'),
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await run());
