/**
 * What the CLI says about upstream servers: `doctor` connects to each and
 * reports its tool count or why it cannot be reached, and checks the tools
 * prompts name (`mcp:<server>/<tool>`) exist; `list --upstream` and
 * `search --upstream` read their tools. Nothing here prints a secret.
 */
import type { LoadIssue } from '../definitions/issues.js';
import type { Registry } from '../registry/types.js';
import { describeServer } from './config.js';
import { upstreamHubFor, type UpstreamHub, type UpstreamTool } from './hub.js';
import { upstreamReferencesOf } from './references.js';

export interface UpstreamCheck {
  /** One line per server. */
  lines: string[];
  issues: LoadIssue[];
}

/** Connects to every server (in parallel), then closes them. */
export async function checkUpstreamServers(registry: Registry): Promise<UpstreamCheck> {
  const hub = upstreamHubFor(registry, () => {});
  if (!hub || !registry.upstream) return { lines: [], issues: [] };
  const config = registry.upstream;
  const lines: string[] = [];
  const issues: LoadIssue[] = [];
  try {
    const { failures } = await hub.settle();
    for (const status of hub.status()) {
      const server = config.servers.get(status.name)!;
      const failure = failures.find((f) => f.server === status.name);
      if (failure) {
        lines.push(`upstream ${describeServer(server, config.secrets)}: unreachable`);
        issues.push({ severity: 'error', file: config.file, field: `mcpServers.${status.name}`, message: failure.error });
      } else {
        lines.push(
          `upstream ${describeServer(server, config.secrets)}: ok, ${status.tools ?? 0} tool(s)${status.protocolVersion ? ` (protocol ${status.protocolVersion})` : ''}`,
        );
      }
    }
    issues.push(...missingTools(registry, hub));
  } finally {
    await hub.close();
  }
  return { lines, issues };
}

/** `mcp:<server>/<tool>` (and tools/alwaysLoad/exclude lists) naming tools the server does not have. */
function missingTools(registry: Registry, hub: UpstreamHub): LoadIssue[] {
  const issues: LoadIssue[] = [];
  for (const prompt of registry.prompts.values()) {
    for (const reference of upstreamReferencesOf(prompt.definition.tools)) {
      const tools = hub.cachedTools(reference.server);
      if (!tools) continue;
      const has = (name: string) => tools.some((tool) => tool.tool === name || tool.name === name);
      const named = [
        ...(reference.only ?? []),
        ...reference.exclude,
        ...(typeof reference.alwaysLoad === 'boolean' ? [] : reference.alwaysLoad),
      ];
      for (const name of new Set(named)) {
        if (!has(name)) {
          issues.push({
            severity: 'warning',
            file: prompt.file,
            definition: prompt.name,
            field: 'tools',
            message: `upstream server ${reference.server} has no tool "${name}"`,
          });
        }
      }
    }
  }
  return issues;
}

/** Every upstream tool (connecting to every server), and the servers that could not be reached. */
export async function readUpstreamTools(
  registry: Registry,
): Promise<{ tools: UpstreamTool[]; failures: Array<{ server: string; error: string }> }> {
  const hub = upstreamHubFor(registry, () => {});
  if (!hub) return { tools: [], failures: [] };
  try {
    return await hub.settle();
  } finally {
    await hub.close();
  }
}
