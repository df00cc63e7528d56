/**
 * Upstream MCP servers as tool sources in runs, end to end: agentport in the
 * test process behind real Streamable HTTP and the real MCP client, a
 * scripted OpenAI-compatible model, and the fixture upstream server as real
 * processes (two over stdio, spawned by agentport from agents/mcp.json, one
 * over Streamable HTTP).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { FakeModelServer, type RecordedRequest } from '../support/fakeModelServer.js';
import { startInProcess, textOf, type InProcessAgentport } from '../support/inProcess.js';
import { tempDir } from '../support/mcpClients.js';
import { closedPort, readEvents, startHttpUpstream, stdioServer, upstreamAgents, waitFor, type HttpUpstream } from '../support/upstream.js';

const work = tempDir('agentport-upstream-work-');
const FX_LOG = path.join(work, 'fx.jsonl');
const SLOW_LOG = path.join(work, 'slow.jsonl');
const WEB_LOG = path.join(work, 'web.jsonl');
const NOTES = path.join(work, 'notes');
const FX_SECRET = 'fx-secret-4711-abc';
const WEB_TOKEN = 'web-token-0815-xyz';

const model = new FakeModelServer();
let web: HttpUpstream;
let agentport: InProcessAgentport;
let client: Client;

beforeAll(async () => {
  mkdirSync(NOTES, { recursive: true });
  await model.start();
  web = await startHttpUpstream({ UPSTREAM_NAME: 'web', UPSTREAM_LOG: WEB_LOG, UPSTREAM_TOKEN: WEB_TOKEN });
  // What agents/mcp.json expands: ${env:...} values come from the environment agentport loads with.
  Object.assign(process.env, { FX_LOG, FX_DIR: NOTES, FX_SECRET, SLOW_LOG, WEB_URL: web.url, WEB_TOKEN });
  const agentsDir = upstreamAgents({
    mcp: {
      mcpServers: {
        fx: stdioServer({
          UPSTREAM_NAME: 'fx',
          UPSTREAM_LOG: '${env:FX_LOG}',
          UPSTREAM_DIR: '${env:FX_DIR}',
          UPSTREAM_PAGE_SIZE: '4',
          UPSTREAM_LIST_CHANGED: '1',
          UPSTREAM_SECRET: '${env:FX_SECRET}',
        }),
        slow: stdioServer({ UPSTREAM_LOG: '${env:SLOW_LOG}' }, { timeoutMs: 500 }),
        web: { type: 'http', url: '${env:WEB_URL}', headers: { Authorization: 'Bearer ${env:WEB_TOKEN}' } },
        down: { type: 'http', url: `http://127.0.0.1:${await closedPort()}/mcp` },
      },
    },
    prompts: {
      finder: `toolDescription: 'Uses the fx tools it finds.', prompt: 'Find the tools you need.', tools: ['mcp:fx']`,
      picker: `toolDescription: 'Some fx tools at once.', prompt: 'Pick.', tools: [{ name: 'mcp:fx', alwaysLoad: ['echo'], exclude: ['crash', 'sleep'] }]`,
      loaded: `toolDescription: 'Every fx tool at once.', prompt: 'Use the tools.', tools: [{ name: 'mcp:fx', alwaysLoad: true }]`,
      pair: `toolDescription: 'A tool of each server.', prompt: 'Use both.', tools: [{ name: 'mcp:fx/reveal_secret', alwaysLoad: true }, { name: 'mcp:web/reveal_secret', alwaysLoad: true }, 'mcp:web/echo']`,
      sleeper: `toolDescription: 'Sleeps upstream.', prompt: 'Sleep.', tools: [{ name: 'mcp:slow/sleep', alwaysLoad: true }]`,
      hopeful: `toolDescription: 'One server is down.', prompt: 'Try.', tools: ['mcp:fx/echo', 'mcp:down']`,
    },
  });
  agentport = await startInProcess({ agentsDir, env: { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'k' } });
  client = await agentport.connect('modern');
});

afterAll(async () => {
  await agentport?.close();
  await agentport?.runtime.shutdown(1000);
  await web?.stop();
  await model.stop();
});

const toolNames = (request: RecordedRequest | undefined) => (request?.body.tools ?? []).map((tool) => tool.function.name);
const toolOf = (request: RecordedRequest | undefined, name: string) =>
  request?.body.tools?.find((tool) => tool.function.name === name)?.function;
const toolMessages = (request: RecordedRequest | undefined) =>
  (request?.body.messages ?? []).filter((m) => m.role === 'tool').map((m) => String(m.content));

/** Runs a prompt with a scripted model; returns the result and the model requests of this call. */
async function run(prompt: string, replies: Parameters<FakeModelServer['reply']>, options: Parameters<Client['callTool']>[1] = {}) {
  const before = model.requests.length;
  model.reply(...replies);
  const result = await client.callTool({ name: prompt, arguments: { message: 'go' } }, options);
  return { result, requests: model.requests.slice(before) };
}

