/**
 * `agentport init` as a new user runs it, in a folder outside this repository:
 * the scaffold type-checks (`doctor --types`, with agentport-mcp, zod and
 * typescript resolvable the way `npm install` would make them) and serves
 * (a call of the scaffolded prompt through the real MCP client, its tool
 * included, against the scripted model).
 */
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runCliInProcess } from '../support/cli.js';
import { FakeModelServer } from '../support/fakeModelServer.js';
import { connectStdio, tempDir } from '../support/mcpClients.js';
import { REPO_ROOT } from '../support/paths.js';
import { writeFiles } from '../support/folders.js';

const SCAFFOLD = [
  'models/main.ts',
  'prompts/assistant.ts',
  'tools/word_count.ts',
  'prompts/explain.prompty',
  'package.json',
  'tsconfig.json',
];

/** What `npm install` in the folder provides: node_modules entries, here linked to this repository's copies. */
function linkDependencies(folder: string): void {
  const modules = path.join(folder, 'node_modules');
  mkdirSync(path.join(modules, '@types'), { recursive: true });
  symlinkSync(REPO_ROOT, path.join(modules, 'agentport-mcp'), 'dir');
  for (const name of ['zod', 'typescript', '@types/node'])
    symlinkSync(path.join(REPO_ROOT, 'node_modules', name), path.join(modules, name), 'dir');
}

const work = tempDir('agentport-init-');
const folder = path.join(work, 'my-agents');
let init: Awaited<ReturnType<typeof runCli>>;

beforeAll(async () => {
  // A process: the next commands it prints name the command as the user ran it (here node and the built main.js).
  init = await runCli(['init', 'my-agents'], { cwd: work });
  linkDependencies(folder);
});

describe('agentport init', () => {
  it('[EC-2] scaffolds a model, an exposed prompt, a tool, a .prompty file, package.json and tsconfig.json, then prints the next two commands', () => {
    expect(init.code).toBe(0);
    for (const file of SCAFFOLD) expect(existsSync(path.join(folder, file)), file).toBe(true);
    const manifest = JSON.parse(readFileSync(path.join(folder, 'package.json'), 'utf8')) as {
      name: string;
      type: string;
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
      scripts: Record<string, string>;
    };
    expect(manifest.name).toBe('my-agents');
    // npm start serves the folder, npm run check validates it.
    expect(manifest.scripts).toMatchObject({ start: 'agentport serve --dir .', check: 'agentport doctor --types --dir .' });
    expect(manifest.type).toBe('module');
    expect(Object.keys(manifest.dependencies).sort()).toEqual(['agentport-mcp', 'zod']);
    expect(manifest.devDependencies).toHaveProperty('typescript');
    // From a checkout the dependency points at it, so npm install works before the package is published.
    expect(manifest.dependencies['agentport-mcp']).toBe(`file:${REPO_ROOT}`);
    for (const file of SCAFFOLD.filter((f) => f.endsWith('.ts'))) {
      const source = readFileSync(path.join(folder, file), 'utf8');
      expect(source).toContain("from 'agentport-mcp'");
      expect(source).not.toMatch(/from 'agentport'/);
    }
    const tool = readFileSync(path.join(folder, 'tools/word_count.ts'), 'utf8');
    expect(tool).toContain('execute: async (_state, args) =>');
    expect(tool).toContain("return { status: 'success', result:");

    const next = init.stdout.slice(init.stdout.indexOf('Next:')).trim().split('\n').slice(1);
    expect(next).toHaveLength(2);
    expect(next[0]).toMatch(/^ {2}cd my-agents && npm install +#/);
    expect(next[1]).toMatch(/doctor --types --dir \. +#/);
    expect(init.stdout).not.toMatch(/npx agentport|npm i(nstall)? agentport\b(?!-mcp)/);
  });

  it('[EC-2] the folder type-checks and loads: doctor --types', async () => {
    const doctor = await runCliInProcess(['doctor', '--types', '--dir', '.'], { cwd: folder });
    expect(doctor.stderr).toBe('');
    expect(doctor.stdout).toMatch(/^types: ok \(tsc \d+\.\d+\.\d+ --noEmit -p tsconfig\.json\)$/m);
    expect(doctor.stdout).toMatch(/ok: 2 prompt\(s\), 1 tool\(s\), 1 model\(s\), 0 hook\(s\), 0 agent\(s\) in /);
    expect(doctor.code).toBe(0);
  });

  it('[EC-2] doctor --types reports type errors with file:line:column, such as a tool that does not return { status, result }', async () => {
    const bad = path.join(folder, 'tools', 'shout.ts');
    writeFileSync(
      bad,
      [
        "import { defineTool } from 'agentport-mcp';",
        "import { z } from 'zod';",
        'export default defineTool({',
        "  description: 'Shout a text.',",
        '  args: z.object({ text: z.string() }),',
        '  execute: async (_state, args) => args.text.toUpperCase(),',
        '});',
        '',
      ].join('\n'),
    );
    try {
      const doctor = await runCliInProcess(['doctor', '--types', '--dir', '.'], { cwd: folder });
      expect(doctor.code).toBe(1);
      expect(doctor.stdout).toMatch(/^types: 1 error\(s\)/m);
      expect(doctor.stdout).toMatch(
        /^error: tools\/shout\.ts:6:\d+: TS2322: Type .*Promise<string>.* is not assignable to type .*Promise<ToolResult>/m,
      );
      // Loading alone cannot see it: the tool loads fine.
      const plain = await runCliInProcess(['doctor', '--dir', '.'], { cwd: folder });
      expect(plain.code).toBe(0);
    } finally {
      rmSync(bad);
    }
  });

  it('[EC-2] doctor --types says when the folder has no tsconfig.json', async () => {
    const doctor = await runCliInProcess([
      'doctor',
      '--types',
      '--no-upstream',
      '--dir',
      path.join(REPO_ROOT, 'test', 'fixtures', 'agents', 'usage'),
    ]);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toContain('no tsconfig.json: --types type-checks a folder that has one (agentport init writes it)');
    // The repository's own tsconfig, above it, leaves the fixtures out.
    expect(doctor.stdout).toContain('tsconfig.json does not include this folder');
  });

  it("[EC-2] doctor --types uses the tsconfig of the project an agents folder sits in, reporting the folder's errors only", async () => {
    const project = tempDir('agentport-project-');
    linkDependencies(project);
    writeFiles(project, {
      'package.json': JSON.stringify({ name: 'host-project', private: true, type: 'module' }),
      'tsconfig.json': JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
        },
        include: ['agents', 'lib'],
      }),
      'lib/outside.ts': "export const elsewhere: number = 'not this folder';\n",
      'agents/models/main.ts':
        "import { defineModel } from 'agentport-mcp';\nexport default defineModel({ name: 'main', provider: 'openai', model: 'x' });\n",
      'agents/prompts/p.ts':
        "import { definePrompt } from 'agentport-mcp';\nconst count: number = 'three';\nexport default definePrompt({ name: 'p', model: 'main', toolDescription: 'Counts.', prompt: `Count ${count}.` });\n",
    });
    const doctor = await runCliInProcess(['doctor', '--types', '--no-upstream', '--dir', path.join(project, 'agents')], {
      env: { OPENAI_API_KEY: 'sk-test' },
    });
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toMatch(/^error: .*prompts\/p\.ts:2:\d+: TS2322: Type 'string' is not assignable to type 'number'/m);
    expect(doctor.stdout).not.toContain('outside.ts');
    expect(doctor.stdout).toMatch(/^types: 1 error\(s\) \(tsc \d+\.\d+\.\d+ --noEmit -p .*tsconfig\.json\)$/m);
  });

  it('[EC-2] refuses to overwrite existing files, naming them, and writes nothing', async () => {
    const before = readFileSync(path.join(folder, 'models', 'main.ts'), 'utf8');
    const again = await runCliInProcess(['init', 'my-agents'], { cwd: work });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(
      'agentport: not overwriting existing files in my-agents: models/main.ts, prompts/assistant.ts, tools/word_count.ts, prompts/explain.prompty, package.json, tsconfig.json',
    );
    expect(readFileSync(path.join(folder, 'models', 'main.ts'), 'utf8')).toBe(before);

    // Only the files that would be overwritten count: a folder with other files is filled.
    const partial = path.join(work, 'partial');
    mkdirSync(partial);
    writeFileSync(path.join(partial, 'tsconfig.json'), '{}\n');
    const one = await runCliInProcess(['init', partial]);
    expect(one.code).toBe(1);
    expect(one.stderr).toMatch(/not overwriting existing file in .*partial: tsconfig\.json \(move it away or choose another folder\)/);
    expect(existsSync(path.join(partial, 'models', 'main.ts'))).toBe(false);
  });
});

