/**
 * The file store's per-thread turn lock: exclusive, released by its owner,
 * taken over when its owner is gone, and THREAD_BUSY after the wait.
 */
import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileStore } from '../../src/store/fileStore.js';

describe('thread lock', () => {
  it('[RL-5] is exclusive, then free once released', async () => {
    const store = new FileStore({ dir: mkdtempSync(path.join(tmpdir(), 'lock-')) });
    const thread = await store.createThread({ prompt: 'p' });
    const release = await store.lockThread(thread.id, 1000);
    await expect(store.lockThread(thread.id, 100)).rejects.toMatchObject({
      code: 'THREAD_BUSY',
      message: expect.stringContaining(`is busy in another process (pid ${process.pid}`),
    });
    await release();
    const again = await store.lockThread(thread.id, 100);
    await again();
  });

  it('[RL-5] takes over a lock whose process is gone', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'lock-'));
    const store = new FileStore({ dir });
    const thread = await store.createThread({ prompt: 'p' });
    mkdirSync(path.join(dir, 'locks'), { recursive: true });
    // A pid that cannot be alive (above the usual pid_max).
    writeFileSync(path.join(dir, 'locks', `${thread.id}.lock`), JSON.stringify({ pid: 99_999_999, host: hostname(), since: 'then' }));
    const release = await store.lockThread(thread.id, 100);
    await release();
  });

  it('[RL-5] takes over a lock with its own pid that it does not hold (a restarted container)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'lock-'));
    const store = new FileStore({ dir });
    const thread = await store.createThread({ prompt: 'p' });
    mkdirSync(path.join(dir, 'locks'), { recursive: true });
    writeFileSync(
      path.join(dir, 'locks', `${thread.id}.lock`),
      JSON.stringify({ pid: process.pid, host: hostname(), since: 'an earlier life' }),
    );
    const release = await store.lockThread(thread.id, 100);
    await release();
  });
});
