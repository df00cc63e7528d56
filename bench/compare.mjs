// A/B of the one-step run between two builds of agentport in one process:
//   node bench/compare.mjs <path to another checkout, built>
// Calls alternate between the two builds (and their order flips every round),
// so disk and CPU noise on a shared machine falls on both alike.
import path from 'node:path';
import { ROOT, fakeModelServer, fmt, median, removeDir, tempDir } from './support.mjs';

const other = process.argv[2];
if (!other) {
  process.stderr.write('usage: node bench/compare.mjs <path to another built checkout>\n');
  process.exit(2);
}
const ROUNDS = Number(process.env.BENCH_RUNS ?? 1000);
const WARMUP = 200;

const model = await fakeModelServer();
const env = { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'bench' };

const folders = [];

async function load(root) {
  const { loadRegistryOrThrow } = await import(path.join(root, 'dist', 'registry', 'load.js'));
  const { createRuntime } = await import(path.join(root, 'dist', 'runtime', 'runtime.js'));
  const { FileStore } = await import(path.join(root, 'dist', 'store', 'fileStore.js'));
  const { MemoryStore } = await import(path.join(root, 'dist', 'store', 'memoryStore.js'));
  const registry = await loadRegistryOrThrow({ agentsDir: path.join(ROOT, 'bench', 'fixtures', 'loop') });
  const dir = tempDir('agentport-ab-');
  folders.push(dir);
  return {
    file: createRuntime({
      registry,
      store: new FileStore({ dir }),
      env,
      log: () => {},
    }),
    memory: createRuntime({ registry, store: new MemoryStore(), env, log: () => {} }),
  };
}

const builds = { this: await load(ROOT), other: await load(path.resolve(other)) };
const samples = { this: { file: [], memory: [] }, other: { file: [], memory: [] } };
for (let round = 0; round < WARMUP + ROUNDS; round++) {
  for (const build of round % 2 ? ['other', 'this'] : ['this', 'other']) {
    for (const store of ['file', 'memory']) {
      model.reply({ text: 'ok' });
      const start = performance.now();
      await builds[build][store].runPrompt({ target: 'plain', args: { message: 'hi' } });
      if (round >= WARMUP) samples[build][store].push(performance.now() - start);
    }
  }
}
await model.stop();
for (const build of Object.values(builds)) await build.file.shutdown(0);
for (const folder of folders) removeDir(folder);
console.log(`## One-step run, this build against ${other}\n`);
console.log(`${ROUNDS} alternating rounds after ${WARMUP} warm-up rounds, median ms of a whole one-step run.\n`);
console.log('| store | this build | other build | difference |');
console.log('|---|---|---|---|');
for (const store of ['memory', 'file']) {
  const a = median(samples.this[store]);
  const b = median(samples.other[store]);
  console.log(`| ${store} | ${fmt(a)} | ${fmt(b)} | ${a >= b ? '+' : ''}${fmt(a - b)} |`);
}
