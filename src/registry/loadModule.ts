/**
 * Loads agents/ TypeScript and JavaScript without a build step (jiti, no type
 * checking). `agentport-mcp` (the package's name), `agentport` (its earlier
 * name) and `@standardagents/spec` all map to this package's own entry, so
 * definition files written against the spec load unchanged and their
 * `definePrompt` is ours, whatever copy the folder's node_modules holds;
 * `zod` comes from the user's project when it has one, otherwise from
 * agentport's copy. A file that does not parse is reported with its line,
 * column and a code frame ({@link moduleLoadIssue}).
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Jiti, TransformOptions, TransformResult } from 'jiti';
import { codeFrame } from '../definitions/codeFrame.js';
import { suggestName, type LoadIssue } from '../definitions/issues.js';
import { ImportTrace } from './importTrace.js';
import { importsOnly, runPlainModule } from './plainModules.js';
import { compileDefinition, sucraseTransform, transformDefinition } from './transpile.js';
import type { Transpiler } from './transpileAhead.js';

/** The specifiers definition files import agentport's API from. */
export const PACKAGE_SPECIFIERS = ['agentport-mcp', 'agentport', '@standardagents/spec'] as const;

export interface ModuleLoaderOptions {
  agentsDir: string;
  /** Where babel's output is cached (transpile.ts); `false`: nowhere. */
  cacheDir: string | false;
  /** The files may have been imported before in this process (a reload): their current contents must load. */
  fresh?: boolean;
  /** A big folder's load (transpileAhead.ts): files come transpiled from this worker when it has them ready. */
  transpiler?: Transpiler;
  /**
   * Told each file the loader runs or transpiles, just after reading it (the start-up cache stamps them: a helper
   * in a dot-folder or behind a link is no file of the folder's walk), and, before Node reads them, the files Node
   * loads itself and those that stand for the packages the load uses, present or absent (importTrace.ts).
   */
  onRead?: (file: string) => void;
}

export type ModuleNamespace = Record<string, unknown>;

export interface ModuleLoader {
  load(file: string): Promise<ModuleNamespace>;
  /**
   * The same, synchronously (jiti's require path): for a definition first
   * needed where nothing can wait, such as a tool's `loadPrompt`. A file with
   * top-level await loads only through {@link load}.
   */
  loadSync(file: string): ModuleNamespace;
}

