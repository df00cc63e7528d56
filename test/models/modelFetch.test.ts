/**
 * The built-in provider's HTTP transport (src/models/modelFetch.ts): model calls over node:http
 * with kept-alive connections, behaving as fetch does for everything the openai client relies on.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { getEventListeners } from 'node:events';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import type { ModelDefinition } from '../../src/definitions/types.js';
import { isAgentportError } from '../../src/errors.js';
import { callModel } from '../../src/models/callModel.js';
import { modelFetch, modelFetchUsable } from '../../src/models/modelFetch.js';
import { OpenAICompatibleProvider } from '../../src/models/openaiProvider.js';
import { ModelResolver, modelTransport } from '../../src/models/resolveModel.js';
import { FakeModelServer } from '../support/fakeModelServer.js';
import { FIXTURES, REPO_ROOT } from '../support/paths.js';

const COMPLETION = {
  id: 'c',
  object: 'chat.completion',
  created: 1,
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
};

interface TestServer {
  url: string;
  connections: Socket[];
  requests: IncomingMessage[];
  close(): Promise<void>;
}

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse, socket: Socket) => void): Promise<TestServer> {
  const connections: Socket[] = [];
  const requests: IncomingMessage[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(req);
    handler(req, res, req.socket);
  });
  server.on('connection', (socket) => connections.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const running: TestServer = {
    url: `http://127.0.0.1:${port}`,
    connections,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  servers.push(running);
  return running;
}

/** Reads a request's body, then answers with `body`. */
function answer(res: ServerResponse, req: IncomingMessage, status: number, headers: Record<string, string>, body?: Buffer | string) {
  req.resume();
  req.once('end', () => res.writeHead(status, headers).end(body));
}

const json = (res: ServerResponse, req: IncomingMessage) =>
  answer(res, req, 200, { 'content-type': 'application/json' }, JSON.stringify(COMPLETION));

/** A `globalThis.fetch` that records its calls and answers with a completion. */
function replaceFetch() {
  const original = globalThis.fetch;
  const calls: string[] = [];
  globalThis.fetch = async (input: Parameters<typeof fetch>[0]) => {
    calls.push(String(input));
    return new Response(JSON.stringify(COMPLETION), { status: 200, headers: { 'content-type': 'application/json' } });
  };
  return { calls, restore: () => (globalThis.fetch = original) };
}

const definition: ModelDefinition = { name: 'm', provider: 'openai', model: 'bench-model', maxRetries: 0 };
const request = (model: ModelDefinition) => ({ model: model.model, messages: [{ role: 'user' as const, content: 'hi' }] });

