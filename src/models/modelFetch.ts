/**
 * The `fetch` the built-in provider hands the `openai` client (and upstream/transport.ts the MCP
 * client of a server over HTTP): one request over node:http or node:https on a kept-alive
 * connection, answered with a standard `Response`.
 *
 * Node's own fetch builds WHATWG streams, a Request, Headers and abort plumbing around every
 * request: a model call through it costs about 100 µs more CPU than this way (docs/benchmarks.md,
 * "The model request"), more than the whole one-step run around it.
 *
 * Only what a model call sends takes this path. Anything else goes to `globalThis.fetch`, as the
 * client would have done without it: a `Request` as input, a URL that is not http(s), a body other
 * than text or bytes, and a redirect (fetch follows it; the request is sent again through fetch).
 * A response that streams (`text/event-stream`) is handed over as it arrives; any other is read
 * whole, then decoded (gzip, deflate, br) as fetch would.
 *
 * A connection the server closed while it sat idle can fail the next request on it at once: that
 * request is sent once more on a new connection (see STALE_CONNECTION_MS). The client's timeout
 * covers reading the answer too (fetch's ends once the headers are in).
 */
import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { ModelTransport } from './openaiProvider.js';

/** How long an idle connection is kept (undici keeps them 4 s too), unless the server's Keep-Alive hint is shorter. */
const IDLE_MS = 4_000;

const agents = {
  'http:': new http.Agent({ keepAlive: true, timeout: IDLE_MS }),
  'https:': new https.Agent({ keepAlive: true, timeout: IDLE_MS }),
};

/** Statuses whose response has no body, whatever the server sends. */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);
const REDIRECT = new Set([301, 302, 303, 307, 308]);

const inflate = promisify(zlib.inflate);
const inflateRaw = promisify(zlib.inflateRaw);
const decoders: Record<string, (input: Buffer) => Promise<Buffer>> = {
  gzip: promisify(zlib.gunzip),
  'x-gzip': promisify(zlib.gunzip),
  br: promisify(zlib.brotliDecompress),
  // Servers send deflate both zlib-wrapped (as the standard says) and raw; fetch accepts both.
  deflate: (input) => inflate(input).catch(() => inflateRaw(input)),
};

/** The fields of a fetch `init` this path reads. */
type Init = NonNullable<Parameters<typeof fetch>[1]>;

/** Where undici (Node's fetch) keeps the dispatcher every fetch goes through. */
const GLOBAL_DISPATCHER = Symbol.for('undici.globalDispatcher.1');

/**
 * Whether model calls may take this path rather than `globalThis.fetch`: not when fetch has been
 * replaced (a tracing or logging wrapper, a mock) or given a dispatcher of someone else's (undici's
 * `setGlobalDispatcher`: a proxy, a mock), which were meant to apply to model calls too. Node's own
 * fetch is the one whose source loads its bundled undici; Node's own dispatcher is an undici `Agent`
 * (a plain `Agent` someone installed is not told apart from it).
 */
export function modelFetchUsable(): boolean {
  const nodesFetch =
    typeof globalThis.fetch === 'function' && Function.prototype.toString.call(globalThis.fetch).includes('internal/deps/undici');
  const dispatcher = (globalThis as Record<symbol, unknown>)[GLOBAL_DISPATCHER];
  return nodesFetch && (dispatcher === undefined || (dispatcher as object).constructor?.name === 'Agent');
}

/** The fetch to give a client whose requests go by `transport`: this one, unless fetch is to be used, or must be. */
export function modelFetchFor(transport: ModelTransport): typeof fetch | undefined {
  return transport === 'http' && modelFetchUsable() ? modelFetch : undefined;
}

/** See the module comment. Same contract as `fetch`. */
export async function modelFetch(input: Parameters<typeof fetch>[0], init: Init = {}): Promise<Response> {
  const url = typeof input === 'string' ? new URL(input) : input instanceof URL ? input : undefined;
  const body = init.body;
  const plainBody = body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array;
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || !plainBody) return globalThis.fetch(input, init);
  const signal = init.signal ?? undefined;
  const headers = headerObject(init.headers);
  headers['accept-encoding'] ??= 'gzip, deflate';
  if (body !== undefined && body !== null) headers['content-length'] ??= String(Buffer.byteLength(body));
  const request = { url, method: (init.method ?? 'GET').toUpperCase(), headers, body: body ?? undefined, signal };
  const response = (await send(request, true)) ?? (await send(request, false));
  return response === REDIRECTED ? globalThis.fetch(input, init) : response!;
}

