/**
 * The frontmatter `inputs` field: normalization of its list and map forms, and the zod object
 * schema built from it (which becomes the MCP tool's input schema).
 */
import { z } from 'zod';
import type { PromptyInput, PromptyInputType } from './types.js';

/** A path into the frontmatter, for locating problems. */
export type FieldPath = Array<string | number>;

/** Receives problems found while normalizing. */
export interface InputReporter {
  error(path: FieldPath, message: string): void;
  warn(path: FieldPath, message: string): void;
}

const TYPE_ALIASES: Record<string, PromptyInputType> = {
  string: 'string',
  str: 'string',
  number: 'number',
  float: 'number',
  integer: 'integer',
  int: 'integer',
  boolean: 'boolean',
  bool: 'boolean',
  array: 'array',
  list: 'array',
  object: 'object',
  dict: 'object',
};

const DECLARATION_KEYS = new Set([
  'name',
  'type',
  'kind',
  'description',
  'required',
  'default',
  'enum',
  'enumValues',
  'example',
  'sample',
  'items',
  'properties',
]);

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The input type a JSON value has. */
function typeOfValue(value: unknown): PromptyInputType {
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  if (isRecord(value)) return 'object';
  return 'string';
}

function matchesType(value: unknown, type: PromptyInputType): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isRecord(value);
  }
}

function normalizeDeclaration(name: string, raw: unknown, path: FieldPath, report: InputReporter): PromptyInput | null {
  if (typeof raw === 'string' && TYPE_ALIASES[raw.toLowerCase()] !== undefined) {
    return { name, type: TYPE_ALIASES[raw.toLowerCase()] as PromptyInputType, required: true };
  }
  if (!isRecord(raw)) {
    if (raw === null || raw === undefined) return { name, type: 'string', required: true };
    // A bare value is a default; its type is inferred.
    return { name, type: typeOfValue(raw), required: false, default: raw };
  }
  for (const key of Object.keys(raw)) {
    if (!DECLARATION_KEYS.has(key)) report.warn([...path, key], `unknown input property "${key}" is ignored`);
  }
  const rawType = raw['type'] ?? raw['kind'];
  let type: PromptyInputType;
  if (rawType === undefined) {
    type = raw['default'] !== undefined ? typeOfValue(raw['default']) : 'string';
  } else if (typeof rawType === 'string' && TYPE_ALIASES[rawType.toLowerCase()] !== undefined) {
    type = TYPE_ALIASES[rawType.toLowerCase()] as PromptyInputType;
  } else {
    report.error(
      [...path, raw['type'] !== undefined ? 'type' : 'kind'],
      `unknown input type ${JSON.stringify(rawType)} (use string, number, integer, boolean, array or object)`,
    );
    return null;
  }
  const input: PromptyInput = { name, type, required: true };
  let ok = true;

  const description = raw['description'];
  if (description !== undefined) {
    if (typeof description === 'string') input.description = description;
    else {
      report.error([...path, 'description'], 'expected a string');
      ok = false;
    }
  }
  const required = raw['required'];
  if (required !== undefined && typeof required !== 'boolean') {
    report.error([...path, 'required'], 'expected true or false');
    ok = false;
  }
  const enumValues = raw['enum'] ?? raw['enumValues'];
  if (enumValues !== undefined) {
    const enumKey = raw['enum'] !== undefined ? 'enum' : 'enumValues';
    if (
      !Array.isArray(enumValues) ||
      enumValues.length === 0 ||
      !enumValues.every((v) => ['string', 'number', 'boolean'].includes(typeof v) && matchesType(v, type))
    ) {
      report.error([...path, enumKey], `expected a non-empty list of ${type} values`);
      ok = false;
    } else {
      input.enum = enumValues as Array<string | number | boolean>;
    }
  }
  if (raw['example'] !== undefined || raw['sample'] !== undefined) input.example = raw['example'] ?? raw['sample'];
  if (type === 'array' && raw['items'] !== undefined) {
    const items = normalizeDeclaration('items', raw['items'], [...path, 'items'], report);
    if (items) input.items = items;
    else ok = false;
  }
  if (type === 'object' && raw['properties'] !== undefined) {
    const props = normalizeInputs(raw['properties'], [...path, 'properties'], report);
    if (props) input.properties = props;
    else ok = false;
  }
  const dflt = raw['default'];
  if (dflt !== undefined && dflt !== null) {
    if (!matchesType(dflt, type)) {
      report.error([...path, 'default'], `default ${JSON.stringify(dflt)} is not of type ${type}`);
      ok = false;
    } else if (input.enum && !input.enum.includes(dflt as string | number | boolean)) {
      report.error([...path, 'default'], `default ${JSON.stringify(dflt)} is not one of the allowed values`);
      ok = false;
    } else {
      input.default = dflt;
    }
  }
  input.required = required === false ? false : input.default === undefined;
  return ok ? input : null;
}

