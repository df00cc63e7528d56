/**
 * Several `agentport serve --http --store postgres` instances on one
 * database (as behind a load balancer): a thread started on one continues on
 * another, and turns of one thread sent to two instances at once run one
 * after the other. Needs the PostgreSQL server the tests use; skipped with
 * one line without it.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { FakeModelServer } from '../support/fakeModelServer.js';
import { connectHttp, startHttpServer, type HttpServerProcess } from '../support/mcpClients.js';
import { FIXTURES } from '../support/paths.js';
import { databaseUrl, dropSchema, postgresReachable } from '../support/postgres.js';
import { playFixtures } from '../support/taskFixtures.js';

const reachable = await postgresReachable();
if (!reachable)
  console.warn(`PostgreSQL multi-instance tests skipped: no server answers at ${databaseUrl()} (set AGENTPORT_TEST_DATABASE_URL)`);

const textOf = (result: unknown) => (result as { content: Array<{ text?: string }> }).content[0]?.text ?? '';
const threadOf = (result: unknown) => String((result as { structuredContent: { thread_id: string } }).structuredContent.thread_id);

describe.runIf(reachable)('[ST-4] two HTTP instances on one PostgreSQL database', () => {
  const schema = `agentport_test_${randomBytes(6).toString('hex')}`;
  const model = new FakeModelServer();
  const instances: HttpServerProcess[] = [];
  const clients: Client[] = [];
  beforeAll(async () => {
    await model.start();
    model.answerWith(playFixtures);
    const env = {
      OPENAI_BASE_URL: model.baseURL,
      OPENAI_API_KEY: 'test',
      AGENTPORT_STORE: 'postgres',
      AGENTPORT_DATABASE_URL: databaseUrl(),
      AGENTPORT_DATABASE_SCHEMA: schema,
      AGENTPORT_SECRET_KEY: randomBytes(32).toString('hex'),
    };
    instances.push(
      ...(await Promise.all([
        startHttpServer({ agentsDir: `${FIXTURES}/agents/tasks`, env }),
        startHttpServer({ agentsDir: `${FIXTURES}/agents/tasks`, env }),
      ])),
    );
    clients.push(...(await Promise.all(instances.map((instance) => connectHttp('legacy', instance.url)))));
  }, 60_000);
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => {})));
    await Promise.all(instances.map((instance) => instance.stop()));
    await model.stop();
    await dropSchema(schema);
  });

  async function storedRoles(threadId: string): Promise<Array<[number, string]>> {
    const client = new pg.Client({ connectionString: databaseUrl() });
    await client.connect();
    try {
      const { rows } = await client.query<{ seq: string; body: string }>(
        `SELECT seq, body FROM ${schema}.messages WHERE thread_id = $1 ORDER BY seq`,
        [threadId],
      );
      return rows.map((row) => [Number(row.seq), (JSON.parse(row.body) as { role: string }).role]);
    } finally {
      await client.end();
    }
  }

  it('continues on one instance a thread started on the other', async () => {
    const [a, b] = clients as [Client, Client];
    const first = await a.callTool({ name: 'chat', arguments: { message: 'hello' } });
    expect(textOf(first)).toBe('turn 1');
    const second = await b.callTool({ name: 'chat', arguments: { message: 'again', thread_id: threadOf(first) } });
    // Instance b read the first turn from the database: its model saw two user messages.
    expect(textOf(second)).toBe('turn 2');
    expect(threadOf(second)).toBe(threadOf(first));
    expect(await storedRoles(threadOf(first))).toEqual([
      [1, 'user'],
      [2, 'assistant'],
      [3, 'user'],
      [4, 'assistant'],
    ]);
  }, 30_000);

  it('serves a client through a round-robin proxy in front of both (docs/deployment.md)', async () => {
    // @ts-expect-error: a plain JavaScript bench script, without types.
    const { startRoundRobin } = (await import('../../bench/roundRobin.mjs')) as {
      startRoundRobin: (upstreams: string[]) => Promise<{ url: string; close(): Promise<void> }>;
    };
    const proxy = await startRoundRobin(instances.map((instance) => new URL(instance.url).origin));
    const client = await connectHttp('legacy', `${proxy.url}/mcp`);
    try {
      let thread: string | undefined;
      for (let turn = 1; turn <= 4; turn++) {
        const result = await client.callTool({
          name: 'chat',
          arguments: { message: `turn ${turn}`, ...(thread ? { thread_id: thread } : {}) },
        });
        expect(textOf(result)).toBe(`turn ${turn}`);
        thread = threadOf(result);
      }
    } finally {
      await client.close();
      await proxy.close();
    }
  }, 30_000);

  it('runs turns of one thread sent to both instances at once one after the other', async () => {
    const [a, b] = clients as [Client, Client];
    const thread = threadOf(await a.callTool({ name: 'chat', arguments: { message: 'start' } }));
    await Promise.all([
      a.callTool({ name: 'chat', arguments: { message: 'sleep on a', thread_id: thread } }),
      b.callTool({ name: 'chat', arguments: { message: 'sleep on b', thread_id: thread } }),
    ]);
    const roles = (await storedRoles(thread)).map(([, role]) => role);
    // Each turn is user, assistant (tool call), tool, assistant: never interleaved.
    expect(roles).toEqual(['user', 'assistant', ...Array(2).fill(['user', 'assistant', 'tool', 'assistant']).flat()]);
    expect((await storedRoles(thread)).map(([seq]) => seq)).toEqual(roles.map((_, i) => i + 1));
  }, 30_000);
});
