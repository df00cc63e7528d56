/**
 * Ranking quality on real tools: the Seal-Tools dev queries (shared/data,
 * beside the repository; AGENTPORT_TOOLSEARCH_DATA overrides). Skipped when
 * the data is absent. bench/search.mjs reports the same figure with timings.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ToolSearchIndex } from '../../src/search/toolIndex.js';
import type { SearchableTool } from '../../src/search/types.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const DATA_DIR = process.env.AGENTPORT_TOOLSEARCH_DATA ?? path.resolve(REPO_ROOT, '..', 'shared', 'data', 'toolsearch', 'seal-tools');
const HAVE_DATA = existsSync(path.join(DATA_DIR, 'tool.jsonl')) && existsSync(path.join(DATA_DIR, 'dev.jsonl'));

const JSON_TYPES: Record<string, string> = {
  str: 'string',
  int: 'integer',
  float: 'number',
  bool: 'boolean',
  list: 'array',
  dict: 'object',
};

interface SealTool {
  api_name: string;
  api_description: string;
  parameters?: Record<string, { type: string; description?: string }>;
  required?: string[];
}

function readJsonl<T>(file: string): T[] {
  return readFileSync(path.join(DATA_DIR, file), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as T);
}

function toMcp(tool: SealTool): SearchableTool {
  const properties = Object.fromEntries(
    Object.entries(tool.parameters ?? {}).map(([name, p]) => [
      name,
      { type: JSON_TYPES[p.type] ?? 'string', ...(p.description ? { description: p.description } : {}) },
    ]),
  );
  return {
    name: tool.api_name,
    description: tool.api_description,
    inputSchema: { type: 'object', properties, required: tool.required ?? [] },
  };
}

// Outside CI the data may be absent (a clone without shared/ beside it); in CI it must be there.
it('finds the Seal-Tools data in CI', () => {
  if (process.env.CI) expect(HAVE_DATA, `Seal-Tools data not found in ${DATA_DIR}`).toBe(true);
});

describe.skipIf(!HAVE_DATA)('Seal-Tools dev queries', () => {
  it('[TS-2] keyword search finds the gold tools of natural-language requests (recall@5 >= 0.9)', () => {
    const index = new ToolSearchIndex(readJsonl<SealTool>('tool.jsonl').map(toMcp));
    const queries = readJsonl<{ query: string; calling: Array<{ api: string }> }>('dev.jsonl');
    expect(index.size).toBe(4076);
    expect(queries).toHaveLength(700);
    let sum = 0;
    for (const { query, calling } of queries) {
      const gold = new Set(calling.map((call) => call.api));
      const found = index.search(query).tools.filter((tool) => gold.has(tool.name)).length;
      sum += found / gold.size;
    }
    // Measured 0.935; the off-the-shelf MiniSearch baseline is ~0.866.
    expect(sum / queries.length).toBeGreaterThanOrEqual(0.9);
  });
});
