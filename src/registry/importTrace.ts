/**
 * What a load depends on beyond the files the loader itself runs or transpiles, for the start-up cache's stamps
 * (serveRegistry.ts). jiti hands plain JavaScript to Node as it is: an `.mjs` helper, a `.js` one under
 * `"type": "module"`, CommonJS (`.cjs`, or `.js` without ES module syntax), JSON. Node then loads that file's own
 * imports, and neither passes through the loader.
 *
 * So each file the loader transpiles has its imports followed: a local file Node will load is told to `onRead`,
 * and its own imports followed in turn (scanned with es-module-lexer, and for `require` calls). All of it is told
 * before Node reads it (a file's imports are followed when the loader transpiles the file, before it runs), so a
 * file edited during the load leaves a stale cache, never a wrong one.
 *
 * Files in `node_modules` are not followed. An import whose specifier is computed (`import(name)`, a template with
 * substitutions) cannot be followed.
 */
import { readFileSync } from 'node:fs';
import { createRequire, isBuiltin } from 'node:module';
import path from 'node:path';
import { literalImports } from './plainModules.js';

/** Where `specifier` imported (or required) from `from` leads: an absolute file path, or undefined when nowhere. */
export type ImportResolver = (specifier: string, from: string, require: boolean) => string | undefined;

/** Files jiti always transpiles (and so reports itself). */
const TYPESCRIPT = /\.[cm]?tsx?$/;
/** Files Node runs whose imports are followed; anything else reached (JSON, an addon) is only stamped. */
const JAVASCRIPT = /\.[cm]?jsx?$/;
const IN_NODE_MODULES = `${path.sep}node_modules${path.sep}`;
/**
 * A `require` call with a literal argument. A regular expression rather than a parser: one found in a comment or a
 * string only adds a file to the stamps (a cache made stale for nothing at worst), and no parser finds more.
 */
const REQUIRE_CALL = /\brequire\s*\(\s*(?:'([^'\\\n]*)'|"([^"\\\n]*)"|`([^`\\$]*)`)\s*\)/g;

let lexer: typeof import('es-module-lexer') | undefined;

export class ImportTrace {
  /** Files whose imports are followed (or need not be). */
  private readonly seen = new Set<string>();
  /** Resolutions by the importing file's folder, specifier and kind: ten thousand files importing one helper resolve it once. */
  private readonly resolved = new Map<string, string | undefined>();
  private readonly agentsDir: string;

  constructor(
    agentsDir: string,
    private readonly onRead: (file: string) => void,
    private readonly resolve: ImportResolver,
    /** Specifiers the loader serves itself (agentport, and zod when shared): no file stands behind them. */
    private readonly virtual: Readonly<Record<string, unknown>>,
  ) {
    this.agentsDir = path.resolve(agentsDir);
  }

  /** A file the loader transpiled: what its code imports. */
  transpiled(file: string, code: string): void {
    if (this.seen.has(file)) return;
    this.seen.add(file);
    for (const { specifier, require } of literalImports(code)) {
      if (!Object.hasOwn(this.virtual, specifier)) this.imported(specifier, file, require);
    }
  }

  /** A file the loader hands to Node as it is (a plain-JavaScript definition file): it and what it imports. */
  native(file: string): void {
    this.reached(file);
  }

  private imported(specifier: string, from: string, require: boolean): void {
    if (isBuiltin(specifier)) return;
    const key = `${path.dirname(from)}\0${specifier}\0${require ? 'r' : 'i'}`;
    let file = this.resolved.get(key);
    if (file === undefined && !this.resolved.has(key)) {
      file = this.resolve(specifier, from, require);
      this.resolved.set(key, file);
    }
    if (file !== undefined) this.reached(file);
  }

  /** A file an import leads to: told and followed, unless the loader transpiles it (and so reports it itself) or it is a package's. */
  private reached(file: string): void {
    if (this.seen.has(file) || TYPESCRIPT.test(file) || this.inPackage(file)) return;
    this.seen.add(file);
    this.onRead(file);
    if (!JAVASCRIPT.test(file)) return;
    let source: string;
    try {
      source = readFileSync(file, 'utf8');
    } catch {
      return; // Node reports it.
    }
    for (const { specifier, require } of nativeImports(source)) this.imported(specifier, file, require);
  }

  /** A file of an installed package; an agents folder that itself lies in a `node_modules` folder is no package's. */
  private inPackage(file: string): boolean {
    const inside = file.startsWith(this.agentsDir + path.sep) ? file.slice(this.agentsDir.length) : file;
    return inside.includes(IN_NODE_MODULES);
  }
}

/** The modules plain JavaScript imports with a literal specifier: ES module imports (es-module-lexer) and `require` calls. */
function nativeImports(source: string): Array<{ specifier: string; require: boolean }> {
  const found: Array<{ specifier: string; require: boolean }> = [];
  lexer ??= createRequire(import.meta.url)('es-module-lexer') as typeof import('es-module-lexer');
  try {
    for (const entry of lexer.parse(source)[0]) {
      if (entry.type === 'import-meta') continue;
      // A template with substitutions is a glob, no file; a type-only import is no import once transpiled.
      const specifier =
        entry.type === 'dynamic' ? (entry.glob ? undefined : entry.specifier) : entry.typeOnly ? undefined : entry.specifier;
      if (specifier !== undefined) found.push({ specifier, require: false });
    }
  } catch {
    // Not a module the lexer reads (Node then fails on it too, or it is CommonJS the lexer stumbled on): its requires still count.
  }
  for (const match of source.matchAll(REQUIRE_CALL)) found.push({ specifier: match[1] ?? match[2] ?? match[3] ?? '', require: true });
  return found;
}
