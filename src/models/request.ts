/**
 * Builds the Chat Completions request of one step: the model definition's
 * fields, the messages, reasoning settings in the model's style, and the
 * tools as function definitions.
 */
import type { ModelDefinition, ModelRequest, ModelRequestMessage, PromptDefinition } from '../definitions/types.js';
import { toJsonSchema } from '../definitions/jsonSchema.js';
import { reasoningRequestFields } from './reasoning.js';
import { modelRequestBase } from './resolveModel.js';

/** A tool as offered to a model: what Chat Completions calls a function. */
export interface FunctionSpec {
  name: string;
  description: string;
  parameters: unknown;
}

function toFunctionDefinitions(tools: readonly FunctionSpec[]): unknown[] {
  return tools.map((tool) => ({
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  }));
}

export function buildModelRequest(options: {
  model: ModelDefinition;
  prompt: PromptDefinition;
  messages: ModelRequestMessage[];
  tools: readonly FunctionSpec[];
  requireTool: boolean;
}): ModelRequest {
  const { model, prompt, tools } = options;
  const request: ModelRequest = {
    ...modelRequestBase(model),
    messages: options.messages,
    ...reasoningRequestFields(prompt.reasoning, model),
  };
  if (prompt.responseSchema) request.response_format = responseFormat(prompt.responseSchema);
  if (tools.length > 0) {
    request.tools = toFunctionDefinitions(tools);
    request.tool_choice = options.requireTool ? 'required' : 'auto';
    request.parallel_tool_calls = prompt.parallelToolCalls ?? false;
  }
  return request;
}

const formats = new WeakMap<object, unknown>();

/** Asks for JSON of the prompt's response shape (converted once per schema). */
function responseFormat(schema: NonNullable<PromptDefinition['responseSchema']>): unknown {
  let format = formats.get(schema);
  if (!format) {
    format = { type: 'json_schema', json_schema: { name: 'response', schema: toJsonSchema(schema), strict: false } };
    formats.set(schema, format);
  }
  return format;
}
