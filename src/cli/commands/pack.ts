import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { agentsDirOf, fail, loadForCommand, printIssues, shownPath, type DirOptions, DIR_HELP, DIR_OPTION } from '../context.js';

interface PackOptions extends DirOptions {
  out?: string;
  name?: string;
}

/** `agentport pack`: an MCP Bundle (.mcpb) of agentport and an agents folder, for Claude Desktop. */
export function registerPackCommand(program: Command): void {
  program
    .command('pack')
    .description('build an MCP Bundle (.mcpb) of the agents folder for Claude Desktop, with agentport and its dependencies inside')
    .option(DIR_OPTION, DIR_HELP)
    .option('-o, --out <file>', 'the bundle to write (default: ./<name>.mcpb)')
    .option('--name <name>', "bundle name (default: the agents folder's package.json name, else the folder's name)")
    .action(async (options: PackOptions) => {
      const agentsDir = agentsDirOf(options);
      const { UPSTREAM_CONFIG_FILE, upstreamVariables } = await import('../../upstream/config.js');
      const upstream = upstreamVariables(readIfPresent(path.join(agentsDir, UPSTREAM_CONFIG_FILE)) ?? '');
      // The bundle's user provides these; the folder is checked as if they had a value here too.
      const env: Record<string, string | undefined> = { ...process.env };
      for (const variable of upstream) {
        // URL-shaped, so that a "url" made of the variable still parses; used for checking only, never packed.
        if (env[variable.name] === undefined && variable.fallback === undefined) env[variable.name] = 'http://agentport-pack.invalid';
      }
      const loaded = await loadForCommand(options, { env });
      printIssues(loaded.issues);
      if (loaded.errors.length) {
        fail(`not packing: ${loaded.errors.length} error(s) in ${loaded.registry.agentsDir} (listed above)`);
        return;
      }
      const [{ buildToolCatalog, listedTool }, { buildManifest }, { installationRoot, stageBundle }, { readPackageJson }, mcpb] =
        await Promise.all([
          import('../../server/toolCatalog.js'),
          import('../pack/manifest.js'),
          import('../pack/stage.js'),
          import('../pack/dependencies.js'),
          import('@anthropic-ai/mcpb'),
        ]);
      const own = (readPackageJson(installationRoot()) ?? {}) as { version?: string; engines?: { node?: string } };
      const theirs = (readPackageJson(agentsDir) ?? {}) as {
        name?: string;
        version?: string;
        description?: string;
        author?: string | { name?: string };
      };
      const tools = buildToolCatalog(loaded.registry).map(listedTool);
      const name = bundleName(options.name ?? theirs.name ?? defaultName(agentsDir));
      const manifest = buildManifest(loaded.registry, {
        manifestVersion: mcpb.DEFAULT_MANIFEST_VERSION,
        name,
        version: theirs.version ?? own.version ?? '0.1.0',
        description: theirs.description ?? `Agents served by agentport: ${tools.map((t) => t.name).join(', ') || 'no exposed tools'}.`,
        author: (typeof theirs.author === 'string' ? theirs.author : theirs.author?.name) ?? safeUserName(),
        tools,
        nodeEngine: own.engines?.node ?? '>=20.19',
        upstream,
      });
      const checked = mcpb.MANIFEST_SCHEMAS[mcpb.DEFAULT_MANIFEST_VERSION].safeParse(JSON.parse(JSON.stringify(manifest)));
      if (!checked.success) {
        fail(`the bundle manifest does not validate: ${checked.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
        return;
      }

      const out = path.resolve(options.out ?? `${name}.mcpb`);
      const stageDir = mkdtempSync(path.join(os.tmpdir(), 'agentport-pack-'));
      try {
        const { packages } = stageBundle({ stageDir, agentsDir, manifest });
        // mcpb reports validation with console.log even when silent: keep stdout for our summary.
        const log = console.log;
        console.log = () => undefined;
        let packed: boolean;
        try {
          packed = await mcpb.packExtension({ extensionPath: stageDir, outputPath: out, silent: true });
        } finally {
          console.log = log;
        }
        if (!packed) {
          fail(`mcpb could not pack the bundle (staged in ${stageDir})`);
          return;
        }
        const asked = Object.keys(manifest.user_config ?? {});
        process.stdout.write(
          `Packed ${shownPath(out)}: ${name}@${manifest.version}, ${tools.length} tool(s), ${packages} package(s)` +
            `${asked.length ? `; asks for ${asked.join(', ')}` : ''}.\n` +
            'Install it in Claude Desktop: Settings > Extensions, then drag the file in (or double-click it).\n',
        );
      } finally {
        if (process.exitCode === undefined || process.exitCode === 0) rmSync(stageDir, { recursive: true, force: true });
      }
    });
}

function readIfPresent(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    // No mcp.json (or no folder, which loading reports): nothing to ask for.
    return undefined;
  }
}

/** The folder's name, or its parent's when it is called `agents`. */
function defaultName(agentsDir: string): string {
  const base = path.basename(agentsDir);
  return base === 'agents' ? path.basename(path.dirname(agentsDir)) : base;
}

/** Lower case letters, digits and hyphens (a scoped package name loses its scope). */
function bundleName(raw: string): string {
  const cleaned = raw
    .replace(/^@[^/]+\//, '')
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return cleaned || 'agentport-agents';
}

function safeUserName(): string {
  try {
    return os.userInfo().username || 'agentport';
  } catch {
    return 'agentport';
  }
}
