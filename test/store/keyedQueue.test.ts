/** The per-thread queue both persisting stores order their operations with (src/store/internal.ts). */
import { describe, expect, it } from 'vitest';
import { KeyedQueue } from '../../src/store/internal.js';

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('[ST-1] KeyedQueue', () => {
  it('runs the tasks of one key one at a time, in order, even one a running task queues on its own key', async () => {
    const queue = new KeyedQueue();
    const order: string[] = [];
    let running = 0;
    let overlapped = false;
    const task = (name: string, more?: () => void) => async () => {
      more?.();
      running += 1;
      if (running > 1) overlapped = true;
      order.push(name);
      await tick();
      running -= 1;
    };
    const all: Array<Promise<void>> = [];
    all.push(
      queue.run(
        'k',
        task('first', () => all.push(queue.run('k', task('queued by first')))),
      ),
    );
    all.push(queue.run('k', task('second')));
    await tick();
    all.push(queue.run('k', task('third')));
    await Promise.all(all);
    await Promise.all(all);
    expect(overlapped).toBe(false);
    expect(order).toEqual(['first', 'second', 'queued by first', 'third']);
  });

  it('runs other keys alongside, goes on after a failure, and forgets a key once its tasks have settled', async () => {
    const queue = new KeyedQueue();
    let together = 0;
    let most = 0;
    const task = async () => {
      together += 1;
      most = Math.max(most, together);
      await tick();
      together -= 1;
    };
    const failing = queue.run('a', () => Promise.reject(new Error('no')));
    const after = queue.run('a', async () => 'ran');
    await Promise.all([queue.run('b', task), queue.run('c', task)]);
    expect(most).toBe(2);
    await expect(failing).rejects.toThrow('no');
    await expect(after).resolves.toBe('ran');
    await queue.idle();
    expect((queue as unknown as { tails: Map<string, unknown> }).tails.size).toBe(0);
  });
});
