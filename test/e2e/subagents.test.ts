/**
 * Subagents through the built CLI over stdio: scoped variables asked for with
 * an elicitation form, and a resumable instance messaged after the server
 * restarted on the same data folder.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { resultText, useModelServer } from '../support/modelForSuite.js';
import { connectStdio, tempDir } from '../support/mcpClients.js';
import { CLI, FIXTURES } from '../support/paths.js';

const AGENTS = path.join(FIXTURES, 'agents', 'subagents');
const { model, env: modelEnv } = useModelServer();
afterEach(() => {
  expect(model.unexpected).toEqual([]);
  expect(model.remaining).toBe(0);
});

const env = modelEnv;
const textOf = resultText;
const threadOf = (result: { structuredContent?: unknown }) => (result.structuredContent as { thread_id: string }).thread_id;
const systemOf = (body: { messages: Array<{ content: unknown }> }) => String(body.messages[0]!.content);

describe('subagents over stdio', () => {
  it('[SA-5] asks a client that supports elicitation for scoped variables with a form, then starts the child', async () => {
    const client = new Client({ name: 'eliciting', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    const forms: unknown[] = [];
    client.setRequestHandler('elicitation/create', async (request) => {
      forms.push(request.params);
      return { action: 'accept', content: { SERVICE_KEY: 'sk-from-the-form-42' } };
    });
    const dataDir = tempDir();
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, 'serve', '--dir', AGENTS],
        env: { ...process.env, ...env(), AGENTPORT_DATA_DIR: dataDir },
        stderr: 'pipe',
      }),
    );
    try {
      model.replyToSystem(
        'Lead scoped.',
        { toolCalls: [{ name: 'subagent_create', arguments: { name: 'k9', arguments: { message: 'use it' } } }] },
        { text: 'k9 is done.' },
      );
      model.replyToSystem(
        'Keyed.',
        { toolCalls: [{ name: 'use_key', arguments: {} }] },
        { toolCalls: [{ name: 'done', arguments: { message: 'key used: ok' } }] },
      );
      const before = model.requests.length;
      const result = await client.callTool({ name: 'lead_scoped', arguments: { message: 'Start k9' } });
      expect(textOf(result)).toBe('k9 is done.');
      expect(forms).toEqual([
        expect.objectContaining({
          mode: 'form',
          message: 'The subagent "k9" (keyed) needs these values before it can start.',
          requestedSchema: {
            type: 'object',
            properties: {
              SERVICE_KEY: {
                type: 'string',
                title: 'SERVICE_KEY',
                description: 'Secret (stored encrypted): The key of the service this instance uses',
              },
            },
            required: ['SERVICE_KEY'],
          },
        }),
      ]);
      const sent = model.requests.slice(before).map((r) => r.body);
      const keyedTool = sent
        .filter((b) => systemOf(b) === 'Keyed.')
        .at(-1)!
        .messages.find((m) => m.role === 'tool');
      expect(keyedTool!.content).toBe('key ends with 42');
      const parentLast = sent.filter((b) => systemOf(b) === 'Lead scoped.').at(-1)!;
      expect(parentLast.messages.at(-1)).toMatchObject({ role: 'tool', content: 'key used: ok' });
      expect(JSON.stringify(sent)).not.toContain('sk-from-the-form-42');
    } finally {
      await client.close();
    }
  });

  it('[SA-2] messages a resumable instance that was idle when the server restarted', async () => {
    const dataDir = tempDir();
    model.reply(
      { toolCalls: [{ name: 'subagent_create', arguments: { name: 'keeper', arguments: { topic: 'bees' } } }] },
      { toolCalls: [{ name: 'deliver', arguments: { summary: 'Bees make honey.' } }] },
      { text: 'keeper started' },
    );
    const first = await connectStdio('legacy', { agentsDir: AGENTS, env: env(), dataDir });
    const started = await first.client.callTool({ name: 'lead_resumable', arguments: { message: 'Start a keeper' } });
    expect(textOf(started)).toBe('keeper started');
    await first.client.close();

    model.reply(
      { toolCalls: [{ name: 'subagent_message', arguments: { to: 'keeper', message: 'And wasps?' } }] },
      { toolCalls: [{ name: 'deliver', arguments: { summary: 'Wasps do not.' } }] },
      { text: 'keeper answered' },
    );
    const before = model.requests.length;
    const second = await connectStdio('legacy', { agentsDir: AGENTS, env: env(), dataDir });
    try {
      const result = await second.client.callTool({
        name: 'lead_resumable',
        arguments: { message: 'Ask the keeper', thread_id: threadOf(started) },
      });
      expect(textOf(result)).toBe('keeper answered');
      const [, child, parent] = model.requests.slice(before).map((r) => r.body);
      expect(child!.messages.slice(1).map((m) => m.content)).toEqual(['{"topic":"bees"}', 'And wasps?']);
      expect(parent!.messages.at(-1)).toMatchObject({ role: 'tool', content: 'Wasps do not.' });
    } finally {
      await second.client.close();
    }
  });
});
