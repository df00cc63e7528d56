/**
 * Threads and attachments as MCP resources, through the real MCP client over
 * stdio and Streamable HTTP in both protocol eras: results that link (and
 * inline) the files their run produced, the resource templates, the list of
 * threads, transcripts, messages and attachments read back (redacted), "not
 * found" for anything else, subscriptions where the transport can deliver
 * them, and, with OAuth, one subject's threads invisible to another.
 */
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { itPassesConformance } from '../support/conformanceScenario.js';
import { systemText, FakeModelServer, type RecordedRequest, type ScriptedReply } from '../support/fakeModelServer.js';
import { connectHttp, connectStdio, startHttpServer, type Era, type HttpServerProcess } from '../support/mcpClients.js';
import { FIXTURES } from '../support/paths.js';
import { LocalIssuer } from '../support/localIssuer.js';

const AGENTS = `${FIXTURES}/agents/resources`;
// The 1x1 PNG make_chart stores.
const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const SECRET = 'tok-resources-5f1e9a77c2';
const VARIABLES = 'agentport/variables';

interface Block {
  type: string;
  text?: string;
  data?: string;
  mimeType?: string;
  uri?: string;
  name?: string;
  size?: number;
  description?: string;
}
interface CallResult {
  content: Block[];
  structuredContent?: { thread_id?: string };
  isError?: boolean;
}

/** The model, by rule: charts draws and writes a note, chat counts turns, token shows its token. */
function play(body: RecordedRequest['body']): ScriptedReply {
  const system = systemText(body);
  const last = body.messages.at(-1);
  if (system.startsWith('Charts.')) {
    // (After the tool results the image comes as a user message of its own: any tool result means done.)
    if (body.messages.some((m) => m.role === 'tool')) return { text: 'Here is the sales chart, with a note.' };
    return {
      toolCalls: [
        { name: 'make_chart', arguments: { name: 'sales' } },
        { name: 'write_note', arguments: { text: 'sales went up' } },
      ],
    };
  }
  if (system.startsWith('Chat.')) return { text: `turn ${body.messages.filter((m) => m.role === 'user').length}` };
  if (system.startsWith('Token.')) {
    if (last?.role === 'tool') return { text: 'Logged in.' };
    return { toolCalls: [{ name: 'show_token', arguments: {} }] };
  }
  return { status: 500, error: `no rule for ${JSON.stringify(system.slice(0, 30))}` };
}

const model = new FakeModelServer();
beforeAll(async () => {
  await model.start();
  model.answerWith(play);
});
afterAll(() => model.stop());
const env = () => ({ OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'test' });

const call = (client: Client, name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) =>
  client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) }) as Promise<CallResult>;

const readText = async (client: Client, uri: string) => {
  const { contents } = await client.readResource({ uri });
  expect(contents).toHaveLength(1);
  return contents[0] as { uri: string; mimeType?: string; text?: string; blob?: string };
};

/** The JSON-RPC error a request failed with. */
async function failure(request: Promise<unknown>): Promise<{ code: number; message: string; data?: { uri?: string } }> {
  try {
    await request;
  } catch (error) {
    return error as { code: number; message: string; data?: { uri?: string } };
  }
  throw new Error('the request succeeded');
}

