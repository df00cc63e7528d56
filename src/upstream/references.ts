/**
 * How prompts name upstream tools in `tools`:
 *
 * - `'mcp:github'`: every tool of the server `github` of agents/mcp.json;
 * - `'mcp:github/create_issue'`: one tool, by its name on the server;
 * - `{ name: 'mcp:github', alwaysLoad: ['create_issue'], exclude: ['delete_repo'], tools?: [...], timeoutMs? }`:
 *   `alwaysLoad` (`true` or tool names) offers those tools with their schemas
 *   at once instead of deferring them; `exclude` leaves tools out; `tools`
 *   keeps only those; `timeoutMs` overrides the server's for these calls.
 *
 * Tool names in these lists are the server's own (`create_issue`); the
 * namespaced form (`github__create_issue`) is accepted too.
 */
import { suggestName, type LoadIssue } from '../definitions/issues.js';
import type { ToolReference } from '../definitions/types.js';
import type { UpstreamConfig } from './config.js';
import { SEPARATOR } from './names.js';

export const UPSTREAM_PREFIX = 'mcp:';
const CONFIG_KEYS = ['name', 'alwaysLoad', 'exclude', 'tools', 'timeoutMs'];

/** One `mcp:` entry of a prompt's tools, read. */
export interface UpstreamReference {
  server: string;
  /** Only these tools (server names); undefined: all of them. */
  only?: readonly string[];
  exclude: readonly string[];
  /** true: all included tools; a list: those. */
  alwaysLoad: boolean | readonly string[];
  timeoutMs?: number;
}

export function isUpstreamName(name: string): boolean {
  return name.startsWith(UPSTREAM_PREFIX);
}

/** `mcp:<server>[/<tool>]` -> its parts, or undefined for another name. */
function splitUpstreamName(name: string): { server: string; tool?: string } | undefined {
  if (!isUpstreamName(name)) return undefined;
  const rest = name.slice(UPSTREAM_PREFIX.length);
  const slash = rest.indexOf('/');
  return slash < 0 ? { server: rest } : { server: rest.slice(0, slash), tool: rest.slice(slash + 1) };
}

/** The `mcp:` entries of a prompt's tools (others are ignored). Malformed ones were reported at load. */
export function upstreamReferencesOf(tools: readonly ToolReference[] | undefined): UpstreamReference[] {
  const out: UpstreamReference[] = [];
  for (const reference of tools ?? []) {
    const name = typeof reference === 'string' ? reference : reference.name;
    const parts = splitUpstreamName(name);
    if (!parts || !parts.server) continue;
    const config = (typeof reference === 'string' ? {} : reference) as Record<string, unknown>;
    const list = (value: unknown) => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : undefined);
    const only = parts.tool !== undefined ? [parts.tool] : list(config.tools);
    const alwaysLoad = config.alwaysLoad === true ? true : (list(config.alwaysLoad) ?? false);
    out.push({
      server: parts.server,
      ...(only ? { only } : {}),
      exclude: list(config.exclude) ?? [],
      alwaysLoad,
      ...(typeof config.timeoutMs === 'number' ? { timeoutMs: config.timeoutMs } : {}),
    });
  }
  return out;
}

/** Whether a list of tool names (server or namespaced form) names this tool. */
function names(list: readonly string[], server: string, tool: string, namespaced: string): boolean {
  return list.includes(tool) || list.includes(namespaced) || list.includes(`${server}${SEPARATOR}${tool}`);
}

/** How the references of one prompt take one upstream tool: left out, or offered (and whether at once). */
export function selectUpstreamTool(
  references: readonly UpstreamReference[],
  server: string,
  tool: string,
  namespaced: string,
): { alwaysLoad: boolean; timeoutMs?: number } | undefined {
  let selected: { alwaysLoad: boolean; timeoutMs?: number } | undefined;
  for (const reference of references) {
    if (reference.server !== server) continue;
    if (reference.only && !names(reference.only, server, tool, namespaced)) continue;
    if (names(reference.exclude, server, tool, namespaced)) continue;
    const alwaysLoad =
      reference.alwaysLoad === true ||
      (Array.isArray(reference.alwaysLoad) && names(reference.alwaysLoad as readonly string[], server, tool, namespaced));
    selected = {
      alwaysLoad: alwaysLoad || selected?.alwaysLoad === true,
      ...(reference.timeoutMs !== undefined
        ? { timeoutMs: reference.timeoutMs }
        : selected?.timeoutMs !== undefined
          ? { timeoutMs: selected.timeoutMs }
          : {}),
    };
  }
  return selected;
}

/**
 * Checks one `mcp:` entry of a prompt's tools against agents/mcp.json: the
 * server must be declared; config keys and their types are checked. (Tool
 * names can only be checked once connected: `doctor` does.)
 */
export function checkUpstreamReference(
  reference: ToolReference,
  config: UpstreamConfig | undefined,
  where: { file: string; definition: string; field: string },
): LoadIssue[] {
  const issues: LoadIssue[] = [];
  const error = (message: string, field = where.field) =>
    issues.push({ severity: 'error', file: where.file, definition: where.definition, field, message });
  const name = typeof reference === 'string' ? reference : reference.name;
  const parts = splitUpstreamName(name)!;
  if (!parts.server) {
    error(`"${name}" names no server: write mcp:<server> or mcp:<server>/<tool>`);
    return issues;
  }
  if (parts.tool !== undefined && parts.tool === '') error(`"${name}" names no tool after "/"`);
  if (!config) {
    error(`"${name}" refers to an upstream MCP server, but the agents folder has no mcp.json declaring servers`);
  } else if (!config.servers.has(parts.server)) {
    const known = [...config.servers.keys()];
    error(
      `unknown upstream server "${parts.server}" (${config.file} declares ${known.length ? known.join(', ') : 'none'})${suggestName(parts.server, known)}`,
    );
  }
  if (typeof reference === 'string') return issues;
  const entry = reference as unknown as Record<string, unknown>;
  for (const key of Object.keys(entry)) {
    if (entry[key] === undefined) continue;
    if (!CONFIG_KEYS.includes(key)) {
      issues.push({
        severity: 'warning',
        file: where.file,
        definition: where.definition,
        field: `${where.field}.${key}`,
        message: `unknown key "${key}" in the config of upstream tools "${name}" is ignored (it takes ${CONFIG_KEYS.join(', ')})${suggestName(key, CONFIG_KEYS)}`,
      });
    }
  }
  const stringList = (key: string) => {
    const value = entry[key];
    if (value !== undefined && !(Array.isArray(value) && value.every((v) => typeof v === 'string')))
      error(`must be a list of tool names`, `${where.field}.${key}`);
  };
  stringList('exclude');
  stringList('tools');
  if (entry.alwaysLoad !== undefined && typeof entry.alwaysLoad !== 'boolean') stringList('alwaysLoad');
  if (entry.tools !== undefined && parts.tool !== undefined)
    error(`give either "${name}" or tools: [...], not both`, `${where.field}.tools`);
  return issues;
}