describe('upstream tools in runs', () => {
  it('[TS-5] [TS-7] defers upstream tools: the model searches, gets the schema, calls it, and the upstream server runs it', async () => {
    const { result, requests } = await run('finder', [
      { toolCalls: [{ name: 'tool_search', arguments: { query: '+write note file' } }] },
      { toolCalls: [{ name: 'fx__write_note', arguments: { name: 'hello.txt', text: 'written upstream' } }] },
      { text: 'The note is written.' },
    ]);
    expect(textOf(result)).toBe('The note is written.');
    const [first, second, third] = requests;
    // Deferred by default: names only, plus the one tool whose server asks for alwaysLoad (_meta).
    expect(toolNames(first)).toEqual(['fx__always_ready', 'tool_search']);
    const search = toolOf(first, 'tool_search')!;
    expect(search.description).toContain('fx__write_note');
    expect(search.description).toContain('fx__echo');
    expect(search.description).not.toContain('always_ready');
    // The search returned the schema; the tool is offered from the next step.
    expect(toolMessages(second)[0]).toContain(
      '<function>{"description":"Write a note file into the notes folder.","name":"fx__write_note"',
    );
    // Upstream tools come in their server's order.
    expect(toolNames(second)).toEqual(['fx__write_note', 'fx__always_ready', 'tool_search']);
    expect(toolOf(second, 'fx__write_note')!.parameters).toMatchObject({
      type: 'object',
      properties: { name: { type: 'string' }, text: { type: 'string' } },
    });
    expect(toolMessages(third).at(-1)).toBe('wrote hello.txt');
    expect(readFileSync(path.join(NOTES, 'hello.txt'), 'utf8')).toBe('written upstream');
  });

  it('[UP-2] lists every page of a paginated tools/list once, and keeps the list', () => {
    const lists = readEvents(FX_LOG).filter((e) => e.event === 'list');
    expect(lists.map((e) => e.cursor)).toEqual([null, '4', '8', '12']);
  });

  it('[UP-2] names tools <server>__<tool>, at most 64 characters, stable, with a collision rule', async () => {
    const hash = (tool: string) => createHash('sha256').update(`fx/${tool}`).digest('hex').slice(0, 8);
    const longTool = 'summarize_the_quarterly_financial_statements_for_the_board_of_directors';
    // get.item and get_item both read fx__get_item: the tool whose name needs no change keeps it.
    const dotted = `fx__get_item_${hash('get.item')}`;
    const long = `fx__${longTool}`.slice(0, 55) + `_${hash(longTool)}`;
    const { requests } = await run('loaded', [
      {
        toolCalls: [
          { name: 'fx__get_item', arguments: { id: '1' } },
          { name: dotted, arguments: { id: '2' } },
          { name: long, arguments: {} },
        ],
      },
      { text: 'ok' },
    ]);
    const names = toolNames(requests[0]);
    expect(names).toEqual(expect.arrayContaining(['fx__get_item', dotted, long, 'fx__echo', 'fx__crash']));
    expect(long).toHaveLength(64);
    for (const name of names) expect(name).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    // Each name reaches its own upstream tool.
    expect(toolMessages(requests[1])).toEqual(['underscored 1', 'dotted 2', `${longTool} ran with {}`]);
  });

  it('[TS-5] offers alwaysLoad tools with their schemas at once and leaves excluded tools out', async () => {
    const { requests } = await run('picker', [{ text: 'ok' }]);
    expect(toolNames(requests[0])).toEqual(['fx__echo', 'fx__always_ready', 'tool_search']);
    expect(toolOf(requests[0], 'fx__echo')!.parameters).toMatchObject({
      properties: { text: { type: 'string', description: 'What to echo' } },
    });
    const search = toolOf(requests[0], 'tool_search')!.description!;
    expect(search).toContain('fx__write_note');
    expect(search).not.toContain('fx__crash');
    expect(search).not.toContain('fx__sleep');
  });

  it('[UP-2] [UP-4] uses a tool of each server in one run; upstream secrets never reach the model or the result', async () => {
    const before = readEvents(WEB_LOG).filter((e) => e.event === 'call').length;
    const { result, requests } = await run('pair', [
      {
        toolCalls: [
          { name: 'fx__reveal_secret', arguments: {} },
          { name: 'web__reveal_secret', arguments: {} },
        ],
      },
      { toolCalls: [{ name: 'web__echo', arguments: { text: 'over http' } }] },
      { text: 'both answered' },
    ]);
    expect(textOf(result)).toBe('both answered');
    expect(toolNames(requests[0])).toEqual(['fx__reveal_secret', 'web__reveal_secret', 'tool_search']);
    expect(toolMessages(requests[1])).toEqual(['my credential is [redacted secret]', 'my credential is [redacted secret]']);
    expect(toolMessages(requests[2]).at(-1)).toBe('echo: over http');
    expect(readEvents(WEB_LOG).filter((e) => e.event === 'call').length - before).toBe(2);
    const everything = JSON.stringify([requests.map((r) => r.body), result, agentport.logs]);
    expect(everything).not.toContain(FX_SECRET);
    expect(everything).not.toContain(WEB_TOKEN);
  });

  it('[UP-3] turns upstream error results and protocol errors into tool errors the model reads', async () => {
    const { result, requests } = await run('loaded', [
      {
        toolCalls: [
          { name: 'fx__fail', arguments: {} },
          { name: 'fx__protocol_error', arguments: {} },
        ],
      },
      { text: 'handled' },
    ]);
    expect(textOf(result)).toBe('handled');
    const [failed, refused] = toolMessages(requests[1]);
    expect(failed).toBe('Error: the upstream tool failed on purpose');
    expect(refused).toBe(
      'Error: protocol_error on upstream server fx answered with an error: protocol_error always refuses its arguments (MCP error -32602)',
    );
    expect((result.structuredContent as { tool_calls: unknown[] }).tool_calls).toEqual([
      { name: 'fx__fail', status: 'error' },
      { name: 'fx__protocol_error', status: 'error' },
    ]);
  });

  it("[UP-3] times a call out after the server's timeoutMs and cancels it upstream", async () => {
    const started = Date.now();
    const { result, requests } = await run('sleeper', [
      { toolCalls: [{ name: 'slow__sleep', arguments: { ms: 10_000 } }] },
      { text: 'gave up' },
    ]);
    expect(textOf(result)).toBe('gave up');
    expect(toolMessages(requests[1])).toEqual(['Error: sleep on upstream server slow did not answer within 0.5 s: the call was cancelled']);
    expect(Date.now() - started).toBeLessThan(5_000);
    await waitFor(() => readEvents(SLOW_LOG).some((e) => e.event === 'cancelled'), 5_000, 'the upstream to see the cancellation');
  });

  it('[UP-3] a crash mid-call is a tool error, and the next call restarts the server', async () => {
    const pidsBefore = new Set(
      readEvents(FX_LOG)
        .filter((e) => e.event === 'start')
        .map((e) => e.pid),
    );
    const { result, requests } = await run('loaded', [
      { toolCalls: [{ name: 'fx__crash', arguments: {} }] },
      { toolCalls: [{ name: 'fx__echo', arguments: { text: 'again' } }] },
      { text: 'recovered' },
    ]);
    expect(textOf(result)).toBe('recovered');
    expect(toolMessages(requests[1])[0]).toMatch(
      /^Error: upstream server fx closed the connection during the call of crash.*it is restarted on the next call$/,
    );
    expect(toolMessages(requests[2]).at(-1)).toBe('echo: again');
    const starts = readEvents(FX_LOG).filter((e) => e.event === 'start');
    expect(starts.filter((e) => !pidsBefore.has(e.pid))).toHaveLength(1);
  });

  it("[UP-3] forwards upstream progress into the call's progress notifications", async () => {
    const messages: string[] = [];
    const { result } = await run(
      'loaded',
      [{ toolCalls: [{ name: 'fx__progress_steps', arguments: { steps: 3 } }] }, { text: 'stepped' }],
      {
        onprogress: (progress: { message?: string }) => {
          if (progress.message) messages.push(progress.message);
        },
      },
    );
    expect(textOf(result)).toBe('stepped');
    expect(messages).toEqual(
      expect.arrayContaining(['loaded: fx__progress_steps: upstream step 1 of 3', 'loaded: fx__progress_steps: upstream step 3 of 3']),
    );
  });

  it('[UP-3] cancelling the MCP call cancels the upstream call', async () => {
    const since = Date.now();
    model.reply({ toolCalls: [{ name: 'fx__sleep', arguments: { ms: 30_000 } }] });
    const controller = new AbortController();
    const call = client.callTool({ name: 'loaded', arguments: { message: 'sleep' } }, { signal: controller.signal });
    await waitFor(
      () => readEvents(FX_LOG).some((e) => e.event === 'call' && e.tool === 'sleep' && e.at >= since),
      10_000,
      'the upstream call',
    );
    controller.abort(new Error('the user stopped it'));
    await expect(call).rejects.toThrow();
    await waitFor(
      () => readEvents(FX_LOG).some((e) => e.event === 'cancelled' && e.at >= since),
      5_000,
      'the upstream to see the cancellation',
    );
  });

  it('[UP-3] a server that cannot be reached leaves its tools out; the run goes on and tool_search says so', async () => {
    const { result, requests } = await run('hopeful', [
      {
        toolCalls: [
          { name: 'fx__echo', arguments: { text: 'still here' } },
          { name: 'down__anything', arguments: {} },
        ],
      },
      { text: 'partly done' },
    ]);
    expect(textOf(result)).toBe('partly done');
    expect(toolNames(requests[0])).toEqual(['tool_search']);
    expect(toolOf(requests[0], 'tool_search')!.description).toMatch(
      /Deferred tools: fx__echo\. Not reachable now \(their tools are missing\): upstream server down\.$/,
    );
    const [echoed, missing] = toolMessages(requests[1]);
    expect(echoed).toBe('echo: still here');
    expect(missing).toMatch(/^Error: There is no tool named "down__anything"/);
  });

  it('[UP-2] follows notifications/tools/list_changed: a tool the server adds is offered from the next step', async () => {
    const { result, requests } = await run('loaded', [
      { toolCalls: [{ name: 'fx__add_tool', arguments: {} }] },
      { toolCalls: [{ name: 'fx__added_later', arguments: {} }] },
      { text: 'used the new tool' },
    ]);
    expect(textOf(result)).toBe('used the new tool');
    expect(toolNames(requests[0])).not.toContain('fx__added_later');
    expect(toolNames(requests[1])).toContain('fx__added_later');
    expect(toolMessages(requests[2]).at(-1)).toBe('the new tool ran');
  });
});