/** What {@link send} answers for a redirect: fetch follows it. */
const REDIRECTED = Symbol('redirected');

/**
 * How soon after a request on a kept-alive connection a reset means the server had closed that
 * connection while it sat idle (it answers at once, within a round trip). A later one is the
 * server failing while at work: not sent again here, since the request may have been acted on
 * (callModel retries, with its backoff and within the model's `maxRetries`).
 */
const STALE_CONNECTION_MS = 1_000;

interface OutgoingRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body: string | Uint8Array | undefined;
  signal: AbortSignal | undefined;
}

/**
 * One request. Resolves undefined when a kept-alive connection turned out closed (the caller sends
 * it again, once), REDIRECTED for a redirect, otherwise the response.
 */
function send(
  { url, method, headers, body, signal }: OutgoingRequest,
  mayResend: boolean,
): Promise<Response | typeof REDIRECTED | undefined> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- as fetch: the signal's reason as it is
      reject(signal.reason);
      return;
    }
    const settle = (outcome: () => void) => {
      signal?.removeEventListener('abort', onAbort);
      outcome();
    };
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- as fetch: the signal's reason as it is
    const fail = (error: unknown) => settle(() => reject(error));
    const failed = (cause: unknown) => fail(new TypeError('fetch failed', { cause }));
    const onAbort = () => {
      request.destroy();
      fail(signal!.reason);
    };
    const sentAt = performance.now();
    const request = (url.protocol === 'https:' ? https : http).request(
      url,
      { method, headers, agent: agents[url.protocol as 'http:' | 'https:'] },
      (res) => {
        const status = res.statusCode ?? 0;
        if (REDIRECT.has(status) && res.headers.location !== undefined) {
          res.resume();
          settle(() => resolve(REDIRECTED));
          return;
        }
        if (status < 200 || status > 599) {
          res.resume();
          failed(new Error(`the server answered with status ${status}`));
          return;
        }
        const meta = { status, statusText: res.statusMessage ?? '', headers: responseHeaders(res.rawHeaders) };
        if (NULL_BODY.has(status) || method === 'HEAD') {
          res.resume();
          respond(null, meta).then((response) => settle(() => resolve(response)), failed);
          return;
        }
        const encodings = (res.headers['content-encoding'] ?? '')
          .toLowerCase()
          .split(',')
          .map((coding) => coding.trim())
          .filter((coding) => coding && coding !== 'identity');
        if (/^text\/event-stream\b/i.test(res.headers['content-type'] ?? '') && encodings.length === 0) {
          // Read as it arrives: an abort from here on ends the stream with the signal's reason.
          signal?.removeEventListener('abort', onAbort);
          const endStream = () => res.destroy(signal!.reason instanceof Error ? signal!.reason : undefined);
          signal?.addEventListener('abort', endStream, { once: true });
          res.once('close', () => signal?.removeEventListener('abort', endStream));
          respond(Readable.toWeb(res) as ReadableStream<Uint8Array>, meta).then(resolve, (error: unknown) => {
            res.destroy();
            failed(error);
          });
          return;
        }
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.once('error', failed);
        res.once('end', () => {
          decode(Buffer.concat(chunks), encodings)
            .then((bytes) => respond(bytes, meta))
            .then((response) => settle(() => resolve(response)), failed);
        });
      },
    );
    request.once('error', (error: Error & { code?: string }) => {
      if (signal?.aborted) {
        fail(signal.reason);
        return;
      }
      // The server had closed the kept-alive connection just as it was reused: it read nothing of this request.
      const stale =
        mayResend &&
        request.reusedSocket &&
        (error.code === 'ECONNRESET' || error.code === 'EPIPE') &&
        performance.now() - sentAt < STALE_CONNECTION_MS;
      if (stale) settle(() => resolve(undefined));
      else failed(error);
    });
    signal?.addEventListener('abort', onAbort, { once: true });
    request.end(body);
  });
}

/**
 * The Response: a status text `Response` refuses (a control character, which Node's parser lets
 * through and fetch keeps) is left out rather than failing the call.
 */
async function respond(
  body: ConstructorParameters<typeof Response>[0],
  meta: NonNullable<ConstructorParameters<typeof Response>[1]>,
): Promise<Response> {
  try {
    return new Response(body, meta);
  } catch {
    return new Response(body, { ...meta, statusText: '' });
  }
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
