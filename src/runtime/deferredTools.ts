/**
 * Deferred tool search inside a run. When a prompt has more tools than the
 * threshold, or some of its tools are marked `defer: true`, the model is shown
 * those tools by name only (in the description of a `tool_search` tool). What
 * a search returns is offered with its full schema from the next step on, and
 * stays loaded for the thread (kept in the thread's meta).
 */
import type { ToolSearchIndex } from '../search/toolIndex.js';
import type { OfferedTool } from './toolset.js';

export const RUNTIME_TOOL_SEARCH = 'tool_search';
const ANNOUNCED_NAMES = 200;

export class DeferredTools {
  /** Names shown by name only until loaded. */
  private readonly deferred: Set<string>;
  readonly loaded: Set<string>;
  private index: Promise<ToolSearchIndex> | undefined;

  constructor(
    private readonly toolset: readonly OfferedTool[],
    threshold: number,
    previouslyLoaded: readonly string[] = [],
  ) {
    const overThreshold = toolset.length > threshold;
    this.deferred = new Set(
      toolset.filter((tool) => !tool.alwaysLoad && (overThreshold || tool.defer) && tool.name !== RUNTIME_TOOL_SEARCH).map((tool) => tool.name),
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

  /** The Chat Completions definition of tool_search, naming the tools still deferred. */
  searchDefinition(): unknown {
    const waiting = [...this.deferred].filter((name) => !this.loaded.has(name));
    const names = waiting.slice(0, ANNOUNCED_NAMES).join(', ') + (waiting.length > ANNOUNCED_NAMES ? `, and ${waiting.length - ANNOUNCED_NAMES} more` : '');
    return {
      type: 'function',
      function: {
        name: RUNTIME_TOOL_SEARCH,
        description:
          'Load the full definitions of deferred tools so they can be called (they become available from your next step). ' +
          'Query forms: "select:name1,name2" for exact names; keywords for the best matches; "+word" to require a word in the name. ' +
          `Deferred tools: ${names || 'none left'}.`,
        parameters: {
          type: 'object',
          properties: {
            query: { type: 'string', description: 'select:name1,name2 | keywords | +required keywords' },
            max_results: { type: 'integer', minimum: 1, maximum: 50, description: 'How many tools a keyword query returns (default 5)' },
          },
          required: ['query'],
          additionalProperties: false,
        },
      },
    };
  }

  /** Runs a search over the deferred tools and loads what it finds. */
  async search(argumentText: string): Promise<{ ok: boolean; text: string; found: string[] }> {
    let args: { query?: unknown; max_results?: unknown };
    try {
      args = JSON.parse(argumentText || '{}') as typeof args;
    } catch {
      return { ok: false, text: `${RUNTIME_TOOL_SEARCH}: arguments are not valid JSON`, found: [] };
    }
    if (typeof args.query !== 'string') return { ok: false, text: `${RUNTIME_TOOL_SEARCH}: query must be a string`, found: [] };
    const maxResults = typeof args.max_results === 'number' && args.max_results >= 1 ? Math.min(Math.floor(args.max_results), 50) : undefined;
    const [{ searchTools }, index] = await Promise.all([import('../search/engine.js'), this.searchIndex()]);
    const { outcome, text } = searchTools(index, args.query, maxResults ? { maxResults } : {});
    const found = outcome.tools.map((tool) => tool.name);
    for (const name of found) this.loaded.add(name);
    return { ok: outcome.mode !== 'invalid', text, found };
  }

  private searchIndex(): Promise<ToolSearchIndex> {
    this.index ??= import('../search/toolIndex.js').then(
      ({ ToolSearchIndex }) =>
        new ToolSearchIndex(
          this.toolset
            .filter((tool) => this.deferred.has(tool.name))
            .map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.parameters })),
        ),
    );
    return this.index;
  }
}
