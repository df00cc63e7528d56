/**
 * `agentport pack`: the built CLI packs an agents folder into an MCP Bundle;
 * mcpb's own CLI validates and unpacks it; the unpacked bundle is started
 * the way Claude Desktop starts it (mcp_config resolved by mcpb's own config
 * code: `${__dirname}`, `${user_config.*}` and defaults substituted; only the
 * mapped environment), answers tools/list through the real MCP client, and
 * keeps its threads in the data folder it is given.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { getMcpConfigForManifest, type McpbManifestAny } from '@anthropic-ai/mcpb';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataDirOf } from '../../src/cli/context.js';
import { prepareBundle } from '../../src/cli/pack/prepare.js';
import { FakeModelServer } from '../support/fakeModelServer.js';
import { connectStdio, newClient, tempDir } from '../support/mcpClients.js';
import { CLI, EXAMPLE_AGENTS, FIXTURES, REPO_ROOT } from '../support/paths.js';

const exec = promisify(execFile);
const MCPB_CLI = path.join(REPO_ROOT, 'node_modules', '@anthropic-ai', 'mcpb', 'dist', 'cli', 'cli.js');

interface Manifest {
  manifest_version: string;
  name: string;
  server: { type: string; entry_point: string; mcp_config: { command: string; args: string[]; env: Record<string, string> } };
  tools: Array<{ name: string; description?: string }>;
  user_config?: Record<
    string,
    { type: string; title: string; description: string; required?: boolean; sensitive?: boolean; default?: string }
  >;
}

/** Variables the upstream fixture uses: unset while packing, as on a machine that never ran those servers. */
const UPSTREAM_VARIABLES = ['GITHUB_TOKEN', 'GITHUB_ORG', 'GITHUB_MCP_URL', 'GH_PAT_VALUE', 'FILES_REGION', 'DOCS_DIR', 'HOSTED_MCP_URL'];

async function agentport(args: string[]) {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined && !UPSTREAM_VARIABLES.includes(name)) env[name] = value;
  return exec(process.execPath, [CLI, ...args], {
    env: { ...env, AGENTPORT_DATA_DIR: tempDir(), OPENAI_API_KEY: '' },
    cwd: tempDir('agentport-pack-cwd-'),
  });
}

async function mcpb(args: string[]) {
  return exec(process.execPath, [MCPB_CLI, ...args]);
}

/** Packs `agentsDir`, unpacks the bundle with mcpb and returns where, with its manifest. */
async function packAndUnpack(agentsDir: string): Promise<{ bundle: string; dir: string; manifest: Manifest; stdout: string }> {
  const bundle = path.join(tempDir('agentport-pack-out-'), 'bundle.mcpb');
  const { stdout } = await agentport(['pack', '--dir', agentsDir, '--out', bundle]);
  const dir = tempDir('agentport-pack-unpacked-');
  await mcpb(['unpack', bundle, dir]);
  return { bundle, dir, stdout, manifest: JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as Manifest };
}

/** What Claude Desktop does with mcp_config: `${__dirname}` is the unpacked folder, `${user_config.x}` the user's value or the default. */
async function hostConfig(manifest: Manifest, dir: string, values: Record<string, string>, home: string) {
  const config = await getMcpConfigForManifest({
    manifest: manifest as unknown as McpbManifestAny,
    extensionPath: dir,
    systemDirs: {
      HOME: home,
      DESKTOP: path.join(home, 'Desktop'),
      DOCUMENTS: path.join(home, 'Documents'),
      DOWNLOADS: path.join(home, 'Downloads'),
    },
    userConfig: values,
    pathSeparator: path.sep,
  });
  if (!config) throw new Error('mcpb resolved no mcp_config (a required field without a value?)');
  return { command: config.command, args: config.args ?? [], env: config.env ?? {} };
}

/**
 * The manifest `pack` would write, made in this process: what is asked of the bundle's user depends on the
 * folder, not on staging and zipping, which the tests above cover once.
 */
async function prepared(agentsDir: string) {
  const saved = UPSTREAM_VARIABLES.map((name) => [name, process.env[name]] as const);
  for (const name of UPSTREAM_VARIABLES) delete process.env[name];
  try {
    const result = await prepareBundle({ dir: agentsDir });
    if (!result.ok) throw new Error(result.message);
    return { manifest: result.manifest as unknown as Manifest, toolCount: result.toolCount };
  } finally {
    for (const [name, value] of saved) if (value !== undefined) process.env[name] = value;
  }
}

