/**
 * Clear refusals, as users meet them from the built CLI: a missing, empty or
 * misspelled agents folder stops every command (with "did you mean" for a
 * sibling folder); syntax errors name line and column with a code frame; a
 * YAML error in a .prompty file is one message at the file's line; every
 * problem of a folder comes in one pass and one bad file does not change what
 * another file's message says. The built program runs in the test process,
 * serve in a child process.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, runCliInProcess, type CliOptions, type CliRun } from '../support/cli.js';
import { tempDir } from '../support/mcpClients.js';
import { CLI } from '../support/paths.js';

function writeFiles(root: string, files: Record<string, string>): string {
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), content);
  }
  return root;
}

const MODEL =
  "import { defineModel } from 'agentport-mcp';\nexport default defineModel({ name: 'main', provider: 'openai', model: 'm' });\n";
const PROMPT = (name: string, extra = '') =>
  `import { definePrompt } from 'agentport-mcp';\nexport default definePrompt({ name: '${name}', toolDescription: 'd', model: 'main', prompt: 'p', exposeAsTool: true${extra} });\n`;

/** A project folder holding a working `agents/` folder and an empty `empty/` folder. */
function project(): string {
  const root = tempDir('agentport-refusals-');
  writeFiles(root, { 'agents/models/main.ts': MODEL, 'agents/prompts/hello.ts': PROMPT('hello') });
  mkdirSync(path.join(root, 'empty'));
  writeFileSync(path.join(root, 'notes.txt'), 'not a folder\n');
  return root;
}

/**
 * serve ends its own process, so it runs in one, which also checks the
 * refusals through a real process's exit code and output.
 */
function agentport(args: string[], options: CliOptions = {}): Promise<CliRun> {
  return args[0] === 'serve' ? runCli(args, options) : runCliInProcess(args, options);
}

const COMMANDS: Array<[string, string[]]> = [
  ['serve', ['serve']],
  ['list', ['list']],
  ['doctor', ['doctor']],
  ['config', ['config', 'claude']],
  ['search', ['search', 'anything']],
];

