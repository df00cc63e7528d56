/**
 * Deferred tool search at the MCP surface. With many exposed tools (over the
 * threshold, or with search forced on), `tools/list` holds the always-load
 * tools plus `tool_search` and `call_tool`; every other tool is announced by
 * name and loaded by searching. The list never changes because of a search,
 * and every exposed tool stays callable directly by name.
 */
import type { ToolSearchIndex } from '../search/toolIndex.js';
import {
  DEFAULT_TOOL_SEARCH_THRESHOLD,
  TOOL_SEARCH_NAME,
  announceNames,
  toolSearchDescription,
  toolSearchInputSchema,
} from '../search/toolSearchTool.js';
import { JSON_SCHEMA_2020_12 } from '../definitions/jsonSchema.js';
import { log } from '../log.js';
import { listedTool, type ExposedTool } from './toolCatalog.js';

type ToolSearchMode = 'auto' | 'on' | 'off';
export { DEFAULT_TOOL_SEARCH_THRESHOLD };
export const CALL_TOOL = 'call_tool';

export interface ToolSearchSettings {
  mode: ToolSearchMode;
  threshold: number;
}

// tool_search and call_tool answer with shapes of their own: they declare no output schema.
type ToolDefinitionShape = Omit<ReturnType<typeof listedTool>, 'outputSchema'> & {
  outputSchema?: ReturnType<typeof listedTool>['outputSchema'];
};

export interface Surface {
  searchOn: boolean;
  /** What `tools/list` returns. */
  listed: ToolDefinitionShape[];
  /** Exposed tools that are not listed. */
  deferred: ExposedTool[];
  instructions: string;
  /** The search index over every exposed tool (only when search is on): built in the background after start-up, or by the first search. */
  index?: () => Promise<ToolSearchIndex>;
}

/**
 * Where the search index of these very tools is kept between starts (the
 * start-up cache): restoring it is many times faster than building it.
 */
export interface SavedSearchIndex {
  /** The saved index, if any (checked against the tools before use). */
  read(): Uint8Array | undefined;
  /** Keeps the index just built, once it is. */
  write(index: Uint8Array): void;
}

/** Whether tool search is on for this many exposed tools. */
export function searchIsOn(count: number, settings: ToolSearchSettings): boolean {
  return settings.mode === 'on' || (settings.mode === 'auto' && count > settings.threshold);
}

export function planSurface(tools: readonly ExposedTool[], settings: ToolSearchSettings, saved?: SavedSearchIndex): Surface {
  const searchOn = searchIsOn(tools.length, settings);
  if (!searchOn) {
    return { searchOn, listed: tools.map(listedTool), deferred: [], instructions: plainInstructions(tools) };
  }

  for (const reserved of [TOOL_SEARCH_NAME, CALL_TOOL]) {
    if (tools.some((tool) => tool.name === reserved)) {
      throw new Error(
        `"${reserved}" is the name of an exposed tool, but tool search needs it: rename the prompt or run with --tool-search off`,
      );
    }
  }
  const deferred = tools.filter((tool) => !tool.alwaysLoad);
  const loaded = tools.filter((tool) => tool.alwaysLoad);
  let index: Promise<ToolSearchIndex> | undefined;
  // A failed build is not kept: the next search builds it again rather than failing for the rest of the process.
  const indexOnce = () =>
    (index ??= buildIndex(tools, saved).catch((error: unknown) => {
      index = undefined;
      throw error;
    }));
  // Start building in the background once start-up is done, so the first search does not wait for it (and reports
  // what failed, when it does).
  setTimeout(() => void indexOnce().catch(() => {}), INDEX_WARM_DELAY_MS).unref();
  return {
    searchOn,
    listed: [...loaded.map(listedTool), toolSearchDefinition(deferred), callToolDefinition()],
    deferred,
    instructions: searchInstructions(tools.length, deferred),
    index: indexOnce,
  };
}

