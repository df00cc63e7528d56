/**
 * `serve --watch` end to end: the built CLI serves a copy of a small agents
 * folder, the test edits the copy, and the real MCP client sees what a host
 * would: list_changed notifications when the exposed tools change (and only
 * then), the new tools listed and callable on the scripted model server, and
 * a folder with an error reported on stderr while the previous definitions
 * go on being served.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FakeModelServer } from '../support/fakeModelServer.js';
import { connectHttp, connectStdio, startHttpServer, tempDir, type Era, type HttpServerProcess } from '../support/mcpClients.js';
import { FIXTURES } from '../support/paths.js';

const FIXTURE = path.join(FIXTURES, 'agents', 'watch');
const POLL = { timeout: 10_000, interval: 50 };

const model = new FakeModelServer();
beforeAll(async () => {
  await model.start();
});
afterAll(async () => {
  await model.stop();
});

interface Served {
  dir: string;
  client: Client;
  stderr: () => string;
  /** list_changed notifications received so far. */
  seen: { tools: number; prompts: number };
  /** How many reloads the server has logged. */
  reloads: () => number;
}

const open: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((close) => close()));
  expect(model.unexpected).toEqual([]);
});

function copyOfFixture(): string {
  const dir = path.join(tempDir('agentport-watch-'), 'agents');
  cpSync(FIXTURE, dir, { recursive: true });
  open.push(async () => rmSync(path.dirname(dir), { recursive: true, force: true }));
  return dir;
}

function follow(client: Client): Served['seen'] {
  const seen = { tools: 0, prompts: 0 };
  client.setNotificationHandler('notifications/tools/list_changed', () => void seen.tools++);
  client.setNotificationHandler('notifications/prompts/list_changed', () => void seen.prompts++);
  return seen;
}

async function serveStdio(era: Era = 'legacy', prepare?: (dir: string) => void): Promise<Served> {
  const dir = copyOfFixture();
  prepare?.(dir);
  const { client, stderr } = await connectStdio(era, {
    agentsDir: dir,
    args: ['--watch'],
    env: { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'test-key' },
  });
  open.push(() => client.close().catch(() => {}));
  const seen = follow(client);
  // 2026-07-28 clients hear of changes on a subscriptions/listen stream.
  if (era === 'modern') await client.listen({ toolsListChanged: true, promptsListChanged: true });
  // Edits made before the watcher is ready would go unseen.
  await expect.poll(stderr, POLL).toMatch(/reloading it on changes/);
  return { dir, client, stderr, seen, reloads: () => stderr().match(/\] reloaded /g)?.length ?? 0 };
}

const FAREWELL = `import { definePrompt } from 'agentport-mcp';

export default definePrompt({
  name: 'farewell',
  toolDescription: 'Says goodbye.',
  exposeAsTool: true,
  model: 'fake',
  prompt: 'You say goodbye.',
});
`;

function edit(file: string, from: string, to: string): void {
  const text = readFileSync(file, 'utf8');
  expect(text).toContain(from);
  writeFileSync(file, text.replace(from, to));
}

function textOf(result: Awaited<ReturnType<Client['callTool']>>): string {
  return (result.content as Array<{ type: string; text?: string }>).map((part) => part.text ?? '').join('');
}

async function toolNames(client: Client): Promise<string[]> {
  return (await client.listTools()).tools.map((tool) => tool.name);
}

