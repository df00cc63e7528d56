/**
 * Definition files transpiled by sucrase (src/registry/transpile.ts) behave as
 * they did under jiti's babel transform: `import.meta`, dynamic `import()`,
 * imports of files with top-level await, default and namespace imports
 * without interop, and what sucrase leaves to babel (namespaces, decorators,
 * code it would pass through invalid). Loaded through the real module loader.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createModuleLoader, moduleLoadIssue } from '../../src/registry/loadModule.js';
import { TRANSPILE_CACHE_FOLDER } from '../../src/registry/transpileCacheFolder.js';
import { tempDir } from '../support/mcpClients.js';
import { writeFiles } from '../support/folders.js';

/** The files of a transpile cache: a folder per definition file, an entry per mode in it. */
function cacheEntries(cacheDir: string): string[] {
  return readdirSync(cacheDir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name))
    .sort();
}

/** An entry's first line is the digest of the code after it (transpile.ts): rewrites the code and its digest. */
function rewriteEntry(entry: string, change: (code: string) => string): void {
  const text = readFileSync(entry, 'utf8');
  const code = change(text.slice(text.indexOf('\n') + 1));
  const digest = createHash('sha256').update(code).update('\0').digest('hex').slice(0, 40);
  writeFileSync(entry, `${text.slice(0, text.indexOf(' ') + 1)}${digest}\n${code}`);
}

function folder(files: Record<string, string>): string {
  const dir = tempDir('agentport-transpile-');
  writeFiles(dir, files);
  return dir;
}

