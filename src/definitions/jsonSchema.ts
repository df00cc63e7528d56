/**
 * The one schema converter: zod (a prompt's `requiredSchema`, a tool's `args`)
 * to JSON Schema 2020-12, used for MCP tool listings and model tool definitions.
 */
import { z } from 'zod';

export type JsonSchema = Record<string, unknown>;

export const JSON_SCHEMA_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

/**
 * Convert an object schema to a plain JSON Schema with `type: "object"` at the
 * root and every `.describe()` text kept. It describes the *input* side, so a
 * field with a default is optional. Objects get `additionalProperties: false`
 * (strict providers require it) unless they are records. No `$schema` key:
 * callers that publish the schema add it where the wire format wants one.
 */
export function toJsonSchema(schema: z.ZodType): JsonSchema {
  const converted = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io: 'input',
    unrepresentable: 'any',
  }) as JsonSchema;
  delete converted.$schema;
  closeObjects(converted);
  if (converted.type !== 'object') {
    throw new TypeError('tool input schemas must be objects');
  }
  return converted;
}

/** A function tool's parameters: its `args`, or an empty object for a tool without arguments. */
export function toolArgsSchema(args: z.ZodType | null | undefined): JsonSchema {
  return args ? toJsonSchema(args) : { type: 'object', properties: {}, additionalProperties: false };
}

/** The input schema of a prompt without `requiredSchema`: one message string. */
export function messageInputSchema(): JsonSchema {
  return {
    type: 'object',
    properties: { message: { type: 'string', description: 'The message to send.' } },
    required: ['message'],
    additionalProperties: false,
  };
}

/** Adds `additionalProperties: false` to plain objects and drops meaningless integer bounds. */
function closeObjects(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) closeObjects(item);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const record = node as JsonSchema;
  // z.int() bounds integers by the safe-integer range: noise for callers and models.
  if (record.minimum === Number.MIN_SAFE_INTEGER) delete record.minimum;
  if (record.maximum === Number.MAX_SAFE_INTEGER) delete record.maximum;
  if (record.type === 'object' && record.properties !== undefined && record.additionalProperties === undefined) {
    record.additionalProperties = false;
  }
  for (const value of Object.values(record)) closeObjects(value);
}