export async function createModuleLoader(options: ModuleLoaderOptions): Promise<ModuleLoader> {
  // Loaded here so commands that load no TypeScript never pay for jiti, and
  // through require: importing its large CommonJS bundle from ESM makes Node
  // scan it for exports first, which costs more than loading it.
  const { createJiti } = createRequire(import.meta.url)('jiti') as typeof import('jiti');
  // Definition files get the very modules agentport runs on (virtual modules: no second copy transpiled or
  // loaded): its own API, and zod unless the folder has a zod of its own.
  const [api, ownZod] = await Promise.all([
    import(pathToFileURL(packageEntry()).href) as Promise<ModuleNamespace>,
    zodOf(options.agentsDir),
  ]);
  const { transpiler, cacheDir, onRead } = options;
  const modules: Record<string, unknown> = {
    ...Object.fromEntries(PACKAGE_SPECIFIERS.map((specifier) => [specifier, api])),
    ...(ownZod.shared ? { zod: ownZod.module } : {}),
  };
  // Files transpiled (and compiled) for the plain path that went to jiti after all: it takes the code from here,
  // provided it reads the same source (`serve --watch` may reload a file edited in between).
  const handed = new Map<string, { source: string; code: string }>();
  const jiti: Jiti = createJiti(import.meta.url, {
    virtualModules: modules,
    alias: ownZod.shared ? {} : { zod: ownZod.path },
    // jiti's own cache would keep an entry per file; only babel's output is worth keeping (transpile.ts).
    fsCache: false,
    moduleCache: false,
    interopDefault: false,
    // sucrase, with babel for what it does not cover (transpile.ts).
    transform: (transform) => {
      const { filename } = transform;
      if (filename) onRead?.(filename);
      const result = transformed(transform);
      // Before the code runs: what it imports is stamped before Node reads it.
      if (filename && typeof result.code === 'string') trace?.transpiled(filename, result.code);
      return result;
    },
  });
  const transformed = (transform: TransformOptions): TransformResult => {
    const { filename, source } = transform;
    const async = transform.async === true;
    const given = filename && async ? handed.get(filename) : undefined;
    if (given !== undefined && given.source === source) {
      handed.delete(filename!);
      return { code: given.code };
    }
    // What jiti read must be what the worker transpiled.
    const ready = transpiler && filename ? transpiler.take(filename, async) : undefined;
    return ready?.source === source && compileDefinition(ready.code, filename!, async)
      ? { code: ready.code }
      : transformDefinition(transform, cacheDir);
  };
  // Only a load whose files are stamped follows what Node loads itself (importTrace.ts).
  const trace = onRead
    ? new ImportTrace(options.agentsDir, onRead, (specifier, from, require) => resolved(jiti, specifier, from, require), modules)
    : undefined;
  trace?.folder();
  const viaJiti = (file: string) => jiti.import<ModuleNamespace>(file);
  const fallback = options.fresh ? (file: string) => freshImport(jiti, file, viaJiti) : viaJiti;

  /** A TypeScript file that imports only agentport and zod runs without jiti (plainModules.ts); the rest goes to jiti. */
  const load = (file: string): Promise<ModuleNamespace> =>
    // A file that fails to load because it imports a name agentport (or zod) does not export is told so.
    loadFile(file).catch((error: unknown) => {
      throw explainedBy(missingExportIn(file, modules), error);
    });
  const loadFile = (file: string): Promise<ModuleNamespace> => {
    if (!/\.m?ts$/.test(file)) {
      // Plain JavaScript, which jiti may hand to Node as it is.
      trace?.native(file);
      return fallback(file);
    }
    // Read by the worker when it got there first (transpileAhead.ts).
    const ready = transpiler?.take(file, true);
    let source: string;
    try {
      source = ready?.source ?? readFileSync(file, 'utf8');
    } catch {
      return fallback(file); // jiti reports it
    }
    onRead?.(file);
    const code =
      ready?.code ?? sucraseTransform({ filename: file, source, ts: true, async: true, interopDefault: false }, { checked: false });
    if (code === undefined) return fallback(file); // babel's
    const script = compileDefinition(code, file, true);
    // What does not compile goes to babel, which reports the syntax error with its position.
    if (!script) return fallback(file);
    if (!importsOnly(code, modules)) {
      handed.set(file, { source, code });
      return fallback(file).finally(() => handed.delete(file));
    }
    return runPlainModule(script, file, modules);
  };
  return {
    load,
    loadSync: (file) => {
      try {
        return jiti(file) as ModuleNamespace;
      } catch (error) {
        throw explainedBy(missingExportIn(file, modules), error);
      }
    },
  };
}

/** Where jiti's import of `specifier` from `from` leads, as a path (the resolution it loads with; `require`: its synchronous path's). */
function resolved(jiti: Jiti, specifier: string, from: string, require: boolean): string | undefined {
  try {
    const url = jiti.esmResolve(specifier, {
      parentURL: pathToFileURL(from).href,
      try: true,
      ...(require ? { conditions: ['node', 'require'] } : {}),
    });
    return url?.startsWith('file:') ? fileURLToPath(url) : undefined;
  } catch {
    return undefined;
  }
}

/** A named import of a module agentport provides that the module does not export, at its line and column. */
class MissingExportError extends Error {
  constructor(
    message: string,
    /** The name imported that is not exported. */
    readonly exportName: string,
    readonly file: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(message);
    this.name = 'MissingExportError';
  }
}

