/**
 * The start-up cache of `serve` (src/cli/serveRegistry.ts): written by a
 * clean full load, used while every file of the folder is unchanged, ignored
 * and rebuilt otherwise; with it, definition modules are imported on first use.
 */
import { existsSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { types } from 'node:util';
import { describe, expect, it } from 'vitest';
import { loadForServe } from '../../src/cli/serveRegistry.js';
import { ToolSearchIndex } from '../../src/search/toolIndex.js';
import { startupCachePath } from '../../src/server/startupCache/cacheFile.js';
import { planSurface } from '../../src/server/toolSearchSurface.js';
import { tempDir } from '../support/mcpClients.js';
import { writeFiles } from '../support/folders.js';

const MODEL = `import { defineModel } from 'agentport';\nexport default defineModel({ name: 'm', provider: 'openai', model: 'x', apiKeyEnv: 'M_KEY' });\n`;

function prompt(name: string, extra = ''): string {
  return [
    "import { definePrompt } from 'agentport';",
    "import { z } from 'zod';",
    extra,
    `export default definePrompt({ name: '${name}', toolDescription: 'The ${name} tool.', model: 'm', prompt: 'Be ${name}.', exposeAsTool: true,`,
    "  requiredSchema: z.object({ text: z.string().describe('What to work on') }),",
    "  variables: [{ name: 'SECRET_TOKEN', type: 'secret', required: false, description: 'A token' }] });",
    '',
  ].join('\n');
}

/** A folder with a model and two exposed prompts; `marker` is written when alpha.ts is imported. */
function folder(): { agentsDir: string; dataDir: string; marker: string } {
  const root = tempDir('agentport-startup-');
  const agentsDir = path.join(root, 'agents');
  const marker = path.join(root, 'alpha-imported');
  const files: Record<string, string> = {
    'models/m.ts': MODEL,
    'prompts/alpha.ts': prompt('alpha', `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(marker)}, 'yes');`),
    'prompts/beta.ts': prompt('beta'),
  };
  writeFiles(agentsDir, files);
  return { agentsDir, dataDir: path.join(root, '.agentport'), marker };
}

const load = (f: { agentsDir: string; dataDir: string }) => loadForServe({ dir: f.agentsDir, dataDir: f.dataDir });
/** A start with tool search on, which reads no tool's line (with it off, a start reads them all). */
const loadSearching = (f: { agentsDir: string; dataDir: string }) =>
  loadForServe({ dir: f.agentsDir, dataDir: f.dataDir, searchSettings: { mode: 'on', threshold: 0 } });

describe('the start-up cache', () => {
  it('is written by a clean load and used by the next start, with the same catalogue', async () => {
    const f = folder();
    // An earlier version's cache is not read, and goes when the new one is written.
    const older = path.join(f.dataDir, 'cache', 'catalog-v1.json');
    writeFiles(path.dirname(older), { 'catalog-v1.json': '{}' });
    const cold = await load(f);
    expect(cold.startupCache).toBe('miss');
    expect(cold.errors).toEqual([]);
    expect(existsSync(startupCachePath(f.dataDir))).toBe(true);
    expect(existsSync(older)).toBe(false);
    rmSync(f.marker);

    const warm = await load(f);
    expect(warm.startupCache).toBe('hit');
    expect(warm.tools).toEqual(cold.tools);
    expect([...warm.registry.prompts.keys()]).toEqual(['alpha', 'beta']);
    expect(warm.registry.models.has('m')).toBe(true);
    // Nothing was imported to answer that.
    expect(existsSync(f.marker)).toBe(false);
  });

  it('imports a definition module only when it is first needed', async () => {
    const f = folder();
    await load(f);
    rmSync(f.marker);
    const { registry } = await load(f);
    expect(registry.lazy).toBeDefined();
    await registry.lazy!.prepare(['beta']);
    expect(existsSync(f.marker)).toBe(false);
    expect(registry.prompts.get('beta')?.systemText).toBe('Be beta.');
    expect(registry.models.get('m')?.definition.model).toBe('x');
    await registry.lazy!.prepare(['alpha']);
    expect(existsSync(f.marker)).toBe(true);
    expect(registry.prompts.get('alpha')?.definition.requiredSchema?.shape.text).toBeDefined();
  });

  it('imports what a prepared prompt includes, and resolves its system text', async () => {
    const f = folder();
    writeFileSync(
      path.join(f.agentsDir, 'prompts', 'gamma.ts'),
      "import { definePrompt } from 'agentport';\nexport default definePrompt({ name: 'gamma', toolDescription: 'Gamma.', model: 'm', exposeAsTool: true, prompt: [{ type: 'text', content: 'First: ' }, { type: 'include', prompt: 'alpha' }] });\n",
    );
    await load(f);
    rmSync(f.marker);
    const { registry } = await load(f);
    await registry.lazy!.prepare(['gamma']);
    // alpha.ts was imported by prepare, for the include.
    expect(existsSync(f.marker)).toBe(true);
    expect(registry.prompts.get('gamma')?.systemText).toBe('First: Be alpha.');
  });

  it('reads a definition no call prepared synchronously when something asks for it', async () => {
    const f = folder();
    await load(f);
    rmSync(f.marker);
    const { registry } = await load(f);
    await registry.lazy!.prepare();
    expect(existsSync(f.marker)).toBe(false);
    expect(registry.prompts.get('alpha')?.name).toBe('alpha');
    expect(existsSync(f.marker)).toBe(true);
  });

  it("keeps each tool's input schema and annotations on a line of its own, parsed when first read", async () => {
    const f = folder();
    const cold = await load(f);
    const lines = readFileSync(startupCachePath(f.dataDir), 'utf8').split('\n');
    const header = JSON.parse(lines[0]!) as { tools: Array<Record<string, unknown>> };
    expect(typeof header.tools[0]!.inputSchema).toBe('number');
    expect(
      lines
        .slice(1)
        .filter(Boolean)
        .map((line) => JSON.parse(line) as unknown),
    ).toEqual(cold.tools!.flatMap((tool) => [tool.inputSchema, tool.annotations]));

    const warm = await loadSearching(f);
    const beta = warm.tools!.find((tool) => tool.name === 'beta')!;
    expect(unparsed(beta, 'inputSchema')).toBe(true);
    expect(beta.inputSchema).toEqual(cold.tools!.find((tool) => tool.name === 'beta')!.inputSchema);
    // Read once, it is the tool's own value from then on.
    expect(Object.getOwnPropertyDescriptor(beta, 'inputSchema')).toMatchObject({ writable: true, enumerable: true });
    expect(beta.inputSchema).toBe(beta.inputSchema);
    // In the same order as a full load's: a reload compares tools by their JSON (registrySurface.ts).
    expect(JSON.stringify(warm.tools)).toBe(JSON.stringify(cold.tools));
  });

  it("names the cache file, and removes it, when a tool's schema line read after the start was damaged by hand", async () => {
    const f = folder();
    await load(f);
    damageFirstLine(f);
    const file = startupCachePath(f.dataDir);
    // With tool search on, a start reads no tool's line.
    const warm = await loadSearching(f);
    expect(warm.startupCache).toBe('hit');
    expect(() => warm.tools![0]!.inputSchema).toThrow(
      /start-up cache .*catalog-v2\.jsonl: the inputSchema of tool alpha is not JSON.*the file was removed, and the next start loads the folder in full/,
    );
    expect(existsSync(file)).toBe(false);
    expect((await load(f)).startupCache).toBe('miss');
    expect((await load(f)).startupCache).toBe('hit');
  });

  it("[ST-5] loads in full when a start that reads every tool's line (tool search off) finds one damaged", async () => {
    const f = folder();
    const cold = await load(f);
    damageFirstLine(f);
    const next = await load(f);
    expect(next.startupCache).toBe('miss');
    expect(next.errors).toEqual([]);
    expect(next.tools).toEqual(cold.tools);
    expect((await load(f)).startupCache).toBe('hit');
  });

  it('[ST-5] never keeps a failed build of the search index: the next search builds it again', async () => {
    const f = folder();
    const cold = await load(f);
    let failures = 1;
    // A tool whose description cannot be read once (what a damaged read does), then can.
    const flaky = Object.defineProperty({ ...cold.tools![0]!, name: 'flaky' }, 'description', {
      get: () => {
        if (failures-- > 0) throw new Error('read failed');
        return 'A flaky tool.';
      },
      enumerable: true,
    });
    const surface = planSurface([...cold.tools!, flaky], { mode: 'on', threshold: 0 });
    await expect(surface.index!()).rejects.toThrow('read failed');
    expect((await surface.index!()).search('flaky').tools.map((tool) => tool.name)).toContain('flaky');
  });

  it('keeps the secret names, so hiding them imports nothing', async () => {
    const f = folder();
    await load(f);
    const { registry } = await load(f);
    expect(registry.lazy!.secretNames).toEqual({ variables: ['SECRET_TOKEN'], apiKeyEnvs: ['M_KEY'] });
  });

  describe('is rebuilt when the folder changed', () => {
    const cases: Array<[string, (f: ReturnType<typeof folder>) => void]> = [
      [
        'a file changed size',
        (f) => writeFileSync(path.join(f.agentsDir, 'prompts', 'beta.ts'), prompt('beta').replace('The beta tool.', 'The new beta tool.')),
      ],
      [
        'a file changed mtime only',
        (f) => {
          const file = path.join(f.agentsDir, 'prompts', 'beta.ts');
          const later = new Date(statSync(file).mtimeMs + 5000);
          utimesSync(file, later, later);
        },
      ],
      ['a file was added', (f) => writeFileSync(path.join(f.agentsDir, 'prompts', 'gamma.ts'), prompt('gamma'))],
      ['a file was removed', (f) => rmSync(path.join(f.agentsDir, 'prompts', 'beta.ts'))],
      ['a helper module beside the definitions changed', (f) => writeFileSync(path.join(f.agentsDir, 'prompts', 'notes.md'), 'new')],
      [
        'the cache file was cut short',
        (f) => writeFileSync(startupCachePath(f.dataDir), readFileSync(startupCachePath(f.dataDir)).subarray(0, -10)),
      ],
      [
        'a tool line of the cache file lost its end',
        (f) => {
          const text = readFileSync(startupCachePath(f.dataDir), 'utf8');
          // The newline after the first tool's schema made a space: the file keeps its length, two lines become one.
          const second = text.indexOf('\n', text.indexOf('\n') + 1);
          writeFileSync(startupCachePath(f.dataDir), `${text.slice(0, second)} ${text.slice(second + 1)}`);
        },
      ],
      ['the cache file is corrupt', (f) => writeFileSync(startupCachePath(f.dataDir), '{"format": 1, "tools": [')],
      ['the cache file is from another version', (f) => rewriteCache(f, (cache) => ({ ...cache, agentport: '0.0.0-other' }))],
      ['the cache file has another format', (f) => rewriteCache(f, (cache) => ({ ...cache, format: 99 }))],
      [
        'the cache file was written by another version of Node',
        (f) => rewriteCache(f, (cache) => ({ ...cache, resolution: JSON.stringify(['0.0.0', process.env.NODE_PATH ?? '']) })),
      ],
      [
        'the cache file points a definition at no file',
        (f) => rewriteCache(f, (cache) => ({ ...cache, definitions: [['prompt', 'alpha', 99]] })),
      ],
      [
        "the cache file points a tool's schema at no line",
        (f) =>
          rewriteCache(f, (cache) => {
            firstTool(cache).inputSchema += 1;
            return cache;
          }),
      ],
      [
        'the cache file has no line for a tool',
        (f) => rewriteCache(f, (cache) => ({ ...cache, tools: [{ ...firstTool(cache), annotations: undefined }] })),
      ],
      ['the cache file has a tool that is not an object', (f) => rewriteCache(f, (cache) => ({ ...cache, tools: [null] }))],
    ];
    it.each(cases)('%s', async (_, change) => {
      const f = folder();
      await load(f);
      change(f);
      const next = await load(f);
      expect(next.startupCache).toBe('miss');
      expect(next.errors).toEqual([]);
      // Rebuilt: the start after that uses it again.
      expect((await load(f)).startupCache).toBe('hit');
    });

    it('[ST-5] NODE_PATH changed (it can make an import find another package)', async () => {
      const f = folder();
      await load(f);
      const before = process.env.NODE_PATH;
      process.env.NODE_PATH = path.join(f.agentsDir, '..', 'shared-packages');
      try {
        expect((await load(f)).startupCache).toBe('miss');
        expect((await load(f)).startupCache).toBe('hit');
      } finally {
        if (before === undefined) delete process.env.NODE_PATH;
        else process.env.NODE_PATH = before;
      }
      expect((await load(f)).startupCache).toBe('miss');
    });

    const helperPrompt = (from: string) =>
      prompt('beta')
        .replace("'The beta tool.'", 'DESCRIPTION')
        .replace("import { z } from 'zod';", `import { z } from 'zod';\nimport { DESCRIPTION } from '${from}';`);
    const helperCases: Array<[string, Record<string, string>, (f: ReturnType<typeof folder>) => void]> = [
      [
        'a helper module in a dot-folder changed',
        { '.shared/desc.ts': "export const DESCRIPTION = 'one';\n", 'prompts/beta.ts': helperPrompt('../.shared/desc') },
        (f) => writeFileSync(path.join(f.agentsDir, '.shared', 'desc.ts'), "export const DESCRIPTION = 'two';\n"),
      ],
      [
        'a helper dot-file changed',
        { 'prompts/.desc.ts': "export const DESCRIPTION = 'one';\n", 'prompts/beta.ts': helperPrompt('./.desc') },
        (f) => writeFileSync(path.join(f.agentsDir, 'prompts', '.desc.ts'), "export const DESCRIPTION = 'two';\n"),
      ],
      [
        'a helper module reached through a linked folder changed',
        { 'prompts/beta.ts': helperPrompt('../linked/desc') },
        (f) => writeFileSync(path.join(f.agentsDir, '..', 'elsewhere', 'desc.ts'), "export const DESCRIPTION = 'two';\n"),
      ],
    ];
    it.each(helperCases)('[ST-5] %s', async (_, files, change) => {
      const f = folder();
      writeFiles(f.agentsDir, files);
      writeFiles(path.join(f.agentsDir, '..', 'elsewhere'), { 'desc.ts': "export const DESCRIPTION = 'one';\n" });
      symlinkSync(path.join(f.agentsDir, '..', 'elsewhere'), path.join(f.agentsDir, 'linked'));
      expect((await load(f)).tools?.find((tool) => tool.name === 'beta')?.description).toBe('one');
      expect((await load(f)).startupCache).toBe('hit');
      change(f);
      const next = await load(f);
      expect(next.startupCache).toBe('miss');
      expect(next.tools?.find((tool) => tool.name === 'beta')?.description).toBe('two');
      expect((await load(f)).startupCache).toBe('hit');
    });

    /** `@team/<name>` in `folder`'s node_modules: a plain ES module package whose index.js says `description`. */
    const teamPackage = (folder: string, name: string, description: string): void => {
      writeFiles(folder, {
        [`node_modules/@team/${name}/package.json`]: JSON.stringify({
          name: `@team/${name}`,
          version: '1.0.0',
          type: 'module',
          exports: './index.js',
        }),
        [`node_modules/@team/${name}/index.js`]: `export const DESCRIPTION = ${JSON.stringify(description)};\n`,
      });
    };
    const above = (f: ReturnType<typeof folder>, ...parts: string[]) => path.join(f.agentsDir, '..', ...parts);
    const nativeCases: Array<
      [string, Record<string, string>, (f: ReturnType<typeof folder>) => void, (f: ReturnType<typeof folder>) => void]
    > = [
      [
        'a plain .mjs helper in a dot-folder changed',
        { '.lib/desc.mjs': "export const DESCRIPTION = 'one';\n", 'prompts/beta.ts': helperPrompt('../.lib/desc.mjs') },
        () => {},
        (f) => writeFileSync(path.join(f.agentsDir, '.lib', 'desc.mjs'), "export const DESCRIPTION = 'two';\n"),
      ],
      [
        'a CommonJS file that a CommonJS file a plain helper imports requires changed',
        {
          '.lib/desc.mjs': "import words from '../../shared/words.cjs';\nexport const DESCRIPTION = words.one;\n",
          'prompts/beta.ts': helperPrompt('../.lib/desc.mjs'),
        },
        (f) =>
          writeFiles(above(f, 'shared'), {
            'words.cjs': "module.exports = require('./more.cjs');\n",
            'more.cjs': "module.exports = { one: 'one' };\n",
          }),
        (f) => writeFileSync(above(f, 'shared', 'more.cjs'), "module.exports = { one: 'two' };\n"),
      ],
      [
        'a module a plain helper imports dynamically changed',
        {
          '.lib/desc.mjs': "export const DESCRIPTION = (await import('./late.mjs')).TEXT;\n",
          '.lib/late.mjs': "export const TEXT = 'one';\n",
          'prompts/beta.ts': helperPrompt('../.lib/desc.mjs'),
        },
        () => {},
        (f) => writeFileSync(path.join(f.agentsDir, '.lib', 'late.mjs'), "export const TEXT = 'two';\n"),
      ],
      [
        'a lockfile appeared in the folder above',
        { 'prompts/beta.ts': helperPrompt('@team/desc') },
        (f) => teamPackage(above(f), 'desc', 'one'),
        (f) => writeFileSync(above(f, 'yarn.lock'), '# yarn lockfile v1\n'),
      ],
      [
        'a lockfile went away',
        { 'prompts/beta.ts': helperPrompt('@team/desc') },
        (f) => {
          teamPackage(f.agentsDir, 'desc', 'one');
          writeFileSync(above(f, 'pnpm-lock.yaml'), "lockfileVersion: '9.0'\n");
        },
        (f) => rmSync(above(f, 'pnpm-lock.yaml')),
      ],
      [
        "npm's record of what node_modules holds was rewritten",
        { 'prompts/beta.ts': helperPrompt('@team/desc'), 'node_modules/.package-lock.json': '{}' },
        (f) => teamPackage(f.agentsDir, 'desc', 'one'),
        (f) => writeFileSync(path.join(f.agentsDir, 'node_modules', '.package-lock.json'), '{}'),
      ],
      [
        "an imported package's package.json was written anew",
        { 'prompts/beta.ts': helperPrompt('@team/desc') },
        (f) => teamPackage(f.agentsDir, 'desc', 'one'),
        (f) => teamPackage(f.agentsDir, 'desc', 'two'),
      ],
      [
        'a package was installed nearer than the one the load found',
        { 'prompts/beta.ts': helperPrompt('@team/desc') },
        (f) => teamPackage(above(f), 'desc', 'one'),
        (f) => teamPackage(f.agentsDir, 'desc', 'two'),
      ],
      [
        'a file of a linked workspace package changed',
        { 'prompts/beta.ts': helperPrompt('@team/linked') },
        (f) => {
          writeFiles(above(f, 'packages', 'linked'), {
            'package.json': JSON.stringify({ name: '@team/linked', type: 'module', exports: './index.js' }),
            'index.js': "export { DESCRIPTION } from './desc.js';\n",
            'desc.js': "export const DESCRIPTION = 'one';\n",
          });
          writeFiles(f.agentsDir, { 'node_modules/@team/.keep': '' });
          symlinkSync(above(f, 'packages', 'linked'), path.join(f.agentsDir, 'node_modules', '@team', 'linked'));
        },
        (f) => writeFileSync(above(f, 'packages', 'linked', 'desc.js'), "export const DESCRIPTION = 'two';\n"),
      ],
    ];
    it.each(nativeCases)('[ST-5] %s', async (_, files, setUp, change) => {
      const f = folder();
      writeFiles(f.agentsDir, files);
      setUp(f);
      const cold = await load(f);
      expect(cold.errors).toEqual([]);
      expect(cold.tools?.find((tool) => tool.name === 'beta')?.description).toBe('one');
      expect((await load(f)).startupCache).toBe('hit');
      change(f);
      expect((await load(f)).startupCache).toBe('miss');
      expect((await load(f)).startupCache).toBe('hit');
    });

    it('[ST-5] stamps the files Node loads itself and the packages, not the files inside a package', async () => {
      const f = folder();
      const root = path.dirname(f.agentsDir);
      writeFiles(f.agentsDir, {
        '.lib/desc.mjs':
          "import { DESCRIPTION as D } from '@team/desc';\nimport data from './data.json' with { type: 'json' };\nexport const DESCRIPTION = D + data.x;\n",
        '.lib/data.json': '{ "x": "" }',
        'prompts/beta.ts': helperPrompt('../.lib/desc.mjs'),
      });
      teamPackage(f.agentsDir, 'desc', 'one');
      expect((await load(f)).errors).toEqual([]);
      const header = JSON.parse(readFileSync(startupCachePath(f.dataDir), 'utf8').split('\n')[0]!) as { read: Array<[string, number]> };
      const present = header.read.filter(([, size]) => size >= 0).map(([file]) => path.relative(root, file).split(path.sep).join('/'));
      expect(present).toEqual(['agents/.lib/desc.mjs', 'agents/node_modules/@team/desc/package.json', 'agents/.lib/data.json']);
      const absent = header.read.filter(([, size]) => size < 0).map(([file]) => file);
      // The install records of the agents folder and every folder above it, present or not.
      expect(absent).toContain(path.join(root, 'yarn.lock'));
      expect(absent).toContain(path.join(f.agentsDir, 'node_modules', '.package-lock.json'));
      expect(absent).toContain(path.join(path.parse(root).root, 'package-lock.json'));
      expect(header.read.map(([file]) => file)).not.toContain(path.join(f.agentsDir, 'node_modules', '@team', 'desc', 'index.js'));
    });

    it('[ST-5] an icon file in a dot-folder changed', async () => {
      const f = folder();
      writeFiles(f.agentsDir, {
        '.icons/beta.svg': '<svg xmlns="http://www.w3.org/2000/svg"/>',
        'prompts/beta.ts': prompt('beta').replace('exposeAsTool: true,', "exposeAsTool: true, icon: '.icons/beta.svg',"),
      });
      await load(f);
      expect((await load(f)).startupCache).toBe('hit');
      writeFileSync(path.join(f.agentsDir, '.icons', 'beta.svg'), '<svg xmlns="http://www.w3.org/2000/svg"><g/></svg>');
      const next = await load(f);
      expect(next.startupCache).toBe('miss');
      const icon = next.tools?.find((tool) => tool.name === 'beta')?.icons?.[0]?.src ?? '';
      expect(Buffer.from(icon.split(',')[1]!, 'base64').toString()).toContain('<g/>');
    });

    it('a changed description is served after the rebuild', async () => {
      const f = folder();
      await load(f);
      writeFileSync(path.join(f.agentsDir, 'prompts', 'beta.ts'), prompt('beta').replace('The beta tool.', 'The new beta tool.'));
      await load(f);
      const warm = await load(f);
      expect(warm.startupCache).toBe('hit');
      expect(warm.tools?.find((tool) => tool.name === 'beta')?.description).toBe('The new beta tool.');
    });
  });

  it('is not written for a folder with load errors, and an old one is not used for it', async () => {
    const f = folder();
    await load(f);
    writeFileSync(path.join(f.agentsDir, 'prompts', 'beta.ts'), prompt('beta').replace("model: 'm'", "model: 'missing'"));
    const broken = await load(f);
    expect(broken.startupCache).toBe('miss');
    expect(broken.errors.map((issue) => issue.message).join('\n')).toMatch(/unknown model "missing"/);
    const again = await load(f);
    expect(again.startupCache).toBe('miss');
    expect(again.errors).not.toEqual([]);
  });

  it('makes a call fail, not the server, when a file edited after the start no longer loads', async () => {
    const f = folder();
    await load(f);
    const { registry } = await load(f);
    writeFileSync(path.join(f.agentsDir, 'prompts', 'beta.ts'), 'export default definePrompt({ name: ');
    await expect(registry.lazy!.prepare(['beta'])).rejects.toMatchObject({ code: 'DEFINITION_INVALID' });
  });

  it('keeps the search index of its catalogue for the next start, and only for that catalogue', async () => {
    const f = folder();
    const cold = await load(f);
    expect(cold.savedSearchIndex?.read()).toBeUndefined();
    const search = async (loaded: Awaited<ReturnType<typeof load>>) => {
      const surface = planSurface(loaded.tools!, { mode: 'on', threshold: 0 }, loaded.savedSearchIndex);
      const index = await surface.index!();
      return index.search('work on alpha').tools.map((tool) => tool.name);
    };
    const older = path.join(f.dataDir, 'cache', 'search-v1.json');
    writeFiles(path.dirname(older), { 'search-v1.json': '{}' });
    const built = await search(cold);
    // Saved once built, after the search that waited for it; an earlier version's saved index goes.
    await new Promise((resolve) => setImmediate(resolve));
    expect(existsSync(older)).toBe(false);
    const warm = await loadSearching(f);
    expect(warm.startupCache).toBe('hit');
    const saved = warm.savedSearchIndex?.read();
    expect(saved).toBeDefined();
    expect(ToolSearchIndex.restore(saved, warm.tools!)).toBeDefined();
    expect(await search(warm)).toEqual(built);
    // Restoring and searching it read no tool's input schema.
    for (const tool of warm.tools!) expect(unparsed(tool, 'inputSchema')).toBe(true);

    // A changed folder has another catalogue: the saved index is not its own.
    writeFileSync(path.join(f.agentsDir, 'prompts', 'gamma.ts'), prompt('gamma'));
    const changed = await load(f);
    expect(changed.startupCache).toBe('miss');
    expect(changed.savedSearchIndex?.read()).toBeUndefined();
  });

  it('gives --watch the icons outside the walk to look at, for a folder that cannot be cached too', async () => {
    const f = folder();
    const svg = '<svg xmlns="http://www.w3.org/2000/svg"/>';
    writeFiles(f.agentsDir, {
      '.assets/icon.svg': svg,
      'prompts/beta.ts': prompt('beta').replace('exposeAsTool: true,', "exposeAsTool: true, icon: '.assets/icon.svg',"),
    });
    const icon = path.join(f.agentsDir, '.assets', 'icon.svg');
    const cacheable = await load(f);
    expect(existsSync(startupCachePath(f.dataDir))).toBe(true);
    expect(cacheable.dependencies.map(([file]) => file)).toContain(icon);
    // A .prompty file makes the folder one that is never cached.
    writeFiles(f.agentsDir, {
      'prompts/faq.prompty': '---\nname: faq\ndescription: Answers.\nmodel: m\n---\nsystem:\nAnswer.\n',
    });
    const uncached = await load(f);
    expect(uncached.errors).toEqual([]);
    expect(uncached.savedSearchIndex).toBeUndefined();
    expect(uncached.dependencies.map(([file]) => file)).toContain(icon);
  });

  describe('[ST-5] environment variables the definitions read', () => {
    const VARIABLE = 'AGENTPORT_TEST_BETA_DESCRIPTION';
    const OTHER = 'AGENTPORT_TEST_UNRELATED';
    /** Runs `work` with `name` set to `value` (or unset), then puts it back. */
    async function withVariable<T>(name: string, value: string | undefined, work: () => Promise<T>): Promise<T> {
      const before = process.env[name];
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
      try {
        return await work();
      } finally {
        if (before === undefined) delete process.env[name];
        else process.env[name] = before;
      }
    }
    const description = (loaded: Awaited<ReturnType<typeof load>>) => loaded.tools?.find((tool) => tool.name === 'beta')?.description;
    const reading = (expression: string, extra = '') => prompt('beta', extra).replace("'The beta tool.'", expression);

    it('loads in full when one has another value or is gone, and keeps a digest of the values, never the values', async () => {
      const f = folder();
      // The description tells the value's length, so the value itself appears nowhere in the catalogue.
      writeFiles(f.agentsDir, { 'prompts/beta.ts': reading(`'Length ' + String(process.env.${VARIABLE}?.length ?? 'unset')`) });
      for (const value of ['secret-one', 'a-longer-secret', undefined]) {
        await withVariable(VARIABLE, value, async () => {
          const cold = await load(f);
          expect(cold.startupCache).toBe('miss');
          expect(description(cold)).toBe(`Length ${value?.length ?? 'unset'}`);
          const warm = await load(f);
          expect(warm.startupCache).toBe('hit');
          expect(description(warm)).toBe(`Length ${value?.length ?? 'unset'}`);
        });
      }
      await withVariable(VARIABLE, 'secret-one', async () => {
        await load(f);
        const saved = readFileSync(startupCachePath(f.dataDir), 'utf8');
        expect(saved).toContain(VARIABLE);
        expect(saved).not.toContain('secret-one');
        // A variable nobody read changes nothing.
        await withVariable(OTHER, 'x', async () => expect((await load(f)).startupCache).toBe('hit'));
      });
    });

    it('leaves out what packages read for their own ends', async () => {
      const f = folder();
      writeFiles(f.agentsDir, {
        'node_modules/@team/flags/package.json': JSON.stringify({
          name: '@team/flags',
          version: '1.0.0',
          type: 'module',
          exports: './index.js',
        }),
        'node_modules/@team/flags/index.js': `export const verbose = process.env.${OTHER} === '1';\nexport const DESCRIPTION = 'fixed';\n`,
        'prompts/beta.ts': reading('DESCRIPTION', "import { DESCRIPTION } from '@team/flags';"),
      });
      expect((await load(f)).startupCache).toBe('miss');
      await withVariable(OTHER, '1', async () => expect((await load(f)).startupCache).toBe('hit'));
    });

    it('makes the whole environment part of the key when a definition lists it', async () => {
      const f = folder();
      writeFiles(f.agentsDir, { 'prompts/beta.ts': reading(`'Knows ' + String(Object.keys(process.env).includes('${OTHER}'))`) });
      expect(description(await load(f))).toBe('Knows false');
      expect((await load(f)).startupCache).toBe('hit');
      await withVariable(OTHER, 'x', async () => {
        const next = await load(f);
        expect(next.startupCache).toBe('miss');
        expect(description(next)).toBe('Knows true');
      });
    });

    /** The variables the saved cache names. */
    const namedVariables = (f: { dataDir: string }): unknown => {
      const text = readFileSync(startupCachePath(f.dataDir), 'utf8');
      return (JSON.parse(text.slice(0, text.indexOf('\n'))) as { environment: { names: unknown } }).environment.names;
    };

    it("names none when the definitions read none: agentport's own reads, Node's and a child process's do not count", async () => {
      const f = folder();
      writeFiles(f.agentsDir, {
        'prompts/beta.ts': prompt(
          'beta',
          "import { execFileSync } from 'node:child_process';\nexecFileSync(process.execPath, ['-e', '']);",
        ),
      });
      expect((await load(f)).startupCache).toBe('miss');
      expect(namedVariables(f)).toEqual([]);
      await withVariable(OTHER, 'x', async () => expect((await load(f)).startupCache).toBe('hit'));
    });

    it('counts reads in helpers jiti loads, through node:process, and while the catalogue is built', async () => {
      const f = folder();
      writeFiles(f.agentsDir, {
        'lib/words.ts': `export const word = () => process.env.${VARIABLE} ?? 'unset';\n`,
        'prompts/beta.ts': reading('word()', "import { word } from '../lib/words';"),
        'prompts/gamma.ts': prompt('gamma', "import { env } from 'node:process';\nexport const flag = env.AGENTPORT_TEST_GAMMA;"),
        'prompts/delta.ts': prompt('delta').replace(
          "z.object({ text: z.string().describe('What to work on') })",
          "z.object({ text: z.lazy(() => z.string().describe(process.env.AGENTPORT_TEST_DELTA ?? 'unset')) })",
        ),
      });
      await load(f);
      expect(namedVariables(f)).toEqual([VARIABLE, 'AGENTPORT_TEST_DELTA', 'AGENTPORT_TEST_GAMMA']);
      // After the load, process.env and node:process's export are the environment itself again.
      expect(types.isProxy(process.env)).toBe(false);
      expect(types.isProxy((await import('node:process')).env)).toBe(false);
      await withVariable('AGENTPORT_TEST_DELTA', 'changed', async () => expect((await load(f)).startupCache).toBe('miss'));
    });

    it('lets definitions write variables, and keys on the values the load started with', async () => {
      const f = folder();
      writeFiles(f.agentsDir, {
        'prompts/beta.ts': reading(`(process.env.${VARIABLE} ??= 'default') + ' ' + (process.env.${OTHER} = 'overwritten')`),
      });
      await withVariable(OTHER, 'given', async () => {
        const cold = await load(f);
        expect(cold.errors).toEqual([]);
        expect(description(cold)).toBe('default overwritten');
      });
      // The load's own writes do not make the next start a full load (nor did the write count as a read of OTHER).
      delete process.env[VARIABLE];
      delete process.env[OTHER];
      expect(namedVariables(f)).toEqual([VARIABLE]);
      expect((await load(f)).startupCache).toBe('hit');
      await withVariable(VARIABLE, 'given', async () => expect((await load(f)).startupCache).toBe('miss'));
    });
  });

  describe('[ST-5] files the definitions read themselves', () => {
    const description = (loaded: Awaited<ReturnType<typeof load>>) => loaded.tools?.find((tool) => tool.name === 'beta')?.description;
    const reading = (expression: string, extra = '') => prompt('beta', extra).replace("'The beta tool.'", expression);
    /** A file beside the agents folder, outside it: `<root>/shared/<name>`. */
    const beside = (f: { agentsDir: string }, name: string) => path.join(path.dirname(f.agentsDir), 'shared', name);
    /** The files the saved cache keys beyond the walk. */
    const keyedFiles = (f: { dataDir: string }): string[] => {
      const text = readFileSync(startupCachePath(f.dataDir), 'utf8');
      return (JSON.parse(text.slice(0, text.indexOf('\n'))) as { read: Array<[string]> }).read.map(([file]) => file);
    };

    // Each definition reads <root>/shared/desc.md when it is imported (a plain ES module helper's function, called then:
    // Node keeps the helper itself loaded from one load in this process to the next).
    const cases: Array<[string, (file: string) => Record<string, string>]> = [
      [
        'readFileSync imported by name in a plain ES module helper, given a URL',
        () => ({
          '.lib/desc.mjs':
            "import { readFileSync } from 'node:fs';\nexport const descriptionOf = () => readFileSync(new URL('../../shared/desc.md', import.meta.url), 'utf8');\n",
          'prompts/beta.ts': reading('descriptionOf()', "import { descriptionOf } from '../.lib/desc.mjs';"),
        }),
      ],
      [
        'fs.readFileSync in the definition, given a Buffer',
        (file) => ({
          'prompts/beta.ts': reading(`fs.readFileSync(Buffer.from(${JSON.stringify(file)}), 'utf8')`, "import fs from 'node:fs';"),
        }),
      ],
      [
        'readFile of node:fs/promises, awaited at the top level of the definition',
        (file) => ({
          'prompts/beta.ts': reading(
            'DESCRIPTION',
            `import { readFile } from 'node:fs/promises';\nconst DESCRIPTION = await readFile(${JSON.stringify(file)}, 'utf8');`,
          ),
        }),
      ],
      [
        'readFile of node:fs/promises imported by name in a plain ES module helper',
        () => ({
          '.lib/desc.mjs':
            "import { readFile } from 'node:fs/promises';\nexport const descriptionOf = () => readFile(new URL('../../shared/desc.md', import.meta.url), 'utf8');\n",
          'prompts/beta.ts': reading(
            'DESCRIPTION',
            "import { descriptionOf } from '../.lib/desc.mjs';\nconst DESCRIPTION = await descriptionOf();",
          ),
        }),
      ],
      [
        'fs.readFile with a callback, in a helper outside the folder',
        (file) => ({
          '../lib/desc.ts': [
            "import fs from 'node:fs';",
            'export const DESCRIPTION = await new Promise<string>((resolve, reject) =>',
            `  fs.readFile(${JSON.stringify(file)}, 'utf8', (error, text) => (error ? reject(error) : resolve(text))),`,
            ');',
            '',
          ].join('\n'),
          'prompts/beta.ts': reading('DESCRIPTION', "import { DESCRIPTION } from '../../lib/desc';"),
        }),
      ],
    ];
    it.each(cases)('%s: an edit makes the next start load in full and serve what it holds', async (_, files) => {
      const f = folder();
      const file = beside(f, 'desc.md');
      writeFiles(path.dirname(file), { 'desc.md': 'Reads one.' });
      writeFiles(f.agentsDir, files(file));
      const cold = await load(f);
      expect(cold.errors).toEqual([]);
      expect(description(cold)).toBe('Reads one.');
      // `--watch` looks at it too.
      expect(cold.dependencies.map(([dependency]) => dependency)).toContain(file);
      expect((await load(f)).startupCache).toBe('hit');
      writeFileSync(file, 'Reads two, now.');
      const next = await load(f);
      expect(next.startupCache).toBe('miss');
      expect(description(next)).toBe('Reads two, now.');
      expect((await load(f)).startupCache).toBe('hit');
    });

    it('a file whose existence a definition checks with existsSync appears, then goes away', async () => {
      const f = folder();
      const file = beside(f, 'enabled');
      writeFiles(f.agentsDir, {
        'prompts/beta.ts': reading(
          `existsSync(${JSON.stringify(file)}) ? 'Enabled.' : 'Disabled.'`,
          "import { existsSync } from 'node:fs';",
        ),
      });
      expect(description(await load(f))).toBe('Disabled.');
      expect((await load(f)).startupCache).toBe('hit');
      writeFiles(path.dirname(file), { enabled: '' });
      const appeared = await load(f);
      expect(appeared.startupCache).toBe('miss');
      expect(description(appeared)).toBe('Enabled.');
      expect((await load(f)).startupCache).toBe('hit');
      rmSync(file);
      const gone = await load(f);
      expect(gone.startupCache).toBe('miss');
      expect(description(gone)).toBe('Disabled.');
    });

    it('a file a definition reads and then writes (a memo kept on disk) is keyed as the load left it', async () => {
      const f = folder();
      const file = beside(f, 'memo.json');
      writeFiles(path.dirname(file), { 'memo.json': '{"loads":0}' });
      writeFiles(f.agentsDir, {
        'prompts/beta.ts': reading(
          'DESCRIPTION',
          [
            "import { readFileSync, writeFileSync } from 'node:fs';",
            `const memo = JSON.parse(readFileSync(${JSON.stringify(file)}, 'utf8')) as { loads: number };`,
            `writeFileSync(${JSON.stringify(file)}, JSON.stringify({ loads: memo.loads + 1 }));`,
            "const DESCRIPTION = 'Loaded ' + String(memo.loads + 1) + ' time(s).';",
          ].join('\n'),
        ),
      });
      expect(description(await load(f))).toBe('Loaded 1 time(s).');
      // Not a full load at every start: the file is keyed as the load wrote it.
      const warm = await load(f);
      expect(warm.startupCache).toBe('hit');
      expect(description(warm)).toBe('Loaded 1 time(s).');
      expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ loads: 1 });
      // Someone else's edit still counts.
      writeFileSync(file, '{"loads":5}');
      const edited = await load(f);
      expect(edited.startupCache).toBe('miss');
      expect(description(edited)).toBe('Loaded 6 time(s).');
      expect((await load(f)).startupCache).toBe('hit');
    });

    it("keys what the definitions read, not what a package reads for its own ends, nor agentport's own reads", async () => {
      const f = folder();
      const own = beside(f, 'desc.md');
      const packages = beside(f, 'package-settings.json');
      writeFiles(path.dirname(own), { 'desc.md': 'Reads one.', 'package-settings.json': '{}' });
      writeFiles(f.agentsDir, {
        'node_modules/@team/settings/package.json': JSON.stringify({
          name: '@team/settings',
          version: '1.0.0',
          type: 'module',
          exports: './index.js',
        }),
        'node_modules/@team/settings/index.js': `import { readFileSync } from 'node:fs';\nexport const settings = JSON.parse(readFileSync(${JSON.stringify(packages)}, 'utf8'));\n`,
        'prompts/beta.ts': reading(
          `readFileSync(${JSON.stringify(own)}, 'utf8')`,
          "import { readFileSync } from 'node:fs';\nimport { settings } from '@team/settings';\nexport const used = settings;",
        ),
      });
      const cold = await load(f);
      expect(cold.errors).toEqual([]);
      const keyed = keyedFiles(f);
      expect(keyed).toContain(own);
      expect(keyed).not.toContain(packages);
      // Read by the loader, stamped by the walk: not keyed again by path.
      expect(keyed).not.toContain(path.join(f.agentsDir, 'prompts', 'beta.ts'));
      writeFileSync(packages, '{ "changed": true }');
      expect((await load(f)).startupCache).toBe('hit');
    });

    it('puts node:fs back as it was after the load, also after a load with errors and one that throws', async () => {
      const fsModule = (await import('node:fs')).default;
      const named = await import('node:fs');
      const namedPromises = await import('node:fs/promises');
      const originals = [fsModule.readFileSync, fsModule.readFile, fsModule.existsSync, fsModule.promises.readFile];
      const restored = () => {
        expect([fsModule.readFileSync, fsModule.readFile, fsModule.existsSync, fsModule.promises.readFile]).toEqual(originals);
        expect([named.readFileSync, named.readFile, named.existsSync, namedPromises.readFile]).toEqual(originals);
      };
      const f = folder();
      const file = beside(f, 'desc.md');
      writeFiles(path.dirname(file), { 'desc.md': 'Reads one.' });
      writeFiles(f.agentsDir, {
        'prompts/beta.ts': reading(`readFileSync(${JSON.stringify(file)}, 'utf8')`, "import { readFileSync } from 'node:fs';"),
      });
      expect((await load(f)).errors).toEqual([]);
      restored();
      writeFiles(f.agentsDir, { 'prompts/broken.ts': 'export default {' });
      const failed = await load(f);
      expect(failed.errors).not.toEqual([]);
      // Watched while it loaded all the same.
      expect(failed.dependencies.map(([dependency]) => dependency)).toContain(file);
      restored();
      // A default export that throws when it is looked at stops the load itself.
      writeFiles(f.agentsDir, {
        'prompts/broken.ts':
          "export default new Proxy({}, { get() { throw new Error('unreadable'); }, has() { throw new Error('unreadable'); } });\n",
      });
      await expect(load(f)).rejects.toThrow('unreadable');
      restored();
    });
  });
});

