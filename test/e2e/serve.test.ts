/**
 * End to end: the built CLI serves the example agents; the real MCP client
 * lists and calls them over stdio and Streamable HTTP in both protocol eras,
 * and the scripted model server records what the model received.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { FakeModelServer } from '../support/fakeModelServer.js';
import { connectHttp, connectStdio, startHttpServer, type Era, type HttpServerProcess } from '../support/mcpClients.js';
import { EXAMPLE_AGENTS, EXAMPLE_TOOLS, RUN_TOOLS } from '../support/paths.js';

const model = new FakeModelServer();
let http: HttpServerProcess;

beforeAll(async () => {
  await model.start();
  http = await startHttpServer({ agentsDir: EXAMPLE_AGENTS, env: modelEnv() });
});
afterAll(async () => {
  await http?.stop();
  await model.stop();
});
afterEach(() => {
  expect(model.unexpected).toEqual([]);
});

function textOf(result: Awaited<ReturnType<Client['callTool']>>): string {
  return (result.content as Array<{ type: string; text?: string }>).map((part) => part.text ?? '').join('');
}

function modelEnv(): Record<string, string> {
  return { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'test-key' };
}

const transports = [
  ['stdio', async (era: Era) => (await connectStdio(era, { agentsDir: EXAMPLE_AGENTS, env: modelEnv() })).client],
  ['http', (era: Era) => connectHttp(era, http.url)],
] as const;

describe.each(transports)('over %s', (transportName, connect) => {
  describe.each(['legacy', 'modern'] as const)('with a %s client', (era) => {
    let client: Client;
    beforeAll(async () => {
      client = await connect(era);
    });
    afterAll(async () => {
      await client?.close();
    });

    it(`[MC-1] negotiates the ${era} protocol era over ${transportName}`, () => {
      expect(client.getProtocolEra()).toBe(era);
      expect(client.getServerVersion()?.name).toBe('agentport');
      expect(client.getInstructions()).toMatch(/support/);
    });

    it('[MC-4] lists the exposed prompts in a deterministic order with 2020-12 object schemas', async () => {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual([...EXAMPLE_TOOLS, ...RUN_TOOLS]);
      const ajv = new Ajv2020({ strict: false });
      for (const tool of tools) {
        expect(tool.inputSchema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
        expect(tool.inputSchema.type).toBe('object');
        expect(() => ajv.compile(tool.inputSchema)).not.toThrow();
        if (!tool.name.startsWith('run_')) expect(tool.annotations).toMatchObject({ readOnlyHint: false, openWorldHint: true });
      }
      const again = await client.listTools();
      expect(again.tools).toEqual(tools);
    });

    it('[PR-9] publishes requiredSchema as JSON Schema with nested descriptions kept', async () => {
      const { tools } = await client.listTools();
      const triage = tools.find((t) => t.name === 'triage_ticket')!;
      expect(triage.title).toBe('Triage a support ticket');
      expect(triage.description).toBe('Classify a support ticket: category, urgency and the team that should handle it.');
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a JSON Schema read property by property
      const props = triage.inputSchema.properties as Record<string, any>;
      expect(props.ticket.description).toBe('The ticket to triage');
      expect(props.ticket.properties.channel).toEqual({
        type: 'string',
        enum: ['email', 'chat', 'phone'],
        description: 'Where the ticket came from',
      });
      expect(props.customer.properties.open_tickets.description).toBe('How many other tickets the customer has open');
      // A field with a default is optional for the caller.
      expect(props.customer.required).toEqual(['tier']);
      expect(triage.inputSchema.required).toEqual(['ticket', 'customer']);
      const summarize = tools.find((t) => t.name === 'summarize')!;
      expect(summarize.inputSchema.required).toEqual(['message']);
    });

    it('[PR-3] calls a structured prompt: the model gets the resolved system prompt and the message', async () => {
      model.reply({ text: `Order A-1001 has shipped (${transportName}/${era}).` });
      const before = model.requests.length;
      const result = await client.callTool({ name: 'support', arguments: { message: 'Where is my order A-1001?' } });
      expect(result.isError).toBeFalsy();
      expect(result.content).toEqual([{ type: 'text', text: `Order A-1001 has shipped (${transportName}/${era}).` }]);
      const sent = model.requests[before]!;
      expect(sent.headers.authorization).toBe('Bearer test-key');
      expect(sent.body.model).toBe('gpt-4.1-mini');
      expect(sent.body.messages).toEqual([
        {
          role: 'system',
          content:
            'You are the support assistant of an online shop.\n\n' +
            'Write in plain, friendly English. Lead with the answer, then the detail. ' +
            'Never invent order numbers, prices or dates: if you do not know, say so.' +
            '\n\nUse lookup_order for anything about a specific order.',
        },
        { role: 'user', content: 'Where is my order A-1001?' },
      ]);
    });

    it('[PR-9] validates arguments against requiredSchema and sends them as the user message', async () => {
      model.reply({ text: '{"category":"billing"}' });
      const before = model.requests.length;
      const args = { ticket: { subject: 'Charged twice', body: 'I was billed twice.', channel: 'email' }, customer: { tier: 'pro' } };
      const result = await client.callTool({ name: 'triage_ticket', arguments: args });
      expect(result.isError).toBeFalsy();
      const user = model.requests[before]!.body.messages[1]!;
      expect(user.role).toBe('user');
      expect(JSON.parse(String(user.content))).toEqual({ ...args, customer: { tier: 'pro', open_tickets: 0 } });
    });

    it('[MC-5] answers invalid arguments with an isError result naming the field, without calling the model', async () => {
      const before = model.requests.length;
      const result = await client.callTool({
        name: 'triage_ticket',
        arguments: { ticket: { subject: 'x', body: 'y', channel: 'fax' }, customer: { tier: 'pro' } },
      });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain('ticket.channel');
      expect(model.requests.length).toBe(before);
    });

    it('[SA-7] runs the copy_desk example: the copywriter and the editor take turns until publish', async () => {
      model.reply(
        { text: 'Draft: the best mug ever.' },
        { toolCalls: [{ name: 'report_progress', arguments: { message: 'reading the draft' } }] },
        { text: '1. No superlatives.' },
        { toolCalls: [{ name: 'publish', arguments: { copy: `A stoneware mug that keeps tea warm (${transportName}/${era}).` } }] },
      );
      const before = model.requests.length;
      const progress: string[] = [];
      const result = await client.callTool(
        { name: 'copy_desk', arguments: { product: 'a stoneware mug' } },
        { onprogress: (p) => progress.push(p.message ?? '') },
      );
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(textOf(result)).toBe(`A stoneware mug that keeps tea warm (${transportName}/${era}).`);
      expect(result.structuredContent).toMatchObject({ turns: 3, steps: 4 });
      const sent = model.requests.slice(before).map((r) => r.body);
      expect(sent[0]!.messages[1]).toEqual({ role: 'user', content: '{"product":"a stoneware mug","audience":"online shoppers"}' });
      expect(sent[1]!.messages.slice(1)).toEqual([{ role: 'user', content: 'Draft: the best mug ever.' }]);
      expect(sent[3]!.messages.slice(2)).toEqual([
        { role: 'assistant', content: 'Draft: the best mug ever.' },
        { role: 'user', content: '1. No superlatives.' },
      ]);
      expect(progress).toContain('editor: reading the draft');
    });

    it('[MC-5] answers an unknown tool with JSON-RPC -32602', async () => {
      await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toMatchObject({ code: -32602 });
    });

    it('[MC-5] turns a failing model into an isError result and keeps serving', async () => {
      model.reply({ status: 400, error: 'the model refused the request' });
      const failed = await client.callTool({ name: 'summarize', arguments: { message: 'hello' } });
      expect(failed.isError).toBe(true);
      expect(textOf(failed)).toContain('model "main" failed: 400 the model refused the request');
      model.reply({ text: 'still here' });
      const ok = await client.callTool({ name: 'summarize', arguments: { message: 'hello again' } });
      expect(ok.content).toEqual([{ type: 'text', text: 'still here' }]);
    });
  });
});

describe('the editor_in_chief example (subagents) over HTTP', () => {
  it('[SA-2] [SA-1] offers subagent_create/subagent_message for fact_finder and copy_desk as a non-blocking call', async () => {
    const client = await connectHttp('modern', http.url);
    try {
      model.replyToSystem(
        'You run a small product page team.',
        { toolCalls: [{ name: 'subagent_create', arguments: { name: 'mugs', arguments: { question: 'Is stoneware dishwasher safe?' } } }] },
        { toolCalls: [{ name: 'copy_desk', arguments: { product: 'a stoneware mug' } }] },
        { text: 'Facts checked; copy commissioned.' },
        { text: 'The copy arrived.' },
      );
      model.replyToSystem('Answer the question in the request', {
        toolCalls: [{ name: 'report', arguments: { answer: 'Usually, yes.' } }],
      });
      model.replyToSystem('You write short product copy', {
        toolCalls: [{ name: 'publish', arguments: { copy: 'A mug for slow mornings.' } }],
      });
      const before = model.requests.length;
      const result = await client.callTool({ name: 'editor_in_chief', arguments: { message: 'Plan the mug page' } });
      expect(textOf(result)).toBe('Facts checked; copy commissioned.');
      const first = model.requests[before]!.body;
      expect((first.tools ?? []).map((t) => t.function.name).sort()).toEqual(['copy_desk', 'subagent_create', 'subagent_message']);
      // The copy desk finishes on its own and its copy wakes the editor's thread.
      await expect.poll(() => model.remaining, { timeout: 10_000 }).toBe(0);
      const wake = model.requests.at(-1)!.body;
      expect(String(wake.messages.at(-1)!.content)).toContain('A mug for slow mornings.');
    } finally {
      await client.close();
    }
  });
});

describe('a model without an API key', () => {
  it('[MC-5] is a tool error naming the model and the variable to set', async () => {
    const { client } = await connectStdio('legacy', { agentsDir: EXAMPLE_AGENTS, env: { OPENAI_BASE_URL: model.baseURL } });
    try {
      const result = await client.callTool({ name: 'summarize', arguments: { message: 'hi' } });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/model "main" has no API key: set the environment variable OPENAI_API_KEY/);
    } finally {
      await client.close();
    }
  });
});