describe('transpiling definition files', () => {
  it('keeps import.meta, dynamic import, top-level await in imported files, and imports without interop', async () => {
    const dir = folder({
      'lib/waits.ts': "export const greeting: string = await Promise.resolve('hello');\nexport default 5;\n",
      'lib/plain.ts': 'export const named = 1;\nexport default { value: 2 };\n',
      'prompts/p.ts': [
        "import five, { greeting } from '../lib/waits';",
        "import * as plain from '../lib/plain';",
        "import { definePrompt } from 'agentport';",
        'type Text = string;',
        'export const meta = { url: import.meta.url, dirname: import.meta.dirname, filename: import.meta.filename };',
        "export const later = () => import('../lib/plain');",
        'export const imported = { five, greeting, plain };',
        "export default definePrompt({ name: 'p', model: 'm', prompt: greeting as Text });",
      ].join('\n'),
    });
    const cacheRoot = tempDir('agentport-cache-');
    const cacheDir = path.join(cacheRoot, TRANSPILE_CACHE_FOLDER);
    // What an earlier format of the cache left goes with the first entry written; the rest of the cache stays.
    writeFiles(cacheRoot, { 'babel-2/0123/async-4567.js': 'old', 'catalog-v2.jsonl': '{}' });
    const loader = await createModuleLoader({ agentsDir: dir, cacheDir });
    const file = path.join(dir, 'prompts', 'p.ts');
    const module = await loader.load(file);
    expect(module.meta).toEqual({ url: pathToFileURL(file).href, dirname: path.dirname(file), filename: file });
    const imported = module.imported as { five: number; greeting: string; plain: Record<string, unknown> };
    expect(imported.five).toBe(5);
    expect(imported.greeting).toBe('hello');
    // The module itself, as babel gave it with interop off: `default` is the default export.
    expect(imported.plain.named).toBe(1);
    expect(imported.plain.default).toEqual({ value: 2 });
    const later = await (module.later as () => Promise<Record<string, unknown>>)();
    expect(later.named).toBe(1);
    expect((module.default as { prompt: string }).prompt).toBe('hello');

    // Only babel's output is cached (p.ts mentions import.meta), in a folder of the file's own; a new loader reads it.
    const entries = cacheEntries(cacheDir);
    expect(entries).toHaveLength(1);
    expect(readdirSync(cacheRoot).sort()).toEqual([TRANSPILE_CACHE_FOLDER, 'catalog-v2.jsonl']);
    const again = await (await createModuleLoader({ agentsDir: dir, cacheDir })).load(file);
    expect(again.meta).toEqual(module.meta);
    expect(cacheEntries(cacheDir)).toEqual(entries);
    // What is served is the entry (rewritten here, with the digest of its new code), not a new transform.
    const entry = entries[0]!;
    rewriteEntry(entry, (code) => code.replace('prompt: _waits.greeting', "prompt: 'from the cache'"));
    const cached = await (await createModuleLoader({ agentsDir: dir, cacheDir })).load(file);
    expect((cached.default as { prompt: string }).prompt).toBe('from the cache');
    // A changed source is transpiled again; its entry replaces the earlier source's, so edits do not grow the cache.
    writeFileSync(file, readFileSync(file, 'utf8').replace('greeting as Text', "'changed'"));
    const changed = await (await createModuleLoader({ agentsDir: dir, cacheDir })).load(file);
    expect((changed.default as { prompt: string }).prompt).toBe('changed');
    const replaced = cacheEntries(cacheDir);
    expect(replaced).toHaveLength(1);
    expect(replaced).not.toEqual(entries);
    expect(readFileSync(replaced[0]!, 'utf8')).toContain("'changed'");
    // Synchronously, top-level await cannot load (as before).
    expect(() => loader.loadSync(path.join(dir, 'lib', 'waits.ts'))).toThrow();
  });

  it("keeps babel's output per mode: a sync and an async load each have an entry, each replaced when the file changes", async () => {
    const dir = folder({ 'prompts/meta.ts': "export default { name: 'meta', file: import.meta.filename, version: 1 };\n" });
    const cacheRoot = tempDir('agentport-cache-');
    const cacheDir = path.join(cacheRoot, TRANSPILE_CACHE_FOLDER);
    const file = path.join(dir, 'prompts', 'meta.ts');
    // An earlier format of the cache goes with the first entry written; a later one (a newer agentport sharing the
    // directory) stays.
    writeFiles(cacheRoot, { 'babel-2/old/async.x.js': 'old', 'babel-99/new/async.y.js': 'new' });
    const loader = await createModuleLoader({ agentsDir: dir, cacheDir });
    expect((await loader.load(file)).default).toEqual({ name: 'meta', file, version: 1 });
    expect(loader.loadSync(file).default).toEqual({ name: 'meta', file, version: 1 });
    const modes = (entries: string[]) => entries.map((entry) => path.basename(entry).split('.')[0]).sort();
    const first = cacheEntries(cacheDir);
    expect(modes(first)).toEqual(['async', 'sync']);
    expect(readdirSync(cacheRoot).sort()).toEqual([TRANSPILE_CACHE_FOLDER, 'babel-99']);
    writeFileSync(file, readFileSync(file, 'utf8').replace('version: 1', 'version: 2'));
    const again = await createModuleLoader({ agentsDir: dir, cacheDir });
    expect((await again.load(file)).default).toEqual({ name: 'meta', file, version: 2 });
    // The async entry was replaced; the sync one is the earlier source's until a sync load of the new one.
    const afterAsync = cacheEntries(cacheDir);
    expect(modes(afterAsync)).toEqual(['async', 'sync']);
    expect(afterAsync.filter((entry) => first.includes(entry)).map((entry) => path.basename(entry).split('.')[0])).toEqual(['sync']);
    expect(again.loadSync(file).default).toEqual({ name: 'meta', file, version: 2 });
    const afterSync = cacheEntries(cacheDir);
    expect(modes(afterSync)).toEqual(['async', 'sync']);
    expect(afterSync.some((entry) => first.includes(entry))).toBe(false);
  });

  it.each([
    ['empty', () => ''],
    ['cut short', (text: string) => text.slice(0, Math.floor(text.length / 2))],
    ['garbage', (text: string) => text.replace(/[a-z]/g, '#')],
    ['the code changed under its digest', (text: string) => text.replace("'meta'", "'other'")],
  ])('[ST-5] transpiles a file again when its babel cache entry is damaged (%s), and rewrites the entry', async (_, damage) => {
    const dir = folder({ 'prompts/meta.ts': "export default { name: 'meta', file: import.meta.filename };\n" });
    const cacheDir = path.join(tempDir('agentport-cache-'), TRANSPILE_CACHE_FOLDER);
    const file = path.join(dir, 'prompts', 'meta.ts');
    expect((await (await createModuleLoader({ agentsDir: dir, cacheDir })).load(file)).default).toEqual({ name: 'meta', file });
    const [entry] = cacheEntries(cacheDir);
    const whole = readFileSync(entry!, 'utf8');
    writeFileSync(entry!, damage(whole));
    // What a power cut or a damaged disk leaves is never run: the file loads as it is, and the entry is whole again.
    expect((await (await createModuleLoader({ agentsDir: dir, cacheDir })).load(file)).default).toEqual({ name: 'meta', file });
    expect(cacheEntries(cacheDir)).toEqual([entry]);
    expect(readFileSync(entry!, 'utf8')).toBe(whole);
  });

  it('leaves to babel what sucrase does not transpile the same way', async () => {
    const dir = folder({
      'prompts/ns.ts': 'namespace Texts {\n  export const hello = "hi";\n}\nexport default { text: Texts.hello };\n',
      'prompts/decorated.ts':
        'function tag(target: any) {\n  target.tagged = true;\n}\n@tag\nclass Tagged {}\nexport default { tagged: (Tagged as any).tagged };\n',
      'prompts/broken.ts': "export default { name: 'x',, };\n",
    });
    const loader = await createModuleLoader({ agentsDir: dir, cacheDir: false });
    expect((await loader.load(path.join(dir, 'prompts', 'ns.ts'))).default).toEqual({ text: 'hi' });
    expect((await loader.load(path.join(dir, 'prompts', 'decorated.ts'))).default).toEqual({ tagged: true });
    // sucrase passes this through; babel reports it with its position.
    const broken = path.join(dir, 'prompts', 'broken.ts');
    const error = await loader.load(broken).catch((e: unknown) => e);
    const issue = moduleLoadIssue(error, broken, 'prompts/broken.ts');
    expect(issue.file).toBe('prompts/broken.ts:1:28');
    expect(issue.message).toMatch(/^cannot load: syntax error: Unexpected token\n> 1 \| export default/);
    expect(readFileSync(broken, 'utf8')).toContain(',,');
  });

  it('keeps what ES modules do where sucrase would not: hoisted imports, text that mentions import.meta, alias imports, undeclared exports', async () => {
    const dir = folder({
      'lib/h.ts': "((globalThis as any).__order ??= []).push('h');\nexport const helperValue = 'hv';\nexport const shapes = { a: 'A' };\n",
      'prompts/late.ts': [
        "(globalThis as any).__order.push('main');",
        'const early = helperValue;',
        "import { helperValue } from '../lib/h';",
        'export default { early };',
      ].join('\n'),
      'prompts/text.ts': [
        'export const text = `Vite exposes import.meta.env.VITE_KEY and import.meta.url`;',
        "export const single = 'see import.meta.url';",
        'export const matches = /import.meta.url/.test("import.meta.url");',
      ].join('\n'),
      'prompts/alias.ts': "import * as s from '../lib/h';\nimport A = s.shapes;\nexport default { a: A.a };\n",
      'prompts/typo.ts': 'const declared = 1;\nexport { declared, typo };\n',
    });
    const loader = await createModuleLoader({ agentsDir: dir, cacheDir: false });
    const order: string[] = [];
    (globalThis as { __order?: string[] }).__order = order;
    try {
      expect((await loader.load(path.join(dir, 'prompts', 'late.ts'))).default).toEqual({ early: 'hv' });
      expect(order).toEqual(['h', 'main']);
      expect(await loader.load(path.join(dir, 'prompts', 'text.ts'))).toMatchObject({
        text: 'Vite exposes import.meta.env.VITE_KEY and import.meta.url',
        single: 'see import.meta.url',
        matches: true,
      });
      expect((await loader.load(path.join(dir, 'prompts', 'alias.ts'))).default).toEqual({ a: 'A' });
    } finally {
      delete (globalThis as { __order?: string[] }).__order;
    }
    const typo = path.join(dir, 'prompts', 'typo.ts');
    const issue = moduleLoadIssue(await loader.load(typo).catch((e: unknown) => e), typo, 'prompts/typo.ts');
    expect(issue.file).toMatch(/^prompts\/typo\.ts:2:\d+$/);
    expect(issue.message).toContain('typo');
  });

  it('runs files that import only agentport and zod without jiti, as jiti ran them', async () => {
    const body = [
      "import { definePrompt } from 'agentport';",
      "import { z } from 'zod';",
      "import * as spec from '@standardagents/spec';",
      "const later: string = await Promise.resolve('awaited');",
      'export const lazy = () => import("zod").then((m) => typeof m.z.object);',
      'export const where = { file: __filename, dir: __dirname };',
      'export const same = spec.definePrompt === definePrompt;',
      "export default definePrompt({ name: 'p', model: 'm', prompt: later, requiredSchema: z.object({ q: z.string() }) });",
    ].join('\n');
    const dir = folder({
      'prompts/plain.ts': body,
      // jiti's own require, used directly: loaded by jiti.
      'prompts/resolves.ts': 'export const where = typeof (require as unknown as { resolve?: unknown }).resolve;\n',
      // The same file with a relative import: loaded by jiti.
      'prompts/helped.ts': `import { extra } from '../lib/extra';\n${body}\nexport const helped = extra;`,
      'lib/extra.ts': 'export const extra = 1;\n',
      // Throws while it runs: the error is the file's, as through jiti.
      'prompts/throws.ts': "import { z } from 'zod';\nthrow new Error('not today ' + typeof z.string);\n",
    });
    const loader = await createModuleLoader({ agentsDir: dir, cacheDir: false });
    const plainFile = path.join(dir, 'prompts', 'plain.ts');
    const plain = await loader.load(plainFile);
    const helped = await loader.load(path.join(dir, 'prompts', 'helped.ts'));
    expect(plain.where).toEqual({ file: plainFile, dir: path.dirname(plainFile) });
    expect(helped.helped).toBe(1);
    expect((await loader.load(path.join(dir, 'prompts', 'resolves.ts'))).where).toBe('function');
    for (const module of [plain, helped]) {
      expect(module.same).toBe(true);
      expect(await (module.lazy as () => Promise<string>)()).toBe('function');
      const prompt = module.default as { prompt: string; requiredSchema: { parse(v: unknown): unknown } };
      expect(prompt.prompt).toBe('awaited');
      expect(prompt.requiredSchema.parse({ q: 'x' })).toEqual({ q: 'x' });
    }
    expect(Object.keys(plain).sort()).toEqual(['default', 'lazy', 'same', 'where']);
    await expect(loader.load(path.join(dir, 'prompts', 'throws.ts'))).rejects.toThrow('not today function');
  });
});
