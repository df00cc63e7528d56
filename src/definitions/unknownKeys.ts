/**
 * Keys an argument object has that its zod schema does not declare. zod strips
 * them silently, while the JSON Schema published for the same schema closes
 * every plain object (`additionalProperties: false`, see jsonSchema.ts): this
 * is the check that makes the server refuse what it says it refuses. It reads
 * zod's definitions (`_zod.def`), so it works with any copy of zod 4.
 */
import type { z } from 'zod';

interface Def {
  type?: string;
  shape?: Record<string, unknown>;
  catchall?: unknown;
  innerType?: unknown;
  in?: unknown;
  element?: unknown;
  valueType?: unknown;
  options?: unknown[];
  items?: unknown[];
  rest?: unknown;
  left?: unknown;
  right?: unknown;
  getter?: () => unknown;
  discriminator?: unknown;
  unionFallback?: unknown;
}

function defOf(schema: unknown): Def | undefined {
  if (typeof schema !== 'object' || schema === null) return undefined;
  return (schema as { _zod?: { def?: Def } })._zod?.def;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Nesting beyond which nothing more is checked (a recursive schema over a deep value). */
const MAX_DEPTH = 32;

/**
 * The paths (`a.b`, `items[2].c`) of keys in `value` that `schema` does not
 * declare, where the schema is a plain or strict object (no open catchall, not
 * a record). A union is checked against the option zod keeps (the first that
 * accepts the value); when none does, a key is known if any option declares it.
 */
export function unknownKeys(schema: z.ZodType, value: unknown): string[] {
  const flat = flatKeysOf(schema);
  if (flat && isPlainObject(value)) return Object.keys(value).filter((key) => !flat.has(key) && value[key] !== undefined);
  const found: string[] = [];
  collect(schema, value, '', found, 0);
  return found;
}

/** Field types whose values hold no keys of their own to check. */
const LEAVES: ReadonlySet<string> = new Set(['string', 'number', 'int', 'boolean', 'literal', 'enum', 'template_literal', 'null']);

/**
 * The keys of a closed object schema whose fields are all scalars (most prompts' arguments), worked out once per
 * schema: the check is then one lookup a key. Undefined for any other schema, which is walked in full.
 */
const flatKeys = new WeakMap<object, ReadonlySet<string> | undefined>();
function flatKeysOf(schema: z.ZodType): ReadonlySet<string> | undefined {
  if (flatKeys.has(schema)) return flatKeys.get(schema);
  const def = defOf(schema);
  let keys: ReadonlySet<string> | undefined;
  const isLeaf = (field: unknown) => LEAVES.has(unwrappedType(field) ?? '');
  if (def?.type === 'object' && def.shape && !isOpen(def) && Object.values(def.shape).every(isLeaf)) keys = new Set(Object.keys(def.shape));
  flatKeys.set(schema, keys);
  return keys;
}

function collect(schema: unknown, value: unknown, path: string, found: string[], depth: number): void {
  const def = defOf(schema);
  if (def === undefined || depth > MAX_DEPTH) return;
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'readonly':
    case 'catch':
    case 'nonoptional':
      return collect(def.innerType, value, path, found, depth);
    case 'pipe':
      // The input side is what the caller sends.
      return collect(def.in, value, path, found, depth);
    case 'lazy':
      return collect(def.getter?.(), value, path, found, depth + 1);
    case 'array':
      if (Array.isArray(value)) value.forEach((item, i) => collect(def.element, item, `${path}[${i}]`, found, depth + 1));
      return;
    case 'tuple':
      if (Array.isArray(value)) {
        const items = def.items ?? [];
        value.forEach((item, i) => collect(i < items.length ? items[i] : def.rest, item, `${path}[${i}]`, found, depth + 1));
      }
      return;
    case 'record':
      if (isPlainObject(value)) {
        for (const [key, item] of Object.entries(value)) collect(def.valueType, item, join(path, key), found, depth + 1);
      }
      return;
    case 'intersection':
      return collectAgainst([def.left, def.right], value, path, found, depth);
    case 'union': {
      // zod keeps the first option that accepts the value and strips what that option does not declare. A
      // discriminated union's option is the one its discriminator names: found without parsing the value.
      const options = def.options ?? [];
      const chosen =
        typeof def.discriminator === 'string' && isPlainObject(value)
          ? (discriminatedOption(options, def.discriminator, value) ?? (def.unionFallback ? chosenOption(options, value) : undefined))
          : chosenOption(options, value);
      return chosen !== undefined
        ? collect(chosen, value, path, found, depth)
        : collectAgainst(def.options ?? [], value, path, found, depth);
    }
    case 'object':
      return collectAgainst([schema], value, path, found, depth);
    default:
      return;
  }
}

