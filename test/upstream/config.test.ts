/** agents/mcp.json: shape, ${env:} expansion, secrets, and mcp: references in prompts. */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LoadIssue } from '../../src/definitions/issues.js';
import { loadRegistry } from '../../src/registry/load.js';
import { parseUpstreamConfig, upstreamVariables } from '../../src/upstream/config.js';
import { envReferences, expandEnv } from '../../src/upstream/envExpand.js';
import { namespaceTools, sanitizeToolName, serverOf } from '../../src/upstream/names.js';
import { promptyToolReference } from '../../src/upstream/prompty.js';
import { selectUpstreamTool, upstreamReferencesOf } from '../../src/upstream/references.js';
import { upstreamAgents } from '../support/upstream.js';

function parse(mcpServers: unknown, env: Record<string, string> = {}) {
  const issues: LoadIssue[] = [];
  const config = parseUpstreamConfig(JSON.stringify({ mcpServers }), {
    file: 'agents/mcp.json',
    agentsDir: '/project/agents',
    env,
    issues,
  });
  return { config, issues, errors: issues.filter((i) => i.severity === 'error').map((i) => `${i.field}: ${i.message}`) };
}

describe('agents/mcp.json', () => {
  it("[UP-1] reads stdio and Streamable HTTP servers in the hosts' mcpServers shape", () => {
    const { config, errors } = parse({
      files: { command: 'npx', args: ['-y', 'server-filesystem', '../docs'], env: { LOG_LEVEL: 'info' } },
      remote: { type: 'http', url: 'https://mcp.example.com/mcp', headers: { 'X-Team': 'core' }, timeoutMs: 5000 },
      bare: { url: 'http://127.0.0.1:9000/mcp' },
    });
    expect(errors).toEqual([]);
    expect(config!.servers.get('files')).toEqual({
      name: 'files',
      transport: 'stdio',
      command: 'npx',
      args: ['-y', 'server-filesystem', '../docs'],
      env: { LOG_LEVEL: 'info' },
      cwd: '/project/agents',
      timeoutMs: 60_000,
    });
    expect(config!.servers.get('remote')).toEqual({
      name: 'remote',
      transport: 'http',
      url: 'https://mcp.example.com/mcp',
      headers: { 'X-Team': 'core' },
      timeoutMs: 5000,
    });
    expect(config!.servers.get('bare')?.transport).toBe('http');
  });

  it('[UP-1] lists the variables a file uses, for asking for them elsewhere (agentport pack)', () => {
    expect(envReferences('a ${env:X} ${env:Y:d} ${Z:-z} ${W} ${env:E:}')).toEqual([
      { name: 'X' },
      { name: 'Y', fallback: 'd' },
      { name: 'Z', fallback: 'z' },
      { name: 'W' },
      { name: 'E', fallback: '' },
    ]);
    const text = JSON.stringify({
      mcpServers: {
        gh: {
          type: 'http',
          url: '${env:GH_URL:https://api.example.com/mcp}',
          headers: { 'X-Team': '${env:TEAM:core}' },
          command: '${env:NOT_USED}',
        },
        local: {
          command: 'node',
          args: ['${env:MODE:dev}'],
          env: { API_KEY: '${env:LOCAL}', MODE: '${env:MODE}' },
          description: '${env:IGNORED}',
        },
      },
    });
    expect(upstreamVariables(text)).toEqual([
      { name: 'GH_URL', fallback: 'https://api.example.com/mcp', secret: false, servers: ['gh'] },
      { name: 'TEAM', fallback: 'core', secret: true, servers: ['gh'] },
      // Used once without a default: required wherever else it has one.
      { name: 'MODE', secret: false, servers: ['local'] },
      { name: 'LOCAL', secret: true, servers: ['local'] },
    ]);
    expect(upstreamVariables('not json')).toEqual([]);
  });

  it('[UP-1] expands ${env:NAME} and ${env:NAME:default} in env, headers and url (and the Claude Code ${NAME:-default} form)', () => {
    expect(expandEnv('a ${env:X} b ${env:Y:fallback} c ${Z:-zz} ${X}', { X: '1' })).toEqual({
      value: 'a 1 b fallback c zz 1',
      missing: [],
      fromEnv: [
        { name: 'X', value: '1' },
        { name: 'X', value: '1' },
      ],
    });
    const { config, errors } = parse(
      {
        gh: { type: 'http', url: '${env:GH_URL:https://api.example.com/mcp}', headers: { Authorization: 'Bearer ${env:GH_TOKEN}' } },
        local: { command: 'node', args: ['${env:SERVER_JS}'], env: { API_KEY: '${env:LOCAL_KEY}', MODE: '${env:MODE:dev}' } },
      },
      { GH_TOKEN: 'ghp_secret_value', SERVER_JS: 'server.js', LOCAL_KEY: 'local-key-123' },
    );
    expect(errors).toEqual([]);
    expect(config!.servers.get('gh')).toMatchObject({
      url: 'https://api.example.com/mcp',
      headers: { Authorization: 'Bearer ghp_secret_value' },
    });
    expect(config!.servers.get('local')).toMatchObject({ args: ['server.js'], env: { API_KEY: 'local-key-123', MODE: 'dev' } });
    // Credential headers, what ${env:} brings into env and headers, and credential-named variables elsewhere are secrets;
    // an argument from an ordinary variable (a path) is not.
    expect(config!.secrets.text('Bearer ghp_secret_value / local-key-123 / dev / server.js')).toBe(
      '[redacted secret] / [redacted secret] / dev / server.js',
    );
  });

  it('[UP-1] a missing variable without a default is an error naming it, and the server is left out', () => {
    const { config, errors } = parse({
      gh: { type: 'http', url: 'https://x.example/mcp', headers: { Authorization: 'Bearer ${env:GITHUB_PAT_FOR_TEST}' } },
    });
    expect(errors).toEqual([
      'mcpServers.gh.headers.Authorization: environment variable GITHUB_PAT_FOR_TEST is not set (set it, or give a default: ${env:GITHUB_PAT_FOR_TEST:default})',
    ]);
    expect(config!.servers.has('gh')).toBe(false);
  });

  it('[UP-1] reports malformed entries: names, types, SSE, unknown keys', () => {
    const { issues } = parse({
      bad__name: { command: 'x' },
      sse: { type: 'sse', url: 'http://x/sse' },
      odd: { command: 'x', args: 'not-a-list', colour: 'blue' },
      nothing: {},
      slow: { command: 'x', timeoutMs: -1 },
    });
    const text = issues.map((i) => `${i.severity} ${i.field}: ${i.message}`);
    expect(text).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^error mcpServers\.bad__name: server name "bad__name" must be/),
        expect.stringMatching(/^error mcpServers\.sse\.type: the SSE transport is not supported/),
        'error mcpServers.odd.args: must be an array of strings',
        expect.stringMatching(/^warning mcpServers\.odd\.colour: unknown key "colour" is ignored/),
        'error mcpServers.nothing: expected "command" (a stdio server) or "type": "http" with "url"',
        'error mcpServers.slow.timeoutMs: must be a positive integer (milliseconds)',
      ]),
    );
  });
});

