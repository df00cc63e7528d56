/**
 * A turn whose thread lock is lost while it runs (the PostgreSQL store's lock connection dropped, the file store's
 * lock file taken over) is fenced: it stops with THREAD_LOCK_LOST and writes nothing more to the thread, which another
 * process may be running by then.
 */
import { mkdtempSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentportError } from '../../src/errors.js';
import { loadRegistryOrThrow } from '../../src/registry/load.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { FileStore } from '../../src/store/fileStore.js';
import { MemoryStore } from '../../src/store/memoryStore.js';
import { FakeModelServer } from '../support/fakeModelServer.js';
import { RUNTIME_AGENTS } from './harness.js';

const model = new FakeModelServer();
const registry = await loadRegistryOrThrow({ agentsDir: RUNTIME_AGENTS });
beforeAll(() => model.start());
afterAll(() => model.stop());

/** A memory store with a lock whose loss the test triggers: `lose` tells the holder, as the PostgreSQL store does. */
class LosableLockStore extends MemoryStore {
  lose: (() => void) | undefined;
  /** Set to lose the lock as soon as it is taken (before the run has started). */
  loseAtOnce = false;

  lockThread(threadId: string, _waitMs: number, onLost?: (error: AgentportError) => void): Promise<() => Promise<void>> {
    this.lose = () => onLost?.(new AgentportError('THREAD_LOCK_LOST', `thread ${threadId}'s lock was lost`, { threadId }));
    if (this.loseAtOnce) this.lose();
    return Promise.resolve(async () => {});
  }
}

async function threadWithOneTurn(store: LosableLockStore) {
  const runtime = createRuntime({ registry, store, env: { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'k' }, log: () => {} });
  model.reply({ text: 'first answer' });
  const first = await runtime.runPrompt({ target: 'forgetful', args: { message: 'first' } });
  return { runtime, threadId: first.threadId };
}

describe('a turn that loses its thread lock', () => {
  it('[ST-4] stops with THREAD_LOCK_LOST and writes nothing more to the thread', async () => {
    const store = new LosableLockStore();
    const { runtime, threadId } = await threadWithOneTurn(store);
    const requests = model.requests.length;
    model.reply({ text: 'too late', delayMs: 1000 });
    const turn = runtime.runPrompt({ target: 'forgetful', args: { message: 'second', thread_id: threadId } });
    // The model has the request: the turn is running, holding the lock.
    await expect.poll(() => model.requests.length).toBe(requests + 1);
    const before = (await store.listMessages(threadId)).length;
    const statusBefore = (await store.getThread(threadId))?.status;
    store.lose!();
    await expect(turn).rejects.toMatchObject({ code: 'THREAD_LOCK_LOST' });
    // Let the model's late answer arrive: it is not stored.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await store.listMessages(threadId)).length).toBe(before);
    expect((await store.getThread(threadId))?.status).toBe(statusBefore);
  });

  it("[ST-4] a sub-prompt whose thread loses its lock fails as a tool: the caller's turn goes on and is stored", async () => {
    const store = new LosableLockStore();
    const runtime = createRuntime({ registry, store, env: { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'k' }, log: () => {} });
    const requests = model.requests.length;
    model.reply(
      { toolCalls: [{ id: 'r', name: 'researcher', arguments: { question: 'What is 2+2?' } }] },
      // The sub-prompt's model is slow: its run is marked running (and its thread locked) meanwhile.
      { text: 'too late', delayMs: 1500 },
      { text: 'The researcher could not finish.' },
    );
    const turn = runtime.runPrompt({ target: 'boss', args: { message: 'delegate' } });
    await expect.poll(() => model.requests.length).toBe(requests + 2);
    // Both runs are marked running (after half a second), the sub-prompt's last: its lock is the one lost.
    await new Promise((resolve) => setTimeout(resolve, 700));
    store.lose!();
    const result = await turn;
    expect(result.text).toBe('The researcher could not finish.');
    const toolResult = model.requests.at(-1)!.body.messages.find((m) => m.role === 'tool');
    expect(String(toolResult?.content)).toContain("'s lock was lost");
    const parent = await store.getThread(result.threadId);
    expect(parent?.status).toBe('idle');
    expect((await store.listMessages(result.threadId)).at(-1)).toMatchObject({
      role: 'assistant',
      content: 'The researcher could not finish.',
    });
  });

  it('[ST-4] stops before its first step when the lock is lost while the run opens', async () => {
    const store = new LosableLockStore();
    const { runtime, threadId } = await threadWithOneTurn(store);
    const requests = model.requests.length;
    store.loseAtOnce = true;
    await expect(runtime.runPrompt({ target: 'forgetful', args: { message: 'second', thread_id: threadId } })).rejects.toMatchObject({
      code: 'THREAD_LOCK_LOST',
    });
    expect(model.requests.length).toBe(requests);
    // The next turn, with its lock held, runs as usual.
    store.loseAtOnce = false;
    model.reply({ text: 'third answer' });
    expect((await runtime.runPrompt({ target: 'forgetful', args: { message: 'third', thread_id: threadId } })).text).toBe('third answer');
  });

  it('[ST-4] on the file store: another process takes over the lock file of a turn that went quiet, and the turn stops', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'agentport-lock-lost-'));
    const store = new FileStore({ dir });
    const runtime = createRuntime({ registry, store, env: { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'k' }, log: () => {} });
    model.reply({ text: 'first answer' });
    const { threadId } = await runtime.runPrompt({ target: 'forgetful', args: { message: 'first' } });
    const requests = model.requests.length;
    // Answered after the holder's next heartbeat (every 5 s) has found its lock taken.
    const lateMs = 7000;
    model.reply({ text: 'too late', delayMs: lateMs });
    const turn = runtime.runPrompt({ target: 'forgetful', args: { message: 'second', thread_id: threadId } });
    turn.catch(() => {});
    await expect.poll(() => model.requests.length).toBe(requests + 1);
    const asked = Date.now();
    // Marked running after half a second: what is stored from then on is the other process's to write.
    await expect.poll(async () => (await store.getThread(threadId))?.status).toBe('running');
    // A second process on the folder finds the heartbeat stale (as if this one had been paused) and takes the thread.
    const old = new Date(Date.now() - 60_000);
    utimesSync(path.join(dir, 'locks', `${threadId}.lock`), old, old);
    const other = new FileStore({ dir });
    const release = await other.lockThread(threadId, 1000);
    const stored = async () => {
      const fresh = new FileStore({ dir });
      return { messages: await fresh.listMessages(threadId), status: (await fresh.getThread(threadId))?.status };
    };
    const before = await stored();
    await expect(turn).rejects.toMatchObject({ code: 'THREAD_LOCK_LOST', data: { threadId } });
    // Let the model's late answer arrive: it is not stored, nor is a final status.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, asked + lateMs + 300 - Date.now())));
    expect(await stored()).toEqual(before);
    await release();
  });
});
