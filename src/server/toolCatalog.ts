/**
 * The MCP tool list, computed once when the server starts: every prompt and
 * agent with `exposeAsTool`, with its JSON Schema converted a single time so
 * `tools/list` answers from memory.
 */
import { JSON_SCHEMA_2020_12, messageInputSchema, toJsonSchema, type JsonSchema } from '../definitions/jsonSchema.js';
import { RESERVED_ARGUMENT } from '../registry/references.js';
import type { Registry } from '../registry/types.js';
import type { TaskSupport, ToolArgs } from '../definitions/types.js';

export interface ExposedTool {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchema & { type: 'object' };
  annotations: {
    title: string;
    readOnlyHint: boolean;
    destructiveHint: boolean;
    idempotentHint: boolean;
    openWorldHint: boolean;
  };
  /** Where the tool comes from. */
  kind: 'prompt' | 'agent';
  /** Listed even when deferred tool search is on. */
  alwaysLoad: boolean;
  /** Whether a call may answer with an MCP task (see TaskSupport). */
  taskSupport: TaskSupport;
  /** What `structuredContent` of the tool's results holds (toolResults.ts). */
  outputSchema: JsonSchema & { type: 'object' };
}

export function buildToolCatalog(registry: Registry): ExposedTool[] {
  const tools: ExposedTool[] = [];
  for (const prompt of registry.prompts.values()) {
    const def = prompt.definition;
    if (!def.exposeAsTool) continue;
    tools.push(exposed(prompt.name, def.title, def.toolDescription, def.requiredSchema ? toJsonSchema(def.requiredSchema) : messageInputSchema(), 'prompt', def.alwaysLoad === true, def.taskSupport, def.responseSchema));
  }
  for (const agent of registry.agents.values()) {
    const def = agent.definition;
    if (!def.exposeAsTool) continue;
    const side = registry.prompts.get(def.sideA.prompt)?.definition;
    const schema = side?.requiredSchema ? toJsonSchema(side.requiredSchema) : messageInputSchema();
    tools.push(exposed(agent.name, def.title, def.toolDescription ?? side?.toolDescription ?? '', schema, 'agent', def.alwaysLoad === true, def.taskSupport ?? side?.taskSupport, side?.responseSchema));
  }
  // Deterministic order whatever the file system returned.
  return tools.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

const THREAD_ID_PROPERTY = {
  type: 'string',
  description: 'Continue an earlier conversation: the thread_id returned by a previous call of this tool.',
};

function exposed(
  name: string,
  title: string | undefined,
  description: string,
  schema: JsonSchema,
  kind: ExposedTool['kind'],
  alwaysLoad: boolean,
  taskSupport: TaskSupport = 'optional',
  responseSchema?: ToolArgs,
): ExposedTool {
  const properties = { ...(schema.properties as Record<string, unknown> | undefined), [RESERVED_ARGUMENT]: THREAD_ID_PROPERTY };
  const displayTitle = title ?? humanize(name);
  return {
    name,
    title: displayTitle,
    description,
    inputSchema: { $schema: JSON_SCHEMA_2020_12, ...schema, type: 'object', properties },
    // An agent run calls a model and possibly tools: not read-only, open-world.
    annotations: { title: displayTitle, readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    kind,
    alwaysLoad,
    taskSupport,
    outputSchema: resultSchema(responseSchema),
  };
}

/**
 * The structuredContent of an exposed tool's results: a run's result, a
 * handle while it goes on (`status: "running"`), or an error. `response` is
 * the answer's text, or the parsed answer for a prompt with a responseSchema.
 */
function resultSchema(responseSchema: ToolArgs | undefined): JsonSchema & { type: 'object' } {
  const error = {
    type: 'object',
    properties: { code: { type: 'string' }, message: { type: 'string' }, data: { type: 'object' } },
    required: ['code', 'message'],
  };
  return {
    $schema: JSON_SCHEMA_2020_12,
    type: 'object',
    properties: {
      thread_id: { type: 'string', description: 'Pass it back as thread_id to continue the conversation.' },
      response: responseSchema ? { ...toJsonSchema(responseSchema), description: 'The answer, parsed.' } : { type: 'string', description: 'The answer.' },
      error,
      status: { type: 'string', enum: ['running'], description: 'Set while the run goes on in the background (call run_wait).' },
      reasoning: { type: 'string' },
      steps: { type: 'integer', minimum: 0, description: 'Model calls made.' },
      turns: { type: 'integer', minimum: 0 },
      attachments: { type: 'array', items: { type: 'string' }, description: 'Thread file paths handed over.' },
      tool_calls: {
        type: 'array',
        items: { type: 'object', properties: { name: { type: 'string' }, status: { type: 'string', enum: ['success', 'error'] } }, required: ['name', 'status'] },
      },
    },
  };
}

/** The `tools/list` entry of an exposed tool (without agentport's own fields). */
export function listedTool({ kind: _kind, alwaysLoad: _alwaysLoad, taskSupport: _taskSupport, ...tool }: ExposedTool): Omit<ExposedTool, 'kind' | 'alwaysLoad' | 'taskSupport'> {
  return tool;
}

function humanize(name: string): string {
  const words = name.replace(/[_\-.]+/g, ' ').replace(/([a-z])([A-Z])/g, '$1 $2').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}
