/**
 * A thread the store cannot read (damaged files, a database out of reach) is
 * reported with the store's own error, never as a thread that does not
 * exist: a client told "not found" may give up on a thread that is still there.
 * Likewise a thread whose lock the store cannot take is neither a run going on
 * elsewhere nor one interrupted.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { z } from 'zod';
import { AgentportError } from '../../src/errors.js';
import { asCaller } from '../../src/runtime/run/owner.js';
import type { RunResult } from '../../src/runtime/types.js';
import { withInlineMedia } from '../../src/server/resources.js';
import { threadUri } from '../../src/server/resourceUris.js';
import { FileStore } from '../../src/store/fileStore.js';
import type { Store } from '../../src/store/types.js';
import { FakeModelServer } from '../support/fakeModelServer.js';
import { startInProcess, textOf, type InProcessAgentport } from '../support/inProcess.js';
import { RUNTIME_AGENTS } from './harness.js';

const DAMAGED = 'damaged-thread';
const REFUSED = 'refused-thread';
let dir: string;
let agentport: InProcessAgentport;
let client: Client;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'agentport-unreadable-'));
  // A thread whose record is not JSON any more (a disk error, a hand edit).
  await mkdir(path.join(dir, 'threads', DAMAGED), { recursive: true });
  await writeFile(path.join(dir, 'threads', DAMAGED, 'thread.json'), '{nope');
  // One the file system refuses to read (a link to itself stands in for EACCES or EIO, which root never meets).
  await mkdir(path.join(dir, 'threads', REFUSED), { recursive: true });
  await symlink('thread.json', path.join(dir, 'threads', REFUSED, 'thread.json'));
  agentport = await startInProcess({
    agentsDir: RUNTIME_AGENTS,
    env: { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_API_KEY: 'k' },
    runtime: { store: new FileStore({ dir }) },
  });
  client = await agentport.connect();
});

afterAll(async () => {
  await agentport?.close();
  await rm(dir, { recursive: true, force: true });
});

const errorOf = (result: { structuredContent?: unknown }) =>
  (result.structuredContent as { error: { code: string; message: string; data?: Record<string, unknown> } }).error;
const statusOf = (result: { structuredContent?: unknown }) => (result.structuredContent as { status?: string }).status;
const RUN_TOOLS = ['run_status', 'run_wait', 'run_cancel'] as const;
const TASKS = 'io.modelcontextprotocol/tasks';
const KEY = Buffer.alloc(32, 7);
// Stateless HTTP has no session: each request says the client opted in to tasks.
const TASKS_OPT_IN = { 'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } } };

/** A client that opted in to MCP tasks; `get` is tasks/get (its JSON-RPC error's message when it fails). */
async function tasksClient(url: string) {
  const tasks = new Client({ name: 'unreadable-tasks', version: '1.0.0' }, { capabilities: { extensions: { [TASKS]: {} } } });
  await tasks.connect(new StreamableHTTPClientTransport(new URL(url)));
  const get = (taskId: string): Promise<{ status?: string; error?: string }> =>
    tasks.request({ method: 'tasks/get', params: { taskId, _meta: TASKS_OPT_IN } }, z.looseObject({})).then(
      (task) => ({ status: String(task.status) }),
      (error: unknown) => ({ error: String((error as Error).message) }),
    );
  const call = (name: string, args: Record<string, unknown>) =>
    tasks.request({ method: 'tools/call', params: { name, arguments: args, _meta: TASKS_OPT_IN } }, z.looseObject({})) as Promise<{
      taskId?: string;
    }>;
  return { get, call, close: () => tasks.close() };
}

