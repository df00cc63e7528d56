/**
 * `agentport search`: runs tool search from the shell, on the agents folder's
 * tools or on a tools JSON file, one query or a JSONL file of them.
 */
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { AgentportError, errorMessage, hasCode } from '../../errors.js';
import type { ToolSearchIndex } from '../../search/toolIndex.js';
import { DEFAULT_MAX_RESULTS, type SearchableTool } from '../../search/types.js';
import { agentsDirOf, fail, DIR_HELP, DIR_OPTION } from '../context.js';

/** What the command needs from the rest of the CLI. */
export interface SearchCommandDeps {
  /** The tools the agents folder `dir` exposes, in MCP `tools/list` shape (with `upstream`: and its upstream servers' tools). */
  loadRegistryTools: (dir: string, options?: { upstream?: boolean }) => Promise<SearchableTool[]>;
}

interface SearchCommandOptions {
  maxResults: string;
  json?: boolean;
  tools?: string;
  queries?: string;
  dir?: string;
  upstream?: boolean;
}

/** One line of a `--queries` file. */
interface QueryLine {
  query: string;
  gold?: string[];
}

/** A usage or input problem (code `INVALID_ARGUMENTS`): the action prints the message and exits with code 1. */
function usageError(message: string): AgentportError {
  return new AgentportError('INVALID_ARGUMENTS', message);
}

/** Registers `agentport search "<query>"` on `program`. */
export function registerSearchCommand(program: Command, deps: SearchCommandDeps): void {
  program
    .command('search')
    .description('search tools as the tool_search tool does: select:a,b, keywords, +word (required in the name)')
    .argument('[query]', 'the query (omit with --queries)')
    .option('-n, --max-results <n>', 'how many tools a keyword query returns', String(DEFAULT_MAX_RESULTS))
    .option('--json', 'print {"query", "results", "unknown"} instead of the <functions> text')
    .option('--tools <file>', 'search the tools of a JSON file ({"tools": [...]} or [...]) instead of the agents folder')
    .option('--queries <file>', 'run each query of a JSONL file ({"query", "gold"?}); print results, times and recall@k')
    .option(DIR_OPTION, DIR_HELP)
    .option('--upstream', 'also search the tools of the upstream MCP servers of agents/mcp.json (connecting to each)')
    .action(async (query: string | undefined, options: SearchCommandOptions) => {
      try {
        await runSearchCommand(query, options, deps);
      } catch (error) {
        if (!hasCode(error, 'INVALID_ARGUMENTS')) throw error;
        fail(error.message);
      }
    });
}

async function runSearchCommand(query: string | undefined, options: SearchCommandOptions, deps: SearchCommandDeps): Promise<void> {
  const maxResults = parseMaxResults(options.maxResults);
  if (options.queries !== undefined && query !== undefined) {
    throw usageError('give either a query or --queries FILE, not both');
  }
  if (options.queries === undefined && query === undefined) {
    throw usageError('a query is required, e.g. agentport search "send slack message" (or --queries FILE)');
  }
  // Read the queries before loading tools: a bad file fails fast.
  const lines = options.queries === undefined ? undefined : await readQueryLines(options.queries);
  const tools =
    options.tools === undefined
      ? await deps.loadRegistryTools(agentsDirOf(options), { upstream: options.upstream === true })
      : await readToolsFile(options.tools);
  // Loaded here, not at the top: other commands never pay for the search engine.
  const { ToolSearchIndex } = await import('../../search/toolIndex.js');
  const index = new ToolSearchIndex(tools);

  if (lines !== undefined) {
    runQueryLines(index, lines, maxResults);
    return;
  }
  await printOne(index, query ?? '', maxResults, options.json === true);
}

async function printOne(index: ToolSearchIndex, query: string, maxResults: number, json: boolean): Promise<void> {
  const outcome = index.search(query, { maxResults });
  if (outcome.mode === 'invalid') throw usageError(outcome.error ?? 'the query could not be read');
  if (json) {
    const results = outcome.tools.map((tool) => tool.name);
    const line = outcome.unknown.length > 0 ? { query, results, unknown: outcome.unknown } : { query, results };
    process.stdout.write(`${JSON.stringify(line)}\n`);
    return;
  }
  const { formatSearchOutcome } = await import('../../search/format.js');
  process.stdout.write(`${formatSearchOutcome(outcome)}\n`);
}

function runQueryLines(index: ToolSearchIndex, lines: readonly QueryLine[], k: number): void {
  let recallSum = 0;
  let withGold = 0;
  for (const { query, gold } of lines) {
    const started = performance.now();
    const outcome = index.search(query, { maxResults: k });
    const ms = performance.now() - started;
    const results = outcome.tools.map((tool) => tool.name);
    const line: Record<string, unknown> = { query, results, ms: Math.round(ms * 1000) / 1000 };
    if (outcome.error !== undefined) line.error = outcome.error;
    process.stdout.write(`${JSON.stringify(line)}\n`);
    if (gold !== undefined && gold.length > 0) {
      const wanted = new Set(gold);
      const found = results.slice(0, k).filter((name) => wanted.has(name)).length;
      recallSum += found / wanted.size;
      withGold += 1;
    }
  }
  if (withGold > 0) {
    process.stdout.write(`${JSON.stringify({ k, queries: withGold, recall: Math.round((recallSum / withGold) * 10000) / 10000 })}\n`);
  }
}

function parseMaxResults(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1) {
    throw usageError(`--max-results must be a positive integer, got "${value}"`);
  }
  return parsed;
}

async function readText(file: string, what: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : errorMessage(error);
    throw usageError(`cannot read ${what} ${file}: ${reason}`);
  }
}

/** Reads `{"tools": [...]}` or `[...]`, as `tools/list` and `agentport list --json` print them. */
async function readToolsFile(file: string): Promise<SearchableTool[]> {
  const text = await readText(file, 'tools file');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw usageError(`${file}: invalid JSON: ${errorMessage(error)}`);
  }
  const list = Array.isArray(parsed) ? parsed : isRecord(parsed) ? parsed.tools : undefined;
  if (!Array.isArray(list)) {
    throw usageError(`${file}: expected {"tools": [...]} or an array of tools`);
  }
  list.forEach((tool: unknown, i) => {
    if (!isRecord(tool) || typeof tool.name !== 'string' || tool.name === '') {
      throw usageError(`${file}: tool ${i} has no "name" string`);
    }
  });
  return list as SearchableTool[];
}

async function readQueryLines(file: string): Promise<QueryLine[]> {
  const text = await readText(file, 'queries file');
  const lines: QueryLine[] = [];
  text.split('\n').forEach((raw, i) => {
    if (raw.trim() === '') return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch (error) {
      throw usageError(`${file}:${i + 1}: invalid JSON: ${errorMessage(error)}`);
    }
    if (!isRecord(parsed) || typeof parsed.query !== 'string') {
      throw usageError(`${file}:${i + 1}: expected {"query": string, "gold"?: string[]}`);
    }
    const gold = parsed.gold;
    if (gold !== undefined && !(Array.isArray(gold) && gold.every((name) => typeof name === 'string'))) {
      throw usageError(`${file}:${i + 1}: "gold" must be an array of tool names`);
    }
    lines.push(gold === undefined ? { query: parsed.query } : { query: parsed.query, gold });
  });
  return lines;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
