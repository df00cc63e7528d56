/**
 * `serve --http --auth oauth` through the real MCP client: a small local
 * issuer (keys from jose, its metadata and JWKS served on loopback, tokens
 * minted here), and several users. Tokens are checked (issuer, audience,
 * expiry, scopes, signature), a request without one gets the 401 challenge
 * that leads to the protected-resource metadata, each subject reaches only
 * its own threads, runs, tasks and stored variables, and the per-user
 * limits answer with RATE_LIMITED.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { systemText, userText, FakeModelServer, type RecordedRequest, type ScriptedReply } from '../support/fakeModelServer.js';
import { connectHttp, newClient, startHttpServer, type Era, type HttpServerProcess } from '../support/mcpClients.js';
import { FIXTURES } from '../support/paths.js';
import { LocalIssuer } from '../support/localIssuer.js';

const AGENTS = `${FIXTURES}/agents/oauth`;
const SCOPE = 'agentport';
const TASKS = 'io.modelcontextprotocol/tasks';

interface CallResult {
  content: Array<{ type: string; text?: string }>;
  structuredContent?: { thread_id?: string; status?: string; error?: { code: string; message: string; data?: Record<string, unknown> } };
  isError?: boolean;
}

/** The model: chat answers with the number of user messages it sees, slow sleeps first, notes answers at once. */
function play(body: RecordedRequest['body']): ScriptedReply {
  const system = systemText(body);
  const last = body.messages.at(-1);
  if (system.startsWith('Chat.')) return { text: `turn ${body.messages.filter((m) => m.role === 'user').length}` };
  if (system.startsWith('Notes.')) return { text: 'noted' };
  if (system.startsWith('Compute slowly.')) {
    if (last?.role === 'tool') return { text: 'Computed.' };
    const asked = userText(body);
    return { toolCalls: [{ name: 'sleep', arguments: { seconds: Number(/seconds\W{0,4}(\d+(?:\.\d+)?)/.exec(asked)?.[1] ?? 0) } }] };
  }
  return { status: 500, error: `no rule for the system prompt ${JSON.stringify(system.slice(0, 40))}` };
}

const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

/** A raw MCP POST, to see the HTTP answer itself. */
function post(url: string, token?: string): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: initialize,
  });
}

