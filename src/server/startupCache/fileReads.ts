/**
 * The files a full load's definitions read themselves with node:fs (`toolDescription: readFileSync(new URL(
 * '../../shared/desc.md', import.meta.url), 'utf8')`, a value that depends on whether a file exists): what they held
 * shaped what the start-up cache holds, so they are stamped (stamps.ts) and keyed with the files the loader read
 * beyond the folder's walk, and `serve --watch` looks at them too.
 *
 * Watched: `readFileSync`, `readFile` and `existsSync` of node:fs, and `readFile` of its promises (node:fs/promises),
 * named ESM imports of them included. A read counts as an environment variable's does (definitionsCode.ts): when the
 * code that made it is the definitions' own, not agentport's (it reads the definitions, which the walk stamps), not
 * Node's (the module loader reading a file for `require`, which importTrace.ts stamps), not a package's (its own
 * files, which the install records stand for); and only when the load made it: a tool that a `--watch` reload runs
 * beside (an earlier registry's, answering a call) reads for its call, not for the load. The files are stamped by
 * the caller once the load is over, as they are then: a definition that writes a file it read (a memo kept on disk)
 * leaves it as the next start finds it, rather than making every start a full load and every `--watch` poll a
 * reload. (A file someone else edits while the load runs is keyed as edited; the load may have read it before.) One
 * that is not there is stamped as missing, so its appearing makes the cache stale (what `existsSync` decided). A file
 * descriptor or a FileHandle names no file here, so its reads are not keyed; nor is a folder's existence, since a
 * folder is stamped as a missing file is (stampFile).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { callerFile, definitionsCode, type Called } from './definitionsCode.js';

/** What the watched version of an `fs` function tells of a call: the path it was given, and itself (where the stack is cut). */
type Note = (file: unknown, called: Called) => void;

/**
 * Runs `work` (a full load of `agentsDir`, and whatever else evaluates the definitions, such as building the tool
 * catalogue) with node:fs's reading functions watched; gives its result and the files the definitions read, by
 * absolute path, but for those `known` already (the walk's files: the loader reads every definition, 10,000 of them in
 * a big folder, and each ends at that check, before the stack is looked at).
 */
export async function readingFiles<T>(
  agentsDir: string,
  known: (file: string) => boolean,
  work: () => Promise<T>,
): Promise<{ result: T; files: string[] }> {
  const isDefinitions = definitionsCode(agentsDir);
  const files = new Set<string>();
  const seen = (file: string) => files.has(file) || known(file);
  // Marks what the load runs, down to the callbacks and promises it starts: nothing else in the process counts.
  const load = new AsyncLocalStorage<true>();
  // Code that kept a watched function (`const read = fs.readFileSync`) can call it after the load: from then on it
  // only calls through.
  let watching = true;
  const note: Note = (file, called) => {
    // The loader's own reads of the folder's files end at the first check, by the path as given.
    if (!watching || load.getStore() !== true || (typeof file === 'string' && seen(file))) return;
    const absolute = absolutePath(file);
    if (absolute !== undefined && !seen(absolute) && isDefinitions(callerFile(called))) files.add(absolute);
  };
  const restores = [
    watch(fs, 'readFileSync', note),
    watch(fs, 'readFile', note),
    watch(fs, 'existsSync', note),
    watch(fs.promises, 'readFile', note),
  ];
  // `import { readFileSync } from 'node:fs'` (and from node:fs/promises) in a definition meets the watched ones too.
  syncBuiltinESMExports();
  try {
    const result = await load.run(true, work);
    return { result, files: [...files] };
  } finally {
    watching = false;
    // Until disabled, the storage keeps Node's promise hooks on for the life of the process: about 0.15 ms of every
    // call a server answers after a full load, on the benchmark machine.
    load.disable();
    if (restores.map((restore) => restore()).includes(true)) syncBuiltinESMExports();
  }
}

/**
 * Puts a version of `owner[name]` in place that tells `note` what it is called with, then calls the original. Returns
 * what puts the original back, unless the work replaced the watched version itself (it then stays, calling through),
 * and says whether it did.
 */
function watch<O extends object, K extends keyof O>(owner: O, name: K, note: Note): () => boolean {
  // A function of node:fs, called through with whatever it is given: its own signature does not matter here.
  const original = owner[name] as (...args: unknown[]) => unknown;
  const watched = function (this: unknown, ...args: unknown[]): unknown {
    note(args[0], watched);
    return Reflect.apply(original, this, args);
  };
  owner[name] = watched as O[K];
  return () => {
    if (owner[name] !== watched) return false;
    owner[name] = original as O[K];
    return true;
  };
}

/**
 * The file a path given to `fs` names, absolute: a string or bytes (relative to the working directory, as `fs` takes
 * them) or a file: URL. Undefined for a file descriptor, a FileHandle, and what `fs` refuses.
 */
function absolutePath(file: unknown): string | undefined {
  try {
    if (typeof file === 'string') return file === '' ? undefined : path.resolve(file);
    if (file instanceof Uint8Array)
      return file.length ? path.resolve(Buffer.from(file.buffer, file.byteOffset, file.length).toString()) : undefined;
    if (file instanceof URL) return fileURLToPath(file);
  } catch {
    // A URL that names no file here (another scheme, another host): `fs` refuses it too.
  }
  return undefined;
}
