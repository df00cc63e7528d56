/**
 * What a bundle will be, before anything is copied: the agents folder loaded
 * (checked as if the variables its bundle asks for had values), the tools it
 * exposes, and a manifest that mcpb's own schema accepts.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LoadIssue } from '../../definitions/issues.js';
import { agentsDirOf, loadForCommand, type DirOptions } from '../context.js';
import type { BundleManifest } from './manifest.js';
import { UPSTREAM_CONFIG_FILE } from '../../upstream/configFile.js';

export interface PackOptions extends DirOptions {
  out?: string;
  name?: string;
}

export type PreparedBundle =
  | { ok: true; agentsDir: string; issues: LoadIssue[]; manifest: BundleManifest; toolCount: number }
  | { ok: false; issues: LoadIssue[]; message: string };

export async function prepareBundle(options: PackOptions): Promise<PreparedBundle> {
  const agentsDir = agentsDirOf(options);
  const { upstreamVariables } = await import('../../upstream/config.js');
  const upstream = upstreamVariables(readIfPresent(path.join(agentsDir, UPSTREAM_CONFIG_FILE)) ?? '');
  // The bundle's user provides these; the folder is checked as if they had a value here too.
  const env: Record<string, string | undefined> = { ...process.env };
  for (const variable of upstream) {
    // URL-shaped, so that a "url" made of the variable still parses; used for checking only, never packed.
    if (env[variable.name] === undefined && variable.fallback === undefined) env[variable.name] = 'http://agentport-pack.invalid';
  }
  const loaded = await loadForCommand(options, { env });
  if (loaded.errors.length) {
    return {
      ok: false,
      issues: loaded.issues,
      message: `not packing: ${loaded.errors.length} error(s) in ${loaded.registry.agentsDir} (listed above)`,
    };
  }
  const [{ buildToolCatalog, listedTool }, { buildManifest }, { requireInstallationRoot }, { readPackageJson }, mcpb] = await Promise.all([
    import('../../server/toolCatalog.js'),
    import('./manifest.js'),
    import('../../installation.js'),
    import('./dependencies.js'),
    import('@anthropic-ai/mcpb'),
  ]);
  const own = (readPackageJson(requireInstallationRoot()) ?? {}) as { version?: string; engines?: { node?: string } };
  const theirs = (readPackageJson(agentsDir) ?? {}) as {
    name?: string;
    version?: string;
    description?: string;
    author?: string | { name?: string };
  };
  const tools = buildToolCatalog(loaded.registry).map(listedTool);
  const manifest = buildManifest(loaded.registry, {
    manifestVersion: mcpb.DEFAULT_MANIFEST_VERSION,
    name: bundleName(options.name ?? theirs.name ?? defaultName(agentsDir)),
    version: theirs.version ?? own.version ?? '0.1.0',
    description: theirs.description ?? `Agents served by agentport: ${tools.map((t) => t.name).join(', ') || 'no exposed tools'}.`,
    author: (typeof theirs.author === 'string' ? theirs.author : theirs.author?.name) ?? safeUserName(),
    tools,
    nodeEngine: own.engines?.node ?? '>=20.19',
    upstream,
  });
  const checked = mcpb.MANIFEST_SCHEMAS[mcpb.DEFAULT_MANIFEST_VERSION].safeParse(JSON.parse(JSON.stringify(manifest)));
  if (!checked.success) {
    const problems = checked.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    return { ok: false, issues: loaded.issues, message: `the bundle manifest does not validate: ${problems}` };
  }
  return { ok: true, agentsDir, issues: loaded.issues, manifest, toolCount: tools.length };
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
