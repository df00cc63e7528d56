// The model request alone: CPU per `openai` chat completion in this process, through Node's fetch (the client's
// default, what the bare reference servers use) and through agentport's transport (src/models/modelFetch.ts,
// node:http with kept-alive connections), against the scripted model server in a process of its own. The two take
// turns, round after round.
//
// Settings (environment): BENCH_ROUNDS (5), BENCH_CALLS (3000 per turn).
import path from 'node:path';
import OpenAI from 'openai';
import { ROOT, machine, median } from './support.mjs';
import { spawn } from 'node:child_process';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CALLS = Number(process.env.BENCH_CALLS ?? 3000);

export async function run() {
  // The scripted model server of the HTTP benchmark, in a process of its own.
  const child = spawn(process.execPath, [path.join(ROOT, 'bench', 'httpThroughput.mjs'), '--model-server'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const baseURL = await new Promise((resolve, reject) => {
      let output = '';
      child.once('exit', (code) => reject(new Error(`the model server exited with ${code}`)));
      child.stdout.on('data', (chunk) => {
        output += chunk;
        const match = /model at (\S+)/.exec(output);
        if (match) resolve(match[1]);
      });
    });
    const { modelFetch } = await import(path.join(ROOT, 'dist', 'models', 'modelFetch.js'));
    const clients = {
      "Node's fetch (the `openai` client's default)": new OpenAI({ apiKey: 'bench', baseURL, maxRetries: 0 }),
      "agentport's transport (node:http, kept-alive)": new OpenAI({ apiKey: 'bench', baseURL, maxRetries: 0, fetch: modelFetch }),
    };
    const call = (client) =>
      client.chat.completions.create(
        {
          model: 'bench-model',
          messages: [
            { role: 'system', content: 'Answer.' },
            { role: 'user', content: 'hi' },
          ],
        },
        // A run passes its signal; so does this.
        { signal: new AbortController().signal },
      );
    const cpuPerCall = async (client, n) => {
      const before = process.cpuUsage();
      for (let i = 0; i < n; i++) {
        const completion = await call(client);
        if (completion.choices[0]?.message.content !== 'ok') throw new Error('unexpected answer');
      }
      const used = process.cpuUsage(before);
      return (used.user + used.system) / n;
    };
    // Warm: V8 compiles the hot paths over the first thousands of calls.
    for (let round = 0; round < 2; round++) for (const client of Object.values(clients)) await cpuPerCall(client, CALLS);
    const samples = new Map(Object.keys(clients).map((name) => [name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, client] of Object.entries(clients)) samples.get(name).push(await cpuPerCall(client, CALLS));
    }
    const base = median(samples.get(Object.keys(clients)[0]));
    return [
      "## The model request: Node's fetch against node:http",
      '',
      `Command: \`node bench/modelTransport.mjs\` (after \`npm run build\`), BENCH_ROUNDS=${ROUNDS}, BENCH_CALLS=${CALLS}.`,
      `Machine: ${machine()}.`,
      '',
      'CPU of this process per `openai` chat completion (user + system time), one call after another, answered by the',
      'scripted model server in a process of its own; medians of the rounds, the two taking turns. The bare reference',
      "servers of the other benchmarks use the client's default, Node's fetch; agentport's provider uses its own transport",
      '(docs/runtime.md, "Models"), so part of what it saves per call in those benchmarks is this difference.',
      '',
      '| transport | CPU µs per call | difference |',
      '|---|---|---|',
      ...[...samples].map(([name, values]) => {
        const value = median(values);
        return `| ${name} | ${value.toFixed(1)} | ${value === base ? '' : `${(value - base).toFixed(1)}`} |`;
      }),
    ].join('\n');
  } finally {
    child.kill('SIGTERM');
  }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await run());