describe('a thread the store cannot read', () => {
  it('continuing it fails with the store error naming the file, not THREAD_NOT_FOUND', async () => {
    const result = await client.callTool({ name: 'forgetful', arguments: { message: 'next', thread_id: DAMAGED } });
    expect(result.isError).toBe(true);
    expect(errorOf(result).code).toBe('CORRUPT_DATA');
    expect(textOf(result)).toContain('thread.json');
  });

  it('the store error names the damaged file within the data folder, never by its host path', async () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const result = await client.callTool({ name: 'forgetful', arguments: { message: 'next', thread_id: DAMAGED } });
      expect(errorOf(result).message).toContain(`threads/${DAMAGED}/thread.json is not valid JSON`);
      expect(JSON.stringify(result)).not.toContain(dir);
      const refused = await client.readResource({ uri: threadUri(DAMAGED) }).then(
        () => undefined,
        (error: unknown) => String(error),
      );
      expect(refused).toContain(`threads/${DAMAGED}/thread.json`);
      expect(refused).not.toContain(dir);
      // The operator's log has the full path.
      expect(stderr.mock.calls.map((call) => String(call[0])).join('')).toContain(path.join(dir, 'threads', DAMAGED, 'thread.json'));
    } finally {
      stderr.mockRestore();
    }
  });

  it('run_status on it fails with the store error', async () => {
    const result = await client.callTool({ name: 'run_status', arguments: { thread_id: DAMAGED } });
    expect(result.isError).toBe(true);
    expect(errorOf(result).code).toBe('CORRUPT_DATA');
  });

  it('reading its transcript resource fails with the store error, not "resource not found"', async () => {
    await expect(client.readResource({ uri: threadUri(DAMAGED) })).rejects.toThrow(/thread\.json/);
  });

  it("one the file system refuses to read fails naming the thread and the system's code, without host paths", async () => {
    const result = await client.callTool({ name: 'forgetful', arguments: { message: 'next', thread_id: REFUSED } });
    expect(result.isError).toBe(true);
    expect(errorOf(result)).toMatchObject({ code: 'INTERNAL', data: { errno: 'ELOOP', threadId: REFUSED } });
    expect(textOf(result)).toContain(`thread ${REFUSED}`);
    expect(textOf(result)).not.toContain(dir);
  });

  it('a thread that is not there is still reported missing', async () => {
    const result = await client.callTool({ name: 'forgetful', arguments: { message: 'next', thread_id: 'never-was' } });
    expect(errorOf(result).code).toBe('THREAD_NOT_FOUND');
  });
});

