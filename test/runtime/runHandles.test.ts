/**
 * Run handles: a call still running at the call budget returns a handle; the
 * run goes on and run_wait, run_status and run_cancel reach it, from the
 * store too when the process that ran it is gone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeModelServer } from '../support/fakeModelServer.js';
import { startInProcess, textOf, type InProcessAgentport } from '../support/inProcess.js';
import { MemoryStore } from '../../src/store/memoryStore.js';
import type { RunResult } from '../../src/runtime/types.js';
import { RUNTIME_AGENTS } from './harness.js';

const model = new FakeModelServer();
const store = new MemoryStore();
let agentport: InProcessAgentport;
const start = (callBudgetMs: number) =>
  startInProcess({
    agentsDir: RUNTIME_AGENTS,
    env: { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'k' },
    runtime: { store },
    server: { callBudgetMs },
  });

beforeAll(async () => {
  await model.start();
  agentport = await start(300);
});
afterAll(async () => {
  await agentport.close();
  await model.stop();
});

const structured = (result: { structuredContent?: unknown }) =>
  result.structuredContent as { thread_id: string; status?: string; progress?: string; error?: { code: string } };

describe('run handles', () => {
  it('[RL-1] lists run_wait, run_status and run_cancel, unless the call budget is off', async () => {
    const client = await agentport.connect();
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['run_wait', 'run_status', 'run_cancel']));
    const off = await start(0);
    try {
      const other = await off.connect();
      expect((await other.listTools()).tools.map((t) => t.name)).not.toContain('run_wait');
    } finally {
      await off.close();
    }
  });

  it('[RL-1] returns a handle at the call budget; the run goes on and run_wait gets its result', async () => {
    const client = await agentport.connect();
    model.reply({ text: 'the slow answer', delayMs: 900 });
    const started = Date.now();
    const first = await client.callTool({ name: 'forgetful', arguments: { message: 'take your time' } });
    expect(Date.now() - started).toBeLessThan(850);
    expect(first.isError).toBeFalsy();
    const threadId = structured(first).thread_id;
    expect(structured(first).status).toBe('running');
    expect(textOf(first)).toBe(
      `This is taking longer than 0.3 s, so it goes on in the background (thread_id ${threadId}). Call run_wait with this thread_id to get the result.`,
    );

    const status = await client.callTool({ name: 'run_status', arguments: { thread_id: threadId } });
    expect(structured(status)).toMatchObject({ thread_id: threadId, status: 'running', progress: 'forgetful: step 1, calling the model' });
    expect((await store.getThread(threadId))!.status).toBe('running');

    const short = await client.callTool({ name: 'run_wait', arguments: { thread_id: threadId, timeout_s: 0.05 } });
    expect(textOf(short)).toMatch(/^Still running/);
    const done = await client.callTool({ name: 'run_wait', arguments: { thread_id: threadId, timeout_s: 5 } });
    expect(done.isError).toBeFalsy();
    expect(textOf(done)).toBe('the slow answer');
    expect(structured(done)).toMatchObject({ thread_id: threadId, response: 'the slow answer', steps: 1 });
    expect((await store.getThread(threadId))!.status).toBe('idle');
  });

  it('[RL-1] a call continuing a thread whose run goes on in the background waits its turn, and gets a handle too', async () => {
    const client = await agentport.connect();
    model.reply({ text: 'first answer', delayMs: 700 }, { text: 'second answer' });
    const first = await client.callTool({ name: 'forgetful', arguments: { message: 'one' } });
    const threadId = structured(first).thread_id;
    expect(structured(first).status).toBe('running');
    const second = await client.callTool({ name: 'forgetful', arguments: { message: 'two', thread_id: threadId } });
    expect(structured(second)).toMatchObject({ thread_id: threadId, status: 'running' });
    // While the first still runs, the turn after it is counted too.
    const status = await client.callTool({ name: 'run_status', arguments: { thread_id: threadId } });
    expect(structured(status)).toMatchObject({ status: 'running', later_runs: 1 });
    // Each turn's outcome, oldest first: the first is not lost to the second.
    const earlier = await client.callTool({ name: 'run_wait', arguments: { thread_id: threadId, timeout_s: 5 } });
    expect(earlier.content).toEqual([
      { type: 'text', text: 'first answer' },
      {
        type: 'text',
        text: `This thread has a later turn in the background: call run_wait again with thread_id ${threadId} for its result.`,
      },
    ]);
    expect(structured(earlier)).toMatchObject({ response: 'first answer', later_runs: 1 });
    const done = await client.callTool({ name: 'run_wait', arguments: { thread_id: threadId, timeout_s: 5 } });
    expect(textOf(done)).toBe('second answer');
    expect(structured(done)).not.toHaveProperty('later_runs');
    // Given once each: from then on run_wait reports the latest.
    const again = await client.callTool({ name: 'run_wait', arguments: { thread_id: threadId, timeout_s: 5 } });
    expect(textOf(again)).toBe('second answer');
    const messages = await store.listMessages(threadId);
    expect(messages.map((m) => `${m.role}:${String(m.content)}`)).toEqual([
      'user:one',
      'assistant:first answer',
      'user:two',
      'assistant:second answer',
    ]);
  });

  it('[RL-1] [RL-2] a run whose outcome was read by its id (a task) leaves run_wait to the runs after it', async () => {
    const client = await agentport.connect();
    model.reply({ text: 'first answer' });
    const threadId = structured(await client.callTool({ name: 'forgetful', arguments: { message: 'one' } })).thread_id;
    const outcome = (text: string): RunResult => ({ threadId, prompt: 'forgetful', text, toolCalls: [], steps: 1, turns: 1 });
    const { handles } = agentport.runtime;
    // Asked how it stands without its outcome being handed over (tasks/cancel does that), a task stays in run_wait's queue.
    const kept = await handles.detach(threadId, Promise.resolve(outcome('kept answer')), () => {}, { withId: true });
    await expect.poll(async () => (await handles.get(kept.id!))?.status).toBe('completed');
    const first = await client.callTool({ name: 'run_wait', arguments: { thread_id: threadId, timeout_s: 1 } });
    expect(textOf(first)).toBe('kept answer');
    // Read by its id as tasks/get reads it: handed over.
    const task = await handles.detach(threadId, Promise.resolve(outcome('task answer')), () => {}, { withId: true });
    await expect.poll(async () => (await handles.get(task.id!, { delivering: true }))?.status).toBe('completed');
    let finish: (result: RunResult) => void = () => {};
    await handles.detach(threadId, new Promise<RunResult>((resolve) => (finish = resolve)), () => {});
    const waiting = await client.callTool({ name: 'run_wait', arguments: { thread_id: threadId, timeout_s: 0.05 } });
    expect(structured(waiting).status).toBe('running');
    finish(outcome('background answer'));
    const done = await client.callTool({ name: 'run_wait', arguments: { thread_id: threadId, timeout_s: 5 } });
    expect(textOf(done)).toBe('background answer');
  });

  it('[RL-1] run_cancel stops a background run', async () => {
    const client = await agentport.connect();
    model.reply({ text: 'never seen', delayMs: 3000 });
    const first = await client.callTool({ name: 'forgetful', arguments: { message: 'slow' } });
    const threadId = structured(first).thread_id;
    const cancelled = await client.callTool({ name: 'run_cancel', arguments: { thread_id: threadId } });
    expect(cancelled.isError).toBe(true);
    expect(structured(cancelled)).toMatchObject({ status: 'cancelled', error: { code: 'CANCELLED' } });
    expect((await store.getThread(threadId))!.status).toBe('cancelled');
  });

  it('[RL-1] run_cancel stops the running run of a thread and the turn queued behind it, and keeps an outcome not yet given', async () => {
    const client = await agentport.connect();
    model.reply({ text: 'never seen', delayMs: 3000 });
    const first = await client.callTool({ name: 'forgetful', arguments: { message: 'slow' } });
    const threadId = structured(first).thread_id;
    const queued = await client.callTool({ name: 'forgetful', arguments: { message: 'next', thread_id: threadId } });
    expect(structured(queued)).toMatchObject({ thread_id: threadId, status: 'running' });
    const requests = model.requests.length;
    const started = Date.now();
    const cancelled = await client.callTool({ name: 'run_cancel', arguments: { thread_id: threadId } });
    // The running run is stopped, not waited for.
    expect(Date.now() - started).toBeLessThan(1500);
    expect(structured(cancelled)).toMatchObject({ status: 'cancelled', error: { code: 'CANCELLED' } });
    const status = await client.callTool({ name: 'run_status', arguments: { thread_id: threadId } });
    expect(structured(status).status).toBe('cancelled');
    await new Promise((resolve) => setTimeout(resolve, 200));
    // The queued turn never reached the model, nor stored its message.
    expect(model.requests.length).toBe(requests);
    expect((await store.listMessages(threadId)).map((m) => `${m.role}:${String(m.content)}`)).toEqual(['user:slow']);

    // An outcome that came before the cancellation is still run_wait's to give.
    model.reply({ text: 'kept answer', delayMs: 500 }, { text: 'never either', delayMs: 3000 });
    const one = await client.callTool({ name: 'forgetful', arguments: { message: 'one' } });
    const other = structured(one).thread_id;
    await client.callTool({ name: 'forgetful', arguments: { message: 'two', thread_id: other } });
    await new Promise((resolve) => setTimeout(resolve, 700));
    await client.callTool({ name: 'run_cancel', arguments: { thread_id: other } });
    const kept = await client.callTool({ name: 'run_wait', arguments: { thread_id: other, timeout_s: 5 } });
    expect(textOf(kept)).toBe('kept answer');
    const last = await client.callTool({ name: 'run_wait', arguments: { thread_id: other, timeout_s: 5 } });
    expect(structured(last)).toMatchObject({ status: 'cancelled' });
  });

  it('[RL-1] answers run_wait from the store after a restart, and reports a run left running as interrupted', async () => {
    const client = await agentport.connect();
    model.reply({ text: 'finished before the restart', delayMs: 500 });
    const first = await client.callTool({ name: 'forgetful', arguments: { message: 'slow' } });
    const threadId = structured(first).thread_id;
    await client.callTool({ name: 'run_wait', arguments: { thread_id: threadId, timeout_s: 5 } });

    const restarted = await start(300);
    try {
      const again = await restarted.connect();
      const stored = await again.callTool({ name: 'run_wait', arguments: { thread_id: threadId } });
      expect(textOf(stored)).toBe('finished before the restart');

      // A thread some process left running, and nothing runs it now.
      const orphan = await store.createThread({ prompt: 'forgetful' });
      await store.updateThread(orphan.id, { status: 'running' });
      const interrupted = await again.callTool({ name: 'run_wait', arguments: { thread_id: orphan.id } });
      expect(interrupted.isError).toBe(true);
      expect(structured(interrupted)).toMatchObject({ status: 'interrupted', error: { code: 'INTERRUPTED' } });
      expect((await store.getThread(orphan.id))!.status).toBe('interrupted');
      const unknown = await again.callTool({ name: 'run_status', arguments: { thread_id: 'no-such-thread' } });
      expect(structured(unknown).error).toMatchObject({ code: 'THREAD_NOT_FOUND' });
    } finally {
      await restarted.close();
    }
  });
});
