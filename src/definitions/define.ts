import { brand } from './brand.js';
import type {
  AgentDefinition,
  DefineToolOptions,
  HookDefinition,
  HookName,
  ModelDefinition,
  PromptDefinition,
  ToolArgs,
  ToolDefinition,
  ToolTenvs,
} from './types.js';

/** Define a prompt: system instructions, a model, tools and behaviour. */
export function definePrompt<N extends string, S extends ToolArgs = never>(options: PromptDefinition<N, S>): PromptDefinition<N, S> {
  return brand(options, 'prompt');
}

/** Define a function tool; its name is the file name without the extension. */
export function defineTool<Args extends ToolArgs | null = null, Tenvs extends ToolTenvs | null = null>(
  options: DefineToolOptions<Args, Tenvs>,
): ToolDefinition<Args, Tenvs> {
  return brand(options, 'tool');
}

/** Define a model that prompts refer to by name. */
export function defineModel<N extends string>(options: ModelDefinition<N>): ModelDefinition<N> {
  return brand(options, 'model');
}

/** Define a hook that runs at one point of the agent loop. */
export function defineHook<H extends HookName>(options: HookDefinition<H>): HookDefinition<H> {
  return brand(options, 'hook');
}

/** Define an agent: one or two sides, each running a prompt. */
export function defineAgent<N extends string>(options: AgentDefinition<N>): AgentDefinition<N> {
  return brand(options, 'agent');
}