/** Waits until `check` holds (notifications arrive on their own schedule). */
async function until(check: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const cases: Array<['stdio' | 'http', Era]> = [
  ['stdio', 'legacy'],
  ['stdio', 'modern'],
  ['http', 'legacy'],
  ['http', 'modern'],
];

describe.each(cases)('thread resources over %s (%s era)', (transport, era) => {
  let client: Client;
  let http: HttpServerProcess | undefined;
  let charts: CallResult;
  let threadId: string;
  const updates: string[] = [];

  beforeAll(async () => {
    if (transport === 'stdio') ({ client } = await connectStdio(era, { agentsDir: AGENTS, env: env() }));
    else {
      http = await startHttpServer({ agentsDir: AGENTS, env: env() });
      client = await connectHttp(era, http.url);
    }
    client.setNotificationHandler('notifications/resources/updated', (notification) => {
      updates.push(notification.params.uri);
    });
    charts = await call(client, 'charts', { message: 'Chart the sales, please.' });
    threadId = charts.structuredContent!.thread_id!;
  }, 30_000);
  afterAll(async () => {
    await client?.close();
    await http?.stop();
  });

  const base = () => `agentport://threads/${threadId}`;

  it('[MC-9] declares resources, with subscriptions where updates can be delivered', () => {
    // Stateless 2025-11-25 HTTP has no stream for updates; stdio and 2026-07-28 (subscriptions/listen) do.
    expect(client.getServerCapabilities()?.resources).toEqual({
      subscribe: !(transport === 'http' && era === 'legacy'),
      listChanged: false,
    });
  });

  it('[MC-9] a result links the attachments its run produced, with the image inline', () => {
    expect(charts.isError).toBeUndefined();
    expect(charts.content[0]).toEqual({ type: 'text', text: 'Here is the sales chart, with a note.' });
    expect(charts.content.slice(1)).toEqual([
      { type: 'image', data: PIXEL, mimeType: 'image/png' },
      {
        type: 'resource_link',
        uri: `${base()}/attachments/sales.png`,
        name: 'sales.png',
        mimeType: 'image/png',
        size: Buffer.from(PIXEL, 'base64').length,
      },
      {
        type: 'resource_link',
        uri: `${base()}/attachments/note.txt`,
        name: 'note.txt',
        mimeType: 'text/plain',
        size: 'Note: sales went up\n'.length,
      },
    ]);
  });

  it('[MC-9] lists the resource templates', async () => {
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => [t.uriTemplate, t.mimeType])).toEqual([
      ['agentport://threads/{thread_id}', 'text/markdown'],
      ['agentport://threads/{thread_id}/messages', 'application/json'],
      ['agentport://threads/{thread_id}/attachments/{path}', undefined],
    ]);
    for (const template of resourceTemplates) expect(template.description).toBeTruthy();
  });

  it('[MC-9] lists the threads, the most recently changed first', async () => {
    const chat = await call(client, 'chat', { message: 'hello' });
    const { resources } = await client.listResources();
    const uris = resources.map((r) => r.uri);
    expect(uris.slice(0, 2)).toEqual([`agentport://threads/${chat.structuredContent!.thread_id}`, base()]);
    expect(resources[1]).toMatchObject({ name: `charts/${threadId}`, mimeType: 'text/markdown', title: 'charts (idle)' });
    expect(resources[1]!.description).toContain(`${base()}/messages`);
  });

  it('[MC-9] reads the transcript as markdown', async () => {
    const transcript = await readText(client, base());
    expect(transcript).toMatchObject({ uri: base(), mimeType: 'text/markdown' });
    const text = transcript.text!;
    expect(text).toContain(`# charts: thread ${threadId}`);
    expect(text).toMatch(/## User · #1 · .*\n\nChart the sales, please\./);
    expect(text).toContain('Tool call `make_chart`');
    expect(text).toContain('"name": "sales"');
    expect(text).toMatch(/## Tool result `make_chart` · #3/);
    expect(text).toContain(`[sales.png](${base()}/attachments/sales.png) (image/png, 70 bytes)`);
    expect(text).toMatch(/## Assistant · #5 · .*\n\nHere is the sales chart, with a note\./);
  });

  it('[MC-9] reads the messages as JSON', async () => {
    const messages = await readText(client, `${base()}/messages`);
    expect(messages.mimeType).toBe('application/json');
    const document = JSON.parse(messages.text!) as { thread_id: string; prompt: string; messages: Array<Record<string, unknown>> };
    expect(document).toMatchObject({ thread_id: threadId, prompt: 'charts', status: 'idle' });
    expect(document.messages.map((m) => [m.seq, m.role, m.tool_name ?? null])).toEqual([
      [1, 'user', null],
      [2, 'assistant', null],
      [3, 'tool', 'make_chart'],
      [4, 'tool', 'write_note'],
      [5, 'assistant', null],
    ]);
    expect((document.messages[1]!.tool_calls as Array<{ name: string }>).map((c) => c.name)).toEqual(['make_chart', 'write_note']);
    expect(document.messages[2]!.attachments).toEqual([
      expect.objectContaining({ path: '/attachments/sales.png', mimeType: 'image/png', uri: `${base()}/attachments/sales.png` }),
    ]);
  });

  it('[MC-9] reads an attachment: binary as a base64 blob, text as text, each with its MIME type', async () => {
    expect(await readText(client, `${base()}/attachments/sales.png`)).toEqual({
      uri: `${base()}/attachments/sales.png`,
      mimeType: 'image/png',
      blob: PIXEL,
    });
    expect(await readText(client, `${base()}/attachments/note.txt`)).toEqual({
      uri: `${base()}/attachments/note.txt`,
      mimeType: 'text/plain',
      text: 'Note: sales went up\n',
    });
  });

  it('[MC-9] an unknown thread, file or URI is "resource not found" (-32602 with the URI)', async () => {
    for (const uri of [
      'agentport://threads/no-such-thread',
      'agentport://threads/no-such-thread/messages',
      `${base()}/attachments/missing.png`,
      `${base()}/attachments/..%2F..%2Fthread.json`,
      `${base()}/other`,
      'file:///etc/passwd',
    ]) {
      const error = await failure(client.readResource({ uri }));
      expect(error.code, uri).toBe(-32602);
      expect(error.data?.uri, uri).toBe(uri);
      expect(error.message).toContain('Resource not found');
    }
  });

  it('[MC-9][PR-16] a transcript shows no secret', async () => {
    const result = await call(client, 'token', { message: 'log in' }, { [VARIABLES]: { API_TOKEN: SECRET } });
    expect(result.isError).toBeUndefined();
    const uri = `agentport://threads/${result.structuredContent!.thread_id}`;
    for (const text of [(await readText(client, uri)).text!, (await readText(client, `${uri}/messages`)).text!]) {
      expect(text).toContain('the token is [redacted secret]');
      expect(text).not.toContain(SECRET);
    }
  });

  it('[MC-9] subscriptions: updates of a thread reach the subscriber where the transport allows', async () => {
    const chat = await call(client, 'chat', { message: 'first' });
    const chatId = chat.structuredContent!.thread_id!;
    const uri = `agentport://threads/${chatId}`;
    if (transport === 'http' && era === 'legacy') {
      // Nothing could carry the notification: subscribing is not offered.
      expect((await failure(client.subscribeResource({ uri }))).code).toBe(-32601);
      return;
    }
    updates.length = 0;
    if (era === 'legacy') {
      // Unknown resources cannot be subscribed to.
      expect((await failure(client.subscribeResource({ uri: 'agentport://threads/nope' }))).code).toBe(-32602);
      await client.subscribeResource({ uri });
    }
    const subscription = era === 'modern' ? await client.listen({ resourceSubscriptions: [uri] }) : undefined;
    if (subscription) expect(subscription.honoredFilter).toEqual({ resourceSubscriptions: [uri] });
    await call(client, 'chat', { message: 'second', thread_id: chatId });
    await until(() => updates.includes(uri));
    // Only what was subscribed: the messages URI and other threads are not reported.
    expect(new Set(updates)).toEqual(new Set([uri]));
    if (subscription) await subscription.close();
    else await client.unsubscribeResource({ uri });
    updates.length = 0;
    await call(client, 'chat', { message: 'third', thread_id: chatId });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(updates).toEqual([]);
  }, 20_000);
});

describe('[MC-9][MC-13] thread resources with OAuth: each subject sees only its own', () => {
  const issuer = new LocalIssuer();
  let server: HttpServerProcess;
  const clients: Client[] = [];
  beforeAll(async () => {
    await issuer.start();
    server = await startHttpServer({ agentsDir: AGENTS, args: ['--auth', 'oauth', '--oauth-issuer', issuer.url], env: env() });
  }, 30_000);
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => {})));
    await server?.stop();
    await issuer.stop();
  });
  async function as(sub: string, era: Era): Promise<Client> {
    const client = await connectHttp(era, server.url, { authorization: `Bearer ${await issuer.token(sub, server.url)}` });
    clients.push(client);
    return client;
  }

  it.each(['legacy', 'modern'] as const)(
    'another subject cannot list, read or follow a thread (%s era)',
    async (era) => {
      const alice = await as('alice', era);
      const bob = await as('bob', era);
      const result = await call(alice, 'charts', { message: 'chart it' });
      const uri = `agentport://threads/${result.structuredContent!.thread_id}`;
      expect((await alice.listResources()).resources.map((r) => r.uri)).toContain(uri);
      expect((await alice.readResource({ uri })).contents).toHaveLength(1);
      expect((await bob.listResources()).resources.map((r) => r.uri)).not.toContain(uri);
      for (const target of [uri, `${uri}/messages`, `${uri}/attachments/sales.png`]) {
        const error = await failure(bob.readResource({ uri: target }));
        expect(error.code).toBe(-32602);
        expect(error.data?.uri).toBe(target);
      }
      if (era === 'modern') {
        // Bob's stream asks for Alice's thread: the update of it never reaches him; Alice's own stream gets it.
        const seen = { alice: 0, bob: 0 };
        alice.setNotificationHandler('notifications/resources/updated', () => void seen.alice++);
        bob.setNotificationHandler('notifications/resources/updated', () => void seen.bob++);
        const mine = await alice.listen({ resourceSubscriptions: [uri] });
        const theirs = await bob.listen({ resourceSubscriptions: [uri] });
        await call(alice, 'charts', { message: 'again', thread_id: result.structuredContent!.thread_id });
        await until(() => seen.alice > 0);
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(seen.bob).toBe(0);
        await Promise.all([mine.close(), theirs.close()]);
      }
    },
    30_000,
  );
});

describe('the MCP conformance suite, resource scenarios', () => {
  let http: HttpServerProcess;
  beforeAll(async () => {
    http = await startHttpServer({ agentsDir: AGENTS, env: env() });
    // A thread to list.
    const client = await connectHttp('modern', http.url);
    await call(client, 'chat', { message: 'hello' });
    await client.close();
  }, 30_000);
  afterAll(() => http?.stop());

  // The others read or subscribe to the suite's own test:// resources (see scripts/conformance.mjs).
  itPassesConformance('MC-9', () => http, ['resources-list', 'sep-2164-resource-not-found'], ['FAILURE', 'WARNING']);
});
