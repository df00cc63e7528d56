/**
 * The start-up cache file, `<data dir>/cache/catalog-v2.jsonl`: what `serve`
 * needs before the first call, saved by a start that loaded the folder
 * without errors, so the next start reads one file instead of importing
 * every definition. It holds the tool catalogue (names, descriptions, JSON
 * Schemas), where each definition lives, the names of the secret variables,
 * and the load's warnings. Never values: of the environment variables the
 * definitions read, only their names and a digest of their values.
 *
 * Its first line is a JSON header with all of that but each tool's input
 * schema and annotations; those follow, one JSON text a line, and the header
 * gives each one's byte offset (from the header's end). They are most of the
 * file (6.6 of 10.8 MB at 10,000 tools), and only a listing of every tool or
 * a call of the tool reads them: a start decodes and parses the header alone,
 * and a tool's line when something first reads the field (with tool search
 * on, a start reads none). Decoding and parsing them all cost a warm start
 * about a third of its time.
 *
 * It is used only when agentport's version, the agents folder, every
 * file's path, size and times (stamps.ts) and the values of the environment
 * variables the definitions read (environment.ts) are the same. Anything else (an
 * older or newer format, a header that does not parse, lines that are not
 * the length the header gives or not whole, a changed folder) is ignored and
 * the cache is rebuilt. Written to a temporary file and renamed,
 * so a reader never sees half a file.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { DefinitionKind } from '../../definitions/brand.js';
import type { LoadIssue } from '../../definitions/issues.js';
import type { JsonSchema } from '../../definitions/jsonSchema.js';
import type { SecretNames } from '../../registry/types.js';
import type { ExposedTool } from '../toolCatalog.js';
import { VERSION } from '../version.js';
import { environmentDigest, type EnvironmentKey } from './environment.js';
import { sameFiles, sameStamps, type FileStamp } from './stamps.js';

const STARTUP_CACHE_FILE = 'catalog-v2.jsonl';
// 6: the header names the environment variables the definitions read: a cache written without them is not trusted.
// 7: `read` holds the files the definitions read themselves with node:fs (fileReads.ts), which a 6 left out.
const FORMAT = 7;
/** What earlier versions saved: removed when the cache is written again. */
const OLDER_FILES = ['catalog-v1.json'];
const NEWLINE = 0x0a;
const KINDS = new Set<string>(['model', 'prompt', 'tool', 'hook', 'agent'] satisfies DefinitionKind[]);

/** What a start needs, as read back from the cache. */
export interface StartupCache {
  files: FileStamp[];
  /**
   * Files the full load read or depended on that are not among `files` (a helper in a dot-folder, a module Node loaded
   * itself, an imported package's package.json, a lockfile, an icon), by absolute path; absent ones have -1s.
   */
  read: FileStamp[];
  /** Each definition with the index of its file in `files`. */
  definitions: Array<[kind: DefinitionKind, name: string, file: number]>;
  secretNames: SecretNames;
  /** The environment variables the definitions read while they loaded, with a digest of their values (environment.ts). */
  environment: EnvironmentKey;
  warnings: LoadIssue[];
  tools: ExposedTool[];
  /** What tells this cache from any other written (a search index saved for its tools names it: searchIndexFile.ts). */
  id?: string;
}

/**
 * The header line. Output schemas are mostly identical, so each distinct one is stored once and tools point at it. A
 * tool's {@link LATE_FIELDS} hold the byte offsets of their lines (counted from the first line after the header) in
 * the fields' own places, so a tool read back has its keys in the order a built one has (a reload compares tools by
 * their JSON, registrySurface.ts).
 */
interface CacheHeader extends Omit<StartupCache, 'tools'> {
  format: number;
  /** The length in bytes of what follows the header: a file cut short (or grown) is not read. */
  linesBytes: number;
  agentport: string;
  agentsDir: string;
  /** What else decides which file an import names (see {@link resolutionSettings}). */
  resolution: string;
  outputSchemas: Array<ExposedTool['outputSchema']>;
  tools: Array<Omit<ExposedTool, LateField | 'outputSchema'> & Record<LateField, number> & { outputSchema: number }>;
}

