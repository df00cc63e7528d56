/**
 * Public types of the deferred tool search engine.
 */

/**
 * A tool as MCP `tools/list` describes it. Only these fields are read; any
 * other field (annotations, `_meta`, `outputSchema`, ...) is carried along
 * untouched and ignored by search.
 */
export interface SearchableTool {
  /** Unique tool name: 1-128 characters of `[A-Za-z0-9_.-]` in MCP. */
  readonly name: string;
  readonly description?: string;
  /** A JSON Schema object describing the tool's arguments. */
  readonly inputSchema?: Record<string, unknown>;
}

/** Per-call options of {@link ToolSearchIndex.search}. */
export interface SearchOptions {
  /**
   * How many tools a keyword query returns at most (default
   * {@link DEFAULT_MAX_RESULTS}). `select:` queries return every named tool.
   */
  readonly maxResults?: number;
}

/** The number of tools a keyword query returns when the caller does not say. */
export const DEFAULT_MAX_RESULTS = 5;

/**
 * How a query was read:
 * - `select`: `select:a,b`, tools fetched by exact name;
 * - `keywords`: ranked search, possibly with `+term` name requirements;
 * - `invalid`: nothing to search for (empty query, `select:` with no names).
 */
type SearchMode = 'select' | 'keywords' | 'invalid';

/** What a search found. {@link formatSearchOutcome} turns it into the text a model sees. */
export interface SearchOutcome {
  /** The query exactly as given. */
  readonly query: string;
  readonly mode: SearchMode;
  /** Matching tools, best first; for `select:`, in the order they were named. */
  readonly tools: readonly SearchableTool[];
  /** `select:` names that match no tool, as written. Empty for other modes. */
  readonly unknown: readonly string[];
  /** `+term`s of the query, as written (without the `+`). */
  readonly required: readonly string[];
  /** Why nothing could be searched; set only when `mode` is `invalid`. */
  readonly error?: string;
}
