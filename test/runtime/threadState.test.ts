/**
 * Every ThreadState member used from a real tool (test/fixtures/agents/sessions/tools/state_probe.ts)
 * through the MCP client and the scripted model; durable values checked across calls.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { textOf } from '../support/inProcess.js';
import { FIXTURES } from '../support/paths.js';
import { threadIdOf, useRuntimeHarness } from './harness.js';

const h = useRuntimeHarness({}, {}, path.join(FIXTURES, 'agents', 'sessions'));

let probes = 0;

/** Calls state_user so that its model runs state_probe(op) once, then answers; returns what the probe returned. */
async function probe(op: string, options: { input?: string; thread?: string } = {}) {
  const id = `probe-${(probes += 1)}`;
  const before = h.model.requests.length;
  h.model.reply(
    { toolCalls: [{ id, name: 'state_probe', arguments: { op, ...(options.input ? { input: options.input } : {}) } }] },
    { text: `${op} done` },
  );
  const result = await h.call('state_user', { task: `probe ${op}`, level: 2, ...(options.thread ? { thread_id: options.thread } : {}) });
  expect(result.isError, textOf(result)).toBeFalsy();
  const requests = h.model.requests.slice(before).map((r) => r.body);
  const toolMessage = requests.at(-1)!.messages.find((m) => m.role === 'tool' && m.tool_call_id === id)!;
  const content = String(toolMessage.content);
  return {
    result,
    requests,
    value: content.startsWith('Error') ? content : (JSON.parse(content) as Record<string, unknown>),
    threadId: threadIdOf(result),
  };
}