/** The fields of a cached tool kept on lines of their own and parsed when first read. */
const LATE_FIELDS = ['inputSchema', 'annotations'] as const;
type LateField = (typeof LATE_FIELDS)[number];

export function startupCachePath(dataDir: string): string {
  return path.join(dataDir, 'cache', STARTUP_CACHE_FILE);
}

/**
 * Settings outside the folder that change what an import resolves to, or how it is run: Node's version and the
 * `NODE_PATH` folders it searches. A start under others loads in full (stamps cannot see a package that NODE_PATH
 * now finds elsewhere).
 */
function resolutionSettings(): string {
  return JSON.stringify([process.versions.node, process.env.NODE_PATH ?? '']);
}

/** The cache for this folder as it is now (`stamps`), or undefined when there is none or it is stale. */
export function readStartupCache(file: string, agentsDir: string, stamps: readonly FileStamp[]): StartupCache | undefined {
  let lines: Buffer;
  let parsed: unknown;
  try {
    const bytes = readFileSync(file);
    const headerEnd = bytes.indexOf(NEWLINE);
    if (headerEnd === -1) return undefined;
    parsed = JSON.parse(bytes.toString('utf8', 0, headerEnd));
    lines = bytes.subarray(headerEnd + 1);
  } catch {
    return undefined;
  }
  if (!isCacheHeader(parsed) || parsed.format !== FORMAT || parsed.agentport !== VERSION || parsed.agentsDir !== agentsDir)
    return undefined;
  if (parsed.resolution !== resolutionSettings()) return undefined;
  if (parsed.linesBytes !== lines.length) return undefined;
  if (!sameStamps(parsed.files, stamps)) return undefined;
  if (!sameFiles(parsed.read)) return undefined;
  // Last: only a cache that names variables computes a digest (and loads node:crypto for it).
  const { names, digest } = parsed.environment;
  if (names.length > 0 && environmentDigest(names) !== digest) return undefined;
  // A file edited by hand can still parse: a definition must point at a stamped file.
  for (const [kind, name, at] of parsed.definitions) {
    if (!KINDS.has(kind) || typeof name !== 'string' || !Number.isInteger(at) || at < 0 || at >= parsed.files.length) return undefined;
  }
  const tools: ExposedTool[] = [];
  // The lines follow each other in the tools' order, each whole: one cut short or joined to the next is not read.
  let next = 0;
  const isNextLine = (at: unknown): boolean => {
    if (at !== next) return false;
    const end = lines.indexOf(NEWLINE, next);
    next = end + 1;
    return end !== -1;
  };
  for (const tool of parsed.tools) {
    // A hand edit can leave anything here: each tool is checked as far as this read relies on it.
    if (typeof tool !== 'object' || tool === null || !LATE_FIELDS.every((field) => isNextLine(tool[field]))) return undefined;
    const schema = parsed.outputSchemas[tool.outputSchema];
    if (!schema) return undefined;
    // The object just parsed becomes the tool (a copy of each of 10,000 tools would only make garbage).
    const exposed = tool as unknown as ExposedTool;
    exposed.outputSchema = schema;
    for (const field of LATE_FIELDS) parsedWhenRead(exposed, field, lines, tool[field], file);
    tools.push(exposed);
  }
  if (next !== lines.length) return undefined;
  return {
    files: parsed.files,
    read: parsed.read,
    definitions: parsed.definitions,
    secretNames: parsed.secretNames,
    environment: parsed.environment,
    warnings: parsed.warnings,
    tools,
    ...(typeof parsed.id === 'string' ? { id: parsed.id } : {}),
  };
}

/**
 * Writes the cache under `id` (a new one unless given; the global Web Crypto makes it, so node:crypto loads when a
 * cache is written, not at every start that reads one); returns the id.
 */
