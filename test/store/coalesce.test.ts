import { describe, expect, it } from 'vitest';
import { Coalescer } from '../../src/store/postgres/coalesce.js';

/** A sender whose statements stay on their way until released. */
function heldSender() {
  const sent: Array<{ kind: 'one' | 'many'; items: number[] }> = [];
  const holds: Array<() => void> = [];
  const hold = () => new Promise<void>((resolve) => holds.push(resolve));
  const coalescer = new Coalescer<number, string>(
    async (items) => {
      sent.push({ kind: 'many', items });
      await hold();
      if (items.includes(13)) throw new Error('refused');
      return items.map((n) => `r${n}`);
    },
    async (item) => {
      sent.push({ kind: 'one', items: [item] });
      await hold();
      if (item === 13) throw new Error('thirteen');
      return `r${item}`;
    },
  );
  const release = async () => {
    while (holds.length === 0) await new Promise((resolve) => setImmediate(resolve));
    holds.shift()!();
  };
  return { coalescer, sent, release };
}

describe('Coalescer (writes of concurrent calls sent together)', () => {
  it('sends a lone write at once, on its own', async () => {
    const { coalescer, sent, release } = heldSender();
    const result = coalescer.submit(1);
    await release();
    expect(await result).toBe('r1');
    expect(sent).toEqual([{ kind: 'one', items: [1] }]);
  });

  it('sends the writes submitted while one is on its way as one statement, answering each its own', async () => {
    const { coalescer, sent, release } = heldSender();
    const first = coalescer.submit(1);
    const later = [coalescer.submit(2), coalescer.submit(3), coalescer.submit(4)];
    await release();
    await release();
    expect(await first).toBe('r1');
    expect(await Promise.all(later)).toEqual(['r2', 'r3', 'r4']);
    expect(sent).toEqual([
      { kind: 'one', items: [1] },
      { kind: 'many', items: [2, 3, 4] },
    ]);
  });

  it('lets the writes behind a statement that hangs leave beside it once it has stalled', async () => {
    const coalescer = new Coalescer<number, string>(
      async (items) => items.map((n) => `r${n}`),
      (item) => (item === 1 ? new Promise<string>(() => {}) : Promise.resolve(`r${item}`)),
      () => true,
      50,
    );
    void coalescer.submit(1);
    const started = performance.now();
    expect(await Promise.all([coalescer.submit(2), coalescer.submit(3)])).toEqual(['r2', 'r3']);
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
    // Later ones do not wait for the stalled statement either.
    expect(await coalescer.submit(4)).toBe('r4');
  });

  it('sends a refused statement again one write at a time: only the bad write fails', async () => {
    const { coalescer, sent, release } = heldSender();
    const first = coalescer.submit(1);
    const later = [coalescer.submit(12), coalescer.submit(13), coalescer.submit(14)].map((p) =>
      p.then(
        (value) => ({ value }),
        (error: Error) => ({ error: error.message }),
      ),
    );
    for (let i = 0; i < 5; i++) await release();
    await first;
    expect(await Promise.all(later)).toEqual([{ value: 'r12' }, { error: 'thirteen' }, { value: 'r14' }]);
    expect(sent.map((s) => s.kind)).toEqual(['one', 'many', 'one', 'one', 'one']);
  });

  it('fails every write of a batch that failed for another reason (a timeout) at once, none sent again', async () => {
    const sent: Array<{ kind: 'one' | 'many'; items: number[] }> = [];
    let holdFirst!: () => void;
    const coalescer = new Coalescer<number, string>(
      async (items) => {
        sent.push({ kind: 'many', items });
        throw Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
      },
      async (item) => {
        sent.push({ kind: 'one', items: [item] });
        if (item === 1) await new Promise<void>((resolve) => (holdFirst = resolve));
        return `r${item}`;
      },
      (error) => (error as { code?: string }).code?.startsWith('23') === true,
    );
    const first = coalescer.submit(1);
    const later = [coalescer.submit(2), coalescer.submit(3)].map((p) => p.catch((error: Error) => error.message));
    holdFirst();
    expect(await first).toBe('r1');
    expect(await Promise.all(later)).toEqual([
      'canceling statement due to statement timeout',
      'canceling statement due to statement timeout',
    ]);
    expect(sent).toEqual([
      { kind: 'one', items: [1] },
      { kind: 'many', items: [2, 3] },
    ]);
  });
});
