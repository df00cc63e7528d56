/**
 * Tool timeouts: the server default, a tool's own timeoutMs; a timed-out
 * tool is an error result the model reads and its abort signal fires.
 */
import { describe, expect, it } from 'vitest';
import { textOf } from '../support/inProcess.js';
import { useRuntimeHarness } from './harness.js';

const h = useRuntimeHarness({}, { toolTimeoutMs: 300 });
const fired: string[] = ((globalThis as { __hangAborts?: string[] }).__hangAborts ??= []);

describe('tool timeouts', () => {
  it('[RL-3] stops a hung tool at the server default, fires its abort signal, and the run goes on', async () => {
    fired.length = 0;
    h.model.reply({ toolCalls: [{ name: 'hang_forever', arguments: {} }] }, { text: 'moved on' });
    const started = Date.now();
    const result = await h.call('hanger', { message: 'go' });
    expect(textOf(result)).toBe('moved on');
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(h.sent()[1]!.messages.at(-1)).toMatchObject({
      role: 'tool',
      content: 'Error: hang_forever did not finish within 0.3 s: it was stopped. Try again with a smaller task, or go on without it.',
    });
    expect(fired).toEqual(['hang_forever timed out']);
  });

  it("[RL-3] a tool's own timeoutMs wins over the default", async () => {
    h.model.reply({ toolCalls: [{ name: 'hang_short', arguments: {} }] }, { text: 'ok' });
    await h.call('hanger', { message: 'go' });
    expect(String(h.sent()[1]!.messages.at(-1)!.content)).toBe('Error: hang_short did not finish within 0.1 s: it was stopped. Try again with a smaller task, or go on without it.');
  });
});