describe('ThreadState from a tool', () => {
  it('[AG-4] identity: threadId, agentId, prompt, arguments, createdAt (µs), userId', async () => {
    const { value, threadId } = await probe('identity');
    expect(value).toEqual({
      threadId,
      agentId: 'state_user',
      prompt: 'state_user',
      userId: null,
      arguments: { task: 'probe identity', level: 2 },
      createdAtIsMicroseconds: true,
    });
  });

  it('[AG-4] getMessages with limit, offset and order; getMessage by id', async () => {
    const { value } = await probe('messages');
    expect(value).toEqual({ total: 2, hasMore: false, roles: ['assistant', 'user'], first: '{"task":"probe messages","level":2}' });
  });

  it('[AG-4] injectMessage stores without running; it reaches the next step after the tool results', async () => {
    const { requests } = await probe('inject', { input: 'a note from the tool' });
    expect(requests).toHaveLength(2);
    expect(
      requests
        .at(-1)!
        .messages.slice(-3)
        .map((m) => m.role),
    ).toEqual(['assistant', 'tool', 'user']);
    expect(requests[1]!.messages.at(-1)).toEqual({ role: 'user', content: 'a note from the tool' });
  });

  it('[AG-4] queueMessage delivers before the next step of a running turn', async () => {
    const { requests } = await probe('queue', { input: 'queued hello' });
    expect(requests[1]!.messages.at(-1)).toEqual({ role: 'user', content: 'queued hello' });
  });

  it('[AG-4] updateMessage changes a stored message', async () => {
    const { value, threadId, requests } = await probe('update', { input: 'rewritten request' });
    expect(value).toBe('rewritten request');
    expect(requests.at(-1)!.messages[1]).toEqual({ role: 'user', content: 'rewritten request' });
    const stored = await h.agentport.runtime.store.listMessages(threadId);
    expect(stored[0]!.content).toBe('rewritten request');
  });

  it('[AG-4] deleteMessage removes a message together with its tool results', async () => {
    h.model.reply({ toolCalls: [{ id: 'sum', name: 'add_numbers', arguments: { a: 1, b: 1 } }] });
    const { value, threadId } = await probe('delete_tool_turn');
    expect(value).toEqual(['user', 'assistant']);
    const stored = await h.agentport.runtime.store.listMessages(threadId);
    expect(stored.some((m) => m.toolCallId === 'sum')).toBe(false);
  });

  it('[AG-4] env, envType and setEnv: thread-scoped, kept for later turns, new keys secret by default and redacted', async () => {
    const first = await probe('env');
    expect(first.value).toEqual({
      plan: 'basic',
      planType: 'text',
      missing: undefined,
      after: 'premium',
      token: '[redacted secret]',
      tokenType: 'secret',
      colourType: 'text',
    });
    const second = await probe('env_read', { thread: first.threadId });
    expect(second.value).toEqual({ plan: 'premium', colour: 'blue', tokenType: 'secret' });
    const variables = await h.agentport.runtime.store.getVariables(first.threadId);
    expect(variables.find((v) => v.name === 'API_TOKEN')).toMatchObject({ secret: true });
    expect(JSON.stringify(h.model.requests.map((r) => r.body))).not.toContain('sk-thread-secret-999');
  });

  it('[AG-4] getValue and setValue: durable JSON per thread, null deletes', async () => {
    const first = await probe('values', { input: 'one' });
    expect(first.value).toEqual({ before: null, after: 1, notes: { list: ['one'] }, gone: null });
    const second = await probe('values', { input: 'two', thread: first.threadId });
    expect(second.value).toEqual({ before: 1, after: 2, notes: { list: ['two'] }, gone: null });
    const other = await probe('values');
    expect(other.value).toMatchObject({ before: null });
  });

  it('[AG-4] invokeTool runs a tool now and returns its result; nothing is stored', async () => {
    const { value, threadId } = await probe('invoke');
    expect(value).toEqual({
      sum: { status: 'success', result: '5' },
      bad: {
        status: 'error',
        error:
          'Invalid arguments for add_numbers: a: Invalid input: expected number, received string; b: Invalid input: expected number, received undefined. Fix them and call the tool again.',
      },
    });
    const stored = await h.agentport.runtime.store.listMessages(threadId);
    expect(stored.filter((m) => m.role === 'tool')).toHaveLength(1);
  });

  it('[AG-4] queueTool runs the tool before the next step, visible to the model', async () => {
    const { requests } = await probe('queue_tool');
    const last = requests[1]!.messages.slice(-2);
    expect(last[0]).toMatchObject({ role: 'assistant', content: null });
    expect((last[0]!.tool_calls as Array<{ function: { name: string; arguments: string } }>)[0]!.function).toEqual({
      name: 'add_numbers',
      arguments: '{"a":20,"b":22}',
    });
    expect(last[1]).toMatchObject({ role: 'tool', content: '42' });
  });

  it('[AG-4] loadPrompt, loadAgent, loadModel and the name lists', async () => {
    const { value } = await probe('definitions');
    expect(value).toMatchObject({ writerModel: 'test', loopType: 'dual_ai', model: 'session-model', none: null });
    expect((value as { prompts: string[] }).prompts).toEqual(expect.arrayContaining(['writer', 'reviewer', 'state_user']));
    expect((value as { agents: string[] }).agents).toEqual(expect.arrayContaining(['review_loop', 'stopper']));
    expect((value as { models: string[] }).models).toEqual(['test']);
  });

  it('[AG-4] the file API, confined to the thread', async () => {
    const { value } = await probe('files');
    expect(value).toEqual({
      read: 'alpha\nbeta gamma\n',
      size: 17,
      missing: null,
      listing: ['file:a.txt', 'directory:deep'],
      found: ['/notes/deep/b.md'],
      grep: ['/notes/a.txt:2', '/notes/deep/b.md:1'],
      notEmpty: true,
      remaining: [],
      escape: 'INVALID_PATH',
    });
  });

  it('[AG-4] execution: step counts and side during the run', async () => {
    const { value } = await probe('execution');
    expect(value).toEqual({ stepCount: 1, currentSide: 'a', sideAStepCount: 1, sideBStepCount: 0, stopped: false, aborted: false });
  });

  it('[AG-4] execution.stop() ends the session after the step', async () => {
    h.model.reply({ text: 'Stopping now.', toolCalls: [{ name: 'state_probe', arguments: { op: 'stop' } }] });
    const result = await h.call('state_user', { task: 'stop' });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe('Stopping now.');
    expect(h.sent()).toHaveLength(1);
  });

  it('[AG-4] terminate() ends the session and the thread cannot be continued', async () => {
    h.model.reply({ toolCalls: [{ name: 'state_probe', arguments: { op: 'terminate' } }] });
    const result = await h.call('state_user', { task: 'end it' });
    expect(result.isError).toBeFalsy();
    expect(h.sent()).toHaveLength(1);
    const again = await h.call('state_user', { task: 'again', thread_id: threadIdOf(result) });
    expect(again.isError).toBe(true);
    expect((again.structuredContent as { error: { code: string } }).error.code).toBe('THREAD_TERMINATED');
  });

  it('[AG-4] context holds the tool config options and lasts for the execution only', async () => {
    h.model.reply(
      {
        toolCalls: [
          { id: 'c1', name: 'state_probe', arguments: { op: 'context' } },
          { id: 'c2', name: 'state_probe', arguments: { op: 'context' } },
        ],
      },
      { text: 'ok' },
    );
    await h.call('state_user', { task: 'ctx' });
    const tools = h
      .sent()[1]!
      .messages.filter((m) => m.role === 'tool')
      .map((m) => JSON.parse(String(m.content)) as unknown);
    expect(tools).toEqual([
      { options: { flavour: 'vanilla' }, seen: 1 },
      { options: { flavour: 'vanilla' }, seen: 2 },
    ]);
    const { value } = await probe('context');
    expect(value).toEqual({ options: { flavour: 'vanilla' }, seen: 1 });
    const nested = await probe('context_invoke');
    expect(nested.value).toEqual({ before: { flavour: 'vanilla' }, after: { flavour: 'vanilla' } });
  });

  it('[AG-4] a cancelled step closes its tool calls even when an earlier step used the same call id', async () => {
    h.model.reply(
      { toolCalls: [{ id: 'same', name: 'add_numbers', arguments: { a: 1, b: 1 } }] },
      { toolCalls: [{ id: 'same', name: 'slow_tool', arguments: {} }] },
    );
    const controller = new AbortController();
    const pending = h.client.callTool({ name: 'state_user', arguments: { task: 'cancel me' } }, { signal: controller.signal });
    await expect.poll(() => h.sent().length).toBe(2);
    const threads = await h.agentport.runtime.store.listThreads();
    const thread = threads.at(-1)!;
    await expect.poll(async () => (await h.agentport.runtime.store.listMessages(thread.id)).length).toBe(4);
    controller.abort();
    await expect(pending).rejects.toThrow();
    await expect.poll(async () => (await h.agentport.runtime.store.getThread(thread.id))?.status).toBe('cancelled');
    const results = (await h.agentport.runtime.store.listMessages(thread.id)).filter((m) => m.role === 'tool');
    expect(results.map((m) => m.content)).toEqual(['2', 'Error: cancelled before this tool call finished']);
  });
});