/** Keys of an object value checked against several object schemas together (a union's options, an intersection's sides). */
function collectAgainst(schemas: unknown[], value: unknown, path: string, found: string[], depth: number): void {
  if (!isPlainObject(value)) {
    // An array or a scalar: an option that is not an object may describe it.
    for (const schema of schemas) if (defOf(schema)?.type !== 'object') collect(schema, value, path, found, depth);
    return;
  }
  const relevant = schemas.filter((schema) => !NOT_OBJECTS.has(unwrappedType(schema) ?? ''));
  const objects = relevant.map(objectDefOf);
  // An option that is not a plain object (a record, an open object, something unknown) may hold any key.
  if (objects.length === 0 || objects.some((def) => def === undefined || isOpen(def))) return;
  for (const [key, item] of Object.entries(value)) {
    const declaring = objects.flatMap((def) => (def!.shape !== undefined && Object.hasOwn(def!.shape, key) ? [def!.shape[key]] : []));
    if (declaring.length === 0) {
      // A key given as undefined is no key in JSON: nothing was sent.
      if (item !== undefined) found.push(join(path, key));
      continue;
    }
    // Declared by several (both sides of an intersection, options no parse could choose between): known if any knows it.
    if (declaring.length === 1) collect(declaring[0], item, join(path, key), found, depth + 1);
    else collectAgainst(declaring, item, join(path, key), found, depth + 1);
  }
}

/** An object with a catchall takes any key, unless the catchall is `never` (z.strictObject, `.strict()`). */
function isOpen(def: Def): boolean {
  return def.catchall !== undefined && defOf(def.catchall)?.type !== 'never';
}

/** The option of a union zod would keep for `value`: the first that accepts it, if any can be tried synchronously. */
function chosenOption(options: unknown[], value: unknown): unknown {
  for (const option of options) {
    try {
      if ((option as { safeParse?: (input: unknown) => { success: boolean } }).safeParse?.(value).success) return option;
    } catch {
      // An async refinement or transform: fall back to the keys every option declares.
      return undefined;
    }
  }
  return undefined;
}

/**
 * The option zod's discriminated union takes for `value`: the one whose values for the discriminator (zod's
 * `propValues`, which see through nested discriminated unions, pipes, lazy schemas and `.catch`) hold the value's.
 */
function discriminatedOption(options: unknown[], discriminator: string, value: Record<string, unknown>): unknown {
  const given = value[discriminator];
  for (const option of options) {
    let values: ReadonlySet<unknown> | undefined;
    try {
      values = (option as { _zod?: { propValues?: Record<string, ReadonlySet<unknown>> } })._zod?.propValues?.[discriminator];
    } catch {
      // A lazy option whose getter throws: nothing can be said of it.
      continue;
    }
    if (values?.has(given)) return option;
  }
  return undefined;
}

/** Types that never describe an object value: a union option of one of them says nothing of an object's keys. */
const NOT_OBJECTS: ReadonlySet<string> = new Set([
  'string',
  'number',
  'int',
  'boolean',
  'bigint',
  'symbol',
  'null',
  'undefined',
  'void',
  'never',
  'literal',
  'enum',
  'template_literal',
  'nan',
  'date',
  'array',
  'tuple',
  'file',
]);

/** The definition under wrappers (optional, default, the input side of a pipe, a lazy schema's target). */
function unwrapped(schema: unknown): Def | undefined {
  let def = defOf(schema);
  for (let hops = 0; def !== undefined && hops < MAX_DEPTH; hops++) {
    if (def.type === 'pipe') def = defOf(def.in);
    else if (def.type === 'lazy') def = defOf(def.getter?.());
    else if (def.type !== 'object' && def.innerType !== undefined) def = defOf(def.innerType);
    else return def;
  }
  return undefined;
}

function unwrappedType(schema: unknown): string | undefined {
  return unwrapped(schema)?.type;
}

/** The object definition under wrappers, or undefined when the schema is not a plain object. */
function objectDefOf(schema: unknown): Def | undefined {
  const def = unwrapped(schema);
  return def?.type === 'object' ? def : undefined;
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/** The keys of an argument object outside `declared` (for the built-in tools, whose schemas are written by hand). */
export function undeclaredKeys(args: Record<string, unknown> | undefined, declared: readonly string[]): string[] {
  if (args === undefined) return [];
  return Object.keys(args).filter((key) => !declared.includes(key) && args[key] !== undefined);
}

/** `"a", "b"`: keys as an error message names them. */
export function quoteKeys(keys: readonly string[]): string {
  return keys.map((key) => JSON.stringify(key)).join(', ');
}
