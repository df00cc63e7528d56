/**
 * Streamable HTTP transport (`--http`): `/mcp` for MCP (2025-11-25 clients
 * through the stateless legacy path, 2026-07-28 clients natively) and
 * `/healthz`. Loopback by default; Host and Origin are checked against the
 * bound address (403 otherwise) and a bearer token is required whenever the
 * server listens on anything but loopback.
 */
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import { hostHeaderValidation, originValidation, toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, localhostAllowedHostnames, localhostAllowedOrigins } from '@modelcontextprotocol/server';
import type { AgentportServer } from './createServer.js';
import { log } from '../log.js';
import { VERSION } from './version.js';
import { DEFAULT_HOST, DEFAULT_PORT } from './httpDefaults.js';

export interface HttpOptions {
  host?: string;
  port?: number;
  /** Required when `host` is not a loopback address. */
  token?: string;
  /** Extra hostnames accepted in Host/Origin headers (e.g. a reverse proxy's name). */
  allowedHosts?: string[];
}

export interface RunningHttpServer {
  url: string;
  server: HttpServer;
  close(): Promise<void>;
}


export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

export async function startHttp(agentport: AgentportServer, options: HttpOptions = {}): Promise<RunningHttpServer> {
  const host = options.host ?? DEFAULT_HOST;
  const port = options.port ?? DEFAULT_PORT;
  const loopback = isLoopback(host);
  if (!loopback && !options.token) {
    throw new Error(`refusing to listen on ${host} without a bearer token: set AGENTPORT_TOKEN`);
  }
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
  const mcp = toNodeHandler(createMcpHandler(agentport.factory, { onerror: (error) => log.error(error.message) }));

  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      log.error(`HTTP request failed: ${error instanceof Error ? error.message : String(error)}`);
      if (!res.headersSent) res.writeHead(500).end();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!checkHost(req, res) || !checkOrigin(req, res)) return;
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz' && req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'ok', name: 'agentport', version: VERSION, tools: agentport.tools.length }));
      return;
    }
    if (path !== '/mcp') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'not found' }));
      return;
    }
    if (options.token && !bearerMatches(req.headers.authorization, options.token)) {
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' });
      res.end(JSON.stringify({ error: 'missing or invalid bearer token' }));
      return;
    }
    await mcp(req, res);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  const urlHost = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return {
    url: `http://${urlHost}:${actualPort}/mcp`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function bearerMatches(header: string | undefined, token: string): boolean {
  const match = /^Bearer\s+(.+)$/i.exec(header ?? '');
  if (!match?.[1]) return false;
  const given = Buffer.from(match[1]);
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
