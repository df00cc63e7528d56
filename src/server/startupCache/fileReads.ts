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
 * files, which the install records stand for). A file is stamped before it is read, as it is then: one changed during
 * the load leaves the cache stale, never wrong; one that is not there is stamped as missing, so its appearing makes
 * the cache stale (what `existsSync` decided). A file descriptor or a FileHandle names no file here, so its reads are
 * not keyed; nor is a folder's existence, since a folder is stamped as a missing file is (stampFile).
 */
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { callerFile, definitionsCode, type Called } from './definitionsCode.js';

/** Where the files the definitions read go. */
export interface FileReads {
  /**
   * Whether a file (by absolute path) is keyed already: the walk's files (the loader reads every definition, 10,000
   * of them in a big folder) and those read before end here, before the stack is looked at.
   */
  known(file: string): boolean;
  /** Told each file the definitions read that is not known, by absolute path, before it is read. */
  onRead(file: string): void;
}

/** What the watched version of an `fs` function tells of a call: the path it was given, and itself (where the stack is cut). */
type Note = (file: unknown, called: Called) => void;

/**
 * Runs `work` (a full load of `agentsDir`, and whatever else evaluates the definitions, such as building the tool
 * catalogue) with node:fs's reading functions watched, telling `reads` the files the definitions read.
 */
export async function readingFiles<T>(agentsDir: string, reads: FileReads, work: () => Promise<T>): Promise<T> {
  const isDefinitions = definitionsCode(agentsDir);
  // Code that kept a watched function (`const read = fs.readFileSync`) can call it after the load: from then on it
  // only calls through.
  let watching = true;
  const note: Note = (file, called) => {
    // The loader's own reads of the folder's files end at the first check, by the path as given.
    if (!watching || (typeof file === 'string' && reads.known(file))) return;
    const absolute = absolutePath(file);
    if (absolute !== undefined && !reads.known(absolute) && isDefinitions(callerFile(called))) reads.onRead(absolute);
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
    return await work();
  } finally {
    watching = false;
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