/**
 * Time after start-up before the index starts building in the background.
 * Short: the build yields every INDEX_CHUNK tools, so the host's initialize
 * and tools/list wait for one chunk at most, and a search soon after the
 * start finds the index ready (about 0.4 s of building at 10,000 tools).
 */
const INDEX_WARM_DELAY_MS = 50;
/** Tools indexed between two turns of the event loop while the index builds. */
const INDEX_CHUNK = 250;

/**
 * Restores the saved index, or builds it in chunks, yielding between them, so
 * requests (the host's initialize and tools/list) keep being answered
 * meanwhile, and saves it once built.
 */
async function buildIndex(tools: readonly ExposedTool[], saved?: SavedSearchIndex): Promise<ToolSearchIndex> {
  const { ToolSearchIndex } = await import('../search/toolIndex.js');
  // The exposed tools themselves are indexed (search reads only name, description and input schema): a restored
  // index reads none of their input schemas, which a start-up cache parses only when read (cacheFile.ts).
  const restored = saved ? ToolSearchIndex.restore(saved.read(), tools) : undefined;
  if (restored) return restored;
  const index = new ToolSearchIndex();
  let leftOut = 0;
  const searchable = (tool: ExposedTool): boolean => {
    try {
      void tool.inputSchema;
      return true;
    } catch (error) {
      // A start-up cache's line damaged in place (cacheFile.ts; the file is removed, so the next start loads the
      // folder in full): the other tools stay searchable, and this one callable by name.
      log.warn(`tool search: ${tool.name} left out of the index: ${error instanceof Error ? error.message : String(error)}`);
      leftOut++;
      return false;
    }
  };
  for (let start = 0; start < tools.length; start += INDEX_CHUNK) {
    if (start > 0) await new Promise((resolve) => setImmediate(resolve));
    index.add(tools.slice(start, start + INDEX_CHUNK).filter(searchable));
  }
  // After the search waiting for it has its answer; an index missing a tool is not kept.
  if (saved && leftOut === 0) setImmediate(() => saved.write(index.save()));
  return index;
}

function toolSearchDefinition(deferred: readonly ExposedTool[]): ToolDefinitionShape {
  return {
    name: TOOL_SEARCH_NAME,
    title: 'Search tools',
    description: toolSearchDescription(
      deferred.map((tool) => tool.name),
      `then call them with ${CALL_TOOL} or directly by name`,
    ),
    inputSchema: { $schema: JSON_SCHEMA_2020_12, ...toolSearchInputSchema(), type: 'object' },
    annotations: { title: 'Search tools', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  };
}

function callToolDefinition(): ToolDefinitionShape {
  return {
    name: CALL_TOOL,
    title: 'Call a tool',
    description: `Call any tool by name with its arguments (as described by ${TOOL_SEARCH_NAME}). The result is that tool's result.`,
    inputSchema: {
      $schema: JSON_SCHEMA_2020_12,
      type: 'object',
      properties: {
        name: { type: 'string', description: 'The tool name' },
        arguments: { type: 'object', description: "The tool's arguments", additionalProperties: true },
      },
      required: ['name'],
      additionalProperties: false,
    },
    annotations: { title: 'Call a tool', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  };
}

function plainInstructions(tools: readonly ExposedTool[]): string {
  if (tools.length === 0) return 'agentport serves agents as tools; this agents folder exposes none yet.';
  return (
    `agentport serves ${tools.length} agent tool${tools.length === 1 ? '' : 's'} (${tools.map((t) => t.name).join(', ')}). ` +
    'Each call runs an agent on its model and returns its answer. ' +
    'Pass the thread_id from a result back to continue that conversation.'
  );
}

function searchInstructions(total: number, deferred: readonly ExposedTool[]): string {
  return (
    `agentport serves ${total} agent tools. Most are deferred: find them with ${TOOL_SEARCH_NAME} ` +
    `("select:name", keywords, or "+word" for a word in the name), then run them with ${CALL_TOOL} or by name. ` +
    'Pass the thread_id from a result back to continue that conversation. ' +
    `Deferred tools: ${announceNames(deferred.map((tool) => tool.name))}.`
  );
}
