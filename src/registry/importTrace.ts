/**
 * What a load depends on beyond the files the loader itself runs or transpiles, for the start-up cache's stamps
 * (serveRegistry.ts). jiti hands plain JavaScript to Node as it is: an `.mjs` helper, a `.js` one under
 * `"type": "module"`, CommonJS (`.cjs`, or `.js` without ES module syntax), JSON. Node then loads that file's own
 * imports, and neither passes through the loader. A package the definitions import is replaced by an install
 * without a file of the folder changing.
 *
 * So each file the loader transpiles has its imports followed: a local file Node will load is told to `onRead`,
 * and its own imports followed in turn (scanned with es-module-lexer, and for `require` calls); a package is
 * stood for by its `package.json` where the import finds it, and by the places nearer the importing file where
 * an install would put one that shadows it (told absent). The agents folder and every folder above it add the
 * files a package manager rewrites on every install (`package.json`, lockfiles, `node_modules/.package-lock.json`
 * and the like), present or absent. All of it is told before Node reads it (a file's imports are followed when
 * the loader transpiles the file, before it runs), so a file edited during the load leaves a stale cache, never a
 * wrong one.
 *
 * Files in `node_modules` are not followed: a package's files change with its `package.json` and the lockfiles.
 * An import whose specifier is computed (`import(name)`, a template with substitutions) cannot be followed.
 */
import { readFileSync, statSync } from 'node:fs';
import { createRequire, isBuiltin } from 'node:module';
import path from 'node:path';
import { literalImports } from './plainModules.js';

/** Where `specifier` imported (or required) from `from` leads: an absolute file path, or undefined when nowhere. */
export type ImportResolver = (specifier: string, from: string, require: boolean) => string | undefined;

/** The files in a folder (and its `node_modules`) that an install of the folder's dependencies rewrites. */
const DEPENDENCY_FILES = [
  'package.json',
  'package-lock.json',
  'npm-shrinkwrap.json',
  'yarn.lock',
  'pnpm-lock.yaml',
  'bun.lock',
  'bun.lockb',
  // npm's hidden lockfile, pnpm's and Yarn's records of what is installed: rewritten by an install that leaves
  // the lockfile beside package.json as it was (`npm install --no-save`, a lockfile in another folder).
  path.join('node_modules', '.package-lock.json'),
  path.join('node_modules', '.modules.yaml'),
  path.join('node_modules', '.yarn-state.yml'),
  path.join('node_modules', '.yarn-integrity'),
];

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
  /** `folder\0package` pairs whose places have been told. */
  private readonly looked = new Set<string>();
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

  /**
   * The agents folder's dependencies as a whole: the install records of it and every folder above it (Node looks
   * for packages in each), and the zod the loader picks for it (loadModule.ts).
   */
  folder(): void {
    for (let dir = this.agentsDir; ; dir = path.dirname(dir)) {
      for (const name of DEPENDENCY_FILES) this.onRead(path.join(dir, name));
      if (path.dirname(dir) === dir) break;
    }
    this.packageFrom('zod', this.agentsDir);
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
    if (isBare(specifier)) this.packageFrom(packageName(specifier), path.dirname(from));
    const key = `${path.dirname(from)}\0${specifier}\0${require ? 'r' : 'i'}`;
    let file = this.resolved.get(key);
    if (file === undefined && !this.resolved.has(key)) {
      file = this.resolve(specifier, from, require);
      this.resolved.set(key, file);
    }
    if (file !== undefined) this.reached(file);
    // A file that is not there yet (the load fails on it): the files it could be are told, as absent, so that creating
    // it counts as a change (serve --watch reloads; a cache made meanwhile is stale).
    else if (/^\.{1,2}(?:\/|$)/.test(specifier) || path.isAbsolute(specifier))
      for (const candidate of candidatesOf(path.resolve(path.dirname(from), specifier))) this.onRead(candidate);
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

  /**
   * Where Node looks for package `name` from `dir`: `node_modules/<name>/package.json` in `dir` and each folder
   * above it, up to the first that has one. An install in a nearer folder shadows the one found, so those are told too.
   */
  private packageFrom(name: string, dir: string): void {
    for (let at = path.resolve(dir); ; at = path.dirname(at)) {
      const key = `${at}\0${name}`;
      // The rest of the way up was looked at from a folder below this one.
      if (this.looked.has(key)) return;
      this.looked.add(key);
      if (path.basename(at) !== 'node_modules') {
        const manifest = path.join(at, 'node_modules', name, 'package.json');
        this.onRead(manifest);
        if (isFile(manifest)) return;
      }
      if (path.dirname(at) === at) return;
    }
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

/** A package name rather than a path, a URL or a subpath import (`#internal`). */
function isBare(specifier: string): boolean {
  return !/^(?:\.{1,2}(?:\/|$)|\/|#|[a-z][a-z0-9+.-]*:)/i.test(specifier) && !path.isAbsolute(specifier);
}

/** `@scope/name/sub/path` -> `@scope/name`, `name/sub` -> `name`. */
function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

function isFile(file: string): boolean {
  try {
    return statSync(file, { throwIfNoEntry: false })?.isFile() === true;
  } catch {
    return false;
  }
}

/** The extensions a loader tries for a specifier that names none (jiti's, TypeScript's and Node's together). */
const TRIED_EXTENSIONS = ['', '.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs', '.json'];

/** The files a relative or absolute specifier that did not resolve could name, once created. */
function candidatesOf(target: string): string[] {
  return [...TRIED_EXTENSIONS.map((ext) => `${target}${ext}`), ...TRIED_EXTENSIONS.slice(1).map((ext) => path.join(target, `index${ext}`))];
}
