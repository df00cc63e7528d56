/**
 * The HTTP transport's guards: loopback by default, Host and Origin checked
 * (403), a bearer token required when bound to anything but loopback (401),
 * and /healthz.
 */
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectHttp, startHttpServer, tempDir, type HttpServerProcess } from '../support/mcpClients.js';
import { CLI, EXAMPLE_AGENTS } from '../support/paths.js';

const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

function post(url: string, headers: Record<string, string>) {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: initialize,
  });
}

describe('HTTP on loopback', () => {
  let server: HttpServerProcess;
  beforeAll(async () => {
    server = await startHttpServer({ agentsDir: EXAMPLE_AGENTS });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('[MC-3] binds 127.0.0.1 by default', async () => {
    const child = spawn(process.execPath, [CLI, 'serve', '--http', '--port', '0', '--dir', EXAMPLE_AGENTS], {
      env: { ...process.env, AGENTPORT_DATA_DIR: tempDir() },
    });
    let stderr = '';
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listening line:\n${stderr}`)), 20_000);
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        const match = /at (http:\/\/\S+\/mcp)/.exec(stderr);
        if (match?.[1]) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      });
    });
    try {
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      // The server reports the loopback address it bound, and answers there.
      const port = new URL(url).port;
      const health = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(health.status).toBe(200);
    } finally {
      child.kill();
      await exited;
    }
  });

  it('[MC-3] rejects a foreign Origin with 403', async () => {
    const response = await post(server.url, { origin: 'https://evil.example' });
    expect(response.status).toBe(403);
  });

  it('[MC-3] rejects a foreign Host header with 403', async () => {
    // fetch() does not let a caller set Host, so send the request by hand.
    const url = new URL(server.url);
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          headers: { host: `evil.example:${url.port}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode);
        },
      );
      req.on('error', reject);
      req.end(initialize);
    });
    expect(status).toBe(403);
  });

  it('[MC-3] accepts a localhost Origin and serves /healthz', async () => {
    const ok = await post(server.url, { origin: 'http://localhost:6274' });
    expect(ok.status).toBe(200);
    const health = await fetch(new URL('/healthz', server.url));
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok', name: 'agentport', tools: 8 });
  });
});

describe('HTTP on a non-loopback address', () => {
  it('[MC-3] refuses to start without AGENTPORT_TOKEN', async () => {
    const child = spawn(process.execPath, [CLI, 'serve', '--http', '--host', '0.0.0.0', '--port', '0', '--dir', EXAMPLE_AGENTS], {
      env: { ...process.env, AGENTPORT_DATA_DIR: tempDir(), AGENTPORT_TOKEN: '' },
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(stderr).toContain('without a bearer token: set AGENTPORT_TOKEN');
  });

  it('[MC-3] requires the bearer token (401 without it) and serves MCP with it', async () => {
    const server = await startHttpServer({ agentsDir: EXAMPLE_AGENTS, host: '0.0.0.0', env: { AGENTPORT_TOKEN: 's3cret-token' } });
    try {
      const url = server.url.replace('0.0.0.0', '127.0.0.1');
      expect((await post(url, {})).status).toBe(401);
      expect((await post(url, { authorization: 'Bearer wrong' })).status).toBe(401);
      const client = await connectHttp('legacy', url, { authorization: 'Bearer s3cret-token' });
      expect((await client.listTools()).tools).toHaveLength(11);
      await client.close();
    } finally {
      await server.stop();
    }
  });
});
