/**
 * `agents/mcp.json`: the upstream MCP servers prompts may use, in the shape
 * hosts already use (Claude Desktop, Claude Code, Cursor):
 *
 * ```json
 * { "mcpServers": {
 *     "files":  { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "../docs"], "env": {}, "cwd": "." },
 *     "github": { "type": "http", "url": "https://api.example.com/mcp", "headers": { "Authorization": "Bearer ${env:GITHUB_TOKEN}" } } } }
 * ```
 *
 * `${env:NAME}` / `${env:NAME:default}` expand in every string (a variable
 * with neither a value nor a default is a load error naming it). Relative
 * `cwd` is resolved against the agents folder, which is also the default.
 * Each server may set `timeoutMs` (default 60 s) for its calls.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { LoadIssue } from '../definitions/issues.js';
import { envReferences, expandEnv } from './envExpand.js';
import { UpstreamSecrets, isSecretEnv, isSecretHeader } from './secrets.js';
import { displayPath } from '../registry/displayPath.js';
import { UPSTREAM_CONFIG_FILE } from './configFile.js';

const DEFAULT_UPSTREAM_TIMEOUT_MS = 60_000;
/** Room for the tool part of `<server>__<tool>` within 64 characters. */
const MAX_SERVER_NAME = 30;
/** Letters, digits, `-` and `_`; no `__` (the namespace separator) and no `_` at the end. */
const SERVER_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_))*$/;

interface Common {
  name: string;
  /** How long one request (connect, a list, a call) may take. */
  timeoutMs: number;
}

interface StdioUpstream extends Common {
  transport: 'stdio';
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
}

interface HttpUpstream extends Common {
  transport: 'http';
  url: string;
  headers: Record<string, string>;
}

export type UpstreamServerConfig = StdioUpstream | HttpUpstream;

export interface UpstreamConfig {
  /** The file, as shown in messages. */
  file: string;
  servers: ReadonlyMap<string, UpstreamServerConfig>;
  /** Values that must never be shown (see secrets.ts). */
  secrets: UpstreamSecrets;
}

const STDIO_KEYS = ['command', 'args', 'env', 'cwd', 'type', 'timeoutMs'];
const HTTP_KEYS = ['type', 'url', 'headers', 'timeoutMs'];
/** Keys hosts write that agentport does not need: accepted without a warning. */
const IGNORED_KEYS = ['description', 'disabled', 'autoApprove', 'alwaysAllow', 'transportType'];

/**
 * Reads `<agentsDir>/mcp.json`. No file: no upstream servers (undefined).
 * Problems are added to `issues` (errors for what cannot work, warnings for
 * keys that are ignored); a server with an error is left out.
 */
