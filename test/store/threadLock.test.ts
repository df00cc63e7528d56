/**
 * The file store's per-thread turn lock: exclusive, released by its owner,
 * taken over when its owner is gone, and THREAD_BUSY after the wait. A holder
 * whose lock was taken over (or removed) is told, as THREAD_LOCK_LOST.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync, mkdirSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { AgentportError } from '../../src/errors.js';
import { FileStore } from '../../src/store/fileStore.js';

/** Leaves a lock's heartbeat a minute old, as a holder that was paused (or could not write it) does. */
function ageLock(dir: string, threadId: string): void {
  const old = new Date(Date.now() - 60_000);
  utimesSync(path.join(dir, 'locks', `${threadId}.lock`), old, old);
}

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

  it('[ST-4] tells the holder when another process took its lock over, or its lock file was removed', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'lock-'));
    const store = new FileStore({ dir });
    // A second store on the same folder takes locks as another process does.
    const other = new FileStore({ dir });
    const taken = await store.createThread({ prompt: 'p' });
    const removed = await store.createThread({ prompt: 'p' });
    const lost = new Map<string, AgentportError>();
    const releaseTaken = await store.lockThread(taken.id, 1000, (error) => lost.set(taken.id, error));
    await store.lockThread(removed.id, 1000, (error) => lost.set(removed.id, error));
    ageLock(dir, taken.id);
    const releaseOther = await other.lockThread(taken.id, 1000);
    rmSync(path.join(dir, 'locks', `${removed.id}.lock`));
    // The next heartbeat (every 5 s) finds out.
    await expect.poll(() => lost.size, { timeout: 10_000 }).toBe(2);
    expect(lost.get(taken.id)).toMatchObject({
      code: 'THREAD_LOCK_LOST',
      data: { threadId: taken.id },
      message: expect.stringContaining(`took over thread ${taken.id}'s lock`),
    });
    expect(lost.get(removed.id)).toMatchObject({ code: 'THREAD_LOCK_LOST', data: { threadId: removed.id } });
    // The first holder's release leaves the new holder's lock alone.
    const lockFile = path.join(dir, 'locks', `${taken.id}.lock`);
    const owner = readFileSync(lockFile, 'utf8');
    await releaseTaken();
    expect(readFileSync(lockFile, 'utf8')).toBe(owner);
    await expect(store.lockThread(taken.id, 100)).rejects.toMatchObject({ code: 'THREAD_BUSY' });
    await releaseOther();
    expect(existsSync(lockFile)).toBe(false);
  });

  it('[RL-5] a holder resumed after a long pause writes nothing to the thread before its heartbeat runs', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'lock-'));
    const store = new FileStore({ dir });
    const thread = await store.createThread({ prompt: 'p' });
    await store.appendMessage(thread.id, { role: 'user', content: 'before' });
    const lost: AgentportError[] = [];
    const release = await store.lockThread(thread.id, 1000, (error) => lost.push(error));
    // A minute passes in no time for the process (stopped, suspended): the heartbeat's timer has not run, and
    // another process may have taken the lock over. I/O that completed meanwhile runs first and tries to write.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 60_000);
      await expect(store.appendMessage(thread.id, { role: 'assistant', content: 'after the pause' })).rejects.toMatchObject({
        code: 'THREAD_LOCK_LOST',
      });
      await expect(store.updateThread(thread.id, { status: 'idle' })).rejects.toMatchObject({ code: 'THREAD_LOCK_LOST' });
      await expect(store.setVariables(thread.id, [{ name: 'A', value: 'b', secret: false }])).rejects.toMatchObject({
        code: 'THREAD_LOCK_LOST',
      });
    } finally {
      vi.useRealTimers();
    }
    expect(lost.map((error) => error.code)).toEqual(['THREAD_LOCK_LOST']);
    await release();
    await store.close();
    const reader = new FileStore({ dir });
    expect((await reader.listMessages(thread.id)).map((m) => m.content)).toEqual(['before']);
    expect(await reader.getVariables(thread.id)).toEqual([]);
    await reader.close();
    rmSync(dir, { recursive: true, force: true });
  });
});
