// Shared helpers for the benchmarks: statistics, the machine, and the test
// suite's scripted OpenAI-compatible server (loaded from TypeScript with jiti).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createJiti } from 'jiti';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const jiti = createJiti(import.meta.url);

export async function fakeModelServer() {
  const { FakeModelServer } = await jiti.import(path.join(ROOT, 'test', 'support', 'fakeModelServer.ts'));
  return new FakeModelServer().start();
}

export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export const median = (values) => percentile(values, 50);

export function machine() {
  const cpus = os.cpus();
  return `${cpus[0]?.model ?? 'unknown CPU'}, ${cpus.length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${os.platform()} ${os.release()}`;
}

/**
 * A fresh temporary folder. Under `npm run bench` it lies in the run's own folder and stays until the run ends
 * (removeDir): on ext4, a file created in a directory group where many files were deleted within the last minutes
 * costs about a millisecond of kernel time instead of tens of microseconds (the inode allocator steps over recently
 * deleted inodes), so one benchmark's clean-up would slow the file store of the next. The test suite's temporary
 * files in the system folder do the same, hence a folder of the run's own.
 */
export function tempDir(prefix) {
  return mkdtempSync(path.join(process.env.BENCH_TMPDIR ?? os.tmpdir(), prefix));
}

/** Removes a folder from tempDir, or leaves it to the end of `npm run bench` (see tempDir). */
export function removeDir(dir) {
  if (!process.env.BENCH_TMPDIR) rmSync(dir, { recursive: true, force: true });
}

export const fmt = (ms) => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2));

/** The PostgreSQL server the tests use (test/support/postgres.ts): its URL and whether it answers. */
export async function postgres() {
  const { databaseUrl, postgresReachable } = await jiti.import(path.join(ROOT, 'test', 'support', 'postgres.ts'));
  return { url: databaseUrl(), reachable: await postgresReachable() };
}
