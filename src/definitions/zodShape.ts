/**
 * Checks on user-supplied zod schemas that work across copies of zod: a
 * definition file may import the user's own zod, so `instanceof` is not enough.
 */
import type { z } from 'zod';

interface ZodInternals {
  _zod?: { def?: { type?: string } };
}

function zodTypeOf(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  return (value as ZodInternals)._zod?.def?.type;
}

export function isZodObject(value: unknown): value is z.ZodObject<z.ZodRawShape> {
  return zodTypeOf(value) === 'object';
}

interface WalkDef {
  type?: string;
  shape?: Record<string, unknown>;
  catchall?: unknown;
  innerType?: unknown;
  in?: unknown;
  element?: unknown;
  valueType?: unknown;
  items?: unknown[];
  rest?: unknown;
  options?: unknown[];
  left?: unknown;
  right?: unknown;
}

/** zod types whose values JSON cannot carry: a field of one of them can never be sent (nor answered) as JSON. */
const NOT_JSON: Readonly<Record<string, string>> = {
  date: 'z.date()',
  bigint: 'z.bigint()',
  map: 'z.map()',
  set: 'z.set()',
  function: 'z.function()',
  symbol: 'z.symbol()',
  promise: 'z.promise()',
  nan: 'z.nan()',
};

const defOf = (schema: unknown): WalkDef | undefined =>
  typeof schema === 'object' && schema !== null ? (schema as { _zod?: { def?: WalkDef } })._zod?.def : undefined;

/**
 * The fields of an object schema that JSON cannot carry (`when: z.date()`), by path, with what they
 * are. A union is fine while one of its options can be sent; the input side of a transform is what
 * counts.
 */
export function fieldsJsonCannotCarry(schema: unknown): Array<{ path: string; what: string }> {
  const found: Array<{ path: string; what: string }> = [];
  const visit = (node: unknown, path: string, depth: number): void => {
    const def = defOf(node);
    if (def?.type === undefined || depth > 32) return;
    // z.coerce.date() takes a string or number, and its Date goes back out as a string; z.coerce.bigint()'s BigInt does not.
    const what = def.type === 'date' && (def as { coerce?: boolean }).coerce === true ? undefined : NOT_JSON[def.type];
    if (what) {
      found.push({ path, what });
      return;
    }
    const at = (key: string) => (path ? `${path}.${key}` : key);
    switch (def.type) {
      case 'object':
        for (const [key, field] of Object.entries(def.shape ?? {})) visit(field, at(key), depth + 1);
        if (def.catchall !== undefined) visit(def.catchall, at('*'), depth + 1);
        return;
      case 'array':
        return visit(def.element, `${path}[]`, depth + 1);
      case 'record':
        return visit(def.valueType, at('*'), depth + 1);
      case 'tuple':
        (def.items ?? []).forEach((item, i) => visit(item, `${path}[${i}]`, depth + 1));
        if (def.rest) visit(def.rest, `${path}[]`, depth + 1);
        return;
      case 'union': {
        const options = def.options ?? [];
        // Only the options JSON can carry matter; none of them is a field no value fits.
        const carried = options.filter((option) => !NOT_JSON[unwrappedType(option) ?? '']);
        if (carried.length === 0 && options.length > 0)
          found.push({ path, what: options.map((o) => NOT_JSON[unwrappedType(o)!]).join(' | ') });
        for (const option of carried) visit(option, path, depth + 1);
        return;
      }
      case 'intersection':
        visit(def.left, path, depth + 1);
        visit(def.right, path, depth + 1);
        return;
      case 'pipe':
        return visit(def.in, path, depth + 1);
      default:
        // Wrappers (optional, nullable, default, readonly, catch...); lazy schemas are not followed.
        if (def.innerType !== undefined) visit(def.innerType, path, depth + 1);
    }
  };
  visit(schema, '', 0);
  return found;
}

function unwrappedType(schema: unknown): string | undefined {
  let def = defOf(schema);
  for (let hops = 0; def?.innerType !== undefined && hops < 32; hops++) def = defOf(def.innerType);
  return def?.type;
}
