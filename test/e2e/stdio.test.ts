/**
 * stdio hygiene: a raw 2025-11-25 session piped through `agentport serve`
 * yields nothing but JSON-RPC lines on stdout, and the process exits when the
 * host closes stdin.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CLI, EXAMPLE_AGENTS, FIXTURES, EXAMPLE_TOOLS, RUN_TOOLS } from '../support/paths.js';
import { tempDir } from '../support/mcpClients.js';
import path from 'node:path';

function serve(agentsDir: string) {
  return spawn(process.execPath, [CLI, 'serve', '--dir', agentsDir], {
    env: { ...process.env, AGENTPORT_DATA_DIR: tempDir() },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

const rpc = (message: object) => `${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`;

describe('stdio', () => {
  it('[MC-2] writes only JSON-RPC to stdout and exits when stdin closes', async () => {
    const child = serve(EXAMPLE_AGENTS);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

    child.stdin.write(
      rpc({
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      }),
    );
    await waitFor(() => stdout.includes('"id":1'));
    child.stdin.write(rpc({ method: 'notifications/initialized' }));
    child.stdin.write(rpc({ id: 2, method: 'tools/list' }));
    await waitFor(() => stdout.includes('"id":2'));
    child.stdin.end();
    expect(await exited).toBe(0);

    const lines = stdout.split('\n').filter((line) => line.length > 0);
    expect(lines.length).toBe(2);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw JSON-RPC replies read field by field
    const messages = lines.map((line) => JSON.parse(line) as { jsonrpc: string; id: number; result: any });
    expect(messages.every((m) => m.jsonrpc === '2.0')).toBe(true);
    expect(messages[0]!.result.protocolVersion).toBe('2025-11-25');
    expect(messages[1]!.result.tools.map((t: { name: string }) => t.name)).toEqual([...EXAMPLE_TOOLS, ...RUN_TOOLS]);
    // The log line went to stderr instead.
    expect(stderr).toContain('serving 8 tool(s)');
  });

  it('refuses to start on load errors and lists them all on stderr, with nothing on stdout', async () => {
    const child = serve(path.join(FIXTURES, 'agents', 'load-errors'));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toContain('unknown model "gpt5"');
    expect(stderr).toContain('circular include: loop_a -> loop_b -> loop_a');
    expect(stderr).toContain('"empty_description" field toolDescription: toolDescription must not be empty');
    expect(stderr).toContain('"bad_choice" field toolChoice: toolChoice must be one of "auto", "none", "required", got string "sometimes"');
    expect(stderr).toContain('"unknown_refs" field tools[0]: unknown tool "lookup_ordr"');
    expect(stderr).toMatch(/not starting: 15 error\(s\)/);
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 15_000): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('stdio with badly behaved user code', () => {
  it('[MC-2] [MC-5] keeps stdout for JSON-RPC and keeps serving when tools print, leak rejections or throw in timers', async () => {
    const { FakeModelServer } = await import('../support/fakeModelServer.js');
    const { connectStdio } = await import('../support/mcpClients.js');
    const model = await new FakeModelServer().start();
    try {
      const { client, stderr } = await connectStdio('legacy', {
        agentsDir: path.join(FIXTURES, 'agents', 'noisy'),
        env: { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'k' },
      });
      model.reply({ toolCalls: [{ name: 'careless', arguments: {} }] }, { text: 'first' }, { text: 'second' });
      const first = await client.callTool({ name: 'noisy', arguments: { message: 'go' } });
      expect((first.content as Array<{ text: string }>)[0]!.text).toBe('first');
      // Let the tool's timer fire and its rejection surface before the next call.
      await waitFor(() => stderr().includes('unhandled rejection (kept serving)'));
      // Still alive after the unhandled rejection and the timer throw, and the JSON-RPC stream intact.
      const second = await client.callTool({ name: 'noisy', arguments: { message: 'again' } });
      expect((second.content as Array<{ text: string }>)[0]!.text).toBe('second');
      await waitFor(() => stderr().includes('uncaught exception (kept serving)'));
      expect(stderr()).toContain('loading the noisy model');
      expect(stderr()).toContain('careless tool says hi');
      expect(stderr()).toContain('unhandled rejection (kept serving): Error: nobody handles this');
      expect(stderr()).toContain('uncaught exception (kept serving): Error: thrown in a timer');

      // Child processes that would inherit stdout print to stderr instead.
      model.reply({ toolCalls: [{ name: 'spawns_children', arguments: {} }] }, { text: 'third' });
      const third = await client.callTool({ name: 'noisy', arguments: { message: 'children' } });
      expect((third.content as Array<{ text: string }>)[0]!.text).toBe('third');
      expect(model.requests.at(-1)?.body.messages.at(-1)).toMatchObject({ role: 'tool', content: 'children done' });
      for (const way of ['spawn', 'spawn-array', 'spawnSync', 'execSync', 'fork']) expect(stderr()).toContain(`child ${way} says hi`);
      expect(stderr()).toContain('child stdin is a pipe: false');
      await client.close();
    } finally {
      await model.stop();
    }
  });
});

describe('secrets in the server log', () => {
  it('[PR-16] redacts a secret from the log line of a rejection a tool left unhandled', async () => {
    const { FakeModelServer } = await import('../support/fakeModelServer.js');
    const { connectStdio } = await import('../support/mcpClients.js');
    const model = await new FakeModelServer().start();
    const secret = 'sk-process-level-98765';
    try {
      const { client, stderr } = await connectStdio('legacy', {
        agentsDir: path.join(FIXTURES, 'agents', 'noisy'),
        env: { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'k' },
      });
      model.reply({ toolCalls: [{ name: 'leaky_rejection', arguments: {} }] }, { text: 'done' });
      await client.callTool({
        name: 'noisy_secret',
        arguments: { message: 'go' },
        _meta: { 'agentport/variables': { API_TOKEN: secret } },
      });
      await waitFor(() => stderr().includes('backend refused token'));
      expect(stderr()).toContain('backend refused token [redacted secret]');
      expect(stderr()).not.toContain(secret);
      await client.close();
    } finally {
      await model.stop();
    }
  });
});
