/**
 * The Store contract: one suite, run against every implementation (memoryStore.test.ts,
 * fileStore.test.ts). Implementation-specific behaviour (persistence, encryption on disk,
 * symlinks) is tested in the implementation's own file.
 */
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentportError, type AgentportErrorCode } from '../../src/errors.js';
import type { AttachmentRef, Store } from '../../src/store/types.js';

/** A fresh, empty store and how to dispose of it. */
export interface StoreHarness {
  store: Store;
  cleanup(): Promise<void>;
  /** Another store object on the same data, as another process would open it (persisting stores). */
  another?(): Store;
  /**
   * Puts a file of an existing thread in place as a store without today's path limits kept it, bypassing the store's
   * checks (the thread has been written to first). False when the store's medium cannot hold that path at all.
   */
  plantFile(threadId: string, ref: AttachmentRef, data: Uint8Array): Promise<boolean>;
}

/** Awaits `promise` and checks it rejects with an AgentportError of `code` whose message contains `mentions`. */
export async function expectStoreError(promise: Promise<unknown>, code: AgentportErrorCode, mentions?: string): Promise<AgentportError> {
  let caught: unknown;
  try {
    await promise;
  } catch (err) {
    caught = err;
  }
  expect(caught, `expected an AgentportError ${code}`).toBeInstanceOf(AgentportError);
  const err = caught as AgentportError;
  expect(err.code).toBe(code);
  if (mentions !== undefined) expect(err.message).toContain(mentions);
  return err;
}

/** Resolves to `missing` (nothing at that path), or rejects with INVALID_PATH. */
async function expectMissingOrRefused(promise: Promise<unknown>, missing: unknown): Promise<void> {
  const outcome = await promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if ('value' in outcome) expect(outcome.value).toBe(missing);
  else expect((outcome.error as AgentportError).code).toBe('INVALID_PATH');
}

/** Bytes 0..255 then pseudo-random bytes: every byte value, and enough to spot any re-encoding. */
export function sampleBytes(length = 70_000): Uint8Array {
  const data = new Uint8Array(length);
  let x = 12345;
  for (let i = 0; i < length; i++) {
    if (i < 256) {
      data[i] = i;
    } else {
      x = (x * 1103515245 + 12345) >>> 0;
      data[i] = x >>> 24;
    }
  }
  return data;
}