/** The parameters of a `WWW-Authenticate: Bearer k="v", ...` challenge. */
function challenge(response: Response): Record<string, string> {
  const header = response.headers.get('www-authenticate') ?? '';
  expect(header).toMatch(/^Bearer /);
  return Object.fromEntries([...header.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
}

describe('[MC-13] OAuth: tokens, metadata and one user per subject', () => {
  const issuer = new LocalIssuer();
  const model = new FakeModelServer();
  let server: HttpServerProcess;
  const clients: Client[] = [];

  beforeAll(async () => {
    await Promise.all([issuer.start(), model.start()]);
    model.answerWith(play);
    server = await startHttpServer({
      agentsDir: AGENTS,
      // The keys are found through the issuer's metadata (no --oauth-jwks-url); runs past 1 s go on in the background.
      args: ['--auth', 'oauth', '--oauth-issuer', issuer.url, '--oauth-scopes', SCOPE, '--call-budget', '1'],
      env: { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'test' },
    });
  }, 30_000);
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => {})));
    await server?.stop();
    await Promise.all([issuer.stop(), model.stop()]);
  });

  async function as(sub: string, era: Era = 'modern'): Promise<Client> {
    const client = await connectHttp(era, server.url, { authorization: `Bearer ${await issuer.token(sub, server.url)}` });
    clients.push(client);
    return client;
  }
  const call = (client: Client, name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) =>
    client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) }) as Promise<CallResult>;

  it('answers a request without a token with 401 and a challenge leading to the protected-resource metadata', async () => {
    const response = await post(server.url);
    expect(response.status).toBe(401);
    const params = challenge(response);
    const port = new URL(server.url).port;
    expect(params.resource_metadata).toBe(`http://127.0.0.1:${port}/.well-known/oauth-protected-resource/mcp`);
    const expected = {
      resource: server.url,
      authorization_servers: [issuer.url],
      scopes_supported: [SCOPE],
      bearer_methods_supported: ['header'],
    };
    const metadata = await fetch(params.resource_metadata!);
    expect(metadata.status).toBe(200);
    expect(await metadata.json()).toMatchObject(expected);
    // Also at the bare path (clients that do not insert the resource's path).
    const bare = await fetch(`http://127.0.0.1:${port}/.well-known/oauth-protected-resource`);
    expect(await bare.json()).toMatchObject(expected);
    // The real client is refused too (it has no way to get a token here).
    await expect(connectHttp('modern', server.url)).rejects.toThrow();
    await expect(connectHttp('legacy', server.url)).rejects.toThrow();
    // /healthz stays open.
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
  });

  it('refuses an expired token, a token for another audience, from another issuer or signed by another key (401)', async () => {
    const { privateKey: strangerKey } = await generateKeyPair('RS256');
    const cases: Array<[string, Promise<string>, RegExp]> = [
      ['expired', issuer.token('alice', server.url, { expiresAt: Math.floor(Date.now() / 1000) - 120 }), /expired/],
      ['wrong audience', issuer.token('alice', 'http://127.0.0.1:1/mcp'), /not for this server/],
      ['wrong issuer', issuer.token('alice', server.url, { issuer: 'http://127.0.0.1:1' }), /not issued by/],
      ['another key', issuer.token('alice', server.url, { key: strangerKey }), /not signed by/],
      ['not a JWT', Promise.resolve('abc.def.ghi'), /not a valid JWT/],
    ];
    for (const [what, token, description] of cases) {
      const response = await post(server.url, await token);
      expect(response.status, what).toBe(401);
      const params = challenge(response);
      expect(params.error, what).toBe('invalid_token');
      expect(params.error_description, what).toMatch(description);
      expect(params.resource_metadata, what).toMatch(/\/\.well-known\/oauth-protected-resource\/mcp$/);
      await expect(connectHttp('modern', server.url, { authorization: `Bearer ${await token}` }), what).rejects.toThrow();
    }
    expect(model.requests).toHaveLength(0);
  });

  it('refuses a token without the required scope with 403 insufficient_scope', async () => {
    const token = await issuer.token('alice', server.url, { scope: 'other' });
    const response = await post(server.url, token);
    expect(response.status).toBe(403);
    const params = challenge(response);
    expect(params).toMatchObject({ error: 'insufficient_scope', scope: SCOPE });
    expect(params.resource_metadata).toMatch(/\/\.well-known\/oauth-protected-resource\/mcp$/);
    await expect(connectHttp('modern', server.url, { authorization: `Bearer ${token}` })).rejects.toThrow();
  });

  it('serves a valid token, in both protocol eras', async () => {
    for (const era of ['modern', 'legacy'] as const) {
      const client = await as('alice', era);
      const tools = await client.listTools();
      expect(tools.tools.map((t) => t.name)).toEqual(expect.arrayContaining(['chat', 'slow', 'notes', 'run_wait']));
      const result = await call(client, 'chat', { message: 'hello' });
      expect(result.isError, JSON.stringify(result)).toBeFalsy();
      expect(result.content[0]?.text).toBe('turn 1');
    }
  });

  it('keeps each thread to the subject that created it: another cannot continue it, and is told exactly what a missing thread gets', async () => {
    const alice = await as('alice');
    const bob = await as('bob', 'legacy');
    const first = await call(alice, 'chat', { message: 'hello' });
    const threadId = first.structuredContent!.thread_id!;
    expect(threadId).toBeTruthy();
    const before = model.requests.length;

    const foreign = await call(bob, 'chat', { message: 'let me in', thread_id: threadId });
    const missing = await call(bob, 'chat', { message: 'let me in', thread_id: 'no-such-thread' });
    expect(foreign.isError).toBe(true);
    expect(foreign.structuredContent?.error?.code).toBe('THREAD_NOT_FOUND');
    expect(foreign.structuredContent?.error?.message).toBe(missing.structuredContent?.error?.message.replace('no-such-thread', threadId));
    // Another prompt's name on the thread says nothing either (not "belongs to chat").
    const otherTarget = await call(bob, 'notes', { message: 'x', thread_id: threadId }, { 'agentport/variables': { NOTE: 'n' } });
    expect(otherTarget.structuredContent?.error?.code).toBe('THREAD_NOT_FOUND');
    expect(model.requests.length).toBe(before);

    // The owner goes on where the thread was (the model sees the earlier turn).
    const second = await call(alice, 'chat', { message: 'again', thread_id: threadId });
    expect(second.content[0]?.text).toBe('turn 2');
  });

  it('keeps run_wait, run_status and run_cancel of a background run to its owner', async () => {
    const alice = await as('alice');
    const bob = await as('bob');
    const started = await call(alice, 'slow', { seconds: 2.5 });
    expect(started.structuredContent).toMatchObject({ status: 'running' });
    const threadId = started.structuredContent!.thread_id!;

    for (const tool of ['run_wait', 'run_status', 'run_cancel']) {
      const foreign = await call(bob, tool, { thread_id: threadId, ...(tool === 'run_wait' ? { timeout_s: 1 } : {}) });
      const missing = await call(bob, tool, { thread_id: 'no-such-thread', ...(tool === 'run_wait' ? { timeout_s: 1 } : {}) });
      expect(foreign.isError, tool).toBe(true);
      expect(foreign.structuredContent?.error?.code, tool).toBe('THREAD_NOT_FOUND');
      expect(foreign.structuredContent?.error?.message, tool).toBe(
        missing.structuredContent?.error?.message.replace('no-such-thread', threadId),
      );
    }
    // Bob's run_cancel did not stop it: the owner gets its result.
    const status = await call(alice, 'run_status', { thread_id: threadId });
    expect(status.structuredContent?.status).toBe('running');
    const done = await call(alice, 'run_wait', { thread_id: threadId, timeout_s: 20 });
    expect(done.isError, JSON.stringify(done)).toBeFalsy();
    expect(done.content[0]?.text).toBe('Computed.');
  }, 30_000);

  it('keeps tasks to their owner: tasks/get, tasks/update and tasks/cancel of another subject answer as for an unknown task', async () => {
    const tasksClient = async (sub: string) => {
      // A 2025-era client (it keeps a task's fields; stateless HTTP has no session, so each request says it opted in).
      const client = new Client({ name: 'oauth-tasks', version: '1.0.0' }, { capabilities: { extensions: { [TASKS]: {} } } });
      const token = await issuer.token(sub, server.url);
      await client.connect(
        new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
      );
      clients.push(client);
      return client;
    };
    const anyResult = z.looseObject({});
    const optIn = { 'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } } };
    const alice = await tasksClient('alice');
    const bob = await tasksClient('bob');
    const created = (await alice.request(
      { method: 'tools/call', params: { name: 'slow', arguments: { seconds: 2 }, _meta: optIn } },
      anyResult,
    )) as { taskId?: string; status?: string };
    expect(created.status, JSON.stringify(created)).toBe('working');
    const taskId = created.taskId!;
    const refusal = async (client: Client, method: string, params: Record<string, unknown>) => {
      try {
        await client.request({ method, params: { ...params, _meta: optIn } } as never, anyResult);
        return 'answered';
      } catch (error) {
        return String((error as Error).message);
      }
    };
    for (const [method, extra] of [
      ['tasks/get', {}],
      ['tasks/update', { inputResponses: {} }],
      ['tasks/cancel', {}],
    ] as const) {
      const foreign = await refusal(bob, method, { taskId, ...extra });
      const missing = await refusal(bob, method, { taskId: 'no-such-thread.abcdef', ...extra });
      expect(foreign, method).toMatch(/no task has the id/);
      expect(foreign, method).toBe(missing.replace('no-such-thread.abcdef', taskId));
    }
    // Still Alice's, and not cancelled.
    let task: { status?: string; result?: CallResult } = {};
    for (let i = 0; i < 100 && !['completed', 'failed', 'cancelled'].includes(task.status ?? ''); i++) {
      task = await alice.request({ method: 'tasks/get', params: { taskId, _meta: optIn } }, anyResult);
      if (task.status === 'working') await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(task.status).toBe('completed');
    expect(task.result?.content[0]?.text).toBe('Computed.');
  }, 30_000);

  it('keeps variables stored with a thread to its owner', async () => {
    const alice = await as('alice');
    const bob = await as('bob');
    const stored = await call(alice, 'notes', { message: 'keep this' }, { 'agentport/variables': { NOTE: 'alice-private-note' } });
    expect(stored.isError, JSON.stringify(stored)).toBeFalsy();
    const threadId = stored.structuredContent!.thread_id!;
    // The owner continues without sending the value again: it was stored with her thread.
    const again = await call(alice, 'notes', { message: 'and this', thread_id: threadId });
    expect(again.isError, JSON.stringify(again)).toBeFalsy();
    // Bob can neither use her thread nor get her value on a thread of his own.
    const foreign = await call(bob, 'notes', { message: 'use it', thread_id: threadId });
    expect(foreign.structuredContent?.error?.code).toBe('THREAD_NOT_FOUND');
    const own = await call(bob, 'notes', { message: 'use it' });
    expect(own.structuredContent?.error?.code).toBe('MISSING_VARIABLES');
    // The HTTP endpoint for a thread's variable requests answers him as for a thread that does not exist.
    const port = new URL(server.url).port;
    const token = await issuer.token('bob', server.url);
    const endpoint = (thread: string) =>
      fetch(`http://127.0.0.1:${port}/threads/${thread}/variables/req-1`, { headers: { authorization: `Bearer ${token}` } });
    expect((await endpoint(threadId)).status).toBe(404);
    expect((await endpoint('no-such-thread')).status).toBe(404);
    expect(JSON.stringify(model.requests)).not.toContain('alice-private-note');
  });
});