describe('agents folder refusals', () => {
  const root = project();

  it.each(COMMANDS)('[EC-1] %s refuses a misspelled folder and suggests the sibling', async (_name, command) => {
    const run = await agentport([...command, '--dir', 'agnets'], { cwd: root });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe('agentport: agents folder agnets does not exist; did you mean agents?\n');
  });

  it.each(COMMANDS)('[EC-1] %s refuses an empty folder', async (_name, command) => {
    const run = await agentport([...command, '--dir', 'empty'], { cwd: root });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      'agentport: agents folder empty has no definitions (.ts or .js files under models/, prompts/, tools/, hooks/, agents/, or .prompty files); did you mean agents?\n',
    );
  });

  it.each(COMMANDS)('[EC-1] %s refuses a missing default folder, and a path that is not a folder', async (name, command) => {
    const elsewhere = tempDir('agentport-nowhere-');
    const missing = await agentport(command, { cwd: elsewhere });
    expect(missing.code).toBe(1);
    // search resolves the folder before loading, so it cannot tell that it was the default.
    const note = name === 'search' ? '' : ' (the default: pass --dir for another)';
    expect(missing.stderr).toBe(`agentport: agents folder agents${note} does not exist; create one with: agentport init agents\n`);
    const file = await agentport([...command, '--dir', 'notes.txt'], { cwd: root });
    expect(file.code).toBe(1);
    expect(file.stderr).toBe('agentport: notes.txt is not a folder: --dir takes the agents folder\n');
  });

  it('[EC-1] names AGENTPORT_DIR when the folder came from it', async () => {
    const run = await agentport(['list'], { cwd: root, env: { AGENTPORT_DIR: 'agentz' } });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe('agentport: agents folder agentz (from AGENTPORT_DIR) does not exist; did you mean agents?\n');
  });

  it('[EC-1] a project folder holding agents/ is refused, suggesting agents/', async () => {
    const run = await agentport(['doctor', '--dir', '.'], { cwd: root });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`agentport: ${root} is not an agents folder but holds one; did you mean agents?\n`);
  });

  it('[EC-1] config resolves --dir against the current directory and refuses a folder without definitions', async () => {
    const ok = await agentport(['config', 'claude', '--dir', 'agents'], { cwd: root });
    expect(ok.code).toBe(0);
    const entry = (JSON.parse(ok.stdout) as { mcpServers: { agentport: { args: string[] } } }).mcpServers.agentport;
    expect(entry.args).toEqual([CLI, 'serve', '--dir', path.join(root, 'agents')]);
    const nested = await agentport(['config', 'code', '--dir', '../agents'], { cwd: path.join(root, 'empty') });
    expect((JSON.parse(nested.stdout) as { mcpServers: { agentport: { args: string[] } } }).mcpServers.agentport.args.at(-1)).toBe(
      path.join(root, 'agents'),
    );
    const empty = await agentport(['config', 'claude', '--dir', 'empty'], { cwd: root });
    expect(empty.code).toBe(1);
    expect(empty.stdout).toBe('');
  });

  it('[EC-1] config refuses an empty --name and an --url that is no http(s) URL; serve refuses a bad --port even on stdio', async () => {
    const noName = await agentport(['config', 'claude', '--name', ' '], { cwd: root });
    expect([noName.code, noName.stdout]).toEqual([1, '']);
    expect(noName.stderr).toContain('--name must not be empty');
    for (const url of ['not a url', 'ftp://x/mcp']) {
      const run = await agentport(['config', 'code', '--http', '--url', url], { cwd: root });
      expect([run.code, run.stdout]).toEqual([1, '']);
      expect(run.stderr).toContain(`--url must be an http: or https: URL, such as http://127.0.0.1:3333/mcp, got "${url}"`);
    }
    const ok = await agentport(['config', 'code', '--http', '--url', 'https://agents.example.com/mcp'], { cwd: root });
    expect(ok.code).toBe(0);
    for (const port of ['abc', '70000']) {
      const run = await agentport(['serve', '--port', port], { cwd: root });
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain(`--port must be a port number (0-65535), got "${port}"`);
    }
  });

  it('[ST-2] serve refuses bad store settings at start, naming the flag or variable, before any call', async () => {
    const cases: Array<[string[], Record<string, string>, string]> = [
      [['--store', ''], {}, '--store must be one of file, memory, postgres, got ""'],
      [[], { AGENTPORT_STORE: 'sqlite' }, 'AGENTPORT_STORE must be one of file, memory, postgres, got "sqlite"'],
      [[], { AGENTPORT_FSYNC_WITHIN_MS: '-5' }, 'AGENTPORT_FSYNC_WITHIN_MS must be a whole number of milliseconds'],
      [['--store', 'postgres', '--database-url', 'notaurl'], {}, '--database-url must be a PostgreSQL URL such as postgres://'],
      [['--store', 'postgres'], { AGENTPORT_DATABASE_URL: 'https://db.example.com/x' }, 'AGENTPORT_DATABASE_URL must be a PostgreSQL URL'],
      [
        ['--store', 'postgres', '--database-url', 'postgres://u@127.0.0.1:1/db', '--database-schema', 'Agents'],
        {},
        '--database-schema must be lowercase letters, digits and "_"',
      ],
    ];
    for (const [flags, env, message] of cases) {
      const run = await agentport(['serve', ...flags], { cwd: root, env });
      expect([run.code, run.stdout], `${flags.join(' ')} ${JSON.stringify(env)}`).toEqual([1, '']);
      expect(run.stderr).toContain(message);
      expect(run.stderr).not.toContain('serving');
    }
    // A URL is not quoted back: it may hold a password.
    const secret = await agentport(['serve', '--store', 'postgres', '--database-url', 'pg:/user:hunter2@db'], { cwd: root });
    expect(secret.stderr).not.toContain('hunter2');
  });

  it('[EC-1] config refuses a folder with load errors, listing them', async () => {
    const broken = writeFiles(tempDir('agentport-refusals-'), { 'agents/prompts/hello.ts': PROMPT('hello') });
    const run = await agentport(['config', 'claude'], { cwd: broken });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('error: agents/prompts/hello.ts "hello" field model: unknown model "main"');
    expect(run.stderr).toMatch(/not printing a configuration: 1 error\(s\) in /);
  });

  it('[EC-1] an agents folder with only mcp.json (aggregator mode) is not empty', async () => {
    const upstreamOnly = writeFiles(tempDir('agentport-refusals-'), { 'agents/mcp.json': '{ "mcpServers": {} }\n' });
    const run = await agentport(['list', '--json'], { cwd: upstreamOnly });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
  });
});

