/**
 * A big folder's first load: its TypeScript files are transpiled ahead on a
 * worker thread, and jiti's transpile cache is written there afterwards.
 *
 * With sucrase, transpiling a definition file costs less than writing its
 * cache entry (a new file each, most of a first start with thousands of
 * files on some file systems). So when many files are missing from the
 * cache, the load runs without it: a worker transpiles the files in the
 * order the load imports them, from a little ahead of where the load starts
 * (the load transpiles the first ones itself while the worker starts up),
 * and hands the output over as it goes; the load takes what is ready and
 * transpiles itself what is not yet. Once
 * the load is done the worker, at the lowest priority, writes every entry
 * through jiti (its file names, its format) while the server starts. Only
 * speed depends on this: a process that ends first leaves entries unwritten
 * (jiti ignores an entry it finds incomplete), and a later load transpiles
 * those files again.
 */
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MessageChannel, Worker, receiveMessageOnPort } from 'node:worker_threads';

/** From this many files missing from the cache, a full load transpiles ahead and defers the cache writes. */
export const DEFER_CACHE_MIN_FILES = 200;

/** Files the load transpiles itself while the worker starts (it loads jiti and sucrase): the worker begins after them. */
const AHEAD = 256;

/** One transpiled file: what jiti's cache entry is made of. */
export interface Transpiled {
  filename: string;
  source: string;
  async: boolean;
  code: string;
}

/**
 * The worker. It loads transpile.ts through jiti, so it runs the same from
 * the sources and from dist/; inline for the same reason.
 */
const WORKER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const { readFileSync } = require('node:fs');
const { setPriority } = require('node:os');
const { createJiti } = require(workerData.jiti);
// What was handed over is not kept (the load keeps it only until used): the cache is written from the files again.
const handed = new Set();
const key = (filename, async) => filename + (async ? ':async' : '');
const loading = createJiti(workerData.parent).import(workerData.transpile);
(async () => {
  const { transformDefinition } = await loading;
  let batch = [];
  const files = workerData.files;
  for (const filename of [...files.slice(workerData.ahead), ...files.slice(0, workerData.ahead)]) {
    try {
      const source = readFileSync(filename, 'utf8');
      const { code, error } = transformDefinition({ filename, source, ts: true, async: true, interopDefault: false });
      if (error === undefined && !code.includes('__JITI_ERROR__')) {
        handed.add(filename);
        batch.push({ filename, source, async: true, code });
      }
    } catch {
      // The load transpiles it itself and reports its error.
    }
    if (batch.length >= 16) {
      workerData.port.postMessage(batch);
      batch = [];
    }
  }
  if (batch.length) workerData.port.postMessage(batch);
})();
// Once the load is done: what it transpiled itself as it did, the rest transpiled again (sucrase is cheaper than
// keeping every output in memory until now), into the cache.
parentPort.once('message', async (extra) => {
  try {
    // The thread's own priority (Linux, macOS): the server's start comes first.
    setPriority(19);
  } catch {}
  const { transformDefinition } = await loading;
  const given = new Map(extra.map((file) => [key(file.filename, file.async), file]));
  const transform = (options) => {
    const file = given.get(key(options.filename, options.async));
    return file ? { code: file.code } : transformDefinition(options);
  };
  const jiti = createJiti(workerData.parent, { fsCache: workerData.cacheDir, moduleCache: false, interopDefault: false, transform });
  let done = 0;
  // One file at a time: its source is read, transpiled and written, then let go.
  const write = (filename, source, async) => {
    try {
      jiti.transform({ filename, source, ts: /\\.[cm]?tsx?$/.test(filename), async });
      done++;
    } catch {
      // Not written: a later load transpiles it again.
    }
  };
  for (const { filename, source, async } of given.values()) write(filename, source, async);
  for (const filename of handed) {
    if (given.has(key(filename, true))) continue;
    let source;
    try {
      source = readFileSync(filename, 'utf8');
    } catch {
      continue; // gone since: nothing to cache
    }
    write(filename, source, true);
  }
  parentPort.postMessage(done);
});
`;

export interface Transpiler {
  /** The worker's output for this file, when it is ready and made from the same source. */
  take(filename: string, source: string, async: boolean): string | undefined;
  /** Ends the transpiling: `extra` (what the load transpiled itself) and the rest go to the cache. Resolves with how many entries were written. */
  finish(extra: readonly Transpiled[]): Promise<number>;
}

/** Starts transpiling `files` (TypeScript, in load order) on a worker thread, to fill the cache at `cacheDir` afterwards. */
export function startTranspiler(files: readonly string[], cacheDir: string): Transpiler {
  const { port1, port2 } = new MessageChannel();
  const here = fileURLToPath(import.meta.url);
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      files,
      ahead: Math.min(AHEAD, Math.floor(files.length / 4)),
      cacheDir,
      port: port2,
      jiti: createRequire(import.meta.url).resolve('jiti'),
      transpile: path.join(path.dirname(here), `transpile${path.extname(here)}`),
      parent: import.meta.url,
    },
    transferList: [port2],
    // Its heap holds the file names, a batch in flight, and the file being written: V8's own limit, since a cap sized by
    // file count ran out on folders of big files (and a worker that dies writes no cache).
    stdout: true,
    stderr: true,
  });
  // Until the load is done, the worker does not keep the process alive (a load that throws never finishes it).
  worker.unref();
  let written = 0;
  worker.on('message', (count: number) => (written = count));
  // A worker that fails only leaves files for the load, or a later one, to transpile.
  const ended = new Promise<number>((resolve) => {
    worker.once('error', () => resolve(written));
    worker.once('exit', () => resolve(written));
  });
  const ready = new Map<string, Transpiled>();
  return {
    take(filename, source, async) {
      // The load never waits for the event loop: what the worker sent so far is read synchronously.
      for (let message = receiveMessageOnPort(port1); message; message = receiveMessageOnPort(port1)) {
        for (const file of message.message as Transpiled[]) ready.set(`${file.filename}:${file.async}`, file);
      }
      const key = `${filename}:${async}`;
      const file = ready.get(key);
      // Each file is loaded once: its output is not kept after that.
      ready.delete(key);
      return file?.source === source ? file.code : undefined;
    },
    finish(extra) {
      ready.clear();
      port1.close();
      worker.ref();
      worker.postMessage(extra);
      return ended;
    },
  };
}

/**
 * How many of `files` have no cache entry. jiti names an entry
 * `<folder>-<stem>.<hash of the path>.mjs` and checks the source's hash when
 * reading it; a name match is enough here, since a stale entry is simply
 * transpiled again by the load.
 */
export function uncachedCount(files: readonly string[], cacheDir: string): number {
  let names: string[];
  try {
    names = readdirSync(cacheDir);
  } catch {
    return files.length;
  }
  const prefixes = new Set(
    names.filter((name) => name.endsWith('.mjs')).map((name) => name.slice(0, name.lastIndexOf('.', name.length - 5) + 1)),
  );
  return files.filter((file) => !prefixes.has(`${path.basename(path.dirname(file))}-${path.basename(file).replace(/\.[^.]+$/, '')}.`))
    .length;
}