describe('a scaffolded folder served to an MCP host', () => {
  const model = new FakeModelServer();
  let client: Client;

  beforeAll(async () => {
    await model.start();
    ({ client } = await connectStdio('legacy', { agentsDir: folder, env: { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'test-key' } }));
  });
  afterAll(async () => {
    await client?.close();
    await model.stop();
  });

  it('[EC-2] lists the scaffolded prompts and runs one, tool call included', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['assistant', 'explain']));

    model.reply(
      { toolCalls: [{ name: 'word_count', arguments: { text: 'agentport serves agents' } }] },
      { text: 'That text has 3 words.' },
    );
    const result = await client.callTool({ name: 'assistant', arguments: { message: 'How many words in "agentport serves agents"?' } });
    expect(result.isError).toBeFalsy();
    expect((result.content as Array<{ text?: string }>).map((c) => c.text ?? '').join('')).toContain('That text has 3 words.');
    expect(model.requests).toHaveLength(2);
    expect(model.requests[0]!.body.tools?.map((t) => t.function.name)).toEqual(['word_count']);
    const toolMessage = model.requests[1]!.body.messages.find((m) => m.role === 'tool');
    expect(JSON.parse(String(toolMessage?.content))).toEqual({ words: 3, characters: 23 });

    model.reply({ text: 'MCP lets apps offer tools to AI models.' });
    const explained = await client.callTool({ name: 'explain', arguments: { term: 'MCP' } });
    expect(explained.isError).toBeFalsy();
    const messages = model.requests[2]!.body.messages;
    expect(messages[0]).toMatchObject({ role: 'system' });
    expect(String(messages[0]!.content)).toContain('for a curious beginner');
    expect(model.unexpected).toEqual([]);
  });
});
