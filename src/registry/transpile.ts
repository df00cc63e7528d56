/**
 * The transform jiti runs on TypeScript definition files: sucrase (types
 * stripped, ES modules turned into the CommonJS jiti evaluates), which is
 * many times faster than jiti's own babel transform and, being plain
 * JavaScript, travels in a packed bundle to any platform. The output keeps
 * what babel's gives definition files: the same lines, `import.meta.url`,
 * `dirname`, `filename`, `resolve` and `env`, dynamic `import()` through
 * jiti, static imports through jiti's `import` when the file is loaded
 * asynchronously (so an imported file may use top-level await too), and no
 * default-export interop (`interopDefault: false`).
 *
 * A file sucrase does not cover the same way goes to babel, as before: one
 * that sucrase cannot parse (babel then reports the syntax error in the
 * form {@link moduleLoadIssue} reads), decorators, `require`, `import.meta`
 * other than the forms above, JSX, and anything that is not TypeScript.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Script } from 'node:vm';
import type { TransformOptions, TransformResult } from 'jiti';

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
 * output must hold only the calls it generated, see below), or an
 * `import.meta` that is not one of the rewritten forms.
 */
const NEEDS_BABEL =
  /(?:^|[([,])\s*@[\w$]|\baccessor\s+[\w$#[]|\b(?:namespace|module)\s+[\w$.]+\s*\{|\brequire\s*\(|\bimport\.meta\b(?!\.(?:url|dirname|filename|resolve|env)\b)/m;
const IMPORT_META = /\bimport\.meta\.(url|dirname|filename|resolve|env)\b/g;
/** sucrase's form of a dynamic `import(x)`: `Promise.resolve().then(() => require(x))`. */
const DYNAMIC_IMPORT = /Promise\.resolve\(\)\.then\(\(\) => require\(/g;
const STATIC_REQUIRE = /\brequire\(/g;

export function transformDefinition(options: TransformOptions): TransformResult {
  const { source, filename } = options;
  if (!options.ts || !filename || /x$/.test(filename) || options.jsx || NEEDS_BABEL.test(source)) return babelTransform(options);
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
    return babelTransform(options);
  }
  const url = JSON.stringify(pathToFileURL(filename).href);
  const dirname = JSON.stringify(path.dirname(filename));
  const file = JSON.stringify(filename);
  code = code
    .replace(IMPORT_META, (_, what: string) =>
      what === 'url'
        ? url
        : what === 'dirname'
          ? dirname
          : what === 'filename'
            ? file
            : what === 'resolve'
              ? 'jitiESMResolve'
              : 'process.env',
    )
    .replace(DYNAMIC_IMPORT, 'Promise.resolve().then(() => jitiImport(')
    // The rest are static imports and re-exports, at the top level: loaded the way the file itself is.
    .replace(STATIC_REQUIRE, options.async ? 'await jitiImport(' : 'require(');
  // sucrase passes some invalid code through unchanged: compiled as jiti will run it, a syntax error goes to babel for its report.
  try {
    new Script(wrapped(code, options.async === true), { filename });
  } catch {
    return babelTransform(options);
  }
  return { code };
}

/** jiti's module wrapper: what it compiles (and V8 then finds in its compilation cache). */
function wrapped(code: string, async: boolean): string {
  return `(${async ? 'async ' : ''}function (exports, require, module, __filename, __dirname, jitiImport, jitiESMResolve) { ${code}\n});`;
}
