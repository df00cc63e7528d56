/**
 * The names models see for upstream tools: `<server>__<tool>`, at most 64
 * characters of `[A-Za-z0-9_-]` (what OpenAI-compatible APIs accept for a
 * function name), and stable across restarts.
 *
 * - Characters outside `[A-Za-z0-9_-]` become `_` (`get.item` -> `get_item`).
 * - A name longer than 64 characters is cut and ends with `_` and 8 hex
 *   characters of a SHA-256 of `<server>/<tool>`.
 * - Collisions: a tool whose name needs no change keeps `<server>__<tool>`;
 *   any other tool that would get a name already taken (by another tool of
 *   the server, or by a tool, prompt or agent of the agents folder) gets the
 *   hash ending instead. Server names cannot contain `__` or end in `_`, so
 *   two servers never produce the same name.
 */
import { sha256Hex } from '../sha256.js';

const MAX_MODEL_TOOL_NAME = 64;
export const SEPARATOR = '__';
const HASH_LENGTH = 8;

export function sanitizeToolName(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9_-]/g, '_');
  return cleaned === '' ? 'tool' : cleaned;
}

function hashed(base: string, server: string, tool: string): string {
  const digest = sha256Hex(`${server}/${tool}`).slice(0, HASH_LENGTH);
  return `${base.slice(0, MAX_MODEL_TOOL_NAME - HASH_LENGTH - 1)}_${digest}`;
}

/**
 * Names for every tool of one server, by its upstream name.
 * @param reserved names already in use (the agents folder's tools, prompts and agents)
 */
export function namespaceTools(
  server: string,
  tools: readonly string[],
  reserved: (name: string) => boolean = () => false,
): Map<string, string> {
  const names = new Map<string, string>();
  const used = new Set<string>();
  const sorted = [...new Set(tools)].sort();
  const plain = (tool: string) => `${server}${SEPARATOR}${sanitizeToolName(tool)}`;
  const claim = (tool: string, name: string) => {
    names.set(tool, name);
    used.add(name);
  };
  // Tools whose own name is used as it is come first: they always keep it.
  for (const tool of sorted) {
    const name = plain(tool);
    if (sanitizeToolName(tool) === tool && name.length <= MAX_MODEL_TOOL_NAME && !reserved(name) && !used.has(name)) claim(tool, name);
  }
  for (const tool of sorted) {
    if (names.has(tool)) continue;
    const base = plain(tool);
    let name = base.length <= MAX_MODEL_TOOL_NAME && !used.has(base) && !reserved(base) ? base : hashed(base, server, tool);
    for (let n = 2; used.has(name) || reserved(name); n++) name = hashed(base, server, `${tool}#${n}`);
    claim(tool, name);
  }
  return names;
}

/** The server a namespaced name belongs to (the part before the first `__`), or undefined. */
export function serverOf(name: string): string | undefined {
  const at = name.indexOf(SEPARATOR);
  return at > 0 ? name.slice(0, at) : undefined;
}
