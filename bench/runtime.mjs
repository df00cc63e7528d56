// Runtime overhead: one agentport step against a direct `openai` client call
// to the same scripted server (zero added latency), multi-step runs end to
// end, and the memory an idle stored thread costs.
import path from 'node:path';
import OpenAI from 'openai';
import { ROOT, fakeModelServer, fmt, median, percentile, removeDir, tempDir } from './support.mjs';

const { loadRegistryOrThrow } = await import(path.join(ROOT, 'dist', 'registry', 'load.js'));
const { createRuntime } = await import(path.join(ROOT, 'dist', 'runtime', 'runtime.js'));
const { MemoryStore } = await import(path.join(ROOT, 'dist', 'store', 'memoryStore.js'));
const { FileStore } = await import(path.join(ROOT, 'dist', 'store', 'fileStore.js'));

const N = Number(process.env.BENCH_RUNS ?? 400);

async function timed(n, fn) {
  const samples = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    await fn(i);
    samples.push(performance.now() - start);
  }
  return samples;
}

export async function run() {
  const model = await fakeModelServer();
  const env = { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'bench' };
  const registry = await loadRegistryOrThrow({ agentsDir: path.join(ROOT, 'bench', 'fixtures', 'loop') });
  const dataDir = tempDir('agentport-bench-');
  const runtimes = {
    memory: createRuntime({ registry, store: new MemoryStore(), env, log: () => {} }),
    file: createRuntime({ registry, store: new FileStore({ dir: dataDir }), env, log: () => {} }),
  };
  const client = new OpenAI({ apiKey: 'bench', baseURL: model.baseURL, maxRetries: 0 });
  const request = {
    model: 'bench-model',
    messages: [
      { role: 'system', content: 'Answer.' },
      { role: 'user', content: 'hi' },
    ],
  };

  // Warm up both paths (connection pool, JIT).
  for (let i = 0; i < 50; i++) {
    model.reply({ text: 'ok' }, { text: 'ok' });
    await client.chat.completions.create(request);
    await runtimes.memory.runPrompt({ target: 'plain', args: { message: 'hi' } });
  }

  // Interleave direct and runtime calls so drift affects both alike.
  const direct = [];
  const memory = [];
  const file = [];
  for (let i = 0; i < N; i++) {
    model.reply({ text: 'ok' }, { text: 'ok' }, { text: 'ok' });
    direct.push(...(await timed(1, () => client.chat.completions.create(request))));
    memory.push(...(await timed(1, () => runtimes.memory.runPrompt({ target: 'plain', args: { message: 'hi' } }))));
    file.push(...(await timed(1, () => runtimes.file.runPrompt({ target: 'plain', args: { message: 'hi' } }))));
  }

  // Multi-step runs: steps 1..k call add_numbers, the last step answers.
  async function steps(toolCalls, store) {
    return timed(50, async () => {
      for (let i = 0; i < toolCalls; i++) model.reply({ toolCalls: [{ name: 'add_numbers', arguments: { a: i, b: 1 } }] });
      model.reply({ text: 'done' });
      const result = await runtimes[store].runPrompt({ target: 'worker', args: { message: 'work' } });
      if (result.steps !== toolCalls + 1) throw new Error(`expected ${toolCalls + 1} steps, got ${result.steps}`);
    });
  }
  const six = await steps(5, 'file');
  const ten = await steps(9, 'file');
  const directTen = await timed(50, async () => {
    for (let i = 0; i < 10; i++) {
      model.reply({ text: 'ok' });
      await client.chat.completions.create(request);
    }
  });

  // Long threads: a turn late in a 500-turn thread against an early turn of another thread, per store (the prompt has
  // no includeChat, so its context is the same size at every turn: only what the runtime and store read may grow).
  // Once the long thread is LATE turns short of its end, turns of the two threads alternate, so a slow spell of a
  // shared machine falls on both: measured one after the other, a spell within the last turns alone read as growth.
  const TURNS = Number(process.env.BENCH_TURNS ?? 500);
  const LATE = 30;
  const longThread = {};
  for (const kind of ['file', 'memory']) {
    const dir = tempDir('agentport-bench-');
    const rt = createRuntime({ registry, store: kind === 'file' ? new FileStore({ dir }) : new MemoryStore(), env, log: () => {} });
    const turn = async (threadId) => {
      model.reply({ text: 'a reasonably long answer '.repeat(8) });
      const start = performance.now();
      const result = await rt.runPrompt({
        target: 'plain',
        args: { message: 'another question about things', ...(threadId ? { thread_id: threadId } : {}) },
      });
      return { ms: performance.now() - start, threadId: result.threadId };
    };
    const long = (await turn()).threadId;
    for (let n = 2; n <= TURNS - LATE; n++) await turn(long);
    const short = (await turn()).threadId;
    const early = [];
    const late = [];
    for (let i = 0; i < LATE; i++) {
      early.push((await turn(short)).ms);
      late.push((await turn(long)).ms);
    }
    longThread[kind] = { early: median(early), late: median(late) };
    removeDir(dir);
  }

  // Memory per idle thread: threads stay on disk; what the process keeps is measured.
  const idle = Number(process.env.BENCH_THREADS ?? 2000);
  const heap = () => {
    global.gc?.();
    return process.memoryUsage().heapUsed;
  };
  const memoryPerThread = {};
  for (const kind of ['file', 'memory']) {
    const dir = tempDir('agentport-bench-');
    const rt = createRuntime({ registry, store: kind === 'file' ? new FileStore({ dir }) : new MemoryStore(), env, log: () => {} });
    for (let i = 0; i < 20; i++) {
      model.reply({ text: 'ok' });
      await rt.runPrompt({ target: 'plain', args: { message: 'warm' } });
    }
    const before = heap();
    for (let i = 0; i < idle; i++) {
      model.reply({ text: 'a short answer' });
      await rt.runPrompt({ target: 'plain', args: { message: 'a short question' } });
    }
    memoryPerThread[kind] = (heap() - before) / idle;
    removeDir(dir);
  }
  await model.stop();
  removeDir(dataDir);

  const d = median(direct);
  const row = (label, samples) =>
    `| ${label} | ${fmt(median(samples))} | ${fmt(percentile(samples, 99))} | ${(median(samples) / d).toFixed(2)} | ${fmt(median(samples) - d)} |`;
  return [
    '## Runtime overhead per step',
    '',
    `${N} interleaved calls each against the scripted OpenAI-compatible server (no added latency). "agentport" is a whole`,
    'one-step run: input validation, thread creation, storing the user and assistant messages, context assembly and the',
    'model call through the same `openai` package.',
    '',
    '| path | median ms | p99 ms | ratio to direct | added ms |',
    '|---|---|---|---|---|',
    row('direct `openai` client call', direct),
    row('agentport one-step run, memory store', memory),
    row('agentport one-step run, file store', file),
    '',
    'Targets: ratio below 1.2 and under 1 ms added per step.',
    '',
    '## Multi-step runs (file store)',
    '',
    '| run | median ms | p99 ms | per step ms |',
    '|---|---|---|---|',
    `| 6 steps, 5 tool calls | ${fmt(median(six))} | ${fmt(percentile(six, 99))} | ${fmt(median(six) / 6)} |`,
    `| 10 steps, 9 tool calls | ${fmt(median(ten))} | ${fmt(percentile(ten, 99))} | ${fmt(median(ten) / 10)} |`,
    `| 10 direct client calls (reference) | ${fmt(median(directTen))} | ${fmt(percentile(directTen, 99))} | ${fmt(median(directTen) / 10)} |`,
    '',
    '## Long threads',
    '',
    `Median ms of a turn: turns 2-${LATE + 1} of a new thread against turns ${TURNS - LATE + 1}-${TURNS} of a long one, taken in`,
    'turn (a prompt without includeChat).',
    '',
    '| store | early turns | late turns | ratio (target <= 1.2) |',
    '|---|---|---|---|',
    ...['file', 'memory'].map(
      (kind) =>
        `| ${kind} | ${fmt(longThread[kind].early)} | ${fmt(longThread[kind].late)} | ${(longThread[kind].late / longThread[kind].early).toFixed(2)} |`,
    ),
    '',
    '## Memory per stored idle thread',
    '',
    `Heap growth after ${idle} one-turn threads${global.gc ? ' (after a forced GC)' : ' (run with --expose-gc for a forced GC)'}:`,
    `file store ${(memoryPerThread.file / 1024).toFixed(2)} KiB per thread (threads live on disk), memory store ${(memoryPerThread.memory / 1024).toFixed(2)} KiB per thread.`,
    '',
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await run());
