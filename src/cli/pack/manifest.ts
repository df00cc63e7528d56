/**
 * The MCP Bundle manifest (manifest.json) of an agents folder: how Claude
 * Desktop starts agentport, the exposed tools, and what the user is asked
 * for at install time (`user_config`: each model's API key, each required
 * declared variable, each variable agents/mcp.json uses, the data folder),
 * mapped into the server's environment.
 */
import { BASE_URL_ENV, DEFAULT_API_KEY_ENV } from '../../models/resolveModel.js';
import type { Registry } from '../../registry/types.js';
import { toolDeclarations } from '../../runtime/variables/variables.js';
import type { UpstreamVariable } from '../../upstream/config.js';

/** What `serve` reads when `--data-dir` is not given (see context.ts). */
const DATA_DIR_ENV = 'AGENTPORT_DATA_DIR';

/**
 * Variables a process gets from the system (the MCP SDK's inherited set on
 * POSIX and on Windows): mcp.json may use them, but a bundle's user is not
 * asked for them, and mapping them would replace the real value.
 */
const SYSTEM_ENV = new Set([
  'HOME',
  'LOGNAME',
  'PATH',
  'SHELL',
  'TERM',
  'USER',
  'APPDATA',
  'COMSPEC',
  'HOMEDRIVE',
  'HOMEPATH',
  'LOCALAPPDATA',
  'PATHEXT',
  'PROCESSOR_ARCHITECTURE',
  'PROGRAMDATA',
  'PROGRAMFILES',
  'PROGRAMFILES(X86)',
  'PROGRAMW6432',
  'SYSTEMDRIVE',
  'SYSTEMROOT',
  'TEMP',
  'USERNAME',
  'USERPROFILE',
  'WINDIR',
]);

interface UserConfigOption {
  type: 'string' | 'directory';
  title: string;
  description: string;
  required: boolean;
  sensitive?: boolean;
  default?: string;
}

export interface BundleManifest {
  manifest_version: string;
  name: string;
  display_name?: string;
  version: string;
  description: string;
  author: { name: string };
  server: {
    type: 'node';
    entry_point: string;
    mcp_config: { command: string; args: string[]; env: Record<string, string> };
  };
  tools: Array<{ name: string; description?: string }>;
  user_config?: Record<string, UserConfigOption>;
  keywords: string[];
  compatibility: { platforms: Array<'darwin' | 'win32' | 'linux'>; runtimes: { node: string } };
}

export interface ManifestInput {
  manifestVersion: string;
  name: string;
  version: string;
  description: string;
  author: string;
  tools: Array<{ name: string; description?: string }>;
  nodeEngine: string;
  /** The `${env:}` variables of agents/mcp.json (upstreamVariables). */
  upstream: readonly UpstreamVariable[];
}

/** Paths inside the bundle; `${__dirname}` is the folder the host unpacked it into. */
const BUNDLE_ENTRY = 'server/dist/cli/main.js';
export const BUNDLE_AGENTS = 'agents';

export function buildManifest(registry: Registry, input: ManifestInput): BundleManifest {
  const userConfig = userConfigFor(registry, { name: input.name, upstream: input.upstream });
  const env: Record<string, string> = {};
  for (const [key, option] of Object.entries(userConfig)) env[option.envName] = `\${user_config.${key}}`;
  return {
    manifest_version: input.manifestVersion,
    name: input.name,
    display_name: input.name,
    version: input.version,
    description: input.description,
    author: { name: input.author },
    server: {
      type: 'node',
      entry_point: BUNDLE_ENTRY,
      mcp_config: {
        command: 'node',
        args: [`\${__dirname}/${BUNDLE_ENTRY}`, 'serve', '--dir', `\${__dirname}/${BUNDLE_AGENTS}`],
        env,
      },
    },
    tools: input.tools.map((t) => (t.description ? { name: t.name, description: t.description } : { name: t.name })),
    ...(Object.keys(userConfig).length
      ? { user_config: Object.fromEntries(Object.entries(userConfig).map(([key, { envName: _envName, ...option }]) => [key, option])) }
      : {}),
    keywords: ['agentport', 'agents', 'mcp'],
    compatibility: { platforms: ['darwin', 'win32', 'linux'], runtimes: { node: input.nodeEngine } },
  };
}