const NAMED_IMPORT = /\bimport\s+(type\s+)?(?:[\w$]+\s*,\s*)?\{([^}]*)\}\s*from\s*(['"])([^'"]+)\3/g;

/**
 * The missing export when it is what failed: the error names it, or is what calling an undefined
 * import gives. Otherwise the error as it came (a type imported without `type` is no runtime export,
 * and harmless).
 */
function explainedBy(missing: MissingExportError | undefined, error: unknown): unknown {
  if (!missing) return error;
  const message = error instanceof Error ? error.message : String(error);
  const escaped = missing.exportName.replace(/[$]/g, '\\$');
  // The name as a whole identifier: `Tool` is not named by "./ToolHelpers.js".
  if (new RegExp(`(^|[^\\w$])${escaped}($|[^\\w$])`).test(message)) return missing;
  // Calling or reading from the undefined import (sucrase turns `f()` into `_m.f.call(...)`); a type is never used so.
  let used: boolean;
  try {
    used = new RegExp(`\\b${escaped}\\s*[.(]`).test(readFileSync(missing.file, 'utf8'));
  } catch {
    used = false;
  }
  return used && /Cannot read properties of undefined/.test(message) ? missing : error;
}

/** The first name `file` imports from one of `modules` that it does not export (type-only imports aside). */
function missingExportIn(file: string, modules: Record<string, unknown>): MissingExportError | undefined {
  let source: string;
  try {
    source = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  for (const match of source.matchAll(NAMED_IMPORT)) {
    const [, typeOnly, names = '', , specifier = ''] = match;
    const module = modules[specifier];
    if (typeOnly || typeof module !== 'object' || module === null) continue;
    let offset = match.index + match[0].indexOf('{') + 1;
    for (const part of names.split(',')) {
      const name = part
        .replace(/\/\/[^\n]*|\/\*[\s\S]*?\*\//g, '')
        .trim()
        .split(/\s+as\s+/)[0]!
        .trim();
      const at = offset + part.indexOf(name);
      offset += part.length + 1;
      if (!name || name.startsWith('type ') || name in module) continue;
      const before = source.slice(0, at);
      const line = before.split('\n').length;
      const column = at - before.lastIndexOf('\n');
      const exported = Object.keys(module);
      return new MissingExportError(`"${name}" is not exported by ${specifier}${suggestName(name, exported)}`, name, file, line, column);
    }
  }
  return undefined;
}

/**
 * jiti hands ES modules in plain JavaScript (`.mjs`, or `.js` under a
 * `"type": "module"` package.json) to Node's own `import()`, whose cache
 * never forgets a file: a reload would get their first version again, the
 * file itself or a helper a definition imports. jiti's require transpiles
 * them instead, so a reload takes that path. What it cannot load (top-level
 * await) is imported as at start, a plain-JavaScript definition file under
 * a new URL: its own imports then stay as first loaded.
 */
async function freshImport(jiti: Jiti, file: string, load: (file: string) => Promise<ModuleNamespace>): Promise<ModuleNamespace> {
  try {
    return jiti(file) as ModuleNamespace;
  } catch (error) {
    // A TypeScript file goes the way it went at start: loaded so, or reported the same.
    if (!loadsAsNativeEsm(file)) return load(file);
    // At start jiti transpiles a plain-JavaScript file that Node could not load: its errors are this one.
    if (!(error instanceof Error && /await is only valid/.test(error.message))) throw error;
    return (await import(`${pathToFileURL(file).href}?reload=${++reloads}`)) as ModuleNamespace;
  }
}

let reloads = 0;

/** What jiti imports natively: `.mjs`, and `.js` whose nearest package.json says `"type": "module"`. */
function loadsAsNativeEsm(file: string): boolean {
  if (file.endsWith('.mjs')) return true;
  if (!file.endsWith('.js')) return false;
  for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        return (JSON.parse(readFileSync(manifest, 'utf8')) as { type?: unknown }).type === 'module';
      } catch {
        return false;
      }
    }
    if (path.dirname(dir) === dir) return false;
  }
}

/** The compiled entry (dist/index.js) or, when running from source, src/index.ts. */
function packageEntry(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const compiled = path.join(here, '..', 'index.js');
  return existsSync(compiled) ? compiled : path.join(here, '..', 'index.ts');
}

/** The folder's own zod (a path to alias), or agentport's (the loaded module, shared). */
async function zodOf(agentsDir: string): Promise<{ shared: true; module: unknown } | { shared: false; path: string }> {
  const ours = fileURLToPath(import.meta.resolve('zod'));
  let theirs: string | undefined;
  try {
    theirs = createRequire(path.join(agentsDir, 'package.json')).resolve('zod');
  } catch {
    // None: agentport's copy serves.
  }
  // The same package (a folder inside this repository, or one that links agentport's zod) is shared too.
  if (theirs === undefined || packageRoot(theirs) === packageRoot(ours)) return { shared: true, module: await import('zod') };
  return { shared: false, path: theirs };
}

/** The folder of the package a resolved file belongs to. */
function packageRoot(file: string): string {
  const marker = `${path.sep}node_modules${path.sep}zod${path.sep}`;
  const at = file.lastIndexOf(marker);
  return at >= 0 ? file.slice(0, at + marker.length) : path.dirname(file);
}

/** Where jiti (babel) says a file failed to parse: `ParseError: message` then ` /abs/file.ts:line:column` (0-based column). */
const PARSE_ERROR = /^(?:\w*Error: )?(?<message>.*?)\s*\n\s*(?<file>\S.*?):(?<line>\d+):(?<column>\d+)\s*$/s;

/**
 * The load issue for a definition file that could not be imported: a syntax
 * error names line and column (in `file`, as `path:line:column`) and shows a
 * code frame; anything else gives its first line.
 * @param absoluteFile the file being loaded
 * @param displayFile how issues name it
 * @param shown how issues name another file (one the definition imports)
 */
export function moduleLoadIssue(
  error: unknown,
  absoluteFile: string,
  displayFile: string,
  shown: (file: string) => string = (f) => f,
): LoadIssue {
  if (error instanceof MissingExportError) {
    let frame = '';
    try {
      frame = codeFrame(readFileSync(error.file, 'utf8'), error.line, error.column);
    } catch {
      // The position alone still helps.
    }
    return {
      severity: 'error',
      file: `${displayFile}:${error.line}:${error.column}`,
      message: `cannot load: ${error.message}${frame ? `\n${frame}` : ''}`,
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  const parse = /^(?:\w*Error: )?\w*(?:Parse|Syntax)Error\b/.test(message) ? PARSE_ERROR.exec(message) : null;
  if (parse?.groups) {
    const { file, line, column } = parse.groups as { file: string; line: string; column: string };
    const what = (parse.groups.message ?? '').replace(/^\w*(?:Parse|Syntax)Error:\s*/, '').trim();
    const lineNumber = Number(line);
    const columnNumber = Number(column) + 1;
    let frame = '';
    try {
      frame = codeFrame(readFileSync(file, 'utf8'), lineNumber, columnNumber);
    } catch {
      // The file went away or cannot be read: the position alone still helps.
    }
    const framed = frame ? `\n${frame}` : '';
    if (path.resolve(file) === path.resolve(absoluteFile)) {
      return {
        severity: 'error',
        file: `${displayFile}:${lineNumber}:${columnNumber}`,
        message: `cannot load: syntax error: ${what}${framed}`,
      };
    }
    // The syntax error is in a file the definition imports.
    return {
      severity: 'error',
      file: displayFile,
      message: `cannot load: syntax error in ${shown(file)}:${lineNumber}:${columnNumber}: ${what}${framed}`,
    };
  }
  return { severity: 'error', file: displayFile, message: `cannot load: ${message.split('\n')[0] ?? message}` };
}
