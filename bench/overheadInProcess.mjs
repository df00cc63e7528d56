// agentport's own CPU per call, in one process: the real MCP client over the SDK's in-memory transport calls the
// one-step prompt of bench/fixtures/loop on agentport's connection server and the same tool on a bare SDK v2
// McpServer (bench/bare-model-server.mjs's tool), and agentport's runtime alone is set against a direct `openai`
// call. The model's HTTP answer comes from a `fetch` that answers at once, so no socket, pipe or other process
// is in the figures: what is left is the code each call runs. Steadier than the benchmarks over stdio and HTTP
// (a few microseconds between runs) and quick, for comparing two builds:
//   node bench/overheadInProcess.mjs                  this checkout (built)
//   ROOT=/path/to/other/checkout node bench/overheadInProcess.mjs
// Settings: BENCH_CALLS (20000 measured calls of each kind), BENCH_STORE (memory; file).
// Not part of `npm run bench`: its figures leave out what the others measure (transport, sockets, the kernel).
import path from 'node:path';
import OpenAI from 'openai';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { ROOT as HERE, machine, removeDir, tempDir } from './support.mjs';

const ROOT = path.resolve(process.env.ROOT ?? HERE);
const CALLS = Number(process.env.BENCH_CALLS ?? 20_000);
const STORE = process.env.BENCH_STORE ?? 'memory';
const dist = (...parts) => import(path.join(ROOT, 'dist', ...parts));

const completion = JSON.stringify({
  id: 'bench',
  object: 'chat.completion',
  created: 1,
  model: 'bench-model',
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
});
globalThis.fetch = async () => new Response(completion, { status: 200, headers: { 'content-type': 'application/json' } });
// Through fetch, so the answer above is what agentport's provider gets too (its own transport would open a socket).
const env = { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_API_KEY: 'bench', AGENTPORT_MODEL_TRANSPORT: 'fetch' };
const openai = new OpenAI({ apiKey: env.OPENAI_API_KEY, baseURL: env.OPENAI_BASE_URL, maxRetries: 0 });
const request = (message) => ({
  model: 'bench-model',
  messages: [
    { role: 'system', content: 'Answer.' },
    { role: 'user', content: message },
  ],
});

function bareServer() {
  const server = new McpServer({ name: 'bare', version: '1.0.0' });
  server.registerTool('plain', { description: 'One model call.', inputSchema: z.object({ message: z.string() }) }, async ({ message }) => {
    const answer = await openai.chat.completions.create(request(message));
    return { content: [{ type: 'text', text: answer.choices[0]?.message.content ?? '' }] };
  });
  return server;
}

async function clientOf(server) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(clientSide);
  // As a host does: the tool's output schema is known, so its results are checked against it.
  await client.listTools();
  return client;
}

const [{ loadRegistryOrThrow }, { createRuntime }, { createAgentportServer }] = await Promise.all([
  dist('registry', 'load.js'),
  dist('runtime', 'runtime.js'),
  dist('server', 'createServer.js'),
]);
const dataDir = STORE === 'file' ? tempDir('agentport-overhead-') : undefined;
const store =
  STORE === 'file'
    ? new (await dist('store', 'fileStore.js')).FileStore({ dir: dataDir })
    : new (await dist('store', 'memoryStore.js')).MemoryStore();
const registry = await loadRegistryOrThrow({ agentsDir: path.join(HERE, 'bench', 'fixtures', 'loop') });
const runtime = createRuntime({ registry, store, env, log: () => {} });
const agentport = createAgentportServer(registry, runtime, {});
const clients = { bare: await clientOf(bareServer()), agentport: await clientOf(await agentport.connectionFactory({ era: 'legacy' })) };

const kinds = {
  'bare SDK server, tools/call': () => clients.bare.callTool({ name: 'plain', arguments: { message: 'hi' } }),
  'agentport, tools/call': () => clients.agentport.callTool({ name: 'plain', arguments: { message: 'hi' } }),
  'openai call alone': () => openai.chat.completions.create(request('hi')),
  'agentport runtime alone': () =>
    runtime.runPrompt({ target: 'plain', args: { message: 'hi' }, controller: new AbortController(), onProgress() {}, onThread() {} }),
};

/** CPU microseconds per call of `fn` over `n` calls, one after another. */
async function cpuPerCall(fn, n) {
  const before = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const result = await fn();
    if (result?.isError) throw new Error(JSON.stringify(result.content));
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / n;
}

// Warm: V8 compiles the hot paths over the first few thousand calls.
for (let round = 0; round < 3; round++) for (const fn of Object.values(kinds)) await cpuPerCall(fn, 3000);
const ROUNDS = 5;
const samples = Object.fromEntries(Object.keys(kinds).map((name) => [name, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, fn] of Object.entries(kinds)) samples[name].push(await cpuPerCall(fn, Math.ceil(CALLS / ROUNDS)));
}
const mid = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const us = Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, mid(values)]));
await runtime.shutdown(0);
if (dataDir) removeDir(dataDir);

console.log(`## Per-call CPU in one process (${path.relative(HERE, ROOT) || 'this checkout'}, ${STORE} store)

Command: \`node bench/overheadInProcess.mjs\`, BENCH_CALLS=${CALLS}. Machine: ${machine()}.
Medians of ${ROUNDS} rounds, the kinds taking turns; the model's answer comes from an in-process \`fetch\`.

| call | CPU us per call | difference |
|---|---|---|
| bare SDK server, tools/call | ${us['bare SDK server, tools/call'].toFixed(1)} |  |
| agentport, tools/call | ${us['agentport, tools/call'].toFixed(1)} | +${(us['agentport, tools/call'] - us['bare SDK server, tools/call']).toFixed(1)} |
| openai call alone | ${us['openai call alone'].toFixed(1)} |  |
| agentport runtime alone | ${us['agentport runtime alone'].toFixed(1)} | +${(us['agentport runtime alone'] - us['openai call alone']).toFixed(1)} |`);
process.exit(0);
