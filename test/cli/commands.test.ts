/**
 * The agentport command as users run it: the built CLI, in the test process
 * (the last tests check that it prints and exits there as in a process of its
 * own), and in a child process for serve.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, runCliInProcess } from '../support/cli.js';
import { writeFiles } from '../support/folders.js';
import { EXAMPLE_AGENTS, FIXTURES, REPO_ROOT, EXAMPLE_TOOLS } from '../support/paths.js';

const agentport = (args: string[], env: Record<string, string | undefined> = {}) => runCliInProcess(args, { env });
const spawned = (args: string[], env: Record<string, string | undefined> = {}) => runCli(args, { env });

describe('agentport list', () => {
  it('[MC-4] prints the exposed tools with their schemas as JSON, in name order', async () => {
    const { code, stdout } = await agentport(['list', '--json', '--dir', EXAMPLE_AGENTS]);
    expect(code).toBe(0);
    const { tools } = JSON.parse(stdout) as { tools: Array<{ name: string; inputSchema: Record<string, unknown> }> };
    expect(tools.map((t) => t.name)).toEqual(EXAMPLE_TOOLS);
    for (const tool of tools) {
      expect(tool.inputSchema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
      expect(tool.inputSchema.type).toBe('object');
    }
  });

  it('leaves out a data folder inside the agents folder: a file a tool stored there is no prompt', async () => {
    const dir = writeFiles(mkdtempSync(path.join(tmpdir(), 'agentport-list-')), {
      'models/m.ts':
        "import { defineModel } from 'agentport';\nexport default defineModel({ name: 'm', provider: 'openai', model: 'x' });\n",
      'prompts/kept.prompty': '---\nname: kept\ndescription: Kept.\nmodel: m\nexposeAsTool: true\n---\nsystem:\nHello.\n',
      'data/threads/t1/files/stored.prompty': '---\nname: stored\ndescription: Stored.\nmodel: m\nexposeAsTool: true\n---\nsystem:\nHi.\n',
    });
    try {
      const listed = async (dataDir: string) => {
        const { code, stdout, stderr } = await agentport(['list', '--json', '--dir', dir], { AGENTPORT_DATA_DIR: dataDir });
        expect(code, stderr).toBe(0);
        return (JSON.parse(stdout) as { tools: Array<{ name: string }> }).tools.map((t) => t.name);
      };
      expect(await listed(path.join(dir, 'data'))).toEqual(['kept']);
      // Without it, the folder is an ordinary one of the agents folder's.
      expect(await listed(path.join(dir, '..', 'elsewhere'))).toEqual(['kept', 'stored']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('prints a readable listing by default', async () => {
    const { stdout } = await agentport(['list', '--dir', EXAMPLE_AGENTS]);
    expect(stdout).toContain('triage_ticket  Classify a support ticket');
    expect(stdout).toContain('  tags?: array  Tags already on the ticket');
  });
});

describe('agentport doctor', () => {
  it('passes on the examples and warns about a missing API key', async () => {
    // --no-upstream: the examples' upstream server (agents/mcp.json) is fetched by npx; test/cli/upstream.test.ts covers connecting.
    const { code, stdout } = await agentport(['doctor', '--no-upstream', '--dir', EXAMPLE_AGENTS]);
    expect(code).toBe(0);
    expect(stdout).toContain('OPENAI_API_KEY is not set');
    expect(stdout).toMatch(/ok: 11 prompt\(s\), 2 tool\(s\), 1 model\(s\), 0 hook\(s\), 2 agent\(s\), 1 upstream server\(s\)/);
  });

  it('prints every problem and exits non-zero', async () => {
    const { code, stdout } = await agentport(['doctor', '--dir', path.join(FIXTURES, 'agents', 'load-errors')]);
    expect(code).toBe(1);
    expect(stdout).toContain('unknown model "gpt5"');
    expect(stdout).toContain('unknown hook id "redact_cards"');
    expect(stdout).toContain('15 error(s)');
  });
});

describe('agentport config', () => {
  it('prints a Claude Desktop configuration with absolute paths', async () => {
    const { code, stdout, stderr } = await agentport(['config', 'claude', '--dir', 'agents']);
    expect(code).toBe(0);
    expect(stderr).toContain('claude_desktop_config.json');
    const config = JSON.parse(stdout) as { mcpServers: { agentport: { command: string; args: string[]; env: Record<string, string> } } };
    const entry = config.mcpServers.agentport;
    expect(path.isAbsolute(entry.command)).toBe(true);
    expect(entry.args[0]).toBe(path.join(REPO_ROOT, 'dist', 'cli', 'main.js'));
    expect(entry.args.slice(1)).toEqual(['serve', '--dir', path.join(REPO_ROOT, 'agents')]);
    expect(Object.keys(entry.env)).toEqual(['OPENAI_API_KEY']);
  });

  it('prints Claude Code and Cursor configurations, stdio or HTTP', async () => {
    const code = JSON.parse((await agentport(['config', 'code', '--dir', EXAMPLE_AGENTS])).stdout);
    expect(code.mcpServers.agentport.type).toBe('stdio');
    const http = JSON.parse((await agentport(['config', 'code', '--http'])).stdout);
    expect(http.mcpServers.agentport).toEqual({ type: 'http', url: 'http://127.0.0.1:3333/mcp' });
    const cursor = JSON.parse((await agentport(['config', 'cursor', '--dir', EXAMPLE_AGENTS])).stdout);
    expect(cursor.mcpServers.agentport.command).toBe(process.execPath);
  });

  it('names the accepted hosts when given an unknown one', async () => {
    const { code, stderr } = await agentport(['config', 'vim']);
    expect(code).toBe(1);
    expect(stderr).toContain('unknown host "vim": expected one of claude, code, cursor');
  });
});

// serve ends its own process: these run in one.
describe('agentport serve --store', () => {
  it('names the accepted stores when given an unknown one (flag or AGENTPORT_STORE)', async () => {
    const [flag, env] = await Promise.all([
      spawned(['serve', '--dir', EXAMPLE_AGENTS, '--store', 'redis']),
      spawned(['serve', '--dir', EXAMPLE_AGENTS], { AGENTPORT_STORE: 'sqlite' }),
    ]);
    expect(flag.code).toBe(1);
    expect(flag.stderr).toContain('--store must be one of file, memory, postgres, got "redis"');
    expect(env.code).toBe(1);
    expect(env.stderr).toContain('AGENTPORT_STORE must be one of file, memory, postgres, got "sqlite"');
  });

  it('asks for a database URL for postgres, and says when the database cannot be reached', async () => {
    const [missing, unreachable] = await Promise.all([
      spawned(['serve', '--dir', EXAMPLE_AGENTS, '--store', 'postgres'], { AGENTPORT_DATABASE_URL: '' }),
      spawned(['serve', '--dir', EXAMPLE_AGENTS, '--store', 'postgres', '--database-url', 'postgres://nobody@127.0.0.1:1/none']),
    ]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('--store postgres needs a database: set AGENTPORT_DATABASE_URL');
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain('cannot connect to PostgreSQL');
  });
});

describe('agentport --help and --version', () => {
  it('prints the version from package.json', async () => {
    const { code, stdout } = await agentport(['--version']);
    expect(code).toBe(0);
    const { version } = (await import('../../package.json', { with: { type: 'json' } })).default;
    expect(stdout.trim()).toBe(version);
  });

  it('lists every command in its help, and suggests one for a mistyped name (a command line loads only the command it names)', async () => {
    const help = await agentport(['--help']);
    expect(help.code).toBe(0);
    const listed = [...help.stdout.matchAll(/^ {2}(\w+) /gm)].map((match) => match[1]);
    expect(listed).toEqual(['init', 'serve', 'list', 'doctor', 'config', 'pack', 'search', 'run', 'help']);
    for (const helpFirst of [
      ['-h', 'serve'],
      ['--help', 'list'],
    ]) {
      const { stdout } = await agentport(helpFirst);
      expect([...stdout.matchAll(/^ {2}(\w+) /gm)].map((match) => match[1])).toEqual(listed);
    }
    const typo = await agentport(['serv']);
    expect(typo.code).toBe(1);
    expect(typo.stderr).toContain("error: unknown command 'serv'");
    expect(typo.stderr).toContain('(Did you mean serve?)');
  });

  it('builds only the command a command line starts with', async () => {
    const { buildProgram } = await import('../../src/cli/program.js');
    const names = async (...args: string[]) => (await buildProgram(['node', 'agentport', ...args])).commands.map((c) => c.name());
    expect(await names('serve', '--dir', 'x')).toEqual(['serve']);
    expect(await names('run', 'p', '--arg', 'serve')).toEqual(['run']);
    const all = ['init', 'serve', 'list', 'doctor', 'config', 'pack', 'search', 'run'];
    for (const args of [[], ['-h', 'serve'], ['help', 'serve'], ['serv']]) expect(await names(...args)).toEqual(all);
  });

  it.each(['init', 'serve', 'list', 'doctor', 'config', 'pack', 'search', 'run'])('has --help for %s', async (command) => {
    const { code, stdout } = await agentport([command, '--help']);
    expect(code).toBe(0);
    expect(stdout).toContain(`Usage: agentport ${command}`);
  });
});

describe('the CLI in the test process', () => {
  // What only a process shows: the exit code it ends with (process.exitCode, or commander exiting itself), its help's width.
  it('prints and exits as the built CLI does in a process', async () => {
    const runs = [
      ['config', 'claude', '--dir', 'agents'],
      // Its definition files print (console.log) while they load.
      ['list', '--dir', path.join(FIXTURES, 'agents', 'noisy')],
      ['doctor', '--dir', path.join(FIXTURES, 'agents', 'load-errors')],
      ['list', '--no-such-option'],
      ['doctor', '--help'],
      ['--version'],
    ];
    // The processes start first and run while the in-process runs do, one after another.
    const processes = Promise.all(runs.map((args) => spawned(args)));
    const inProcess = [];
    for (const args of runs) inProcess.push(await agentport(args));
    for (const [i, run] of (await processes).entries()) expect({ args: runs[i], ...inProcess[i] }).toEqual({ args: runs[i], ...run });
    expect(inProcess.map((run) => run.code)).toEqual([0, 0, 1, 1, 0, 0]);
  });

  it('leaves the test process as it was: environment, working directory, arguments, output, console and exit code', async () => {
    process.env.AGENTPORT_TEST_KEPT = 'kept';
    delete process.env.AGENTPORT_TEST_UNSET;
    const before = {
      env: { ...process.env },
      cwd: process.cwd(),
      argv: [...process.argv],
      exitCode: process.exitCode,
      console: globalThis.console,
      write: Reflect.get(process.stdout, 'write'),
      isTTY: process.stdout.isTTY,
      exit: Reflect.get(process, 'exit'),
    };
    try {
      const run = await runCliInProcess(['doctor', '--dir', 'load-errors'], {
        cwd: path.join(FIXTURES, 'agents'),
        env: { AGENTPORT_TEST_KEPT: undefined, AGENTPORT_TEST_UNSET: 'set' },
      });
      expect(run.code).toBe(1);
      expect(run.stdout).toContain('15 error(s)');
      expect({
        env: { ...process.env },
        cwd: process.cwd(),
        argv: process.argv,
        exitCode: process.exitCode,
        console: globalThis.console,
        write: Reflect.get(process.stdout, 'write'),
        isTTY: process.stdout.isTTY,
        exit: Reflect.get(process, 'exit'),
      }).toEqual(before);
    } finally {
      delete process.env.AGENTPORT_TEST_KEPT;
    }
  });

  it('refuses the commands that end their own process', async () => {
    await expect(agentport(['serve', '--dir', EXAMPLE_AGENTS])).rejects.toThrow('agentport serve ends its own process: run it with runCli');
    await expect(agentport(['run', 'summarize'])).rejects.toThrow('agentport run ends its own process: run it with runCli');
  });
});
