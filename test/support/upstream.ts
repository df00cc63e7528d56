/**
 * Upstream MCP servers for tests: the fixture server of
 * test/fixtures/upstream/ over stdio (spawned by agentport from mcp.json)
 * or over Streamable HTTP (spawned here), and agents folders that use them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { FIXTURES } from './paths.js';
import { tempDir } from './mcpClients.js';
import { writeFiles } from './folders.js';

export const STDIO_UPSTREAM = path.join(FIXTURES, 'upstream', 'stdio.mjs');
const HTTP_UPSTREAM = path.join(FIXTURES, 'upstream', 'http.mjs');

export interface UpstreamEvent {
  pid: number;
  at: number;
  event: 'start' | 'list' | 'call' | 'cancelled' | 'unauthorized';
  tool?: string;
  cursor?: string | null;
  args?: Record<string, unknown>;
}

export function readEvents(file: string): UpstreamEvent[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as UpstreamEvent);
}

export async function waitFor<T>(check: () => T | undefined | false, timeoutMs = 10_000, what = 'a condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export interface HttpUpstream {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** The fixture server over Streamable HTTP, in its own process. */
export async function startHttpUpstream(env: Record<string, string>): Promise<HttpUpstream> {
  const child = spawn(process.execPath, [HTTP_UPSTREAM], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the HTTP upstream did not start:\n${stderr}`)), 15_000);
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening (\S+)/.exec(out);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the HTTP upstream exited with ${code}:\n${stderr}`));
    });
  });
  return {
    url,
    child,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** A stdio server entry of mcp.json running the fixture with these variables. */
export function stdioServer(env: Record<string, string>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { command: process.execPath, args: [STDIO_UPSTREAM], env, ...extra };
}

/**
 * An agents folder: a model `m`, the given prompt files (name -> source of
 * `definePrompt({...})` options), and mcp.json.
 */
export function upstreamAgents(options: { mcp: unknown; prompts: Record<string, string>; files?: Record<string, string> }): string {
  const dir = tempDir('agentport-upstream-');
  mkdirSync(path.join(dir, 'models'), { recursive: true });
  mkdirSync(path.join(dir, 'prompts'), { recursive: true });
  writeFileSync(
    path.join(dir, 'models', 'm.ts'),
    `import { defineModel } from 'agentport';\nexport default defineModel({ name: 'm', provider: 'openai', model: 'upstream-model', maxRetries: 0 });\n`,
  );
  for (const [name, body] of Object.entries(options.prompts)) {
    writeFileSync(
      path.join(dir, 'prompts', `${name}.ts`),
      `import { definePrompt } from 'agentport';\nexport default definePrompt({ name: ${JSON.stringify(name)}, model: 'm', exposeAsTool: true, ${body} });\n`,
    );
  }
  writeFiles(dir, options.files ?? {});
  writeFileSync(path.join(dir, 'mcp.json'), typeof options.mcp === 'string' ? options.mcp : JSON.stringify(options.mcp, null, 2));
  return dir;
}

/** A local port nothing listens on (it was free a moment ago): connections to it are refused. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
