/**
 * What a definition names: the definitions a run of it may read. A lazily
 * loaded registry imports these ahead of a call (see lazyRegistry.ts); one
 * missed here is still imported when first read, only synchronously.
 */
import type { DefinitionKind } from '../definitions/brand.js';
import type { AgentDefinition, AgentSide, ModelDefinition, PromptDefinition } from '../definitions/types.js';
import { isUpstreamName } from '../upstream/references.js';

export interface Dependency {
  /** The kinds the name may be (a prompt's tool is a tool, a prompt or an agent). */
  kinds: readonly DefinitionKind[];
  name: string;
}

const CALLABLE: readonly DefinitionKind[] = ['tool', 'prompt', 'agent'];

export function dependenciesOf(kind: DefinitionKind, definition: unknown): Dependency[] {
  switch (kind) {
    case 'prompt':
      return promptDependencies(definition as PromptDefinition);
    case 'agent':
      return agentDependencies(definition as AgentDefinition);
    case 'model':
      return ((definition as ModelDefinition).fallbacks ?? []).map((name) => ({ kinds: ['model'], name }));
    default:
      return [];
  }
}

function promptDependencies(prompt: PromptDefinition): Dependency[] {
  const found: Dependency[] = [{ kinds: ['model'], name: prompt.model }];
  for (const ref of prompt.tools ?? []) {
    const name = typeof ref === 'string' ? ref : ref.name;
    if (!isUpstreamName(name)) found.push({ kinds: CALLABLE, name });
  }
  for (const id of prompt.hooks ?? []) found.push({ kinds: ['hook'], name: id });
  if (Array.isArray(prompt.prompt)) {
    for (const part of prompt.prompt) if (part.type === 'include') found.push({ kinds: ['prompt'], name: part.prompt });
  }
  return found;
}

function agentDependencies(agent: AgentDefinition): Dependency[] {
  const found: Dependency[] = [];
  for (const side of [agent.sideA, agent.sideB]) if (side) found.push({ kinds: ['prompt'], name: side.prompt }, ...sideTools(side));
  for (const id of agent.hooks ?? []) found.push({ kinds: ['hook'], name: id });
  return found;
}

/** A side's stop and session tools may be registered tools. */
function sideTools(side: AgentSide): Dependency[] {
  const bindings = [side.stopTool, side.sessionStop, side.sessionFail, side.sessionStatus];
  return bindings.flatMap((binding) => {
    const name = typeof binding === 'string' ? binding : binding?.name;
    return name ? [{ kinds: ['tool'] as const, name }] : [];
  });
}
