/**
 * MCP tasks over stdio with a 2025-11-25 client that opted in (through its
 * `initialize` capabilities): the task is the same run a run handle reaches,
 * its record is stored with the thread, and it answers after the server is
 * killed and started again.
 */
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { FakeModelServer } from '../support/fakeModelServer.js';
import { CLI, FIXTURES } from '../support/paths.js';
import { tempDir } from '../support/mcpClients.js';
import { playFixtures } from '../support/taskFixtures.js';

const AGENTS = `${FIXTURES}/agents/tasks`;
const TASKS = 'io.modelcontextprotocol/tasks';
const anyResult = z.looseObject({});

interface Task {
  taskId: string;
  status: string;
  result?: { content: Array<{ text?: string }>; isError?: boolean; structuredContent?: Record<string, unknown> };
  error?: { code: number; message: string; data?: { code?: string } };
  [key: string]: unknown;
}

describe('[RL-2] MCP tasks over stdio (2025-11-25 era)', () => {
  const model = new FakeModelServer();
  beforeAll(async () => {
    await model.start();
    model.answerWith(playFixtures);
  });
  afterAll(() => model.stop());

  async function connect(dataDir: string, capabilities: Record<string, unknown>) {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'serve', '--dir', AGENTS],
      env: { PATH: process.env.PATH ?? '', OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'test', AGENTPORT_DATA_DIR: dataDir },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'tasks-test', version: '1.0.0' }, { capabilities });
    await client.connect(transport);
    return { client, pid: transport.pid! };
  }
  const call = (client: Client, name: string, args: Record<string, unknown>) =>
    client.request({ method: 'tools/call', params: { name, arguments: args } }, anyResult) as Promise<Task & { resultType?: string }>;
  const get = (client: Client, taskId: string) => client.request({ method: 'tasks/get', params: { taskId } }, anyResult) as Promise<Task>;
  async function settled(client: Client, taskId: string): Promise<Task> {
    for (let i = 0; i < 100; i++) {
      const task = await get(client, taskId);
      if (['completed', 'failed', 'cancelled'].includes(task.status)) return task;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`task ${taskId} did not end`);
  }

  it('answers a quick run inline and a long one with a task whose result tasks/get inlines', async () => {
    const { client } = await connect(tempDir(), { extensions: { [TASKS]: {} } });
    try {
      // The server's first call imports the tool's definitions: on a loaded machine it can outlast the task window.
      await call(client, 'slow_compute', { seconds: 0 });
      const quick = await call(client, 'slow_compute', { seconds: 0 });
      expect(quick.taskId).toBeUndefined();
      expect(quick.content).toEqual([{ type: 'text', text: 'Computed.' }]);

      const created = await call(client, 'slow_compute', { seconds: 1.5 });
      // (The 2025-era client keeps the task's fields and drops the 2026 resultType discriminator.)
      expect(created).toMatchObject({
        status: 'working',
        ttlMs: expect.any(Number),
        pollIntervalMs: expect.any(Number),
        createdAt: expect.any(String),
      });
      expect(created.taskId).toMatch(/^[A-Za-z0-9_-]+\.[0-9a-f]+$/);
      const done = await settled(client, created.taskId);
      expect(done.status).toBe('completed');
      expect(done.result?.content).toEqual([{ type: 'text', text: 'Computed.' }]);
      // The task is the run: its thread is the one the result names.
      expect(created.taskId.startsWith(`${String(done.result?.structuredContent?.thread_id)}.`)).toBe(true);
    } finally {
      await client.close();
    }
  }, 30_000);

  it('never gives a task to a client that did not opt in, and refuses a task-only tool with -32021', async () => {
    const { client } = await connect(tempDir(), {});
    try {
      const result = await call(client, 'slow_compute', { seconds: 1.5 });
      expect(result.taskId).toBeUndefined();
      expect(result.content).toEqual([{ type: 'text', text: 'Computed.' }]);
      await expect(call(client, 'failing_job', {})).rejects.toMatchObject({ code: -32021 });
      await expect(get(client, 'anything.00')).rejects.toMatchObject({ code: -32021 });
    } finally {
      await client.close();
    }
  }, 30_000);

  it('reports a run that could not run as failed, one that ended as an error as completed with isError, and an unknown id as -32602', async () => {
    const { client } = await connect(tempDir(), { extensions: { [TASKS]: {} } });
    try {
      const broken = await settled(client, (await call(client, 'protocol_error_job', {})).taskId);
      expect(broken).toMatchObject({ status: 'failed', error: { code: -32603, data: { code: 'MODEL_FAILED' } } });
      expect(broken.result).toBeUndefined();
      const failing = await settled(client, (await call(client, 'failing_job', {})).taskId);
      expect(failing.status).toBe('completed');
      expect(failing.result?.isError).toBe(true);
      expect(failing.result?.content[0]?.text).toContain('the job always fails');
      await expect(get(client, 'no-such-thread.00')).rejects.toMatchObject({ code: -32602 });
    } finally {
      await client.close();
    }
  }, 30_000);

  it('[RL-4] answers for a task after the server was killed: the finished one with its result, the running one as failed (interrupted)', async () => {
    const dataDir = tempDir();
    const first = await connect(dataDir, { extensions: { [TASKS]: {} } });
    const finished = await call(first.client, 'slow_compute', { seconds: 1.2 });
    await settled(first.client, finished.taskId);
    const running = await call(first.client, 'slow_compute', { seconds: 30 });
    expect(running.status).toBe('working');
    // Past the running mark, then kill -9.
    await new Promise((resolve) => setTimeout(resolve, 700));
    process.kill(first.pid, 'SIGKILL');
    await first.client.close().catch(() => {});

    const second = await connect(dataDir, { extensions: { [TASKS]: {} } });
    try {
      const before = await get(second.client, finished.taskId);
      expect(before).toMatchObject({ status: 'completed', result: { content: [{ type: 'text', text: 'Computed.' }] } });
      const lost = await get(second.client, running.taskId);
      expect(lost).toMatchObject({ status: 'failed', error: { data: { code: 'INTERRUPTED' } } });
    } finally {
      await second.client.close();
    }
  }, 30_000);
});
