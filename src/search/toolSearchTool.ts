/**
 * The `tool_search` tool itself, as both the MCP surface and the runtime
 * offer it: its name, description, input schema and argument checking.
 */
import { quoteKeys, undeclaredKeys } from '../definitions/unknownKeys.js';
import { DEFAULT_MAX_RESULTS } from './types.js';

export const TOOL_SEARCH_NAME = 'tool_search';
/** More tools than this and search turns on (MCP surface in `auto` mode; a prompt's tools in a run). */
export const DEFAULT_TOOL_SEARCH_THRESHOLD = 40;
/** Deferred names listed in a description; past this, a count. */
const ANNOUNCED_NAMES = 300;
const MAX_RESULTS_LIMIT = 50;

/** "a, b, c, and 12 more (search by keyword to find them)" */
export function announceNames(names: readonly string[]): string {
  const shown = names.slice(0, ANNOUNCED_NAMES);
  const more = names.length - shown.length;
  return shown.join(', ') + (more > 0 ? `, and ${more} more (search by keyword to find them)` : '');
}

/** The description of tool_search: the query forms and the deferred names. */
export function toolSearchDescription(deferredNames: readonly string[], howToCall: string): string {
  return (
    `Find deferred tools and load their full definitions (a <functions> block); ${howToCall}. ` +
    'Query forms: "select:name1,name2" fetches those exact tools; plain keywords return the best matches ' +
    `(up to max_results, default ${DEFAULT_MAX_RESULTS}); "+word" requires the word in the tool name and ranks by the other words. ` +
    `Deferred tools: ${announceNames(deferredNames) || 'none left'}.`
  );
}

/** The input schema of tool_search (no `$schema`: callers add it where the wire wants one). */
export function toolSearchInputSchema(): Record<string, unknown> {
  return {
    type: 'object',
    properties: {
      query: { type: 'string', description: 'select:name1,name2 | keywords | +required keywords' },
      max_results: {
        type: 'integer',
        minimum: 1,
        maximum: MAX_RESULTS_LIMIT,
        default: DEFAULT_MAX_RESULTS,
        description: 'How many tools a keyword query returns',
      },
    },
    required: ['query'],
    additionalProperties: false,
  };
}

export type ToolSearchArgs = { ok: true; query: string; maxResults?: number } | { ok: false; error: string };

/** Checks tool_search arguments; the error text is shown to the caller. */
export function readToolSearchArgs(args: unknown): ToolSearchArgs {
  const record = (typeof args === 'object' && args !== null ? args : {}) as { query?: unknown; max_results?: unknown };
  if (typeof record.query !== 'string') return { ok: false, error: `${TOOL_SEARCH_NAME}: query must be a string` };
  const extra = undeclaredKeys(record, ['query', 'max_results']);
  if (extra.length > 0)
    return { ok: false, error: `${TOOL_SEARCH_NAME}: no argument ${quoteKeys(extra)} is declared (only query and max_results)` };
  const max = record.max_results;
  if (max === undefined || max === null) return { ok: true, query: record.query };
  if (typeof max !== 'number' || !Number.isInteger(max) || max < 1) {
    return { ok: false, error: `${TOOL_SEARCH_NAME}: max_results must be a positive integer` };
  }
  return { ok: true, query: record.query, maxResults: Math.min(max, MAX_RESULTS_LIMIT) };
}
