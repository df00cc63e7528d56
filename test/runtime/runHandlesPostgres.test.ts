/**
 * Run handles across two agentport instances on one PostgreSQL database: the
 * instance a handle comes from has written the thread and holds its lock by
 * then, so the other answers for the run at once. Skipped without the
 * PostgreSQL server the tests use.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/store/postgres/postgresStore.js';
import { FakeModelServer } from '../support/fakeModelServer.js';
import { startInProcess, textOf, type InProcessAgentport } from '../support/inProcess.js';
import { databaseUrl, dropSchema, postgresReachable } from '../support/postgres.js';
import { RUNTIME_AGENTS } from './harness.js';

const reachable = await postgresReachable();

describe.runIf(reachable)('[ST-4] a run handle on one instance, asked for on another', () => {
  const schema = `agentport_test_${randomBytes(6).toString('hex')}`;
  const key = randomBytes(32);
  const model = new FakeModelServer();
  const instances: InProcessAgentport[] = [];

  beforeAll(async () => {
    await model.start();
    for (let i = 0; i < 2; i++) {
      instances.push(
        await startInProcess({
          agentsDir: RUNTIME_AGENTS,
          env: { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'k' },
          runtime: { store: new PostgresStore({ url: databaseUrl(), schema, secretKey: key }) },
          server: { callBudgetMs: 300 },
        }),
      );
    }
  });

  afterAll(async () => {
    for (const instance of instances) {
      await instance.close();
      await instance.runtime.store.close?.();
    }
    await model.stop();
    await dropSchema(schema);
  });

  it('the other instance sees the run going on as soon as the handle is given, then its outcome', async () => {
    const [a, b] = await Promise.all(instances.map((instance) => instance.connect()));
    model.reply({ text: 'done on a', delayMs: 1500 });
    const handle = await a!.callTool({ name: 'forgetful', arguments: { message: 'slow' } });
    const threadId = (handle.structuredContent as { thread_id: string; status: string }).thread_id;
    expect((handle.structuredContent as { status: string }).status).toBe('running');
    const elsewhere = await b!.callTool({ name: 'run_status', arguments: { thread_id: threadId } });
    expect(elsewhere.structuredContent).toMatchObject({ status: 'running', progress: 'running in another server process' });
    expect(textOf(await a!.callTool({ name: 'run_wait', arguments: { thread_id: threadId, timeout_s: 20 } }))).toBe('done on a');
    // Stored just after the run ended (the instance that ran it answers from memory first).
    await expect.poll(async () => textOf(await b!.callTool({ name: 'run_wait', arguments: { thread_id: threadId } }))).toBe('done on a');
  });

  it('a run handed over before it marked itself running is answered for on the other instance at once', async () => {
    const [a, b] = instances as [InProcessAgentport, InProcessAgentport];
    model.reply({ text: 'done soon', delayMs: 1500 });
    let opened: (threadId: string) => void = () => {};
    const threadOpened = new Promise<string>((resolve) => (opened = resolve));
    const done = a.runtime.runPrompt({ target: 'forgetful', args: { message: 'slow' }, onThread: (id) => opened(id) });
    const threadId = await threadOpened;
    // Calling the model, well within the half second after which a run marks itself running.
    const asked = model.requests.length;
    await expect.poll(() => model.requests.length, { interval: 5 }).toBe(asked + 1);
    await a.runtime.handles.detach(threadId, done, () => {});
    expect(await b.runtime.handles.status(threadId)).toMatchObject({ status: 'running', progress: 'running in another server process' });
    expect((await a.runtime.handles.wait(threadId, 20_000)).result?.text).toBe('done soon');
  });
});