describe('a run whose thread the store cannot lock', () => {
  const LEFT = 'left-running';
  const TASK = `${LEFT}.0123456789ab`;
  const model = new FakeModelServer();
  let lockless: string;
  let server: InProcessAgentport;
  let mcp: Client;

  beforeAll(async () => {
    lockless = await mkdtemp(path.join(tmpdir(), 'agentport-lockless-'));
    // A thread (with a task's record) that a process which is gone left running.
    const seed = new FileStore({ dir: lockless });
    const startedAt = new Date().toISOString();
    await seed.createThread({ prompt: 'forgetful', id: LEFT, meta: { runs: { [TASK]: { status: 'running', startedAt } } } });
    await seed.updateThread(LEFT, { status: 'running' });
    await seed.close();
    // Where the lock files go is a file: every lock is refused (EACCES or EIO elsewhere, which root never meets).
    await writeFile(path.join(lockless, 'locks'), '');
    await model.start();
    server = await startInProcess({
      agentsDir: RUNTIME_AGENTS,
      env: { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'k' },
      runtime: { store: new FileStore({ dir: lockless }) },
      server: { callBudgetMs: 300 },
    });
    mcp = await server.connect();
  });

  afterAll(async () => {
    await server?.close();
    await model.stop();
    await rm(lockless, { recursive: true, force: true });
  });

  it('[ST-4] run_status, run_wait and run_cancel report the store error, not a run going on in another process', async () => {
    for (const name of RUN_TOOLS) {
      const result = await mcp.callTool({ name, arguments: { thread_id: LEFT } });
      expect(result.isError, name).toBe(true);
      expect(errorOf(result), name).toMatchObject({ code: 'INTERNAL', data: { errno: 'EEXIST', threadId: LEFT } });
      expect(textOf(result), name).not.toContain(lockless);
    }
  });

  it('[ST-4] tasks/get of its task reports the store error, not a task still working', async () => {
    const tasks = await tasksClient(server.url);
    try {
      const answer = await tasks.get(TASK);
      expect(answer).toEqual({ error: expect.stringContaining(`Cannot read or write thread ${LEFT}`) as unknown });
      expect(JSON.stringify(answer)).not.toContain(lockless);
    } finally {
      await tasks.close();
    }
  });

  it('[ST-4] recovery at start leaves it as it is and logs the store error', async () => {
    expect(await server.runtime.recoverInterrupted()).toEqual([]);
    expect(server.logs.join('\n')).toContain(
      `thread ${LEFT} was left running and could not be checked: Cannot read or write thread ${LEFT}`,
    );
  });

  it('[ST-4] a call that must go on in the background but cannot take its lock answers with the store error, and its run stops', async () => {
    model.reply({ text: 'never given', delayMs: 1500 });
    const first = await mcp.callTool({ name: 'forgetful', arguments: { message: 'slow' } });
    // Handed over without the lock, the run would look idle to other processes: it is not handed over.
    expect(first.isError).toBe(true);
    expect(errorOf(first)).toMatchObject({ code: 'INTERNAL', data: { errno: 'EEXIST' } });
    const threadId = (errorOf(first).data as { threadId: string }).threadId;
    const after = await mcp.callTool({ name: 'run_wait', arguments: { thread_id: threadId, timeout_s: 20 } });
    expect(statusOf(after)).toBe('cancelled');
  });

  it('[ST-4] a run its caller waits for goes on when its lock cannot be taken, and says so in the log', async () => {
    // Past the half second at which a run marks itself running and takes its thread's lock; its caller waits for it.
    model.reply({ text: 'answered anyway', delayMs: 900 });
    const result = await server.runtime.runPrompt({
      target: 'forgetful',
      args: { message: 'slow but waited for' },
      controller: new AbortController(),
      onProgress() {},
      onThread() {},
    });
    expect(result.error).toBeUndefined();
    expect(result.text).toBe('answered anyway');
    expect(server.logs.join('\n')).toMatch(
      new RegExp(`thread ${result.threadId}: its lock could not be taken \\(.*EEXIST.*\\); the run goes on`),
    );
  });
});

