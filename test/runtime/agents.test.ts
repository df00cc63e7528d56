/**
 * Agents end to end through the real MCP client and the scripted model:
 * dual_ai sessions (role flip, session tools, turn and step limits), ai_human
 * stop rules, and continuing an agent's thread.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { textOf } from '../support/inProcess.js';
import { FIXTURES } from '../support/paths.js';
import { threadIdOf, useRuntimeHarness } from './harness.js';

export const SESSION_AGENTS = path.join(FIXTURES, 'agents', 'sessions');
const h = useRuntimeHarness({}, {}, SESSION_AGENTS);

const toolNames = (request: { tools?: Array<{ function: { name: string } }> }) => (request.tools ?? []).map((t) => t.function.name).sort();
const errorOf = (result: { structuredContent?: unknown }) =>
  (result.structuredContent as { error?: { code: string; message: string; data?: unknown } }).error;

describe('dual_ai sessions', () => {
  it('[AG-1] [AG-2] [SA-7] alternates sides with roles flipped, hides the other side’s tools, reports status and ends on sessionStop', async () => {
    h.model.reply(
      { toolCalls: [{ id: 'w1', name: 'add_numbers', arguments: { a: 1, b: 2 } }] },
      { text: 'Draft one' },
      { toolCalls: [{ id: 'r1', name: 'report', arguments: { message: 'checking the draft' } }] },
      { text: 'Make it longer.' },
      { toolCalls: [{ id: 'w2', name: 'finish', arguments: { final: 'Draft two, longer.' } }] },
    );
    const progress: string[] = [];
    const result = await h.client.callTool(
      { name: 'review_loop', arguments: { message: 'Write about rain' } },
      { onprogress: (p) => progress.push(p.message ?? '') },
    );
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe('Draft two, longer.');
    expect(result.structuredContent).toMatchObject({ response: 'Draft two, longer.', steps: 5, turns: 3 });

    const [a1, a2, b1, b2, a3] = h.sent();
    expect(a1!.messages).toEqual([
      { role: 'system', content: 'You write drafts.' },
      { role: 'user', content: 'Write about rain' },
    ]);
    expect(toolNames(a1!)).toEqual(['add_numbers', 'finish']);
    expect(a2!.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    // Side B sees side A's answer as the user speaking, not the caller's message or A's tool calls.
    expect(b1!.messages).toEqual([
      { role: 'system', content: 'You review drafts.' },
      { role: 'user', content: 'Draft one' },
    ]);
    expect(toolNames(b1!)).toEqual(['add_numbers', 'give_up', 'report']);
    expect(b2!.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    // Side A sees its own tool work, its answer as assistant, and B's answer as user; not B's status call.
    expect(a3!.messages).toEqual([
      { role: 'system', content: 'You write drafts.' },
      { role: 'user', content: 'Write about rain' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'w1', type: 'function', function: { name: 'add_numbers', arguments: '{"a":1,"b":2}' } }],
      },
      { role: 'tool', tool_call_id: 'w1', content: '3' },
      { role: 'assistant', content: 'Draft one' },
      { role: 'user', content: 'Make it longer.' },
    ]);
    expect(progress).toContain('reviewer: checking the draft');
    expect(progress).toContain('writer: step 1, calling the model');

    const stored = await h.agentport.runtime.store.listMessages(threadIdOf(result));
    expect(stored.map((m) => `${m.side}:${m.role}`)).toEqual([
      'a:user',
      'a:assistant',
      'a:tool',
      'a:assistant',
      'b:assistant',
      'b:tool',
      'b:assistant',
      'a:assistant',
      'a:tool',
    ]);
  });

  it('[AG-2] [SA-7] ends as an error with the bound message when a side calls sessionFail', async () => {
    h.model.reply({ text: 'A draft' }, { toolCalls: [{ name: 'give_up', arguments: { message: 'This cannot be reviewed.' } }] });
    const result = await h.call('review_loop', { message: 'Write' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe('This cannot be reviewed.\nWhat was done: give_up (success)');
    expect(errorOf(result)).toEqual({ code: 'SESSION_FAILED', message: 'This cannot be reviewed.', data: { side: 'b' } });
  });

  it('[AG-2] [SA-7] ends as an error that says so when maxSessionTurns is reached', async () => {
    h.model.reply({ text: 'd1' }, { text: 'r1' }, { text: 'd2' }, { text: 'r2' });
    const result = await h.call('review_loop', { message: 'Write' });
    expect(result.isError).toBe(true);
    expect(errorOf(result)).toMatchObject({ code: 'SESSION_TURN_LIMIT', data: { maxSessionTurns: 4, last: { a: 'd2', b: 'r2' } } });
    expect(textOf(result)).toBe(
      'the session reached maxSessionTurns (4) without a side ending it (last from writer: "d2"; last from reviewer: "r2")',
    );
    expect(h.sent()).toHaveLength(4);
    expect(h.sent()[3]!.messages).toEqual([
      { role: 'system', content: 'You review drafts.' },
      { role: 'user', content: 'd1' },
      { role: 'assistant', content: 'r1' },
      { role: 'user', content: 'd2' },
    ]);
  });

  it('[AG-2] [SA-7] ends as a STEP_LIMIT error when a side exceeds its maxSteps', async () => {
    h.model.reply(
      { text: 'draft' },
      { toolCalls: [{ name: 'add_numbers', arguments: { a: 1, b: 1 } }] },
      { toolCalls: [{ name: 'add_numbers', arguments: { a: 2, b: 2 } }] },
    );
    const result = await h.call('limited_loop', { message: 'Write' });
    expect(result.isError).toBe(true);
    expect(errorOf(result)).toEqual({
      code: 'STEP_LIMIT',
      message: 'reviewer took 2 steps in one turn without finishing it',
      data: { side: 'b', maxSteps: 2 },
    });
    expect(textOf(result)).toContain('What was done: add_numbers (success), add_numbers (success)');
    expect(h.sent()).toHaveLength(3);
  });

  it('[AG-1] continues an agent session by thread_id, each side seeing the earlier session its way', async () => {
    h.model.reply({ text: 'rain draft' }, { toolCalls: [{ name: 'give_up', arguments: { message: 'no' } }] });
    const first = await h.call('review_loop', { message: 'Write about rain' });
    const threadId = threadIdOf(first);
    h.model.reply({ toolCalls: [{ name: 'finish', arguments: { final: 'snow text', files: ['/attachments/snow.md'] } }] });
    const second = await h.call('review_loop', { message: 'Now about snow', thread_id: threadId });
    expect(threadIdOf(second)).toBe(threadId);
    expect(textOf(second)).toBe('snow text');
    expect(second.structuredContent).toMatchObject({ response: 'snow text', attachments: ['/attachments/snow.md'] });
    // The writer has includeChat: the earlier session is there (B's give_up call is not).
    expect(h.sent()[2]!.messages).toEqual([
      { role: 'system', content: 'You write drafts.' },
      { role: 'user', content: 'Write about rain' },
      { role: 'assistant', content: 'rain draft' },
      { role: 'user', content: 'Now about snow' },
    ]);
  });
});

describe('requests from hooks and tools', () => {
  it('[AG-4] execution.stop() from a hook ends the session even when the step ended with a text answer', async () => {
    h.model.reply({ text: 'draft' }, { text: 'DONE' });
    const result = await h.call('hooked_loop', { message: 'go' });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe('DONE');
    expect(result.structuredContent).toMatchObject({ turns: 2 });
  });

  it('[AG-4] execution.forceTurn() hands the next turn to the named side', async () => {
    h.model.reply({ text: 'AGAIN' }, { text: 'DONE' });
    const result = await h.call('hooked_loop', { message: 'go' });
    expect(textOf(result)).toBe('DONE');
    // Both requests went to side A (the writer): B never took a turn.
    expect(h.sent().map((r) => r.messages[0]!.content)).toEqual(['You write drafts.', 'You write drafts.']);
  });

  it('[AG-4] a queued call of the sessionStop tool ends the session when its side next steps', async () => {
    h.model.reply({ text: 'QUEUE FINISH' }, { text: 'looks fine' });
    const result = await h.call('hooked_loop', { message: 'go' });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe('finished from the queue');
    expect(h.sent()).toHaveLength(2);
    const stored = await h.agentport.runtime.store.listMessages(threadIdOf(result));
    expect(stored.slice(-2).map((m) => `${m.side}:${m.role}`)).toEqual(['a:assistant', 'a:tool']);
  });

  it('[AG-4] a message queued in the last step starts a turn of its own once the session is over', async () => {
    h.model.reply({ text: 'QUEUE LATE' }, { text: 'DONE' }, { text: 'DONE' });
    const result = await h.call('hooked_loop', { message: 'go' });
    expect(textOf(result)).toBe('DONE');
    await expect.poll(() => h.sent().length, { timeout: 5000 }).toBe(3);
    expect(h.sent()[2]!.messages.at(-1)).toEqual({ role: 'user', content: 'a late note' });
    await expect.poll(async () => (await h.agentport.runtime.store.getThread(threadIdOf(result)))?.status, { timeout: 5000 }).toBe('idle');
  });

  it('[AG-5] a hook that returns the wrong shape is reported and the data kept', async () => {
    h.model.reply({ toolCalls: [{ id: 'n', name: 'add_numbers', arguments: { a: 1, b: 1 } }] }, { text: 'DONE' });
    await h.call('hooked_loop', { message: 'go' });
    expect(h.sent()[1]!.messages.find((m) => m.role === 'tool')!.content).toBe('2');
    expect(
      h.agentport.logs.some((line) =>
        line.includes(
          'hook "legacy_shape" (before_store_tool_result) returned an object of another shape, not what this point takes; data kept unchanged',
        ),
      ),
    ).toBe(true);
  });
});

describe('ai_human stop rules', () => {
  it('[AG-3] ends the turn when the stop tool is called; stopToolResponseProperty is the response', async () => {
    h.model.reply(
      { toolCalls: [{ name: 'add_numbers', arguments: { a: 40, b: 2 } }] },
      { text: 'I will hand in now.', toolCalls: [{ name: 'hand_in', arguments: { answer: '42' } }] },
    );
    const result = await h.call('stopper', { message: 'What is 40+2?' });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe('42');
    expect(toolNames(h.sent()[0]!)).toEqual(['add_numbers', 'hand_in']);
    expect(h.sent()[0]!.tools!.find((t) => t.function.name === 'hand_in')!.function.parameters).toEqual({
      type: 'object',
      properties: { answer: { type: 'string', description: 'Your response for this turn.' } },
      required: ['answer'],
      additionalProperties: false,
    });
  });

  it('[AG-3] with stopOnResponse false, a text answer does not end the turn', async () => {
    h.model.reply({ text: 'Still thinking.' }, { toolCalls: [{ name: 'done', arguments: {} }] });
    const result = await h.call('persistent', { message: 'Think' });
    expect(textOf(result)).toBe('Still thinking.');
    expect(h.sent()[1]!.messages.at(-1)).toEqual({ role: 'assistant', content: 'Still thinking.' });
  });

  it('[AG-3] with stopOnResponse true (the default), a text answer ends the turn', async () => {
    h.model.reply({ text: 'Done already.' });
    const result = await h.call('stopper', { message: 'Quick one' });
    expect(textOf(result)).toBe('Done already.');
    expect(h.sent()).toHaveLength(1);
  });
});

describe('error codes', () => {
  it('[AG-6] carries the code of a call that cannot run', async () => {
    const result = await h.call('state_user', { task: 'x', thread_id: 'no-such-thread' });
    expect(result.isError).toBe(true);
    expect(errorOf(result)).toMatchObject({ code: 'THREAD_NOT_FOUND' });
    const invalid = await h.call('state_user', { task: 3 });
    expect(errorOf(invalid)).toMatchObject({ code: 'INVALID_ARGUMENTS', data: { fields: ['task'] } });
  });

  it('[AG-6] carries MODEL_FAILED when the model keeps failing', async () => {
    h.model.reply({ status: 500, error: 'boom' });
    const result = await h.call('stopper', { message: 'x' });
    expect(result.isError).toBe(true);
    expect(errorOf(result)).toMatchObject({ code: 'MODEL_FAILED' });
    expect(textOf(result)).toContain('boom');
  });
});
