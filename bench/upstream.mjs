// Upstream MCP servers: the fixture upstream server over Streamable HTTP with
// 500 generated tools (5 pages), re-exposed by agentport in aggregator mode
// (`serve --expose-upstream`) and reached through the SDK client over an
// in-memory transport. Measures the first tool_search after start (connect +
// list every page + index), steady-state searches, and an upstream tools/call
// through agentport against the same call made directly with the SDK client.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { Client, InMemoryTransport, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { ROOT, fmt, median, percentile } from './support.mjs';

const { createAgentportServer } = await import(path.join(ROOT, 'dist', 'server', 'createServer.js'));
const { parseUpstreamConfig } = await import(path.join(ROOT, 'dist', 'upstream', 'config.js'));
const { exposeUpstream } = await import(path.join(ROOT, 'dist', 'server', 'upstreamSurface.js'));

const TOOLS = Number(process.env.BENCH_UPSTREAM_TOOLS ?? 500);
const CALLS = Number(process.env.BENCH_RUNS ?? 300);
const QUERIES = [
  '+invoice export',
  'archive a shipment record',
  'select:web__notify_weather_92',
  'approve payroll',
  'translation record search',
  'forecast delete',
];

async function startUpstream() {
  const child = spawn(process.execPath, [path.join(ROOT, 'test', 'fixtures', 'upstream', 'http.mjs')], {
    env: { ...process.env, UPSTREAM_NAME: 'web', UPSTREAM_GENERATED: String(TOOLS), UPSTREAM_PAGE_SIZE: '100' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`upstream exited with ${code}`)));
    child.stdout.on('data', (chunk) => {
      const match = /listening (\S+)/.exec(String(chunk));
      if (match) resolve(match[1]);
    });
  });
  return { url, stop: () => child.kill('SIGTERM') };
}

async function timed(n, fn) {
  const samples = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    await fn(i);
    samples.push(performance.now() - start);
  }
  return samples;
}

export async function run() {
  const upstream = await startUpstream();
  const issues = [];
  const config = parseUpstreamConfig(JSON.stringify({ mcpServers: { web: { type: 'http', url: upstream.url } } }), {
    file: 'mcp.json',
    agentsDir: ROOT,
    env: {},
    issues,
  });
  const models = new Map([['m', { name: 'm', file: 'bench', definition: { name: 'm', provider: 'openai', model: 'm' } }]]);
  const registry = {
    agentsDir: ROOT,
    models,
    prompts: new Map(),
    tools: new Map(),
    hooks: new Map(),
    agents: new Map(),
    warnings: [],
    upstream: config,
  };

  const started = performance.now();
  const server = createAgentportServer(
    registry,
    async () => {
      throw new Error('not called');
    },
    { exposeUpstream, callBudgetMs: 0 },
  );
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await (await server.factory({ era: 'legacy' })).connect(serverSide);
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(clientSide);
  const first = await client.callTool({ name: 'tool_search', arguments: { query: 'export an invoice' } });
  const firstSearch = performance.now() - started;
  if (first.isError) throw new Error(JSON.stringify(first.content));
  const searches = await timed(60, (i) => client.callTool({ name: 'tool_search', arguments: { query: QUERIES[i % QUERIES.length] } }));

  // The same upstream call, directly and through agentport (warmed up both ways first).
  const direct = new Client({ name: 'bench-direct', version: '1' }, { versionNegotiation: { mode: 'auto' } });
  await direct.connect(new StreamableHTTPClientTransport(new URL(upstream.url)));
  const args = { text: 'hello' };
  for (let i = 0; i < 30; i++) {
    await direct.callTool({ name: 'echo', arguments: args });
    await client.callTool({ name: 'web__echo', arguments: args });
  }
  const directTimes = [];
  const viaTimes = [];
  // Interleaved, so both see the same machine load.
  for (let i = 0; i < CALLS; i++) {
    let start = performance.now();
    await direct.callTool({ name: 'echo', arguments: args });
    directTimes.push(performance.now() - start);
    start = performance.now();
    await client.callTool({ name: 'web__echo', arguments: args });
    viaTimes.push(performance.now() - start);
  }
  await direct.close();
  await client.close();
  await server.shutdown(0);
  upstream.stop();

  const d = median(directTimes);
  const v = median(viaTimes);
  return [
    `## Upstream MCP servers (${TOOLS} tools over Streamable HTTP)`,
    '',
    `The fixture upstream server (test/fixtures/upstream/http.mjs) with ${TOOLS} generated tools listed 100 a page, re-exposed in aggregator mode`,
    '(`--expose-upstream`) and called through the SDK client over an in-memory transport.',
    '',
    '| measure | ms |',
    '|---|---|',
    `| first tool_search after start (connect, protocol negotiation, list ${Math.ceil((TOOLS + 14) / 100)} pages, index) | ${fmt(firstSearch)} |`,
    `| tool_search after that, p50 / p95 (${searches.length} queries) | ${fmt(median(searches))} / ${fmt(percentile(searches, 95))} |`,
    `| upstream tools/call made directly with the SDK client, median of ${CALLS} | ${fmt(d)} |`,
    `| the same call through agentport (\`web__echo\`), median of ${CALLS} | ${fmt(v)} |`,
    '',
    `Ratio through agentport / direct: ${(v / d).toFixed(2)} (aim <= 1.1 plus under 1 ms); agentport's own part: ${fmt(v - d)} ms a call`,
    '(the in-memory hop to agentport, routing, redaction and the result copy).',
    '',
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await run());
