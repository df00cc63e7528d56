/**
 * Upstream tools from real MCP servers of the npm registry (dev
 * dependencies, run as processes over stdio): the filesystem server on a
 * temporary folder and the "everything" reference server. A scripted model
 * finds a deferred filesystem tool, calls it, and the file is really written;
 * one run uses a tool of each server.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { FakeModelServer } from '../support/fakeModelServer.js';
import { startInProcess, textOf, type InProcessAgentport } from '../support/inProcess.js';
import { tempDir } from '../support/mcpClients.js';
import { REPO_ROOT } from '../support/paths.js';
import { upstreamAgents } from '../support/upstream.js';

const FILESYSTEM = path.join(REPO_ROOT, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const EVERYTHING = path.join(REPO_ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const folder = tempDir('agentport-fs-upstream-');

const model = new FakeModelServer();
let agentport: InProcessAgentport;
let client: Client;

beforeAll(async () => {
  mkdirSync(folder, { recursive: true });
  writeFileSync(path.join(folder, 'existing.md'), '# kept\n');
  await model.start();
  const agentsDir = upstreamAgents({
    mcp: {
      mcpServers: {
        fs: { command: process.execPath, args: [FILESYSTEM, folder] },
        everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
      },
    },
    prompts: {
      writer: `toolDescription: 'Writes files it finds tools for.', prompt: 'Write files.', tools: ['mcp:fs']`,
      both: `toolDescription: 'Uses both servers.', prompt: 'Use both.', tools: [{ name: 'mcp:everything/get-sum', alwaysLoad: true }, { name: 'mcp:fs/list_directory', alwaysLoad: true }]`,
    },
  });
  agentport = await startInProcess({ agentsDir, env: { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'k' } });
  client = await agentport.connect('legacy');
}, 60_000);

afterAll(async () => {
  await agentport?.close();
  await agentport?.runtime.shutdown(1000);
  await model.stop();
});

describe('[TS-5] upstream servers from the npm registry', () => {
  it("defers the filesystem server's tools; the model finds write_file, calls it, and the file is on disk", async () => {
    const target = path.join(folder, 'hello.txt');
    const before = model.requests.length;
    model.reply(
      { toolCalls: [{ name: 'tool_search', arguments: { query: 'select:fs__write_file' } }] },
      { toolCalls: [{ name: 'fs__write_file', arguments: { path: target, content: 'written by the filesystem server' } }] },
      { text: 'Done.' },
    );
    const result = await client.callTool({ name: 'writer', arguments: { message: 'write hello.txt' } });
    expect(textOf(result)).toBe('Done.');
    expect(readFileSync(target, 'utf8')).toBe('written by the filesystem server');
    const [first, second] = model.requests.slice(before);
    // Names only at first (deferred), the schema after the search.
    expect(first!.body.tools!.map((t) => t.function.name)).toEqual(['tool_search']);
    expect(first!.body.tools![0]!.function.description).toContain('fs__write_file');
    expect(second!.body.tools!.map((t) => t.function.name)).toContain('fs__write_file');
  }, 60_000);

  it('uses a tool of each server in one run', async () => {
    const before = model.requests.length;
    model.reply(
      {
        toolCalls: [
          { name: 'everything__get-sum', arguments: { a: 20, b: 22 } },
          { name: 'fs__list_directory', arguments: { path: folder } },
        ],
      },
      { text: 'Both answered.' },
    );
    const result = await client.callTool({ name: 'both', arguments: { message: 'go' } });
    expect(textOf(result)).toBe('Both answered.');
    const results = model.requests
      .slice(before)[1]!
      .body.messages.filter((m) => m.role === 'tool')
      .map((m) => String(m.content));
    expect(results[0]).toContain('42');
    expect(results[1]).toContain('existing.md');
  }, 60_000);
});
