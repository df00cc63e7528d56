// A/B of one call over stdio between two builds of agentport, through the real CLI and MCP client:
//   node bench/compareStdio.mjs <path to another checkout, built>
// Each build serves the one-step prompt with the memory and the file store, beside a bare SDK v2 server
// making the same `openai` call (bench/bare-model-server.mjs); calls rotate over all five servers call by
// call, so noise on a shared machine falls on all alike. Prints the median ms and the ratio to bare of each.
import path from 'node:path';
import { callsInTurn, cpuCell } from './stdioCalls.mjs';
import { ROOT, fakeModelServer, fmt, median, removeDir, tempDir } from './support.mjs';

const other = process.argv[2];
if (!other) {
  process.stderr.write('usage: node bench/compareStdio.mjs <path to another built checkout>\n');
  process.exit(2);
}
const RUNS = Number(process.env.BENCH_RUNS ?? 1500);
const WARMUP = 100;

const model = await fakeModelServer();
const env = { ...process.env, OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'bench' };
const folders = [];
const servers = { bare: [path.join(ROOT, 'bench', 'bare-model-server.mjs')] };
for (const [build, root] of [
  ['this', ROOT],
  ['other', path.resolve(other)],
]) {
  for (const store of ['memory', 'file']) {
    const args = [
      path.join(root, 'dist', 'cli', 'main.js'),
      'serve',
      '--dir',
      path.join(ROOT, 'bench', 'fixtures', 'loop'),
      '--store',
      store,
    ];
    if (store === 'file') folders.push(tempDir('agentport-ab-'));
    servers[`${build}, ${store}`] = store === 'file' ? [...args, '--data-dir', folders.at(-1)] : args;
  }
}
const { samples, cpu } = await callsInTurn(servers, { env, model, runs: RUNS, warmup: WARMUP });
await model.stop();
for (const folder of folders) removeDir(folder);
const bare = median(samples.bare);
console.log(`| server | median ms | ratio to bare | server CPU us per call (ratio) |\n|---|---|---|---|`);
for (const name of Object.keys(samples))
  console.log(
    `| ${name} | ${fmt(median(samples[name]))} | ${(median(samples[name]) / bare).toFixed(2)} | ${cpuCell(cpu[name], cpu.bare)} |`,
  );