describe('upstream tool names', () => {
  it('[UP-2] are <server>__<tool> with other characters made _, cut to 64 with a stable hash, collisions resolved', () => {
    expect(sanitizeToolName('repo.create-issue')).toBe('repo_create-issue');
    const long = 'x'.repeat(80);
    const names = namespaceTools('gh', ['create_issue', 'get.item', 'get_item', long]);
    expect(names.get('create_issue')).toBe('gh__create_issue');
    expect(names.get('get_item')).toBe('gh__get_item');
    expect(names.get('get.item')).toMatch(/^gh__get_item_[0-9a-f]{8}$/);
    expect(names.get(long)).toHaveLength(64);
    // Stable: the same names whatever the order the server lists its tools in.
    expect(namespaceTools('gh', [long, 'get_item', 'create_issue', 'get.item'])).toEqual(names);
    // A name the agents folder already uses goes to the local definition.
    expect(namespaceTools('gh', ['create_issue'], (name) => name === 'gh__create_issue').get('create_issue')).toMatch(
      /^gh__create_issue_[0-9a-f]{8}$/,
    );
    expect(serverOf('gh__get_item_1a2b3c4d')).toBe('gh');
    expect(serverOf('plain_name')).toBeUndefined();
  });
});

describe('mcp: references', () => {
  it('[UP-2] select tools: all, one, only some, exclude, alwaysLoad, timeoutMs', () => {
    const references = upstreamReferencesOf([
      'lookup_order',
      'mcp:gh/create_issue',
      { name: 'mcp:files', alwaysLoad: ['read_file'], exclude: ['delete_file'], timeoutMs: 5000 },
    ]);
    expect(references.map((r) => r.server)).toEqual(['gh', 'files']);
    expect(selectUpstreamTool(references, 'gh', 'create_issue', 'gh__create_issue')).toEqual({ alwaysLoad: false });
    expect(selectUpstreamTool(references, 'gh', 'delete_repo', 'gh__delete_repo')).toBeUndefined();
    expect(selectUpstreamTool(references, 'files', 'read_file', 'files__read_file')).toEqual({ alwaysLoad: true, timeoutMs: 5000 });
    expect(selectUpstreamTool(references, 'files', 'write_file', 'files__write_file')).toEqual({ alwaysLoad: false, timeoutMs: 5000 });
    expect(selectUpstreamTool(references, 'files', 'delete_file', 'files__delete_file')).toBeUndefined();
  });

  it('[UP-2] are checked when the folder loads: the server must be declared', async () => {
    const dir = upstreamAgents({
      mcp: { mcpServers: { files: { command: 'node', args: ['x.js'] } } },
      prompts: {
        ok: `toolDescription: 'ok', prompt: 'p', tools: ['mcp:files', { name: 'mcp:files/read', alwaysLoad: true }, { name: 'mcp:files', timeoutMs: 9000 }]`,
        typo: `toolDescription: 'typo', prompt: 'p', tools: ['mcp:filez']`,
        odd: `toolDescription: 'odd', prompt: 'p', tools: [{ name: 'mcp:files', exclude: 'x', colour: 1 }]`,
      },
    });
    const { issues } = await loadRegistry({ agentsDir: dir });
    const text = issues.map((i) => `${i.severity} ${i.definition} ${i.field}: ${i.message}`);
    expect(text).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^error typo tools\[0\]: unknown upstream server "filez" \(.*mcp\.json declares files\) \(did you mean "files"\?\)$/,
        ),
        'error odd tools[0].exclude: must be a list of tool names',
        expect.stringMatching(/^warning odd tools\[0\]\.colour: unknown key "colour"/),
      ]),
    );
    expect(text.filter((t) => t.includes(' ok '))).toEqual([]);
  });

  it('[UP-2] refuses entries of one server that cannot be merged: an exclude the other entry undoes, two timeouts', async () => {
    const dir = upstreamAgents({
      mcp: { mcpServers: { gh: { command: 'node', args: ['x.js'] } } },
      prompts: {
        undone: `toolDescription: 'u', prompt: 'p', tools: ['mcp:gh', { name: 'mcp:gh', exclude: ['delete_repo'] }]`,
        timed: `toolDescription: 't', prompt: 'p', tools: [{ name: 'mcp:gh', timeoutMs: 1000 }, 'mcp:gh/x', { name: 'mcp:gh', timeoutMs: 2000 }]`,
        merged: `toolDescription: 'm', prompt: 'p', tools: ['mcp:gh', { name: 'mcp:gh', tools: ['a'], timeoutMs: 5000 }, { name: 'mcp:gh/b', alwaysLoad: true }]`,
      },
    });
    const { issues } = await loadRegistry({ agentsDir: dir });
    expect(issues.filter((i) => i.severity === 'error').map((i) => `${i.definition} ${i.field}: ${i.message}`)).toEqual([
      'timed tools[2]: "mcp:gh" is listed twice (tools[0] and tools[2]) with different timeoutMs (1000 and 2000): give one',
      'undone tools[1]: "mcp:gh" is listed twice (tools[0] and tools[1]) and one has exclude: the other offers the excluded tools again; list it once, with its exclude',
    ]);
  });

  it('[UP-1] a prompt naming a server that no mcp.json declares is a load error', async () => {
    const dir = upstreamAgents({ mcp: '{"mcpServers": {}}', prompts: { lonely: `toolDescription: 't', prompt: 'p', tools: ['mcp:gh']` } });
    const errors = async () => (await loadRegistry({ agentsDir: dir })).issues.filter((i) => i.severity === 'error').map((i) => i.message);
    expect(await errors()).toEqual([expect.stringMatching(/unknown upstream server "gh" \(.* declares none\)/)]);
    rmSync(path.join(dir, 'mcp.json'));
    expect(await errors()).toEqual(['"mcp:gh" refers to an upstream MCP server, but the agents folder has no mcp.json declaring servers']);
  });

  it('[UP-2] maps Prompty kind: mcp tool entries to the same references', async () => {
    expect(promptyToolReference({ name: 'github tools', kind: 'mcp', serverName: 'gh', allowedTools: ['create_issue'] })).toEqual({
      name: 'mcp:gh',
      tools: ['create_issue'],
    });
    expect(promptyToolReference({ name: 'gh', kind: 'mcp' })).toEqual({ name: 'mcp:gh' });
    expect(promptyToolReference('lookup_order')).toBe('lookup_order');
    const dir = upstreamAgents({
      mcp: { mcpServers: { gh: { command: 'node', args: ['x.js'] } } },
      prompts: {},
      files: {
        'prompts/triage.prompty': [
          '---',
          'name: triage',
          'description: Triage issues with the GitHub tools.',
          'model: m',
          'tools:',
          '  - name: github',
          '    kind: mcp',
          '    serverName: gh',
          '    allowedTools: [create_issue, list_issues]',
          '---',
          'system:',
          'You triage issues.',
          '',
          'user:',
          'Go.',
        ].join('\n'),
      },
    });
    const { registry, issues } = await loadRegistry({ agentsDir: dir });
    expect(issues.filter((i) => i.severity === 'error')).toEqual([]);
    expect(registry.prompts.get('triage')!.definition.tools).toEqual([{ name: 'mcp:gh', tools: ['create_issue', 'list_issues'] }]);
  });

  it('[UP-2] checks the kind: mcp entries of a .prompty file rejected for another field as servers, not tools', async () => {
    const prompty = (server: string): string =>
      [
        '---',
        'name: triage',
        'description: d',
        'model: m',
        'toolChoice: always',
        'tools:',
        '  - name: github',
        '    kind: mcp',
        `    serverName: ${server}`,
        '---',
        'Go.',
      ].join('\n');
    const load = async (server: string) => {
      const dir = upstreamAgents({
        mcp: { mcpServers: { gh: { command: 'node', args: ['x.js'] } } },
        prompts: {},
        files: { 'prompts/triage.prompty': prompty(server) },
      });
      return (await loadRegistry({ agentsDir: dir })).issues.filter((i) => i.severity === 'error').map((i) => `${i.field}: ${i.message}`);
    };
    // Only its own mistake: the declared server is no unknown tool.
    expect(await load('gh')).toEqual([expect.stringMatching(/^toolChoice: /)]);
    expect(await load('gx')).toEqual([
      expect.stringMatching(/^toolChoice: /),
      expect.stringMatching(/^tools\[0\]: unknown upstream server "gx"/),
    ]);
  });
});
