/**
 * The caller a request runs for (src/runtime/run/owner.ts): what a request
 * starts sees its caller, across awaits; "nobody" inside someone's request is
 * nobody, and on a server with one user the work runs as it is.
 */
import { describe, expect, it } from 'vitest';
import { asCaller, currentCaller } from '../../src/runtime/run/owner.js';

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

describe('the caller of a request', () => {
  it('is seen by everything the request starts, and by nothing else', async () => {
    const seen = await Promise.all([
      asCaller('alice', async () => {
        await tick();
        return currentCaller();
      }),
      asCaller('bob', async () => {
        await tick();
        return [currentCaller(), await asCaller(undefined, async () => (await tick(), currentCaller()))];
      }),
      asCaller(undefined, async () => (await tick(), currentCaller())),
    ]);
    expect(seen).toEqual(['alice', ['bob', undefined], undefined]);
    expect(currentCaller()).toBeUndefined();
  });

  it('runs work for nobody as it is, returning what it returns', () => {
    expect(asCaller(undefined, () => 42)).toBe(42);
    expect(() =>
      asCaller(undefined, () => {
        throw new Error('its own');
      }),
    ).toThrow('its own');
  });
});
