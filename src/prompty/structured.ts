/**
 * YAML sections of a body: the `tools:` section and `assistant[type="tool_call"]:` sections.
 *
 * The YAML is parsed with value tokens still in place (see interpolation.ts), so interpolated input
 * can only ever be a scalar. A plain scalar that is exactly one token takes the input's value as is
 * (a number stays a number, an object an object); otherwise tokens are filled in as text.
 */
import { parseDocument, visit, type Document } from 'yaml';
import { AgentportError, hasCode } from '../errors.js';
import type { Interpolations } from './interpolation.js';
import type { PromptyToolCall } from './types.js';

/**
 * A YAML section that is invalid: code `PROMPTY_INVALID`, `data.section` true and, for syntax
 * errors, `data.lineOffset` (0-based within the section's content); shape errors concern the whole
 * section. The loader and the renderer turn it into the file's error with the file line.
 */
function sectionError(message: string, lineOffset?: number): AgentportError {
  return new AgentportError('PROMPTY_INVALID', message, { section: true, ...(lineOffset !== undefined ? { lineOffset } : {}) });
}

/** True for an error made by {@link sectionError}. */
export function isSectionError(err: unknown): err is AgentportError {
  return hasCode(err, 'PROMPTY_INVALID') && err.data?.section === true;
}

/** Parses section YAML, filling value tokens; throws a section error ({@link isSectionError}) on a syntax error. */
export function parseSectionYaml(text: string, slots: Interpolations | null): unknown {
  const doc: Document = parseDocument(text, { prettyErrors: true });
  const err = doc.errors[0];
  if (err) {
    const first = err.message.split('\n')[0] ?? err.message;
    throw sectionError(`invalid YAML: ${first}`, (err.linePos?.[0].line ?? 1) - 1);
  }
  if (slots) {
    visit(doc, {
      Scalar(key, node) {
        if (typeof node.value !== 'string' || !slots.hasHoles(node.value)) return undefined;
        const exact = key !== 'key' && node.type === 'PLAIN' ? slots.exact(node.value) : null;
        if (exact) return doc.createNode(exact.value ?? null);
        node.value = slots.fill(node.value);
        return undefined;
      },
    });
  }
  return doc.toJS();
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Reads the tools of a `tools:` section: a YAML list (or a single entry) of tool names or objects
 * with a `name` or `id`.
 */
export function toolsFromYaml(value: unknown): Array<string | Record<string, unknown>> {
  if (value === null || value === undefined) return [];
  const list = Array.isArray(value) ? value : [value];
  return list.map((entry, i) => {
    if (typeof entry === 'string' && entry.trim() !== '') return entry.trim();
    if (isRecord(entry) && (typeof entry['name'] === 'string' || typeof entry['id'] === 'string')) return entry;
    throw sectionError(`tools[${i}] must be a tool name or an object with a "name" or "id"`);
  });
}

/**
 * Reads the calls of an `assistant[type="tool_call"]:` section: one call or a list of calls, each
 * `{id, type?: function, function: {name, arguments}}` (or `{id, name, arguments}`).
 */
export function toolCallsFromYaml(value: unknown): PromptyToolCall[] {
  const list = Array.isArray(value) ? value : [value];
  if (list.length === 0) throw sectionError('a tool_call section needs at least one call');
  return list.map((entry, i) => {
    const where = list.length > 1 ? `tool call ${i + 1}` : 'tool call';
    if (!isRecord(entry)) throw sectionError(`${where} must be a mapping with id and function`);
    const id = entry['id'];
    if ((typeof id !== 'string' || id === '') && typeof id !== 'number') throw sectionError(`${where}: "id" is required`);
    if (entry['type'] !== undefined && entry['type'] !== 'function') {
      throw sectionError(`${where}: only type "function" is supported`);
    }
    const fn = isRecord(entry['function']) ? entry['function'] : entry;
    const name = fn['name'];
    if (typeof name !== 'string' || name === '') throw sectionError(`${where}: "function.name" is required`);
    const args = fn['arguments'];
    let argsText: string;
    if (args === undefined || args === null) argsText = '{}';
    else if (typeof args === 'string') argsText = args;
    else argsText = JSON.stringify(args);
    return { id: String(id), name, arguments: argsText };
  });
}
