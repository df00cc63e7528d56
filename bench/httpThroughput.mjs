// HTTP throughput: N concurrent callers, each with its own MCP client session
// (the SDK's Streamable HTTP client, with the bearer token), call a one-step
// prompt in a loop against `agentport serve --http` (file store; PostgreSQL
// when it answers) and against a bare SDK v2 server over Streamable HTTP making
// the same `openai` call (bench/bare-model-server.mjs --http). The servers take
// turns, round after round, so noise on a shared machine falls on all alike;
// the figures are medians over rounds.
//
// Settings (environment): BENCH_ROUNDS (7), BENCH_DURATION_MS (1500, measured
// per turn), BENCH_WARMUP_MS (500, before each turn), BENCH_WARM_CALLS (6000, calls each server answers
// before the first round), BENCH_CALLERS (8,64),
// BENCH_STORES (file,postgres; memory too if listed), BENCH_ERA (legacy: 2025-11-25 as clients
// connect by default; modern: pinned to 2026-07-28), BENCH_PROFILE_DIR (write
// a --cpu-prof profile of each server process there).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { ROOT, fakeModelServer, fmt, machine, median, percentile, postgres, removeDir, tempDir } from './support.mjs';

// Seven: on a shared machine one round in three can fall in a slow spell, and a median of three follows it; with
// PostgreSQL's processes on the same two cores, the median of five still moved by 0.1 from run to run.
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 1500);
const WARMUP_MS = Number(process.env.BENCH_WARMUP_MS ?? 500);
const WARM_CALLS = Number(process.env.BENCH_WARM_CALLS ?? 6000);
const CALLERS = (process.env.BENCH_CALLERS ?? '8,64').split(',').map(Number);
const STORES = (process.env.BENCH_STORES ?? 'file,postgres').split(',');
const ERA = process.env.BENCH_ERA === 'modern' ? 'modern' : 'legacy';
const PROFILE_DIR = process.env.BENCH_PROFILE_DIR ? path.resolve(process.env.BENCH_PROFILE_DIR) : undefined;
const TARGET = 0.9;
const TOKEN = randomBytes(16).toString('hex');
const CLI = path.join(ROOT, 'dist', 'cli', 'main.js');
const AGENTS = path.join(ROOT, 'bench', 'fixtures', 'loop');

// The scripted model server runs in a process of its own (this file with
// --model-server), so the callers' process does not also answer the model calls.
async function modelServerProcess() {
  const model = await fakeModelServer();
  model.answerWith(() => ({ text: 'ok' }));
  // It records every request; nothing here reads them.
  setInterval(() => (model.requests.length = 0), 1000).unref();
  process.stdout.write(`model at ${model.baseURL}\n`);
  process.once('SIGTERM', () => void model.stop().then(() => process.exit(0)));
}

/** A process's name and user + system CPU milliseconds so far, from /proc (Linux; undefined elsewhere or when gone). */
function procStat(pid) {
  let stat;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime, in USER_HZ (100 a second) ticks.
  return { name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), cpuMs: (Number(fields[11]) + Number(fields[12])) * 10 };
}

/** User + system CPU milliseconds a process has used so far (Linux; undefined elsewhere). */
const cpuMs = (pid) => procStat(pid)?.cpuMs;

/**
 * User + system CPU milliseconds PostgreSQL's processes on this machine have used so far (Linux; undefined
 * elsewhere). Every postgres process counts, its background writers included: on this machine they share the
 * cores with everything else.
 */
function databaseCpuMs() {
  let entries;
  try {
    entries = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  } catch {
    return undefined;
  }
  const postgres = entries.map(procStat).filter((stat) => stat?.name === 'postgres');
  return postgres.length ? postgres.reduce((total, stat) => total + stat.cpuMs, 0) : undefined;
}

