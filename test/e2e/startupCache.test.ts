/**
 * The start-up cache end to end: the built CLI over stdio with one data
 * folder, started twice. The second start answers from the cache (the same
 * tools/list as the first) and imports a definition module only when its
 * tool is called. With tool search on, the second start restores the search
 * index the first saved.
 */
import { existsSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeModelServer } from '../support/fakeModelServer.js';
import { connectStdio, tempDir } from '../support/mcpClients.js';
import { writeFiles } from '../support/folders.js';

const model = new FakeModelServer();
beforeAll(() => model.start());
afterAll(() => model.stop());

const MODEL = `import { defineModel } from 'agentport';\nexport default defineModel({ name: 'm', provider: 'openai', model: 'test-model' });\n`;

function promptFile(name: string, sideEffect = ''): string {
  return [
    "import { definePrompt } from 'agentport';",
    "import { z } from 'zod';",
    sideEffect,
    `export default definePrompt({ name: '${name}', toolDescription: 'The ${name} tool.', model: 'm', prompt: 'You are ${name}.', exposeAsTool: true,`,
    "  requiredSchema: z.object({ text: z.string().describe('What to work on'), count: z.number().int().optional() }) });",
    '',
  ].join('\n');
}

describe('serve with the start-up cache', () => {
  const root = tempDir('agentport-e2e-cache-');
  const agentsDir = path.join(root, 'agents');
  const dataDir = path.join(root, '.agentport');
  const marker = path.join(root, 'alpha-imported');
  const env = () => ({ OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'test-key' });
  /** Waits up to 10 s for a file a server writes on its own time. */
  const fileWritten = async (file: string) => {
    const deadline = Date.now() + 10_000;
    while (!existsSync(file) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    return existsSync(file);
  };
  /** A start on `dataDir`'s cache: it lists the tools without importing alpha.ts. */
  const answersFromCache = async (dataDir: string) => {
    rmSync(marker, { force: true });
    const warm = await connectStdio('legacy', { agentsDir, dataDir, env: env() });
    try {
      expect((await warm.client.listTools()).tools.map((tool) => tool.name)).toContain('alpha');
      expect(existsSync(marker)).toBe(false);
    } finally {
      await warm.client.close();
    }
  };

  beforeAll(() => {
    const files: Record<string, string> = {
      'models/m.ts': MODEL,
      'prompts/alpha.ts': promptFile(
        'alpha',
        `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(marker)}, String(Date.now()));`,
      ),
      'prompts/beta.ts': promptFile('beta'),
    };
    writeFiles(agentsDir, files);
  });

  it('lists the same tools from the cache as from a full load, and imports a module only when its tool is called', async () => {
    const cold = await connectStdio('legacy', { agentsDir, dataDir, env: env() });
    const coldList = await cold.client.listTools();
    await cold.client.close();
    expect(existsSync(path.join(dataDir, 'cache', 'catalog-v2.jsonl'))).toBe(true);
    expect(existsSync(marker)).toBe(true);
    rmSync(marker);

    const warm = await connectStdio('legacy', { agentsDir, dataDir, env: env() });
    try {
      const warmList = await warm.client.listTools();
      expect(warmList.tools).toEqual(coldList.tools);
      expect(warmList.tools.map((tool) => tool.name)).toEqual(['alpha', 'beta', 'run_wait', 'run_status', 'run_cancel']);
      expect((await warm.client.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual(['alpha', 'beta']);

      model.reply({ text: 'beta answered' });
      const beta = await warm.client.callTool({ name: 'beta', arguments: { text: 'hi' } });
      expect(beta.isError).toBeFalsy();
      expect(beta.structuredContent).toMatchObject({ response: 'beta answered' });
      expect(model.requests.at(-1)!.body.messages[0]).toMatchObject({ role: 'system', content: 'You are beta.' });
      // Calling beta imported beta.ts and the model, not alpha.ts.
      expect(existsSync(marker)).toBe(false);

      model.reply({ text: 'alpha answered' });
      const alpha = await warm.client.callTool({ name: 'alpha', arguments: { text: 'hi', count: 2 } });
      expect(alpha.structuredContent).toMatchObject({ response: 'alpha answered' });
      expect(existsSync(marker)).toBe(true);
      // Arguments are still checked against the definition's zod schema.
      const invalid = await warm.client.callTool({ name: 'alpha', arguments: { text: 'hi', count: 'two' } });
      expect(invalid.isError).toBe(true);
      expect((invalid.structuredContent as { error: { code: string } }).error.code).toBe('INVALID_ARGUMENTS');
    } finally {
      await warm.client.close();
    }
    expect(model.unexpected).toEqual([]);
  }, 60_000);

  it('[ST-5] writes the cache after it first answers: a moment later while it serves, or when it stops', async () => {
    const serving = path.join(root, '.agentport-serving');
    const first = await connectStdio('legacy', { agentsDir, dataDir: serving, env: env() });
    const cache = path.join(serving, 'cache', 'catalog-v2.jsonl');
    try {
      await first.client.listTools();
      const listedAt = Date.now();
      // Written by the server still running, after its answer (mtime has at worst a clock tick's grain).
      expect(await fileWritten(cache)).toBe(true);
      expect(statSync(cache).mtimeMs).toBeGreaterThanOrEqual(listedAt - 20);
    } finally {
      await first.client.close();
    }
    // The cache the running server wrote is the one the next start answers from.
    await answersFromCache(serving);
    // Stopped right after its answer, a server still leaves the cache (the other test's first start shows the same).
    const stopping = path.join(root, '.agentport-stopping');
    const second = await connectStdio('legacy', { agentsDir, dataDir: stopping, env: env() });
    await second.client.listTools();
    await second.client.close();
    expect(await fileWritten(path.join(stopping, 'cache', 'catalog-v2.jsonl'))).toBe(true);
    // The next start answers from it.
    await answersFromCache(stopping);
  });

  it('[ST-5] keys a cache written after its answer by the icon it listed, not by the icon at the time of writing', async () => {
    const iconAgents = path.join(root, 'icon-agents');
    const iconData = path.join(root, '.agentport-icon');
    const svg = (fill: string) => `<svg xmlns="http://www.w3.org/2000/svg"><rect width="1" height="1" fill="${fill}"/></svg>`;
    writeFiles(iconAgents, {
      'models/m.ts': MODEL,
      'prompts/gamma.ts': promptFile('gamma').replace('exposeAsTool: true,', "exposeAsTool: true, icon: '.assets/icon.svg',"),
      // In a dot-folder: the walk does not stamp it, the load stamps it as a file the catalogue read.
      '.assets/icon.svg': svg('red'),
    });
    const iconsOf = async (client: Awaited<ReturnType<typeof connectStdio>>['client']) =>
      JSON.stringify((await client.listTools()).tools.find((tool) => tool.name === 'gamma')?.icons);
    const cold = await connectStdio('legacy', { agentsDir: iconAgents, dataDir: iconData, env: env() });
    let listed: string;
    try {
      listed = await iconsOf(cold.client);
      // Changed after the answer, before the cache is written.
      writeFileSync(path.join(iconAgents, '.assets', 'icon.svg'), svg('blue'));
      expect(await fileWritten(path.join(iconData, 'cache', 'catalog-v2.jsonl'))).toBe(true);
    } finally {
      await cold.client.close();
    }
    const warm = await connectStdio('legacy', { agentsDir: iconAgents, dataDir: iconData, env: env() });
    try {
      const now = await iconsOf(warm.client);
      expect(now).not.toBe(listed);
      expect(now).toContain(Buffer.from(svg('blue')).toString('base64'));
    } finally {
      await warm.client.close();
    }
  });

  it('loads in full again, and refuses to start, when a file changed into one with errors', async () => {
    writeFileSync(path.join(agentsDir, 'prompts', 'beta.ts'), promptFile('beta').replace("model: 'm'", "model: 'nope'"));
    const { spawnSync } = await import('node:child_process');
    const { CLI } = await import('../support/paths.js');
    const run = spawnSync(process.execPath, [CLI, 'serve', '--dir', agentsDir], {
      env: { ...process.env, AGENTPORT_DATA_DIR: dataDir },
      input: '',
      encoding: 'utf8',
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('unknown model "nope"');
    expect(run.stderr).toMatch(/not starting: 1 error\(s\)/);
    // The cache of the clean folder is still there, but a start never uses it for this folder.
    expect(
      JSON.parse(readFileSync(path.join(dataDir, 'cache', 'catalog-v2.jsonl'), 'utf8').split('\n')[0]!).tools.map(
        (tool: { name: string }) => tool.name,
      ),
    ).toContain('beta');
  }, 60_000);
});

describe('serve with tool search and the start-up cache', () => {
  const root = tempDir('agentport-e2e-cache-search-');
  const agentsDir = path.join(root, 'agents');
  const dataDir = path.join(root, '.agentport');
  const savedIndex = path.join(dataDir, 'cache', 'search-v2.bin');
  const env = () => ({ OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'test-key' });
  const search = (client: Awaited<ReturnType<typeof connectStdio>>['client'], query: string) =>
    client.callTool({ name: 'tool_search', arguments: { query } }).then((result) => result.structuredContent);

  beforeAll(() => {
    writeFiles(agentsDir, {
      'models/m.ts': MODEL,
      'prompts/alpha.ts': promptFile('alpha'),
      'prompts/beta.ts': promptFile('beta'),
      'prompts/weather_forecast.ts': promptFile('weather_forecast').replace(
        'The weather_forecast tool.',
        'Forecast the weather for a city.',
      ),
    });
  });

  it('restores the saved search index on the next start, which searches and calls as the first did', async () => {
    const args = ['--tool-search', 'on'];
    const cold = await connectStdio('legacy', { agentsDir, dataDir, env: env(), args });
    let found: unknown;
    try {
      found = await search(cold.client, 'weather in a city');
      expect(found).toEqual({ tools: ['weather_forecast'], unknown: [] });
      // Saved once built, just after the search that waited for it.
      for (let waited = 0; !existsSync(savedIndex) && waited < 5000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(existsSync(savedIndex)).toBe(true);
    } finally {
      await cold.client.close();
    }
    const saved = statSync(savedIndex).mtimeMs;

    const warm = await connectStdio('legacy', { agentsDir, dataDir, env: env(), args });
    try {
      expect(await search(warm.client, 'weather in a city')).toEqual(found);
      expect(await search(warm.client, 'select:beta,nope')).toEqual({ tools: ['beta'], unknown: ['nope'] });
      model.reply({ text: 'forecast given' });
      const called = await warm.client.callTool({
        name: 'call_tool',
        arguments: { name: 'weather_forecast', arguments: { text: 'Paris' } },
      });
      expect(called.structuredContent).toMatchObject({ response: 'forecast given' });
    } finally {
      await warm.client.close();
    }
    // Restored, not built and saved again.
    expect(statSync(savedIndex).mtimeMs).toBe(saved);
    expect(model.unexpected).toEqual([]);
  }, 60_000);
});

describe('[ST-5] serve with a damaged start-up cache', () => {
  const env = () => ({ OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'test-key' });
  const cacheFile = (dataDir: string) => path.join(dataDir, 'cache', 'catalog-v2.jsonl');
  const searchIndex = (dataDir: string) => path.join(dataDir, 'cache', 'search-v2.bin');

  /** A folder served once (which saves its start-up cache), with the tools/list of that start. */
  async function served(args: string[] = [], alpha = promptFile('alpha')) {
    const root = tempDir('agentport-e2e-damaged-');
    const agentsDir = path.join(root, 'agents');
    const dataDir = path.join(root, '.agentport');
    writeFiles(agentsDir, { 'models/m.ts': MODEL, 'prompts/alpha.ts': alpha, 'prompts/beta.ts': promptFile('beta') });
    const cold = await connectStdio('legacy', { agentsDir, dataDir, env: env(), args });
    const { tools } = await cold.client.listTools();
    await cold.client.close();
    return { agentsDir, dataDir, tools };
  }

  /** Overwrites the line of the first tool's input schema, keeping its length (a disk's damage, not a shorter file). */
  function garbleFirstLine(dataDir: string) {
    const bytes = readFileSync(cacheFile(dataDir));
    const headerEnd = bytes.indexOf('\n');
    const header = JSON.parse(bytes.toString('utf8', 0, headerEnd)) as { tools: Array<{ inputSchema: number }> };
    const at = headerEnd + 1 + header.tools[0]!.inputSchema;
    bytes.fill('#', at, bytes.indexOf('\n', at));
    writeFileSync(cacheFile(dataDir), bytes);
  }

  it.each([
    ['a cache file cut short', (dataDir: string) => writeFileSync(cacheFile(dataDir), readFileSync(cacheFile(dataDir)).subarray(0, -40))],
    ['a tool line damaged in place', garbleFirstLine],
  ])(
    'starts with %s from a full load, with the same tools, and saves the cache again',
    async (_, damage) => {
      const { agentsDir, dataDir, tools } = await served();
      damage(dataDir);
      const warm = await connectStdio('legacy', { agentsDir, dataDir, env: env() });
      try {
        expect((await warm.client.listTools()).tools).toEqual(tools);
      } finally {
        await warm.client.close();
      }
      // Saved whole again: the next start reads every line of it.
      const header = JSON.parse(readFileSync(cacheFile(dataDir), 'utf8').split('\n')[0]!) as { tools: unknown[] };
      expect(header.tools).toHaveLength(2);
      const next = await connectStdio('legacy', { agentsDir, dataDir, env: env() });
      try {
        expect((await next.client.listTools()).tools).toEqual(tools);
      } finally {
        await next.client.close();
      }
    },
    60_000,
  );

  it('starts from a full load when the damaged line is a tool tool search lists at all times (alwaysLoad)', async () => {
    const args = ['--tool-search', 'on'];
    const alwaysLoaded = promptFile('alpha').replace('exposeAsTool: true,', 'exposeAsTool: true, alwaysLoad: true,');
    const { agentsDir, dataDir, tools } = await served(args, alwaysLoaded);
    expect(tools.map((tool) => tool.name)).toContain('alpha');
    garbleFirstLine(dataDir);
    const warm = await connectStdio('legacy', { agentsDir, dataDir, env: env(), args });
    try {
      expect((await warm.client.listTools()).tools).toEqual(tools);
    } finally {
      await warm.client.close();
    }
  }, 60_000);

  it("lists the other prompts when one prompt's line is damaged in place", async () => {
    const args = ['--tool-search', 'on'];
    const { agentsDir, dataDir } = await served(args);
    garbleFirstLine(dataDir);
    const warm = await connectStdio('legacy', { agentsDir, dataDir, env: env(), args });
    try {
      for (let i = 0; i < 2; i++) expect((await warm.client.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual(['beta']);
      expect(warm.stderr()).toMatch(/prompts: alpha left out of the list: start-up cache .* is not JSON/);
    } finally {
      await warm.client.close();
    }
  }, 60_000);

  it('keeps tool search working with a tool line damaged in place and no saved index', async () => {
    const args = ['--tool-search', 'on'];
    const { agentsDir, dataDir } = await served(args);
    rmSync(searchIndex(dataDir), { force: true });
    garbleFirstLine(dataDir);
    const warm = await connectStdio('legacy', { agentsDir, dataDir, env: env(), args });
    try {
      const search = (query: string) => warm.client.callTool({ name: 'tool_search', arguments: { query } });
      // alpha's line is the damaged one: it is left out of the index, and every search still answers.
      for (const query of ['select:beta', 'work on beta', 'select:beta,alpha']) {
        const result = await search(query);
        expect(result.isError).toBeFalsy();
        expect((result.structuredContent as { tools: string[] }).tools).toEqual(['beta']);
      }
      expect(warm.stderr()).toMatch(/tool search: alpha left out of the index: start-up cache .* is not JSON/);
    } finally {
      await warm.client.close();
    }
  }, 60_000);
});

describe('[ST-5] serve sees every change to what the definitions read', () => {
  const env = () => ({ OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'test-key' });
  const descriptionOf = async (agentsDir: string, dataDir: string) => {
    const server = await connectStdio('legacy', { agentsDir, dataDir, env: env() });
    try {
      return (await server.client.listTools()).tools.find((tool) => tool.name === 'beta')?.description;
    } finally {
      await server.client.close();
    }
  };

  it('after a same-size edit whose modification time was put back, and after a helper in a dot-folder changed', async () => {
    const root = tempDir('agentport-e2e-stale-');
    const agentsDir = path.join(root, 'agents');
    const dataDir = path.join(root, '.agentport');
    const beta = path.join(agentsDir, 'prompts', 'beta.ts');
    const helper = path.join(agentsDir, '.shared', 'desc.ts');
    writeFiles(agentsDir, {
      'models/m.ts': MODEL,
      '.shared/desc.ts': "export const SUFFIX = 'one';\n",
      'prompts/beta.ts': promptFile('beta', "import { SUFFIX } from '../.shared/desc';").replace("'The beta tool.'", "'AAAA ' + SUFFIX"),
    });
    expect(await descriptionOf(agentsDir, dataDir)).toBe('AAAA one');
    const { atime, mtime } = statSync(beta);
    writeFileSync(beta, readFileSync(beta, 'utf8').replace('AAAA', 'BBBB'));
    utimesSync(beta, atime, mtime);
    expect(await descriptionOf(agentsDir, dataDir)).toBe('BBBB one');
    writeFileSync(helper, "export const SUFFIX = 'two';\n");
    expect(await descriptionOf(agentsDir, dataDir)).toBe('BBBB two');
  }, 60_000);
});

describe('[ST-5] serve sees every change to what Node loads itself and to the packages the definitions import', () => {
  const env = () => ({ OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'test-key' });
  /** The id the start-up cache was last written with: the same after a start served from it. */
  const cacheId = (dataDir: string) =>
    (JSON.parse(readFileSync(path.join(dataDir, 'cache', 'catalog-v2.jsonl'), 'utf8').split('\n')[0]!) as { id: string }).id;
  /** The descriptions of beta's arguments as a start lists them. */
  const argumentsOf = async (agentsDir: string, dataDir: string) => {
    const server = await connectStdio('legacy', { agentsDir, dataDir, env: env() });
    try {
      const beta = (await server.client.listTools()).tools.find((tool) => tool.name === 'beta');
      const properties = (beta?.inputSchema.properties ?? {}) as Record<string, { description?: string }>;
      return Object.fromEntries(Object.entries(properties).map(([key, value]) => [key, value.description]));
    } finally {
      await server.client.close();
    }
  };
  /** A same-size edit whose modification time is put back (touch -r, cp -p, rsync -t). */
  const editKeepingTimes = (file: string, from: string, to: string) => {
    expect(to).toHaveLength(from.length);
    const { atime, mtime } = statSync(file);
    writeFileSync(file, readFileSync(file, 'utf8').replace(from, to));
    utimesSync(file, atime, mtime);
  };
  const beta = (imports: string, schema: string) =>
    [
      "import { definePrompt } from 'agentport';",
      "import { z } from 'zod';",
      imports,
      "export default definePrompt({ name: 'beta', toolDescription: 'The beta tool.', model: 'm', prompt: 'You are beta.', exposeAsTool: true,",
      `  requiredSchema: ${schema} });`,
      '',
    ].join('\n');

  it('after an edit to a plain .mjs helper outside the walk, to the helper it imports, and to the CommonJS and JSON files below', async () => {
    const root = tempDir('agentport-e2e-native-');
    const agentsDir = path.join(root, 'agents');
    const dataDir = path.join(root, '.agentport');
    // A dot-folder's helper (not walked) importing one outside the agents folder, which loads CommonJS and JSON.
    const schema = path.join(agentsDir, '.lib', 'schema.mjs');
    const fields = path.join(root, 'shared', 'fields.mjs');
    const labels = path.join(root, 'shared', 'labels.cjs');
    const json = path.join(root, 'shared', 'count.json');
    writeFiles(agentsDir, {
      'models/m.ts': MODEL,
      '.lib/schema.mjs': [
        "import { fields } from '../../shared/fields.mjs';",
        "export const schema = (z) => z.object({ text: z.string().describe('AAAA text'), ...fields(z) });",
        '',
      ].join('\n'),
      'prompts/beta.ts': beta("import { schema } from '../.lib/schema.mjs';", 'schema(z)'),
    });
    writeFiles(root, {
      'shared/fields.mjs': [
        "import labels from './labels.cjs';",
        "export const fields = (z) => ({ topic: z.string().describe('topic one'), count: z.number().describe(labels.count) });",
        '',
      ].join('\n'),
      'shared/labels.cjs': "module.exports = { count: require('./count.json').label };\n",
      'shared/count.json': '{ "label": "how many" }\n',
    });
    expect(await argumentsOf(agentsDir, dataDir)).toMatchObject({ text: 'AAAA text', topic: 'topic one', count: 'how many' });
    // Nothing changed: served from the cache.
    const id = cacheId(dataDir);
    expect(await argumentsOf(agentsDir, dataDir)).toMatchObject({ text: 'AAAA text' });
    expect(cacheId(dataDir)).toBe(id);

    editKeepingTimes(schema, 'AAAA', 'BBBB');
    expect(await argumentsOf(agentsDir, dataDir)).toMatchObject({ text: 'BBBB text', topic: 'topic one' });
    writeFileSync(fields, readFileSync(fields, 'utf8').replace('topic one', 'the topic, edited'));
    expect(await argumentsOf(agentsDir, dataDir)).toMatchObject({ text: 'BBBB text', topic: 'the topic, edited' });
    writeFileSync(labels, "module.exports = { count: require('./count.json').label + ' (at most 10)' };\n");
    expect(await argumentsOf(agentsDir, dataDir)).toMatchObject({ count: 'how many (at most 10)' });
    editKeepingTimes(json, 'how many', 'HOW MANY');
    expect(await argumentsOf(agentsDir, dataDir)).toMatchObject({ count: 'HOW MANY (at most 10)' });
  }, 120_000);

  /**
   * `@team/schemas` as npm installs it in `folder`: the package's files written anew and, unless `record` is false (a
   * package manager that keeps none, a copy by hand), npm's record of what node_modules holds.
   */
  const installTeamSchemas = (folder: string, version: string, description: string, { record = true } = {}) => {
    rmSync(path.join(folder, 'node_modules', '@team'), { recursive: true, force: true });
    writeFiles(folder, {
      'node_modules/@team/schemas/package.json': JSON.stringify({ name: '@team/schemas', version, type: 'module', exports: './index.js' }),
      'node_modules/@team/schemas/index.js': `export const teamFields = (z) => ({ team: z.string().describe(${JSON.stringify(description)}) });\n`,
    });
    if (!record) return;
    writeFiles(folder, {
      'node_modules/.package-lock.json': JSON.stringify({
        name: 'agents',
        lockfileVersion: 3,
        requires: true,
        packages: { 'node_modules/@team/schemas': { version, resolved: `https://registry.example/@team/schemas-${version}.tgz` } },
      }),
    });
  };

  it("after a package in the agents folder's node_modules is replaced by another version", async () => {
    const root = tempDir('agentport-e2e-package-');
    const agentsDir = path.join(root, 'agents');
    const dataDir = path.join(root, '.agentport');
    writeFiles(agentsDir, {
      'models/m.ts': MODEL,
      'package.json': JSON.stringify({ name: 'agents', private: true, dependencies: { '@team/schemas': '^1.0.0' } }),
      'prompts/beta.ts': beta("import { teamFields } from '@team/schemas';", 'z.object({ text: z.string(), ...teamFields(z) })'),
    });
    installTeamSchemas(agentsDir, '1.0.0', 'team 1.0.0');
    expect(await argumentsOf(agentsDir, dataDir)).toMatchObject({ team: 'team 1.0.0' });
    const id = cacheId(dataDir);
    expect(await argumentsOf(agentsDir, dataDir)).toMatchObject({ team: 'team 1.0.0' });
    expect(cacheId(dataDir)).toBe(id);

    // npm install @team/schemas@1.1.0: the package's files, and node_modules/.package-lock.json, written anew.
    installTeamSchemas(agentsDir, '1.1.0', 'team 1.1.0');
    expect(await argumentsOf(agentsDir, dataDir)).toMatchObject({ team: 'team 1.1.0' });

    // The package's files alone replaced, its package.json among them, npm's record left as it was.
    const record = statSync(path.join(agentsDir, 'node_modules', '.package-lock.json'));
    installTeamSchemas(agentsDir, '1.2.0', 'team 1.2.0', { record: false });
    expect(statSync(path.join(agentsDir, 'node_modules', '.package-lock.json')).ctimeMs).toBe(record.ctimeMs);
    expect(await argumentsOf(agentsDir, dataDir)).toMatchObject({ team: 'team 1.2.0' });
  }, 120_000);

  it('after a package is installed in the agents folder that shadows the one a folder above provided', async () => {
    const root = tempDir('agentport-e2e-shadow-');
    const agentsDir = path.join(root, 'agents');
    const dataDir = path.join(root, '.agentport');
    writeFiles(agentsDir, {
      'models/m.ts': MODEL,
      'prompts/beta.ts': beta("import { teamFields } from '@team/schemas';", 'z.object({ text: z.string(), ...teamFields(z) })'),
    });
    installTeamSchemas(root, '1.0.0', 'from the folder above');
    expect(await argumentsOf(agentsDir, dataDir)).toMatchObject({ team: 'from the folder above' });
    // Found first now, where the load looked and found none: no install record of the agents folder changed.
    installTeamSchemas(agentsDir, '2.0.0', "from the agents folder's own", { record: false });
    expect(await argumentsOf(agentsDir, dataDir)).toMatchObject({ team: "from the agents folder's own" });
  }, 120_000);
});
