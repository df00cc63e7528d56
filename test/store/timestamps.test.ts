import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryStore } from '../../src/store/memoryStore.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('record timestamps', () => {
  it('are ISO 8601 in UTC with milliseconds, as toISOString writes them, across milliseconds and seconds', async () => {
    const store = new MemoryStore();
    vi.useFakeTimers({ toFake: ['Date'] });
    const times = [
      Date.UTC(2026, 10, 26, 23, 59, 59, 999),
      Date.UTC(2026, 10, 27, 0, 0, 0, 0),
      Date.UTC(2026, 10, 27, 0, 0, 0, 7),
      Date.UTC(2026, 10, 27, 0, 0, 0, 42),
      Date.UTC(2026, 10, 27, 0, 0, 0, 420),
      Date.UTC(2026, 10, 27, 0, 0, 1, 5),
      Date.UTC(1999, 0, 1, 12, 30, 15, 100),
    ];
    for (const ms of times) {
      vi.setSystemTime(ms);
      const thread = await store.createThread({ prompt: 'p' });
      const message = await store.appendMessage(thread.id, { role: 'user', content: 'x' });
      expect([thread.createdAt, message.createdAt]).toEqual([new Date(ms).toISOString(), new Date(ms).toISOString()]);
    }
  });
});
