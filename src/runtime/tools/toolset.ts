/**
 * The tools a prompt offers its model, by kind: function tools, prompts and
 * agents called as sub-prompts, and control tools (an agent side's session
 * and stop tools that no function tool implements). Each has a JSON Schema
 * converted once per prompt.
 */
import { messageInputSchema, toJsonSchema, toolArgsSchema, type JsonSchema } from '../../definitions/jsonSchema.js';
import type { AgentDefinition, PromptDefinition, SubagentToolConfig, SubpromptConfig, ToolReference } from '../../definitions/types.js';
import { AgentportError } from '../../errors.js';
import type { AnyToolDefinition, Entry, LoadedPrompt, Registry } from '../../registry/types.js';
import type { ControlBinding, Services } from '../run/types.js';
import type { UpstreamTool } from '../../upstream/hub.js';

interface OfferedBase {
  name: string;
  description: string;
  parameters: JsonSchema;
  /** `env` of a `{ name, env }` tool config. */
  env: Record<string, string>;
  options: Record<string, unknown>;
  /** Shown by name only until a tool search loads it. */
  defer: boolean;
  /** Never deferred, whatever the number of tools. */
  alwaysLoad: boolean;
}

export interface OfferedFunctionTool extends OfferedBase {
  kind: 'function';
  tool: Entry<AnyToolDefinition>;
  /** From the tool config, else the tool's own; undefined: the runtime default. */
  timeoutMs: number | undefined;
}

export interface OfferedSubprompt extends OfferedBase {
  kind: 'subprompt';
  /** The prompt that runs (an agent's side A prompt for agents). */
  prompt: LoadedPrompt;
  /** The agent called, whose session runs; undefined for a prompt. */
  agent: Entry<AgentDefinition> | undefined;
  config: SubpromptConfig;
}

/** A session or stop tool the runtime provides itself: calling it only signals the session. */
export interface OfferedControlTool extends OfferedBase {
  kind: 'control';
  binding: ControlBinding;
}

/** A dual_ai agent used as a subagent (see src/runtime/subagents/). */
export interface SubagentSpec {
  agent: Entry<AgentDefinition>;
  config: SubagentToolConfig;
  blocking: boolean;
  resumable: false | { receives: 'side_a' | 'side_b'; maxInstances?: number };
  parentCommunication: 'implicit' | 'explicit';
  /** The prompt of the side that receives messages from the parent (side A unless resumable.receives is side_b). */
  receiving: LoadedPrompt;
  /** The subagent exists for a run only when this variable is true, 1 or yes. */
  optional?: string;
}

/** A non-resumable subagent: one tool call, one child session. */
export interface OfferedSubagent extends OfferedBase {
  kind: 'subagent';
  spec: SubagentSpec;
}

/** `subagent_create` / `subagent_message`, offered instead of resumable subagents' own tools. */
export interface OfferedLifecycleTool extends OfferedBase {
  kind: 'lifecycle';
  action: 'create' | 'message';
  subagents: SubagentSpec[];
}

/** A tool of an upstream MCP server (agents/mcp.json), offered as `<server>__<tool>` (see upstreamTools.ts). */
export interface OfferedUpstreamTool extends OfferedBase {
  kind: 'upstream';
  upstream: UpstreamTool;
  /** From the prompt's `mcp:` config; undefined: the server's timeoutMs. */
  timeoutMs: number | undefined;
}

export type OfferedTool =
  OfferedFunctionTool | OfferedSubprompt | OfferedControlTool | OfferedSubagent | OfferedLifecycleTool | OfferedUpstreamTool;

export const SUBAGENT_CREATE = 'subagent_create';
const SUBAGENT_MESSAGE = 'subagent_message';

export function buildToolset(registry: Registry, prompt: PromptDefinition, extra: readonly ToolReference[] = []): OfferedTool[] {
  const offered: OfferedTool[] = [];
  const resumable: SubagentSpec[] = [];
  for (const reference of [...(prompt.tools ?? []), ...extra]) {
    const config = normalize(reference);
    if (offered.some((tool) => tool.name === config.name)) continue;
    const env = (config as { env?: Record<string, string> }).env ?? {};
    const options = (config as { options?: Record<string, unknown> }).options ?? {};
    const tool = registry.tools.get(config.name);
    if (tool) {
      offered.push({
        kind: 'function',
        name: tool.name,
        description: tool.definition.description,
        parameters: toolArgsSchema(tool.definition.args),
        env,
        options,
        defer: tool.definition.defer === true,
        alwaysLoad: tool.definition.alwaysLoad === true,
        tool,
        timeoutMs: (config as { timeoutMs?: number }).timeoutMs ?? tool.definition.timeoutMs,
      });
      continue;
    }
    const agent = registry.agents.get(config.name);
    if (agent?.definition.type === 'dual_ai') {
      const spec = specOf(registry, agent, config);
      if (spec.resumable) resumable.push(spec);
      else offered.push(subagentTool(spec));
      continue;
    }
    const target = registry.prompts.get(agent ? agent.definition.sideA.prompt : config.name);
    // The registry reports unknown names at load time; names rendered per call are checked by the caller.
    if (!target) continue;
    const schema = target.definition.requiredSchema;
    offered.push({
      kind: 'subprompt',
      name: config.name,
      description: agent?.definition.toolDescription ?? target.definition.toolDescription,
      parameters: schema ? toJsonSchema(schema) : messageInputSchema(),
      env,
      options,
      defer: (agent?.definition.defer ?? target.definition.defer) === true,
      alwaysLoad: (agent?.definition.alwaysLoad ?? target.definition.alwaysLoad) === true,
      prompt: target,
      agent,
      config,
    });
  }
  if (resumable.length) offered.push(...lifecycleTools(resumable));
  return offered;
}

