/**
 * `agentport run` inputs: `--input name=value` pairs read against the
 * prompt's input schema (the JSON Schema its MCP tool publishes), and
 * `--input-json '{...}'`. A string input takes the text as it is; numbers,
 * booleans and null are parsed; objects and arrays are JSON. Every refusal
 * names the input. Defaults (Prompty `sample` values included) are applied
 * later, by the runtime's own validation.
 */
import { suggestName } from '../../definitions/issues.js';
import type { JsonSchema } from '../../definitions/jsonSchema.js';
import { CommandError } from '../context.js';

export interface InputSources {
  /** `--input` values, in the order given (a later one wins). */
  pairs: readonly string[];
  /** `--input-json`, applied first: pairs override its keys. */
  json?: string;
}

/** The arguments of a call of `target`, whose input schema is `schema`. */
export function parseInputs(target: string, schema: JsonSchema, sources: InputSources): Record<string, unknown> {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const names = Object.keys(properties);
  const args: Record<string, unknown> = {};
  if (sources.json !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(sources.json);
    } catch (error) {
      throw new CommandError(`--input-json is not JSON: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new CommandError('--input-json must be a JSON object of input names to values');
    for (const [name, value] of Object.entries(parsed as Record<string, unknown>)) {
      if (!Object.hasOwn(properties, name)) throw unknownInput(target, name, names, '--input-json');
      args[name] = value;
    }
  }
  for (const pair of sources.pairs) {
    const at = pair.indexOf('=');
    if (at <= 0)
      throw new CommandError(
        `--input expects name=value, got "${pair}"${names.length ? ` (inputs of "${target}": ${names.join(', ')})` : ''}`,
      );
    const name = pair.slice(0, at);
    const raw = pair.slice(at + 1);
    const property = properties[name];
    if (!Object.hasOwn(properties, name) || !property) throw unknownInput(target, name, names, '--input');
    const value = coerce(name, raw, property);
    if (Array.isArray(property.enum) && !property.enum.some((allowed) => JSON.stringify(allowed) === JSON.stringify(value))) {
      throw new CommandError(`--input ${name}: expected one of ${property.enum.map((v) => JSON.stringify(v)).join(', ')}, got "${raw}"`);
    }
    args[name] = value;
  }
  const required = ((schema.required as string[] | undefined) ?? []).filter((name) => !(name in args));
  if (required.length) {
    throw new CommandError(
      `"${target}" needs input${required.length > 1 ? 's' : ''} ${required.join(', ')}: pass ${required.map((name) => `--input ${name}=...`).join(' ')}`,
    );
  }
  return args;
}

function unknownInput(target: string, name: string, names: readonly string[], flag: string): CommandError {
  const listed = names.length ? `; its inputs: ${names.join(', ')}` : '; it takes no inputs';
  return new CommandError(`${flag} ${name}: "${target}" has no input named "${name}"${suggestName(name, names)}${listed}`);
}

/** The JSON types a schema accepts (from type, enum, const, anyOf/oneOf); empty for "anything". */
function acceptedTypes(schema: JsonSchema): Set<string> {
  const types = new Set<string>();
  const add = (value: unknown) =>
    types.add(value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value === 'number' ? 'number' : typeof value);
  if (typeof schema.type === 'string') types.add(schema.type);
  if (Array.isArray(schema.type)) for (const t of schema.type) if (typeof t === 'string') types.add(t);
  if (Array.isArray(schema.enum)) for (const value of schema.enum) add(value);
  if ('const' in schema) add(schema.const);
  for (const key of ['anyOf', 'oneOf'] as const) {
    const members = schema[key];
    if (!Array.isArray(members)) continue;
    for (const member of members as JsonSchema[]) {
      const inner = acceptedTypes(member);
      // A member that accepts anything makes the whole input accept anything.
      if (inner.size === 0) return new Set();
      for (const t of inner) types.add(t);
    }
  }
  return types;
}

/** One `--input` value as the input's type wants it. */
function coerce(name: string, raw: string, schema: JsonSchema): unknown {
  const types = acceptedTypes(schema);
  if (types.size === 0) {
    // Any JSON value; text that is not JSON is a string.
    try {
      return JSON.parse(raw) as unknown;
    } catch {
      return raw;
    }
  }
  const trimmed = raw.trim();
  if ((types.has('number') || types.has('integer')) && trimmed !== '' && Number.isFinite(Number(trimmed))) {
    const n = Number(trimmed);
    if (types.has('number') || Number.isInteger(n)) return n;
    if (!types.has('string')) throw badValue(name, raw, 'an integer');
  }
  if (types.has('boolean') && /^(true|false)$/i.test(trimmed)) return trimmed.toLowerCase() === 'true';
  if (types.has('null') && trimmed === 'null') return null;
  if (types.has('object') || types.has('array')) {
    const start = trimmed[0];
    if (start === '{' || start === '[' || !types.has('string')) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(trimmed);
      } catch (error) {
        throw badValue(name, raw, `JSON (${describe(types)})`, error instanceof Error ? error.message : undefined);
      }
      const kind = Array.isArray(parsed) ? 'array' : parsed === null ? 'null' : typeof parsed;
      if (types.has(kind) || (kind === 'number' && types.has('integer'))) return parsed;
      throw badValue(name, raw, describe(types));
    }
  }
  if (types.has('string')) return raw;
  throw badValue(name, raw, describe(types));
}

function describe(types: Set<string>): string {
  const words: Record<string, string> = {
    number: 'a number',
    integer: 'an integer',
    boolean: 'true or false',
    null: 'null',
    object: 'a JSON object',
    array: 'a JSON array',
    string: 'text',
  };
  return [...types].map((t) => words[t] ?? t).join(' or ');
}

function badValue(name: string, raw: string, expected: string, detail?: string): CommandError {
  return new CommandError(`--input ${name}: expected ${expected}, got "${raw}"${detail ? ` (${detail})` : ''}`);
}
