/**
 * The transform jiti runs on TypeScript definition files: sucrase (types
 * stripped, ES modules turned into the CommonJS jiti evaluates), which is
 * many times faster than jiti's own babel transform and, being plain
 * JavaScript, travels in a packed bundle to any platform. The output keeps
 * what babel's gives definition files: the same lines, dynamic `import()`
 * through jiti, static imports through jiti's `import` when the file is
 * loaded asynchronously (so an imported file may use top-level await too),
 * and no default-export interop (`interopDefault: false`).
 *
 * A file sucrase does not cover the same way goes to babel, as before: one
 * that sucrase cannot parse (babel then reports the syntax error in the
 * form {@link moduleLoadIssue} reads), decorators, `require`, `import.meta`
 * (rewriting it in sucrase's output would reach strings and regexes too),
 * `import x = ...` aliases, a local `export { ... }` list (babel refuses an
 * undeclared name; sucrase drops it as a type), an import after other
 * top-level code (sucrase does not hoist it), JSX, and anything that is
 * not TypeScript.
 *
 * Only babel's output is cached, one entry per file and mode: sucrase
 * transpiles a file in less time than reading a cache entry takes, and
 * writing thousands of entries cost a big folder's first start more than
 * all of its transpiling.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Script } from 'node:vm';
import type { TransformOptions, TransformResult } from 'jiti';
import { TRANSPILE_CACHE_FOLDER } from './transpileCacheFolder.js';

type Transform = (options: TransformOptions) => TransformResult;

const require = createRequire(import.meta.url);
let sucrase: typeof import('sucrase') | undefined;
let babel: Transform | undefined;

/** jiti's own transform (babel), loaded on first need: most folders never need it. */
function babelTransform(options: TransformOptions): TransformResult {
  babel ??= require(path.join(path.dirname(require.resolve('jiti')), '..', 'dist', 'babel.cjs')) as Transform;
  return babel(options);
}

/**
 * What sends a file to babel: a decorator (`@name` first on a line or after a
 * bracket or comma; sucrase leaves them as written) or an `accessor` field, a
 * namespace or `module` block (sucrase drops them), a `require(` call (sucrase's
 * output must hold only the calls it generated, see below), `import.meta`,
 * an `import x = ...` alias, or a local `export { ... }` list (see the module comment).
 */
