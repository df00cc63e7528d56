/**
 * A call is refused when its arguments are not what the published schema
 * allows, keys it does not declare included (at any depth), with an error
 * naming them; the built-in tools (tool_search, call_tool, run_*) and the
 * variables passed in `_meta` are held to the same.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { FakeModelServer } from '../support/fakeModelServer.js';
import { connectStdio, tempDir } from '../support/mcpClients.js';
import { writeFiles } from '../support/folders.js';

const model = new FakeModelServer();
let client: Client;
let searchClient: Client;

const FILES = {
  'models/m.ts': `import { defineModel } from 'agentport';\nexport default defineModel({ name: 'm', provider: 'openai', model: 'x' });\n`,
  'prompts/plain.ts': `import { definePrompt } from 'agentport';
export default definePrompt({ name: 'plain', toolDescription: 'One message.', prompt: 'Answer.', model: 'm', exposeAsTool: true });
`,
  'prompts/typed.ts': `import { definePrompt } from 'agentport';
import { z } from 'zod';
export default definePrompt({
  name: 'typed',
  toolDescription: 'Typed arguments.',
  prompt: 'Answer.',
  model: 'm',
  exposeAsTool: true,
  requiredSchema: z.object({
    title: z.string(),
    owner: z.object({ name: z.string(), email: z.string().optional() }).optional(),
    items: z.array(z.object({ sku: z.string() })).default([]),
    labels: z.record(z.string(), z.string()).optional(),
    target: z.union([z.object({ url: z.string() }), z.object({ path: z.string() })]).optional(),
  }),
});
`,
  'prompts/strict.ts': `import { definePrompt } from 'agentport';
import { z } from 'zod';
export default definePrompt({
  name: 'strict',
  toolDescription: 'Strict arguments.',
  prompt: 'Answer.',
  model: 'm',
  exposeAsTool: true,
  requiredSchema: z.strictObject({ title: z.string(), inner: z.object({ a: z.string() }).strict().optional() }),
});
`,
  'prompts/needs.ts': `import { definePrompt } from 'agentport';
export default definePrompt({
  name: 'needs',
  toolDescription: 'Needs a variable.',
  prompt: 'Retry as told.',
  model: 'm',
  exposeAsTool: true,
  variables: [{ name: 'RETRIES', type: 'text', description: 'How often to retry.', required: true }],
});
`,
};

beforeAll(async () => {
  await model.start();
  const agentsDir = writeFiles(tempDir(), FILES);
  const env = { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'k' };
  client = (await connectStdio('legacy', { agentsDir, env, args: ['--call-budget', '30'] })).client;
  searchClient = (await connectStdio('legacy', { agentsDir, env, args: ['--tool-search', 'on'] })).client;
});
afterAll(async () => {
  await client?.close();
  await searchClient?.close();
  await model.stop();
});

interface ErrorContent {
  error: { code: string; message: string; data?: { fields?: string[] } };
}

async function refused(target: Client, name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) {
  const before = model.requests.length;
  const result = await target.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) });
  expect(result.isError).toBe(true);
  // Nothing reached the model.
  expect(model.requests.length).toBe(before);
  return (result.structuredContent as ErrorContent).error;
}

describe('arguments the schema does not declare', () => {
  it('[MC-5] refuses a key a message prompt does not declare, naming it', async () => {
    const error = await refused(client, 'plain', { message: 'hi', bogus: 1 });
    expect(error.code).toBe('INVALID_ARGUMENTS');
    expect(error.message).toContain('"bogus"');
    expect(error.data?.fields).toEqual(['bogus']);
  });

  it('[MC-5] refuses undeclared keys inside objects, arrays and union options, with their paths', async () => {
    const nested = await refused(client, 'typed', { title: 't', owner: { name: 'n', phone: '1' } });
    expect(nested.data?.fields).toEqual(['owner.phone']);
    const inArray = await refused(client, 'typed', { title: 't', items: [{ sku: 'a' }, { sku: 'b', qty: 2 }] });
    expect(inArray.data?.fields).toEqual(['items[1].qty']);
    const inUnion = await refused(client, 'typed', { title: 't', target: { url: 'u', port: 1 } });
    expect(inUnion.data?.fields).toEqual(['target.port']);
  });

  it('[MC-5] says each undeclared key of a strict object once', async () => {
    const error = await refused(client, 'strict', { title: 't', extra: 1, inner: { a: 'x', b: 2 } });
    expect(error.data?.fields).toEqual(['extra', 'inner.b']);
    expect(error.message).toBe('invalid arguments for "strict": no argument "extra", "inner.b" is declared');
    const mixed = await refused(client, 'strict', { title: 4, extra: 1 });
    expect(mixed.data?.fields).toEqual(['title', 'extra']);
  });

  it('[MC-5] reports wrong types and undeclared keys together', async () => {
    const error = await refused(client, 'typed', { title: 3, extra: true });
    expect(error.data?.fields).toEqual(['title', 'extra']);
    expect(error.message).toContain('"extra"');
  });

  it('[MC-5] accepts what the schema declares: records take any key, thread_id is always allowed', async () => {
    model.reply({ text: 'fine' });
    const result = await client.callTool({
      name: 'typed',
      arguments: { title: 't', labels: { anything: 'x' }, target: { path: 'p' }, owner: { name: 'n', email: 'e' } },
    });
    expect(result.isError).toBeFalsy();
    const threadId = (result.structuredContent as { thread_id: string }).thread_id;
    model.reply({ text: 'again' });
    const again = await client.callTool({ name: 'plain', arguments: { message: 'hi', thread_id: threadId } });
    // Another tool's thread: refused for that reason, not for the key.
    expect(JSON.stringify(again.structuredContent)).not.toContain('is declared');
  });

  it('[MC-5] holds run_wait, run_status and run_cancel to their schemas', async () => {
    for (const name of ['run_wait', 'run_status', 'run_cancel']) {
      const error = await refused(client, name, { thread_id: 'x', verbose: true });
      expect(error.message).toBe(`${name}: no argument "verbose" is declared`);
    }
    const listed = await client.listTools();
    for (const tool of listed.tools.filter((t) => t.name.startsWith('run_'))) {
      expect(tool.inputSchema.additionalProperties).toBe(false);
    }
  });

  it('[TS-6] [MC-5] holds tool_search and call_tool to their schemas, and names a missing tool name', async () => {
    const search = await refused(searchClient, 'tool_search', { query: 'typed', limit: 3 });
    expect(search.message).toContain('"limit"');
    const missing = await refused(searchClient, 'call_tool', { arguments: {} });
    expect(missing.code).toBe('INVALID_ARGUMENTS');
    expect(missing.message).toContain('call_tool: name must be');
    const extra = await refused(searchClient, 'call_tool', { name: 'plain', arguments: { message: 'hi' }, retries: 2 });
    expect(extra.message).toContain('"retries"');
    const inner = await refused(searchClient, 'call_tool', { name: 'plain', arguments: { message: 'hi', bogus: 1 } });
    expect(inner.data?.fields).toEqual(['bogus']);
  });
});

describe('variables passed with a call', () => {
  it('[MC-5] refuses a value that is not a string, naming the variable', async () => {
    for (const value of [3, true, null, ['a'], { a: 1 }]) {
      const error = await refused(client, 'needs', { message: 'go' }, { 'agentport/variables': { RETRIES: value } });
      expect(error.code).toBe('INVALID_ARGUMENTS');
      expect(error.message).toContain('variable RETRIES must be a string');
      expect(error.message).not.toContain('missing');
    }
  });

  it('[MC-5] refuses variables that are not an object of values', async () => {
    for (const variables of ['RETRIES=3', ['3'], 7]) {
      const error = await refused(client, 'needs', { message: 'go' }, { 'agentport/variables': variables });
      expect(error.message).toContain('must be an object of variable names and string values');
    }
  });

  it('[MC-5] runs with a string value', async () => {
    model.reply({ text: 'ok' });
    const result = await client.callTool({
      name: 'needs',
      arguments: { message: 'go' },
      _meta: { 'agentport/variables': { RETRIES: '3' } },
    });
    expect(result.isError).toBeFalsy();
  });
});
