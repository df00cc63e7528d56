/**
 * Fills jiti's transpile cache for a big folder on worker threads before it
 * is loaded. Transpiling (babel, a few ms a file) is most of a first start
 * with thousands of TypeScript definition files; the workers share it across
 * the cores, and their garbage stays in heaps of bounded size that are freed
 * when they end, instead of growing the server's own heap. The load that
 * follows then only evaluates cached files. Only speed depends on this: a
 * file the workers missed or failed on is transpiled by the load as before,
 * and reports its own errors there.
 */
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

/** Below this many files to transpile, workers cost more than they save. */
export const PRETRANSPILE_MIN_FILES = 200;
const MAX_WORKERS = 4;
/** Each worker's old space: enough for babel, small enough that its garbage is collected rather than kept. */
const WORKER_HEAP_MB = 128;

/**
 * The worker: jiti's own `transform` with the loader's transform (transpile.ts,
 * itself loaded through jiti so that it runs from the sources as from dist/),
 * which writes the cache entry a later `jiti.import` of the same file reads
 * (same cache folder, `async`, `ts`). Inline so it runs the same from the
 * sources and from dist/.
 */
const WORKER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const { readFileSync } = require('node:fs');
const { createJiti } = require(workerData.jiti);
(async () => {
  const { transformDefinition } = await createJiti(workerData.parent).import(workerData.transpile);
  const jiti = createJiti(workerData.parent, { fsCache: workerData.cacheDir, moduleCache: false, interopDefault: false, transform: transformDefinition });
  let done = 0;
  for (const filename of workerData.files) {
    try {
      jiti.transform({ filename, source: readFileSync(filename, 'utf8'), ts: true, async: true });
      done++;
    } catch {
      // The load transpiles it again and reports the error in its place.
    }
  }
  parentPort.postMessage(done);
})();
`;

/**
 * Transpiles the `.ts`/`.mts` files among `files` that have no entry in
 * `cacheDir` yet, on up to {@link MAX_WORKERS} workers. Returns how many
 * were transpiled (0 when there were too few to bother).
 */
export async function pretranspile(files: readonly string[], cacheDir: string): Promise<number> {
  const missing = uncached(
    files.filter((file) => /\.m?ts$/.test(file)),
    cacheDir,
  );
  if (missing.length < PRETRANSPILE_MIN_FILES) return 0;
  return transpileOnWorkers(missing, cacheDir, Math.max(1, Math.min(MAX_WORKERS, os.availableParallelism())));
}

/** Transpiles `files` into jiti's cache on `count` workers; returns how many were transpiled. */
export async function transpileOnWorkers(files: readonly string[], cacheDir: string, count: number): Promise<number> {
  const jiti = createRequire(import.meta.url).resolve('jiti');
  const slices = Array.from({ length: count }, (_, w) => files.filter((_, i) => i % count === w)).filter((slice) => slice.length > 0);
  const transpile = fileURLToPath(new URL(`transpile${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url));
  const done = await Promise.all(slices.map((slice) => runWorker({ files: slice, cacheDir, jiti, transpile, parent: import.meta.url })));
  return done.reduce((a, b) => a + b, 0);
}

function runWorker(data: { files: string[]; cacheDir: string; jiti: string; transpile: string; parent: string }): Promise<number> {
  return new Promise((resolve) => {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: data,
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
      stdout: true,
      stderr: true,
    });
    let done = 0;
    worker.once('message', (count: number) => (done = count));
    // A worker that fails (out of its heap, say) only leaves files for the load to transpile.
    worker.once('error', () => resolve(done));
    worker.once('exit', () => resolve(done));
  });
}

/**
 * Files with no cache entry. jiti names an entry `<folder>-<stem>.<hash of the
 * path>.mjs` and checks the source's hash when reading it; a name match is
 * enough here, since a stale entry is simply transpiled again by the load.
 */
function uncached(files: readonly string[], cacheDir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(cacheDir);
  } catch {
    return [...files];
  }
  const prefixes = new Set(
    names.filter((name) => name.endsWith('.mjs')).map((name) => name.slice(0, name.lastIndexOf('.', name.length - 5) + 1)),
  );
  return files.filter((file) => !prefixes.has(`${path.basename(path.dirname(file))}-${path.basename(file).replace(/\.[^.]+$/, '')}.`));
}
