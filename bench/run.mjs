// `npm run bench`: runs every benchmark in its own process (so memory figures
// are not mixed up) and writes docs/benchmarks.md with the machine and command.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, machine } from './support.mjs';

const only = process.argv.slice(2);
const benches = [
  'startup',
  'bigFolder',
  'callOverStdio',
  'httpThroughput',
  'modelTransport',
  'runtime',
  'mcpSurface',
  'search',
  'upstream',
].filter((name) => only.length === 0 || only.includes(name));

// Temporary folders of the whole run, removed at its end (see tempDir in support.mjs): beside the checkout rather
// than in the system's temporary folder, whose recent deletions (the test suite's) would slow the file store.
const tmpRoot = path.join(ROOT, '.bench-tmp');
mkdirSync(tmpRoot, { recursive: true });
// What an interrupted run left (its process gone) goes now: an interrupted run does not reach its own clean-up.
for (const name of readdirSync(tmpRoot)) {
  const pid = Number(/^run-(\d+)-/.exec(name)?.[1]);
  if (pid && !alive(pid)) rmSync(path.join(tmpRoot, name), { recursive: true, force: true });
}
const runTmp = mkdtempSync(path.join(tmpRoot, `run-${process.pid}-`));
const sections = [];
try {
  for (const name of benches) {
    process.stderr.write(`bench: ${name}...\n`);
    const started = Date.now();
    const out = execFileSync(process.execPath, ['--expose-gc', path.join(ROOT, 'bench', `${name}.mjs`)], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, BENCH_TMPDIR: mkdtempSync(path.join(runTmp, `${name}-`)) },
    });
    sections.push(out.trim());
    process.stderr.write(`bench: ${name} done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  }
} finally {
  try {
    rmSync(runTmp, { recursive: true, force: true, maxRetries: 3 });
  } catch (error) {
    process.stderr.write(`bench: could not remove ${runTmp}: ${error.message}\n`);
  }
}

/** Whether a process is running (signal 0 checks without sending anything). */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

const report = [
  '# Benchmarks',
  '',
  `Produced by \`npm run bench\`${only.length ? ` (${only.join(', ')})` : ''} on ${new Date().toISOString().slice(0, 10)}.`,
  `Machine: ${machine()}.`,
  'Figures from one run on a shared 2-core machine: compare ratios within a run rather than absolute times.',
  'Temporary folders (data folders, the generated big folder) are made in `.bench-tmp/` beside the checkout and removed when the run ends (`tempDir` in bench/support.mjs).',
  '',
  ...sections.flatMap((section) => [section, '']),
].join('\n');

// Comparisons between builds (bench/compare.mjs) are written by hand below a marker; they are kept.
const target = path.join(ROOT, 'docs', 'benchmarks.md');
const MARKER = '<!-- comparisons: kept by npm run bench -->';
const previous = existsSync(target) ? readFileSync(target, 'utf8') : '';
const kept = previous.includes(MARKER) ? previous.slice(previous.indexOf(MARKER)) : '';
if (only.length === 0) writeFileSync(target, kept ? `${report}\n${kept}` : report);
process.stdout.write(report);
