/**
 * The built command and the package's entry are one bundle (scripts/bundle.mjs): a definition's
 * `import { AgentportError } from 'agentport'` must meet the class the command itself throws and checks, so
 * each module the two share exists once, in a chunk both reach; and the command's entry holds nothing a chunk
 * imports back (which could run the command twice).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/paths.js';

const DIST = path.join(REPO_ROOT, 'dist');
const MAIN = path.join(DIST, 'cli', 'main.js');
const INDEX = path.join(DIST, 'index.js');
const chunkFiles = () =>
  readdirSync(path.join(DIST, 'cli'))
    .filter((name) => /^chunk-.*\.js$/.test(name))
    .map((name) => path.join(DIST, 'cli', name));

/** The bundle's files a file imports, statically or with `import()` (relative specifiers only: packages are external). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']+)["']/g)].map((m) => m[1]!);
  return specifiers.map((specifier) => path.resolve(path.dirname(file), specifier));
}

/** Every bundle file reachable from `entry`, itself included. */
function reachable(entry: string): Set<string> {
  const seen = new Set<string>();
  const queue = [entry];
  while (queue.length) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    queue.push(...importsOf(file));
  }
  return seen;
}

describe('the built bundle', () => {
  it('holds one copy of the modules the command and the package entry share, reached from both', () => {
    const defining = [INDEX, MAIN, ...chunkFiles()].filter((file) =>
      /\bAgentportError = class\b|\bclass AgentportError\b/.test(readFileSync(file, 'utf8')),
    );
    expect(defining).toHaveLength(1);
    const [chunk] = defining as [string];
    expect(reachable(MAIN).has(chunk)).toBe(true);
    expect(reachable(INDEX).has(chunk)).toBe(true);
  });

  it("exports nothing from the command's entry, and no file imports it", () => {
    expect(readFileSync(MAIN, 'utf8')).toMatch(/^export \{\};$/m);
    for (const file of [INDEX, ...chunkFiles()]) expect(importsOf(file)).not.toContain(MAIN);
  });

  it('keeps no chunk of an earlier build: every chunk is imported by another file of the bundle', () => {
    const imported = new Set([INDEX, MAIN, ...chunkFiles()].flatMap(importsOf));
    expect(chunkFiles().filter((chunk) => !imported.has(chunk))).toEqual([]);
  });

  it("recognises an AgentportError made by tsc's copy of the module, and the other way round", async () => {
    type Errors = { AgentportError: new (code: string, message: string) => Error; isAgentportError: (value: unknown) => boolean };
    const bundled = (await import(pathToFileURL(INDEX).href)) as Errors;
    const compiled = (await import(pathToFileURL(path.join(DIST, 'errors.js')).href)) as Errors;
    expect(bundled.AgentportError).not.toBe(compiled.AgentportError);
    expect(compiled.isAgentportError(new bundled.AgentportError('INTERNAL', 'from the bundle'))).toBe(true);
    expect(new compiled.AgentportError('INTERNAL', 'from tsc') instanceof bundled.AgentportError).toBe(true);
    expect(new Error('plain') instanceof bundled.AgentportError).toBe(false);
  });

  it('maps its code back to the TypeScript in src/ under node --enable-source-maps', () => {
    const script = `import { defineTool } from ${JSON.stringify(pathToFileURL(INDEX).href)};
      try { defineTool(null); } catch (error) { console.log(error.stack); }`;
    const stack = execFileSync(process.execPath, ['--enable-source-maps', '--input-type=module', '-e', script], { encoding: 'utf8' });
    // The innermost frame of the bundle's code: the line that made the error.
    const frame = /\((\S+):(\d+):\d+\)/.exec(stack);
    expect(frame, stack).not.toBeNull();
    const [, file, line] = frame as unknown as [string, string, string];
    expect(path.relative(REPO_ROOT, file)).toBe(path.join('src', 'definitions', 'brand.ts'));
    expect(readFileSync(file, 'utf8').split('\n')[Number(line) - 1]).toMatch(/new AgentportError\(|\bthrow\b/);
  });
});
