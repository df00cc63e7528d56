/**
 * The `fetch` the built-in provider hands the `openai` client: one request over node:http or
 * node:https on a kept-alive connection, answered with a standard `Response`.
 *
 * Node's own fetch builds WHATWG streams, a Request, Headers and abort plumbing around every
 * request: a model call through it costs about 100 µs more CPU than this way (docs/benchmarks.md,
 * "The model request"), more than the whole one-step run around it.
 *
 * Only what a model call sends takes this path. Anything else goes to `globalThis.fetch`, as the
 * client would have done without us: a `Request` as input, a URL that is not http(s), a body other
 * than text or bytes, and a redirect (fetch follows it; the request is sent again through fetch).
 * A response that streams (`text/event-stream`) is handed over as it arrives; any other is read
 * whole, then decoded (gzip, deflate, br) as fetch would.
 *
 * A connection the server closed while it sat idle can fail the next request on it before any
 * answer: that request is sent once more on a new connection (the server never read it).
 */
import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { AgentportError } from '../errors.js';

/** How long an idle connection is kept (undici keeps them 4 s too), unless the server's Keep-Alive hint is shorter. */
const IDLE_MS = 4_000;

const agents = {
  'http:': new http.Agent({ keepAlive: true, timeout: IDLE_MS }),
  'https:': new https.Agent({ keepAlive: true, timeout: IDLE_MS }),
};

/** Statuses whose response has no body, whatever the server sends. */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);
const REDIRECT = new Set([301, 302, 303, 307, 308]);

const decoders: Record<string, (input: Buffer) => Promise<Buffer>> = {
  gzip: promisify(zlib.gunzip),
  'x-gzip': promisify(zlib.gunzip),
  br: promisify(zlib.brotliDecompress),
  // Servers send deflate both zlib-wrapped (as the standard says) and raw; fetch accepts both.
  deflate: (input) => promisify(zlib.inflate)(input).catch(() => promisify(zlib.inflateRaw)(input)),
};

/** The fields of a fetch `init` this path reads. */
type Init = NonNullable<Parameters<typeof fetch>[1]>;

/** Where undici (Node's fetch) keeps the dispatcher every fetch goes through. */
const GLOBAL_DISPATCHER = Symbol.for('undici.globalDispatcher.1');

/**
 * The dispatcher fetch had when this module loaded: Node's own, unless a preload installed another.
 * (Reading `Response` first makes Node load undici, which installs its own.)
 */
const dispatcherAtLoad: unknown = Response && (globalThis as Record<symbol, unknown>)[GLOBAL_DISPATCHER];

/** Whether fetch goes through a dispatcher someone installed (a proxy, a mock, other connection settings). */
function dispatcherInstalled(): boolean {
  const current = (globalThis as Record<symbol, unknown>)[GLOBAL_DISPATCHER];
  // Node's own is an undici Agent; a ProxyAgent, EnvHttpProxyAgent or MockAgent installed by a preload is not.
  return current !== dispatcherAtLoad || (current !== undefined && (current as object).constructor?.name !== 'Agent');
}

/**
 * Whether model calls should go through Node's fetch instead: when asked to
 * (`AGENTPORT_MODEL_TRANSPORT=fetch`), when the environment names a proxy, and when a dispatcher
 * has been installed for fetch (undici's `setGlobalDispatcher`): those apply to fetch, not to node:http.
 */
export function modelFetchFor(env: Readonly<Record<string, string | undefined>>): typeof fetch | undefined {
  const transport = env.AGENTPORT_MODEL_TRANSPORT;
  if (transport !== undefined && transport !== '' && transport !== 'http' && transport !== 'fetch') {
    throw new AgentportError('MODEL_CONFIG', `AGENTPORT_MODEL_TRANSPORT must be "http" or "fetch", not "${transport}"`, {
      variable: 'AGENTPORT_MODEL_TRANSPORT',
    });
  }
  if (transport === 'fetch') return undefined;
  const proxied = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'NODE_USE_ENV_PROXY'].some((name) => env[name]);
  return proxied || dispatcherInstalled() ? undefined : modelFetch;
}

/** See the module comment. Same contract as `fetch`. */
export async function modelFetch(input: Parameters<typeof fetch>[0], init: Init = {}): Promise<Response> {
  const url = typeof input === 'string' ? new URL(input) : input instanceof URL ? input : undefined;
  const body = init.body;
  const plainBody = body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array;
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || !plainBody) return globalThis.fetch(input, init);
  const signal = init.signal ?? undefined;
  signal?.throwIfAborted();
  const headers = headerObject(init.headers);
  headers['accept-encoding'] ??= 'gzip, deflate';
  if (body !== undefined && body !== null) headers['content-length'] ??= String(Buffer.byteLength(body));
  const method = (init.method ?? 'GET').toUpperCase();
  const response =
    (await send(url, method, headers, body ?? undefined, signal, true)) ??
    (await send(url, method, headers, body ?? undefined, signal, false));
  return response === REDIRECTED ? globalThis.fetch(input, init) : response!;
}

