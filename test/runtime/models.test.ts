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
    h.model.reply({ status: 500, error: 'boom' }, { status: 500, error: 'boom' }, { status: 500, error: 'boom' }, { text: 'from the backup' });
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
});
