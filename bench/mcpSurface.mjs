// The MCP surface at 10,000 registered tools: tools/list through the SDK
// client, agentport against a bare SDK McpServer with the same tools, and a
// tool_search call (the first one builds the index).
import path from 'node:path';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { namespaced, readJsonl, toMcpTool } from './sealTools.mjs';
import { ROOT, fmt, median } from './support.mjs';

const { createAgentportServer } = await import(path.join(ROOT, 'dist', 'server', 'createServer.js'));

const COUNT = Number(process.env.BENCH_TOOLS ?? 10_000);
const RUNS = 10;

/** zod object schemas for the tools, as a definitions folder would declare them. */
function zodSchemas(tools) {
  return tools.map((tool) => z.fromJSONSchema({ ...tool.inputSchema, additionalProperties: false }));
}

/** A registry of COUNT exposed prompts, built in memory (loading 10,000 files is another benchmark). */
function registryOf(tools, schemas) {
  const prompts = new Map();
  tools.forEach((tool, i) => {
    prompts.set(tool.name, {
      name: tool.name,
      file: 'bench',
      systemText: '',
      definition: {
        name: tool.name,
        toolDescription: tool.description,
        model: 'm',
        prompt: '',
        exposeAsTool: true,
        requiredSchema: schemas[i],
      },
    });
  });
  const models = new Map([['m', { name: 'm', file: 'bench', definition: { name: 'm', provider: 'openai', model: 'm' } }]]);
  return { agentsDir: ROOT, models, prompts, tools: new Map(), hooks: new Map(), agents: new Map(), warnings: [] };
}

async function connect(server) {
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(clientTransport);
  return client;
}

async function listTimes(client) {
  const times = [];
  let count = 0;
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    count = (await client.listTools()).tools.length;
    times.push(performance.now() - start);
  }
  return { ms: median(times), count };
}

export async function run() {
  // A few Seal-Tools names contain spaces, which MCP tool names may not.
  const tools = namespaced(readJsonl('tool.jsonl').map(toMcpTool), COUNT).map((tool) => ({
    ...tool,
    name: tool.name.replaceAll(' ', '_'),
  }));
  const schemas = zodSchemas(tools);

  const bare = new McpServer({ name: 'bare', version: '1' });
  tools.forEach((tool, i) =>
    bare.registerTool(tool.name, { description: tool.description, inputSchema: schemas[i] }, async () => ({ content: [] })),
  );
  const bareList = await listTimes(await connect(bare));

  const started = performance.now();
  const registry = registryOf(tools, schemas);
  const off = createAgentportServer(
    registry,
    async () => {
      throw new Error('not called');
    },
    { toolSearch: { mode: 'off' } },
  );
  const catalogMs = performance.now() - started;
  const offList = await listTimes(await connect(await off.factory({ era: 'legacy' })));

  const on = createAgentportServer(
    registry,
    async () => {
      throw new Error('not called');
    },
    { toolSearch: { mode: 'on' } },
  );
  const onClient = await connect(await on.factory({ era: 'legacy' }));
  const onList = await listTimes(onClient);
  const firstStart = performance.now();
  await onClient.callTool({ name: 'tool_search', arguments: { query: 'analyze chemical evidence from a crime scene' } });
  const firstSearch = performance.now() - firstStart;
  // A host that searches a moment after start-up finds the index already built in the background.
  const warm = createAgentportServer(
    registry,
    async () => {
      throw new Error('not called');
    },
    { toolSearch: { mode: 'on' } },
  );
  const warmClient = await connect(await warm.factory({ era: 'legacy' }));
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  const warmStart = performance.now();
  await warmClient.callTool({ name: 'tool_search', arguments: { query: 'analyze chemical evidence from a crime scene' } });
  const warmSearch = performance.now() - warmStart;
  const searches = [];
  for (const query of [
    'weather forecast for a city',
    'select:srv2__analyzeEvidence',
    '+stock price',
    'translate text to french',
    'book a flight ticket',
  ]) {
    const start = performance.now();
    await onClient.callTool({ name: 'tool_search', arguments: { query } });
    searches.push(performance.now() - start);
  }

  return [
    `## MCP surface with ${COUNT.toLocaleString('en')} tools`,
    '',
    `tools/list through the SDK client over an in-memory transport, median of ${RUNS}; Seal-Tools tools namespaced to ${COUNT.toLocaleString('en')}.`,
    '',
    '| server | tools listed | tools/list median ms | ratio to bare SDK |',
    '|---|---|---|---|',
    `| bare SDK \`McpServer\`, zod schemas | ${bareList.count} | ${fmt(bareList.ms)} | 1.00 |`,
    `| agentport, tool search off | ${offList.count} | ${fmt(offList.ms)} | ${(offList.ms / bareList.ms).toFixed(2)} (target <= 0.4) |`,
    `| agentport, tool search on | ${onList.count} | ${fmt(onList.ms)} | ${(onList.ms / bareList.ms).toFixed(2)} |`,
    '',
    `Building agentport's tool list (every schema converted once, at start-up): ${fmt(catalogMs)} ms.`,
    `tool_search over MCP: a first call right at start-up ${fmt(firstSearch)} ms (waits for the index), a first call 3 s after`,
    `start-up ${fmt(warmSearch)} ms (index built in the background), then median ${fmt(median(searches))} ms.`,
    '',
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await run());