export async function loadUpstreamConfig(
  agentsDir: string,
  issues: LoadIssue[],
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<UpstreamConfig | undefined> {
  const absolute = path.join(agentsDir, UPSTREAM_CONFIG_FILE);
  let text: string;
  try {
    text = await readFile(absolute, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const file = displayPath(absolute);
  return parseUpstreamConfig(text, { file, agentsDir, env, issues });
}

export function parseUpstreamConfig(
  text: string,
  options: { file: string; agentsDir: string; env: Readonly<Record<string, string | undefined>>; issues: LoadIssue[] },
): UpstreamConfig | undefined {
  const { file, issues } = options;
  const error = (field: string | undefined, message: string) =>
    issues.push({ severity: 'error', file, ...(field ? { field } : {}), message });
  const warn = (field: string, message: string) => issues.push({ severity: 'warning', file, field, message });
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (cause) {
    error(undefined, `not valid JSON: ${cause instanceof Error ? cause.message : String(cause)}`);
    return undefined;
  }
  if (!isRecord(raw) || !isRecord(raw.mcpServers)) {
    error('mcpServers', 'expected {"mcpServers": {"<name>": {"command": ...} | {"type": "http", "url": ...}}}');
    return undefined;
  }
  for (const key of Object.keys(raw)) if (key !== 'mcpServers' && key !== '$schema') warn(key, `unknown key "${key}" is ignored`);

  const secrets = new UpstreamSecrets();
  const servers = new Map<string, UpstreamServerConfig>();
  for (const [name, entry] of Object.entries(raw.mcpServers)) {
    const at = `mcpServers.${name}`;
    if (!SERVER_NAME.test(name) || name.length > MAX_SERVER_NAME) {
      error(
        at,
        `server name "${name}" must be 1-${MAX_SERVER_NAME} letters, digits, "-" and "_", without "__" and not ending in "_" (tools are named <server>__<tool>)`,
      );
      continue;
    }
    if (!isRecord(entry)) {
      error(at, 'expected an object with "command" (stdio) or "type": "http" and "url"');
      continue;
    }
    const before = issues.filter((i) => i.severity === 'error').length;
    const parsed = parseServer(name, entry, at, options, secrets, error, warn);
    if (parsed && issues.filter((i) => i.severity === 'error').length === before) servers.set(name, parsed);
  }
  return { file, servers, secrets };
}

function parseServer(
  name: string,
  entry: Record<string, unknown>,
  at: string,
  options: { agentsDir: string; env: Readonly<Record<string, string | undefined>> },
  secrets: UpstreamSecrets,
  error: (field: string, message: string) => void,
  warn: (field: string, message: string) => void,
): UpstreamServerConfig | undefined {
  const type = entry.type;
  const http = isHttpEntry(entry);
  if (type === 'sse') {
    error(
      `${at}.type`,
      'the SSE transport is not supported (it is deprecated): use the server\'s Streamable HTTP endpoint with "type": "http"',
    );
    return undefined;
  }
  if (type !== undefined && !http && type !== 'stdio') {
    error(`${at}.type`, `unknown type ${JSON.stringify(type)} (use "stdio" or "http")`);
    return undefined;
  }
  const known = http ? HTTP_KEYS : STDIO_KEYS;
  for (const key of Object.keys(entry)) {
    if (!known.includes(key) && !IGNORED_KEYS.includes(key))
      warn(`${at}.${key}`, `unknown key "${key}" is ignored (a ${http ? 'Streamable HTTP' : 'stdio'} server takes ${known.join(', ')})`);
  }

  // Every string goes through ${env:} expansion. Secrets: the whole value of a credential entry, what
  // ${env:} brings into env and headers, and elsewhere (args, url, cwd) variables named like credentials.
  const expand = (value: unknown, field: string, secret: 'always' | 'env-values' | 'credential-names'): string | undefined => {
    if (typeof value !== 'string') {
      error(field, `must be a string, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`);
      return undefined;
    }
    const result = expandEnv(value, options.env);
    for (const variable of result.missing) {
      error(field, `environment variable ${variable} is not set (set it, or give a default: \${env:${variable}:default})`);
    }
    if (result.missing.length) return undefined;
    for (const found of result.fromEnv) if (secret !== 'credential-names' || isSecretEnv(found.name)) secrets.add(found.value);
    if (secret === 'always') secrets.add(result.value);
    return result.value;
  };
  const stringMap = (value: unknown, field: string, isSecret: (key: string) => boolean): Record<string, string> | undefined => {
    if (value === undefined) return {};
    if (!isRecord(value)) {
      error(field, 'must be an object of names to strings');
      return undefined;
    }
    const out: Record<string, string> = {};
    for (const [key, inner] of Object.entries(value)) {
      const expanded = expand(inner, `${field}.${key}`, isSecret(key) ? 'always' : 'env-values');
      if (expanded !== undefined) out[key] = expanded;
    }
    return out;
  };
  let timeoutMs = DEFAULT_UPSTREAM_TIMEOUT_MS;
  if (entry.timeoutMs !== undefined) {
    if (typeof entry.timeoutMs !== 'number' || !Number.isInteger(entry.timeoutMs) || entry.timeoutMs <= 0) {
      error(`${at}.timeoutMs`, 'must be a positive integer (milliseconds)');
      return undefined;
    }
    timeoutMs = entry.timeoutMs;
  }

  if (http) {
    const url = expand(entry.url, `${at}.url`, 'credential-names');
    const headers = stringMap(entry.headers, `${at}.headers`, isSecretHeader);
    if (url === undefined || headers === undefined) return undefined;
    try {
      const parsed = new URL(url);
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not http(s)');
      // Credentials in the URL itself (user:password@, ?token=) are secrets too.
      if (parsed.password) secrets.add(decodeURIComponent(parsed.password));
      for (const [key, value] of parsed.searchParams) if (isSecretHeader(key)) secrets.add(value);
    } catch {
      error(`${at}.url`, `not an http(s) URL: ${secrets.text(url)}`);
      return undefined;
    }
    return { name, transport: 'http', url, headers, timeoutMs };
  }

  if (entry.command === undefined) {
    error(at, 'expected "command" (a stdio server) or "type": "http" with "url"');
    return undefined;
  }
  const command = expand(entry.command, `${at}.command`, 'credential-names');
  let args: string[] | undefined = [];
  if (entry.args !== undefined) {
    if (!Array.isArray(entry.args)) {
      error(`${at}.args`, 'must be an array of strings');
      args = undefined;
    } else {
      args = entry.args.map((arg, i) => expand(arg, `${at}.args[${i}]`, 'credential-names') ?? '');
    }
  }
  const env = stringMap(entry.env, `${at}.env`, isSecretEnv);
  const cwd = entry.cwd === undefined ? options.agentsDir : expand(entry.cwd, `${at}.cwd`, 'credential-names');
  if (command === undefined || args === undefined || env === undefined || cwd === undefined) return undefined;
  if (command.trim() === '') {
    error(`${at}.command`, 'must not be empty');
    return undefined;
  }
  return { name, transport: 'stdio', command, args, env, cwd: path.resolve(options.agentsDir, cwd), timeoutMs };
}

function isHttpEntry(entry: Record<string, unknown>): boolean {
  const type = entry.type;
  return (
    type === 'http' ||
    type === 'streamable-http' ||
    type === 'streamableHttp' ||
    (type === undefined && entry.url !== undefined && entry.command === undefined)
  );
}

/** A `${env:}` variable mcp.json uses, for asking for it elsewhere (a bundle's settings). */
export interface UpstreamVariable {
  name: string;
  /** The default of its `${env:NAME:default}`; none when some use has no default. */
  fallback?: string;
  /** Named like a credential, in a header value, or in an env entry named like one. */
  secret: boolean;
  /** The servers that use it. */
  servers: string[];
}

/**
 * The variables mcp.json text refers to, in the fields each server's
 * transport expands (the other keys are ignored when loading, so they are
 * not asked for). Malformed text or entries give nothing: loading reports them.
 */
export function upstreamVariables(text: string): UpstreamVariable[] {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return [];
  }
  if (!isRecord(raw) || !isRecord(raw.mcpServers)) return [];
  const found = new Map<string, UpstreamVariable & { withoutDefault: boolean }>();
  const note = (server: string, value: unknown, secret: boolean) => {
    if (typeof value !== 'string') return;
    for (const { name, fallback } of envReferences(value)) {
      let variable = found.get(name);
      if (!variable) {
        variable = { name, secret: false, servers: [], withoutDefault: false };
        found.set(name, variable);
      }
      variable.secret ||= secret || isSecretEnv(name);
      if (!variable.servers.includes(server)) variable.servers.push(server);
      if (fallback === undefined) variable.withoutDefault = true;
      else variable.fallback ??= fallback;
    }
  };
  const noteMap = (server: string, value: unknown, secretKey: (key: string) => boolean) => {
    if (isRecord(value)) for (const [key, inner] of Object.entries(value)) note(server, inner, secretKey(key));
  };
  for (const [server, entry] of Object.entries(raw.mcpServers)) {
    if (!isRecord(entry)) continue;
    if (isHttpEntry(entry)) {
      note(server, entry.url, false);
      // Headers carry credentials; their ${env:} values are redacted whatever the header's name.
      noteMap(server, entry.headers, () => true);
    } else {
      note(server, entry.command, false);
      if (Array.isArray(entry.args)) for (const arg of entry.args) note(server, arg, false);
      noteMap(server, entry.env, isSecretEnv);
      note(server, entry.cwd, false);
    }
  }
  return [...found.values()].map(({ withoutDefault, fallback, ...variable }) =>
    withoutDefault || fallback === undefined ? variable : { ...variable, fallback },
  );
}

/** What `doctor` and `list --upstream` show about a server (never its env or headers). */
export function describeServer(server: UpstreamServerConfig, secrets: UpstreamSecrets): string {
  return server.transport === 'http'
    ? `${server.name} (http ${secrets.text(server.url)})`
    : `${server.name} (stdio ${secrets.text([server.command, ...server.args].join(' '))})`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
