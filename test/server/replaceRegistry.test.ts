/**
 * Replacing the registry a server serves (serve --watch) in process: the
 * surface follows the new registry, upstream connections are kept while
 * agents/mcp.json stays the same and closed once it changed, and a registry
 * that cannot be served leaves the previous one in place.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { loadRegistryOrThrow } from '../../src/registry/load.js';
import type { Registry } from '../../src/registry/types.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { createAgentportServer, type AgentportServer } from '../../src/server/createServer.js';
import { exposeUpstream } from '../../src/server/upstreamSurface.js';
import { MemoryStore } from '../../src/store/memoryStore.js';
import { upstreamHubFor } from '../../src/upstream/hub.js';
import { tempDir } from '../support/mcpClients.js';
import { STDIO_UPSTREAM } from '../support/upstream.js';
import { writeFiles } from '../support/folders.js';

const MODEL = `import { defineModel } from 'agentport';\nexport default defineModel({ name: 'm', provider: 'openai', model: 'x' });\n`;
const prompt = (name: string, description: string) =>
  `import { definePrompt } from 'agentport';\nexport default definePrompt({ name: '${name}', toolDescription: '${description}', prompt: 'x', model: 'm', exposeAsTool: true, tools: ['mcp:fx'] });\n`;

const mcpJson = (timeoutMs: number) =>
  JSON.stringify({ mcpServers: { fx: { command: process.execPath, args: [STDIO_UPSTREAM], timeoutMs } } });

const servers: AgentportServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.shutdown(0)));
});

async function serve(dir: string): Promise<{ server: AgentportServer; load: () => Promise<Registry> }> {
  const load = () => loadRegistryOrThrow({ agentsDir: dir, fresh: true });
  const registry = await load();
  const server = createAgentportServer(registry, async () => createRuntime({ registry, store: new MemoryStore(), log: () => {} }), {
    exposeUpstream,
    listChanged: true,
  });
  servers.push(server);
  return { server, load };
}

describe('replacing the registry', () => {
  it('keeps the upstream connections while mcp.json is unchanged, and closes them once it changed', async () => {
    const dir = tempDir('agentport-replace-');
    writeFiles(dir, { 'models/m.ts': MODEL, 'prompts/a.ts': prompt('a', 'First.'), 'mcp.json': mcpJson(30_000) });
    const { server, load } = await serve(dir);
    const runtime = await server.runtime();
    const first = upstreamHubFor(server.registry)!;
    await first.tools('fx');
    expect(first.status()[0]?.state).toBe('ready');

    writeFiles(dir, { 'prompts/a.ts': prompt('a', 'Changed.') });
    const change = server.replaceRegistry(await load());
    expect(change).toMatchObject({ added: [], removed: [], changed: ['a'] });
    expect(server.tools.map((tool) => tool.description)).toEqual(['Changed.']);
    expect(runtime.registry).toBe(server.registry);
    // The same servers: the same hub, still connected.
    expect(upstreamHubFor(server.registry)).toBe(first);
    expect(first.status()[0]?.state).toBe('ready');

    writeFiles(dir, { 'mcp.json': mcpJson(20_000) });
    server.replaceRegistry(await load());
    const second = upstreamHubFor(server.registry)!;
    expect(second).not.toBe(first);
    // No run was going on the previous registry: its connections close at once.
    await expect.poll(() => first.status()[0]?.state).toBe('closed');
    expect(second.status()[0]?.state).toBe('not connected');
  });

  it('keeps serving the previous registry when the new one cannot be served', async () => {
    const dir = tempDir('agentport-replace-');
    writeFiles(dir, { 'models/m.ts': MODEL, 'prompts/a.ts': prompt('a', 'First.'), 'mcp.json': mcpJson(30_000) });
    const { server, load } = await serve(dir);
    const before = server.registry;
    // Tool search (on in aggregator mode) needs the name tool_search for itself.
    writeFiles(dir, { 'prompts/b.ts': prompt('tool_search', 'Clashes.') });
    const next = await load();
    expect(() => server.replaceRegistry(next)).toThrow(/"tool_search" is the name of an exposed tool/);
    expect(server.registry).toBe(before);
    expect(server.tools.map((tool) => tool.name)).toEqual(['a']);
  });
});