/** What {@link send} answers for a redirect: fetch follows it. */
const REDIRECTED = Symbol('redirected');

/**
 * One request. Resolves undefined when a kept-alive connection turned out closed before any answer
 * (the caller sends it again, once), REDIRECTED for a redirect, otherwise the response.
 */
function send(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | Uint8Array | undefined,
  signal: AbortSignal | undefined,
  mayResend: boolean,
): Promise<Response | typeof REDIRECTED | undefined> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const fail = (error: unknown) => {
      signal?.removeEventListener('abort', onAbort);
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- as fetch, with the signal's reason as it is
      reject(error);
    };
    const onAbort = () => {
      request.destroy();
      fail(signal!.reason);
    };
    const agent = agents[url.protocol as 'http:' | 'https:'];
    const request = (url.protocol === 'https:' ? https : http).request(url, { method, headers, agent }, (res) => {
      answered = true;
      const status = res.statusCode ?? 0;
      if (REDIRECT.has(status) && res.headers.location !== undefined) {
        res.resume();
        signal?.removeEventListener('abort', onAbort);
        resolve(REDIRECTED);
        return;
      }
      if (status < 200 || status > 599) {
        res.resume();
        fail(new TypeError('fetch failed', { cause: new Error(`the server answered with status ${status}`) }));
        return;
      }
      const init = { status, statusText: res.statusMessage ?? '', headers: responseHeaders(res.rawHeaders) };
      if (NULL_BODY.has(status) || method === 'HEAD') {
        res.resume();
        signal?.removeEventListener('abort', onAbort);
        resolve(new Response(null, init));
        return;
      }
      const encodings = (res.headers['content-encoding'] ?? '')
        .toLowerCase()
        .split(',')
        .map((coding) => coding.trim())
        .filter((coding) => coding && coding !== 'identity');
      if (/^text\/event-stream\b/i.test(res.headers['content-type'] ?? '') && encodings.length === 0) {
        // Read as it arrives; an abort from here on ends the stream with the signal's reason.
        signal?.removeEventListener('abort', onAbort);
        const stream = Readable.toWeb(res) as ReadableStream<Uint8Array>;
        signal?.addEventListener('abort', () => res.destroy(signal.reason instanceof Error ? signal.reason : undefined), { once: true });
        resolve(new Response(stream, init));
        return;
      }
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.once('error', (error) => fail(new TypeError('fetch failed', { cause: error })));
      res.once('end', () => {
        void decode(Buffer.concat(chunks), encodings).then(
          (bytes) => {
            signal?.removeEventListener('abort', onAbort);
            resolve(new Response(bytes, init));
          },
          (error: unknown) => fail(new TypeError('fetch failed', { cause: error })),
        );
      });
    });
    request.once('error', (error: Error & { code?: string }) => {
      if (signal?.aborted) return;
      // The server closed a connection kept for reuse just as it was reused: it never read this request.
      if (mayResend && !answered && request.reusedSocket && (error.code === 'ECONNRESET' || error.code === 'EPIPE')) {
        signal?.removeEventListener('abort', onAbort);
        resolve(undefined);
        return;
      }
      fail(new TypeError('fetch failed', { cause: error }));
    });
    signal?.addEventListener('abort', onAbort, { once: true });
    request.end(body);
  });
}

/** Applies the decodings a response names, last applied first; an unknown one leaves the bytes as they are. */
async function decode(bytes: Buffer, encodings: string[]): Promise<Buffer> {
  let out = bytes;
  for (let i = encodings.length - 1; i >= 0; i--) {
    const decoder = decoders[encodings[i]!];
    if (!decoder) return out;
    out = await decoder(out);
  }
  return out;
}

/** A fetch `headers` init (Headers, pairs or a record) as node:http takes it. */
function headerObject(init: Init['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  if (init === undefined) return out;
  const entries = init instanceof Headers || Array.isArray(init) ? init : Object.entries(init);
  for (const [name, raw] of entries) {
    const key = name.toLowerCase();
    const value = typeof raw === 'string' ? raw : raw.join(', ');
    // Repeated names are joined as Headers joins them.
    out[key] = out[key] === undefined ? value : `${out[key]}, ${value}`;
  }
  return out;
}

function responseHeaders(raw: string[]): Headers {
  const headers = new Headers();
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  return headers;
}
