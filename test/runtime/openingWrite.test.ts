/**
 * A new thread's opening messages are written with its first answer: one
 * write (one statement on PostgreSQL) for a one-step call. A run that goes on
 * is marked running after a moment, which writes them: from then on another
 * process sees the thread and its opening message.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadRegistryOrThrow } from '../../src/registry/load.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { FileStore } from '../../src/store/fileStore.js';
import { PostgresStore } from '../../src/store/postgres/postgresStore.js';
import type { Store } from '../../src/store/types.js';
import { FakeModelServer } from '../support/fakeModelServer.js';
import { databaseUrl, dropSchema, postgresReachable } from '../support/postgres.js';
import { RUNTIME_AGENTS } from './harness.js';

const model = new FakeModelServer();
const registry = await loadRegistryOrThrow({ agentsDir: RUNTIME_AGENTS });
const reachable = await postgresReachable();
const cleanups: Array<() => Promise<void>> = [];

beforeAll(() => model.start());
afterAll(() => model.stop());
let requestsBefore = 0;
beforeEach(() => {
  requestsBefore = model.requests.length;
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function fileStores(): Promise<{ store: Store; another: () => Store }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'agentport-opening-'));
  const store = new FileStore({ dir });
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  cleanups.push(async () => store.close());
  return { store, another: () => track(new FileStore({ dir })) };
}

function track(store: Store): Store {
  cleanups.push(async () => store.close?.());
  return store;
}

function runtimeOn(store: Store) {
  return createRuntime({ registry, store, env: { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'k' }, log: () => {} });
}

describe('a new thread opening messages', () => {
  it('reach the file store with the first answer, in one write', async () => {
    const { store, another } = await fileStores();
    const appends: Array<{ options: unknown; seq?: number }> = [];
    const append = store.appendMessage.bind(store);
    store.appendMessage = async (threadId, message, options) => {
      const stored = await append(threadId, message, options);
      appends.push({ options, seq: stored.seq });
      return stored;
    };
    model.reply({ text: 'hello' });
    const result = await runtimeOn(store).runPrompt({ target: 'forgetful', args: { message: 'hi' } });
    // The opening user message waited for the answer; the answer wrote both.
    expect(appends).toEqual([
      { options: { withNextWrite: true }, seq: 1 },
      { options: undefined, seq: 2 },
    ]);
    const messages = await another().listMessages(result.threadId);
    expect(messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'hi'],
      ['assistant', 'hello'],
    ]);
  });

  it('[ST-2] are written once the run is marked running, before the model has answered', async () => {
    const { store, another } = await fileStores();
    model.reply({ text: 'late', delayMs: 1500 });
    const runtime = runtimeOn(store);
    let threadId: string | undefined;
    const done = runtime.runPrompt({ target: 'forgetful', args: { message: 'slow one' }, onThread: (id) => (threadId = id) });
    await expect.poll(() => threadId).toBeDefined();
    // A fresh reader each time, as another process would read it (a reader keeps what it has read).
    await expect.poll(async () => (await another().getThread(threadId!))?.status, { timeout: 5000, interval: 50 }).toBe('running');
    expect((await another().listMessages(threadId!)).map((m) => m.content)).toEqual(['slow one']);
    await done;
  });

  it('leave the run going, and the operator told, when the running mark cannot be written', async () => {
    const { store } = await fileStores();
    const update = store.updateThread.bind(store);
    store.updateThread = async (id, patch) => {
      if (patch.status === 'running') throw new Error('disk full');
      return update(id, patch);
    };
    const logged: string[] = [];
    const runtime = createRuntime({
      registry,
      store,
      env: { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'k' },
      log: (line) => logged.push(line),
    });
    model.reply({ text: 'still answered', delayMs: 900 });
    const result = await runtime.runPrompt({ target: 'forgetful', args: { message: 'slow one' } });
    expect(result.text).toBe('still answered');
    expect(logged).toEqual([expect.stringMatching(/^thread \S+: could not record it as running \(disk full\); the run goes on/)]);
    expect((await store.getThread(result.threadId))?.status).toBe('idle');
  });

  it('[ST-2] are written when the run ends having stored nothing after them (a hook stopped it first)', async () => {
    const agents = await mkdtemp(path.join(tmpdir(), 'agentport-opening-agents-'));
    cleanups.push(() => rm(agents, { recursive: true, force: true }));
    const files = {
      'models/m.ts': `import { defineModel } from 'agentport';\nexport default defineModel({ name: 'm', provider: 'openai', model: 'm' });\n`,
      'hooks/stop.ts': `import { defineHook } from 'agentport';\nexport default defineHook({ id: 'stop_at_once', hook: 'after_create_message', execute: (state) => state.execution.stop() });\n`,
      'prompts/p.ts': `import { definePrompt } from 'agentport';\nexport default definePrompt({ name: 'stopper', toolDescription: 'Stops.', model: 'm', prompt: 'Stop.', hooks: ['stop_at_once'], exposeAsTool: true });\n`,
    };
    for (const [file, text] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(agents, file)), { recursive: true });
      await writeFile(path.join(agents, file), text);
    }
    const stopping = await loadRegistryOrThrow({ agentsDir: agents });
    const { store, another } = await fileStores();
    const runtime = createRuntime({
      registry: stopping,
      store,
      env: { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'k' },
      log: () => {},
    });
    const result = await runtime.runPrompt({ target: 'stopper', args: { message: 'never answered' } });
    expect(model.requests).toHaveLength(requestsBefore);
    expect((await another().listMessages(result.threadId)).map((m) => m.content)).toEqual(['never answered']);
  });

  describe.runIf(reachable)('on PostgreSQL', () => {
    it('cost one statement for a one-step call', async () => {
      const schema = `agentport_test_${randomBytes(6).toString('hex')}`;
      const store = new PostgresStore({ url: databaseUrl(), schema, secretKey: randomBytes(32) });
      cleanups.push(() => dropSchema(schema));
      cleanups.push(() => store.close());
      const runtime = runtimeOn(store);
      model.reply({ text: 'warm' });
      await runtime.runPrompt({ target: 'forgetful', args: { message: 'first' } });
      // Every statement goes through a pool client's query.
      const spy = vi.spyOn(pg.Client.prototype, 'query');
      try {
        model.reply({ text: 'one write' });
        const result = await runtime.runPrompt({ target: 'forgetful', args: { message: 'second' } });
        expect(spy).toHaveBeenCalledTimes(1);
        const reader = track(new PostgresStore({ url: databaseUrl(), schema, secretKey: randomBytes(32) }));
        expect((await reader.listMessages(result.threadId)).map((m) => m.content)).toEqual(['second', 'one write']);
      } finally {
        spy.mockRestore();
      }
    });
  });
});
