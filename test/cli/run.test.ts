/**
 * `agentport run`, as users run it: the built CLI in a child process against
 * the scripted model (OPENAI_BASE_URL), on an agents folder written to a temp
 * folder. The live view's drawing is checked on a fake terminal.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createView } from '../../src/cli/run/view.js';
import { FileStore } from '../../src/store/fileStore.js';
import { runCli } from '../support/cli.js';
import { FakeModelServer } from '../support/fakeModelServer.js';
import { tempDir } from '../support/mcpClients.js';
import { CLI } from '../support/paths.js';

const FILES: Record<string, string> = {
  'models/main.ts':
    "import { defineModel } from 'agentport-mcp';\nexport default defineModel({ name: 'main', provider: 'openai', model: 'test-model' });\n",
  'tools/add_numbers.ts': `import { defineTool } from 'agentport-mcp';
import { z } from 'zod';
export default defineTool({
  description: 'Add two numbers.',
  args: z.object({ a: z.number(), b: z.number() }),
  execute: async (_state, args) => ({ status: 'success', result: String(args.a + args.b) }),
});
`,
  'prompts/counter.ts': `import { definePrompt } from 'agentport-mcp';
import { z } from 'zod';
export default definePrompt({
  name: 'counter',
  toolDescription: 'Counts with a tool.',
  model: 'main',
  prompt: 'You count.',
  tools: ['add_numbers'],
  exposeAsTool: true,
  requiredSchema: z.object({
    count: z.number().int().describe('How many'),
    loud: z.boolean().optional(),
    tags: z.array(z.string()).optional(),
    mode: z.enum(['fast', 'slow']).default('fast'),
  }),
});
`,
  'prompts/chat.ts': `import { definePrompt } from 'agentport-mcp';
export default definePrompt({ name: 'chat', toolDescription: 'Chats.', model: 'main', prompt: 'You chat.', includeChat: true, exposeAsTool: true });
`,
  'prompts/hidden.ts': `import { definePrompt } from 'agentport-mcp';
export default definePrompt({ name: 'hidden', toolDescription: 'Not exposed.', model: 'main', prompt: 'You hide.' });
`,
  'prompts/explain.prompty': `---
name: explain
description: Explain a term.
model: main
exposeAsTool: true
inputs:
  term:
    type: string
  audience:
    type: string
    default: a beginner
sample:
  term: MCP
---
system:
You explain terms for {{audience}}.

user:
Explain {{term}}.
`,
};

let agentsDir: string;
const model = new FakeModelServer();
let env: Record<string, string>;

beforeAll(async () => {
  agentsDir = path.join(tempDir('agentport-run-'), 'agents');
  for (const [file, content] of Object.entries(FILES)) {
    mkdirSync(path.dirname(path.join(agentsDir, file)), { recursive: true });
    writeFileSync(path.join(agentsDir, file), content);
  }
  await model.start();
  env = { OPENAI_API_KEY: 'test-key', OPENAI_BASE_URL: model.baseURL };
});

afterAll(() => model.stop());

beforeEach(() => {
  model.requests.length = 0;
  model.unexpected.length = 0;
});

const run = (args: string[], extraEnv: Record<string, string> = {}) =>
  runCli(['run', ...args, '--dir', agentsDir], { env: { ...env, ...extraEnv } });

describe('agentport run', () => {
  it('--json prints one object with the thread, answer, steps, tool calls and usage', async () => {
    model.reply({ toolCalls: [{ id: 'call_1', name: 'add_numbers', arguments: { a: 2, b: 3 } }] }, { text: 'The sum is 5.' });
    const result = await run(['counter', '--input', 'count=3', '-i', 'loud=true', '-i', 'tags=["a","b"]', '--json']);
    expect(result.stderr).not.toContain('error');
    expect(result.code).toBe(0);
    const output = JSON.parse(result.stdout) as { thread_id: string };
    expect(result.stdout.trim().split('\n')).toHaveLength(1);
    expect(output.thread_id).toMatch(/\S/);
    expect(output).toEqual({
      thread_id: output.thread_id,
      response: 'The sum is 5.',
      steps: 2,
      tool_calls: [{ id: 'call_1', name: 'add_numbers', arguments: '{"a":2,"b":3}', status: 'success', result: '5' }],
      usage: { modelCalls: 2, inputTokens: 20, outputTokens: 10, cachedTokens: 0, unpricedCalls: 2 },
    });
    // The inputs were typed by the schema (the default applied) before they reached the model.
    const user = model.requests[0]!.body.messages.find((m) => m.role === 'user');
    expect(JSON.parse(String(user?.content))).toEqual({ count: 3, loud: true, tags: ['a', 'b'], mode: 'fast' });
    // Progress went to stderr, one plain line per event with the elapsed seconds.
    expect(result.stderr).toMatch(/^\[\d+\.\ds\] counter: step 1, calling the model$/m);
    expect(result.stderr).toMatch(/^\[\d+\.\ds\] counter: running add_numbers$/m);
    expect(result.stderr).toMatch(/^\[\d+\.\ds\] counter: step 2, calling the model$/m);
    expect(result.stderr).not.toContain('\x1b[');
  });

  it('prints the answer on stdout and the progress and a summary on stderr without --json', async () => {
    model.reply({ text: 'Hello there.' });
    const result = await run(['chat', '-i', 'message=hi']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('Hello there.\n');
    expect(result.stderr).toMatch(/^\[\d+\.\ds\] chat: step 1, calling the model$/m);
    expect(result.stderr).toMatch(/^thread \S+ · 1 step · 0 tool calls · 10 tokens in, 5 out · \d+\.\ds$/m);
  });

  it('continues a thread with --thread', async () => {
    const dataDir = tempDir('agentport-run-data-');
    model.reply({ text: 'Nice to meet you, Ada.' }, { text: 'Your name is Ada.' });
    const first = await run(['chat', '-i', 'message=My name is Ada.', '--json', '--data-dir', dataDir]);
    expect(first.code).toBe(0);
    const { thread_id } = JSON.parse(first.stdout) as { thread_id: string };
    const second = await run(['chat', '-i', 'message=What is my name?', '--thread', thread_id, '--json', '--data-dir', dataDir]);
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ thread_id, response: 'Your name is Ada.', steps: 1 });
    const sent = model.requests[1]!.body.messages.map((m) => [m.role, m.content]);
    expect(sent).toEqual([
      ['system', 'You chat.'],
      ['user', 'My name is Ada.'],
      ['assistant', 'Nice to meet you, Ada.'],
      ['user', 'What is my name?'],
    ]);
  });

  it('refuses a thread that does not exist', async () => {
    const result = await run(['chat', '-i', 'message=hi', '--thread', 'nope']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('agentport: THREAD_NOT_FOUND: thread_id "nope" does not exist');
    expect(model.requests).toHaveLength(0);
  });

  it('runs a Prompty prompt with its sample values as defaults', async () => {
    model.reply({ text: 'MCP connects hosts to tools.' });
    const result = await run(['explain', '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ response: 'MCP connects hosts to tools.', steps: 1, tool_calls: [] });
    const sent = model.requests[0]!.body.messages.map((m) => [m.role, m.content]);
    expect(sent).toEqual([
      ['system', 'You explain terms for a beginner.'],
      ['user', 'Explain MCP.'],
    ]);
  });

  it('lets --input and --input-json override sample values', async () => {
    model.reply({ text: 'ok' });
    const result = await run(['explain', '--input-json', '{"term":"JSON-RPC","audience":"experts"}', '-i', 'term=OAuth', '--json']);
    expect(result.code).toBe(0);
    expect(model.requests[0]!.body.messages.map((m) => m.content)).toEqual(['You explain terms for experts.', 'Explain OAuth.']);
  });

  it.each([
    [['count=abc'], 'agentport: --input count: expected an integer, got "abc"\n'],
    [['count=1.5'], 'agentport: --input count: expected an integer, got "1.5"\n'],
    [['count=1', 'loud=maybe'], 'agentport: --input loud: expected true or false, got "maybe"\n'],
    [['count=1', 'tags=[oops'], /^agentport: --input tags: expected JSON \(a JSON array\), got "\[oops" \(.+\)\n$/],
    [['count=1', 'mode=medium'], 'agentport: --input mode: expected one of "fast", "slow", got "medium"\n'],
    [
      ['cont=1'],
      'agentport: --input cont: "counter" has no input named "cont" (did you mean "count"?); its inputs: count, loud, tags, mode\n',
    ],
    [['count'], 'agentport: --input expects name=value, got "count" (inputs of "counter": count, loud, tags, mode)\n'],
    [['loud=true'], 'agentport: "counter" needs input count: pass --input count=...\n'],
  ])('refuses bad inputs %j, naming the input', async (inputs, expected) => {
    const result = await run(['counter', ...inputs.flatMap((i) => ['-i', i])]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    if (typeof expected === 'string') expect(result.stderr).toBe(expected);
    else expect(result.stderr).toMatch(expected);
    expect(model.requests).toHaveLength(0);
  });

  it('refuses --input-json that is not an object', async () => {
    const result = await run(['counter', '--input-json', '[1]']);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('agentport: --input-json must be a JSON object of input names to values\n');
  });

  it('refuses an unknown prompt, listing the exposed ones', async () => {
    const typo = await run(['countr']);
    expect(typo.code).toBe(1);
    expect(typo.stderr).toBe(
      `agentport: no prompt or agent named "countr" in ${agentsDir} (did you mean "counter"?); exposed: chat, counter, explain\n`,
    );
    const unknown = await run(['zzz']);
    expect(unknown.stderr).toBe(`agentport: no prompt or agent named "zzz" in ${agentsDir}; exposed: chat, counter, explain\n`);
  });

  it('runs a prompt that is not exposed as a tool', async () => {
    model.reply({ text: 'hidden answer' });
    const result = await run(['hidden', '-i', 'message=hi']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('hidden answer\n');
  });

  it('exits 1 with the code and message when the run ends as an error', async () => {
    model.reply({ toolCalls: [{ id: 'call_1', name: 'add_numbers', arguments: { a: 1, b: 1 } }] });
    const result = await run(['counter', '-i', 'count=1', '--max-steps', '1', '--json']);
    expect(result.code).toBe(1);
    const output = JSON.parse(result.stdout) as { error: { code: string; message: string } };
    expect(output.error.code).toBe('STEP_LIMIT');
    expect(result.stderr).toContain(`agentport: the run ended with an error: STEP_LIMIT: ${output.error.message}\n`);
  });

  it('exits 1 when the model cannot be reached, naming the code', async () => {
    const result = await run(['chat', '-i', 'message=hi'], { OPENAI_API_KEY: '' });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/agentport: (the run ended with an error: )?MODEL_CONFIG: /);
  });

  it('cancels the run on Ctrl-C and exits 130', async () => {
    model.reply({ text: 'too late', delayMs: 20_000 });
    const child = spawn(process.execPath, [CLI, 'run', 'chat', '-i', 'message=hi', '--dir', agentsDir], {
      env: { ...process.env, ...env, AGENTPORT_DATA_DIR: tempDir() },
    });
    let stderr = '';
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const sent = new Promise<void>((resolve) =>
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes('calling the model')) resolve();
      }),
    );
    await sent;
    // The model has the request, so the delayed reply is not left for the next test.
    await expect.poll(() => model.requests.length, { timeout: 10_000 }).toBe(1);
    const started = Date.now();
    child.kill('SIGINT');
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    expect(code).toBe(130);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(stdout).toBe('');
    expect(stderr).toContain('cancelling (Ctrl-C again to quit at once)');
    expect(stderr).toContain('agentport: cancelled: CANCELLED:');
  });

  it.each([
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const)(
    '[RL-4] %s interrupts the run (repeats are ignored): recorded as interrupted, exit %i, and --thread continues it',
    async (signal, exitCode) => {
      const dataDir = tempDir();
      model.reply({ text: 'too late', delayMs: 20_000 });
      const child = spawn(process.execPath, [CLI, 'run', 'chat', '-i', 'message=hi', '--dir', agentsDir], {
        env: { ...process.env, ...env, AGENTPORT_DATA_DIR: dataDir },
      });
      let stderr = '';
      const sent = new Promise<void>((resolve) =>
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
          if (stderr.includes('calling the model')) resolve();
        }),
      );
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.on('exit', (code, signal) => resolve({ code, signal })),
      );
      await sent;
      // The model has the request (the reply it gets is the delayed one, not the next test's).
      await expect.poll(() => model.requests.length, { timeout: 10_000 }).toBe(1);
      child.kill(signal);
      // Sent again while the first is handled (a terminal closing can send SIGHUP more than once, a service manager
      // may repeat SIGTERM): not fatal. (Not until the process is gone: in its last moments, after everything is
      // recorded and printed, Node puts the signals' default actions back.)
      await new Promise((resolve) => setTimeout(resolve, 5));
      child.kill(signal);
      expect(await exited).toEqual({ code: exitCode, signal: null });
      expect(stderr).toContain(`interrupting (${signal})`);
      const threadId = /--thread (\S+) continues it/.exec(stderr)?.[1];
      expect(threadId).toBeDefined();
      const store = new FileStore({ dir: dataDir });
      expect((await store.getThread(threadId!))?.status).toBe('interrupted');

      model.reply({ text: 'picking up' });
      const continued = await runCli(['run', 'chat', '-i', 'message=go on', '--thread', threadId!, '--dir', agentsDir], {
        env: { ...env, AGENTPORT_DATA_DIR: dataDir },
      });
      expect(continued.code).toBe(0);
      expect(continued.stdout).toBe('picking up\n');
      const told = model.requests.at(-1)!.body.messages.map((m) => String(m.content));
      expect(told.some((content) => content.includes('the previous turn of this conversation was interrupted'))).toBe(true);
    },
    20_000,
  );
});

describe('the live view', () => {
  it('prints each line with the elapsed seconds and redraws a status line below them', () => {
    let written = '';
    let clock = 1000;
    const view = createView({ write: (text) => (written += text), columns: 40 }, { live: true, now: () => clock, tickMs: 60_000 });
    clock = 1400;
    view.line('main: step 1, calling the model');
    clock = 2600;
    view.line('main: running a_tool_with_a_rather_long_name_indeed');
    view.finish();
    const lines = written.split('\n');
    expect(lines[0]).toBe('\r\x1b[2K⠋ 0.0s  starting\r\x1b[2K\x1b[2m  0.4s\x1b[22m  main: step 1, calling the model');
    expect(lines[1]).toBe(
      '\r\x1b[2K⠙ 0.4s  main: step 1, calling the model\r\x1b[2K\x1b[2m  1.6s\x1b[22m  main: running a_tool_with_a_rather_long_name_indeed',
    );
    // The status line is cut to the terminal's width and cleared at the end.
    expect(lines[2]).toBe('\r\x1b[2K⠹ 1.6s  main: running a_tool_with_a_ra…\r\x1b[2K');
  });

  it('writes plain lines when not on a terminal', () => {
    let written = '';
    let clock = 0;
    const view = createView({ write: (text) => (written += text) }, { live: false, now: () => clock });
    clock = 1250;
    view.line('main: tool result\nsecond line');
    view.finish();
    expect(written).toBe('[1.3s] main: tool result ⏎ second line\n');
  });
});
