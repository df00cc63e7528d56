/**
 * `completion/complete`: values for a prompt argument whose schema lists
 * them (an enum, a literal or a union of literals, a boolean), those that
 * start with what the person typed first, then those that contain it.
 * Free-form arguments complete to nothing. References to resource
 * templates complete to nothing until a template offers values.
 */
import { ProtocolError, ProtocolErrorCode, type CompleteRequestParams, type CompleteResult } from '@modelcontextprotocol/server';
import type { JsonSchema } from '../definitions/jsonSchema.js';
import type { PromptCatalog } from './prompts.js';

/** The most values one answer may carry (MCP). */
const MAX_VALUES = 100;

export function complete(prompts: PromptCatalog, params: CompleteRequestParams): CompleteResult {
  if (params.ref.type !== 'ref/prompt') return { completion: { values: [] } };
  const schema = prompts.argumentSchema(params.ref.name, params.argument.name);
  if (!schema) {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `prompt "${params.ref.name}" has no argument "${params.argument.name}"`);
  }
  const typed = params.argument.value.toLowerCase();
  const values = [...new Set(choices(schema))];
  const matching = [
    ...values.filter((value) => value.toLowerCase().startsWith(typed)),
    ...values.filter((value) => !value.toLowerCase().startsWith(typed) && value.toLowerCase().includes(typed)),
  ];
  return {
    completion: {
      values: matching.slice(0, MAX_VALUES),
      total: matching.length,
      hasMore: matching.length > MAX_VALUES,
    },
  };
}

/** The values a schema allows, as the text a prompt argument carries. */
function choices(schema: JsonSchema): string[] {
  if (Array.isArray(schema.enum)) return schema.enum.filter((value) => value !== null).map(asText);
  if ('const' in schema) return schema.const === null ? [] : [asText(schema.const)];
  const union = [schema.anyOf, schema.oneOf].find(Array.isArray) as JsonSchema[] | undefined;
  if (union) return union.flatMap(choices);
  if (schema.type === 'boolean') return ['true', 'false'];
  return [];
}

function asText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}
