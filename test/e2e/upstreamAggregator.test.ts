/**
 * Aggregator mode: `agentport serve --expose-upstream` as a real process on
 * stdio, reached by the real MCP client, re-exposing a stdio upstream and a
 * Streamable HTTP upstream with 500 generated tools behind tool_search /
 * call_tool.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { textOf } from '../support/inProcess.js';
import { connectStdio, tempDir, type Era } from '../support/mcpClients.js';
import { readEvents, startHttpUpstream, stdioServer, upstreamAgents, type HttpUpstream } from '../support/upstream.js';

const work = tempDir('agentport-aggregator-');
const FX_LOG = path.join(work, 'fx.jsonl');
const WEB_LOG = path.join(work, 'web.jsonl');
const WEB_TOKEN = 'aggregator-token-9c1f';
const FX_SECRET = 'aggregator-fx-secret-77';

let web: HttpUpstream;
let agentsDir: string;
const clients: Array<{ client: Client; stderr: () => string }> = [];

async function connect(era: Era) {
  const connected = await connectStdio(era, {
    agentsDir,
    args: ['--expose-upstream'],
    env: { WEB_URL: web.url, WEB_TOKEN, FX_SECRET, OPENAI_API_KEY: 'unused' },
  });
  clients.push(connected);
  return connected;
}

beforeAll(async () => {
  web = await startHttpUpstream({
    UPSTREAM_NAME: 'web',
    UPSTREAM_LOG: WEB_LOG,
    UPSTREAM_TOKEN: WEB_TOKEN,
    UPSTREAM_GENERATED: '500',
    UPSTREAM_PAGE_SIZE: '100',
  });
  agentsDir = upstreamAgents({
    mcp: {
      mcpServers: {
        fx: stdioServer({ UPSTREAM_NAME: 'fx', UPSTREAM_LOG: FX_LOG, UPSTREAM_SECRET: '${env:FX_SECRET}', UPSTREAM_LIST_CHANGED: '1' }),
        web: { type: 'http', url: '${env:WEB_URL}', headers: { Authorization: 'Bearer ${env:WEB_TOKEN}' } },
      },
    },
    prompts: { helper: `toolDescription: 'A local agent tool.', prompt: 'Help.'` },
  });
});

afterAll(async () => {
  await Promise.all(clients.map(({ client }) => client.close().catch(() => {})));
  await web?.stop();
});

describe('serve --expose-upstream', () => {
  let client: Client;
  let stderr: () => string;
  beforeAll(async () => {
    ({ client, stderr } = await connect('modern'));
  });

  it('[UP-4] [TS-6] keeps tools/list small: the upstream tools are deferred behind tool_search and call_tool', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['tool_search', 'call_tool', 'run_wait', 'run_status', 'run_cancel']);
    const search = tools.find((tool) => tool.name === 'tool_search')!;
    expect(search.description).toContain('helper');
    expect(search.description).toContain('Also searches the tools of the upstream MCP servers fx, web, named <server>__<tool>.');
    expect(client.getInstructions()).toContain('upstream MCP servers fx, web');
    // Nothing was connected to answer that.
    expect(readEvents(WEB_LOG).filter((e) => e.event === 'list')).toEqual([]);
  });

  it('[UP-4] [TS-3] tool_search finds upstream tools among 500 (every page listed) and local ones together', async () => {
    const result = await client.callTool({ name: 'tool_search', arguments: { query: '+invoice export', max_results: 3 } });
    const found = (result.structuredContent as { tools: string[] }).tools;
    expect(found).toHaveLength(3);
    for (const name of found) expect(name).toMatch(/^web__export_invoice_\d+$/);
    expect(textOf(result)).toContain('"parameters":{"type":"object","properties":{"invoice_id"');
    expect(
      readEvents(WEB_LOG)
        .filter((e) => e.event === 'list')
        .map((e) => e.cursor),
    ).toEqual([null, '100', '200', '300', '400', '500']);
    const local = await client.callTool({ name: 'tool_search', arguments: { query: 'select:helper,fx__echo' } });
    expect((local.structuredContent as { tools: string[] }).tools).toEqual(['helper', 'fx__echo']);
  });

  it('[UP-4] call_tool and a direct tools/call both run upstream tools; tools/list does not change', async () => {
    const before = await client.listTools();
    const viaCallTool = await client.callTool({
      name: 'call_tool',
      arguments: { name: 'web__echo', arguments: { text: 'through call_tool' } },
    });
    expect(textOf(viaCallTool)).toBe('echo: through call_tool');
    expect(viaCallTool.isError).toBeFalsy();
    const direct = await client.callTool({ name: 'fx__echo', arguments: { text: 'directly' } });
    expect(textOf(direct)).toBe('echo: directly');
    const generated = await client.callTool({
      name: 'call_tool',
      arguments: { name: 'web__export_invoice_50', arguments: { invoice_id: 'A-1' } },
    });
    expect(textOf(generated)).toBe('export_invoice_50 ran with {"invoice_id":"A-1"}');
    expect(await client.listTools()).toEqual(before);
  });

  it('[UP-4] never shows upstream secrets (headers, env) in results or logs', async () => {
    const fromHttp = await client.callTool({ name: 'call_tool', arguments: { name: 'web__reveal_secret' } });
    const fromStdio = await client.callTool({ name: 'fx__reveal_secret', arguments: {} });
    expect(textOf(fromHttp)).toBe('my credential is [redacted secret]');
    expect(textOf(fromStdio)).toBe('my credential is [redacted secret]');
    const search = await client.callTool({ name: 'tool_search', arguments: { query: 'select:web__reveal_secret' } });
    for (const text of [textOf(search), stderr(), JSON.stringify(await client.listTools())]) {
      expect(text).not.toContain(WEB_TOKEN);
      expect(text).not.toContain(FX_SECRET);
    }
  });

  it('[UP-3] passes upstream error results through and turns failures into error results', async () => {
    const failed = await client.callTool({ name: 'fx__fail', arguments: {} });
    expect(failed.isError).toBe(true);
    expect(textOf(failed)).toBe('the upstream tool failed on purpose');
    const refused = await client.callTool({ name: 'fx__protocol_error', arguments: {} });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({
      error: { code: 'UPSTREAM_FAILED', data: { server: 'fx', tool: 'protocol_error', reason: 'protocol' } },
    });
    await expect(client.callTool({ name: 'fx__no_such_tool', arguments: {} })).rejects.toThrow(/Unknown tool: fx__no_such_tool/);
  });

  it('[UP-3] forwards upstream progress to the host', async () => {
    const messages: string[] = [];
    const result = await client.callTool(
      { name: 'fx__progress_steps', arguments: { steps: 2 } },
      { onprogress: (p: { message?: string }) => p.message && messages.push(p.message) },
    );
    expect(textOf(result)).toBe('finished 2 steps');
    expect(messages).toEqual(['upstream step 1 of 2', 'upstream step 2 of 2']);
  });

  it('[UP-3] forwards progress from a server over HTTP, sent as an event stream in its answer', async () => {
    const messages: string[] = [];
    const result = await client.callTool(
      { name: 'web__progress_steps', arguments: { steps: 3 } },
      { onprogress: (p: { message?: string }) => p.message && messages.push(p.message) },
    );
    expect(textOf(result)).toBe('finished 3 steps');
    expect(messages).toEqual(['upstream step 1 of 3', 'upstream step 2 of 3', 'upstream step 3 of 3']);
  });

  it('[UP-2] [UP-4] the search index follows an upstream list change', async () => {
    const before = await client.callTool({ name: 'tool_search', arguments: { query: 'select:fx__added_later' } });
    expect((before.structuredContent as { tools: string[] }).tools).toEqual([]);
    await client.callTool({ name: 'fx__add_tool', arguments: {} });
    const after = await client.callTool({ name: 'tool_search', arguments: { query: 'select:fx__added_later' } });
    expect((after.structuredContent as { tools: string[] }).tools).toEqual(['fx__added_later']);
    expect(textOf(await client.callTool({ name: 'fx__added_later', arguments: {} }))).toBe('the new tool ran');
  });

  it('[UP-3] an upstream crash is an error result and the next call restarts the server', async () => {
    const crashed = await client.callTool({ name: 'fx__crash', arguments: {} });
    expect(crashed.isError).toBe(true);
    expect(crashed.structuredContent).toMatchObject({ error: { code: 'UPSTREAM_FAILED', data: { reason: 'closed' } } });
    const again = await client.callTool({ name: 'fx__echo', arguments: { text: 'back' } });
    expect(textOf(again)).toBe('echo: back');
    expect(
      new Set(
        readEvents(FX_LOG)
          .filter((e) => e.event === 'start')
          .map((e) => e.pid),
      ).size,
    ).toBeGreaterThanOrEqual(2);
  });

  it('[MC-1] [UP-4] serves a 2025-11-25 client the same way', async () => {
    const { client: legacy } = await connect('legacy');
    const found = await legacy.callTool({ name: 'tool_search', arguments: { query: 'select:web__echo' } });
    expect((found.structuredContent as { tools: string[] }).tools).toEqual(['web__echo']);
    const result = await legacy.callTool({ name: 'call_tool', arguments: { name: 'web__echo', arguments: { text: 'legacy' } } });
    expect(textOf(result)).toBe('echo: legacy');
  });
});