describe('the model transport', () => {
  it('sends model calls over node:http by default, and through fetch when asked or when a proxy is set', async () => {
    const model = await new FakeModelServer().start();
    try {
      const env = { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: model.baseURL };
      const settings = [{}, { AGENTPORT_MODEL_TRANSPORT: 'fetch' }, { HTTPS_PROXY: 'http://proxy.invalid:3128' }];
      for (const extra of settings) {
        model.reply({ text: 'answered' });
        const { response } = await callModel(new ModelResolver(new Map([['m', { definition }]]), { ...env, ...extra }), 'm', request);
        expect(response.text).toBe('answered');
      }
      // Node's fetch sends a Fetch metadata header; node:http sends what the client gives it, and nothing more.
      expect(model.requests.map((sent) => sent.headers['sec-fetch-mode'])).toEqual([undefined, 'cors', 'cors']);
      const [sent] = model.requests;
      expect(sent?.headers.authorization).toBe('Bearer sk-test');
      expect(sent?.headers['content-type']).toBe('application/json');
      expect(sent?.body).toMatchObject({ model: 'bench-model', messages: [{ role: 'user', content: 'hi' }] });
    } finally {
      await model.stop();
    }
  });

  it("leaves model calls to a fetch someone put in place of Node's (tracing, logging, a mock)", async () => {
    const model = await new FakeModelServer().start();
    const replaced = replaceFetch();
    try {
      const env = { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: model.baseURL };
      const { response } = await callModel(new ModelResolver(new Map([['m', { definition }]]), env), 'm', request);
      expect(response.text).toBe('ok');
      expect(replaced.calls).toEqual([`${model.baseURL}/chat/completions`]);
      expect(model.requests).toHaveLength(0);
    } finally {
      replaced.restore();
      await model.stop();
    }
  });

  it('leaves fetch to a dispatcher someone installed, and names AGENTPORT_MODEL_TRANSPORT when its value is wrong', () => {
    expect(modelFetchUsable()).toBe(true);
    const slot = Symbol.for('undici.globalDispatcher.1');
    const globals = globalThis as Record<symbol, unknown>;
    const own = globals[slot];
    globals[slot] = new (class ProxyAgent {})();
    try {
      expect(modelFetchUsable()).toBe(false);
    } finally {
      globals[slot] = own;
    }
    expect(modelFetchUsable()).toBe(true);
    expect([
      modelTransport({}),
      modelTransport({ AGENTPORT_MODEL_TRANSPORT: 'http' }),
      modelTransport({ http_proxy: 'http://p:1' }),
    ]).toEqual(['http', 'http', 'fetch']);
    let error: unknown;
    try {
      new ModelResolver(new Map([['m', { definition }]]), { OPENAI_API_KEY: 'k', AGENTPORT_MODEL_TRANSPORT: 'curl' }).resolve('m');
    } catch (caught) {
      error = caught;
    }
    expect(isAgentportError(error) && error.code).toBe('MODEL_CONFIG');
    expect((error as Error).message).toContain('AGENTPORT_MODEL_TRANSPORT must be "http" or "fetch", not "curl"');
  });

  it('speaks HTTPS: trusts what Node trusts (NODE_EXTRA_CA_CERTS included) and fails like fetch on a certificate it does not', async () => {
    const tls = path.join(FIXTURES, 'tls');
    const secure = createHttpsServer(
      { key: readFileSync(path.join(tls, 'key.pem')), cert: readFileSync(path.join(tls, 'cert.pem')) },
      (req, res) => json(res, req),
    );
    await new Promise<void>((resolve) => secure.listen(0, '127.0.0.1', resolve));
    try {
      const url = `https://127.0.0.1:${(secure.address() as AddressInfo).port}/v1/chat/completions`;
      const refused = await modelFetch(url, { method: 'POST', body: '{}' }).catch((error: unknown) => error);
      expect((refused as Error).message).toBe('fetch failed');
      expect(((refused as Error).cause as { code?: string }).code).toBe('DEPTH_ZERO_SELF_SIGNED_CERT');
      // Node reads NODE_EXTRA_CA_CERTS when it starts: a process of its own, on the built module.
      const script = `const { modelFetch } = await import(${JSON.stringify(pathToFileURL(path.join(REPO_ROOT, 'dist', 'models', 'modelFetch.js')).href)});
const response = await modelFetch(${JSON.stringify(url)}, { method: 'POST', body: '{}' });
process.stdout.write(JSON.stringify({ status: response.status, body: await response.json() }));`;
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
        env: { ...process.env, NODE_EXTRA_CA_CERTS: path.join(tls, 'cert.pem') },
      });
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
      expect(await new Promise((resolve) => child.once('exit', resolve)), out).toBe(0);
      expect(JSON.parse(out)).toEqual({ status: 200, body: COMPLETION });
    } finally {
      secure.closeAllConnections();
      await new Promise((resolve) => secure.close(resolve));
    }
  });

  it('keeps one connection for calls one after another', async () => {
    const server = await serve((req, res) => json(res, req));
    const provider = new OpenAICompatibleProvider({ apiKey: 'k', baseURL: `${server.url}/v1`, fetch: modelFetch });
    for (let i = 0; i < 3; i++) expect((await provider.complete(request(definition), {})).text).toBe('ok');
    expect(server.requests).toHaveLength(3);
    expect(server.connections).toHaveLength(1);
  });

  it('decodes gzip, deflate (wrapped or raw) and br answers, as fetch does', async () => {
    const text = JSON.stringify(COMPLETION);
    const encoded: Record<string, Buffer> = {
      gzip: gzipSync(text),
      deflate: deflateSync(text),
      'raw-deflate': deflateRawSync(text),
      br: brotliCompressSync(text),
    };
    const server = await serve((req, res) => {
      const kind = req.url!.slice(1);
      answer(
        res,
        req,
        200,
        { 'content-type': 'application/json', 'content-encoding': kind === 'raw-deflate' ? 'deflate' : kind },
        encoded[kind],
      );
    });
    for (const kind of Object.keys(encoded)) {
      const response = await modelFetch(`${server.url}/${kind}`, { method: 'POST', body: '{}' });
      expect(await response.json()).toEqual(COMPLETION);
    }
    expect(server.requests.map((req) => req.headers['accept-encoding'])).toEqual(Object.keys(encoded).map(() => 'gzip, deflate'));
  });

  it('keeps the status, status text and headers, and gives no body where the status has none', async () => {
    const server = await serve((req, res) => {
      if (req.url === '/empty') answer(res, req, 204, { 'x-request-id': 'r1' });
      else answer(res, req, 429, { 'retry-after': '2', 'content-type': 'application/json' }, '{"error":{"message":"slow down"}}');
    });
    const empty = await modelFetch(`${server.url}/empty`, { method: 'POST', body: '{}' });
    expect([empty.status, empty.body, empty.headers.get('x-request-id')]).toEqual([204, null, 'r1']);
    const limited = await modelFetch(`${server.url}/limited`, { method: 'POST', body: '{}' });
    expect([limited.status, limited.statusText, limited.headers.get('retry-after')]).toEqual([429, 'Too Many Requests', '2']);
    expect(await limited.json()).toEqual({ error: { message: 'slow down' } });
  });

  it('follows a redirect the way fetch does', async () => {
    const server = await serve((req, res) => {
      if (req.url === '/v1/chat/completions') answer(res, req, 307, { location: '/moved/chat/completions' });
      else json(res, req);
    });
    const provider = new OpenAICompatibleProvider({ apiKey: 'k', baseURL: `${server.url}/v1`, fetch: modelFetch });
    expect((await provider.complete(request(definition), {})).text).toBe('ok');
    expect(server.requests.map((req) => `${req.method} ${req.url}`)).toEqual([
      'POST /v1/chat/completions',
      'POST /v1/chat/completions',
      'POST /moved/chat/completions',
    ]);
  });

  it('hands over an event stream as it arrives', async () => {
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    const server = await serve((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: one\n\n');
      void finished.then(() => res.end('data: two\n\n'));
    });
    const response = await modelFetch(`${server.url}/stream`, { method: 'POST', body: '{}' });
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe('data: one\n\n');
    finish();
    const rest: string[] = [];
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest.push(new TextDecoder().decode(chunk.value));
    expect(rest.join('')).toBe('data: two\n\n');
  });

  it('leaves no listener on the signal of a call once its event stream has ended', async () => {
    const server = await serve((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' }).end('data: one\n\n');
    });
    const signal = new AbortController().signal;
    for (let i = 0; i < 3; i++) {
      const response = await modelFetch(`${server.url}/stream`, { method: 'POST', body: '{}', signal });
      expect(await response.text()).toBe('data: one\n\n');
    }
    await expect.poll(() => getEventListeners(signal, 'abort').length).toBe(0);
  });

  it('stops a request when its signal aborts, and times out like the client expects', async () => {
    const server = await serve(() => {
      // Never answers.
    });
    const controller = new AbortController();
    const pending = modelFetch(`${server.url}/slow`, { method: 'POST', body: '{}', signal: controller.signal });
    await expect.poll(() => server.requests.length).toBe(1);
    const closed = new Promise((resolve) => server.requests[0]!.socket.once('close', resolve));
    controller.abort(new Error('stopped by the caller'));
    await expect(pending).rejects.toThrow('stopped by the caller');
    await closed;
    await expect(modelFetch(`${server.url}/slow`, { method: 'POST', signal: AbortSignal.abort(new Error('already')) })).rejects.toThrow(
      'already',
    );

    const { APIConnectionTimeoutError, APIUserAbortError } = await import('openai');
    const provider = new OpenAICompatibleProvider({ apiKey: 'k', baseURL: `${server.url}/v1`, timeoutMs: 200, fetch: modelFetch });
    const timedOut = await provider.complete(request(definition), {}).catch((error: unknown) => error);
    expect(timedOut).toBeInstanceOf(APIConnectionTimeoutError);
    expect((timedOut as { retryable?: boolean }).retryable).toBe(true);
    const before = server.requests.length;
    const cancel = new AbortController();
    const cancelled = provider.complete(request(definition), { signal: cancel.signal }).catch((error: unknown) => error);
    // Cancelled once the request is on its way (before, the client stops it itself).
    await expect.poll(() => server.requests.length).toBe(before + 1);
    cancel.abort();
    expect(await cancelled).toBeInstanceOf(APIUserAbortError);
  });

  it('fails like fetch, with the system error as the cause, when nothing answers', async () => {
    const server = await serve(() => {});
    const url = server.url;
    await server.close();
    servers.length = 0;
    const error = await modelFetch(`${url}/v1/chat/completions`, { method: 'POST', body: '{}' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe('fetch failed');
    expect(((error as Error).cause as { code?: string }).code).toBe('ECONNREFUSED');

    const { APIConnectionError } = await import('openai');
    const provider = new OpenAICompatibleProvider({ apiKey: 'k', baseURL: `${url}/v1`, fetch: modelFetch });
    const failed = await provider.complete(request(definition), {}).catch((caught: unknown) => caught);
    expect(failed).toBeInstanceOf(APIConnectionError);
    expect((failed as { retryable?: boolean }).retryable).toBe(true);
  });

  it('sends a request again, once, on a new connection when a kept-alive one was dropped before any answer', async () => {
    const served = new WeakMap<Socket, number>();
    const server = await serve((req, res, socket) => {
      const count = (served.get(socket) ?? 0) + 1;
      served.set(socket, count);
      // A server that closes its idle connections: the second request on one finds it gone.
      if (count > 1) socket.destroy();
      else json(res, req);
    });
    const provider = new OpenAICompatibleProvider({ apiKey: 'k', baseURL: `${server.url}/v1`, fetch: modelFetch });
    expect((await provider.complete(request(definition), {})).text).toBe('ok');
    expect((await provider.complete(request(definition), {})).text).toBe('ok');
    expect(server.requests).toHaveLength(3);
    expect(server.connections).toHaveLength(2);

    // A new connection dropped the same way is not sent again: that is the server failing.
    const dropping = await serve((_req, _res, socket) => socket.destroy());
    const error = await modelFetch(`${dropping.url}/v1/chat/completions`, { method: 'POST', body: '{}' }).catch(
      (caught: unknown) => caught,
    );
    expect((error as Error).message).toBe('fetch failed');
    expect(dropping.requests).toHaveLength(1);
  });

  it('does not send a request again when the server dropped it while at work (it may have acted on it)', async () => {
    const served = new WeakMap<Socket, number>();
    const server = await serve((req, res, socket) => {
      const count = (served.get(socket) ?? 0) + 1;
      served.set(socket, count);
      if (count > 1) setTimeout(() => socket.destroy(), 1_300);
      else json(res, req);
    });
    const provider = new OpenAICompatibleProvider({ apiKey: 'k', baseURL: `${server.url}/v1`, fetch: modelFetch });
    expect((await provider.complete(request(definition), {})).text).toBe('ok');
    const { APIConnectionError } = await import('openai');
    expect(await provider.complete(request(definition), {}).catch((error: unknown) => error)).toBeInstanceOf(APIConnectionError);
    expect(server.requests).toHaveLength(2);
  });

  it('answers a status line with a control character, as fetch does, without its text', async () => {
    const raw = createNetServer((socket) => {
      socket.once('data', () =>
        socket.end('HTTP/1.1 200 O\x01K\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}'),
      );
    });
    await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = raw.address() as AddressInfo;
      const response = await modelFetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: '{}' });
      expect([response.status, response.statusText, await response.json()]).toEqual([200, '', {}]);
    } finally {
      await new Promise((resolve) => raw.close(resolve));
    }
  });
});
