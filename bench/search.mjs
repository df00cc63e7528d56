#!/usr/bin/env node
/**
 * Tool search benchmark: ranking quality on the Seal-Tools dev queries
 * (recall@5, ours against an off-the-shelf MiniSearch baseline measured in
 * the same run), index build time, query latency and index memory at 4,076,
 * 10,000 and 50,000 tools.
 *
 * Usage (after `npm run build`):
 *   node --expose-gc bench/search.mjs            # markdown section on stdout
 *   AGENTPORT_TOOLSEARCH_DATA=/path/to/seal-tools node --expose-gc bench/search.mjs
 *
 * Progress goes to stderr; stdout carries only the markdown section, which
 * bench/run.mjs collects into docs/benchmarks.md.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import MiniSearch from 'minisearch';
import { DATA_DIR, namespaced, readJsonl, toMcpTool } from './sealTools.mjs';
import { ROOT, fmt, machine, median, percentile } from './support.mjs';

const ENGINE = path.join(ROOT, 'dist', 'search', 'toolIndex.js');
const K = 5;
const SIZES = [4076, 10_000, 50_000];
const TIMED_PASSES = 3;

function progress(message) {
  process.stderr.write(`[bench/search] ${message}\n`);
}

// ---------------------------------------------------------------- data

// ---------------------------------------------------------------- baseline

/** English stop words (the usual NLTK list), for the off-the-shelf baseline. */
const BASELINE_STOP_WORDS = new Set(
  (
    'i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers ' +
    'herself it its itself they them their theirs themselves what which who whom this that these those am is are ' +
    'was were be been being have has had having do does did doing a an the and but if or because as until while ' +
    'of at by for with about against between into through during before after above below to from up down in out ' +
    'on off over under again further then once here there when where why how all any both each few more most ' +
    'other some such no nor not only own same so than too very s t can will just don should now d ll m o re ve y ' +
    'ain aren couldn didn doesn hadn hasn haven isn ma mightn mustn needn shan shouldn wasn weren won wouldn'
  ).split(' '),
);

/**
 * Plain MiniSearch as a library user would set it up: default tokenizer,
 * lowercase, stop words removed, fields name/description/parameters boosted
 * 3/1/0.5, the natural-language query as is.
 */
function buildBaseline(tools) {
  const search = new MiniSearch({
    fields: ['name', 'description', 'parameters'],
    processTerm: (term) => {
      const lower = term.toLowerCase();
      return BASELINE_STOP_WORDS.has(lower) ? null : lower;
    },
    searchOptions: { boost: { name: 3, description: 1, parameters: 0.5 } },
  });
  search.addAll(
    tools.map((tool) => ({
      id: tool.name,
      name: tool.name,
      description: tool.description ?? '',
      parameters: Object.entries(tool.inputSchema?.properties ?? {})
        .map(([name, property]) => `${name} ${property.description ?? ''}`)
        .join(' '),
    })),
  );
  return {
    search: (query) =>
      search
        .search(query)
        .slice(0, K)
        .map((result) => result.id),
  };
}

// ---------------------------------------------------------------- measuring

function recallAt(queries, search) {
  let sum = 0;
  for (const { query, gold } of queries) {
    const found = new Set(search(query).slice(0, K));
    sum += gold.filter((name) => found.has(name)).length / gold.length;
  }
  return sum / queries.length;
}

/** p50/p99 in ms of `run` over `queries`, after one untimed warm-up pass. */
function latency(queries, run, passes = TIMED_PASSES) {
  for (const query of queries) run(query);
  const times = [];
  for (let pass = 0; pass < passes; pass++) {
    for (const query of queries) {
      const started = performance.now();
      run(query);
      times.push(performance.now() - started);
    }
  }
  return { p50: median(times), p99: percentile(times, 99) };
}

/** Build time in ms: the first build, and the median of `runs` (JIT warm). */
function buildTimes(build, runs) {
  const times = [];
  let built;
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    built = build();
    times.push(performance.now() - started);
  }
  return { first: times[0], median: median(times), built };
}

/** Heap growth in MB caused by `build()`, or undefined without --expose-gc. */
function heapDelta(build) {
  if (typeof globalThis.gc !== 'function') return undefined;
  globalThis.gc();
  const before = process.memoryUsage().heapUsed;
  const kept = build();
  globalThis.gc();
  const after = process.memoryUsage().heapUsed;
  // Keep the index alive until after the measurement.
  if (kept === undefined) throw new Error('nothing built');
  return (after - before) / 1024 / 1024;
}

// ---------------------------------------------------------------- main

