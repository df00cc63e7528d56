/**
 * Prompty files as people write them, end to end over MCP with the scripted model: the prompt
 * section spec's own `tools:` example (tools defined by id/type/options, their options rendered
 * per call and handed to the implementing tool), sample defaults, a jinja2 body with a developer
 * section, an inline model on its own endpoint and key, and section tools nothing implements.
 */
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { loadRegistry } from '../../src/registry/load.js';
import { FakeModelServer } from '../support/fakeModelServer.js';
import { startInProcess, textOf, type InProcessAgentport } from '../support/inProcess.js';
import { FIXTURES } from '../support/paths.js';

const AGENTS = path.join(FIXTURES, 'prompty', 'e2e');
const model = new FakeModelServer();
let agentport: InProcessAgentport;
let client: Client;

beforeAll(async () => {
  await model.start();
  // The inline model of helper.prompty reads its endpoint and key variable when the folder loads.
  vi.stubEnv('HELPER_BASE_URL', model.baseURL);
  vi.stubEnv('HELPER_KEY', 'helper-secret');
  agentport = await startInProcess({
    agentsDir: AGENTS,
    env: { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'k', HELPER_KEY: 'helper-secret' },
  });
  client = await agentport.connect('legacy');
});
afterAll(async () => {
  await agentport?.close();
  await model.stop();
  vi.unstubAllEnvs();
});
afterEach(() => {
  expect(model.unexpected).toEqual([]);
  expect(model.remaining).toBe(0);
});

const SPEC_SYSTEM =
  'You are an AI assistant who helps people find information.\nAs the assistant, you answer questions briefly, succinctly, \n' +
  'and in a personable manner using markdown and even add some personal flair with appropriate emojis.\n\n# Customer\n' +
  'You are helping Seth Juarez to find answers to their questions.\nUse their name to address them in your responses.';

describe('the prompt section spec example over MCP', () => {
  it('[PY-10] lists the prompt with sample values as defaults of the inputs they name', async () => {
    const { tools } = await client.listTools();
    const spec = tools.find((t) => t.name === 'spec_example')!;
    expect(spec.inputSchema).toMatchObject({
      properties: {
        table: { type: 'string', default: 'contacts' },
        location: { type: 'string', default: 'Seattle' },
      },
      required: ['firstName', 'lastName', 'question'],
    });
  });

  it('[PY-3] [PY-10] offers query and search, and each runs its type with its options rendered for the call', async () => {
    model.reply(
      {
        toolCalls: [
          { id: 'c1', name: 'query', arguments: { limit: 5 } },
          { id: 'c2', name: 'search', arguments: { q: 'meaning' } },
        ],
      },
      { text: '42 🙂' },
    );
    const result = await client.callTool({
      name: 'spec_example',
      arguments: { firstName: 'Seth', lastName: 'Juarez', question: 'What is the meaning of life?' },
    });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe('42 🙂');

    const first = model.requests.at(-2)!.body;
    expect(first.messages).toEqual([
      { role: 'system', content: SPEC_SYSTEM },
      { role: 'user', name: 'Seth Juarez', content: 'What is the meaning of life?' },
    ]);
    expect(first.tools!.map((t) => [t.function.name, t.function.description])).toEqual([
      ['query', 'Query Dataverse.'],
      ['search', 'Search the web.'],
    ]);

    const results = model.requests
      .at(-1)!
      .body.messages.filter((m) => m.role === 'tool')
      .map((m) => JSON.parse(String(m.content)) as unknown);
    expect(results).toEqual([
      {
        tool: 'dataverse',
        options: {
          connection: 'https://contoso.crm.dynamics.com',
          query: "SELECT * FROM contacts WHERE firstName = 'Seth' AND lastName = 'Juarez'",
        },
        args: { limit: 5 },
      },
      // location comes from the sample: the call left it out.
      { tool: 'bing', options: { parameters: ['What is the meaning of life?'], location: 'Seattle' }, args: { q: 'meaning' } },
    ]);
  });

  it('[PY-7] renders the options with each call’s own values; an input cannot add YAML structure to them', async () => {
    model.reply({ toolCalls: [{ id: 'c1', name: 'query', arguments: {} }] }, { text: 'done' });
    await client.callTool({
      name: 'spec_example',
      arguments: { firstName: "O'Brien", lastName: "x'\n  connection: evil", table: 'leads', question: 'Q', location: 'Oslo' },
    });
    const tool = model.requests.at(-1)!.body.messages.find((m) => m.role === 'tool')!;
    expect(JSON.parse(String(tool.content))).toMatchObject({
      options: {
        connection: 'https://contoso.crm.dynamics.com',
        query: "SELECT * FROM leads WHERE firstName = 'O'Brien' AND lastName = 'x'\n  connection: evil'",
      },
    });
  });
});