/** `user_config` keys (the env variable's name in lower case) with the variable each fills. */
function userConfigFor(
  registry: Registry,
  bundle: { name: string; upstream: readonly UpstreamVariable[] },
): Record<string, UserConfigOption & { envName: string }> {
  const out: Record<string, UserConfigOption & { envName: string }> = {};
  const add = (envName: string, option: UserConfigOption) => {
    const key = envName.toLowerCase();
    const existing = out[key];
    if (existing) {
      existing.required ||= option.required;
      existing.sensitive = existing.sensitive || option.sensitive ? true : undefined;
      if (existing.required) delete existing.default;
      return;
    }
    out[key] = { envName, ...option };
  };

  let anyWithoutBaseURL = false;
  for (const model of registry.models.values()) {
    const def = model.definition;
    if (def.provider !== 'openai') continue;
    const envName = def.apiKeyEnv ?? DEFAULT_API_KEY_ENV;
    // A model with its own baseURL is often a local server that takes any key: asked, not required.
    const required = def.baseURL === undefined;
    if (!def.baseURL) anyWithoutBaseURL = true;
    add(envName, {
      type: 'string',
      title: `API key (${envName})`,
      description: `API key for model "${model.name}" (the ${envName} environment variable).`,
      required,
      sensitive: true,
      // Hosts leave an unset optional field as its literal placeholder unless a default is given.
      ...(required ? {} : { default: '' }),
    });
  }
  if (anyWithoutBaseURL) {
    add(BASE_URL_ENV, {
      type: 'string',
      title: 'Base URL (optional)',
      description: 'An OpenAI-compatible endpoint (OpenRouter, Ollama, LM Studio, vLLM...); leave empty for OpenAI.',
      required: false,
      default: '',
    });
  }

  // Required declared variables without a default in some definition's env.
  const defaults = new Set<string>();
  for (const prompt of registry.prompts.values()) for (const name of Object.keys(prompt.definition.env ?? {})) defaults.add(name);
  for (const agent of registry.agents.values()) {
    for (const name of Object.keys({ ...agent.definition.tenvs, ...agent.definition.env })) defaults.add(name);
  }
  const declarations = [
    ...[...registry.prompts.values()].flatMap((p) =>
      (p.definition.variables ?? []).map((v) => ({ ...v, declaredBy: `prompt "${p.name}"` })),
    ),
    ...[...registry.agents.values()].flatMap((a) => (a.definition.variables ?? []).map((v) => ({ ...v, declaredBy: `agent "${a.name}"` }))),
    ...[...registry.tools.values()].flatMap((t) => toolDeclarations(t.name, t.definition)),
  ];
  for (const declared of declarations) {
    if (!declared.required || defaults.has(declared.name)) continue;
    const secret = declared.type === 'secret';
    add(declared.name, {
      type: 'string',
      title: declared.name,
      description: declared.description || `Required by ${declared.declaredBy}.`,
      required: true,
      ...(secret ? { sensitive: true } : {}),
    });
  }

  // Upstream servers' variables: without them (and without a default) the server does not start.
  // After the fields above, so a model key mcp.json also uses keeps its own field.
  for (const variable of bundle.upstream) {
    if (SYSTEM_ENV.has(variable.name.toUpperCase())) continue;
    const servers = variable.servers.map((s) => `"${s}"`).join(', ');
    add(variable.name, {
      type: 'string',
      title: variable.name,
      description: `Used by the upstream MCP server${variable.servers.length > 1 ? 's' : ''} ${servers} (agents/mcp.json).`,
      required: variable.fallback === undefined,
      ...(variable.secret ? { sensitive: true } : {}),
      ...(variable.fallback !== undefined ? { default: variable.fallback } : {}),
    });
  }

  // The extension's own folder is replaced on update and removed on uninstall: threads, the
  // TypeScript cache and secret.key (which unlocks stored secret variables) live outside it.
  add(DATA_DIR_ENV, {
    type: 'directory',
    title: 'Data folder',
    description: 'Where conversation threads and caches are kept; outside the extension, so they survive updates and reinstalls.',
    required: false,
    // ${HOME} is one of the substitutions the MCPB spec allows in defaults (serve expands it too: see dataDirOf).
    default: `\${HOME}/.agentport/${bundle.name}`,
  });
  return out;
}