/** Makes the first byte of the first tool's schema line, `{`, a `[`: the file keeps its length and lines. */
function damageFirstLine(f: { dataDir: string }): void {
  const file = startupCachePath(f.dataDir);
  const bytes = readFileSync(file);
  const headerEnd = bytes.indexOf('\n');
  bytes[headerEnd + 1 + firstTool(JSON.parse(bytes.toString('utf8', 0, headerEnd)) as Record<string, unknown>).inputSchema] = 0x5b;
  writeFileSync(file, bytes);
}

/** Rewrites the cache's header line, moving the tools' line offsets by however much its length changed. */
function rewriteCache(f: { dataDir: string }, change: (cache: Record<string, unknown>) => Record<string, unknown>): void {
  const file = startupCachePath(f.dataDir);
  const text = readFileSync(file, 'utf8');
  const headerEnd = text.indexOf('\n');
  // The lines' offsets count from the first line after the header: they stay right whatever its length.
  writeFileSync(file, `${JSON.stringify(change(JSON.parse(text.slice(0, headerEnd)) as Record<string, unknown>))}${text.slice(headerEnd)}`);
}

/** Whether a cached tool's field is still the accessor that parses it (an accessor's descriptor has no value). */
const unparsed = (tool: object, field: string) => !('value' in Object.getOwnPropertyDescriptor(tool, field)!);

/** A tool in the cache's header: its input schema and annotations are the byte offsets of their lines (after the header). */
type CachedTool = Record<string, unknown> & { inputSchema: number; annotations: number };
const firstTool = (cache: Record<string, unknown>) => (cache.tools as CachedTool[])[0]!;
