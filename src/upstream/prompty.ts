/**
 * Prompty `tools:` entries of `kind: mcp` (AgentSchema's McpTool: `name`,
 * `serverName`, `allowedTools`, ...) as agentport's `mcp:` references. The
 * server is `serverName`, or the entry's `name`, and must be declared in
 * agents/mcp.json; `allowedTools` keeps only those tools. agentport's own
 * `alwaysLoad`, `exclude` and `timeoutMs` are taken as they are.
 */
import { UPSTREAM_PREFIX } from './references.js';

export function promptyToolReference<T>(entry: T): T | Record<string, unknown> {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return entry;
  const tool = entry as Record<string, unknown>;
  if (tool.kind !== 'mcp') return entry;
  const server =
    typeof tool.serverName === 'string' && tool.serverName.trim() ? tool.serverName.trim() : typeof tool.name === 'string' ? tool.name : '';
  const allowed = Array.isArray(tool.allowedTools) ? tool.allowedTools : Array.isArray(tool.tools) ? tool.tools : undefined;
  return {
    name: `${UPSTREAM_PREFIX}${server}`,
    ...(allowed ? { tools: allowed } : {}),
    ...(tool.alwaysLoad !== undefined ? { alwaysLoad: tool.alwaysLoad } : {}),
    ...(tool.exclude !== undefined ? { exclude: tool.exclude } : {}),
    ...(tool.timeoutMs !== undefined ? { timeoutMs: tool.timeoutMs } : {}),
  };
}
