/**
 * Aggregator mode (`serve --expose-upstream`): every tool of the upstream
 * servers in agents/mcp.json is reachable through agentport's own MCP
 * surface, deferred behind `tool_search` / `call_tool` (tool search is on),
 * so a host with one agentport entry reaches hundreds of tools without
 * loading their schemas. `tools/list` never depends on the upstream servers
 * (they are connected on the first search or call, not at start); a direct
 * `tools/call` of a namespaced name (`<server>__<tool>`) works too. The one
 * search index holds the agent tools and the upstream tools, and follows
 * the upstream lists as they change.
 */
import { ProtocolError, ProtocolErrorCode, type CallToolResult, type ServerContext } from '@modelcontextprotocol/server';
import { AgentportError, errorInfo } from '../errors.js';
import type { Registry } from '../registry/types.js';
import type { ToolSearchIndex } from '../search/toolIndex.js';
import { DEFAULT_TOOL_SEARCH_THRESHOLD, TOOL_SEARCH_NAME, readToolSearchArgs } from '../search/toolSearchTool.js';
import type { SearchableTool } from '../search/types.js';
import { upstreamHubFor, type UpstreamHub, type UpstreamTool } from '../upstream/hub.js';
import { serverOf } from '../upstream/names.js';
import type { ExposedTool } from './toolCatalog.js';
import { errorResult } from './toolResults.js';
import { CALL_TOOL, planSurface, type Surface, type ToolSearchSettings } from './toolSearchSurface.js';

/** Pause between the last progress notification and the result (see callTool.ts). */
const PROGRESS_SETTLE_MS = 20;

export interface UpstreamSurface {
  hub: UpstreamHub;
  /** The MCP surface with tool search on and the upstream tools in its index. */
  surface: Surface;
  /**
   * Answers `tool_search`, `call_tool` of an upstream tool and direct calls
   * of upstream names; undefined for anything else (agentport's own tools).
   */
  call(
    name: string,
    args: Record<string, unknown> | undefined,
    ctx: ServerContext,
    signal: AbortSignal,
  ): Promise<CallToolResult> | undefined;
  /** Stops following the hub's lists, leaving its connections open (a reloaded folder may keep the hub). */
  dispose(): void;
  close(): Promise<void>;
}

export type ExposeUpstream = typeof exposeUpstream;

