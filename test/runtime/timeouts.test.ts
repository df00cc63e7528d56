/**
 * Tool timeouts: the server default, a tool's own timeoutMs; a timed-out
 * tool is an error result the model reads and its abort signal fires.
 */
import { describe, expect, it } from 'vitest';
import { startInProcess, textOf } from '../support/inProcess.js';
import { RUNTIME_AGENTS, useRuntimeHarness } from './harness.js';

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
    expect(String(h.sent()[1]!.messages.at(-1)!.content)).toBe(
      'Error: hang_short did not finish within 0.1 s: it was stopped. Try again with a smaller task, or go on without it.',
    );
  });

  it('[RL-3] stops a whole run at --run-timeout with RUN_TIMEOUT, even inside a model call', async () => {
    const limited = await startInProcess({
      agentsDir: RUNTIME_AGENTS,
      env: { OPENAI_BASE_URL: h.model.baseURL, OPENAI_API_KEY: 'k' },
      runtime: { runTimeoutMs: 300 },
    });
    try {
      const client = await limited.connect();
      h.model.reply({ text: 'too late', delayMs: 1000 });
      const result = await client.callTool({ name: 'forgetful', arguments: { message: 'slow' } });
      expect(result.isError).toBe(true);
      expect((result.structuredContent as { error: { code: string } }).error.code).toBe('RUN_TIMEOUT');
      expect(textOf(result)).toBe('the run took longer than 0.3 s (--run-timeout) and was stopped');
    } finally {
      await limited.close();
    }
  });
});