describe('[MC-13] OAuth: per-user limits (--max-runs-per-user, --rate-limit)', () => {
  const issuer = new LocalIssuer();
  const model = new FakeModelServer();
  let server: HttpServerProcess;
  const clients: Client[] = [];

  beforeAll(async () => {
    await Promise.all([issuer.start(), model.start()]);
    model.answerWith(play);
    server = await startHttpServer({
      agentsDir: AGENTS,
      args: ['--max-runs-per-user', '1', '--rate-limit', '3', '--call-budget', '1'],
      // Configured through the environment this time, with the keys named directly (no discovery).
      env: {
        OPENAI_BASE_URL: model.baseURL,
        OPENAI_API_KEY: 'test',
        AGENTPORT_AUTH: 'oauth',
        AGENTPORT_OAUTH_ISSUER: issuer.url,
        AGENTPORT_OAUTH_JWKS_URL: `${issuer.url}/jwks`,
      },
    });
  }, 30_000);
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => {})));
    await server?.stop();
    await Promise.all([issuer.stop(), model.stop()]);
  });

  async function as(sub: string): Promise<Client> {
    const client = newClient('modern');
    await client.connect(
      new StreamableHTTPClientTransport(new URL(server.url), {
        requestInit: { headers: { authorization: `Bearer ${await issuer.token(sub, server.url)}` } },
      }),
    );
    clients.push(client);
    return client;
  }
  const call = (client: Client, name: string, args: Record<string, unknown>) =>
    client.callTool({ name, arguments: args }) as Promise<CallResult>;

  it('refuses a second run at once for the same user (background runs count), not for another user', async () => {
    const carol = await as('carol');
    const dave = await as('dave');
    const started = await call(carol, 'slow', { seconds: 2 });
    expect(started.structuredContent?.status).toBe('running');
    const refused = await call(carol, 'chat', { message: 'hi' });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent?.error).toMatchObject({ code: 'RATE_LIMITED', data: { limit: 'concurrent_runs', max: 1 } });
    expect(refused.content[0]?.text).toMatch(/at most 1 per user \(--max-runs-per-user\)/);
    // Another user is not held back by Carol's run.
    const other = await call(dave, 'chat', { message: 'hi' });
    expect(other.isError, JSON.stringify(other)).toBeFalsy();
    // Once her run has ended, Carol can run again.
    const done = await call(carol, 'run_wait', { thread_id: started.structuredContent!.thread_id!, timeout_s: 20 });
    expect(done.content[0]?.text).toBe('Computed.');
    const after = await call(carol, 'chat', { message: 'hi' });
    expect(after.isError, JSON.stringify(after)).toBeFalsy();
  }, 30_000);

  it('refuses calls over the per-minute rate with when to try again', async () => {
    const erin = await as('erin');
    for (let i = 0; i < 3; i++) {
      const result = await call(erin, 'chat', { message: `call ${i}` });
      expect(result.isError, JSON.stringify(result)).toBeFalsy();
    }
    const before = model.requests.length;
    const refused = await call(erin, 'chat', { message: 'one more' });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent?.error).toMatchObject({ code: 'RATE_LIMITED', data: { limit: 'calls_per_minute', max: 3 } });
    expect(refused.structuredContent?.error?.data?.retryAfterSeconds).toBeGreaterThan(0);
    expect(refused.content[0]?.text).toMatch(/at most 3 calls per minute per user \(--rate-limit\)\. Try again in \d+ s/);
    expect(model.requests.length).toBe(before);
    // run_wait and friends are not limited; other users have their own count.
    expect((await call(erin, 'run_status', { thread_id: 'no-such-thread' })).structuredContent?.error?.code).toBe('THREAD_NOT_FOUND');
    const frank = await as('frank');
    expect((await call(frank, 'chat', { message: 'hi' })).isError).toBeFalsy();
  });
});