/** The aggregator surface, or undefined when the folder declares no upstream servers. */
export function exposeUpstream(
  registry: Registry,
  tools: readonly ExposedTool[],
  settings: Partial<ToolSearchSettings> = {},
): UpstreamSurface | undefined {
  const hub = upstreamHubFor(registry);
  if (!hub) return undefined;
  const base = planSurface(tools, { mode: 'on', threshold: settings.threshold ?? DEFAULT_TOOL_SEARCH_THRESHOLD });
  const servers = hub.serverNames();
  /** agentport's own exposed tools keep their names, even one that looks namespaced. */
  const local = new Set(tools.map((tool) => tool.name));
  const serversText = `the upstream MCP servers ${servers.join(', ')}`;

  let index: Promise<ToolSearchIndex> | undefined;
  let disposed = false;
  let unfollow = () => {};
  const buildIndex = async (): Promise<ToolSearchIndex> => {
    const combined = await base.index!();
    if (disposed) return combined;
    // The index follows each server's list from its first listing on (a server up later joins then).
    unfollow = hub.onChange((_server, current, previous) => {
      combined.remove(previous.map((tool) => tool.name));
      combined.add(current.map(searchable));
    });
    for (const server of servers) combined.add((hub.cachedTools(server) ?? []).map(searchable));
    return combined;
  };
  const getIndex = () => (index ??= buildIndex());

  const surface: Surface = {
    ...base,
    listed: base.listed.map((tool) =>
      tool.name === TOOL_SEARCH_NAME
        ? { ...tool, description: `${tool.description} Also searches the tools of ${serversText}, named <server>__<tool>.` }
        : tool,
    ),
    instructions:
      `${base.instructions} It also gives access to the tools of ${serversText}: find them with ${TOOL_SEARCH_NAME}, ` +
      `then run them with ${CALL_TOOL} or directly by their names (<server>__<tool>).`,
    index: getIndex,
  };

  /**
   * Servers not listed yet are connected (those in a backoff after failures are skipped), and
   * a list being fetched again after list_changed is waited for; failures become notes.
   */
  const reachAll = async (): Promise<string[]> => {
    const { failures } = await hub.settle(servers, undefined, { wait: false });
    return failures.map((failure) => failure.error);
  };

  const search = async (raw: Record<string, unknown> | undefined): Promise<CallToolResult> => {
    const args = readToolSearchArgs(raw);
    if (!args.ok) return errorResult({ code: 'INVALID_ARGUMENTS', message: args.error });
    const [notes, index, { searchTools }] = await Promise.all([reachAll(), getIndex(), import('../search/engine.js')]);
    const { outcome, text } = searchTools(index, args.query, args.maxResults ? { maxResults: args.maxResults } : {});
    const note = notes.length ? `\nNot reachable now (their tools could not be searched): ${notes.join('; ')}` : '';
    return {
      content: [{ type: 'text', text: text + note }],
      structuredContent: { tools: outcome.tools.map((tool) => tool.name), unknown: [...outcome.unknown] },
    };
  };

  /** The upstream tool of a name, listing its server first (or waiting for a list being fetched again). */
  const find = async (name: string): Promise<UpstreamTool | undefined> => {
    const known = hub.lookup(name);
    if (known) return known;
    const server = serverOf(name);
    if (!server || !hub.has(server)) return undefined;
    await hub.tools(server);
    return hub.lookup(name);
  };

  const run = async (
    tool: UpstreamTool,
    args: Record<string, unknown> | undefined,
    ctx: ServerContext,
    signal: AbortSignal,
  ): Promise<CallToolResult> => {
    const progressToken = ctx.mcpReq._meta?.progressToken;
    let lastProgress = 0;
    try {
      const result = await hub.call(tool, args ?? {}, {
        signal,
        ...(progressToken !== undefined
          ? {
              onProgress: (message: string, numbers: { progress: number; total?: number }) => {
                lastProgress = Date.now();
                void ctx.mcpReq
                  .notify({ method: 'notifications/progress', params: { progressToken, ...numbers, message } })
                  .catch(() => {});
              },
            }
          : {}),
      });
      const wait = lastProgress + PROGRESS_SETTLE_MS - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      return {
        content: result.content ?? [],
        ...(result.structuredContent !== undefined ? { structuredContent: result.structuredContent } : {}),
        ...(result.isError ? { isError: true } : {}),
      };
    } catch (error) {
      return errorResult(errorInfo(signal.aborted ? new AgentportError('CANCELLED', 'the call was cancelled') : error));
    }
  };

  const callUpstream = async (
    name: string,
    args: Record<string, unknown> | undefined,
    ctx: ServerContext,
    signal: AbortSignal,
  ): Promise<CallToolResult | undefined> => {
    let tool: UpstreamTool | undefined;
    try {
      tool = await find(name);
    } catch (error) {
      return errorResult(errorInfo(error));
    }
    return tool ? run(tool, args, ctx, signal) : undefined;
  };

  return {
    hub,
    surface,
    call(name, args, ctx, signal) {
      if (name === TOOL_SEARCH_NAME) return search(args);
      if (name === CALL_TOOL) {
        const target = typeof args?.name === 'string' ? args.name : '';
        if (!serverOf(target) || !hub.has(serverOf(target)!) || local.has(target)) return undefined;
        const inner = args?.arguments;
        if (inner !== undefined && (typeof inner !== 'object' || inner === null || Array.isArray(inner))) return undefined;
        return callUpstream(target, inner as Record<string, unknown> | undefined, ctx, signal).then(
          (result) =>
            result ??
            errorResult({
              code: 'UNKNOWN_TOOL',
              message: `${CALL_TOOL}: no tool is named "${target}". Find tools with ${TOOL_SEARCH_NAME} first.`,
            }),
        );
      }
      const server = serverOf(name);
      if (!server || !hub.has(server) || local.has(name)) return undefined;
      return callUpstream(name, args, ctx, signal).then((result) => {
        // Like any unknown tool name: JSON-RPC -32602.
        if (!result) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
        return result;
      });
    },
    dispose() {
      disposed = true;
      unfollow();
    },
    close() {
      this.dispose();
      return hub.close();
    },
  };
}

function searchable(tool: UpstreamTool): SearchableTool {
  return { name: tool.name, description: tool.description, inputSchema: tool.inputSchema };
}
