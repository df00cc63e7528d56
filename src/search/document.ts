/**
 * Turns a tool into the text fields the index scores. Kept apart from the
 * index so the fields can be tested and tuned on their own.
 */
import type { SearchableTool } from './types.js';

/** The fields of an indexed tool, in the order of {@link FIELD_NAMES}. */
export interface ToolDocument {
  /** The tool name, the MiniSearch document id. */
  readonly id: string;
  readonly name: string;
  readonly description: string;
  /** Parameter names, nested ones included, space-separated. */
  readonly paramNames: string;
  /** Parameter descriptions and string enum values. */
  readonly paramText: string;
}

/** Field order matters: the field id MiniSearch assigns is the index in this list. */
export const FIELD_NAMES = ['name', 'description', 'paramNames', 'paramText'] as const;
export type FieldName = (typeof FIELD_NAMES)[number];

// Nested schemas deeper than this add little to search and could be large.
const MAX_SCHEMA_DEPTH = 4;

/** Builds the indexed fields of a tool. */
export function toolDocument(tool: SearchableTool): ToolDocument {
  const names: string[] = [];
  const texts: string[] = [];
  if (tool.inputSchema !== undefined) collectSchemaText(tool.inputSchema, names, texts, 0);
  return {
    id: tool.name,
    name: tool.name,
    description: tool.description ?? '',
    paramNames: names.join(' '),
    paramText: texts.join(' '),
  };
}

function collectSchemaText(schema: unknown, names: string[], texts: string[], depth: number): void {
  if (!isObject(schema) || depth > MAX_SCHEMA_DEPTH) return;
  // The root's own description repeats the tool description; only nested ones are new.
  if (depth > 0 && typeof schema.description === 'string') texts.push(schema.description);
  if (Array.isArray(schema.enum)) {
    for (const value of schema.enum) if (typeof value === 'string') texts.push(value);
  }
  const properties = schema.properties;
  if (isObject(properties)) {
    // for-in rather than Object.entries: no array per schema on a path run for every tool.
    for (const name in properties) {
      if (!Object.hasOwn(properties, name)) continue;
      names.push(name);
      collectSchemaText(properties[name], names, texts, depth + 1);
    }
  }
  collectSchemaText(schema.items, names, texts, depth + 1);
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const variants = schema[key];
    if (Array.isArray(variants)) for (const variant of variants) collectSchemaText(variant, names, texts, depth + 1);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
