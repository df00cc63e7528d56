/**
 * A big folder's load: its TypeScript files are transpiled ahead on a worker
 * thread, in the order the load imports them, so the load mostly evaluates
 * code it is handed instead of transpiling it as well. The load transpiles
 * files itself while the worker starts (loading jiti and sucrase); the worker
 * follows the load's progress (a shared counter of the furthest file the load
 * has asked for) and works a batch ahead of it, never starting on a file the
 * load has reached, and sends its output in batches; the load takes what is
 * ready and transpiles itself what is not yet. Files that go to babel
 * (transpile.ts) are left to the load, which reads babel's cache. Only
 * speed depends on the worker: one that fails leaves every file to the load.
 *
 * The worker reads each file for both threads: the load takes the source a
 * file was transpiled from instead of reading it again. The folder was
 * stamped before the worker started (serveRegistry.ts), so a file edited
 * in between leaves a stale start-up cache, never a wrong one.
 */
import { createRequire } from 'node:module';
import { moduleFile } from '../installation.js';
import { MessageChannel, Worker, receiveMessageOnPort } from 'node:worker_threads';

/** From this many TypeScript files, a full load transpiles ahead on a worker. */
export const TRANSPILE_AHEAD_MIN_FILES = 200;

/**
 * How many files ahead of the load the worker must be to start on a file (it skips forward when it is closer or
 * behind, at its start say): about a batch, so its output is there before the load reaches it.
 */
const LEAD = 16;

/** One file as the worker made it: the source it read and sucrase's output. */
export interface Transpiled {
  source: string;
  code: string;
}

/** What the worker sends per file. */
interface Sent extends Transpiled {
  filename: string;
  async: boolean;
}

/**
 * The worker. It loads transpile.ts through jiti, so it runs the same from
 * the sources and from dist/; inline for the same reason.
 */
const WORKER_SOURCE = `
const { workerData } = require('node:worker_threads');
const { readFileSync } = require('node:fs');
const { createJiti } = require(workerData.jiti);
(async () => {
  const { sucraseTransform } = await createJiti(workerData.parent).import(workerData.transpile);
  let batch = [];
  const { files, progress, lead } = workerData;
  for (let i = 0; i < files.length; i++) {
    // Files the load has reached (or is about to) are its own: the worker goes on ahead of it.
    const floor = Atomics.load(progress, 0) + lead;
    if (i < floor) {
      if (batch.length) workerData.port.postMessage(batch);
      batch = [];
      i = floor - 1;
      continue;
    }
    const filename = files[i];
    try {
      const source = readFileSync(filename, 'utf8');
      // Compiled by the load (it compiles each file anyway): a compile here would serve no one.
      const code = sucraseTransform({ filename, source, ts: true, async: true, interopDefault: false }, { checked: false });
      if (code !== undefined) batch.push({ filename, source, async: true, code });
    } catch {
      // The load transpiles it itself and reports its error.
    }
    if (batch.length >= 16) {
      workerData.port.postMessage(batch);
      batch = [];
    }
  }
  if (batch.length) workerData.port.postMessage(batch);
  // Everything it will send has been sent.
  workerData.port.postMessage(null);
})();
`;

export interface Transpiler {
  /** The worker's output for this file, when it is ready (each file is handed out once); not yet compiled (see sucraseTransform). */
  take(filename: string, async: boolean): Transpiled | undefined;
  /** Whether the worker has sent everything it will send (read without waiting). */
  finished(): boolean;
  /** Ends the worker (the load is done with it, or gave up); again does nothing. */
  stop(): void;
}

/** Starts transpiling `files` (TypeScript, in load order) on a worker thread. */
export function startTranspiler(files: readonly string[]): Transpiler {
  const { port1, port2 } = new MessageChannel();
  /** One past the furthest of `files` the load has asked for (only this thread writes it). */
  const progress = new Int32Array(new SharedArrayBuffer(4));
  /** Where each file is in `files`: the counter follows the load's files, not other files jiti transforms. */
  const positions = new Map(files.map((file, index) => [file, index]));
  let worker: Worker;
  try {
    worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        files,
        progress,
        lead: LEAD,
        port: port2,
        jiti: createRequire(import.meta.url).resolve('jiti'),
        transpile: moduleFile('registry/transpile'),
        parent: import.meta.url,
      },
      transferList: [port2],
      stdout: true,
      stderr: true,
    });
  } catch {
    // No worker (a permission model, too many threads): the load transpiles every file itself.
    return { take: () => undefined, finished: () => true, stop: () => port1.close() };
  }
  // The worker never keeps the process alive: a load that throws before stopping it leaves nothing running.
  worker.unref();
  // A worker that fails only leaves files for the load to transpile.
  worker.on('error', () => {});
  const ready = new Map<string, Sent>();
  let stopped = false;
  let ended = false;
  // The load never waits for the event loop: what the worker sent so far is read synchronously.
  const receive = () => {
    for (let message = receiveMessageOnPort(port1); message; message = receiveMessageOnPort(port1)) {
      const files = message.message as Sent[] | null;
      if (files === null) ended = true;
      else for (const file of files) ready.set(`${file.filename}:${file.async}`, file);
    }
  };
  return {
    take(filename, async) {
      const position = positions.get(filename);
      if (position !== undefined && position >= progress[0]!) Atomics.store(progress, 0, position + 1);
      receive();
      const key = `${filename}:${async}`;
      const file = ready.get(key);
      // Each file is loaded once: its output is not kept after that.
      ready.delete(key);
      return file;
    },
    finished() {
      if (!stopped) receive();
      return ended || stopped;
    },
    stop() {
      if (stopped) return;
      stopped = true;
      ready.clear();
      port1.close();
      void worker.terminate();
    },
  };
}