describe('agentport pack', () => {
  let packed: Awaited<ReturnType<typeof packAndUnpack>>;
  const closers: Array<() => Promise<void>> = [];
  const model = new FakeModelServer();

  beforeAll(async () => {
    await model.start();
    closers.push(() => model.stop());
    packed = await packAndUnpack(EXAMPLE_AGENTS);
  }, 120_000);

  afterAll(async () => {
    for (const close of closers) await close();
  });

  it('[EC-3] writes a bundle that `mcpb validate` accepts', async () => {
    expect(packed.stdout).toContain('8 tool(s)');
    const { stdout } = await mcpb(['validate', path.join(packed.dir, 'manifest.json')]);
    expect(stdout).toContain('Manifest schema validation passes');
    const { manifest } = packed;
    expect(manifest.server).toMatchObject({
      type: 'node',
      entry_point: 'server/dist/cli/main.js',
      mcp_config: {
        command: 'node',
        args: ['${__dirname}/server/dist/cli/main.js', 'serve', '--dir', '${__dirname}/agents'],
        env: { OPENAI_API_KEY: '${user_config.openai_api_key}', AGENTPORT_DATA_DIR: '${user_config.agentport_data_dir}' },
      },
    });
    expect(manifest.user_config?.openai_api_key).toMatchObject({ type: 'string', required: true, sensitive: true });
    // An optional field has a default, so hosts substitute '' rather than the literal placeholder.
    expect(manifest.user_config?.openai_base_url).toMatchObject({ required: false, default: '' });
    // Threads outside the folder the bundle is unpacked into, which updates replace.
    expect(manifest.user_config?.agentport_data_dir).toMatchObject({
      type: 'directory',
      required: false,
      default: `\${HOME}/.agentport/${manifest.name}`,
    });
    // agents/mcp.json's ${env:AGENTPORT_DOCS_DIR:../docs}: optional, with its default.
    expect(manifest.user_config?.agentport_docs_dir).toMatchObject({ type: 'string', required: false, default: '../docs' });
    expect(manifest.user_config?.agentport_docs_dir?.sensitive).toBeUndefined();
  });

  it('[EC-3] the default data folder is under the home folder, whether or not the host expands ${HOME} in defaults', async () => {
    const { dir, manifest } = packed;
    const config = await hostConfig(manifest, dir, { openai_api_key: 'sk-test-bundle' }, os.homedir());
    // mcpb's config code passes the default as written; serve expands it.
    const value = config.env.AGENTPORT_DATA_DIR!;
    expect(dataDirOf({ dataDir: value })).toBe(path.join(os.homedir(), '.agentport', manifest.name));
    expect(dataDirOf({ dataDir: value.replace('${HOME}', os.homedir()) })).toBe(path.join(os.homedir(), '.agentport', manifest.name));
  });

  it('[EC-3] holds agentport, the agents folder and production dependencies only', () => {
    const { dir } = packed;
    expect(existsSync(path.join(dir, 'server', 'dist', 'cli', 'main.js'))).toBe(true);
    const serverPackage = JSON.parse(readFileSync(path.join(dir, 'server', 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(serverPackage.type).toBe('module');
    expect(serverPackage.devDependencies).toBeUndefined();
    expect(existsSync(path.join(dir, 'agents', 'prompts', 'support.ts'))).toBe(true);
    for (const dependency of ['@modelcontextprotocol/server', 'zod', 'openai', 'jiti', 'commander']) {
      expect(existsSync(path.join(dir, 'node_modules', dependency, 'package.json')), dependency).toBe(true);
    }
    for (const devOrBuildOnly of ['vitest', 'typescript', '@anthropic-ai/mcpb', '@modelcontextprotocol/inspector']) {
      expect(existsSync(path.join(dir, 'node_modules', devOrBuildOnly)), devOrBuildOnly).toBe(false);
    }
  });

  it('[EC-3] starts unpacked the way Claude Desktop runs it, lists the same tools as the folder served from here, keeps threads in the data folder', async () => {
    const { dir, manifest } = packed;
    const { stdout } = await agentport(['list', '--json', '--dir', EXAMPLE_AGENTS]);
    const expected = (JSON.parse(stdout) as { tools: Array<{ name: string }> }).tools.map((t) => t.name);
    expect(manifest.tools.map((t) => t.name)).toEqual(expected);

    const home = tempDir('agentport-pack-home-');
    const dataDir = path.join(tempDir('agentport-pack-data-'), 'chosen');
    const values = { openai_api_key: 'sk-test-bundle', openai_base_url: model.baseURL, agentport_data_dir: dataDir };
    const config = await hostConfig(manifest, dir, values, home);
    // Only what the manifest maps (and what any process has: PATH, HOME): none of the developer's settings.
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: home, ...config.env };
    expect(env.OPENAI_API_KEY).toBe('sk-test-bundle');
    expect(env.AGENTPORT_DATA_DIR).toBe(dataDir);
    let stderr = '';
    const transport = new StdioClientTransport({
      // "node" in a bundle is the host's Node; here, the Node running the tests.
      command: config.command === 'node' ? process.execPath : config.command,
      args: config.args,
      env,
      cwd: tempDir('agentport-pack-host-cwd-'),
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const client = newClient('legacy');
    closers.push(() => client.close());
    await client.connect(transport).catch((error: unknown) => {
      throw new Error(`the bundle did not start: ${String(error)}\n${stderr}`);
    });
    const { tools } = await client.listTools();
    // Every exposed tool the manifest names, and exactly what the same folder served from this repository lists.
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(expected));
    const reference = await connectStdio('legacy', { agentsDir: EXAMPLE_AGENTS, env: { OPENAI_API_KEY: 'sk-test-bundle' } });
    closers.push(() => reference.client.close());
    expect(tools).toEqual((await reference.client.listTools()).tools);
    expect(tools.find((t) => t.name === 'support')?.description).toBe(manifest.tools.find((t) => t.name === 'support')?.description);

    // A call against the scripted model: its thread is in the chosen folder, nothing in the unpacked one.
    model.reply({ text: '- one\n- two\n- three' });
    const result = await client.callTool({ name: 'summarize', arguments: { message: 'A long text.' } });
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    const threadId = (result.structuredContent as { thread_id: string }).thread_id;
    // A new thread's log is in the pack its id names (src/store/packs.ts).
    expect(existsSync(path.join(dataDir, 'threads', 'packs', `${threadId.slice(0, 8)}.jsonl`))).toBe(true);
    expect(existsSync(path.join(dir, '.agentport'))).toBe(false);
    expect(existsSync(path.join(home, '.agentport'))).toBe(false);
  }, 60_000);

  it('[EC-3] asks for required variables in user_config, secret ones sensitive, mapped into the environment', async () => {
    const { manifest } = await prepared(path.join(FIXTURES, 'agents', 'runtime'));
    expect(manifest.user_config?.customer).toMatchObject({ type: 'string', required: true, description: 'Customer id' });
    expect(manifest.user_config?.customer?.sensitive).toBeUndefined();
    expect(manifest.user_config?.api_token).toMatchObject({ type: 'string', required: true, sensitive: true });
    // STORE_ID has a value in the prompts' env: not asked.
    expect(manifest.user_config?.store_id).toBeUndefined();
    expect(manifest.server.mcp_config.env).toMatchObject({
      CUSTOMER: '${user_config.customer}',
      API_TOKEN: '${user_config.api_token}',
      OPENAI_API_KEY: '${user_config.openai_api_key}',
    });
  }, 120_000);

  it('[EC-3] asks for the variables agents/mcp.json uses, packing although they are not set here', async () => {
    const { manifest, toolCount } = await prepared(path.join(FIXTURES, 'agents', 'pack-upstream'));
    expect(toolCount).toBe(1);
    const file = path.join(tempDir('agentport-pack-manifest-'), 'manifest.json');
    writeFileSync(file, JSON.stringify(manifest));
    const { stdout: validated } = await mcpb(['validate', file]);
    expect(validated).toContain('Manifest schema validation passes');
    const fields = manifest.user_config ?? {};
    // No default: required. Named like a credential, or in a header: sensitive.
    expect(fields.github_token).toMatchObject({ type: 'string', required: true, sensitive: true });
    expect(fields.github_token?.description).toContain('"github"');
    expect(fields.github_org).toMatchObject({ required: false, default: 'acme', sensitive: true });
    expect(fields.hosted_mcp_url).toMatchObject({ required: true });
    expect(fields.hosted_mcp_url?.sensitive).toBeUndefined();
    // In an env entry named like a credential: sensitive whatever its own name.
    expect(fields.gh_pat_value).toMatchObject({ required: true, sensitive: true });
    // With a default: optional, the default given to the host.
    expect(fields.github_mcp_url).toMatchObject({ required: false, default: 'https://api.example.com/mcp' });
    expect(fields.files_region).toMatchObject({ required: false, default: 'eu' });
    expect(fields.docs_dir).toMatchObject({ required: false, default: './docs' });
    for (const key of ['github_mcp_url', 'files_region', 'docs_dir']) expect(fields[key]?.sensitive, key).toBeUndefined();
    // The model's key is asked once, as the model's; system variables and ignored keys not at all.
    expect(fields.openai_api_key).toMatchObject({ required: true, sensitive: true });
    expect(fields.openai_api_key?.description).toContain('model "main"');
    expect(Object.keys(fields).filter((key) => key === 'openai_api_key')).toHaveLength(1);
    expect(fields.home).toBeUndefined();
    expect(fields.not_expanded).toBeUndefined();
    expect(manifest.server.mcp_config.env).toMatchObject({
      GITHUB_TOKEN: '${user_config.github_token}',
      GITHUB_ORG: '${user_config.github_org}',
      GH_PAT_VALUE: '${user_config.gh_pat_value}',
      HOSTED_MCP_URL: '${user_config.hosted_mcp_url}',
      OPENAI_API_KEY: '${user_config.openai_api_key}',
    });
    expect(manifest.server.mcp_config.env.HOME).toBeUndefined();
  }, 120_000);
});
