/**
 * `agentport pack`: the built CLI packs an agents folder into an MCP Bundle;
 * mcpb's own CLI validates and unpacks it; the unpacked bundle is started
 * the way Claude Desktop starts it (mcp_config with `${__dirname}` and
 * `${user_config.*}` substituted, only the mapped environment) and answers
 * tools/list through the real MCP client.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectStdio, newClient, tempDir } from '../support/mcpClients.js';
import { CLI, EXAMPLE_AGENTS, FIXTURES, REPO_ROOT } from '../support/paths.js';

const exec = promisify(execFile);
const MCPB_CLI = path.join(REPO_ROOT, 'node_modules', '@anthropic-ai', 'mcpb', 'dist', 'cli', 'cli.js');

interface Manifest {
  manifest_version: string;
  name: string;
  server: { type: string; entry_point: string; mcp_config: { command: string; args: string[]; env: Record<string, string> } };
  tools: Array<{ name: string; description?: string }>;
  user_config?: Record<string, { type: string; required?: boolean; sensitive?: boolean; default?: string }>;
}

async function agentport(args: string[]) {
  return exec(process.execPath, [CLI, ...args], {
    env: { ...process.env, AGENTPORT_DATA_DIR: tempDir(), OPENAI_API_KEY: '' },
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
function substitute(text: string, dir: string, values: Record<string, string>): string {
  return text.replace(/\$\{__dirname\}/g, dir).replace(/\$\{user_config\.([^}]+)\}/g, (_, key: string) => values[key] ?? '');
}

describe('agentport pack', () => {
  let packed: Awaited<ReturnType<typeof packAndUnpack>>;
  const closers: Array<() => Promise<void>> = [];

  beforeAll(async () => {
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
        env: { OPENAI_API_KEY: '${user_config.openai_api_key}' },
      },
    });
    expect(manifest.user_config?.openai_api_key).toMatchObject({ type: 'string', required: true, sensitive: true });
    // An optional field has a default, so hosts substitute '' rather than the literal placeholder.
    expect(manifest.user_config?.openai_base_url).toMatchObject({ required: false, default: '' });
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

  it('[EC-3] starts unpacked the way Claude Desktop runs it and lists the same tools as the folder served from here', async () => {
    const { dir, manifest } = packed;
    const { stdout } = await agentport(['list', '--json', '--dir', EXAMPLE_AGENTS]);
    const expected = (JSON.parse(stdout) as { tools: Array<{ name: string }> }).tools.map((t) => t.name);
    expect(manifest.tools.map((t) => t.name)).toEqual(expected);

    const values = { openai_api_key: 'sk-test-bundle' };
    const config = manifest.server.mcp_config;
    // Only what the manifest maps (and what any process has: PATH, HOME): none of the developer's settings.
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? dir };
    for (const [name, value] of Object.entries(config.env)) env[name] = substitute(value, dir, values);
    expect(env.OPENAI_API_KEY).toBe('sk-test-bundle');
    let stderr = '';
    const transport = new StdioClientTransport({
      // "node" in a bundle is the host's Node; here, the Node running the tests.
      command: config.command === 'node' ? process.execPath : config.command,
      args: config.args.map((arg) => substitute(arg, dir, values)),
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
  }, 60_000);

  it('[EC-3] asks for required variables in user_config, secret ones sensitive, mapped into the environment', async () => {
    const { manifest } = await packAndUnpack(path.join(FIXTURES, 'agents', 'runtime'));
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
});
