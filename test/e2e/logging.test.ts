/**
 * MCP logging: run events as `notifications/message` from the logger
 * `agentport`, at the level the client chose (`logging/setLevel` on the
 * 2025-11-25 wire, `_meta` per request on the 2026-07-28 wire), redacted,
 * through the real MCP client over stdio and Streamable HTTP; then the
 * official conformance suite's logging scenarios.
 */
import { LOG_LEVEL_META_KEY, type Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { itPassesConformance } from '../support/conformanceScenario.js';
import { systemText, userText, FakeModelServer, type RecordedRequest, type ScriptedReply } from '../support/fakeModelServer.js';
import { connectHttp, connectStdio, startHttpServer, type Era, type HttpServerProcess } from '../support/mcpClients.js';
import { FIXTURES } from '../support/paths.js';

const AGENTS = `${FIXTURES}/agents/mcp-surface`;
const SHOP_KEY = 'bo-key-7f3a9c1e55';

/** The model of test/fixtures/agents/mcp-surface, by rule (the conformance suite calls as often as it likes). */
function playSurface(body: RecordedRequest['body']): ScriptedReply {
  if (body.model === 'broken-model') return { status: 400, error: 'this model refuses every request' };
  const system = systemText(body);
  const last = body.messages.at(-1);
  const asked = userText(body);
  if (system.startsWith('You write short greetings') || system.startsWith('Log while working.')) {
    if (last?.role === 'tool') return { text: 'Welcome back!' };
    if (asked.includes('Flaky')) return { toolCalls: [{ name: 'flaky_lookup', arguments: {} }] };
    return { toolCalls: [{ name: 'lookup_customer', arguments: { name: 'Ada' } }] };
  }
  return { status: 500, error: `no rule for the system prompt ${JSON.stringify(system.slice(0, 40))}` };
}

interface LogMessage {
  level: string;
  logger?: string;
  data: { tool: string; thread_id?: string; message: string; code?: string };
}

const cases: Array<['stdio' | 'http', Era]> = [
  ['stdio', 'legacy'],
  ['stdio', 'modern'],
  ['http', 'legacy'],
  ['http', 'modern'],
];

const model = new FakeModelServer();
let env: Record<string, string>;
beforeAll(async () => {
  await model.start();
  model.answerWith(playSurface);
  env = { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'sk-test-0000', SHOP_API_KEY: SHOP_KEY };
});
afterAll(() => model.stop());

describe.each(cases)('MCP logging over %s (%s era)', (transport, era) => {
  let client: Client;
  let http: HttpServerProcess | undefined;
  const logs: LogMessage[] = [];
  beforeAll(async () => {
    if (transport === 'stdio') ({ client } = await connectStdio(era, { agentsDir: AGENTS, env }));
    else {
      http = await startHttpServer({ agentsDir: AGENTS, env });
      client = await connectHttp(era, http.url);
    }
    client.setNotificationHandler('notifications/message', (notification) => {
      logs.push(notification.params as LogMessage);
    });
  }, 30_000);
  afterAll(async () => {
    await client?.close();
    await http?.stop();
  });

  /** Calls a tool at a log level (legacy: logging/setLevel first; modern: in the request's _meta) and returns what was logged. */
  async function callLogged(level: string | undefined, name: string, args: Record<string, unknown>) {
    logs.length = 0;
    if (era === 'legacy' && level) await client.setLoggingLevel(level as 'info');
    const result = await client.callTool({
      name,
      arguments: args,
      ...(era === 'modern' && level ? { _meta: { [LOG_LEVEL_META_KEY]: level } } : {}),
    });
    // Log messages are sent before the result; a moment lets the last handler run.
    await new Promise((resolve) => setTimeout(resolve, 50));
    return { result, logs: [...logs] };
  }

  it('[MC-10] declares the logging capability', () => {
    expect(client.getServerCapabilities()?.logging).toEqual({});
  });

  if (era === 'legacy') {
    it('[MC-10] sends nothing before the client sets a level with logging/setLevel (the server default)', async () => {
      const { result, logs } = await callLogged(undefined, 'greet_customer', { customer: 'Ada', tone: 'friendly' });
      expect(result.isError).toBeFalsy();
      expect(logs).toEqual([]);
    });
  } else {
    it('[MC-10] sends nothing to a request that names no level (2026-07-28)', async () => {
      const { result, logs } = await callLogged(undefined, 'greet_customer', { customer: 'Ada', tone: 'friendly' });
      expect(result.isError).toBeFalsy();
      expect(logs).toEqual([]);
    });
  }

  it('[MC-10] sends steps, tool calls and the end at info', async () => {
    const { logs } = await callLogged('info', 'greet_customer', { customer: 'Ada', tone: 'friendly' });
    expect(new Set(logs.map((log) => log.level))).toEqual(new Set(['info']));
    const messages = logs.map((log) => log.data.message);
    expect(messages.filter((m) => /step \d, calling the model$/.test(m))).toHaveLength(2);
    expect(messages.filter((m) => m.endsWith('running lookup_customer'))).toHaveLength(1);
    // The end, with the run's tokens (MC-12): two model calls of the scripted model, 10 in and 5 out each, unpriced.
    expect(messages.at(-1)).toBe('finished after 2 steps and 1 tool call; 20 input tokens, 10 output tokens');
    for (const log of logs) expect(log).toMatchObject({ logger: 'agentport', data: { tool: 'greet_customer' } });
  });

  it('[MC-10] at warning, sends a failed tool call, redacted, and no info', async () => {
    const { logs } = await callLogged('warning', 'greet_customer', { customer: 'Flaky', tone: 'formal' });
    expect(logs).toEqual([
      {
        level: 'warning',
        logger: 'agentport',
        data: {
          tool: 'greet_customer',
          thread_id: expect.any(String),
          message: 'tool flaky_lookup failed: back office refused key [redacted secret]',
        },
      },
    ]);
    expect(JSON.stringify(logs)).not.toContain(SHOP_KEY);
  });

  it('[MC-10] at error, sends the error a run ends with and nothing of a run that succeeds', async () => {
    const failed = await callLogged('error', 'failing_prompt', { message: 'hello' });
    expect(failed.result.isError).toBe(true);
    expect(failed.logs).toHaveLength(1);
    expect(failed.logs[0]).toMatchObject({ level: 'error', logger: 'agentport', data: { tool: 'failing_prompt', code: 'MODEL_FAILED' } });
    expect(failed.logs[0]!.data.message).toContain('this model refuses every request');
    const quiet = await callLogged('error', 'greet_customer', { customer: 'Flaky', tone: 'formal' });
    expect(quiet.logs).toEqual([]);
  });
});

describe('the MCP conformance suite, logging scenarios', () => {
  let http: HttpServerProcess;
  beforeAll(async () => {
    http = await startHttpServer({ agentsDir: AGENTS, env });
  }, 30_000);
  afterAll(async () => {
    await http?.stop();
  });

  itPassesConformance('MC-10', () => http, ['logging-set-level', 'tools-call-with-logging']);
});
