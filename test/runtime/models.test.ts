/**
 * Model calls: retries with backoff, fallbacks, clear failures.
 */
import { describe, expect, it } from 'vitest';
import { textOf } from '../support/inProcess.js';
import { useRuntimeHarness } from './harness.js';

const h = useRuntimeHarness();

describe('model calls', () => {
  it('retries a 429 with backoff and then succeeds', async () => {
    h.model.reply({ status: 429, error: 'slow down' }, { status: 503, error: 'overloaded' }, { text: 'third time lucky' });
    const result = await h.call('forgetful', { message: 'hi' });
    expect(textOf(result)).toBe('third time lucky');
    expect(h.sent().map((r) => r.model)).toEqual(['test-model', 'test-model', 'test-model']);
  });

  it('falls back to the next model when retries are exhausted', async () => {
    h.model.reply(
      { status: 500, error: 'boom' },
      { status: 500, error: 'boom' },
      { status: 500, error: 'boom' },
      { text: 'from the backup' },
    );
    const result = await h.call('forgetful', { message: 'hi' });
    expect(textOf(result)).toBe('from the backup');
    expect(h.sent().map((r) => r.model)).toEqual(['test-model', 'test-model', 'test-model', 'backup-model']);
  });

  it('falls back at once on a non-retryable error, and reports every failure when all fail', async () => {
    h.model.reply({ status: 400, error: 'bad request' }, { status: 401, error: 'bad key' });
    const result = await h.call('forgetful', { message: 'hi' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe('model "test" failed: 400 bad request; fallbacks failed too (backup: 401 bad key)');
    expect(h.sent().map((r) => r.model)).toEqual(['test-model', 'backup-model']);
  });

  it('does not retry a model configured with maxRetries 0', async () => {
    h.model.reply({ status: 503, error: 'down' });
    const result = await h.call('solo_prompt', { message: 'hi' });
    expect(textOf(result)).toBe('model "solo" failed: 503 down');
  });

  it('[RL-3] retries a model request that timed out, like a 5xx', async () => {
    h.model.reply({ text: 'too late', delayMs: 600 }, { text: 'in time' });
    const result = await h.call('impatient', { message: 'hi' });
    expect(textOf(result)).toBe('in time');
    expect(h.sent()).toHaveLength(2);
  });

  it('[RL-8] retries a choice without a message, an answer that is not JSON and one without choices, then reports them clearly', async () => {
    h.model.reply(
      { raw: JSON.stringify({ id: 'x', object: 'chat.completion', choices: [{ index: 0, message: null, finish_reason: 'stop' }] }) },
      { raw: '{"id": "trunc' },
      { text: 'recovered' },
    );
    expect(textOf(await h.call('forgetful', { message: 'hi' }))).toBe('recovered');
    h.model.reply({ raw: JSON.stringify({ choices: [{ message: null }] }) });
    const failed = await h.call('solo_prompt', { message: 'hi' });
    expect(failed.isError).toBe(true);
    expect(textOf(failed)).toBe('model "solo" failed: the server answered with a choice that has no message');
    expect((failed.structuredContent as { error: { code: string } }).error.code).toBe('MODEL_FAILED');
  });

  it('[RL-8] reports malformed tool attachments one by one; the good file is kept and the thread stays usable', async () => {
    h.model.reply({ toolCalls: [{ name: 'bad_attachments', arguments: {} }] }, { text: 'noted' });
    const result = await h.call('calculator', { message: 'files' });
    expect(textOf(result)).toBe('noted');
    const tool = h.sent()[1]!.messages.find((m) => m.role === 'tool')!;
    expect(tool.content).toBe(
      'Error: attachment 1 refused: it is null, not an object; attachment 2 refused: name must be a file name (not empty, ".", ".." or a path), got ""; attachment 3 refused: name must be a file name (not empty, ".", ".." or a path), got "."',
    );
    const threadId = (result.structuredContent as { thread_id: string }).thread_id;
    expect((await h.agentport.runtime.store.listFiles(threadId)).map((f) => f.path)).toEqual(['/attachments/ok.txt']);
    h.model.reply({ toolCalls: [{ name: 'bad_attachments', arguments: {} }] }, { text: 'again' });
    expect(textOf(await h.call('calculator', { message: 'again', thread_id: threadId }))).toBe('again');
    expect((await h.agentport.runtime.store.listFiles(threadId)).map((f) => f.path)).toEqual([
      '/attachments/ok-2.txt',
      '/attachments/ok.txt',
    ]);
  });
});