/**
 * Normalizes `inputs` written as a list (`- name: x, type: string, ...`; `kind` is accepted for
 * `type`) or a map (`x: {type: string, ...}`, `x: string`, or `x: <default value>`).
 * An input is required unless it says `required: false` or has a `default`.
 * @returns the inputs, or null when a problem was reported.
 */
export function normalizeInputs(raw: unknown, path: FieldPath, report: InputReporter): PromptyInput[] | null {
  if (raw === null || raw === undefined) return [];
  const out: PromptyInput[] = [];
  const names = new Set<string>();
  let ok = true;
  const add = (name: string, decl: unknown, at: FieldPath, namePath: FieldPath): void => {
    if (names.has(name)) {
      report.error(namePath, `duplicate input "${name}"`);
      ok = false;
      return;
    }
    names.add(name);
    const input = normalizeDeclaration(name, decl, at, report);
    if (input) out.push(input);
    else ok = false;
  };
  if (Array.isArray(raw)) {
    raw.forEach((entry, i) => {
      const name = isRecord(entry) ? entry['name'] : undefined;
      if (typeof name !== 'string' || name.trim() === '') {
        report.error([...path, i, 'name'], 'each input in a list needs a "name"');
        ok = false;
        return;
      }
      add(name, entry, [...path, i], [...path, i, 'name']);
    });
  } else if (isRecord(raw)) {
    for (const [name, decl] of Object.entries(raw)) add(name, decl, [...path, name], [...path, name]);
  } else {
    report.error(path, 'expected a list or a map of input declarations');
    return null;
  }
  return ok ? out : null;
}

/**
 * Inputs inferred from a `sample` object when `inputs` is absent: one input per key, typed by its
 * value (which {@link applySample} then makes its default).
 */
export function inputsFromSample(sample: unknown): PromptyInput[] {
  if (!isRecord(sample)) return [];
  return Object.entries(sample).map(([name, value]) => ({ name, type: typeOfValue(value), required: true }));
}

/**
 * `sample` supplies defaults: each input without a `default` takes its sample value (checked
 * against the input's type and values) and becomes optional. Problems go to `report`.
 */
export function applySample(inputs: PromptyInput[], sample: unknown, declared: boolean, report: InputReporter): PromptyInput[] {
  if (sample === undefined || sample === null) return inputs;
  if (!isRecord(sample)) {
    report.error(['sample'], 'expected a mapping of input names to values');
    return inputs;
  }
  const names = new Set(inputs.map((i) => i.name));
  if (declared) {
    for (const key of Object.keys(sample)) {
      if (!names.has(key)) report.warn(['sample', key], `"${key}" names no declared input; it is ignored`);
    }
  }
  return inputs.map((input) => {
    const value = sample[input.name];
    if (input.default !== undefined || value === undefined || value === null) return input;
    if (!fieldSchema({ ...input, required: true }).safeParse(value).success) {
      const allowed = input.enum ? ` (one of ${input.enum.map((v) => JSON.stringify(v)).join(', ')})` : '';
      report.error(['sample', input.name], `${JSON.stringify(value)} does not match input "${input.name}" of type ${input.type}${allowed}`);
      return input;
    }
    return { ...input, default: value, required: false };
  });
}

function baseSchema(input: PromptyInput): z.ZodType {
  switch (input.type) {
    case 'string':
      return input.enum ? z.enum(input.enum as [string, ...string[]]) : z.string();
    case 'number':
    case 'integer': {
      if (input.enum) return z.literal(input.enum as Array<number>);
      return input.type === 'integer' ? z.number().int() : z.number();
    }
    case 'boolean':
      return input.enum ? z.literal(input.enum as boolean[]) : z.boolean();
    case 'array':
      return z.array(input.items ? fieldSchema(input.items) : z.unknown());
    case 'object':
      return input.properties ? objectSchema(input.properties) : z.record(z.string(), z.unknown());
  }
}

/** The zod schema of one input: typed, described, optional when not required or defaulted. */
function fieldSchema(input: PromptyInput): z.ZodType {
  let schema = baseSchema(input);
  // `.default(v).optional()`: filled in when missing, and not "required" in JSON Schema whichever
  // io mode (input or output) the schema is converted with.
  if (input.default !== undefined) schema = schema.default(input.default as never).optional();
  else if (!input.required) schema = schema.optional();
  if (input.description !== undefined) schema = schema.describe(input.description);
  return schema;
}

/** A zod object schema for a list of inputs (`z.object({})` for none). */
export function objectSchema(inputs: PromptyInput[]): z.ZodObject {
  const shape: Record<string, z.ZodType> = {};
  for (const input of inputs) shape[input.name] = fieldSchema(input);
  return z.object(shape);
}
