/**
 * Streamable HTTP transport (`--http`): `/mcp` for MCP (2025-11-25 clients
 * through the stateless legacy path, 2026-07-28 clients natively) and
 * `/healthz`. Loopback by default; Host and Origin are checked against the
 * bound address (403 otherwise) and a bearer token is required whenever the
 * server listens on anything but loopback: the one static token
 * (`AGENTPORT_TOKEN`), or with `oauth` per-user access tokens (see auth/),
 * each request then served on behalf of its token's subject.
 */
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import { hostHeaderValidation, originValidation, toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, localhostAllowedHostnames, localhostAllowedOrigins, type AuthInfo } from '@modelcontextprotocol/server';
import type { AgentportServer } from './createServer.js';
import type { OAuthSettings } from './auth/settings.js';
import type { OAuthGate } from './auth/oauth.js';
import { asCaller } from '../runtime/run/owner.js';
import { errorInfo, errorMessage } from '../errors.js';
import { log } from '../log.js';
import { VERSION } from './version.js';
import { DEFAULT_HOST, DEFAULT_PORT } from './httpDefaults.js';

export interface HttpOptions {
  host?: string;
  port?: number;
  /** Required when `host` is not a loopback address (unless `oauth` is set). */
  token?: string;
  /** `--auth oauth`: per-user access tokens from this issuer instead of the static token. */
  oauth?: OAuthSettings;
  /** Extra hostnames accepted in Host/Origin headers (e.g. a reverse proxy's name). */
  allowedHosts?: string[];
}

export interface RunningHttpServer {
  url: string;
  server: HttpServer;
  close(): Promise<void>;
}