describe('a run whose thread becomes unreadable', () => {
  const KEPT = 'kept-thread';
  const model = new FakeModelServer();
  let dataDir: string;
  let first: InProcessAgentport;
  let taskId: string;

  const start = () =>
    startInProcess({
      agentsDir: RUNTIME_AGENTS,
      env: { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'k' },
      runtime: { store: new FileStore({ dir: dataDir, secretKey: KEY }) },
      server: { callBudgetMs: 300 },
    });

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'agentport-unreadable-run-'));
    const seed = new FileStore({ dir: dataDir, secretKey: KEY });
    await seed.createThread({ prompt: 'forgetful', id: KEPT, meta: { owner: 'alice' } });
    await seed.setVariables(KEPT, [{ name: 'TOKEN', value: 'kept-secret-value', secret: true }]);
    await seed.close();
    await model.start();
    first = await start();
    // A run that outlived its call, and a task, both on the thread; then the thread is damaged.
    model.reply({ text: 'background answer', delayMs: 600 });
    const client = await first.connect();
    const handle = await client.callTool({ name: 'forgetful', arguments: { message: 'slow', thread_id: KEPT } });
    expect(statusOf(handle)).toBe('running');
    const done = await client.callTool({ name: 'run_wait', arguments: { thread_id: KEPT, timeout_s: 20 } });
    expect(textOf(done)).toBe('background answer');
    model.reply({ text: 'task answer', delayMs: 1500 });
    const tasks = await tasksClient(first.url);
    try {
      taskId = (await tasks.call('forgetful', { message: 'slower', thread_id: KEPT })).taskId!;
      expect(taskId).toMatch(new RegExp(`^${KEPT}\\.`));
      let status = 'working';
      for (let i = 0; i < 200 && status === 'working'; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        status = (await tasks.get(taskId)).status ?? 'gone';
      }
      expect(status).toBe('completed');
    } finally {
      await tasks.close();
    }
  });

  afterAll(async () => {
    await first?.close();
    await model.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('reading its transcript fails with the store error when its variables cannot be read (their secrets could not be hidden)', async () => {
    await writeFile(path.join(dataDir, 'threads', KEPT, 'variables.json'), '{nope');
    // Read by a process that has not read the thread yet (a restart).
    const restarted = await start();
    try {
      const client = await restarted.connect();
      await expect(client.readResource({ uri: threadUri(KEPT) })).rejects.toThrow(/variables\.json/);
    } finally {
      await restarted.close();
    }
  });

  it('after a restart, run_status, run_wait, run_cancel, tasks/get and its resources report the store error', async () => {
    await writeFile(path.join(dataDir, 'threads', `${KEPT}.jsonl`), '{nope\n');
    const restarted = await start();
    const tasks = await tasksClient(restarted.url);
    try {
      const client = await restarted.connect();
      for (const name of RUN_TOOLS) {
        const result = await client.callTool({ name, arguments: { thread_id: KEPT } });
        expect(result.isError, name).toBe(true);
        expect(errorOf(result).code, name).toBe('CORRUPT_DATA');
        expect(textOf(result), name).toContain(`${KEPT}.jsonl`);
      }
      expect(await tasks.get(taskId)).toEqual({ error: expect.stringContaining(`${KEPT}.jsonl`) as unknown });
      await expect(client.readResource({ uri: threadUri(KEPT) })).rejects.toThrow(`${KEPT}.jsonl`);
      await expect(client.readResource({ uri: `${threadUri(KEPT)}/messages` })).rejects.toThrow(`${KEPT}.jsonl`);
    } finally {
      await tasks.close();
      await restarted.close();
    }
  });

  it('a run handed over to the background while its thread cannot be read stays with its caller: run_wait reaches it', async () => {
    const restarted = await start();
    try {
      const { handles } = restarted.runtime;
      const outcome = { threadId: KEPT, prompt: 'forgetful', text: 'handed over', toolCalls: [], steps: 1, turns: 1 };
      await asCaller('alice', () => handles.detach(KEPT, Promise.resolve(outcome), () => {}));
      expect(await asCaller('alice', () => handles.wait(KEPT, 10_000))).toMatchObject({
        status: 'completed',
        result: { text: 'handed over' },
      });
    } finally {
      await restarted.close();
    }
  });
});

describe('media sent inline with a result', () => {
  it('a file the store cannot read is left out of the result and logged; the result and its link stand', async () => {
    const result = { content: [{ type: 'text' as const, text: 'Here is the chart.' }] };
    const failing = {
      readFile: () => Promise.reject(new AgentportError('INTERNAL', 'cannot connect to PostgreSQL at db:5432/agentport: timeout')),
    } as Pick<Store, 'readFile'> as Store;
    const chart = { id: 'f1', type: 'file' as const, path: '/attachments/chart.png', name: 'chart.png', mimeType: 'image/png', size: 70 };
    const run: RunResult = {
      threadId: 't1',
      prompt: 'gallery',
      text: 'Here is the chart.',
      toolCalls: [{ id: 'c1', name: 'make_chart', arguments: '{}', status: 'success', attachments: [chart] }],
      steps: 1,
      turns: 1,
    };
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(await withInlineMedia(result, run, failing)).toBe(result);
      expect(stderr.mock.calls.map(([line]) => String(line)).join('')).toContain(
        '/attachments/chart.png of thread t1 was not sent inline: cannot connect to PostgreSQL at db:5432/agentport: timeout',
      );
    } finally {
      stderr.mockRestore();
    }
  });
});
