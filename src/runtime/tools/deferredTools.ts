/**
 * Deferred tool search inside a run. When a prompt has more tools than the
 * threshold, or some of its tools are marked `defer: true`, the model is shown
 * those tools by name only (in the description of a `tool_search` tool). What
 * a search returns is offered with its full schema from the next step on, and
 * stays loaded for the thread (kept in the thread's meta).
 */
import type { ToolSearchIndex } from '../../search/toolIndex.js';
import { TOOL_SEARCH_NAME, readToolSearchArgs, toolSearchDescription, toolSearchInputSchema } from '../../search/toolSearchTool.js';
import type { SearchableTool } from '../../search/types.js';
import type { ToolResult } from '../../definitions/types.js';
import { errorMessage } from '../../errors.js';
import type { FunctionSpec } from '../../models/request.js';
import { parseArguments } from './arguments.js';
import type { OfferedTool } from './toolset.js';

const indexes = new WeakMap<readonly OfferedTool[], Promise<ToolSearchIndex>>();

export class DeferredTools {
  /** Names shown by name only until loaded. */
  private readonly deferred: Set<string>;
  readonly loaded: Set<string>;

  constructor(
    private readonly toolset: readonly OfferedTool[],
    threshold: number,
    previouslyLoaded: readonly string[] = [],
    /** Said after the deferred names (upstream servers that could not be reached). */
    private readonly note = '',
  ) {
    const overThreshold = toolset.length > threshold;
    this.deferred = new Set(
      toolset
        .filter((tool) => !tool.alwaysLoad && (overThreshold || tool.defer) && tool.name !== TOOL_SEARCH_NAME)
        .map((tool) => tool.name),
    );
    this.loaded = new Set(previouslyLoaded.filter((name) => this.deferred.has(name)));
  }

  /** Whether this run has deferred tools (and so a tool_search tool). */
  get active(): boolean {
    return this.deferred.size > 0;
  }

  /** The tools sent with full schemas: never-deferred ones and those loaded by a search. */
  visible(): OfferedTool[] {
    return this.toolset.filter((tool) => !this.deferred.has(tool.name) || this.loaded.has(tool.name));
  }

  /** The tool_search tool, naming the tools still deferred. */
  searchTool(): FunctionSpec {
    const waiting = [...this.deferred].filter((name) => !this.loaded.has(name));
    return {
      name: TOOL_SEARCH_NAME,
      description: toolSearchDescription(waiting, 'they can be called from your next step') + this.note,
      parameters: toolSearchInputSchema(),
    };
  }

  /** The tools to send with this step: visible ones, then tool_search when some are deferred. */
  offered(): FunctionSpec[] {
    return this.active ? [...this.visible(), this.searchTool()] : this.visible();
  }

  /** Runs a search over the deferred tools and loads what it finds. */
  async search(argumentText: string): Promise<{ result: ToolResult; found: string[] }> {
    let raw: unknown;
    try {
      raw = parseArguments(argumentText);
    } catch (error) {
      return { result: { status: 'error', error: `${TOOL_SEARCH_NAME}: ${errorMessage(error)}` }, found: [] };
    }
    const args = readToolSearchArgs(raw);
    if (!args.ok) return { result: { status: 'error', error: args.error }, found: [] };
    const [{ searchTools }, index] = await Promise.all([import('../../search/engine.js'), this.index()]);
    const { outcome, text } = searchTools(index, args.query, args.maxResults ? { maxResults: args.maxResults } : {});
    const found = outcome.tools.map((tool) => tool.name);
    for (const name of found) this.loaded.add(name);
    return { result: outcome.mode === 'invalid' ? { status: 'error', error: text } : { status: 'success', result: text }, found };
  }

  /**
   * The index over the deferred tools, built on the first search and kept for
   * as long as the toolset lives (a prompt's toolset lives with the runtime).
   */
  private index(): Promise<ToolSearchIndex> {
    let index = indexes.get(this.toolset);
    if (!index) {
      const tools: SearchableTool[] = this.toolset
        .filter((tool) => this.deferred.has(tool.name))
        .map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.parameters }));
      index = import('../../search/toolIndex.js').then(({ ToolSearchIndex }) => new ToolSearchIndex(tools));
      indexes.set(this.toolset, index);
    }
    return index;
  }
}

const LOADED_TOOLS_META = 'loadedTools';

/** Tools loaded by searches in earlier turns of a thread (kept in its meta). */
export function loadedToolsOf(meta: Record<string, unknown> | undefined): string[] {
  const value = meta?.[LOADED_TOOLS_META];
  return Array.isArray(value) ? value.filter((name): name is string => typeof name === 'string') : [];
}

/** Thread meta that remembers what a search loaded (added to what other sides loaded), for later turns. */
export function withLoadedTools(meta: Record<string, unknown> | undefined, deferred: DeferredTools): Record<string, unknown> {
  return { ...meta, [LOADED_TOOLS_META]: [...new Set([...loadedToolsOf(meta), ...deferred.loaded])] };
}