export function writeStartupCache(file: string, agentsDir: string, cache: StartupCache, id: string = crypto.randomUUID()): string {
  const outputSchemas: JsonSchema[] = [];
  const known = new Map<string, number>();
  const lines: string[] = [];
  // Byte offsets from the first line after the header: the header's own length then does not depend on them.
  let offset = 0;
  const lineOf = (value: unknown) => {
    const line = `${JSON.stringify(value)}\n`;
    lines.push(line);
    const at = offset;
    offset += Buffer.byteLength(line);
    return at;
  };
  const tools = cache.tools.map((tool) => {
    const key = JSON.stringify(tool.outputSchema);
    let at = known.get(key);
    if (at === undefined) {
      at = outputSchemas.push(tool.outputSchema) - 1;
      known.set(key, at);
    }
    // The whole tool spread first: the fields replaced keep their places.
    return { ...tool, inputSchema: lineOf(tool.inputSchema), annotations: lineOf(tool.annotations), outputSchema: at };
  });
  const header: CacheHeader = {
    format: FORMAT,
    agentport: VERSION,
    agentsDir,
    resolution: resolutionSettings(),
    linesBytes: offset,
    ...cache,
    id,
    outputSchemas: outputSchemas as CacheHeader['outputSchemas'],
    tools,
  };
  writeFileAtomically(file, `${JSON.stringify(header)}\n${lines.join('')}`, OLDER_FILES);
  return id;
}

/**
 * Writes `content` through a temporary file and a rename, so a reader never sees half a file; then removes `replaces`,
 * the names of the files earlier versions kept beside it instead.
 */
export function writeFileAtomically(file: string, content: string | Uint8Array, replaces: readonly string[] = []): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, content);
    renameSync(temporary, file);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
  for (const older of replaces) rmSync(path.join(path.dirname(file), older), { force: true });
}

/**
 * Reads every tool's late fields now, for a start that would read them all anyway (tool search off): a line damaged
 * in place (whole, but not JSON) is then found before serving, so the start can load the folder in full instead.
 * @returns why the cache cannot serve (its file then removed), or undefined when every line parsed
 */
export function damagedLine(tools: readonly ExposedTool[]): string | undefined {
  try {
    for (const tool of tools) for (const field of LATE_FIELDS) void tool[field];
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  return undefined;
}

/** Cache files removed for a damaged line: once is enough (by then a new start may have written a good one). */
const removed = new Set<string>();

/**
 * Makes `tool[field]` the JSON on the line at byte `at` of `bytes`, parsed on the first read. The property stays an
 * ordinary enumerable one to readers (a spread or JSON.stringify of the tool reads it), and becomes a plain data
 * property once read or set.
 */
function parsedWhenRead(tool: ExposedTool, field: LateField, bytes: Buffer, at: number, file: string): void {
  const settle = (value: unknown) => Object.defineProperty(tool, field, { value, writable: true, enumerable: true, configurable: true });
  Object.defineProperty(tool, field, {
    enumerable: true,
    configurable: true,
    get() {
      const end = bytes.indexOf(NEWLINE, at);
      let value: unknown;
      try {
        value = JSON.parse(bytes.toString('utf8', at, end === -1 ? bytes.length : end));
      } catch (error) {
        // Only a hand edit (or a damaged disk) does this: the file is written whole, from JSON.stringify's output. It
        // is removed, so the next start loads the folder in full and writes it again.
        if (!removed.has(file)) rmSync(file, { force: true });
        removed.add(file);
        throw new Error(
          `start-up cache ${file}: the ${field} of tool ${tool.name} is not JSON (${error instanceof Error ? error.message : String(error)}); the file was removed, and the next start loads the folder in full and saves it again`,
          { cause: error },
        );
      }
      settle(value);
      return value;
    },
    set: settle,
  });
}

/** Enough of the shape to read it safely; the format number and version guard the rest. */
function isCacheHeader(value: unknown): value is CacheHeader {
  if (typeof value !== 'object' || value === null) return false;
  const file = value as Partial<Record<keyof CacheHeader, unknown>>;
  return (
    Array.isArray(file.files) &&
    Array.isArray(file.read) &&
    Array.isArray(file.definitions) &&
    Array.isArray(file.tools) &&
    Array.isArray(file.outputSchemas) &&
    Array.isArray(file.warnings) &&
    isEnvironmentKey(file.environment) &&
    typeof file.secretNames === 'object' &&
    file.secretNames !== null
  );
}

function isEnvironmentKey(value: unknown): value is EnvironmentKey {
  if (typeof value !== 'object' || value === null) return false;
  const { names, digest } = value as Partial<Record<keyof EnvironmentKey, unknown>>;
  return Array.isArray(names) && names.every((name) => typeof name === 'string') && typeof digest === 'string';
}
