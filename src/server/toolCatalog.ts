/**
 * The MCP tool list, computed once when the server starts: every prompt and
 * agent with `exposeAsTool`, with its JSON Schema converted a single time so
 * `tools/list` answers from memory.
 */
import { JSON_SCHEMA_2020_12, messageInputSchema, toJsonSchema, type JsonSchema } from '../definitions/jsonSchema.js';
import { RESERVED_ARGUMENT } from '../definitions/reservedArgument.js';
import type { Registry } from '../registry/types.js';
import { iconOf } from '../registry/icons.js';
import type { ExposureOptions, TaskSupport, ToolArgs } from '../definitions/types.js';

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
  icons?: Array<{ src: string; mimeType?: string }>;
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
    const schema = def.requiredSchema ? toJsonSchema(def.requiredSchema) : messageInputSchema();
    tools.push(
      exposed(
        { name: prompt.name, kind: 'prompt', exposure: def, description: def.toolDescription, schema, responseSchema: def.responseSchema },
        registry.agentsDir,
      ),
    );
  }
  for (const agent of registry.agents.values()) {
    const def = agent.definition;
    if (!def.exposeAsTool) continue;
    const side = registry.prompts.get(def.sideA.prompt)?.definition;
    const schema = side?.requiredSchema ? toJsonSchema(side.requiredSchema) : messageInputSchema();
    // Task support, icon and annotations the agent leaves unset come from its side A prompt.
    const inherited = { taskSupport: side?.taskSupport, icon: side?.icon, annotations: side?.annotations };
    const exposure = { ...stripUndefined(inherited), ...stripUndefined(def) };
    tools.push(
      exposed(
        {
          name: agent.name,
          kind: 'agent',
          exposure,
          description: def.toolDescription ?? side?.toolDescription ?? '',
          schema,
          responseSchema: side?.responseSchema,
        },
        registry.agentsDir,
      ),
    );
  }
  // Deterministic order whatever the file system returned.
  return tools.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * The `thread_id` argument every exposed tool takes.
 * @public (bench/bigFolderFixture.mjs lists its bare server's tools with it, from the built package)
 */
export const THREAD_ID_PROPERTY = {
  type: 'string',
  description: 'Continue an earlier conversation: the thread_id returned by a previous call of this tool.',
};

interface ExposedSource {
  name: string;
  kind: ExposedTool['kind'];
  exposure: ExposureOptions;
  description: string;
  schema: JsonSchema;
  responseSchema: ToolArgs | undefined;
}

function exposed({ name, kind, exposure, description, schema, responseSchema }: ExposedSource, agentsDir: string): ExposedTool {
  const properties = { ...(schema.properties as Record<string, unknown> | undefined), [RESERVED_ARGUMENT]: THREAD_ID_PROPERTY };
  const displayTitle = exposure.title ?? humanize(name);
  const icon = exposure.icon ? iconOf(exposure.icon, agentsDir) : undefined;
  return {
    name,
    title: displayTitle,
    description,
    inputSchema: { $schema: JSON_SCHEMA_2020_12, ...schema, type: 'object', properties },
    // An agent run calls a model and possibly tools: not read-only, open-world, unless the definition says otherwise.
    annotations: {
      title: displayTitle,
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: true,
      ...stripUndefined(exposure.annotations ?? {}),
    },
    ...(icon ? { icons: [icon] } : {}),
    kind,
    alwaysLoad: exposure.alwaysLoad === true,
    taskSupport: exposure.taskSupport ?? 'optional',
    outputSchema: resultSchema(responseSchema),
  };
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * The structuredContent of an exposed tool's results: a run's result, a
 * handle while it goes on (`status: "running"`), or an error. `response` is
 * the answer's text, or the parsed answer for a prompt with a responseSchema.
 * Kept terse: every exposed tool repeats it in `tools/list` (at 10,000 tools
 * each byte here is 10 kB of the list), so it states types and the error's
 * shape, and leaves the meaning to docs/errors.md (the result's fields).
 * No `$schema`: 2020-12 is MCP's default dialect.
 */
function resultSchema(responseSchema: ToolArgs | undefined): JsonSchema & { type: 'object' } {
  if (!responseSchema) return PLAIN_RESULT_SCHEMA;
  return { type: 'object', properties: { ...PLAIN_RESULT_SCHEMA.properties, response: toJsonSchema(responseSchema) } };
}

/**
 * Shared by every tool whose answer is text: one object, however many tools.
 * @public (bench/bigFolderFixture.mjs lists its bare server's tools with it, from the built package)
 */
export const PLAIN_RESULT_SCHEMA = {
  type: 'object',
  properties: {
    thread_id: { type: 'string' },
    response: { type: 'string' },
    error: { type: 'object', properties: { code: { type: 'string' }, message: { type: 'string' } }, required: ['code', 'message'] },
    status: { const: 'running' },
    reasoning: { type: 'string' },
    steps: { type: 'integer' },
    turns: { type: 'integer' },
    attachments: { type: 'array' },
    tool_calls: { type: 'array' },
  },
} as const satisfies JsonSchema & { type: 'object' };

/** The `tools/list` entry of an exposed tool (without agentport's own fields). */
export function listedTool({
  kind: _kind,
  alwaysLoad: _alwaysLoad,
  taskSupport: _taskSupport,
  ...tool
}: ExposedTool): Omit<ExposedTool, 'kind' | 'alwaysLoad' | 'taskSupport'> {
  return tool;
}

/**
 * A tool's display title, from its name when the definition gives none.
 * @public (bench/bigFolderFixture.mjs lists its bare server's tools with it, from the built package)
 */
export function humanize(name: string): string {
  const words = name
    .replace(/[_\-.]+/g, ' ')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}