describe('serve --watch over stdio', () => {
  it.each(['legacy', 'modern'] as const)('a prompt added while serving is announced (%s client), listed and callable', async (era) => {
    const served = await serveStdio(era);
    expect(served.client.getServerCapabilities()?.tools).toEqual({ listChanged: true });
    expect(served.client.getServerCapabilities()?.prompts).toEqual({ listChanged: true });
    expect(await toolNames(served.client)).toEqual(['greeter', 'run_wait', 'run_status', 'run_cancel']);

    writeFileSync(path.join(served.dir, 'prompts', 'farewell.ts'), FAREWELL);
    await expect.poll(() => served.seen.tools, POLL).toBe(1);
    await expect.poll(() => served.seen.prompts, POLL).toBe(1);
    // The log line comes on its own pipe: it may arrive after the notification.
    await expect.poll(served.stderr, POLL).toMatch(/reloaded .*agents: \+1 tool \(farewell\)/);
    expect(await toolNames(served.client)).toEqual(['farewell', 'greeter', 'run_wait', 'run_status', 'run_cancel']);
    expect((await served.client.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual(['farewell', 'greeter']);

    model.replyToSystem('You say goodbye.', { text: 'Goodbye, Ada.' });
    const result = await served.client.callTool({ name: 'farewell', arguments: { message: 'I am leaving' } });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toContain('Goodbye, Ada.');
    expect(model.requests.at(-1)?.body.messages.at(-1)).toMatchObject({ role: 'user', content: 'I am leaving' });
  });

  it('an edit made while the server starts, before it watches, is reloaded once it does', async () => {
    const dir = copyOfFixture();
    const { client, stderr } = await connectStdio('legacy', {
      agentsDir: dir,
      args: ['--watch'],
      env: { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'test-key' },
    });
    open.push(() => client.close().catch(() => {}));
    const seen = follow(client);
    // Serving already, watching not yet (the watcher starts after the transport).
    const early = !/reloading it on changes/.test(stderr());
    writeFileSync(path.join(dir, 'prompts', 'farewell.ts'), FAREWELL);
    rmSync(path.join(dir, 'prompts', 'greeter.ts'));
    await expect.poll(() => seen.tools, POLL).toBe(1);
    expect(await toolNames(client)).toEqual(['farewell', 'run_wait', 'run_status', 'run_cancel']);
    await expect.poll(stderr, POLL).toMatch(/reloaded .*agents: \+1 tool \(farewell\), -1 removed \(greeter\)/);
    // Both paths end alike; the one this test is for is the early edit.
    if (!early) console.warn('the edit came after the watcher was ready: the early path was not exercised this time');
  });

  it('a file dated in the future, and a data folder inside the agents folder, cause no reload at start', async () => {
    const dir = copyOfFixture();
    const later = new Date(Date.now() + 3600_000);
    utimesSync(path.join(dir, 'prompts', 'greeter.ts'), later, later);
    utimesSync(dir, later, later);
    const { client, stderr } = await connectStdio('legacy', {
      agentsDir: dir,
      dataDir: path.join(dir, 'data'),
      args: ['--watch'],
      env: { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'test-key' },
    });
    open.push(() => client.close().catch(() => {}));
    const seen = follow(client);
    await expect.poll(stderr, POLL).toMatch(/reloading it on changes/);
    // A call stores its thread in the data folder; then the watcher has time to report anything it would.
    model.replyToSystem('You greet people.', { text: 'Hello.' });
    expect(textOf(await client.callTool({ name: 'greeter', arguments: { message: 'Hi' } }))).toContain('Hello.');
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(stderr()).not.toMatch(/\] reloaded /);
    expect(seen).toEqual({ tools: 0, prompts: 0 });
  });

  it('a helper outside the folder that a definition imports is watched too, after a full load and after a start from the cache', async () => {
    const dir = copyOfFixture();
    const root = path.dirname(dir);
    const helper = path.join(root, 'shared', 'words.ts');
    const marker = path.join(root, 'greeter-imported');
    mkdirSync(path.dirname(helper), { recursive: true });
    writeFileSync(helper, `export const greeting = 'Greets whoever is named.';\n`);
    const greeter = path.join(dir, 'prompts', 'greeter.ts');
    edit(greeter, `toolDescription: 'Greets whoever is named.',`, 'toolDescription: greeting,');
    edit(
      greeter,
      `import { definePrompt } from 'agentport-mcp';`,
      `import { writeFileSync } from 'node:fs';\nimport { definePrompt } from 'agentport-mcp';\nimport { greeting } from '../../shared/words';\nwriteFileSync(${JSON.stringify(marker)}, 'imported');`,
    );
    const dataDir = path.join(root, 'data');
    const env = { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'test-key' };
    const description = async (client: Client) => (await client.listTools()).tools.find((tool) => tool.name === 'greeter')?.description;
    const watchAndEdit = async (words: string) => {
      const { client, stderr } = await connectStdio('legacy', { agentsDir: dir, dataDir, args: ['--watch'], env });
      try {
        const seen = follow(client);
        await expect.poll(stderr, POLL).toMatch(/reloading it on changes/);
        const importedAtStart = existsSync(marker);
        writeFileSync(helper, `export const greeting = '${words}';\n`);
        await expect.poll(() => seen.tools, POLL).toBe(1);
        expect(await description(client)).toBe(words);
        await expect.poll(stderr, POLL).toMatch(/reloaded .*agents: ~1 changed \(greeter\)/);
        return importedAtStart;
      } finally {
        await client.close();
      }
    };
    // A full load (no cache yet): the helper's stamp comes from the load.
    expect(await watchAndEdit('Greets everyone by name.')).toBe(true);
    // A start that saves the cache for the folder as it is now, then one from that cache (the greeter is not imported).
    const saving = await connectStdio('legacy', { agentsDir: dir, dataDir, env });
    expect(await description(saving.client)).toBe('Greets everyone by name.');
    await saving.client.close();
    rmSync(marker);
    expect(await watchAndEdit('Greets all, always by name.')).toBe(false);
  });

  /**
   * Serves the fixture with greeter reading `<copy>/shared/<name>` (outside the agents folder) through `reading`, an
   * edit of greeter.ts given the file's path; then edits the file twice and expects a reload each time, `read` giving
   * what greeter shows of it: it was read by the start's full load, then by the reload the first edit caused.
   */
  async function followedAcrossReloads(
    name: string,
    texts: [first: string, second: string, third: string],
    reading: (file: string) => { from: string; to: string; imports: string },
    read: (tool: Awaited<ReturnType<Client['listTools']>>['tools'][number] | undefined) => unknown,
  ) {
    let file = '';
    const served = await serveStdio('legacy', (dir) => {
      // Beside the agents folder, in the copy's folder (removed with it).
      file = path.join(path.dirname(dir), 'shared', name);
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, texts[0]);
      const greeter = path.join(dir, 'prompts', 'greeter.ts');
      const { from, to, imports } = reading(file);
      edit(greeter, from, to);
      edit(greeter, `import { definePrompt } from 'agentport-mcp';`, `${imports}\nimport { definePrompt } from 'agentport-mcp';`);
    });
    const shown = async () => read((await served.client.listTools()).tools.find((tool) => tool.name === 'greeter'));
    expect(await shown()).toBe(texts[0]);
    for (const [count, text] of [
      [1, texts[1]],
      [2, texts[2]],
    ] as const) {
      writeFileSync(file, text);
      await expect.poll(() => served.seen.tools, POLL).toBe(count);
      expect(await shown()).toBe(text);
    }
  }

  it('[ST-5] a file outside the folder that a definition reads with readFileSync is watched, and again after a reload', async () => {
    await followedAcrossReloads(
      'greeting.md',
      ['Greets whoever is named.', 'Greets everyone by name.', 'Greets all, always by name.'],
      (file) => ({
        from: `toolDescription: 'Greets whoever is named.',`,
        to: `toolDescription: readFileSync(${JSON.stringify(file)}, 'utf8'),`,
        imports: `import { readFileSync } from 'node:fs';`,
      }),
      (tool) => tool?.description,
    );
  });

  it('[ST-5] a file a lazy schema reads when the catalogue is built is followed after a reload too', async () => {
    // Read when the first start built its catalogue, then when the reload the first edit caused built its own.
    await followedAcrossReloads(
      'name.md',
      ['Who to greet.', 'Whom to greet.', 'Whom to greet, by name.'],
      (file) => ({
        from: `tools: ['shout'],`,
        to: `tools: ['shout'],\n  requiredSchema: z.object({ name: z.lazy(() => z.string().describe(readFileSync(${JSON.stringify(file)}, 'utf8'))) }),`,
        imports: `import { readFileSync } from 'node:fs';\nimport { z } from 'zod';`,
      }),
      (tool) => (tool?.inputSchema.properties?.['name'] as { description?: string } | undefined)?.description,
    );
  });

  it('an icon in a dot-folder is watched after a full load too', async () => {
    const dir = copyOfFixture();
    const svg = (fill: string) => `<svg xmlns="http://www.w3.org/2000/svg"><rect width="1" height="1" fill="${fill}"/></svg>`;
    mkdirSync(path.join(dir, '.assets'), { recursive: true });
    writeFileSync(path.join(dir, '.assets', 'icon.svg'), svg('red'));
    edit(
      path.join(dir, 'prompts', 'greeter.ts'),
      `toolDescription: 'Greets whoever is named.',`,
      `toolDescription: 'Greets whoever is named.', icon: '.assets/icon.svg',`,
    );
    const env = { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'test-key' };
    const { client, stderr } = await connectStdio('legacy', {
      agentsDir: dir,
      dataDir: path.join(path.dirname(dir), 'data'),
      args: ['--watch'],
      env,
    });
    try {
      const seen = follow(client);
      await expect.poll(stderr, POLL).toMatch(/reloading it on changes/);
      writeFileSync(path.join(dir, '.assets', 'icon.svg'), svg('blue'));
      await expect.poll(() => seen.tools, POLL).toBe(1);
      const icons = JSON.stringify((await client.listTools()).tools.find((tool) => tool.name === 'greeter')?.icons);
      expect(icons).toContain(Buffer.from(svg('blue')).toString('base64'));
    } finally {
      await client.close();
    }
  });

  it('a helper created after a reload failed for want of it is picked up', async () => {
    const served = await serveStdio();
    const helper = path.join(path.dirname(served.dir), 'shared', 'later.ts');
    const greeter = path.join(served.dir, 'prompts', 'greeter.ts');
    edit(greeter, `toolDescription: 'Greets whoever is named.',`, 'toolDescription: later,');
    edit(
      greeter,
      `import { definePrompt } from 'agentport-mcp';`,
      `import { definePrompt } from 'agentport-mcp';\nimport { later } from '../../shared/later';`,
    );
    await expect.poll(served.stderr, POLL).toMatch(/not reloaded: 1 error\(s\)/);
    mkdirSync(path.dirname(helper), { recursive: true });
    writeFileSync(helper, `export const later = 'Greets, once its words exist.';\n`);
    await expect.poll(() => served.seen.tools, POLL).toBe(1);
    expect((await served.client.listTools()).tools.find((tool) => tool.name === 'greeter')?.description).toBe(
      'Greets, once its words exist.',
    );
  });

  it('a changed description is announced and listed', async () => {
    const served = await serveStdio();
    edit(path.join(served.dir, 'prompts', 'greeter.ts'), 'Greets whoever is named.', 'Greets everyone by name.');
    await expect.poll(() => served.seen.tools, POLL).toBe(1);
    await expect.poll(served.stderr, POLL).toMatch(/reloaded .*agents: ~1 changed \(greeter\)/);
    const greeter = (await served.client.listTools()).tools.find((tool) => tool.name === 'greeter');
    expect(greeter?.description).toBe('Greets everyone by name.');
    expect((await served.client.listPrompts()).prompts.find((prompt) => prompt.name === 'greeter')?.description).toBe(
      'Greets everyone by name.',
    );
  });

  it('a broken file is reported with its line and the previous tools go on working; the fix is picked up', async () => {
    const served = await serveStdio();
    const before = (await served.client.listTools()).tools;
    const file = path.join(served.dir, 'prompts', 'greeter.ts');
    const good = readFileSync(file, 'utf8');
    // Line 5 loses its closing quote.
    writeFileSync(file, good.replace("toolDescription: 'Greets whoever is named.',", "toolDescription: 'Greets whoever is named.,"));
    await expect.poll(served.stderr, POLL).toMatch(/not reloaded: 1 error\(s\) in .*; still serving the previous definitions/);
    expect(served.stderr()).toMatch(/greeter\.ts:5:\d+: cannot load: syntax error/);
    expect((await served.client.listTools()).tools).toEqual(before);
    expect(served.seen.tools).toBe(0);

    model.replyToSystem('You greet people.', { text: 'Hello, Bo!' });
    const result = await served.client.callTool({ name: 'greeter', arguments: { message: 'Greet Bo' } });
    expect(textOf(result)).toContain('Hello, Bo!');

    writeFileSync(file, good.replace('Greets whoever is named.', 'Greets whoever is named, warmly.'));
    await expect.poll(() => served.seen.tools, POLL).toBe(1);
    expect((await served.client.listTools()).tools.find((tool) => tool.name === 'greeter')?.description).toBe(
      'Greets whoever is named, warmly.',
    );
  });

  it('a change that leaves the tools as they are sends no list_changed, and new calls run the new code', async () => {
    const served = await serveStdio();
    edit(path.join(served.dir, 'tools', 'shout.ts'), 'args.text.toUpperCase()', '`${args.text.toUpperCase()}!!!`');
    await expect.poll(served.reloads, POLL).toBeGreaterThanOrEqual(1);
    const reloaded = served.reloads();
    const file = path.join(served.dir, 'prompts', 'greeter.ts');
    const now = new Date();
    utimesSync(file, now, now);
    await expect.poll(served.reloads, POLL).toBeGreaterThan(reloaded);
    await expect.poll(served.stderr, POLL).toMatch(/reloaded .*agents: exposed tools unchanged/);
    // A round trip after the reloads: a notification sent before it would have arrived first.
    expect(await toolNames(served.client)).toEqual(['greeter', 'run_wait', 'run_status', 'run_cancel']);
    expect(served.seen).toEqual({ tools: 0, prompts: 0 });

    model.replyToSystem('You greet people.', { toolCalls: [{ name: 'shout', arguments: { text: 'hello' } }] }, { text: 'Shouted.' });
    const result = await served.client.callTool({ name: 'greeter', arguments: { message: 'Shout hello' } });
    expect(textOf(result)).toContain('Shouted.');
    expect(model.requests.at(-1)?.body.messages.at(-1)).toMatchObject({ role: 'tool', content: 'HELLO!!!' });
  });

  it('a run in progress finishes on the definitions it started with', async () => {
    const fixture = readFileSync(path.join(FIXTURE, 'tools', 'shout.ts'), 'utf8');
    let release = '';
    // The tool the run calls first waits until the folder has been reloaded.
    const served = await serveStdio('legacy', (dir) => {
      release = path.join(path.dirname(dir), 'release');
      const held = fixture
        .replace('import { defineTool }', "import { existsSync } from 'node:fs';\nimport { defineTool }")
        .replace(
          'execute: async (_state, args) => (',
          `execute: async (_state, args) => {\n    while (!existsSync(${JSON.stringify(release)})) await new Promise((resolve) => setTimeout(resolve, 20));\n    return `,
        )
        .replace('toUpperCase() }),', 'toUpperCase() };\n  },');
      expect(held).toContain('while (!existsSync');
      writeFileSync(path.join(dir, 'tools', 'shout.ts'), held);
    });
    model.replyToSystem('You greet people.', { toolCalls: [{ name: 'shout', arguments: { text: 'hello' } }] }, { text: 'Shouted.' });
    const call = served.client.callTool({ name: 'greeter', arguments: { message: 'Shout hello' } });
    await expect.poll(() => model.requests.at(-1)?.body.messages.at(-1)?.content, POLL).toBe('Shout hello');
    writeFileSync(
      path.join(served.dir, 'tools', 'shout.ts'),
      fixture.replace('args.text.toUpperCase()', '`${args.text.toUpperCase()}!!!`'),
    );
    await expect.poll(served.reloads, POLL).toBeGreaterThanOrEqual(1);
    writeFileSync(release, '');
    expect(textOf(await call)).toContain('Shouted.');
    expect(model.requests.at(-1)?.body.messages.at(-1)).toMatchObject({ role: 'tool', content: 'HELLO' });

    model.replyToSystem('You greet people.', { toolCalls: [{ name: 'shout', arguments: { text: 'hello' } }] }, { text: 'Shouted again.' });
    expect(textOf(await served.client.callTool({ name: 'greeter', arguments: { message: 'Shout hello' } }))).toContain('Shouted again.');
    expect(model.requests.at(-1)?.body.messages.at(-1)).toMatchObject({ role: 'tool', content: 'HELLO!!!' });
  });
});

describe('serve --watch over HTTP', () => {
  let http: HttpServerProcess | undefined;
  afterEach(async () => {
    await http?.stop();
  });

  it('tells subscribed 2026-07-28 clients, and every client lists the new tool', async () => {
    const dir = copyOfFixture();
    http = await startHttpServer({
      agentsDir: dir,
      args: ['--watch'],
      env: { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'test-key' },
    });
    const modern = await connectHttp('modern', http.url);
    const legacy = await connectHttp('legacy', http.url);
    open.push(
      () => modern.close().catch(() => {}),
      () => legacy.close().catch(() => {}),
    );
    const seen = follow(modern);
    await modern.listen({ toolsListChanged: true });

    writeFileSync(path.join(dir, 'prompts', 'farewell.ts'), FAREWELL);
    await expect.poll(() => seen.tools, POLL).toBe(1);
    // Stateless 2025-11-25 HTTP has no stream for notifications: the next list has it.
    expect(await toolNames(legacy)).toContain('farewell');
    expect(await toolNames(modern)).toContain('farewell');
  });
});
