// Start-up with a big agents folder: spawn -> initialize -> first tools/list
// through the real MCP client over stdio, agentport serving N exposed prompts
// (one TypeScript file each, bench/bigFolderFixture.mjs) against a bare SDK v2
// McpServer registering the same tools with the same zod input schemas, listed
// as agentport lists them (same title, annotations, thread_id argument, and
// agentport's output schema as ready JSON Schema: a tools/list of about the same
// size), and for reference with input schemas only. Also the
// peak RSS of each child and the time until tool_search answers.
//
//   BENCH_PROMPTS=10000      prompts in the folder (size it down for a quick run)
//   BENCH_BIG_RUNS=5         runs of each warm measurement
//   BENCH_BIG_COLD_RUNS=3    first-ever starts (each with empty caches; three, so the figure is a median, not a mean of two)
//   BENCH_CLI=<main.js>      the agentport CLI to measure (default: this checkout's dist/cli/main.js)
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { writeBigFolder } from './bigFolderFixture.mjs';
import { ROOT, fmt, median, removeDir, tempDir } from './support.mjs';

const COUNT = Number(process.env.BENCH_PROMPTS ?? 10_000);
const RUNS = Number(process.env.BENCH_BIG_RUNS ?? 5);
const COLD_RUNS = Number(process.env.BENCH_BIG_COLD_RUNS ?? 3);
// Another build's CLI can be measured the same way (a checkout built elsewhere), to compare builds.
const CLI = process.env.BENCH_CLI ?? path.join(ROOT, 'dist', 'cli', 'main.js');