function normalize(reference: ToolReference): SubpromptConfig & { env?: Record<string, string>; options?: Record<string, unknown> } {
  return typeof reference === 'string' ? { name: reference } : reference;
}

/** The prompt's tools, plus any a prompty body hoisted for this call (which must exist). */
export function toolsetForTurn(
  services: Pick<Services, 'registry' | 'toolsetFor'>,
  prompt: LoadedPrompt,
  extra: readonly string[],
): OfferedTool[] {
  if (extra.length === 0) return services.toolsetFor(prompt);
  const { registry } = services;
  const unknown = extra.filter((name) => !registry.tools.has(name) && !registry.prompts.has(name) && !registry.agents.has(name));
  if (unknown.length) {
    throw new AgentportError('INVALID_ARGUMENTS', `${prompt.name}: its tools section names unknown tools: ${unknown.join(', ')}`);
  }
  return buildToolset(registry, prompt.definition, extra);
}

function specOf(registry: Registry, agent: Entry<AgentDefinition>, config: SubagentToolConfig): SubagentSpec {
  const resumable = config.resumable
    ? {
        receives: config.resumable.receives_messages,
        ...(config.resumable.maxInstances !== undefined ? { maxInstances: config.resumable.maxInstances } : {}),
      }
    : false;
  const receivingPrompt = resumable && resumable.receives === 'side_b' ? agent.definition.sideB?.prompt : agent.definition.sideA.prompt;
  return {
    agent,
    config,
    blocking: config.blocking ?? true,
    resumable,
    parentCommunication: (config.resumable && config.resumable.parentCommunication) || 'implicit',
    receiving: registry.prompts.get(receivingPrompt ?? agent.definition.sideA.prompt)!,
    ...(config.optional ? { optional: config.optional } : {}),
  };
}

function subagentTool(spec: SubagentSpec): OfferedSubagent {
  const { agent, config } = spec;
  const schema = spec.receiving.definition.requiredSchema;
  return {
    kind: 'subagent',
    name: agent.name,
    description: agent.definition.toolDescription ?? spec.receiving.definition.toolDescription,
    parameters: schema ? toJsonSchema(schema) : messageInputSchema(),
    env: config.env ?? {},
    options: {},
    defer: agent.definition.defer === true,
    alwaysLoad: agent.definition.alwaysLoad === true,
    spec,
  };
}

/** subagent_create and subagent_message for a prompt's resumable subagents. */
function lifecycleTools(specs: SubagentSpec[]): OfferedLifecycleTool[] {
  const one = specs.length === 1 ? specs[0] : undefined;
  const argumentsSchema = (spec: SubagentSpec) => {
    const schema = spec.receiving.definition.requiredSchema;
    return schema ? toJsonSchema(schema) : messageInputSchema();
  };
  const listing = specs.map((spec) => `- ${spec.agent.name}: ${spec.agent.definition.toolDescription ?? ''}`).join('\n');
  const createProperties: Record<string, unknown> = {
    ...(one ? {} : { subagent: { type: 'string', enum: specs.map((spec) => spec.agent.name), description: 'Which subagent to start.' } }),
    name: { type: 'string', minLength: 1, description: 'A name for this instance; use it to send it messages later.' },
    arguments: one
      ? { ...argumentsSchema(one), description: 'What the new instance starts with.' }
      : {
          type: 'object',
          description: `What the new instance starts with, shaped as the chosen subagent takes it:\n${specs.map((spec) => `${spec.agent.name}: ${JSON.stringify(argumentsSchema(spec))}`).join('\n')}`,
        },
  };
  const base = { env: {}, options: {}, defer: false, alwaysLoad: true, subagents: specs };
  return [
    {
      ...base,
      kind: 'lifecycle',
      action: 'create',
      name: SUBAGENT_CREATE,
      description: `Start a new instance of a subagent that keeps running in its own thread and can be messaged later.\n${listing}`,
      parameters: {
        type: 'object',
        properties: createProperties,
        required: [...(one ? [] : ['subagent']), 'name', 'arguments'],
        additionalProperties: false,
      },
    },
    {
      ...base,
      kind: 'lifecycle',
      action: 'message',
      name: SUBAGENT_MESSAGE,
      description:
        'Send a message to a subagent instance started with subagent_create (by its name or reference). A busy instance gets it when it is free.',
      parameters: {
        type: 'object',
        properties: {
          to: { type: 'string', description: 'The instance name or reference.' },
          message: { type: 'string', description: 'The message.' },
          attachments: { type: 'array', items: { type: 'string' }, description: 'Paths of your files to hand over (/attachments/...).' },
        },
        required: ['to', 'message'],
        additionalProperties: false,
      },
    },
  ];
}

/** The subagents a tool starts: its own, or those of a lifecycle tool. */
export function specsOf(tool: OfferedTool): SubagentSpec[] {
  return tool.kind === 'subagent' ? [tool.spec] : tool.kind === 'lifecycle' ? tool.subagents : [];
}
