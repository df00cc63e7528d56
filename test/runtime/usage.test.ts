/**
 * Token usage and cost (MC-12): each model call's usage from the provider,
 * priced by the answering model, summed over a run (sub-prompts included),
 * in the result's _meta, in the run's log messages, and per thread in
 * run_status.
 */
import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { FIXTURES } from '../support/paths.js';
import { useRuntimeHarness } from './harness.js';

describe('[MC-12] usage and cost', () => {
  const h = useRuntimeHarness({}, {}, path.join(FIXTURES, 'agents', 'usage'));

  it('sums a two-step run with a sub-prompt, prices what is priced, and keeps the thread total', async () => {
    h.model.replyToSystem('You help.', { text: 'helped', usage: { prompt_tokens: 50, completion_tokens: 20 } });
    h.model.reply(
      {
        toolCalls: [
          { name: 'add_numbers', arguments: { a: 1, b: 2 } },
          { name: 'helper', arguments: { message: 'help' } },
        ],
        usage: { prompt_tokens: 1000, completion_tokens: 100, cached_tokens: 400 },
      },
      { text: 'three', usage: { prompt_tokens: 1200, completion_tokens: 30 } },
    );
    const result = await h.call('adder', { message: 'add' });
    // priced: (600 * 2 + 400 * 0.5 + 100 * 8) / 1e6 + (1200 * 2 + 30 * 8) / 1e6 = 0.0022 + 0.00264
    expect(result._meta?.['agentport/usage']).toEqual({
      modelCalls: 3,
      inputTokens: 2250,
      outputTokens: 150,
      cachedTokens: 400,
      costUsd: 0.00484,
      unpricedCalls: 1,
    });
    const thread = (result.structuredContent as { thread_id: string }).thread_id;

    h.model.reply({ text: 'again', usage: { prompt_tokens: 100, completion_tokens: 10 } });
    await h.call('adder', { message: 'once more', thread_id: thread });
    const status = await h.call('run_status', { thread_id: thread });
    // The thread's total: both calls of the adder's model, and the helper's own thread is its own.
    expect((status.structuredContent as { thread_usage: unknown }).thread_usage).toEqual({
      modelCalls: 3,
      inputTokens: 2300,
      outputTokens: 140,
      cachedTokens: 400,
      costUsd: 0.00512,
    });
  });
});
