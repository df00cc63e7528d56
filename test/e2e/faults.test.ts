/**
 * Faults a server meets in the field, through the built CLI: oversized and
 * large messages on stdio, hosts written in short forms, user code printing
 * secrets on either transport.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resultText, useModelServer } from '../support/modelForSuite.js';
import { connectHttp, connectStdio, startHttpServer, tempDir } from '../support/mcpClients.js';
import { CLI, FIXTURES } from '../support/paths.js';

const NOISY = path.join(FIXTURES, 'agents', 'noisy');
const { model, env: modelEnv } = useModelServer();
const env = modelEnv;
const textOf = resultText;

/** A raw stdio session: JSON-RPC lines in, parsed lines out. */
function rawStdio(args: string[]) {
  const child = spawn(process.execPath, [CLI, 'serve', '--dir', NOISY, ...args], {
    env: { ...process.env, ...env(), AGENTPORT_DATA_DIR: tempDir() },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const messages = () =>
    out
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { id?: number; result?: unknown; error?: { message: string } });
  const answer = async (id: number) => {
    for (let i = 0; i < 400; i++) {
      const found = messages().find((m) => m.id === id);
      if (found) return found;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`no answer to ${id}; stderr:\n${err}`);
  };
  const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
  return { child, send, answer, stderr: () => err };
}

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
};

describe('stdio message sizes', () => {
  it('[RL-6] refuses a message over --max-message-mb with a JSON-RPC error and keeps serving', async () => {
    const s = rawStdio(['--max-message-mb', '1']);
    try {
      s.send(INIT);
      await s.answer(1);
      s.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      s.send({
        jsonrpc: '2.0',
        method: 'tools/call',
        params: { name: 'noisy', arguments: { message: 'x'.repeat(2 * 1024 * 1024) } },
        id: 2,
      });
      const refused = await s.answer(2);
      expect(refused.error?.message).toBe('message of 2.0 MiB refused: the limit is 1 MiB (--max-message-mb)');
      s.send({ jsonrpc: '2.0', id: 3, method: 'tools/list' });
      expect(((await s.answer(3)).result as { tools: unknown[] }).tools.length).toBeGreaterThan(0);
      expect(s.child.exitCode).toBeNull();
    } finally {
      s.child.kill();
    }
  });

  it('[RL-6] accepts 1 MB and 20 MB arguments under the default limit', async () => {
    const { client } = await connectStdio('legacy', { agentsDir: NOISY, env: env() });
    try {
      for (const size of [1, 20]) {
        model.reply({ text: `got ${size}` });
        const result = await client.callTool({ name: 'noisy', arguments: { message: 'y'.repeat(size * 1024 * 1024) } });
        expect(textOf(result)).toBe(`got ${size}`);
        expect(String(model.requests.at(-1)!.body.messages.at(-1)!.content)).toHaveLength(size * 1024 * 1024);
      }
    } finally {
      await client.close();
    }
  }, 30_000);
});

describe('stdio host gone', () => {
  it('[RL-6] stops when its output fails (the host stopped reading), though stdin stays open', async () => {
    const s = rawStdio([]);
    const exited = new Promise<number | null>((resolve) => s.child.once('exit', (code) => resolve(code)));
    try {
      s.send(INIT);
      await s.answer(1);
      // The host closes its end of stdout but keeps stdin open: the next answer cannot be written.
      s.child.stdout.destroy();
      s.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
      const code = await Promise.race([exited, new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), 10_000))]);
      expect(code).not.toBe('running');
    } finally {
      s.child.kill();
    }
  });
});

describe('HTTP load', () => {
  it('[RL-6] answers 200 concurrent calls, each in its own thread, none lost', async () => {
    const server = await startHttpServer({ agentsDir: NOISY, env: env() });
    try {
      const client = await connectHttp('modern', server.url);
      for (let i = 0; i < 200; i++) model.reply({ text: 'ok' });
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, i) => client.callTool({ name: 'noisy', arguments: { message: `call ${i}` } })),
      );
      expect(results.every((r) => !r.isError && textOf(r) === 'ok')).toBe(true);
      expect(new Set(results.map((r) => (r.structuredContent as { thread_id: string }).thread_id)).size).toBe(200);
      await client.close();
    } finally {
      await server.stop();
    }
  }, 60_000);
});

describe('HTTP hosts', () => {
  it('[RL-6] serves on --host 127.1 (the short form of 127.0.0.1)', async () => {
    const server = await startHttpServer({ agentsDir: NOISY, env: env(), host: '127.1' });
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      const client = await connectHttp('legacy', server.url);
      expect((await client.listTools()).tools.length).toBeGreaterThan(0);
      await client.close();
    } finally {
      await server.stop();
    }
  });
});

describe('secrets printed by user code', () => {
  const secret = 'sk-p/r+o=c ess~98765';
  const check = (stderr: string) => {
    expect(stderr).toContain('console.log token=[redacted secret]');
    expect(stderr).toContain('console.warn url=https://api.example/?t=[redacted secret]');
    expect(stderr).not.toContain(secret);
    expect(stderr).not.toContain(encodeURIComponent(secret));
  };

  it('[RL-7] redacts console and stdout output of a tool on stdio, keeping stdout for JSON-RPC', async () => {
    const { client, stderr } = await connectStdio('legacy', { agentsDir: NOISY, env: env() });
    try {
      model.reply({ toolCalls: [{ name: 'prints_secret', arguments: {} }] }, { text: 'printed it' });
      const result = await client.callTool({
        name: 'printer',
        arguments: { message: 'go' },
        _meta: { 'agentport/variables': { API_TOKEN: secret } },
      });
      expect(textOf(result)).toBe('printed it');
      await expect.poll(() => stderr().includes('stdout token=')).toBe(true);
      check(stderr());
      expect(stderr()).toContain('stdout token=[redacted secret]');
    } finally {
      await client.close();
    }
  });

  it('[RL-7] redacts a declared secret that a definition file prints while the folder loads', async () => {
    const { client, stderr } = await connectStdio('legacy', { agentsDir: NOISY, env: { ...env(), API_TOKEN: secret } });
    try {
      await expect.poll(() => stderr().includes('load_time sees')).toBe(true);
      expect(stderr()).toContain('load_time sees API_TOKEN=[redacted secret]');
      expect(stderr()).not.toContain(secret);
    } finally {
      await client.close();
    }
  });

  it('[RL-7] redacts console output of a tool over HTTP', async () => {
    const server = await startHttpServer({ agentsDir: NOISY, env: env() });
    try {
      const client = await connectHttp('modern', server.url);
      model.reply({ toolCalls: [{ name: 'prints_secret', arguments: {} }] }, { text: 'printed it' });
      await client.callTool({ name: 'printer', arguments: { message: 'go' }, _meta: { 'agentport/variables': { API_TOKEN: secret } } });
      await expect.poll(() => server.stderr().includes('console.warn')).toBe(true);
      check(server.stderr());
      await client.close();
    } finally {
      await server.stop();
    }
  });
});