const NEEDS_BABEL =
  /(?:^|[([,])\s*@[\w$]|\baccessor\s+[\w$#[]|\b(?:namespace|module)\s+[\w$.]+\s*\{|\brequire\s*\(|\bimport\.meta\b|\bimport\s+(?:type\s+)?[\w$]+\s*=|\bexport\s*\{[^}]*\}(?!\s*from\b)/m;
/** sucrase's form of a dynamic `import(x)`: `Promise.resolve().then(() => require(x))`. */
const DYNAMIC_IMPORT = /Promise\.resolve\(\)\.then\(\(\) => require\(/g;
const STATIC_REQUIRE = /\brequire\(/g;

/**
 * A definition file transpiled for jiti: by sucrase, or by babel (its output
 * cached in `cacheDir`, unless that is false).
 */
export function transformDefinition(options: TransformOptions, cacheDir: string | false = false): TransformResult {
  const code = sucraseTransform(options);
  return code === undefined ? cachedBabelTransform(options, cacheDir) : { code };
}

/**
 * sucrase's output for jiti, or undefined for a file that goes to babel (see the module comment).
 * `checked: false` leaves out the compile that finds what sucrase passed through invalid: the caller
 * compiles the output itself before it runs (the transpile-ahead worker, whose compile would not
 * serve the thread that runs the code).
 * @public (the transpile-ahead worker imports it by path: transpileAhead.ts)
 */
export function sucraseTransform(options: TransformOptions, { checked = true }: { checked?: boolean } = {}): string | undefined {
  const { source, filename } = options;
  if (!options.ts || !filename || /x$/.test(filename) || options.jsx || NEEDS_BABEL.test(source) || importsAfterCode(source)) {
    return undefined;
  }
  sucrase ??= require('sucrase') as typeof import('sucrase');
  let code: string;
  try {
    code = sucrase.transform(source, {
      transforms: ['typescript', 'imports'],
      filePath: filename,
      // `import * as ns` is the module itself and a default import reads its `default`, as babel does with interop off.
      enableLegacyTypeScriptModuleInterop: true,
      // Node 20 runs every modern syntax as written.
      disableESTransforms: true,
    }).code;
  } catch {
    // Babel gives the syntax error with the position and wording users see (or transpiles what sucrase does not know).
    return undefined;
  }
  code = code
    .replace(DYNAMIC_IMPORT, 'Promise.resolve().then(() => jitiImport(')
    // The rest are static imports and re-exports, at the top level: loaded the way the file itself is.
    .replace(STATIC_REQUIRE, options.async ? 'await jitiImport(' : 'require(');
  // sucrase passes some invalid code through unchanged: compiled as it will run, a syntax error goes to babel for its report.
  if (checked && !compileDefinition(code, filename, options.async === true)) return undefined;
  return code;
}

/**
 * A transpiled file compiled the way jiti compiles it (its module wrapper, its file name, so V8 finds the
 * compiled code again when jiti runs it), or undefined when it does not compile.
 */
export function compileDefinition(code: string, filename: string, async: boolean): Script | undefined {
  try {
    return new Script(wrapped(code, async), { filename });
  } catch {
    return undefined;
  }
}

/** jiti's version, which shapes babel's output as much as the source does. */
let jitiVersion: string | undefined;
/** Cache folders whose earlier formats' siblings were removed (once per folder and process). */
const swept = new Set<string>();

/**
 * Removes the folders earlier formats of this cache left beside it (`babel-2` beside `babel-3`, say). Only earlier
 * ones: a newer agentport sharing the cache directory keeps its own.
 */
function sweepEarlierFormats(cacheDir: string): void {
  if (swept.has(cacheDir) || path.basename(cacheDir) !== TRANSPILE_CACHE_FOLDER) return;
  const current = formatOf(TRANSPILE_CACHE_FOLDER)!;
  const parent = path.dirname(cacheDir);
  for (const name of readdirSync(parent)) {
    const format = formatOf(name);
    if (format !== undefined && format < current) rmSync(path.join(parent, name), { recursive: true, force: true });
  }
  swept.add(cacheDir);
}

/** The format number of a babel cache folder's name (`babel-3`: 3). */
function formatOf(name: string): number | undefined {
  const match = /^babel-(\d+)$/.exec(name);
  return match ? Number(match[1]) : undefined;
}

/** A cache key: the first 40 hex digits of a SHA-256. */
function digest(...parts: string[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part).update('\0');
  return hash.digest('hex').slice(0, 40);
}

/**
 * babel's output, from the cache when an entry was made from the same file, source, mode and jiti. Each file has a
 * folder of its own there, holding one entry per mode and jiti version: a new entry replaces the one of the file's
 * earlier source, so editing a file does not grow the cache. A failed transform (its error thrown, or jiti's error stub returned) is
 * not cached; neither is anything when the cache cannot be written.
 */
function cachedBabelTransform(options: TransformOptions, cacheDir: string | false): TransformResult {
  if (!cacheDir || !options.filename) return babelTransform(options);
  jitiVersion ??= (require('jiti/package.json') as { version: string }).version;
  const folder = path.join(cacheDir, digest(options.filename));
  // jiti's settings (the same for every load here but for its source maps) and its version: processes of different
  // versions sharing the cache directory keep an entry each instead of replacing each other's.
  const mode = `${options.async === true ? 'async' : 'sync'}${options.retainLines === true ? '-lines' : ''}.jiti-${jitiVersion}`;
  const name = `${mode}.${digest(JSON.stringify(options.babel ?? {}), options.source)}.js`;
  const entry = path.join(folder, name);
  const cached = readEntry(entry);
  if (cached !== undefined) return { code: cached };
  const result = babelTransform(options);
  if (result.error !== undefined || result.code.includes('__JITI_ERROR__')) return result;
  // Whole or not at all, whoever else writes the same entry at the same time.
  const temp = `${entry}.${process.pid}.${Date.now()}.tmp`;
  try {
    mkdirSync(folder, { recursive: true });
    writeFileSync(temp, `${ENTRY_MARK}${digest(result.code)}\n${result.code}`);
    renameSync(temp, entry);
  } catch {
    // Only speed depends on the cache; a half-made entry is not left behind.
    rmSync(temp, { force: true });
    return result;
  }
  try {
    sweepEarlierFormats(cacheDir);
  } catch {
    // Tried again by the next write: only space depends on it.
  }
  try {
    for (const earlier of readdirSync(folder)) {
      if (earlier !== name && earlier.startsWith(`${mode}.`) && earlier.endsWith('.js'))
        rmSync(path.join(folder, earlier), { force: true });
    }
  } catch {
    // What is left is never read; only space depends on this.
  }
  return result;
}

/**
 * The first line of an entry: this mark and the digest of the code after it. A rename makes an entry whole for
 * readers, but not for a power cut before the disk has it (an empty or cut entry) or a damaged disk: an entry whose
 * code does not match its digest is a miss, transpiled again and rewritten, never run.
 */
const ENTRY_MARK = '//agentport-babel ';

/** The code of a cache entry, or undefined when there is none or it is not whole. */
function readEntry(entry: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(entry, 'utf8');
  } catch {
    return undefined; // Not cached yet.
  }
  const end = text.indexOf('\n');
  if (end === -1 || !text.startsWith(ENTRY_MARK)) return undefined;
  const code = text.slice(end + 1);
  return text.slice(ENTRY_MARK.length, end) === digest(code) ? code : undefined;
}

/** A line that starts an import or a re-export, at the top level (column 0). */
const IMPORT_LINE = /^(?:import\b|export\s*(?:type\s*)?(?:\*|\{[^}]*\})\s*(?:as\s+[\w$]+\s*)?from\b)/;
/** A line that is no statement of its own: blank, a comment, or the continuation of one (indented, or closing a list). */
const NOT_A_STATEMENT = /^(?:\s|$|\/\/|\/\*|\*|[}\])])/;

/**
 * Whether an import follows other top-level code: ES modules (and babel)
 * run every import first, sucrase where it stands. Judged by lines that
 * start at column 0, so an indented import after code (or a template
 * literal line that looks like one) errs toward babel or goes unseen.
 */
function importsAfterCode(source: string): boolean {
  let code = false;
  for (const line of source.split('\n')) {
    if (IMPORT_LINE.test(line)) {
      if (code) return true;
    } else if (!NOT_A_STATEMENT.test(line)) code = true;
  }
  return false;
}

/** jiti's module wrapper: what it compiles (and V8 then finds in its compilation cache). */
function wrapped(code: string, async: boolean): string {
  return `(${async ? 'async ' : ''}function (exports, require, module, __filename, __dirname, jitiImport, jitiESMResolve) { ${code}\n});`;
}
