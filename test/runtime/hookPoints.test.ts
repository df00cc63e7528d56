/**
 * All twelve hook points: each loads, fires once at its point with ThreadState
 * first and its data, and may transform or recover where the point allows.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadRegistryOrThrow } from '../../src/registry/load.js';
import { HOOK_NAMES } from '../../src/definitions/schemas.js';
import { textOf } from '../support/inProcess.js';
import { FIXTURES } from '../support/paths.js';
import { threadIdOf, useRuntimeHarness } from './harness.js';

const AGENTS = path.join(FIXTURES, 'agents', 'sessions');
const h = useRuntimeHarness({}, {}, AGENTS);
type Entry = { point: string; thread: string; data: unknown };
const hookLog: Entry[] = ((globalThis as { __hookLog?: Entry[] }).__hookLog ??= []);

describe('hook points', () => {
  it('[AG-5] loads a hook for each of the twelve names', async () => {
    const registry = await loadRegistryOrThrow({ agentsDir: AGENTS });
    const points = [...new Set([...registry.hooks.values()].map((hook) => hook.definition.hook))].sort();
    expect(points).toEqual([...HOOK_NAMES].sort());
    expect(points).toHaveLength(12);
  });

  it('[AG-5] [PR-14] fires each point once with ThreadState first and its data; transforms, replaces and recovers', async () => {
    hookLog.length = 0;
    h.model.reply(
      {
        toolCalls: [
          { id: 's', name: 'add_numbers', arguments: { a: 2, b: 2 } },
          { id: 'f', name: 'fail_tool', arguments: {} },
          { id: 'u', name: 'state_probe', arguments: { op: 'update', input: 'new words' } },
        ],
      },
      { text: 'all done' },
    );
    const result = await h.call('hooked_all', { message: 'hello' });
    expect(textOf(result)).toBe('all done');
    const threadId = threadIdOf(result);
    const [first, second] = h.sent();

    // after_system_message transformed the system prompt; before_create_message tagged the user message.
    expect(first!.messages).toEqual([
      { role: 'system', content: 'You are observed.\nAlways be brief.' },
      { role: 'user', content: 'hello [seen]' },
    ]);
    // after_tool_call_success replaced a result; after_tool_call_failure recovered from the error;
    // before_update_message edited the update (the first message, the user's).
    expect(second!.messages[1]).toEqual({ role: 'user', content: 'new words (edited)' });
    expect(second!.messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual([
      '4 (verified)',
      'recovered from: the widget is jammed',
      '"new words (edited)"',
    ]);

    const once = (point: string) => hookLog.filter((e) => e.point === point);
    for (const entry of hookLog) expect(entry.thread).toBe(threadId);
    expect(once('after_thread_created')).toEqual([
      { point: 'after_thread_created', thread: threadId, data: { id: threadId, prompt: 'hooked_all' } },
    ]);
    expect(once('after_system_message').map((e) => e.data)).toEqual(['You are observed.']);
    expect(once('before_update_message').map((e) => e.data)).toEqual([
      { messageId: expect.any(String), updates: { content: 'new words' } },
    ]);
    expect(once('after_update_message').map((e) => e.data)).toEqual(['new words (edited)']);
    expect(once('after_tool_call_failure').map((e) => e.data)).toEqual([{ tool: 'fail_tool', error: 'the widget is jammed' }]);
    expect(once('after_tool_call_success').map((e) => e.data)).toEqual([
      { tool: 'add_numbers', args: { a: 2, b: 2 }, result: '4' },
      { tool: 'state_probe', args: { op: 'update', input: 'new words' }, result: '"new words (edited)"' },
    ]);
    expect(once('before_store_tool_result').map((e) => e.data)).toEqual([
      { tool: 'add_numbers', status: 'success' },
      { tool: 'fail_tool', status: 'success' },
      { tool: 'state_probe', status: 'success' },
    ]);
    // Two steps: filter_messages and prefilter_llm_history once per step.
    expect(once('filter_messages').map((e) => e.data)).toEqual([['user'], ['user', 'assistant', 'tool', 'tool', 'tool']]);
    expect(once('prefilter_llm_history').map((e) => e.data)).toEqual([2, 6]);
    // user, assistant, three tool results, final assistant.
    expect(once('before_create_message').map((e) => e.data)).toEqual(['user', 'assistant', 'tool', 'tool', 'tool', 'assistant']);
    expect(once('after_create_message').map((e) => e.data)).toEqual([1, 2, 3, 4, 5, 6]);
    // after_subagent_created belongs to subagents: it loads, and has nothing to fire on here.
    expect(once('after_subagent_created')).toEqual([]);
  });
});
