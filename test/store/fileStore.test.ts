import { appendFile, lstat, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CACHE_LIMITS, FILE_STORE_FORMAT_VERSION, FileStore } from '../../src/store/fileStore.js';
import { PACK_LIMITS } from '../../src/store/packs.js';
import type { AttachmentRef, ThreadRecord } from '../../src/store/types.js';
import { SECRET_KEY_ENV } from '../../src/store/secretKey.js';
import { describeStoreContract, expectStoreError, sampleBytes } from './contract.js';
import { REPO_ROOT } from '../support/paths.js';

const savedKey = process.env[SECRET_KEY_ENV];

// The suite must not depend on the developer's or CI's key; tests that need one set it.
beforeEach(() => {
  delete process.env[SECRET_KEY_ENV];
});
// Tests lower the store's limits to reach them quickly: each test starts from the real ones.
const packLimits = { ...PACK_LIMITS };
const cacheLimits = { ...CACHE_LIMITS };
afterEach(() => {
  if (savedKey === undefined) delete process.env[SECRET_KEY_ENV];
  else process.env[SECRET_KEY_ENV] = savedKey;
  Object.assign(PACK_LIMITS, packLimits);
  Object.assign(CACHE_LIMITS, cacheLimits);
});

function makeTempDir(): Promise<string> {
  return mkdtemp(path.join(tmpdir(), 'agentport-store-'));
}

describeStoreContract('FileStore', async () => {
  const dir = await makeTempDir();
  return {
    store: new FileStore({ dir }),
    cleanup: () => rm(dir, { recursive: true, force: true }),
    another: () => new FileStore({ dir }),
    // Its bytes under files/ and its reference in files.json, as writeFile leaves them; a name longer than the host
    // allows cannot be there.
    plantFile: async (threadId, ref, data) => {
      const threadDir = path.join(dir, 'threads', threadId);
      const hostPath = path.join(threadDir, 'files', ...ref.path.split('/').filter(Boolean));
      try {
        await mkdir(path.dirname(hostPath), { recursive: true });
        await writeFile(hostPath, data);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENAMETOOLONG') return false;
        throw error;
      }
      const index = path.join(threadDir, 'files.json');
      const stored = JSON.parse(await readFile(index, 'utf8')) as { files: Record<string, AttachmentRef> };
      stored.files[ref.path] = ref;
      await writeFile(index, JSON.stringify(stored));
      return true;
    },
  };
});

/** A thread's log: its record on the first line, then its messages and operations. */
function logOf(dir: string, id: string): string {
  return path.join(dir, 'threads', `${id}.jsonl`);
}

/** The lines of a log after its first (the thread record). */
function recordLines(text: string): string[] {
  return text.split('\n').slice(1).filter(Boolean);
}

/** `count` new threads (ids generated: in packs), the i-th with one message, its content `i`. */
async function threadsWithOneMessage(store: FileStore, count: number): Promise<ThreadRecord[]> {
  const threads: ThreadRecord[] = [];
  for (let i = 0; i < count; i++) {
    const t = await store.createThread({ prompt: 'p' });
    await store.appendMessage(t.id, { role: 'user', content: String(i) });
    threads.push(t);
  }
  return threads;
}

/** A thread with a log of its own (an id given by the caller), for tests of that file's bytes. */
const OWN_LOG = { id: 'own-log', prompt: 'p' };

/** A pack's file. */
function packFile(dir: string, pack: string): string {
  return path.join(dir, 'threads', 'packs', `${pack}.jsonl`);
}

/** A thread's log lines as on disk (its record first), from its own file or else its pack. */
async function logLines(dir: string, id: string): Promise<string[]> {
  const own = await readFile(logOf(dir, id), 'utf8').catch(() => undefined);
  if (own !== undefined) return own.split('\n').filter(Boolean);
  const pack = await readFile(packFile(dir, id.slice(0, 8)), 'utf8');
  return pack
    .split('\n')
    .filter((record) => record.startsWith(`${id} `) && record.endsWith('\x1e'))
    .flatMap((record) => record.slice(id.length + 1, -1).split('\x1f'));
}

/** Every regular file under `dir`, without following symlinks. */
async function allFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await allFiles(full)));
    else if (entry.isFile()) out.push(full);
  }
  return out;
}

