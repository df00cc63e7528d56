/**
 * The file store's group commit against descriptors closed meanwhile: a log
 * evicted from the open-file cache while its fsync is under way must stay
 * open until that fsync has ended, or its writes would go unsynced (and the
 * fsync might reach another file reusing the descriptor). The test holds the
 * group commit's fsyncs until the eviction has happened.
 */
import { fstatSync, fsync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FileStore, groupCommit } from '../../src/store/fileStore.js';
import { chooseStore, openStore } from '../../src/store/open.js';

let dir: string | undefined;
afterEach(async () => {
  groupCommit.fsync = fsync;
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

/** The file a descriptor refers to now (device and inode), or `closed`. */
function fileOf(fd: number): string {
  try {
    const { dev, ino } = fstatSync(fd);
    return `${dev}:${ino}`;
  } catch {
    return 'closed';
  }
}

describe('FileStore group commit', () => {
  it('[ST-2] keeps a log open until its fsync has ended when it is evicted from the open files meanwhile', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'agentport-sync-'));
    const held: { fd: number; file: string; done: (error: NodeJS.ErrnoException | null) => void }[] = [];
    groupCommit.fsync = ((fd: number, done: (error: NodeJS.ErrnoException | null) => void) => {
      held.push({ fd, file: fileOf(fd), done });
    }) as typeof fsync;
    const store = new FileStore({ dir });
    const first = await store.createThread({ prompt: 'p' });
    await store.appendMessage(first.id, { role: 'user', content: 'kept' });
    // The group commit starts, and is held, with the first log's fsync.
    await expect.poll(() => held.length).toBeGreaterThan(0);
    const [firstSync] = held;
    // More threads than the store keeps open: the first log is evicted while its fsync is under way.
    for (let i = 0; i < 70; i++) {
      const thread = await store.createThread({ prompt: 'p' });
      await store.appendMessage(thread.id, { role: 'user', content: `m${i}` });
    }
    // Still open, and still the same file, until its fsync ends.
    expect(fileOf(firstSync!.fd)).toBe(firstSync!.file);
    // Released: every held fsync runs for real, now and from here on.
    groupCommit.fsync = fsync;
    for (const { fd, done } of held.splice(0)) fsync(fd, done);
    await store.close();
    expect(fileOf(firstSync!.fd)).not.toBe(firstSync!.file);
    // And nothing was lost.
    const again = new FileStore({ dir });
    expect((await again.listMessages(first.id)).map((m) => m.content)).toEqual(['kept']);
    await again.close();
  });

  it('says once on stderr when fsyncs fail, and keeps what was appended', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'agentport-sync-'));
    groupCommit.fsync = ((_fd: number, done: (error: NodeJS.ErrnoException | null) => void) => {
      done(Object.assign(new Error('input/output error'), { code: 'EIO' }));
    }) as typeof fsync;
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const store = new FileStore({ dir, fsyncWithinMs: 10 });
      const threads = [];
      for (let i = 0; i < 3; i++) {
        const thread = await store.createThread({ prompt: 'p' });
        await store.appendMessage(thread.id, { role: 'user', content: `m${i}` });
        threads.push(thread.id);
        // Each in a group commit of its own.
        await new Promise((resolve) => setTimeout(resolve, 30));
      }
      await store.close();
      const warnings = stderr.mock.calls.map(([text]) => String(text)).filter((text) => text.includes('fsync'));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain('EIO');
      expect(warnings[0]).toContain(path.join(dir, 'threads'));
      const again = new FileStore({ dir });
      for (const [i, id] of threads.entries()) expect((await again.listMessages(id)).map((m) => m.content)).toEqual([`m${i}`]);
      await again.close();
    } finally {
      stderr.mockRestore();
    }
  });

  it('[ST-2] fsyncs within the bound it is given, off the append, and on close whatever the bound', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'agentport-sync-'));
    const synced: number[] = [];
    groupCommit.fsync = ((fd: number, done: (error: NodeJS.ErrnoException | null) => void) => {
      synced.push(fd);
      fsync(fd, done);
    }) as typeof fsync;
    const soon = new FileStore({ dir, fsyncWithinMs: 0 });
    const thread = await soon.createThread({ prompt: 'p' });
    await soon.appendMessage(thread.id, { role: 'user', content: 'one' });
    // Not on the append's path: the append has returned before any fsync.
    expect(synced).toEqual([]);
    await expect.poll(() => synced.length).toBe(1);
    await soon.close();

    synced.length = 0;
    const late = new FileStore({ dir, fsyncWithinMs: 60_000 });
    await late.appendMessage(thread.id, { role: 'user', content: 'two' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(synced).toEqual([]);
    await late.close();
    expect(synced.length).toBeGreaterThan(0);
    expect(() => new FileStore({ dir, fsyncWithinMs: -1 })).toThrow('fsyncWithinMs must be a whole number of milliseconds');
    expect(() => new FileStore({ dir, fsyncWithinMs: 2 ** 31 })).toThrow('fsyncWithinMs must be a whole number of milliseconds');
  });

  it('takes the bound from AGENTPORT_FSYNC_WITHIN_MS, refusing what is not a whole number, and says other stores ignore it', async () => {
    const folder = (dir = await mkdtemp(path.join(tmpdir(), 'agentport-sync-')));
    expect(() => chooseStore({ store: 'file' }, folder, { AGENTPORT_FSYNC_WITHIN_MS: 'soon' })).toThrow(
      'AGENTPORT_FSYNC_WITHIN_MS must be a whole number of milliseconds up to 2147483647 (0 for as soon as the server is free), got "soon"',
    );
    expect(() => chooseStore({ store: 'file' }, folder, { AGENTPORT_FSYNC_WITHIN_MS: '3000000000' })).toThrow('got "3000000000"');
    const synced: number[] = [];
    groupCommit.fsync = ((fd: number, done: (error: NodeJS.ErrnoException | null) => void) => {
      synced.push(fd);
      fsync(fd, done);
    }) as typeof fsync;
    const store = await openStore(chooseStore({ store: 'file' }, folder, { AGENTPORT_FSYNC_WITHIN_MS: '0' }));
    const thread = await store.createThread({ prompt: 'p' });
    await store.appendMessage(thread.id, { role: 'user', content: 'one' });
    await expect.poll(() => synced.length).toBe(1);
    await store.close?.();
    const lines: string[] = [];
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    try {
      await openStore(chooseStore({ store: 'memory' }, folder, { AGENTPORT_FSYNC_WITHIN_MS: '5' }));
    } finally {
      stderr.mockRestore();
    }
    expect(lines.join('')).toContain('AGENTPORT_FSYNC_WITHIN_MS ignored: the memory store writes no files of its own');
  });
});