/** Spawns a process and waits for the line announcing its URL. */
function start(name, args, env, pattern, { profile: profiled = false } = {}) {
  const profile = profiled && PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`, `--cpu-prof-name=${name}.cpuprofile`] : [];
  const child = spawn(process.execPath, [...profile, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start:\n${output}`)), 30_000);
    const onData = (chunk) => {
      if (process.env.BENCH_DEBUG) process.stderr.write(`[${name}] ${String(chunk)}`);
      output += String(chunk);
      const match = pattern.exec(output);
      if (!match) return;
      clearTimeout(timer);
      child.off('exit', onExit);
      resolve({
        name,
        url: match[1],
        pid: child.pid,
        stop: async () => {
          if (child.exitCode !== null || child.signalCode !== null) return;
          const exited = new Promise((done) => child.once('exit', done));
          child.kill('SIGTERM');
          const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
          await exited;
          clearTimeout(killer);
        },
      });
    };
    const onExit = (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code}:\n${output}`));
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', onExit);
  });
}

async function connect(url, count) {
  const clients = [];
  // A few at a time: 64 handshakes at once would only measure the start.
  for (let i = 0; i < count; i += 8) {
    const batch = Array.from({ length: Math.min(8, count - i) }, async () => {
      const client = new Client(
        { name: 'bench', version: '1' },
        ERA === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
      );
      await client.connect(
        new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }),
      );
      return client;
    });
    clients.push(...(await Promise.all(batch)));
  }
  return clients;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
// Calls each server answered, warm-ups included (to read a profile per call).
const served = new Map();
const call = (server, client) => {
  served.set(server.name, (served.get(server.name) ?? 0) + 1);
  return client.callTool({ name: 'plain', arguments: { message: 'hi' } });
};

/**
 * One turn: `clients` call in a loop through the warm-up (at least WARMUP_MS
 * and until every caller has had an answer), then through the measured window.
 * Calls that end in the window count; those still going at its end do not.
 */
async function turn(server, clients, model) {
  const latencies = [];
  let open = false;
  let stopped = false;
  let waiting = clients.length;
  let allAnswered;
  const answered = new Promise((resolve) => (allAnswered = resolve));
  const loop = async (client) => {
    let first = true;
    while (!stopped) {
      const started = performance.now();
      const result = await call(server, client);
      const ms = performance.now() - started;
      if (result.isError) throw new Error(`${server.name}: ${JSON.stringify(result.content)}`);
      if (open) latencies.push(ms);
      if (first && --waiting === 0) allAnswered();
      first = false;
    }
  };
  const cpu = () => ({
    server: cpuMs(server.pid),
    model: cpuMs(model.pid),
    database: server.name === 'postgres' ? databaseCpuMs() : undefined,
    bench: process.cpuUsage(),
  });
  const used = (before, after, key) => (before[key] === undefined || after[key] === undefined ? undefined : after[key] - before[key]);
  let window;
  const timing = (async () => {
    await Promise.all([sleep(WARMUP_MS), answered]);
    if (stopped) return;
    open = true;
    const started = performance.now();
    const before = cpu();
    await sleep(DURATION_MS);
    open = false;
    stopped = true;
    const ms = performance.now() - started;
    const after = cpu();
    const bench = process.cpuUsage(before.bench);
    window = {
      ms,
      server: used(before, after, 'server'),
      model: used(before, after, 'model'),
      database: used(before, after, 'database'),
      bench: (bench.user + bench.system) / 1000,
    };
  })();
  await Promise.all([
    timing,
    ...clients.map((client) =>
      loop(client).catch((error) => {
        stopped = true;
        allAnswered();
        throw error;
      }),
    ),
  ]);
  const calls = latencies.length;
  const share = (ms) => (ms === undefined ? undefined : ms / window.ms);
  return {
    calls,
    callsPerSecond: (calls / window.ms) * 1000,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    serverCpuPerCall: window.server === undefined || calls === 0 ? undefined : window.server / calls,
    serverCpuShare: share(window.server),
    databaseCpuPerCall: window.database === undefined || calls === 0 ? undefined : window.database / calls,
    benchCpuShare: share(window.bench),
    modelCpuShare: share(window.model),
  };
}

/**
 * Before the first round: every session makes a few calls, then they call until the server has answered
 * WARM_CALLS in all. V8 keeps compiling in the background for the first few thousand calls (see
 * docs/benchmarks.md, "CPU per call"), on the same cores: a server is measured warm, as one that runs for hours is.
 */
async function warmUp(server, clients) {
  let answered = 0;
  await Promise.all(
    clients.map(async (client) => {
      for (let i = 0; i < 3 || answered < WARM_CALLS; i++) {
        await call(server, client);
        answered += 1;
      }
    }),
  );
}

const seconds = (ms) => `${(ms / 1000).toFixed(ms % 1000 ? 1 : 0)} s`;
const pct = (share) => (share === undefined ? '?' : `${(share * 100).toFixed(0)}%`);

export async function run() {
  const model = await start('model', [path.join(ROOT, 'bench', 'httpThroughput.mjs'), '--model-server'], process.env, /model at (\S+)/);
  const env = { OPENAI_BASE_URL: model.url, OPENAI_API_KEY: 'bench', AGENTPORT_TOKEN: TOKEN, BENCH_TOKEN: TOKEN };
  for (const [key, value] of Object.entries(process.env)) {
    // The servers get the settings given here, not the developer's (the transpile cache may stay).
    if (key.startsWith('OPENAI_') || (key.startsWith('AGENTPORT_') && key !== 'AGENTPORT_CACHE_DIR')) continue;
    env[key] ??= value;
  }
  if (PROFILE_DIR) mkdirSync(PROFILE_DIR, { recursive: true });
  const cleanup = [];
  const notes = [];
  const servers = [];
  const serve = (name, args, extraEnv = {}) =>
    start(
      name,
      [CLI, 'serve', '--http', '--host', '127.0.0.1', '--port', '0', '--dir', AGENTS, ...args],
      { ...env, ...extraEnv },
      /at (http:\/\/\S+\/mcp)/,
      { profile: true },
    );
  try {
    const starting = [
      start('bare', [path.join(ROOT, 'bench', 'bare-model-server.mjs'), '--http'], env, /bare server at (\S+)/, { profile: true }),
    ];
    if (STORES.includes('file')) {
      const dataDir = tempDir('agentport-bench-');
      cleanup.push(() => removeDir(dataDir));
      starting.push(serve('file', ['--store', 'file', '--data-dir', dataDir]));
    }
    if (STORES.includes('memory')) starting.push(serve('memory', ['--store', 'memory']));
    if (STORES.includes('postgres')) {
      const database = await postgres();
      if (!database.reachable) {
        notes.push(`PostgreSQL: skipped, no server answers at ${database.url} (set AGENTPORT_TEST_DATABASE_URL).`);
        process.stderr.write(`httpThroughput: PostgreSQL skipped, no server answers at ${database.url}\n`);
      } else {
        const schema = `agentport_bench_${randomBytes(6).toString('hex')}`;
        const dataDir = tempDir('agentport-bench-');
        cleanup.push(async () => {
          removeDir(dataDir);
          const client = new pg.Client({ connectionString: database.url });
          await client.connect();
          await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
          await client.end();
        });
        const args = ['--store', 'postgres', '--database-url', database.url, '--database-schema', schema, '--data-dir', dataDir];
        starting.push(serve('postgres', args, { AGENTPORT_SECRET_KEY: randomBytes(32).toString('hex') }));
      }
    }
    // Started together; those that came up are stopped below even when another did not.
    const started = await Promise.allSettled(starting);
    for (const outcome of started) if (outcome.status === 'fulfilled') servers.push(outcome.value);
    const failed = started.find((outcome) => outcome.status === 'rejected');
    if (failed) throw failed.reason;
    const most = Math.max(...CALLERS);
    const sessions = new Map();
    for (const server of servers) {
      const started = performance.now();
      sessions.set(server.name, await connect(server.url, most));
      await warmUp(server, sessions.get(server.name));
      process.stderr.write(
        `httpThroughput: ${server.name}: ${most} sessions connected and warmed up in ${seconds(performance.now() - started)}\n`,
      );
    }

    const results = new Map(servers.map((server) => [server.name, new Map(CALLERS.map((n) => [n, []]))]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const n of CALLERS) {
        // The order rotates every round.
        for (let i = 0; i < servers.length; i++) {
          const server = servers[(round + i) % servers.length];
          const result = await turn(server, sessions.get(server.name).slice(0, n), model);
          results.get(server.name).get(n).push(result);
          process.stderr.write(
            `httpThroughput: round ${round + 1}/${ROUNDS}, ${n} callers, ${server.name}: ${result.callsPerSecond.toFixed(0)} calls/s (${result.calls} calls), p50 ${fmt(result.p50)} ms, CPU server ${pct(result.serverCpuShare)}${result.databaseCpuPerCall === undefined ? '' : ` (database ${fmt(result.databaseCpuPerCall)} ms a call)`} callers ${pct(result.benchCpuShare)} model ${pct(result.modelCpuShare)}\n`,
          );
        }
      }
    }
    await Promise.all([...sessions.values()].flat().map((client) => client.close().catch(() => {})));
    if (PROFILE_DIR) {
      const counts = [...served].map(([name, calls]) => `${name} ${calls}`).join(', ');
      process.stderr.write(`httpThroughput: CPU profiles in ${PROFILE_DIR}; calls answered (warm-ups included): ${counts}\n`);
    }
    return report(servers, results, notes);
  } finally {
    const stopping = performance.now();
    await Promise.all(servers.map((server) => server.stop()));
    process.stderr.write(`httpThroughput: servers stopped in ${seconds(performance.now() - stopping)}\n`);
    await model.stop();
    for (const step of cleanup) await step();
  }
}

function report(servers, results, notes) {
  const label = {
    bare: 'bare SDK v2 server, same `openai` call',
    file: 'agentport, file store',
    memory: 'agentport, memory store',
    postgres: 'agentport, PostgreSQL store',
  };
  const rows = [];
  const benchShares = [];
  const databaseCpu = [];
  for (const n of CALLERS) {
    const bare = results.get('bare').get(n);
    for (const server of servers) {
      const rounds = results.get(server.name).get(n);
      benchShares.push(...rounds.map((r) => r.benchCpuShare));
      if (rounds.every((r) => r.databaseCpuPerCall !== undefined) && rounds.length > 0) {
        databaseCpu.push(`${fmt(median(rounds.map((r) => r.databaseCpuPerCall)))} ms at ${n} callers`);
      }
      const cpu = rounds.every((r) => r.serverCpuPerCall !== undefined) ? fmt(median(rounds.map((r) => r.serverCpuPerCall))) : '—';
      // Each round's agentport figure against the bare server's in the same round.
      const ratio = median(rounds.map((r, i) => r.callsPerSecond / bare[i].callsPerSecond));
      rows.push(
        `| ${n} | ${label[server.name]} | ${median(rounds.map((r) => r.callsPerSecond)).toFixed(0)} | ${fmt(median(rounds.map((r) => r.p50)))} | ${fmt(median(rounds.map((r) => r.p99)))} | ${cpu} | ${ratio.toFixed(2)} | ${server.name === 'bare' ? '' : `>= ${TARGET}`} |`,
      );
    }
  }
  return [
    '## HTTP throughput, against a bare SDK server',
    '',
    `Command: \`node bench/httpThroughput.mjs\` (after \`npm run build\`), with BENCH_ROUNDS=${ROUNDS}, BENCH_DURATION_MS=${DURATION_MS},`,
    `BENCH_WARMUP_MS=${WARMUP_MS}, BENCH_CALLERS=${CALLERS.join(',')}, BENCH_ERA=${ERA}.`,
    `Machine: ${machine()}.`,
    '',
    `N callers, each with its own session of the real MCP client (Streamable HTTP, ${ERA === 'modern' ? '2026-07-28' : '2025-11-25'} era, bearer`,
    'token), call the one-step prompt `plain` in a loop, answered at once by the scripted model server (a process of',
    'its own). The bare SDK v2 server (`bench/bare-model-server.mjs --http`: createMcpHandler + toNodeHandler on',
    'node:http, the same `openai` call) and `agentport serve --http` (file store in a fresh data folder; PostgreSQL in',
    `a fresh schema, dropped after) each answer ${WARM_CALLS} calls first (V8 compiles in the background for the first thousands),`,
    `then take turns: ${seconds(DURATION_MS)} measured after ${seconds(WARMUP_MS)} of warm-up each, ${ROUNDS} rounds, the order rotating.`,
    "Figures are medians over rounds; the ratio is the median of each round's calls/s against the bare server's in",
    "the same round. Server CPU is the server process's user + system time per call, from /proc (PostgreSQL's own",
    'processes not included: their CPU per call is given below the table).',
    '',
    '| callers | server | calls/s | p50 ms | p99 ms | server CPU ms per call | ratio to bare | target |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    `The callers' own process used ${(median(benchShares) * 100).toFixed(0)}% of a core (median over turns): on a machine with few cores`,
    'the client, the model server and the server under test share them, so compare the server CPU per call as well.',
    ...(databaseCpu.length
      ? [`PostgreSQL's processes (all of them on this machine) used, a call: ${databaseCpu.join(', ')} (medians over rounds).`]
      : []),
    ...(notes.length ? ['', ...notes] : []),
  ].join('\n');
}

if (process.argv[2] === '--model-server') await modelServerProcess();
else if (import.meta.url === `file://${process.argv[1]}`) console.log(await run());