describe('FileStore on disk', () => {
  let dir: string;
  let outside: string;

  beforeEach(async () => {
    dir = await makeTempDir();
    outside = await makeTempDir();
  });

  afterEach(async () => {
    vi.restoreAllMocks();
    await rm(dir, { recursive: true, force: true });
    await rm(outside, { recursive: true, force: true });
  });

  it('reads nothing and creates nothing until a thread is used', async () => {
    const root = path.join(dir, 'data');
    const store = new FileStore({ dir: root });
    expect(store.dir).toBe(root);
    expect(await store.getThread('abc')).toBeUndefined();
    expect(await store.listThreads()).toEqual([]);
    await expect(stat(root)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('defaults to .agentport under the working directory', () => {
    expect(new FileStore().dir).toBe(path.resolve('.agentport'));
  });

  it('keeps threads, messages, files and variables across a new instance on the same folder', async () => {
    const first = new FileStore({ dir });
    const t = await first.createThread({ prompt: 'support', meta: { a: 1 } });
    await first.updateThread(t.id, { status: 'completed' });
    const m1 = await first.appendMessage(t.id, { role: 'user', content: 'hi' });
    const m2 = await first.appendMessage(t.id, { role: 'assistant', content: 'hello' });
    const data = sampleBytes(5000);
    const ref = await first.writeFile(t.id, '/attachments/a.bin', data, { mimeType: 'application/octet-stream' });
    await first.setVariables(t.id, [
      { name: 'plain', value: 'p', secret: false },
      { name: 'token', value: 'tok-123', secret: true },
    ]);
    const before = await first.getThread(t.id);
    await first.close();

    const second = new FileStore({ dir });
    expect(await second.getThread(t.id)).toEqual(before);
    expect(await second.listThreads()).toEqual([before]);
    expect(await second.listMessages(t.id)).toEqual([m1, m2]);
    const read = await second.readFile(t.id, '/attachments/a.bin');
    expect(Buffer.from(read!.data).equals(Buffer.from(data))).toBe(true);
    expect(read!.ref).toEqual(ref);
    expect(await second.listFiles(t.id)).toEqual([ref]);
    expect(await second.getVariables(t.id)).toEqual([
      { name: 'plain', value: 'p', secret: false },
      { name: 'token', value: 'tok-123', secret: true },
    ]);
    // seq continues where the file left off.
    expect((await second.appendMessage(t.id, { role: 'user', content: 'again' })).seq).toBe(3);
  });

  it('lays threads out in a pack they share, plus files/, files.json and variables.json once they have them, with format versions', async () => {
    const store = new FileStore({ dir });
    const t = await store.createThread({ prompt: 'p' });
    await store.appendMessage(t.id, { role: 'user', content: 'x' });
    const u = await store.createThread({ prompt: 'p' });
    await store.appendMessage(u.id, { role: 'user', content: 'y' });
    // One file for threads with messages only: the pack their ids name.
    expect(t.id.slice(0, 8)).toBe(u.id.slice(0, 8));
    expect(await allFiles(dir)).toEqual([packFile(dir, t.id.slice(0, 8))]);
    await store.writeFile(t.id, '/attachments/chart.png', new Uint8Array([1, 2]), { mimeType: 'image/png' });
    await store.setVariables(t.id, [{ name: 'v', value: '1', secret: false }]);
    await store.updateThread(t.id, { status: 'running', meta: { a: 1 } });
    const threadDir = path.join(dir, 'threads', t.id);
    const lines = await logLines(dir, t.id);
    expect(lines).toHaveLength(3);
    expect(JSON.parse(lines[0]!)).toEqual({ version: FILE_STORE_FORMAT_VERSION, thread: t });
    expect(JSON.parse(lines[1]!)).toMatchObject({ seq: 1, content: 'x' });
    expect(JSON.parse(lines[2]!)).toMatchObject({ op: 'thread', set: { status: 'running', meta: { a: 1 } } });
    // Each write is a record: a line of its own, its log lines joined by \x1f and \x1e last; the pack's format first.
    const pack = await readFile(packFile(dir, t.id.slice(0, 8)), 'utf8');
    expect(pack.startsWith(`\n- {"version":${FILE_STORE_FORMAT_VERSION}}\x1e\n\n${t.id} {"version":`)).toBe(true);
    const vars = JSON.parse(await readFile(path.join(threadDir, 'variables.json'), 'utf8'));
    expect(vars.version).toBe(FILE_STORE_FORMAT_VERSION);
    expect([...(await readFile(path.join(threadDir, 'files', 'attachments', 'chart.png')))]).toEqual([1, 2]);
    expect(await new FileStore({ dir }).getThread(t.id)).toMatchObject({ status: 'running', meta: { a: 1 } });
    expect((await new FileStore({ dir }).listMessages(u.id)).map((m) => m.content)).toEqual(['y']);
    // Atomic writes leave no temp files behind.
    await store.close();
    expect((await allFiles(dir)).filter((f) => f.includes('agentport-tmp') || statSync(f).size === 0)).toEqual([]);
  });

  it('[ST-2] creates no file for a new thread (its pack is one for many), and refuses a taken id all the same', async () => {
    const store = new FileStore({ dir });
    const threads = await threadsWithOneMessage(store, 5);
    expect(await readdir(path.join(dir, 'threads'))).toEqual(['packs']);
    expect(await readdir(path.join(dir, 'threads', 'packs'))).toHaveLength(1);
    const ids = threads.map((t) => t.id).sort();
    expect((await new FileStore({ dir }).listThreads()).map((t) => t.id).sort()).toEqual(ids);
    for (const [i, t] of threads.entries()) {
      expect((await new FileStore({ dir }).listMessages(t.id)).map((m) => m.content)).toEqual([String(i)]);
    }
    // An id of the pack's that was never written is no thread.
    expect(await new FileStore({ dir }).getThread(`${ids[0]!.slice(0, 8)}-0000-4000-8000-000000000000`)).toBeUndefined();
    // A given id gets a log of its own; one that is taken on disk is still refused.
    const other = new FileStore({ dir });
    const taken = await other.createThread({ id: 'taken', prompt: 'p' });
    const clash = await store.createThread({ id: 'taken', prompt: 'p' });
    await other.appendMessage(taken.id, { role: 'user', content: 'first' });
    await expectStoreError(store.appendMessage(clash.id, { role: 'user', content: 'second' }), 'THREAD_EXISTS');
    expect((await new FileStore({ dir }).listMessages('taken')).map((m) => m.content)).toEqual(['first']);
    // The packs' folder is no thread's.
    await expectStoreError(store.createThread({ id: 'packs', prompt: 'p' }), 'INVALID_THREAD_ID', 'packs');
    // A thread created but never written leaves nothing.
    await store.createThread({ prompt: 'never written' });
    await Promise.all([store.close(), other.close()]);
    expect((await readdir(path.join(dir, 'threads'))).sort()).toEqual(['packs', 'taken.jsonl']);
    expect((await new FileStore({ dir }).listThreads()).map((t) => t.id).sort()).toEqual([...ids, 'taken'].sort());
  });

  it('starts a new pack once the one new threads go to is full', async () => {
    PACK_LIMITS.threads = 3;
    const store = new FileStore({ dir });
    const threads = await threadsWithOneMessage(store, 7);
    expect(new Set(threads.map((t) => t.id.slice(0, 8))).size).toBe(3);
    expect(await readdir(path.join(dir, 'threads', 'packs'))).toHaveLength(3);
    // A thread of a full pack still takes appends there.
    await store.appendMessage(threads[0]!.id, { role: 'assistant', content: 'later' });
    await store.close();
    const reader = new FileStore({ dir });
    expect((await reader.listThreads()).length).toBe(7);
    expect((await reader.listMessages(threads[0]!.id)).map((m) => m.content)).toEqual(['0', 'later']);
  });

  it('skips a torn record in a pack (an interrupted write), silently, and loses nothing before or after it', async () => {
    const first = new FileStore({ dir });
    const t = await first.createThread({ prompt: 'p' });
    const u = await first.createThread({ prompt: 'p' });
    for (const content of ['a', 'b']) await first.appendMessage(t.id, { role: 'user', content });
    await first.appendMessage(u.id, { role: 'user', content: 'u1' });
    await first.close();
    const file = packFile(dir, t.id.slice(0, 8));
    // What a process killed in the middle of a write leaves: part of a record, with no newline.
    await appendFile(file, `\n${t.id} {"id":"x","threadId":"${t.id}","seq":3,"role":"us`);

    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const second = new FileStore({ dir });
    expect((await second.listMessages(t.id)).map((m) => m.content)).toEqual(['a', 'b']);
    expect((await second.appendMessage(t.id, { role: 'user', content: 'c' })).seq).toBe(3);
    expect((await second.appendMessage(u.id, { role: 'user', content: 'u2' })).seq).toBe(2);
    await second.close();
    // The next write's leading newline ended the fragment: it stays a line of its own, skipped.
    const third = new FileStore({ dir });
    expect((await third.listMessages(t.id)).map((m) => [m.seq, m.content])).toEqual([
      [1, 'a'],
      [2, 'b'],
      [3, 'c'],
    ]);
    expect((await third.listMessages(u.id)).map((m) => m.content)).toEqual(['u1', 'u2']);
    expect(stderr).not.toHaveBeenCalled();
  });

  it('reads a pack with records longer than one read of it, and one still being written', async () => {
    const store = new FileStore({ dir });
    const t = await store.createThread({ prompt: 'p' });
    const big = 'z'.repeat(3 * 1024 * 1024);
    await store.appendMessage(t.id, { role: 'user', content: 'small' });
    await store.appendMessage(t.id, { role: 'user', content: big });
    await store.appendMessage(t.id, { role: 'user', content: 'after' });
    // Another writer's record, begun but not ended yet: not read until its newline is there.
    await appendFile(packFile(dir, t.id.slice(0, 8)), `\n${t.id} {"id":"y"`);
    const reader = new FileStore({ dir });
    expect((await reader.listMessages(t.id)).map((m) => String(m.content).length)).toEqual([5, big.length, 5]);
    await store.close();
  });

  it('sees what another process appended to a packed thread once it takes the lock, and nothing it did not', async () => {
    const store = new FileStore({ dir });
    const t = await store.createThread({ prompt: 'p' });
    const u = await store.createThread({ prompt: 'p' });
    await store.appendMessage(t.id, { role: 'user', content: 't1' });
    await store.appendMessage(u.id, { role: 'user', content: 'u1' });
    expect(await store.listMessages(t.id)).toHaveLength(1);
    const other = new FileStore({ dir });
    const releaseOther = await other.lockThread(t.id, 0);
    await other.appendMessage(t.id, { role: 'assistant', content: 't2 from the other' });
    await releaseOther();
    // u's cache stays (nobody wrote u); t's is read again from the pack.
    const internals = store as unknown as { appendState: Map<string, { replay?: unknown }> };
    const release = await store.lockThread(t.id, 1000);
    expect((await store.listMessages(t.id)).map((m) => m.content)).toEqual(['t1', 't2 from the other']);
    await release();
    await (
      await store.lockThread(u.id, 1000)
    )();
    expect(internals.appendState.get(u.id)?.replay).toBeDefined();
    expect((await store.appendMessage(t.id, { role: 'user', content: 't3' })).seq).toBe(3);
    await Promise.all([store.close(), other.close()]);
    expect((await new FileStore({ dir }).listMessages(t.id)).map((m) => m.seq)).toEqual([1, 2, 3]);
  });

  it("sees another process's append to a pack it created although it appended to the pack again since", async () => {
    const store = new FileStore({ dir });
    const t = await store.createThread({ prompt: 'p' });
    const u = await store.createThread({ prompt: 'p' });
    await store.appendMessage(t.id, { role: 'user', content: 't1' });
    const other = new FileStore({ dir });
    const releaseOther = await other.lockThread(t.id, 0);
    await other.appendMessage(t.id, { role: 'assistant', content: 't2 from the other' });
    await releaseOther();
    // This process writes to the same pack after the other's record, before it looks at t again.
    await store.appendMessage(u.id, { role: 'user', content: 'u1' });
    await store.appendMessage(u.id, { role: 'user', content: 'u2' });
    const release = await store.lockThread(t.id, 1000);
    expect((await store.listMessages(t.id)).map((m) => m.content)).toEqual(['t1', 't2 from the other']);
    expect((await store.appendMessage(t.id, { role: 'user', content: 't3' })).seq).toBe(3);
    await release();
    await Promise.all([store.close(), other.close()]);
    const reader = new FileStore({ dir });
    expect((await reader.listMessages(t.id)).map((m) => m.content)).toEqual(['t1', 't2 from the other', 't3']);
    expect((await reader.listMessages(u.id)).map((m) => m.content)).toEqual(['u1', 'u2']);
  });

  it("keeps only packs' byte counts beyond the index budget: another process's change is still seen, and a read scans again", async () => {
    Object.assign(PACK_LIMITS, { threads: 1, indexedRecords: 2 });
    const writer = new FileStore({ dir });
    const threads = [];
    for (let i = 0; i < 3; i++) {
      const t = await writer.createThread({ prompt: 'p' });
      await writer.appendMessage(t.id, { role: 'user', content: `${i}a` });
      await writer.appendMessage(t.id, { role: 'user', content: `${i}b` });
      threads.push(t);
    }
    const reader = new FileStore({ dir });
    for (const t of threads) {
      await (
        await reader.lockThread(t.id, 1000)
      )();
      expect((await reader.listMessages(t.id)).map((m) => m.content)).toHaveLength(2);
    }
    const indexes = (reader as unknown as { packs: { indexes: Map<string, { countsOnly?: boolean }> } }).packs.indexes;
    expect([...indexes.values()].filter((index) => index.countsOnly)).toHaveLength(2);
    // The first thread's pack holds counts only: a write of the writer's still shows at the reader's lock.
    const [first, second] = threads as [(typeof threads)[0], (typeof threads)[0]];
    const releaseWriter = await writer.lockThread(first.id, 1000);
    await writer.appendMessage(first.id, { role: 'assistant', content: '0c' });
    await releaseWriter();
    const release = await reader.lockThread(first.id, 1000);
    expect((await reader.listMessages(first.id)).map((m) => m.content)).toEqual(['0a', '0b', '0c']);
    expect((await reader.appendMessage(first.id, { role: 'user', content: '0d' })).seq).toBe(4);
    await release();
    // A thread of a pack whose ranges were dropped is read whole.
    (reader as unknown as { forget(id: string): void }).forget(second.id);
    expect((await reader.listMessages(second.id)).map((m) => m.content)).toEqual(['1a', '1b']);
    await Promise.all([writer.close(), reader.close()]);
    expect((await new FileStore({ dir }).listMessages(first.id)).map((m) => m.seq)).toEqual([1, 2, 3, 4]);
  });

  it('refuses a pack written by a newer format version, naming it within the data folder, and lists the other threads', async () => {
    const store = new FileStore({ dir });
    const t = await store.createThread({ prompt: 'p' });
    await store.appendMessage(t.id, { role: 'user', content: 'x' });
    const own = await store.createThread(OWN_LOG);
    await store.appendMessage(own.id, { role: 'user', content: 'y' });
    await store.close();
    const file = packFile(dir, t.id.slice(0, 8));
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.replace(`{"version":${FILE_STORE_FORMAT_VERSION}}`, `{"version":${FILE_STORE_FORMAT_VERSION + 1}}`));
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const error = await expectStoreError(
      new FileStore({ dir }).getThread(t.id),
      'UNSUPPORTED_VERSION',
      `threads/packs/${t.id.slice(0, 8)}.jsonl`,
    );
    // The message reaches clients: no host path. The operator's log has it.
    expect(error.message).not.toContain(dir);
    expect(stderr.mock.calls.map((c) => String(c[0])).join('')).toContain(`agentport: warning: UNSUPPORTED_VERSION: ${file} was written`);
    expect((await new FileStore({ dir }).listThreads()).map((r) => r.id)).toEqual([own.id]);
  });

  it('names a damaged log within the data folder, and by its full path on stderr', async () => {
    const store = new FileStore({ dir });
    const t = await store.createThread(OWN_LOG);
    await store.appendMessage(t.id, { role: 'user', content: 'x' });
    await store.close();
    await writeFile(logOf(dir, t.id), '{nope\n');
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const error = await expectStoreError(
      new FileStore({ dir }).getThread(t.id),
      'CORRUPT_DATA',
      `threads/${t.id}.jsonl does not start with a valid thread record`,
    );
    expect(error.message).not.toContain(dir);
    expect(stderr.mock.calls.map((c) => String(c[0])).join('')).toContain(`CORRUPT_DATA: ${logOf(dir, t.id)} does not start`);
  });

  it('lists the other threads past a damaged log, saying so once, by its full path', async () => {
    const store = new FileStore({ dir });
    const damaged = await store.createThread(OWN_LOG);
    await store.appendMessage(damaged.id, { role: 'user', content: 'x' });
    const fine = await store.createThread({ prompt: 'p' });
    await store.appendMessage(fine.id, { role: 'user', content: 'y' });
    await store.close();
    await writeFile(logOf(dir, damaged.id), '{nope\n');
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    expect((await new FileStore({ dir }).listThreads()).map((r) => r.id)).toEqual([fine.id]);
    const lines = stderr.mock.calls.map((c) => String(c[0])).filter((line) => line.includes(damaged.id));
    expect(lines).toEqual([`agentport: warning: CORRUPT_DATA: ${logOf(dir, damaged.id)} does not start with a valid thread record\n`]);
  });

  it('refuses files written by a newer format version', async () => {
    const store = new FileStore({ dir });
    const t = await store.createThread(OWN_LOG);
    await store.appendMessage(t.id, { role: 'user', content: 'x' });
    const file = logOf(dir, t.id);
    const [header, ...rest] = (await readFile(file, 'utf8')).split('\n');
    await writeFile(file, [JSON.stringify({ ...JSON.parse(header!), version: FILE_STORE_FORMAT_VERSION + 1 }), ...rest].join('\n'));
    await expectStoreError(new FileStore({ dir }).getThread(t.id), 'UNSUPPORTED_VERSION', `${t.id}.jsonl`);
  });

  it('ignores a torn last line (an interrupted write) and loses nothing before it', async () => {
    const first = new FileStore({ dir });
    const t = await first.createThread(OWN_LOG);
    for (const content of ['a', 'b', 'c']) await first.appendMessage(t.id, { role: 'user', content });
    await first.close();
    const file = logOf(dir, t.id);
    await appendFile(file, '{"id":"x","threadId":"' + t.id + '","seq":4,"role":"us');

    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const second = new FileStore({ dir });
    expect((await second.listMessages(t.id)).map((m) => m.content)).toEqual(['a', 'b', 'c']);
    const next = await second.appendMessage(t.id, { role: 'user', content: 'd' });
    expect(next.seq).toBe(4);
    expect((await second.listMessages(t.id)).map((m) => [m.seq, m.content])).toEqual([
      [1, 'a'],
      [2, 'b'],
      [3, 'c'],
      [4, 'd'],
    ]);
    // The fragment was cut off, so every line on disk is whole again.
    const lines = recordLines(await readFile(file, 'utf8'));
    expect(lines.map((l) => JSON.parse(l).content)).toEqual(['a', 'b', 'c', 'd']);
    expect(stderr.mock.calls.map((c) => String(c[0])).join('')).toContain('incomplete last line');
  });

  it('keeps a last record that lost only its newline, and appends after it on a new line', async () => {
    const first = new FileStore({ dir });
    const t = await first.createThread(OWN_LOG);
    await first.appendMessage(t.id, { role: 'user', content: 'a' });
    await first.appendMessage(t.id, { role: 'user', content: 'b' });
    const file = logOf(dir, t.id);
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.slice(0, -1));

    const second = new FileStore({ dir });
    expect((await second.listMessages(t.id)).map((m) => m.content)).toEqual(['a', 'b']);
    expect((await second.appendMessage(t.id, { role: 'user', content: 'c' })).seq).toBe(3);
    expect((await second.listMessages(t.id)).map((m) => m.content)).toEqual(['a', 'b', 'c']);
  });

  it('skips a corrupt line in the middle with a warning on stderr, keeping the others', async () => {
    const first = new FileStore({ dir });
    const t = await first.createThread(OWN_LOG);
    for (const content of ['a', 'b', 'c']) await first.appendMessage(t.id, { role: 'user', content });
    const file = logOf(dir, t.id);
    const lines = (await readFile(file, 'utf8')).split('\n');
    lines[2] = '{garbage';
    await writeFile(file, lines.join('\n'));

    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const stdout = vi.spyOn(process.stdout, 'write');
    const second = new FileStore({ dir });
    expect((await second.listMessages(t.id)).map((m) => m.content)).toEqual(['a', 'c']);
    expect(stderr.mock.calls.map((c) => String(c[0])).join('')).toContain('corrupt line 3');
    expect(stdout).not.toHaveBeenCalled();
    expect((await second.appendMessage(t.id, { role: 'user', content: 'd' })).seq).toBe(4);
  });

  it('keeps updates and deletions across a new instance, as records appended to the log', async () => {
    const first = new FileStore({ dir });
    const t = await first.createThread(OWN_LOG);
    const a = await first.appendMessage(t.id, { role: 'user', content: 'a', meta: { x: 1 } });
    const b = await first.appendMessage(t.id, { role: 'assistant', content: 'b' });
    const c = await first.appendMessage(t.id, { role: 'user', content: 'c' });
    const file = logOf(dir, t.id);
    const before = await readFile(file, 'utf8');
    const updated = await first.updateMessage(t.id, a.id, { content: 'a2', meta: { y: 2 }, reasoning: 'r' });
    await first.deleteMessages(t.id, [c.id]);
    await first.close();

    // Append-only: the earlier bytes are untouched, two operation records follow.
    const text = await readFile(file, 'utf8');
    expect(text.startsWith(before)).toBe(true);
    const added = text
      .slice(before.length)
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(added).toEqual([
      { op: 'update', id: a.id, patch: { content: 'a2', meta: { y: 2 }, reasoning: 'r' } },
      { op: 'delete', ids: [c.id] },
    ]);

    const second = new FileStore({ dir });
    expect(await second.listMessages(t.id)).toEqual([updated, b]);
    expect(updated).toEqual({ ...a, content: 'a2', meta: { y: 2 }, reasoning: 'r' });
    // c (seq 3) is deleted, yet its seq is not handed out again.
    expect((await second.appendMessage(t.id, { role: 'user', content: 'd' })).seq).toBe(4);
    expect((await new FileStore({ dir }).listMessages(t.id)).map((m) => [m.seq, m.content])).toEqual([
      [1, 'a2'],
      [2, 'b'],
      [4, 'd'],
    ]);
  });

  it('ignores a torn operation record at the end of the file, like a torn message', async () => {
    const first = new FileStore({ dir });
    const t = await first.createThread(OWN_LOG);
    const a = await first.appendMessage(t.id, { role: 'user', content: 'a' });
    const b = await first.appendMessage(t.id, { role: 'user', content: 'b' });
    await first.close();
    const file = logOf(dir, t.id);
    const intact = await readFile(file, 'utf8');

    for (const fragment of [`{"op":"delete","ids":["${b.id}"`, `{"op":"update","id":"${a.id}","patch":{"content":"gone`]) {
      await writeFile(file, intact + fragment);
      vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
      expect(await new FileStore({ dir }).listMessages(t.id)).toEqual([a, b]);
    }

    // The next write cuts the fragment off and lands on a line of its own.
    const second = new FileStore({ dir });
    await second.deleteMessages(t.id, [a.id]);
    expect(await second.listMessages(t.id)).toEqual([b]);
    const lines = recordLines(await readFile(file, 'utf8'));
    expect(lines.map((l) => JSON.parse(l))).toEqual([a, b, { op: 'delete', ids: [a.id] }]);
    expect((await second.appendMessage(t.id, { role: 'user', content: 'c' })).seq).toBe(3);
  });

  it('applies a last operation record that lost only its newline, and writes after it on a new line', async () => {
    const first = new FileStore({ dir });
    const t = await first.createThread(OWN_LOG);
    const a = await first.appendMessage(t.id, { role: 'user', content: 'a' });
    await first.updateMessage(t.id, a.id, { content: 'a2' });
    const file = logOf(dir, t.id);
    await writeFile(file, (await readFile(file, 'utf8')).slice(0, -1));

    const second = new FileStore({ dir });
    expect((await second.listMessages(t.id)).map((m) => m.content)).toEqual(['a2']);
    await second.updateMessage(t.id, a.id, { reasoning: 'r' });
    expect(await new FileStore({ dir }).listMessages(t.id)).toEqual([{ ...a, content: 'a2', reasoning: 'r' }]);
  });

  it('never mistakes a message for an operation record, even one with stray "op" and "ids" fields', async () => {
    const first = new FileStore({ dir });
    const t = await first.createThread({ prompt: 'p' });
    const a = await first.appendMessage(t.id, { role: 'user', content: 'a' });
    const odd = await first.appendMessage(t.id, { role: 'user', content: 'odd', op: 'delete', ids: [a.id] } as never);
    expect(await new FileStore({ dir }).listMessages(t.id)).toEqual([a, odd]);
  });

  it('skips an operation record with an unknown op as a corrupt line', async () => {
    const first = new FileStore({ dir });
    const t = await first.createThread(OWN_LOG);
    const a = await first.appendMessage(t.id, { role: 'user', content: 'a' });
    const file = logOf(dir, t.id);
    await appendFile(file, JSON.stringify({ op: 'truncate', ids: [a.id] }) + '\n');
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    expect(await new FileStore({ dir }).listMessages(t.id)).toEqual([a]);
    expect(stderr.mock.calls.map((c) => String(c[0])).join('')).toContain('corrupt line 3');
  });

  it('deleteFile removes the bytes and the directories left empty, and updates files.json', async () => {
    const store = new FileStore({ dir });
    const t = await store.createThread({ prompt: 'p' });
    await store.writeFile(t.id, '/attachments/keep.txt', new Uint8Array([1]), { mimeType: 'text/plain' });
    await store.writeFile(t.id, '/attachments/sub/deep/x.bin', new Uint8Array([2]), { mimeType: 'application/octet-stream' });
    const filesDir = path.join(dir, 'threads', t.id, 'files');
    expect(await store.deleteFile(t.id, '/attachments/sub/deep/x.bin')).toBe(true);
    await expect(stat(path.join(filesDir, 'attachments', 'sub'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect([...(await readFile(path.join(filesDir, 'attachments', 'keep.txt')))]).toEqual([1]);
    const index = JSON.parse(await readFile(path.join(dir, 'threads', t.id, 'files.json'), 'utf8'));
    expect(Object.keys(index.files)).toEqual(['/attachments/keep.txt']);
    expect((await new FileStore({ dir }).listFiles(t.id)).map((r) => r.path)).toEqual(['/attachments/keep.txt']);
    expect(await store.deleteFile(t.id, '/attachments/keep.txt')).toBe(true);
    expect(await readdir(filesDir)).toEqual([]);
  });

  it('[TL-7] deleteFile refuses a path through a symlink that leads outside, removing nothing', async () => {
    const store = new FileStore({ dir });
    const t = await store.createThread({ prompt: 'p' });
    await store.writeFile(t.id, '/attachments/ok.txt', new Uint8Array([1]), { mimeType: 'text/plain' });
    const filesDir = path.join(dir, 'threads', t.id, 'files');
    await writeFile(path.join(outside, 'secret.txt'), 'outside');
    await symlink(outside, path.join(filesDir, 'attachments', 'link'), 'dir');
    await expectStoreError(store.deleteFile(t.id, '/attachments/link/secret.txt'), 'INVALID_PATH', 'symbolic link');
    expect(await readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe('outside');
    expect((await store.listFiles(t.id)).map((r) => r.path)).toEqual(['/attachments/ok.txt']);
  });

  it('gives concurrent appends seq 1..N with no loss, on disk too', async () => {
    const store = new FileStore({ dir });
    const t = await store.createThread({ prompt: 'p' });
    const n = 200;
    await Promise.all(Array.from({ length: n }, (_, i) => store.appendMessage(t.id, { role: 'user', content: String(i) })));
    await store.close();
    const lines = (await logLines(dir, t.id)).slice(1);
    expect(lines.map((l) => JSON.parse(l).seq)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    const contents = new Set((await new FileStore({ dir }).listMessages(t.id)).map((m) => m.content));
    expect(contents.size).toBe(n);
  });

  it('[TL-7] refuses a symlink inside the files dir that points outside', async () => {
    const store = new FileStore({ dir });
    const t = await store.createThread({ prompt: 'p' });
    await store.writeFile(t.id, '/attachments/ok.txt', new Uint8Array([1]), { mimeType: 'text/plain' });
    const filesDir = path.join(dir, 'threads', t.id, 'files');
    await writeFile(path.join(outside, 'secret.txt'), 'outside');
    await symlink(outside, path.join(filesDir, 'attachments', 'link'), 'dir');
    await symlink(path.join(outside, 'secret.txt'), path.join(filesDir, 'attachments', 'file-link.txt'), 'file');

    await expectStoreError(
      store.writeFile(t.id, '/attachments/link/x.txt', new Uint8Array([1]), { mimeType: 'text/plain' }),
      'INVALID_PATH',
      '/attachments/link/x.txt',
    );
    await expectStoreError(
      store.writeFile(t.id, '/attachments/link/new/deeper.txt', new Uint8Array([1]), { mimeType: 'text/plain' }),
      'INVALID_PATH',
      'symbolic link',
    );
    await expectStoreError(store.readFile(t.id, '/attachments/link/secret.txt'), 'INVALID_PATH', '/attachments/link/secret.txt');
    await expectStoreError(store.readFile(t.id, '/attachments/file-link.txt'), 'INVALID_PATH', 'file-link.txt');
    expect(await readdir(outside)).toEqual(['secret.txt']);
    expect(await readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe('outside');
  });

  it('[TL-7] allows a symlink that stays inside the thread files', async () => {
    const store = new FileStore({ dir });
    const t = await store.createThread({ prompt: 'p' });
    await store.writeFile(t.id, '/attachments/real/a.txt', new Uint8Array([5]), { mimeType: 'text/plain' });
    const filesDir = path.join(dir, 'threads', t.id, 'files');
    await symlink(path.join(filesDir, 'attachments', 'real'), path.join(filesDir, 'alias'), 'dir');
    const ref = await store.writeFile(t.id, '/alias/b.txt', new Uint8Array([6]), { mimeType: 'text/plain' });
    expect(ref.path).toBe('/alias/b.txt');
    expect([...(await readFile(path.join(filesDir, 'attachments', 'real', 'b.txt')))]).toEqual([6]);
  });

  it('[TL-7] replaces a dangling symlink at the target instead of writing through it', async () => {
    const store = new FileStore({ dir });
    const t = await store.createThread({ prompt: 'p' });
    await store.writeFile(t.id, '/attachments/keep.txt', new Uint8Array([1]), { mimeType: 'text/plain' });
    const target = path.join(outside, 'created-by-escape.txt');
    const link = path.join(dir, 'threads', t.id, 'files', 'attachments', 'dangling.txt');
    await symlink(target, link, 'file');
    await store.writeFile(t.id, '/attachments/dangling.txt', new Uint8Array([9]), { mimeType: 'text/plain' });
    await expect(stat(target)).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await lstat(link)).isSymbolicLink()).toBe(false);
    expect([...(await store.readFile(t.id, '/attachments/dangling.txt'))!.data]).toEqual([9]);
  });

  it('[PR-16] stores secret variables encrypted at rest', async () => {
    const secret = 'sk-live-PLAINTEXT-SHOULD-NOT-APPEAR-42';
    const store = new FileStore({ dir });
    const t = await store.createThread({ prompt: 'p' });
    await store.setVariables(t.id, [
      { name: 'apiKey', value: secret, secret: true },
      { name: 'region', value: 'visible-region-value', secret: false },
    ]);
    await store.appendMessage(t.id, { role: 'user', content: 'hello' });
    await store.close();

    const files = await allFiles(dir);
    let sawPlain = false;
    for (const file of files) {
      const bytes = await readFile(file);
      expect(bytes.includes(Buffer.from(secret)), `secret found in clear in ${file}`).toBe(false);
      expect(bytes.includes(Buffer.from(secret).toString('base64'))).toBe(false);
      if (bytes.includes(Buffer.from('visible-region-value'))) sawPlain = true;
    }
    // The scan does read the variables: the non-secret value is there.
    expect(sawPlain).toBe(true);

    const stored = JSON.parse(await readFile(path.join(dir, 'threads', t.id, 'variables.json'), 'utf8'));
    const entry = stored.variables.find((v: { name: string }) => v.name === 'apiKey');
    expect(entry).toMatchObject({ secret: true, encrypted: { alg: 'aes-256-gcm' } });
    expect(entry.value).toBeUndefined();

    expect(await new FileStore({ dir }).getVariables(t.id)).toContainEqual({ name: 'apiKey', value: secret, secret: true });
  });

  it('[PR-16] uses a fresh random IV for every encryption of the same value', async () => {
    const store = new FileStore({ dir });
    const t = await store.createThread({ prompt: 'p' });
    await store.setVariables(t.id, [
      { name: 'a', value: 'same', secret: true },
      { name: 'b', value: 'same', secret: true },
    ]);
    const stored = JSON.parse(await readFile(path.join(dir, 'threads', t.id, 'variables.json'), 'utf8'));
    const [a, b] = stored.variables;
    expect(a.encrypted.iv).not.toBe(b.encrypted.iv);
    expect(a.encrypted.data).not.toBe(b.encrypted.data);
  });

  it('[PR-16] creates the key file once with mode 0600 and reuses it', async () => {
    const store = new FileStore({ dir });
    const t = await store.createThread({ prompt: 'p' });
    const keyFile = path.join(dir, 'secret.key');
    await expect(stat(keyFile)).rejects.toMatchObject({ code: 'ENOENT' });
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    await store.setVariables(t.id, [{ name: 's', value: 'v', secret: true }]);
    const key = await readFile(keyFile, 'utf8');
    expect(key.trim()).toMatch(/^[0-9a-f]{64}$/);
    if (process.platform !== 'win32') expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
    const other = new FileStore({ dir });
    await other.setVariables(t.id, [{ name: 's2', value: 'v2', secret: true }]);
    expect(await readFile(keyFile, 'utf8')).toBe(key);
    expect((await other.getVariables(t.id)).map((v) => v.value)).toEqual(['v', 'v2']);
  });

  it('does not create a key file when no secret is stored', async () => {
    const store = new FileStore({ dir });
    const t = await store.createThread({ prompt: 'p' });
    await store.setVariables(t.id, [{ name: 'x', value: '1', secret: false }]);
    await store.getVariables(t.id);
    await expect(stat(path.join(dir, 'secret.key'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('[PR-16] takes the key from AGENTPORT_SECRET_KEY when set, without writing a key file', async () => {
    process.env[SECRET_KEY_ENV] = 'ab'.repeat(32);
    const store = new FileStore({ dir });
    const t = await store.createThread({ prompt: 'p' });
    await store.setVariables(t.id, [{ name: 's', value: 'v', secret: true }]);
    await expect(stat(path.join(dir, 'secret.key'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await new FileStore({ dir }).getVariables(t.id)).toEqual([{ name: 's', value: 'v', secret: true }]);

    process.env[SECRET_KEY_ENV] = Buffer.alloc(32, 7).toString('base64');
    const error = await expectStoreError(new FileStore({ dir }).getVariables(t.id), 'SECRET_DECRYPT_FAILED', '"s"');
    // Where the key comes from, by the key file's name: the message reaches clients, the data folder's host path not.
    expect(error.message).toContain('secret.key');
    expect(error.message).not.toContain(dir);
  });

  it('[PR-16] fails clearly, naming AGENTPORT_SECRET_KEY but not its value, when the variable is invalid', async () => {
    process.env[SECRET_KEY_ENV] = 'not-a-valid-key-value';
    const store = new FileStore({ dir });
    const t = await store.createThread({ prompt: 'p' });
    const err = await expectStoreError(
      store.setVariables(t.id, [{ name: 's', value: 'v', secret: true }]),
      'SECRET_KEY_INVALID',
      SECRET_KEY_ENV,
    );
    expect(err.message).not.toContain('not-a-valid-key-value');
    // Fixing the variable works without a new store.
    process.env[SECRET_KEY_ENV] = 'cd'.repeat(32);
    await store.setVariables(t.id, [{ name: 's', value: 'v', secret: true }]);
    expect(await store.getVariables(t.id)).toEqual([{ name: 's', value: 'v', secret: true }]);
  });

  it('[PR-16] refuses a ciphertext moved to another variable name', async () => {
    const store = new FileStore({ dir, secretKey: Buffer.alloc(32, 1) });
    const t = await store.createThread({ prompt: 'p' });
    await store.setVariables(t.id, [{ name: 'a', value: 'secret-a', secret: true }]);
    const file = path.join(dir, 'threads', t.id, 'variables.json');
    const stored = JSON.parse(await readFile(file, 'utf8'));
    stored.variables[0].name = 'b';
    await writeFile(file, JSON.stringify(stored));
    const err = await expectStoreError(new FileStore({ dir, secretKey: Buffer.alloc(32, 1) }).getVariables(t.id), 'SECRET_DECRYPT_FAILED');
    expect(err.message).not.toContain('secret-a');
  });

  it('refuses a secretKey option that is not 32 bytes', () => {
    expect(() => new FileStore({ dir, secretKey: Buffer.alloc(16) })).toThrow(/32 bytes/);
  });

  it('reuses a thread folder left without thread.json by an interrupted creation', async () => {
    await mkdir(path.join(dir, 'threads', 'half-made'), { recursive: true });
    const store = new FileStore({ dir });
    expect(await store.getThread('half-made')).toBeUndefined();
    expect(await store.listThreads()).toEqual([]);
    const t = await store.createThread({ id: 'half-made', prompt: 'p' });
    expect((await store.appendMessage(t.id, { role: 'user', content: 'x' })).seq).toBe(1);
  });

  it('[ST-1] writes nothing for a thread until it has something to keep, then one file, its log', async () => {
    const store = new FileStore({ dir });
    const t = await store.createThread({ prompt: 'p', meta: { a: 1 } });
    expect(await allFiles(dir)).toEqual([]);
    // The thread exists for this store all the same.
    expect(await store.getThread(t.id)).toEqual(t);
    expect((await store.listThreads()).map((x) => x.id)).toEqual([t.id]);
    expect(await store.listMessages(t.id)).toEqual([]);
    await store.appendMessage(t.id, { role: 'user', content: 'hello' });
    const other = new FileStore({ dir });
    expect(await other.getThread(t.id)).toEqual(t);
    expect((await other.listMessages(t.id)).map((m) => m.content)).toEqual(['hello']);
    await store.close();
  });

  it('[ST-2] makes an append visible to another reader at once and durable by close (group commit)', async () => {
    const store = new FileStore({ dir });
    const t = await store.createThread({ prompt: 'p' });
    for (let i = 0; i < 5; i++) await store.appendMessage(t.id, { role: 'user', content: `m${i}` });
    // Written with the append (the page cache), before any fsync: another process reads it.
    expect((await new FileStore({ dir }).listMessages(t.id)).map((m) => m.seq)).toEqual([1, 2, 3, 4, 5]);
    await store.close();
    const lines = (await logLines(dir, t.id)).slice(1);
    expect(lines).toHaveLength(5);
  });

  it('[ST-3] serves a long thread from its parsed messages, and sees what another process appended after its lock', async () => {
    const store = new FileStore({ dir });
    const t = await store.createThread({ prompt: 'p' });
    for (let i = 0; i < 50; i++) await store.appendMessage(t.id, { role: 'user', content: `m${i}` });
    const listed = await store.listMessages(t.id);
    // A copy: changing it changes nothing stored.
    listed[0]!.content = 'changed';
    expect((await store.listMessages(t.id))[0]!.content).toBe('m0');
    const other = new FileStore({ dir });
    const releaseOther = await other.lockThread(t.id, 0);
    await other.appendMessage(t.id, { role: 'assistant', content: 'from the other process' });
    await releaseOther();
    const release = await store.lockThread(t.id, 1000);
    const after = await store.listMessages(t.id);
    expect(after.at(-1)).toMatchObject({ seq: 51, content: 'from the other process' });
    expect((await store.appendMessage(t.id, { role: 'user', content: 'next' })).seq).toBe(52);
    await release();
    await Promise.all([store.close(), other.close()]);
  });

  it('moves a thread of the first format (thread.json + messages.jsonl) to its log when first read, losing nothing', async () => {
    const id = 'legacy-thread';
    const folder = path.join(dir, 'threads', id);
    await mkdir(path.join(folder, 'files', 'attachments'), { recursive: true });
    const record = { id, prompt: 'p', createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-02T00:00:00.000Z', status: 'idle' };
    await writeFile(path.join(folder, 'thread.json'), JSON.stringify({ version: 1, ...record }));
    const message = (seq: number, content: string) =>
      JSON.stringify({ id: `m${seq}`, threadId: id, seq, role: 'user', content, createdAt: '2026-01-01T00:00:00.000Z' });
    // Two messages, an edit, and the torn start of a third that a killed process left.
    await writeFile(
      path.join(folder, 'messages.jsonl'),
      [message(1, 'a'), message(2, 'b'), JSON.stringify({ op: 'update', id: 'm1', patch: { content: 'a2' } }), '{"id":"m3","thr'].join(
        '\n',
      ),
    );
    await writeFile(
      path.join(folder, 'variables.json'),
      JSON.stringify({ version: 1, variables: [{ name: 'v', secret: false, value: '1' }] }),
    );
    await writeFile(path.join(folder, 'files', 'attachments', 'x.txt'), 'x');
    await writeFile(
      path.join(folder, 'files.json'),
      JSON.stringify({ version: 1, files: { '/attachments/x.txt': { path: '/attachments/x.txt', mimeType: 'text/plain', size: 1 } } }),
    );

    const store = new FileStore({ dir });
    expect((await store.listThreads()).map((t) => t.id)).toEqual([id]);
    expect(await store.getThread(id)).toEqual(record);
    expect((await store.listMessages(id)).map((m) => [m.seq, m.content])).toEqual([
      [1, 'a2'],
      [2, 'b'],
    ]);
    expect(await store.getVariables(id)).toEqual([{ name: 'v', value: '1', secret: false }]);
    expect(new TextDecoder().decode((await store.readFile(id, '/attachments/x.txt'))!.data)).toBe('x');
    expect((await store.appendMessage(id, { role: 'user', content: 'c' })).seq).toBe(3);
    // The log replaced the two files; what else the folder held stays.
    expect((await readdir(folder)).sort()).toEqual(['files', 'files.json', 'variables.json']);
    expect(JSON.parse((await readFile(logOf(dir, id), 'utf8')).split('\n')[0]!)).toEqual({
      version: FILE_STORE_FORMAT_VERSION,
      thread: record,
    });
    expect((await new FileStore({ dir }).listMessages(id)).map((m) => m.content)).toEqual(['a2', 'b', 'c']);
    await store.close();
  });

  it('[ST-2] treats a log cut off in its first line (an interrupted creation) as no thread, and creates it afresh', async () => {
    await mkdir(path.join(dir, 'threads'), { recursive: true });
    await writeFile(logOf(dir, 'half-made'), '{"version":2,"thread":{"id":"half-m');
    const store = new FileStore({ dir });
    expect(await store.getThread('half-made')).toBeUndefined();
    expect(await store.listThreads()).toEqual([]);
    // Just made, it may be another process's creation under way: that id is not free yet.
    const early = await store.createThread({ id: 'half-made', prompt: 'p' });
    await expectStoreError(store.appendMessage(early.id, { role: 'user', content: 'x' }), 'THREAD_EXISTS');
    // Left for a while, it is what an interrupted creation left.
    const past = new Date(Date.now() - 60_000);
    await utimes(logOf(dir, 'half-made'), past, past);
    const t = await new FileStore({ dir }).createThread({ id: 'half-made', prompt: 'p' });
    const creator = new FileStore({ dir });
    const made = await creator.createThread({ id: 'half-made', prompt: 'p' });
    expect((await creator.appendMessage(made.id, { role: 'user', content: 'x' })).seq).toBe(1);
    expect(await new FileStore({ dir }).getThread('half-made')).toEqual(made);
    expect(t.id).toBe(made.id);
    await creator.close();
    // A whole one is another thread's.
    await expectStoreError(new FileStore({ dir }).createThread({ id: 'half-made', prompt: 'p' }), 'THREAD_EXISTS');
    await store.close();
  });

  it('moves a thread of the first format once when two processes read it at once, keeping what the first appended', async () => {
    const id = 'raced';
    const folder = path.join(dir, 'threads', id);
    await mkdir(folder, { recursive: true });
    const record = { id, prompt: 'p', createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z', status: 'idle' };
    const legacy = {
      'thread.json': JSON.stringify({ version: 1, ...record }),
      'messages.jsonl': JSON.stringify({ id: 'm1', threadId: id, seq: 1, role: 'user', content: 'a', createdAt: record.createdAt }) + '\n',
    };
    for (const [name, text] of Object.entries(legacy)) await writeFile(path.join(folder, name), text);
    const first = new FileStore({ dir });
    expect((await first.appendMessage(id, { role: 'user', content: 'b' })).seq).toBe(2);
    // The second process read the old files before the first removed them, and moves the thread after the first did.
    await mkdir(folder, { recursive: true });
    for (const [name, text] of Object.entries(legacy)) await writeFile(path.join(folder, name), text);
    const second = new FileStore({ dir }) as unknown as { migrate(id: string): Promise<boolean> };
    await second.migrate(id);
    expect((await new FileStore({ dir }).listMessages(id)).map((m) => m.content)).toEqual(['a', 'b']);
    expect(await readdir(folder).catch(() => [])).toEqual([]);
    await first.close();
  });

  it('keeps its caches within their limits, trimming them in batches, and reads a dropped thread back', async () => {
    // The byte budget binds long before the thread count: about 10 threads' messages fit in it.
    Object.assign(CACHE_LIMITS, { threads: 100, messageBytes: 5000 });
    const store = new FileStore({ dir });
    const internals = store as unknown as {
      threads: Map<string, unknown>;
      appendState: Map<string, { replay?: unknown; cached: number }>;
      unwritten: Set<string>;
      cachedBytes: number;
    };
    const sizes: number[] = [];
    const ids: string[] = [];
    for (let i = 0; i < 300; i++) {
      const t = await store.createThread({ prompt: 'p' });
      await store.appendMessage(t.id, { role: 'user', content: `${i} ${'x'.repeat(400)}` });
      await store.appendMessage(t.id, { role: 'assistant', content: `${i} answered` });
      ids.push(t.id);
      const written = internals.appendState.size - internals.unwritten.size;
      sizes.push(written);
      // A tenth over the limit at most, and the thread just written.
      expect(written).toBeLessThanOrEqual(111);
      expect(internals.threads.size - internals.unwritten.size).toBeLessThanOrEqual(111);
      expect(internals.cachedBytes).toBeLessThanOrEqual(5500);
      const counted = [...internals.appendState.values()].reduce((sum, state) => sum + (state.replay ? state.cached : 0), 0);
      expect(internals.cachedBytes).toBe(counted);
    }
    // Trimmed in batches, down to the limit, once a tenth over: the size goes up and down, rather than
    // staying at the limit as it would with one thread dropped per new one.
    const later = sizes.slice(150);
    expect(Math.min(...later)).toBeLessThanOrEqual(101);
    expect(Math.max(...later)).toBeGreaterThanOrEqual(110);
    // A thread that outgrows a quarter of the budget keeps no parsed messages, and reads back whole.
    const long = await store.createThread({ prompt: 'p' });
    for (let i = 0; i < 30; i++) await store.appendMessage(long.id, { role: 'user', content: `${i} ${'y'.repeat(100)}` });
    expect(internals.appendState.get(long.id)?.replay).toBeUndefined();
    expect((await store.listMessages(long.id)).map((m) => m.seq)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    for (const [i, id] of ids.entries()) {
      expect((await store.listMessages(id)).map((m) => m.content)).toEqual([`${i} ${'x'.repeat(400)}`, `${i} answered`]);
    }
    await store.close();
  });

  it('does not cache a record it read before a write, when the written record left the cache meanwhile', async () => {
    Object.assign(CACHE_LIMITS, { threads: 10 });
    const setup = new FileStore({ dir });
    await setup.createThread({ prompt: 'p', id: 'kept' });
    await setup.appendMessage('kept', { role: 'user', content: 'hi' });
    for (let i = 0; i < 30; i++) {
      await setup.createThread({ prompt: 'p', id: `other${i}` });
      await setup.appendMessage(`other${i}`, { role: 'user', content: 'x' });
    }
    await setup.close();
    const store = new FileStore({ dir });
    // The first read of the thread's log is held back after it has read the bytes: a slow read.
    const internals = store as unknown as { logBytes(id: string, ...rest: unknown[]): Promise<unknown> };
    const read = internals.logBytes.bind(store);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let first = true;
    // The read to hold is chosen when it starts, not when it ends: the update's own read may finish first.
    internals.logBytes = async (id, ...rest) => {
      const hold = id === 'kept' && first;
      if (hold) first = false;
      const bytes = await read(id, ...rest);
      if (hold) await held;
      return bytes;
    };
    const slow = store.getThread('kept');
    await store.updateThread('kept', { status: 'running' });
    // Other threads fill the cache: the written record is dropped from it.
    for (let i = 0; i < 30; i++) await store.getThread(`other${i}`);
    release();
    expect((await slow)?.status).toBe('running');
    expect((await store.getThread('kept'))?.status).toBe('running');
    await store.updateThread('kept', { meta: { k: 1 } });
    await store.close();
    expect((await new FileStore({ dir }).getThread('kept'))?.status).toBe('running');
  });

  it("keeps the message cache's byte count exact through status changes, repairs and forgetting", async () => {
    const store = new FileStore({ dir });
    const cached = () => (store as unknown as { cachedBytes: number }).cachedBytes;
    const t = await store.createThread(OWN_LOG);
    await store.appendMessage(t.id, { role: 'user', content: 'x' });
    for (let i = 0; i < 5; i++) await store.updateThread(t.id, { status: 'running', meta: { pad: 'y'.repeat(1000), i } });
    expect(cached()).toBe(statSync(logOf(dir, t.id)).size);
    // Another process writes: the lock check forgets what was cached, exactly.
    const other = new FileStore({ dir });
    await other.appendMessage(t.id, { role: 'assistant', content: 'z' });
    await other.close();
    await (
      await store.lockThread(t.id, 1000)
    )();
    expect(cached()).toBe(0);
    expect((await store.listMessages(t.id)).map((m) => m.content)).toEqual(['x', 'z']);
    expect(cached()).toBe(statSync(logOf(dir, t.id)).size);
    await store.close();
  });

  it("keeps an edit made after the thread's parsed messages were dropped from the cache", async () => {
    const store = new FileStore({ dir });
    const t = await store.createThread({ prompt: 'p' });
    const a = await store.appendMessage(t.id, { role: 'user', content: 'a' });
    await store.appendMessage(t.id, { role: 'user', content: 'b' });
    // What the budget does to the least recently used thread.
    const internals = store as unknown as { appendState: Map<string, object>; dropCached(state: object): void };
    internals.dropCached(internals.appendState.get(t.id)!);
    await store.updateMessage(t.id, a.id, { content: 'a2' });
    expect((await store.listMessages(t.id)).map((m) => m.content)).toEqual(['a2', 'b']);
    expect((await store.appendMessage(t.id, { role: 'user', content: 'c' })).seq).toBe(3);
    expect((await new FileStore({ dir }).listMessages(t.id)).map((m) => m.content)).toEqual(['a2', 'b', 'c']);
    await store.close();
  });

  it('serves a thread created here but not yet written from memory, even when its cache entry is gone', async () => {
    const store = new FileStore({ dir });
    const t = await store.createThread({ prompt: 'p' });
    (store as unknown as { appendState: Map<string, unknown> }).appendState.delete(t.id);
    expect(await store.listMessages(t.id)).toEqual([]);
    await expectStoreError(store.updateMessage(t.id, 'nope', { content: 'x' }), 'INVALID_ARGUMENTS', 'nope');
    expect((await store.appendMessage(t.id, { role: 'user', content: 'x' })).seq).toBe(1);
    await store.close();
  });

  it('sees a status another process appended once it takes the lock', async () => {
    const store = new FileStore({ dir });
    const t = await store.createThread({ prompt: 'p' });
    await store.appendMessage(t.id, { role: 'user', content: 'x' });
    const other = new FileStore({ dir });
    const releaseOther = await other.lockThread(t.id, 0);
    await other.updateThread(t.id, { status: 'interrupted' });
    await releaseOther();
    const release = await store.lockThread(t.id, 1000);
    expect((await store.getThread(t.id))?.status).toBe('interrupted');
    await release();
    await Promise.all([store.close(), other.close()]);
  });

  it('skips an unreadable thread in listThreads with a warning', async () => {
    const store = new FileStore({ dir });
    const good = await store.createThread({ prompt: 'p' });
    await store.updateThread(good.id, { status: 'idle' });
    await mkdir(path.join(dir, 'threads', 'broken'), { recursive: true });
    await writeFile(path.join(dir, 'threads', 'broken', 'thread.json'), '{nope');
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    expect((await new FileStore({ dir }).listThreads()).map((t) => t.id)).toEqual([good.id]);
    expect(stderr.mock.calls.map((c) => String(c[0])).join('')).toContain('broken');
    await expectStoreError(new FileStore({ dir }).getThread('broken'), 'CORRUPT_DATA', 'thread.json');
  });

  it('[ST-2] reports a first-format thread whose messages have no thread.json beside them as damaged, not missing', async () => {
    await mkdir(path.join(dir, 'threads', 'orphaned'), { recursive: true });
    await writeFile(
      path.join(dir, 'threads', 'orphaned', 'messages.jsonl'),
      `${JSON.stringify({ id: 'm1', threadId: 'orphaned', seq: 1, createdAt: '2025-01-01T00:00:00.000Z', role: 'user', content: 'hi' })}\n`,
    );
    const store = new FileStore({ dir });
    await expectStoreError(store.getThread('orphaned'), 'CORRUPT_DATA', 'thread.json');
    await expectStoreError(store.listMessages('orphaned'), 'CORRUPT_DATA', 'thread.json');
    expect(await store.getThread('never-was')).toBeUndefined();
  });
});

describe('FileStore when a thread cannot be written', () => {
  it('loses and doubles nothing when a write to a pack stops part way (ENOSPC), wherever it stops', async () => {
    // The kernel writes part of a record, then fails: inside the thread record, after whole log lines of the
    // record, or just before its last newline (the record is whole then). The failed call is then followed by more.
    const script = `
      import fs from 'node:fs';
      import { syncBuiltinESMExports } from 'node:module';
      const { FileStore } = await import(${JSON.stringify(path.join(REPO_ROOT, 'dist', 'store', 'fileStore.js'))});
      const [dir, cutAt, scenario] = process.argv.slice(1);
      const realWrite = fs.writeSync;
      let armed = false;
      fs.writeSync = function (fd, buf, off = 0, ...rest) {
        if (armed && Buffer.isBuffer(buf) && buf.includes('failing')) {
          armed = false;
          const text = buf.toString('latin1');
          const cut = cutAt === 'header' || cutAt === 'short' ? 40 : cutAt === 'lines' ? text.indexOf('\x1f', text.indexOf('\x1f') + 1) + 5 : buf.length - 1;
          const written = realWrite.call(fs, fd, buf, off, cut - off);
          // A short write: what a full disk does first (the next write would fail outright).
          if (cutAt === 'short') return written;
          throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
        }
        return realWrite.call(fs, fd, buf, off, ...rest);
      };
      syncBuiltinESMExports();
      const store = new FileStore({ dir });
      const t = await store.createThread({ prompt: 'p' });
      await store.appendMessage(t.id, { role: 'user', content: 'opening' }, { withNextWrite: true });
      if (scenario === 'later') await store.appendMessage(t.id, { role: 'user', content: 'first' });
      armed = true;
      let failed = '';
      try { await store.appendMessage(t.id, { role: 'assistant', content: 'failing' }); } catch (e) { failed = e.code === 'INTERNAL' ? e.data.errno : e.code; }
      await store.updateThread(t.id, { status: 'failed' });
      await store.appendMessage(t.id, { role: 'assistant', content: 'after' });
      const here = (await store.listMessages(t.id)).map((m) => m.seq + ':' + m.content);
      await (await store.lockThread(t.id, 1000))();
      const locked = (await store.listMessages(t.id)).map((m) => m.seq + ':' + m.content);
      await store.close();
      const fresh = new FileStore({ dir });
      const thread = await fresh.getThread(t.id);
      const listed = (await fresh.listThreads()).map((r) => r.id === t.id);
      console.log(JSON.stringify({ failed, here, locked, status: thread && thread.status, read: (await fresh.listMessages(t.id)).map((m) => m.seq + ':' + m.content), listed }));`;
    const run = (cutAt: string, scenario: 'first write' | 'later') => {
      const dir = mkdtempSync(path.join(tmpdir(), 'agentport-torn-'));
      try {
        const child = spawnSync(process.execPath, ['--input-type=module', '-e', script, dir, cutAt, scenario], { encoding: 'utf8' });
        expect(child.stderr).toBe('');
        return JSON.parse(child.stdout) as Record<string, unknown>;
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    };
    // The thread's first write (its record, the waiting opening message, the answer) fails: nothing of it counts.
    for (const cutAt of ['header', 'lines']) {
      expect(run(cutAt, 'first write')).toEqual({
        failed: 'ENOSPC',
        here: ['1:opening', '2:after'],
        locked: ['1:opening', '2:after'],
        status: 'failed',
        read: ['1:opening', '2:after'],
        listed: [true],
      });
    }
    // A short write is not continued (the rest could land after another process's record): the append fails.
    expect(run('short', 'first write')).toMatchObject({ failed: 'EIO', read: ['1:opening', '2:after'], status: 'failed' });
    expect(run('short', 'later')).toMatchObject({ failed: 'EIO', read: ['1:opening', '2:first', '3:after'] });
    // Whole but for its newline: written (every reader counts it), like a log's last line that lost only its
    // newline; the first write is not tried again, which would start the thread's log over; no seq is given twice.
    expect(run('end', 'first write')).toEqual({
      failed: '',
      here: ['1:opening', '2:failing', '3:after'],
      locked: ['1:opening', '2:failing', '3:after'],
      status: 'failed',
      read: ['1:opening', '2:failing', '3:after'],
      listed: [true],
    });
    expect(run('end', 'later')).toMatchObject({ failed: 'ENOSPC', read: ['1:opening', '2:first', '3:failing', '4:after'] });
    expect(run('lines', 'later')).toMatchObject({ failed: 'ENOSPC', read: ['1:opening', '2:first', '3:after'] });
  });

  it('[RL-5] does not keep the lock of a thread whose first write failed: the next lock tries the write again', async () => {
    // A process limited to 512-byte files (ulimit -f): the thread's first write, with a longer opening message, fails.
    const dir = await makeTempDir();
    const script = `
      import { FileStore } from ${JSON.stringify(path.join(REPO_ROOT, 'dist', 'store', 'fileStore.js'))};
      const store = new FileStore({ dir: process.argv[1] });
      const t = await store.createThread({ prompt: 'p' });
      await store.appendMessage(t.id, { role: 'user', content: 'x'.repeat(4096) }, { withNextWrite: true });
      const attempt = async () => {
        try { await (await store.lockThread(t.id, 0))(); return 'locked'; } catch (e) { return e.data ? e.code + ' ' + e.data.errno : e.message; }
      };
      console.log(JSON.stringify([await attempt(), await attempt()]));
      process.exit(0);`;
    try {
      const run = spawnSync('bash', ['-c', 'ulimit -f 1; exec "$0" "$@"', process.execPath, '--input-type=module', '-e', script, dir], {
        encoding: 'utf8',
      });
      expect(run.stderr).toBe('');
      // The first write stops short at the limit (EIO: it is not continued), the second is refused outright.
      expect(JSON.parse(run.stdout)).toEqual(['INTERNAL EIO', 'INTERNAL EFBIG']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