/** An IPv4 address in its usual form (`127.1` is `127.0.0.1`, as clients will send it in Host). */
function canonicalHost(host: string): string {
  if (host.includes(':') || host.startsWith('[')) return host;
  try {
    return new URL(`http://${host}`).hostname;
  } catch {
    return host;
  }
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

export async function startHttp(agentport: AgentportServer, options: HttpOptions = {}): Promise<RunningHttpServer> {
  const host = canonicalHost(options.host ?? DEFAULT_HOST);
  const port = options.port ?? DEFAULT_PORT;
  const loopback = isLoopback(host);
  if (!loopback && !options.token && !options.oauth) {
    throw new Error(`refusing to listen on ${host} without a bearer token: set AGENTPORT_TOKEN, or use --auth oauth`);
  }
  // Loaded only when used; created once the address (the default audience) is known.
  const oauthModule = options.oauth ? await import('./auth/oauth.js') : undefined;
  let gate: OAuthGate | undefined;
  const extra = options.allowedHosts ?? [];
  // A wildcard bind has no one name to expect: then only --allowed-host names
  // are checked, and the bearer token is what keeps strangers out.
  const wildcard = host === '0.0.0.0' || host === '::' || host === '[::]';
  // Host and Origin hostnames of IPv6 addresses come in brackets.
  const hostname = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  const allowedHosts = loopback ? [...localhostAllowedHostnames(), ...extra] : wildcard ? extra : [hostname, ...extra];
  const allowedOrigins = loopback ? [...localhostAllowedOrigins(), ...extra] : wildcard ? extra : [hostname, ...extra];
  const checkHost = allowedHosts.length ? hostHeaderValidation(allowedHosts) : () => true;
  const checkOrigin = originValidation(allowedOrigins);
  const mcp = toNodeHandler(
    createMcpHandler(agentport.factory, { onerror: (error) => log.error(error.message), bus: agentport.resourceBus }),
  );

  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      log.error(`HTTP request failed: ${error instanceof Error ? error.message : String(error)}`);
      if (!res.headersSent) res.writeHead(500).end();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!checkHost(req, res)) return;
    if (options.oauth && !gate) {
      // Between listening and knowing the address: nothing is served without its token check.
      res.writeHead(503, { 'retry-after': '1' }).end();
      return;
    }
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    // Public, and read by browser-based clients from their own origin.
    if (gate?.serveMetadata(path, req, res)) return;
    if (!checkOrigin(req, res)) return;
    if (path === '/healthz' && req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'ok', name: 'agentport', version: VERSION, tools: agentport.tools.length }));
      return;
    }
    const variables = VARIABLES_PATH.exec(path ?? '');
    if (path !== '/mcp' && !variables) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'not found' }));
      return;
    }
    let auth: AuthInfo | undefined;
    if (gate) {
      auth = await gate.authenticate(req, res);
      if (!auth) return;
    } else if (options.token && !bearerMatches(req.headers.authorization, options.token)) {
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' });
      res.end(JSON.stringify({ error: 'missing or invalid bearer token' }));
      return;
    }
    // Everything this request starts runs on behalf of the token's subject: the runtime checks ownership against it.
    const subject = auth && oauthModule ? oauthModule.subjectOf(auth) : undefined;
    if (!variables) {
      // The SDK hands `req.auth` to the server factory and handlers (ctx.http.authInfo).
      if (auth) (req as IncomingMessage & { auth?: AuthInfo }).auth = auth;
      await asCaller(subject, () => mcp(req, res));
      return;
    }
    let ids: [string, string];
    try {
      ids = [decodeURIComponent(variables[1]!), decodeURIComponent(variables[2]!)];
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'malformed escape in the path' }));
      return;
    }
    await asCaller(subject, () => variablesEndpoint(agentport, req, res, ...ids));
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  const urlHost = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  const url = `http://${urlHost}:${actualPort}/mcp`;
  if (oauthModule && options.oauth) {
    gate = oauthModule.createOAuthGate(options.oauth, url);
    if (!loopback && !options.oauth.audience) {
      log.warn(
        `OAuth: tokens must be issued for ${url} (their audience); behind a proxy or on a public name, set --oauth-audience to the URL clients use`,
      );
    }
  }
  return {
    url,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** `/threads/{thread_id}/variables/{request_id}`: a subagent's pending request for variables. */
const VARIABLES_PATH = /^\/threads\/([^/]+)\/variables\/([^/]+)$/;
const MAX_BODY_BYTES = 1024 * 1024;

/**
 * GET says what a deferred subagent needs (names, descriptions, secret or
 * text; never values); POST takes a JSON object of values, stores them with
 * the child thread and starts it.
 */
async function variablesEndpoint(
  agentport: AgentportServer,
  req: IncomingMessage,
  res: ServerResponse,
  threadId: string,
  requestId: string,
): Promise<void> {
  const send = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const runtime = await agentport.runtime();
  if (req.method === 'GET') {
    const request = await runtime.variableRequest(threadId, requestId);
    if (request) send(200, request);
    else send(404, { error: `no pending variables request ${requestId} on thread ${threadId}` });
    return;
  }
  if (req.method !== 'POST') {
    res.writeHead(405, { allow: 'GET, POST' }).end();
    return;
  }
  let body: string;
  try {
    body = await readBody(req);
  } catch (error) {
    send(413, { error: errorMessage(error) });
    return;
  }
  let values: unknown;
  try {
    values = JSON.parse(body);
  } catch (error) {
    send(400, { error: `the body must be a JSON object of values: ${errorMessage(error)}` });
    return;
  }
  if (typeof values !== 'object' || values === null || Array.isArray(values)) {
    send(400, { error: 'the body must be a JSON object of values, e.g. {"API_KEY": "..."}' });
    return;
  }
  try {
    const { reference } = await runtime.provideVariables(threadId, requestId, values as Record<string, unknown>);
    send(200, { status: 'started', reference });
  } catch (error) {
    const info = errorInfo(error);
    send(
      info.code === 'INVALID_ARGUMENTS' && !(await runtime.variableRequest(threadId, requestId))
        ? 404
        : info.code === 'INTERNAL'
          ? 500
          : 400,
      { error: info },
    );
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error('the body is larger than 1 MiB'));
        req.removeAllListeners('data');
        req.resume();
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function bearerMatches(header: string | undefined, token: string): boolean {
  const match = /^Bearer\s+(.+)$/i.exec(header ?? '');
  if (!match?.[1]) return false;
  const given = Buffer.from(match[1]);
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
