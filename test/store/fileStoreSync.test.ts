/**
 * The file store's group commit against descriptors closed meanwhile: a log
 * evicted from the open-file cache while its fsync is under way must stay
 * open until that fsync has ended, or its writes would go unsynced (and the
 * fsync might reach another file reusing the descriptor). fsync is slowed
 * here so that the eviction lands inside it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';

const fsyncing = new Map<number, number>();
const closedWhileSyncing: number[] = [];
const fsyncErrors: string[] = [];

vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>();
  const slowFsync = (fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => {
    fsyncing.set(fd, (fsyncing.get(fd) ?? 0) + 1);
    setTimeout(() => {
      actual.fsync(fd, (error) => {
        if (error) fsyncErrors.push(`${fd}: ${error.code ?? error.message}`);
        const left = fsyncing.get(fd)! - 1;
        if (left > 0) fsyncing.set(fd, left);
        else fsyncing.delete(fd);
        callback(error);
      });
    }, 80);
  };
  const watchedClose = (fd: number) => {
    if (fsyncing.has(fd)) closedWhileSyncing.push(fd);
    actual.closeSync(fd);
  };
  return { ...actual, default: { ...actual, fsync: slowFsync, closeSync: watchedClose }, fsync: slowFsync, closeSync: watchedClose };
});

const { FileStore } = await import('../../src/store/fileStore.js');

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('FileStore group commit', () => {
  it('[ST-2] keeps a log open until its fsync has ended when it is evicted from the open files meanwhile', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'agentport-sync-'));
    const store = new FileStore({ dir });
    const first = await store.createThread({ prompt: 'p' });
    await store.appendMessage(first.id, { role: 'user', content: 'kept' });
    // The group commit starts its (slowed) fsync of the first log.
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(fsyncing.size).toBeGreaterThan(0);
    // More threads than the store keeps open: the first log is evicted while its fsync runs.
    for (let i = 0; i < 70; i++) {
      const thread = await store.createThread({ prompt: 'p' });
      await store.appendMessage(thread.id, { role: 'user', content: `m${i}` });
    }
    await store.close();
    expect(fsyncing.size).toBe(0);
    expect(closedWhileSyncing).toEqual([]);
    expect(fsyncErrors).toEqual([]);
    // And nothing was lost.
    const again = new FileStore({ dir });
    expect((await again.listMessages(first.id)).map((m) => m.content)).toEqual(['kept']);
    await again.close();
  });
});
