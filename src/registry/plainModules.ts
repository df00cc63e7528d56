/**
 * Definition files that import nothing but agentport and zod (most of them),
 * evaluated without jiti: their transpiled code is compiled and run in jiti's
 * module wrapper, with the modules jiti would have handed them. jiti's
 * per-file work (a loader per module, resolution, a Module record) cost a
 * 10,000-file first start more than running the files did. Anything else, a
 * relative import, a package of the folder's own, is left to jiti, which
 * loads the file as before.
 */
import Module from 'node:module';
import path from 'node:path';
import type { Script } from 'node:vm';
import type { ModuleNamespace } from './loadModule.js';

/** What the transpiled code imports with: jiti's `jitiImport` (sucrase's output after transpile.ts) or `require`. */
const IMPORT_CALL = /\b(?:jitiImport|require)\(/g;
const LITERAL_IMPORT = /\b(jitiImport|require)\(\s*(?:"([^"\\]*)"|'([^'\\]*)')\s*\)/g;

/** Whether every import in `code` is one of `modules`, named literally. */
export function importsOnly(code: string, modules: Readonly<Record<string, unknown>>): boolean {
  // jiti's own `require` (its resolve, cache, main) or `module` record used directly: only jiti gives those.
  if (/\brequire\b(?!\()|\bmodule\s*\./.test(code)) return false;
  let calls = 0;
  for (const _ of code.matchAll(IMPORT_CALL)) calls++;
  const literal = literalImports(code);
  return literal.length === calls && literal.every(({ specifier }) => Object.hasOwn(modules, specifier));
}

/**
 * What transpiled `code` imports by a literal specifier, and whether through `require` (jiti's synchronous path)
 * rather than `jitiImport`. A computed specifier is not known before the code runs.
 */
export function literalImports(code: string): Array<{ specifier: string; require: boolean }> {
  return [...code.matchAll(LITERAL_IMPORT)].map((match) => ({ specifier: match[2] ?? match[3] ?? '', require: match[1] === 'require' }));
}

type Wrapper = (
  exports: unknown,
  require: (id: string) => unknown,
  module: Module,
  filename: string,
  dirname: string,
  jitiImport: (id: string) => Promise<unknown>,
  jitiESMResolve: (id: string) => string,
) => unknown;

/**
 * Runs a compiled file (compileDefinition, async mode) with `modules` as the only modules it can import,
 * as jiti runs it with interop off: the namespace is the module's `exports`.
 */
export async function runPlainModule(
  script: Script,
  filename: string,
  modules: Readonly<Record<string, unknown>>,
): Promise<ModuleNamespace> {
  const find = (id: string): unknown => {
    if (!Object.hasOwn(modules, id)) throw new Error(`Cannot find module '${id}' from ${filename}`);
    return modules[id];
  };
  const module = new Module(filename);
  module.filename = filename;
  const wrapper = script.runInThisContext() as Wrapper;
  await wrapper(
    module.exports,
    find,
    module,
    filename,
    path.dirname(filename),
    (id) => Promise.resolve().then(() => find(id)),
    (id) => id,
  );
  module.loaded = true;
  return module.exports as ModuleNamespace;
}
