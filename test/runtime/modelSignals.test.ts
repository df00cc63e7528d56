/**
 * The signal a provider call gets: a run makes many model calls on one
 * signal, and HTTP clients (openai's among them) leave an abort listener on
 * every signal they are given.
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { ModelDefinition, ModelProvider, ModelRequest } from '../../src/definitions/types.js';
import { callModel } from '../../src/models/callModel.js';
import { ModelResolver } from '../../src/models/resolveModel.js';

/** A provider like openai's client: a listener on each signal it gets, never removed; it answers when told. */
function leakyProvider() {
  const signals: AbortSignal[] = [];
  let answer: (() => void) | undefined;
  const provider: ModelProvider = {
    complete(_request, { signal }) {
      signals.push(signal!);
      return new Promise((resolve, reject) => {
        signal!.addEventListener('abort', () => reject(signal!.reason as Error), { once: true });
        answer = () => resolve({ text: 'ok', toolCalls: [] });
      });
    },
  };
  return { provider, signals, answer: () => answer?.() };
}

function resolverFor(provider: ModelProvider): ModelResolver {
  const definition: ModelDefinition = { name: 'm', provider, model: 'm', maxRetries: 0 };
  return new ModelResolver(new Map([['m', { definition }]]), {});
}

const request = (model: ModelDefinition): ModelRequest => ({ model: model.model, messages: [{ role: 'user', content: 'hi' }] });

describe('the signal of a model call', () => {
  it('leaves few listeners on a run signal after many calls, and every call still stops with the run', async () => {
    const leaky = leakyProvider();
    const resolver = resolverFor(leaky.provider);
    const run = new AbortController();
    for (let i = 0; i < 40; i++) {
      const call = callModel(resolver, 'm', request, { signal: run.signal });
      leaky.answer();
      await call;
    }
    // Listeners the client left on the run's own signal: a handful, not one per call (Node warns past 10).
    expect(getEventListeners(run.signal, 'abort').length).toBeLessThanOrEqual(3);
    expect(leaky.signals.filter((s) => s === run.signal).length).toBeLessThanOrEqual(3);

    const last = callModel(resolver, 'm', request, { signal: run.signal });
    run.abort(new Error('the caller cancelled'));
    await expect(last).rejects.toThrow();
    expect(leaky.signals.at(-1)!.aborted).toBe(true);
  });

  it('a first call takes the run signal itself and stops when it aborts', async () => {
    const leaky = leakyProvider();
    const run = new AbortController();
    const call = callModel(resolverFor(leaky.provider), 'm', request, { signal: run.signal });
    expect(leaky.signals).toEqual([run.signal]);
    run.abort(new Error('stop'));
    await expect(call).rejects.toThrow();
  });
});
