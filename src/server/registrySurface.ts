/**
 * Everything the MCP surface derives from a registry (the tool catalogue,
 * tool search, aggregator mode, the run tools, MCP prompts), built in one
 * place so that a reloaded agents folder replaces it whole; and what changed
 * between two of them, which decides the list_changed notifications.
 */
import type { Tool } from '@modelcontextprotocol/server';
import type { Registry } from '../registry/types.js';
import { PromptCatalog } from './prompts.js';
import { RUN_TOOLS } from './runTools.js';
import { buildToolCatalog, type ExposedTool } from './toolCatalog.js';
import {
  DEFAULT_TOOL_SEARCH_THRESHOLD,
  planSurface,
  type SavedSearchIndex,
  type Surface,
  type ToolSearchSettings,
} from './toolSearchSurface.js';
import type { ExposeUpstream, UpstreamSurface } from './upstreamSurface.js';

export interface RegistrySurface {
  registry: Registry;
  tools: readonly ExposedTool[];
  byName: ReadonlyMap<string, ExposedTool>;
  /** Aggregator mode (`--expose-upstream`) when the folder declares upstream servers. */
  upstream: UpstreamSurface | undefined;
  surface: Surface;
  /** run_wait, run_status and run_cancel, unless an exposed tool has the name or the call budget is off. */
  runTools: readonly Tool[];
  /** What `tools/list` answers. */
  listed: Array<Surface['listed'][number] | Tool>;
  prompts: PromptCatalog;
}

export interface SurfaceSettings {
  toolSearch?: Partial<ToolSearchSettings> | undefined;
  /** Aggregator mode: upstreamSurface.ts's exposeUpstream, given by the caller that loaded it (only that mode needs it). */
  exposeUpstream?: ExposeUpstream | undefined;
  callBudgetMs: number;
  /** Where the search index of the prebuilt catalogue is kept between starts. */
  savedSearchIndex?: SavedSearchIndex | undefined;
}

/**
 * Throws when the registry cannot be served as it is (a reserved tool name, an unreadable icon).
 * @param prebuilt the registry's tool catalogue when it is already built (the start-up cache)
 */
export function deriveSurface(registry: Registry, settings: SurfaceSettings, prebuilt?: ExposedTool[]): RegistrySurface {
  const tools = prebuilt ?? buildToolCatalog(registry);
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const upstream = settings.exposeUpstream?.(registry, tools, settings.toolSearch);
  const surface =
    upstream?.surface ??
    planSurface(
      tools,
      {
        mode: settings.toolSearch?.mode ?? 'auto',
        threshold: settings.toolSearch?.threshold ?? DEFAULT_TOOL_SEARCH_THRESHOLD,
      },
      // Only the start-up cache's catalogue has an index kept for it.
      prebuilt ? settings.savedSearchIndex : undefined,
    );
  // An exposed prompt or agent of the same name keeps the name.
  const runTools = settings.callBudgetMs > 0 ? RUN_TOOLS.filter((tool) => !byName.has(tool.name)) : [];
  return {
    registry,
    tools,
    byName,
    upstream,
    surface,
    runTools,
    listed: [...surface.listed, ...runTools],
    prompts: new PromptCatalog(registry, tools),
  };
}

export interface SurfaceChange {
  /** Exposed tools (prompts and agents), by name. */
  added: string[];
  removed: string[];
  changed: string[];
  /** The `tools/list` answer differs (a deferred tool's change shows only in tool search). */
  toolsListChanged: boolean;
  promptsListChanged: boolean;
}

export function compareSurfaces(before: RegistrySurface, after: RegistrySurface): SurfaceChange {
  const added = after.tools.filter((tool) => !before.byName.has(tool.name)).map((tool) => tool.name);
  const removed = before.tools.filter((tool) => !after.byName.has(tool.name)).map((tool) => tool.name);
  const changed = after.tools
    .filter((tool) => {
      const previous = before.byName.get(tool.name);
      return previous !== undefined && !sameJson(previous, tool);
    })
    .map((tool) => tool.name);
  return {
    added,
    removed,
    changed,
    toolsListChanged: !sameJson(before.listed, after.listed),
    promptsListChanged: !sameJson(before.prompts.list(), after.prompts.list()),
  };
}

/** One line for the log: `+1 tool (greet), ~1 changed (support)`, or that the tools stayed the same. */
export function describeChange(change: SurfaceChange): string {
  const parts = [
    change.added.length ? `+${change.added.length} tool${change.added.length === 1 ? '' : 's'} (${change.added.join(', ')})` : '',
    change.changed.length ? `~${change.changed.length} changed (${change.changed.join(', ')})` : '',
    change.removed.length ? `-${change.removed.length} removed (${change.removed.join(', ')})` : '',
  ].filter(Boolean);
  return parts.length ? parts.join(', ') : 'exposed tools unchanged';
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a, jsonSafe) === JSON.stringify(b, jsonSafe);
}

// A zod schema's default may be a bigint, which JSON.stringify refuses.
function jsonSafe(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}
