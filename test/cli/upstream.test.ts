/**
 * The CLI and upstream MCP servers: `doctor` connects to each, `list
 * --upstream` and `search --upstream` read their tools, `serve` refuses a
 * folder whose mcp.json cannot be expanded. The built CLI in the test
 * process, serve in a child process; the fixture upstream server spawned by
 * it.
 */
import { describe, expect, it } from 'vitest';
import { runCli, runCliInProcess } from '../support/cli.js';
import { closedPort, stdioServer, upstreamAgents } from '../support/upstream.js';

const agentport = (args: string[], env: Record<string, string | undefined> = {}) =>
  runCliInProcess(args, { env: { OPENAI_API_KEY: 'k', ...env } });
/** serve ends its own process: it runs in one. */
const spawned = (args: string[], env: Record<string, string | undefined> = {}) => runCli(args, { env: { OPENAI_API_KEY: 'k', ...env } });

const TOKEN = 'cli-token-5150-secret';
const DOWN = await closedPort();
const working = upstreamAgents({
  mcp: {
    mcpServers: {
      fx: stdioServer({ UPSTREAM_NAME: 'fx', UPSTREAM_PAGE_SIZE: '5' }),
      down: { type: 'http', url: `http://127.0.0.1:${DOWN}/mcp`, headers: { Authorization: 'Bearer ${env:DOWN_TOKEN}' }, timeoutMs: 3000 },
    },
  },
  prompts: { helper: `toolDescription: 'Uses fx.', prompt: 'Help.', tools: ['mcp:fx', 'mcp:fx/no_such_tool']` },
});

describe('agentport doctor with upstream servers', () => {
  it('[UP-1] connects to each server and reports its tool count or why it is unreachable', async () => {
    const { code, stdout } = await agentport(['doctor', '--dir', working], { DOWN_TOKEN: TOKEN });
    expect(code).toBe(1);
    expect(stdout).toMatch(/^upstream fx \(stdio .*stdio\.mjs\): ok, 14 tool\(s\) \(protocol 2025-11-25\)$/m);
    expect(stdout).toContain(`upstream down (http http://127.0.0.1:${DOWN}/mcp): unreachable`);
    expect(stdout).toMatch(/error: .*mcp\.json field mcpServers\.down: upstream server down is unavailable: .*fetch failed.*ECONNREFUSED/);
    expect(stdout).toContain('warning: ');
    expect(stdout).toContain('upstream server fx has no tool "no_such_tool"');
    expect(stdout).not.toContain(TOKEN);
  });

  it('[UP-1] --no-upstream skips the connections', async () => {
    const { stdout } = await agentport(['doctor', '--no-upstream', '--dir', working], { DOWN_TOKEN: TOKEN });
    expect(stdout).not.toContain('upstream fx');
    expect(stdout).toMatch(/ok: 1 prompt\(s\), 0 tool\(s\), 1 model\(s\), 0 hook\(s\), 0 agent\(s\), 2 upstream server\(s\)/);
  });

  it('[UP-1] a ${env:} variable that is not set is an error naming it, for doctor and serve', async () => {
    const doctor = await agentport(['doctor', '--dir', working], { DOWN_TOKEN: undefined });
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toContain('field mcpServers.down.headers.Authorization: environment variable DOWN_TOKEN is not set');
    const serve = await spawned(['serve', '--dir', working], { DOWN_TOKEN: undefined });
    expect(serve.code).toBe(1);
    expect(serve.stderr).toContain('environment variable DOWN_TOKEN is not set');
    expect(serve.stderr).toContain('not starting');
  });
});

describe('agentport list and search --upstream', () => {
  const fxOnly = upstreamAgents({
    mcp: { mcpServers: { fx: stdioServer({ UPSTREAM_NAME: 'fx' }) } },
    prompts: { helper: `toolDescription: 'Writes notes for people.', prompt: 'Help.'` },
  });

  it('[UP-2] list --upstream shows every upstream tool under the name models see', async () => {
    const { code, stdout } = await agentport(['list', '--upstream', '--dir', fxOnly]);
    expect(code).toBe(0);
    expect(stdout).toContain('fx__echo  Echo a text back unchanged.\n');
    expect(stdout).toMatch(/^fx__get_item_[0-9a-f]{8} {2}Get an item \(dotted name\)\. {2}\(get\.item on fx\)$/m);
    const json = JSON.parse((await agentport(['list', '--upstream', '--json', '--dir', fxOnly])).stdout) as {
      tools: Array<{ name: string; _meta: unknown }>;
    };
    expect(json.tools).toHaveLength(14);
    expect(json.tools[0]).toMatchObject({ name: 'fx__echo', _meta: { 'agentport/upstream': { server: 'fx', tool: 'echo' } } });
  });

  it('[UP-2] search --upstream evaluates queries over local and upstream tools together', async () => {
    const { code, stdout } = await agentport(['search', '+note', '--json', '--upstream', '--dir', fxOnly]);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ query: '+note', results: ['fx__write_note'] });
    const both = JSON.parse((await agentport(['search', 'write notes', '--json', '--upstream', '--dir', fxOnly])).stdout) as {
      results: string[];
    };
    expect(both.results).toEqual(expect.arrayContaining(['fx__write_note', 'helper']));
  });

  it('serve --expose-upstream needs upstream servers', async () => {
    const plain = upstreamAgents({ mcp: '{"mcpServers": {}}', prompts: { helper: `toolDescription: 'h', prompt: 'p'` } });
    const { code, stderr } = await spawned(['serve', '--expose-upstream', '--dir', plain]);
    expect(code).toBe(1);
    expect(stderr).toContain('--expose-upstream: ');
    expect(stderr).toContain('declares no upstream MCP servers');
  });
});
