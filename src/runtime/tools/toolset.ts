/**
 * The tools a prompt offers its model, by kind: function tools, prompts and
 * agents called as sub-prompts, and control tools (an agent side's session
 * and stop tools that no function tool implements). Each has a JSON Schema
 * converted once per prompt.
 */
import { messageInputSchema, toJsonSchema, toolArgsSchema, type JsonSchema } from '../../definitions/jsonSchema.js';
import type { AgentDefinition, PromptDefinition, SubpromptConfig, ToolReference } from '../../definitions/types.js';
import { AgentportError } from '../../errors.js';
import type { AnyToolDefinition, Entry, LoadedPrompt, Registry } from '../../registry/types.js';
import type { ControlBinding, Services } from '../run/types.js';

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

export type OfferedTool = OfferedFunctionTool | OfferedSubprompt | OfferedControlTool;

export function buildToolset(registry: Registry, prompt: PromptDefinition, extra: readonly ToolReference[] = []): OfferedTool[] {
  const offered: OfferedTool[] = [];
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
      });
      continue;
    }
    const agent = registry.agents.get(config.name);
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
  return offered;
}

function normalize(reference: ToolReference): SubpromptConfig & { env?: Record<string, string>; options?: Record<string, unknown> } {
  return typeof reference === 'string' ? { name: reference } : reference;
}

/** The prompt's tools, plus any a prompty body hoisted for this call (which must exist). */
export function toolsetForTurn(services: Pick<Services, 'registry' | 'toolsetFor'>, prompt: LoadedPrompt, extra: readonly string[]): OfferedTool[] {
  if (extra.length === 0) return services.toolsetFor(prompt);
  const { registry } = services;
  const unknown = extra.filter((name) => !registry.tools.has(name) && !registry.prompts.has(name) && !registry.agents.has(name));
  if (unknown.length) {
    throw new AgentportError('INVALID_ARGUMENTS', `${prompt.name}: its tools section names unknown tools: ${unknown.join(', ')}`);
  }
  return buildToolset(registry, prompt.definition, extra);
}