describe('load errors as users read them', () => {
  it('names line and column of a syntax error, with a code frame', async () => {
    const root = writeFiles(tempDir('agentport-syntax-'), {
      'agents/models/main.ts': MODEL,
      'agents/tools/broken.ts': [
        "import { defineTool } from 'agentport-mcp';",
        'export default defineTool({',
        "  description: 'Broken.',",
        "  execute: async () => ({ status: 'success' )),",
        '});',
        '',
      ].join('\n'),
    });
    const run = await agentport(['doctor', '--dir', 'agents'], { cwd: root });
    expect(run.code).toBe(1);
    const lines = run.stdout.split('\n');
    const at = lines.findIndex((l) => l.startsWith('error: agents/tools/broken.ts'));
    expect(lines[at]).toBe('error: agents/tools/broken.ts:4:45: cannot load: syntax error: Unexpected token, expected ","');
    expect(lines.slice(at + 1, at + 6)).toEqual([
      '  2 | export default defineTool({',
      "  3 |   description: 'Broken.',",
      "> 4 |   execute: async () => ({ status: 'success' )),",
      '    |                                             ^',
      '  5 | });',
    ]);
  });

  it('names the imported file when the syntax error is there', async () => {
    const root = writeFiles(tempDir('agentport-syntax-'), {
      'agents/models/main.ts': MODEL,
      'agents/lib/words.ts': 'export const count = (text: string =>\n  text.length;\n',
      'agents/tools/uses_lib.ts':
        "import { defineTool } from 'agentport-mcp';\nimport { count } from '../lib/words';\nexport default defineTool({ description: 'd', execute: async () => ({ status: 'success', result: String(count('x')) }) });\n",
    });
    const run = await agentport(['doctor', '--dir', 'agents'], { cwd: root });
    expect(run.stdout).toContain(
      'error: agents/tools/uses_lib.ts: cannot load: syntax error in agents/lib/words.ts:1:36: Unexpected token, expected ","\n> 1 | export const count = (text: string =>',
    );
  });

  it('names an import agentport or zod does not export, at its line and column, with a close name', async () => {
    const root = writeFiles(tempDir('agentport-imports-'), {
      'agents/models/main.ts': MODEL,
      'agents/tools/typo.ts': [
        "import { defineToool } from 'agentport-mcp';",
        'export default defineToool({',
        "  description: 'Typo.',",
        "  execute: async () => ({ status: 'success' }),",
        '});',
        '',
      ].join('\n'),
      'agents/tools/zod_typo.ts': [
        "import { defineTool } from 'agentport-mcp';",
        "import { type ZodType, zz } from 'zod';",
        "export default defineTool({ description: 'd', args: zz.object({}), execute: async () => ({ status: 'success' }) });",
        '',
      ].join('\n'),
    });
    const run = await agentport(['doctor', '--dir', 'agents'], { cwd: root });
    expect(run.code).toBe(1);
    const lines = run.stdout.split('\n');
    const at = lines.findIndex((l) => l.startsWith('error: agents/tools/typo.ts'));
    expect(lines[at]).toBe(
      'error: agents/tools/typo.ts:1:10: cannot load: "defineToool" is not exported by agentport-mcp (did you mean "defineTool"?)',
    );
    expect(lines[at + 1]).toBe("> 1 | import { defineToool } from 'agentport-mcp';");
    expect(run.stdout).toContain('error: agents/tools/zod_typo.ts:2:24: cannot load: "zz" is not exported by zod');
  });

  it('keeps the real load error when an unexported name is only a type imported without `type`', async () => {
    const root = writeFiles(tempDir('agentport-imports-'), {
      'agents/models/main.ts': MODEL,
      'agents/prompts/p.ts': [
        "import { definePrompt, PromptDefinition /* a type */ } from 'agentport-mcp';",
        "import { helper } from './missing-helper.js';",
        "export default definePrompt({ name: 'p', toolDescription: 'd', model: 'main', prompt: helper });",
        '',
      ].join('\n'),
    });
    const run = await agentport(['doctor', '--dir', 'agents'], { cwd: root });
    expect(run.code).toBe(1);
    expect(run.stdout).not.toContain('is not exported');
    expect(run.stdout).toContain('missing-helper');
    // Nor when the error names a longer word the name is part of.
    writeFiles(root, {
      'agents/prompts/p.ts': [
        "import { definePrompt, Tool } from 'agentport-mcp';",
        "import { helper } from './ToolHelpers.js';",
        "export default definePrompt({ name: 'p', toolDescription: 'd', model: 'main', prompt: helper });",
        '',
      ].join('\n'),
    });
    const again = await agentport(['doctor', '--dir', 'agents'], { cwd: root });
    expect(again.stdout).not.toContain('is not exported');
    expect(again.stdout).toContain('ToolHelpers');
  });

  it('gives one message for a YAML error in a .prompty file, at the file line', async () => {
    const root = writeFiles(tempDir('agentport-yaml-'), {
      'agents/models/main.ts': MODEL,
      'agents/prompts/faq.prompty': [
        '---',
        'name: faq',
        'description: d',
        'model: main',
        'inputs:',
        '  question:',
        '    type: string',
        '      description: too deep',
        '---',
        'user:',
        '{{question}}',
        '',
      ].join('\n'),
    });
    const run = await agentport(['doctor', '--dir', 'agents'], { cwd: root });
    expect(run.code).toBe(1);
    const errors = run.stdout.split('\n').filter((l) => l.startsWith('error: '));
    expect(errors).toEqual([
      'error: agents/prompts/faq.prompty:7: invalid YAML in frontmatter: Nested mappings are not allowed in compact mappings (column 11)',
    ]);
    // No second numbering (the frontmatter's own line) in the message; the frame shows file lines.
    expect(run.stdout).not.toMatch(/at line \d+/);
    expect(run.stdout).toContain('> 7 |     type: string\n    |           ^\n  8 |       description: too deep');
    expect(run.stdout).toMatch(/\n1 error\(s\), /);
  });

  it("reports every problem of a folder in one pass, and one bad file does not distort another file's message", async () => {
    const root = writeFiles(tempDir('agentport-onepass-'), {
      'agents/models/main.ts': MODEL,
      'agents/models/backup.ts':
        "import { defineModel } from 'agentport-mcp';\nexport default defineModel({ name: 'backup', provider: 'openai', model: 'm' ;\n",
      // loop_b has an error of its own: loop_a's cycle is still a cycle, not an "unknown prompt".
      'agents/prompts/loop_a.ts':
        "import { definePrompt } from 'agentport-mcp';\nexport default definePrompt({ name: 'loop_a', toolDescription: 'd', model: 'main', prompt: [{ type: 'include', prompt: 'loop_b' }] });\n",
      'agents/prompts/loop_b.ts':
        "import { definePrompt } from 'agentport-mcp';\nexport default definePrompt({ name: 'loop_b', toolDescription: 'd', model: 'main', toolChoice: 'sometimes' as never, prompt: [{ type: 'include', prompt: 'loop_a' }] });\n",
      // Its model's file does not parse; its tool has an error of its own.
      'agents/prompts/fallback.ts': PROMPT('fallback', ", tools: ['shout']").replace("model: 'main'", "model: 'backup'"),
      'agents/tools/shout.ts':
        "import { defineTool } from 'agentport-mcp';\nexport default defineTool({ description: '', execute: async () => ({ status: 'success' }) });\n",
      'agents/prompts/bad.prompty': '---\nname: bad\ndescription: d\nmodel: [main\n---\nHi.\n',
      'agents/prompts/typo.ts': PROMPT('typo').replace("model: 'main'", "model: 'mian'"),
    });
    const run = await agentport(['doctor', '--dir', 'agents'], { cwd: root });
    expect(run.code).toBe(1);
    const errors = run.stdout.split('\n').filter((l) => l.startsWith('error: '));
    expect(errors).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^error: agents\/models\/backup\.ts:2:\d+: cannot load: syntax error: /),
        'error: agents/prompts/loop_b.ts "loop_b" field toolChoice: toolChoice must be one of "auto", "none", "required", got string "sometimes"',
        'error: agents/prompts/loop_a.ts "loop_a" field prompt: circular include: loop_a -> loop_b -> loop_a',
        'error: agents/tools/shout.ts "shout" field description: description must not be empty',
        'error: agents/prompts/fallback.ts "fallback" field model: "backup" is not loaded: agents/models/backup.ts, which may define it, could not be loaded (reported there)',
        'error: agents/prompts/fallback.ts "fallback" field tools[0]: tool "shout" is not loaded: its definition in agents/tools/shout.ts has errors (reported there)',
        expect.stringMatching(/^error: agents\/prompts\/bad\.prompty:4: invalid YAML in frontmatter: /),
        'error: agents/prompts/typo.ts "typo" field model: unknown model "mian" (did you mean "main"?)',
      ]),
    );
    expect(errors).toHaveLength(8);
    expect(run.stdout).not.toContain('unknown prompt');
    expect(run.stdout).toMatch(/\n8 error\(s\), /);
  });
});
