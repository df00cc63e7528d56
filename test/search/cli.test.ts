/**
 * `agentport search`, run in-process through commander with stdout and
 * stderr captured.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { registerSearchCommand } from '../../src/cli/commands/search.js';
import type { SearchableTool } from '../../src/search/types.js';
import { TOOLS } from './fixtures.js';

const dir = mkdtempSync(path.join(tmpdir(), 'agentport-search-'));

function writeFile(name: string, content: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, content);
  return file;
}

const toolsFile = writeFile('tools.json', JSON.stringify({ tools: TOOLS }));

interface Run {
  stdout: string;
  stderr: string;
  exitCode: number;
  registryDirs: string[];
}

async function run(args: string[], registryTools: SearchableTool[] = []): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const registryDirs: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  });
  const program = new Command().exitOverride();
  registerSearchCommand(program, {
    loadRegistryTools: async (agentsDir) => {
      registryDirs.push(agentsDir);
      return registryTools;
    },
  });
  try {
    await program.parseAsync(['search', ...args], { from: 'user' });
  } finally {
    vi.restoreAllMocks();
  }
  const exitCode = typeof process.exitCode === 'number' ? process.exitCode : 0;
  return { stdout, stderr, exitCode, registryDirs };
}

beforeEach(() => {
  process.exitCode = undefined;
});

afterEach(() => {
  process.exitCode = undefined;
});

describe('agentport search', () => {
  it('[TS-4] prints the <functions> block and the plain line for a query on a tools file', async () => {
    const { stdout, exitCode } = await run(['select:send_email,nope', '--tools', toolsFile]);
    expect(exitCode).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('<functions>');
    expect(JSON.parse(lines[1]?.replace(/^<function>|<\/function>$/g, '') ?? '')).toMatchObject({ name: 'send_email' });
    expect(lines.slice(2)).toEqual(['</functions>', 'Loaded 1 tool: send_email. It can be called now.', 'No tool is named: nope.']);
  });

  it('[TS-2] --json prints the query and ranked names, limited by --max-results', async () => {
    const { stdout } = await run(['+slack send', '--tools', toolsFile, '--json', '--max-results', '1']);
    expect(JSON.parse(stdout)).toEqual({ query: '+slack send', results: ['slack_send_message'] });
  });

  it('[TS-1] --json lists unknown select: names', async () => {
    const { stdout } = await run(['select:digit_sum,nope', '--tools', toolsFile, '--json']);
    expect(JSON.parse(stdout)).toEqual({ query: 'select:digit_sum,nope', results: ['digit_sum'], unknown: ['nope'] });
  });

  it('accepts a bare array of tools', async () => {
    const file = writeFile('array.json', JSON.stringify(TOOLS.slice(0, 2)));
    const { stdout } = await run(['slack', '--tools', file, '--json']);
    expect(JSON.parse(stdout)).toEqual({ query: 'slack', results: ['slack_list_channels', 'slack_send_message'] });
  });

  it('searches the agents folder tools when no --tools file is given', async () => {
    const { stdout, registryDirs } = await run(
      ['select:only_tool', '--json', '--dir', 'my-agents'],
      [{ name: 'only_tool', description: 'The one tool' }],
    );
    expect(registryDirs).toEqual([path.resolve('my-agents')]);
    expect(JSON.parse(stdout)).toEqual({ query: 'select:only_tool', results: ['only_tool'] });
  });

  it('[TS-2] --queries runs a JSONL file: one line per query with its time, then recall@k', async () => {
    const queries = writeFile(
      'queries.jsonl',
      [
        JSON.stringify({ query: 'send a slack message', gold: ['slack_send_message'] }),
        '',
        JSON.stringify({ query: 'select:digit_sum,convert_to_pdf', gold: ['digit_sum', 'send_email'] }),
        JSON.stringify({ query: 'weather' }),
      ].join('\n'),
    );
    const { stdout, exitCode } = await run(['--queries', queries, '--tools', toolsFile, '--max-results', '3']);
    expect(exitCode).toBe(0);
    const lines = stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatchObject({ query: 'send a slack message' });
    expect((lines[0]?.results as string[])[0]).toBe('slack_send_message');
    expect(lines[1]).toMatchObject({ query: 'select:digit_sum,convert_to_pdf', results: ['digit_sum', 'convert_to_pdf'] });
    expect(lines[2]).toMatchObject({ query: 'weather', results: ['weather.current'] });
    for (const line of lines.slice(0, 3)) expect(typeof line.ms).toBe('number');
    // (1 + 1/2) / 2 queries with gold.
    expect(lines[3]).toEqual({ k: 3, queries: 2, recall: 0.75 });
  });

  it('reports a missing tools file on stderr with its name and exits 1', async () => {
    const missing = path.join(dir, 'missing.json');
    const { stdout, stderr, exitCode } = await run(['slack', '--tools', missing]);
    expect(exitCode).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toContain(missing);
    expect(stderr).toContain('no such file');
  });

  it('reports a tools file with bad JSON or the wrong shape, naming the file', async () => {
    const bad = writeFile('bad.json', '{"tools": [');
    const badRun = await run(['slack', '--tools', bad]);
    expect(badRun.exitCode).toBe(1);
    expect(badRun.stderr).toMatch(new RegExp(`${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: invalid JSON`));

    const shape = writeFile('shape.json', JSON.stringify({ tools: [{ description: 'no name' }] }));
    const shapeRun = await run(['slack', '--tools', shape]);
    expect(shapeRun.exitCode).toBe(1);
    expect(shapeRun.stderr).toContain(`${shape}: tool 0 has no "name" string`);
  });

  it('reports a bad --queries line with the file and line number', async () => {
    const queries = writeFile('broken.jsonl', `${JSON.stringify({ query: 'ok' })}\nnot json\n`);
    const { stderr, exitCode, stdout } = await run(['--queries', queries, '--tools', toolsFile]);
    expect(exitCode).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toContain(`${queries}:2: invalid JSON`);
  });

  it('rejects an empty query, a missing query, a query with --queries and a bad --max-results', async () => {
    const empty = await run(['  ', '--tools', toolsFile]);
    expect(empty.exitCode).toBe(1);
    expect(empty.stderr).toContain('The query is empty');

    const none = await run(['--tools', toolsFile]);
    expect(none.exitCode).toBe(1);
    expect(none.stderr).toContain('a query is required');

    const both = await run(['slack', '--queries', toolsFile, '--tools', toolsFile]);
    expect(both.exitCode).toBe(1);
    expect(both.stderr).toContain('not both');

    const max = await run(['slack', '--tools', toolsFile, '--max-results', 'zero']);
    expect(max.exitCode).toBe(1);
    expect(max.stderr).toContain('--max-results must be a positive integer');
  });
});