/** Registers the contract tests for a store implementation. */
export function describeStoreContract(name: string, makeStore: () => Promise<StoreHarness>): void {
  describe(`${name} satisfies the Store contract`, () => {
    let harness: StoreHarness;
    let store: Store;

    beforeEach(async () => {
      harness = await makeStore();
      store = harness.store;
    });

    afterEach(async () => {
      await store.close?.();
      await harness.cleanup();
    });

    describe('threads', () => {
      it('creates an idle thread with a generated id and reads it back', async () => {
        const created = await store.createThread({ prompt: 'support', meta: { origin: 'test' } });
        expect(created.id).toMatch(/^[A-Za-z0-9][A-Za-z0-9_-]*$/);
        expect(created).toMatchObject({ prompt: 'support', status: 'idle', meta: { origin: 'test' } });
        expect(Date.parse(created.createdAt)).not.toBeNaN();
        expect(created.updatedAt).toBe(created.createdAt);
        expect(await store.getThread(created.id)).toEqual(created);
      });

      it('uses a given id and refuses to create it twice', async () => {
        const created = await store.createThread({ id: 'thread_1-A', prompt: 'p' });
        expect(created.id).toBe('thread_1-A');
        await expectStoreError(store.createThread({ id: 'thread_1-A', prompt: 'p' }), 'THREAD_EXISTS', 'thread_1-A');
      });

      it('refuses thread ids that are not safe folder names', async () => {
        for (const id of ['../x', 'a/b', '', '.', '..', 'a b', 'a\\b', '-lead', 'x'.repeat(129), 'a\0b', 'C:']) {
          await expectStoreError(store.createThread({ id, prompt: 'p' }), 'INVALID_THREAD_ID');
        }
        await expectStoreError(store.createThread({ prompt: 'p', parentId: '../up' }), 'INVALID_THREAD_ID', '../up');
      });

      it('returns undefined for an unknown or malformed thread id', async () => {
        expect(await store.getThread('nope')).toBeUndefined();
        expect(await store.getThread('../../etc')).toBeUndefined();
      });

      it('keeps the parent id of a child thread', async () => {
        const parent = await store.createThread({ prompt: 'team' });
        const child = await store.createThread({ prompt: 'worker', parentId: parent.id });
        expect((await store.getThread(child.id))?.parentId).toBe(parent.id);
      });

      it('updates status and replaces meta, bumping updatedAt', async () => {
        const t = await store.createThread({ prompt: 'p', meta: { a: 1 } });
        await new Promise((r) => setTimeout(r, 5));
        const updated = await store.updateThread(t.id, { status: 'running', meta: { b: 2 } });
        expect(updated).toMatchObject({ id: t.id, prompt: 'p', status: 'running', meta: { b: 2 }, createdAt: t.createdAt });
        expect(updated.updatedAt > t.updatedAt).toBe(true);
        const again = await store.updateThread(t.id, { status: 'completed' });
        expect(again.meta).toEqual({ b: 2 });
        expect(await store.getThread(t.id)).toEqual(again);
      });

      it('refuses to update an unknown thread or to set an unknown status', async () => {
        await expectStoreError(store.updateThread('missing', { status: 'running' }), 'THREAD_NOT_FOUND', 'missing');
        const t = await store.createThread({ prompt: 'p' });
        await expectStoreError(store.updateThread(t.id, { status: 'bogus' as never }), 'INVALID_ARGUMENTS', 'bogus');
      });

      it('lists every thread, oldest first', async () => {
        expect(await store.listThreads()).toEqual([]);
        const a = await store.createThread({ prompt: 'a' });
        await new Promise((r) => setTimeout(r, 3));
        const b = await store.createThread({ prompt: 'b' });
        await new Promise((r) => setTimeout(r, 3));
        const c = await store.createThread({ prompt: 'c' });
        expect((await store.listThreads()).map((t) => t.id)).toEqual([a.id, b.id, c.id]);
      });

      it('hands out copies: mutating a returned or given record changes nothing stored', async () => {
        const meta = { nested: { n: 1 } };
        const t = await store.createThread({ prompt: 'p', meta });
        meta.nested.n = 2;
        t.status = 'failed';
        const read = await store.getThread(t.id);
        expect(read?.status).toBe('idle');
        expect(read?.meta).toEqual({ nested: { n: 1 } });
      });
    });

    describe('messages', () => {
      it('assigns seq 1..N, ids and timestamps, and lists messages in order with every field', async () => {
        const t = await store.createThread({ prompt: 'p' });
        const m1 = await store.appendMessage(t.id, { role: 'user', content: 'hello' });
        const m2 = await store.appendMessage(t.id, {
          role: 'assistant',
          content: null,
          toolCalls: [{ id: 'call_1', name: 'search_docs', arguments: '{"q":"x"' }],
          reasoning: 'thinking',
          side: 'a',
        });
        const m3 = await store.appendMessage(t.id, {
          id: 'given-id',
          role: 'tool',
          content: [
            { type: 'text', text: 'result' },
            { type: 'image', path: '/attachments/chart.png', mimeType: 'image/png', description: 'a chart' },
          ],
          toolCallId: 'call_1',
          toolName: 'search_docs',
          toolStatus: 'success',
          attachments: [{ id: 'f1', type: 'file', path: '/attachments/chart.png', name: 'chart.png', mimeType: 'image/png', size: 3 }],
          meta: { k: [1, 2] },
        });
        expect([m1.seq, m2.seq, m3.seq]).toEqual([1, 2, 3]);
        expect(m1.threadId).toBe(t.id);
        expect(m1.id).not.toBe(m2.id);
        expect(m3.id).toBe('given-id');
        expect(Date.parse(m1.createdAt)).not.toBeNaN();
        expect(await store.listMessages(t.id)).toEqual([m1, m2, m3]);
      });

      it('numbers each thread separately', async () => {
        const a = await store.createThread({ prompt: 'p' });
        const b = await store.createThread({ prompt: 'p' });
        await store.appendMessage(a.id, { role: 'user', content: '1' });
        await store.appendMessage(a.id, { role: 'user', content: '2' });
        const first = await store.appendMessage(b.id, { role: 'user', content: '1' });
        expect(first.seq).toBe(1);
        expect(await store.listMessages(b.id)).toHaveLength(1);
      });

      it('gives concurrent appends seq 1..N with none lost', async () => {
        const t = await store.createThread({ prompt: 'p' });
        const n = 60;
        const results = await Promise.all(
          Array.from({ length: n }, (_, i) => store.appendMessage(t.id, { role: 'user', content: `m${i}` })),
        );
        expect(results.map((m) => m.seq).sort((x, y) => x - y)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
        const listed = await store.listMessages(t.id);
        expect(listed.map((m) => m.seq)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
        expect(new Set(listed.map((m) => m.content)).size).toBe(n);
      });

      it('lists appends that were started but not yet awaited', async () => {
        const t = await store.createThread({ prompt: 'p' });
        const pending = store.appendMessage(t.id, { role: 'user', content: 'x' });
        const listed = await store.listMessages(t.id);
        expect(listed.map((m) => m.content)).toEqual(['x']);
        await pending;
      });

      it('stores the message as it was when appended, not as the caller later changes it', async () => {
        const t = await store.createThread({ prompt: 'p' });
        const message = { role: 'user' as const, content: 'before', meta: { v: 1 } };
        const stored = store.appendMessage(t.id, message);
        message.content = 'after';
        message.meta.v = 2;
        await stored;
        expect((await store.listMessages(t.id))[0]).toMatchObject({ content: 'before', meta: { v: 1 } });
      });

      it('refuses messages for an unknown thread or with an invalid role', async () => {
        await expectStoreError(store.appendMessage('missing', { role: 'user', content: 'x' }), 'THREAD_NOT_FOUND', 'missing');
        await expectStoreError(store.listMessages('missing'), 'THREAD_NOT_FOUND');
        const t = await store.createThread({ prompt: 'p' });
        await expectStoreError(store.appendMessage(t.id, { role: 'robot' as never, content: 'x' }), 'INVALID_ARGUMENTS', 'robot');
        expect(await store.listMessages(t.id)).toEqual([]);
      });

      it('updates content, meta and reasoning of a message, keeping id, seq, createdAt and the rest', async () => {
        const t = await store.createThread({ prompt: 'p' });
        const m1 = await store.appendMessage(t.id, { role: 'user', content: 'question' });
        const m2 = await store.appendMessage(t.id, {
          role: 'assistant',
          content: 'draft',
          toolCalls: [{ id: 'call_1', name: 'search', arguments: '{}' }],
          reasoning: 'first thoughts',
          side: 'b',
          meta: { a: 1, keep: false },
        });
        const updated = await store.updateMessage(t.id, m2.id, { content: [{ type: 'text', text: 'final' }], meta: { b: 2 } });
        // meta is replaced, not merged.
        expect(updated).toEqual({ ...m2, content: [{ type: 'text', text: 'final' }], meta: { b: 2 } });
        expect(await store.listMessages(t.id)).toEqual([m1, updated]);

        const again = await store.updateMessage(t.id, m2.id, { reasoning: 'second thoughts', content: undefined });
        expect(again).toEqual({ ...updated, reasoning: 'second thoughts' });
        expect(await store.updateMessage(t.id, m1.id, { content: null })).toEqual({ ...m1, content: null });
        expect(await store.listMessages(t.id)).toEqual([{ ...m1, content: null }, again]);
        // Updates do not count as appends.
        expect((await store.appendMessage(t.id, { role: 'user', content: 'next' })).seq).toBe(3);
      });

      it('refuses to update an unknown message, or fields other than content, meta and reasoning', async () => {
        const t = await store.createThread({ prompt: 'p' });
        const m = await store.appendMessage(t.id, { role: 'user', content: 'x', meta: { v: 1 } });
        const err = await expectStoreError(store.updateMessage(t.id, 'nope', { content: 'y' }), 'INVALID_ARGUMENTS');
        expect(err.message).toBe(`message "nope" does not exist in thread ${t.id}`);
        await expectStoreError(store.updateMessage('missing', m.id, { content: 'y' }), 'THREAD_NOT_FOUND', 'missing');
        await expectStoreError(store.updateMessage(t.id, m.id, { seq: 9 } as never), 'INVALID_ARGUMENTS', '"seq"');
        await expectStoreError(store.updateMessage(t.id, m.id, { role: 'tool' } as never), 'INVALID_ARGUMENTS', '"role"');
        await expectStoreError(store.updateMessage(t.id, m.id, { meta: 'x' } as never), 'INVALID_ARGUMENTS', 'meta');
        await expectStoreError(store.updateMessage(t.id, m.id, { reasoning: 1 } as never), 'INVALID_ARGUMENTS', 'reasoning');
        await expectStoreError(store.updateMessage(t.id, m.id, { content: 5 } as never), 'INVALID_ARGUMENTS', 'content');
        await expectStoreError(store.updateMessage(t.id, m.id, null as never), 'INVALID_ARGUMENTS');
        expect(await store.listMessages(t.id)).toEqual([m]);
      });

      it('keeps an update as it was when made, not as the caller later changes the patch or the result', async () => {
        const t = await store.createThread({ prompt: 'p' });
        const m = await store.appendMessage(t.id, { role: 'user', content: 'x' });
        const patch = { meta: { n: 1 } };
        const pending = store.updateMessage(t.id, m.id, patch);
        patch.meta.n = 2;
        const updated = await pending;
        updated.meta!.n = 3;
        expect((await store.listMessages(t.id))[0]!.meta).toEqual({ n: 1 });
      });

      it('deletes messages, keeps the seq of the others and never reuses a deleted seq', async () => {
        const t = await store.createThread({ prompt: 'p' });
        const [m1, m2, m3, m4] = [
          await store.appendMessage(t.id, { role: 'user', content: '1' }),
          await store.appendMessage(t.id, { role: 'assistant', content: '2' }),
          await store.appendMessage(t.id, { role: 'user', content: '3' }),
          await store.appendMessage(t.id, { role: 'assistant', content: '4' }),
        ];
        await store.deleteMessages(t.id, [m2.id, m4.id, 'no-such-id']);
        expect(await store.listMessages(t.id)).toEqual([m1, m3]);
        // m4 had the highest seq: the next append goes after it anyway.
        const m5 = await store.appendMessage(t.id, { role: 'user', content: '5' });
        expect(m5.seq).toBe(5);
        expect((await store.listMessages(t.id)).map((m) => m.seq)).toEqual([1, 3, 5]);
        await store.deleteMessages(t.id, [m1.id, m3.id, m5.id]);
        expect(await store.listMessages(t.id)).toEqual([]);
        expect((await store.appendMessage(t.id, { role: 'user', content: '6' })).seq).toBe(6);
        await expectStoreError(store.updateMessage(t.id, m2.id, { content: 'back?' }), 'INVALID_ARGUMENTS', m2.id);
      });

      it('ignores unknown ids and an empty list in deleteMessages, and refuses an unknown thread or non-string ids', async () => {
        const t = await store.createThread({ prompt: 'p' });
        const m = await store.appendMessage(t.id, { role: 'user', content: 'x' });
        await store.deleteMessages(t.id, []);
        await store.deleteMessages(t.id, ['a', 'b']);
        expect(await store.listMessages(t.id)).toEqual([m]);
        await expectStoreError(store.deleteMessages('missing', [m.id]), 'THREAD_NOT_FOUND', 'missing');
        await expectStoreError(store.deleteMessages(t.id, [m.id, 7] as never), 'INVALID_ARGUMENTS');
        await expectStoreError(store.deleteMessages(t.id, m.id as never), 'INVALID_ARGUMENTS');
        expect(await store.listMessages(t.id)).toEqual([m]);
      });

      it('does not let a deletion touch a later message that reuses the deleted id', async () => {
        const t = await store.createThread({ prompt: 'p' });
        await store.appendMessage(t.id, { id: 'same', role: 'user', content: 'old' });
        await store.deleteMessages(t.id, ['same']);
        const again = await store.appendMessage(t.id, { id: 'same', role: 'user', content: 'new' });
        expect(again.seq).toBe(2);
        expect(await store.listMessages(t.id)).toEqual([again]);
        const updated = await store.updateMessage(t.id, 'same', { content: 'newer' });
        expect(await store.listMessages(t.id)).toEqual([updated]);
        expect(updated).toMatchObject({ seq: 2, content: 'newer' });
      });

      it('applies appends, updates and deletions in the order they were started', async () => {
        const t = await store.createThread({ prompt: 'p' });
        const pending = [
          store.appendMessage(t.id, { id: 'a', role: 'user', content: 'a' }),
          store.appendMessage(t.id, { id: 'b', role: 'user', content: 'b' }),
          store.updateMessage(t.id, 'a', { content: 'a2' }),
          store.deleteMessages(t.id, ['b']),
          store.appendMessage(t.id, { id: 'c', role: 'user', content: 'c' }),
        ];
        const listed = await store.listMessages(t.id);
        expect(listed.map((m) => [m.id, m.seq, m.content])).toEqual([
          ['a', 1, 'a2'],
          ['c', 3, 'c'],
        ]);
        await Promise.all(pending);
      });
    });

    describe('opening messages that wait for the next write (withNextWrite)', () => {
      const others: Store[] = [];
      const another = (): Store | undefined => {
        const other = harness.another?.();
        if (other) others.push(other);
        return other;
      };
      afterEach(async () => {
        for (const other of others.splice(0)) await other.close?.();
      });

      it('are stored as far as this store object tells: seq, reads, and the appends after them', async () => {
        const t = await store.createThread({ prompt: 'p' });
        const first = await store.appendMessage(t.id, { role: 'system', content: 'rules' }, { withNextWrite: true });
        const second = await store.appendMessage(t.id, { role: 'user', content: 'hi' }, { withNextWrite: true });
        expect([first.seq, second.seq]).toEqual([1, 2]);
        expect((await store.listMessages(t.id)).map((m) => [m.seq, m.id, m.content])).toEqual([
          [1, first.id, 'rules'],
          [2, second.id, 'hi'],
        ]);
        const answer = await store.appendMessage(t.id, { role: 'assistant', content: 'hello' });
        expect(answer.seq).toBe(3);
        expect((await store.listMessages(t.id)).map((m) => m.content)).toEqual(['rules', 'hi', 'hello']);
      });

      it('are written with the next append, in order, for every other store object to read', async () => {
        const t = await store.createThread({ prompt: 'p', meta: { k: 1 } });
        const opening = await store.appendMessage(t.id, { role: 'user', content: 'hi' }, { withNextWrite: true });
        const answer = await store.appendMessage(t.id, { role: 'assistant', content: 'hello' });
        const other = another();
        if (!other) return;
        expect(await other.getThread(t.id)).toMatchObject({ id: t.id, prompt: 'p', meta: { k: 1 } });
        expect(await other.listMessages(t.id)).toEqual([opening, answer]);
      });

      it('are written by the first other write (status, variables, files) and by taking the lock', async () => {
        const byStatus = await store.createThread({ prompt: 'p' });
        await store.appendMessage(byStatus.id, { role: 'user', content: 'a' }, { withNextWrite: true });
        await store.updateThread(byStatus.id, { status: 'running' });
        const byVariables = await store.createThread({ prompt: 'p' });
        await store.appendMessage(byVariables.id, { role: 'user', content: 'b' }, { withNextWrite: true });
        await store.setVariables(byVariables.id, [{ name: 'X', value: '1', secret: false }]);
        const byFile = await store.createThread({ prompt: 'p' });
        await store.appendMessage(byFile.id, { role: 'user', content: 'c' }, { withNextWrite: true });
        await store.writeFile(byFile.id, '/a.txt', new TextEncoder().encode('x'), { mimeType: 'text/plain' });
        const byLock = await store.createThread({ prompt: 'p' });
        await store.appendMessage(byLock.id, { role: 'user', content: 'd' }, { withNextWrite: true });
        if (store.lockThread) await (await store.lockThread(byLock.id, 1000))();
        const other = another();
        if (!other) return;
        expect((await other.getThread(byStatus.id))?.status).toBe('running');
        const written = [byStatus, byVariables, byFile, ...(store.lockThread ? [byLock] : [])];
        for (const [i, thread] of written.entries()) {
          expect((await other.listMessages(thread.id)).map((m) => m.content)).toEqual([['a', 'b', 'c', 'd'][i]]);
        }
      });

      it('are written at close, and meanwhile no other store object sees the thread', async () => {
        const t = await store.createThread({ prompt: 'p' });
        const opening = await store.appendMessage(t.id, { role: 'user', content: 'hi' }, { withNextWrite: true });
        const other = another();
        if (!other) return;
        expect(await other.getThread(t.id)).toBeUndefined();
        await store.close?.();
        expect(await other.listMessages(t.id)).toEqual([opening]);
      });

      it('go at once to a thread that is stored already', async () => {
        const t = await store.createThread({ prompt: 'p' });
        await store.appendMessage(t.id, { role: 'user', content: 'first' });
        const later = await store.appendMessage(t.id, { role: 'user', content: 'second' }, { withNextWrite: true });
        expect(later.seq).toBe(2);
        const other = another();
        if (!other) return;
        expect((await other.listMessages(t.id)).map((m) => m.content)).toEqual(['first', 'second']);
      });
    });

    describe('files', () => {
      it('[TL-6] stores an attachment under /attachments/ byte-identical, with its metadata', async () => {
        const t = await store.createThread({ prompt: 'p' });
        const data = sampleBytes();
        const ref = await store.writeFile(t.id, '/attachments/chart.png', data, {
          mimeType: 'image/png',
          width: 800,
          height: 600,
          description: 'bar chart',
        });
        expect(ref).toEqual({
          id: ref.id,
          type: 'file',
          path: '/attachments/chart.png',
          name: 'chart.png',
          mimeType: 'image/png',
          size: data.byteLength,
          width: 800,
          height: 600,
          description: 'bar chart',
        });
        expect(ref.id).toBeTruthy();
        const read = await store.readFile(t.id, '/attachments/chart.png');
        expect(read).toBeDefined();
        expect(Buffer.from(read!.data).equals(Buffer.from(data))).toBe(true);
        expect(read!.ref).toEqual(ref);
        expect(await store.listFiles(t.id, '/attachments/')).toEqual([ref]);
      });

      it('[TL-6] keeps a copy: changing the written buffer afterwards does not change the file', async () => {
        const t = await store.createThread({ prompt: 'p' });
        const data = new Uint8Array([1, 2, 3]);
        const writing = store.writeFile(t.id, '/attachments/a.bin', data, { mimeType: 'application/octet-stream' });
        data[0] = 9;
        await writing;
        const read = await store.readFile(t.id, '/attachments/a.bin');
        expect([...read!.data]).toEqual([1, 2, 3]);
        read!.data[1] = 9;
        expect([...(await store.readFile(t.id, '/attachments/a.bin'))!.data]).toEqual([1, 2, 3]);
      });

      it('normalises paths to POSIX form rooted at /', async () => {
        const t = await store.createThread({ prompt: 'p' });
        const ref = await store.writeFile(t.id, 'attachments//a/./b.txt', new Uint8Array([1]), { mimeType: 'text/plain', name: 'B' });
        expect(ref.path).toBe('/attachments/a/b.txt');
        expect(ref.name).toBe('B');
        expect((await store.readFile(t.id, '/attachments/a/b.txt'))?.ref.path).toBe('/attachments/a/b.txt');
        expect((await store.readFile(t.id, 'attachments/a/b.txt'))?.ref.path).toBe('/attachments/a/b.txt');
      });

      it('lists files at or under a directory prefix, sorted by path', async () => {
        const t = await store.createThread({ prompt: 'p' });
        const info = { mimeType: 'text/plain' };
        await store.writeFile(t.id, '/attachments/b.txt', new Uint8Array([1]), info);
        await store.writeFile(t.id, '/attachments/a.txt', new Uint8Array([1]), info);
        await store.writeFile(t.id, '/attachments/sub/c.txt', new Uint8Array([1]), info);
        await store.writeFile(t.id, '/attachments-old/d.txt', new Uint8Array([1]), info);
        await store.writeFile(t.id, '/notes.md', new Uint8Array([1]), info);
        const paths = (refs: { path: string }[]) => refs.map((r) => r.path);
        expect(paths(await store.listFiles(t.id, '/attachments'))).toEqual([
          '/attachments/a.txt',
          '/attachments/b.txt',
          '/attachments/sub/c.txt',
        ]);
        expect(paths(await store.listFiles(t.id, '/attachments/'))).toEqual([
          '/attachments/a.txt',
          '/attachments/b.txt',
          '/attachments/sub/c.txt',
        ]);
        expect(paths(await store.listFiles(t.id, '/attachments/sub'))).toEqual(['/attachments/sub/c.txt']);
        expect(paths(await store.listFiles(t.id))).toEqual([
          '/attachments-old/d.txt',
          '/attachments/a.txt',
          '/attachments/b.txt',
          '/attachments/sub/c.txt',
          '/notes.md',
        ]);
        expect(await store.listFiles(t.id, '/nothing-here')).toEqual([]);
      });

      it('replaces a file written again at the same path', async () => {
        const t = await store.createThread({ prompt: 'p' });
        await store.writeFile(t.id, '/attachments/x.txt', new Uint8Array([1, 2, 3]), { mimeType: 'text/plain' });
        const ref = await store.writeFile(t.id, '/attachments/x.txt', new Uint8Array([4]), { mimeType: 'text/csv' });
        const read = await store.readFile(t.id, '/attachments/x.txt');
        expect([...read!.data]).toEqual([4]);
        expect(read!.ref).toEqual(ref);
        expect(await store.listFiles(t.id)).toEqual([ref]);
      });

      it('returns undefined for a file that does not exist', async () => {
        const t = await store.createThread({ prompt: 'p' });
        expect(await store.readFile(t.id, '/attachments/none.png')).toBeUndefined();
      });

      it('refuses a write where a file and a directory would clash, and a write to the root', async () => {
        const t = await store.createThread({ prompt: 'p' });
        await store.writeFile(t.id, '/a', new Uint8Array([1]), { mimeType: 'text/plain' });
        await store.writeFile(t.id, '/d/e', new Uint8Array([1]), { mimeType: 'text/plain' });
        await expectStoreError(store.writeFile(t.id, '/a/b', new Uint8Array([1]), { mimeType: 'text/plain' }), 'INVALID_PATH', '/a/b');
        await expectStoreError(store.writeFile(t.id, '/d', new Uint8Array([1]), { mimeType: 'text/plain' }), 'INVALID_PATH', '/d');
        await expectStoreError(store.writeFile(t.id, '/', new Uint8Array([1]), { mimeType: 'text/plain' }), 'INVALID_PATH');
      });

      it('refuses file operations on an unknown thread and files without a mimeType', async () => {
        await expectStoreError(store.writeFile('missing', '/a', new Uint8Array([1]), { mimeType: 'text/plain' }), 'THREAD_NOT_FOUND');
        await expectStoreError(store.readFile('missing', '/a'), 'THREAD_NOT_FOUND');
        await expectStoreError(store.listFiles('missing'), 'THREAD_NOT_FOUND');
        const t = await store.createThread({ prompt: 'p' });
        await expectStoreError(store.writeFile(t.id, '/a', new Uint8Array([1]), { mimeType: '' }), 'INVALID_ARGUMENTS');
      });

      it('[TL-7] refuses a path that escapes the thread files via ..', async () => {
        const t = await store.createThread({ prompt: 'p' });
        const bytes = new Uint8Array([1]);
        for (const bad of ['../x', '/attachments/../../x', '/attachments/../x', 'a/../../../etc/passwd', '..']) {
          await expectStoreError(store.writeFile(t.id, bad, bytes, { mimeType: 'text/plain' }), 'INVALID_PATH', JSON.stringify(bad));
          await expectStoreError(store.readFile(t.id, bad), 'INVALID_PATH', JSON.stringify(bad));
          await expectStoreError(store.listFiles(t.id, bad), 'INVALID_PATH', JSON.stringify(bad));
        }
        expect(await store.listFiles(t.id)).toEqual([]);
      });

      it('[TL-7] refuses backslash, NUL and control-character tricks in paths', async () => {
        const t = await store.createThread({ prompt: 'p' });
        const bytes = new Uint8Array([1]);
        for (const bad of ['..\\x', '/attachments\\..\\..\\x', '/attachments/a\0.png', '/attachments/a\n.png', '']) {
          await expectStoreError(store.writeFile(t.id, bad, bytes, { mimeType: 'text/plain' }), 'INVALID_PATH');
        }
        expect(await store.listFiles(t.id)).toEqual([]);
      });

      it('[ST-1] keeps names up to 255 bytes and paths up to 1024 bytes (UTF-8), and refuses longer ones alike', async () => {
        const t = await store.createThread({ prompt: 'p' });
        const bytes = new Uint8Array([5]);
        const info = { mimeType: 'text/plain' };
        // 255 bytes each: ASCII, and three-byte characters.
        for (const name of ['n'.repeat(251) + '.txt', '€'.repeat(85)]) {
          const ref = await store.writeFile(t.id, `/attachments/${name}`, bytes, info);
          expect([...(await store.readFile(t.id, ref.path))!.data]).toEqual([5]);
        }
        // 1024 bytes: ten folders of 100 characters and a 13-character name.
        const deep = '/' + Array.from({ length: 10 }, (_, i) => String(i).repeat(100)).join('/') + '/' + 'f'.repeat(13);
        expect(Buffer.byteLength(deep)).toBe(1024);
        expect((await store.writeFile(t.id, deep, bytes, info)).path).toBe(deep);
        expect([...(await store.readFile(t.id, deep))!.data]).toEqual([5]);
        const tooLong = [
          '/attachments/' + 'n'.repeat(300) + '.txt',
          '/attachments/' + '€'.repeat(86),
          deep + 'f',
          '/' + Array(1000).fill('abcd').join('/'),
        ];
        for (const bad of tooLong) {
          const error = await expectStoreError(store.writeFile(t.id, bad, bytes, info), 'INVALID_PATH', 'longer than');
          // The message names no host path (the file store's data folder).
          expect(error.message).not.toMatch(/\/(tmp|var|home|private)\//);
          // Reads and deletes are not held to the limits (see the next test): nothing is there, or the host's own
          // limits refuse the path, in a message of the store's.
          await expectMissingOrRefused(store.readFile(t.id, bad), undefined);
          await expectMissingOrRefused(store.deleteFile(t.id, bad), false);
        }
        expect(await store.listFiles(t.id)).toHaveLength(3);
      });

      it('[ST-1] reads, lists and deletes a file stored before the path limits, whose name or path is over them', async () => {
        const t = await store.createThread({ id: 'legacy-paths', prompt: 'p' });
        await store.writeFile(t.id, '/attachments/new.txt', new Uint8Array([1]), { mimeType: 'text/plain' });
        const longName = '/attachments/' + 'n'.repeat(300) + '.txt';
        // 1110 bytes, in names of 100.
        const longPath = '/' + Array.from({ length: 11 }, (_, i) => String(i % 10).repeat(100)).join('/') + '/old.txt';
        const planted: string[] = [];
        for (const filePath of [longName, longPath]) {
          const name = path.posix.basename(filePath);
          const ref: AttachmentRef = {
            id: `legacy-${planted.length}`,
            type: 'file',
            path: filePath,
            name,
            mimeType: 'text/plain',
            size: 1,
          };
          if (await harness.plantFile(t.id, ref, new Uint8Array([filePath.length % 256]))) planted.push(filePath);
        }
        // Every store holds the long path; PostgreSQL and memory the long name too (the file store's host cannot).
        expect(planted).toContain(longPath);
        for (const filePath of planted) {
          const read = await store.readFile(t.id, filePath);
          expect(read?.ref.path).toBe(filePath);
          expect([...read!.data]).toEqual([filePath.length % 256]);
        }
        expect((await store.listFiles(t.id)).map((f) => f.path)).toEqual(['/attachments/new.txt', ...planted].sort());
        expect((await store.listFiles(t.id, path.posix.dirname(longPath))).map((f) => f.path)).toEqual([longPath]);
        // Not written again under the limits: kept as they are until deleted.
        for (const filePath of planted) {
          await expectStoreError(
            store.writeFile(t.id, filePath, new Uint8Array([0]), { mimeType: 'text/plain' }),
            'INVALID_PATH',
            'longer than',
          );
          expect(await store.deleteFile(t.id, filePath)).toBe(true);
          expect(await store.readFile(t.id, filePath)).toBeUndefined();
        }
        expect((await store.listFiles(t.id)).map((f) => f.path)).toEqual(['/attachments/new.txt']);
      });

      it('[TL-7] treats an absolute path as rooted in the thread files, not the host', async () => {
        const t = await store.createThread({ prompt: 'p' });
        const ref = await store.writeFile(t.id, '/etc/passwd', new Uint8Array([7]), { mimeType: 'text/plain' });
        expect(ref.path).toBe('/etc/passwd');
        expect([...(await store.readFile(t.id, '/etc/passwd'))!.data]).toEqual([7]);
      });

      it('deletes a file, bytes and reference, and reports whether there was one', async () => {
        const t = await store.createThread({ prompt: 'p' });
        const info = { mimeType: 'text/plain' };
        await store.writeFile(t.id, '/attachments/a.txt', new Uint8Array([1]), info);
        const b = await store.writeFile(t.id, '/attachments/b.txt', new Uint8Array([2]), info);
        expect(await store.deleteFile(t.id, '/attachments/a.txt')).toBe(true);
        expect(await store.readFile(t.id, '/attachments/a.txt')).toBeUndefined();
        expect(await store.listFiles(t.id)).toEqual([b]);
        expect(await store.deleteFile(t.id, '/attachments/a.txt')).toBe(false);
        // Paths are normalised as everywhere else.
        expect(await store.deleteFile(t.id, 'attachments//./b.txt')).toBe(true);
        expect(await store.listFiles(t.id)).toEqual([]);
        // A deleted file can be written again.
        const again = await store.writeFile(t.id, '/attachments/a.txt', new Uint8Array([3]), info);
        expect([...(await store.readFile(t.id, '/attachments/a.txt'))!.data]).toEqual([3]);
        expect(await store.listFiles(t.id)).toEqual([again]);
      });

      it('returns false when deleting a file that does not exist, a directory or the root', async () => {
        const t = await store.createThread({ prompt: 'p' });
        expect(await store.deleteFile(t.id, '/attachments/none.png')).toBe(false);
        await store.writeFile(t.id, '/d/e.txt', new Uint8Array([1]), { mimeType: 'text/plain' });
        expect(await store.deleteFile(t.id, '/d')).toBe(false);
        expect(await store.deleteFile(t.id, '/')).toBe(false);
        expect((await store.listFiles(t.id)).map((r) => r.path)).toEqual(['/d/e.txt']);
      });

      it('lets a file take the place of a directory whose last file was deleted', async () => {
        const t = await store.createThread({ prompt: 'p' });
        await store.writeFile(t.id, '/d/e/f.txt', new Uint8Array([1]), { mimeType: 'text/plain' });
        expect(await store.deleteFile(t.id, '/d/e/f.txt')).toBe(true);
        await store.writeFile(t.id, '/d', new Uint8Array([2]), { mimeType: 'text/plain' });
        expect([...(await store.readFile(t.id, '/d'))!.data]).toEqual([2]);
      });

      it('[TL-7] refuses a bad path in deleteFile, and an unknown thread', async () => {
        const t = await store.createThread({ prompt: 'p' });
        await store.writeFile(t.id, '/x', new Uint8Array([1]), { mimeType: 'text/plain' });
        for (const bad of ['../x', '/attachments/../../x', 'a/../x', '..\\x', '/x\0', '/x\n', '']) {
          await expectStoreError(store.deleteFile(t.id, bad), 'INVALID_PATH');
        }
        await expectStoreError(store.deleteFile(t.id, '../x'), 'INVALID_PATH', '"../x"');
        await expectStoreError(store.deleteFile('missing', '/x'), 'THREAD_NOT_FOUND', 'missing');
        expect((await store.listFiles(t.id)).map((r) => r.path)).toEqual(['/x']);
      });
    });

    describe('variables', () => {
      it('stores variables and returns secrets decrypted', async () => {
        const t = await store.createThread({ prompt: 'p' });
        expect(await store.getVariables(t.id)).toEqual([]);
        await store.setVariables(t.id, [
          { name: 'region', value: 'eu', secret: false },
          { name: 'apiKey', value: 'sk-test-123', secret: true, scoped: true },
        ]);
        expect(await store.getVariables(t.id)).toEqual([
          { name: 'region', value: 'eu', secret: false },
          { name: 'apiKey', value: 'sk-test-123', secret: true, scoped: true },
        ]);
      });

      it('merges by name: later values replace earlier ones in place, new names are added', async () => {
        const t = await store.createThread({ prompt: 'p' });
        await store.setVariables(t.id, [
          { name: 'a', value: '1', secret: false },
          { name: 'b', value: '2', secret: true },
        ]);
        await store.setVariables(t.id, [
          { name: 'c', value: '3', secret: false },
          { name: 'a', value: 'one', secret: true, scoped: true },
          { name: 'b', value: 'two', secret: false },
        ]);
        expect(await store.getVariables(t.id)).toEqual([
          { name: 'a', value: 'one', secret: true, scoped: true },
          { name: 'b', value: 'two', secret: false },
          { name: 'c', value: '3', secret: false },
        ]);
      });

      it('keeps variables per thread', async () => {
        const a = await store.createThread({ prompt: 'p' });
        const b = await store.createThread({ prompt: 'p' });
        await store.setVariables(a.id, [{ name: 'x', value: '1', secret: false }]);
        expect(await store.getVariables(b.id)).toEqual([]);
      });

      it('[PR-16] refuses a malformed variable naming it, without its value', async () => {
        const t = await store.createThread({ prompt: 'p' });
        const err = await expectStoreError(
          store.setVariables(t.id, [{ name: 'token', value: 'hunter2-secret', secret: 'yes' as never }]),
          'INVALID_ARGUMENTS',
          'token',
        );
        expect(err.message).not.toContain('hunter2-secret');
        await expectStoreError(store.setVariables(t.id, [{ name: '', value: 'v', secret: false }]), 'INVALID_ARGUMENTS');
        expect(await store.getVariables(t.id)).toEqual([]);
      });

      it('[ST-1] refuses a variable name with a control character, naming it', async () => {
        const t = await store.createThread({ prompt: 'p' });
        for (const name of ['A\u0000B', 'A\nB', 'A\u001bB', 'A\u007fB']) {
          const err = await expectStoreError(
            store.setVariables(t.id, [{ name, value: 'hidden-value', secret: false }]),
            'INVALID_ARGUMENTS',
            JSON.stringify(name),
          );
          expect(err.message).not.toContain('hidden-value');
        }
        expect(await store.getVariables(t.id)).toEqual([]);
      });

      it('[ST-1] keeps a NUL in variable values, message contents, meta and file metadata, as every store does', async () => {
        const nul = 'a\u0000b';
        const t = await store.createThread({ prompt: `p${nul}`, meta: { [nul]: nul } });
        await store.appendMessage(t.id, { role: 'user', content: nul, reasoning: nul, meta: { [nul]: [nul] } });
        await store.appendMessage(t.id, { role: 'user', content: [{ type: 'text', text: nul }] });
        const updated = await store.appendMessage(t.id, { role: 'assistant', content: 'x' });
        await store.updateMessage(t.id, updated.id, { content: nul, meta: { k: nul } });
        await store.updateThread(t.id, { meta: { [nul]: { [nul]: nul } } });
        await store.setVariables(t.id, [
          { name: 'PLAIN', value: nul, secret: false },
          { name: 'SECRET', value: nul, secret: true },
        ]);
        await store.writeFile(t.id, '/f.txt', new Uint8Array([0]), { mimeType: 'text/plain', name: nul, description: nul });
        for (const reader of [store, ...(harness.another ? [harness.another()] : [])]) {
          expect((await reader.getThread(t.id))?.meta).toEqual({ [nul]: { [nul]: nul } });
          expect((await reader.getThread(t.id))?.prompt).toBe(`p${nul}`);
          const messages = await reader.listMessages(t.id);
          expect(messages.map((m) => m.content)).toEqual([nul, [{ type: 'text', text: nul }], nul]);
          expect(messages[0]).toMatchObject({ reasoning: nul, meta: { [nul]: [nul] } });
          expect(messages[2]?.meta).toEqual({ k: nul });
          expect((await reader.getVariables(t.id)).map((v) => v.value)).toEqual([nul, nul]);
          expect((await reader.readFile(t.id, '/f.txt'))?.ref).toMatchObject({ name: nul, description: nul });
          if (reader !== store) await reader.close?.();
        }
      });

      it('[ST-1] refuses a message id with a NUL; updating or deleting by such an id finds no message', async () => {
        const t = await store.createThread({ prompt: 'p' });
        await store.appendMessage(t.id, { role: 'user', content: 'kept' });
        await expectStoreError(store.appendMessage(t.id, { id: 'a\u0000b', role: 'user', content: 'x' }), 'INVALID_ARGUMENTS');
        await expectStoreError(store.updateMessage(t.id, 'a\u0000b', { content: 'y' }), 'INVALID_ARGUMENTS');
        await store.deleteMessages(t.id, ['a\u0000b']);
        expect((await store.listMessages(t.id)).map((m) => m.content)).toEqual(['kept']);
      });

      it('refuses variables for an unknown thread', async () => {
        await expectStoreError(store.setVariables('missing', []), 'THREAD_NOT_FOUND');
        await expectStoreError(store.getVariables('missing'), 'THREAD_NOT_FOUND');
      });
    });
  });
}
