/**
 * The start-up cache file, `<data dir>/cache/catalog-v1.json`: what `serve`
 * needs before the first call, saved by a start that loaded the folder
 * without errors, so the next start reads one file instead of importing
 * every definition. It holds the tool catalogue (names, descriptions, JSON
 * Schemas), where each definition lives, the names of the secret variables,
 * and the load's warnings. Never values: nothing from the environment.
 *
 * It is used only when agentport's version, the agents folder and every
 * file's path, size and mtime (stamps.ts) are the same. Anything else (an
 * older or newer format, a file that does not parse, a changed folder) is
 * ignored and the cache is rebuilt. Written to a temporary file and renamed,
 * so a reader never sees half a file.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { DefinitionKind } from '../../definitions/brand.js';
import type { LoadIssue } from '../../definitions/issues.js';
import type { JsonSchema } from '../../definitions/jsonSchema.js';
import type { SecretNames } from '../../registry/types.js';
import type { ExposedTool } from '../toolCatalog.js';
import { VERSION } from '../version.js';
import { sameStamps, type FileStamp } from './stamps.js';

const STARTUP_CACHE_FILE = 'catalog-v1.json';
const FORMAT = 2;
const KINDS = new Set<string>(['model', 'prompt', 'tool', 'hook', 'agent'] satisfies DefinitionKind[]);

/** What a start needs, as read back from the cache. */
export interface StartupCache {
  files: FileStamp[];
  /** Each definition with the index of its file in `files`. */
  definitions: Array<[kind: DefinitionKind, name: string, file: number]>;
  secretNames: SecretNames;
  warnings: LoadIssue[];
  tools: ExposedTool[];
  /** What tells this cache from any other written (a search index saved for its tools names it: searchIndexFile.ts). */
  id?: string;
}

/** On disk: output schemas are mostly identical, so each distinct one is stored once and tools point at it. */
interface CacheFile extends Omit<StartupCache, 'tools'> {
  format: number;
  agentport: string;
  agentsDir: string;
  outputSchemas: Array<ExposedTool['outputSchema']>;
  tools: Array<Omit<ExposedTool, 'outputSchema'> & { outputSchema: number }>;
}

export function startupCachePath(dataDir: string): string {
  return path.join(dataDir, 'cache', STARTUP_CACHE_FILE);
}

/** The cache for this folder as it is now (`stamps`), or undefined when there is none or it is stale. */
export function readStartupCache(file: string, agentsDir: string, stamps: readonly FileStamp[]): StartupCache | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
  if (!isCacheFile(parsed) || parsed.format !== FORMAT || parsed.agentport !== VERSION || parsed.agentsDir !== agentsDir) return undefined;
  if (!sameStamps(parsed.files, stamps)) return undefined;
  // A file edited by hand can still parse: a definition must point at a stamped file.
  for (const [kind, name, at] of parsed.definitions) {
    if (!KINDS.has(kind) || typeof name !== 'string' || !Number.isInteger(at) || at < 0 || at >= parsed.files.length) return undefined;
  }
  const tools: ExposedTool[] = [];
  for (const tool of parsed.tools) {
    const schema = parsed.outputSchemas[tool.outputSchema];
    if (!schema) return undefined;
    // The object just parsed becomes the tool (a copy of each of 10,000 tools would only make garbage).
    const exposed = tool as unknown as ExposedTool;
    exposed.outputSchema = schema;
    tools.push(exposed);
  }
  return {
    files: parsed.files,
    definitions: parsed.definitions,
    secretNames: parsed.secretNames,
    warnings: parsed.warnings,
    tools,
    ...(typeof parsed.id === 'string' ? { id: parsed.id } : {}),
  };
}

/** Writes the cache; returns the id it was written with. */
export function writeStartupCache(file: string, agentsDir: string, cache: StartupCache): string {
  const outputSchemas: JsonSchema[] = [];
  const known = new Map<string, number>();
  const tools = cache.tools.map(({ outputSchema, ...tool }) => {
    const key = JSON.stringify(outputSchema);
    let at = known.get(key);
    if (at === undefined) {
      at = outputSchemas.push(outputSchema) - 1;
      known.set(key, at);
    }
    return { ...tool, outputSchema: at };
  });
  const id = randomUUID();
  const content: CacheFile = {
    format: FORMAT,
    agentport: VERSION,
    agentsDir,
    ...cache,
    id,
    outputSchemas: outputSchemas as CacheFile['outputSchemas'],
    tools,
  };
  writeJsonAtomically(file, content);
  return id;
}

/** Writes `value` as JSON through a temporary file and a rename, so a reader never sees half a file. */
export function writeJsonAtomically(file: string, value: unknown): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, JSON.stringify(value));
    renameSync(temporary, file);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

/** Enough of the shape to read it safely; the format number and version guard the rest. */
function isCacheFile(value: unknown): value is CacheFile {
  if (typeof value !== 'object' || value === null) return false;
  const file = value as Partial<Record<keyof CacheFile, unknown>>;
  return (
    Array.isArray(file.files) &&
    Array.isArray(file.definitions) &&
    Array.isArray(file.tools) &&
    Array.isArray(file.outputSchemas) &&
    Array.isArray(file.warnings) &&
    typeof file.secretNames === 'object' &&
    file.secretNames !== null
  );
}
