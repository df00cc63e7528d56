/**
 * Starts agentport the way hosts do and connects the real MCP client to it:
 * over stdio (the built CLI as a child process) or over Streamable HTTP, in
 * either protocol era.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { CLI } from './paths.js';

export type Era = 'legacy' | 'modern';

const MODERN_VERSION = '2026-07-28';

export function newClient(era: Era): Client {
  return new Client(
    { name: 'agentport-tests', version: '1.0.0' },
    era === 'modern' ? { versionNegotiation: { mode: { pin: MODERN_VERSION } } } : {},
  );
}

export interface ServeEnv {
  agentsDir: string;
  env?: Record<string, string>;
  args?: string[];
  /** Data folder (threads, caches); a fresh temporary one by default. */
  dataDir?: string;
}

function childEnv(extra: Record<string, string> | undefined, dataDir: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    // Keep the child free of the developer's model settings: tests say what they want. The shared
    // transpile cache (vitest.config.ts) stays: it is keyed by content.
    if (value === undefined || key.startsWith('OPENAI_')) continue;
    if (!key.startsWith('AGENTPORT_') || key === 'AGENTPORT_CACHE_DIR') env[key] = value;
  }
  return { ...env, AGENTPORT_DATA_DIR: dataDir, ...extra };
}

export function tempDir(prefix = 'agentport-test-'): string {
  return mkdtempSync(path.join(os.tmpdir(), prefix));
}

export async function connectStdio(era: Era, options: ServeEnv): Promise<{ client: Client; stderr: () => string }> {
  let stderr = '';
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'serve', '--dir', options.agentsDir, ...(options.args ?? [])],
    env: childEnv(options.env, options.dataDir ?? tempDir()),
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = newClient(era);
  await client.connect(transport);
  return { client, stderr: () => stderr };
}

export interface HttpServerProcess {
  url: string;
  child: ChildProcess;
  stderr: () => string;
  stop(): Promise<void>;
}

/** Starts `agentport serve --http` on a free port and waits until it listens. */
export async function startHttpServer(options: ServeEnv & { host?: string }): Promise<HttpServerProcess> {
  const child = spawn(
    process.execPath,
    [CLI, 'serve', '--http', '--port', '0', '--host', options.host ?? '127.0.0.1', '--dir', options.agentsDir, ...(options.args ?? [])],
    { env: childEnv(options.env, tempDir()), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`HTTP server did not start:\n${stderr}`)), 20_000);
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const match = /at (http:\/\/\S+\/mcp)/.exec(stderr);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`HTTP server exited with ${code}:\n${stderr}`));
    });
  });
  return {
    url,
    child,
    stderr: () => stderr,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

export async function connectHttp(era: Era, url: string, headers?: Record<string, string>): Promise<Client> {
  const client = newClient(era);
  await client.connect(new StreamableHTTPClientTransport(new URL(url), headers ? { requestInit: { headers } } : {}));
  return client;
}
