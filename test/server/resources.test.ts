/**
 * Subscription updates over HTTP go only to those who may see the thread
 * (resources.ts, CallerBus): one whose record cannot be read is told to
 * nobody, and the operator is told why.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ServerEvent } from '@modelcontextprotocol/server';
import type { Runtime } from '../../src/runtime/runtime.js';
import { ThreadResources } from '../../src/server/resources.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('resource updates of a thread', () => {
  it('reach subscribers while its record reads, and are logged, not sent, when it cannot be read', async () => {
    let broken = false;
    let changed: ((threadId: string) => void) | undefined;
    const runtime = {
      store: {
        getThread: async (id: string) => {
          if (broken) throw new Error('disk gone');
          return { id, prompt: 'p', createdAt: '', updatedAt: '', status: 'idle', meta: { owner: 'alice' } };
        },
      },
      watchThreads: (listener: (threadId: string) => void) => {
        changed = listener;
        return () => {};
      },
    } as unknown as Runtime;
    const resources = new ThreadResources(() => Promise.resolve(runtime));
    resources.attach(runtime);
    const events: ServerEvent[] = [];
    resources.bus.subscribe((event) => events.push(event));
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);

    changed!('t1');
    await expect.poll(() => events.length).toBe(2);
    expect(events).toEqual([
      { kind: 'resource_updated', uri: 'agentport://threads/t1' },
      { kind: 'resource_updated', uri: 'agentport://threads/t1/messages' },
    ]);

    broken = true;
    changed!('t2');
    const warned = () => stderr.mock.calls.map((call) => String(call[0])).join('');
    await expect.poll(warned).toContain('resource updates of thread t2 not sent: its record could not be read (disk gone)');
    expect(events).toHaveLength(2);
  });
});