describe('a body tools entry naming a registered tool', () => {
  it('[PY-3] hands the entry options, rendered for the call, to the tool', async () => {
    model.reply({ toolCalls: [{ id: 'b1', name: 'bing', arguments: { q: 'news' } }] }, { text: 'ok' });
    await client.callTool({ name: 'named', arguments: { site: 'example.org' } });
    const tool = model.requests.at(-1)!.body.messages.find((m) => m.role === 'tool')!;
    expect(JSON.parse(String(tool.content))).toEqual({ tool: 'bing', options: { site: 'example.org', safe: true }, args: { q: 'news' } });
  });

  it('[PY-3] the same implementation offered by another prompt under its own id gets that prompt’s options', async () => {
    model.reply({ toolCalls: [{ id: 'c2', name: 'search', arguments: { q: 'x' } }] }, { text: 'ok' });
    await client.callTool({ name: 'spec_example', arguments: { firstName: 'A', lastName: 'B', question: 'Q' } });
    const tool = model.requests.at(-1)!.body.messages.find((m) => m.role === 'tool')!;
    expect(JSON.parse(String(tool.content))).toMatchObject({ tool: 'bing', options: { parameters: ['Q'], location: 'Seattle' } });
  });
});

describe('a jinja2 prompty with a developer section and an inline model', () => {
  it('[PY-9] [PY-11] [PY-10] renders with sample defaults, sends developer as system, calls its own endpoint with its own key', async () => {
    model.reply({ text: 'Tides come from gravity and the moon.' });
    const result = await client.callTool({ name: 'helper', arguments: {} });
    expect(textOf(result)).toBe('Tides come from gravity and the moon.');
    const request = model.requests.at(-1)!;
    expect(request.body.model).toBe('helper-model');
    expect(request.headers.authorization).toBe('Bearer helper-secret');
    expect(request.body.messages).toEqual([
      { role: 'system', content: 'Explain TIDES in 2 points:\n\n- gravity\n\n- the moon' },
      { role: 'user', content: 'Go.' },
    ]);
    // `files` (type file_search) has no implementation here: it is left out, not a failed call.
    expect(request.body.tools!.map((t) => [t.function.name, t.function.description])).toEqual([['web', 'Search the web for the topic.']]);
  });

  it('[PY-3] warns at load about section tools nothing implements, naming the file, line and entry', async () => {
    vi.stubEnv('HELPER_BASE_URL', model.baseURL);
    vi.stubEnv('HELPER_KEY', 'helper-secret');
    const { issues } = await loadRegistry({ agentsDir: AGENTS });
    expect(issues.filter((i) => i.severity === 'error')).toEqual([]);
    const warning = issues.find((i) => i.field === 'tools[1]' && i.definition === 'helper');
    expect(warning).toMatchObject({
      severity: 'warning',
      file: expect.stringMatching(/helper\.prompty:21$/) as unknown,
      message: expect.stringContaining('tool "files" (type "file_search") is not offered to the model') as unknown,
    });
  });
});