async function main() {
  if (!existsSync(ENGINE)) {
    process.stderr.write(`bench/search: ${ENGINE} not found; run \`npm run build\` first\n`);
    process.exit(1);
  }
  if (!existsSync(path.join(DATA_DIR, 'tool.jsonl'))) {
    process.stderr.write(`bench/search: no Seal-Tools data in ${DATA_DIR} (set AGENTPORT_TOOLSEARCH_DATA)\n`);
    process.exit(1);
  }
  const { ToolSearchIndex } = await import(pathToFileURL(ENGINE).href);

  const tools = readJsonl('tool.jsonl').map(toMcpTool);
  const dev = readJsonl('dev.jsonl').map((entry) => ({
    query: entry.query,
    gold: [...new Set(entry.calling.map((call) => call.api))],
  }));
  // Short keyword queries, as a model writes them: the words of a gold tool's
  // name ("get water quality"). For timing only; their recall says nothing.
  const keywordQueries = dev.map(({ gold }) => gold[0].replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase());
  const devQueries = dev.map(({ query }) => query);

  progress(`recall@${K} on ${dev.length} dev queries, ${tools.length} tools`);
  const ours = new ToolSearchIndex(tools);
  const oursSearch = (query) => ours.search(query, { maxResults: K }).tools.map((tool) => tool.name);
  const noClauses = new ToolSearchIndex(tools, { clauses: false });
  const noPrefix = new ToolSearchIndex(tools, { prefix: false });
  const baseline = buildBaseline(tools);
  const recall = {
    ours: recallAt(dev, oursSearch),
    noClauses: recallAt(dev, (q) => noClauses.search(q, { maxResults: K }).tools.map((t) => t.name)),
    noPrefix: recallAt(dev, (q) => noPrefix.search(q, { maxResults: K }).tools.map((t) => t.name)),
    baseline: recallAt(dev, baseline.search),
  };

  const rows = [];
  for (const size of SIZES) {
    const pool = size === tools.length ? tools : namespaced(tools, size);
    progress(`${size} tools: build`);
    const build = buildTimes(() => new ToolSearchIndex(pool), size > 20_000 ? 2 : 5);
    const index = build.built;
    progress(`${size} tools: queries`);
    const natural = latency(devQueries, (q) => index.search(q, { maxResults: K }));
    const keywords = latency(keywordQueries, (q) => index.search(q, { maxResults: K }));
    const memory = heapDelta(() => {
      const fresh = new ToolSearchIndex(pool);
      fresh.search(devQueries[0]); // the score boards are part of a working index
      return fresh;
    });
    let base;
    if (size <= 10_000) {
      progress(`${size} tools: baseline`);
      const baseBuild = buildTimes(() => buildBaseline(pool), 3);
      // One timed pass: plain MiniSearch is slow on long queries.
      base = { build: baseBuild, natural: latency(devQueries, baseBuild.built.search, 1) };
    }
    rows.push({ size, build, natural, keywords, memory, base });
  }

  const gcNote =
    typeof globalThis.gc === 'function'
      ? 'heap growth from building one index (after a first search), measured with `--expose-gc`'
      : 'not measured: run with `node --expose-gc` for the heap growth of one index';
  const lines = [
    '## Tool search',
    '',
    `Machine: ${machine()}.`,
    `Command: \`node${typeof globalThis.gc === 'function' ? ' --expose-gc' : ''} bench/search.mjs\` (after \`npm run build\`).`,
    `Data: Seal-Tools (${tools.length} tools, ${dev.length} dev queries; gold = the distinct \`calling[].api\` of a query).`,
    '',
    `### Ranking quality: recall@${K} on the dev queries`,
    '',
    '| engine | recall@5 |',
    '|---|---|',
    `| agentport (\`src/search\`) | ${recall.ours.toFixed(3)} |`,
    `| agentport without clause fusion | ${recall.noClauses.toFixed(3)} |`,
    `| agentport without prefix matching | ${recall.noPrefix.toFixed(3)} |`,
    `| baseline: plain MiniSearch (default tokenizer, stop words removed, boosts 3/1/0.5) | ${recall.baseline.toFixed(3)} |`,
    '',
    'Target: >= 0.88. Tuned on these dev queries only (the dataset has no other split used here).',
    '',
    '### Speed and memory',
    '',
    'Index build: median of repeated builds (the first build of that size in brackets). Query latency over the 700',
    `natural-language dev queries and over short keyword queries (the words of a gold tool's name), ${TIMED_PASSES}`,
    'timed passes after a warm-up pass. Above 4,076 tools the pool is namespaced copies (`srv1__analyzeEvidence`, ...).',
    '',
    '| tools | build ms | query p50 / p99 ms (natural) | query p50 / p99 ms (keywords) | index heap MB | baseline build ms | baseline p50 / p99 ms (natural) |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const row of rows) {
    const memory = row.memory === undefined ? 'n/a' : row.memory.toFixed(1);
    const base =
      row.base === undefined ? '— | —' : `${fmt(row.base.build.median)} | ${fmt(row.base.natural.p50)} / ${fmt(row.base.natural.p99)}`;
    lines.push(
      `| ${row.size.toLocaleString('en-US')} | ${fmt(row.build.median)} (${fmt(row.build.first)}) | ` +
        `${fmt(row.natural.p50)} / ${fmt(row.natural.p99)} | ${fmt(row.keywords.p50)} / ${fmt(row.keywords.p99)} | ` +
        `${memory} | ${base} |`,
    );
  }
  lines.push(
    '',
    'Targets (design.md): at 10,000 tools, p50 <= 1 ms and build <= 300 ms. Compare as ratios to the baseline',
    'columns, measured in the same run. Memory: ' + gcNote + '.',
    '',
  );
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((error) => {
  process.stderr.write(`bench/search: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