/** The child's peak resident set (VmHWM), in MiB; undefined off Linux. */
function peakRssMb(pid) {
  try {
    const kb = /VmHWM:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** The SDK's default request timeout (60 s) is shorter than a first start of a big folder on a slow machine. */
const TIMEOUT = { timeout: 15 * 60_000 };

/** Resolves once the process is gone, so its data folder can be removed. */
async function exited(pid) {
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** One start: ms from spawn to the initialize answer, to the first tools/list answer, and (search) to a tool_search answer. */
async function start(args, { env = {}, search = false } = {}) {
  const started = performance.now();
  const transport = new StdioClientTransport({
    command: process.execPath,
    args,
    env: { ...process.env, ...env },
    stderr: process.env.BENCH_STDERR ? 'inherit' : 'ignore',
    // Above the SDK's 10 MiB default, so a list that would not fit is measured (and its size reported) rather than cut off.
    maxBufferSize: 256 * 1024 * 1024,
  });
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(transport, TIMEOUT);
  const initialize = performance.now() - started;
  // When the answer starts arriving: the server's part ends there, the client's reading and parsing follows.
  // (The transport's child process is not public API; this is a benchmark.)
  let firstByte;
  transport._process?.stdout?.once('data', () => (firstByte = performance.now() - started));
  const { tools } = await client.listTools({}, TIMEOUT);
  const list = performance.now() - started;
  let searchMs;
  if (search) {
    await client.callTool({ name: 'tool_search', arguments: { query: 'analyze chemical evidence from a crime scene' } }, TIMEOUT);
    searchMs = performance.now() - started;
  }
  const pid = transport.pid;
  const rss = peakRssMb(pid);
  await client.close();
  await exited(pid);
  return { initialize, firstByte, list, search: searchMs, rss, tools: tools.length, bytes: Buffer.byteLength(JSON.stringify({ tools })) };
}

/** Median figures of a kind of start's runs. */
function summarize(runs) {
  const pick = (key) => median(runs.map((r) => r[key]).filter((v) => v !== undefined));
  return {
    initialize: pick('initialize'),
    firstByte: pick('firstByte'),
    list: pick('list'),
    search: pick('search'),
    rss: pick('rss'),
    tools: runs[0].tools,
    bytes: runs[0].bytes,
    runs: runs.length,
  };
}

/**
 * Runs kinds of starts in rounds, one of each kind a round (a kind with fewer runs sits the later rounds out), so a
 * slow spell of a shared machine falls on every kind alike rather than on the one whose series it met.
 */
async function inTurn(kinds) {
  const runs = Object.fromEntries(Object.keys(kinds).map((name) => [name, []]));
  const rounds = Math.max(...Object.values(kinds).map((kind) => kind.runs));
  for (let round = 0; round < rounds; round++) {
    for (const [name, kind] of Object.entries(kinds)) {
      if (round >= kind.runs) continue;
      const result = await kind.start();
      runs[name].push(result);
      // Each start's figure, so a run's spread can be read, not only its medians.
      process.stderr.write(`bigFolder: round ${round + 1}, ${name}: tools/list at ${fmt(result.list)} ms\n`);
    }
  }
  return Object.fromEntries(Object.entries(runs).map(([name, done]) => [name, summarize(done)]));
}

export async function run() {
  const dir = tempDir('agentport-big-');
  try {
    const generated = performance.now();
    const agents = writeBigFolder(dir, COUNT);
    process.stderr.write(`bigFolder: ${COUNT} prompts written in ${((performance.now() - generated) / 1000).toFixed(1)} s\n`);
    const bare = [path.join(ROOT, 'bench', 'bare-many.mjs'), path.join(dir, 'bare-tools-listed.mjs')];
    const bareInputOnly = [path.join(ROOT, 'bench', 'bare-many.mjs'), path.join(dir, 'bare-tools.mjs')];
    const serve = (...extra) => [CLI, 'serve', '--dir', agents, ...extra];
    const freshDataDir = () => tempDir('agentport-big-data-');
    const noStartupCache = (dataDir) => {
      for (const name of ['catalog-v2.jsonl']) rmSync(path.join(dataDir, 'cache', name), { force: true });
    };

    // The file system cache warm for both (the generated files were just written); agentport's start-up cache written.
    const dataDir = freshDataDir();
    const env = { AGENTPORT_DATA_DIR: dataDir };
    await start(bare);
    await start(serve('--tool-search', 'off'), { env });
    // Starts with tool search keep a folder of their own: the search index saved beside the start-up cache names the
    // catalogue it was built for, and the cache-cleared starts write a new one.
    const searchDir = freshDataDir();
    const searchEnv = { AGENTPORT_DATA_DIR: searchDir };
    await start(serve(), { env: searchEnv, search: true });
    const timed = await inTurn({
      bare: { runs: RUNS, start: () => start(bare) },
      bareInputOnly: { runs: RUNS, start: () => start(bareInputOnly) },
      firstEver: {
        runs: COLD_RUNS,
        start: async () => {
          const fresh = freshDataDir();
          try {
            return await start(serve('--tool-search', 'off'), { env: { AGENTPORT_DATA_DIR: fresh } });
          } finally {
            removeDir(fresh);
          }
        },
      },
      warm: { runs: RUNS, start: () => start(serve('--tool-search', 'off'), { env }) },
      // Files changed since the last start: the start-up cache is gone, the folder loads in full again (and writes it).
      rebuilt: {
        runs: RUNS,
        start: () => {
          noStartupCache(dataDir);
          return start(serve('--tool-search', 'off'), { env });
        },
      },
      warmSearch: { runs: RUNS, start: () => start(serve(), { env: searchEnv, search: true }) },
    });
    const { bare: bareRuns, bareInputOnly: bareInputOnlyRuns, firstEver, warm, rebuilt, warmSearch } = timed;
    process.stderr.write(
      `bigFolder: bare ${fmt(bareRuns.list)} ms, first-ever ${fmt(firstEver.list)}, warm ${fmt(warm.list)}, rebuilt ${fmt(rebuilt.list)}\n`,
    );
    const fresh = freshDataDir();
    let coldSearch;
    try {
      coldSearch = summarize([await start(serve(), { env: { AGENTPORT_DATA_DIR: fresh }, search: true })]);
    } finally {
      removeDir(fresh);
    }
    removeDir(dataDir);
    removeDir(searchDir);

    const row = (label, r, target = '') =>
      `| ${label} | ${r.runs} | ${r.tools} | ${(r.bytes / 2 ** 20).toFixed(1)} | ${fmt(r.initialize)} | ${r.firstByte === undefined ? '—' : fmt(r.firstByte)} | ${fmt(r.list)} | ${(r.list / bareRuns.list).toFixed(2)}${target ? ` (${target})` : ''} | ${r.rss === undefined ? '—' : r.rss.toFixed(0)} | ${r.rss === undefined ? '—' : (r.rss / bareRuns.rss).toFixed(2)} |`;
    return [
      `## Start-up with ${COUNT.toLocaleString('en')} exposed prompts`,
      '',
      `\`node bench/bigFolder.mjs\` (\`BENCH_PROMPTS=${COUNT}\`): one TypeScript file per prompt with a zod input schema`,
      '(Seal-Tools tools), one model file. Each start is spawn -> initialize -> first tools/list through the MCP client',
      'over stdio, `--tool-search off` so both servers list every tool; the kinds of start take turns, round after',
      "round; medians; peak RSS is the child's VmHWM.",
      'The ratios are to the bare server listing the tools as agentport does: the same zod input schemas with the',
      "thread_id argument, closed objects, title and annotations, and agentport's output schema as ready JSON Schema",
      '(one shared object, as in agentport), so that the client reads a tools/list of about the same size from both',
      "(integers are plain numbers there: zod's safe-integer bounds, which agentport leaves out, would make it larger).",
      "agentport's initialize answer also carries instructions naming every tool; the bare server sends none. The bare",
      'server with input schemas only (a module of its own) is shown for reference.',
      'All times are from spawn. "list answer starts" is when the first bytes of the tools/list answer reach the client;',
      "after it, the time is the client's: the SDK client copies its whole read buffer on every chunk, so reading a",
      "list costs it more than in proportion to the list's size. It also reads at most 10 MiB a message over stdio",
      'by default (`STDIO_DEFAULT_MAX_BUFFER_SIZE`); this benchmark raises that limit.',
      '',
      '| server | runs | tools listed | tools/list MiB | initialize ms | list answer starts ms | tools/list ms | ratio to bare | peak RSS MiB | RSS ratio |',
      '|---|---|---|---|---|---|---|---|---|---|',
      row('bare SDK v2 `McpServer`, tools listed as agentport lists them', bareRuns),
      row('bare SDK v2 `McpServer`, input schemas only', bareInputOnlyRuns),
      row('agentport, first start ever (empty caches)', firstEver, 'target <= 2'),
      row('agentport, warm start', warm, 'target <= 1'),
      row('agentport, start-up cache cleared (loaded in full again)', rebuilt),
      '',
      `Tool search (\`--tool-search auto\`, on at this size): spawn to the first tool_search answer ${fmt(warmSearch.search)} ms on a warm start`,
      `(tools/list answered at ${fmt(warmSearch.list)} ms), ${fmt(coldSearch.search)} ms on a first start ever (target: within 1 s of start).`,
      '',
    ].join('\n');
  } finally {
    removeDir(dir);
  }
}

/** `node bench/bigFolder.mjs --once <agents dir> <data dir> [serve flags...]`: one start, for profiling. */
async function once([agents, dataDir, ...flags]) {
  const result = await start([CLI, 'serve', '--dir', agents, ...flags], {
    env: { AGENTPORT_DATA_DIR: dataDir },
    search: !flags.includes('off'),
  });
  console.log(JSON.stringify(result));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (process.argv[2] === '--once') await once(process.argv.slice(3));
  else console.log(await run());
}
