/**
 * The one call the MCP server, the runtime and the CLI need: run a query and
 * get both the structured outcome and the text for the model.
 */
import { formatSearchOutcome } from './format.js';
import type { ToolSearchIndex } from './toolIndex.js';
import type { SearchOptions, SearchOutcome } from './types.js';

/** A search's outcome and the reply text built from it. */
export interface ToolSearchResult {
  readonly outcome: SearchOutcome;
  /** What the `tool_search` tool returns: see {@link formatSearchOutcome}. */
  readonly text: string;
}

/**
 * Runs `query` against `index`. Never throws on user input: an empty or
 * unusable query yields `outcome.mode === 'invalid'` and an explanatory text.
 */
export function searchTools(index: ToolSearchIndex, query: string, options: SearchOptions = {}): ToolSearchResult {
  const outcome = index.search(query, options);
  return { outcome, text: formatSearchOutcome(outcome) };
}
